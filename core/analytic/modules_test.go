package analytic

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/arch"
)

// moduleBlock is the first block of a's estimate (the first mixture block when moe)
// under selective recomputation of mods (none recomputed when mods is 0).
func moduleBlock(t *testing.T, r *Result, moe bool) Layer {
	t.Helper()
	for _, l := range r.Layers {
		if l.Kind == "block" && (!moe || l.ExpertParams > 0) {
			return l
		}
	}
	t.Fatal("no such block")
	return Layer{}
}

func withModules(o Options, mods Modules) Options {
	if mods != 0 {
		o.Recompute, o.RecomputeModules = Selective, mods
	}
	return o
}

// TestModulesKorthikanti: a GPT block's saved activations under each of Megatron-LM's
// recompute modules, against Korthikanti et al. 2022's terms (section 4.1, 16 bits,
// dropout, eager attention; pipeplan adds each norm's input, 2sbh, to the 34sbh): the
// attention core drops 5as^2b; layernorm drops the two norms' outputs, QKV's and the
// first MLP projection's inputs (2sbh each); mlp keeps the MLP's input (2sbh) in place
// of its 21sbh; and the backward pass does the dropped parts' forward again: mlp's two
// products (16Th^2 FLOPs), layernorm's two norms (the time of the final norm's forward
// each, the same kernel).
func TestModulesKorthikanti(t *testing.T) {
	a := gpt3(t)
	const b, s, h, heads = 1, 2048, 12288, 96
	const sbh = s * b * h
	const as2b = heads * s * s * b
	base := Options{Batch: b, Seq: s, Attention: Eager}
	none := estimate(t, a, base)
	nb := block(none)
	normFwd := none.Layers[len(none.Layers)-2].FwdDeviceSeconds // final_norm
	for _, tt := range []struct {
		mods        Modules
		saved       int64
		extraFLOPs  float64
		extraNorms  float64 // norms' forwards added to the backward pass
		extraOthers bool    // other kernels too (attention core, MLP)
	}{
		{0, 34*sbh + 5*as2b, 0, 0, false},
		{ModCoreAttn, 34 * sbh, 4 * s * s * h * b, 0, true},
		{ModLayerNorm, 30*sbh + 5*as2b, 0, 2, false},
		{ModMLP, 15*sbh + 5*as2b, 16 * s * b * h * h, 1, true},
		{ModLayerNorm | ModMLP, 13*sbh + 5*as2b, 16 * s * b * h * h, 1, true},
		{ModCoreAttn | ModLayerNorm | ModMLP, 13 * sbh, 4*s*s*h*b + 16*s*b*h*h, 1, true},
	} {
		l := block(estimate(t, a, withModules(base, tt.mods)))
		if l.SavedActivationBytes != tt.saved {
			t.Errorf("%v: saved %d, want %d (%+.2f sbh)", tt.mods, l.SavedActivationBytes, tt.saved, float64(l.SavedActivationBytes-tt.saved)/sbh)
		}
		if got := l.BwdFLOPs - nb.BwdFLOPs; math.Abs(got-tt.extraFLOPs) > 1e-6*tt.extraFLOPs+1 {
			t.Errorf("%v: backward FLOPs +%g, want +%g", tt.mods, got, tt.extraFLOPs)
		}
		if l.FwdSeconds != nb.FwdSeconds || l.FwdFLOPs != nb.FwdFLOPs {
			t.Errorf("%v: the forward pass changed", tt.mods)
		}
		if !tt.extraOthers {
			want := nb.BwdDeviceSeconds + tt.extraNorms*normFwd
			if math.Abs(l.BwdDeviceSeconds-want) > 1e-12*want {
				t.Errorf("%v: backward %v, want %v (+ %g norms of %v)", tt.mods, l.BwdDeviceSeconds, want, tt.extraNorms, normFwd)
			}
		} else if l.BwdDeviceSeconds <= nb.BwdDeviceSeconds {
			t.Errorf("%v: backward %v, not above none's %v", tt.mods, l.BwdDeviceSeconds, nb.BwdDeviceSeconds)
		}
	}
	// mlp reruns the MLP's whole forward, the norm included: its extra time is the MLP
	// sublayer's forward pass.
	sub := estimate(t, a, Options{Batch: b, Seq: s, Attention: Eager, Split: Sublayers})
	mlp := sub.Layers[2]
	l := block(estimate(t, a, withModules(base, ModMLP)))
	if d := l.BwdDeviceSeconds - nb.BwdDeviceSeconds; math.Abs(d-mlp.FwdDeviceSeconds) > 1e-12*d {
		t.Errorf("mlp: backward +%v, want the MLP's forward %v", d, mlp.FwdDeviceSeconds)
	}
}

