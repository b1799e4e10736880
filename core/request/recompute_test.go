package request

import (
	"fmt"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/recompute"
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
// attention cores, each fitting its memory.
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
	if kinds[recompute.Full] == 0 || kinds[recompute.Attention] == 0 {
		t.Errorf("auto recomputes %v: want both whole blocks and attention cores", kinds)
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
// estimate's own costs of the block with its attention core (selective) and the whole
// block (full) recomputed: the same activation and temporary bytes, and the extra time
// is the difference of the layer's passes.
func TestRecomputeVariantsClosedForm(t *testing.T) {
	p, err := prepare(decode(t, llama7bOn40GB(RecomputeAuto)))
	if err != nil {
		t.Fatal(err)
	}
	c := p.recomputeChoices()
	variant := func(r analytic.Recompute) *analytic.Result {
		k := p.estKey
		k.opts.Recompute = r
		est, _, err := p.cache.estimate(k, p.arch, p.target, k.opts)
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	none, sel, full := variant(analytic.NoRecompute), variant(analytic.Selective), variant(analytic.Full)
	for l, os := range c {
		parts := map[string]analytic.Layer{recompute.Attention: sel.Layers[l], recompute.Full: full.Layers[l]}
		for _, o := range os[1:] {
			want := parts[o.Part]
			extra := (want.FwdSeconds + want.BwdSeconds) - (none.Layers[l].FwdSeconds + none.Layers[l].BwdSeconds)
			if o.ActivationBytes != want.SavedActivationBytes || o.TemporaryBytes != want.TemporaryBytes || o.ExtraTime != extra {
				t.Errorf("layer %d %s: option %+v, analytic saved %d, temporary %d, extra %v", l, o.Part, o, want.SavedActivationBytes, want.TemporaryBytes, extra)
			}
		}
	}
	if len(c[5]) != 3 {
		t.Errorf("block.4 has %d options, want none, attention and full", len(c[5]))
	}
}

// TestRecomputeAutoRefused: auto where it is not planned is refused at the field.
func TestRecomputeAutoRefused(t *testing.T) {
	for _, c := range []struct{ name, edit string }{
		{"compute+transfer", `"objective": "compute+transfer",`},
		{"interleaved", `"schedule": {"name": "interleaved:2", "microbatches": 16},`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Normalize(decode(t, `{`+c.edit+` "model": {"architecture": {"name": "gpt2"}}, "cluster": {"device": "h100-sxm", "count": 4}, "training": {"recompute": "auto"}}`))
			if err == nil || !strings.Contains(err.Error(), "training.recompute: auto") {
				t.Fatalf("error %v, want one at training.recompute", err)
			}
		})
	}
}
