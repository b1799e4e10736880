package analytic

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// eagerOpsFile is tools/opcount/count_ops.py's output.
type eagerOpsFile struct {
	Torch    string `json:"torch"`
	Families map[string]struct {
		Config map[string]float64 `json:"config"`
		// Regions: per region of the block's code, forward calls from Python, forward
		// ATen operators, and the forward's memory-bound kernels and their bytes.
		Regions map[string]struct {
			Python     float64 `json:"python"`
			Fwd        float64 `json:"fwd"`
			FwdKernels float64 `json:"fwd_kernels"`
			FwdBytes   float64 `json:"fwd_bytes"`
		} `json:"regions"`
		Backward       float64            `json:"backward"`
		BackwardHalves map[string]float64 `json:"backward_halves"`
		CoreBackward   float64            `json:"core_backward"`
	} `json:"families"`
}

// TestEagerOpsMatchCounts derives eagerBlocks and eagerTraffic from the counting
// script's output (testdata/eager_ops.json): the tables are that data, not tuned.
func TestEagerOpsMatchCounts(t *testing.T) {
	raw, err := os.ReadFile("testdata/eager_ops.json")
	if err != nil {
		t.Fatal(err)
	}
	var f eagerOpsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	half := func(fam string) (attn, core, mlp hostOps) {
		v, ok := f.Families[fam]
		if !ok {
			t.Fatalf("no family %q in the counts", fam)
		}
		py := func(r string) float64 { return v.Regions[r].Python }
		attn.fwd = py("qkv") + py("rotary") + py("out") + py("norm")/2 + py("residual")/2
		mlp.fwd = py("mlp") + py("activation") + py("router") + py("other") + py("expert") + py("norm")/2 + py("residual")/2
		core = hostOps{py("core"), v.CoreBackward}
		attn.bwd = v.BackwardHalves["attention"] - v.CoreBackward
		mlp.bwd = v.BackwardHalves["mlp"]
		if attn.bwd+core.bwd+mlp.bwd != v.Backward {
			t.Errorf("%s: the halves' backward operators %v + %v do not add up to the block's %v", fam, v.BackwardHalves["attention"], mlp.bwd, v.Backward)
		}
		return attn, core, mlp
	}
	for _, c := range []struct {
		fam    string
		family arch.Family
	}{{"llama", arch.Llama}, {"gpt2", arch.GPT2}, {"bert", arch.BERT}} {
		attn, core, mlp := half(c.fam)
		want := eagerBlocks[c.family]
		if attn != want.attention || core != want.core || mlp != want.mlp {
			t.Errorf("%s: counted attention %v, core %v, mlp %v; eagerBlocks has %v, %v, %v", c.fam, attn, core, mlp, want.attention, want.core, want.mlp)
		}
	}
	// A mixture: the MLP half with E and 2E experts hit; the difference is E experts'.
	_, _, m4 := half("mixtral")
	_, _, m8 := half("mixtral_e8")
	e := f.Families["mixtral"].Config["experts"]
	expert := hostOps{(m8.fwd - m4.fwd) / e, (m8.bwd - m4.bwd) / e}
	moe := hostOps{m4.fwd - e*expert.fwd, m4.bwd - e*expert.bwd}
	if w := eagerBlocks[arch.Llama]; expert != w.expert || moe != w.moe {
		t.Errorf("mixtral: counted per expert %v, the rest %v; eagerBlocks has %v, %v", expert, moe, w.expert, w.moe)
	}
	// Traffic per element: Llama's two RMSNorms over T x h, its rotary over T x (q + kv),
	// GPT-2's gelu_new over T x f (T: the script's 2 sequences).
	ll, g2 := f.Families["llama"], f.Families["gpt2"]
	tokens := 2 * ll.Config["s"]
	h := ll.Config["h"]
	q, kv := h, ll.Config["kv_heads"]*h/ll.Config["heads"]
	per := func(r struct {
		Python     float64 `json:"python"`
		Fwd        float64 `json:"fwd"`
		FwdKernels float64 `json:"fwd_kernels"`
		FwdBytes   float64 `json:"fwd_bytes"`
	}, n, count float64) eagerKernels {
		return eagerKernels{r.FwdBytes / n / count, r.FwdKernels / count}
	}
	got := []eagerKernels{
		per(ll.Regions["norm"], tokens*h, 2),
		per(ll.Regions["rotary"], tokens*(q+kv), 1),
		per(g2.Regions["activation"], 2*g2.Config["s"]*g2.Config["f"], 1),
	}
	want := []eagerKernels{eagerTraffic[arch.Llama].norm, eagerTraffic[arch.Llama].rotary, eagerTraffic[arch.GPT2].activation}
	for i := range got {
		if math.Abs(got[i].bytesPerElement-want[i].bytesPerElement) > 1e-9 || got[i].kernels != want[i].kernels {
			t.Errorf("traffic %d: counted %+v, eagerTraffic has %+v", i, got[i], want[i])
		}
	}
}

