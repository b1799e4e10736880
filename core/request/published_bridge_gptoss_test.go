package request

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
)

// gptOSSHeads is GPT-OSS 120B's query heads (config.json num_attention_heads; Megatron-
// Bridge's GPTOSSProvider num_attention_heads), all on one device at TP 1.
const gptOSSHeads = 64

// TestBridgeGptOssFusedAttention holds what rules out an unfused attention as the cause
// of the gpt-oss rows' optimism (TestBridgeMoEPublishedRuns, the gpt-oss paragraph):
// gpt-oss's attention has a learnable sink per head (Megatron-Core softmax_type
// "learnable"), and Transformer Engine's get_attention_backend disables FlashAttention
// for any softmax_type but "vanilla", leaving FusedAttention (cuDNN) and
// UnfusedDotProductAttention (transformer_engine/pytorch/attention/dot_product_attention/
// utils.py, "Filter: Softmax type", from v2.8). Had the runs fallen back to the unfused
// backend, each layer would keep its softmax output, b x h x s x s 16-bit elements, for
// the backward pass (its sliding layers too: the window is a mask on the whole score
// matrix): 8.6 GB a layer at microbatch 4 and 4,096 tokens. The planner's eager
// attention keeps exactly that (checked against the closed form per layer), and with
// it no BF16 gpt-oss run of the summary fits its devices: they ran, so they ran the
// fused kernel, as the containers' versions say they would (TE 2.9 / cuDNN 9.13.1.26 in
// NeMo 25.11, 2.12 / 9.18.0 in 26.02, 2.14 / 9.20.0 in 26.04, 2.16 / 9.21.1 in 26.06:
// Megatron-Bridge docs/releases/software-versions.md; nvte_get_fused_attn_backend takes
// learnable softmax from cuDNN 9.13.1, transformer_engine/common/fused_attn/
// fused_attn.cpp; GPTOSSProvider falls back to Megatron-Core's local, unfused, sink
// attention only below TE 2.8).
func TestBridgeGptOssFusedAttention(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 27 runs of 64 devices twice")
	}
	ctx := context.Background()
	runs := 0
	for _, c := range bridgeMoERuns {
		if c.model != "gpt-oss-120b" || c.precision != "bf16" {
			continue
		}
		runs++
		fused, unfused := c.request(t), c.request(t)
		unfused.Model.Architecture.Attention = "eager"
		ef, err := Estimate(ctx, fused)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The fused kernel is cuDNN's on every device, H100 included, where the request
		// names none (teAttention): analytic.DefaultAttention, Transformer Engine's rule.
		if ef.Opts.Attention != analytic.CuDNN {
			t.Errorf("%s: planned with %s attention, want Transformer Engine's FusedAttention (cudnn) for learnable softmax", c.name, ef.Opts.Attention)
		}
		eu, err := Estimate(ctx, unfused)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The softmax output an unfused layer keeps; the rest of the difference is its
		// Q and its K and V repeated to every head, against the fused kernel's Q, K, V
		// and statistics (under 3% of it at these lengths).
		probs := 2 * float64(c.mbs) * gptOSSHeads * float64(c.seq) * float64(c.seq)
		blocks := 0
		for i, l := range ef.Layers {
			if l.Kind != "block" {
				continue
			}
			blocks++
			extra := float64(eu.Layers[i].SavedActivationBytes - l.SavedActivationBytes)
			if extra < probs || extra > 1.05*probs {
				t.Errorf("%s, %s: unfused attention keeps %.3g bytes more, want the softmax output's %.3g to 5%% above", c.name, l.Name, extra, probs)
			}
		}
		if blocks != 36 {
			t.Errorf("%s: %d blocks, want gpt-oss 120B's 36", c.name, blocks)
		}
		res, err := Run(ctx, unfused)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Feasible {
			t.Errorf("%s (%s): fits with unfused attention; the runs' fused backend is then no longer implied by their memory", c.name, c.source)
		}
	}
	if runs != 27 {
		t.Errorf("%d BF16 gpt-oss runs, want the summary's 27", runs)
	}
}

