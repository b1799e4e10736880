package analytic

import (
	"fmt"
	"strings"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// DType is the element type of weights and activations in the forward and backward pass.
type DType string

// The supported element types.
const (
	BF16 DType = "bf16"
	FP16 DType = "fp16"
	FP32 DType = "fp32"
	// FP8: the transformer blocks' linear layers' products in fp8 at the device's fp8
	// rate (Transformer Engine's recipes, FP8Recipe), with inputs cast to fp8 first and
	// kept at 8 bits for the backward pass; weights (beside their fp8 copies), the other
	// activations, the attention core, the router and the LM head in bf16, as Megatron-LM
	// runs them.
	FP8 DType = "fp8"
)

// FP8Recipe is how an fp8 run scales its 8-bit tensors: Transformer Engine's recipes
// (transformer_engine.common.recipe: DelayedScaling, Float8CurrentScaling,
// Float8BlockScaling, MXFP8BlockScaling), which Megatron-LM selects with --fp8-recipe
// (delayed, tensorwise, blockwise, mxfp8). Each keeps different copies in memory and
// costs different conversions (recipeFigures, with their sources).
type FP8Recipe string

// The fp8 recipes.
const (
	// Delayed scaling: one scale per tensor from the largest magnitude seen over the
	// last 1,024 steps (amax_history_len's default), kept per fp8 GEMM operand.
	Delayed FP8Recipe = "delayed"
	// Current scaling: one scale per tensor from the tensor itself (an extra pass over
	// it before the cast); Megatron-LM's "tensorwise".
	Current FP8Recipe = "current"
	// Blockwise: an fp32 scale per 1 x 128 tile of activations and gradients and per
	// 128 x 128 block of weights, as DeepSeek-V3 trained (DeepSeek-AI 2024, section
	// 3.3); needs Perf.BlockFP8.
	Blockwise FP8Recipe = "blockwise"
	// MXFP8: OCP microscaling, an 8-bit power-of-two scale (E8M0) per 32 elements, in the
	// matrix units of Blackwell and CDNA 4; needs Perf.MXFP8.
	MXFP8 FP8Recipe = "mxfp8"
)

// FP8Recipes lists the recipes, the default (Delayed) first.
var FP8Recipes = []FP8Recipe{Delayed, Current, Blockwise, MXFP8}

// recipeFigures is what an fp8 recipe keeps and moves, per element, and how fast its
// products run. Sources: Transformer Engine's user guide ("FP8 Current Scaling", "FP8
// Blockwise Scaling", "MXFP8" pages, and the DelayedScaling API: amax_history_len 1024,
// fp32 amax history per quantized tensor); Micikevicius et al. 2022 ("FP8 Formats for
// Deep Learning", arXiv 2209.05433) for per-tensor scaling; the OCP Microscaling
// Formats (MX) v1.0 specification for E8M0 scales per 32 elements.
type recipeFigures struct {
	// inputBytes: bytes per element of an fp8 GEMM's input saved for the backward pass
	// (Transformer Engine saves the quantized input, in the layout the weight gradient's
	// product reads): 1 byte of data plus its scales (an fp32 per 128 elements for
	// blockwise, one byte per 32 for MXFP8; one per tensor otherwise).
	inputBytes float64
	// weightBytes: bytes per weight element of the fp8 copies kept through the step
	// beside the 16-bit weight and the fp32 master: Transformer Engine caches the
	// quantized weight across microbatches (is_first_microbatch) in two layouts, row-
	// and column-wise (the transpose the backward's products read: Hopper's fp8 tensor
	// cores take only the TN layout, and MX and block scales run along one dimension),
	// each with its scales.
	weightBytes float64
	// stateBytes: the scaling state per fp8 GEMM (its input, weight and output
	// gradient): delayed scaling keeps a 1,024-step fp32 amax history and a scale, an
	// inverse scale and an amax per operand; current scaling the last three.
	stateBytes float64
	// quantBytes: memory traffic per element of an activation or gradient quantized to
	// fp8 in both layouts (read 2 bytes, write 1 + 1 and the scales); current scaling
	// first reads the tensor once more for its amax.
	quantBytes float64
	// quantKernels: the launches of one such quantization. Current scaling runs four,
	// one after another: zero the amax, reduce the tensor to its amax, compute the scale
	// from it, then cast (Transformer Engine v2.8 to v2.12,
	// pytorch/csrc/quantizer.cpp Float8CurrentScalingQuantizer::quantize_impl:
	// nvte_compute_amax_with_config, whose common/recipe/current_scaling.cu launches
	// zero_amax_kernel and the amax reduction, nvte_compute_scale_from_amax and
	// nvte_quantize_v2), and a grouped linear quantizes each expert's rows on its own
	// (pytorch/csrc/extensions/cast.cpp multi_tensor_quantize_impl, "Currently only have
	// fused kernel for FP8 delayed scaling": the other quantizers' quantize in a loop).
	// The other recipes cast in one kernel (their scales come from the history or from
	// the blocks the cast itself reads).
	quantKernels float64
	// gemmRate: the products' rate relative to per-tensor fp8 at the same shape: 0.83 for
	// blockwise, whose per-block scales are applied in the main loop (vllm-project/vllm
	// pull 49363, H100, Gemma-4-31B's N = 12,288, K = 5,376: 263 TFLOP/s block-scaled
	// against 318 per-tensor at 64 rows); 0.94 for MXFP8, whose scales the matrix units
	// take natively but whose runs are 3.6-5.6% slower end to end than current scaling's
	// on the same systems and parallelism (NVIDIA Megatron-Bridge performance summary,
	// NeMo 25.11, Llama 3 8B on 8 B200, GB200, GB300: 29,521/30,624, 29,789/31,508,
	// 36,108/37,556 tokens/s per GPU; Llama 3.1 405B on 128 B200: 624/661), with the
	// products about 70% of the step.
	gemmRate float64
	// swizzleKernels: the launches that rearrange a weight's block scales into the
	// layout the matrix units read, before each product that reads the weight (the
	// forward's and the input gradient's; the weight gradient's reads no weight). MXFP8
	// only, one a pass: Transformer Engine's GEMM call swizzles an operand's E8M0 scales
	// unless they already carry GEMM-ready layout (swizzle_scales_for_gemm and
	// multi_tensor_swizzle_scales_for_gemm, pytorch/csrc/extensions/swizzle.cpp, v2.12
	// to v2.16: "Return early if scales are already swizzled"), and from v2.12 the
	// modules quantize their inputs and output gradients with optimize_for_gemm (Linear,
	// LayerNormLinear, LayerNormMLP, GroupedLinear's _get_quantizers), so those arrive
	// swizzled, while no weight quantizer sets it: the cached fp8 weight's scales are
	// swizzled again at every call (the fused grouped MLP likewise:
	// ops/fused/forward_grouped_mlp.py and backward_grouped_mlp.py clone and
	// grouped_swizzle_for_gemm each weight). Per-tensor and blockwise scaling need no
	// swizzle (swizzle_scales_for_gemm returns for their scaling modes). Before v2.12
	// (NeMo 25.11's v2.9) every MXFP8 operand was swizzled at every product, two launches
	// a product instead of one and the weight gradient's too: not priced, the planner
	// knows no Transformer Engine version. The bytes (one scale byte per 32 weight
	// elements, read and written) are a few hundred kilobytes a layer: only the launch
	// is priced.
	swizzleKernels float64
}

// figures returns the recipe's figures (Delayed's for an unknown recipe).
func (r FP8Recipe) figures() recipeFigures {
	const history = 1024 // DelayedScaling's amax_history_len default
	switch r {
	case Current:
		return recipeFigures{inputBytes: 1, weightBytes: 2, stateBytes: 3 * 3 * 4, quantBytes: 2 + 2 + 1 + 1, quantKernels: 4, gemmRate: 1}
	case Blockwise:
		return recipeFigures{inputBytes: 1 + 4.0/128, weightBytes: 2 * (1 + 4.0/(128*128)), quantBytes: 2 + 2*(1+4.0/128), quantKernels: 1, gemmRate: 0.83}
	case MXFP8:
		return recipeFigures{inputBytes: 1 + 1.0/32, weightBytes: 2 * (1 + 1.0/32), quantBytes: 2 + 2*(1+1.0/32), quantKernels: 1, gemmRate: 0.94, swizzleKernels: 1}
	}
	return recipeFigures{inputBytes: 1, weightBytes: 2, stateBytes: 3 * (history*4 + 3*4), quantBytes: 2 + 1 + 1, quantKernels: 1, gemmRate: 1}
}

// Precision says how a 16-bit model keeps its weights.
type Precision string

// The supported precisions.
const (
	// Pure: weights, gradients and optimizer state all in the 16-bit DType.
	Pure Precision = "pure"
	// Mixed: 16-bit weights and gradients for the passes, and fp32 master weights with
	// fp32 optimizer state (2 + 2 + 4 + 4 + 4 = 16 bytes per parameter with Adam, as in
	// the ZeRO paper, Rajbhandari et al. 2020, section 3.1: "(2 + 2 + K) Psi" with K = 12).
	Mixed Precision = "mixed"
	// MixedFP32Grads: as Mixed, but the gradients are accumulated and all-reduced in fp32
	// buffers, as Megatron-LM does (each parameter's main_grad, 4 bytes): 2 + 4 + 4 + 4 +
	// 4 = 18 bytes per parameter with Adam, 6 + 12/d with the distributed optimizer
	// (ZeRO-1) over d replicas (Megatron-LM, megatron/training/theoretical_memory_usage.py,
	// and docs "Distributed Optimizer": "fp32 grad" in its table of bytes per parameter).
	// The data-parallel all-reduce moves the fp32 gradients: twice Mixed's bytes.
	MixedFP32Grads Precision = "mixed-fp32-grads"
	// AMP is PyTorch's automatic mixed precision (torch.autocast): the parameters, their
	// gradients and the optimizer state stay fp32 (4 + 4 + 4 + 4 = 16 bytes per parameter
	// with Adam, no separate master copy), while the passes run in the 16-bit DType.
	// Autocast casts each matrix weight to 16 bits once per forward pass (its cast cache)
	// and the products save the 16-bit copy for their backward pass: 2 bytes per matrix
	// weight kept per microbatch in flight, counted with the activations, and a
	// memory-bound cast (4 bytes read, 2 written) in the forward pass and of its gradient
	// (2 read, 4 written) in the backward pass. Gradients all-reduce in fp32.
	AMP Precision = "amp"
	// DeepSpeedBF16 is DeepSpeed's BF16 optimizer (deepspeed/runtime/bf16_optimizer.py,
	// microsoft/DeepSpeed#1801, 2022-04-19, which Megatron-DeepSpeed runs with bf16): as
	// MixedFP32Grads, the fp32 gradients accumulated in one unsharded flat buffer and
	// all-reduced (get_grads_for_reduction returns fp32_groups_gradients_flat, then as
	// now), the master weights and optimizer state sharded over the data-parallel
	// replicas (its own ZeRO-1); but the 16-bit gradients that each backward pass writes
	// are not freed once added to the fp32 ones: the pipeline engine calls
	// update_hp_grads(clear_lp_grads=False), and clear_lp_grads runs at the start of the
	// next backward pass, so they stay through the all-reduce and the optimizer step.
	// 2 + 4 + 2 + 4 + 4 + 4 = 20 bytes per parameter with Adam, 8 + 12/d over d replicas;
	// the 2 bytes of 16-bit gradient kept are their own memory part (GradCopyBytes). dtype
	// bf16 only; sharding none or zero1 (DeepSpeed runs it with ZeRO stage 0 or 1).
	DeepSpeedBF16 Precision = "deepspeed-bf16"
)

// MaxShardingLevel is the highest ZeRO level (Sharding.Level) training in precision p
// runs with: 1 for DeepSpeedBF16 (DeepSpeed's BF16 optimizer shards the optimizer state
// only), 3 for the others.
func (p Precision) MaxShardingLevel() int {
	if p == DeepSpeedBF16 {
		return 1
	}
	return 3
}

// CommunicatedGradBytes is what precision p's data-parallel all-reduce moves of
// gradients kept in g bytes: g, but for DeepSpeedBF16 g/2. DeepSpeed's engine casts each
// flattened bucket to its communication_data_type before the all_reduce and copies the
// result back into the fp32 gradients (engine.py, allreduce_bucket, which the BF16
// optimizer's reduction reaches through pipe/engine.py's _bf16_reduce_grads and
// buffered_allreduce_fallback), and that type, unset in the config, is fp16 under fp16
// or any ZeRO stage, else bf16 under bf16 (communication_data_type, from
// microsoft/DeepSpeed#1487 of 2021-11-26, the same at #1801's merge 56c5223 of
// 2022-04-19; bf16 whenever bf16 is on since #3370 of 2023-04-25, after #2970's month
// of fp32). The BF16 optimizer runs
// under ZeRO stage 0 (pipe/engine.py: bf16 with stage 1 raises NotImplementedError;
// BigScience's tr11-176B-ml.slurm, "ZERO_STAGE=0 # important: bf16 must use z0! it
// implements its own zero stage 1 equivalent", and a DeepSpeed config without
// communication_data_type), so its fp32 gradients cross the network in bf16.
func (p Precision) CommunicatedGradBytes(g int64) int64 {
	if p == DeepSpeedBF16 {
		return g / 2
	}
	return g
}

// Precisions lists the precisions, the default (Mixed) first.
var Precisions = []Precision{Mixed, MixedFP32Grads, AMP, Pure, DeepSpeedBF16}

// Optimizer is the training optimizer, or None for inference.
type Optimizer string

// The supported optimizers.
const (
	// AdamW (and Adam): two moments per parameter.
	AdamW Optimizer = "adamw"
	Adam  Optimizer = "adam"
	// SGD with momentum: one buffer per parameter.
	SGD Optimizer = "sgd"
	// None: inference. Forward passes only: no gradients, no optimizer state, nothing kept
	// for a backward pass.
	None Optimizer = "none"
)

// Attention is the attention kernel.
type Attention string

// The supported attention kernels.
const (
	// Eager: scores materialised (b x heads x s x s), softmax and dropout kept for the
	// backward pass, as in Korthikanti et al. 2022.
	Eager Attention = "eager"
	// Flash: FlashAttention (Dao et al. 2022): no s^2 tensor is stored; the backward pass
	// recomputes the scores from Q, K, V, the output and the softmax statistics. Timed as
	// FlashAttention-2 (Dao 2023), the kernel PyTorch's scaled_dot_product_attention runs
	// as its flash backend and flash-attn 2.x provides.
	Flash Attention = "flash"
	// Flash3: FlashAttention-3 (Shah et al. 2024), Hopper's asynchronous kernel
	// (flash-attn's hopper/ build; Transformer Engine uses it where installed). Memory
	// as Flash.
	Flash3 Attention = "flash3"
	// CuDNN: cuDNN's fused attention (Transformer Engine's FusedAttention, Megatron-LM's
	// default on Hopper; PyTorch's cuDNN SDPA backend). Memory as Flash.
	CuDNN Attention = "cudnn"
	// FlashTriton: FlashAttention's Triton implementation (Dao-AILab/flash-attention,
	// flash_attn/flash_attn_triton.py, after Tillet's fused-attention tutorial), the
	// kernel LLM Foundry's attn_impl triton runs (its own copy, llmfoundry/models/
	// layers/flash_attn_triton.py, on the pre-MLIR Triton compiler); about half
	// FlashAttention-2's speed (attention.go). Memory as Flash.
	FlashTriton Attention = "flash-triton"
	// Flash1: FlashAttention (Dao et al. 2022) as flash-attn 1.x provides it, the kernel
	// Transformer Engine 0.8's DotProductAttention ran for causal 16-bit attention
	// (flash_attn_unpadded_func); at 41-60% of FlashAttention-2's speed on an H100
	// (attention.go). Memory as Flash.
	Flash1 Attention = "flash1"
)

// Recompute is the activation recomputation strategy of Korthikanti et al. 2022.
type Recompute string

// The supported recomputation strategies.
const (
	// NoRecompute keeps every activation the backward pass needs.
	NoRecompute Recompute = "none"
	// Selective recomputes the attention core (scores, softmax, dropout, weighted sum)
	// in the backward pass: the s^2 terms are not kept.
	Selective Recompute = "selective"
	// Full keeps only each transformer layer's input and reruns its forward pass in the
	// backward pass.
	Full Recompute = "full"
	// SelectiveOp is torchtitan's per-op selective activation checkpointing
	// (activation_checkpoint.mode "selective", selective_ac_option "op";
	// torchtitan/parallelisms/parallelize_llama.py _apply_ac_to_transformer_block and
	// _save_list at 9dec370): each transformer block is checkpointed with a policy that
	// saves the outputs of aten.mm (but every second one, counted from the block's
	// first), of SDPA's flash and memory-efficient kernels, and recomputes the rest in
	// the backward pass. In a Llama block (wq, wk, wv, wo, w1, w3, w2) that keeps the
	// query and value projections, the attention output and its softmax statistics,
	// the gate and the down projection beside the block's input, and reruns the key,
	// output and up projections, the norms, rotary embedding, SiLU, products and
	// residual adds (sacPolicy). With tensor parallelism the policy also saves the
	// output of c10d_functional.reduce_scatter_tensor (sequence parallelism's
	// reduce-scatter after the output and down projections) and not the all-gathers or
	// all-reduces: the backward's recompute gathers each sublayer's input again
	// (sacCommRerun). Dense blocks with a fused attention kernel.
	SelectiveOp Recompute = "selective-op"
)

// Dispatcher is how a mixture of experts moves tokens to their experts' devices and back.
type Dispatcher string

// The supported dispatchers.
const (
	// DispatchAllToAll: Megatron-Core's alltoall token dispatcher: every routed copy of a
	// token crosses to its expert's device, in the passes' 16-bit type.
	DispatchAllToAll Dispatcher = "alltoall"
	// DispatchDeepEP: Megatron-Core's flex dispatcher with DeepSeek's DeepEP kernels
	// (moe_flex_dispatcher_backend "deepep", --moe-enable-deepep; DeepSeek-V3 Technical
	// Report, section 3.2.2): a token crosses the network once per destination node and
	// NVLink once per destination device in it, in 16 bits both ways whatever the dtype.
	// DeepEP's Buffer.dispatch moves fp8 only when handed an (fp8 data, scales) pair;
	// Megatron-Core hands it the 16-bit hidden states (FusedDispatch in
	// megatron/core/transformer/moe/fused_a2a.py calls buffer.dispatch(x) with the
	// tensor MoEFlexTokenDispatcher received, core_v0.15.0 to core_v0.19.0, the releases
	// of NeMo 25.11 to 26.06), and the experts quantize what they receive.
	DispatchDeepEP Dispatcher = "deepep"
	// DispatchDeepEPFP8: DeepEP with fp8 dispatch, as DeepSeek-V3 was trained (its report,
	// section 3.3.2: the activations before the experts' up-projections are quantized to
	// fp8 and then dispatched; the combine stays in 16 bits): routed as DispatchDeepEP;
	// with dtype fp8 the dispatch moves 1 byte per element and a 4-byte scale per 128,
	// the combine 16 bits. Not what Megatron-Core runs (DispatchDeepEP).
	DispatchDeepEPFP8 Dispatcher = "deepep-fp8"
	// DispatchHybridEP: Megatron-Core's flex dispatcher with the HybridEP backend
	// (moe_flex_dispatcher_backend "hybridep", DeepEP's hybrid-ep branch): routed as
	// DeepEP routes (once per destination node over the network, NVLink within it), and
	// in 16 bits whatever the dtype: Megatron-Core's HybridEP path refuses fp8 dispatch
	// (megatron/core/transformer/moe/fused_a2a.py: "HybridEP dispatcher does not support
	// fp8 dispatch now").
	DispatchHybridEP Dispatcher = "hybridep"
)

// AuxLoss is the load-balancing loss a mixture of experts' router adds in training, as
// Megatron-Core names it (moe_router_load_balancing_type).
type AuxLoss string

// The supported load-balancing losses.
const (
	// AuxLossNone: no load-balancing loss (Megatron-Core's "none"; Megatron-Bridge's
	// gpt-oss bridge sets it).
	AuxLossNone AuxLoss = "none"
	// AuxLossMicrobatch: the Switch Transformer's loss over each microbatch's tokens
	// (Megatron-Core's "aux_loss"; Megatron-Bridge's Qwen3 MoE bridge sets it, with
	// coefficient 1e-3).
	AuxLossMicrobatch AuxLoss = "aux_loss"
	// AuxLossSequence: the same loss per sequence, summed over the microbatch's
	// sequences and divided by their number (Megatron-Core's "seq_aux_loss";
	// Megatron-Bridge's DeepSeek-V3 bridge sets it, with coefficient 1e-4).
	AuxLossSequence AuxLoss = "seq_aux_loss"
)

// flex reports whether the dispatcher is a backend of Megatron-Core's flex token
// dispatcher (DeepEP, with or without fp8 dispatch, or HybridEP), whose dispatch hands the experts their rows
// already grouped by local expert: no regrouping of the received chunks (the
// alltoall dispatcher's sort_chunks_by_idxs, shape.moe).
func (d Dispatcher) flex() bool {
	return d == DispatchDeepEP || d == DispatchDeepEPFP8 || d == DispatchHybridEP
}

// Split says how finely blocks become pipeline layers.
type Split string

// The supported splits.
const (
	// Blocks: one layer per transformer block.
	Blocks Split = "block"
	// Sublayers: the attention part and the MLP part of each block are separate layers.
	Sublayers Split = "sublayer"
)

// Tie says where a tied embedding matrix lives when the model is pipelined.
type Tie string

// The supported placements of a tied embedding.
const (
	// TieCopy: the embedding and the LM head each hold a copy (weights, gradients,
	// optimizer state), and the two gradients are all-reduced once per step, as
	// Megatron-LM does; the stages are free.
	TieCopy Tie = "copy"
	// TieStage: the embedding and the head must share one stage (model.Layer.TieGroup),
	// which holds the matrix once. Every layer between them is then in that stage too.
	TieStage Tie = "stage"
)

// Options describe the run being estimated. The zero values of the enumerations mean
// their defaults: bf16, mixed precision (pure for fp32), AdamW, flash attention, no
// recomputation, one layer per block, tied embeddings copied.
type Options struct {
	// Batch is the microbatch size b (sequences).
	Batch int `json:"batch"`
	// Microbatches is the number of microbatches a step accumulates gradients over,
	// where the framework prices their accumulation per microbatch
	// (cluster.Framework.ParamGradAccumulate: each after the first adds its gradients
	// to .grad); 0 or 1: nothing accumulates. Set by the request for such frameworks
	// only.
	Microbatches int `json:"microbatches,omitempty"`
	// Seq is the sequence length s (tokens).
	Seq   int   `json:"seq"`
	DType DType `json:"dtype,omitempty"`
	// FP8Recipe is the fp8 recipe of dtype fp8 (default Delayed); a recipe without a
	// dtype means dtype fp8.
	FP8Recipe FP8Recipe `json:"fp8_recipe,omitempty"`
	// FP8ParamGather keeps the fp8 products' weights in fp8 only, without their 16-bit
	// copy: Megatron-LM's --fp8-param-gather (Transformer Engine's fp8 primary weights,
	// which Megatron-Bridge's fp8 recipes turn on), with the fp32 master weights in the
	// optimizer. Needs dtype fp8 and mixed precision.
	FP8ParamGather bool `json:"fp8_param_gather,omitempty"`
	// FP8FSDPAllGather casts each FSDP shard of the fp8 products' weights to fp8 before
	// it is all-gathered, so the all-gather moves, and the gathered copy holds, 1 byte a
	// weight (fp8Gathered); the shards, the other weights and the gradients' reduce-scatter
	// are unchanged. torchao's Float8LinearConfig(enable_fsdp_float8_all_gather=True),
	// torchao/float8/fsdp_utils.py at eab345c (torchtitan's December 2024 runs) and
	// 0afa4c1 (June 2025): WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather
	// returns the fp8 tensor's _data (and its scale as metadata) for FSDP2 to gather, and
	// fsdp_post_all_gather wraps the gathered data in a Float8Tensor, which Float8Linear
	// uses as is (its weight is not cast again). FSDP2 calls the pre-all-gather hook at
	// every unshard, so a backward pass's re-gather (reshard_after_forward) moves fp8 too;
	// the gradient flows to the high-precision parameter and is reduce-scattered as
	// before. precompute_float8_dynamic_scale_for_fsdp takes every weight's amax after
	// the optimizer step in one all-reduce a step (torch._foreach_norm, stacked: a few
	// hundred floats), not priced. Needs dtype fp8 under a per-tensor recipe, sharding
	// zero3 or hsdp over two devices or more with FullyShard (the hooks are FSDP2's),
	// and training.
	FP8FSDPAllGather bool `json:"fp8_fsdp_all_gather,omitempty"`
	// TrainMetrics is the number of training metrics the loop computes on each
	// microbatch's logits after its backward pass (Composer's Trainer: a cross-entropy
	// over the logits each; LM head's trainMetrics). Training only.
	TrainMetrics int       `json:"train_metrics,omitempty"`
	Precision    Precision `json:"precision,omitempty"`
	Optimizer    Optimizer `json:"optimizer,omitempty"`
	Attention    Attention `json:"attention,omitempty"`
	// FP8Attention runs the attention core in fp8 (Transformer Engine's fp8_dpa,
	// Megatron-LM's --fp8-dot-product-attention): cuDNN's fp8 fused attention, at its
	// published fp8 rates (attention.go) where cuDNN publishes them for the device,
	// head dimension and pass, per-tensor-scaled fp8 under the delayed and current
	// recipes and MXFP8 under mxfp8. Needs dtype fp8 and attention cudnn.
	FP8Attention bool      `json:"fp8_attention,omitempty"`
	Recompute    Recompute `json:"recompute,omitempty"`
	// RecomputeModules is what selective recomputation reruns (Modules); none named means
	// the attention core. Only with Recompute Selective.
	RecomputeModules Modules `json:"recompute_modules,omitempty"`
	Split            Split   `json:"split,omitempty"`
	Tie              Tie     `json:"tie,omitempty"`
	// DataParallel is the number of data-parallel replicas (0 means 1).
	DataParallel int `json:"data_parallel,omitempty"`
	// Sharding is how the model state is sharded over ShardGroup devices (ZeRO,
	// Rajbhandari et al. 2020): none, zero1 (optimizer state and fp32 master weights),
	// zero2 (and gradients), zero3 (and weights: PyTorch FSDP's FULL_SHARD, FSDP2's
	// fully_shard) or hsdp (zero3 within a shard group, replicated across groups).
	Sharding Sharding `json:"sharding,omitempty"`
	// ShardGroup is the number of devices the state is sharded over (0: DataParallel
	// times Context, the devices that hold the same layers; for hsdp its shard group).
	ShardGroup int `json:"shard_group,omitempty"`
	// NoPrefetch: with zero3 or hsdp, a layer's weights are gathered when it runs, not
	// while the layer before it runs, so one gathered layer is held at a time, not two
	// (PyTorch FSDP2's default prefetches the next layer's all-gather: torch.distributed.fsdp
	// fully_shard docs, "implicit prefetching").
	NoPrefetch bool `json:"no_prefetch,omitempty"`
	// KeepGathered: with zero3 or hsdp in training, each layer's weights stay gathered
	// (whole, in the 16-bit dtype) from their first forward pass to the end of the step,
	// and its gradients accumulate whole in fp32 over the microbatches, reduce-scattered
	// once after the last backward pass (ReshardStep). PyTorch FSDP2 under
	// torch.distributed.pipelining runs so: the stage's backward_maybe_with_nosync
	// (torch/distributed/pipelining/stage.py) calls set_reshard_after_backward(False) and
	// set_requires_gradient_sync(False) for every microbatch but the last, so the
	// unsharded gradients are kept and FSDPParam.to_accumulated_grad_if_needed upcasts
	// them to the reduce dtype (fp32 in torchtitan: training.mixed_precision_reduce);
	// torchtitan (parallelize_llama.py apply_fsdp, 9dec370) also passes
	// reshard_after_forward=False with PP. Per parameter this holds, beside the shards,
	// the 16-bit weight and a 4-byte gradient (KeptGatheredBytesPerParam); a layer's
	// working memory then gathers nothing, and only its 16-bit gradient passes through
	// before it is added to the fp32 one.
	KeepGathered bool `json:"keep_gathered,omitempty"`
	// FullyShard: the zero3 or hsdp sharding is PyTorch FSDP2's fully_shard, whose
	// parameters are sharded one by one (DTensors), not as one flat buffer, so each
	// all-gather's output is copied out into the unsharded parameters, and each
	// reduce-scatter's input is copied in from the unsharded gradients, on the compute
	// stream's path (fullyShardCopies). FSDP1's flat parameter and DeepSpeed ZeRO-3
	// gather into the parameters' own storage: not set for them.
	FullyShard bool `json:"fully_shard,omitempty"`
	// ReduceFP32: the gradients are reduce-scattered in fp32 (FSDP2's
	// MixedPrecisionPolicy reduce_dtype=torch.float32, as torchtitan sets it), so the
	// reduce-scatter's copy-in writes them in fp32.
	ReduceFP32 bool `json:"reduce_fp32,omitempty"`
	// Context is the context-parallel degree c (0 means 1): each sequence is split into
	// c parts on c devices (Megatron-LM's context parallelism, Liu et al. 2023's ring
	// attention with causal load balancing, or DeepSpeed-Ulysses' all-to-all, Jacobs et
	// al. 2023). Every per-token tensor and product is divided by c; each device's
	// queries attend to the whole sequence's keys, exchanged over the target's TensorLink
	// (the context group sits in a node).
	Context       int           `json:"context_parallel,omitempty"`
	ContextMethod ContextMethod `json:"context_method,omitempty"`
	// ContextInner is, with ContextMethod Hierarchical, the size of the all-to-all
	// group inside the context group (Megatron-LM's hierarchical_context_parallel_sizes,
	// first entry): it must divide Context, and the ring runs over Context/ContextInner
	// such groups. The all-to-all crosses the target's TensorLink (the inner group sits
	// in a node beside the tensor group) and the ring its ContextLink.
	ContextInner int `json:"context_inner,omitempty"`
	// TensorParallel is t, the Megatron-style tensor-parallel degree (0 means 1): the
	// attention heads, the MLP's width and the vocabulary are split over t devices, each
	// transformer block all-reduces its b x s x h output twice in the forward pass and
	// twice in the backward pass over the target's TensorLink. Every figure of the
	// estimate is then one device's of the group. t must divide the query heads, the
	// key/value heads and the MLP width.
	TensorParallel int `json:"tensor_parallel,omitempty"`
	// SequenceParallel (Korthikanti et al. 2022) splits along the sequence what tensor
	// parallelism leaves replicated (norms, dropout, residuals): their activations are
	// divided by t too, and each all-reduce becomes a reduce-scatter and an all-gather of
	// the same cost. No effect with t = 1.
	SequenceParallel bool `json:"sequence_parallel,omitempty"`
	// ExpertParallel is the expert-parallel degree EP of a mixture of experts (0 means
	// 1): each device of an EP group holds NumExperts/EP experts, and every mixture
	// layer dispatches each token's k copies to the devices of its experts and combines
	// the results with two all-to-alls in the forward pass and two in the backward pass
	// (Lepikhin et al. 2020, GShard; Megatron-Core's alltoall token dispatcher), over the
	// target's ExpertLink and ExpertInterLink.
	ExpertParallel int `json:"expert_parallel,omitempty"`
	// ExpertTensorParallel is the tensor-parallel degree of each expert (Megatron-Core's
	// expert_tensor_parallel_size; 0 means TensorParallel, its default): an expert's
	// width is split over it, and the tokens an EP rank receives are all-gathered over
	// it before the experts and reduce-scattered after.
	ExpertTensorParallel int `json:"expert_tensor_parallel,omitempty"`
	// ExpertImbalance is how many times the mean routed tokens the busiest device of an
	// EP group receives (0 means 1, perfect balance). It scales the experts' time,
	// memory and all-to-all bytes on the critical path: a step waits for the busiest
	// device.
	ExpertImbalance float64 `json:"expert_imbalance,omitempty"`
	// CapacityFactor, when > 0, caps each expert's tokens at CapacityFactor times the
	// mean (GShard's capacity; Megatron-Core's --moe-expert-capacity-factor), dropping
	// the rest: the busiest device then computes min(ExpertImbalance, CapacityFactor)
	// times the mean. 0: dropless routing (every token reaches its experts).
	CapacityFactor float64 `json:"capacity_factor,omitempty"`
	// ExpertOverlap hides each mixture layer's dispatch and combine all-to-alls behind
	// an adjacent microbatch's computation: the forward pass's behind the layer's
	// backward computation and the backward pass's behind its forward computation, as
	// Megatron-Core's combined 1F1B schedule (--overlap-moe-expert-parallel-comm,
	// "Combined 1F1B: Expert-Parallel All-to-All Overlap") and DeepSeek-V3's DualPipe
	// (DeepSeek-V3 Technical Report, section 3.2.1) pair the forward of one microbatch
	// with the backward of another; of the all-to-all time, the part that runs beside
	// the paired computation hides (expertOverlapHidden, as measured under combined
	// 1F1B). Training only; not with full recomputation (Megatron-Core's compatibility
	// rule).
	ExpertOverlap bool `json:"expert_overlap,omitempty"`
	// ExpertFusedMLP runs each mixture layer's routed experts as Transformer Engine's
	// fused grouped MLP (Megatron-Bridge's cutedsl_fused_grouped_mlp): cuDNN's CuTe DSL
	// grouped GEMMs with the gated activation, the routing probabilities and the MXFP8
	// quantization of the activation's output in the first product's epilogue, and the
	// activation's gradient and the quantization of the first product's output
	// gradient in the second product's backward epilogue (shape.moe). Needs dtype
	// fp8 with fp8_recipe mxfp8 (the fusion's only recipe), a mixture of experts with a
	// gated MLP, on a Blackwell GPU of compute capability 10.x (b200, gb200, b300,
	// gb300: the kernels are sm100's).
	ExpertFusedMLP bool `json:"expert_fused_mlp,omitempty"`
	// Dispatcher moves the tokens to the experts and back (default alltoall).
	Dispatcher Dispatcher `json:"dispatcher,omitempty"`
	// MoEAuxLoss is the router's load-balancing loss in training (default none), priced
	// as Megatron-Core computes it with its fused router (shape.auxLoss). Mixtures of
	// experts only.
	MoEAuxLoss AuxLoss `json:"moe_aux_loss,omitempty"`
	// MoEForceBalance replaces the router's logits with random ones, as Megatron-Core's
	// moe_router_force_load_balancing does for benchmarks (shape.randomLogits): the
	// routing is balanced, so ExpertImbalance must be 1. Mixtures of experts only.
	MoEForceBalance bool `json:"moe_force_load_balancing,omitempty"`
	// TensorCommOverlap hides a sublayer's tensor-parallel all-gather and
	// reduce-scatter behind its own linear layers' products, as Transformer Engine's
	// userbuffers do under Megatron-LM's --tp-comm-overlap (the all-gather split in
	// chunks, each chunk's product running while the next arrives; NeMo's performance
	// recipes turn it on with tensor and sequence parallelism): each pass adds the
	// communication its products do not cover, and at least the first of t chunks'.
	// Needs sequence parallelism.
	TensorCommOverlap bool `json:"tensor_comm_overlap,omitempty"`
	// TensorCommAsync: the overlap (TensorCommOverlap) is PyTorch's asynchronous tensor
	// parallelism (Wang et al., "Introducing Async Tensor Parallelism in PyTorch",
	// PyTorch forum, 2024; torchtitan's --parallelism.enable_async_tensor_parallel),
	// which hides only what torch.compile's micro-pipeline pass fuses
	// (torch/_inductor/fx_passes/micro_pipeline_tp.py): an all-gather whose result a
	// product takes as its left operand (fused_all_gather_matmul) and a reduce-scatter of
	// one product's output (fused_matmul_reduce_scatter). That is every collective of the
	// forward pass (and of its rerun under full recomputation) and the backward pass's
	// all-gather of the output gradient before the row-parallel projection; the backward
	// reduce-scatter of a sublayer's input gradient is fused only where one product makes
	// that gradient: where several projections read the input (piece.bwdGradSum) autograd
	// adds their gradients first, and the reduce-scatter of the sum runs exposed, as
	// without overlap. Transformer Engine's userbuffers overlap it too (false). The
	// fused operators decompose their products into t (calc.asyncChunks) and add
	// copies of their own on the compute stream: each all-gather's own shard copied
	// into symmetric memory, each fused reduce-scatter's t partial outputs summed in
	// one kernel (asyncCopies).
	TensorCommAsync bool `json:"tensor_comm_async,omitempty"`
	// TensorCommConfig names the userbuffers config Transformer Engine's overlap
	// (TensorCommOverlap without TensorCommAsync) runs with: "" or te-default
	// (TEDefaultUserbuffers: initialize_ub's defaults) or one of the tuned configs
	// NVIDIA's recipes pass as tp_comm_overlap_cfg (UserbuffersConfigNames, read from
	// Megatron-Bridge's comm_overlap.py), whose per-GEMM methods, num_sm, set_sm_margin
	// and num_splits calc.userbuffersChunks prices. A tuned config must be of the run's
	// hidden size, tensor-parallel degree and device family, and an fp8 one needs fp8
	// (checkUserbuffersConfig).
	TensorCommConfig string `json:"tensor_comm_config,omitempty"`
}

// Sharding is a ZeRO stage (Options.Sharding).
type Sharding string

// The shardings of the model state over the data-parallel devices.
const (
	NoSharding Sharding = "none"
	ZeRO1      Sharding = "zero1"
	ZeRO2      Sharding = "zero2"
	ZeRO3      Sharding = "zero3"
	HSDP       Sharding = "hsdp"
)

// Level is the ZeRO stage: 0 none, 1 optimizer state, 2 and gradients, 3 and weights
// (hsdp: 3 within its shard group).
func (s Sharding) Level() int {
	switch s {
	case ZeRO1:
		return 1
	case ZeRO2:
		return 2
	case ZeRO3, HSDP:
		return 3
	}
	return 0
}

// ContextMethod is how context parallelism exchanges keys and values.
type ContextMethod string

// The context-parallel methods.
const (
	// Ring: ring attention (Liu et al. 2023; Megatron-LM's and Transformer Engine's
	// p2p context parallelism): c - 1 point-to-point steps per attention layer pass each
	// device's keys and values around the ring (and their gradients in the backward
	// pass), each overlapped with the attention on the block already received. Causal
	// models are load-balanced (each device holds chunks i and 2c-1-i of 2c), so every
	// device does 1/c of the causal attention. Through Transformer Engine (Megatron-Core's
	// framework modes, shape.teContext) its steps are separate kernel calls at their own
	// rates (attentionRates) among copies and merges of their own (teRingCopies).
	Ring ContextMethod = "ring"
	// AllToAll: DeepSpeed-Ulysses (Jacobs et al. 2023): an all-to-all turns the sequence
	// split into a split of the heads before the attention core (Q, K, V) and back after
	// it (the output), and again for their gradients; not overlapped. c must divide the
	// query and key/value heads on a device.
	AllToAll ContextMethod = "all-to-all"
	// Hierarchical: all-to-all inside groups of ContextInner devices, ring attention
	// between the Context/ContextInner groups (Megatron-LM's --cp-comm-type a2a+p2p with
	// --hierarchical-context-parallel-sizes; Transformer Engine's
	// AttnFuncWithCPAndKVP2P behind an all-to-all, after Fang and Zhao 2024's USP,
	// "A Unified Sequence Parallelism Approach for Long Context Generative AI"). The
	// all-to-all makes each device hold ContextInner times the tokens with
	// 1/ContextInner of the heads, so each ring step still passes the device's
	// e*b*(s/c)*2*kv bytes of keys and values, in Context/ContextInner - 1 steps.
	// ContextInner must divide the heads on a device.
	Hierarchical ContextMethod = "hierarchical"
	// AllGather: PyTorch's experimental context parallelism
	// (torch.distributed.tensor.experimental.context_parallel, as of 2024-12 and 2025)
	// with its default rotate method, allgather (torchtitan's default too). The ring's
	// c steps run on blocks as Ring's, load-balanced the same way, but each pass
	// all-gathers every device's keys and values at once, behind its first step's
	// attention only (_AllGatherRotater); in the backward pass it gathers them again, and
	// after every step passes the keys' and values' gradients, accumulated in fp32, to
	// the next device (ft_c.permute_tensor), each behind the next step's attention, the
	// last one exposed. Step 0 attends causally over the device's own tokens, the c - 1
	// others without a mask over half-blocks (all of Q against the first half of a lower
	// rank's K and V, or the second half of Q against all of a higher rank's), and the
	// partial outputs and gradients are merged and accumulated in fp32 after every step
	// (_SDPAMerger, convert_to_f32). Its flash kernel takes as many key and value heads
	// as query heads, so the keys and values passed are the query heads' width (a model
	// repeats its grouped heads before the call, as torchtitan's Llama does:
	// repeat_kv). Under torch.compile (cluster.Framework.TracedCommWaits) every one of
	// these exchanges waits at once. During the core a device holds the other devices'
	// keys and values gathered, and the fp32 output, or backward the fp32 gradients and
	// the buffers sent and received.
	AllGather ContextMethod = "all-gather"
)

// Bounds that keep every byte count exact and far from overflow.
const (
	maxSeq    = 1 << 20
	maxBatch  = 1 << 20
	maxTokens = 1 << 26
	maxDP     = 1 << 20
	maxTP     = 1 << 10
	maxEP     = 1 << 12
	// maxImbalance bounds ExpertImbalance and CapacityFactor (a device getting all of an
	// EP group's tokens is EP times the mean).
	maxImbalance = 1 << 12
)

// Inference reports whether the options describe inference (no optimizer).
func (o Options) Inference() bool { return o.Optimizer == None }

// StepTokens is the tokens a step of one microbatch processes over all the
// data-parallel replicas: Batch x Seq x DataParallel (0 replicas meaning 1), the
// numerator of Total.TokensPerSecond.
func (o Options) StepTokens() int64 {
	return int64(o.Batch) * int64(o.Seq) * int64(max(1, o.DataParallel))
}

// withDefaults fills the enumerations' defaults.
func (o Options) withDefaults() Options {
	if o.DType == "" && o.FP8Recipe != "" {
		o.DType = FP8
	}
	if o.DType == "" {
		o.DType = BF16
	}
	if o.DType == FP8 && o.FP8Recipe == "" {
		o.FP8Recipe = Delayed
	}
	if o.Precision == "" {
		o.Precision = Mixed
		if o.DType == FP32 {
			o.Precision = Pure
		}
	}
	if o.Optimizer == "" {
		o.Optimizer = AdamW
	}
	if o.Attention == "" {
		o.Attention = Flash
	}
	if o.Recompute == "" {
		o.Recompute = NoRecompute
	}
	if o.Split == "" {
		o.Split = Blocks
	}
	if o.Tie == "" {
		o.Tie = TieCopy
	}
	if o.DataParallel == 0 {
		o.DataParallel = 1
	}
	if o.TensorParallel == 0 {
		o.TensorParallel = 1
	}
	if o.Sharding == "" {
		o.Sharding = NoSharding
	}
	if o.Context == 0 {
		o.Context = 1
	}
	if o.ContextMethod == "" {
		o.ContextMethod = Ring
	}
	if o.ShardGroup == 0 {
		o.ShardGroup = o.DataParallel * o.Context
	}
	if o.ExpertParallel == 0 {
		o.ExpertParallel = 1
	}
	if o.ExpertTensorParallel == 0 {
		o.ExpertTensorParallel = o.TensorParallel
	}
	if o.ExpertImbalance == 0 {
		o.ExpertImbalance = 1
	}
	if o.Dispatcher == "" {
		o.Dispatcher = DispatchAllToAll
	}
	if o.MoEAuxLoss == "" {
		o.MoEAuxLoss = AuxLossNone
	}
	return o
}

// expertLoad is the routed tokens the busiest device computes, as a multiple of the
// mean: the imbalance, capped by the capacity factor where tokens are dropped.
func (o Options) expertLoad() float64 {
	if o.CapacityFactor > 0 {
		return min(o.ExpertImbalance, o.CapacityFactor)
	}
	return o.ExpertImbalance
}

// ExpertDataParallel is how many devices hold a copy of each expert shard: the
// expert-data-parallel size of Megatron-Core, data x context x tensor / (EP x expert
// tensor) for one pipeline stage.
func (o Options) ExpertDataParallel() int {
	o = o.withDefaults()
	n := o.DataParallel * o.Context * o.TensorParallel / (o.ExpertParallel * o.ExpertTensorParallel)
	return max(1, n)
}

// Validate checks the options (after defaults); errors name the option.
func (o Options) Validate() error {
	o = o.withDefaults()
	var es model.Errors
	if o.Batch < 1 || o.Batch > maxBatch {
		es.Add("batch", "must be between 1 and %d, got %d", maxBatch, o.Batch)
	}
	if o.Seq < 1 || o.Seq > maxSeq {
		es.Add("seq", "must be between 1 and %d, got %d", maxSeq, o.Seq)
	}
	if len(es) == 0 && int64(o.Batch)*int64(o.Seq) > maxTokens {
		es.Add("batch", "batch * seq must be at most %d tokens, got %d", maxTokens, int64(o.Batch)*int64(o.Seq))
	}
	oneOf(&es, "dtype", string(o.DType), BF16, FP16, FP32, FP8)
	oneOf(&es, "precision", string(o.Precision), Pure, Mixed, MixedFP32Grads, AMP, DeepSpeedBF16)
	if o.Precision == DeepSpeedBF16 {
		switch {
		case o.Optimizer == None:
			es.Add("precision", "deepspeed-bf16 is DeepSpeed's BF16 optimizer: it applies to training, not inference")
		case o.DType != BF16:
			es.Add("precision", "deepspeed-bf16 is DeepSpeed's BF16 optimizer: it needs dtype bf16, got %s", o.DType)
		case o.Sharding.Level() > o.Precision.MaxShardingLevel():
			es.Add("precision", "deepspeed-bf16 is DeepSpeed's BF16 optimizer, which shards the optimizer state only (ZeRO-1): it needs sharding none or zero1, got %s", o.Sharding)
		}
	}
	if o.DType == FP8 {
		oneOf(&es, "fp8_recipe", string(o.FP8Recipe), FP8Recipes...)
	} else if o.FP8Recipe != "" {
		es.Add("fp8_recipe", "applies to dtype fp8, got dtype %s", o.DType)
	}
	if o.FP8ParamGather {
		switch {
		case o.DType != FP8:
			es.Add("fp8_param_gather", "applies to dtype fp8 (the fp8 products' weights kept in fp8), got dtype %s", o.DType)
		case o.Optimizer != None && o.Precision != Mixed && o.Precision != MixedFP32Grads:
			es.Add("fp8_param_gather", "needs fp32 master weights beside the fp8 ones: precision mixed or mixed-fp32-grads, got %s", o.Precision)
		}
	}
	if o.FP8FSDPAllGather {
		switch {
		case o.DType != FP8:
			es.Add("fp8_fsdp_all_gather", "applies to dtype fp8 (torchao casts the fp8 products' weight shards to fp8 before the all-gather), got dtype %s", o.DType)
		case o.FP8Recipe != Delayed && o.FP8Recipe != Current:
			es.Add("fp8_fsdp_all_gather", "needs a per-tensor recipe, delayed or current (torchao's FSDP float8 all-gather is for tensorwise scales), got fp8_recipe %s", o.FP8Recipe)
		case o.Optimizer == None:
			es.Add("fp8_fsdp_all_gather", "applies to training (FSDP2's all-gather of sharded weights)")
		case o.Sharding.Level() < 3 || !o.FullyShard:
			es.Add("fp8_fsdp_all_gather", "needs FSDP2: sharding zero3 or hsdp with fully_shard (the hooks torchao sets are FSDP2's), got sharding %q, fully_shard %t", o.Sharding, o.FullyShard)
		case o.ShardGroup < 2:
			es.Add("fp8_fsdp_all_gather", "needs the weights sharded over two devices or more (nothing is all-gathered), got shard group %d", o.ShardGroup)
		case o.FP8ParamGather:
			// torchao's WeightWithDynamicFloat8CastTensor wraps a high-precision weight and
			// casts its shard at each gather; fp8 primary weights have no such weight.
			es.Add("fp8_fsdp_all_gather", "casts the 16-bit weights' shards to fp8 at each gather, which fp8_param_gather's fp8 primary weights (Megatron-Core's, without a 16-bit copy) do not have: set one of them")
		}
	}
	if o.TrainMetrics < 0 {
		es.Add("train_metrics", "must be >= 0, got %d", o.TrainMetrics)
	}
	oneOf(&es, "optimizer", string(o.Optimizer), AdamW, Adam, SGD, None)
	oneOf(&es, "attention", string(o.Attention), Eager, Flash, Flash3, CuDNN, FlashTriton, Flash1)
	if o.FP8Attention {
		switch {
		case o.DType != FP8:
			es.Add("fp8_attention", "applies to dtype fp8 (Transformer Engine's fp8 attention runs under an fp8 recipe), got dtype %s", o.DType)
		case o.Attention != CuDNN:
			es.Add("fp8_attention", "needs attention cudnn (Transformer Engine runs fp8 attention in cuDNN's fused kernel only), got attention %s", o.Attention)
		}
	}
	if o.ExpertFusedMLP && (o.DType != FP8 || o.FP8Recipe != MXFP8) {
		es.Add("expert_fused_mlp", "needs dtype fp8 with fp8_recipe mxfp8 (Transformer Engine fuses the grouped MLP under the MXFP8 recipe only), got dtype %s, fp8_recipe %q", o.DType, o.FP8Recipe)
	}
	oneOf(&es, "recompute", string(o.Recompute), NoRecompute, Selective, Full, SelectiveOp)
	if o.Recompute == SelectiveOp {
		if o.Attention == Eager {
			es.Add("recompute", "selective-op saves the fused attention kernel's output (torchtitan's SDPA): needs a fused attention, got attention %s", o.Attention)
		}
	}
	if o.RecomputeModules != 0 && o.Recompute != Selective {
		es.Add("recompute_modules", "applies to selective recomputation, got recompute %s", o.Recompute)
	}
	oneOf(&es, "split", string(o.Split), Blocks, Sublayers)
	oneOf(&es, "tie", string(o.Tie), TieCopy, TieStage)
	oneOf(&es, "dispatcher", string(o.Dispatcher), DispatchAllToAll, DispatchDeepEP, DispatchDeepEPFP8, DispatchHybridEP)
	oneOf(&es, "moe_aux_loss", string(o.MoEAuxLoss), AuxLossNone, AuxLossMicrobatch, AuxLossSequence)
	if o.DType == FP32 && o.Precision != Pure && o.Precision != DeepSpeedBF16 { // deepspeed-bf16: refused above
		es.Add("precision", "%s keeps fp32 weights or master weights beside 16-bit passes: use dtype bf16 or fp16, or precision pure with fp32", o.Precision)
	}
	if o.DataParallel < 1 || o.DataParallel > maxDP {
		es.Add("data_parallel", "must be between 1 and %d, got %d", maxDP, o.DataParallel)
	}
	if o.TensorParallel < 1 || o.TensorParallel > maxTP {
		es.Add("tensor_parallel", "must be between 1 and %d, got %d", maxTP, o.TensorParallel)
	}
	oneOf(&es, "sharding", string(o.Sharding), NoSharding, ZeRO1, ZeRO2, ZeRO3, HSDP)
	oneOf(&es, "context_method", string(o.ContextMethod), Ring, AllToAll, Hierarchical, AllGather)
	switch c, g := max(1, o.Context), o.ContextInner; {
	case g == 0 && o.ContextMethod != Hierarchical:
	case o.ContextMethod != Hierarchical:
		es.Add("context_inner", "goes with context_method %s", Hierarchical)
	case g < 2 || g >= c || c%g != 0:
		es.Add("context_inner", "must divide context_parallel (%d) and lie between 2 and %d: the all-to-all groups of a hierarchical split, with at least two of them on the ring, got %d", c, c/2, g)
	}
	if o.Context < 1 || o.Context > maxTP {
		es.Add("context_parallel", "must be between 1 and %d, got %d", maxTP, o.Context)
	} else if o.Seq%o.Context != 0 {
		es.Add("context_parallel", "must divide the sequence (%d tokens), got %d", o.Seq, o.Context)
	}
	if o.ShardGroup < 1 || o.ShardGroup > maxDP {
		es.Add("shard_group", "must be between 1 and %d, got %d", maxDP, o.ShardGroup)
	}
	if o.KeepGathered && o.Sharding.Level() < 3 {
		es.Add("keep_gathered", "goes with sharding zero3 or hsdp, which gather weights layer by layer, got %q", o.Sharding)
	}
	if o.FullyShard && o.Sharding.Level() < 3 {
		es.Add("fully_shard", "goes with sharding zero3 or hsdp (PyTorch FSDP2's fully_shard), got %q", o.Sharding)
	}
	if o.ReduceFP32 && o.Sharding.Level() < 3 {
		es.Add("reduce_fp32", "goes with sharding zero3 or hsdp (PyTorch FSDP2's reduce_dtype), got %q", o.Sharding)
	}
	if o.Optimizer == None && o.Sharding != NoSharding {
		es.Add("sharding", "shards training state (optimizer, gradients): inference (optimizer none) has none")
	}
	if o.ExpertParallel < 1 || o.ExpertParallel > maxEP {
		es.Add("expert_parallel", "must be between 1 and %d, got %d", maxEP, o.ExpertParallel)
	}
	if o.ExpertTensorParallel < 1 || o.ExpertTensorParallel > maxTP {
		es.Add("expert_tensor_parallel", "must be between 1 and %d, got %d", maxTP, o.ExpertTensorParallel)
	}
	if !(o.ExpertImbalance >= 1 && o.ExpertImbalance <= maxImbalance) {
		es.Add("expert_imbalance", "must be between 1 (balanced) and %d, got %v", maxImbalance, o.ExpertImbalance)
	} else if o.MoEForceBalance && o.ExpertImbalance != 1 {
		es.Add("expert_imbalance", "must be 1 with moe_force_load_balancing (random router logits route every expert the mean load), got %v", o.ExpertImbalance)
	}
	if !(o.CapacityFactor == 0 || (o.CapacityFactor > 0 && o.CapacityFactor <= maxImbalance)) {
		es.Add("capacity_factor", "must be 0 (dropless) or in (0, %d], got %v", maxImbalance, o.CapacityFactor)
	}
	if o.TensorCommOverlap && (o.TensorParallel < 2 || !o.SequenceParallel) {
		es.Add("tensor_comm_overlap", "needs tensor_parallel >= 2 with sequence_parallel (Transformer Engine overlaps sequence parallelism's all-gather and reduce-scatter), got tensor_parallel %d, sequence_parallel %v", o.TensorParallel, o.SequenceParallel)
	}
	if _, ok := LookupUserbuffersConfig(o.TensorCommConfig); !ok {
		es.Add("tensor_comm_config", "must be %s or one of the published userbuffers configs (%s), got %q", TEDefaultUserbuffers, strings.Join(UserbuffersConfigNames()[1:], ", "), o.TensorCommConfig)
	}
	if o.TensorCommAsync && !o.TensorCommOverlap {
		es.Add("tensor_comm_async", "names how tensor_comm_overlap hides the communication: set tensor_comm_overlap too")
	}
	if o.ExpertOverlap && o.Optimizer == None {
		es.Add("expert_overlap", "pairs a forward with a backward pass: inference has none")
	}
	if o.ExpertOverlap && o.Recompute == Full {
		es.Add("expert_overlap", "does not go with full recomputation (Megatron-Core refuses --overlap-moe-expert-parallel-comm with full recompute)")
	}
	if len(es) == 0 {
		// Megatron-Core (parallel_state.initialize_model_parallel) lays the expert layers
		// out as expert-tensor x expert x expert-data x pipeline ranks over the same
		// devices as the dense layers' tensor x data x pipeline: EP x expert tensor must
		// divide tensor x data ("world_size is not divisible by
		// expert_tensor_model_pipeline_parallel size").
		if n := o.ExpertParallel * o.ExpertTensorParallel; (o.DataParallel*o.Context*o.TensorParallel)%n != 0 {
			es.Add("expert_parallel", "expert x expert tensor parallelism (%d x %d) must divide data x context x tensor parallelism (%d x %d x %d), the devices of a stage that Megatron-Core lays the expert layers over",
				o.ExpertParallel, o.ExpertTensorParallel, o.DataParallel, o.Context, o.TensorParallel)
		}
		// Megatron-LM's arguments: "When using expert parallelism and tensor parallelism,
		// sequence parallelism must be used" (the tokens a rank dispatches are its
		// sequence shard).
		if o.TensorParallel > 1 && !o.SequenceParallel && (o.ExpertParallel > 1 || o.ExpertTensorParallel != o.TensorParallel) {
			es.Add("sequence_parallel", "is needed with tensor_parallel %d and expert parallelism (Megatron-LM: \"when using expert parallelism and tensor parallelism, sequence parallelism must be used\")", o.TensorParallel)
		}
	}
	if o.Optimizer == None && o.Recompute != NoRecompute {
		es.Add("recompute", "needs training: inference (optimizer none) keeps nothing to recompute")
	}
	return es.Err()
}

func oneOf[T ~string](es *model.Errors, name, got string, allowed ...T) {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if string(a) == got {
			return
		}
		names[i] = string(a)
	}
	es.Add(name, "must be one of %s, got %q", strings.Join(names, ", "), got)
}

