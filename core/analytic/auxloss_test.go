package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
)

// TestAuxLoss: the router's load-balancing loss as Megatron-Core computes it with its
// fused router (shape.auxLoss): in every mixture layer, 5 launches each pass (the fused
// score kernel, the tokens-per-expert sum, the fused loss kernel, the logging's divide
// and add forward; the loss gradient's ones_like and scale, the two fused backward
// kernels and the logits' gradient sum backward), 6 with seq_aux_loss (the division by
// the microbatch's sequences and its gradient); 18 and 28 bytes per token and expert.
// Qwen3 30B-A3B (128 experts) at microbatch 2 of 4,096 tokens: n = 8,192 tokens, 1,048,576
// entries. None without a loss, in inference, or for a dense model.
func TestAuxLoss(t *testing.T) {
	const entries = 2 * 4096 * 128
	find := func(model string, o Options) (op, bool) {
		a := bundled(t, model)
		o = o.withDefaults()
		sh := newShape(a, o)
		if a.NumExperts == 0 {
			_, ok := sh.auxLoss(sh.t)
			return op{}, ok
		}
		for _, x := range sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o}).ops {
			if x.name == "aux loss" {
				return x, true
			}
		}
		return op{}, false
	}
	base := Options{Batch: 2, Seq: 4096, Attention: CuDNN, DataParallel: 8, ExpertParallel: 8}
	for _, c := range []struct {
		name    string
		model   string
		loss    AuxLoss
		infer   bool
		want    bool
		kernels float64
	}{
		{"aux_loss", "qwen3-30b-a3b", AuxLossMicrobatch, false, true, 5},
		{"seq_aux_loss", "qwen3-30b-a3b", AuxLossSequence, false, true, 6},
		{"none", "qwen3-30b-a3b", AuxLossNone, false, false, 0},
		{"default", "qwen3-30b-a3b", "", false, false, 0},
		{"inference", "qwen3-30b-a3b", AuxLossMicrobatch, true, false, 0},
		{"dense", "meta-llama-3-8b", AuxLossMicrobatch, false, false, 0},
	} {
		o := base
		o.MoEAuxLoss = c.loss
		if c.infer {
			o.Optimizer = None
		}
		if c.model == "meta-llama-3-8b" {
			o.ExpertParallel = 0
		}
		got, ok := find(c.model, o)
		if ok != c.want {
			t.Errorf("%s: priced %v, want %v", c.name, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		if got.fwd.kernels != c.kernels || got.bwd.kernels != c.kernels {
			t.Errorf("%s: %v and %v launches, want %v each pass", c.name, got.fwd.kernels, got.bwd.kernels, c.kernels)
		}
		if got.fwd.bytes != 18*entries || got.bwd.bytes != 28*entries || got.fwd.flops != 0 || got.bwd.flops != 0 {
			t.Errorf("%s: %v and %v bytes, %v and %v FLOPs; want %v and %v bytes, no FLOPs", c.name, got.fwd.bytes, got.bwd.bytes, got.fwd.flops, got.bwd.flops, 18*entries, 28*entries)
		}
	}
}

// TestAuxLossLaunches: the loss adds its launches to each mixture layer's passes
// (Estimate), 5 each with aux_loss over Qwen3 30B-A3B's 48 mixture blocks.
func TestAuxLossLaunches(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := target(t, "h100-sxm")
	o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, DataParallel: 8, ExpertParallel: 8}
	without, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MoEAuxLoss = AuxLossMicrobatch
	with, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	var dFwd, dBwd float64
	for i := range with.Layers {
		dFwd += with.Layers[i].FwdKernels - without.Layers[i].FwdKernels
		dBwd += with.Layers[i].BwdKernels - without.Layers[i].BwdKernels
	}
	if want := 5.0 * 48; dFwd != want || dBwd != want {
		t.Errorf("aux_loss adds %v forward and %v backward launches, want %v each", dFwd, dBwd, want)
	}
}