// TestMegatronEvenLayout checks megatronEvenLayout against Megatron-Core's split without
// the account_for flags (36 blocks over 4 stages: 9 each, the embedding with the first,
// the final norm and the head with the last), and that the gpt-oss H100 runs plan on
// it: every stage holds 9 blocks.
func TestMegatronEvenLayout(t *testing.T) {
	for _, tc := range []struct {
		blocks, chunks int
		want           []int
	}{
		{36, 4, []int{0, 10, 19, 28, 39}},
		{36, 1, []int{0, 39}},
		{24, 8, []int{0, 4, 7, 10, 13, 16, 19, 22, 27}},
	} {
		got := megatronEvenLayout(tc.blocks, tc.chunks)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("megatronEvenLayout(%d, %d) = %v, want %v", tc.blocks, tc.chunks, got, tc.want)
		}
	}
	held := 0
	for _, c := range bridgeMoERuns {
		if c.model != "gpt-oss-120b" || c.pp == 1 {
			continue
		}
		held++
		res, err := Run(context.Background(), c.request(t))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Plan == nil {
			t.Fatalf("%s (%s): no plan", c.name, c.source)
		}
		b := res.Plan.Boundaries
		for s := 0; s+1 < len(b); s++ {
			blocks := b[s+1] - b[s]
			if s == 0 {
				blocks-- // the embedding
			}
			if s == len(b)-2 {
				blocks -= 2 // the final norm and the head
			}
			if blocks != 9 {
				t.Errorf("%s (%s): stage %d holds %d blocks (boundaries %v), want Megatron-Core's 36/4", c.name, c.source, s, blocks, b)
			}
		}
	}
	if held != 6 {
		t.Errorf("%d gpt-oss pipeline runs, want the summary's 6", held)
	}
}

// bridgeGraphs2960 is Megatron-Bridge's measurement of Transformer Engine's scoped CUDA
// graphs on GPT-OSS-20B (Megatron-Bridge #2960, "update CUDA graphs guidance with
// GPT-OSS validation", 2026-03-23: docs/training/cuda-graphs.md, "Additional Validation
// (GPT-OSS, H100, Mar 2026)", and skills/perf-techniques/cuda-graphs/card.yaml,
// measured_results, job 10111169): pre-training on 2 nodes of 8 H100s, TP2 PP4 EP4 CP1,
// mock data, GBS 4, cuda_graph_impl transformer_engine with cuda_graph_scope attn,
// moe_router and moe_preprocess ("6 graphable layers per pipeline rank"): steady-state
// iterations of 467-520 ms eager and 391-399 ms graphed, "~16-24%" faster. The rest is
// gpt_oss_20b_pretrain_config's (src/megatron/bridge/recipes/gpt_oss/gpt_oss.py):
// sequence 4,096, microbatch 1, bf16 with grad_reduce_in_fp32, the distributed
// optimizer with overlapped gradient reduce and parameter gather; sequence parallelism,
// which Megatron-Core requires with tensor and expert parallelism together
// (TransformerConfig); neither account_for flag, so 24/4 = 6 blocks a stage
// (megatronEvenLayout).
type bridgeGraphs2960 struct {
	eagerSeconds, graphedSeconds [2]float64 // the measured ranges
	speedup                      [2]float64 // 1 - graphed/eager, as the guide states it
}

var gptOSS20BGraphs = bridgeGraphs2960{
	eagerSeconds:   [2]float64{0.467, 0.520},
	graphedSeconds: [2]float64{0.391, 0.399},
	speedup:        [2]float64{0.16, 0.24},
}

