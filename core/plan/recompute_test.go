package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
)

// TestPerLayerBruteForce: with per-layer recomputation, the plan's bottleneck equals
// the least over every split and every choice of options of the largest stage compute
// among those that fit (each stage costed by the estimator on the model whose layers run
// the choice), under 1F1B's in-flight counts; and what each stage says it recomputes is
// the choice the plan's stages were costed with.
func TestPerLayerBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	solved, recomputing := 0, 0
	for trial := range 120 {
		n := 2 + rng.IntN(5)
		p := 1 + rng.IntN(min(n, 3))
		m, c := perLayerModel(rng, n)
		cl := &cluster.Cluster{}
		for range p {
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(250 + rng.IntN(800))})
		}
		opt := Options{Recompute: c, Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}}}
		want := bruteSplits(t, m, c, cl, p)
		pl, err := Make(m, cl, opt)
		if math.IsInf(want, 1) {
			if err == nil {
				t.Fatalf("trial %d: a plan (bottleneck %v) where no split and choice fits", trial, pl.MaxCompute)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v, brute force %v", trial, err, want)
		}
		if pl.MaxCompute != want {
			t.Fatalf("trial %d: bottleneck %v, brute force %v (split %v)", trial, pl.MaxCompute, want, pl.Boundaries)
		}
		solved++
		for _, s := range pl.Stages {
			if s.MemoryBytes > s.LimitBytes {
				t.Fatalf("trial %d: stage over its limit: %+v", trial, s)
			}
			if s.Recompute == nil {
				t.Fatalf("trial %d: a stage without its recomputation", trial)
			}
			if len(s.Recompute.Layers) > 0 {
				recomputing++
				if s.Recompute.ExtraSeconds <= 0 && s.Recompute.SavedBytes <= 0 {
					t.Fatalf("trial %d: a stage recomputes %v for nothing", trial, s.Recompute)
				}
			}
		}
	}
	t.Logf("%d plans, %d stages recomputing", solved, recomputing)
	if solved < 40 || recomputing < 20 {
		t.Fatalf("%d plans, %d stages recomputing: the instances do not test the choice", solved, recomputing)
	}
}

func perLayerModel(rng *rand.Rand, n int) (*model.Model, recompute.Choices) {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(1 + rng.IntN(40))}}}
	prev := "x"
	for l := range n {
		out := fmt.Sprintf("t%d", l)
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1 + rng.IntN(8)), BackwardSeconds: float64(2 + rng.IntN(16)),
			ParamBytes: int64(rng.IntN(120)), TemporaryBytes: int64(rng.IntN(40)),
			ActivationBytes: int64(20 + rng.IntN(200)), InputIDs: []string{prev},
			Outputs: []model.Tensor{{ID: out, Bytes: int64(1 + rng.IntN(40))}}})
		prev = out
	}
	return m, recompute.ForProfile(m)
}

// bruteSplits is the least bottleneck over every split of m into p stages and every
// choice of options, each stage costed by the estimator on the model running the choice.
func bruteSplits(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, p int) float64 {
	n := len(m.Layers)
	counts, _ := schedule.InFlight(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}, p)
	eo := estimate.Options{InFlight: func(i int) int { return counts[i] }}
	best := math.Inf(1)
	choice := make([]int, n)
	var splits func(i, a int, bounds []int)
	var choices func(l int, bounds []int)
	choices = func(l int, bounds []int) {
		if l == n {
			m2 := recompute.Apply(m, c, choice)
			e, err := estimate.New(m2, cl, eo)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i := 0; i < p; i++ {
				r := e.Range(i, bounds[i], bounds[i+1]-1)
				if !r.Fits() {
					return
				}
				worst = max(worst, r.Compute)
			}
			best = min(best, worst)
			return
		}
		for k := range c[l] {
			choice[l] = k
			choices(l+1, bounds)
		}
		choice[l] = 0
	}
	splits = func(i, a int, bounds []int) {
		if i == p-1 {
			choices(0, append(bounds, n))
			return
		}
		for k := a + 1; k <= n-(p-1-i); k++ {
			splits(i+1, k, append(bounds, k))
		}
	}
	splits(0, 0, []int{0})
	return best
}
