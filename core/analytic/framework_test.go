package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

func frameworkTarget(t *testing.T, device, fw string) Target {
	t.Helper()
	tg, err := PresetTarget(device)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Framework, err = cluster.LookupFramework(fw); err != nil {
		t.Fatal(err)
	}
	return tg
}

// A pass takes the longer of its device and host time: a small model in eager PyTorch is
// host-bound, with CUDA graphs it is not; the device time is eager's unfused gelu_new's
// more (eagerTraffic).
func TestHostBound(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	o := Options{Batch: 1, Seq: 128}
	eager, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Eager), o)
	if err != nil {
		t.Fatal(err)
	}
	graphs, _ := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs), o)
	b, g := eager.Layers[1], graphs.Layers[1]
	if b.FwdDeviceSeconds <= g.FwdDeviceSeconds || b.FwdSeconds != b.FwdHostSeconds || b.FwdHostSeconds <= b.FwdDeviceSeconds {
		t.Errorf("eager block: device %g host %g time %g", b.FwdDeviceSeconds, b.FwdHostSeconds, b.FwdSeconds)
	}
	if g.FwdSeconds != g.FwdDeviceSeconds {
		t.Errorf("cuda-graphs block: device %g host %g time %g", g.FwdDeviceSeconds, g.FwdHostSeconds, g.FwdSeconds)
	}
	if eager.Total.OptimizerHostSeconds != float64(eager.Total.ParamTensors)*5e-6 || eager.Total.ParamTensors != 2+12*12+2 {
		t.Errorf("optimizer host %g s over %d tensors", eager.Total.OptimizerHostSeconds, eager.Total.ParamTensors)
	}
	// foreach AdamW's temporary (4 B/param) is the step's peak when activations are small.
	if eager.Total.OptimizerTempBytes != 4*eager.Total.DeviceParams || graphs.Total.OptimizerTempBytes != 0 {
		t.Errorf("optimizer temporaries %d and %d", eager.Total.OptimizerTempBytes, graphs.Total.OptimizerTempBytes)
	}
	tt := eager.Total
	if tt.PeakDeviceBytes != tt.PeakBytes+tt.ReservedBytes+(1<<30) {
		t.Errorf("device peak %d = %d + %d + 1 GiB?", tt.PeakDeviceBytes, tt.PeakBytes, tt.ReservedBytes)
	}
}

// TestFP8: fp8 on an H100 speeds a Llama-2-7B block up by about what Transformer
// Engine gives end to end (Megatron-LM issue 396: 13B GPT on H100, 0.34 s to 0.24 s per
// step; ROCm/TransformerEngine issue 72: GPT-2 XL on an H100, 1.33 times), not the
// datasheets' 2; a device without fp8 units refuses it.
func TestFP8(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	o := Options{Batch: 1, Seq: 4096}
	bf16, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.NoFramework), o)
	if err != nil {
		t.Fatal(err)
	}
	o.DType = FP8
	fp8, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.NoFramework), o)
	if err != nil {
		t.Fatal(err)
	}
	b, f := bf16.Layers[1], fp8.Layers[1]
	if r := (b.FwdSeconds + b.BwdSeconds) / (f.FwdSeconds + f.BwdSeconds); !(r > 1.2 && r < 1.5) {
		t.Errorf("fp8 block %.3g times as fast as bf16, want 1.2 to 1.5", r)
	}
	if _, err := Estimate(a, frameworkTarget(t, "a100-80gb", cluster.Eager), o); err == nil || !strings.Contains(err.Error(), "dtype: fp8 needs") {
		t.Errorf("fp8 on an A100: %v", err)
	}
}

// TestFusedActivation: a framework that fuses the SwiGLU (Megatron-LM's bias_swiglu,
// Inductor) keeps no SiLU output: L*e*T*f bytes fewer than eager PyTorch on Llama-2-7B
// (L = 32, f = 11,008, T = 4,096 tokens, e = 2); and its fused cross-entropy keeps the
// 16-bit logits (their gradient, in place) where PyTorch's keeps fp32 log-probabilities:
// (4 - e)*T*V bytes fewer (V = 32,000); its working memory holds no fp32 copies.
func TestFusedActivation(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	o := Options{Batch: 1, Seq: 4096}
	eager, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Eager), o)
	if err != nil {
		t.Fatal(err)
	}
	fused, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := eager.Total.ActivationBytes-fused.Total.ActivationBytes, int64(32*2*4096*11008+2*4096*32000); got != want {
		t.Errorf("fused SwiGLU and cross-entropy keep %d bytes fewer, want %d", got, want)
	}
	e, f := eager.Layers[len(eager.Layers)-1], fused.Layers[len(fused.Layers)-1]
	if f.SavedActivationBytes != 2*4096*4096+2*4096*32000 {
		t.Errorf("fused cross-entropy's head keeps %d bytes, want its input and the 16-bit logits, %d", f.SavedActivationBytes, 2*4096*4096+2*4096*32000)
	}
	if !(f.TemporaryBytes < e.TemporaryBytes-int64(8*4096*32000)) {
		t.Errorf("head working memory %d fused, %d eager: want no fp32 copies of the logits", f.TemporaryBytes, e.TemporaryBytes)
	}
}

