package request

import (
	"context"
	"math"
	"testing"
)

// hybridEPPair is one published measurement of Megatron-Core's flex dispatcher with
// HybridEP against its all-to-all dispatcher on one recipe, everything else alike:
// run is the recipe as bridgeMoERuns plans it (its own dispatcher overridden), and
// measured the all-to-all run's throughput over HybridEP's.
type hybridEPPair struct {
	source   string
	run      bridgeMoERun
	measured float64
}

// hybridEPPairs: Megatron-Bridge #3561 ("switch GPT-OSS GB200 V2 dispatcher default to
// alltoall", 2026-04-28): 64 GB200, the V2 base config (EP64, MBS 4, GBS 1,280,
// sequence 4,096, recompute layernorm and moe_act, moe_a2a_overlap on), BF16 alltoall
// 423.6 TFLOP/s against HybridEP's 406.6; and #3387, cited by #3614 when it moved the
// B200 V2 recipe (EP8, MBS 4, the same recompute, no overlap) back to alltoall:
// HybridEP about 5% slower in BF16.
var hybridEPPairs = []hybridEPPair{
	{source: "Megatron-Bridge #3561", measured: 423.6 / 406.6,
		run: bridgeMoERun{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge2604, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, overlap: true, recompute: "layernorm, moe_act"}},
	{source: "Megatron-Bridge #3387", measured: 1.05,
		run: bridgeMoERun{name: "GPT-OSS 120B, 64 B200, BF16, MBS4 EP8", source: bridge2604, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, recompute: "layernorm, moe_act"}},
}

// TestHybridEPAgainstAllToAll prices each published pair of a HybridEP run and an
// all-to-all run of one recipe and compares the priced ratio of their throughputs
// (alltoall over HybridEP) with the measured one, as TestPublishedAsyncTPSpeedups does
// for async TP, within 3%.
//
// What made HybridEP slower on gpt-oss: its probabilities. Megatron-Core's flex
// dispatcher hands HybridEP (and DeepEP) fp32 probabilities only ("HybridEP only
// supports float32 probs", token_dispatcher.py, core_v0.16.0 to core_v0.18.0: the
// router's 16-bit ones are cast), and the experts receive them as they were
// dispatched, so gpt-oss's second expert bias (TEGroupedMLP._apply_bias: t + b*p expert
// by expert, a cat and a cast back) runs in fp32 under HybridEP and in 16 bits under
// the all-to-all dispatcher: 28 bytes an element forward and 40 backward where 12 and
// 16 were priced (analytic's routedProbBytes, expertOutputBias), some 1.2 ms a layer
// and microbatch on these pairs. With it the planner prices alltoall 2.8% faster on
// #3561's GB200 pair and 3.2% on #3387's B200 pair (it had priced HybridEP faster,
// 0.967 and 0.979), against 4.2% and about 5% measured. Left, some 1.5 points a pair:
// the planner still credits HybridEP with the all-to-all dispatcher's own work, the
// regrouping of received chunks (sort_chunks_by_idxs, both ways) and its metadata
// collectives (the probabilities' all-to-all and the tokens-per-expert gather). Read
// against DeepEP's hybrid-ep code (deep_ep/hybrid_ep_buffer.py and csrc/hybrid_ep/
// hybrid_ep.cu at commit 017a5202, executor.cu) and Megatron-Core's fused_a2a.py, what
// HybridEP does per call beyond the all-to-all dispatcher:
// (1) the routing map's all-gather and the metadata preprocessing kernel are priced
// (routingMapGatherSeconds, hybridEPPreprocessing): for the GB200 pair 16,384 tokens x
// 128 experts x 64 ranks, 134 MB gathered a layer's forward, some 0.36 ms; (2) no
// staging copies on Megatron-Core's path: dispatch_with_permute's permute reads the
// received rows from the registered buffer ("use permute kernel to avoid standalone
// D2D memory copy") and combine_with_unpermute's unpermute writes into it; the copy out
// that the hybrid-ep README's "Torch API" bandwidths include (GB200, 8 ranks, 32 SMs,
// BF16 dispatch 545.71 GB/s against the kernel's 764.03) is the plain dispatch's, with a
// cached handle; (3) buffers are registered once (HybridEPBuffer's constructor and
// exchange_ipc_address; update_buffer reallocates only when a configuration grows);
// (4) host synchronizations: with Megatron-Core's training call (num_permuted_tokens
// None, use_host_meta) the forward copies num_dispatched_tokens to the host before the
// dispatch kernel and tokens_per_expert after permute_processing, two against the
// all-to-all dispatcher's one; the backward replays the handle (counts in pinned host
// memory), none. The planner's moeHostSeconds splits the forward at one synchronization; a
// second one costs a device-bound pass one launch's host time (about 41 us on Grace):
// 36 layers x 5 microbatches, some 7 ms of a 2.9 s step, 0.25%, not priced; (5) its
// SMs: the published_bridge_moe_test note (under half a point). #3561's FP8-MX pair
// (438.5 against 431.0 TFLOP/s, 1.017) is not held, its V2 FP8-MX recipe at that commit
// not read.
func TestHybridEPAgainstAllToAll(t *testing.T) {
	step := func(c bridgeMoERun, dispatcher string) float64 {
		t.Helper()
		c.dispatcher = dispatcher
		res, err := Run(context.Background(), c.request(t))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Feasible {
			t.Fatalf("%s (%s): does not fit: %v", c.name, dispatcher, res.FirstError().Message)
		}
		return res.Step.StepSeconds
	}
	for _, p := range hybridEPPairs {
		got := step(p.run, "hybridep") / step(p.run, "alltoall")
		t.Logf("%-42s alltoall over HybridEP priced %.3fx, measured %.3fx (%s)", p.run.name, got, p.measured, p.source)
		if math.Abs(got/p.measured-1) > 0.03 {
			t.Errorf("%s: alltoall over HybridEP priced %.3fx, measured %.3fx (%s): beyond 3%%", p.run.name, got, p.measured, p.source)
		}
		if got >= p.measured {
			t.Errorf("%s: priced %.3fx, measured %.3fx: HybridEP is no longer priced faster than measured; update the known gap", p.run.name, got, p.measured)
		}
	}
	if len(hybridEPPairs) < 2 {
		t.Errorf("%d pairs, want #3561's and #3387's", len(hybridEPPairs))
	}
}
