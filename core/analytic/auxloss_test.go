package analytic

import "testing"

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