// Target is the device the layers are costed on: its Device (memory, dense 16-bit peak),
// its performance figures, the link between pipeline neighbours (for the all-reduce of
// a copied tied embedding), the link inside a tensor-parallel group, and the framework
// that runs the model.
type Target struct {
	Device cluster.Device `json:"device"`
	Perf   cluster.Perf   `json:"perf"`
	Link   cluster.Link   `json:"link"`
	// Framework is how the model runs (cluster.LookupFramework): its host time per
	// kernel, which bounds each layer's time from below, the optimizer's host time per
	// tensor and temporaries, and its fixed memory. The zero value models no host side
	// and no framework memory: the device alone.
	Framework cluster.Framework `json:"framework,omitzero"`
	// TensorLink carries the tensor-parallel all-reduces (the intra-node link, NVLink or
	// NVSwitch); when it states no bandwidth, Link does.
	TensorLink cluster.Link `json:"tensor_link,omitzero"`
	// ContextLink carries the context-parallel exchanges when the context group spans
	// nodes (the network between them); when it states no bandwidth, the tensor link does.
	ContextLink cluster.Link `json:"context_link,omitzero"`
	// ExpertLink joins the members of an expert-parallel group inside a node and
	// ExpertInterLink across nodes; ExpertPerNode is how many members share a node (0:
	// all of them, on ExpertLink). A dispatch or combine all-to-all sends each member's
	// share for peers in its node over ExpertLink and the rest over ExpertInterLink at
	// once (cluster.HierarchicalAllToAllSeconds). A link that states no bandwidth falls back to
	// the tensor-parallel link.
	ExpertLink      cluster.Link `json:"expert_link,omitzero"`
	ExpertInterLink cluster.Link `json:"expert_inter_link,omitzero"`
	ExpertPerNode   int          `json:"expert_per_node,omitempty"`
}