// TestEagerHostOps: in eager PyTorch a block's host time is what its HuggingFace code
// dispatches (the counted calls forward, operators backward, the forward's again when
// recomputed) times the framework's per-operator time, whatever the model's size; the
// other modes launch the analytic kernels; the unfused RMSNorm and rotary embedding move
// their measured bytes in eager mode only.
func TestEagerHostOps(t *testing.T) {
	for _, c := range []struct {
		model     string
		attention Attention
		recompute Recompute
		fwd, bwd  float64
	}{
		{"llama-3.2-1b", Flash, NoRecompute, 43 + 3 + 14, 100 + 3 + 57},
		{"llama-3.2-1b", Eager, NoRecompute, 43 + 10 + 14, 100 + 30 + 57},
		{"llama-3.2-1b", Flash, Full, 43 + 3 + 14, 100 + 3 + 57 + 43 + 3 + 14},
		{"llama-3.2-1b", Eager, Selective, 43 + 10 + 14, 100 + 30 + 57 + 10},
		{"gpt2", Flash, NoRecompute, 19 + 3 + 17, 37 + 3 + 44},
		{"bert-base-uncased", Eager, NoRecompute, 13 + 10 + 6, 69 + 29 + 37},
	} {
		a, _ := arch.Bundled(c.model)
		o := Options{Batch: 1, Seq: 128, Attention: c.attention, Recompute: c.recompute}
		tg := frameworkTarget(t, "h100-sxm", cluster.Eager)
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		b := r.Layers[1]
		fw := tg.Framework
		if want := c.fwd*fw.HostKernelSeconds + fw.HostLayerSeconds; math.Abs(b.FwdHostSeconds-want) > 1e-12 {
			t.Errorf("%s %s %s: forward host %g s, want %g (%v operators)", c.model, c.attention, c.recompute, b.FwdHostSeconds, want, c.fwd)
		}
		if want := c.bwd*fw.HostKernelSeconds + fw.HostLayerSeconds; math.Abs(b.BwdHostSeconds-want) > 1e-12 {
			t.Errorf("%s %s %s: backward host %g s, want %g (%v operators)", c.model, c.attention, c.recompute, b.BwdHostSeconds, want, c.bwd)
		}
		comp, _ := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Compiled), o)
		cb := comp.Layers[1]
		if cb.FwdTerms.HostOps != cb.FwdKernels || cb.FwdHostSeconds != cb.FwdKernels*4e-6+10e-6 {
			t.Errorf("%s compiled: host ops %g, kernels %g, host %g s", c.model, cb.FwdTerms.HostOps, cb.FwdKernels, cb.FwdHostSeconds)
		}
		// HuggingFace's blocks run eagerly move their counted traffic (eagerBlockTraffic),
		// more than the fused kernels the compiled mode is costed with, in every family.
		if b.FwdTerms.MemorySeconds <= cb.FwdTerms.MemorySeconds {
			t.Errorf("%s: eager memory time %g s, compiled %g s: the counted traffic is not more", c.model, b.FwdTerms.MemorySeconds, cb.FwdTerms.MemorySeconds)
		}
	}
}

