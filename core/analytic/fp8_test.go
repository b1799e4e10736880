package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// TestFP8RecipeMemory checks each memory term of each fp8 recipe against its closed
// form on Llama-2-7B (h = 4,096, f = 11,008, 32 heads without grouping, L = 32; flash
// attention, no dropout), b = 1, s = 4,096, T = b*s tokens, t-way tensor parallel:
//
//   - saved activations: the inputs of a block's fp8 products (QKV's and the MLP's
//     first projection's h wide, replicated over the tensor-parallel group without
//     sequence parallelism; the output projection's q and the down projection's f,
//     split) at the recipe's inputBytes instead of 2: L*T*(2 - inputBytes)*(2h + (q +
//     f)/t) less than bf16 (Transformer Engine saves fp8 inputs of fp8 GEMMs);
//   - fp8 weight copies: weightBytes per weight of the products, h(q + 2kv) + qh + 3hf
//     per block over t, and stateBytes per product, 5 per block (QKV, output, gate, up,
//     down);
//   - nothing else: the bf16 weights, gradients and fp32 master and optimizer state are
//     kept as in bf16.
func TestFP8RecipeMemory(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	const (
		L, h, q, kv, f, T = 32.0, 4096.0, 4096.0, 4096.0, 11008.0, 4096.0
		history           = 1024
	)
	tests := []struct {
		recipe                         FP8Recipe
		device                         string
		tp                             float64
		input, weight, statePerProduct float64 // closed forms, per element or product
	}{
		{Delayed, "h100-sxm", 1, 1, 2, 3 * (history*4 + 3*4)}, // amax history of 1,024 fp32 per operand
		{Delayed, "h100-sxm", 2, 1, 2, 3 * (history*4 + 3*4)},
		{Current, "h100-sxm", 1, 1, 2, 3 * 3 * 4},                       // scale, inverse scale, amax per operand
		{Blockwise, "h100-sxm", 1, 1 + 4.0/128, 2 + 2*4.0/(128*128), 0}, // fp32 per 1x128 tile; per 128x128 block
		{MXFP8, "b200", 1, 1 + 1.0/32, 2 + 2.0/32, 0},                   // E8M0 per 32, rowwise and columnwise
		{MXFP8, "gb200", 4, 1 + 1.0/32, 2 + 2.0/32, 0},
	}
	for _, tt := range tests {
		tg := frameworkTarget(t, tt.device, cluster.NoFramework)
		o := Options{Batch: 1, Seq: 4096, TensorParallel: int(tt.tp)}
		bf16, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.FP8Recipe = tt.recipe // the recipe alone means dtype fp8
		fp8, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatalf("%s on %s: %v", tt.recipe, tt.device, err)
		}
		if fp8.Opts.DType != FP8 {
			t.Errorf("%s: dtype %s, want fp8", tt.recipe, fp8.Opts.DType)
		}
		name := string(tt.recipe) + " on " + tt.device
		gotSaved := bf16.Total.ActivationBytes - fp8.Total.ActivationBytes
		wantSaved := L * T * (2 - tt.input) * (2*h + (q+f)/tt.tp)
		if d := float64(gotSaved) - wantSaved; d < -L || d > L { // each block's bytes rounded down
			t.Errorf("%s: activations %d bytes below bf16's, want %.0f", name, gotSaved, wantSaved)
		}
		weights := (h*(q+2*kv) + q*h + 3*h*f) / tt.tp
		wantCopies := L * (weights*tt.weight + 5*tt.statePerProduct)
		if d := float64(fp8.Total.FP8WeightBytes) - wantCopies; d < 0 || d > L {
			t.Errorf("%s: fp8 weight copies %d bytes, want %.0f", name, fp8.Total.FP8WeightBytes, wantCopies)
		}
		if fp8.Total.WeightsBytes-fp8.Total.FP8WeightBytes != bf16.Total.WeightsBytes ||
			fp8.Total.GradsBytes != bf16.Total.GradsBytes || fp8.Total.OptimizerBytes != bf16.Total.OptimizerBytes {
			t.Errorf("%s: weights %d (%d fp8), grads %d, optimizer %d; bf16 %d, %d, %d", name, fp8.Total.WeightsBytes, fp8.Total.FP8WeightBytes,
				fp8.Total.GradsBytes, fp8.Total.OptimizerBytes, bf16.Total.WeightsBytes, bf16.Total.GradsBytes, bf16.Total.OptimizerBytes)
		}
		// The partitioner sees the copies with the weights.
		m := fp8.Model()
		if got, want := m.Layers[1].ParamBytes, fp8.Layers[1].ParamBytes+fp8.Layers[1].GradBytes+fp8.Layers[1].FP8WeightBytes; got != want {
			t.Errorf("%s: model layer holds %d bytes of weights, want %d", name, got, want)
		}
	}
}

