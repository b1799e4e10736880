package cluster

import (
	"fmt"
	"sort"
	"strings"

	"pipeplan/core/model"
)

// Framework is how a training framework runs a model on a GPU: the host (CPU) time it
// spends dispatching each kernel and each optimizer tensor, whether it overlaps the
// data-parallel gradient all-reduce with the backward pass, what its optimizer allocates,
// and the memory it holds besides the model's tensors (the CUDA context, library
// workspaces, the caching allocator's reserve).
//
// Host time matters because a GPU runs kernels no faster than the host can queue them:
// in eager PyTorch every operator goes through Python, the dispatcher and (in training)
// autograd before its kernel is launched, some microseconds each, so a layer of small
// kernels takes at least its host time however fast the device is. Compilation (fewer,
// fused kernels launched from generated code) cuts that cost; CUDA graphs (one launch
// replays a captured sequence of kernels) all but remove it.
//
// The figures are typical values, stated with their sources, for an analytic estimate;
// pipeplan calibrate fits the host costs of a framework to a measured profile. The host
// figures are an x86 host's of an H100 machine (eagerOpSeconds was fitted on one); a
// device whose usual host is slower per call (Grace: Perf.HostSecondsScale) scales them.
type Framework struct {
	// Name is the framework mode: eager, compiled, cuda-graphs or megatron.
	Name string `json:"name"`
	// HostKernelSeconds is the host time to dispatch one kernel of the analytic model
	// (forward and backward alike): the operator and the view, reshape and bookkeeping
	// operators around it.
	HostKernelSeconds float64 `json:"host_kernel_seconds"`
	// EagerOps: the host dispatches what a HuggingFace block's code calls in eager
	// PyTorch (the operators counted per architecture family by tools/opcount, in
	// package analytic), and HostKernelSeconds is the host time of one such operator: a
	// call from Python in the forward pass, an ATen operator run by the autograd engine
	// in the backward. Otherwise the host launches the analytic model's kernels.
	EagerOps bool `json:"eager_ops,omitempty"`
	// HostLayerSeconds is a fixed host time per layer and pass (module call, hooks, or
	// one graph launch).
	HostLayerSeconds float64 `json:"host_layer_seconds"`
	// OptimizerTensorSeconds is the optimizer step's host time per parameter tensor.
	OptimizerTensorSeconds float64 `json:"optimizer_tensor_seconds"`
	// OptimizerTempBytesPerParam is what the optimizer step allocates beside the state,
	// per parameter (torch.optim's foreach AdamW builds one fp32 temporary of the second
	// moments' square roots; fused kernels update in place).
	OptimizerTempBytesPerParam float64 `json:"optimizer_temp_bytes_per_param"`
	// ForeachOptimizer: the optimizer is torch.optim's foreach implementation (PyTorch's
	// default on CUDA when neither foreach nor fused is asked for: torch.optim docs,
	// "Algorithms"), whose Adam update passes over the tensors eight times (package
	// analytic counts the bytes); otherwise one fused kernel updates each tensor in place.
	ForeachOptimizer bool `json:"foreach_optimizer,omitempty"`
	// OverlapGradReduce: the data-parallel gradient all-reduce runs in buckets during the
	// last microbatch's backward pass (PyTorch DDP); otherwise after it.
	OverlapGradReduce bool `json:"overlap_grad_reduce"`
	// OverlapParamGather: ZeRO-1's and ZeRO-2's weight all-gather after the update runs
	// during the next step's first forward pass (Megatron-LM's --overlap-param-gather);
	// otherwise before it.
	OverlapParamGather bool `json:"overlap_param_gather"`
	// MegatronBuckets: where the gradient reduction and the weight all-gather overlap
	// (OverlapGradReduce, OverlapParamGather), they run in Megatron-Core's buckets
	// (megatron/core/distributed/distributed_data_parallel.py and
	// param_and_grad_buffer.py, core_v0.15.0 to core_v0.18.0, NeMo 25.11 to 26.06): the
	// dense and the routed experts' parameters each in their own buffer, cut into
	// buckets of max(40M, 1M x data-parallel size) elements in backward order (a
	// parameter larger than that ends its bucket), so the bucket whose gradients are
	// ready last (the first layers', the input embedding's on the first stage) is
	// reduced after the backward ends, and the next step's all-gather of that same
	// bucket, the first its forward needs, is dispatched by that forward's first
	// pre-hook with nothing before it to hide behind (MegatronBucketElements,
	// request.DataParallelBucketedExposedSeconds). On for megatron and cuda-graphs,
	// the Megatron-style modes.
	MegatronBuckets bool `json:"megatron_buckets,omitempty"`
	// OverlapTensorComm: tensor parallelism's all-gathers and reduce-scatters (with
	// sequence parallelism) run in chunks behind the linear layers' products
	// (Transformer Engine's userbuffers, Megatron-LM's --tp-comm-overlap: off by default
	// in Megatron-LM, on in NeMo's performance recipes; PyTorch's async tensor
	// parallelism under torch.compile is opt-in too, torchtitan's "AsyncTP"). Off in
	// every mode; parallelism.overlap_tensor_comm turns it on. (A mixture's expert
	// all-to-alls have their own option, parallelism.expert_overlap, also off unless
	// asked: Megatron-Core's --overlap-moe-expert-parallel-comm is opt-in.)
	OverlapTensorComm bool `json:"overlap_tensor_comm,omitempty"`
	// AsyncTensorComm: the mode's tensor-parallel overlap, when on, is PyTorch's
	// asynchronous tensor parallelism (torch.compile's micro-pipeline pass, which fuses
	// an all-gather into the product that reads it and a product into its
	// reduce-scatter, and leaves the backward reduce-scatter of a gradient that several
	// products sum: analytic.Options.TensorCommAsync) rather than Transformer Engine's
	// userbuffers. On for compiled (async TP is an Inductor pass: torchtitan refuses it
	// without torch.compile); megatron, cuda-graphs and eager code overlap with
	// Transformer Engine.
	AsyncTensorComm bool `json:"async_tensor_comm,omitempty"`
	// TracedCommWaits: communication issued inside a compiled region waits where it is
	// issued, so it does not overlap the region's compute. A functional collective
	// traced by torch.compile is followed at once by its wait_tensor
	// (torch/distributed/_functional_collectives.py, _maybe_wrap_tensor: "wait_tensor()
	// op is immediately called" when tracing), and Inductor moves waits only with
	// reorder_for_compute_comm_overlap, off by default (torch/_inductor/config.py). It
	// prices PyTorch's experimental context parallelism traced inside a compiled block
	// (analytic.AllGather); on for compiled.
	TracedCommWaits bool `json:"traced_comm_waits,omitempty"`
	// ReturnsLogits: the training loop holds the model's 16-bit logits until the step
	// ends (HuggingFace models return them beside the loss); Megatron-style loops keep
	// only the loss.
	ReturnsLogits bool `json:"returns_logits"`
	// FusedActivation: a gated MLP's SiLU and product run as one fused kernel that keeps
	// only the gate and up projections' outputs for its backward pass and recomputes the
	// SiLU there (Megatron-LM's bias_swiglu_impl, megatron/core/fusions/
	// fused_bias_swiglu.py, saves its input alone). On for cuda-graphs, the
	// Megatron-style mode; eager PyTorch keeps the SiLU's output too, and torch.compile
	// is left as eager here (Inductor's partitioner may recompute it, Ansel et al.,
	// "PyTorch 2", ASPLOS 2024, but that is not checked against a measurement).
	FusedActivation bool `json:"fused_activation,omitempty"`
	// FusedFC1: a gated MLP's gate and up projections are one linear layer of twice the
	// width, one product (and launch) a pass: Megatron-Core's linear_fc1 ("If this is a
	// gated linear unit we double the output width", megatron/core/transformer/mlp.py at
	// core_v0.15.0; TEGroupedMLP's grouped linear_fc1 in moe/experts.py the same, one
	// GEMM an expert in Transformer Engine's GroupedLinear) and Megatron-DeepSpeed's
	// dense_h_to_4h ("2 * args.ffn_hidden_size if args.glu_activation",
	// bigscience-workshop/Megatron-DeepSpeed megatron/model/transformer.py). On for the
	// Megatron-style modes (megatron, cuda-graphs, deepspeed); HuggingFace's gate_proj
	// and up_proj and torchtitan's w1 and w3 (torchtitan/models/llama3/model.py at
	// e7c0cae: self.w2(F.silu(self.w1(x)) * self.w3(x))) are two, which torch.compile
	// leaves apart: Inductor's one pass that joins linear layers reading one input, the
	// pre-grad batch_linear_lhs fusion (torch/_inductor/fx_passes/group_batch_fusion.py),
	// fuses a set of candidates only when it holds min_fuse_set_size of them,
	// MIN_FUSE_SET_SIZE = 5.
	FusedFC1 bool `json:"fused_fc1,omitempty"`
	// FusedCrossEntropy: the loss is one fused kernel that reads the 16-bit logits and
	// writes their gradient in place, keeping no fp32 copy (Megatron-Core's
	// --cross-entropy-loss-fusion with --cross-entropy-fusion-impl te, Transformer
	// Engine's parallel_cross_entropy, which Megatron-Bridge's model providers turn on).
	// On for cuda-graphs, the Megatron-style mode; eager PyTorch's F.cross_entropy keeps
	// fp32 log-probabilities and their gradients.
	FusedCrossEntropy bool `json:"fused_cross_entropy,omitempty"`
	// CrossEntropyGradCopy: the fused loss (FusedCrossEntropy) writes the logits'
	// gradient to a new 16-bit tensor in the backward pass rather than over the logits:
	// flash-attn's CrossEntropyLoss with its default inplace_backward=False (flash_attn/
	// losses/cross_entropy.py: the kernel saves the logits and each row's log-sum-exp,
	// and "inplace_backward: bool. If True, we do the backward pass in-place by
	// modifying the logits"), which LLM Foundry's MPT uses by default. Off in every
	// mode; model.architecture.cross_entropy "fused" sets it (SetCrossEntropy).
	CrossEntropyGradCopy bool `json:"cross_entropy_grad_copy,omitempty"`
	// CrossEntropyVocabParallel: the loss is Megatron-LM's unfused vocab-parallel
	// cross-entropy (FusedCrossEntropy off): fp32 kernels over the logits one after
	// another, what Megatron-LM runs without --cross-entropy-loss-fusion. Off in every
	// mode; model.architecture.cross_entropy "vocab-parallel" sets it (SetCrossEntropy).
	CrossEntropyVocabParallel bool `json:"cross_entropy_vocab_parallel,omitempty"`
	// CrossEntropyLossParallel: the loss is PyTorch's loss parallelism, F.cross_entropy
	// on the fp32 logits of a vocabulary-sharded DTensor under
	// torch.distributed.tensor.parallel.loss_parallel() (FusedCrossEntropy off), which
	// torchtitan runs with tensor parallelism unless training.disable_loss_parallel:
	// its log-softmax and its fused nll-loss and log-softmax backward are written as
	// elementwise PyTorch operators, each a new fp32 tensor the size of the logits. Off
	// in every mode; model.architecture.cross_entropy "loss-parallel" sets it
	// (SetCrossEntropy).
	CrossEntropyLossParallel bool `json:"cross_entropy_loss_parallel,omitempty"`
	// MainGradBuffer: gradients live in Megatron-Core's contiguous gradient buffer
	// (DistributedDataParallel's main_grad, fp32 with mixed-fp32-grads), which the step
	// zeroes whole before its first microbatch (param_and_grad_buffer.py, reset:
	// grad_data.zero_()); the linear layers' weight-gradient products accumulate into it
	// (gradient_accumulation_fusion), and a backward hook adds every other gradient, the
	// embedding's among them, to it after each microbatch (distributed_data_parallel.py,
	// _make_param_hook: param.main_grad.add_(param.grad.data); both at tag
	// core_r0.8.0). On for megatron; off for cuda-graphs, which stands for
	// torch.compile's reduce-overhead too.
	MainGradBuffer bool `json:"main_grad_buffer,omitempty"`
	// BlockingPipelineTransfers: a pipeline stage's sends and receives of activations
	// and gradients block its compute stream, as DeepSpeed's PipelineEngine runs them
	// (deepspeed/runtime/pipe/p2p.py: send and recv are torch.distributed.send and recv,
	// "assert async_op == False"; schedule.py, TrainSchedule: each step receives its
	// input and sends the previous gradient before a forward pass, sends the previous
	// activation and receives its gradient before a backward pass). Each transfer then
	// occupies both stages it joins: a stage's forward pass takes two transfers from the
	// stage before it longer (the activation received, the gradient sent back), its
	// backward pass two transfers to the stage after it (the activation sent, the
	// gradient received), and none of them overlaps compute. Otherwise transfers run
	// beside compute (Megatron-LM's batched isend/irecv), delaying only the stage that
	// waits for them. In inference (InferenceSchedule: each step sends the previous
	// activation and receives the next) each transfer is in the forward pass of both
	// stages it joins, once. On for deepspeed.
	BlockingPipelineTransfers bool `json:"blocking_pipeline_transfers,omitempty"`
	// ParamGradAccumulate: the gradients of a step's microbatches accumulate in each
	// parameter's own .grad through PyTorch's autograd, as DeepSpeed's engines keep them
	// under ZeRO stages 0 and 1 (the pipeline engine's backward pass is
	// torch.autograd.backward, pipe/engine.py; ZeRO-1 registers no gradient hooks
	// without overlap_comm, runtime/zero/stage_1_and_2.py, both at DeepSpeed 3401d25;
	// the zero_grad before each step sets them to None): the first microbatch's
	// gradient becomes .grad, and every later one is added to it in place by
	// AccumulateGrad (torch/csrc/autograd/functions/accumulate_grad.h, accumulateGrad:
	// with .grad defined and GradMode off, "variable_grad += new_grad"), one add
	// kernel a parameter tensor. Megatron-style frameworks accumulate in the
	// weight-gradient products instead (gradient_accumulation_fusion into main_grad).
	// On for deepspeed.
	ParamGradAccumulate bool `json:"param_grad_accumulate,omitempty"`
	// ZeRO1AllReduce: under ZeRO stage 1 the gradients are all-reduced whole over the
	// data-parallel group, not reduce-scattered, before each rank updates its shard and
	// all-gathers the updated 16-bit weights, as DeepSpeed's ZeRO-1 runs them from
	// v0.5.0 (2021-08-17) to at least v0.7.0 (2022-08-01): the engine turns
	// overlap_comm and contiguous_gradients off for stage 1 ("Overlap and contiguous
	// grads are meaningless in stage 1", engine.py, _configure_zero_optimizer), so
	// reduce_ipg_grads takes buffered_reduce_fallback(None, ...), whose
	// allreduce_bucket calls dist.all_reduce on each flattened bucket of up to
	// reduce_bucket_size elements (zero/stage2.py at v0.5.4, zero/stage_1_and_2.py at
	// 3401d25); step then gathers the updated partitions with dist.all_gather in
	// allgather_bucket_size shards. Only the average_tensor path that reduce-scatters
	// (dist.reduce of each rank's slice) needs contiguous_gradients, which stage 1
	// never gets. A ZeRO-1 step so moves the gradients' bytes twice (an all-reduce is a
	// reduce-scatter and an all-gather) where a reduce-scatter moves them once. On for
	// deepspeed.
	ZeRO1AllReduce bool `json:"zero1_all_reduce,omitempty"`
	// PipelineStageBuffers: pipeline stages run on PyTorch's torch.distributed.pipelining
	// (what torchtitan and a plain PyTorch script run), whose PipelineStage holds, beside
	// the activations a schedule keeps, two tensors of the stage boundary per microbatch
	// of the step (PipelineStageBufferBytes). On for eager and compiled; Megatron-LM's
	// and DeepSpeed's engines receive into a new tensor per transfer, freed with it.
	PipelineStageBuffers bool `json:"pipeline_stage_buffers,omitempty"`
	// FixedBytes is device memory the framework holds outside the model's tensors: the
	// CUDA context, cuBLAS and attention workspaces, communication buffers.
	FixedBytes int64 `json:"fixed_bytes"`
	// AllocatorReserve is the fraction of the peak of allocated memory that the caching
	// allocator keeps reserved beyond it (fragmentation and rounding).
	AllocatorReserve float64 `json:"allocator_reserve"`
	// PipelineAllocatorReserve, where above 0, is the reserve on a pipeline of two or
	// more stages in AllocatorReserve's place (Reserve): the fraction measured on the
	// framework's pipeline engine, whose stages keep several microbatches in flight.
	PipelineAllocatorReserve float64 `json:"pipeline_allocator_reserve,omitempty"`
	// Note says where the figures come from.
	Note string `json:"note,omitempty"`
}