// TestModulesMoE: a mixture block's saved activations under moe_act, layernorm, moe and
// shared_experts, and latent attention's under mla_up_proj, against their closed forms
// (layers.go's terms): moe_act drops the down projection's input, e*A*f for the A = T*k
// routed rows of expert width f; layernorm the norms' outputs (e*T*h each); moe keeps
// the MLP part's input (e*T*h) in place of all its activations; shared_experts drops
// 4*e*T*f_s; mla_up_proj drops Q, K and V (e*T*(2*heads*d_qk + heads*d_v)).
func TestModulesMoE(t *testing.T) {
	const b, s, e = 1, 4096, 2
	const T = b * s
	for _, c := range []struct {
		name  string
		mods  Modules
		saved func(none, attn, mlp int64, a archSizes) int64
	}{
		{"qwen3-30b-a3b", ModMoEAct, func(n, _, _ int64, a archSizes) int64 { return n - e*T*a.k*a.f }},
		{"qwen3-30b-a3b", ModLayerNorm, func(n, _, _ int64, a archSizes) int64 { return n - 2*e*T*a.h }},
		{"qwen3-30b-a3b", ModMoEAct | ModLayerNorm, func(n, _, _ int64, a archSizes) int64 { return n - 2*e*T*a.h - e*T*a.k*a.f }},
		{"qwen3-30b-a3b", ModMoE, func(_, at, _ int64, a archSizes) int64 { return at + e*T*a.h }},
		{"qwen3-30b-a3b", ModMoE | ModMoEAct, func(_, at, _ int64, a archSizes) int64 { return at + e*T*a.h }},
		{"deepseek-v3", ModSharedExperts, func(n, _, _ int64, a archSizes) int64 { return n - 4*e*T*a.fs }},
		{"deepseek-v3", ModMLAUpProj, func(n, _, _ int64, a archSizes) int64 { return n - e*T*a.qkv }},
		{"deepseek-v3", ModMLAUpProj | ModLayerNorm | ModMoEAct, func(n, _, _ int64, a archSizes) int64 {
			return n - e*T*a.qkv - 2*e*T*a.h - e*T*a.k*a.f
		}},
	} {
		a := bundled(t, c.name)
		sz := archSizes{h: int64(a.HiddenSize), k: int64(a.ExpertsPerToken), f: int64(a.IntermediateSize), fs: int64(a.SharedExpertSize),
			qkv: int64(a.NumHeads) * (2*int64(a.HeadDim) + int64(a.VHeadDim))}
		base := Options{Batch: b, Seq: s}
		none := moduleBlock(t, estimate(t, a, base), true)
		sub := estimate(t, a, Options{Batch: b, Seq: s, Split: Sublayers})
		var attn, mlp int64
		for i, l := range sub.Layers {
			if l.Kind == "mlp" && l.ExpertParams > 0 {
				attn, mlp = sub.Layers[i-1].SavedActivationBytes, l.SavedActivationBytes
				break
			}
		}
		got := moduleBlock(t, estimate(t, a, withModules(base, c.mods)), true)
		if want := c.saved(none.SavedActivationBytes, attn, mlp, sz); got.SavedActivationBytes != want {
			t.Errorf("%s %v: saved %d, want %d (none %d)", c.name, c.mods, got.SavedActivationBytes, want, none.SavedActivationBytes)
		}
		if got.BwdDeviceSeconds <= none.BwdDeviceSeconds || got.FwdDeviceSeconds != none.FwdDeviceSeconds {
			t.Errorf("%s %v: passes %v/%v, none's %v/%v: want the backward longer, the forward the same", c.name, c.mods,
				got.FwdDeviceSeconds, got.BwdDeviceSeconds, none.FwdDeviceSeconds, none.BwdDeviceSeconds)
		}
	}
}

type archSizes struct{ h, k, f, fs, qkv int64 }

