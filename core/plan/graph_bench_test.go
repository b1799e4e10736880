package plan_test

import (
	"fmt"
	"os"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// BenchmarkGraphSplit times a whole graph plan (estimator, the contiguous split that
// bounds the search, and dagsplit's DP over the ideals) on PipeDream's profiles, beside
// the contiguous plan, for both objectives, on A100s linked by NVLink-class links and
// 1F1B in-flight counts. GNMT's graph has more ideals than the default bound: its times
// are the fallback's (enumerating ideals up to the bound, then the contiguous split).
// With the bound raised to its 20000-odd ideals it takes about 35 s a plan (2 cores).
func BenchmarkGraphSplit(b *testing.B) {
	for _, tc := range []struct {
		name      string
		maxIdeals int
	}{{"resnet50", 0}, {"gnmt", 0}} {
		data, err := os.ReadFile("../load/testdata/pipedream/" + tc.name + ".graph.txt")
		if err != nil {
			b.Fatal(err)
		}
		m, _, err := load.Model(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range []int{4, 8, 16} {
			c := cluster.Homogeneous(cluster.Device{MemoryBytes: 80 << 30}, p, cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 300e9}, nil)
			for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
				for _, graph := range []bool{false, true} {
					name := fmt.Sprintf("%s/ideals=%d/p=%d/%s/graph=%v", tc.name, tc.maxIdeals, p, obj, graph)
					b.Run(name, func(b *testing.B) {
						opt := plan.Options{Objective: obj, Graph: graph, MaxIdeals: tc.maxIdeals}
						opt.Estimate.InFlight = func(i int) int { return p - i }
						for b.Loop() {
							if _, err := plan.Make(m, c, opt); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}
