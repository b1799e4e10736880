package request

import (
	"encoding/json"
	"testing"

	"pipeplan/core/internal/scalecase"
	"pipeplan/core/wire"
)

// BenchmarkRunScale times issue 8's cases whole, as a front end runs them: a request that
// holds the files' bytes, through Run (loading, validating, the content id, estimating,
// the optimal partition, the schedule and the result). Only reading the files and
// starting a process are left out. One microbatch is in flight, as in
// core/plan.BenchmarkScale: 1F1B's default would not fit these synthetic clusters.
// Targets: Graphcore 1,000 x 64 under 50 ms, 100,000 x 1,024 under 1 s and 1,000,000 x
// 1,024 under 10 s.
func BenchmarkRunScale(b *testing.B) {
	run := func(name string, docs func() (modelJSON, clusterJSON []byte), objective string) {
		b.Run(name, func(b *testing.B) {
			mj, cj := docs()
			r := &wire.Request{Model: wire.ModelSpec{Document: mj}, Cluster: wire.ClusterSpec{Document: cj},
				Schedule: wire.Schedule{Microbatches: 1}, Objective: objective}
			if objective == "" { // Graphcore's: its auto-pipeline tool's memory proportion and objective
				r.Objective, r.MemoryProportion = "compute+transfer", 0.85
			}
			b.SetBytes(int64(len(mj) + len(cj)))
			plan := func() {
				res, err := Run(b.Context(), r)
				if err != nil || !res.Feasible {
					b.Fatalf("%v: %+v", err, res.Diagnostics)
				}
			}
			plan() // untimed, as in core/plan.BenchmarkScale: b.Loop starts the clock
			for b.Loop() {
				plan()
			}
		})
	}
	native := func(n, p int) func() ([]byte, []byte) {
		return func() ([]byte, []byte) {
			m := scalecase.Model(n)
			mj, err := json.Marshal(m)
			if err != nil {
				b.Fatal(err)
			}
			cj, err := json.Marshal(scalecase.Cluster(m, p))
			if err != nil {
				b.Fatal(err)
			}
			return mj, cj
		}
	}
	run("graphcore-1000x64", func() ([]byte, []byte) { return scalecase.Graphcore(1000, 64) }, "")
	run("bench-100000x1024/compute", native(100000, 1024), "compute")
	run("bench-1000000x1024/compute", native(1000000, 1024), "compute")
}