// contextLink is the link of the context-parallel exchanges.
func (t Target) contextLink() cluster.Link {
	if t.ContextLink.BytesPerSecond > 0 {
		return t.ContextLink
	}
	return t.tensorLink()
}

// expertLinks are the intra- and inter-node links of the expert-parallel all-to-alls.
//
// The link inside the node is taken as it is: the NVLink and NVSwitch presets already
// state what NCCL's collectives get from them (cluster.NVLinkCollectiveBytesPerSecond,
// about 0.8 of the line rate; NCCL's all-to-all cannot use NVLink SHARP, and DeepEP's
// and HybridEP's kernels copy over the same links, DeepEP's README stating ~160 of the
// H800's 200 GB/s, cluster.NVLinkPayloadShare), so every dispatcher's exchange, and the
// expert group's small ring all-gathers, go at the rate the tensor group's collectives
// do. The network's rate (ExpertInterLink) is taken as it is.
func (t Target) expertLinks() (intra, inter cluster.Link) {
	intra, inter = t.ExpertLink, t.ExpertInterLink
	if intra.BytesPerSecond <= 0 {
		intra = t.tensorLink()
	}
	if inter.BytesPerSecond <= 0 {
		inter = intra
	}
	return intra, inter
}

// expertRingLink is the link a ring collective over members of the expert-parallel
// group crosses: the network (expertLinks' inter) when they span nodes
// (ExpertPerNode below members), else the expert link inside the node.
func (t Target) expertRingLink(members int) cluster.Link {
	intra, inter := t.expertLinks()
	if t.ExpertPerNode > 0 && t.ExpertPerNode < members {
		return inter
	}
	return intra
}