// TestMegatronEager: Megatron-Core without CUDA graphs (cluster.Megatron) costs a block's
// forward pass as cuda-graphs does on the device, and the block as it does in memory
// (its backward pass has the main_grad hook's adds and Transformer Engine's norm
// finalize kernels besides: TestMainGradBuffer), but its host launches every kernel at
// eager PyTorch's cost per operator: a dense Llama block at one 4,096-token sequence on a
// B200 is device-bound, a 128-token one host-bound; under cuda-graphs neither is.
func TestMegatronEager(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	eager, err := cluster.LookupFramework(cluster.Eager)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		seq       int
		hostBound bool
	}{{4096, false}, {128, true}} {
		o := Options{Batch: 1, Seq: tt.seq}
		m, err := Estimate(a, frameworkTarget(t, "b200", cluster.Megatron), o)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Estimate(a, frameworkTarget(t, "b200", cluster.CUDAGraphs), o)
		if err != nil {
			t.Fatal(err)
		}
		lm, lg := m.Layers[1], g.Layers[1]
		if lm.FwdDeviceSeconds != lg.FwdDeviceSeconds || lm.FwdKernels != lg.FwdKernels ||
			lm.SavedActivationBytes != lg.SavedActivationBytes || m.Total.PeakBytes != g.Total.PeakBytes {
			t.Errorf("seq %d: megatron and cuda-graphs differ on the device or in memory: %+v\n%+v", tt.seq, lm, lg)
		}
		if want := lm.FwdKernels*eager.HostKernelSeconds + eager.HostLayerSeconds; math.Abs(lm.FwdHostSeconds-want) > 1e-15 {
			t.Errorf("seq %d: forward host %v s, want %v kernels x %v s + %v s", tt.seq, lm.FwdHostSeconds, lm.FwdKernels, eager.HostKernelSeconds, eager.HostLayerSeconds)
		}
		if bound := lm.FwdSeconds == lm.FwdHostSeconds && lm.FwdHostSeconds > lm.FwdDeviceSeconds; bound != tt.hostBound {
			t.Errorf("seq %d: forward device %v s, host %v s: host-bound %v, want %v", tt.seq, lm.FwdDeviceSeconds, lm.FwdHostSeconds, bound, tt.hostBound)
		}
		if lg.FwdSeconds != lg.FwdDeviceSeconds {
			t.Errorf("seq %d: cuda-graphs forward %v s, device %v s", tt.seq, lg.FwdSeconds, lg.FwdDeviceSeconds)
		}
	}
}

// TestCrossEntropyKernels: the output layer's kept and working bytes under each loss
// kernel (cluster.Framework.SetCrossEntropy), in closed form for Llama-2-7B's head at one
// 4,096-token sequence (T = 4,096, h = 4,096, V = 32,000, e = 2) in eager PyTorch, which
// holds the returned logits until the step ends. Each keeps the head's input (e*T*h) and
// its backward pass holds that input's gradient (e*T*h) and the 4-byte loss:
//   - unfused (F.cross_entropy on fp32 logits): the fp32 log-probabilities (4*T*V) kept;
//     the backward pass holds their gradient and the logits' fp32 gradient (8*T*V) and
//     the 16-bit logits returned (e*T*V);
//   - fused (flash-attn's): the 16-bit logits and the rows' log-sum-exps (e*T*V + 4*T)
//     kept; the backward pass writes a new 16-bit gradient (e*T*V);
//   - fused-inplace (Transformer Engine's): the 16-bit logits kept (e*T*V), their gradient
//     written over them;
//   - vocab-parallel (Megatron-LM's unfused): the fp32 softmax kept (4*T*V), scaled in
//     place in the backward pass, which holds its 16-bit cast (e*T*V) and the logits
//     returned (e*T*V).
//   - loss-parallel (PyTorch's loss_parallel, torchtitan's with tensor parallelism): the
//     fp32 log-probabilities kept (4*T*V); the backward pass holds the zeros, exp of the
//     log-probabilities and their sum at once (12*T*V: _nll_loss_and_log_softmax_backward's
//     (grad_input + torch.exp(x))) and the 16-bit logits returned (e*T*V).
func TestCrossEntropyKernels(t *testing.T) {
	a := bundled(t, "llama-2-7b")
	const T, h, V, e = 4096.0, 4096.0, 32000.0, 2.0
	input := e * T * h
	tests := []struct {
		kind          string
		kept, working float64
	}{
		{cluster.CrossEntropyUnfused, input + 4*T*V, input + 4*T*V + 8*T*V + e*T*V + 4 + input},
		{cluster.CrossEntropyFused, input + e*T*V + 4*T, input + e*T*V + 4*T + e*T*V + 4 + input},
		{cluster.CrossEntropyFusedInplace, input + e*T*V, input + e*T*V + 4 + input},
		{cluster.CrossEntropyVocabParallel, input + 4*T*V, input + 4*T*V + e*T*V + e*T*V + 4 + input},
		{cluster.CrossEntropyLossParallel, input + 4*T*V, input + 4*T*V + 12*T*V + e*T*V + 4 + input},
	}
	for _, tc := range tests {
		tg := frameworkTarget(t, "h100-sxm", cluster.Eager)
		if err := tg.Framework.SetCrossEntropy(tc.kind); err != nil {
			t.Fatal(err)
		}
		if got := tg.Framework.CrossEntropy(); got != tc.kind {
			t.Errorf("SetCrossEntropy(%q) reads back as %q", tc.kind, got)
		}
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: 4096})
		if err != nil {
			t.Fatal(err)
		}
		head := r.Layers[len(r.Layers)-1]
		if head.SavedActivationBytes != int64(tc.kept) {
			t.Errorf("%s: the head keeps %d bytes, want %d", tc.kind, head.SavedActivationBytes, int64(tc.kept))
		}
		if head.TemporaryBytes != int64(tc.working) {
			t.Errorf("%s: the head's working memory %d bytes, want %d", tc.kind, head.TemporaryBytes, int64(tc.working))
		}
	}
	var f cluster.Framework
	if err := f.SetCrossEntropy("apex"); err == nil || !strings.Contains(err.Error(), "fused-inplace") {
		t.Errorf("an unknown kernel: %v, want an error listing the kernels", err)
	}
}
