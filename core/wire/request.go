package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"pipeplan/core/internal/jsonscan"
	"pipeplan/core/model"
)

// Version is the request format's version, the "version" every request carries.
const Version = 1

// MaxBytes bounds a request's JSON (with its embedded documents): larger inputs are
// refused before they are decoded. It is a model and a cluster file at their bound
// (load.MaxInputBytes, 512 MiB each), so that what --print-request writes can be run.
const MaxBytes = 1 << 30

// Request is a planning request. The zero value of every field means its default
// (core/request.Normalize).
type Request struct {
	// Version is the format's version: 1 (0 is read as 1).
	Version int `json:"version"`
	// Model to plan: a profile document, a bundled example or an architecture.
	Model ModelSpec `json:"model"`
	// Cluster to plan on: a document, or a device preset times a count.
	Cluster ClusterSpec `json:"cluster"`
	// Parallelism: pipeline stages, data-parallel replicas, ZeRO stage.
	Parallelism Parallelism `json:"parallelism"`
	// Training or inference, with the optimizer, precision and recomputation.
	Training Training `json:"training"`
	// Schedule of the pipeline, microbatches per step and samples per microbatch.
	Schedule Schedule `json:"schedule"`
	// Objective is what the split minimises: "compute" (the slowest stage's compute) or
	// "compute+transfer" (the slowest stage's compute plus the slowest transfer).
	Objective string `json:"objective,omitempty"`
	// Partition is what the stages are: "layers" (the default, written as nothing):
	// contiguous ranges of the model's layer order; or "graph": convex parts of the
	// model's tensor graph (core/dagsplit), which a model whose layers branch may need
	// for its best split (Plan.LayerOrder then lists the layers stage by stage).
	Partition string `json:"partition,omitempty"`
	// MemoryProportion of each device's usable memory a stage may fill, in (0, 1].
	MemoryProportion float64 `json:"memory_proportion,omitempty"`
	// Boundaries, when set, is a split to cost instead of the optimum: [0, s1, ..., n],
	// one entry per stage plus one (for interleaved, per model chunk).
	Boundaries []int `json:"boundaries,omitempty"`
	// Events keeps the schedule's timeline (every operation on every device, and the
	// in-flight microbatches over time) in the result.
	Events bool `json:"events,omitempty"`
	// Layers keeps every layer's costs (Result.Model.LayerCosts) in the result: the
	// times, parameters, activations and outputs of each layer, as planned.
	Layers bool `json:"layers,omitempty"`
}

// The values of Request.Partition.
const (
	PartitionLayers = "layers"
	PartitionGraph  = "graph"
)

// ModelSpec names the model: exactly one of Example, Document and Architecture.
type ModelSpec struct {
	// Example is a bundled example profile ("gpt2-medium").
	Example string `json:"example,omitempty"`
	// Document is a model file: a JSON object (pipeplan's native model, a Graphcore
	// ModelInfo), or a JSON string holding a file's text in any supported format
	// (a PipeDream graph.txt, or JSON text).
	Document json.RawMessage `json:"document,omitempty"`
	// Architecture is a transformer costed analytically on the cluster's device.
	Architecture *Architecture `json:"architecture,omitempty"`
	// Name labels the model for people; it does not change the plan.
	Name string `json:"name,omitempty"`
}