// TestFP8RecipeRate: fp8 products run at the device's fp8 peak times its own fp8 GEMM
// efficiency (not bf16's), times the recipe's rate: 0.83 for block scaling, 0.94 for
// MXFP8.
// TestFP8ParamGather: fp8 primary weights (Megatron-LM's --fp8-param-gather) keep the fp8
// copies and drop the 16-bit copy of every fp8 product's weight: 2 bytes per weight of
// the products, h(q + 2kv) + qh + 3hf per block, fewer than the fp8 run that keeps both;
// gradients and optimizer state unchanged.
func TestFP8ParamGather(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	tg := frameworkTarget(t, "h100-sxm", cluster.NoFramework)
	o := Options{Batch: 1, Seq: 4096, FP8Recipe: Current, Precision: MixedFP32Grads}
	copies, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.FP8ParamGather = true
	primary, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	const L, h, f = 32, 4096, 11008
	want := int64(L * 2 * (h*(h+2*h) + h*h + 3*h*f))
	if got := copies.Total.WeightsBytes - primary.Total.WeightsBytes; got != want {
		t.Errorf("fp8 primary weights save %d bytes, want %d", got, want)
	}
	if primary.Total.FP8WeightBytes != copies.Total.FP8WeightBytes || primary.Total.GradsBytes != copies.Total.GradsBytes ||
		primary.Total.OptimizerBytes != copies.Total.OptimizerBytes {
		t.Error("fp8 primary weights changed the fp8 copies, gradients or optimizer state")
	}
	m := primary.Model()
	if got, want := m.Layers[1].ParamBytes, primary.Layers[1].ParamBytes+primary.Layers[1].GradBytes+primary.Layers[1].FP8WeightBytes; got != want {
		t.Errorf("model layer holds %d bytes of weights, want %d", got, want)
	}
}

func TestFP8RecipeRate(t *testing.T) {
	for _, tt := range []struct {
		device string
		recipe FP8Recipe
		want   float64
	}{
		{"h100-sxm", Delayed, 1979e12 * 0.63},
		{"h100-sxm", Current, 1979e12 * 0.63},
		{"h100-sxm", Blockwise, 1979e12 * 0.63 * 0.83},
		{"b200", MXFP8, 4.5e15 * 0.52 * 0.94},
		{"mi300x", Delayed, 2614.9e12 * 0.40},
		{"mi355x", Delayed, 5e15 * 0.62},
		{"mi355x", MXFP8, 5e15 * 0.62 * 0.94},
	} {
		tg, _ := PresetTarget(tt.device)
		if got := newRoofline(tg, FP8, tt.recipe).fp8FLOPSPerSecond; math.Abs(got/tt.want-1) > 1e-12 {
			t.Errorf("%s %s: %.4g FLOP/s, want %.4g", tt.device, tt.recipe, got, tt.want)
		}
	}
}

