package request

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// bridgeMoERun is a mixture-of-experts pre-training run from NVIDIA's Megatron-Bridge
// performance summary, planned as a request with the run's own model, devices,
// parallelism (TP, PP, VP, EP, CP; DP from the GPUs), batch, sequence and precision, and
// compared on tokens per second per GPU.
type bridgeMoERun struct {
	name, source string
	model        string // a key of bridgeMoEModels
	device       string
	precision    string // bf16, or the fp8 recipe: current (FP8-CS), mxfp8 (FP8-MX)
	gpus         int
	gbs, mbs     int
	seq          int
	tp, pp, vp   int
	ep, cp       int
	tokensPerGPU float64 // published tokens per second per GPU
	// overlap: the recipe's moe_a2a_overlap (parallelism.expert_overlap). recompute: its
	// recompute_modules (recompute_granularity selective), planned as
	// training.recompute_modules.
	overlap   bool
	recompute string
	// dispatcher: the recipe's token dispatcher where the row states it ("deepep" or
	// "hybridep": the flex dispatcher's backends); "" leaves it to flexBackend's
	// reading of each release's recipe.
	dispatcher string
	// graphs is the recipe's CUDA graph capture where the row states it (the rows of
	// NeMo 26.06 on, read from their own release's recipe): "full_iteration"
	// (cuda_graph_impl full_iteration: the whole step replayed as one graph), "attn"
	// (Transformer Engine's graphs with "attn" in cuda_graph_scope), "router" (TE's
	// graphs of moe_router and moe_preprocess alone) or "none". The first two plan
	// with the cuda-graphs framework, the others with megatron; "" leaves it to
	// attentionGraphed's reading of the older releases' recipes.
	graphs string
	// fp8Attention: the recipe's fp8_dot_product_attention (model.architecture.
	// fp8_attention); fusedMLP: its cutedsl_fused_grouped_mlp (NVTE_CUTEDSL_FUSED_GROUPED_MLP,
	// model.architecture.expert_fused_mlp). Set on the rows of NeMo 26.06 on whose own
	// release's recipe sets them.
	fp8Attention, fusedMLP bool
	// noParamGatherOverlap: the recipe turns overlap_param_gather off (planned as
	// parallelism.overlap_param_gather off).
	noParamGatherOverlap bool
	// refused, when set, is why pipeplan refuses this run although it ran: reported, and
	// held to that (a run that comes to fit fails the test until the note is removed).
	refused string
}

// The sources: NVIDIA-NeMo/Megatron-Bridge, docs/performance-summary.md (the NeMo 25.11
// container) and docs/performance-summary-archive.md (the 26.02 container, by model),
// "Pre-Training Performance": Megatron-Core with Transformer Engine on DGX-GB300,
// DGX-GB200, DGX-B300, DGX-B200 and DGX-H100; "we force-balance the token distribution
// among experts and all benchmarks are token-dropless" (so expert_imbalance 1 and no
// capacity factor). DeepSeekV3 rows of 25.11 on GB200 and GB300 are "w/o MTP", the B200
// row "w/ MTP"; 26.02 does not say (planned with MTP, as the model is).
const (
	bridge2511  = "Megatron-Bridge perf summary, NeMo 25.11"
	bridge2602  = "Megatron-Bridge perf summary archive, NeMo 26.02"
	bridge26021 = "Megatron-Bridge perf summary archive, NeMo 26.02.01"
	bridge2604  = "Megatron-Bridge perf summary archive, NeMo 26.04"
	bridge26041 = "Megatron-Bridge perf summary archive, NeMo 26.04.01"
	// bridge2606 and bridge26061: the archive's "26.06 NeMo Container" and "26.06.01
	// NeMo Container" tables (Megatron-Bridge v0.5.0 and v0.5.1, whose
	// scripts/performance configs are the rows' recipes; the 26.06 table as revised on
	// 2026-06-16 and 2026-06-22, "26.06 perf summary updates" #4384 and "perf summary
	// b300 26.06" #4435; the 26.06.01 one from #4989).
	bridge2606  = "Megatron-Bridge perf summary archive, NeMo 26.06"
	bridge26061 = "Megatron-Bridge perf summary archive, NeMo 26.06.01"
	// bridge2606First: the 26.06 table as Megatron-Bridge v0.5.0 first published it
	// (docs/performance-summary.md at tag v0.5.0, "26.06 perf summary" #4318), whose
	// BF16 GPT-OSS 120B rows #4384 replaced by MXFP8 runs the next day: measurements of
	// the same container, kept as their own source.
	bridge2606First = "Megatron-Bridge perf summary v0.5.0, NeMo 26.06 (first table)"
	// bridgeOverlap: Megatron-Bridge, skills/nemo-mbridge-perf-expert-parallel-overlap/
	// SKILL.md, "HybridEP Production-Shape Benchmark" (2026-07-25): Qwen3 30B-A3B
	// pre-training on 16 H100s, BF16, sequence 4,096, TP1 PP1 EP16, MBS 1, GBS 1,024,
	// forced balance, flex dispatcher with HybridEP, Transformer Engine's CUDA graphs
	// of the router and preprocessing; step 24.7138 s without the expert-parallel
	// overlap, 20.9920 s with it (1,024 x 4,096 tokens over 16 GPUs: 10,607 and 12,489
	// tokens/s/GPU). Its Nsight measurement is analytic.expertOverlapHidden's source.
	bridgeOverlap = "Megatron-Bridge expert-parallel overlap benchmark, 2026-07"
	// bridgePR1760: Megatron-Bridge pull request #1760's step time after its change
	// (the 25.11 container's recipe, retuned).
	bridgePR1760 = "Megatron-Bridge #1760, Qwen3 235B-A22B B200 retuned"
)

