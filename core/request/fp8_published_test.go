package request

import (
	"context"
	"fmt"
	"maps"
	"math"
	"pipeplan/core/wire"
	"slices"
	"sort"
	"strings"
	"testing"
)

// fp8Run is a published fp8 pre-training run of a dense Llama 3 model, planned as a
// request with the run's own parallelism, batch and schedule, and compared on tokens per
// second per GPU.
type fp8Run struct {
	name, source string
	model        string // a key of fp8Models
	device       string
	recipe       string // delayed, current, blockwise, mxfp8
	gpus         int
	gbs, mbs     int
	tp, pp, vp   int
	tokensPerGPU float64 // published tokens per second per GPU
	seq          int     // 0: 8,192
	// gap, when set, names what the planner does not yet model that the run depends on:
	// its error is reported and counted in the medians, but not held to the tolerance.
	gap string
}

// The NVIDIA Megatron-Bridge performance summary (NVIDIA-NeMo/Megatron-Bridge,
// docs/performance-summary.md and docs/performance-summary-archive.md; the NeMo
// containers 25.09, 25.11, 26.02 and 26.06): pre-training on DGX systems, sequence 8,192,
// Megatron-Core with Transformer Engine, the distributed optimizer; FP8-CS is current
// scaling, FP8-MX MXFP8. Only the runs without context parallelism and without FSDP are
// here (those are planned elsewhere).
var fp8Runs = []fp8Run{
	{"Llama3 8B, 8 GB300, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb300", "current", 8, 128, 2, 1, 1, 1, 37556, 0, ""},
	{"Llama3 8B, 8 GB300, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb300", "mxfp8", 8, 128, 2, 1, 1, 1, 36108, 0, ""},
	{"Llama3 8B, 8 GB200, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb200", "current", 8, 128, 2, 1, 1, 1, 31508, 0, ""},
	{"Llama3 8B, 8 GB200, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb200", "mxfp8", 8, 128, 2, 1, 1, 1, 29789, 0, ""},
	{"Llama3 8B, 8 B200, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "b200", "current", 8, 128, 2, 1, 1, 1, 30624, 0, ""},
	{"Llama3 8B, 8 B200, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "b200", "mxfp8", 8, 128, 2, 1, 1, 1, 29521, 0, ""},
	{"Llama3 70B, 64 H100, FP8-CS, TP4 PP8 VP5", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-70b", "h100-sxm", "current", 64, 128, 1, 4, 8, 5, 1602, 0, ""},
	{"Llama3 70B, 64 H100, FP8-CS, TP4 PP8 VP5", "Megatron-Bridge perf summary, NeMo 25.09", "llama3-70b", "h100-sxm", "current", 64, 128, 1, 4, 8, 5, 1619, 0, ""},
	{"Llama3 70B, 64 H100, FP8, TP4 PP8 VP5, GBS 256", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "h100-sxm", "current", 64, 256, 1, 4, 8, 5, 1621, 0, ""},
	{"Llama3 70B, 64 GB200, MXFP8, TP2 PP4 VP5", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "gb200", "mxfp8", 64, 256, 1, 2, 4, 5, 3613, 0, ""},
	{"Llama3 70B, 64 GB300, MXFP8, TP1 PP4 VP5", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "gb300", "mxfp8", 64, 256, 1, 1, 4, 5, 4596, 0, ""},
	{"Llama3.1 405B, 256 GB200, FP8-CS, TP4 PP16 VP4", "Megatron-Bridge perf summary, NeMo 25.11", "llama3.1-405b", "gb200", "current", 256, 1536, 1, 4, 16, 4, 813, 0, ""},
	{"Llama3.1 405B, 256 GB200, FP8, TP4 PP16 VP4", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb200", "current", 256, 1536, 1, 4, 16, 4, 793, 0, ""},
	{"Llama3.1 405B, 256 GB200, MXFP8, TP4 PP16 VP8", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb200", "mxfp8", 256, 1536, 1, 4, 16, 8, 786, 0, ""},
	{"Llama3.1 405B, 256 GB300, FP8, TP4 PP8 VP4", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb300", "current", 256, 1536, 1, 4, 8, 4, 988, 0, ""},
	// NeMo 26.06 (bridge2606: Megatron-Bridge v0.5.0, whose LLAMA31_405B_PRETRAIN_CONFIG
	// GB300_FP8_CS_V2, GB200_FP8_CS_V2 and GB200_FP8_MX_V2 are v0.3.0's). Its other
	// pre-training rows of dense models: the CP2 runs (bridgeContextRuns) and NVFP4
	// (GB300 TP4 PP8 VP4, GB200 TP4 PP16 VP8: no fp4 recipe in the planner).
	{"Llama3.1 405B, 256 GB300, FP8, TP4 PP8 VP4", bridge2606, "llama3.1-405b", "gb300", "current", 256, 1536, 1, 4, 8, 4, 1048, 0, ""},
	{"Llama3.1 405B, 256 GB200, FP8, TP4 PP16 VP4", bridge2606, "llama3.1-405b", "gb200", "current", 256, 1536, 1, 4, 16, 4, 843, 0, ""},
	{"Llama3.1 405B, 256 GB200, MXFP8, TP4 PP16 VP8", bridge2606, "llama3.1-405b", "gb200", "mxfp8", 256, 1536, 1, 4, 16, 8, 783, 0, ""},

	// The NeMo Framework performance summary (docs.nvidia.com/nemo-framework/user-guide,
	// "Performance Benchmarks", NeMo 24.12, pre-training at fp8 on DGX H100, Transformer
	// Engine's delayed scaling then; and the 25.04 archive, DGX-GB200, "per-tensor FP8
	// quantization using the scaling factors calculated in the current step"). NeMo's
	// GPT-3 models: learned positions, GELU MLP of 4h, vocabulary 50,257 padded, tied
	// embeddings. The runs with context parallelism or FSDP are left out.
	{"GPT3 5B, 64 H100, FP8, DP64", "NeMo Framework perf summary, 24.12", "gpt3-5b", "h100-sxm", "delayed", 64, 2048, 4, 1, 1, 1, 23406, 2048, ""},
	{"GPT3 20B, 64 H100, FP8, TP2", "NeMo Framework perf summary, 24.12", "gpt3-20b", "h100-sxm", "delayed", 64, 256, 2, 2, 1, 1, 5851, 2048, ""},
	{"GPT3 175B, 128 H100, FP8, TP4 PP8 VP6", "NeMo Framework perf summary, 24.12", "gpt3-175b", "h100-sxm", "delayed", 128, 256, 1, 4, 8, 6, 716, 2048, ""},
	{"GPT3 175B, 512 H100, FP8, TP4 PP8 VP6", "NeMo Framework perf summary, 24.12", "gpt3-175b", "h100-sxm", "delayed", 512, 2048, 2, 4, 8, 6, 825, 2048, ""},
	{"Llama2 7B, 8 H100, FP8, DP8", "NeMo Framework perf summary, 24.12", "llama2-7b", "h100-sxm", "delayed", 8, 128, 1, 1, 1, 1, 16934, 4096, ""},
	{"Llama2 13B, 16 H100, FP8, PP4 VP10", "NeMo Framework perf summary, 24.12", "llama2-13b", "h100-sxm", "delayed", 16, 128, 1, 1, 4, 10, 8715, 4096, ""},
	{"Llama2 70B, 64 H100, FP8, TP4 PP4 VP20", "NeMo Framework perf summary, 24.12", "llama2-70b", "h100-sxm", "delayed", 64, 128, 1, 4, 4, 20, 1728, 4096, ""},
	{"GPT3 175B, 128 GB200, FP8-CS, TP4 PP4 VP12", "NeMo Framework perf summary, 25.04", "gpt3-175b", "gb200", "current", 128, 256, 2, 4, 4, 12, 1804, 2048, ""},
	{"Llama3 8B, 8 GB200, FP8-CS, DP8", "NeMo Framework perf summary, 25.04", "llama3-8b", "gb200", "current", 8, 128, 2, 1, 1, 1, 33099, 0, ""},
}

// GPT3 20B (TP2: four replicas to a node) and GPT3 175B on GB200 erred a third slow,
// -32.9% and -27.0%, with NeMo's data-parallel and tensor-parallel overlap modelled
// (parallelism.overlap_grad_reduce, overlap_param_gather and overlap_tensor_comm, on as
// NeMo's recipes set them): their distributed optimizer's reduce-scatter and all-gather
// were priced at one NIC's bandwidth, where NCCL drives as many NICs as the ring has
// members in a node (cluster.Topology.RingInter); with that they are +15.8% and -2.4%.
// GPT3 5B (DP64, eight replicas to a node) went from -0.0% to +11.2%, and Llama2 70B
// from +2.4% to +6.9%: the overpriced reduce-scatter had hidden optimistic steps of
// these fp8 runs (their quantization kernels: issue 19.1).
//
// NeMo 24.12's H100 runs (delayed scaling) err +4% to +14%, median +10%, where the
// later H100 runs of Megatron-Bridge (current scaling) err -1% to -3%. Checked, and not
// the cause (issue 19, s29):
//   - Delayed scaling's amax reduction (Transformer Engine's
//     FP8GlobalStateManager.reduce_and_update_fp8_tensors, fp8.py / quantization.py):
//     one all-reduce of the concatenated amaxes over Megatron-Core's amax group (TP x
//     DP x CP of a stage) per fp8_autocast exit and per backward, i.e. per microbatch
//     and model chunk, plus one fused update kernel. At NCCL's small all-reduce latency
//     (cluster.SmallAllReduceSeconds: 25.2 us for 16 ranks on 2 nodes) that is 1,280 a
//     step for Llama2 70B (32 microbatches x 20 chunks x 2), 32 ms of its 4.74 s step
//     (0.7%); 768 for GPT3 175B on 128 GPUs, 19 ms of 5.72 s (0.3%); 16 for GPT3 5B.
//     Not priced: a per-chunk cost the layer model has no place for, and too small.
//   - The weights' cast on the first microbatch (is_first_microbatch): bf16 read, fp8
//     and its transpose written, once a step: GPT3 5B's 5e9 weights x 4 bytes at the
//     H100's 2.68 TB/s, 7.5 ms of a 2.8 s step (0.3%).
//   - The fp8 products' rate: the H100 preset's 0.63 of the fp8 peak is below the
//     measured torch._scaled_mm plateau (0.66, core/request/testdata), which ran without
//     fast accumulation (use_fast_accum's default) as Transformer Engine's dgrad and
//     wgrad products do (use_split_accumulator); its forward products accumulate fast.
//   - Host time: planned with Megatron-Core's eager host costs instead of CUDA graphs,
//     the rows move 0.1 to 1.6 points: these runs are bound by the GPU.
// With the cuDNN attention figures Transformer Engine ran (teAttention) the NeMo 24.12
// rows would err +7% to +18% and Megatron-Bridge's H100 70B rows +6% to +7%: a Hopper
// gap that the same era's 16-bit H100 runs of Megatron-Core share (Megatron-LM README,
// Megatron-Core r0.8.0: +9% signed median), so not one of fp8's costs.
// Part of it was Transformer Engine's userbuffers overlap, priced as free until the 16
// multiprocessors of its pipelined and bulk overlaps were taken from the products
// (core/analytic's userbuffersChunks): NeMo 24.12's rows went from +10.0% to +4.2%
// (median), Megatron-Bridge's dense rows from -3..+3% to -7..0%. With cuDNN's
// attention figures on the H100 the Bridge rows would then err -1% to +2% and NeMo
// 24.12's +11%: left at FlashAttention-2's figures until NeMo 24.12's attention
// backend is read.
// Each row now names the userbuffers config its recipe passed (fp8Run.ubConfig), in
// place of initialize_ub's defaults: Megatron-Bridge's H100 Llama 3 70B rows went from
// -6.2..-7.2% to -2.9..-3.9%, its GB200 Llama 3 70B row from +8.0% to +13.8% and its
// GB200 Llama 3.1 405B rows from -2.3..+0.1% to -1.2..+5.0% (GB300's, -18.8% and -23.5%,
// to -14.8% and -19.7%), NeMo 24.07's summary (labelled 24.12 here) from +4.2% to +7.2%
// median (GPT3 175B +3.2% and -1.0% to +7.2% and +1.9%, GPT3 20B +7.3% to +10.3%,
// Llama2 70B +4.2% to +7.1%), NeMo 25.04's GPT3 175B on GB200 from -13.9% to -10.3%.
// The tuned configs' bulk overlaps run without set_sm_margin (core/analytic's
// bulkContention): the defaults' 16 multiprocessors had hidden that much optimism.

// fp8Models are the runs' models: bundled configs, or config.json objects (NeMo's GPT-3
// sizes: Brown et al. 2020, Table 2.1; Llama 2 13B: meta-llama/Llama-2-13b-hf).
var fp8Models = map[string]wire.Architecture{
	"llama3-8b":     {Name: "meta-llama-3-8b"},
	"llama3-70b":    {Name: "llama-3.1-70b"},
	"llama3.1-405b": {Config: []byte(llama31405b)},
	"llama2-7b":     {Name: "llama-2-7b"},
	"llama2-70b":    {Name: "llama-2-70b"},
	"llama2-13b": {Config: []byte(`{"model_type": "llama", "hidden_act": "silu", "hidden_size": 5120, "intermediate_size": 13824,
	 "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 40, "vocab_size": 32000, "max_position_embeddings": 4096}`)},
	"gpt3-5b":   {Config: []byte(`{"model_type": "gpt2", "n_embd": 4096, "n_head": 32, "n_layer": 24, "n_positions": 2048, "vocab_size": 50257}`)},
	"gpt3-20b":  {Config: []byte(`{"model_type": "gpt2", "n_embd": 6144, "n_head": 48, "n_layer": 44, "n_positions": 2048, "vocab_size": 50257}`)},
	"gpt3-175b": {Config: []byte(`{"model_type": "gpt2", "n_embd": 12288, "n_head": 96, "n_layer": 96, "n_positions": 2048, "vocab_size": 50257}`)},
}

// teAttention is the attention kernel a Megatron-style request names for Transformer
// Engine's DotProductAttention on a device. TE runs cuDNN's fused attention on Hopper
// and later even where flash-attn is installed ("to give FusedAttention preference on
// Hopper+", transformer_engine/pytorch/attention/dot_product_attention/utils.py,
// get_attention_backend): cudnn on Blackwell, whose cuDNN figures are NVIDIA's
// (analytic's attention tables). On Hopper the runs are still planned with the
// default, FlashAttention-2's figures (Shah et al. 2024), though TE ran cuDNN's: with
// cuDNN's faster figures the H100 fp8 runs of these tables err 4 to 10 points faster
// (Llama2 7B +4% to +14%, Llama3 70B +1% to +11%), a cost of TE's fp8 on Hopper not yet
// found (issue 19) that FlashAttention-2's slower kernel stands in for until it is.
func teAttention(device string) string {
	switch device {
	case "b200", "b300", "gb200", "gb300":
		return "cudnn"
	}
	return ""
}

// llama31405b is Llama 3.1 405B's config.json (meta-llama/Llama-3.1-405B), with the
// positions Megatron-Bridge's runs use.
const llama31405b = `{"model_type": "llama", "hidden_act": "silu", "hidden_size": 16384, "intermediate_size": 53248,
 "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
 "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "tie_word_embeddings": false}`

// precision is the run's gradient dtype, as its recipe sets Megatron-Core's
// DistributedDataParallelConfig.grad_reduce_in_fp32 (True: fp32 gradient buffers,
// reduced in fp32, precision mixed-fp32-grads; False: in the parameters' 16 bits,
// precision mixed):
//   - Megatron-Bridge's performance scripts set cfg.ddp.grad_reduce_in_fp32 = False
//     (and cfg.mixed_precision's) for every recipe: NeMo 25.09's v0.1.0rc3 and rc4
//     yamls (scripts/performance/configs/llama3/llama3_8b_llm_pretrain.yaml,
//     llama3_70b_llm_pretrain.yaml, llama31/llama31_405b_llm_pretrain.yaml:
//     grad_reduce_in_fp32: false), v0.2.0 to v0.5.1's set_llama3_common_configs and
//     set_llama31_common_configs (configs/llama3/llama3_llm_pretrain.py,
//     configs/llama/llama31_llm_pretrain.py): mixed;
//   - NeMo 25.04's performance scripts (NeMo v2.3.0 scripts/performance/utils.py,
//     set_primary_perf_configs) set recipe.trainer.plugins.grad_reduce_in_fp32 = False
//     for every fp8 run, and MegatronStrategy copies the plugin's dtype fields into its
//     DDP config (nemo/lightning/pytorch/strategies/megatron_strategy.py,
//     update_config_with_dtype_overrides): mixed;
//   - NeMo's summary labelled 24.12 (launcher-era configs, below): fp32 assumed,
//     mixed-fp32-grads, as the other NeMo tables of this package assume.
func (c fp8Run) precision() string {
	if strings.HasPrefix(c.source, "Megatron-Bridge") || c.source == "NeMo Framework perf summary, 25.04" {
		return "mixed"
	}
	return "mixed-fp32-grads"
}

func (c fp8Run) request() *wire.Request {
	a := fp8Models[c.model]
	a.Seq, a.Framework, a.Attention = c.seq, "cuda-graphs", teAttention(c.device)
	if a.Seq == 0 {
		a.Seq = 8192
	}
	perNode := 8
	if strings.HasPrefix(c.device, "gb") {
		perNode = 72
	}
	dp := c.gpus / (c.tp * c.pp)
	tpOverlap := ""
	if c.tp > 1 {
		tpOverlap = OverlapOn
	}
	sched := "1f1b"
	if c.vp > 1 {
		sched = fmt.Sprintf("interleaved:%d", c.vp)
	}
	return &wire.Request{
		Model:   wire.ModelSpec{Architecture: &a},
		Cluster: wire.ClusterSpec{Device: c.device, DevicesPerNode: perNode},
		Parallelism: wire.Parallelism{Pipeline: c.pp, Data: dp, Tensor: c.tp, ZeRO: 1, SequenceParallel: c.tp > 1,
			// NeMo's and Megatron-Bridge's recipes set overlap_grad_reduce and
			// overlap_param_gather in their DistributedDataParallelConfig, and
			// tp_comm_overlap with tensor parallelism (their userbuffers configs).
			OverlapGradReduce: OverlapOn, OverlapParamGather: OverlapOn, OverlapTensorComm: tpOverlap,
			TPCommOverlapConfig: c.ubConfig()},
		Training: wire.Training{Precision: c.precision(), FP8Recipe: c.recipe, FP8ParamGather: true},
		Schedule: wire.Schedule{Name: sched, Microbatches: c.gbs / dp / c.mbs, MicrobatchSize: c.mbs},
	}
}

// ubConfig is the userbuffers config the run's recipe passed (parallelism.
// tp_comm_overlap_config), as the recipe picks it: by model, GPU and precision.
//   - Megatron-Bridge's Llama 3 70B on H100 at fp8 (NeMo 25.09, 25.11, 26.02):
//     userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 (v0.1.0rc4's
//     scripts/performance/utils/helpers.py COMM_OVERLAP_CONFIG_MAP["llama3_70b"]["h100"]
//     ["fp8"]; v0.2.0's configs/llama3/llama3_llm_pretrain.py and v0.3.0's
//     configs/llama/llama3_llm_pretrain.py, llama3_70b_h100_config);
//   - its Llama 3 70B on GB200 at fp8 (26.02): userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192
//     (v0.3.0's llama3_70b_gb200_config);
//   - its Llama 3.1 405B on GB200 and GB300 at fp8 (25.11, 26.02, 26.06):
//     userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (v0.2.0's
//     configs/llama31/llama31_llm_pretrain.py, v0.3.0's and v0.5.0's
//     configs/llama/llama31_llm_pretrain.py, llama31_405b_gb200_config and _gb300_config);
//   - NeMo's summary labelled 24.12 (NeMo's docs/source/performance/performance_summary.md
//     at v2.1.0 names the NeMo 24.07 container, before NeMo 2.0's performance recipes):
//     the configs NeMo-Framework-Launcher 24.07's training configs name in their
//     defaults, taken as the runs' (assumed launched with the launcher's configs):
//     gpt3/175b.yaml ub_cfg_h100_h12288_tp4_mbs1_seqlen2048, gpt3/20b.yaml
//     ub_cfg_h100_h6144_tp2_mbs2_seqlen2048, llama/llama2_70b.yaml
//     ub_cfg_h100_h8192_tp4_mbs1_seqlen4096;
//   - NeMo 25.04's GPT3 175B on GB200 at fp8: userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048
//     (NeMo v2.3.0's scripts/performance/llm/pretrain_gpt3_175b.py,
//     ub_cfg["gb200"]["fp8"]; NeMo's copy of the config is Megatron-Bridge's).
//
// The runs without tensor parallelism have no overlap.
func (c fp8Run) ubConfig() string {
	if c.tp < 2 {
		return ""
	}
	switch {
	case c.model == "llama3-70b" && c.device == "h100-sxm" && strings.HasPrefix(c.source, "Megatron-Bridge"):
		return "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192"
	case c.model == "llama3-70b" && c.device == "gb200" && strings.HasPrefix(c.source, "Megatron-Bridge"):
		return "userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192"
	case c.model == "llama3.1-405b" && (c.device == "gb200" || c.device == "gb300"):
		return "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192"
	case c.model == "gpt3-175b" && c.device == "gb200" && c.source == "NeMo Framework perf summary, 25.04":
		return "userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048"
	case c.source == "NeMo Framework perf summary, 24.12":
		switch c.model {
		case "gpt3-175b":
			return "ub_cfg_h100_h12288_tp4_mbs1_seqlen2048"
		case "gpt3-20b":
			return "ub_cfg_h100_h6144_tp2_mbs2_seqlen2048"
		case "llama2-70b":
			return "ub_cfg_h100_h8192_tp4_mbs1_seqlen4096"
		}
	}
	return ""
}

// TestFP8PublishedRuns plans each published fp8 run exactly as it ran (Megatron-style:
// CUDA graphs framework, fp32 gradient buffers, the distributed optimizer, sequence
// parallelism with tensor parallelism, fp8 primary weights as Megatron-Bridge's fp8
// recipes set them) and compares tokens per second per GPU. Every run must plan as
// feasible (each ran); every error is logged, per source and per recipe, with the median
// and signed median; the signed median over all must be within 10% (issue 19.1: fp8 was
// about a third optimistic), no run beyond 25% (issue 19.7) but those with a known gap.
//
// Every block runs in fp8, as the runs did: Megatron-Bridge's current-scaling recipe
// keeps the first and last blocks in bf16 (bf16_with_fp8_current_scaling_mixed,
// first_last_layers_bf16), but its performance scripts turn that off for these tables
// (scripts/performance/utils/helpers.py get_precision_config at v0.2.0, and
// utils/precision.py at v0.3.0: "Disable BF16 Transformer layers in the performance
// config"), and its MXFP8 recipe keeps none in bf16. Fp8 primary weights: the delayed,
// current-scaling and MXFP8 recipes of v0.2.0 and v0.3.0 all set fp8_param_gather
// (MXFP8 with reuse_grad_buf_for_mxfp8_param_ag).
//
// Assumptions: GB200 and GB300 share their datasheet rates, while
// NVIDIA's tables show GB300 20-27% faster: Blackwell Ultra's faster attention is
// priced (cuDNN's published rates on each, analytic's attention tables), its power is
// not, so GB200 runs still err fast (Llama3 8B on GB200 went from +24-26% to +20-22%
// with cuDNN's figures) and GB300 runs slow. The GB300's lead over the B200 on one
// release, recipe and parallelism is beyond every rate its datasheet states
// (TestGB300AgainstB200Datasheets: 1.226 measured, 1.134 with every part of the step at
// the peaks' ratio and the attention at cuDNN's GB300 rates), so it is not priced.
func TestFP8PublishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 256 devices")
	}
	var all, held []float64
	by := map[string][]float64{}
	for _, c := range fp8Runs {
		res, err := Run(context.Background(), c.request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but planned as not fitting: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		got := float64(c.gbs) * float64(c.request().Model.Architecture.Seq) / res.Step.StepSeconds / float64(c.gpus)
		e := (got - c.tokensPerGPU) / c.tokensPerGPU
		all = append(all, e)
		by["source: "+c.source] = append(by["source: "+c.source], e)
		by["recipe: "+c.recipe] = append(by["recipe: "+c.recipe], e)
		by["device: "+c.device] = append(by["device: "+c.device], e)
		t.Logf("%-48s predicted %7.0f tokens/s/GPU, published %6.0f: error %+5.1f%% (%s)", c.name, got, c.tokensPerGPU, 100*e, c.source)
		if c.gap != "" {
			t.Logf("    not held to the tolerance: %s", c.gap)
			continue
		}
		held = append(held, e)
		if math.Abs(e) > 0.25 {
			t.Errorf("%s: predicted %.0f tokens/s/GPU, published %.0f (%s): error %+.1f%% beyond 25%%", c.name, got, c.tokensPerGPU, c.source, 100*e)
		}
	}
	logGroups(t, by)
	signed, abs := medians(all)
	t.Logf("all: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(all), 100*abs, 100*signed)
	hs, ha := medians(held)
	t.Logf("without the known gaps: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(held), 100*ha, 100*hs)
	if len(all) != len(fp8Runs) || math.Abs(signed) > 0.10 {
		t.Errorf("signed median %+.1f%% over %d of %d runs: want within 10%% over all", 100*signed, len(all), len(fp8Runs))
	}
}

// logGroups logs each group's runs, median |error| and signed median, the groups in
// the order of their names.
func logGroups(t *testing.T, groups map[string][]float64) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(groups))
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	for _, k := range keys {
		signed, abs := medians(groups[k])
		t.Logf("%-*s %3d runs: median |error| %5.1f%%, signed median %+6.1f%%", width, k, len(groups[k]), 100*abs, 100*signed)
	}
}

// medians returns the median of errs and of their absolute values (the mean of the two
// middle ones for an even count).
func medians(errs []float64) (signed, abs float64) {
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		n := len(v)
		if n == 0 {
			return 0
		}
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	return med(errs), med(a)
}

// TestGB300AgainstB200Datasheets holds Megatron-Bridge's Llama 3 8B rows of one
// release, recipe and parallelism on three devices (NeMo 25.11: 8 GPUs, DP8, MBS 2,
// FP8-CS and FP8-MX on a B200, a GB200 and a GB300) against what the datasheets allow a
// GB300 over a B200. The GB300's published speed over the B200 (1.226 and 1.223) is
// beyond every rate a source states: the GB300 NVL72 datasheet's dense peaks over the
// HGX B200's are 2.5/2.25 = 1.111 in bf16 and fp8 alike, its HBM3e 8 against 7.7 TB/s,
// and its attention is priced at cuDNN's own GB300 rates (analytic's attention tables:
// Blackwell Ultra's doubled exponential units, 10.7 against 5 TeraExponentials/s as
// Verda's GB300 NVL72 post tabulates the datasheets, are in them; cuDNN's one B200 and
// GB300 pair measured in a single harness puts a causal forward and backward 1.20 to
// 1.29 times faster on the GB300, the tables 1.23 to 1.26: analytic's
// TestGB300OverB200AttentionPair). The planner already gives the GB300's matrix
// products the B200's fractions of the GB300's 2.5 PFLOP/s, the datasheet ratio itself.
// The bound lifts the rest to that ratio too (HBM bandwidth 1.111 times the B200's,
// each launch 1/1.111 of its time): every part of the step as much faster than on a
// B200 as the peaks allow, the attention at its measured rate. It gains 1.2 to 1.4
// points over the plan and leaves about 9 of the measured lead unexplained, so no
// device rate read from a datasheet, a MAMF table or cuDNN's benchmarks closes the
// GB300's pessimism on these rows; the GB200 runs 1.029 and 1.009 times the B200, under
// the 1.060 planned (its MAMF ratio, 1.044 bf16 and 1.053 fp8, on the products). What
// round 32 read for the GB300 and found no figure in: the Blackwell Ultra technical
// blog ("Inside NVIDIA Blackwell Ultra": 160 SMs in the full implementation, 15 PFLOP/s
// dense NVFP4) and its softmax blog (the doubled MUFU.EX2 rate, which cuDNN's GB300
// attention rates carry); Bekman's MAMF table (stas00/ml-engineering at 744d01e,
// 2026-08-22: B300 1,769 bf16 and 3,353.3 fp8, the B200's, no GB300 row; GB200 2,062
// MHz device-reported maximum SM clock, GB300's not disclosed); MLPerf Training v5.1
// (NVIDIA's Llama 3.1 405B GB300 and GB200 runs are NVFP4 at TP 2 against TP 4, a
// recipe the planner has not, and its Llama 3.1 8B configs are GB300's only).
// Megatron-Bridge's v0.2.0 to v0.2.2 perf configs set micro_batch_size=4 for the
// GB300's 8B fp8 runs (LLAMA3_8B_GB300_FP8_CS_BASE_CONFIG,
// scripts/performance/configs/llama3/workload_base_configs.py), where the table states
// MBS 2 and GA 8; planned at 4 the rows gain 0.8 and 0.6 points: the rows keep the
// table's.
func TestGB300AgainstB200Datasheets(t *testing.T) {
	if testing.Short() {
		t.Skip("plans six runs")
	}
	b200, gb300 := preset(t, "b200"), preset(t, "gb300")
	// the datasheets' dense peaks, GB300 NVL72 over HGX B200: 2.5/2.25 in bf16 and fp8
	peakRatio := gb300.Device.FLOPSPerSecond / b200.Device.FLOPSPerSecond
	if fp8 := gb300.Perf.FP8FLOPSPerSecond / b200.Perf.FP8FLOPSPerSecond; math.Abs(fp8-peakRatio) > 1e-9 || math.Abs(peakRatio-2.5/2.25) > 1e-9 {
		t.Fatalf("GB300 over B200 peaks: bf16 %.4f, fp8 %.4f; the datasheets give 2.5/2.25 both", peakRatio, fp8)
	}
	plan := func(c fp8Run, bound bool) float64 {
		r := c.request()
		if bound {
			gb := gb300.Perf
			r.Model.Architecture.MemoryEfficiency = gb.MemoryEfficiency * b200.Perf.MemoryBytesPerSecond * peakRatio / gb.MemoryBytesPerSecond
			ks := gb.KernelSeconds / peakRatio
			r.Model.Architecture.KernelSeconds = &ks
		}
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		return float64(c.gbs) * float64(r.Model.Architecture.Seq) / res.Step.StepSeconds / float64(c.gpus)
	}
	rows := map[string]fp8Run{}
	for _, c := range fp8Runs {
		if c.model == "llama3-8b" && c.gpus == 8 && c.source == "Megatron-Bridge perf summary, NeMo 25.11" {
			rows[c.device+" "+c.recipe] = c
		}
	}
	for _, recipe := range []string{"current", "mxfp8"} {
		b, g2, g3 := rows["b200 "+recipe], rows["gb200 "+recipe], rows["gb300 "+recipe]
		if b.gpus == 0 || g2.gpus == 0 || g3.gpus == 0 {
			t.Fatalf("%s: the B200, GB200 and GB300 rows of NeMo 25.11's Llama 3 8B are not all in fp8Runs", recipe)
		}
		pb, p2, p3, p3max := plan(b, false), plan(g2, false), plan(g3, false), plan(g3, true)
		measured, planned, bound := g3.tokensPerGPU/b.tokensPerGPU, p3/pb, p3max/pb
		t.Logf("%s: GB300 over B200 measured %.3f, planned %.3f, datasheet bound %.3f; GB300 over GB200 measured %.3f, planned %.3f; GB200 over B200 measured %.3f, planned %.3f",
			recipe, measured, planned, bound, g3.tokensPerGPU/g2.tokensPerGPU, p3/p2, g2.tokensPerGPU/b.tokensPerGPU, p2/pb)
		if bound < planned || bound > planned+0.03 {
			t.Errorf("%s: the datasheet bound %.3f should lie within 3 points above the plan's %.3f (only the memory-bound kernels' and launches' share moves)", recipe, bound, planned)
		}
		if bound >= measured {
			t.Errorf("%s: the datasheet bound %.3f now reaches the measured %.3f: the GB300's lead over the B200 is within its rates; re-read the notes (here and TestFP8PublishedRuns)", recipe, bound, measured)
		}
	}
}