// tensorLink is the link of the tensor-parallel all-reduces.
func (t Target) tensorLink() cluster.Link {
	if t.TensorLink.BytesPerSecond > 0 {
		return t.TensorLink
	}
	return t.Link
}

// PresetTarget returns the target of a device preset and its usual link.
func PresetTarget(name string) (Target, error) {
	d, err := cluster.LookupDevice(name)
	if err != nil {
		return Target{}, err
	}
	l, err := cluster.LookupLink(d.Link)
	if err != nil {
		return Target{}, err
	}
	return Target{Device: d.Device, Perf: d.Perf, Link: l.Link}, nil
}

// Validate checks the target's figures.
func (t Target) Validate() error {
	var es model.Errors
	es.Positive("device.flops_per_second", t.Device.FLOPSPerSecond)
	if err := t.Perf.Validate("perf"); err != nil {
		fe, _ := model.AsFieldErrors(err)
		es = append(es, fe...)
	}
	es.NonNegative("link.latency_seconds", t.Link.LatencySeconds)
	es.NonNegative("link.bytes_per_second", t.Link.BytesPerSecond)
	es.NonNegative("tensor_link.latency_seconds", t.TensorLink.LatencySeconds)
	es.NonNegative("tensor_link.bytes_per_second", t.TensorLink.BytesPerSecond)
	es.NonNegative("expert_link.latency_seconds", t.ExpertLink.LatencySeconds)
	es.NonNegative("expert_link.bytes_per_second", t.ExpertLink.BytesPerSecond)
	es.NonNegative("expert_inter_link.latency_seconds", t.ExpertInterLink.LatencySeconds)
	es.NonNegative("expert_inter_link.bytes_per_second", t.ExpertInterLink.BytesPerSecond)
	if t.ExpertPerNode < 0 {
		es.Add("expert_per_node", "must be >= 0, got %d", t.ExpertPerNode)
	}
	if err := t.Framework.Validate("framework"); err != nil {
		fe, _ := model.AsFieldErrors(err)
		es = append(es, fe...)
	}
	return es.Err()
}