var bridgeMoERuns = []bridgeMoERun{
	// NeMo 25.11.
	// NeMo 25.11's DeepSeek-V3 rows on GB300 and GB200 on their own release's recipe,
	// Megatron-Bridge v0.2.2's scripts/performance/configs/deepseek/
	// workload_base_configs.py (with the table's parallelism and batch): GB300
	// (DEEPSEEK_V3_GB300_BASE_CONFIG) HybridEP, moe_a2a_overlap False, Transformer
	// Engine's CUDA graphs of attn, moe_router and moe_preprocess, recompute_modules
	// moe_act; GB200 (DEEPSEEK_V3_GB200_BASE_CONFIG) HybridEP, moe_a2a_overlap False,
	// graphs of moe_router and moe_preprocess alone, recompute_modules mla_up_proj; and
	// deepseek_llm_pretrain.py turns overlap_param_gather off for fp8_mx on both ("keeping
	// this eanbled causes NaN grad norm").
	{name: "DeepSeekV3 w/o MTP, 256 GB300, BF16, PP2 VP4 EP32", source: bridge2511, model: "deepseek-v3-nomtp", device: "gb300", precision: "bf16", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 4, ep: 32, tokensPerGPU: 3848, recompute: "moe_act", graphs: "attn"},
	{name: "DeepSeekV3 w/o MTP, 256 GB300, FP8-MX, PP2 VP4 EP32", source: bridge2511, model: "deepseek-v3-nomtp", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 4, ep: 32, tokensPerGPU: 4357, recompute: "moe_act", graphs: "attn", noParamGatherOverlap: true},
	{name: "GPT-OSS 120B, 64 GB300, BF16, EP64", source: bridge2511, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 2, seq: 8192, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 18347},
	{name: "Qwen3 30B-A3B, 8 GB300, FP8-MX, EP8", source: bridge2511, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 28934},
	{name: "Qwen3 235B-A22B, 256 GB300, BF16, PP4 VP12 EP16", source: bridge2511, model: "qwen3-235b-a22b", device: "gb300", precision: "bf16", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 12, ep: 16, tokensPerGPU: 6131},
	{name: "DeepSeekV3 w/o MTP, 256 GB200, BF16, PP4 VP4 EP64", source: bridge2511, model: "deepseek-v3-nomtp", device: "gb200", precision: "bf16", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 3139, recompute: "mla_up_proj", graphs: "router"},
	{name: "DeepSeekV3 w/o MTP, 256 GB200, FP8-MX, PP8 VP4 EP32", source: bridge2511, model: "deepseek-v3-nomtp", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 4, ep: 32, tokensPerGPU: 4018, recompute: "mla_up_proj", graphs: "router", noParamGatherOverlap: true},
	{name: "GPT-OSS 120B, 64 GB200, BF16, EP64", source: bridge2511, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 8192, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 15876, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 GB200, FP8-MX, EP8", source: bridge2511, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 23766},
	{name: "Qwen3 235B-A22B, 256 GB200, BF16, PP8 VP3 EP32", source: bridge2511, model: "qwen3-235b-a22b", device: "gb200", precision: "bf16", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 3, ep: 32, tokensPerGPU: 4916},
	{name: "DeepSeekV3 w/ MTP, 256 B200, FP8-MX, PP16 EP8", source: bridge2511, model: "deepseek-v3", device: "b200", precision: "mxfp8", gpus: 256, gbs: 2048, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 2139, recompute: "mla_up_proj"},
	// GPT-OSS 120B's B200 and H100 rows of 25.11 on their recipe, Megatron-Bridge
	// v0.2.0's GPT_OSS_120B_B200_BF16_BASE_CONFIG (EP64, MBS 4, layernorm and moe_act
	// recomputed, GBS 512) and _H100_BF16_BASE_CONFIG (PP4, EP8, MBS 1, the same
	// recomputation), where the table ("Added 25.11 starter pack", #1596, whose four
	// gpt-oss rows all read GBS 512, MBS 4) states EP8 and MBS 4. The B200 run's 8,213
	// tokens/s/GPU is the EP64 recipe's (26.02 ran it at GBS 1,280: 8,047), not the EP8
	// one's (26.02.01, #2906: 13,722); at MBS 4 with Megatron-Core's even split (layout)
	// the H100 run would not fit its 80 GB.
	{name: "GPT-OSS 120B, 64 B200, BF16, EP64 (table: EP8)", source: bridge2511, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 8213, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 B200, FP8-MX, EP8", source: bridge2511, model: "qwen3-30b-a3b", device: "b200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 9299},
	{name: "Qwen3 235B-A22B, 64 B200, FP8-MX, PP8 VP4 EP8", source: bridge2511, model: "qwen3-235b-a22b", device: "b200", precision: "mxfp8", gpus: 64, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 4, ep: 8, tokensPerGPU: 3269, overlap: true},
	{name: "GPT-OSS 120B, 64 H100, BF16, MBS1 PP4 EP8 (table: MBS4)", source: bridge2511, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 512, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5630, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 16 H100, FP8-CS, PP2 VP24 EP8", source: bridge2511, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 512, mbs: 2, seq: 4096, tp: 1, pp: 2, vp: 24, ep: 8, tokensPerGPU: 5275, overlap: true},
	{name: "Qwen3 235B-A22B, 256 H100, FP8-CS, TP2 PP8 VP4 EP32", source: bridge2511, model: "qwen3-235b-a22b", device: "h100-sxm", precision: "current", gpus: 256, gbs: 2048, mbs: 1, seq: 4096, tp: 2, pp: 8, vp: 4, ep: 32, tokensPerGPU: 1575, overlap: true},

	// NeMo 26.02 (the archive's per-model tables).
	{name: "DeepSeekV3, 256 GB300, MXFP8, MBS2 PP2 VP8 EP32", source: bridge2602, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 4612, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge2602, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 3955, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B300, MXFP8, PP16 EP8", source: bridge2602, model: "deepseek-v3", device: "b300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 2983, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B200, MXFP8, PP16 EP8", source: bridge2602, model: "deepseek-v3", device: "b200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 2689, recompute: "mla_up_proj"},
	{name: "GPT-OSS 120B, 64 GB300, BF16, MBS4 EP64", source: bridge2602, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 19412},
	{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge2602, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 15784, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 B300, BF16, MBS4 EP64", source: bridge2602, model: "gpt-oss-120b", device: "b300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 8359},
	{name: "GPT-OSS 120B, 64 B200, BF16, MBS4 EP64", source: bridge2602, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 8047, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 H100, BF16, MBS1 PP4 EP8", source: bridge2602, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5993, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge2602, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 30376},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge2602, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26084},
	{name: "Qwen3 30B-A3B, 8 B300, MXFP8, MBS8 EP8", source: bridge2602, model: "qwen3-30b-a3b", device: "b300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 29521},
	{name: "Qwen3 30B-A3B, 8 B200, MXFP8, MBS1 EP8", source: bridge2602, model: "qwen3-30b-a3b", device: "b200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 9691},
	{name: "Qwen3 30B-A3B, 16 H100, FP8, PP2 VP12 EP8", source: bridge2602, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 12, ep: 8, tokensPerGPU: 5113, overlap: true},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 EP32", source: bridge2602, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 32, tokensPerGPU: 6583},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 EP32", source: bridge2602, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 32, tokensPerGPU: 5448},
	{name: "Qwen3 235B-A22B, 256 B300, MXFP8, PP8 VP4 EP8", source: bridge2602, model: "qwen3-235b-a22b", device: "b300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 4, ep: 8, tokensPerGPU: 2691, overlap: true},
	{name: "Qwen3 235B-A22B, 256 B200, MXFP8, PP8 EP8", source: bridge2602, model: "qwen3-235b-a22b", device: "b200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 3805},
	{name: "Qwen3 235B-A22B, 256 H100, FP8, TP2 PP8 VP4 EP32", source: bridge2602, model: "qwen3-235b-a22b", device: "h100-sxm", precision: "current", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 2, pp: 8, vp: 4, ep: 32, tokensPerGPU: 1633, overlap: true},

	// NeMo 26.02.01.
	{name: "DeepSeekV3, 256 GB300, MXFP8, MBS2 PP2 VP8 EP32", source: bridge26021, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 4691, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge26021, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 4021, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B300, MXFP8, PP16 EP8", source: bridge26021, model: "deepseek-v3", device: "b300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 3099, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B200, MXFP8, PP16 EP8", source: bridge26021, model: "deepseek-v3", device: "b200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 2790, recompute: "mla_up_proj"},
	{name: "GPT-OSS 120B, 64 GB300, BF16, MBS4 EP64", source: bridge26021, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 19366},
	{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge26021, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 15754, overlap: true, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 B300, BF16, MBS4 EP8", source: bridge26021, model: "gpt-oss-120b", device: "b300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 15031},
	{name: "GPT-OSS 120B, 64 B200, BF16, MBS4 EP8", source: bridge26021, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 13722, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 H100, BF16, PP4 EP8", source: bridge26021, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5984, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge26021, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 30411},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge26021, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26373},
	{name: "Qwen3 30B-A3B, 8 B300, MXFP8, MBS8 EP8", source: bridge26021, model: "qwen3-30b-a3b", device: "b300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 29454},
	{name: "Qwen3 30B-A3B, 8 B200, MXFP8, MBS4 EP8", source: bridge26021, model: "qwen3-30b-a3b", device: "b200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26695},
	{name: "Qwen3 30B-A3B, 16 H100, FP8, PP2 VP12 EP8", source: bridge26021, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 12, ep: 8, tokensPerGPU: 9058, overlap: true},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 EP32", source: bridge26021, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 32, tokensPerGPU: 6583},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 EP32", source: bridge26021, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 32, tokensPerGPU: 5530},
	{name: "Qwen3 235B-A22B, 256 B300, MXFP8, PP8 VP4 EP8", source: bridge26021, model: "qwen3-235b-a22b", device: "b300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 4, ep: 8, tokensPerGPU: 2644, overlap: true},
	{name: "Qwen3 235B-A22B, 256 H100, FP8, TP2 PP8 VP4 EP32", source: bridge26021, model: "qwen3-235b-a22b", device: "h100-sxm", precision: "current", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 2, pp: 8, vp: 4, ep: 32, tokensPerGPU: 1611, overlap: true},

	// NeMo 26.04.
	{name: "DeepSeekV3, 256 GB300, MXFP8, MBS2 PP2 VP8 EP32", source: bridge2604, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 4965, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge2604, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 4193, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B300, MXFP8, PP16 EP8", source: bridge2604, model: "deepseek-v3", device: "b300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 3131, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B200, MXFP8, PP16 EP8", source: bridge2604, model: "deepseek-v3", device: "b200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 16, vp: 1, ep: 8, tokensPerGPU: 2815, recompute: "mla_up_proj"},
	{name: "GPT-OSS 120B, 64 GB300, BF16, MBS4 EP64", source: bridge2604, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 19275},
	{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge2604, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 15938, overlap: true, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 B300, BF16, MBS4 EP8", source: bridge2604, model: "gpt-oss-120b", device: "b300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 15114},
	{name: "GPT-OSS 120B, 64 B200, BF16, MBS4 EP8", source: bridge2604, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 13045, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 H100, BF16, PP4 EP8", source: bridge2604, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5810, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge2604, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 31470},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge2604, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26032},
	{name: "Qwen3 30B-A3B, 8 B300, MXFP8, MBS8 EP8", source: bridge2604, model: "qwen3-30b-a3b", device: "b300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 30553},
	{name: "Qwen3 30B-A3B, 8 B200, MXFP8, MBS4 EP8", source: bridge2604, model: "qwen3-30b-a3b", device: "b200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26859},
	{name: "Qwen3 30B-A3B, 16 H100, FP8, EP16", source: bridge2604, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 8901, dispatcher: "hybridep"},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 VP12 EP32", source: bridge2604, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 12, ep: 32, tokensPerGPU: 6994},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 VP3 EP32", source: bridge2604, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 3, ep: 32, tokensPerGPU: 5672},
	{name: "Qwen3 235B-A22B, 256 B300, MXFP8, MBS2 PP8 EP8", source: bridge2604, model: "qwen3-235b-a22b", device: "b300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 4865},
	{name: "Qwen3 235B-A22B, 256 H100, FP8, TP2 PP8 VP4 EP32", source: bridge2604, model: "qwen3-235b-a22b", device: "h100-sxm", precision: "current", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 2, pp: 8, vp: 4, ep: 32, tokensPerGPU: 1686, overlap: true},

	// NeMo 26.04.01.
	{name: "DeepSeekV3, 256 GB300, MXFP8, MBS2 PP2 VP8 EP32", source: bridge26041, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 4992, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge26041, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 4256, overlap: true, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B300, MXFP8, MBS2 PP8 EP8", source: bridge26041, model: "deepseek-v3", device: "b300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 3456, recompute: "mla_up_proj"},
	{name: "DeepSeekV3, 256 B200, MXFP8, PP8 VP2 EP32", source: bridge26041, model: "deepseek-v3", device: "b200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 2, ep: 32, tokensPerGPU: 3328, overlap: true, recompute: "mla_up_proj", dispatcher: "deepep"},
	{name: "GPT-OSS 120B, 64 GB300, BF16, MBS4 EP64", source: bridge26041, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 19200},
	{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge26041, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 16640, overlap: true, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 B300, BF16, MBS4 EP8", source: bridge26041, model: "gpt-oss-120b", device: "b300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 15232},
	{name: "GPT-OSS 120B, 64 B200, BF16, MBS4 EP8", source: bridge26041, model: "gpt-oss-120b", device: "b200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 13568, recompute: "layernorm, moe_act"},
	{name: "GPT-OSS 120B, 64 H100, BF16, PP4 EP8", source: bridge26041, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5824, recompute: "layernorm, moe_act"},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge26041, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 31744},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge26041, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 26112},
	{name: "Qwen3 30B-A3B, 8 B300, MXFP8, MBS8 EP8", source: bridge26041, model: "qwen3-30b-a3b", device: "b300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 30720},
	{name: "Qwen3 30B-A3B, 8 B200, MXFP8, MBS4 EP8", source: bridge26041, model: "qwen3-30b-a3b", device: "b200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 27136},
	{name: "Qwen3 30B-A3B, 16 H100, FP8, EP16", source: bridge26041, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 8960, dispatcher: "hybridep"},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 VP12 EP32", source: bridge26041, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 12, ep: 32, tokensPerGPU: 6944},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 VP3 EP32", source: bridge26041, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 3, ep: 32, tokensPerGPU: 5680},
	{name: "Qwen3 235B-A22B, 256 B300, MXFP8, MBS2 PP8 EP8", source: bridge26041, model: "qwen3-235b-a22b", device: "b300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 5936},
	{name: "Qwen3 235B-A22B, 256 B200, MXFP8, PP8 EP8", source: bridge26041, model: "qwen3-235b-a22b", device: "b200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 3776},
	{name: "Qwen3 235B-A22B, 256 H100, FP8, TP2 PP8 VP4 EP32", source: bridge26041, model: "qwen3-235b-a22b", device: "h100-sxm", precision: "current", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 2, pp: 8, vp: 4, ep: 32, tokensPerGPU: 1712, overlap: true},

	// NeMo 26.06, on its own recipes (Megatron-Bridge v0.5.0's scripts/performance/
	// configs: deepseek, gpt_oss and qwen workload_base_configs.py). Its MXFP8 recipes
	// of DeepSeek-V3 on GB300 and GB200, GPT-OSS 120B on GB300 and GB200, Qwen3
	// 30B-A3B on GB300, GB200 and B300 and Qwen3 235B-A22B on GB300 and GB200 are new
	// in v0.5.0: cuda_graph_impl full_iteration (graphs: "full_iteration"),
	// moe_a2a_overlap (overlap), the hybridep flex dispatcher (flexBackend),
	// cutedsl_fused_grouped_mlp (cuDNN's
	// CuTe DSL grouped GEMMs with the gated activation and the MXFP8 quantizations in
	// their epilogues: fusedMLP, planned as model.architecture.expert_fused_mlp) and,
	// but on DeepSeek-V3's GB200 recipe, fp8_dot_product_attention (fp8Attention:
	// model.architecture.fp8_attention, at cuDNN's published MXFP8 attention rates where
	// they exist: head dims 128 and 192, not gpt-oss's 64). Full-iteration
	// graphs with a dropless mixture pad each rank's experts to a fixed capacity
	// (set_full_iter_cg_configs: moe_expert_rank_capacity_factor 1.5, paged stashing);
	// with the forced balance the tokens stay the mean, so the rows are planned
	// dropless and balanced, not at the padded capacity. That capacity is what makes
	// the experts "sync-free" (Megatron-LM's docs/user-guide/features/paged_stash.md:
	// HybridEP and the fused grouped experts sized from it, no per-step device query),
	// so the graph holds them: the rows are planned with capacity_factor 1.5, which
	// leaves the forced balance's tokens as they are and the experts inside the graph,
	// with no dropless host synchronization (analytic.moeHostSeconds). (Charged that
	// synchronization at an x86 host's 15 us a kernel, the rows planned the same steps;
	// at a Grace host's 2.75 times that, cluster.Perf.HostSecondsScale, Qwen3 30B-A3B on
	// GB200 turned host-bound, which a graphed step is not.) recompute_modules: none on
	// these recipes but DeepSeek-V3 GB200's mla_up_proj. The B300 rows of DeepSeek-V3
	// (DEEPSEEK_V3_PRETRAIN_CONFIG_B300_V2: MBS2 PP8, TE graphs with attn, mla_up_proj
	// recomputed, hybridep inside the node, no overlap) and GPT-OSS 120B
	// (GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V2, which FP8_MX_V2 is: EP8, TE graphs
	// with attn, hybridep, no overlap) keep the older recipes' kernels; Qwen3 30B-A3B
	// on H100 (QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1: EP16 over two nodes,
	// hybridep, no overlap, no graphs) too. The first 26.06 table gave 8,467 tokens/s/GPU
	// for that H100 row; #4384 revised it to 8,826.
	{name: "DeepSeekV3, 256 GB300, MXFP8, PP2 VP8 EP32", source: bridge2606, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 6338, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "DeepSeekV3, 256 GB300, MXFP8, PP2 VP8 EP32, GBS 15360", source: bridge2606, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 15360, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 6422, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge2606, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 4969, overlap: true, recompute: "mla_up_proj", graphs: "full_iteration", fusedMLP: true},
	{name: "DeepSeekV3, 256 B300, MXFP8, MBS2 PP8 EP8", source: bridge2606, model: "deepseek-v3", device: "b300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 2, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 3541, recompute: "mla_up_proj", graphs: "attn"},
	{name: "GPT-OSS 120B, 64 GB300, MXFP8, MBS4 EP16", source: bridge2606, model: "gpt-oss-120b", device: "gb300", precision: "mxfp8", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 33166, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "GPT-OSS 120B, 64 GB200, MXFP8, MBS4 EP64", source: bridge2606, model: "gpt-oss-120b", device: "gb200", precision: "mxfp8", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 28947, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "GPT-OSS 120B, 64 B300, MXFP8, MBS4 EP8", source: bridge2606, model: "gpt-oss-120b", device: "b300", precision: "mxfp8", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 18534, graphs: "attn"},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge2606, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 45275, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge2606, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 40706, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 30B-A3B, 8 B300, MXFP8, MBS8 EP8", source: bridge2606, model: "qwen3-30b-a3b", device: "b300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 40769, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 30B-A3B, 16 H100, FP8, EP16", source: bridge2606, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "current", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 8826, dispatcher: "hybridep", graphs: "none"},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 VP12 EP32", source: bridge2606, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 12, ep: 32, tokensPerGPU: 9015, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 VP3 EP32", source: bridge2606, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 3, ep: 32, tokensPerGPU: 7376, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	// The first 26.06 table's BF16 GPT-OSS 120B rows (bridge2606First), on v0.5.0's
	// BF16_V2 recipes: GB300 EP64 with TE graphs of attn (no overlap, no recompute),
	// GB200 EP64 with the overlap and layernorm and moe_act recomputed (no graphs), H100
	// PP4 EP8 with layernorm and moe_act recomputed (no graphs).
	{name: "GPT-OSS 120B, 64 GB300, BF16, MBS4 EP64", source: bridge2606First, model: "gpt-oss-120b", device: "gb300", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 20635, graphs: "attn"},
	{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge2606First, model: "gpt-oss-120b", device: "gb200", precision: "bf16", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 17770, overlap: true, recompute: "layernorm, moe_act", graphs: "none"},
	{name: "GPT-OSS 120B, 64 H100, BF16, PP4 EP8", source: bridge2606First, model: "gpt-oss-120b", device: "h100-sxm", precision: "bf16", gpus: 64, gbs: 1280, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 1, ep: 8, tokensPerGPU: 5860, recompute: "layernorm, moe_act", graphs: "none"},

	// NeMo 26.06.01 (Megatron-Bridge v0.5.1: its GB300 and GB200 recipes of these
	// models are v0.5.0's, unchanged). The GPT-OSS 120B rows ran 39% and 37% slower
	// than 26.06's: "Performance regression in GPT-OSS 120B pre-training is a known
	// issue" (the table's note: NVIDIA/cudnn-frontend #256, in the fused grouped GEMM).
	// They are held as any row (superseded reads only a later, faster run).
	{name: "DeepSeekV3, 256 GB300, MXFP8, PP2 VP8 EP32", source: bridge26061, model: "deepseek-v3", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 8, ep: 32, tokensPerGPU: 6304, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "DeepSeekV3, 256 GB200, MXFP8, PP4 VP4 EP64", source: bridge26061, model: "deepseek-v3", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 4, vp: 4, ep: 64, tokensPerGPU: 4928, overlap: true, recompute: "mla_up_proj", graphs: "full_iteration", fusedMLP: true},
	{name: "GPT-OSS 120B, 64 GB300, MXFP8, MBS4 EP16", source: bridge26061, model: "gpt-oss-120b", device: "gb300", precision: "mxfp8", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 20288, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "GPT-OSS 120B, 64 GB200, MXFP8, MBS4 EP64", source: bridge26061, model: "gpt-oss-120b", device: "gb200", precision: "mxfp8", gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 18304, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 30B-A3B, 8 GB300, MXFP8, MBS8 EP8", source: bridge26061, model: "qwen3-30b-a3b", device: "gb300", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 8, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 44544, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 30B-A3B, 8 GB200, MXFP8, MBS4 EP8", source: bridge26061, model: "qwen3-30b-a3b", device: "gb200", precision: "mxfp8", gpus: 8, gbs: 512, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 8, tokensPerGPU: 40960, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 235B-A22B, 256 GB300, MXFP8, MBS2 PP4 VP12 EP32", source: bridge26061, model: "qwen3-235b-a22b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 2, seq: 4096, tp: 1, pp: 4, vp: 12, ep: 32, tokensPerGPU: 9008, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},
	{name: "Qwen3 235B-A22B, 256 GB200, MXFP8, PP8 VP3 EP32", source: bridge26061, model: "qwen3-235b-a22b", device: "gb200", precision: "mxfp8", gpus: 256, gbs: 8192, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 3, ep: 32, tokensPerGPU: 7360, overlap: true, graphs: "full_iteration", fp8Attention: true, fusedMLP: true},

	// Not expressible, of the 26.06 and 26.06.01 pre-training tables: Kimi K2 (GB300,
	// MXFP8, PP4 VP4 EP64; trained with the Muon optimizer, which training.optimizer
	// cannot name: adamw, adam or sgd), Nemotron 3 Nano and Nemotron 3 Super (hybrid
	// Mamba-2 and attention mixtures: no Mamba layer in the planner) and every NVFP4
	// row (no fp4 recipe; fp8_recipe names fp8 scalings only). The SFT and LoRA tables
	// are fine-tuning, not pre-training.

	// Megatron-Bridge #1760 ("Improving Qwen3-235B-A22B B200 performance", merged
	// 2026-01-09), the 25.11 recipe of the row above without moe_a2a_overlap ("due to
	// CPU overhead") and without VP for MXFP8: "MXFP8 step time improved from 20.1s to
	// 16.9s" on its 64 B200s (1,024 x 4,096 tokens: 3,260 and 3,877 tokens/s/GPU; the
	// first is the 25.11 row's 3,269).
	{name: "Qwen3 235B-A22B, 64 B200, FP8-MX, PP8 EP8 (#1760)", source: bridgePR1760, model: "qwen3-235b-a22b", device: "b200", precision: "mxfp8", gpus: 64, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 1, ep: 8, tokensPerGPU: 1024 * 4096 / 64 / 16.9},

	// The expert-parallel overlap benchmark (bridgeOverlap), without and with the overlap.
	// The H100 EP16 rows above and B200's PP8 VP2 EP32 row of 26.04.01 (new
	// parallelisms in 26.04) take their flex dispatcher, and B200's its overlap, from
	// today's recipes of the same shape (qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config:
	// hybridep, no overlap; deepseek_v3_pretrain_256gpu_b200_fp8mx_config: deepep,
	// overlap_moe_expert_parallel_comm).
	{name: "Qwen3 30B-A3B, 16 H100, BF16, EP16", source: bridgeOverlap, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "bf16", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 1024 * 4096 / 16 / 24.7138, dispatcher: "hybridep"},
	{name: "Qwen3 30B-A3B, 16 H100, BF16, EP16, EP overlap", source: bridgeOverlap, model: "qwen3-30b-a3b", device: "h100-sxm", precision: "bf16", gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 16, tokensPerGPU: 1024 * 4096 / 16 / 20.9920, overlap: true, dispatcher: "hybridep"},
}

// bridgeMoEModels are the runs' models: bundled configs, and DeepSeek-V3 without its
// multi-token prediction module (num_nextn_predict_layers 0) for the "w/o MTP" rows.
func bridgeMoEModel(t *testing.T, key string) wire.Architecture {
	if key == "llama3.1-405b" {
		return wire.Architecture{Config: []byte(llama31405b)}
	}
	if key != "deepseek-v3-nomtp" {
		return wire.Architecture{Name: key}
	}
	raw, ok := arch.BundledConfig("deepseek-v3")
	if !ok {
		t.Fatal("deepseek-v3 is not bundled")
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["num_nextn_predict_layers"] = 0
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return wire.Architecture{Config: out}
}

// request is the run as a planning request: Megatron-style (the cuda-graphs framework, or
// megatron, Megatron-Core launched without CUDA graphs, where the recipe does not
// capture the attention: attentionGraphed), 16-bit
// gradient buffers: the perf scripts set cfg.ddp.grad_reduce_in_fp32 = False, e.g.
// set_deepseek_v3_common_configs in configs/deepseek/deepseek_llm_pretrain.py; the
// distributed optimizer with its overlaps, sequence parallelism
// with tensor parallelism, fp8 primary weights with an fp8 recipe), NVL72 domains of 72
// GB200s or GB300s and nodes of 8 otherwise, expert tensor parallelism 1 (every recipe's
// base config sets expert_tensor_parallel_size=1), the expert all-to-alls overlapped
// where the recipe sets moe_a2a_overlap, the recipe's token dispatcher (flexBackend:
// alltoall, or the flex dispatcher's hybridep or deepep backend), the recipe's
// recompute_modules where it sets them (selective recomputation), none otherwise.
//
// The recipes are Megatron-Bridge's scripts/performance/configs (deepseek, gpt_oss and
// qwen workload_base_configs.py): where today's recipe names another parallelism than
// the table's row (the recipes moved on), its overlap and recompute_modules are taken
// from the recipe of the same system and precision all the same.
//
// GPT-OSS 120B's rows take the recipe of their own release, where it is known:
// scripts/performance/configs/gpt_oss of Megatron-Bridge v0.2.0 (NeMo 25.11) and v0.3.0
// (26.02) set no moe_a2a_overlap on GB200; it came with "perf optimizations- GPT-OSS
// 120B" (Megatron-Bridge #2906, 2026-03-23, with the B300 and B200 EP8 that 26.02.01's
// table already ran), so 26.02.01 on overlap. Every version's H100 config sets
// recompute_modules layernorm and moe_act (GPT_OSS_120B_..._H100_BF16_V1, V2 inherits).
func (c bridgeMoERun) request(t *testing.T) *wire.Request {
	a := bridgeMoEModel(t, c.model)
	a.Seq, a.Framework, a.Attention = c.seq, cluster.CUDAGraphs, teAttention(c.device)
	a.FP8Attention, a.ExpertFusedMLP = c.fp8Attention, c.fusedMLP
	if !c.attentionGraphed() {
		a.Framework = cluster.Megatron
	}
	if c.graphs == "full_iteration" {
		// Full-iteration graphs pad each rank's experts to a fixed capacity
		// (set_full_iter_cg_configs: moe_expert_rank_capacity_factor 1.5): no host
		// synchronization, the experts inside the graph (the NeMo 26.06 paragraph).
		a.CapacityFactor = 1.5
	}
	perNode := 8
	if strings.HasPrefix(c.device, "gb") {
		perNode = 72
	}
	dp := c.gpus / (c.tp * c.pp * max(1, c.cp))
	sched := "1f1b"
	if c.vp > 1 {
		sched = fmt.Sprintf("interleaved:%d", c.vp)
	}
	paramGather := OverlapOn
	if c.noParamGatherOverlap {
		paramGather = OverlapOff
	}
	tpOverlap, ub := "", c.ubConfig()
	if ub != "" {
		tpOverlap = OverlapOn
	}
	tr := wire.Training{Precision: "mixed"}
	if c.recompute != "" {
		tr.Recompute, tr.RecomputeModules = "selective", strings.Split(c.recompute, ", ")
	}
	if c.precision != "bf16" {
		tr.FP8Recipe, tr.FP8ParamGather = c.precision, true
	}
	tr.MoEAuxLoss = c.auxLoss()
	// Megatron-Bridge's performance scripts force the routing's balance for every
	// mixture-of-experts recipe held here (the dense context-parallel rows have no
	// router): set_qwen3_common_configs, the DeepSeek-V3 and gpt-oss-120b
	// common configs (scripts/performance/configs/qwen3 or qwen, deepseek, gpt_oss,
	// "cfg.model.moe_router_force_load_balancing = True", v0.2.2 to v0.5.1; its
	// overrides set it again for dropless runs, utils/helpers.py v0.2.2 and
	// utils/overrides.py from v0.3.0).
	tr.MoEForceLoadBalancing = c.auxLoss() != "" || strings.HasPrefix(c.model, "gpt-oss-")
	return &wire.Request{
		Model:   wire.ModelSpec{Architecture: &a},
		Cluster: wire.ClusterSpec{Device: c.device, DevicesPerNode: perNode},
		Parallelism: wire.Parallelism{Pipeline: c.pp, Data: dp, Tensor: c.tp, Context: c.cp, Expert: c.ep, ExpertTensor: 1, ExpertOverlap: c.overlap, ExpertDispatcher: c.flexBackend(),
			ZeRO: 1, SequenceParallel: c.tp > 1,
			OverlapGradReduce: OverlapOn, OverlapParamGather: paramGather, OverlapTensorComm: tpOverlap, TPCommOverlapConfig: ub},
		Training:   tr,
		Schedule:   wire.Schedule{Name: sched, Microbatches: c.gbs / dp / c.mbs, MicrobatchSize: c.mbs},
		Boundaries: c.layout(),
	}
}

// auxLoss is the load-balancing loss (training.moe_aux_loss) Megatron-Bridge's model
// bridge sets for the run's model, the same from v0.2.2 to v0.5.1 (NeMo 25.11 to
// 26.06.01): Qwen3 MoE "aux_loss" with coefficient 1e-3 (src/megatron/bridge/models/
// qwen/qwen_provider.py, Qwen3MoEModelProvider; qwen3_moe_bridge.py from v0.3.1),
// DeepSeek-V3 "seq_aux_loss" with 1e-4 (deepseek/deepseek_provider.py;
// deepseek_v3_bridge.py from v0.3.1), gpt-oss "none" (gpt_oss/gpt_oss_provider.py,
// gpt_oss_bridge.py). The performance scripts set moe_router_fusion for all three
// (scripts/performance/configs/qwen3 or qwen, deepseek, gpt_oss), the fused path
// analytic prices; none changes the loss type. Dense models: none.
func (c bridgeMoERun) auxLoss() string {
	switch {
	case strings.HasPrefix(c.model, "qwen3-"):
		return string(analytic.AuxLossMicrobatch)
	case strings.HasPrefix(c.model, "deepseek-v3"):
		return string(analytic.AuxLossSequence)
	}
	return ""
}

// ubConfig is the userbuffers config (parallelism.tp_comm_overlap_config) the run's
// recipe passed with tp_comm_overlap, for the context-parallel Llama 3.1 405B rows
// (bridgeContextRuns); "" for the others (no TP overlap priced). Megatron-Bridge's
// llama31_405b_pretrain_config (src/megatron/bridge/recipes/llama/llama3.py) sets
// CommOverlapConfig(tp_comm_overlap=True) at v0.2.2, v0.3.0 and v0.5.0, and each
// perf recipe names its config by GPU and precision (bf16, else the fp8 one; off only
// for nvfp4):
//   - NeMo 25.11 (v0.2.2, scripts/performance/configs/llama31/llama31_llm_pretrain.py):
//     H100 FP8-CS TP8 CP2 llama31_405b_h100_config,
//     userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192; B200 FP8-CS and FP8-MX TP4
//     CP2 llama31_405b_b200_config and GB300 FP8-CS TP2 CP2 llama31_405b_gb300_config,
//     userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192;
//   - NeMo 26.02 (v0.3.0) and 26.06 (v0.5.0), scripts/performance/configs/llama/
//     llama31_llm_pretrain.py: H100 FP8 (LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2)
//     llama31_405b_pretrain_config_h100, userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192;
//     GB300 MXFP8 TP2 (_GB300_FP8_MX_V2) llama31_405b_pretrain_config_gb300,
//     userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192.
//
// The GB300 rows run that tp4 config at TP 2, as the recipe did: initialize_ub gets
// the config's per-GEMM settings with the run's tp_size and shape
// (analytic.checkUserbuffersConfig).
func (c bridgeMoERun) ubConfig() string {
	if c.model != "llama3.1-405b" || c.tp < 2 || c.precision == "bf16" {
		return ""
	}
	switch c.device {
	case "h100-sxm":
		return "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192"
	case "b200", "gb300":
		return "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192"
	}
	return ""
}

// flexBackend is the run's token dispatcher as its release's recipe names it (the row's
// own dispatcher where set): "hybridep" (Megatron-Core's flex dispatcher with
// HybridEP: rows grouped by expert, no regrouping of the received chunks, 16-bit
// dispatch), "deepep", or "" for the alltoall dispatcher. Megatron-Bridge's
// scripts/performance/configs, moe_flex_dispatcher_backend in the deepseek and qwen
// workload_base_configs.py of each release (v0.2.2 for NeMo 25.11, v0.3.0 26.02, v0.3.1
// 26.02.01, v0.4.1 26.04, v0.4.2 26.04.01, v0.5.0 and v0.5.1 26.06 and 26.06.01):
// DeepSeek-V3 on GB300 and GB200 from 25.11 on, on every system from 26.02 on
// (DEEPSEEK_V3_PRETRAIN_CONFIG_*_V1); Qwen3 30B-A3B on GB300, GB200 and B300 from
// 25.11 on, on B200 from 26.02.01 on (QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_BF16_V1, the
// MBS4 rows) and on H100 at EP16 (QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1, 26.04
// on, and the overlap benchmark); Qwen3 235B-A22B on GB300 and GB200 from 25.11 on,
// on B300 from 26.04.01 on ("Use HybridEP flex dispatcher for Qwen3 235B B300 perf
// configs", #3490: qwen3_235b_a22b_pretrain_config_b300 set moe_token_dispatcher_type
// "alltoall" before it). Qwen3 30B-A3B's H100 PP2 VP12 rows: deepep in 26.02 (v0.3.0's
// QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1, moe_flex_dispatcher_backend "deepep")
// and 26.02.01 (v0.3.1's H100 recipe moved to EP16 with HybridEP; its
// BASE_QWEN3_30B_A3B_CONFIG, which a PP2 VP12 EP8 run inherits, names deepep), none in
// 25.11 (v0.2.2's QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG: alltoall). Megatron-Core's
// DeepEP moves 16-bit rows (analytic.DispatchDeepEP). GPT-OSS 120B: HybridEP on the
// V2 recipes of GB200, B300 and B200 from "perf optimizations- GPT-OSS 120B" (#2906,
// the EP8 and all-to-all overlap recipes the 26.02.01 table ran; v0.4.0 and v0.4.1,
// NeMo 26.04), GB200 back to alltoall with #3561 and B200 with #3614 (both in v0.4.2,
// NeMo 26.04.01 on), B300 HybridEP through v0.5.1; the 26.06 MXFP8 recipes of GB300 and
// GB200 (GPT_OSS_120B_PRETRAIN_CONFIG_GB300_FP8_MX_V2, _GB200_FP8_MX_V2) HybridEP, their
// B300 one the BF16 V2 recipe's. The first 26.06 table's BF16 rows take alltoall.
func (c bridgeMoERun) flexBackend() string {
	if c.dispatcher != "" {
		return c.dispatcher
	}
	rel, d := bridgeReleases[c.source], c.device
	gb := d == "gb300" || d == "gb200"
	hybrid := false
	switch c.model {
	case "gpt-oss-120b":
		switch {
		case c.source == bridge2606First || rel < bridgeReleases[bridge26021]:
		case c.precision == "mxfp8" || d == "b300":
			hybrid = d != "h100-sxm"
		case d == "gb200" || d == "b200":
			hybrid = rel <= bridgeReleases[bridge2604]
		}
	case "deepseek-v3", "deepseek-v3-nomtp":
		hybrid = gb || rel >= bridgeReleases[bridge2602]
	case "qwen3-30b-a3b":
		hybrid = gb || d == "b300" || (d == "b200" && rel >= bridgeReleases[bridge26021])
	case "qwen3-235b-a22b":
		hybrid = gb || (d == "b300" && rel >= bridgeReleases[bridge26041])
	}
	if hybrid {
		return "hybridep"
	}
	if c.model == "qwen3-30b-a3b" && d == "h100-sxm" && c.vp == 12 && (c.source == bridge2602 || c.source == bridge26021) {
		return "deepep"
	}
	return ""
}

// layout is the recipe's split into pipeline stages (model chunks, with interleaving),
// where the recipe fixes one; nil lets the planner choose. Megatron-Bridge's
// qwen3_235b_a22b_pretrain_config sets account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split (src/megatron/bridge/recipes/qwen/qwen3_moe.py,
// v0.2.0 to v0.4.2), so Megatron-Core splits the 94 blocks with the embedding and the
// loss counted as one layer each: (94+2)/(PP*VP) per chunk, the first chunk the
// embedding and one block fewer, the last one block fewer and the final norm, the head
// and the loss (megatron/core/transformer/transformer_block.py, get_num_layers_to_build).
// The planned layers are the embedding, the 94 blocks, the final norm and the head.
//
// GPT-OSS 120B's recipes set neither flag (gpt_oss_120b_pretrain_config's
// account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split are
// False, src/megatron/bridge/recipes/gpt_oss/gpt_oss.py, v0.2.0 to v0.5.0), so
// Megatron-Core gives every chunk 36/(PP*VP) blocks: the first chunk the embedding
// too, the last the final norm, the 201,088-token head and the loss beside its
// blocks (megatronEvenLayout).
func (c bridgeMoERun) layout() []int {
	chunks := c.pp * max(1, c.vp)
	if c.model == "gpt-oss-120b" && chunks > 1 {
		return megatronEvenLayout(36, chunks)
	}
	if strings.HasPrefix(c.model, "deepseek-v3") {
		return c.deepseekLayout()
	}
	if c.model != "qwen3-235b-a22b" || chunks == 1 {
		return nil
	}
	const slots = 94 + 2
	b := make([]int, 0, chunks+1)
	for i := 0; i < chunks; i++ {
		b = append(b, i*slots/chunks)
	}
	return append(b, slots+1)
}

// megatronEvenLayout is Megatron-Core's split of blocks transformer blocks into chunks
// without account_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split
// (get_num_layers_to_build: blocks/chunks each), as boundaries over the planned layers
// (the embedding, the blocks, the final norm and the head): chunk 0 starts at the
// embedding, chunk i > 0 at block i*blocks/chunks, and the last ends after the head.
func megatronEvenLayout(blocks, chunks int) []int {
	b := make([]int, 0, chunks+1)
	b = append(b, 0)
	for i := 1; i < chunks; i++ {
		b = append(b, 1+i*blocks/chunks)
	}
	return append(b, blocks+3)
}

// deepseekLayout is DeepSeek-V3's recipe layout: Megatron-Bridge's
// set_deepseek_v3_pipeline_model_parallel_layout (src/megatron/bridge/recipes/deepseek/
// deepseek_v3.py, the same map from v0.2.2 to v0.5.1) for (PP, VP) of (4, 1): the
// embedding and 16 blocks, 16, 16, 13 and the multi-token prediction module and the
// loss; (8, 1) and (4, 2): the embedding and 8, 8 six times, 5 and the rest; (16, 1),
// (8, 2) and (4, 4): the embedding and 4, 4 fourteen times, 1 and the rest; and the
// GB300 recipe's pp_layout "Et*4|(t*4|)*14tmL" (DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_V1,
// PP2 VP8, from v0.3.0), the same 16 chunks. Other shapes (25.11's PP2 VP4 and PP8 VP4)
// are left to the planner. The planned layers are the embedding, the 61 blocks, the
// multi-token prediction layer where the model has it, the final norm and the head.
func (c bridgeMoERun) deepseekLayout() []int {
	var blocks []int
	switch c.pp * max(1, c.vp) {
	case 4:
		if c.vp <= 1 {
			blocks = []int{16, 16, 16, 13}
		}
	case 8:
		if c.vp <= 2 {
			blocks = []int{8, 8, 8, 8, 8, 8, 8, 5}
		}
	case 16:
		if c.pp == 16 || c.pp == 8 || c.pp == 4 || (c.pp == 2 && bridgeReleases[c.source] >= bridgeReleases[bridge2602]) {
			blocks = append(blocks, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1)
		}
	}
	if blocks == nil {
		return nil
	}
	layers := 1 + 61 + 2 // the embedding, the blocks, the final norm and the head
	if c.model == "deepseek-v3" {
		layers++ // the multi-token prediction layer
	}
	b := []int{0}
	at := 1 // the embedding
	for _, n := range blocks[:len(blocks)-1] {
		at += n
		b = append(b, at)
	}
	return append(b, layers)
}

// attentionGraphed reports whether the run's recipe captures its attention in Transformer
// Engine's CUDA graphs (cuda_graph_impl "transformer_engine" with "attn" in
// cuda_graph_scope, or a full-iteration graph), from Megatron-Bridge v0.3.0's
// scripts/performance/configs (deepseek, gpt_oss and qwen workload_base_configs.py, the
// 26.02 container's recipes, taken for every container): DeepSeek-V3 on GB200 and in
// BF16 on GB300; gpt-oss on GB300 and B300; Qwen3 235B-A22B on GB200, and on GB300 but
// in BF16 (QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_FP8_CS_V2, the 256-GPU runs from
// 26.02 on, adds "attn"; 25.11's BF16 run took v0.2.x's GB300 recipe, without it);
// Qwen3 30B-A3B on GB200 but in FP8-MX, and on B200 from 26.02.01 on (v0.3.1's
// QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_BF16_V1, which FP8_MX_V1 became: microbatch 4,
// HybridEP, "attn" added; the MBS4 rows). The others capture at most the router and its
// preprocessing (moe_router, moe_preprocess), or nothing. A row's graphs, where set (its
// own release's recipe), decides instead.
func (c bridgeMoERun) attentionGraphed() bool {
	switch c.graphs {
	case "full_iteration", "attn":
		return true
	case "router", "none":
		return false
	}
	switch m, d, p := c.model, c.device, c.precision; {
	case strings.HasPrefix(m, "deepseek-v3"):
		return d == "gb200" || (d == "gb300" && p == "bf16")
	case m == "gpt-oss-120b":
		return d == "gb300" || d == "b300"
	case m == "qwen3-235b-a22b":
		return d == "gb200" || (d == "gb300" && p != "bf16")
	case m == "qwen3-30b-a3b":
		return (d == "gb200" && p != "mxfp8") || (d == "b200" && bridgeReleases[c.source] >= bridgeReleases[bridge26021] && c.source != bridgeOverlap)
	}
	return true
}

// TestBridgeMoEPublishedRuns plans each mixture-of-experts run of Megatron-Bridge's
// performance summary as it ran and compares tokens per second per GPU. Every run must
// plan as feasible (each ran: a run refused as out of memory is a failure); every
// error is logged, per source, per model and per device, with the median and signed
// median (error = predicted / published - 1: negative is pessimistic).
func TestBridgeMoEPublishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 256 devices")
	}
	signed, abs := planBridgeRuns(t, "Megatron-Bridge MoE runs", bridgeMoERuns)
	// Issue 19's targets are 10% and within 5%. The ceiling held what the host
	// synchronization and chunk sorting of dropless mixtures (analytic.moeHostSeconds),
	// Megatron-Core's memory-efficient permutation, cuDNN's published attention rates
	// on Blackwell, the SMs the overlapped all-to-alls hold, cuDNN's head-dim-64 rates
	// for gpt-oss, matrix products priced by shape and the runs' own recompute_modules
	// brought over NeMo 25.11's and 26.02's 36 runs (52.1% down to 25.7%, all
	// optimistic). Over these and the 55 runs of 26.02.01 to 26.04.01 (20.4%, signed
	// +17.0%) the measured share of the all-to-alls that the expert-parallel overlap
	// hides (analytic.expertOverlapHidden: 11.2%, +10.2%), the flex dispatcher over
	// expert groups that span nodes (10.4%, +10.4%), and fp8 quantization priced as
	// kernels of its own beside Hopper's measured fp8 product rate (7.8%, +5.0%) bring
	// it here. gpt-oss's 24 runs (+62% median) came to +37% with what Megatron-Core runs
	// eagerly for it (the experts' activation clamp and second bias, the YaRN-scaled
	// rotary embedding): 34 runs beyond 25% to 27. Host time where the recipe does not
	// capture the attention in CUDA graphs, at eager PyTorch's measured cost per kernel
	// (the megatron framework mode: the microbatch-1 runs on x86 B200s), brings it to
	// 7.8%, +5.7%, 27 beyond 25%; gpt-oss's runs are most of what is left. Qwen3
	// 235B-A22B's recipe layout (bridgeMoERun.layout) and the expert overlap of the
	// interleaved B300 and H100 recipes make it 8.3%, +5.5% (the GB300 and B300 MBS2
	// runs, -6 to -7%, come to -8 to -10%: their own pessimism, which the planner's
	// better-balanced split had hidden).
	//
	// Still beyond 25% on x86 HGX B200 and B300 nodes (not gpt-oss): Qwen3 30B-A3B at
	// microbatch 1 (+35%, +30%), Qwen3 235B-A22B at microbatch 1 (B200 PP8 +26%, +27%;
	// 64 B200 PP8 VP2 +47%; B300 PP8 VP4 with the expert overlap +90%, +93%) and
	// DeepSeek-V3 of NeMo 25.11 (+36%; the same recipe at twice the batch ran 26%
	// faster in 26.02). The device side is not what is missing: NeMo 25.09 ran the same
	// Qwen3 30B-A3B shape on 8 B200s token-dropping, with whole-layer CUDA graphs, at
	// 18,066 tokens/s/GPU (4.6 ms a layer, forward and backward; planned 4.5 ms), and
	// dropless without the attention graphed at 9,299 (9.0 ms a layer, planned 6.6 ms,
	// host-bound at 414 kernels x 15 us): it is the host's time per launch under
	// Megatron-Core and Transformer Engine with MXFP8 (about 22 us a kernel would
	// explain it, but no measurement apart from these runs gives that figure, so it is
	// not used). A slower x86 host is not the explanation: Vellaisamy et al. 2025
	// ("Characterizing and Optimizing LLM Inference Workloads on CPU-GPU Coupled
	// Architectures", arXiv 2504.11750) find Grace (GH200) the slower launcher, CPU-bound
	// up to 4x larger batches than PCIe A100 and H100 (x86) systems.
	//
	// gpt-oss: its rows on their own releases' recipes (no all-to-all overlap on GB200
	// before Megatron-Bridge #2906, layernorm and moe_act recomputed on H100) and the
	// experts' data-parallel ring on its own members' NICs (expertShardLink) took it
	// from +36.9% to +34.0%; its sliding layers, priced under cuDNN as whole-sequence
	// attention until cuDNN's sliding-window rates (analytic.attentionEfficiencyIn)
	// took their place, had hidden part of its gap: +38.0%, and 8.2%, +5.5%, 28 beyond
	// 25% over all runs. What is left is in no source found: NeMo 26.06 ran the same
	// model at 1.7 times 26.04.01's throughput (MXFP8, full-iteration CUDA graphs,
	// cuDNN's fused grouped GEMM with the gated activation), so the older stacks' eager
	// expert path costs more than its kernels priced here.
	//
	// Not the attention sinks: the learnable softmax offset disables FlashAttention in
	// Transformer Engine (get_attention_backend, from v2.8), but FusedAttention (cuDNN)
	// takes it from cuDNN 9.13.1 (fused_attn.cpp), and every container has both: TE
	// 2.9 / cuDNN 9.13.1.26 (25.11), 2.12 / 9.18.0 (26.02), 2.14 / 9.20.0 (26.04), 2.16 /
	// 9.21.1 (26.06; Megatron-Bridge docs/releases/software-versions.md). The unfused
	// fallback would keep a 4,096 x 4,096 softmax output per head and layer (8.6 GB a
	// layer at microbatch 4): no BF16 gpt-oss run fits with it, so none ran it
	// (TestBridgeGptOssFusedAttention). Nor any fused kernel's rate: attention is 10% of
	// the planned GB200 microbatch and 7% of the H100 stage's, so closing +43% or +33%
	// would take it 5-6 times slower. With the sinks TE runs cuDNN, not FlashAttention-2
	// (teAttention's Hopper default), on H100 too: analytic.DefaultAttention now says so
	// for a model with sinks under the Megatron-style modes, and the H100 rows move +2.5
	// to +2.6 points (+17.9..21.6% to +20.4..24.2%; nothing else moves, the medians stay).
	//
	// The H100 rows' pipeline split was the planner's, not the recipe's: with neither
	// account_for flag set, Megatron-Core gives each of the four stages 9 blocks, the
	// last the 201,088-token head and loss beside them, where the planner balanced that
	// stage with 8 (layout, megatronEvenLayout). On the recipe's split the five H100 rows
	// of 26.02 on go from +29.5%..+33.6% to +17.9%..+21.6% (bubble 0.08 to 0.16). And
	// 25.11's B200 and H100 rows take their recipe where the table's columns contradict
	// it (the rows' note): B200 +118% to +19.1% (EP64, as 26.02's EP64 row, +21.8%), H100
	// +5.4% (MBS 4 on a split Megatron-Core would not use, which the planner's memory
	// refuses on Megatron-Core's) to +19.2%. Nothing else moves: gpt-oss 33.5% to 25.3%
	// median; over all runs 10.6%, +4.2%, 36 beyond 25% to 11.3%, +4.2%, 30 (through
	// 26.04.01 8.2%, +5.2%, 28 to 8.3%, +5.3%, 23). What is left of gpt-oss's BF16 gap,
	// +17% to +50% on every device, is not in its attention nor in its pipeline split.
	//
	// NeMo 26.06 and 26.06.01 (24 rows here) moved the ceiling: their MXFP8 recipes
	// (full-iteration CUDA graphs, the expert overlap, cuDNN's fused grouped GEMM with
	// the gated activation, fp8 attention) ran Qwen3 30B-A3B 33-49% and Qwen3 235B-A22B
	// 29-30% faster than 26.04.01's recipes of the same parallelism, so superseded now
	// sets 18 older rows aside (the premise "the same recipe" does not hold for them:
	// superseded compares parallel degrees, not graphs or kernels), and the planner is
	// pessimistic on the new ones: Qwen3 30B-A3B -27% to -30%, Qwen3 235B-A22B -18% to
	// -26%, DeepSeek-V3 GB300 -29% to -30%, GPT-OSS 120B GB300 -18%, GB200 -6%: these
	// kernels' fusions are not priced (each product, activation, quantization and
	// permutation is a kernel of its own here). GPT-OSS 120B is no longer +38% under
	// them, while the same container's BF16 runs on the older recipes (the first 26.06
	// table) still err +16% (GB300, attention graphed) to +34% (GB200, H100), and its
	// B300 MXFP8 run on the older kernels +28%: the gap is the older expert path, not
	// the model. 26.06.01's GPT-OSS rows, slowed by cudnn-frontend #256 in that fused
	// kernel, err +35% and +50%. Over all runs 21.9%, +6.2%, 44 beyond 25% (was 8.2%,
	// +5.5%, 28); the runs through 26.04.01 (the subtest) are held to the ceiling they
	// were.
	//
	// The 26.06 recipes' fp8 attention (cuDNN's published MXFP8 rates) and fused grouped
	// MLP (the experts' activation and quantization kernels folded into the products'
	// epilogues), planned on the 18 rows whose recipes set them, move those rows by +2
	// to +13 points: Qwen3 30B-A3B -27% to -30% to -23% to -26% (the fused MLP; MXFP8
	// attention's causal backward at 4k is no faster than 16 bits), Qwen3 235B-A22B
	// -18% to -26% to -15% to -23%, DeepSeek-V3 GB300 -29% to -30% to -24% to -25% (both
	// options about equally) and GB200 -13% to -11%, GPT-OSS 120B GB300 -18% to -5% and
	// GB200 -6% to +7%; 26.06.01's GPT-OSS rows (cudnn-frontend #256's regression in that
	// very kernel) go from +35% and +50% to +55% and +69%. The older 26.02 DeepSeek-V3
	// GB200 row is held again (26.06's recipe of its parallelism is no longer the same
	// request). Over all runs 13.1%, +4.1%, 44 beyond 25% came to 10.6%, +4.3%, 36.
	//
	// What the 26.06 recipes changed that the planner still charged: (1) the token
	// dispatcher. Most of these recipes run Megatron-Core's flex dispatcher with
	// HybridEP (flexBackend reads which, release by release), which hands the experts
	// their rows grouped by expert, so the alltoall dispatcher's regrouping of the
	// received chunks (sort_chunks_by_idxs, 4e bytes a routed row each pass) is not run;
	// these rows had been planned as alltoall inside a node or an NVL72 domain, where
	// the two move the same bytes (analytic.DispatchHybridEP: DeepEP's routing, 16-bit
	// both ways, as Megatron-Core's HybridEP path refuses fp8 dispatch). (2) The fused
	// grouped MLP's first product is gate and up as one grouped linear (Transformer
	// Engine's validate_grouped_mlp_dims), so the experts' input is quantized once,
	// not twice (analytic.fusedExpertMLP). The 26.06 rows come up by 5 to 9 points:
	// Qwen3 30B-A3B -23% to -26% to -14% to -18%, Qwen3 235B-A22B -15% and -23% to -8%
	// and -16%, DeepSeek-V3 GB300 -24% and -25% to -19% and -20%, GB200 -11% to -6%.
	// Not found: anything else full-iteration graphs remove on the device at these
	// microbatches (the dropless host synchronization costs them nothing, above).
	// The same dispatcher rule moves the older HybridEP rows by +5 to +8 points (Qwen3
	// 30B-A3B on GB300 and B300 to about 0%, on GB200 to +11% and +12%; DeepSeek-V3 on
	// GB200 to +6% to +14%), and the H100 EP16 rows by -5 (16-bit dispatch where they
	// had been planned as DeepEP's fp8): their recipes always ran it, and the regrouping
	// charged to them had hidden as much optimism elsewhere. NeMo 25.11's 64-B200 Qwen3
	// 235B-A22B row is planned on its recipe (v0.2.2's QWEN3_235B_A22B_B200_FP8_CS_BASE_
	// CONFIG: VP4 and moe_a2a_overlap, where the table printed VP2), +47% to +53%; the
	// same recipe without the overlap ("due to CPU overhead") and without VP ran 16.9 s
	// a step instead of 20.1 s (Megatron-Bridge #1760), planned +21%: the planner prices
	// the overlap and VP as making that run faster, not slower. The B300 rows of 26.02
	// and 26.02.01 (PP8 VP4 with moe_a2a_overlap, alltoall, no graphs: +89% and +93%)
	// are the same case ("moe_a2a_overlap and VP degraded perf" on B300,
	// Megatron-Bridge #3399): the host cost of Megatron-Core's combined 1F1B without
	// CUDA graphs is not priced, and no source gives it. DeepSeek-V3's rows take their
	// recipe's pipeline layout where it fixes one (deepseekLayout: the last chunk one
	// block, the multi-token prediction module and the loss), 0 to -2 points. Over all
	// runs 11.3%, +4.2%, 30 beyond 25% came to 12.1%, +8.0%, 25; through 26.04.01 8.3%,
	// +5.3%, 23 to 10.6%, +10.6%, 21.
	//
	// The GPT-OSS 120B EP8 rows (B300 +40% to +42%, B200 +39% to +47%) hold 16 experts
	// a device, so their expert-data-parallel reduce-scatter and all-gather are 513 ms a
	// step on B300 (10 ms at GB300's EP64), all of it planned beside the last backward
	// and the first forward but NCCL's SM share. Megatron-Core's source (core_v0.15.0 to
	// core_v0.18.0, NeMo 25.11 to 26.06) hides them so: gradients are reduced only in the
	// last microbatch's backward (no_sync before it), bucket by bucket as each is ready,
	// dense and expert buffers each on its own process group's stream; the all-gather
	// runs one bucket ahead of the next step's first forward. What it cannot hide is one
	// bucket each way, the first layers' (cluster.Framework.MegatronBuckets): here the
	// embedding's 579M elements over the dense group and 64M expert elements, 4 ms; the
	// rows move by 0.2 points. Hiding is not what these rows miss: their EP64 siblings,
	// with nothing to hide, err +23% (GB300) to +51% (GB200) too.
	//
	// Megatron-Core's DeepEP backend moves 16-bit rows (analytic.DispatchDeepEP:
	// fused_a2a.py hands DeepEP the hidden states, never an fp8 pair), where deepep had
	// been priced with fp8 dispatch: 26.04.01's B200 DeepSeek-V3 PP8 VP2 EP32 row goes
	// from -8.1% to -16.7%, and Qwen3 30B-A3B's H100 PP2 VP12 rows of 26.02 and 26.02.01,
	// planned on their recipe's deepep instead of alltoall, +0.7 to +1.3 points. Over all
	// runs 12.2%, +8.0%, 25; through 26.04.01 11.5%, +10.6%, 21 (the B200 row crossed
	// the median).
	//
	// Megatron-Core's gated MLPs run gate and up as one linear, linear_fc1 (MLP and
	// TEGroupedMLP double the first product's width), so with fp8 the input is quantized
	// once and fc1's output gradient in one kernel (analytic.oneFC1), where the planner
	// had priced two products each quantizing (the dense MLP, the routed and the shared
	// experts). Every fp8 MoE row gains 0 to 10 points: most where the step is host-bound
	// or quantization-heavy (Qwen3 30B-A3B on 8 B200s at microbatch 1, +35.0% to +45.2%
	// and +29.5% to +39.3%; the H100 rows +4 to +11), least on the NVL72 MXFP8 rows (+1 to
	// +3). This is optimism the double quantization had hidden, not a new error: over all
	// runs 12.2%, +8.0%, 25 beyond 25% to 14.7%, +11.6%, 29; through 26.04.01 11.5%,
	// +10.6%, 21 to 13.7%, +13.4%, 24. NeMo 25.11's DeepSeek-V3 GB300 and GB200 rows on
	// their own release's recipe (Megatron-Bridge v0.2.2, not v0.3.0: no all-to-all
	// overlap, moe_act recomputed and attn graphed on GB300, the router alone graphed on
	// GB200, no param-gather overlap with fp8_mx): GB300 FP8-MX +12.5% to +4.9%, BF16
	// +5.9% to +5.3%, GB200 FP8-MX +14.1% to +7.9%; all runs 14.7%, +9.7%, through
	// 26.04.01 13.4%, +13.0%.
	//
	// The combine side's unpermute, Megatron-style: the probabilities are in the
	// activation and the permutation fused, so one Transformer Engine kernel for all the
	// local experts reads each row once and writes each token once (analytic's
	// shape.unpermute: e*(1 + 1/k) bytes a row with alltoall, e*(1 + D/k) with the flex
	// dispatcher), where the planner had charged a multiply and a scatter-add per expert
	// (3e bytes a row, 4.5e backward, two kernels an expert). Every MoE row gains 1 to 33
	// points (median +3): most the host-bound ones, whose launches it had overcounted
	// (Qwen3 30B-A3B on 8 B200s at microbatch 1 +39% to +63% and +45% to +70%, H100 PP2
	// VP12 +12% to +31%). Over all runs 14.7%, +9.7%, 29 beyond 25% to 16.0%, +13.1%,
	// 36; through 26.04.01 13.4%, +13.0%, 24 to 17.5%, +17.5%, 31. The permute before
	// the experts and their activation are still priced as a kernel per local expert,
	// where Megatron-Core launches one for all (left alone: it would move the host-bound
	// rows further the same way). The four together, measured on main at a6c5f9b (the
	// steps above before its expert-overlap SMs): over all runs 12.0%, +8.0%, 24 beyond
	// 25% to 16.0%, +13.1%, 39; through 26.04.01 10.5%, +10.5%, 21 to 17.5%, +17.5%, 33.
	//
	// Launches and messages Megatron-Core makes, priced as it makes them (analytic's
	// wholeTensor, rowIDMap, alltoallMetadataSeconds, routingMapGatherSeconds,
	// hybridEPPreprocessing, recipeFigures.quantKernels): the permute and the experts'
	// activation once for all the local experts, not once an expert (the host-bound
	// rows gain most: Qwen3 30B-A3B on 8 B200s at microbatch 1 +63% to +93% and +70%
	// to +101%); the fused permute's three row-map passes and each chunk sort's map
	// kernel (all-to-all dispatcher); its probabilities' all-to-all in each pass and
	// its gather of the tokens per expert; HybridEP's all-gather of the routing map
	// and its preprocessing kernel (forward); current scaling's four launches a
	// quantization, each expert's on its own (the H100 FP8-CS rows lose most: Qwen3
	// 30B-A3B EP16 +33% to +23%, PP2 VP12 +31% to -1%; gpt-oss BF16, 16 local experts
	// and the clamp's three kernels each, +42% to +47% on 8 B200s). Measured on main at
	// 400f4a8: over all runs 14.2%, +11.7%, 38 beyond 25% to 13.7%, +12.4%, 32; through
	// 26.04.01 15.1%, +13.1%, 32 to 13.9%, +13.9%, 27.
	//
	// Hopper's sliding layers at cuDNN 9.19's H200 window-1,024 rates (analytic's
	// attentionTable.usable; they had taken the whole-sequence curves of Shah et al.):
	// the H100 gpt-oss rows -1 point (+28.7%..+32.8% to +27.4%..+31.4%); no median
	// moves. Ruled out as gpt-oss's gap, measured and not adopted: a Blackwell tile
	// overhead scaled with the per-SM rate (gemmTileOverheadK doubled where an SM
	// runs twice Hopper's 16-bit rate, the mechanism that doubles fp8's on Hopper; no
	// Blackwell product is measured by shape) takes the whole set from +12.1% to +8.0%
	// (31 beyond 25%) but gpt-oss only from +32.4% to +31.6%: a Blackwell-wide
	// question, not gpt-oss's.
	//
	// GPT-OSS 120B's rows take their release's dispatcher (flexBackend): HybridEP on
	// GB200, B300 and B200 from #2906 (26.02.01, 26.04), on B300 throughout and on the
	// 26.06 MXFP8 recipes, where they had been planned as alltoall. Its rows move +2 to
	// +8 points (GB200 26.04 +47.5% to +53.3%, B200 EP8 +53.0% to +56.9%, B300 EP8 +48%
	// to +53%, the 26.06 MXFP8 rows +4 to +8), the gpt-oss median stays +32.4%, all runs
	// +12.1% to +12.2%. The planner prices HybridEP 4% faster than alltoall on the GB200
	// recipe (no regrouping of received chunks); Megatron-Bridge #3561 measured it 4.2%
	// slower there in BF16 (64 GB200, the V2 recipe: alltoall 423.6 TFLOP/s against
	// HybridEP's 406.6; FP8-MX 438.5 against 431.0), "HybridEP's setup overhead
	// unamortized" at gpt-oss's small expert width and top-4, and moved the GB200 and
	// (#3614; #3387 had measured the B200 BF16 row 5% slower under it) recipes back to
	// alltoall. That overhead was not priced: an 8-point optimism on those rows, most
	// of it the fp32 probabilities HybridEP makes gpt-oss's eager expert bias run in,
	// priced since (below; TestHybridEPAgainstAllToAll holds the pairs and what is
	// left).
	//
	// Ruled out for gpt-oss's remaining gap (+20% to +57% BF16), each against a source:
	// (1) its products: OpenXLA's measured B200 16-bit products (default_matmul_perf_
	// table.txtpb, sm_100_B200) fall within 6% of the shape model at 2,048 and 4,096 rows
	// (analytic.TestGEMMShapeModelBlackwell), and the expert products of the B200 EP8
	// rows (4,096 rows an expert, 2,880 deep, 2,880 and 5,760 wide, about 100 us each)
	// are priced at 1.36 PFLOP/s, inside the table's 1.17 to 1.42 for 4,096 rows by
	// 2,048 to 4,096 wide and deep (about 1.30 interpolated at 2,880): a Blackwell tile
	// overhead doubled fits that table worse (8.9% rms against 4.0%). (2) The sinks:
	// Transformer Engine hands the learnable offset to cuDNN's SDPA graph
	// (fused_attn_f16_arbitrary_seqlen.cu, v2.12: sdpa_options.set_sink_token), whose
	// backward adds dSink as a reduction over the b x h x s softmax statistics beside
	// the dO.O preprocessing it runs anyway (cudnn-frontend's scaled_dot_product_flash_
	// attention.h): no pass over the scores; the cuDNN rates taken are the frontend's
	// gpt_oss benchmark's, which sets no sink, and no published figure with sinks
	// exists. (3) The loss: the gpt-oss recipes set cross_entropy_fusion_impl "native"
	// (Megatron-Core's torch.compile'd fp32 vocab-parallel loss, about 22 bytes a logit
	// forward where Transformer Engine's reads 6), but the performance scripts'
	// _set_common_perf_overrides sets "te" for every run (scripts/performance/utils/
	// overrides.py, v0.3.0 to v0.5.1), as priced; the NullTokenizer's 32,000 words do not
	// replace the model's 201,088 (training/setup.py, _validate_and_set_vocab_size).
	// (4) Routing: moe_router_force_load_balancing replaces the logits with random
	// ones (router.py, apply_random_logits), balanced as planned, and its two
	// launches priced (training.moe_force_load_balancing, analytic's randomLogits). (5) The experts'
	// biases: fc1's is in GroupedLinear's GEMM epilogue and its gradient in the weight
	// gradient's (grouped_linear.py, BF16 path), fc2's added expert by expert as
	// priced; the clamp stays three eager kernels before the fused quick-GEGLU
	// (fused_bias_geglu.py, core_v0.15.0 to core_v0.18.0), as priced. Seen and left:
	// GPTOSSBridge's bias_dropout_fusion False makes the attention projection's bias a
	// kernel of its own before the residual add (one more 16-bit pass, about 0.2% of a
	// block); the expert all-to-alls were priced at the NVLink line rate (cluster's
	// links: "what NCCL reaches on top is the caller's efficiency"), a few percent of a
	// gpt-oss block and common to every MoE row, not gpt-oss's gap (now priced: below). With the products and
	// the attention priced from measurements, the B200 EP8 rows' planned
	// block (21 ms a microbatch of 16,384 tokens) needs some 12 ms more; what costs it
	// is not in any source found.
	//
	// MXFP8's weight scale swizzle (analytic's recipeFigures.swizzleKernels: Transformer
	// Engine v2.12 to v2.16 rearranges the cached weight's E8M0 scales before every
	// product that reads the weight, one launch forward and one backward a linear, one
	// for all the local experts of a grouped linear): the x86 microbatch-1 MXFP8 rows
	// gain most (Qwen3 30B-A3B on 8 B200s +99.4% to +96.2% and +91.3% to +88.2%), the
	// NVL72 rows 0 to 1.5 points; over all runs 13.7%, +12.2% to 13.6%, +11.9%, 32
	// beyond 25% (on main at 246288e); through 26.04.01 13.7%, +13.7% to 13.6%, +13.5%,
	// 27. The metadata
	// collectives each an NCCL launch of their own (analytic's calc.expertCollectives:
	// the all-to-all dispatcher's tokens-per-expert all-gather and probabilities'
	// all-to-all, HybridEP's routing-map all-gather), whose time was priced but not
	// their launch: the x86 microbatch-1 rows move by 0.3 to 0.4 points; no median moves.
	//
	// What the x86 Blackwell rows beyond 25% share, and what it is not (read against
	// Megatron-Bridge's scripts/performance/configs at v0.2.2, v0.3.0 and v0.3.1, the
	// 25.11, 26.02 and 26.02.01 recipes). All are planned in the megatron mode (no
	// attention graphed) on x86 hosts, with little device work a launch: Qwen3 30B-A3B
	// at microbatch 1 (+88%, +96%), Qwen3 235B-A22B B200 PP8 (+37%, +38%, #1760's +32%),
	// 64 B200s PP8 VP4 (+69%), B300 PP8 VP4 with the expert overlap (+110%, +114%),
	// DeepSeek-V3 B200 PP16 (+46% in 25.11; +23% to +29% from 26.02, where its B300 rows
	// of the same recipe err +13% to +19%). Not the graphs' scope: Qwen3 30B-A3B's FP8-MX
	// recipes on B200 and GB200 (v0.2.2, v0.3.0) both capture moe_router and
	// moe_preprocess alone, so both plan in the megatron mode; they differ in microbatch
	// (1 and 4), dispatcher (alltoall and HybridEP) and host (x86 and Grace). Not the
	// network: EP8 on an 8-GPU node stays inside it (ExpertPerNode 8). Not mainly the
	// device side at small m: the same shape graphed and token-dropping (NeMo 25.09,
	// 18,066 tokens/s/GPU) plans at 21,247 in the cuda-graphs mode (+18%, the level of
	// the device-bound rows), against +88..+96% for the eager dropless rows. Not the
	// dispatcher as priced: planned with HybridEP the microbatch-1 row errs +102% (the
	// planner prices the two alike); the x86 HybridEP rows with little work a launch err
	// too (DeepSeek-V3 B200, Qwen3 30B-A3B 16 H100 EP16 FP8 +22% to +24%). Not Transformer
	// Engine's module code: TE #3523 measured the CPU time of a Linear's forward and
	// backward at 441 us in MXFP8 (311 in BF16) and a LayerNormLinear's at 519 (398) on
	// GB200; scaled to an x86 host by TE #2053's 13.48/37.08 that is 160 and 189 us,
	// against 105 and about 165 charged here (7 and 11 launches at 15 us): some 0.2 ms a
	// layer and microbatch of the 4.5 ms missing at microbatch 1. What the rows do fit is
	// a host time per launch about twice eager PyTorch's on these x86 hosts, a figure no
	// source gives (model.architecture.host_kernel_seconds 31 us, the planner's
	// counterfactual): Qwen3 30B-A3B microbatch 1 +2% and -3%, Qwen3 235B-A22B B200 PP8
	// +14% and +15% (#1760 +9%), DeepSeek-V3 B200 +4% to +9% and B300 -4% to +1%, Qwen3
	// 30B-A3B H100 EP16 FP8 0% to +1%, the device-bound x86 rows unmoved (B300 microbatch
	// 8 and 2, the H100 Qwen3 235B-A22B and overlap-benchmark rows); left beyond 25%: the
	// expert-overlap VP4 rows (+66% to +69%, 64 B200s +35%) and DeepSeek-V3 of 25.11
	// (+27%); the H100 PP2 VP12 pair (one request measured 77% apart) goes from +74% and
	// -2% to +4% and -42%. But it contradicts the Grace rows: at TE #2053's 2.75 times it takes Qwen3
	// 30B-A3B on GB200 and GB300 (the megatron mode too) from +1..+14% to -14..-51%; they
	// fit the present 41 us a launch, about 1.3 times 31, not 2.75. So the host's time per
	// launch under Megatron-Core and Transformer Engine is underpriced on x86 relative to
	// Grace, or Grace's ratio measured on torch.nn.Linear does not carry to this code; no
	// measurement found settles which, so neither figure is changed. Transformer Engine
	// v2.9's swizzle of every MXFP8 operand (25.11; v2.12 on swizzles the weight alone, as
	// priced) adds about 16 launches a layer and microbatch more there, not priced.
	//
	// The expert group's NVLink now carries what NVLink's protocol leaves of its line
	// rate, 370 of 450 GB/s (cluster.NVLinkPayloadShare: NCCL's maintainer in
	// nccl-tests#212; DeepEP's README states ~160 of the H800's 200 GB/s for its own
	// kernels), for every dispatcher: rows move 2 to 5 points slower, the 8-GPU Qwen3
	// 30B-A3B EP8 rows (all their all-to-alls on NVLink) the most; by device (on main
	// at 47390f3) b200 +31.7% to +28.3%, b300 +14.5% to +12.8%, gb200 +9.5% to +6.1%,
	// gb300 +3.1% to +0.1%, h100-sxm +22.3% (its rows' expert groups cross the
	// network); gpt-oss +32.4% to +30.8%, Qwen3 30B-A3B +8.7% to +4.8%, Qwen3 235B-A22B
	// +1.6% to -0.3%, DeepSeek-V3 +6.6% to +4.3%; the held runs 13.6%, +11.9% to 12.8%,
	// +8.5%, still 32 beyond 25% (none crossed 25% either way); through 26.04.01 13.6%,
	// +13.5% to 11.2%, +10.5%. The 26.06 MXFP8 rows that were pessimistic are 2-3
	// points more so.
	//
	// The expert overlap, against the one pair of rows whose recipes differ in little
	// else: GPT-OSS 120B on 64 GB200 (BF16, MBS 4, EP64, PP 1, 5 microbatches), NeMo
	// 26.02 (alltoall, no overlap) 15,784 and 26.02.01 (#2906: HybridEP and
	// moe_a2a_overlap, which sets overlap_moe_expert_parallel_comm and
	// delay_wgrad_compute, scripts/performance/utils/overrides.py) 15,754 tokens/s/GPU.
	// The planner credits the overlap +5.5% with either dispatcher and prices HybridEP
	// +4.0% over alltoall: +9.5% in all where the two measured alike. #3561, which put
	// the row back on alltoall with the overlap kept, measured HybridEP 4.2% slower there
	// (noted above), so the overlap itself gained about 4%: the overlap's credit is some
	// 1.5 points high, the HybridEP price some 8. Megatron-Core's
	// combined_1f1b_schedule_for_no_pipelining (PP 1) runs the first microbatch's forward
	// and the last one's backward alone (its phases 0 and N), so m-1 of m microbatches
	// pair: 4/5 of 5.5% is 4.4%, within that measurement. Priced from this round in the
	// step (wire.Step.ExpertUnpairedSeconds, core/request's expertUnpairedSeconds: the
	// two unpaired passes' hidden expert communication added once a step on a run
	// without pipeline parallelism), not in the layers: pricing it there by the step's
	// microbatches (tried: the mean pass, (m-1)/m of them paired) broke the search's
	// bound (core/search/evaluate prices every candidate of a tensor degree,
	// microbatch size and expert degree with one estimate). The pair now: 26.02.01
	// planned 24,087 -> 23,832 tokens/s/GPU, +52.9% -> +51.3%; the 26.02 row (no
	// overlap) unmoved at 21,998; the planner's overlap and HybridEP together +9.5% ->
	// +8.3% against 26.02 where the two measured alike, the overlap's part about 4.4%
	// (figures on main at 25f6c21; on main at c24121c, NVLink at NCCL's topology rates
	// and linear_fc1 one product, the 26.02.01 row 24,450 -> 24,184, +55.2% -> +53.5%,
	// against 26.02's 22,288: +9.7% -> +8.5% apart; these runs' medians unmoved,
	// 14.9%, +12.3%). The PP 1 rows with the overlap move 0.1 to 2.4 points slower
	// (gpt-oss GB200 and GB300 MBS 4, 5 microbatches, the most; Qwen3 30B-A3B 8 GB200, GB300, B300 MXFP8
	// rows, already pessimistic, 0.5 to 0.9 points more so; the 16 H100 overlap
	// benchmark -3.1% -> -3.3%): over all runs 12.8%, +8.5% -> 13.6%, +8.3% (the
	// |error| median is the B300 Qwen3 30B-A3B MXFP8 MBS8 row, -12.7% -> -13.6%);
	// through 26.04.01 the medians unmoved, 11.2%, +10.5%. Pipelines are not priced so: the
	// interleaved schedule's (combined_1f1b_schedule_for_interleaved_pipelining) warmup
	// forwards and cooldown backwards run unpaired too, on every stage, but the
	// schedule's simulation prices each pass with one cost, so a stage's unpaired
	// chunks would need their own pass costs there; not done. Left:
	// HybridEP's SMs are priced as NCCL's 24 CTAs (expertCommSMShare), where
	// Megatron-Core's moe_hybridep_num_sms defaults to 16 (TransformerConfig at
	// core_v0.16.0 to core_v0.17.0 and at the commits Megatron-Bridge v0.3.0, v0.3.1 and
	// #2906 pin, handed to HybridEPBuffer's num_sms_dispatch_api and _combine_api) and
	// the perf scripts set 32 for every HybridEP run from v0.3.0 on
	// (scripts/performance/utils/overrides.py, _set_common_perf_overrides, with a TODO
	// to revisit it "when overlapping HybridEP with computation"): 8 of 148 SMs more,
	// held for the 0.3655 of the all-to-all time that overlaps, is under half a point
	// of these rows' steps, and the planner has no field for a recipe's SM count.
	// Megatron-Core's linear_fc1 priced as the one product it is (analytic's oneFC1:
	// one GEMM an expert and pass in Transformer Engine's GroupedLinear, 2f wide, where
	// two f-wide products had been charged: one launch forward and two backward an
	// expert fewer, cluster.Framework.FusedFC1) took these runs from 13.1%, +7.8% (32
	// beyond 25%) to 14.9%, +12.3% (36), and those through NeMo 26.04.01 from 10.8%,
	// +10.5% (27) to 15.4%, +15.4% (30), on main at 82e263a; the host-bound x86
	// megatron rows most (Qwen3 30B-A3B on B200 and H100 of NeMo 25.11 and 26.02, up to
	// +34 points): the launches the plan had charged there were not gate's and up's, and
	// TestBridgeKernelsPerStep now counts 31.5% fewer launches than Nsight Systems did.
	// Optimism found, not a target met: the bounds record it.
	//
	// HybridEP's probabilities: its forward dispatch and backward combine move, with
	// every token copy, a row of fp32 probabilities over all the node's experts
	// (analytic's hybridEPProbRowBytes, DeepEP's hybrid-ep kernels): 512 bytes beside
	// gpt-oss's 5,760 a token, 1,024 beside DeepSeek-V3's 14,336 at EP32 on NVL72, 512
	// beside Qwen3 30B-A3B's 4,096 at EP8. The HybridEP rows move 0.3 to 1.5 points
	// slower; measured on main at c24121c, all runs 14.9%, +12.3%, 36 beyond 25% to
	// 14.8%, +11.1%, 35; through 26.04.01 15.4%, +15.4%, 30 to 14.8%, +14.8%, 29. By
	// model: Qwen3 30B-A3B +10.5% to +9.0%, DeepSeek-V3 +5.9% to +5.4%, Qwen3 235B-A22B
	// +1.0% to +0.4%, gpt-oss unmoved (its median row runs alltoall); by device gb300
	// +4.1% to +3.7%, gb200 +12.2% to +11.7%, b300 +15.1% to +14.8%, h100-sxm +25.3% to
	// +24.7%, b200 unmoved. What HybridEP pays beyond that on gpt-oss (#3561, #3387) is
	// TestHybridEPAgainstAllToAll's known gap.
	//
	// The router's load-balancing loss (training.moe_aux_loss, auxLoss: Megatron-Bridge's
	// Qwen3 MoE aux_loss, DeepSeek-V3 seq_aux_loss, gpt-oss none), which Megatron-Core
	// computes beside the routing in every mixture layer with the fused router the
	// performance scripts set (analytic's shape.auxLoss: Transformer Engine's fused
	// score and loss kernels, the tokens-per-expert sum, the loss's logging, its
	// gradient's scaling and the logits' gradient sum: 5 launches each pass, 6 with
	// seq_aux_loss), had not been planned: every Qwen3 and DeepSeek-V3 row slows, the
	// host-bound most (Qwen3 30B-A3B on 8 B200s at microbatch 1 +130.0% and +120.7% to
	// +124.5% and +115.5%; its Grace rows 1.7 to 2.2 points, GB200 FP8-MX +27.2% to
	// +25.3%; B300 PP8 VP4 -1.2; the device-bound rows 0.3 to 0.7). All runs 14.8%,
	// +11.1%, 35 beyond 25% to 14.1%, +10.7%, 34; through 26.04.01 14.8%, +14.8%, 29 to
	// 14.0%, +14.0%, 28. By device b200 +32.3% to +31.7%, b300 +14.8% to +14.6%, gb200
	// +11.7% to +11.2%, gb300 +3.7% to +3.4%, h100-sxm +24.7% to +23.9%; by model Qwen3
	// 30B-A3B +9.0% to +8.4%, Qwen3 235B-A22B +0.4% to 0.0%, DeepSeek-V3 +5.4% to +5.2%,
	// gpt-oss unmoved. The x86 rows' gap is as large as before in kind: 10 launches of
	// some 100 a layer and microbatch.
	//
	// What the x86 clusters' hosts do to these rows is large and not one figure:
	// Megatron-Bridge #1928 (2026-01-21, in v0.3.0 to v0.5.1: scripts/performance/
	// utils/executors.py) pins each B300 rank to two Priority Core Turbo cores (numactl
	// -C), which "improves CPU latency" and "recovers 60% performance regression
	// compared to Prenyx (B200)" (a later commit on main, 0c2269679 of 2026-06-04, makes
	// the binding opt-in; the tags through v0.6.0 keep it on): the same recipes on
	// another x86 cluster, or bound otherwise, ran some 60% apart. So the B300 rows of
	// NeMo 26.02 on ran on pinned turbo cores and the B200 and H100 rows on whatever
	// numactl --cpunodebind gave; a per-launch host time fitted to either would carry
	// that cluster's binding, which no request field states. Not adopted (no figure per
	// launch is published for either cluster).
	//
	// HybridEP's forward, read in DeepEP's hybrid-ep executor (commit 017a5202,
	// csrc/hybrid_ep/executor/executor.cu): a zeroed counter (torch::zeros) and the
	// metadata kernel, the dispatch, permute_processing (row map and tokens per
	// expert) and the permute kernel, where the plan counts the preprocessing, the
	// dispatch and one gather; and two reads to the host (the dispatched count and
	// tokens_per_expert, .cpu()) where moeHostSeconds prices one. Megatron-Core
	// core_v0.18.0 passes num_permuted_tokens only with a rank capacity factor. Since
	// read at the commit Megatron-Bridge's docker/Dockerfile.ci pins from v0.5.0 to
	// v0.6.0 (DEEPEP_COMMIT 34152ae2; v0.4.x's Dockerfile.fw_base takes the commit as a
	// build argument without a default, so the earlier containers' commit is not
	// known): metadata_preprocess_core launches the preprocessing kernel, the same
	// cooperative permute preprocessing and pad_tokens_per_expert, then one
	// cudaStreamSynchronize (one host read, as priced); dispatch and permute follow.
	// Two launches beyond the plan's count at either commit, now priced (analytic's
	// hybridEPPermutePreprocessing, forward only): all runs 15.8%, +11.5% to 15.5%,
	// +11.4%, 34 beyond 25%; through 26.04.01 15.2% to 14.6%, 28; by device gb200
	// +12.0% to +11.9%, gb300 +4.3% to +4.2%, h100-sxm +23.7% to +23.6%, the rest
	// unmoved; Qwen3 30B-A3B GB300 FP8-MX +6.0% to +5.2%. The second host read of 017a5202 is not priced (the
	// later commit has one; the TestHybridEPAgainstAllToAll note sizes it at 0.25%).
	//
	// gpt-oss's second expert bias in fp32 under the flex dispatcher (analytic's
	// routedProbBytes and expertOutputBias): Megatron-Core casts the router's 16-bit
	// probabilities to fp32 before HybridEP's (and DeepEP's) dispatch ("HybridEP only
	// supports float32 probs", token_dispatcher.py, core_v0.16.0 to core_v0.18.0) and
	// hands the experts the dispatched fp32 ones, so TEGroupedMLP._apply_bias's t + b*p,
	// its cat and the cast back run in fp32: 28 bytes an element of the experts' output
	// forward and 40 backward, where 12 and 16 (16-bit probabilities, the alltoall
	// dispatcher's) had been priced, some 1.2 ms a layer and microbatch at gpt-oss's
	// 65,536 routed rows of 2,880. Only gpt-oss has expert biases; its HybridEP rows move
	// 7 to 9 points (GB200 26.02.01 +53.0% to +43.8%, 26.04 +51.2% to +42.2%; B300 EP8
	// +51..53% to +42..44%; B200 EP8 26.02.01 +48.7% to +41.1%, 26.04 +56.5% to +48.5%;
	// the 26.06 MXFP8 rows: B300 +36.8% to +27.6%, GB300 -0.0% to -8.2%, GB200 +9.4% to
	// +1.0%; 26.06.01's +63%, +73% to +50%, +60%), the alltoall rows not at all. gpt-oss
	// 33.4%, +33.4% to 32.1%, +32.1% (32 runs); the medians of all runs and of those
	// through 26.04.01 unmoved (14.8%, +11.1%, 35 beyond 25%; 14.8%, +14.8%, 29), on
	// main at 0530dab. It is most of what #3561 and #3387 measured HybridEP to
	// cost on gpt-oss (TestHybridEPAgainstAllToAll: alltoall now priced 2.8% and 3.2%
	// faster, 4.2% and about 5% measured).
	//
	// The fused grouped MLP runs no eager expert bias: TEGroupedMLP's fused branch
	// returns before _apply_bias (experts.py, core_v0.18.0), and fc2's bias goes to
	// cuDNN's grouped product as its epilogue's bias_tensor (Transformer Engine v2.16,
	// ops/fused/forward_grouped_mlp.py), where the planner had charged the 26.06
	// recipes' fused rows the eager bias all the same. GPT-OSS 120B's two 26.06 MXFP8
	// rows with cutedsl_fused_grouped_mlp: GB300 -8.2% to +8.0%, GB200 +1.0% to +16.5%
	// (26.06.01's +50%, +60% to +77%, +84%); both lay near the median of all runs, which
	// goes from 14.1%, +10.7% to 14.4%, +11.6% (34 beyond 25%, unchanged; on main at
	// a92c64f with the router's loss); through 26.04.01 unmoved. Optimism found: the
	// bound records it. fc2's bias gradient (a
	// reduction over the output gradient's rows, a grouped dbias kernel in Transformer
	// Engine's ops) is not priced, as fc1's is not.
	//
	// Checked for gpt-oss's device side this round and not its gap, each against its
	// source: (1) the rotary embedding: the perf scripts' apply_rope_fusion True
	// (scripts/performance/utils/helpers.py v0.2.2, overrides.py v0.3.0 to v0.5.0) is
	// undone by GPTModelProvider.provide for position_embedding_type "yarn"
	// (fusions.validate_rope_fusion_compatibility: RoPE only), so every release runs
	// Megatron-Core's unfused path as priced (core_v0.15.0's fused path, which ignored
	// the mscale, never ran). (2) The router: v0.3.0's and v0.5.0's gpt-oss perf configs
	// set moe_router_fusion (set_gpt_oss_common_configs): Transformer Engine's
	// fused_topk_with_score_function, one kernel each way, probabilities in the logits'
	// 16 bits (fused_topk_with_score_function.cu, DataType probs); the three-kernel top-k
	// priced is a few microseconds a layer. (3) MXFP8 padding of each expert's rows:
	// TEGroupedMLP pads to 32 (Fp8Padding, Transformer Engine's fused_multi_row_padding:
	// a copy of the routed rows forward and of their gradient backward, and the same for
	// fc2's output) on core_v0.15.0 to core_v0.17.0 for every fp8 run whose counts the
	// router or HybridEP has not padded (Fp8Padding returns its input when they are
	// aligned), and on core_v0.18.0 skips it there (skip_routed_expert_padding);
	// gpt-oss's MXFP8 rows are 26.06's HybridEP ones, so none of its rows pads; other
	// models' alltoall fp8 rows do, unpriced (about 4e bytes an element of the routed
	// rows each pass and three launches): left to the MoE rows' owners. (4) The attention:
	// cuDNN's rates for the sliding layers are cuDNN 9.22's (window 128); none is
	// published for the containers' 9.13 to 9.20, so whether those skipped the tiles
	// outside the band as 9.22 does is not known. (5) Across devices: GB300 ran 1.16 to
	// 1.23 times GB200's throughput on every model of 26.02 (Qwen3 30B-A3B 1.16, DeepSeek-V3
	// 1.17, Qwen3 235B-A22B 1.21, gpt-oss 1.23) at equal datasheet peaks, so part of
	// gpt-oss's GB200 optimism (+40..+44% against GB300's +20..+22%) is the device's,
	// common to every model (gb200 rows +12.1%, gb300 +3.8%), and part its recipe
	// (recompute, no attention graphs). And GB200's 25.11 row (MBS 1 at 8,192 tokens)
	// ran as fast per token as 26.02's (MBS 4 at 4,096: 14.3 and 14.4 ms a layer per
	// 8,192 tokens), where the planner's cost per token falls 15% with the full layers'
	// shorter attention, as GB300's measured pair does (12.4 to 11.7 ms; planned 9.8 to
	// 9.1): a GB200 26.02 slowdown no source explains. Priced since: recompute_modules
	// "layernorm" reruns only the pre-MLP norm (TransformerLayer recomputes the input
	// norm only when it is not fused into linear_qkv, transformer_layer.py
	// core_v0.14.0 to core_v0.18.0; analytic's fusedBlockNorm), where the planner reran
	// both; Megatron-Core's GQA query reshape copy and the qkv split's backward cat
	// (get_query_key_value_tensors: a copy of Q forward, of Q, K and V's gradients
	// backward), and Transformer Engine's copy of V after the rotary embedding
	// (get_qkv_layout; analytic's megatronQKVSplit), common to every Megatron-Core model
	// with grouped queries or a rotary embedding (figures below).
	//
	// The dropless host synchronization (analytic.moeHostSeconds) had split the
	// backward pass too, where none of Megatron-Core's dispatchers reads the device
	// (core_v0.14.0 to core_v0.16.0: _AllToAll.backward's saved split sizes, DeepEP's
	// cached handle, HybridEPCombine's saved num_permuted_tokens, Transformer Engine's
	// saved m_splits); it is now charged only where the mixture's forward is rerun in
	// the backward (full recomputation or the "moe" module, none of these rows). A
	// mechanism the source contradicts is not kept as compensation: all runs 14.4%,
	// +11.6% to 15.8%, +11.6%, 34 beyond 25% unmoved; through 26.04.01 14.0%, +14.0% to
	// 16.0%, +16.0%, 28 unmoved. The device medians are unmoved (b200 +31.7%, b300
	// +14.6%, gb200 +12.1%, gb300 +3.8%, h100-sxm +23.9%); by model Qwen3 30B-A3B +8.4%
	// to +8.9%, the rest unmoved. The host-bound rows gain 2 to 4 points (Qwen3 30B-A3B
	// GB200 MXFP8 MBS4 +3.2, B200 MBS1 +2.4, GB200 FP8-MX +3.5), the 16-H100 PP2 VP12
	// FP8 row +5.7 (+11.6%; its superseded first figure +87.5% to +97.6%).
	//
	// The forced balance every one of these recipes sets (training.moe_force_load_balancing:
	// RandomSTE's clone and normal fill of the router's logits, two launches a mixture
	// layer's forward, analytic's randomLogits; the routing was already planned
	// balanced) then: all runs 15.8%, +11.6% to 15.8%, +11.5%, 34 beyond 25%; through
	// 26.04.01 16.0% to 15.2%, 28. By device then b200 +31.5%, b300 +14.6%, gb200
	// +12.0%, gb300 +4.3%, h100-sxm +23.7%; by model Qwen3 30B-A3B +8.8%, Qwen3
	// 235B-A22B -0.1%, DeepSeek-V3 +5.1% (w/o MTP +5.7%), gpt-oss +31.9%.
	//
	// GB200 against GB300 (s31): the GB200's matrix products now run at what the MAMF
	// comparison measured of them beside the B200's (cluster's gb200MatmulEfficiency
	// and gb200FP8Efficiency: Bekman's ml-engineering, compute/accelerator/README.md,
	// 1,822 against 1,745 TFLOP/s bf16, 3,615.6 against 3,432.5 fp8: 4.4% and 5.3% over
	// the B200, where the datasheets' 2.5 and 2.25 PFLOP/s at one fraction had priced
	// them 11.1% over it). On main at 62d466e: all runs 15.5%, +11.4% to 14.0%, +10.0%
	// (34 beyond 25%, unmoved), through 26.04.01 14.6% to 13.4% (28); gb200 rows +11.9%
	// to +8.4% (30 runs; gb300's +4.2% unmoved); 26.02's planned GB300/GB200 ratios
	// 1.05..1.10 to 1.08..1.12 against 1.16..1.23 measured (Qwen3 30B-A3B 1.097 to
	// 1.113, measured 1.165; DeepSeek-V3 1.090 to 1.124, 1.166; Qwen3 235B-A22B 1.093 to
	// 1.120, 1.208; gpt-oss 1.048 to 1.078, 1.230). What differs between the two devices and what the planner prices of it:
	// the datasheets' dense peaks (2.5 PFLOP/s bf16, 5 fp8), HBM bandwidth (8 TB/s)
	// and NVLink 5 are equal; the attention is priced at cuDNN's own GB200 and GB300
	// rates (analytic's attention tables: Blackwell Ultra's doubled exponential units
	// give GB300 its faster softmax-bound forward), so the "2x attention-layer
	// acceleration" is in the rows already; memory (186 against 279 GB) moves no step
	// time; the recipes differ (MBS, pipeline layout, graph scope, dispatcher) and each
	// row carries its own. Not found: any GB300 matmul measurement beside a GB200's
	// (the MAMF table has none; a single GB300 torch.matmul of 8,192 x 8,192 at 1,717 to
	// 1,812 TFLOP/s, facebookexperimental/triton #740, has no GB200 beside it), nor
	// NVIDIA's sustained clocks at GB300's 1,400 W against GB200's 1,200 W: the GB300
	// keeps the B200's fractions of its 2.5 PFLOP/s, and the rest of the measured
	// 1.16..1.23 stays unexplained (GB300's dense Bridge rows are 4 to 20% pessimistic,
	// TestFP8PublishedRuns, which the same unpriced GB300 speed would explain). Round 32
	// (s32-gb300) bounded it: on Llama 3 8B's rows of one release, recipe and
	// parallelism the GB300 runs 1.226 times the B200 (FP8-CS; 1.223 FP8-MX), where every
	// part of the step at the datasheets' 2.5/2.25 and the attention at cuDNN's GB300
	// rates gives 1.134 (TestGB300AgainstB200Datasheets): the GB300's lead is beyond any
	// rate its datasheet, the MAMF table (no GB300 row at 744d01e, 2026-08-22) or NVIDIA's
	// Blackwell Ultra blogs (160 SMs in the full design; the doubled exponential units,
	// in cuDNN's rates) state, so no device rate is priced for it; MLPerf Training
	// v5.1's GB300 and GB200 Llama 3.1 405B runs of NVIDIA are NVFP4 at TP 2 against TP
	// 4, and NVIDIA's 8B configs GB300's only: no device pair.
	// Megatron-Core's qkv split (analytic's megatronQKVSplit) and its fused norms left out
	// of the layernorm module (fusedBlockNorm), on main at 62d466e: all runs 15.5%,
	// +11.4%, 34 beyond 25% to 14.5%, +10.6%, 33; through 26.04.01 14.6% to 14.1%, 28. By
	// device b200 +31.5% to +30.6%, gb200 +11.9% to +11.5%, gb300 +4.2% to +3.3%,
	// h100-sxm +23.6% to +22.4% (b300 +14.6% unmoved); gpt-oss +31.9% to +31.4%.
	// Both merged: 13.6%, +9.0%, 32 beyond 25%; through 26.04.01 12.6%, 27.
	// Transformer Engine's fused top-k under Megatron-Core's spec (shape.topK: one kernel
	// each pass where three were priced): 13.7%, +9.1%, 32; through 26.04.01 13.4%, +13.4%,
	// 27 (its median moves to another run: fewer launches, a faster, more optimistic step).
	//
	// gpt-oss, checked against source this round (s32) and not its gap; no figure moved.
	// (1) The model: the perf recipes build it from the HuggingFace config
	// (gpt_oss.py's AutoBridge.from_hf_pretrained(...).to_megatron_provider, v0.3.0;
	// GPTOSSBridge.provider_bridge), the planner's to the product
	// (TestGptOssModelFLOPs, closed form per block: the 4,096-wide attention, qkv and
	// proj biases, top 4 of 128 gated experts of 2,880, a 128-key window on every other
	// layer, 201,088 untied words): 32.7 GFLOP a token at 4,096. The table's "Model
	// TFLOP / sec / GPU" is Megatron-Bridge's own formula over the tokens
	// (training/utils/flop_utils.py, every gpt-oss row within 1%: 27.2 GFLOP at 4,096,
	// 30.8 at 8,192), which counts the experts' gate as no product (its gated multiplier
	// is F.silu's only, gpt-oss runs quick_gelu), every layer's attention whole and no
	// router: the planner charges more FLOPs than Bridge reports, not fewer (GB200 26.02
	// runs the model's products at 516 TFLOP/s, 21% of peak, not the table's 428).
	// Measured per layer and microbatch of 16,384 tokens (NeMo 26.02.01's rows, the step
	// less the head's share), the planned block falls short by about 4 ms on GB300 EP64
	// (22.4 against 18.4), 8.5 on GB200 EP64, 9.6 on B300 EP8 and 11.5 on B200 EP8, all
	// of them planned device-bound (the host at 0.9 to 3.4 ms of 6.7 to 14.1 a pass). (2) The activation:
	// weighted_bias_quick_geglu_impl (megatron/core/fusions/fused_bias_geglu.py,
	// core_v0.15.0 to core_v0.18.0) is the torch.compile'd weighted quick-GEGLU (jit.py:
	// jit_fuser is torch.compile from torch 2.2) behind the eager chunk, clamps and cat
	// priced (gluClamp), and it makes its linear offset a device tensor on every call,
	// torch.tensor(linear_offset, device=input.device): a pageable host scalar copied
	// with non_blocking False goes through memcpy_and_sync (cudaMemcpyAsync, then
	// cudaStreamSynchronize: PyTorch's aten/src/ATen/native/cuda/Copy.cu), a second
	// host synchronization in every mixture layer's forward after fc1, and in the
	// backward where moe_act is rerun. Tried as a second split of the forward in
	// analytic's moeHostSeconds (the device's work to the clamp, then the rest): no
	// gpt-oss row and not TestBridgeGptOss20BGraphs moves, both sides device-bound; not
	// adopted. (3) The attention's backend choice: Transformer Engine keeps one
	// AttentionParams (dot_product_attention.py, v2.9 to v2.16:
	// _attention_backends["attention_params"]), and gpt-oss's sliding and full layers
	// differ in window_size, so get_attention_backend (utils.py: some 900 lines and
	// tex.get_fused_attn_backend) runs again in every layer's forward, in no other model
	// here (Transformer Engine #1349 and #1381, both open: "CPU intensive"); host time,
	// forward only, and none where the attention is graphed. No figure per call is
	// published, so it is not priced; nor is it these rows' gap: GB200's 8 ms or more
	// a layer would take some 13 ms a call on Grace (its forward's host is 1.9 ms
	// against 7.1 of device time), and the B300 rows, which graph the
	// attention, err as the B200 rows that do not (+41..+43% and +40..+47%). It is a
	// candidate for part of #2960's (TestBridgeGptOss20BGraphs: graphing the attention
	// skips it). On sm90 and sm100 alike the backend is cuDNN's arbitrary-sequence one
	// (FlashAttention off for learnable softmax; the only sub-backend that takes a
	// window), as priced. (4) The loss: above.
	//
	// The x86 8-GPU rows' inter-node traffic (s32), which on NVL72 stays on NVLink, read
	// against the sources; none of it is their gap:
	// (1) Placement. A run with expert parallelism is placed in Megatron-Core's order,
	// tp-cp-ep-dp-pp (cluster.ExpertOrders), where the planner had put the 256-B200 Qwen3
	// 235B-A22B PP8 EP8 rows' eight stages in one node (their transfers on NVLink, each
	// expert group spread over nodes, the data-parallel rings on one NIC): now every
	// boundary crosses the network and the rings run at 8 NICs, +35.7%/+36.8% to
	// +36.2%/+37.3% (the exposed reduce-scatter and all-gather 227 to 123 ms, the
	// pipeline 9 ms longer). EP8 keeps the expert all-to-alls in the node (ExpertPerNode
	// 8) on B200 and B300, as EP32 and EP64 do in an NVL72 domain.
	// (2) A bound. All the network traffic of these rows, exposed at one 400 Gb/s NIC's
	// line rate, cannot close them: Qwen3 235B-A22B on 256 B200 ran 34.5 to 34.7 s a step
	// where 25.3 s is planned, and its boundaries move a 32 MiB activation and its
	// gradient each microbatch (2 x 256 x 0.67 ms = 0.34 s) beside 0.23 s of
	// data-parallel reduce-scatter and all-gather (dense over 32 ranks at 8 NICs, the
	// experts' over 4 on one NIC): under 0.6 s of the 9.3 s missing. DeepSeek-V3 on 256
	// B200 PP16 EP8 (23.3 to 24.4 s measured, 18.9 planned): 2 x 256 x 1.18 ms = 0.6 s
	// and 0.23 s, of 4.4 to 5.5 s. The simulated 1F1B already has each boundary's
	// transfer on its steady-state path (it is in the bubble, 0.07 to 0.10). Megatron-Core
	// also waits for each exchange in the stages' streams (p2p_communication.py at
	// core_v0.15.0: _communicate's wait_on_reqs=True, and torch.cuda.synchronize after
	// batch_isend_irecv under batch_p2p_sync with the batch_p2p_comm Megatron-Bridge sets
	// without virtual stages, training/comm_overlap.py v0.3.0), which
	// cluster.Framework.BlockingPipelineTransfers' note calls beside compute: priced as one
	// transfer in the sender's forward and the receiver's backward (tried), it moved
	// DeepSeek-V3's B200 PP16 row 28 ms of 18.9 s, 0.15%; not kept.
	// (3) H100 EP16's HybridEP across two nodes. The hybrid-ep README's H100 table
	// (deepseek-ai/DeepEP, hybrid-ep branch, docs/README_Hybrid-EP.md since #494,
	// 2025-11-18: 4,096 tokens, hidden 7,168, top-8, 8 local experts; 16 ranks, 16 SMs,
	// Torch API: BF16 dispatch 54.47 GB/s, combine 53.35) counts in its IB bandwidth every
	// token's distinct nodes, its own among them (tests/utils.py,
	// count_rdma_send_from_routing_map: "we do not set the local node map to zeros"), as
	// DeepEP's internode test does (tests/test_internode.py: rdma_idx over all nodes; its
	// README's EP16 43 GB/s is some 21.5 of payload). So at two nodes a dispatch takes 2.15
	// ms, 27.2 GB/s of payload on the 50 GB/s NIC (four nodes 35.5, eight 36.0), where the
	// flex dispatchers price the network at its line rate (1.23 ms for that shape). At
	// 0.544 of the line rate (tried) the H100 EP16 FP8 rows come from +22..+24% to +5..+7%,
	// but the overlap benchmark's BF16 rows, the same HybridEP all-to-alls on the same two
	// nodes, from +6.6% and -2.7% to -8.9% and -13.9%, and DeepSeek-V3's 256-B200 PP8 VP2
	// EP32 DeepEP row from -12.8% to -34.7% (at four nodes' 0.71: -25.1%; the H100 rows
	// then +13..+15%, -1.6%, -8.5%). The pair decides it: the FP8 and BF16 EP16 rows move
	// the same bytes (Megatron-Core's HybridEP dispatches 16 bits), measured 29.3 to 29.7
	// s against 24.7 s a step, and are planned at 23.9 against 23.2: what the FP8 rows
	// lack (4.7 s measured between the precisions, 0.75 s planned) is not the network.
	// Not adopted (one 7,168-wide benchmark's figure carried to hidden 2,048 would be an
	// assumption); recorded for when a Hopper HybridEP figure at these rows' shape exists.
	// (4) The host: Megatron-Bridge #1928's CPU binding, above, gives no per-launch figure.
	// (5) The FP8-BF16 pair's device side (s32), read in the code the FP8 rows ran:
	// Transformer Engine 2.14 (Megatron-Bridge v0.4.0's pin for NeMo 26.04, TE commit
	// 71bbefb; v0.5.0's for 26.06, 2.16 at 4220403, reads the same in (a) to (c), its
	// base.py quantize_weight) and Megatron-Core d728871 (v0.4.0's submodule). Each
	// candidate is priced as the code runs it, or absent:
	// (a) No weight cast per microbatch: the FP8-CS recipe sets fp8_param_gather
	// (mixed_precision.py bf16_with_fp8_current_scaling_mixed, v0.5.0; perf scripts'
	// precision.py only turns first_last_layers_bf16 off), so the experts' weights are
	// Float8Tensors that GroupedLinear takes as they are (grouped_linear.py forward:
	// weight_quantizers = [weight._quantizer ...]; base.py get_weight_workspace returns a
	// QuantizedTensor after update_usage), and the transpose Hopper's TN-only products
	// read for the input gradient is made once and kept (float8_tensor_storage.py
	// update_usage creates _transpose only when missing or invalid; the optimizer's write
	// invalidates it): once a step, not a microbatch.
	// (b) The amax pass and the per-expert casts: split_quantize loops over the experts
	// for current scaling (cast.cpp multi_tensor_quantize_impl: "Currently only have fused
	// kernel for FP8 delayed scaling") and each runs quantizer.cpp's quantize_impl
	// (compute_amax: zero and reduce; compute_scale_from_amax; quantize_v2 in both layouts):
	// the 4 launches and 6 bytes an element priced (recipeFigures.quantKernels,
	// quantBytes), in both passes. No amax all-reduce: GroupedLinear refuses tensor
	// parallelism under current scaling and sets no amax reduction group.
	// (c) No fp8 padding copy: under fp8 HybridEP pads each expert's rows to 16 itself
	// (token_dispatcher.py _HybridEPManager.dispatch: pad_multiple =
	// get_align_size_for_quantization), and Fp8Padding returns its input when the splits
	// are already aligned (fp8_padding.py).
	// (d) The split accumulator (Float8CurrentScaling: dgrad and wgrad
	// use_split_accumulator True): the H100 products the shape model is fitted to ran
	// torch._scaled_mm's default use_fast_accum False (tools/measure/steps.py), so the
	// fp8 rates carry it.
	// (e) The products' rate at the experts' shapes: measured_h100_steps.json holds them
	// (4,096 x 2,048 x 768: 48.9 us bf16, 56.9 fp8; 4,096 x 768 x 2,048: 46.9 and 60.2),
	// fp8 slower a call, but each timed call holds its launch (TestGEMMShapeModel fits
	// 27 and 44 us a call on the H100, 10 and 18 on the H200's host), so the excess
	// cannot be told device from host; Transformer Engine's GEMM profiling guide
	// (docs/examples/gemm_profiling, H200 NVL) gives only 15,872-row products (current
	// scaling 1.58 times bf16 with its quantization, 1.90 without), as priced.
	// What is left is the host. The pair's recipes differ in more than precision:
	// QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_BF16_V1 captures moe_router and moe_preprocess
	// in TE graphs, FP8_CS_V1 nothing (qwen3_workload_base_configs.py, v0.5.0); both plan
	// in the megatron mode. The FP8 step launches 799,616 kernels planned (BF16 357,248;
	// the overlap benchmark's Nsight counted 463,348 there), a host of 12.1 s against 23.9
	// of device: device-bound, where the BF16 step's host (5.5 s) is far below its device
	// (23.2 s; its GPU-active union was 22.8 of 24.7 s measured). Host-bound at the
	// measured 29.3 to 29.7 s, the FP8 step would take 37 us a planned launch (28 at the
	// BF16 count's 1.30 kernels a planned one); the 31 us counterfactual above, between
	// the two, is what fits these rows (0% to +1%) and leaves the BF16 rows device-bound.
	// GroupedLinear under fp8 also runs per-expert Python that bf16 does not (set_usage
	// of each quantizer, get_weight_workspace and update_usage of each weight, of each
	// saved input, the backward's update_usage of each weight, prepare_for_saving of
	// three tensors an expert), and a maintainer put GroupedLinear's time beyond its GEMMs
	// on such CPU work (TE #1499: torch.split and 2 x num_gemms torch.empty, "not trivial
	// to eliminate", v1.13); Megatron-Bridge #2842 (2026-03) reports FP8 below BF16 for
	// Qwen3 30B-A3B on H100 among others (the maintainer's "mostly mxfp8 cast bound" is
	// Blackwell's recipe). No source times this path's host per expert on an x86 host at
	// Transformer Engine 2.14, so nothing is priced; a per-launch or per-expert host figure
	// measured there would settle it.
	//
	// gpt-oss's 16-bit expert path at 16 local experts against 2 (s32), checked against
	// source and not its gap; no figure moved. (1) How the grouped products run:
	// TEGroupedMLP's linear_fc1 and linear_fc2 are Transformer Engine GroupedLinear modules
	// (2.9 in NeMo 25.11, 2.12 in 26.02, 2.14 in 26.04, 2.16 in 26.06), whose forward, input
	// gradient and weight gradient each call general_grouped_gemm -> nvte_multi_tensor_gemm,
	// which on Blackwell is multi_stream_cublas_gemm: one cuBLAS GEMM per expert,
	// round-robin on nvte_get_num_compute_streams() = 4 compute streams joined by events
	// (transformer_engine/common/gemm/cublaslt_gemm.cu and util/multi_stream.cpp, v2.9 to
	// v2.16; CUTLASS's grouped kernel only on sm90 under NVTE_USE_CUTLASS_GROUPED_GEMM; the
	// single cuBLASLt grouped GEMM, cuBLAS 13.3 and a GroupedTensor, is not the module's
	// path in these releases; Transformer Engine's MoE guide describes the same two paths).
	// The planner pools the local experts' tiles and launches one kernel an expert; were the
	// four streams never concurrent, each call would quantize its own waves: at B300 EP8
	// (4,096 rows an expert) the expert products would take 1.7% longer, some 0.12 ms of a
	// layer's 7 ms of them per microbatch, at EP64 (32,768 rows) nothing (analytic's
	// TestGroupedLinearPerExpertCalls); a bound far short of the 9.6 ms. (2) The weight
	// gradient: with Megatron-Core's gradient_accumulation_fusion, GroupedLinear passes each
	// expert's fp32 main_grad as the GEMM's output with accumulate (beta 1), and the 16-bit
	// path fuses fc1's bias gradient into that GEMM's epilogue ("Grad bias is fused with
	// wgrad GEMM", grouped_linear.py, v2.12): 8 bytes read and written per weight element
	// and microbatch, 3.2 GB a layer at 16 local experts against 0.4 GB at 2; were none of
	// it hidden under the product (a compute-bound GEMM at 4,096 rows: 1,024 FLOPs a byte of
	// that traffic), 0.5 ms at the B300's 6.2 TB/s, 0.45 ms more than at EP64. (3) The rest
	// around the products: tokens_per_expert's copy to the host (m_splits) is the dropless
	// synchronization priced (analytic.moeHostSeconds); torch.split of the input and output
	// gradient is views, the outputs one torch.empty each (single_output); the permute,
	// activation and unpermute run once over all the local experts' rows (wholeTensor,
	// unpermute), the alltoall dispatcher's chunk sort too (HybridEP has none); fc1's bias
	// is the GEMM's epilogue and fc2's TEGroupedMLP._apply_bias, priced; GroupedLinear's
	// per-expert Python (#1499: torch.split, and under fp8 torch.empty, per expert) is host time, and these
	// rows are device-bound. (4) The rows themselves: B200 EP8 (16 local experts, x86) over
	// GB200 EP64 (2, NVL72), both recomputing layernorm and moe_act, measured 0.871, 0.818
	// and 0.815 (26.02.01, 26.04, 26.04.01) against 0.874, 0.874 and 0.878 planned; B300 EP8
	// over GB300 EP64 0.776, 0.784 and 0.793 against 0.924; and GB300 over GB200 1.229,
	// 1.209 and 1.154 against 1.059, 1.059 and 1.031 planned. So the B300's 5.6 ms a layer
	// beyond the GB300's is the GB300's own unexplained speed (the GB200 against GB300
	// paragraph, s31, above: every model), not the local experts, and whatever differs
	// between EP8 on an HGX node and EP64 on NVL72 (the expert path at 16 experts, the
	// data-parallel reduce-scatter and all-gather, at B300 EP8 mostly the experts' over
	// InfiniBand: 567 ms a step priced, 561 of it hidden behind the last backward and first
	// forward, slowing them 91 ms; the host) is 0 to 7% of a B200 row, up to 2 ms a layer.
	// The H100 rows (1,024 rows an expert at microbatch 1) are where the streams'
	// concurrency matters: 21% longer expert products with none; Qwen3 30B-A3B's narrow
	// experts lose more still, so pricing each call's waves alone would make those rows,
	// near 0 to +10% now, slower for a concurrency the four streams provide; not adopted
	// without a measurement of TE's multi-stream calls beside one grouped kernel.
	if abs > 0.141 || signed > 0.095 {
		t.Errorf("median |error| %.1f%%, signed median %+.1f%%: want at most 14.1%% and +9.5%% (was 13.7%%, +9.1%%; 13.6%%, +9.0%% before the fused router's top-k; 14.0%%, +10.0%% before Megatron-Core's qkv split and fused norms; 15.5%%, +11.4%% while GB200's products ran at the B200's fraction of its datasheet peak; 15.8%%, +11.5%% before HybridEP's permute preprocessing; 15.8%%, +11.6%% before the forced balance's random logits; 14.4%%, +11.6%% before the backward's host synchronization was dropped; 14.1%%, +10.7%% while the fused grouped MLP was charged the eager expert bias; 14.8%%, +11.1%% before the router's load-balancing loss)", 100*abs, 100*signed)
	}
	var older []bridgeMoERun
	for _, c := range bridgeMoERuns {
		if c.source == bridgeOverlap || bridgeReleases[c.source] < bridgeReleases[bridge2606] {
			older = append(older, c)
		}
	}
	t.Run("through NeMo 26.04.01", func(t *testing.T) {
		signed, abs := planBridgeRuns(t, "Megatron-Bridge MoE runs through NeMo 26.04.01", older)
		if abs > 0.139 || signed > 0.139 {
			t.Errorf("median |error| %.1f%%, signed median %+.1f%%: want at most 13.9%% and +13.9%% (was 13.4%%, +13.4%%; 12.6%%, +12.6%% before the fused router's top-k, one kernel each pass; 13.4%%, +13.4%% before Megatron-Core's qkv split and fused norms; 14.6%%, +14.6%% while GB200's products ran at the B200's fraction of its datasheet peak; 15.2%%, +15.2%% before HybridEP's permute preprocessing; 16.0%%, +16.0%% before the forced balance's random logits; 14.0%%, +14.0%% before the backward's host synchronization was dropped; 14.8%%, +14.8%% before the router's load-balancing loss; 15.4%%, +15.4%% before HybridEP's probability rows; 10.8%%, +10.5%% before linear_fc1 was one product)", 100*abs, 100*signed)
		}
	})
}

// bridgeContextRuns are the context-parallel runs of the same summary: Llama 3.1 405B
// (sequence 8,192) with CP 2, ring attention (Megatron-Core's default cp_comm_type,
// p2p), fp8.
var bridgeContextRuns = []bridgeMoERun{
	{name: "Llama3.1 405B, 1024 H100, FP8-CS, TP8 PP8 CP2 VP8", source: bridge2511, model: "llama3.1-405b", device: "h100-sxm", precision: "current", gpus: 1024, gbs: 512, mbs: 1, seq: 8192, tp: 8, pp: 8, vp: 8, cp: 2, tokensPerGPU: 292},
	{name: "Llama3.1 405B, 128 B200, FP8-CS, TP4 PP8 CP2 VP8", source: bridge2511, model: "llama3.1-405b", device: "b200", precision: "current", gpus: 128, gbs: 64, mbs: 1, seq: 8192, tp: 4, pp: 8, vp: 8, cp: 2, tokensPerGPU: 661},
	{name: "Llama3.1 405B, 128 B200, FP8-MX, TP4 PP8 CP2 VP8", source: bridge2511, model: "llama3.1-405b", device: "b200", precision: "mxfp8", gpus: 128, gbs: 64, mbs: 1, seq: 8192, tp: 4, pp: 8, vp: 8, cp: 2, tokensPerGPU: 624},
	{name: "Llama3.1 405B, 256 GB300, FP8-CS, TP2 PP8 CP2 VP4", source: bridge2511, model: "llama3.1-405b", device: "gb300", precision: "current", gpus: 256, gbs: 1536, mbs: 1, seq: 8192, tp: 2, pp: 8, vp: 4, cp: 2, tokensPerGPU: 999},
	{name: "Llama3.1 405B, 1024 H100, FP8, TP8 PP8 CP2 VP8, GBS 1536", source: bridge2602, model: "llama3.1-405b", device: "h100-sxm", precision: "current", gpus: 1024, gbs: 1536, mbs: 1, seq: 8192, tp: 8, pp: 8, vp: 8, cp: 2, tokensPerGPU: 311},
	{name: "Llama3.1 405B, 256 GB300, MXFP8, TP2 PP8 CP2 VP4", source: bridge2602, model: "llama3.1-405b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 1536, mbs: 1, seq: 8192, tp: 2, pp: 8, vp: 4, cp: 2, tokensPerGPU: 931},
	// NeMo 26.06: the same recipes (v0.5.0's LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2
	// and _GB300_FP8_MX_V2, as v0.3.0's).
	{name: "Llama3.1 405B, 1024 H100, FP8, TP8 PP8 CP2 VP8, GBS 1536", source: bridge2606, model: "llama3.1-405b", device: "h100-sxm", precision: "current", gpus: 1024, gbs: 1536, mbs: 1, seq: 8192, tp: 8, pp: 8, vp: 8, cp: 2, tokensPerGPU: 326},
	{name: "Llama3.1 405B, 256 GB300, MXFP8, TP2 PP8 CP2 VP4", source: bridge2606, model: "llama3.1-405b", device: "gb300", precision: "mxfp8", gpus: 256, gbs: 1536, mbs: 1, seq: 8192, tp: 2, pp: 8, vp: 4, cp: 2, tokensPerGPU: 952},
}

// TestBridgeContextParallelRuns plans the summary's context-parallel runs as they ran,
// as TestBridgeMoEPublishedRuns does, with the tensor-parallel userbuffers overlap and
// the tuned config each recipe passed (bridgeMoERun.ubConfig; priced without them
// they erred -3% to -16%, median -8.9%, and -11.2% on main at c24121c), and holds
// their bias within issue 19's 5% either way: on main at c24121c H100 +2.0% to
// +11.0%, B200 -2.6% and +0.9%, GB300 -11.6% to -14.7%. At 8,192 tokens over CP 2 a device holds 4,096 tokens, and each ring
// step's pass of keys and values (Megatron-Core's p2p cp_comm_type through Transformer
// Engine's attention, overlapped step by step) is shorter than the attention on the
// block already received, so the planner hides it whole (analytic ringSeconds: the
// layers' ContextSeconds are 0 on all eight rows); the GB300 rows' -11% to -14% sit
// with their matrix products at a planned MFU of 82% to 86%, not with the exchange.
// With Transformer Engine's ring priced as its code runs it (analytic's teRingCopies:
// the copies and merges around the steps' kernels; attentionRates: one causal call and
// c - 1 unmasked ones) the table went from 9.4%, +3.1% to 9.2%, +1.8% (H100 +2.5..+12.8%
// to +1.6..+11.8%, B200 +3.6/+7.1% to +2.0/+5.5%, GB300 -11.4..-14.5% to -12.7..-15.8%).
func TestBridgeContextParallelRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 1,024 devices")
	}
	signed, abs := planBridgeRuns(t, "Megatron-Bridge context-parallel runs", bridgeContextRuns)
	if signed > 0.05 || signed < -0.05 || abs > 0.10 {
		t.Errorf("median |error| %.1f%%, signed median %+.1f%%: want at most 10%% and within 5%% (was 8.9%%, -0.8%%)", 100*abs, 100*signed)
	}
}

// bridgeReleases orders the summary's containers, oldest first.
var bridgeReleases = map[string]int{bridge2511: 0, bridge2602: 1, bridge26021: 2, bridge2604: 3, bridge26041: 4,
	bridge2606First: 5, bridge2606: 5, bridge26061: 6, bridgeOverlap: 7, bridgePR1760: 0}

// supersededGain is how much faster a later container must have run the same
// configuration for a run to be read as the software of its release rather than as
// the hardware and the recipe: issue 19's 25% bound on a case's error, which a
// measurement that differs from itself by more cannot be held to.
const supersededGain = 0.25

// superseded returns the fastest later run among runs whose planning request is c's
// exactly (model, system, precision, GPUs, batch, sequence, every parallel degree, and
// the recipe's framework mode, recomputation, overlaps and dispatcher), when it
// published more than supersededGain above c: the planner is asked the same question
// for both, so it cannot be held to both, and the difference is the container's
// software (NeMo 26.02.01 ran Qwen3 30B-A3B's H100 recipe at 9,058 tokens/s/GPU where
// 26.02 had 5,113). A later run whose recipe changed what the planner is told (CUDA
// graphs, overlaps, recomputation) is a different question, not a later answer.
func superseded(t *testing.T, c bridgeMoERun, runs []bridgeMoERun) (bridgeMoERun, bool) {
	t.Helper()
	var best bridgeMoERun
	found := false
	mine := requestKey(t, c)
	for _, o := range runs {
		if bridgeReleases[o.source] <= bridgeReleases[c.source] || o.tokensPerGPU <= c.tokensPerGPU*(1+supersededGain) {
			continue
		}
		if requestKey(t, o) != mine {
			continue
		}
		if !found || o.tokensPerGPU > best.tokensPerGPU {
			best, found = o, true
		}
	}
	return best, found
}

// requestKey is a run's planning request as JSON: two runs with the same key are the
// same question to the planner.
func requestKey(t *testing.T, c bridgeMoERun) string {
	t.Helper()
	b, err := json.Marshal(c.request(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// planBridgeRuns plans runs, logs each error and the medians by source, model and
// device, and fails where a run that ran (and is expressible) does not fit. It returns
// the medians over the runs that no later container superseded (superseded), and
// logs them over all runs too.
func planBridgeRuns(t *testing.T, label string, runs []bridgeMoERun) (signed, abs float64) {
	var all, held []float64
	by := map[string][]float64{}
	refused := 0
	for _, c := range runs {
		req := c.request(t)
		res, err := Run(context.Background(), req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !res.Feasible {
			if c.refused != "" {
				refused++
				t.Logf("%-52s REFUSED although it ran (a known gap: %s): %s", c.name, c.refused, res.FirstError().Message)
				continue
			}
			t.Errorf("%s (%s): ran, but planned as not fitting: %s", c.name, c.source, res.FirstError().Message)
			continue
		}
		if c.refused != "" {
			t.Errorf("%s: fits now: remove its refused note (%s)", c.name, c.refused)
		}
		// The split fits as the schedule's simulation counts each device's peak too.
		if sc := res.Schedule; sc != nil {
			for d, peak := range sc.PeakMemoryBytes {
				if peak > sc.LimitBytes[d] {
					t.Errorf("%s: planned as fitting, but device %d's simulated peak %d exceeds its %d bytes", c.name, d, peak, sc.LimitBytes[d])
				}
			}
		}
		got := float64(c.gbs) * float64(c.seq) / res.Step.StepSeconds / float64(c.gpus)
		e := (got - c.tokensPerGPU) / c.tokensPerGPU
		all = append(all, e)
		note := ""
		if c.recompute != "" {
			note = "; recompute_modules " + c.recompute
		}
		t.Logf("%-52s predicted %7.0f tokens/s/GPU, published %6.0f: error %+6.1f%% (bubble %.2f, MFU %.1f%%%s)", c.name, got, c.tokensPerGPU, 100*e, res.Step.BubbleFraction, 100*res.Step.MFU, note)
		if later, ok := superseded(t, c, runs); ok {
			by["superseded"] = append(by["superseded"], e)
			t.Logf("    superseded: the same configuration ran at %.0f tokens/s/GPU in %s (%+.0f%%): error %+.1f%% against it; not held", later.tokensPerGPU, later.source, 100*(later.tokensPerGPU/c.tokensPerGPU-1), 100*(got/later.tokensPerGPU-1))
			continue
		}
		held = append(held, e)
		by["source: "+c.source] = append(by["source: "+c.source], e)
		by["model: "+c.model] = append(by["model: "+c.model], e)
		by["device: "+c.device] = append(by["device: "+c.device], e)
		by["precision: "+c.precision] = append(by["precision: "+c.precision], e)
	}
	logGroups(t, by)
	signed, abs = medians(all)
	t.Logf("%s: %d of %d planned (%d refused), median |error| %.1f%%, signed median %+.1f%%", label, len(all), len(runs), refused, 100*abs, 100*signed)
	if len(all)+refused != len(runs) || math.IsNaN(signed) {
		t.Errorf("%d runs planned and %d refused, of %d", len(all), refused, len(runs))
	}
	signed, abs = medians(held)
	beyond := 0
	for _, e := range held {
		if math.Abs(e) > issueTolerance {
			beyond++
		}
	}
	t.Logf("%s, not superseded: %d runs, median |error| %.1f%%, signed median %+.1f%%, %d beyond 25%%", label, len(held), 100*abs, 100*signed, beyond)
	return signed, abs
}

// TestBridgeKernelsPerStep checks the kernels the planner launches (what the megatron
// framework mode's host time is per) against a count: Megatron-Bridge's expert-parallel
// overlap benchmark (bridgeOverlap: Qwen3 30B-A3B, 16 H100s, BF16, EP16, microbatch 1,
// 64 microbatches a step) "captured the same 463,348 rank-0 kernels per case" in Nsight
// Systems. The planner's count, the analytic model's kernels over a step's microbatches
// (optimizer and gradient reduction aside), is 387,968: 16.3% below, though it counts
// the router's and preprocessing's kernels one by one where that run captured them in
// CUDA graphs (which Nsight Systems lists by default as one launch each). It was
// 443,136 (-4.4%) while the permute and the experts' activation were priced as a launch
// per local expert (8 here); Megatron-Core launches each once for all of them
// (analytic's wholeTensor), and the count fell by 27 a layer and microbatch. Then
// 360,192 (-22.3%), until Transformer Engine's norm finalize kernels (4 a layer
// backward: the block's two norms and the query and key norms; analytic's
// teNormBackward) and Megatron-Core's main_grad hook adds (5 a layer backward: those
// norms' weights and the router's; analytic's mainGradAdds) joined the count, 9 a layer
// and microbatch. HybridEP's all-gather of the routing map, an NCCL call of its own
// each forward (analytic's calc.expertCollectives), makes it 391,040 (-15.6%). About 24
// launches a layer and microbatch (more, with the graphed router's own) are still not
// in the plan; and the plan had counted linear_fc1's gate and up as two products an
// expert (one launch forward and two backward each) where Transformer Engine's
// GroupedLinear runs one GEMM an expert and pass for the 2f-wide fc1, 24 launches a
// layer and microbatch here (8 local experts). Counted as TE runs them (analytic's
// oneFC1, one product in every Megatron-style gated MLP: cluster.Framework.FusedFC1)
// the plan is 317,312 (-31.5%), some 48 launches a layer and microbatch short. The
// router's load-balancing loss (Qwen3's aux_loss: analytic's shape.auxLoss, 5 launches
// each pass) makes it 348,032 (-24.9%): some 38 launches a layer and microbatch short,
// a known gap, not yet attributed, which the bound (30%, was 35%) records. Nor is the
// count a settled target: the skill does not say whether Nsight Systems traced the
// router's and preprocessing's CUDA graphs node by node (--cuda-graph-trace=node) or
// as one launch each (its default, graph), nor what its capture spans; the
// forced-balance benchmark's random logits (moe_router_force_load_balancing:
// RandomSTE's clone and normal_, two launches forward in every Megatron-Bridge
// performance run) are planned since (training.moe_force_load_balancing): 354,176
// (-23.6%); and HybridEP's permute preprocessing, two launches forward (analytic's
// hybridEPPermutePreprocessing): 360,320 (-22.2%), some 34 launches a layer and
// microbatch short; and Megatron-Core's qkv split (analytic's megatronQKVSplit: Q's
// reshape copy and Transformer Engine's contiguous V forward, SplitAlongDim's cat
// backward, 3 launches a layer and microbatch): 369,536 (-20.2%), some 31 short. Not the experts'
// dummy weight gradients: Transformer Engine's GroupedLinear returns get_dummy_wgrad's
// cached tensor where the gradient went into main_grad, zeroed (a launch) only for a
// weight marked zero_out_wgrad, which Megatron-Core sets on the tied embedding alone
// (grouped_linear.py at v2.12; language_module.py at core_v0.15.0)
// (not checked:
// cuDNN attention backward's auxiliary kernels, HybridEP's combine beyond one kernel
// (DeepEP's hybrid-ep executor; its dispatch read above), the weighted SwiGLU's
// backward, which Megatron-Core compiles with torch.compile (jit_fuser), so its kernel
// count is Inductor's).
func TestBridgeKernelsPerStep(t *testing.T) {
	const published = 463348
	var run bridgeMoERun
	for _, c := range bridgeMoERuns {
		if c.source == bridgeOverlap && !c.overlap {
			run = c
		}
	}
	if run.name == "" {
		t.Fatal("no expert-parallel overlap benchmark run without the overlap")
	}
	est, err := Estimate(context.Background(), run.request(t))
	if err != nil {
		t.Fatal(err)
	}
	var kernels float64
	for _, l := range est.Layers {
		kernels += l.FwdKernels + l.BwdKernels
	}
	kernels *= float64(run.gbs / (run.gpus / run.pp) / run.mbs)
	t.Logf("%s: %.0f kernels a step planned, %d counted: %+.1f%%", run.name, kernels, published, 100*(kernels/published-1))
	if r := kernels/published - 1; math.Abs(r) > 0.30 {
		t.Errorf("%s: %.0f kernels a step planned, %d counted: %+.1f%%, want within 30%%", run.name, kernels, published, 100*r)
	}
}
