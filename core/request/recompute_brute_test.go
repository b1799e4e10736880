package request

import (
	"math"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
)

// TestRecomputeModulesBruteForce: on small stages of an architecture, auto's least extra
// time at every budget equals the least over every assignment of a set of a block's
// parts (every subset of the modules that apply, none and full, dominated ones included)
// to each layer, each costed by the estimator on the model whose layers run it: the
// options left out as dominated (recompute.Undominated) and the dynamic program lose
// nothing. Llama-3.2-1B with eager attention (core_attn, mlp and layernorm apply), three
// blocks, one to three microbatches in flight.
func TestRecomputeModulesBruteForce(t *testing.T) {
	p, err := prepare(decode(t, `{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048, "attention": "eager"}},
		"cluster": {"device": "a100-40gb", "count": 1}, "training": {"recompute": "auto"}}`))
	if err != nil {
		t.Fatal(err)
	}
	none := p.model
	variant := func(o analytic.Options) *model.Model {
		k := p.estKey
		k.opts = o
		_, m, err := p.cache.estimate(k, p.arch, p.target, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Every option of every layer, unpruned: one variant at a time.
	raw := make(recompute.Choices, len(none.Layers))
	for l := range raw {
		raw[l] = []recompute.Option{{ActivationBytes: none.Layers[l].ActivationBytes, TemporaryBytes: none.Layers[l].TemporaryBytes}}
	}
	sets := p.autoModuleSets()
	if len(sets) != 7 {
		t.Fatalf("%d module sets, want the 7 of core_attn, mlp and layernorm", len(sets))
	}
	var vs []recompute.Variant
	for _, s := range sets {
		o := p.estKey.opts
		o.Recompute, o.RecomputeModules = analytic.Selective, s
		vs = append(vs, recompute.Variant{Part: s.String(), Model: variant(o)})
	}
	o := p.estKey.opts
	o.Recompute = analytic.Full
	vs = append(vs, recompute.Variant{Part: recompute.Full, Model: variant(o)})
	for _, v := range vs {
		c, err := recompute.FromVariants(none, none, []recompute.Variant{v})
		if err != nil {
			t.Fatal(err)
		}
		for l := range raw {
			raw[l] = append(raw[l], c[l][1:]...)
		}
	}
	pruned := p.recomputeChoices()
	a, b := 1, 3 // block.0 .. block.2
	if len(raw[a]) != 9 || len(pruned[a]) >= len(raw[a]) {
		t.Fatalf("block.0: %d options unpruned (want 9), %d offered", len(raw[a]), len(pruned[a]))
	}
	cl := &cluster.Cluster{Name: "one", Devices: []cluster.Device{{MemoryBytes: 1 << 40}}}
	chosenParts := map[string]bool{}
	for k := 1; k <= 3; k++ {
		opt := estimate.Options{InFlight: func(int) int { return k }}
		e, err := estimate.New(none, cl, opt)
		if err != nil {
			t.Fatal(err)
		}
		type tried struct {
			passes int64
			extra  float64
		}
		var all []tried
		choice := make([]int, len(none.Layers))
		var walk func(l int)
		walk = func(l int) {
			if l > b {
				m2 := recompute.Apply(none, raw, choice)
				e2, err := estimate.New(m2, cl, opt)
				if err != nil {
					t.Fatal(err)
				}
				r := e2.Range(0, a, b)
				var extra float64
				for x := a; x <= b; x++ {
					extra += raw[x][choice[x]].ExtraTime
				}
				all = append(all, tried{r.PeakBytes + r.StashBytes, extra})
				return
			}
			for i := range raw[l] {
				choice[l] = i
				walk(l + 1)
			}
			choice[l] = 0
		}
		walk(a)
		sw := recompute.NewSweep(pruned, e.CarryBytes)
		sw.Reset(a)
		for range b - a + 1 {
			sw.Extend(nil)
		}
		for _, x := range all {
			want := math.Inf(1)
			for _, y := range all {
				if y.passes <= x.passes {
					want = min(want, y.extra)
				}
			}
			got, at, ok := sw.Best(x.passes, k)
			if !ok || math.Abs(got-want) > 1e-12*want {
				t.Fatalf("%d in flight, budget %d: auto %v (%v), brute force over %d assignments %v", k, x.passes, got, ok, len(all), want)
			}
			for i, c := range sw.Choice(at) {
				if part := pruned[a+i][c].Part; part != recompute.None && part != recompute.Full {
					chosenParts[part] = true
				}
			}
		}
		if len(all) != 729 {
			t.Fatalf("%d assignments, want 9^3", len(all))
		}
	}
	if len(chosenParts) < 2 {
		t.Errorf("auto chose the parts %v at the budgets tried: the parts of a block are not tested", chosenParts)
	}
	t.Logf("parts chosen at some budget: %v", chosenParts)
}
