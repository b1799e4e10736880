package analytic

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
)

// TestFP8AttentionEfficiency: with fp8 attention the attention core runs at cuDNN's
// published fp8 rate (NVIDIA's cudnn-frontend benchmarks, attention.go): per-tensor fp8
// under the delayed and current recipes, MXFP8 under mxfp8, as the fraction of the
// table's 16-bit peak that a B200 and a B300 take of their own.
func TestFP8AttentionEfficiency(t *testing.T) {
	for _, c := range []struct {
		name, device string
		recipe       FP8Recipe
		d, seq       float64
		causal, bwd  bool
		eff          float64
	}{
		{"GB300 MXFP8 causal forward 4k", "gb300", MXFP8, 128, 4096, true, false, 2272 / 2500.0},
		{"GB300 MXFP8 causal backward 4k", "gb300", MXFP8, 128, 4096, true, true, 1143 / 2500.0},
		{"GB300 fp8 forward 16k", "gb300", Current, 128, 16384, false, false, 3182 / 2500.0},
		{"GB200 fp8 latent causal backward 8k", "gb200", Delayed, 192, 8192, true, true, 1959 / 2500.0},
		{"GB200 MXFP8 latent causal forward 32k", "gb200", MXFP8, 192, 32768, true, false, 2329 / 2500.0},
		{"B300 takes GB300's MXFP8 fraction", "b300", MXFP8, 192, 2048, true, false, 2069 / 2500.0},
		{"B200 takes GB200's fp8 fraction", "b200", Current, 128, 2048, true, true, 831 / 2500.0},
		{"H100 takes the H200's fp8, causal backward 16k", "h100-sxm", Current, 128, 16384, true, true, 374 / 989.0},
		{"H200 fp8 forward 2k", "h200", Delayed, 128, 2048, false, false, 870 / 989.0},
		{"held flat below 2k", "gb300", MXFP8, 128, 1024, true, false, 1751 / 2500.0},
	} {
		got, ok := attentionEfficiencyIn(c.device, fp8AttentionKernel(c.recipe), c.d, c.seq, 0, c.causal, c.bwd)
		if !ok || math.Abs(got-c.eff) > 1e-12 {
			t.Errorf("%s: efficiency %.6f (%v), want %.6f", c.name, got, ok, c.eff)
		}
	}
}

// TestFP8AttentionCoreTime: a block's attention core with fp8 attention takes its FLOPs
// over cuDNN's published fp8 rate (plus its launch), where cuDNN publishes one for the
// head dimension; gpt-oss's head dimension of 64 has none, so its layers stay at the
// 16-bit rates, whole-sequence and sliding alike.
func TestFP8AttentionCoreTime(t *testing.T) {
	for _, c := range []struct {
		model, device string
		fwd, bwd      float64 // published TFLOP/s; 0: the 16-bit rate stays
	}{
		{"qwen3-30b-a3b", "gb300", 2272, 1143},
		{"qwen3-30b-a3b", "gb200", 1685, 1054},
		{"deepseek-v3", "gb300", 2517, 1522},
		{"gpt-oss-120b", "gb300", 0, 0},
	} {
		a := bundled(t, c.model)
		tg := target(t, c.device)
		o := Options{Batch: 1, Seq: 4096, FP8Recipe: MXFP8, Attention: CuDNN}.withDefaults()
		core := func(fp8, local bool) op {
			o := o
			o.FP8Attention = fp8
			sh := newShape(a, o)
			var p piece
			if a.MLA() {
				p = sh.mla(local)
			} else {
				p = sh.attention(local)
			}
			sh.attentionRates(c.device, &p, local)
			for _, x := range p.ops {
				if x.core {
					return x
				}
			}
			t.Fatalf("%s: no attention core", c.model)
			return op{}
		}
		r := newRoofline(tg, o.DType, o.FP8Recipe)
		for _, local := range []bool{false, true} {
			f, b := core(true, local), core(false, local)
			if c.fwd == 0 {
				if f.fwdEff != b.fwdEff || f.bwdEff != b.bwdEff {
					t.Errorf("%s local %v: fp8 attention changed the rates (%v, %v from %v, %v): no fp8 figure at head dim %v", c.model, local, f.fwdEff, f.bwdEff, b.fwdEff, b.bwdEff, a.HeadDim)
				}
				continue
			}
			for _, pass := range []struct {
				bwd  bool
				rate float64
			}{{false, c.fwd}, {true, c.bwd}} {
				w, _ := f.pass(pass.bwd)
				want := w.kernels*r.kernelSeconds + w.flops/(pass.rate*1e12)
				if got := r.opSeconds(f, pass.bwd); math.Abs(got-want) > 1e-9*want {
					t.Errorf("%s %s backward %v: core %.6g s, want FLOPs / published rate %.6g s", c.model, c.device, pass.bwd, got, want)
				}
			}
		}
	}
}