// gptOSS20BGraphsGap says why the planner's speedup falls short of #2960's; while set,
// the test holds the planner to falling short (a change that closes the gap fails it
// until the note goes), and empty, to the measured range.
//
// What the planner shows about the gap, this run planned as it ran: eager 228.4 ms,
// graphed 224.9 ms, a 1.5% speedup, and both steps about half the measured ones (the
// graphed too: what is missing is not only in the graphed scope). The attention, norms,
// router and preprocessing of a block are 24 kernels forward and 28 backward here
// (before the dropless synchronization; the experts, dispatch and combine after it are
// 99 and 139), and their device time exceeds their host time at 15 us a kernel, so
// graphing them saves next to nothing. Raising the megatron mode's host time per kernel
// (model.architecture.host_kernel_seconds) to 20, 25 or 30 us gives 5.1%, 17.0% or
// 27.9%, but only because the graphed run's experts, launched eagerly after the
// dropless synchronization, stay at eager PyTorch's 15 us (analytic.moeHostSeconds);
// priced at the same cost in both runs, as Megatron-Core's code launches both, the
// graphed run slows as much and the speedup is 1.7%, 2.2% or 3.6%. So a uniform per-kernel
// cost, the experts' per-expert launches and the dropless synchronization (all the same
// in both runs) cannot explain it: the host time missing is in the graphed scope itself,
// attention, router and preprocessing, a 1.6 ms per block and pass on the critical path
// (about 100 ms over the 1F1B critical path of 5 stage passes of 6 blocks, each way),
// far beyond what 24 kernels at 15 us cost. Megatron-Core's router (load-balancing loss,
// its tracker, top-k and the routing map, tokens per expert) and Transformer Engine's
// module code per call (NVIDIA/TransformerEngine #2053 measures a TE Linear's forward at
// 2.7 times torch.nn.Linear's CPU time on GB200 and GH200) are the candidates.
//
// Transformer Engine's module overhead is ruled out as the whole of it: #2053's
// benchmark timed torch.nn.Linear on the DGX H100's Xeon 8480C too (13.48 us a forward,
// against 37.08 on GB200 and 33.17 on GH200), so its te.Linear figures scale to that
// host at 99.66 x 13.48 / 37.08 = 36 us (90.53 x 13.48 / 33.17 = 37 from GH200): about
// 22 us above the 15 us the megatron mode charges the one product it launches. The
// graphed scope calls three or four Transformer Engine modules a block and pass
// (LayerNormLinear, DotProductAttention, Linear; the router's product is torch's),
// about 0.1 ms of the 1.6 ms. Nor does a uniform cost per kernel fit: at 55 us a
// kernel in both runs (the dropless experts too) the eager step is 477 ms, as measured,
// but the graphed one 432 ms (measured 391-399), a 9.6% speedup, because the graphed
// scope holds 24 of a block's 108 forward kernels and 28 of its 152 backward ones; and
// the Qwen3 30B-A3B rows bound such a cost from above: on GB300, whose Grace host takes
// 2.75 times an x86 host's time per PyTorch call (cluster.Perf.HostSecondsScale, the
// same issue's rows), microbatches of 4 ran at 28,934 tokens/s/GPU (NeMo 25.11), which
// the megatron mode's 15 us a kernel, scaled to Grace, already prices 22% slow. So the
// host's time is not proportional to the analytic model's kernels: its dropless experts
// are counted a kernel per local expert (analytic's o.times(local)) where Megatron-Core
// makes one Python call for a grouped product (TEGroupedMLP: Transformer Engine's
// GroupedLinear launches the per-expert GEMMs from C++), while the attention, router
// and preprocessing make more Python calls than they launch kernels. Those extra calls
// are too few for 1.6 ms here, though: GPT-OSS has no load-balancing loss to keep
// (Megatron-Bridge's GPTOSSBridge sets moe_router_load_balancing_type "none", so none
// of the aux-loss bookkeeping of megatron/core/transformer/moe/router.py, core_v0.15.0,
// runs), its router is unfused (the H100 recipes' moe_router_fusion False: gating,
// top-k, softmax and the routing map's scatter, a few calls each way), and the
// all-to-all dispatcher's preprocessing (tokens per expert, their all-gather over the
// expert group, the splits' copy to the host) some twenty: at 15 us a call, a few
// tenths of a millisecond a pass. What costs the rest on an x86 host is not found; the
// run's hosts are not named beyond "H100". One candidate inside the graphed scope and
// only gpt-oss's: Transformer Engine caches the backend choice for one AttentionParams
// (dot_product_attention.py, v2.9 to v2.16), which gpt-oss's alternating sliding and
// full layers change at every layer, so get_attention_backend runs in every layer's
// forward (Transformer Engine #1349, #1381: "CPU intensive"), and a graphed attention
// skips it; no per-call figure is published, so it is not priced (the s32 paragraph of
// TestBridgeMoEPublishedRuns' note). Counting the host's calls per module, as
// tools/opcount does for HuggingFace's eager code, is the next step; it is not done. Megatron-Bridge's skill card
// (skills/nemo-mbridge-perf-cuda-graphs/card.yaml, validated 2026-07-31) holds two more
// measurements of the same scope on H100s: Qwen3-30B-A3B at TP2 PP2 EP4 on 16, 623 to
// 484 ms a step (22%), and a later Qwen3-30B-A3B BF16 all-to-all run neutral (41.36 s
// eager, 42.00 graphed); neither states its batch and sequence, so neither is planned.
const gptOSS20BGraphsGap = "the host time of Megatron-Core's attention, router and preprocessing (the graphed scope) is underpriced: about 1.6 ms per block and pass"