// TestTensorCommOverlap: with Options.TensorCommOverlap a layer's pass adds only the
// tensor-parallel communication longer than its linear layers' products, and at least
// its first chunk's (1/t): over NVLink all but that hides, over a slow link less; the
// total (TensorAllReduceSeconds) stays, and the products it overlaps cost what
// userbuffersChunks adds.
func TestTensorCommOverlap(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	for _, c := range []struct {
		link    cluster.Link
		allHide bool
	}{
		{cluster.Link{BytesPerSecond: 450e9, LatencySeconds: 5e-6}, true}, // NVLink 4, each way
		{cluster.Link{BytesPerSecond: 2e9, LatencySeconds: 5e-6}, false},
	} {
		tg := frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs)
		tg.TensorLink = c.link
		o := Options{Batch: 1, Seq: 4096, TensorParallel: 4, SequenceParallel: true}
		off, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.TensorCommOverlap = true
		on, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		b, bo := off.Layers[1], on.Layers[1]
		if bo.TensorAllReduceSeconds != b.TensorAllReduceSeconds || b.FwdTerms.CommSeconds <= 0 {
			t.Errorf("%v: total communication %g s, was %g s", c.link, bo.TensorAllReduceSeconds, b.TensorAllReduceSeconds)
		}
		// The products cost more (userbuffersChunks: the pipelined reduce-scatter's
		// products on sm_count - 16 multiprocessors, its chunks' launches): what the
		// device time falls is the hidden communication less that.
		slower := (bo.FwdTerms.MatmulSeconds-b.FwdTerms.MatmulSeconds)/tg.Perf.MatmulEfficiency + (bo.FwdKernels-b.FwdKernels)*tg.Perf.KernelSeconds
		hidden, comm := b.FwdDeviceSeconds-bo.FwdDeviceSeconds+slower, b.FwdTerms.CommSeconds
		if math.Abs(hidden-(comm-bo.FwdTerms.CommSeconds)) > 1e-12 || slower <= 0 {
			t.Errorf("%v: device time falls %g s (the products %g s slower), exposed communication %g s of %g s", c.link, hidden, slower, bo.FwdTerms.CommSeconds, comm)
		}
		// Hidden behind the products, the first of the 4 chunks' exchange stays.
		if first := math.Abs(bo.FwdTerms.CommSeconds-comm/4) < 1e-12; first != c.allHide || hidden <= 0 {
			t.Errorf("%v: %g s of %g s exposed; want only the first chunk's %v", c.link, bo.FwdTerms.CommSeconds, comm, c.allHide)
		}
	}
	if _, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs), Options{Batch: 1, Seq: 4096, TensorParallel: 4, TensorCommOverlap: true}); err == nil || !strings.Contains(err.Error(), "tensor_comm_overlap") {
		t.Errorf("overlap without sequence parallelism: %v", err)
	}
}