// TestExpertFusedMLP: Transformer Engine's fused grouped MLP removes exactly the passes
// its epilogues fuse: in the forward pass the experts' activation kernel (3e bytes per
// element of an expert's width, Megatron-style fused) and the quantization of the down
// product's input (quantBytes per element), in the backward pass the activation's
// gradient (1.5 times its traffic) and the quantization of fc1's output gradient (gate
// and up as one grouped linear, 2f wide, oneFC1: quantBytes per element of both): the
// activation one kernel for all the local experts (wholeTensor), the quantization one
// per local expert. FLOPs and the tensors kept for the backward pass stay
// as they were.
func TestExpertFusedMLP(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := target(t, "gb300")
	fw, err := cluster.LookupFramework(cluster.CUDAGraphs)
	if err != nil {
		t.Fatal(err)
	}
	tg.Framework = fw
	const b, s, ep = 1, 4096, 8
	o := Options{Batch: b, Seq: s, FP8Recipe: MXFP8, DataParallel: ep, ExpertParallel: ep, Attention: CuDNN}
	plain, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.ExpertFusedMLP = true
	fused, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	p, f := moeBlock(t, plain), moeBlock(t, fused)
	e, fl := 2.0, float64(a.IntermediateSize)
	g := float64(b*s) * float64(a.ExpertsPerToken) // routed rows this device runs
	local := float64(a.NumExperts) / ep
	q := MXFP8.figures().quantBytes
	bw := tg.Perf.MemoryBytesPerSecond * tg.Perf.MemoryEfficiency
	ks := tg.Perf.KernelSeconds
	wantFwd := g*fl*(3*e+q)/bw + (1+local)*ks
	wantBwd := g*fl*(1.5*3*e+2*q)/bw + (1+local)*ks
	if d := p.FwdDeviceSeconds - f.FwdDeviceSeconds; math.Abs(d-wantFwd) > 1e-9*wantFwd {
		t.Errorf("forward saves %.6g s, want %.6g s", d, wantFwd)
	}
	if d := p.BwdDeviceSeconds - f.BwdDeviceSeconds; math.Abs(d-wantBwd) > 1e-9*wantBwd {
		t.Errorf("backward saves %.6g s, want %.6g s", d, wantBwd)
	}
	if d := p.FwdKernels - f.FwdKernels; math.Abs(d-(1+local)) > 1e-9 {
		t.Errorf("forward kernels %v fewer, want %v", d, 1+local)
	}
	if d := p.BwdKernels - f.BwdKernels; math.Abs(d-(1+local)) > 1e-9 {
		t.Errorf("backward kernels %v fewer, want %v", d, 1+local)
	}
	if p.FwdFLOPs != f.FwdFLOPs || p.BwdFLOPs != f.BwdFLOPs || p.SavedActivationBytes != f.SavedActivationBytes {
		t.Errorf("FLOPs %v/%v, saved %v: want %v/%v, %v as unfused", f.FwdFLOPs, f.BwdFLOPs, f.SavedActivationBytes, p.FwdFLOPs, p.BwdFLOPs, p.SavedActivationBytes)
	}
}

// TestFusedOptionErrors: fp8 attention and the fused grouped MLP are refused where
// Transformer Engine does not run them, naming the option.
func TestFusedOptionErrors(t *testing.T) {
	qwen, llama := bundled(t, "qwen3-30b-a3b"), bundled(t, "meta-llama-3-8b")
	for _, c := range []struct {
		model  string
		device string
		o      Options
		want   string
	}{
		{"qwen", "gb300", Options{Batch: 1, Seq: 128, Attention: CuDNN, FP8Attention: true}, "fp8_attention: applies to dtype fp8"},
		{"qwen", "gb300", Options{Batch: 1, Seq: 128, FP8Recipe: MXFP8, FP8Attention: true}, "fp8_attention: needs attention cudnn"},
		{"qwen", "gb300", Options{Batch: 1, Seq: 128, FP8Recipe: Current, ExpertFusedMLP: true}, "expert_fused_mlp: needs dtype fp8 with fp8_recipe mxfp8"},
		{"qwen", "gb300", Options{Batch: 1, Seq: 128, ExpertFusedMLP: true}, "expert_fused_mlp: needs dtype fp8 with fp8_recipe mxfp8"},
		{"llama", "gb300", Options{Batch: 1, Seq: 128, FP8Recipe: MXFP8, ExpertFusedMLP: true}, "expert_fused_mlp: fuses a mixture of experts' routed experts: the model has none"},
		{"qwen", "mi355x", Options{Batch: 1, Seq: 128, FP8Recipe: MXFP8, ExpertFusedMLP: true}, "expert_fused_mlp: cuDNN's fused grouped GEMMs run on Blackwell GPUs of compute capability 10.x only"},
	} {
		a := qwen
		if c.model == "llama" {
			a = llama
		}
		_, err := Estimate(a, target(t, c.device), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s %+v: error %v, want %q", c.model, c.device, c.o, err, c.want)
		}
	}
}