// PipelineStageBufferBytes is what a PyTorch pipeline stage holds beside its
// activations on a step of m microbatches whose stage boundary (the hidden state one
// device sends and receives, for a transformer b s h / t bytes with sequence
// parallelism) is boundary bytes: 2 m boundary. The source is torch/distributed/
// pipelining/stage.py, in the builds torchtitan ran in late 2024 and still on PyTorch's
// main branch (PipelineStage, the manual front end): _prepare_forward_infra allocates one
// receive buffer per microbatch for the stage's input (args_recv_info[chunk_id], "TODO:
// create args_recv_info lazily?") and _prepare_backward_infra one per microbatch for
// the gradient of its output (grad_recv_info[mb_index]), both kept from the first step
// on; forward_one_chunk keeps each microbatch's output in fwd_cache until that
// microbatch's backward pops it. A stage with f microbatches in flight thus holds m
// input buffers (f of them the inputs its kept activations already count), m gradient
// buffers and f outputs: (m - f) + m + f = 2m boundaries beyond its activations,
// whatever f, where its input and output have one size (every stage between the first
// and the last of a transformer). The first stage receives no input and the last no
// gradient; both are counted as the others: the first m - f boundaries too many where
// m exceeds its f, the last m + f too many, and the last's m outputs that every build
// keeps for the step's return (output_chunks: the logits, m - 1 beyond the one its loss
// holds) not counted. Older builds held more: before pytorch#153383 (2025-05)
// every stage, not only the last, kept all m outputs in output_chunks until the next
// step, and stage_backward left each input's gradient in its receive buffer (.grad)
// until clear_runtime_states, (m - f) more of each at the step's last forward.
func PipelineStageBufferBytes(microbatches int, boundary int64) int64 {
	if microbatches < 1 || boundary <= 0 {
		return 0
	}
	return 2 * int64(microbatches) * boundary
}