// bytesPerParam is the memory one parameter takes: its weight, its gradient, and its
// optimizer state including fp32 master weights; gradCopy is a 16-bit copy of the
// gradient kept beside an fp32 grad (DeepSpeedBF16), memory only: the data-parallel
// reduction moves grad.
type bytesPerParam struct {
	weight, grad, master, states, gradCopy float64
}

func (o Options) perParam() bytesPerParam {
	e := 2.0
	if o.DType == FP32 {
		e = 4
	}
	if o.Optimizer == None {
		return bytesPerParam{weight: e}
	}
	p := bytesPerParam{weight: e, grad: e}
	stateBytes := e // pure: states in the model's type
	switch o.Precision {
	case Mixed:
		p.master, stateBytes = 4, 4
	case MixedFP32Grads:
		p.master, p.grad, stateBytes = 4, 4, 4
	case DeepSpeedBF16:
		p.master, p.grad, stateBytes, p.gradCopy = 4, 4, 4, e
	case AMP:
		p.weight, p.grad, stateBytes = 4, 4, 4 // fp32 parameters: no master copy
	}
	switch o.Optimizer {
	case AdamW, Adam:
		p.states = 2 * stateBytes
	case SGD:
		p.states = stateBytes
	}
	return p
}

// fp8GatherElementBytes is the bytes per element in which the distributed optimizer's
// all-gather moves an fp8 primary weight (FP8ParamGather), from Megatron-Core's
// param_and_grad_buffer.py (core_v0.12.0 to core_v0.16.0):
//
//   - delayed, current and blockwise scaling: 1. Transformer Engine's Float8Tensor and
//     Float8BlockwiseQTensor keep their data in a torch.uint8 tensor, so Megatron-Core
//     gives the fp8 parameters a buffer of dtype torch.uint8 ("when creating the param
//     buffer for fp8 params, it is necessary to use torch.uint8",
//     distributed_data_parallel.py) and modify_underlying_storage points their data
//     into it; the all-gather moves that buffer. Each rank casts its shard of the fp32
//     master weights into it (quantize_param_shard: TE's cast_master_weights_to_fp8),
//     and the scales travel apart (an amax all-reduce, not these bytes). NeMo's
//     MegatronDistributedFusedAdam (Apex's DistributedFusedAdam, the
//     distributed_fused_adam optimizer) does the same: its fp8 parameters' buckets get
//     param_sync_dtype=torch.uint8 (nemo/core/optim/distributed_adam.py, NeMo v2.0.0).
//   - mxfp8: the 16-bit type (2). TE cannot repoint or cast an MXFP8Tensor's data
//     (replace_raw_data and cast_master_weights_to_fp8 raise NotImplementedError for
//     MXFP8 in TE v2.2 to v2.8, transformer_engine/pytorch/tensor/utils.py), so from
//     core_v0.13.0 a buffer of MXFP8 parameters under the distributed optimizer gets a
//     bf16 param_data sharing the gradient buffer ("For MXFP8 param: Create a shared
//     buffer for param AG and grad RS", a bf16 view of its first half when the
//     gradients are fp32), the optimizer copies the master weights into it
//     (_copy_main_params_to_param_buffer, reuse_grad_buf_for_mxfp8_param_ag) and
//     finish_param_sync quantizes each gathered weight into its MXFP8 parameter
//     (param.data.copy_) before zeroing the slice for the gradients.
func (o Options) fp8GatherElementBytes() float64 {
	if o.FP8Recipe == MXFP8 {
		return o.perParam().weight
	}
	return 1
}