// TestBridgeGptOss20BGraphs plans GPT-OSS-20B as Megatron-Bridge #2960 measured it
// (bridgeGraphs2960), without CUDA graphs (the megatron mode) and with Transformer
// Engine's graphs of the attention and the router (cuda-graphs, the dropless experts
// eager: analytic.moeHostSeconds), and compares the predicted speedup with the measured
// one: an independent measurement of the host time the planner charges an ungraphed
// Megatron-Core block.
func TestBridgeGptOss20BGraphs(t *testing.T) {
	m := gptOSS20BGraphs
	steps := map[string]float64{}
	for _, graphs := range []string{"none", "attn"} {
		c := bridgeMoERun{name: "GPT-OSS 20B, 16 H100, BF16, TP2 PP4 EP4, graphs " + graphs, model: "gpt-oss-20b", device: "h100-sxm",
			precision: "bf16", gpus: 16, gbs: 4, mbs: 1, seq: 4096, tp: 2, pp: 4, vp: 1, ep: 4, graphs: graphs}
		req := c.request(t)
		req.Training.Precision = "mixed-fp32-grads" // the recipe's grad_reduce_in_fp32
		req.Boundaries = megatronEvenLayout(24, 4)
		res, err := Run(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Fatalf("%s: ran, but planned as not fitting: %s", c.name, res.FirstError().Message)
		}
		if b := res.Plan.Boundaries; fmt.Sprint(b) != fmt.Sprint(megatronEvenLayout(24, 4)) {
			t.Errorf("%s: boundaries %v, want Megatron-Core's 6 blocks a stage", c.name, b)
		}
		steps[graphs] = res.Step.StepSeconds
		t.Logf("%-52s [%s] step %.1f ms (%s)", c.name, req.Model.Architecture.Framework, 1e3*res.Step.StepSeconds, res.Step.Breakdown)
	}
	got := 1 - steps["attn"]/steps["none"]
	t.Logf("speedup from graphing attention and router: predicted %.1f%%, measured %.0f-%.0f%%; steps predicted %.1f and %.1f ms, measured %.0f-%.0f and %.0f-%.0f ms",
		100*got, 100*m.speedup[0], 100*m.speedup[1], 1e3*steps["none"], 1e3*steps["attn"],
		1e3*m.eagerSeconds[0], 1e3*m.eagerSeconds[1], 1e3*m.graphedSeconds[0], 1e3*m.graphedSeconds[1])
	if got < 0 {
		t.Errorf("graphing the attention and router slows the step (%.1f%%): graphs only take host time away", 100*got)
	}
	inRange := got >= m.speedup[0] && got <= m.speedup[1]
	switch {
	case gptOSS20BGraphsGap != "" && got >= m.speedup[0]:
		t.Errorf("predicted speedup %.1f%% reaches the measured %.0f-%.0f%%: the known gap (%s) has closed; remove the note", 100*got, 100*m.speedup[0], 100*m.speedup[1], gptOSS20BGraphsGap)
	case gptOSS20BGraphsGap == "" && !inRange:
		t.Errorf("predicted speedup %.1f%%, measured %.0f-%.0f%%", 100*got, 100*m.speedup[0], 100*m.speedup[1])
	case gptOSS20BGraphsGap != "":
		t.Logf("KNOWN GAP: %s", gptOSS20BGraphsGap)
	}
}