// MegatronBucketElements is the size of Megatron-Core's gradient buckets, in elements,
// for a data-parallel group of dp members: max(40,000,000, 1,000,000 x dp), its default
// when bucket_size is left unset ("use sane default based on dp_group size",
// megatron/core/distributed/distributed_data_parallel.py, core_v0.15.0 to
// core_v0.18.0); both the dense and the expert buffer use it.
func MegatronBucketElements(dp int) int64 {
	return max(40_000_000, 1_000_000*int64(dp))
}

// Data-parallel buckets: how many collectives a framework issues for a device's
// gradient reduction (and, with the optimizer sharded, its weight all-gather) each step,
// each paying a collective's latency (NCCL's tuner, cluster.NCCLTune) beside its share
// of the bytes.
const (
	// DDPBucketBytes is PyTorch DistributedDataParallel's bucket_cap_mb default, 25 MiB
	// of gradients a bucket (kDefaultBucketBytesCap = 25 x 1024 x 1024 in
	// torch/csrc/distributed/c10d/reducer.hpp, PyTorch v2.5.0 line 30; distributed.py's
	// "default case (bucket cap is 25 MiB)").
	DDPBucketBytes = 25 << 20
	// DDPFirstBucketBytes is the smaller first bucket DDP cuts before the others
	// (kDefaultFirstBucketBytes = 1024 x 1024, reducer.hpp line 29, which
	// dist._DEFAULT_FIRST_BUCKET_BYTES exposes), so that the first gradients ready
	// start reducing early.
	DDPFirstBucketBytes = 1 << 20
	// DeepSpeedBucketElements is DeepSpeed's reduce_bucket_size and
	// allgather_bucket_size default, 500,000,000 elements (deepspeed/runtime/zero/
	// config.py), and the elements_per_buffer of the pipeline engine's
	// buffered_allreduce_fallback (deepspeed/runtime/engine.py), which the BF16
	// optimizer's reduction runs through.
	DeepSpeedBucketElements = 500_000_000
)

