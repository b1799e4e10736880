package recompute_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
)

// randomModel is a chain of n layers with skip connections (tensors carried across
// layers), integer times and random activation, temporary and input sizes, with up to
// three options per layer.
func randomModel(rng *rand.Rand, n int) (*model.Model, recompute.Choices) {
	m := &model.Model{Name: "random", Inputs: []model.Tensor{{ID: "x", Bytes: int64(1 + rng.IntN(50))}}}
	prev := "x"
	var outs []string
	c := make(recompute.Choices, n)
	for l := range n {
		ly := model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1 + rng.IntN(8)), BackwardSeconds: float64(1 + rng.IntN(16)),
			ParamBytes: int64(rng.IntN(100)), TemporaryBytes: int64(rng.IntN(60)),
			ActivationBytes: int64(rng.IntN(200)), InputIDs: []string{prev}}
		if len(outs) > 1 && rng.IntN(3) == 0 { // a skip connection from an earlier layer
			ly.InputIDs = append(ly.InputIDs, outs[rng.IntN(len(outs)-1)])
		}
		out := fmt.Sprintf("t%d", l)
		ly.Outputs = []model.Tensor{{ID: out, Bytes: int64(1 + rng.IntN(50))}}
		m.Layers = append(m.Layers, ly)
		outs = append(outs, out)
		prev = out
		c[l] = []recompute.Option{{ActivationBytes: ly.ActivationBytes, TemporaryBytes: ly.TemporaryBytes}}
		for k := rng.IntN(3); k > 0; k-- {
			c[l] = append(c[l], recompute.Option{Part: recompute.Full,
				ActivationBytes: int64(rng.IntN(int(ly.ActivationBytes) + 1)),
				TemporaryBytes:  int64(rng.IntN(80)),
				ExtraTime:       float64(rng.IntN(8))})
		}
	}
	return m, c
}

func stages(p int, mem int64) *cluster.Cluster {
	c := &cluster.Cluster{Name: "test"}
	for range p {
		c.Devices = append(c.Devices, cluster.Device{MemoryBytes: mem})
	}
	return c
}

// TestSweepBruteForce: on small stages, the sweep's least extra time equals the least
// over every choice of options of the estimator's own costing of the model with those
// options (estimate.Range's memory against the stage's limit), for every range and stage
// (in flight 1 to 4), and Choice gives a choice that fits with that time.
func TestSweepBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 2))
	checked, recomputed := 0, 0
	for trial := range 150 {
		n := 1 + rng.IntN(6)
		m, c := randomModel(rng, n)
		p := 1 + rng.IntN(min(n, 4))
		inflight := make([]int, p)
		for i := range inflight {
			inflight[i] = 1 + rng.IntN(4)
		}
		mem := int64(300 + rng.IntN(900))
		cl := stages(p, mem)
		opt := estimate.Options{InFlight: func(i int) int { return inflight[i] }}
		e, err := estimate.New(m, cl, opt)
		if err != nil {
			t.Fatal(err)
		}
		sw := recompute.NewSweep(c, e.CarryBytes)
		sc := e.Scanner()
		for a := range n {
			sw.Reset(a)
			sc.Reset(a)
			for b := a; b < n; b++ {
				if b > a {
					sc.ExtendRight()
				}
				sw.Extend(nil)
				always, temp := sc.Always()
				for i := range p {
					want, wantOK := bruteForce(t, m, c, cl, opt, i, a, b)
					lim := e.AllocatableBytes(i)
					got, at, ok := sw.Best(lim-always, inflight[i])
					ok = ok && always+temp <= lim
					if ok != wantOK || ok && got != want {
						t.Fatalf("trial %d: stage %d [%d, %d]: sweep %v (fits %v), brute force %v (fits %v)", trial, i, a, b, got, ok, want, wantOK)
					}
					checked++
					if !ok {
						continue
					}
					// The choice it returns fits and costs that time.
					choice := make([]int, n)
					copy(choice[a:], sw.Choice(at))
					r, extra := costOf(t, m, c, cl, opt, choice, i, a, b)
					if !r.Fits() || extra != got {
						t.Fatalf("trial %d: stage %d [%d, %d]: choice %v fits %v with extra %v, want %v", trial, i, a, b, choice, r.Fits(), extra, got)
					}
					if got > 0 {
						recomputed++
					}
				}
				// At every budget where some choice just fits, the least extra time of the
				// choices whose passes (the estimator's peak and stash) fit it.
				k := 1 + rng.IntN(4)
				all := everyChoice(t, m, c, cl, estimate.Options{InFlight: func(int) int { return k }}, a, b)
				for _, x := range all {
					want := math.Inf(1)
					for _, y := range all {
						if y.passes <= x.passes {
							want = min(want, y.extra)
						}
					}
					if got, _, ok := sw.Best(x.passes, k); !ok || got != want {
						t.Fatalf("trial %d: [%d, %d], %d in flight, budget %d: sweep %v (%v), brute force %v", trial, a, b, k, x.passes, got, ok, want)
					}
					if got, _, ok := sw.Best(x.passes-1, k); ok && got < want {
						t.Fatalf("trial %d: [%d, %d] budget %d: sweep %v below every choice", trial, a, b, x.passes-1, got)
					}
				}
			}
		}
	}
	if recomputed < checked/20 {
		t.Fatalf("only %d of %d ranges recompute anything: the instances do not test the choice", recomputed, checked)
	}
}

