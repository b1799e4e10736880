package request

import (
	"context"
	"fmt"
	"testing"

	"pipeplan/core/analytic"
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