// TestOneFC1: Megatron-Core's gated MLP (the dense MLP, the routed experts' TEGroupedMLP
// and the shared experts) runs gate and up as one linear, linear_fc1, so under every fp8
// recipe its input is quantized once (quantBytes per element of the m x h input) and its
// output's gradient once (quantBytes per element of m x 2f): against two separate
// products (eager HuggingFace code's gate_proj and up_proj), one forward quantization
// of m*h elements and one quantization's kernels a pass fewer per product group, one
// product launch fewer forward and two backward, the same backward bytes. Checked on the pieces' operations, gate's and up's quantization summed.
func TestOneFC1(t *testing.T) {
	for _, tt := range []struct {
		model  string
		moe    bool
		recipe FP8Recipe
	}{
		{"meta-llama-3-8b", false, Delayed},
		{"meta-llama-3-8b", false, MXFP8},
		{"qwen3-30b-a3b", true, Current},
		{"qwen3-30b-a3b", true, MXFP8},
		{"deepseek-v3", true, MXFP8},
	} {
		a := bundled(t, tt.model)
		const s, ep = 4096, 8
		o := Options{Batch: 1, Seq: s, DType: FP8, FP8Recipe: tt.recipe}
		if tt.moe {
			o.DataParallel, o.ExpertParallel = ep, ep
		}
		o = o.withDefaults()
		q := tt.recipe.figures().quantBytes
		h := float64(a.HiddenSize)
		// sums gate's and up's quantization bytes and kernels in each pass, over the
		// products whose names end in "gate" and "up" (routed and shared apart).
		sums := func(fusedAct bool) (fq, bq, fk, bk map[string]float64) {
			sh := newShape(a, o)
			sh.fusedAct, sh.fusedFC1 = fusedAct, fusedAct
			var p piece
			if tt.moe {
				p = sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o})
			} else {
				p = sh.mlp()
			}
			fq, bq, fk, bk = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
			for _, op := range p.ops {
				group := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(op.name, "gate"), "up"), "fc1")
				if group == op.name || op.name == "shared expert gate" {
					continue
				}
				fq[group] += op.fwdQuant
				bq[group] += op.bwdQuant
				fk[group] += op.fwd.kernels
				bk[group] += op.bwd.kernels
			}
			return
		}
		fq0, bq0, fk0, bk0 := sums(false)
		fq1, bq1, fk1, bk1 := sums(true)
		rows := map[string]float64{"": s} // the dense MLP's input rows
		copies := map[string]float64{"": 1}
		if tt.moe {
			local := float64(a.NumExperts) / ep
			rows = map[string]float64{"": s * float64(a.ExpertsPerToken), "shared ": s}
			copies = map[string]float64{"": local, "shared ": 1}
			if a.SharedExpertSize == 0 {
				delete(rows, "shared ")
			}
		}
		for g, m := range rows {
			name := fmt.Sprintf("%s %v %q", tt.model, tt.recipe, g)
			if _, ok := fq0[g]; !ok {
				t.Fatalf("%s: no gate and up products", name)
			}
			if d := fq0[g] - fq1[g]; math.Abs(d-q*m*h) > 1e-6*q*m*h {
				t.Errorf("%s: forward quantization %v bytes fewer, want %v (the input once)", name, d, q*m*h)
			}
			if bq0[g] != bq1[g] {
				t.Errorf("%s: backward quantization %v bytes, want %v (the same gradient, 2f wide)", name, bq1[g], bq0[g])
			}
			// One quantization's launches fewer a copy (four with current scaling), one
			// product forward and its two gradients backward, and under MXFP8 the weight
			// swizzles: two a copy (gate's and up's) become one for the grouped
			// linear_fc1 of all the copies (one a 64: groupedSwizzle).
			qk, sk, c := tt.recipe.figures().quantKernels, tt.recipe.figures().swizzleKernels, copies[g]
			want := qk*c + sk*(2*c-math.Ceil(c/swizzleTensorsPerLaunch))
			if d := fk0[g] - fk1[g]; math.Abs(d-(want+c)) > 1e-9 {
				t.Errorf("%s: forward kernels %v fewer, want %v", name, d, want+c)
			}
			if d := bk0[g] - bk1[g]; math.Abs(d-(want+2*c)) > 1e-9 {
				t.Errorf("%s: backward kernels %v fewer, want %v", name, d, want+2*c)
			}
		}
	}
}

