package analytic

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	estimatepkg "pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

func bundled(t *testing.T, name string) *arch.Arch {
	t.Helper()
	a, err := arch.Bundled(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func gpt3(t *testing.T) *arch.Arch {
	t.Helper()
	data, err := os.ReadFile("testdata/gpt3-175b.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := arch.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func target(t *testing.T, name string) Target {
	t.Helper()
	tg, err := PresetTarget(name)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func estimate(t *testing.T, a *arch.Arch, o Options) *Result {
	t.Helper()
	r, err := Estimate(a, target(t, "a100-80gb"), o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func block(r *Result) Layer {
	for _, l := range r.Layers {
		if l.Kind == "block" {
			return l
		}
	}
	panic("no block")
}

// TestKorthikanti checks a GPT block's saved activations against Korthikanti et al. 2022,
// eq. (2) and section 5: s*b*h*(34 + 5*a*s/h) bytes at 16 bits with dropout and eager
// attention; 34*s*b*h with selective recomputation; 2*s*b*h (the block input) with full
// recomputation. Flash attention has no s^2 term; it keeps the softmax statistics
// (fp32, 4*a*s*b bytes) instead.
func TestKorthikanti(t *testing.T) {
	a := gpt3(t)
	for _, bs := range []struct{ b, s int }{{1, 2048}, {4, 512}, {2, 1000}} {
		b, s, h, heads := int64(bs.b), int64(bs.s), int64(12288), int64(96)
		sbh := s * b * h
		tests := []struct {
			attn Attention
			rc   Recompute
			want int64
		}{
			{Eager, NoRecompute, 34*sbh + 5*heads*s*s*b},
			{Eager, Selective, 34 * sbh},
			{Eager, Full, 2 * sbh},
			{Flash, NoRecompute, 34*sbh + 4*heads*s*b},
			{Flash, Selective, 34*sbh + 4*heads*s*b},
			{Flash, Full, 2 * sbh},
		}
		for _, tt := range tests {
			r := estimate(t, a, Options{Batch: bs.b, Seq: bs.s, Attention: tt.attn, Recompute: tt.rc})
			if got := block(r).SavedActivationBytes; got != tt.want {
				t.Errorf("b=%d s=%d %s %s: saved %d, want %d", bs.b, bs.s, tt.attn, tt.rc, got, tt.want)
			}
		}
	}
}

// TestActivationsLlama checks a Llama block (no dropout, grouped-query attention, SwiGLU)
// against the closed form of its saved tensors: norm inputs and projection inputs 4eTh,
// Q and the output projection's input 2eTq, and for eager attention K and V repeated to
// all heads 2eTq and the softmax e*b*a*s^2, for flash K and V 2eT*kv and the statistics
// 4*b*a*s; the SwiGLU keeps 4eTf.
func TestActivationsLlama(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const b, s, e = 2, 4096, 2
	const T, h, q, kv, f, heads = b * s, 4096, 4096, 1024, 14336, 32
	common := int64(e * (4*T*h + 2*T*q + 4*T*f))
	eager := common + e*2*T*q + e*b*heads*s*s
	flash := common + e*2*T*kv + 4*b*heads*s
	for _, tt := range []struct {
		attn Attention
		want int64
	}{{Eager, eager}, {Flash, flash}} {
		r := estimate(t, a, Options{Batch: b, Seq: s, Attention: tt.attn})
		if got := block(r).SavedActivationBytes; got != tt.want {
			t.Errorf("%s: saved %d, want %d", tt.attn, got, tt.want)
		}
	}
	// Sublayers split the same bytes in two.
	r := estimate(t, a, Options{Batch: b, Seq: s, Split: Sublayers})
	if got := r.Layers[1].SavedActivationBytes + r.Layers[2].SavedActivationBytes; got != flash {
		t.Errorf("attention + mlp saved %d, want %d", got, flash)
	}
	if r.Layers[1].Name != "block.0.attention" || r.Layers[2].Name != "block.0.mlp" || len(r.Layers) != 2*32+3 {
		t.Errorf("layers %s, %s, ... (%d): want block.0.attention, block.0.mlp, 67 layers", r.Layers[1].Name, r.Layers[2].Name, len(r.Layers))
	}
}

// TestSixN checks training FLOPs per token against 6 * params (Kaplan et al. 2020): the
// matrix products do 2 FLOPs per weight per token forward and 4 backward; attention adds
// 2 * 2 * s * q per layer forward (scores and weighted sum), so 12*L*s*q per token in
// training. Lookups (embeddings, learned positions), biases and norms do no matrix
// products. So training FLOPs per token = 6 * (matrix weights) + 12*L*s*q exactly, which
// exceeds 6N by about s/(6h) of it (2.8% for GPT-3 at s = 2048, 16.7% for Llama-2-7B at
// s = 4096, 22% for GPT-2 small at s = 1024), less the share of N that only lookups use (2% for Llama-2-7B's untied input
// embedding). The tolerances below are these closed forms, rounded outwards.
func TestSixN(t *testing.T) {
	tests := []struct {
		a        *arch.Arch
		seq      int
		matrices int64 // weights of matrix products
		lo, hi   float64
	}{
		{gpt3(t), 2048, 96*12*12288*12288 + 50257*12288, 1.02, 1.03},
		{bundled(t, "llama-2-7b"), 4096, 32*(4*4096*4096+3*4096*11008) + 32000*4096, 1.13, 1.15},
		{bundled(t, "gpt2"), 1024, 12*12*768*768 + 50257*768, 1.14, 1.15},
	}
	for _, tt := range tests {
		r := estimate(t, tt.a, Options{Batch: 1, Seq: tt.seq, Attention: Eager})
		tokens := float64(tt.seq)
		perToken := (r.Total.FwdFLOPs + r.Total.BwdFLOPs) / tokens
		L, q := float64(tt.a.NumLayers), float64(tt.a.QDim())
		want := 6*float64(tt.matrices) + 12*L*tokens*q
		if math.Abs(perToken-want) > 1e-12*want {
			t.Errorf("%s: training FLOPs per token %.6g, want %.6g", tt.a.Name, perToken, want)
		}
		if r.Total.BwdFLOPs != 2*r.Total.FwdFLOPs {
			t.Errorf("%s: backward FLOPs %.6g, want twice forward %.6g", tt.a.Name, r.Total.BwdFLOPs, r.Total.FwdFLOPs)
		}
		ratio := perToken / (6 * float64(tt.a.Params()))
		if ratio < tt.lo || ratio > tt.hi {
			t.Errorf("%s: training FLOPs / (6N) = %.4f, want in [%v, %v]", tt.a.Name, ratio, tt.lo, tt.hi)
		}
	}
}

// TestFlashCausalFLOPs: causal flash attention skips the upper triangle (half the score
// FLOPs); its backward pass does 2.5 times the forward's.
func TestFlashCausalFLOPs(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	const s = 4096
	eager := block(estimate(t, a, Options{Batch: 1, Seq: s, Attention: Eager}))
	flash := block(estimate(t, a, Options{Batch: 1, Seq: s, Attention: Flash}))
	scores := 4.0 * s * s * 4096 // 2 * 2 * s^2 * q
	if got, want := eager.FwdFLOPs-flash.FwdFLOPs, scores/2; got != want {
		t.Errorf("eager - flash forward FLOPs = %v, want %v", got, want)
	}
	if got, want := flash.BwdFLOPs-2*flash.FwdFLOPs, 0.5*scores/2; got != want {
		t.Errorf("flash backward - 2 x forward = %v, want %v", got, want)
	}
}

// TestRecomputeTime: full recomputation adds the block's forward to its backward;
// selective (eager) adds the attention core's forward.
func TestRecomputeTime(t *testing.T) {
	a := bundled(t, "gpt2-xl")
	o := Options{Batch: 4, Seq: 1024, Attention: Eager}
	none := block(estimate(t, a, o))
	o.Recompute = Full
	full := block(estimate(t, a, o))
	if d := full.BwdSeconds - none.BwdSeconds - none.FwdSeconds; math.Abs(d) > 1e-15 {
		t.Errorf("full: backward %v, want %v + %v", full.BwdSeconds, none.BwdSeconds, none.FwdSeconds)
	}
	if full.BwdFLOPs != none.BwdFLOPs+none.FwdFLOPs {
		t.Errorf("full: backward FLOPs %v, want %v", full.BwdFLOPs, none.BwdFLOPs+none.FwdFLOPs)
	}
	o.Recompute = Selective
	sel := block(estimate(t, a, o))
	core := 4.0 * 4 * 1024 * 1024 * 1600 // scores and weighted sum
	if sel.BwdFLOPs != none.BwdFLOPs+core {
		t.Errorf("selective: backward FLOPs %v, want %v", sel.BwdFLOPs, none.BwdFLOPs+core)
	}
	if !(sel.BwdSeconds > none.BwdSeconds && sel.BwdSeconds < full.BwdSeconds) {
		t.Errorf("selective backward %v should lie between none %v and full %v", sel.BwdSeconds, none.BwdSeconds, full.BwdSeconds)
	}
}

// TestRoofline checks times against the roofline's closed form: the final norm is one
// memory-bound kernel moving 2*e*T*h bytes forward and 1.5 times that backward; the
// logits product of GPT-2 XL is compute-bound.
func TestRoofline(t *testing.T) {
	a := bundled(t, "gpt2-xl")
	tg := target(t, "a100-80gb")
	r, err := Estimate(a, tg, Options{Batch: 8, Seq: 1024, Optimizer: None})
	if err != nil {
		t.Fatal(err)
	}
	bw := 2039e9 * 0.8
	norm := r.Layers[len(r.Layers)-2]
	bytes := 2.0 * 2 * 8 * 1024 * 1600
	if want := 4e-6 + bytes/bw; math.Abs(norm.FwdSeconds-want) > 1e-18 {
		t.Errorf("final norm forward %v s, want %v", norm.FwdSeconds, want)
	}
	head := r.Layers[len(r.Layers)-1]
	flops := 2.0 * 8 * 1024 * 1600 * 50257
	// The logits product reduces over K = 1,600 < gemmReferenceK: below the large
	// products' rate by its shape (108 SMs on the A100).
	shapeFrac := productFraction(1, 8*1024, 1600, 50257, 108, gemmTileOverheadK)
	if want := 4e-6 + flops/(312e12*0.75*shapeFrac); math.Abs(head.FwdSeconds-want) > 1e-15 {
		t.Errorf("inference head forward %v s, want %v", head.FwdSeconds, want)
	}
	if head.BwdSeconds != 0 || head.OutputBytes != 2*8*1024*50257 {
		t.Errorf("inference head: backward %v, output %d; want 0 and the logits", head.BwdSeconds, head.OutputBytes)
	}
	// Training: backward of the norm moves 1.5 times the bytes.
	r = estimate(t, a, Options{Batch: 8, Seq: 1024})
	norm = r.Layers[len(r.Layers)-2]
	if want := 4e-6 + 1.5*bytes/bw; math.Abs(norm.BwdSeconds-want) > 1e-18 {
		t.Errorf("final norm backward %v s, want %v", norm.BwdSeconds, want)
	}
	// Overrides: twice the matrix efficiency halves a compute-bound product's time.
	tg.Perf.MatmulEfficiency = 1
	tg.Perf.KernelSeconds = 0
	r2, _ := Estimate(a, tg, Options{Batch: 8, Seq: 1024, Optimizer: None})
	if got, want := r2.Layers[len(r2.Layers)-1].FwdSeconds, flops/312e12/shapeFrac; math.Abs(got-want) > 1e-15 {
		t.Errorf("head at full efficiency %v s, want %v", got, want)
	}
}

// TestStateBytes checks bytes per parameter: mixed precision with Adam 2+2+4+4+4 = 16,
// pure bf16 with Adam 2+2+2+2 = 8, fp32 with Adam 16, mixed with SGD 2+2+4+4 = 12,
// inference 2; ZeRO-1 over 4 replicas shards the 12 bytes of fp32 state. Megatron's fp32
// gradient buffers: 2+4+4+4+4 = 18, and 6 + 12/d with its distributed optimizer
// (theoretical_memory_usage.py); PyTorch AMP: fp32 weights, gradients and state, 16.
func TestStateBytes(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	n := a.Params()
	tests := []struct {
		o                    Options
		weights, grads, opti int64
	}{
		{Options{}, 2 * n, 2 * n, 12 * n},
		{Options{Precision: Pure}, 2 * n, 2 * n, 4 * n},
		{Options{DType: FP32}, 4 * n, 4 * n, 8 * n},
		{Options{Optimizer: SGD}, 2 * n, 2 * n, 8 * n},
		{Options{Optimizer: SGD, Precision: Pure, DType: FP16}, 2 * n, 2 * n, 2 * n},
		{Options{Optimizer: None}, 2 * n, 0, 0},
		{Options{DataParallel: 4, Sharding: ZeRO1}, 2 * n, 2 * n, 3 * n},
		// ZeRO-2 shards the gradients too (2 + (2 + 12)/d); ZeRO-3 everything: 16/d per
		// parameter (Rajbhandari et al. 2020, Figure 1: (2 + 2 + K) Psi / N_d).
		{Options{DataParallel: 4, Sharding: ZeRO2}, 2 * n, n / 2, 3 * n},
		{Options{DataParallel: 8, Sharding: ZeRO3}, n / 4, n / 4, 12 * n / 8},
		// HSDP: sharded over its group of 4 devices, whatever the replicas.
		{Options{DataParallel: 32, Sharding: HSDP, ShardGroup: 4}, n / 2, n / 2, 3 * n},
		// Context parallelism shards over data x context (Megatron-LM's distributed
		// optimizer over the DP x CP group).
		{Options{DataParallel: 2, Context: 2, Sharding: ZeRO3}, n / 2, n / 2, 3 * n},
		{Options{DataParallel: 4}, 2 * n, 2 * n, 12 * n},
		{Options{Precision: MixedFP32Grads}, 2 * n, 4 * n, 12 * n},
		{Options{Precision: MixedFP32Grads, DataParallel: 8, Sharding: ZeRO1}, 2 * n, 4 * n, 12 * n / 8},
		{Options{Precision: AMP}, 4 * n, 4 * n, 8 * n},
		{Options{Precision: AMP, Optimizer: SGD}, 4 * n, 4 * n, 4 * n},
	}
	for _, tt := range tests {
		tt.o.Batch, tt.o.Seq = 1, 128
		r := estimate(t, a, tt.o)
		got := r.Total
		if got.WeightsBytes != tt.weights || got.GradsBytes != tt.grads || got.OptimizerBytes != tt.opti {
			t.Errorf("%+v: weights %d grads %d optimizer %d, want %d %d %d", tt.o, got.WeightsBytes, got.GradsBytes, got.OptimizerBytes, tt.weights, tt.grads, tt.opti)
		}
		var sum int64
		for _, l := range r.Layers {
			sum += l.ParamBytes + l.GradBytes + l.OptimizerBytes
		}
		if sum != tt.weights+tt.grads+tt.opti {
			t.Errorf("%+v: layers hold %d bytes of state, total says %d", tt.o, sum, tt.weights+tt.grads+tt.opti)
		}
	}
}

// TestDeepSpeedBF16Bytes: DeepSpeed's BF16 optimizer (bf16_optimizer.py, DeepSpeed#1801)
// keeps bf16 weights (2), an unsharded fp32 gradient buffer (4), the bf16 gradients the
// pipeline engine leaves beside it (2: update_hp_grads(clear_lp_grads=False)), and fp32
// master weights and Adam's moments sharded over the d replicas (12/d): 8 + 12/d bytes a
// parameter, 20 without sharding. The 16-bit copies are their own part; the gradients
// the data-parallel reduction moves (FullBytes) are the fp32 ones, as
// get_grads_for_reduction returns fp32_groups_gradients_flat; and the peak is
// mixed-fp32-grads' plus the copies.
func TestDeepSpeedBF16Bytes(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	n := a.Params()
	for _, d := range []int{1, 8} {
		o := Options{Batch: 1, Seq: 128, Precision: DeepSpeedBF16, DataParallel: d}
		if d > 1 {
			o.Sharding = ZeRO1
		}
		r := estimate(t, a, o)
		got := r.Total
		if got.WeightsBytes != 2*n || got.GradsBytes != 4*n || got.GradCopyBytes != 2*n || got.OptimizerBytes != 12*n/int64(d) {
			t.Errorf("d=%d: weights %d grads %d copies %d optimizer %d, want %d %d %d %d", d, got.WeightsBytes, got.GradsBytes, got.GradCopyBytes, got.OptimizerBytes, 2*n, 4*n, 2*n, 12*n/int64(d))
		}
		o.Precision = MixedFP32Grads
		ref := estimate(t, a, o).Total
		if got.PeakBytes != ref.PeakBytes+2*n {
			t.Errorf("d=%d: peak %d, want mixed-fp32-grads' %d + the copies %d", d, got.PeakBytes, ref.PeakBytes, 2*n)
		}
		var copies, params, full int64
		for i, l := range r.Layers {
			copies += l.GradCopyBytes
			_, g := r.FullBytes(i)
			full += g
		}
		for _, l := range r.Model().Layers {
			params += l.ParamBytes
		}
		if copies != 2*n {
			t.Errorf("d=%d: layers keep %d bytes of 16-bit gradients, want %d", d, copies, 2*n)
		}
		if params != 8*n {
			t.Errorf("d=%d: the model's layers hold %d bytes of weights and gradients, want 2 + 4 + 2 = 8 a parameter: %d", d, params, 8*n)
		}
		if full != 4*n {
			t.Errorf("d=%d: the data-parallel reduction moves %d bytes, want the fp32 gradients %d", d, full, 4*n)
		}
	}
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{DType: FP16}, "needs dtype bf16, got fp16"},
		{Options{DataParallel: 4, Sharding: ZeRO2}, "needs sharding none or zero1, got zero2"},
		{Options{DataParallel: 4, Sharding: ZeRO3}, "needs sharding none or zero1, got zero3"},
		{Options{Optimizer: None}, "applies to training"},
	} {
		tt.o.Batch, tt.o.Seq, tt.o.Precision = 1, 128, DeepSpeedBF16
		err := tt.o.Validate()
		if err == nil || !strings.Contains(err.Error(), "precision: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one naming precision: %s", tt.o, err, tt.want)
		}
	}
}

// TestAMPWeightCopies: under PyTorch AMP each block keeps a 16-bit copy of its projection
// weights for the backward pass (autocast's cast cache), 2 bytes per parameter beside the
// activations of mixed precision; the norms' weights are not cast.
func TestAMPWeightCopies(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	mixed := block(estimate(t, a, Options{Batch: 1, Seq: 1024}))
	amp := block(estimate(t, a, Options{Batch: 1, Seq: 1024, Precision: AMP}))
	h := int64(a.HiddenSize)
	if got, want := amp.SavedActivationBytes-mixed.SavedActivationBytes, 2*(mixed.Params-2*h); got != want {
		t.Errorf("AMP keeps %d bytes more per block, want the projections' 16-bit copies %d", got, want)
	}
	if !(amp.FwdSeconds > mixed.FwdSeconds) {
		t.Errorf("AMP forward %v s, not slower than mixed %v s (the casts)", amp.FwdSeconds, mixed.FwdSeconds)
	}
	grads := estimate(t, a, Options{Batch: 1, Seq: 1024, Precision: MixedFP32Grads})
	if got, want := grads.Total.GradsBytes, 2*estimate(t, a, Options{Batch: 1, Seq: 1024}).Total.GradsBytes; got != want {
		t.Errorf("fp32 gradients %d bytes, want twice mixed's %d", got, want)
	}
}

// TestHeadLogits: the head keeps its input and the fp32 log-probabilities (4*T*V), and its
// working set peaks in the backward pass at 12*T*V plus its input and the input's gradient.
func TestHeadLogits(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	const T, h, V = 4 * 512, 4096, 32000
	r := estimate(t, a, Options{Batch: 4, Seq: 512})
	head := r.Layers[len(r.Layers)-1]
	if want := int64(2*T*h + 4*T*V); head.SavedActivationBytes != want {
		t.Errorf("head saved %d, want %d", head.SavedActivationBytes, want)
	}
	if want := int64(2*T*h + 4*T*V + 8*T*V + 4 + 2*T*h); head.TemporaryBytes != want {
		t.Errorf("head temporary %d, want %d", head.TemporaryBytes, want)
	}
	if head.OutputBytes != 4 {
		t.Errorf("head output %d, want the 4-byte loss", head.OutputBytes)
	}
}

func onePreset(t *testing.T, device string, n int) *cluster.Cluster {
	t.Helper()
	c, err := cluster.FromPreset(device, n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestModelOneStage: planned on one device, the model needs exactly the estimate's peak
// (the estimator and the analytic totals count the same things), for tied and untied
// embeddings held either way.
func TestModelOneStage(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{"gpt2-xl", Options{Batch: 2, Seq: 1024}},
		{"gpt2-xl", Options{Batch: 2, Seq: 1024, Tie: TieStage}},
		{"gpt2", Options{Batch: 2, Seq: 1024, Split: Sublayers, Attention: Eager, Recompute: Full}},
		{"bert-base", Options{Batch: 8, Seq: 512}},
		{"llama-3.2-1b", Options{Batch: 1, Seq: 4096, Recompute: Selective, Attention: Eager}},
		{"llama-2-7b", Options{Batch: 1, Seq: 4096, Optimizer: None}},
		{"mixtral-8x7b", Options{Batch: 1, Seq: 1024, Optimizer: None}},
	} {
		r := estimate(t, bundled(t, tt.name), tt.o)
		m := r.Model()
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		c := onePreset(t, "b200", 1)
		c.Devices[0].MemoryBytes = 1 << 50
		p, err := plan.Make(m, c, plan.Options{})
		if tt.o.Optimizer == None {
			p, err = plan.Make(m, c, plan.Options{Estimate: estimateInference()})
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := p.Stages[0].MemoryBytes; got != r.Total.PeakBytes {
			t.Errorf("%s %+v: one-stage plan needs %d bytes, estimate's peak is %d", tt.name, tt.o, got, r.Total.PeakBytes)
		}
		if got, want := p.Stages[0].Compute, r.Total.FwdSeconds+r.Total.BwdSeconds; math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: one-stage compute %v, want %v", tt.name, got, want)
		}
	}
}

// TestTiedPlacement: with a tied matrix copied, stages are free and each end holds a
// copy; held in one stage, the model cannot be split.
func TestTiedPlacement(t *testing.T) {
	a := bundled(t, "gpt2-xl")
	copyModel := estimate(t, a, Options{Batch: 1, Seq: 1024}).Model()
	p, err := plan.Make(copyModel, onePreset(t, "a100-80gb", 4), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tied := int64(50257*1600) * 16
	if first, last := p.Stages[0].SharedBytes, p.Stages[3].SharedBytes; first != tied || last != tied {
		t.Errorf("shared bytes of the first and last stage %d, %d: want the tied matrix %d on both", first, last, tied)
	}
	stageModel := estimate(t, a, Options{Batch: 1, Seq: 1024, Tie: TieStage}).Model()
	_, err = plan.Make(stageModel, onePreset(t, "a100-80gb", 4), plan.Options{})
	if !errors.Is(err, plan.ErrNoFit) || !strings.Contains(err.Error(), "tie groups") {
		t.Errorf("tie stage on 4 stages: error %v, want no fit because of tie groups", err)
	}
	r := estimate(t, a, Options{Batch: 1, Seq: 1024})
	if want := int64(50257 * 1600 * 2); r.Total.TiedAllReduceBytes != want {
		t.Errorf("tied all-reduce %d bytes, want %d", r.Total.TiedAllReduceBytes, want)
	}
	if want := 3e-6 + float64(50257*1600*2)/cluster.NVLinkCollectiveBytesPerSecond(3, 12); math.Abs(r.Total.TiedAllReduceSeconds-want) > 1e-15 {
		t.Errorf("tied all-reduce %v s, want %v", r.Total.TiedAllReduceSeconds, want)
	}
}

func TestOptionErrors(t *testing.T) {
	a := bundled(t, "gpt2")
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Seq: 128}, "batch: must be between 1 and 1048576, got 0"},
		{Options{Batch: 1}, "seq: must be between 1 and 1048576, got 0"},
		{Options{Batch: 1 << 20, Seq: 1 << 20}, "batch: batch * seq must be at most 67108864 tokens"},
		{Options{Batch: 1, Seq: 2048}, "seq: must be at most 1024, the learned position embeddings of gpt2, got 2048"},
		{Options{Batch: 1, Seq: 8, DType: "int8"}, `dtype: must be one of bf16, fp16, fp32, fp8, got "int8"`},
		{Options{Batch: 1, Seq: 8, DType: FP32, Precision: Mixed}, "precision: mixed keeps fp32 weights or master weights"},
		{Options{Batch: 1, Seq: 8, DType: FP32, Precision: AMP}, "precision: amp keeps fp32 weights or master weights"},
		{Options{Batch: 1, Seq: 8, Precision: "fp32-master"}, `precision: must be one of pure, mixed, mixed-fp32-grads, amp, deepspeed-bf16, got "fp32-master"`},
		{Options{Batch: 1, Seq: 8, Optimizer: "lamb"}, `optimizer: must be one of adamw, adam, sgd, none, got "lamb"`},
		{Options{Batch: 1, Seq: 8, Attention: "sparse"}, `attention: must be one of eager, flash, flash3, cudnn, flash-triton, flash1, got "sparse"`},
		{Options{Batch: 1, Seq: 8, Recompute: "some"}, `recompute: must be one of none, selective, full, selective-op, got "some"`},
		{Options{Batch: 1, Seq: 8, Split: "op"}, `split: must be one of block, sublayer, got "op"`},
		{Options{Batch: 1, Seq: 8, Tie: "none"}, `tie: must be one of copy, stage, got "none"`},
		{Options{Batch: 1, Seq: 8, DataParallel: -2}, "data_parallel: must be between 1 and 1048576, got -2"},
		{Options{Batch: 1, Seq: 8, Optimizer: None, Recompute: Full}, "recompute: needs training"},
	}
	for _, tt := range tests {
		_, err := Estimate(a, target(t, "h100-sxm"), tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.want)
		}
		if _, ok := model.AsFieldErrors(err); err != nil && !ok {
			t.Errorf("%+v: error %v is not a field error", tt.o, err)
		}
	}
	bad := target(t, "h100-sxm")
	bad.Perf.MatmulEfficiency = 1.5
	bad.Device.FLOPSPerSecond = 0
	_, err := Estimate(a, bad, Options{Batch: 1, Seq: 8})
	for _, want := range []string{"perf.matmul_efficiency: must be in (0, 1], got 1.5", "device.flops_per_second: must be > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad target: error %v, want %q", err, want)
		}
	}
}

// TestEveryPresetAndConfig runs every bundled config on every device preset, training
// and inference, and checks that the model is valid and the figures are finite.
func TestEveryPresetAndConfig(t *testing.T) {
	for _, dev := range cluster.DeviceNames() {
		tg := target(t, dev)
		for _, name := range arch.BundledNames() {
			a := bundled(t, name)
			for _, o := range []Options{{Batch: 2, Seq: 512}, {Batch: 1, Seq: 512, Optimizer: None, Attention: Eager, Split: Sublayers}} {
				if a.MLA() && o.Attention == Eager {
					o.Attention = Flash // latent attention is costed with flash attention only
				}
				r, err := Estimate(a, tg, o)
				if err != nil {
					t.Fatalf("%s on %s: %v", name, dev, err)
				}
				if err := r.Model().Validate(); err != nil {
					t.Errorf("%s on %s: %v", name, dev, err)
				}
				if s := r.Total.StepSeconds; !(s > 0) || math.IsInf(s, 0) {
					t.Errorf("%s on %s: step %v s", name, dev, s)
				}
			}
		}
	}
}

type estimateOptions = estimatepkg.Options

func estimateInference() (o estimateOptions) {
	o.Inference = true
	return o
}