// Architecture is a HuggingFace-style architecture: a bundled config by name, or a
// config.json object, with the shape of a microbatch and how it runs. The microbatch's
// sequences are Schedule.MicrobatchSize.
type Architecture struct {
	// Name of a bundled config (core/arch: "llama-2-7b", "gpt2-medium", ...).
	Name string `json:"name,omitempty"`
	// Config is a config.json object.
	Config json.RawMessage `json:"config,omitempty"`
	// Seq is the sequence length in tokens.
	Seq int `json:"seq,omitempty"`
	// DType is the element type of the passes: bf16, fp16 or fp32.
	DType string `json:"dtype,omitempty"`
	// Attention kernel: flash (FlashAttention-2), flash3 (FlashAttention-3, Hopper
	// only), flash-triton (FlashAttention's Triton kernel), flash1 (FlashAttention,
	// flash-attn 1.x), cudnn (cuDNN fused attention) or eager.
	Attention string `json:"attention,omitempty"`
	// FP8Attention runs the attention core in fp8 (Transformer Engine's fp8_dpa,
	// Megatron-Bridge's fp8_dot_product_attention) at cuDNN's published fp8 attention
	// rates: needs training.fp8_recipe (or dtype fp8) and attention cudnn.
	FP8Attention bool `json:"fp8_attention,omitempty"`
	// ExpertFusedMLP runs a mixture's routed experts as Transformer Engine's fused
	// grouped MLP (Megatron-Bridge's cutedsl_fused_grouped_mlp: cuDNN's grouped GEMMs
	// with the gated activation and the MXFP8 quantization in their epilogues): needs
	// fp8_recipe mxfp8, a gated mixture of experts and a b200, gb200, b300 or gb300.
	ExpertFusedMLP bool `json:"expert_fused_mlp,omitempty"`
	// Split: block (one layer per transformer block) or sublayer (attention and MLP apart).
	Split string `json:"split,omitempty"`
	// Tie: where a tied embedding lives: copy (both ends, gradients all-reduced) or stage.
	Tie string `json:"tie,omitempty"`
	// Framework is how the model runs: eager (PyTorch), compiled (torch.compile),
	// cuda-graphs (CUDA graph capture, Megatron-LM style), megatron (Megatron-Core
	// launched without CUDA graphs), deepspeed (Megatron-DeepSpeed on DeepSpeed's
	// PipelineEngine: megatron's launches, Megatron-LM's vocab-parallel loss, blocking
	// pipeline transfers) or none (the device alone):
	// host time per kernel and per optimizer tensor, whether the data-parallel
	// all-reduce overlaps the backward, the framework's memory (core/cluster's
	// Framework presets, with sources).
	Framework string `json:"framework,omitempty"`
	// CrossEntropy is the loss kernel: unfused (PyTorch's F.cross_entropy on logits
	// upcast to fp32, HuggingFace's), fused (flash-attn's CrossEntropyLoss: 16-bit
	// logits kept, their gradient a new 16-bit tensor; LLM Foundry's MPT default) or
	// fused-inplace (the gradient written over the logits: Transformer Engine's, as
	// Megatron-Core fuses it), vocab-parallel (Megatron-LM's unfused vocab-parallel
	// cross-entropy: fp32 kernels one after another, its default through Megatron-Core
	// r0.8.0) or loss-parallel (PyTorch's loss_parallel on fp32 logits sharded by
	// vocabulary, torchtitan's with tensor parallelism). A torch.compile'd
	// F.cross_entropy holds what fused does. Default: the framework's (unfused for eager and
	// compiled, fused-inplace for cuda-graphs and megatron, vocab-parallel for
	// deepspeed).
	CrossEntropy string `json:"cross_entropy,omitempty"`
	// MatmulEfficiency and MemoryEfficiency override the device preset's fractions of
	// peak; KernelSeconds its launch cost per kernel. 0 (nil): the preset's.
	MatmulEfficiency float64  `json:"matmul_efficiency,omitempty"`
	MemoryEfficiency float64  `json:"memory_efficiency,omitempty"`
	KernelSeconds    *float64 `json:"kernel_seconds,omitempty"`
	// HostKernelSeconds and HostLayerSeconds override the framework's host time per
	// kernel and per layer and pass (pipeplan calibrate fits them). Nil: the framework's.
	// Like the framework's, they are an H100 machine's x86 host's: a device preset
	// whose usual host is slower (Grace: cluster.Perf.HostSecondsScale) multiplies them.
	HostKernelSeconds *float64 `json:"host_kernel_seconds,omitempty"`
	HostLayerSeconds  *float64 `json:"host_layer_seconds,omitempty"`
	// ExpertImbalance is how many times the mean routed tokens the busiest device of an
	// expert-parallel group gets (default 1, balanced); CapacityFactor caps each
	// expert's tokens at that many times the mean, dropping the rest (default 0:
	// dropless). Mixtures of experts only.
	ExpertImbalance float64 `json:"expert_imbalance,omitempty"`
	CapacityFactor  float64 `json:"capacity_factor,omitempty"`
}