// TestFP8RecipeRefused: a recipe the device cannot run, or a recipe without fp8, is
// refused with the option's path and the reason.
func TestFP8RecipeRefused(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	for _, tt := range []struct {
		device string
		o      Options
		want   string
	}{
		{"h100-sxm", Options{FP8Recipe: MXFP8}, "fp8_recipe: mxfp8 needs matrix units that take microscaling"},
		{"mi300x", Options{FP8Recipe: Blockwise}, "fp8_recipe: blockwise needs block-scaled fp8 products"},
		{"a100-80gb", Options{FP8Recipe: Current}, "dtype: fp8 needs a device with fp8 matrix units"},
		{"tpu-v6e", Options{DType: FP8}, "dtype: fp8 needs a device with fp8 matrix units"},
		{"b200", Options{DType: BF16, FP8Recipe: MXFP8}, "fp8_recipe: applies to dtype fp8, got dtype bf16"},
		{"b200", Options{FP8Recipe: "nvfp4"}, `fp8_recipe: must be one of delayed, current, blockwise, mxfp8, got "nvfp4"`},
	} {
		tt.o.Batch, tt.o.Seq = 1, 1024
		tg, _ := PresetTarget(tt.device)
		_, err := Estimate(a, tg, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %+v: error %v, want %q", tt.device, tt.o, err, tt.want)
		}
	}
	{
		tg, _ := PresetTarget("h100-sxm")
		for _, o := range []Options{{DType: BF16, FP8ParamGather: true}, {DType: FP8, Precision: AMP, FP8ParamGather: true}} {
			o.Batch, o.Seq = 1, 1024
			if _, err := Estimate(a, tg, o); err == nil || !strings.Contains(err.Error(), "fp8_param_gather: ") {
				t.Errorf("%+v: error %v, want one on fp8_param_gather", o, err)
			}
		}
	}
	// Each recipe runs where the device has what it needs.
	for _, d := range []string{"b200", "b300", "gb200", "gb300"} {
		for _, r := range FP8Recipes {
			tg, _ := PresetTarget(d)
			if _, err := Estimate(a, tg, Options{Batch: 1, Seq: 1024, FP8Recipe: r}); err != nil {
				t.Errorf("%s on %s: %v", r, d, err)
			}
		}
	}
}

// TestFP8QuantizationAdds: an fp8 linear layer's input quantization is kernels of its
// own before the product (four with current scaling), so its time adds to the product's in each pass, whether the
// product is compute-bound (a large projection) or memory-bound (a small expert's):
// launches + max(FLOPs at the fp8 rate, the product's bytes) + the quantization's
// bytes (the recipe's quantBytes per element of the input, forward, and of the
// output's gradient, backward) at the achievable bandwidth.
func TestFP8QuantizationAdds(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := target(t, "h100-sxm")
	o := Options{Batch: 1, Seq: 4096, DType: FP8, FP8Recipe: Current}.withDefaults()
	sh := newShape(a, o)
	rf := newRoofline(tg, FP8, Current)
	q := Current.figures().quantBytes
	for _, tt := range []struct {
		name    string
		m, k, n float64
	}{{"projection", 4096, 2048, 4096}, {"expert", 512, 2048, 768}} {
		o16 := sh.linear16(tt.name, tt.m, tt.k, tt.n)
		o8 := sh.linear(tt.name, tt.m, tt.k, tt.n)
		for _, bwd := range []bool{false, true} {
			w, _ := o16.pass(bwd)
			w8, _ := o8.pass(bwd)
			// Current scaling's quantization is four launches: zero the amax, reduce,
			// compute the scale, cast (recipeFigures.quantKernels).
			if w8.flops != w.flops || w8.bytes != w.bytes || w8.kernels != w.kernels+4 {
				t.Fatalf("%s, backward %v: fp8 product %+v, want the 16-bit one's FLOPs and bytes %+v and four more launches", tt.name, bwd, w8, w)
			}
			quant := q * tt.m * tt.k
			if bwd {
				quant = q * tt.m * tt.n
			}
			rate := rf.fp8FLOPSPerSecond * o16.gemm.fraction(bwd, rf.sms, 2*rf.k0)
			want := w8.kernels*rf.kernelSeconds + max(w.flops/rate, w.bytes/rf.bytesPerSecond) + quant/rf.bytesPerSecond
			if got := rf.opSeconds(o8, bwd); math.Abs(got/want-1) > 1e-12 {
				t.Errorf("%s, backward %v: %v s, want %v", tt.name, bwd, got, want)
			}
		}
	}
}