// BucketCount is the number of buckets, so of collectives, that total bytes (or
// elements) fill when the first bucket holds first and every later one bucket (first 0:
// all hold bucket): 1 + ceil((total - first) / bucket), at least 1 for anything to
// reduce, 0 for nothing; one bucket where bucket is 0 (no bucketing).
func BucketCount(total, first, bucket int64) int64 {
	switch {
	case total <= 0:
		return 0
	case bucket <= 0:
		return 1
	case first <= 0 || first >= total:
		if first >= total {
			return 1
		}
		return (total + bucket - 1) / bucket
	}
	return 1 + (total-first+bucket-1)/bucket
}

// The framework modes.
const (
	Eager      = "eager"
	Compiled   = "compiled"
	CUDAGraphs = "cuda-graphs"
	// Megatron is Megatron-Core with Transformer Engine launched without CUDA graphs
	// (cuda_graph_impl none, or Transformer Engine's graphs of a mixture's router and
	// preprocessing alone): Megatron-style fusions and memory, eager launches.
	Megatron = "megatron"
	// DeepSpeed is Megatron-DeepSpeed on DeepSpeed's PipelineEngine (BigScience's BLOOM
	// of 2022, Smith et al.'s MT-NLG of 2021): Megatron-LM's fused kernels and
	// vocab-parallel loss, launched from Python without CUDA graphs, the pipeline's
	// transfers blocking (BlockingPipelineTransfers).
	DeepSpeed = "deepspeed"
	// NoFramework models the device alone: no host time, no framework memory (TPUs and
	// IPUs, whose compiled programs' costs the device's figures hold).
	NoFramework = "none"
)

// DefaultFramework is the mode assumed when a request names none: eager PyTorch, what a
// new user's training script runs.
const DefaultFramework = Eager