// TestTensorCommAsync: PyTorch's async tensor parallelism (Options.TensorCommAsync)
// hides what Transformer Engine's overlap hides, except the backward reduce-scatter of
// an input gradient that several projections sum: over NVLink, where the chunked
// overlap leaves 1/t of each collective, a Llama block (separate Q, K, V; gated MLP)
// keeps half of each sublayer's backward all-reduce whole, so its backward exposes
// 2 x (1/2 + 1/2 x 1/t) all-reduces where Transformer Engine's exposes 2 x 1/t; the
// forward hides as much. GPT-2's fused c_attn and one-product MLP fuse every
// collective: the backward exposes what Transformer Engine's does. Without the overlap
// it is refused, naming its field.
func TestTensorCommAsync(t *testing.T) {
	const tp = 4
	for _, c := range []struct {
		model string
		// keep is the backward's exposed all-reduces per block with async TP.
		keep float64
	}{
		{"llama-2-7b", 2 * (0.5 + 0.5/tp)},
		{"gpt2", 2.0 / tp},
	} {
		a, _ := arch.Bundled(c.model)
		tg := frameworkTarget(t, "h100-sxm", cluster.Compiled)
		tg.TensorLink = cluster.Link{BytesPerSecond: 450e9, LatencySeconds: 5e-6}
		o := Options{Batch: 1, Seq: 1024, TensorParallel: tp, SequenceParallel: true}
		est := func(overlap, async bool) Layer {
			t.Helper()
			o.TensorCommOverlap, o.TensorCommAsync = overlap, async
			r, err := Estimate(a, tg, o)
			if err != nil {
				t.Fatal(err)
			}
			return r.Layers[1]
		}
		off, te, async := est(false, false), est(true, false), est(true, true)
		ar := off.TensorAllReduceSeconds / 4 // two sublayers, one all-reduce each way
		if math.Abs(te.BwdTerms.CommSeconds-2*ar/tp) > 1e-12 || math.Abs(off.BwdTerms.CommSeconds-2*ar) > 1e-12 {
			t.Fatalf("%s: backward communication %g s, %g s with Transformer Engine's overlap; want %g and %g (all but 1/%d hidden)", c.model, off.BwdTerms.CommSeconds, te.BwdTerms.CommSeconds, 2*ar, 2*ar/tp, tp)
		}
		if got, want := async.BwdTerms.CommSeconds, c.keep*ar; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: async TP exposes %g s of the backward's communication, want %g s (%g all-reduces)", c.model, got, want, c.keep)
		}
		// The forward's collectives are all fused; its decomposed products are slower
		// (asyncChunks), which hides as much or more but costs as much or more.
		if async.FwdTerms.CommSeconds > te.FwdTerms.CommSeconds || async.FwdDeviceSeconds < te.FwdDeviceSeconds || async.TensorAllReduceSeconds != off.TensorAllReduceSeconds {
			t.Errorf("%s: async TP's forward exposes %g s in %g s, Transformer Engine's %g s in %g s; total %g s, was %g s", c.model, async.FwdTerms.CommSeconds, async.FwdDeviceSeconds,
				te.FwdTerms.CommSeconds, te.FwdDeviceSeconds, async.TensorAllReduceSeconds, off.TensorAllReduceSeconds)
		}
	}
	a, _ := arch.Bundled("llama-2-7b")
	_, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Compiled), Options{Batch: 1, Seq: 1024, TensorParallel: tp, SequenceParallel: true, TensorCommAsync: true})
	if err == nil || !strings.Contains(err.Error(), "tensor_comm_async") {
		t.Errorf("async TP without the overlap: %v, want an error naming tensor_comm_async", err)
	}
}

// TestEagerActivationTraffic: in eager PyTorch GPT-2's gelu_new is NewGELUActivation's
// tanh formula in eight operators, 36 bytes an element of the MLP's inner width in 16
// bits (eagerTraffic), while torch's exact GELU (activation_function "gelu", nn.GELU,
// LLM Foundry's MPT MLP) is one ATen kernel that reads and writes each element once: 4
// bytes, the analytic model's fused kernel. Both in the forward pass of one training
// microbatch; the compiled framework fuses either.
func TestEagerActivationTraffic(t *testing.T) {
	cfg := `{"model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2, "n_positions": 512, "vocab_size": 1024%s}`
	for _, c := range []struct {
		act       string
		eager     bool
		perElemFw float64
		kernels   float64
	}{
		{"", true, 36, 8}, // gelu_new, GPT2Config's default
		{`, "activation_function": "gelu_new"`, true, 36, 8},
		{`, "activation_function": "gelu"`, true, 4, 1},
		{`, "activation_function": "gelu"`, false, 4, 1},
		{"", false, 4, 1},
	} {
		a, err := arch.Parse([]byte(fmt.Sprintf(cfg, c.act)))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Batch: 2, Seq: 512, Attention: Flash}.withDefaults()
		sh := newShape(a, o)
		sh.eagerCode = c.eager
		var got *op
		p := sh.mlp()
		for i := range p.ops {
			if p.ops[i].name == "gelu" {
				got = &p.ops[i]
			}
		}
		n := float64(2 * 512 * 4 * 256) // tokens x inner width
		if got == nil || got.fwd.bytes != c.perElemFw*n || got.fwd.kernels != c.kernels {
			t.Errorf("%s%s eager %t: gelu op %+v, want %g bytes an element in %g kernels", a.ModelType, c.act, c.eager, got, c.perElemFw, c.kernels)
		}
	}
}

