package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestDeepSpeedBF16GradAccumulation: under precision deepspeed-bf16 each layer's backward
// pass adds, after the passes of mixed-fp32-grads (the same fp32 gradients), DeepSpeed's
// BF16 optimizer's update_hp_grads: per parameter tensor two memory-bound kernels, a
// cast and an add, and per parameter 2 + 4 bytes of cast and 3 x 4 of add, 18 bytes
// in all: (2 x tensors) launches + 18 x params / bandwidth, exactly. The forward pass,
// a layer without parameters and inference are unchanged.
func TestDeepSpeedBF16GradAccumulation(t *testing.T) {
	a := bundled(t, "gpt2")
	tg := frameworkTarget(t, "a100-80gb", cluster.DeepSpeed)
	o := Options{Batch: 2, Seq: 1024, TensorParallel: 2}
	est := func(p Precision) *Result {
		o := o
		o.Precision = p
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ds, ref := est(DeepSpeedBF16), est(MixedFP32Grads)
	rf := newRoofline(tg, ds.Opts.DType, ds.Opts.FP8Recipe)
	withParams := 0
	for i, l := range ds.Layers {
		r := ref.Layers[i]
		want := 2*float64(l.ParamTensors)*rf.kernelSeconds + 18*float64(l.Params)/rf.bytesPerSecond
		if l.Params == 0 {
			want = 0
		} else {
			withParams++
		}
		if got := l.BwdDeviceSeconds - r.BwdDeviceSeconds; math.Abs(got-want) > 1e-9*max(want, 1e-9) {
			t.Errorf("%s: backward %.6g s, mixed-fp32-grads %.6g s: %.6g s more, want %d tensors' 2 launches and 18 bytes x %d parameters, %.6g s",
				l.Name, l.BwdDeviceSeconds, r.BwdDeviceSeconds, got, l.ParamTensors, l.Params, want)
		}
		if l.BwdKernels-r.BwdKernels != 2*float64(l.ParamTensors) {
			t.Errorf("%s: %v backward kernels, mixed-fp32-grads %v: want %d more", l.Name, l.BwdKernels, r.BwdKernels, 2*l.ParamTensors)
		}
		if l.FwdDeviceSeconds != r.FwdDeviceSeconds {
			t.Errorf("%s: forward %v s, mixed-fp32-grads %v s: want the same", l.Name, l.FwdDeviceSeconds, r.FwdDeviceSeconds)
		}
	}
	if withParams < 2 {
		t.Fatalf("only %d layers with parameters: the test checks nothing", withParams)
	}
	// Inference has no gradients (and deepspeed-bf16 is training's: refused there).
	o.Optimizer = None
	inf, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range inf.Layers {
		if l.BwdDeviceSeconds != 0 {
			t.Errorf("inference %s: backward %v s", l.Name, l.BwdDeviceSeconds)
		}
	}
}

// TestCommunicatedGradBytes: DeepSpeed's BF16 optimizer all-reduces its fp32 gradients
// cast to bf16 (its engine's communication_data_type under ZeRO stage 0), 2 bytes of
// every 4 kept; every other precision moves its gradients in the type it keeps them.
func TestCommunicatedGradBytes(t *testing.T) {
	for _, c := range []struct {
		p    Precision
		g    int64
		want int64
	}{
		{DeepSpeedBF16, 4 << 30, 2 << 30},
		{DeepSpeedBF16, 4 * 1_000_003, 2 * 1_000_003},
		{DeepSpeedBF16, 0, 0},
		{MixedFP32Grads, 4 << 30, 4 << 30},
		{Mixed, 2 << 30, 2 << 30},
		{AMP, 4 << 30, 4 << 30},
		{Pure, 4 << 30, 4 << 30},
	} {
		if got := c.p.CommunicatedGradBytes(c.g); got != c.want {
			t.Errorf("%s: %d bytes of gradients move %d bytes, want %d", c.p, c.g, got, c.want)
		}
	}
}
