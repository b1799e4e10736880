package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestAutogradGradAccumulation: under framework deepspeed (its gradients in .grad,
// cluster.Framework.ParamGradAccumulate) a step of m microbatches adds each one's
// gradients after the first into .grad, PyTorch's AccumulateGrad: per parameter tensor
// one add kernel, per parameter 3g bytes of g-byte gradients, (m-1)/m of that in each
// microbatch's backward pass: (m-1)/m x (tensors launches + 3g x params / bandwidth),
// exactly, against the same run without accumulation. Nothing with one microbatch,
// under deepspeed-bf16 (its optimizer clears .grad before each backward), under ZeRO-2
// (its hooks take the gradients), or in a framework that accumulates in the products
// (megatron).
func TestAutogradGradAccumulation(t *testing.T) {
	a := bundled(t, "gpt2")
	est := func(tg Target, o Options) *Result {
		t.Helper()
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ds := frameworkTarget(t, "a100-80gb", cluster.DeepSpeed)
	base := Options{Batch: 2, Seq: 1024, TensorParallel: 2, DataParallel: 2}
	for _, c := range []struct {
		name  string
		tg    Target
		opts  func(o *Options)
		m     int
		bytes float64 // per parameter, 0: no accumulation priced
	}{
		{"mixed, 4 microbatches", ds, func(o *Options) {}, 4, 6},
		{"mixed-fp32-grads, 8 microbatches", ds, func(o *Options) { o.Precision = MixedFP32Grads }, 8, 12},
		{"zero1, 4 microbatches", ds, func(o *Options) { o.Sharding = ZeRO1 }, 4, 6},
		{"one microbatch", ds, func(o *Options) {}, 1, 0},
		{"deepspeed-bf16", ds, func(o *Options) { o.Precision = DeepSpeedBF16; o.Sharding = ZeRO1 }, 4, 0},
		{"zero2", ds, func(o *Options) { o.Sharding = ZeRO2 }, 4, 0},
		{"megatron", frameworkTarget(t, "a100-80gb", cluster.Megatron), func(o *Options) {}, 4, 0},
	} {
		o := base
		c.opts(&o)
		ref := est(c.tg, o)
		o.Microbatches = c.m
		got := est(c.tg, o)
		rf := newRoofline(c.tg, got.Opts.DType, got.Opts.FP8Recipe)
		f := float64(c.m-1) / float64(c.m)
		withParams := 0
		for i, l := range got.Layers {
			r := ref.Layers[i]
			want := 0.0
			if c.bytes > 0 && l.Params > 0 {
				withParams++
				want = f * (float64(l.ParamTensors)*rf.kernelSeconds + c.bytes*float64(l.Params)/rf.bytesPerSecond)
			}
			if d := l.BwdDeviceSeconds - r.BwdDeviceSeconds; math.Abs(d-want) > 1e-9*max(want, 1e-9) {
				t.Errorf("%s, %s: backward %.6g s more, want %.6g s (%d tensors, %d parameters)", c.name, l.Name, d, want, l.ParamTensors, l.Params)
			}
			if l.FwdDeviceSeconds != r.FwdDeviceSeconds {
				t.Errorf("%s, %s: forward %v s, without accumulation %v s: want the same", c.name, l.Name, l.FwdDeviceSeconds, r.FwdDeviceSeconds)
			}
		}
		if c.bytes > 0 && withParams < 2 {
			t.Fatalf("%s: only %d layers with parameters: the test checks nothing", c.name, withParams)
		}
	}
}