// devicePerParam is perParam on one device: the optimizer state and master weights
// divided over the shard group from ZeRO-1 on, the gradients from ZeRO-2 on, the weights
// under ZeRO-3 (the shards a device keeps between layers; the gathered copies are
// working memory).
func (o Options) devicePerParam() bytesPerParam {
	p := o.perParam()
	full := p
	n := float64(o.ShardGroup)
	if n < 1 {
		n = 1
	}
	switch o.Sharding.Level() {
	case 3:
		p.weight /= n
		fallthrough
	case 2:
		p.grad /= n
		fallthrough
	case 1:
		p.master /= n
		p.states /= n
	}
	if o.keepsGathered() {
		// The gathered weights and the fp32 accumulated gradients, held through the step
		// beside the shards (KeepGathered).
		p.weight += full.weight
		p.grad += keptGradBytes
	}
	return p
}

// keptGradBytes is the bytes per parameter of the whole gradients KeepGathered
// accumulates: fp32, FSDP2's reduce dtype under torchtitan's mixed precision policy.
const keptGradBytes = 4

// keepsGathered is whether the weights and gradients are held whole through the step
// (KeepGathered): only where they are sharded layer by layer, over two devices or more,
// in training.
func (o Options) keepsGathered() bool {
	return o.KeepGathered && o.Sharding.Level() >= 3 && o.ShardGroup >= 2 && o.Optimizer != None
}