// bridgeGptOssTFLOPs are GPT-OSS 120B's rows of Megatron-Bridge's performance summary
// with the "Model TFLOP / sec / GPU" it prints beside the tokens (docs/performance-
// summary.md at v0.3.0: the NeMo 26.02 tables at 4,096 tokens, and the NeMo 25.11 ones,
// two of them at 8,192).
var bridgeGptOssTFLOPs = []struct {
	name           string
	seq            float64
	tokens, tflops float64
}{
	{"26.02 GB300", 4096, 19412, 527},
	{"26.02 GB200", 4096, 15784, 428},
	{"26.02 B300", 4096, 8359, 228},
	{"26.02 B200", 4096, 8047, 219},
	{"26.02 H100", 4096, 5993, 163},
	{"25.11 GB300", 8192, 18347, 565},
	{"25.11 GB200", 8192, 15876, 488},
	{"25.11 B200", 4096, 8213, 223},
	{"25.11 H100", 4096, 5630, 153},
}

// bridgeModelFLOPs is Megatron-Bridge's model FLOPs per token for a GPT-style mixture
// of experts at sequence s, as its flop_utils.py computes them (num_floating_point_
// operations, v0.3.0, the MHA/GQA branch; Megatron-LM's formula, Narayanan et al. 2021's
// appendix): 12*L*h*(f*k*g) for the routed experts, g the gated multiplier 3/2 only
// where gated_linear_unit and activation_func is F.silu (1 for gpt-oss's quick_gelu),
// 12*L*h^2*(1 + groups/heads + s/(2h))*(q/h) for the attention with every layer causal
// over the whole sequence, and 6*h*V for the logits (V padded to 128, as 201,088 is
// already); no router.
func bridgeModelFLOPs(a *arch.Arch, s, gated float64) float64 {
	L, h := float64(a.NumLayers), float64(a.HiddenSize)
	f, k := float64(a.IntermediateSize), float64(a.ExpertsPerToken)
	q, ratio := float64(a.QDim()), float64(a.NumKVHeads)/float64(a.NumHeads)
	return 12*L*h*f*k*gated + 12*L*h*h*(1+ratio+s/h/2)*(q/h) + 6*h*float64(a.VocabSize)
}

