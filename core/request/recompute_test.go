package request

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
	"pipeplan/core/wire"
)

// llama7bOn40GB is Llama-2-7B, microbatches of 2 x 4096 tokens with eager attention (whose
// scores selective recomputation drops), on 4 A100-40GB under 1F1B with 16 microbatches:
// too big for 40 GB without recomputation.
func llama7bOn40GB(rec string) string {
	return fmt.Sprintf(`{"model": {"architecture": {"name": "llama-2-7b", "seq": 4096, "attention": "eager"}},
		"cluster": {"device": "a100-40gb", "count": 4}, "schedule": {"microbatches": 16, "microbatch_size": 2},
		"training": {"recompute": %q}}`, rec)
}

// TestRecomputeAutoBeatsGlobal: per-layer recomputation may choose what every global
// mode does (nothing, every block's attention core, every block whole), so its bottleneck
// is no worse than any of theirs that fits; on Llama-2-7B on 40 GB devices only full
// recomputation fits among those, and auto's stages recompute a mix of whole blocks and
// parts of blocks, each fitting its memory.
func TestRecomputeAutoBeatsGlobal(t *testing.T) {
	auto := runJSON(t, llama7bOn40GB(RecomputeAuto))
	kinds := map[string]int{}
	for i, s := range auto.Plan.Stages {
		if s.Recompute == nil || s.MemoryBytes > s.LimitBytes {
			t.Fatalf("stage %d: recompute %v, memory %d of %d", i, s.Recompute, s.MemoryBytes, s.LimitBytes)
		}
		for _, l := range s.Recompute.Layers {
			kinds[l.Part]++
		}
	}
	if kinds[recompute.Full] == 0 || len(kinds) < 3 {
		t.Errorf("auto recomputes %v: want whole blocks and at least two sets of a block's parts", kinds)
	}
	fitted := 0
	for _, rec := range []string{"none", "selective", "full"} {
		res := run(t, decode(t, llama7bOn40GB(rec)))
		if !res.Feasible {
			continue
		}
		fitted++
		if auto.Plan.BottleneckSeconds > res.Plan.BottleneckSeconds*(1+1e-12) {
			t.Errorf("auto's bottleneck %v is above %s's %v", auto.Plan.BottleneckSeconds, rec, res.Plan.BottleneckSeconds)
		}
		if auto.Step.SamplesPerSecond < res.Step.SamplesPerSecond {
			t.Errorf("auto's throughput %v is below %s's %v", auto.Step.SamplesPerSecond, rec, res.Step.SamplesPerSecond)
		}
	}
	if fitted == 0 {
		t.Fatal("no global mode fits: the comparison tests nothing")
	}
}

