package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
)

// TestFullyShardCopies: with FullyShard (PyTorch FSDP2) each layer's forward pass adds
// the all-gather's copy-out, one kernel reading and writing the gathered 16-bit weights
// (2 x 2 bytes a parameter), and its backward pass the copy-out of the backward's
// all-gather and the reduce-scatter's copy-in (2 x 2 + 2 + r bytes a parameter, r the
// reduce dtype's: 2 in bf16, 4 with ReduceFP32) in two kernels: exactly kernels x
// launch + bytes / bandwidth more than the same sharding without it. A layer without
// parameters is unchanged. Where the weights stay gathered through the step
// (KeepGathered: one gather a step, not priced per microbatch) the backward adds
// instead, with ReduceFP32, the fp32 accumulation of each microbatch's gradients, one
// kernel a parameter tensor and 2 + 4 + 4 bytes a parameter; without ReduceFP32,
// nothing.
func TestFullyShardCopies(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	tg := frameworkTarget(t, "h100-sxm", cluster.Compiled)
	base := Options{Batch: 1, Seq: 1024, DataParallel: 8, Sharding: ZeRO3, ShardGroup: 8}
	est := func(o Options) *Result {
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ref := est(base)
	rf := newRoofline(tg, ref.Opts.DType, ref.Opts.FP8Recipe)
	for _, tt := range []struct {
		name       string
		fp32, keep bool
		fwdB, bwdB float64 // bytes a parameter
		fwdK, bwdK float64 // kernels (bwdK < 0: one a parameter tensor)
	}{
		{"bf16 reduce", false, false, 4, 8, 1, 2},
		{"fp32 reduce", true, false, 4, 10, 1, 2},
		{"kept gathered, fp32 accumulation", true, true, 0, 10, 0, -1},
		{"kept gathered, bf16", false, true, 0, 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.FullyShard, o.ReduceFP32, o.KeepGathered = true, tt.fp32, tt.keep
			r := ref
			if tt.keep {
				k := base
				k.KeepGathered = true
				r = est(k)
			}
			got := est(o)
			withParams := 0
			for i, l := range got.Layers {
				b := r.Layers[i]
				n := float64(l.Params)
				bwdK := tt.bwdK
				if bwdK < 0 {
					bwdK = float64(l.ParamTensors)
				}
				fwd, bwd := tt.fwdK*rf.kernelSeconds+tt.fwdB*n/rf.bytesPerSecond, bwdK*rf.kernelSeconds+tt.bwdB*n/rf.bytesPerSecond
				if l.Params == 0 {
					fwd, bwd = 0, 0
				} else {
					withParams++
				}
				if d := l.FwdDeviceSeconds - b.FwdDeviceSeconds; math.Abs(d-fwd) > 1e-9*max(fwd, 1e-9) {
					t.Errorf("%s: forward %.6g s more, want %.6g s (%v bytes x %d parameters)", l.Name, d, fwd, tt.fwdB, l.Params)
				}
				if d := l.BwdDeviceSeconds - b.BwdDeviceSeconds; math.Abs(d-bwd) > 1e-9*max(bwd, 1e-9) {
					t.Errorf("%s: backward %.6g s more, want %.6g s (%v bytes x %d parameters)", l.Name, d, bwd, tt.bwdB, l.Params)
				}
			}
			if withParams < 3 {
				t.Fatalf("only %d layers with parameters: the test checks nothing", withParams)
			}
		})
	}
	// Without sharding FullyShard has nothing to copy: refused.
	o := Options{Batch: 1, Seq: 1024, FullyShard: true}
	if _, err := Estimate(a, tg, o); err == nil {
		t.Error("fully_shard without zero3 or hsdp: no error")
	}
}

// TestFullyShardValidate: FullyShard and ReduceFP32 are FSDP2's, refused without
// zero3 or hsdp, each error naming its own field (and only it).
func TestFullyShardValidate(t *testing.T) {
	for _, c := range []struct {
		o         Options
		want, not string
	}{
		{Options{Batch: 1, Seq: 1024, DataParallel: 8, Sharding: ZeRO2, FullyShard: true}, "fully_shard: goes with sharding zero3 or hsdp", "reduce_fp32"},
		{Options{Batch: 1, Seq: 1024, DataParallel: 8, Sharding: ZeRO1, ReduceFP32: true}, "reduce_fp32: goes with sharding zero3 or hsdp", "fully_shard"},
		{Options{Batch: 1, Seq: 1024, DataParallel: 8, FullyShard: true, ReduceFP32: true}, "fully_shard: goes with", ""},
		{Options{Batch: 1, Seq: 1024, DataParallel: 8, FullyShard: true, ReduceFP32: true}, "reduce_fp32: goes with", ""},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("%+v: error %v, want %q and not %q", c.o, err, c.want, c.not)
		}
	}
	if err := (Options{Batch: 1, Seq: 1024, DataParallel: 8, Sharding: HSDP, ShardGroup: 4, FullyShard: true, ReduceFP32: true}).Validate(); err != nil {
		t.Errorf("hsdp with fully_shard and reduce_fp32: %v", err)
	}
}
