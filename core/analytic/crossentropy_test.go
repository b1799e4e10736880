package analytic

import (
	"math"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// megatronGPT is a GPT of the Megatron-LM README's smallest shape (hidden 2,048, 16
// heads, vocabulary 131,072, untied) with few layers.
func megatronGPT(t *testing.T) *arch.Arch {
	t.Helper()
	a, err := arch.Parse([]byte(`{"model_type": "gpt2", "n_embd": 2048, "n_head": 16, "n_layer": 4, "n_positions": 4096, "vocab_size": 131072, "tie_word_embeddings": false}`))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestVocabParallelCrossEntropyTime: in a Megatron-style mode the loss is one fused
// kernel (6 bytes a logit forward in 16 bits and 8 bytes a token, 4 a logit backward);
// Megatron-LM's unfused vocab-parallel cross-entropy (cross_entropy vocab-parallel,
// megatron/core/tensor_parallel/cross_entropy.py at core_r0.8.0) moves 38 bytes a logit
// in six kernels forward (the cast to fp32, maximum, subtraction, exponential, sum,
// division) and 14 bytes a logit and 8 a token in three backward (the target's update,
// the scaling, the cast back). The head's device time grows by exactly those bytes at
// the achievable bandwidth and those launches, for each vocabulary shard under tensor
// parallelism; the blocks do not change.
func TestVocabParallelCrossEntropyTime(t *testing.T) {
	a := megatronGPT(t)
	for _, c := range []struct {
		framework string
		tp        int
	}{{cluster.Megatron, 1}, {cluster.Megatron, 2}, {cluster.CUDAGraphs, 1}, {cluster.CUDAGraphs, 8}} {
		tg := frameworkTarget(t, "h100-sxm", c.framework)
		o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, TensorParallel: c.tp, SequenceParallel: c.tp > 1}
		fused, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Framework.SetCrossEntropy(cluster.CrossEntropyVocabParallel); err != nil {
			t.Fatal(err)
		}
		unfused, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		f, u := fused.Layers[len(fused.Layers)-1], unfused.Layers[len(unfused.Layers)-1]
		if f.Kind != "lm_head" || u.Kind != "lm_head" {
			t.Fatalf("last layers %s and %s", f.Kind, u.Kind)
		}
		tokens, logits := 4096.0, 4096.0*131072/float64(c.tp)
		bw := tg.Perf.MemoryBytesPerSecond * tg.Perf.MemoryEfficiency
		ks := tg.Perf.KernelSeconds
		wantFwd := (38*logits-(6*logits+8*tokens))/bw + 5*ks
		wantBwd := (14*logits+8*tokens-4*logits)/bw + 2*ks
		if d := u.FwdDeviceSeconds - f.FwdDeviceSeconds; math.Abs(d-wantFwd) > 1e-9*wantFwd {
			t.Errorf("%s TP%d: forward +%.6g s, want +%.6g s", c.framework, c.tp, d, wantFwd)
		}
		if d := u.BwdDeviceSeconds - f.BwdDeviceSeconds; math.Abs(d-wantBwd) > 1e-9*wantBwd {
			t.Errorf("%s TP%d: backward +%.6g s, want +%.6g s", c.framework, c.tp, d, wantBwd)
		}
		if u.FwdKernels-f.FwdKernels != 5 || u.BwdKernels-f.BwdKernels != 2 {
			t.Errorf("%s TP%d: kernels +%g forward, +%g backward, want +5, +2", c.framework, c.tp, u.FwdKernels-f.FwdKernels, u.BwdKernels-f.BwdKernels)
		}
		if fused.Layers[1].FwdSeconds != unfused.Layers[1].FwdSeconds || fused.Layers[1].BwdSeconds != unfused.Layers[1].BwdSeconds {
			t.Errorf("%s TP%d: a block changed", c.framework, c.tp)
		}
	}
}

// TestLossParallelCrossEntropy: PyTorch's loss parallelism (cross_entropy
// loss-parallel; torch/distributed/tensor/parallel/loss.py) against F.cross_entropy's
// fused kernels (unfused) in the compiled mode, on the vocabulary shard of each
// tensor-parallel size. Its forward pass writes the fp32 copy, then reads it for the
// maximum, writes shifted, exp(shifted) and the result and reads exp(shifted) for the
// sum: e + 36 bytes a logit in six kernels, where log_softmax and nll_loss move e + 12
// a logit and 8 a token in three; its backward writes zeros, exp of the
// log-probabilities, their sum and the product, then the 16-bit cast: e + 36 bytes a
// logit in six kernels, where nll_loss_backward, log_softmax_backward and the cast move
// e + 20 in three. The forward pass holds the 16-bit logits, their fp32 copy, shifted
// and the result (e + 12 bytes a logit, unfused e + 8); the backward pass the kept
// log-probabilities, the zeros, exp and the new tensor (16, unfused 12). Under sequence
// parallelism the output layer (DTensor's ColwiseParallel from a sequence-sharded input)
// keeps its all-gathered input, e*T*h, where the unfused kind keeps the shard, e*T*h/t.
// So the head keeps e*T*h*(1 - 1/t) more bytes, and its working memory grows by that
// and 4 bytes a logit; the blocks do not change.
func TestLossParallelCrossEntropy(t *testing.T) {
	a := megatronGPT(t)
	for _, tp := range []int{2, 8} {
		tg := frameworkTarget(t, "h100-sxm", cluster.Compiled)
		o := Options{Batch: 1, Seq: 4096, TensorParallel: tp, SequenceParallel: true}
		unfused, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Framework.SetCrossEntropy(cluster.CrossEntropyLossParallel); err != nil {
			t.Fatal(err)
		}
		lp, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		u, l := unfused.Layers[len(unfused.Layers)-1], lp.Layers[len(lp.Layers)-1]
		if u.Kind != "lm_head" || l.Kind != "lm_head" {
			t.Fatalf("last layers %s and %s", u.Kind, l.Kind)
		}
		tokens, logits := 4096.0, 4096.0*131072/float64(tp)
		bw := tg.Perf.MemoryBytesPerSecond * tg.Perf.MemoryEfficiency
		ks := tg.Perf.KernelSeconds
		wantFwd := (24*logits-8*tokens)/bw + 3*ks
		wantBwd := 16*logits/bw + 3*ks
		if d := l.FwdDeviceSeconds - u.FwdDeviceSeconds; math.Abs(d-wantFwd) > 1e-9*wantFwd {
			t.Errorf("TP%d: forward +%.6g s, want +%.6g s", tp, d, wantFwd)
		}
		if d := l.BwdDeviceSeconds - u.BwdDeviceSeconds; math.Abs(d-wantBwd) > 1e-9*wantBwd {
			t.Errorf("TP%d: backward +%.6g s, want +%.6g s", tp, d, wantBwd)
		}
		if l.FwdKernels-u.FwdKernels != 3 || l.BwdKernels-u.BwdKernels != 3 {
			t.Errorf("TP%d: kernels +%g forward, +%g backward, want +3, +3", tp, l.FwdKernels-u.FwdKernels, l.BwdKernels-u.BwdKernels)
		}
		gathered := 2 * tokens * 2048 * (1 - 1/float64(tp)) // e*T*h*(1 - 1/t), bf16
		if d := l.SavedActivationBytes - u.SavedActivationBytes; d != int64(gathered) {
			t.Errorf("TP%d: the head keeps +%d bytes, want +%d (the gathered input)", tp, d, int64(gathered))
		}
		if d := l.TemporaryBytes - u.TemporaryBytes; d != int64(4*logits+gathered) {
			t.Errorf("TP%d: working memory +%d bytes, want +%d (4 a logit and the gathered input)", tp, d, int64(4*logits+gathered))
		}
		if unfused.Layers[1].FwdSeconds != lp.Layers[1].FwdSeconds || unfused.Layers[1].TemporaryBytes != lp.Layers[1].TemporaryBytes {
			t.Errorf("TP%d: a block changed", tp)
		}
	}
}

// TestMainGradBuffer: with Megatron-Core's gradient buffer (cluster.Framework.
// MainGradBuffer, the megatron mode's) the embedding's backward pass adds its V x h
// gradient to the buffer (the buffer read and written, the 16-bit gradient read: 10
// bytes a parameter with mixed-fp32-grads, 6 with 16-bit gradients) in one more kernel,
// and the optimizer step zeroes the device's whole buffer (its gradient bytes,
// unsharded under ZeRO-1) in one memset. Its backward hook adds the other gradients its
// linear layers do not accumulate into the buffer (mainGradAdds) the same way, and its
// Transformer Engine norms launch a finalize kernel in their backward pass
// (teNormBackward): a GPT-2 block (LayerNorm's weight and bias twice; the biases of
// c_attn, 3h/t wide, of the output projection and the second projection, h, and of the
// first, 4h/t) adds 8 tensors of 6h + 7h/t elements and launches 2 finalize kernels;
// the final norm adds 2 of 2h and launches 1. The forward passes do not change.
func TestMainGradBuffer(t *testing.T) {
	a := megatronGPT(t)
	for _, c := range []struct {
		precision Precision
		tp        int
		perParam  float64
	}{{MixedFP32Grads, 1, 10}, {MixedFP32Grads, 4, 10}, {Mixed, 2, 6}} {
		with := frameworkTarget(t, "h100-sxm", cluster.Megatron)
		without := with
		without.Framework.MainGradBuffer = false
		o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, Precision: c.precision, TensorParallel: c.tp, SequenceParallel: c.tp > 1,
			DataParallel: 8, Sharding: ZeRO1}
		w, err := Estimate(a, with, o)
		if err != nil {
			t.Fatal(err)
		}
		wo, err := Estimate(a, without, o)
		if err != nil {
			t.Fatal(err)
		}
		bw := with.Perf.MemoryBytesPerSecond * with.Perf.MemoryEfficiency
		ks := with.Perf.KernelSeconds
		matrix := 131072 / float64(c.tp) * 2048
		if d, want := w.Layers[0].BwdDeviceSeconds-wo.Layers[0].BwdDeviceSeconds, c.perParam*matrix/bw+ks; math.Abs(d-want) > 1e-9*want {
			t.Errorf("%s TP%d: embedding backward +%.6g s, want +%.6g s", c.precision, c.tp, d, want)
		}
		var grads int64
		for _, l := range w.Layers {
			grads += l.GradBytes
		}
		if d, want := w.Total.OptimizerSeconds-wo.Total.OptimizerSeconds, float64(grads)/bw+ks; math.Abs(d-want) > 1e-9*want {
			t.Errorf("%s TP%d: optimizer +%.6g s, want the memset of %d bytes, +%.6g s", c.precision, c.tp, d, grads, want)
		}
		const h = 2048
		tp := float64(c.tp)
		for i := 1; i < len(w.Layers); i++ {
			l, lo := w.Layers[i], wo.Layers[i]
			var adds, elems, finalize float64
			switch l.Kind {
			case "block":
				adds, elems, finalize = 8, 6*h+7*h/tp, 2
			case "final_norm":
				adds, elems, finalize = 2, 2*h, 1
			}
			if l.FwdDeviceSeconds != lo.FwdDeviceSeconds || l.FwdKernels != lo.FwdKernels {
				t.Errorf("%s TP%d: layer %s's forward pass changed", c.precision, c.tp, l.Name)
			}
			if d := l.BwdKernels - lo.BwdKernels; d != adds+finalize {
				t.Errorf("%s TP%d: layer %s: +%v backward kernels, want %v adds and %v finalize", c.precision, c.tp, l.Name, d, adds, finalize)
			}
			d, want := l.BwdDeviceSeconds-lo.BwdDeviceSeconds, c.perParam*elems/bw+(adds+finalize)*ks
			if math.Abs(d-want) > 1e-9*want {
				t.Errorf("%s TP%d: layer %s backward +%.6g s, want +%.6g s", c.precision, c.tp, l.Name, d, want)
			}
		}
	}
}