// costOf costs stage i = [a, b] of m with the choice, as the estimator does the model
// whose layers run it, and checks the closed form of its time: the stage's compute grows
// by the chosen options' extra times, times the device's speed.
func costOf(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, opt estimate.Options, choice []int, i, a, b int) (estimate.Range, float64) {
	t.Helper()
	m2 := recompute.Apply(m, c, choice)
	e2, err := estimate.New(m2, cl, opt)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := estimate.New(m, cl, opt)
	var extra float64
	for l := a; l <= b; l++ {
		extra += c[l][choice[l]].ExtraTime
	}
	r := e2.Range(i, a, b)
	if want := e.Compute(i, a, b) + extra*e.Scale(i); r.Compute != want {
		t.Fatalf("stage %d [%d, %d] with %v: compute %v, want %v", i, a, b, choice, r.Compute, want)
	}
	return r, extra
}

type tried struct {
	passes int64 // the passes' peak and stash
	extra  float64
}

// everyChoice costs every choice of options of layers [a, b] on stage 0.
func everyChoice(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, opt estimate.Options, a, b int) []tried {
	choice := make([]int, len(m.Layers))
	var out []tried
	var walk func(l int)
	walk = func(l int) {
		if l > b {
			r, extra := costOf(t, m, c, cl, opt, choice, 0, a, b)
			out = append(out, tried{r.PeakBytes + r.StashBytes, extra})
			return
		}
		for k := range c[l] {
			choice[l] = k
			walk(l + 1)
		}
		choice[l] = 0
	}
	walk(a)
	return out
}

// bruteForce tries every choice of options of layers [a, b].
func bruteForce(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, opt estimate.Options, i, a, b int) (float64, bool) {
	choice := make([]int, len(m.Layers))
	best, found := 0.0, false
	var walk func(l int)
	walk = func(l int) {
		if l > b {
			r, extra := costOf(t, m, c, cl, opt, choice, i, a, b)
			if r.Fits() && (!found || extra < best) {
				best, found = extra, true
			}
			return
		}
		for k := range c[l] {
			choice[l] = k
			walk(l + 1)
		}
		choice[l] = 0
	}
	walk(a)
	return best, found
}