// TestAuxLossReduce: the load-balancing loss all-reduces the E int64 tokens per expert
// over the tensor-and-context-parallel group in the forward pass (Megatron-Core's
// get_tokens_per_expert_and_token_count over tp_cp_group, shape.auxLossReduceSeconds):
// a ring all-reduce of 8*E bytes among t*c members, closed form 2(m-1)*latency +
// 2(m-1)/m*8E/bandwidth, on the context link when c > 1, else the tensor link; one
// more forward launch and that much more forward time a mixture layer, nothing in the
// backward unless the forward is rerun there (full recomputation: the rerun forward's
// kernels, its all-reduce's launch and time once more); none on a group of one, without
// a loss, or in inference.
func TestAuxLossReduce(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := target(t, "h100-sxm")
	tg.ContextLink = cluster.Link{LatencySeconds: 7e-6, BytesPerSecond: 50e9}
	const E = 128
	ring := func(l cluster.Link, m float64) float64 {
		return 2*(m-1)*l.LatencySeconds + 2*(m-1)/m*8*E/l.BytesPerSecond
	}
	for _, c := range []struct {
		name       string
		tp, cp     int
		loss       AuxLoss
		infer      bool
		rerun      bool
		want       float64
		wantLaunch float64
	}{
		{"TP 2", 2, 1, AuxLossMicrobatch, false, false, ring(tg.tensorLink(), 2), 1},
		{"TP 2, full recomputation", 2, 1, AuxLossMicrobatch, false, true, ring(tg.tensorLink(), 2), 1},
		{"TP 4, seq_aux_loss", 4, 1, AuxLossSequence, false, false, ring(tg.tensorLink(), 4), 1},
		{"TP 2 CP 2", 2, 2, AuxLossMicrobatch, false, false, ring(tg.ContextLink, 4), 1},
		{"TP 1", 1, 1, AuxLossMicrobatch, false, false, 0, 0},
		{"TP 2, no loss", 2, 1, AuxLossNone, false, false, 0, 0},
		{"TP 2, inference", 2, 1, AuxLossMicrobatch, true, false, 0, 0},
	} {
		o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, TensorParallel: c.tp, Context: c.cp, SequenceParallel: c.tp > 1,
			DataParallel: 8, ExpertParallel: 8, MoEAuxLoss: c.loss}
		if c.infer {
			o.Optimizer = None
		}
		if c.rerun {
			o.Recompute = Full
		}
		sh := newShape(a, o.withDefaults())
		if got := sh.auxLossReduceSeconds(tg); math.Abs(got-c.want) > 1e-12*(1+c.want) {
			t.Errorf("%s: all-reduce %v s, want %v", c.name, got, c.want)
		}
		if c.want == 0 {
			continue
		}
		with, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.MoEAuxLoss = AuxLossNone
		without, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		lw, lo := moeBlock(t, with), moeBlock(t, without)
		kernels := 5.0
		if c.loss == AuxLossSequence {
			kernels = 6
		}
		if d := lw.FwdKernels - lo.FwdKernels; d != kernels+c.wantLaunch {
			t.Errorf("%s: the loss adds %v forward launches, want %v and its all-reduce", c.name, d, kernels)
		}
		wantBwd, calls := kernels, 1.0
		if c.rerun {
			wantBwd, calls = 2*kernels+c.wantLaunch, 2
		}
		if d := lw.BwdKernels - lo.BwdKernels; d != wantBwd {
			t.Errorf("%s: the loss adds %v backward launches, want %v", c.name, d, wantBwd)
		}
		if d := lw.ExpertCommSeconds - lo.ExpertCommSeconds; math.Abs(d-calls*c.want) > 1e-12 {
			t.Errorf("%s: the layer's mixture communication grows %v s, want %v all-reduces of %v", c.name, d, calls, c.want)
		}
	}
}

// TestRandomLogits: Megatron-Core's forced load balancing (Options.MoEForceBalance,
// RandomSTE: logits.clone().normal_() forward, the gradient straight through) adds two
// launches and 12 bytes per token and expert to each mixture layer's forward pass and
// nothing to its backward (Qwen3 30B-A3B, 48 mixture layers, 128 experts, 4,096 tokens
// a microbatch: 96 launches and 48 x 12 x 4,096 x 128 bytes); training and inference
// alike; and it holds the routing balanced (expert_imbalance above 1 is refused).
func TestRandomLogits(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := target(t, "h100-sxm")
	for _, infer := range []bool{false, true} {
		o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, DataParallel: 8, ExpertParallel: 8}
		if infer {
			o.Optimizer = None
		}
		sh := newShape(a, o.withDefaults())
		if _, ok := sh.randomLogits(sh.t); ok {
			t.Errorf("infer %v: random logits without forced balancing", infer)
		}
		without, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.MoEForceBalance = true
		sh = newShape(a, o.withDefaults())
		got, ok := sh.randomLogits(sh.t)
		if want := (work{0, 12 * 4096 * 128, 2}); !ok || got.fwd != want || got.bwd != (work{}) {
			t.Errorf("infer %v: random logits %+v / %+v, want %+v forward and nothing backward", infer, got.fwd, got.bwd, want)
		}
		with, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		var dFwd, dBwd float64
		for i := range with.Layers {
			dFwd += with.Layers[i].FwdKernels - without.Layers[i].FwdKernels
			dBwd += with.Layers[i].BwdKernels - without.Layers[i].BwdKernels
		}
		if dFwd != 2*48 || dBwd != 0 {
			t.Errorf("infer %v: forced balancing adds %v forward and %v backward launches, want 96 and 0", infer, dFwd, dBwd)
		}
	}
	o := Options{Batch: 1, Seq: 4096, DataParallel: 8, ExpertParallel: 8, MoEForceBalance: true, ExpertImbalance: 1.5}
	if _, err := Estimate(a, tg, o); err == nil || !strings.Contains(err.Error(), "moe_force_load_balancing") {
		t.Errorf("forced balancing with expert_imbalance 1.5: error %v, want it refused", err)
	}
}

// TestFusedTopK: under Megatron-Core's spec (megatron, cuda-graphs) the router's score
// function and top-k are Transformer Engine's fused_topk_with_score_function, one
// kernel each pass, 13 bytes per token and expert each (shape.topK); elsewhere the
// unfused score function, top-k and scatter, three kernels each pass. Qwen3 30B-A3B
// (128 experts) at microbatch 2 of 4,096 tokens: n = 8,192 tokens, 1,048,576 entries.
func TestFusedTopK(t *testing.T) {
	const entries = 2 * 4096 * 128
	a := bundled(t, "qwen3-30b-a3b")
	o := Options{Batch: 2, Seq: 4096, Attention: CuDNN, DataParallel: 8, ExpertParallel: 8}.withDefaults()
	for _, c := range []struct {
		megatronCore      bool
		kernels, fwd, bwd float64
	}{
		{true, 1, 13 * entries, 13 * entries},
		{false, 3, 8 * entries, memBackward * 8 * entries},
	} {
		sh := newShape(a, o)
		sh.megatronCore = c.megatronCore
		var got op
		for _, x := range sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o}).ops {
			if x.name == "top-k" {
				got = x
			}
		}
		if got.fwd.kernels != c.kernels || got.bwd.kernels != c.kernels || got.fwd.bytes != c.fwd || got.bwd.bytes != c.bwd {
			t.Errorf("megatronCore %v: top-k %+v / %+v, want %v kernels each pass, %v and %v bytes", c.megatronCore, got.fwd, got.bwd, c.kernels, c.fwd, c.bwd)
		}
	}
}