// Under current scaling with sequence parallelism each column-parallel product's input
// and each row-parallel product's output gradient waits for one all-reduce of its
// amax over the tensor-parallel group (calc.amaxReductions): a Llama block in
// Megatron-Core (query-key-value and the one fc1 of gate and up column-parallel, the
// output projection and down row-parallel) has two a pass, each NCCL's small
// all-reduce among the group's GPUs in one node; full recomputation reruns the
// forward's two in the backward pass. Delayed scaling and the block recipes have none,
// nor does current scaling without sequence parallelism or tensor parallelism. Checked
// against the same block under delayed scaling, whose tensor-parallel communication is
// otherwise the same.
func TestFP8AmaxReduction(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	tg := frameworkTarget(t, "b200", cluster.Megatron)
	block := func(o Options) Layer {
		t.Helper()
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Layers {
			if l.Kind == "block" {
				return l
			}
		}
		t.Fatal("no block")
		return Layer{}
	}
	for _, tt := range []struct {
		name     string
		recipe   FP8Recipe
		tp       int
		sp       bool
		recomp   Recompute
		fwd, bwd float64 // amax all-reduces a pass
	}{
		{"current, TP 4 with SP", Current, 4, true, NoRecompute, 2, 2},
		{"current, TP 8 with SP", Current, 8, true, NoRecompute, 2, 2},
		{"current, TP 4 with SP, full recompute", Current, 4, true, Full, 2, 4},
		{"current, TP 4 without SP", Current, 4, false, NoRecompute, 0, 0},
		{"current, TP 1", Current, 1, false, NoRecompute, 0, 0},
		{"mxfp8, TP 4 with SP", MXFP8, 4, true, NoRecompute, 0, 0},
		{"blockwise, TP 4 with SP", Blockwise, 4, true, NoRecompute, 0, 0},
	} {
		o := Options{Batch: 1, Seq: 4096, DType: FP8, TensorParallel: tt.tp, SequenceParallel: tt.sp, Recompute: tt.recomp}
		base := o
		base.FP8Recipe = Delayed
		o.FP8Recipe = tt.recipe
		got, ref := block(o), block(base)
		ar := cluster.SmallAllReduceSeconds(tt.tp, 1)
		for _, c := range []struct {
			pass           string
			n, secs, kerns float64
		}{
			{"forward", tt.fwd, got.FwdTerms.CommSeconds - ref.FwdTerms.CommSeconds, got.FwdTerms.CommKernels - ref.FwdTerms.CommKernels},
			{"backward", tt.bwd, got.BwdTerms.CommSeconds - ref.BwdTerms.CommSeconds, got.BwdTerms.CommKernels - ref.BwdTerms.CommKernels},
		} {
			if math.Abs(c.secs-c.n*ar) > 1e-12 || c.kerns != c.n {
				t.Errorf("%s, %s: %v s in %v collectives beyond delayed scaling's, want %v x %v s", tt.name, c.pass, c.secs, c.kerns, c.n, ar)
			}
		}
	}
}

// A quantization launches the recipe's kernels: four under current scaling (the amax
// zeroed and reduced, common/recipe/current_scaling.cu's zero_amax_kernel and amax
// kernel; the scale from it; the cast: Float8CurrentScalingQuantizer::quantize_impl), one
// under the others (delayed scaling's cast-transpose updates the amax as it casts; the
// block recipes scale each block inside their kernel). A linear layer's pass is its
// product's launch and one quantization's, and under MXFP8 the weight's scale swizzle
// (recipeFigures.swizzleKernels): one launch forward, one backward (the input
// gradient's product reads the weight; the weight gradient's does not).
func TestFP8QuantizationKernels(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	for _, tt := range []struct {
		recipe  FP8Recipe
		want    float64
		swizzle float64
	}{{Delayed, 1, 0}, {Current, 4, 0}, {Blockwise, 1, 0}, {MXFP8, 1, 1}} {
		sh := newShape(a, Options{Batch: 1, Seq: 4096, DType: FP8, FP8Recipe: tt.recipe}.withDefaults())
		o := sh.linear("qkv", 4096, 4096, 6144)
		if o.fwd.kernels != 1+tt.want+tt.swizzle || o.bwd.kernels != 2+tt.want+tt.swizzle {
			t.Errorf("%s: %v forward and %v backward launches, want %v and %v", tt.recipe, o.fwd.kernels, o.bwd.kernels, 1+tt.want+tt.swizzle, 2+tt.want+tt.swizzle)
		}
	}
}