// TestTrainMetricsTime: each training metric (Options.TrainMetrics; Composer's
// LanguageCrossEntropy and LanguagePerplexity) runs the unfused loss's forward pass
// over the logits after the microbatch's backward pass: the 16-bit logits cast to fp32
// (2 read, 4 written), log_softmax (4 and 4) and 8 bytes a token, three kernels. The
// head's backward device time grows by exactly n times that at the achievable
// bandwidth and launches, its forward and the blocks do not change, and inference
// (no training loop) is untouched.
func TestTrainMetricsTime(t *testing.T) {
	a := megatronGPT(t)
	tg := frameworkTarget(t, "h100-sxm", cluster.Eager)
	for _, c := range []struct {
		metrics int
		batch   int
	}{{1, 1}, {2, 1}, {2, 4}} {
		o := Options{Batch: c.batch, Seq: 2048, Attention: Flash}
		base, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.TrainMetrics = c.metrics
		with, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		b, w := base.Layers[len(base.Layers)-1], with.Layers[len(with.Layers)-1]
		tokens := float64(c.batch * 2048)
		logits := tokens * 131072
		n := float64(c.metrics)
		bw := tg.Perf.MemoryBytesPerSecond * tg.Perf.MemoryEfficiency
		want := n*(14*logits+8*tokens)/bw + 3*n*tg.Perf.KernelSeconds
		if d := w.BwdDeviceSeconds - b.BwdDeviceSeconds; math.Abs(d-want) > 1e-9*want {
			t.Errorf("%d metrics, batch %d: backward +%.6g s, want +%.6g s", c.metrics, c.batch, d, want)
		}
		if w.FwdDeviceSeconds != b.FwdDeviceSeconds || w.BwdKernels-b.BwdKernels != 3*n {
			t.Errorf("%d metrics: forward %v s against %v s, backward kernels +%g (want unchanged, +%g)", c.metrics, w.FwdDeviceSeconds, b.FwdDeviceSeconds, w.BwdKernels-b.BwdKernels, 3*n)
		}
		if base.Layers[1].BwdSeconds != with.Layers[1].BwdSeconds {
			t.Errorf("%d metrics: a block changed", c.metrics)
		}
	}
	o := Options{Batch: 1, Seq: 2048, Attention: Flash, Optimizer: None}
	inf, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.TrainMetrics = 2
	inf2, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if inf.Total.FwdSeconds != inf2.Total.FwdSeconds {
		t.Errorf("inference: %v s with training metrics, %v s without", inf2.Total.FwdSeconds, inf.Total.FwdSeconds)
	}
}