// GradBytesPerParam is the bytes of one parameter's gradient as the backward pass
// produces it and the data-parallel reductions move it unless told otherwise: the
// model's element size (2 in bf16, fp16 and fp8 training, whose weight gradients are
// 16-bit), 4 where the precision keeps fp32 gradients; 0 without an optimizer.
func (o Options) GradBytesPerParam() float64 {
	return o.perParam().grad
}

// KeptGatheredBytesPerParam is what KeepGathered holds per parameter beyond the shards
// (the 16-bit weight and the fp32 gradient): 6 bytes in bf16, 0 when it holds nothing.
// That is a weight kept in its own type: with FP8FSDPAllGather the fp8 products'
// weights are kept gathered at 1 byte, so one of theirs holds 1 + 4 bytes, and a
// layer's ParamBytes counts each weight at its own size (Layer.fp8Gathered).
func (o Options) KeptGatheredBytesPerParam() float64 {
	if !o.keepsGathered() {
		return 0
	}
	return o.perParam().weight + keptGradBytes
}

// optimizerShard is the optimizer state (with master weights) per parameter on one
// device.
func (o Options) optimizerShard() float64 {
	p := o.devicePerParam()
	return p.master + p.states
}

// sharded is the factor the optimizer update's work on one device is divided by: the
// shard group from ZeRO-1 on.
func (o Options) sharded() float64 {
	if o.Sharding.Level() >= 1 && o.ShardGroup > 1 {
		return float64(o.ShardGroup)
	}
	return 1
}