// Figures shared by the modes.
const (
	// contextBytes: a CUDA context with lazy module loading (CUDA 11.7+, the default
	// since CUDA 12.2) takes about 500 MiB on an H100 as nvidia-smi reports it; cuBLAS
	// keeps a workspace per stream and handle (PyTorch's default on Hopper: 32 MiB),
	// and NCCL some buffers per communicator (NCCL_BUFFSIZE, 4 MiB per channel and peer).
	// 1 GiB in all is a round figure of that order; torch.cuda.max_memory_reserved does
	// not count it, nvidia-smi does.
	contextBytes = 1 << 30
	// eagerContextBytes: the same with the CUDA context of a stack that loads every
	// kernel of PyTorch's libraries when the context starts, as CUDA did before lazy
	// module loading (CUDA 11.7 introduced CUDA_MODULE_LOADING=LAZY, the default from
	// CUDA 12.2: the CUDA C++ Programming Guide's "Lazy Loading"). BigScience measured
	// that context on Jean Zay's A100s, the stack BLOOM trained with (PyTorch 1.11,
	// CUDA 11.5): "40GB A100 takes 1573MiB for cuda kernels", nvidia-smi's reading of
	// `python -c "import torch; import time; torch.ones(1).cuda(); time.sleep(30)"`
	// (bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles-prequel.md). It
	// replaces the lazily loaded context's 500 MiB in contextBytes: 1,573 MiB + 524 MiB
	// of workspaces and NCCL buffers, 2,097 MiB. The deepspeed mode's (Megatron-DeepSpeed
	// of 2021-2022, before CUDA 11.7).
	eagerContextBytes = contextBytes - 500<<20 + 1573<<20
	// allocatorReserve: peak_reserved / peak_allocated - 1 measured on eight Megatron-
	// style runs of a 1B Llama on H100s (huggingface.co/nanotron/bench_cluster and
	// old_bench, log_metrics.csv: 1.0, 1.1, 1.5, 1.5, 1.7, 1.7, 5.3 and 7.0%, median
	// 1.6%); PyTorch's caching allocator rounds blocks and splits segments (docs:
	// "CUDA semantics, memory management"). 2%, rounded up.
	allocatorReserve = 0.02
	// deepSpeedPipelineReserve: the same ratio, peak reserved over peak allocated less
	// 1, as BigScience logged it on Megatron-DeepSpeed's pipeline engine
	// (bigscience-workshop/bigscience, experiments/gpt2-meg-ds-3d/
	// meg_ds_3d_gpt2_perf_n16-ds-on.out, 2021-06-10: DeepSpeed 0.4.0's PipelineEngine, a
	// 52B GPT on 64 V100 32GB, TP 4 PP 16, fp16, --checkpoint-activations, 256
	// microbatches of 4; Megatron's report_memory after the first iteration, "memory (MB)
	// | allocated: ... | max allocated: ... | reserved: ... | max reserved: ..."): 63
	// ranks logged, 6.1% to 19.9%, median 15.3%; the first stage's, which holds the
	// embedding and 16 microbatches in flight, 14.7% to 16.7%, the last stage's, one
	// microbatch in flight, 6.1%. The stages free and allocate the microbatches'
	// checkpointed inputs, their recomputations and the engine's buffers out of order,
	// and PyTorch's caching allocator (no expandable segments before PyTorch 2.1) keeps
	// each freed block in its segment for a request of a fitting size (docs: "CUDA
	// semantics, memory management"). The deepspeed mode's reserve on two or more stages;
	// with one, where a step repeats one microbatch's allocations, the modes' 2% (the
	// log's one-microbatch stage reserves 6.1%; BLOOM's single-node runs read 4-5% above
	// the plan with 2%).
	deepSpeedPipelineReserve = 0.153
)

