package plan_test

import (
	"fmt"
	"os"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
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

// BenchmarkRecomputeAutoGraph times per-layer recomputation with a graph partition
// (dagsplit over each candidate stage's optimal recomputation, after the heuristic's
// candidates that bound it) on PipeDream's ResNet-50, on A100-40GB-sized devices at a
// fifth of their memory, so that recomputation binds, under 1F1B with 16 microbatches;
// and, beside it, ranges under compute+transfer (exact by the transfer bound, the
// heuristic beyond MaxTransferBounds) and an interleaved schedule of two chunks (the
// heuristic). exact is 1 where the plan is exact.
func BenchmarkRecomputeAutoGraph(b *testing.B) {
	data, err := os.ReadFile("../load/testdata/pipedream/resnet50.graph.txt")
	if err != nil {
		b.Fatal(err)
	}
	m, _, err := load.Model(data)
	if err != nil {
		b.Fatal(err)
	}
	choices := recompute.ForProfile(m)
	for _, p := range []int{4, 8} {
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: 8 << 30}, p, cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 300e9}, nil)
		for _, tc := range []struct {
			name  string
			graph bool
			sched schedule.Config
			obj   partition.Objective
		}{
			{"graph", true, schedule.Config{Kind: schedule.OneFOneB, Microbatches: 16}, partition.MaxCompute},
			{"graph/compute+transfer", true, schedule.Config{Kind: schedule.OneFOneB, Microbatches: 16}, partition.MaxComputePlusTransfer},
			{"ranges/compute+transfer", false, schedule.Config{Kind: schedule.OneFOneB, Microbatches: 16}, partition.MaxComputePlusTransfer},
			{"interleaved:2", false, schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 16}, partition.MaxCompute},
		} {
			b.Run(fmt.Sprintf("p=%d/%s", p, tc.name), func(b *testing.B) {
				opt := plan.Options{Objective: tc.obj, Graph: tc.graph, Recompute: choices, RecomputeStages: true,
					Schedule: &plan.ScheduleOptions{Config: tc.sched}}
				var recomputed, exact int
				for b.Loop() {
					pl, err := plan.Make(m, c, opt)
					if err != nil {
						b.Fatal(err)
					}
					recomputed, exact = 0, 0
					for _, s := range pl.Stages {
						recomputed += len(s.Recompute.Layers)
					}
					if pl.RecomputeHeuristic == "" {
						exact = 1
					}
				}
				b.ReportMetric(float64(recomputed), "layers_recomputed")
				b.ReportMetric(float64(exact), "exact")
			})
		}
	}
}