// TestForProfile: a layer recomputed whole keeps its inputs (the tensors it reads, a
// skip connection's included) and pays its forward again; a layer whose inputs are no
// smaller than what it keeps is offered nothing.
func TestForProfile(t *testing.T) {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: 10}}, Layers: []model.Layer{
		{Name: "a", ForwardSeconds: 2, BackwardSeconds: 4, ActivationBytes: 100, TemporaryBytes: 7, InputIDs: []string{"x"}, Outputs: []model.Tensor{{ID: "y", Bytes: 30}}},
		{Name: "b", ForwardSeconds: 3, BackwardSeconds: 6, ActivationBytes: 50, InputIDs: []string{"y", "x"}, Outputs: []model.Tensor{{ID: "z", Bytes: 60}}},
		{Name: "c", ForwardSeconds: 1, BackwardSeconds: 2, ActivationBytes: 40, InputIDs: []string{"z"}},
	}}
	c := recompute.ForProfile(m)
	want := recompute.Choices{
		{{ActivationBytes: 100, TemporaryBytes: 7}, {Part: recompute.Full, ActivationBytes: 10, TemporaryBytes: 7, ExtraTime: 2}},
		{{ActivationBytes: 50}, {Part: recompute.Full, ActivationBytes: 40, ExtraTime: 3}},
		{{ActivationBytes: 40}},
	}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("options %v, want %v", c, want)
	}
	m2 := recompute.Apply(m, c, []int{1, 0, 0})
	if l := m2.Layers[0]; l.ActivationBytes != 10 || l.BackwardSeconds != 6 || m.Layers[0].BackwardSeconds != 4 {
		t.Fatalf("applied layer %+v (the model's: %+v)", l, m.Layers[0])
	}
}