// expertSharded is the devices a routed expert's sharded state is spread over: the
// shard group's devices times the tensor group, over the expert x expert-tensor devices
// that split the experts (for ZeRO over all replicas, Megatron-Core's expert-data-parallel
// group, over which its distributed optimizer shards expert parameters); 1 without
// sharding.
func (o Options) expertSharded() float64 {
	if o.Sharding.Level() < 1 || o.ShardGroup < 2 {
		return 1
	}
	return max(1, float64(o.ShardGroup)*float64(o.TensorParallel)/float64(o.ExpertParallel*o.ExpertTensorParallel))
}

// expertDevicePerParam is devicePerParam for a routed expert's parameter: sharded over
// expertSharded.
func (o Options) expertDevicePerParam() bytesPerParam {
	p := o.perParam()
	n := o.expertSharded()
	switch o.Sharding.Level() {
	case 3:
		p.weight /= n
		fallthrough
	case 2:
		p.grad /= n
		fallthrough
	case 1:
		p.master /= n
		p.states /= n
	}
	return p
}

// expertOptimizerShard is the optimizer state (with master weights) per routed expert
// parameter on one device.
func (o Options) expertOptimizerShard() float64 {
	p := o.expertDevicePerParam()
	return p.master + p.states
}

// String describes the options for people: "b=8 s=1024 bf16 mixed, adamw, flash attention".
func (o Options) String() string {
	s := fmt.Sprintf("b=%d s=%d %s", o.Batch, o.Seq, o.DType)
	if o.DType == FP8 && o.FP8Recipe != "" {
		s += " " + string(o.FP8Recipe)
	}
	switch {
	case o.Optimizer == None:
		s += " inference"
	case o.DType != FP32:
		s += fmt.Sprintf(" %s, %s", o.Precision, o.Optimizer)
	default:
		s += ", " + string(o.Optimizer)
	}
	s += fmt.Sprintf(", %s attention", o.Attention)
	if o.Recompute != NoRecompute {
		s += ", " + string(o.Recompute) + " recompute"
		if o.RecomputeModules != 0 {
			s += " (" + o.RecomputeModules.String() + ")"
		}
	}
	if o.Sharding.Level() > 0 && o.ShardGroup > 1 {
		name := fmt.Sprintf("ZeRO-%d", o.Sharding.Level())
		if o.Sharding == HSDP {
			name = "HSDP"
		}
		s += fmt.Sprintf(", %s over %d", name, o.ShardGroup)
	}
	if o.Context > 1 {
		s += fmt.Sprintf(", context parallel %d (%s)", o.Context, o.ContextMethod)
		if o.ContextMethod == Hierarchical {
			s += fmt.Sprintf(" all-to-all over %d, ring over %d", o.ContextInner, o.Context/max(1, o.ContextInner))
		}
	}
	if o.TensorParallel > 1 {
		s += fmt.Sprintf(", tensor parallel %d", o.TensorParallel)
		if o.SequenceParallel {
			s += " with sequence parallelism"
		}
	}
	if o.ExpertParallel > 1 {
		s += fmt.Sprintf(", expert parallel %d", o.ExpertParallel)
	}
	if o.ExpertTensorParallel != o.TensorParallel && o.ExpertTensorParallel > 0 {
		s += fmt.Sprintf(", expert tensor parallel %d", o.ExpertTensorParallel)
	}
	if o.ExpertImbalance > 1 {
		s += fmt.Sprintf(", expert imbalance %g", o.ExpertImbalance)
	}
	if o.CapacityFactor > 0 {
		s += fmt.Sprintf(", capacity factor %g", o.CapacityFactor)
	}
	if o.ExpertOverlap {
		s += ", dispatch overlapped"
	}
	if o.Dispatcher.flex() {
		s += ", " + string(o.Dispatcher)
	}
	return s
}