// ClusterSpec names the cluster: a Document, or Count devices of a Device preset joined by
// a Link preset.
type ClusterSpec struct {
	// Device is a device preset (pipeplan devices).
	Device string `json:"device,omitempty"`
	// Count is the number of devices in all: pipeline stages times data-parallel replicas,
	// or more (the rest idle).
	Count int `json:"count,omitempty"`
	// Link is the link preset between pipeline neighbours and data-parallel peers.
	Link string `json:"link,omitempty"`
	// Document is a cluster file: pipeplan's native cluster or a Graphcore
	// IPUClusterInfo (a JSON object, or a JSON string holding the text). Its devices are
	// one pipeline; data-parallel replicas are copies of it.
	Document json.RawMessage `json:"document,omitempty"`
	// DataLink is the link preset the data-parallel gradient all-reduce of a Document
	// cluster crosses (default: the slowest link between its stages).
	DataLink string `json:"data_link,omitempty"`
	// FreeTransfers plans as if every transfer took no time: links may then be absent.
	FreeTransfers bool `json:"free_transfers,omitempty"`
	// DevicesPerNode, with a device preset, groups the devices into nodes of that many,
	// joined inside a node by LinkIntra (default: the device's usual link, NVLink or
	// NVSwitch) and across nodes by LinkInter (default: the device's usual network, as
	// InfiniBand NDR for the H100; one network interface per device). Stages, replicas
	// and tensor-parallel groups are then placed on the nodes (cluster.Topology.Choose):
	// tensor-parallel groups inside a node, and the stage transfers and data-parallel
	// all-reduces over the links they really cross.
	DevicesPerNode int    `json:"devices_per_node,omitempty"`
	LinkIntra      string `json:"link_intra,omitempty"`
	LinkInter      string `json:"link_inter,omitempty"`
	// Devices, with a device preset, gives each device's preset, in pipeline order: a
	// mixed cluster, which Device x Count cannot say. Device is the usual one, whose
	// links join the devices (Link, or LinkIntra inside a node of DevicesPerNode and
	// LinkInter between nodes); Count, if given, is len(Devices). The devices are one
	// pipeline, as a cluster document's are: Normalize writes the request as that
	// document (MixedClusterName), so its plan and id are the document's.
	Devices []string `json:"devices,omitempty"`
}

// MixedClusterName is the name of the cluster document a request's cluster.devices
// stands for.
const MixedClusterName = "mixed cluster (pipeplan page)"