var frameworks = map[string]Framework{
	NoFramework: {Name: NoFramework, Note: "the device alone: no host time, no framework memory"},
	// Eager PyTorch: each operator is dispatched from Python through the C++ dispatcher
	// (and autograd) before its kernel is launched: the PyTorch blog "Accelerating
	// PyTorch with CUDA Graphs" (2021) and H. He, "Making Deep Learning Go Brrrr From
	// First Principles" (2022) describe this overhead, microseconds per operator, as what
	// bounds small models. The host dispatches what HuggingFace's code calls, counted per
	// architecture family (EagerOps; tools/opcount), at eagerOpSeconds each (fitted to
	// steps measured on an H100 machine, below); calibrate fits it to a profile.
	// torch.optim.AdamW defaults to the foreach implementation on CUDA (PyTorch 2.x
	// docs), a few microseconds of host time per tensor, and one fp32 temporary the size
	// of the state. DistributedDataParallel overlaps bucketed gradient all-reduces with
	// the backward pass (Li et al., "PyTorch Distributed", VLDB 2020).
	Eager: {Name: Eager, EagerOps: true, HostKernelSeconds: eagerOpSeconds, HostLayerSeconds: eagerLayerSeconds, OptimizerTensorSeconds: 5e-6,
		OptimizerTempBytesPerParam: 4, ForeachOptimizer: true, OverlapGradReduce: true, OverlapParamGather: true, ReturnsLogits: true, PipelineStageBuffers: true, FixedBytes: contextBytes, AllocatorReserve: allocatorReserve,
		Note: "eager PyTorch: HuggingFace's operators as counted per block (tools/opcount), ~15 us host time each (Python, dispatcher, autograd, launch), foreach AdamW (eight passes), DDP overlapping the all-reduce"},
	// torch.compile (Inductor, default mode): generated code launches fused Triton
	// kernels without the dispatcher and autograd per operator (Ansel et al., "PyTorch 2",
	// ASPLOS 2024); a few microseconds per kernel is assumed; the optimizer is usually left eager (foreach); DDP
	// overlaps as in eager mode (DDPOptimizer splits the graph at bucket boundaries).
	Compiled: {Name: Compiled, HostKernelSeconds: 4e-6, HostLayerSeconds: 10e-6, OptimizerTensorSeconds: 5e-6,
		OptimizerTempBytesPerParam: 4, ForeachOptimizer: true, OverlapGradReduce: true, OverlapParamGather: true, AsyncTensorComm: true, TracedCommWaits: true, ReturnsLogits: true, PipelineStageBuffers: true, FixedBytes: contextBytes, AllocatorReserve: allocatorReserve,
		Note: "torch.compile (Inductor): ~4 us host time per kernel, eager foreach AdamW, DDP overlapping the all-reduce, async TP when tensor-parallel overlap is on"},
	// CUDA graphs (torch.compile mode="reduce-overhead", or Megatron-LM / Transformer
	// Engine graph capture): one launch replays a layer's kernels, so the host cost is
	// one graph launch per layer and pass; the optimizer is a fused multi-tensor kernel
	// updating in place (Apex/TE FusedAdam, about 1 us per tensor). As in Megatron-LM's
	// defaults (overlap_grad_reduce off; Korthikanti et al. 2022, section 6.3, "we do not
	// use any overlapping of gradient all-reduces") the all-reduce follows the backward.
	CUDAGraphs: {Name: CUDAGraphs, HostKernelSeconds: 0, HostLayerSeconds: 10e-6, OptimizerTensorSeconds: 1e-6,
		OptimizerTempBytesPerParam: 0, OverlapGradReduce: false, MegatronBuckets: true, FusedActivation: true, FusedFC1: true, FusedCrossEntropy: true, FixedBytes: contextBytes, AllocatorReserve: allocatorReserve,
		Note: "CUDA graphs (Megatron-LM / TE capture, or reduce-overhead): one launch per layer, fused in-place Adam, all-reduce after the backward"},
	// Megatron-Core with Transformer Engine, no CUDA graphs: what cuda-graphs models
	// (the fused SwiGLU and cross-entropy, fused in-place Adam, Megatron-LM's
	// overlap defaults, no logits kept), but every kernel of the analytic model is
	// launched from Python, through Megatron-Core's and Transformer Engine's module
	// code and PyTorch's dispatcher (and autograd's engine in the backward), as an
	// eager operator is: eagerOpSeconds per kernel and eager PyTorch's per-layer
	// module call. This is how Megatron-LM runs without --cuda-graph-impl (its
	// default, "none") and how Megatron-Bridge's performance recipes run where they
	// set no cuda_graph_impl or capture only moe_router and moe_preprocess
	// (scripts/performance/configs/qwen/qwen3_workload_base_configs.py, v0.3.0:
	// Qwen3 235B-A22B on B200 and B300, Qwen3 30B-A3B on B200; Megatron-Bridge's
	// docs/performance-guide.md, "CUDA graph to eliminate repeated static host code
	// execution": token-dropless mixtures capture "the dense modules only").
	// (A dropless mixture's experts run eagerly in every mode: package analytic's
	// moeHostSeconds.) Gradients live in Megatron-Core's gradient buffer
	// (MainGradBuffer).
	Megatron: {Name: Megatron, HostKernelSeconds: eagerOpSeconds, HostLayerSeconds: eagerLayerSeconds, OptimizerTensorSeconds: 1e-6,
		OptimizerTempBytesPerParam: 0, OverlapGradReduce: false, MegatronBuckets: true, FusedActivation: true, FusedFC1: true, FusedCrossEntropy: true, MainGradBuffer: true, FixedBytes: contextBytes, AllocatorReserve: allocatorReserve,
		Note: "Megatron-Core with Transformer Engine launched without CUDA graphs: Megatron-style fusions and fused Adam, ~15 us host time per kernel (Python module code, dispatcher, launch), all-reduce after the backward, Megatron-Core's gradient buffer (zeroed each step; the embedding's gradient added to it each microbatch)"},
	// DeepSpeed's PipelineEngine running Megatron-DeepSpeed (bigscience-workshop/
	// Megatron-DeepSpeed, microsoft/DeepSpeed of 2021-2022): the model code is
	// Megatron-LM's of its day (apex's fused LayerNorm, fused bias-GeLU, fused
	// scale-mask-softmax; a gated MLP's activation unfused: BigScience's
	// megatron/model/glu_activations.py, SwiGLU, calls F.silu and multiplies), its loss mpu.vocab_parallel_cross_entropy on fp32 logits
	// (megatron/model/gpt_model.py, CrossEntropy), every kernel launched from Python
	// (no CUDA graphs: eager PyTorch's host time per kernel and layer, as megatron), the
	// update apex's FusedAdam in place. The pipeline engine reduces the data-parallel
	// gradients after the schedule's last backward pass (schedule.py, TrainSchedule:
	// ReduceTiedGrads, ReduceGrads and OptimizerStep in its last step; engine.py sets
	// enable_backward_allreduce False), so nothing overlaps them; its sends and
	// receives block (BlockingPipelineTransfers). Gradients are the engine's own
	// (param.grad, or DeepSpeed's BF16 optimizer's fp32 copies: training.precision
	// deepspeed-bf16), not Megatron-Core's buffer.
	DeepSpeed: {Name: DeepSpeed, HostKernelSeconds: eagerOpSeconds, HostLayerSeconds: eagerLayerSeconds, OptimizerTensorSeconds: 1e-6,
		OptimizerTempBytesPerParam: 0, OverlapGradReduce: false, FusedFC1: true, CrossEntropyVocabParallel: true, BlockingPipelineTransfers: true, ParamGradAccumulate: true, ZeRO1AllReduce: true,
		FixedBytes: eagerContextBytes, AllocatorReserve: allocatorReserve, PipelineAllocatorReserve: deepSpeedPipelineReserve,
		Note: "Megatron-DeepSpeed on DeepSpeed's PipelineEngine: Megatron-LM's fused kernels and vocab-parallel loss, ~15 us host time per kernel, fused Adam, all-reduce after the backward, blocking pipeline sends and receives, a CUDA context of 2022 (kernels loaded eagerly: 1,573 MiB measured by BigScience), the caching allocator reserving 15.3% beyond the allocated peak on pipeline stages (BigScience's log of its PipelineEngine)"},
}