// TestRecomputeVariantsClosedForm: an architecture's block options are the analytic
// estimate's own costs of the block with some of its parts (selective recomputation of a
// set of Megatron-LM's modules) or the whole block (full) recomputed: the same
// activation and temporary bytes, and the extra time is the difference of the layer's
// passes. Every set of the modules that apply is costed, and only the options no other
// option of the layer dominates are offered.
func TestRecomputeVariantsClosedForm(t *testing.T) {
	p, err := prepare(decode(t, llama7bOn40GB(RecomputeAuto)))
	if err != nil {
		t.Fatal(err)
	}
	c := p.recomputeChoices()
	variant := func(part string) *analytic.Result {
		k := p.estKey
		if part == recompute.Full {
			k.opts.Recompute = analytic.Full
		} else {
			mods, err := analytic.ParseModules(strings.Split(part, ","))
			if err != nil {
				t.Fatal(err)
			}
			k.opts.Recompute, k.opts.RecomputeModules = analytic.Selective, mods
		}
		est, _, err := p.cache.estimate(k, p.arch, p.target, k.opts)
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	k := p.estKey
	k.opts.Recompute = analytic.NoRecompute
	none, _, err := p.cache.estimate(k, p.arch, p.target, k.opts)
	if err != nil {
		t.Fatal(err)
	}
	sets := p.autoModuleSets()
	if len(sets) != 7 { // core_attn, mlp, layernorm and their unions (eager attention)
		t.Fatalf("auto costs %d module sets, want 7: %v", len(sets), sets)
	}
	parts := map[string]bool{}
	for l, os := range c {
		for i, o := range os[1:] {
			parts[o.Part] = true
			want := variant(o.Part).Layers[l]
			extra := (want.FwdSeconds + want.BwdSeconds) - (none.Layers[l].FwdSeconds + none.Layers[l].BwdSeconds)
			if o.ActivationBytes != want.SavedActivationBytes || o.TemporaryBytes != want.TemporaryBytes || o.ExtraTime != extra {
				t.Errorf("layer %d %s: option %+v, analytic saved %d, temporary %d, extra %v", l, o.Part, o, want.SavedActivationBytes, want.TemporaryBytes, extra)
			}
			for j, x := range os {
				if j != i+1 && x.ActivationBytes <= o.ActivationBytes && x.TemporaryBytes <= o.TemporaryBytes && x.ExtraTime <= o.ExtraTime {
					t.Errorf("layer %d: option %s is dominated by %s", l, o.Part, x.Part)
				}
			}
		}
	}
	if !parts[recompute.Full] || len(parts) < 4 {
		t.Errorf("the blocks offer %v: want whole blocks and at least three sets of their parts", parts)
	}
}

// TestRecomputeAutoElsewhere: auto plans with the compute+transfer objective, an
// interleaved schedule and a graph partition (on a tight memory budget, where what is
// recomputed matters), never slower than none, selective or full under the same
// settings; with an interleaved schedule a note says the choice is a heuristic's, and
// with compute+transfer or a graph partition (exact) none does. The interleaved case
// runs 8 microbatches: with 16, eager PyTorch's pipeline buffers (2 GiB a chunk,
// cluster.PipelineStageBufferBytes) leave no split of the 40 GB devices that fits.
func TestRecomputeAutoElsewhere(t *testing.T) {
	const llama = `"model": {"architecture": {"name": "llama-2-7b", "seq": 4096, "attention": "eager"}}, "cluster": {"device": "a100-40gb", "count": 4}`
	resnet := `"model": {"document": ` + pipeDream(t, "resnet50") + `}, "cluster": {"device": "a100-40gb", "count": 8}, "memory_proportion": 0.2`
	for _, c := range []struct {
		name, req string
		heuristic bool
	}{
		{"compute+transfer", llama + `, "objective": "compute+transfer", "schedule": {"name": "1f1b", "microbatches": 16, "microbatch_size": 2}`, false},
		{"interleaved", llama + `, "schedule": {"name": "interleaved:2", "microbatches": 8, "microbatch_size": 2}`, true},
		// A chain's graph split is of ranges: exact.
		{"graph of a chain", llama + `, "partition": "graph", "schedule": {"name": "1f1b", "microbatches": 16, "microbatch_size": 2}`, false},
		// A branching graph's split is exact too (dagsplit over each stage's optimal
		// recomputation).
		{"graph", resnet + `, "partition": "graph", "schedule": {"name": "1f1b", "microbatches": 16}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := func(rec string) string {
				return `{` + c.req + `, "training": {"recompute": "` + rec + `"}}`
			}
			auto := run(t, decode(t, req(RecomputeAuto)))
			if !auto.Feasible {
				t.Fatalf("auto does not plan: %+v", auto.Diagnostics)
			}
			noted := false
			for _, d := range auto.Diagnostics {
				noted = noted || d.Code == wire.CodeRecomputeHeuristic
			}
			if noted != c.heuristic {
				t.Errorf("heuristic note %v, want %v: %+v", noted, c.heuristic, auto.Diagnostics)
			}
			recomputing := 0
			for _, s := range auto.Plan.Stages {
				if s.Recompute == nil {
					t.Fatalf("stage without its recomputation: %+v", s)
				}
				recomputing += len(s.Recompute.Layers)
			}
			compared := 0
			var got []string
			for _, rec := range []string{"none", "selective", "full"} {
				if rec == "selective" && strings.Contains(c.req, "document") {
					continue // a profile has no selective recomputation
				}
				g := run(t, decode(t, req(rec)))
				if !g.Feasible {
					continue
				}
				compared++
				got = append(got, fmt.Sprintf("%s %.4g", rec, g.Step.SamplesPerSecond))
				if auto.Step.SamplesPerSecond < g.Step.SamplesPerSecond*(1-1e-9) {
					t.Errorf("auto's throughput %v is below %s's %v", auto.Step.SamplesPerSecond, rec, g.Step.SamplesPerSecond)
				}
			}
			t.Logf("%s: auto %.4g samples/s (%d layers recomputing); %v", c.name, auto.Step.SamplesPerSecond, recomputing, got)
			if compared == 0 || recomputing == 0 {
				t.Errorf("compared with %d global modes, %d layers recomputing: the budget does not test the choice", compared, recomputing)
			}
		})
	}
}

// TestRecomputeAutoNeverWorse: on measured profiles auto may take, on each stage, what
// global full does (keep only the stage's input and run its forward again) or nothing,
// so wherever none or full plans, auto plans too, with a throughput no lower. Over
// PipeDream's profiles (core/load's copies of ../shared/data/pipedream's) and random
// chains that pass on large tensors, on tight memory, under every schedule auto plans.
// Under GPipe auto's least bottleneck alone may give a longer step than a split of
// larger bottleneck (GPipe's step also grows with the sum of the stages' passes, which
// no split minimises; PipeDream's AlexNet on 2 stages at 0.15 is one such case), so auto
// also plans the global modes and keeps the shortest (plan.Options.RecomputeFixed):
// without that, three GPipe instances here fail.
func TestRecomputeAutoNeverWorse(t *testing.T) {
	var docs []string
	for _, name := range []string{"vgg16", "alexnet", "resnet50", "gnmt"} {
		docs = append(docs, pipeDream(t, name))
	}
	rng := rand.New(rand.NewPCG(22, 1))
	for range 12 {
		docs = append(docs, randomChain(t, rng, 6+rng.IntN(10)))
	}
	compared, gained := 0, 0
	for d, doc := range docs {
		for _, stages := range []int{2, 4} {
			for _, prop := range []float64{0.04, 0.08, 0.15, 0.3} {
				for _, sched := range []string{"1f1b", "gpipe", "zb-h1", "ipu", "overlap"} {
					if sched == "overlap" && stages != 2 {
						continue // two stages: SparseCore embedding, TensorCore dense
					}
					req := func(rec string) string {
						return fmt.Sprintf(`{"model":{"document":%s},"cluster":{"device":"a100-40gb","count":%d},"memory_proportion":%g,
							"schedule":{"name":%q,"microbatches":%d},"training":{"recompute":%q}}`, doc, stages, prop, sched, 4*stages, rec)
					}
					auto := run(t, decode(t, req(RecomputeAuto)))
					for _, rec := range []string{"none", "full"} {
						g := run(t, decode(t, req(rec)))
						if !g.Feasible {
							continue
						}
						compared++
						where := fmt.Sprintf("model %d on %d stages at %g under %s", d, stages, prop, sched)
						if !auto.Feasible {
							t.Fatalf("%s: %s plans, auto does not: %+v", where, rec, auto.Diagnostics)
						}
						if auto.Step.SamplesPerSecond < g.Step.SamplesPerSecond*(1-1e-9) {
							t.Errorf("%s: auto's throughput %v is below %s's %v", where, auto.Step.SamplesPerSecond, rec, g.Step.SamplesPerSecond)
						}
						if rec == "full" && auto.Step.SamplesPerSecond > g.Step.SamplesPerSecond*(1+1e-9) {
							gained++
						}
					}
				}
			}
		}
	}
	t.Logf("%d comparisons, auto faster than full in %d", compared, gained)
	if compared < 40 || gained < 10 {
		t.Fatalf("%d comparisons, %d gains: the instances test too little", compared, gained)
	}
}

// TestRecomputeAutoNeverWorseElsewhere: as TestRecomputeAutoNeverWorse, with a graph
// partition, the compute+transfer objective and an interleaved schedule of two chunks,
// on PipeDream's profiles and random chains at tight memory proportions: wherever none
// or full plans, auto plans, at no lower throughput.
func TestRecomputeAutoNeverWorseElsewhere(t *testing.T) {
	var docs []string
	for _, name := range []string{"vgg16", "resnet50"} {
		docs = append(docs, pipeDream(t, name))
	}
	rng := rand.New(rand.NewPCG(22, 2))
	for range 4 {
		docs = append(docs, randomChain(t, rng, 8+rng.IntN(8)))
	}
	compared, gained := 0, 0
	for d, doc := range docs {
		for _, prop := range []float64{0.08, 0.15, 0.3} {
			for _, how := range []string{`"partition": "graph"`, `"objective": "compute+transfer"`, `"schedule": {"name": "interleaved:2", "microbatches": 8}`} {
				req := func(rec string) string {
					return fmt.Sprintf(`{"model":{"document":%s},"cluster":{"device":"a100-40gb","count":4},"memory_proportion":%g, %s,
						"training":{"recompute":%q}}`, doc, prop, how, rec)
				}
				auto := run(t, decode(t, req(RecomputeAuto)))
				for _, rec := range []string{"none", "full"} {
					g := run(t, decode(t, req(rec)))
					if !g.Feasible {
						continue
					}
					compared++
					where := fmt.Sprintf("model %d at %g with %s", d, prop, how)
					if !auto.Feasible {
						t.Fatalf("%s: %s plans, auto does not: %+v", where, rec, auto.Diagnostics)
					}
					if auto.Step.SamplesPerSecond < g.Step.SamplesPerSecond*(1-1e-9) {
						t.Errorf("%s: auto's throughput %v is below %s's %v", where, auto.Step.SamplesPerSecond, rec, g.Step.SamplesPerSecond)
					}
					if auto.Step.SamplesPerSecond > g.Step.SamplesPerSecond*(1+1e-9) {
						gained++
					}
				}
			}
		}
	}
	t.Logf("%d comparisons, auto faster in %d", compared, gained)
	if compared < 40 || gained < 10 {
		t.Fatalf("%d comparisons, %d gains: the instances test too little", compared, gained)
	}
}

// randomChain is a measured profile of n layers in a chain, each passing on a tensor of
// half to 90% of what it keeps, as a JSON document.
func randomChain(t *testing.T, rng *rand.Rand, n int) string {
	const mib = 1 << 20
	m := model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(1+rng.IntN(200)) * mib}}}
	prev := "x"
	for l := range n {
		act := int64(100+rng.IntN(2000)) * mib
		out := fmt.Sprintf("t%d", l)
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1+rng.IntN(20)) / 1000, BackwardSeconds: float64(2+rng.IntN(40)) / 1000,
			ParamBytes: int64(rng.IntN(400)) * mib, TemporaryBytes: int64(rng.IntN(200)) * mib,
			ActivationBytes: act, InputIDs: []string{prev},
			Outputs: []model.Tensor{{ID: out, Bytes: act/2 + rng.Int64N(act*2/5)}}})
		prev = out
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRecomputeModulesRequest: training.recompute_modules is checked at its field (a
// name Megatron-LM does not have, a module the architecture has no part for, modules
// without selective or auto, modules of a profile) and put in Megatron-LM's order; a
// plan with selective recomputation of named modules keeps less than the attention
// core's default, and auto limited to named modules recomputes only those parts.
func TestRecomputeModulesRequest(t *testing.T) {
	arch := func(rec, mods string) string {
		return fmt.Sprintf(`{"model": {"architecture": {"name": "llama-2-7b", "seq": 4096}}, "cluster": {"device": "a100-40gb", "count": 4},
			"schedule": {"microbatches": 16, "microbatch_size": 2}, "training": {"recompute": %q, "recompute_modules": %s}}`, rec, mods)
	}
	for _, c := range []struct{ name, req, path string }{
		{"unknown", arch("selective", `["mlp", "attention"]`), "training.recompute_modules[1]"},
		{"twice", arch("selective", `["mlp", "mlp"]`), "training.recompute_modules[1]"},
		{"no part", arch("selective", `["mla_up_proj"]`), "training.recompute_modules[0]"},
		{"no mixture", arch("auto", `["moe_act"]`), "training.recompute_modules[0]"},
		{"full", arch("full", `["mlp"]`), "training.recompute_modules"},
		{"profile", `{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}, "training": {"recompute": "auto", "recompute_modules": ["mlp"]}}`, "training.recompute_modules"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Normalize(decode(t, c.req))
			fes, _ := model.AsFieldErrors(err)
			if len(fes) == 0 || fes[0].Path != c.path {
				t.Fatalf("error %v, want one at %s", err, c.path)
			}
		})
	}
	n, err := Normalize(decode(t, arch("selective", `["layernorm", "mlp"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Training.RecomputeModules; fmt.Sprint(got) != "[mlp layernorm]" {
		t.Errorf("modules normalized to %v, want Megatron-LM's order [mlp layernorm]", got)
	}
	on80 := func(req string) string { return strings.Replace(req, "a100-40gb", "a100-80gb", 1) }
	sel := runJSON(t, on80(arch("selective", `[]`)))
	mods := runJSON(t, on80(arch("selective", `["mlp", "layernorm"]`)))
	if mods.Plan.Stages[0].Memory.ActivationBytes >= sel.Plan.Stages[0].Memory.ActivationBytes {
		t.Errorf("mlp and layernorm keep %d bytes on stage 0, the attention core alone %d: want less", mods.Plan.Stages[0].Memory.ActivationBytes, sel.Plan.Stages[0].Memory.ActivationBytes)
	}
	auto := runJSON(t, arch("auto", `["layernorm", "mlp"]`))
	parts := map[string]int{}
	for i, s := range auto.Plan.Stages {
		if s.Recompute == nil {
			continue
		}
		for _, l := range s.Recompute.Layers {
			parts[l.Part]++
			if l.Part != "layernorm" && l.Part != "mlp" && l.Part != "mlp,layernorm" && l.Part != recompute.Full {
				t.Errorf("stage %d layer %d recomputes %s: auto was limited to mlp and layernorm (and whole blocks)", i, l.Layer, l.Part)
			}
		}
	}
	if len(parts) == 0 {
		t.Error("auto recomputes nothing: the limit is not tested")
	}
	t.Logf("auto limited to mlp, layernorm: %v", parts)
}