// Parallelism says how the devices are used.
type Parallelism struct {
	// Pipeline is the number of pipeline stages (devices in one pipeline).
	Pipeline int `json:"pipeline,omitempty"`
	// Data is the number of data-parallel replicas of the pipeline.
	Data int `json:"data,omitempty"`
	// ZeRO is the former way to ask for ZeRO-1: 1 means sharding "zero1" (Normalize
	// moves it there), 0 says nothing.
	ZeRO int `json:"zero,omitempty"`
	// Tensor is the tensor-parallel degree t of an architecture (default 1): each
	// pipeline device is a group of t devices splitting every block Megatron-style, over
	// the intra-node link (core/analytic). The run uses pipeline x data x tensor devices.
	Tensor int `json:"tensor,omitempty"`
	// SequenceParallel splits along the sequence what tensor parallelism leaves whole
	// (norms, dropout, residuals); it needs tensor >= 2.
	SequenceParallel bool `json:"sequence_parallel,omitempty"`
	// Sharding is how training state is sharded over the data-parallel devices (the
	// replicas times the context-parallel degree): none (default); zero1 (the optimizer
	// state and fp32 master weights: DeepSpeed ZeRO-1, Megatron-LM's distributed
	// optimizer); zero2 (and the gradients); zero3, or fsdp (and the weights, gathered
	// layer by layer: DeepSpeed ZeRO-3, PyTorch FSDP2); hsdp (zero3 inside a shard group
	// of shard_group replicas, replicated across groups: PyTorch HSDP).
	Sharding string `json:"sharding,omitempty"`
	// ShardGroup is HSDP's shard group in replicas (default: the replicas that fit in a
	// node, cluster.devices_per_node / (tensor x context)); it must divide data.
	ShardGroup int `json:"shard_group,omitempty"`
	// Prefetch, with zero3 or hsdp: next-layer (default: each layer's all-gather runs
	// while the layer before it computes, as PyTorch FSDP2 prefetches, holding two
	// gathered layers) or none (gathered when the layer runs: not overlapped).
	Prefetch string `json:"prefetch,omitempty"`
	// Reshard, with zero3 or hsdp in training, with an architecture: layer (default:
	// each layer's gathered weights are freed after its forward and its backward pass,
	// its gradients reduce-scattered after each backward pass, PyTorch FSDP2's
	// reshard_after_forward) or step (the weights stay gathered and the gradients
	// accumulate whole in fp32 from the first forward pass to the last backward pass:
	// FSDP2 under PyTorch's pipelining, as torchtitan runs it with pipeline
	// parallelism). Step holds 6 bytes a parameter more in bf16; it prices memory
	// only (the gathers are still priced per microbatch).
	Reshard string `json:"reshard,omitempty"`
	// ReduceDType, with zero3 or hsdp in training, with an architecture: the type the
	// gradients are reduce-scattered (and, under hsdp, all-reduced across the groups)
	// in: empty (default: the gradients' own, 16-bit in bf16 training, as PyTorch
	// FSDP2's MixedPrecisionPolicy leaves it when reduce_dtype is None) or fp32
	// (reduce_dtype=torch.float32: the 16-bit gradients cast to fp32 before the
	// collective, which then moves twice the bytes; torchtitan's only choice,
	// training.mixed_precision_reduce).
	ReduceDType string `json:"reduce_dtype,omitempty"`
	// FullyShard, with zero3 or hsdp in training, with an architecture: the sharding is
	// PyTorch FSDP2's fully_shard (parameters sharded one by one), whose every
	// all-gather is copied out into the parameters and every reduce-scatter's input
	// copied in from the gradients on the compute stream (memory-bound kernels priced
	// in the layers; with reshard step and reduce_dtype fp32, each microbatch's fp32
	// accumulation of the gradients instead). Leave it off for FSDP1 (FULL_SHARD) and
	// DeepSpeed ZeRO-3, which gather into the parameters' own storage.
	FullyShard bool `json:"fully_shard,omitempty"`
	// Context is the context-parallel degree c (default 1): each sequence is split over
	// c devices of an architecture; the run uses pipeline x data x tensor x context
	// devices, and the context group sits in a node beside the tensor group.
	Context int `json:"context,omitempty"`
	// ContextMethod, with context >= 2: ring (default: ring attention, c-1 point-to-point
	// steps of keys and values per attention layer, overlapped with the attention,
	// causal load balancing), all-to-all (DeepSpeed-Ulysses: c must divide the heads) or
	// hierarchical (Megatron-LM's a2a+p2p: all-to-all inside groups of context_inner
	// devices, a ring between the groups).
	ContextMethod string `json:"context_method,omitempty"`
	// ContextInner, with context_method hierarchical, is the all-to-all group's size
	// (Megatron-LM's --hierarchical-context-parallel-sizes, first entry): it divides
	// context, leaves at least two groups on the ring and, with cluster.devices_per_node,
	// sits in a node beside the tensor group (default: the largest such divisor of
	// context that fits in a node).
	ContextInner int `json:"context_inner,omitempty"`
	// Expert is the expert-parallel degree EP of a mixture-of-experts architecture
	// (default 1): each device holds 1/EP of every mixture layer's experts and the tokens
	// are dispatched to them and combined with all-to-alls (core/analytic). It uses no
	// devices of its own: as in Megatron-Core, expert x expert_tensor must divide data x
	// tensor, and EP must divide the experts.
	Expert int `json:"expert,omitempty"`
	// ExpertTensor is the tensor-parallel degree of each expert (Megatron-Core's
	// expert_tensor_parallel_size; default: tensor).
	ExpertTensor int `json:"expert_tensor,omitempty"`
	// ExpertOverlap hides the expert all-to-alls behind an adjacent microbatch's
	// computation (Megatron-Core's combined 1F1B, --overlap-moe-expert-parallel-comm;
	// DeepSeek-V3's DualPipe): training with expert >= 2, not with full recomputation.
	ExpertOverlap bool `json:"expert_overlap,omitempty"`
	// ExpertDispatcher moves tokens to their experts and back: alltoall (default,
	// Megatron-Core's alltoall dispatcher: every routed copy crosses), deepep
	// (Megatron-Core's flex dispatcher with DeepSeek's DeepEP: once per destination node
	// over the network, in 16 bits whatever the dtype, as Megatron-Core hands DeepEP
	// 16-bit rows), deepep-fp8 (DeepEP with fp8 dispatch under dtype fp8, as DeepSeek-V3
	// trained) or hybridep (Megatron-Core's flex dispatcher with HybridEP: routed as
	// deepep, in 16 bits). Mixtures of experts only.
	ExpertDispatcher string `json:"expert_dispatcher,omitempty"`
	// OverlapGradReduce says whether the data-parallel gradient reduction (all-reduce, or
	// ZeRO's reduce-scatter) runs in buckets during the last microbatch's backward pass:
	// "on" (PyTorch DDP's bucketed all-reduce, Li et al. 2020; Megatron-LM's
	// --overlap-grad-reduce, on in NeMo's and Megatron-Bridge's recipes) or "off" (after
	// the backward: Megatron-LM's default). Default: the framework's
	// (cluster.Framework.OverlapGradReduce). Architectures only.
	OverlapGradReduce string `json:"overlap_grad_reduce,omitempty"`
	// OverlapParamGather says whether zero1's and zero2's weight all-gather after the
	// update runs during the next step's first forward pass: "on" (Megatron-LM's
	// --overlap-param-gather with the distributed optimizer, on in NeMo's and
	// Megatron-Bridge's recipes) or "off". Default: the framework's
	// (cluster.Framework.OverlapParamGather). Architectures only.
	OverlapParamGather string `json:"overlap_param_gather,omitempty"`
	// DPBucketBytes is the size of one data-parallel bucket, in bytes of the gradients
	// as they are reduced: the gradient reduction (and with zero1 or zero2 the weight
	// all-gather) runs as one collective per bucket on every pipeline stage, each paying
	// a collective's latency. Set it from a recipe that states one: Apex's
	// DistributedFusedAdam (NeMo's distributed_fused_adam), bucket_cap_mb MiB of its
	// grad_sync_dtype; PyTorch DDP's bucket_cap_mb; Megatron-Core's --ddp-bucket-size
	// times the gradients' bytes. Left out (0), the framework mode's own buckets are
	// priced (core: cluster.BucketCount). Training only, with sharding none, zero1 or
	// zero2 (zero3 and hsdp are priced a layer at a time); at most MaxDPBucketBytes.
	DPBucketBytes int64 `json:"dp_bucket_bytes,omitempty"`
	// DPBucketElements is Megatron-Core's bucket_size (DistributedDataParallelConfig,
	// Megatron-LM's --ddp-bucket-size, NeMo's and Megatron-Bridge's ddp bucket_size), in
	// elements, for the framework modes that run Megatron-Core's buckets (megatron,
	// cuda-graphs): its buffer is walked parameter by parameter and a bucket closed once
	// it holds that many elements, so at a parameter's end (core:
	// cluster.MegatronBucketSizes); a size below the smallest parameter makes a bucket of
	// every parameter. As Megatron-Core, only the first stage's first chunk is cut.
	// Left out (0): Megatron-Core's default, max(40M, 1M x data). Training only; not
	// with DPBucketBytes; at most MaxDPBucketBytes.
	DPBucketElements int64 `json:"dp_bucket_elements,omitempty"`
	// OverlapTensorComm says whether and how tensor parallelism's all-gathers and
	// reduce-scatters run behind the linear layers' products (needs
	// sequence_parallel): "userbuffers" (Transformer Engine's, Megatron-LM's
	// --tp-comm-overlap, on in NeMo's performance recipes: every collective in chunks
	// behind its products), "async-tp" (PyTorch's asynchronous tensor parallelism,
	// torchtitan's --parallelism.enable_async_tensor_parallel; framework compiled only:
	// what torch.compile's micro-pipeline pass fuses, which leaves the backward
	// reduce-scatter of an input gradient that several projections sum exposed, each
	// fused product run as tensor products of a shard's rows), "on"
	// (the framework mode's method: async-tp for compiled, userbuffers for eager,
	// cuda-graphs, megatron and deepspeed) or "off". Default: the framework's (cluster.Framework.
	// OverlapTensorComm: off in every mode). Architectures only.
	OverlapTensorComm string `json:"overlap_tensor_comm,omitempty"`
	// TPCommOverlapConfig names the config Transformer Engine's userbuffers overlap
	// runs with (overlap_tensor_comm userbuffers, or on in a mode whose method it is):
	// "te-default" (initialize_ub's defaults: pipelined and bulk overlaps whose
	// communication kernels hold 16 multiprocessors the products leave them) or a
	// tuned config NVIDIA's recipes pass as tp_comm_overlap_cfg, named as
	// Megatron-Bridge's comm_overlap.py names it (e.g.
	// userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192) or, for three,
	// NeMo-Framework-Launcher's tp_overlap configs (analytic.UserbuffersConfigNames):
	// its per-GEMM methods, num_sm,
	// set_sm_margin and num_splits are priced. A tuned config must be of the model's
	// hidden size, the run's tensor degree and device family (h100: h100-sxm,
	// h100-96gb-500w, h200; b200: b200, gb200, b300, gb300), and an fp8 one needs
	// dtype fp8. Default te-default. Architectures only.
	TPCommOverlapConfig string `json:"tp_comm_overlap_config,omitempty"`
}