// TestMXFP8ScaleSwizzle: under MXFP8 each product that reads a weight swizzles that
// weight's scales in a launch of its own (Transformer Engine v2.12 to v2.16: the inputs
// and output gradients arrive with GEMM-ready scales, the cached weight does not), and
// a grouped product swizzles its experts' weights in one launch per 64 of them
// (kMaxTensorsPerKernel). So a Megatron-style mixture of Qwen3 30B-A3B at EP 8 (16
// local experts: linear_fc1 and linear_fc2 grouped) launches exactly 2 swizzles a pass
// (fc1's gate and up share one weight tensor, oneFC1), DeepSeek-V3 at EP 2 (128 local
// experts) 2 x 2 routed plus 1 for its shared experts' fc1 and 1 for their fc2; no other
// recipe launches any, and eager code (an expert's gate, up and down each its own
// linear) one per product and expert.
func TestMXFP8ScaleSwizzle(t *testing.T) {
	if s := groupedSwizzle(op{swizzleKernels: 1, fwd: work{kernels: 2}, bwd: work{kernels: 3}}, 16); s.swizzleKernels != 1.0/16 || s.fwd.kernels != 1+1.0/16 || s.bwd.kernels != 2+1.0/16 {
		t.Errorf("16 experts: %v swizzle launches an expert, kernels %v and %v; want 1/16, 1+1/16, 2+1/16", s.swizzleKernels, s.fwd.kernels, s.bwd.kernels)
	}
	if s := groupedSwizzle(op{swizzleKernels: 1, fwd: work{kernels: 1}}, 128); s.swizzleKernels != 2.0/128 {
		t.Errorf("128 experts: %v swizzle launches an expert, want 2/128 (two launches of 64)", s.swizzleKernels)
	}
	for _, tt := range []struct {
		model    string
		ep       int
		fusedAct bool
		want     float64 // swizzle launches a pass, the whole mixture
	}{
		{"qwen3-30b-a3b", 8, true, 2},
		{"qwen3-30b-a3b", 8, false, 3 * 16},
		{"deepseek-v3", 2, true, 2*2 + 2},
	} {
		a := bundled(t, tt.model)
		for _, recipe := range FP8Recipes {
			o := Options{Batch: 1, Seq: 4096, DType: FP8, FP8Recipe: recipe, Attention: CuDNN, DataParallel: tt.ep, ExpertParallel: tt.ep, Dispatcher: DispatchAllToAll}.withDefaults()
			sh := newShape(a, o)
			sh.fusedAct = tt.fusedAct
			p := sh.moe(&calc{sh: sh, target: target(t, "b200"), o: o})
			var got float64
			for _, op := range p.ops {
				got += op.swizzleKernels
			}
			want := tt.want
			if recipe != MXFP8 {
				want = 0
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s EP %d, fused activation %v, %s: %v swizzle launches a pass, want %v", tt.model, tt.ep, tt.fusedAct, recipe, got, want)
			}
		}
	}
}