// TestUnpermute: in the Megatron-style modes the combine side's regrouping is Transformer
// Engine's fused unpermute without probabilities (the activation applied them): per
// routed row it reads the row (e*h bytes) and writes 1/k of a token with the alltoall
// dispatcher, D/k with the flex dispatcher (D = EP*(1-(1-1/EP)^k) devices a token
// reaches), the same bytes backward, one kernel in all each pass; eager code keeps the
// multiply and scatter-add (3e*h a row, two kernels an expert).
func TestUnpermute(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	const s, ep = 4096.0, 8.0
	k, h, e := float64(a.ExpertsPerToken), float64(a.HiddenSize), 2.0
	g := s * k // routed rows on the busiest device, balanced
	for _, tt := range []struct {
		disp     Dispatcher
		fusedAct bool
		name     string
		bytes    float64
		kernels  float64
	}{
		{DispatchAllToAll, true, "unpermute", e * g * h * (1 + 1/k), 1},
		{DispatchHybridEP, true, "unpermute", e * g * h * (1 + ep*(1-math.Pow(1-1/ep, k))/k), 1},
		{DispatchAllToAll, false, "weight and scatter", 3 * e * g * h, 2 * float64(a.NumExperts) / ep},
	} {
		o := Options{Batch: 1, Seq: int(s), DataParallel: int(ep), ExpertParallel: int(ep), Dispatcher: tt.disp}
		o = o.withDefaults()
		sh := newShape(a, o)
		sh.fusedAct = tt.fusedAct
		var found bool
		for _, op := range sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o}).ops {
			if op.name != tt.name {
				continue
			}
			found = true
			if math.Abs(op.fwd.bytes-tt.bytes) > 1e-9*tt.bytes || math.Abs(op.fwd.kernels-tt.kernels) > 1e-9 {
				t.Errorf("%s %v: forward %v bytes in %v kernels, want %v in %v", tt.disp, tt.fusedAct, op.fwd.bytes, op.fwd.kernels, tt.bytes, tt.kernels)
			}
			if tt.fusedAct && math.Abs(op.bwd.bytes-tt.bytes) > 1e-9*tt.bytes {
				t.Errorf("%s: backward %v bytes, want %v", tt.disp, op.bwd.bytes, tt.bytes)
			}
		}
		if !found {
			t.Errorf("%s %v: no %q", tt.disp, tt.fusedAct, tt.name)
		}
	}
}

// TestExpertFusedMLPBias: under Transformer Engine's fused grouped MLP gpt-oss's second
// expert bias is the cuDNN grouped product's epilogue bias (TEGroupedMLP's fused branch
// returns before _apply_bias), so the experts' biases change neither the expert
// layer's memory-bound time nor its launches there; without the fusion they add
// expertOutputBias's eager kernels (16-bit probabilities under alltoall: 6e bytes an
// element forward, 8e backward).
func TestExpertFusedMLPBias(t *testing.T) {
	a := bundled(t, "gpt-oss-120b")
	noBias := *a
	noBias.MLPBias = false
	tg := target(t, "gb300")
	fw, err := cluster.LookupFramework(cluster.CUDAGraphs)
	if err != nil {
		t.Fatal(err)
	}
	tg.Framework = fw
	const b, s, ep = 1, 4096, 16
	bw := tg.Perf.MemoryBytesPerSecond
	h := float64(a.HiddenSize)
	g := float64(b*s) * float64(a.ExpertsPerToken)
	for _, fused := range []bool{false, true} {
		o := Options{Batch: b, Seq: s, FP8Recipe: MXFP8, DataParallel: ep, ExpertParallel: ep, Attention: CuDNN, ExpertFusedMLP: fused}
		with, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		without, err := Estimate(&noBias, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		w, n := moeBlock(t, with), moeBlock(t, without)
		fwd := (w.FwdTerms.MemorySeconds - n.FwdTerms.MemorySeconds) * bw
		bwd := (w.BwdTerms.MemorySeconds - n.BwdTerms.MemorySeconds) * bw
		wantFwd, wantBwd := 6*2*h*g, 8*2*h*g
		if fused {
			wantFwd, wantBwd = 0, 0
		}
		if math.Abs(fwd-wantFwd) > 1e-6*max(1, wantFwd) || math.Abs(bwd-wantBwd) > 1e-6*max(1, wantBwd) {
			t.Errorf("fused %v: the biases move %.6g bytes forward and %.6g backward, want %.6g and %.6g", fused, fwd, bwd, wantFwd, wantBwd)
		}
		if fused && (w.FwdKernels != n.FwdKernels || w.BwdKernels != n.BwdKernels) {
			t.Errorf("fused: the biases add %v and %v kernels, want none", w.FwdKernels-n.FwdKernels, w.BwdKernels-n.BwdKernels)
		}
	}
}
