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
// the choice), under 1F1B's in-flight counts; with RecomputeStages (every other trial)
// each stage may instead take global full's whole-stage form, costed by the estimator
// with Recompute on the model as it is; and what each stage says it recomputes is the
// choice the plan's stages were costed with.
func TestPerLayerBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	solved, recomputing, wholes := 0, 0, 0
	for trial := range 160 {
		n := 2 + rng.IntN(5)
		p := 1 + rng.IntN(min(n, 3))
		stages := trial%2 == 1
		if stages { // longer stages, more in flight: where whole stages pay
			n = 3 + rng.IntN(5)
			p = 2 + rng.IntN(min(n-1, 3))
		}
		m, c := perLayerModel(rng, n, stages)
		cl := &cluster.Cluster{}
		for range p {
			mem := int64(250 + rng.IntN(800))
			if stages {
				mem = int64(150 + rng.IntN(500))
			}
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: mem})
		}
		opt := Options{Recompute: c, RecomputeStages: stages, Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}}}
		want := bruteSplits(t, m, c, cl, p, stages)
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
			if s.Recompute.WholeStage {
				wholes++
				if !stages || len(s.Recompute.Layers) != s.LastLayer-s.FirstLayer+1 {
					t.Fatalf("trial %d: whole stage %+v", trial, s.Recompute)
				}
			}
			if len(s.Recompute.Layers) > 0 {
				recomputing++
				if s.Recompute.ExtraSeconds <= 0 && s.Recompute.SavedBytes <= 0 {
					t.Fatalf("trial %d: a stage recomputes %v for nothing", trial, s.Recompute)
				}
			}
		}
	}
	t.Logf("%d plans, %d stages recomputing, %d of them whole", solved, recomputing, wholes)
	if solved < 40 || recomputing < 20 || wholes < 3 {
		t.Fatalf("%d plans, %d stages recomputing, %d whole: the instances do not test the choice", solved, recomputing, wholes)
	}
}

// perLayerModel is a chain of n layers; with wide, layers pass on tensors about as large
// as what they keep (half to 90% of it), where keeping only a stage's input pays most.
func perLayerModel(rng *rand.Rand, n int, wide bool) (*model.Model, recompute.Choices) {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(1 + rng.IntN(40))}}}
	prev := "x"
	for l := range n {
		out := fmt.Sprintf("t%d", l)
		act := int64(20 + rng.IntN(200))
		bytes := int64(1 + rng.IntN(40))
		if wide {
			bytes = act/2 + rng.Int64N(act*2/5)
		}
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1 + rng.IntN(8)), BackwardSeconds: float64(2 + rng.IntN(16)),
			ParamBytes: int64(rng.IntN(120)), TemporaryBytes: int64(rng.IntN(40)),
			ActivationBytes: act, InputIDs: []string{prev},
			Outputs: []model.Tensor{{ID: out, Bytes: bytes}}})
		prev = out
	}
	return m, recompute.ForProfile(m)
}

// bruteSplits is the least bottleneck over every split of m into p stages and every
// choice of options, each stage costed by the estimator on the model running the choice;
// with whole, each stage may instead recompute whole as global full does (the estimator
// with Recompute on m: the stage's input kept, its forward time added).
func bruteSplits(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, p int, whole bool) float64 {
	n := len(m.Layers)
	counts, _ := schedule.InFlight(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}, p)
	eo := estimate.Options{InFlight: func(i int) int { return counts[i] }}
	fo := eo
	fo.Recompute = true
	ef, err := estimate.New(m, cl, fo)
	if err != nil {
		t.Fatal(err)
	}
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
			// Every subset of the stages taking the whole-stage form.
			for mask := 0; mask < 1<<p; mask++ {
				if !whole && mask != 0 {
					break
				}
				worst, fits := 0.0, true
				for i := 0; i < p && fits; i++ {
					a, b := bounds[i], bounds[i+1]-1
					r := e.Range(i, a, b)
					if mask&(1<<i) != 0 {
						r = ef.Range(i, a, b)
						for l := a; l <= b; l++ {
							r.Compute += m.Forward(l) * ef.Scale(i)
						}
					}
					fits = r.Fits()
					worst = max(worst, r.Compute)
				}
				if fits {
					best = min(best, worst)
				}
			}
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