// TestMPTEagerCounts: LLM Foundry's MPT block in the eager mode takes its own counts
// (mptTraffic, mptBlock: read from the source), with the options that change them: the
// residual dropouts (5 bytes an element and one kernel each way), no_bias (the bias
// gradients: 6 bytes an element of the hidden width, 4 of the key-value width, 2 of the
// MLP's, four kernels) and torch.autocast's fp32 residual stream (precision amp).
func TestMPTEagerCounts(t *testing.T) {
	cfg := `{"model_type": "mpt", "d_model": 256, "n_heads": 4, "n_layers": 2, "max_seq_len": 512, "vocab_size": 1024%s}`
	for _, c := range []struct {
		extra     string
		precision Precision
		want      trafficCounts
	}{
		{"", Mixed, trafficCounts{fwd: perToken{20.039, 4, 0}, bwd: perToken{42.057, 8, 4}, fwdKernels: 5, bwdKernels: 11}},
		{`, "no_bias": true`, Mixed, trafficCounts{fwd: perToken{20.039, 4, 0}, bwd: perToken{36.057, 6, 0}, fwdKernels: 5, bwdKernels: 7}},
		{`, "resid_pdrop": 0.1`, Mixed, trafficCounts{fwd: perToken{30.039, 4, 0}, bwd: perToken{52.057, 8, 4}, fwdKernels: 7, bwdKernels: 13, dropout: 5}},
		{"", AMP, trafficCounts{fwd: perToken{40.047, 4, 0}, bwd: perToken{78.06, 8, 4}, fwdKernels: 7, bwdKernels: 15}},
	} {
		a, err := arch.Parse([]byte(fmt.Sprintf(cfg, c.extra)))
		if err != nil {
			t.Fatal(err)
		}
		sh := newShape(a, Options{Batch: 2, Seq: 512, Attention: FlashTriton, Precision: c.precision}.withDefaults())
		sh.eagerCode = true
		got, ok := sh.blockTraffic()
		near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
		if !ok || !near(got.fwd.hidden, c.want.fwd.hidden) || !near(got.bwd.hidden, c.want.bwd.hidden) || got.fwd.mlp != c.want.fwd.mlp ||
			got.bwd.mlp != c.want.bwd.mlp || got.bwd.kv != c.want.bwd.kv || got.fwdKernels != c.want.fwdKernels || got.bwdKernels != c.want.bwdKernels {
			t.Errorf("mpt%s %s: %+v, want %+v", c.extra, c.precision, got, c.want)
		}
		// Both halves take the counted traffic: no norm, GELU or residual of their own.
		for _, p := range []piece{sh.attention(false), sh.mlp()} {
			sh.countedTraffic(&p, p.module != ModMLP)
			for _, o := range p.ops {
				if o.fwd.flops == 0 && !o.core && o.name != "eager kernels (counted)" {
					t.Errorf("mpt%s: %s kept beside the counted traffic", c.extra, o.name)
				}
			}
		}
		ops, ok := sh.eagerAttention()
		mlp, _ := sh.eagerMLP()
		if !ok || ops != (hostOps{13 + 3, 32 + 3}) || mlp != (hostOps{9, 31}) {
			t.Errorf("mpt%s: host ops %+v and %+v, want MPT's 16, 35 and 9, 31", c.extra, ops, mlp)
		}
	}
}