// Training says what is run.
type Training struct {
	// Mode is "training" (forward, backward, optimizer update) or "inference" (forward
	// passes only: no gradients, no optimizer state, nothing kept for a backward pass).
	Mode string `json:"mode,omitempty"`
	// Optimizer: adamw, adam or sgd (with momentum). Training only.
	Optimizer string `json:"optimizer,omitempty"`
	// Precision: mixed (16-bit passes, fp32 master weights and optimizer state),
	// mixed-fp32-grads, amp, pure or deepspeed-bf16 (Precisions; docs/request.md gives
	// the bytes of each).
	Precision string `json:"precision,omitempty"`
	// Recompute: none, selective (the attention core; architectures only) or full (for
	// an architecture each block's input is kept, for a profile each stage's input).
	Recompute string `json:"recompute,omitempty"`
	// RecomputeModules names the parts of each block that selective recomputation reruns,
	// in Megatron-LM's --recompute-modules names: core_attn (the default), mlp, moe_act,
	// layernorm, mla_up_proj, moe, shared_experts (architectures only). With recompute
	// auto it bounds what auto may choose per layer (all that apply when left out).
	RecomputeModules []string `json:"recompute_modules,omitempty"`
	// FP8Recipe is how an architecture's fp8 products are scaled (Transformer Engine's
	// recipes): delayed (per tensor, from an amax history; the default with dtype fp8),
	// current (per tensor, from the tensor itself), blockwise (1 x 128 and 128 x 128
	// blocks; Hopper and Blackwell) or mxfp8 (32-element microscaling; Blackwell,
	// MI355X). A recipe sets model.architecture.dtype to fp8; with another dtype it is
	// refused.
	FP8Recipe string `json:"fp8_recipe,omitempty"`
	// FP8ParamGather keeps the fp8 products' weights in fp8 only (no 16-bit copy;
	// Megatron-LM's --fp8-param-gather, on in Megatron-Bridge's fp8 recipes). Needs fp8 and
	// precision mixed or mixed-fp32-grads.
	FP8ParamGather bool `json:"fp8_param_gather,omitempty"`
	// FP8FSDPAllGather casts each FSDP2 shard of the fp8 products' weights to fp8 before
	// its all-gather (torchao's Float8LinearConfig enable_fsdp_float8_all_gather, with
	// precompute_float8_dynamic_scale_for_fsdp: torchtitan's float8 options): the
	// all-gather moves and the gathered copy holds 1 byte a weight, while the 16-bit or
	// fp32 shard and the gradients' reduce-scatter stay as they were. Not Megatron's
	// fp8_param_gather, which drops the 16-bit copy. Needs dtype fp8 under a per-tensor
	// recipe (delayed or current), an architecture without routed experts, training,
	// framework eager or compiled, sharding zero3 or hsdp with parallelism.fully_shard,
	// and more than one replica in the shard group (torchtitan turns it on only with
	// dp_shard > 1).
	FP8FSDPAllGather bool `json:"fp8_fsdp_all_gather,omitempty"`
	// CheckForNaNInGrad is Megatron-Core's DistributedDataParallelConfig
	// check_for_nan_in_grad: before each bucket's gradient reduction the rank takes
	// the bucket's gradient norm and reads torch.isnan and torch.isinf of it back to the
	// host, two device-to-host synchronizations a bucket and step (core:
	// gradNaNCheckSeconds). Off by default, Megatron-Core's DDP default (Megatron-LM's
	// pretrain scripts turn it on unless --no-check-for-nan-in-loss-and-grad; a NeMo or
	// Megatron-Bridge recipe's ddp config states it). Training, framework modes megatron
	// and cuda-graphs only.
	CheckForNaNInGrad bool `json:"check_for_nan_in_grad,omitempty"`
	// FP8AmaxTPOnly reduces delayed scaling's amax history over the tensor-parallel group
	// alone (Megatron-Core's TransformerConfig.tp_only_amax_red, Megatron-LM's
	// --tp-only-amax-red; Transformer Engine 1.x's NVTE_DP_AMAX_REDUCE_INTERVAL=0). Off
	// (Megatron-Core's default): the tensor x data x context group, every rank of a
	// pipeline stage. Framework megatron, fp8 with the delayed recipe.
	FP8AmaxTPOnly bool `json:"fp8_amax_tp_only,omitempty"`
	// TrainMetrics is the number of training metrics the training loop computes on the
	// logits of every microbatch and synchronises across all devices every step (MosaicML
	// Composer's Trainer with a HuggingFaceModel's training metrics: LLM Foundry's MPT
	// has two, LanguageCrossEntropy and LanguagePerplexity). 0 (the default): the loop
	// computes none. Architectures, training only; at most MaxTrainMetrics.
	TrainMetrics int `json:"train_metrics,omitempty"`
	// MoEAuxLoss is a mixture of experts' load-balancing loss as Megatron-Core's router
	// computes it in training (moe_router_load_balancing_type, with moe_router_fusion):
	// none (the default), aux_loss (per microbatch: Megatron-Bridge's Qwen3 MoE) or
	// seq_aux_loss (per sequence: Megatron-Bridge's DeepSeek-V3). Its kernels are
	// priced in every mixture layer (core/analytic's shape.auxLoss). Architectures with
	// routed experts, training only, not under the eager or compiled frameworks
	// (HuggingFace's code computes the loss otherwise).
	MoEAuxLoss string `json:"moe_aux_loss,omitempty"`
	// MoEForceLoadBalancing replaces a mixture's router logits with random ones, as
	// Megatron-Core's moe_router_force_load_balancing does (Megatron-Bridge's
	// performance scripts set it for their dropless MoE benchmarks): two launches a
	// mixture layer's forward (core/analytic's shape.randomLogits), and the routing is
	// balanced, so model.architecture.expert_imbalance must be 1. Architectures with
	// routed experts, not under the eager or compiled frameworks (HuggingFace's code has
	// no such switch).
	MoEForceLoadBalancing bool `json:"moe_force_load_balancing,omitempty"`
}