// TestGptOssModelFLOPs holds the planner's GPT-OSS 120B to the model Megatron-Bridge
// builds (its performance recipes build it from the HuggingFace config through
// GPTOSSBridge.provider_bridge, gpt_oss.py's AutoBridge.from_hf_pretrained(...).
// to_megatron_provider, v0.3.0): hidden 2,880; 64 query heads of 64 (a 4,096-wide
// attention, wider than the hidden size) and 8 key-value groups; linear_qkv and
// linear_proj with biases (add_bias_linear, which Megatron-Core's attention takes for
// linear_qkv too, add_bias_linear or add_qkv_bias, core_v0.16.0); 128 experts of 2,880,
// the top 4, gated; a 128-key window ((sliding_window - 1, 0) in Transformer Engine's
// inclusive convention) on every other layer from the first (window_attn_skip_freq 2);
// 201,088 words, untied. Each block's forward products are, for T tokens of b sequences
// of s: 2T*h*(q + 2kv) + 2T*q*h (the projections), 2T*h*E (the router), 2kT*h*2f +
// 2kT*f*h (the experts' fc1 and fc2), and 4*b*P*q for the attention core, P the pairs a
// sequence attends over (s^2/2 causal, s*w - w^2/2 within the window); the head 2T*h*V.
//
// And Megatron-Bridge's own "Model TFLOP / sec / GPU" is its formula over the tokens
// (bridgeModelFLOPs, every published row within 1%), which counts less than the model
// runs: the experts' gate as no product (its gated multiplier is SwiGLU's only), every
// layer's attention over the whole sequence, no router. The planner's products, three
// passes of the forward's as Bridge counts them, are that formula plus the gate's third
// and the router less the sliding layers' saving: 32.7 GFLOP a token at 4,096 where
// Bridge's table says 27.2. So the BF16 rows' optimism is not FLOPs the planner leaves
// out (at 26.02's GB200 15,784 tokens/s/GPU the model's products run at 516 TFLOP/s,
// 21% of the 2.5 PFLOP/s peak, not the table's 428).
func TestGptOssModelFLOPs(t *testing.T) {
	a, err := arch.Bundled("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	if a.HiddenSize != 2880 || a.QDim() != 4096 || a.NumKVHeads != 8 || a.NumExperts != 128 || a.ExpertsPerToken != 4 ||
		a.IntermediateSize != 2880 || a.VocabSize != 201088 || a.TiedEmbeddings || !a.QKVBias || !a.OutBias || !a.MLPBias ||
		a.LocalWindow != 128 || a.GlobalEvery != 2 || a.NumLayers != 36 {
		t.Fatalf("gpt-oss-120b differs from GPTOSSBridge's model: %+v", a)
	}
	var run bridgeMoERun
	for _, c := range bridgeMoERuns {
		if c.model == "gpt-oss-120b" && c.source == bridge2602 && c.device == "gb300" {
			run = c
		}
	}
	if run.name == "" {
		t.Fatal("no NeMo 26.02 GB300 gpt-oss run")
	}
	est, err := Estimate(context.Background(), run.request(t))
	if err != nil {
		t.Fatal(err)
	}
	h, q := float64(a.HiddenSize), float64(a.QDim())
	kv := float64(a.NumKVHeads * a.HeadDim)
	f, k, E := float64(a.IntermediateSize), float64(a.ExpertsPerToken), float64(a.NumExperts)
	b, s, w := float64(run.mbs), float64(run.seq), float64(a.LocalWindow)
	T := b * s
	products := 2*T*h*(q+2*kv) + 2*T*q*h + 2*T*h*E + 2*k*T*h*2*f + 2*k*T*f*h
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	var fwd float64
	blocks := 0
	for _, l := range est.Layers {
		switch l.Kind {
		case "block":
			pairs := s * s / 2
			if a.LocalLayer(blocks) {
				pairs = s*w - w*w/2
			}
			if want := products + 4*b*pairs*q; !near(l.FwdFLOPs, want) {
				t.Errorf("%s (sliding %v): forward %.6g FLOPs, want %.6g", l.Name, a.LocalLayer(blocks), l.FwdFLOPs, want)
			}
			blocks++
			fwd += l.FwdFLOPs
		case "lm_head":
			if want := 2 * T * h * float64(a.VocabSize); !near(l.FwdFLOPs, want) {
				t.Errorf("head: forward %.6g FLOPs, want %.6g", l.FwdFLOPs, want)
			}
			fwd += l.FwdFLOPs
		}
	}
	if blocks != a.NumLayers {
		t.Fatalf("%d blocks, want %d", blocks, a.NumLayers)
	}
	for _, r := range bridgeGptOssTFLOPs {
		if got, want := r.tflops*1e12/r.tokens, bridgeModelFLOPs(a, r.seq, 1); math.Abs(got/want-1) > 0.01 {
			t.Errorf("%s: the table's %.0f TFLOP/s over %.0f tokens/s is %.4g FLOPs a token, Bridge's formula %.4g", r.name, r.tflops, r.tokens, got, want)
		}
	}
	L := float64(a.NumLayers)
	sliding := L / 2 * (6*s*q - 12*q*(w-w*w/(2*s)))
	want := bridgeModelFLOPs(a, s, 1) + 6*L*h*f*k + 6*L*h*E - sliding
	if got := 3 * fwd / T; !near(got, want) {
		t.Errorf("planned %.6g FLOPs a token (three passes of the forward's products), want Bridge's formula with the gate's third and the router, less the windows: %.6g", got, want)
	}
	t.Logf("GPT-OSS 120B at %.0f tokens: %.1f GFLOP a token planned, %.1f by Megatron-Bridge's formula", s, 3*fwd/T/1e9, bridgeModelFLOPs(a, s, 1)/1e9)
}
