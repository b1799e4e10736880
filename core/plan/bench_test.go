package plan

import (
	"fmt"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/internal/scalecase"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
)

// BenchmarkPlan times estimator preparation plus the optimal partition, for both
// objectives, with memory limits and 1F1B in-flight counts.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		m := scalecase.Model(n)
		for _, p := range []int{4, 16, 64} {
			c := scalecase.Cluster(m, p)
			opt := estimate.Options{InFlight: func(i int) int { return min(p-i, 4) }}
			for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
				b.Run(fmt.Sprintf("n=%d/p=%d/%s", n, p, obj), func(b *testing.B) {
					for b.Loop() {
						e, err := estimate.New(m, c, opt)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := partition.Solve(Costs{e}, obj); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkPlanSlowLinks makes transfers as costly as a stage's compute (links 1000 times
// slower), so that the compute+transfer objective walks many Pareto points.
func BenchmarkPlanSlowLinks(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		m := scalecase.Model(n)
		for _, p := range []int{16, 64} {
			c := scalecase.Cluster(m, p)
			c.Links = []cluster.Link{{LatencySeconds: 5e-6, BytesPerSecond: 25e6}}
			b.Run(fmt.Sprintf("n=%d/p=%d", n, p), func(b *testing.B) {
				var ratio float64
				for b.Loop() {
					e, err := estimate.New(m, c, estimate.Options{})
					if err != nil {
						b.Fatal(err)
					}
					r, err := partition.Solve(Costs{e}, partition.MaxComputePlusTransfer)
					if err != nil {
						b.Fatal(err)
					}
					ratio = 100 * r.MaxTransfer / r.MaxCompute
				}
				b.ReportMetric(ratio, "transfer_%_of_compute")
			})
		}
	}
}

// transferDominated is the worst case known for compute+transfer: outputs grow along the
// model over a link so slow that transfers dwarf compute, and the frontier of (max compute,
// max transfer) has about as many points as layers, each of which the walk visits.
func transferDominated(n int) *model.Model {
	m := &model.Model{}
	for k := 0; k < n; k++ {
		l := model.Layer{Name: fmt.Sprint(k), ForwardSeconds: 1, Outputs: []model.Tensor{{ID: fmt.Sprint("t", k), Bytes: int64(k+1) * 1000}}}
		if k > 0 {
			l.InputIDs = []string{fmt.Sprint("t", k-1)}
		}
		m.Layers = append(m.Layers, l)
	}
	return m
}

func BenchmarkPlanTransferDominated(b *testing.B) {
	for _, np := range [][2]int{{100, 8}, {200, 16}} {
		m := transferDominated(np[0])
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 40}, np[1], cluster.Link{BytesPerSecond: 1000}, nil)
		b.Run(fmt.Sprintf("n=%d/p=%d", np[0], np[1]), func(b *testing.B) {
			for b.Loop() {
				e, _ := estimate.New(m, c, estimate.Options{})
				if _, err := partition.Solve(Costs{e}, partition.MaxComputePlusTransfer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPerLayerRecompute times a plan with per-layer recomputation (the bound from
// the leanest choice, partition.SolveSweep over the stages' optimal recompute costs, the
// plan of the chosen model) on scalecase's chains,
// whole layers recomputable, on devices with 0.6 of scalecase's memory, so that
// recomputation binds.
func BenchmarkPerLayerRecompute(b *testing.B) {
	for _, n := range []int{100, 300} {
		m := scalecase.Model(n)
		choices := recompute.ForProfile(m)
		for _, p := range []int{4, 16} {
			if n == 300 && p == 4 {
				continue // 75 layers a stage of random sizes: past MaxRecomputeStates
			}
			c := scalecase.Cluster(m, p)
			for i := range c.Devices {
				c.Devices[i].MemoryBytes = c.Devices[i].MemoryBytes * 6 / 10
			}
			opt := estimate.Options{InFlight: func(i int) int { return min(p-i, 4) }}
			b.Run(fmt.Sprintf("n=%d/p=%d", n, p), func(b *testing.B) {
				var recomputed int
				for b.Loop() {
					pl, err := Make(m, c, Options{Estimate: opt, Recompute: choices})
					if err != nil {
						b.Fatal(err)
					}
					recomputed = 0
					for _, s := range pl.Stages {
						recomputed += len(s.Recompute.Layers)
					}
				}
				b.ReportMetric(float64(recomputed), "layers_recomputed")
			})
		}
	}
}