// TestModulesParse: names in Megatron-LM's spelling, any order, each once.
func TestModulesParse(t *testing.T) {
	m, err := ParseModules([]string{"moe_act", "layernorm"})
	if err != nil || m != ModMoEAct|ModLayerNorm || !slices.Equal(m.Names(), []string{"moe_act", "layernorm"}) {
		t.Fatalf("%v %v %v", m, err, m.Names())
	}
	for _, bad := range [][]string{{"attention"}, {"mlp", "mlp"}} {
		if _, err := ParseModules(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := Estimate(bundled(t, "gpt2"), target(t, "a100-80gb"), Options{Batch: 1, Seq: 128, Recompute: Full, RecomputeModules: ModMLP}); err == nil {
		t.Error("modules with full recomputation: no error")
	}
}

// TestSelectiveOpLlama: torchtitan's per-op selective checkpointing (SelectiveOp) of a
// Llama 3 8B block, against its policy's closed form (parallelize_llama.py at torchtitan
// 9dec370: aten.mm outputs saved but every second one, SDPA's output saved). The block's
// seven products in order are wq, wk, wv, wo, w1 (gate), w3 (up), w2 (down): the odd
// ones are kept, e*T*(q + kv + f + h) bytes, with the attention output and its fp32
// softmax statistics (e*T*q + 4*b*heads*s), beside the block's input that full
// recomputation keeps alone; the backward pass reruns the even ones, 2T*h*(kv + q + f)
// FLOPs (the rest it reruns moves bytes only), where full recomputation reruns the
// whole forward. The MLP checkpointed as a sublayer of its own counts from its own
// first product: the same kept gate and down projections.
func TestSelectiveOpLlama(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const b, s = 1, 2048
	const e, T, h, q, kv, f, heads = 2.0, b * s, 4096.0, 4096.0, 1024.0, 14336.0, 32.0
	base := Options{Batch: b, Seq: s}
	with := func(o Options, r Recompute) Options { o.Recompute = r; return o }
	none, full, op := block(estimate(t, a, base)), block(estimate(t, a, with(base, Full))), block(estimate(t, a, with(base, SelectiveOp)))
	kept := e*T*(q+kv+f+h) + e*T*q + 4*b*heads*s
	if got, want := op.SavedActivationBytes, full.SavedActivationBytes+int64(kept); got != want {
		t.Errorf("saved %d, want full's %d + %g = %d", got, full.SavedActivationBytes, kept, want)
	}
	rerun := 2 * T * h * (kv + q + f)
	if got := op.BwdFLOPs - none.BwdFLOPs; math.Abs(got-rerun) > 1e-9*rerun {
		t.Errorf("backward FLOPs +%g, want +%g (the key, output and up projections)", got, rerun)
	}
	if op.FwdSeconds != none.FwdSeconds || op.FwdFLOPs != none.FwdFLOPs {
		t.Errorf("the forward pass changed")
	}
	if !(none.BwdDeviceSeconds < op.BwdDeviceSeconds && op.BwdDeviceSeconds < full.BwdDeviceSeconds) {
		t.Errorf("backward %v, not between none's %v and full's %v", op.BwdDeviceSeconds, none.BwdDeviceSeconds, full.BwdDeviceSeconds)
	}
	if op.TemporaryBytes != full.TemporaryBytes {
		t.Errorf("working memory %d, want full recomputation's %d (the backward rebuilds the block)", op.TemporaryBytes, full.TemporaryBytes)
	}
	sub := base
	sub.Split = Sublayers
	mf, mo := estimate(t, a, with(sub, Full)), estimate(t, a, with(sub, SelectiveOp))
	for _, l := range []int{1, 2} { // attention, mlp
		want := mf.Layers[l].SavedActivationBytes + int64(e*T*(f+h))
		if l == 1 {
			want = mf.Layers[l].SavedActivationBytes + int64(e*T*(q+kv)+e*T*q+4*b*heads*s)
		}
		if got := mo.Layers[l].SavedActivationBytes; got != want {
			t.Errorf("sublayer %s: saved %d, want %d", mo.Layers[l].Name, got, want)
		}
	}
}

// TestSelectiveOpRefused: the per-op policy is refused where it is not priced, naming
// the option.
func TestSelectiveOpRefused(t *testing.T) {
	llama, qwen := bundled(t, "meta-llama-3-8b"), bundled(t, "qwen3-30b-a3b")
	gpt2, bert := bundled(t, "gpt2-medium"), bundled(t, "bert-large-uncased")
	for _, c := range []struct {
		name string
		a    *arch.Arch
		o    Options
	}{
		{"eager attention", llama, Options{Attention: Eager}},
		{"mixture of experts", qwen, Options{}},
		{"GPT-2's fused c_attn", gpt2, Options{}},
		{"BERT's biased projections", bert, Options{}},
	} {
		c.o.Batch, c.o.Seq, c.o.Recompute = 1, 512, SelectiveOp
		_, err := Estimate(c.a, target(t, "h100-sxm"), c.o)
		if err == nil || !strings.Contains(err.Error(), "recompute") || !strings.Contains(err.Error(), "selective-op") {
			t.Errorf("%s: %v, want a recompute error naming selective-op", c.name, err)
		}
	}
}

// TestSelectiveOpTensorParallel: torchtitan's per-op policy beside t-way tensor
// parallelism (t = 2, 8), against its closed form (_save_list at torchtitan 9dec370 and
// 820504e: aten.mm, SDPA, c10d_functional.reduce_scatter_tensor; not the all-gathers or
// all-reduces). A Llama 3 8B block with sequence parallelism keeps, beside full
// recomputation's sequence-sharded input, the odd products' outputs, the column-parallel
// ones (wq, wv, w1) split by t, the row-parallel down projection's (w2) its partial sums
// over the whole sequence, e*T*h; the attention output and softmax statistics of its
// heads/t heads; and the two reduce-scatters' outputs, e*T*h/t each. The backward reruns
// the key, output and up projections' 2T*h*(kv + q + f)/t FLOPs, and of the
// communication the two all-gathers: with the forward's two all-reduces (a
// reduce-scatter and an all-gather each) and the backward's two, 5/4 of what no
// recomputation communicates, where full recomputation's rerun forward makes 6/4.
// Without sequence parallelism nothing communicated is kept and the two all-reduces
// rerun: 6/4, as full.
func TestSelectiveOpTensorParallel(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const b, s = 1, 2048
	const e, T, h, q, kv, f, heads = 2.0, b * s, 4096.0, 4096.0, 1024.0, 14336.0, 32.0
	for _, tp := range []float64{2, 8} {
		for _, sp := range []bool{true, false} {
			base := Options{Batch: b, Seq: s, TensorParallel: int(tp), SequenceParallel: sp}
			with := func(r Recompute) Layer { o := base; o.Recompute = r; return block(estimate(t, a, o)) }
			none, full, op := with(NoRecompute), with(Full), with(SelectiveOp)
			name := fmt.Sprintf("tensor %g, sequence parallel %v", tp, sp)
			kept := e*T*(q+kv+f)/tp + e*T*h + e*T*q/tp + 4*b*heads/tp*s
			if sp {
				kept += 2 * e * T * h / tp
			}
			if got, want := op.SavedActivationBytes, full.SavedActivationBytes+int64(kept); got != want {
				t.Errorf("%s: saved %d, want full's %d + %g = %d", name, got, full.SavedActivationBytes, kept, want)
			}
			rerun := 2 * T * h * (kv + q + f) / tp
			if got := op.BwdFLOPs - none.BwdFLOPs; math.Abs(got-rerun) > 1e-9*rerun {
				t.Errorf("%s: backward FLOPs +%g, want +%g", name, got, rerun)
			}
			comm := 5.0 / 4
			if !sp {
				comm = 6.0 / 4
			}
			if got, want := op.TensorAllReduceSeconds, comm*none.TensorAllReduceSeconds; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s: tensor communication %g s, want %g x none's %g", name, got, comm, none.TensorAllReduceSeconds)
			}
			if got, want := full.TensorAllReduceSeconds, 1.5*none.TensorAllReduceSeconds; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s: full recomputation communicates %g s, want 1.5 x none's %g", name, got, none.TensorAllReduceSeconds)
			}
			if !(none.BwdDeviceSeconds < op.BwdDeviceSeconds && op.BwdDeviceSeconds < full.BwdDeviceSeconds) {
				t.Errorf("%s: backward %v, not between none's %v and full's %v", name, op.BwdDeviceSeconds, none.BwdDeviceSeconds, full.BwdDeviceSeconds)
			}
			if op.FwdSeconds != none.FwdSeconds {
				t.Errorf("%s: the forward pass changed", name)
			}
		}
	}
}