// TestParamGatherBytes: the distributed optimizer's weight all-gather moves each weight
// in the buffer's type (Megatron-Core's param_and_grad_buffer.py, core_v0.12.0 to
// core_v0.16.0), and the gradients' reduce-scatter in the gradients' (bf16, fp32 with
// grad_reduce_in_fp32): per element of the fp8 products' weights (h(q + 2kv) + qh +
// 3hf a Llama 2 block) 1 byte for fp8 primary weights under delayed, current and
// blockwise scaling (a torch.uint8 buffer), 2 under mxfp8 (gathered in bf16 and
// quantized after) and without fp8 primary weights; every other weight (norms,
// embedding, LM head) 2; the gradients 2, 4 with precision mixed-fp32-grads, whatever
// the recipe.
func TestParamGatherBytes(t *testing.T) {
	a, _ := arch.Bundled("llama-2-7b")
	const L, h, f = 32, 4096, 11008
	products := float64(L * (h*(h+2*h) + h*h + 3*h*f))
	for _, tt := range []struct {
		name, device string
		o            Options
		product      float64 // bytes an element of the fp8 products' weights gathers in
		grad         float64 // bytes a gradient element is reduced in
	}{
		{"bf16", "h100-sxm", Options{DType: BF16, Precision: Mixed}, 2, 2},
		{"bf16 grads in fp32", "h100-sxm", Options{DType: BF16, Precision: MixedFP32Grads}, 2, 4},
		{"delayed, 16-bit copies", "h100-sxm", Options{FP8Recipe: Delayed, Precision: Mixed}, 2, 2},
		{"current, 16-bit copies", "h100-sxm", Options{FP8Recipe: Current, Precision: MixedFP32Grads}, 2, 4},
		{"delayed, fp8 primary weights", "h100-sxm", Options{FP8Recipe: Delayed, Precision: Mixed, FP8ParamGather: true}, 1, 2},
		{"current, fp8 primary weights", "h100-sxm", Options{FP8Recipe: Current, Precision: Mixed, FP8ParamGather: true}, 1, 2},
		{"current, fp8 primary weights, grads in fp32", "h100-sxm", Options{FP8Recipe: Current, Precision: MixedFP32Grads, FP8ParamGather: true}, 1, 4},
		{"blockwise, fp8 primary weights", "h100-sxm", Options{FP8Recipe: Blockwise, Precision: Mixed, FP8ParamGather: true}, 1, 2},
		{"mxfp8, 16-bit copies", "b200", Options{FP8Recipe: MXFP8, Precision: Mixed}, 2, 2},
		{"mxfp8, fp8 primary weights", "b200", Options{FP8Recipe: MXFP8, Precision: Mixed, FP8ParamGather: true}, 2, 2},
		{"mxfp8, fp8 primary weights, grads in fp32", "b200", Options{FP8Recipe: MXFP8, Precision: MixedFP32Grads, FP8ParamGather: true}, 2, 4},
	} {
		tt.o.Batch, tt.o.Seq, tt.o.Sharding, tt.o.ShardGroup = 1, 4096, ZeRO1, 8
		r, err := Estimate(a, frameworkTarget(t, tt.device, cluster.Megatron), tt.o)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var gathered, grads, params int64
		for i := range r.Layers {
			w, _ := r.ParamGatherBytes(i)
			_, g := r.FullBytes(i)
			gathered, grads, params = gathered+w, grads+g, params+r.Layers[i].Params-r.Layers[i].TiedParams
		}
		if want := int64(2*(float64(params)-products) + tt.product*products); gathered != want {
			t.Errorf("%s: the all-gather moves %d bytes, want %d", tt.name, gathered, want)
		}
		if want := int64(tt.grad * float64(params)); grads != want {
			t.Errorf("%s: the reduce-scatter moves %d bytes, want %d", tt.name, grads, want)
		}
	}
}

// TestParamGatherBytesExperts: a mixture's routed experts are all fp8 products, so with
// fp8 primary weights under a per-tensor recipe their expert-data-parallel all-gather
// moves 1 byte an element (8 experts of 3hf in a Mixtral 8x7B block, expert parallelism
// 1), the rest of the layer (attention, router, norms) its own share.
func TestParamGatherBytesExperts(t *testing.T) {
	a, _ := arch.Bundled("mixtral-8x7b-v0.1")
	const h, f, experts = 4096, 14336, 8
	o := Options{Batch: 1, Seq: 4096, FP8Recipe: Current, Precision: Mixed, Sharding: ZeRO1, ShardGroup: 8}
	copies, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Megatron), o)
	if err != nil {
		t.Fatal(err)
	}
	o.FP8ParamGather = true
	primary, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Megatron), o)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, l := range primary.Layers {
		if l.ExpertParams == 0 {
			continue
		}
		found = true
		if l.ExpertParams != experts*3*h*f {
			t.Fatalf("layer %d: %d routed expert parameters, want %d", i, l.ExpertParams, experts*3*h*f)
		}
		w16, e16 := copies.ParamGatherBytes(i)
		w8, e8 := primary.ParamGatherBytes(i)
		if e16 != 2*l.ExpertParams || e8 != l.ExpertParams {
			t.Errorf("layer %d: the experts gather %d bytes with 16-bit copies and %d with fp8 primary weights, want %d and %d", i, e16, e8, 2*l.ExpertParams, l.ExpertParams)
		}
		if w16 <= e16 || w16-w8 <= e16-e8 {
			t.Errorf("layer %d: the layer's other fp8 products (attention) gather no fewer bytes: %d -> %d beside the experts' %d -> %d", i, w16, w8, e16, e8)
		}
		break
	}
	if !found {
		t.Fatal("no layer with routed experts")
	}
}