// The loss kernels model.architecture.cross_entropy names (Framework.SetCrossEntropy).
const (
	// CrossEntropyUnfused: PyTorch's F.cross_entropy on logits upcast to fp32, as
	// HuggingFace's models compute the loss: the fp32 copy and log-probabilities, and
	// their gradients, per token and word (eager and compiled).
	CrossEntropyUnfused = "unfused"
	// CrossEntropyFused: one kernel reads the 16-bit logits, keeps them and each row's
	// log-sum-exp, and writes their gradient to a new 16-bit tensor (flash-attn's
	// CrossEntropyLoss, inplace_backward=False: LLM Foundry's loss_fn
	// fused_crossentropy, its MPT default). F.cross_entropy on upcast logits compiled
	// by torch.compile holds and moves the same (Inductor fuses the upcast into its
	// reductions: "memory-wise it's ~0 for just fwd and ~d_input for fw+bw", a
	// torch.compile developer, Dao-AILab/quack#48, 2025-10-07): torchtitan's loss
	// under training.compile since 2025 (torchtitan/components/loss.py,
	// build_cross_entropy_loss, at e7c0cae).
	CrossEntropyFused = "fused"
	// CrossEntropyFusedInplace: the same kernel writing the gradient over the logits
	// (Transformer Engine's parallel_cross_entropy, Megatron-Core's
	// --cross-entropy-loss-fusion; flash-attn's with inplace_backward=True): the
	// cuda-graphs and megatron modes.
	CrossEntropyFusedInplace = "fused-inplace"
	// CrossEntropyVocabParallel: Megatron-LM's unfused vocab-parallel cross-entropy
	// (megatron/core/tensor_parallel/cross_entropy.py at core_r0.8.0; megatron/mpu/
	// cross_entropy.py before, and Megatron-DeepSpeed's): the logits cast to fp32, then
	// the row's maximum, its subtraction, the exponential, the row's sum and the
	// division one kernel each, the fp32 softmax kept for the backward pass, which
	// scales it in place and casts it back to 16 bits. Megatron-LM's default until
	// Megatron-Core r0.8.0 fused it on request (--cross-entropy-loss-fusion,
	// cross_entropy_loss_fusion False in megatron/core/model_parallel_config.py).
	CrossEntropyVocabParallel = "vocab-parallel"
	// CrossEntropyLossParallel: PyTorch's loss parallelism (torch/distributed/tensor/
	// parallel/loss.py: _log_softmax, _nll_loss_and_log_softmax_backward), what
	// torchtitan's tensor parallelism runs: F.cross_entropy on the fp32 copy of
	// vocabulary-sharded logits, its log-softmax and backward as elementwise
	// operators, each writing a new fp32 tensor the size of the logits.
	CrossEntropyLossParallel = "loss-parallel"
)

// CrossEntropyKinds lists the loss kernels SetCrossEntropy accepts.
func CrossEntropyKinds() []string {
	return []string{CrossEntropyUnfused, CrossEntropyFused, CrossEntropyFusedInplace, CrossEntropyVocabParallel, CrossEntropyLossParallel}
}

// CrossEntropy names the framework's loss kernel (one of CrossEntropyKinds).
func (f Framework) CrossEntropy() string {
	switch {
	case f.CrossEntropyVocabParallel:
		return CrossEntropyVocabParallel
	case f.CrossEntropyLossParallel:
		return CrossEntropyLossParallel
	case !f.FusedCrossEntropy:
		return CrossEntropyUnfused
	case f.CrossEntropyGradCopy:
		return CrossEntropyFused
	}
	return CrossEntropyFusedInplace
}

// SetCrossEntropy makes the framework compute the loss with the kernel named (one of
// CrossEntropyKinds), whatever its mode's default.
func (f *Framework) SetCrossEntropy(kind string) error {
	f.CrossEntropyVocabParallel, f.CrossEntropyLossParallel = false, false
	switch kind {
	case CrossEntropyVocabParallel:
		f.FusedCrossEntropy, f.CrossEntropyGradCopy, f.CrossEntropyVocabParallel = false, false, true
	case CrossEntropyLossParallel:
		f.FusedCrossEntropy, f.CrossEntropyGradCopy, f.CrossEntropyLossParallel = false, false, true
	case CrossEntropyUnfused:
		f.FusedCrossEntropy, f.CrossEntropyGradCopy = false, false
	case CrossEntropyFused:
		f.FusedCrossEntropy, f.CrossEntropyGradCopy = true, true
	case CrossEntropyFusedInplace:
		f.FusedCrossEntropy, f.CrossEntropyGradCopy = true, false
	default:
		return fmt.Errorf("must be one of %s, got %q", strings.Join(CrossEntropyKinds(), ", "), kind)
	}
	return nil
}

// LookupFramework returns the framework mode of that name (case-insensitive).
func LookupFramework(name string) (Framework, error) {
	f, ok := frameworks[strings.ToLower(name)]
	if !ok {
		return Framework{}, fmt.Errorf("unknown framework %q; known: %s", name, strings.Join(FrameworkNames(), ", "))
	}
	return f, nil
}

