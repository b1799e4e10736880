package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// TestFP8FSDPAllGather: torchao's FSDP2 float8 all-gather (Options.FP8FSDPAllGather;
// torchao/float8/fsdp_utils.py, WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather
// and fsdp_post_all_gather) gathers each block's fp8 products' weights in 1 byte where
// they were gathered in 2. Llama 2 7B (h = 4,096, f = 11,008, 32 heads of 128 with as
// many key/value heads) has W = 4h^2 + 3hf = 202,375,168 such weights a block, so on
// each of its 32 blocks and nowhere else:
//   - the all-gather (FullBytes's weights) moves W bytes less; the gradients' reduce-
//     scatter the same bytes;
//   - the working memory (two gathered layers with prefetch, one without) holds 2W and
//     W bytes less;
//   - FSDP2's copy-out (2 bytes a gathered byte, forward and backward) moves 2W bytes
//     less in each pass: exactly 2W / bandwidth less device time, the kernels the same;
//   - with the weights kept gathered through the step (KeepGathered) the stage holds W
//     bytes less a block (ParamBytes), 32W in all;
//
// and FP8GatherWeightBytes of the estimate without the option is FullBytes's with it.
func TestFP8FSDPAllGather(t *testing.T) {
	a, err := arch.Bundled("llama-2-7b")
	if err != nil {
		t.Fatal(err)
	}
	tg := frameworkTarget(t, "h100-sxm", cluster.Compiled)
	const L, h, f = 32, 4096, 11008
	const W = 4*h*h + 3*h*f
	base := Options{Batch: 1, Seq: 4096, FP8Recipe: Current, DataParallel: 8, Sharding: ZeRO3, ShardGroup: 8, FullyShard: true, ReduceFP32: true}
	est := func(o Options) *Result {
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tt := range []struct {
		name             string
		noPrefetch, keep bool
		temp             int64 // working memory saved a block
	}{
		{"prefetch", false, false, 2 * W},
		{"no prefetch", true, false, W},
		{"kept gathered", false, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.NoPrefetch, o.KeepGathered = tt.noPrefetch, tt.keep
			off := est(o)
			o.FP8FSDPAllGather = true
			on := est(o)
			rf := newRoofline(tg, on.Opts.DType, on.Opts.FP8Recipe)
			var blocks int
			for i, l := range on.Layers {
				b := off.Layers[i]
				wOn, gOn := on.FullBytes(i)
				wOff, gOff := off.FullBytes(i)
				saved := wOff - wOn
				if saved != 0 {
					blocks++
				}
				if saved != 0 && saved != W {
					t.Errorf("%s: gathers %d bytes less, want %d or none", l.Name, saved, int64(W))
				}
				if gOn != gOff {
					t.Errorf("%s: reduce-scatters %d bytes, want %d", l.Name, gOn, gOff)
				}
				if got := off.FP8GatherWeightBytes(i); got != wOn {
					t.Errorf("%s: FP8GatherWeightBytes %d without the option, want FullBytes's %d with it", l.Name, got, wOn)
				}
				temp, param := tt.temp, int64(0)
				if tt.keep {
					param = W
				}
				if saved == 0 {
					temp, param = 0, 0
				}
				if got := b.TemporaryBytes - l.TemporaryBytes; got != temp {
					t.Errorf("%s: working memory %d bytes less, want %d", l.Name, got, temp)
				}
				if got := b.ParamBytes - l.ParamBytes; got != param {
					t.Errorf("%s: weights %d bytes less, want %d", l.Name, got, param)
				}
				if tt.keep {
					continue // gathered once a step: the copies are not priced a microbatch
				}
				copyOut := 2 * float64(saved) / rf.bytesPerSecond
				if d := b.FwdDeviceSeconds - l.FwdDeviceSeconds; math.Abs(d-copyOut) > 1e-9*max(copyOut, 1e-9) {
					t.Errorf("%s: forward %.6g s faster, want %.6g s", l.Name, d, copyOut)
				}
				if d := b.BwdDeviceSeconds - l.BwdDeviceSeconds; math.Abs(d-copyOut) > 1e-9*max(copyOut, 1e-9) {
					t.Errorf("%s: backward %.6g s faster, want %.6g s", l.Name, d, copyOut)
				}
			}
			if blocks != L {
				t.Errorf("%d layers gather less, want the %d blocks", blocks, L)
			}
			want := int64(0)
			if tt.keep {
				want = L * W
			}
			if got := off.Total.WeightsBytes - on.Total.WeightsBytes; got != want {
				t.Errorf("the stage's weights %d bytes less, want %d", got, want)
			}
			if on.Total.GradsBytes != off.Total.GradsBytes || on.Total.OptimizerBytes != off.Total.OptimizerBytes {
				t.Error("the option changed the gradients or the optimizer state")
			}
		})
	}
}

// TestFP8FSDPAllGatherRefused: the option is refused, naming it, where torchao's FSDP2
// float8 all-gather does not run: without fp8, under a block recipe, for inference,
// without FSDP2's fully_shard or zero3/hsdp, over one device, and beside fp8 primary
// weights (fp8_param_gather, which are valid alone here).
func TestFP8FSDPAllGatherRefused(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	tg := frameworkTarget(t, "h100-sxm", cluster.Compiled)
	ok := Options{Batch: 1, Seq: 4096, FP8Recipe: Current, DataParallel: 8, Sharding: ZeRO3, ShardGroup: 8, FullyShard: true, FP8FSDPAllGather: true}
	if _, err := Estimate(a, tg, ok); err != nil {
		t.Fatalf("FSDP2 in fp8 over 8 devices: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*Options)
	}{
		{"bf16", func(o *Options) { o.FP8Recipe, o.DType = "", BF16 }},
		{"mxfp8", func(o *Options) { o.FP8Recipe = MXFP8 }},
		{"blockwise", func(o *Options) { o.FP8Recipe = Blockwise }},
		{"inference", func(o *Options) { o.Optimizer, o.Precision = None, "" }},
		{"FSDP1", func(o *Options) { o.FullyShard = false }},
		{"zero1", func(o *Options) { o.Sharding, o.FullyShard = ZeRO1, false }},
		{"one device", func(o *Options) { o.DataParallel, o.ShardGroup = 1, 1 }},
		{"fp8 primary weights", func(o *Options) { o.FP8ParamGather, o.Precision = true, Mixed }},
	} {
		o := ok
		tt.edit(&o)
		if _, err := Estimate(a, tg, o); err == nil || !strings.Contains(err.Error(), "fp8_fsdp_all_gather: ") {
			t.Errorf("%s: error %v, want one on fp8_fsdp_all_gather", tt.name, err)
		}
	}
	alone := ok
	alone.FP8FSDPAllGather, alone.FP8ParamGather, alone.Precision = false, true, Mixed
	if _, err := Estimate(a, tg, alone); err != nil {
		t.Errorf("fp8_param_gather alone under FSDP2: %v", err)
	}
}
