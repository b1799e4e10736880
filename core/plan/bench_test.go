package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// benchModel is a transformer-like profile of n layers: blocks of varying cost, shared
// code per layer kind, activations and a residual stream carried between layers.
func benchModel(n int) *model.Model {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	m := &model.Model{Name: fmt.Sprintf("bench-%d", n), Inputs: []model.Tensor{{ID: "in", Bytes: 1 << 20}}}
	prev := "in"
	for l := 0; l < n; l++ {
		kind := fmt.Sprintf("block%d", l%4)
		id := fmt.Sprintf("t%d", l)
		m.Layers = append(m.Layers, model.Layer{
			Name: fmt.Sprintf("layer%d", l), Kind: kind,
			ForwardSeconds: 1e-3 * (1 + rng.Float64()), BackwardSeconds: 2e-3 * (1 + rng.Float64()),
			ParamBytes: int64(50+rng.IntN(50)) << 20, OptimizerBytes: 100 << 20,
			Shared:          map[string]int64{"code:" + kind: 4 << 20},
			TemporaryBytes:  int64(rng.IntN(64)) << 20,
			ActivationBytes: int64(8+rng.IntN(8)) << 20,
			InputIDs:        []string{prev},
			Outputs:         []model.Tensor{{ID: id, Bytes: int64(1+rng.IntN(4)) << 20}},
		})
		prev = id
	}
	return m
}

// benchCluster gives p devices with memory for about 1.6 times an even share of the
// model, so memory binds without making the problem infeasible.
func benchCluster(m *model.Model, p int) *cluster.Cluster {
	var total int64
	for _, l := range m.Layers {
		total += l.ParamBytes + l.OptimizerBytes + 4*l.ActivationBytes
	}
	d := cluster.Device{MemoryBytes: total / int64(p) * 16 / 10, FLOPSPerSecond: 1e15}
	return cluster.Homogeneous(d, p, cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 25e9}, &cluster.Link{LatencySeconds: 1e-5, BytesPerSecond: 12e9})
}

// BenchmarkPlan times estimator preparation plus the optimal partition, for both
// objectives, with memory limits and 1F1B in-flight counts.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		m := benchModel(n)
		for _, p := range []int{4, 16, 64} {
			c := benchCluster(m, p)
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
		m := benchModel(n)
		for _, p := range []int{16, 64} {
			c := benchCluster(m, p)
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