// MaxDPBucketBytes bounds Parallelism.DPBucketBytes (1 TiB).
const MaxDPBucketBytes = 1 << 40

// MaxTrainMetrics bounds Training.TrainMetrics.
const MaxTrainMetrics = 64

// Schedule is the pipeline schedule of one step.
type Schedule struct {
	// Name: gpipe, 1f1b, interleaved:V, interleaved-pytorch:V, zb-h1, ipu, overlap or
	// inference.
	Name string `json:"name,omitempty"`
	// Microbatches per step (per replica).
	Microbatches int `json:"microbatches,omitempty"`
	// MicrobatchSize is the samples (sequences) in one microbatch.
	MicrobatchSize int `json:"microbatch_size,omitempty"`
	// WeightGradFraction is the share of each backward that computes weight gradients,
	// which zb-h1 runs apart (default 0.5).
	WeightGradFraction float64 `json:"weight_grad_fraction,omitempty"`
}

// The modes of Training.Mode.
const (
	ModeTraining  = "training"
	ModeInference = "inference"
)

// Decode reads a request from JSON: one object, no unknown keys, at most MaxBytes.
// Errors name the field ("schedule.microbatches: must be a number").
func Decode(data []byte) (*Request, error) { return decode(data, MaxBytes) }

// decode is Decode with a bound of limit bytes.
func decode(data []byte, limit int) (*Request, error) {
	if len(data) > limit {
		return nil, &model.FieldError{Reason: fmt.Sprintf("the request is %d bytes, more than the %d a request may hold", len(data), limit)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &model.FieldError{Reason: "the request is empty: give a JSON object"}
	}
	r := new(Request)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(r); err != nil {
		return nil, decodeError(err, data)
	}
	if trimmed[0] != '{' { // null decodes into the zero request without an error
		return nil, &model.FieldError{Reason: "must be a JSON object, got " + string(trimmed)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &model.FieldError{Reason: "unexpected data after the request's JSON object"}
	}
	if err := duplicateKeys(trimmed, "", 0); err != nil {
		return nil, err
	}
	return r, nil
}

// duplicateKeys refuses a key given twice in an object of the request (encoding/json
// would keep the last silently; the model and cluster files refuse it too), naming the
// object's path. Embedded documents (a model's or cluster's document, an architecture's
// config) are left to their loaders, which refuse the same. data is valid JSON.
func duplicateKeys(data []byte, path string, depth int) error {
	pos := jsonscan.Space(data, 0)
	if pos == len(data) || depth > 64 {
		return nil
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	var err error
	switch data[pos] {
	case '{':
		seen := map[string]bool{}
		jsonscan.Members(data, func(quoted []byte, value int) bool {
			var key string
			if json.Unmarshal(quoted, &key) != nil {
				return true
			}
			if seen[key] {
				err = &model.FieldError{Path: join(key), Reason: "is given twice: a key may appear once in an object"}
				return false
			}
			seen[key] = true
			if key == "document" || key == "config" {
				return true
			}
			err = duplicateKeys(data[value:jsonscan.ValueEnd(data, value)], join(key), depth+1)
			return err == nil
		})
	case '[':
		for i, pos := 0, jsonscan.Space(data, pos+1); pos < len(data) && data[pos] != ']'; i++ {
			end := jsonscan.ValueEnd(data, pos)
			if err := duplicateKeys(data[pos:end], fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
			if pos = jsonscan.Space(data, end); pos < len(data) && data[pos] == ',' {
				pos = jsonscan.Space(data, pos+1)
			}
		}
	}
	return err
}

// decodeError turns encoding/json's errors into field errors; data is the request, in
// which an unknown field is looked up to give its whole path.
func decodeError(err error, data []byte) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		path := te.Field
		if path == "" {
			return &model.FieldError{Reason: fmt.Sprintf("must be a JSON object, got %s", te.Value)}
		}
		return &model.FieldError{Path: path, Reason: fmt.Sprintf("must be %s, got %s", goKind(te.Type.String()), te.Value)}
	case errors.As(err, &se):
		return &model.FieldError{Reason: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &model.FieldError{Path: unknownFieldPath(data, name), Reason: "is not a field of the request (docs/request.md lists them)"}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &model.FieldError{Reason: "the request's JSON ends early"}
	}
	return &model.FieldError{Reason: "invalid JSON: " + err.Error()}
}

// unknownFieldPath finds where the unknown key name sits in the request: encoding/json
// names the key alone ("exmaple"), and a path ("model.exmaple") says which object it is
// in. It walks the request's JSON beside the Request type, keys in sorted order, and
// returns the first key called name that is no field of the object holding it (name
// itself when none is found).
func unknownFieldPath(data []byte, name string) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return name
	}
	if path, ok := findUnknown(v, reflect.TypeFor[Request](), "", name); ok {
		return path
	}
	return name
}

func findUnknown(v any, t reflect.Type, prefix, name string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	obj, ok := v.(map[string]any)
	if !ok || t.Kind() != reflect.Struct || t == reflect.TypeFor[json.RawMessage]() {
		return "", false
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, known := jsonField(t, k)
		switch {
		case !known && k == name:
			return prefix + k, true
		case known && f.Type != reflect.TypeFor[json.RawMessage]():
			if p, ok := findUnknown(obj[k], f.Type, prefix+k+".", name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonField is the field of struct t that encoding/json decodes key into: the one
// whose name is key, else one whose name equals key under case folding.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == key {
			return f, true
		}
		if !found && strings.EqualFold(tag, key) {
			folded, found = f, true
		}
	}
	return folded, found
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}