// TestMPTFlashPadding: LLM Foundry's MPT under attn_impl flash, in the eager mode,
// unpads q, k and v and pads the output back around FlashAttention-2 (flash-attn's
// bert_padding): per token 2e(q + 2kv) + 3e q bytes forward and 3e(q + 2kv) + 2e q
// backward, 23 kernels and 7; with multi-head attention 18 and 22 bytes an element of
// the hidden width in 16 bits, with grouped key-value heads less. Triton's path, another
// family or another framework's code pads nothing; inference only the forward.
func TestMPTFlashPadding(t *testing.T) {
	cfg := `{"model_type": "mpt", "d_model": 256, "n_heads": 4, "n_layers": 2, "max_seq_len": 512, "vocab_size": 1024%s}`
	for _, c := range []struct {
		extra     string
		attention Attention
		eager     bool
		optimizer Optimizer
		fwd, bwd  float64 // bytes a token
	}{
		{"", Flash, true, AdamW, 18 * 256, 22 * 256},
		{`, "attn_config": {"attn_impl": "flash", "attn_type": "grouped_query_attention", "kv_n_heads": 2}`, Flash, true, AdamW, 2*2*(256+2*128) + 3*2*256, 3*2*(256+2*128) + 2*2*256},
		{"", Flash, true, None, 18 * 256, 0},
		{"", FlashTriton, true, AdamW, 0, 0},
		{"", Flash, false, AdamW, 0, 0},
	} {
		a, err := arch.Parse([]byte(fmt.Sprintf(cfg, c.extra)))
		if err != nil {
			t.Fatal(err)
		}
		sh := newShape(a, Options{Batch: 2, Seq: 512, Attention: c.attention, Optimizer: c.optimizer}.withDefaults())
		sh.eagerCode = c.eager
		var p piece
		sh.mptFlashPadding(&p)
		tokens := 2 * 512.0
		if c.fwd == 0 {
			if len(p.ops) != 0 {
				t.Errorf("mpt%s %s eager %v: %d ops, want none", c.extra, c.attention, c.eager, len(p.ops))
			}
			continue
		}
		if len(p.ops) != 1 {
			t.Fatalf("mpt%s: %d ops, want 1", c.extra, len(p.ops))
		}
		o := p.ops[0]
		wantBwdKernels := 7.0
		if c.bwd == 0 {
			wantBwdKernels = 0
		}
		if o.fwd.bytes != c.fwd*tokens || o.bwd.bytes != c.bwd*tokens || o.fwd.kernels != 23 || o.bwd.kernels != wantBwdKernels {
			t.Errorf("mpt%s %s: forward %v bytes in %v kernels, backward %v in %v; want %v in 23, %v in %v",
				c.extra, c.optimizer, o.fwd.bytes, o.fwd.kernels, o.bwd.bytes, o.bwd.kernels, c.fwd*tokens, c.bwd*tokens, wantBwdKernels)
		}
	}
}