// TestSweepBudget: a sweep past its budget of states keeps none and says so.
func TestSweepBudget(t *testing.T) {
	m, c := randomModel(rand.New(rand.NewPCG(22, 5)), 6)
	for l := range c {
		c[l] = append(c[l], recompute.Option{Part: recompute.Full, ActivationBytes: 1, ExtraTime: float64(l + 1)})
	}
	e, err := estimate.New(m, stages(1, 1<<30), estimate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sw := recompute.NewSweep(c, e.CarryBytes)
	sw.SetBudget(20)
	sw.Reset(0)
	ok := true
	for l := 0; l < 6 && ok; l++ {
		ok = sw.Extend(nil)
	}
	if ok || !sw.Exceeded() || sw.States() != 0 || sw.Made() <= 20 {
		t.Fatalf("ok %v, exceeded %v, states %d, made %d", ok, sw.Exceeded(), sw.States(), sw.Made())
	}
}

// randomBlocks is a chain of n layers most of which are one block repeated (the same
// times, sizes and options, as an architecture's blocks are), the others random, with
// up to three options per layer.
func randomBlocks(rng *rand.Rand, n int) (*model.Model, recompute.Choices) {
	m := &model.Model{Name: "blocks", Inputs: []model.Tensor{{ID: "x", Bytes: 20}}}
	layer := func() (model.Layer, []recompute.Option) {
		ly := model.Layer{ForwardSeconds: float64(1 + rng.IntN(8)), BackwardSeconds: float64(1 + rng.IntN(16)),
			ParamBytes: int64(rng.IntN(100)), TemporaryBytes: int64(rng.IntN(60)), ActivationBytes: int64(rng.IntN(200))}
		os := []recompute.Option{{ActivationBytes: ly.ActivationBytes, TemporaryBytes: ly.TemporaryBytes}}
		for k := 1 + rng.IntN(2); k > 0; k-- {
			os = append(os, recompute.Option{Part: recompute.Full,
				ActivationBytes: int64(rng.IntN(int(ly.ActivationBytes) + 1)),
				TemporaryBytes:  int64(rng.IntN(80)),
				ExtraTime:       float64(rng.IntN(8))})
		}
		return ly, os
	}
	block, blockOptions := layer()
	prev := "x"
	c := make(recompute.Choices, n)
	for l := range n {
		ly, os := block, blockOptions
		if rng.IntN(4) == 0 {
			ly, os = layer()
		}
		ly.Name, ly.InputIDs = fmt.Sprintf("l%d", l), []string{prev}
		out := fmt.Sprintf("t%d", l)
		ly.Outputs = []model.Tensor{{ID: out, Bytes: 20}}
		m.Layers = append(m.Layers, ly)
		c[l] = os
		prev = out
	}
	return m, c
}

// TestSweepMemoBruteForce: a sweep that memoises ranges of alike layers (Memoize) gives,
// from every start, for every range and budget at which some choice just fits, the least
// extra time of every choice of options (costed by the estimator), and a choice of that
// time that fits; unfiltered, and under a filter that drops the states fitting no
// budget asked, as core/plan's does. It makes fewer states than a sweep without a memo.
func TestSweepMemoBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	var made, madeMemo int64
	for trial := range 100 {
		n := 2 + rng.IntN(6)
		m, c := randomBlocks(rng, n)
		k := 1 + rng.IntN(3)
		cl := stages(1, 1<<40)
		opt := estimate.Options{InFlight: func(int) int { return k }}
		e, err := estimate.New(m, cl, opt)
		if err != nil {
			t.Fatal(err)
		}
		plain := recompute.NewSweep(c, e.CarryBytes)
		memo := recompute.NewSweep(c, e.CarryBytes)
		memo.Memoize(nil)
		// most is a budget some choices of some ranges exceed: the filter drops them.
		most := int64(100 + rng.IntN(600))
		filtered := trial%2 == 1
		keep := func(p, m int64, _ float64) bool { return m+int64(k-1)*p <= most }
		// Filtered, then unfiltered over the same memo (its filtered lists replaced, as
		// core/plan's choice of the options asks after its partitioner's probes).
		for pass := range 2 {
			if pass == 0 && !filtered {
				continue
			}
			filtered := filtered && pass == 0
			sweepAll(t, plain, memo, n, func(a, b int) {
				if filtered {
					memo.Extend(keep)
				} else {
					memo.Extend(nil)
				}
				all := everyChoice(t, m, c, cl, opt, a, b)
				for _, x := range all {
					budget := x.passes
					if filtered && budget > most {
						continue
					}
					want := math.Inf(1)
					for _, y := range all {
						if y.passes <= budget {
							want = min(want, y.extra)
						}
					}
					got, at, ok := memo.Best(budget, k)
					if !ok || got != want {
						t.Fatalf("trial %d: [%d, %d], %d in flight, budget %d: memoised sweep %v (%v), brute force %v", trial, a, b, k, budget, got, ok, want)
					}
					if p, _, _ := plain.Best(budget, k); p != got {
						t.Fatalf("trial %d: [%d, %d] budget %d: memoised sweep %v, without memo %v", trial, a, b, budget, got, p)
					}
					choice := make([]int, n)
					copy(choice[a:], memo.Choice(at))
					r, extra := costOf(t, m, c, cl, opt, choice, 0, a, b)
					if r.PeakBytes+r.StashBytes > budget || extra != got {
						t.Fatalf("trial %d: [%d, %d] budget %d: choice %v needs %d with extra %v, want %v", trial, a, b, budget, choice, r.PeakBytes+r.StashBytes, extra, got)
					}
				}
			})
		}
		made += plain.Made()
		madeMemo += memo.Made()
	}
	t.Logf("states made: %d without a memo, %d with", made, madeMemo)
	if madeMemo*4 > made*3 {
		t.Fatalf("the memo made %d states, the sweep without it %d: ranges of alike layers are not shared", madeMemo, made)
	}
}

// sweepAll visits every range [a, b], a ascending then b, with plain reset and extended
// (unfiltered) and memo reset: visit extends memo.
func sweepAll(t *testing.T, plain, memo *recompute.Sweep, n int, visit func(a, b int)) {
	t.Helper()
	for a := range n {
		plain.Reset(a)
		memo.Reset(a)
		for b := a; b < n; b++ {
			plain.Extend(nil)
			visit(a, b)
		}
	}
}