// FrameworkNames lists the framework modes, sorted.
func FrameworkNames() []string {
	names := make([]string, 0, len(frameworks))
	for k := range frameworks {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Validate checks the figures; errors name the field under prefix ("framework").
func (f Framework) Validate(prefix string) error {
	var es model.Errors
	es.NonNegative(prefix+".host_kernel_seconds", f.HostKernelSeconds)
	es.NonNegative(prefix+".host_layer_seconds", f.HostLayerSeconds)
	es.NonNegative(prefix+".optimizer_tensor_seconds", f.OptimizerTensorSeconds)
	es.NonNegative(prefix+".optimizer_temp_bytes_per_param", f.OptimizerTempBytesPerParam)
	if f.FixedBytes < 0 || f.FixedBytes > MaxMemoryBytes {
		es.Add(prefix+".fixed_bytes", "must be between 0 and %d, got %d", int64(MaxMemoryBytes), f.FixedBytes)
	}
	if !(f.AllocatorReserve >= 0 && f.AllocatorReserve <= 1) {
		es.Add(prefix+".allocator_reserve", "must be in [0, 1], got %v", f.AllocatorReserve)
	}
	if !(f.PipelineAllocatorReserve >= 0 && f.PipelineAllocatorReserve <= 1) {
		es.Add(prefix+".pipeline_allocator_reserve", "must be in [0, 1], got %v", f.PipelineAllocatorReserve)
	}
	return es.Err()
}

// Reserve is the caching allocator's reserve, a fraction of a stage's allocated peak,
// on a pipeline of stages stages: PipelineAllocatorReserve from two stages on where the
// framework states one, else AllocatorReserve.
func (f Framework) Reserve(stages int) float64 {
	if stages >= 2 && f.PipelineAllocatorReserve > 0 {
		return f.PipelineAllocatorReserve
	}
	return f.AllocatorReserve
}

// LeastReserve is the least reserve Reserve gives for any number of stages: what a
// bound that must never rule out a fitting plan charges.
func (f Framework) LeastReserve() float64 {
	if f.PipelineAllocatorReserve > 0 {
		return min(f.AllocatorReserve, f.PipelineAllocatorReserve)
	}
	return f.AllocatorReserve
}

// HostSeconds is the host time of a pass that launches kernels kernels over layers layers.
func (f Framework) HostSeconds(kernels, layers float64) float64 {
	return kernels*f.HostKernelSeconds + layers*f.HostLayerSeconds
}

// ScaleHost returns the framework with its host figures (HostKernelSeconds,
// HostLayerSeconds, OptimizerTensorSeconds) multiplied by scale: the mode run from a
// host that takes scale times as long per operator as the reference (an H100 machine's
// x86 host, which the figures are stated for; Perf.HostSecondsScale).
func (f Framework) ScaleHost(scale float64) Framework {
	f.HostKernelSeconds *= scale
	f.HostLayerSeconds *= scale
	f.OptimizerTensorSeconds *= scale
	return f
}

// eagerOpSeconds is eager PyTorch's host time per operator it dispatches (a call from
// Python in the forward pass, an ATen operator of the autograd engine in the backward;
// Framework.EagerOps), with CUDA tensors: fitted to the host-bound training steps (a
// microbatch of one sequence: GPT-2 small to XL, Llama-3.2-1B; BERT-large at 8) that
// tools/measure/steps.py timed on an H100 SXM machine with PyTorch 2.11 and
// transformers 5.17 (core/request/testdata/measured_h100_steps.json; TestMeasuredSteps
// plans them): 15 us, within 25% of each. Such steps vary by up to a quarter between
// runs of the same machine. On CPU tensors (tools/opcount/host_cost.py, PyTorch 1.13)
// a forward call costs 4.3 us and a backward operator 5.4 us: a CUDA tensor adds the
// kernel launch and the caching allocator's bookkeeping. calibrate fits it to a user's
// own profile.
const eagerOpSeconds = 15e-6

// eagerLayerSeconds is eager PyTorch's fixed host time per layer and pass: the module's
// call, its hooks and the Python around its operators (a round figure, not measured
// apart from eagerOpSeconds; calibrate fits both).
const eagerLayerSeconds = 20e-6

// MegatronBucketSizes are the gradient buckets, in elements, that Megatron-Core's
// _ParamAndGradBuffer cuts one buffer's parameters into (megatron/core/distributed/
// param_and_grad_buffer.py, core_v0.13.1, _ParamAndGradBuffer.__init__): params in
// registration order, walked in reverse ("to roughly follow backprop order"); with the
// distributed optimizer (distOpt) each parameter starts at a multiple of 64 elements
// (_pad_start_of_param_if_needed); a bucket is closed as soon as its elements reach
// bucketSize ("(param_end_index - bucket_start_index) >= bucket_size"), so at a
// parameter's end, never inside one, and with the distributed optimizer its end is
// padded to a multiple of lcm(dp, 128) (_pad_end_of_bucket_if_needed without
// pad_buckets_for_high_nccl_busbw); what is left forms the last bucket. The count thus
// follows the parameters' sizes, not their total over bucketSize: a bucketSize below
// the smallest parameter (custom.yaml's 64 in Cisco's MLPerf v5.1 Llama 3.1 8B
// implementation) makes every parameter a bucket of its own. bucketSize 0 is
// Megatron-Core's None (no bucketing: one bucket). Shared-embedding parameters, which
// the distributed optimizer puts in a bucket of their own, are not told apart here.
// Nil for no parameters.
func MegatronBucketSizes(params []int64, bucketSize int64, dp int, distOpt bool) []int64 {
	pad := func(n, d int64) int64 { return (n + d - 1) / d * d }
	endDivisor := int64(1)
	if distOpt {
		endDivisor = lcm(max(1, int64(dp)), 128)
	}
	var out []int64
	var start, bucketStart, end int64
	open := false
	for i := len(params) - 1; i >= 0; i-- {
		n := params[i]
		if n <= 0 {
			continue
		}
		if distOpt {
			start = pad(start, 64)
		}
		end = start + n
		open = true
		if bucketSize > 0 && end-bucketStart >= bucketSize {
			padded := pad(end, endDivisor)
			out = append(out, padded-bucketStart)
			bucketStart, start, open = padded, padded, false
			continue
		}
		start = end
	}
	if open {
		out = append(out, pad(end, endDivisor)-bucketStart)
	}
	return out
}

func lcm(a, b int64) int64 {
	g, h := a, b
	for h != 0 {
		g, h = h, g%h
	}
	return a / g * b
}