// TestAsyncCopies: around the products it fuses, PyTorch's async tensor parallelism
// (asyncCopies, read from torch/distributed/_symmetric_memory/__init__.py) copies each
// all-gather's own m/t x h shard into symmetric memory (read and written: 2 e m h / t
// bytes, one kernel, once for the projections that share the gathered input) and sums
// each fused reduce-scatter's t stacked partials (the m x h partial output read, the
// m/t x h result written: e m h (1 + 1/t) bytes, one kernel). A block's sublayer does
// one of each in the forward pass; the backward gathers its output gradient before the
// scattering projection, and sums a fused input gradient only where one product makes
// it: GPT-2's fused c_attn and one-product fc1, not Llama's separate Q, K, V and gate
// and up projections (bwdGradSum, whose reduce-scatter stays NCCL's).
func TestAsyncCopies(t *testing.T) {
	const tp, batch, seq = 4.0, 2, 1024
	for _, c := range []struct {
		model string
		sum   bool // the backward sums a fused input gradient
	}{
		{"llama-2-7b", false},
		{"gpt2", true},
	} {
		a, _ := arch.Bundled(c.model)
		sh := newShape(a, Options{Batch: batch, Seq: seq, TensorParallel: tp, SequenceParallel: true}.withDefaults())
		e, m, h := sh.e, float64(batch*seq), float64(a.HiddenSize)
		shardCopy, partialSum := 2*e*m*h/tp, e*m*h*(1+1/tp)
		wantFwd, wantBwd, bwdKernels := work{0, shardCopy + partialSum, 2}, work{0, shardCopy, 1}, 1.0
		if c.sum {
			wantBwd, bwdKernels = work{0, shardCopy + partialSum, 2}, 2
		}
		for _, p := range []piece{sh.attention(false), sh.mlp()} {
			got, ok := asyncCopies(p, e, tp)
			if !ok || got.fwd != wantFwd || got.bwd != wantBwd || got.bwd.kernels != bwdKernels {
				t.Errorf("%s: async TP's copies %+v / %+v (ok %t), want forward %+v, backward %+v", c.model, got.fwd, got.bwd, ok, wantFwd, wantBwd)
			}
		}
		if _, ok := asyncCopies(sh.embedding(), e, tp); ok {
			t.Errorf("%s: the embedding fuses no product with a collective, yet copies", c.model)
		}
	}
}

// TestUserbuffersChunks: Transformer Engine's userbuffers with initialize_ub's default
// methods, on tensor parallelism of 8: a gathering projection's forward runs as a ring
// exchange of 8 products (7 more launches) on every multiprocessor, its backward's two
// products (bulk overlaps) on all but 16; a scattering projection's forward is the
// pipelined reduce-scatter's 4 products (3 more launches) on all but 16, its input
// gradient the ring exchange's 8 (7 more launches) on every one. Other operations and
// runs without the overlap are untouched.
func TestUserbuffersChunks(t *testing.T) {
	lin := func(name string) op { return matmul(name, 2, 1, 4096, 18432, 2304) }
	p := piece{ops: []op{gathering(lin("qkv")), lin("core"), scattering(lin("proj"))}}
	c := &calc{sh: &shape{tp: 8}, o: Options{TensorCommOverlap: true}}
	got := c.userbuffersChunks(p)
	for i, want := range []struct {
		fwdKernels, bwdKernels, fwdMargin, bwdMargin float64
	}{
		{1 + 7, 2, 0, 16},
		{1, 2, 0, 0},
		{1 + 3, 2 + 7, 16, 0},
	} {
		o := got.ops[i]
		if o.fwd.kernels != want.fwdKernels || o.bwd.kernels != want.bwdKernels || o.gemm.fwdMarginSMs != want.fwdMargin || o.gemm.bwdMarginSMs != want.bwdMargin {
			t.Errorf("%s: kernels %g and %g, margins %g and %g; want %+v", o.name, o.fwd.kernels, o.bwd.kernels, o.gemm.fwdMarginSMs, o.gemm.bwdMarginSMs, want)
		}
		if o.fwd.flops != p.ops[i].fwd.flops || o.bwd.flops != p.ops[i].bwd.flops {
			t.Errorf("%s: the work changed", o.name)
		}
	}
	if p.ops[0].fwd.kernels != 1 {
		t.Error("the piece's own operations were changed")
	}
	c.o.TensorCommOverlap = false
	if off := c.userbuffersChunks(p); off.ops[2].gemm.fwdMarginSMs != 0 || off.ops[0].fwd.kernels != 1 {
		t.Error("without the overlap the piece must be untouched")
	}
}
