// Package analytic is pipeplan's analytic (symbolic) profiler: from an architecture
// (package arch), a device and the run's options it estimates, without running anything,
// what every layer of a transformer costs for one microbatch: parameters, FLOPs, forward
// and backward time, memory kept for the backward pass, working memory and the tensor
// passed on; and it turns the estimate into a model.Model the partitioner splits.
//
// Method. Time is a roofline per operation (each matrix product at the device's dense
// peak times an efficiency, or its bytes at the memory bandwidth times an efficiency,
// whichever is longer; each memory-bound operation at the bandwidth times an efficiency)
// plus a launch cost per kernel. A fused attention kernel (FlashAttention-2 or -3,
// cuDNN) runs at its published rate on devices with published figures (H100, H200:
// Shah et al. 2024; B200, GB200, B300, GB300: NVIDIA's cuDNN frontend benchmarks), by
// pass, sequence length, head dimension and causal mask, not at the linear layers'
// matrix efficiency (attention.go). Activation memory follows
// Korthikanti et al. 2022 (s*b*h*(34 + 5*a*s/h) bytes per GPT block at 16 bits with dropout), generalised to
// grouped-query attention, SwiGLU, mixtures of experts, flash attention and
// recomputation. Parameters, gradients and optimizer state follow the ZeRO paper
// (Rajbhandari et al. 2020): 16 bytes per parameter in mixed precision with Adam.
//
// Tensor parallelism follows Megatron-LM (Shoeybi et al. 2019; Narayanan et al. 2021):
// attention heads, MLP width and vocabulary split over t devices, the activations of
// Korthikanti et al. 2022, Table 2, with and without sequence parallelism
// (s*b*h*(10 + 24/t + 5*a*s/(h*t)) and s*b*h/t*(34 + 5*a*s/h) per GPT block), and a
// ring all-reduce of the b*s*h activation (2(t-1)/t of its bytes each way, plus 2(t-1)
// link latencies) twice in each block's forward pass and twice in its backward pass.
//
// Everything here is an estimate of a typical implementation (Megatron-style fused
// softmax, HuggingFace-style fp32 loss); see the doc comments of each part for what is
// counted.
package analytic

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Layer is the estimate for one pipeline layer and one microbatch.
type Layer struct {
	Name string `json:"name"`
	// Kind is embedding, block, attention, mlp, final_norm or lm_head.
	Kind string `json:"kind"`
	// Params the layer holds: with tied embeddings copied, the matrix counts at both
	// ends; held in one stage, at the embedding only.
	Params int64 `json:"params"`
	// ParamBytes are its weights; GradBytes their gradients (training); OptimizerBytes
	// its optimizer state with fp32 master weights: one device's shards (the state from
	// ZeRO-1 on, the gradients from ZeRO-2, the weights under ZeRO-3; FullBytes gives
	// them whole).
	ParamBytes     int64 `json:"param_bytes"`
	GradBytes      int64 `json:"grad_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// GradCopyBytes are the 16-bit gradients kept beside the fp32 GradBytes through the
	// step (precision deepspeed-bf16); 0 otherwise. Model counts them with the gradients;
	// the data-parallel reduction does not move them.
	GradCopyBytes int64 `json:"grad_copy_bytes,omitempty"`
	// FP8WeightBytes is what an fp8 recipe keeps beside the weights through the step:
	// the fp8 copies of its products' weights (both layouts, with scales) and their
	// scaling state (amax history); 0 without fp8. Model counts it with the weights. With
	// fp8 primary weights (Options.FP8ParamGather) ParamBytes leaves out those weights'
	// 16-bit copy.
	FP8WeightBytes int64 `json:"fp8_weight_bytes,omitempty"`
	// FwdFLOPs and BwdFLOPs are the FLOPs of its matrix products (the backward pass
	// includes recomputation).
	FwdFLOPs float64 `json:"fwd_flops"`
	BwdFLOPs float64 `json:"bwd_flops"`
	// FwdSeconds and BwdSeconds: time of one microbatch (BwdSeconds includes recomputation).
	FwdSeconds float64 `json:"fwd_seconds"`
	BwdSeconds float64 `json:"bwd_seconds"`
	// SavedActivationBytes is held from this layer's forward pass to its backward pass.
	SavedActivationBytes int64 `json:"saved_activation_bytes"`
	// OutputBytes is the tensor passed to the next layer (the loss, 4 bytes, after the head
	// in training; the logits in inference).
	OutputBytes int64 `json:"output_bytes"`
	// TemporaryBytes is its peak working memory while it runs (forward or backward): its
	// own saved activations, its output or gradients, and transients.
	TemporaryBytes int64 `json:"temporary_bytes"`
	// TiedParams is the part of Params that is the tied embedding matrix.
	TiedParams int64 `json:"tied_params,omitempty"`
	// TensorAllReduceSeconds is the device time of its tensor-parallel all-reduces
	// (0 for t = 1); the part its products do not hide (all of it without
	// Options.TensorCommOverlap) is part of the device time of FwdSeconds + BwdSeconds.
	TensorAllReduceSeconds float64 `json:"tensor_allreduce_seconds,omitempty"`
	// ContextSeconds is the time its context-parallel exchanges add (not hidden behind
	// the attention), forward and backward, part of FwdSeconds + BwdSeconds.
	ContextSeconds float64 `json:"context_seconds,omitempty"`
	// ExpertParams is the part of Params that is routed experts (E/EP of them, split
	// over the expert tensor group): their optimizer state is sharded, and their
	// gradients all-reduced, over the expert-data-parallel group.
	ExpertParams int64 `json:"expert_params,omitempty"`
	// ExpertGradBytes is the part of GradBytes that is routed experts' gradients.
	ExpertGradBytes int64 `json:"expert_grad_bytes,omitempty"`
	// ExpertCommSeconds is the device time of its mixtures' token dispatch and combine
	// all-to-alls and expert-tensor gathers in both passes (and the load-balancing
	// loss's all-reduce of the tokens per expert), and ExpertExposedSeconds the
	// part not hidden by Options.ExpertOverlap: what FwdSeconds + BwdSeconds include.
	ExpertCommSeconds    float64 `json:"expert_comm_seconds,omitempty"`
	ExpertExposedSeconds float64 `json:"expert_exposed_seconds,omitempty"`
	// FwdKernels and BwdKernels count the kernels each pass launches (the backward's
	// include recomputation); FwdHostSeconds and BwdHostSeconds are the framework's host
	// time to launch them. A pass takes the longer of its device time and its host time.
	FwdKernels     float64 `json:"fwd_kernels"`
	BwdKernels     float64 `json:"bwd_kernels,omitempty"`
	FwdHostSeconds float64 `json:"fwd_host_seconds,omitempty"`
	BwdHostSeconds float64 `json:"bwd_host_seconds,omitempty"`
	// FwdDeviceSeconds and BwdDeviceSeconds: the roofline and launch time on the device.
	FwdDeviceSeconds float64 `json:"fwd_device_seconds"`
	BwdDeviceSeconds float64 `json:"bwd_device_seconds,omitempty"`
	// ParamTensors counts its parameter tensors (the optimizer's host cost is per tensor).
	ParamTensors int `json:"param_tensors"`
	// MegatronParams are its parameter tensors on one device as Megatron-Core registers
	// them, in order (the attention and MLP parts' norms, biases and linear weights,
	// megatronTensors; any other part's params, less its routed experts', in
	// ParamTensors equal tensors, and a tied matrix one): what Megatron-Core's dense
	// gradient buckets close at
	// (cluster.MegatronBucketSizes). Not part of the JSON.
	MegatronParams []ParamTensor `json:"-"`
	// FwdTerms and BwdTerms split each pass's device time into what the device's
	// figures scale (package calibrate fits them to measured times).
	FwdTerms Terms `json:"-"`
	BwdTerms Terms `json:"-"`

	usesTied int64 // the tied matrix this layer uses, held here or in its stage
	// extraFLOPs: the forward FLOPs of its experts' load beyond balanced routing.
	extraFLOPs float64
	// bf16Dropped is the 16-bit weights that fp8 primary weights do without
	// (Options.FP8ParamGather), and the bytes the weights kept gathered through the step
	// (Options.KeepGathered) save when FSDP gathers them in fp8 (Options.FP8FSDPAllGather),
	// already out of ParamBytes.
	bf16Dropped int64
	// fp8Weights are the weight elements of its fp8 products (0 without fp8), and
	// fp8ExpertWeights those of them that are routed experts': what the distributed
	// optimizer gathers in fp8 with fp8 primary weights (Options.FP8ParamGather,
	// ParamGatherBytes) and FSDP2 with torchao's float8 all-gather
	// (Options.FP8FSDPAllGather, FP8GatherWeightBytes).
	fp8Weights, fp8ExpertWeights int64
	// fp8Gathered is fp8Weights where FSDP all-gathers them in fp8, 1 byte each, rather
	// than in the weights' own type (Options.FP8FSDPAllGather applies); 0 elsewhere.
	fp8Gathered int64
}

// Terms is a pass's device time by what sets it, at the full peak and bandwidth:
// MatmulSeconds, the FLOPs of its compute-bound kernels at the matrix peak (the fp8 peak
// for fp8 layers); MemorySeconds, the bytes of its memory-bound kernels at the memory
// bandwidth; Kernels launched (besides communication); CommSeconds and CommKernels of
// its tensor-parallel all-reduces (the host launches them too). Which kernels
// are compute-bound is decided at the target's efficiencies. The device time is
// MatmulSeconds / matmul efficiency + MemorySeconds / memory efficiency + Kernels x
// kernel seconds + CommSeconds.
//
// HostOps is what the host dispatches in the pass (its host time is HostOps x the
// framework's HostKernelSeconds, plus a fixed time per layer): the kernels and
// communication kernels, or with cluster.Framework.EagerOps the operators eager
// PyTorch dispatches (calls from Python forward, ATen operators backward).
type Terms struct {
	MatmulSeconds, MemorySeconds, Kernels, CommSeconds, CommKernels, HostOps float64
}

// Total sums the layers for one device holding the whole model, one microbatch, one
// training step (a tied matrix counted once).
type Total struct {
	// Params is the number of distinct parameters of the model (with its multi-token
	// prediction modules in training); DeviceParams those one device holds (Params / t,
	// about, under t-way tensor parallelism; the routed experts divided by EP too), of
	// which DeviceExpertParams are routed experts.
	Params             int64 `json:"params"`
	DeviceParams       int64 `json:"device_params"`
	DeviceExpertParams int64 `json:"device_expert_params,omitempty"`
	// WeightsBytes, GradsBytes and OptimizerBytes: parameters, gradients, optimizer state
	// with master weights (per device under ZeRO-1). WeightsBytes includes FP8WeightBytes,
	// the fp8 recipe's weight copies and scaling state.
	WeightsBytes   int64 `json:"weights_bytes"`
	FP8WeightBytes int64 `json:"fp8_weight_bytes,omitempty"`
	GradsBytes     int64 `json:"grads_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// GradCopyBytes are the 16-bit gradients kept beside the fp32 ones (precision
	// deepspeed-bf16), apart from GradsBytes; 0 otherwise.
	GradCopyBytes int64 `json:"grad_copy_bytes,omitempty"`
	// ActivationBytes is what one microbatch keeps for the backward pass, all layers.
	ActivationBytes int64 `json:"activation_bytes"`
	// PeakBytes is the high-water mark of allocated memory over a training step: the
	// weights, gradients and optimizer state, plus the larger of two phases' peaks: the
	// passes' (over layers, a layer's working memory and the activations the layers before
	// it keep) and the optimizer step's (its temporaries, OptimizerTempBytes). The maximum
	// over the step, not a sum of each part's maximum.
	PeakBytes int64 `json:"peak_bytes"`
	// OptimizerTempBytes is what the optimizer step allocates beside the state
	// (cluster.Framework.OptimizerTempBytesPerParam per parameter held).
	OptimizerTempBytes int64 `json:"optimizer_temp_bytes,omitempty"`
	// FrameworkBytes is the framework's fixed memory (CUDA context, workspaces,
	// communication buffers); ReservedBytes what the caching allocator holds beyond the
	// peak (cluster.Framework.AllocatorReserve of it); PeakDeviceBytes = PeakBytes +
	// ReservedBytes + FrameworkBytes, the device memory the step needs (what nvidia-smi
	// shows at the peak).
	FrameworkBytes  int64   `json:"framework_bytes,omitempty"`
	ReservedBytes   int64   `json:"reserved_bytes,omitempty"`
	PeakDeviceBytes int64   `json:"peak_device_bytes"`
	FwdFLOPs        float64 `json:"fwd_flops"`
	BwdFLOPs        float64 `json:"bwd_flops"`
	// ModelFwdFLOPs is FwdFLOPs with balanced routing: what a mixture's imbalance adds to
	// the busiest device is time, not model FLOPs (MFU counts these).
	ModelFwdFLOPs float64 `json:"model_fwd_flops"`
	// FwdSeconds and BwdSeconds over all layers; OptimizerSeconds is the optimizer update:
	// the longer of a memory-bound pass over parameters, gradients and state and the
	// framework's host time per parameter tensor (OptimizerHostSeconds); StepSeconds their
	// sum, with the data-parallel communication where the request states it
	// (Result.DataParallel: its PipelineSeconds for the passes, plus its ExposedSeconds)
	// and the training metrics' per-step synchronisation across the request's devices
	// (TrainMetricSyncSeconds, set by the request, as a one-stage plan prices it), and
	// under Options.ExpertOverlap the expert all-to-alls of the step's unpaired first
	// forward and last backward (ExpertUnpairedSeconds, set by the request: its
	// wire.Step's).
	FwdSeconds           float64 `json:"fwd_seconds"`
	BwdSeconds           float64 `json:"bwd_seconds"`
	OptimizerSeconds     float64 `json:"optimizer_seconds"`
	OptimizerHostSeconds float64 `json:"optimizer_host_seconds,omitempty"`
	// ParamTensors counts the parameter tensors one device holds.
	ParamTensors           int     `json:"param_tensors"`
	TrainMetricSyncSeconds float64 `json:"train_metric_sync_seconds,omitempty"`
	ExpertUnpairedSeconds  float64 `json:"expert_unpaired_seconds,omitempty"`
	StepSeconds            float64 `json:"step_seconds"`
	// TokensPerSecond is the whole job's: the tokens of a step of one microbatch on
	// every data-parallel replica (Options.StepTokens, b x s x DataParallel) over
	// StepSeconds, as a plan's wire.Step.TokensPerSecond counts all its replicas' (a
	// replica's tensor- and context-parallel devices work on the same b x s tokens).
	TokensPerSecond float64 `json:"tokens_per_second"`
	// TiedAllReduceBytes and TiedAllReduceSeconds: with tied embeddings copied to both
	// ends, the gradient all-reduce between the first and last stage, once per step
	// (not in the layers' times).
	TiedAllReduceBytes   int64   `json:"tied_allreduce_bytes,omitempty"`
	TiedAllReduceSeconds float64 `json:"tied_allreduce_seconds,omitempty"`
}

// DataParallel is a device's data-parallel communication in a training step of one
// microbatch, priced by the planning request over the cluster's links with the
// functions its plans' steps are priced by (core/request), so that an estimate and the
// same request planned on one stage and one microbatch agree on every term. With it,
// Total.StepSeconds is PipelineSeconds + ExposedSeconds + OptimizerSeconds +
// TrainMetricSyncSeconds + ExpertUnpairedSeconds.
type DataParallel struct {
	// PipelineSeconds is one microbatch's forward and backward with the per-layer
	// collectives that run inside them (zero3, hsdp): Total's FwdSeconds + BwdSeconds
	// plus LayerAddedSeconds.
	PipelineSeconds float64 `json:"pipeline_seconds"`
	// LayerCollectiveSeconds are zero3's and hsdp's per-layer weight all-gathers and
	// gradient reduce-scatters, which run beside the layers' compute; LayerAddedSeconds
	// what they add to the passes (the rest is hidden, less the compute they slow by
	// holding NCCL's SMs).
	LayerCollectiveSeconds float64 `json:"layer_collective_seconds,omitempty"`
	LayerAddedSeconds      float64 `json:"layer_added_seconds,omitempty"`
	// LayerSlowdownSeconds is, of LayerAddedSeconds, the compute slowed by the
	// collectives beside it; the rest is communication that outlasts the compute.
	LayerSlowdownSeconds float64 `json:"layer_slowdown_seconds,omitempty"`
	// AllReduceSeconds (no sharding; hsdp across its groups), ReduceScatterSeconds and
	// AllGatherSeconds (zero1, zero2): the collectives once per step; ExposedSeconds
	// what they add to the step, which the step counts: the part of them that compute
	// does not hide, and the compute slowed by the part it hides (SlowdownSeconds of
	// it: the collectives hold NCCL's SMs).
	AllReduceSeconds     float64 `json:"allreduce_seconds,omitempty"`
	ReduceScatterSeconds float64 `json:"reduce_scatter_seconds,omitempty"`
	AllGatherSeconds     float64 `json:"all_gather_seconds,omitempty"`
	ExposedSeconds       float64 `json:"exposed_seconds"`
	SlowdownSeconds      float64 `json:"slowdown_seconds,omitempty"`
	// Breakdown writes the step as the parts that add up to Total.StepSeconds, naming
	// what is hidden and behind what, as a plan's step does (wire.Step.Breakdown).
	Breakdown string `json:"breakdown"`
}

// Result is an analytic estimate of a model on a device.
type Result struct {
	// Name of the model, and of the device.
	Name   string  `json:"model"`
	Device string  `json:"device"`
	Arch   string  `json:"architecture"`
	Opts   Options `json:"options"`
	Layers []Layer `json:"layers"`
	Total  Total   `json:"total"`
	// DataParallel is the data-parallel communication of the step, set where the
	// planning request (core/request) knows the links it crosses; nil without data
	// parallelism, and from Estimate, which knows no link.
	DataParallel *DataParallel `json:"data_parallel,omitempty"`

	inputBytes int64
	perParam   bytesPerParam
	optShard   float64
	// expertOptShard is optShard for routed experts (sharded over the
	// expert-data-parallel group).
	expertOptShard float64
	// paramSums are prefix sums of the layers' params (tied matrices at both ends), and
	// tempPerParam the framework's optimizer temporaries per parameter (0 in inference):
	// OptimizerTempBytes of any range in O(1).
	paramSums    []int64
	tempPerParam float64
	// rf is the roofline the layers were costed with, and tensorSeconds the framework's
	// host time per parameter tensor of the optimizer step (0 in inference):
	// OptimizerSeconds of any range.
	rf            roofline
	tensorSeconds float64
	// foreach: the framework's optimizer is torch.optim's foreach implementation
	// (cluster.Framework.ForeachOptimizer), whose update makes several passes.
	foreach bool
	// zeroGrads: the step zeroes the device's whole gradient buffer
	// (cluster.Framework.MainGradBuffer).
	zeroGrads bool
}

// TiedBytes splits the shared item of a tied embedding matrix (Model's TiedGroup, held
// once per stage) into the matrix's weights, gradients and optimizer state; all 0
// without one.
func (r *Result) TiedBytes() (weights, grads, optimizer int64) {
	n := r.Layers[0].usesTied
	if n == 0 {
		return 0, 0, 0
	}
	p := r.perParam
	total := ceil(float64(n) * (p.weight + p.grad + p.gradCopy + r.optShard))
	weights, grads = ceil(float64(n)*p.weight), ceil(float64(n)*(p.grad+p.gradCopy))
	return weights, grads, total - weights - grads
}

// OptimizerTempBytes is what the optimizer step allocates beside the state for the
// parameters of layers [first, last] (cluster.Framework.OptimizerTempBytesPerParam per
// parameter, sharded under ZeRO-1), a tied matrix copied to both ends counted once when
// the range holds both, as Total.OptimizerTempBytes counts the whole model. It does not
// decrease as a range grows (estimate.Options.OptimizerTempBytes).
func (r *Result) OptimizerTempBytes(first, last int) int64 {
	if r.tempPerParam == 0 || first < 0 || last >= len(r.Layers) || first > last {
		return 0
	}
	params := r.paramSums[last+1] - r.paramSums[first]
	if first == 0 && last == len(r.Layers)-1 && r.Opts.Tie == TieCopy {
		params -= r.Layers[0].TiedParams // both ends hold the matrix: once in one stage
	}
	temp := r.tempPerParam * float64(params)
	return ceil(temp / r.Opts.sharded())
}

// OptimizerSeconds is the optimizer update of the parameters of layers [first, last] on
// the estimate's device: deviceSeconds the memory-bound pass (it reads each gradient, the
// weight or its fp32 master and the state, and writes the weight, the master and the
// state; one fused kernel per layer), hostSeconds the framework's host time per parameter
// tensor. The update takes the longer of the two; over several ranges on one device each
// part adds up before the longer is taken. Under ZeRO-1 and beyond each device updates
// its shard: dense parameters over the shard group, routed experts over the expert shard
// group. A tied matrix copied to both ends counts once when the range holds both, as
// Total.OptimizerSeconds, which is this over all layers, does. Both are 0 in inference
// or for an empty range. This is the one formula of the update: a one-stage plan's step
// (core/request) uses it too.
func (r *Result) OptimizerSeconds(first, last int) (deviceSeconds, hostSeconds float64) {
	o := r.Opts
	if o.Inference() || first < 0 || last >= len(r.Layers) || first > last {
		return 0, 0
	}
	var params, experts int64
	tensors := 0
	for _, l := range r.Layers[first : last+1] {
		params += l.Params
		experts += l.ExpertParams
		tensors += l.ParamTensors
	}
	if first == 0 && last == len(r.Layers)-1 && o.Tie == TieCopy {
		params -= r.Layers[0].TiedParams // both ends hold the matrix: once in one stage
	}
	p := o.perParam() // a shard's update touches its shard only: divided below
	src := p.weight
	if p.master > 0 {
		src = p.master
	}
	perParam := p.grad + src + p.states + p.weight + p.master + p.states
	kernels := 1.0
	if r.foreach && (o.Optimizer == Adam || o.Optimizer == AdamW) {
		perParam, kernels = foreachAdam(p, o.Optimizer == AdamW)
	}
	updated := float64(params-experts)/o.sharded() + float64(experts)/o.expertSharded()
	deviceSeconds = r.rf.seconds(work{0, perParam * updated, kernels * float64(last-first+1)})
	if r.zeroGrads {
		// Megatron-Core zeroes its gradient buffer whole (every gradient the device
		// holds, not its shard) before the step's first microbatch: one memset.
		var grads int64
		for _, l := range r.Layers[first : last+1] {
			grads += l.GradBytes
		}
		if first == 0 && last == len(r.Layers)-1 && o.Tie == TieCopy {
			grads -= int64(float64(r.Layers[0].TiedParams) * r.perParam.grad)
		}
		deviceSeconds += r.rf.seconds(work{0, float64(grads), 1})
	}
	hostSeconds = float64(tensors) / o.sharded() * r.tensorSeconds // each replica updates its shard's tensors
	return deviceSeconds, hostSeconds
}

// GradNormBytes is what the gradient-norm clipping of layers [first, last] reads on
// the estimate's device: Megatron-Core's get_grad_norm_fp32 (megatron/core/optimizer/
// clip_grads.py, core_v0.8.0 to core_v0.16.0) runs multi_tensor_l2norm over the
// optimizer's main gradients, those of the parameters the rank updates (the
// distributed optimizer's shard: the shard group's share, routed experts the expert
// shard group's), fp32 where the optimizer keeps fp32 masters (main_param.grad is the
// fp32 copy of the model gradient), the gradient's own type otherwise. A tied matrix
// copied to both ends counts once when the range holds both. 0 in inference or for an
// empty range; the norm's other costs (its all-reduce and its read to the host) are the
// step's, once (core/request).
func (r *Result) GradNormBytes(first, last int) float64 {
	o := r.Opts
	if o.Inference() || o.Optimizer == None || first < 0 || last >= len(r.Layers) || first > last {
		return 0
	}
	var params, experts int64
	for _, l := range r.Layers[first : last+1] {
		params += l.Params
		experts += l.ExpertParams
	}
	if first == 0 && last == len(r.Layers)-1 && o.Tie == TieCopy {
		params -= r.Layers[0].TiedParams
	}
	p := o.perParam()
	g := p.grad
	if p.master > 0 {
		g = 4
	}
	return g * (float64(params-experts)/o.sharded() + float64(experts)/o.expertSharded())
}

// foreachAdam is what torch.optim's foreach Adam and AdamW (torch/optim/adam.py,
// _multi_tensor_adam, PyTorch 2.x) move per parameter per step, and the passes over the
// tensors they make: AdamW's decoupled weight decay (its default is 0.01; Adam's
// default weight decay is 0, and skips it), the first moment's lerp, the second moment's
// scaling and addcmul, its square root into a temporary, the temporary's division by
// the bias correction and addition of epsilon, and the weights' addcdiv. AdamW: the
// weight (or its fp32 master) read and written twice, the first moment read and written
// and read again, the second moment read and written twice and read once more, the
// gradient read twice (addcmul reads it as both of its operands, from one load), the
// temporary (in the state's type) written, read and written twice, and read: 20 element
// accesses in 8 passes where a fused kernel makes 7 (gradient, weight and both moments
// read, the three written), 80 bytes in fp32 against 28; Adam 18 in 7. With a master
// copy, a ninth pass writes the 16-bit weight from it. Measured on an H100 SXM
// (tools/measure/kernels.py, core/analytic/testdata/h100_kernels.json): a billion fp32
// parameters in 64 tensors take 30.0 ms foreach and 10.9 ms fused, 2.7 and 2.6 TB/s at
// 80 and 28 bytes, the preset's 80% of the bandwidth.
func foreachAdam(p bytesPerParam, decoupledDecay bool) (bytes, passes float64) {
	src := p.weight
	if p.master > 0 {
		src = p.master
	}
	state := p.states / 2
	bytes, passes = 2*src+3*state+5*state+2*p.grad+6*state, 7
	if decoupledDecay {
		bytes, passes = bytes+2*src, 8
	}
	if p.master > 0 {
		bytes, passes = bytes+p.master+p.weight, passes+1 // the 16-bit weight from its master
	}
	return bytes, passes
}

// TiedGroup is the model.Layer.TieGroup and the model.Layer.Shared key of a tied embedding.
const TiedGroup = "tied_embedding"

// Estimate costs every layer of the architecture on the target for the options.
func Estimate(a *arch.Arch, t Target, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if err := checkRecipe(t, o); err != nil {
		return nil, err
	}
	if err := checkTensorParallel(a, o); err != nil {
		return nil, err
	}
	if err := checkContext(a, o); err != nil {
		return nil, err
	}
	if err := checkModules(a, o); err != nil {
		return nil, err
	}
	if err := checkAttentionKernel(t.Device.Name, o.Attention); err != nil {
		return nil, err
	}
	if err := checkFusedMLP(t.Device.Name, a, o); err != nil {
		return nil, err
	}
	if err := checkUserbuffersConfig(t.Device.Name, a, o); err != nil {
		return nil, err
	}
	if a.MLA() && o.Attention == Eager {
		return nil, &model.FieldError{Path: "attention", Reason: "latent attention (" + a.ModelType + ") is costed with flash attention only"}
	}
	if a.MLA() && o.Context > 1 {
		return nil, &model.FieldError{Path: "context_parallel", Reason: "context parallelism of latent attention (" + a.ModelType + ") is not modelled"}
	}
	if a.LearnedPositions() && o.Seq > a.MaxPositions {
		return nil, &model.FieldError{Path: "seq", Reason: fmt.Sprintf(
			"must be at most %d, the learned position embeddings of %s, got %d", a.MaxPositions, a.ModelType, o.Seq)}
	}
	sh := newShape(a, o)
	sh.keepLogits = t.Framework.ReturnsLogits && sh.train
	sh.fusedAct = t.Framework.FusedActivation
	sh.fusedFC1 = t.Framework.FusedFC1
	sh.pytorchCode = pytorchCode(t.Framework)
	sh.fusedCE = t.Framework.FusedCrossEntropy
	sh.ceGradCopy = t.Framework.CrossEntropyGradCopy
	sh.vocabParallelCE = t.Framework.CrossEntropyVocabParallel
	sh.lossParallelCE = t.Framework.CrossEntropyLossParallel
	sh.mainGrads = t.Framework.MainGradBuffer
	sh.eagerCode = t.Framework.EagerOps
	sh.megatronCore = megatronCoreSpec(t.Framework)
	sh.teContext = sh.megatronCore // Transformer Engine's context-parallel ring runs where Megatron-Core's spec does
	c := &calc{sh: sh, rf: newRoofline(t, o.DType, o.FP8Recipe), o: o, fw: t.Framework.ScaleHost(t.Perf.HostScale()), target: t,
		allReduce: cluster.RingAllReduceSeconds(t.tensorLink(), sh.e*sh.t*sh.h, o.TensorParallel), contextLink: t.contextLink()}
	r := &Result{Name: a.Name, Device: t.Device.Name, Arch: a.Description(), Opts: o,
		perParam: o.devicePerParam(), optShard: o.optimizerShard(), expertOptShard: o.expertOptimizerShard()}

	matrix := vocabShard(a, o) * int64(a.HiddenSize) // the token matrix on one device
	tied := int64(0)
	if a.TiedEmbeddings {
		tied = matrix
	}
	emb := sh.embedding()
	if tied > 0 {
		emb.tied = tied
	} else {
		emb.params += matrix
	}
	r.inputBytes = int64(emb.input)
	r.Layers = append(r.Layers, c.layer("embedding", "embedding", emb))

	attn := sh.attention
	if a.MLA() {
		attn = sh.mla
	}
	// A block's attention is global or local (a sliding window or chunks, Arch.LocalLayer),
	// its MLP dense or a mixture (block.Kind stays "block" either way): one template per
	// kind the model has, built once.
	type template struct{ block, attn, mlp Layer }
	templates := map[[2]bool]template{}
	build := func(local, moe bool) template {
		if tm, ok := templates[[2]bool{local, moe}]; ok {
			return tm
		}
		at := attn(local)
		sh.attentionRates(t.Device.Name, &at, local) // the fused kernel's published rate on the device
		mlp := sh.mlp
		if moe {
			mlp = func() piece { return sh.moe(c) }
		}
		ml := mlp()
		// HuggingFace's code in eager PyTorch: its blocks' memory-bound kernels as counted.
		sh.countedTraffic(&at, true)
		sh.mptFlashPadding(&at)
		if !moe {
			sh.countedTraffic(&ml, false)
		}
		// AMP's 16-bit weight copies: the projections' weights (the norms run in fp32).
		sh.autocast(&at, float64(at.params-sh.normParams()), attentionTensors(a))
		sh.autocast(&ml, float64(ml.params-sh.normParams()), max(1, ml.tensors-sh.normTensors()))
		tm := template{c.layer("block", "block", at, ml), c.layer("attention", "attention", at), c.layer("mlp", "mlp", ml)}
		templates[[2]bool{local, moe}] = tm
		return tm
	}
	for i := range a.NumLayers {
		tm := build(a.LocalLayer(i) && o.Attention != Eager, a.MoELayer(i))
		blocks := []Layer{tm.block}
		if o.Split == Sublayers {
			blocks = []Layer{tm.attn, tm.mlp}
		}
		for _, l := range blocks {
			l.Name = fmt.Sprintf("block.%d", i)
			if o.Split == Sublayers {
				l.Name += "." + l.Kind
			}
			r.Layers = append(r.Layers, l)
		}
	}
	if sh.train {
		// DeepSeek-V3's multi-token prediction modules run in training, after the main
		// model's last block (Megatron-Core places them in the last pipeline stage); each
		// passes the main model's hidden state on to the final norm and the head.
		for i := range a.MTPLayers {
			head := sh.head()
			head.params, head.tensors = 0, 0 // the main model's head
			l := c.layer(fmt.Sprintf("mtp.%d", i), "mtp", sh.mtpIn(), attn(false), sh.moe(c), sh.finalNorm(), head)
			l.OutputBytes = int64(sh.e * sh.t * sh.hr)
			r.Layers = append(r.Layers, l)
		}
	}
	if a.FinalNormParams() > 0 {
		r.Layers = append(r.Layers, c.layer("final_norm", "final_norm", sh.finalNorm()))
	}
	head := sh.head()
	if tied > 0 && o.Tie == TieCopy {
		head.tied = tied
	}
	sh.autocast(&head, float64(head.params+tied), max(1, head.tensors))
	sh.alignLogits(&head, t.Perf.MatmulEfficiency)
	name := "lm_head"
	if a.Family == arch.BERT {
		name = "mlm_head"
	}
	r.Layers = append(r.Layers, c.layer(name, "lm_head", head))
	if tied > 0 {
		// Both ends use the matrix: a stage holding both holds it once (Model).
		r.Layers[0].usesTied = tied
		r.Layers[len(r.Layers)-1].usesTied = tied
	}
	r.total(a, t, c)
	return r, nil
}

// calc turns pieces into layers.
type calc struct {
	sh *shape
	rf roofline
	o  Options
	fw cluster.Framework
	// target is what the layers are costed on (the expert links).
	target Target
	// allReduce is the time of one tensor-parallel all-reduce of an activation.
	allReduce float64
	// contextLink carries the context-parallel exchanges (the tensor link: the context
	// group sits in a node).
	contextLink cluster.Link
}

// tensorCommExposed is what a piece's tensor-parallel communication adds to each pass
// when its linear layers' products hide it (Options.TensorCommOverlap): Transformer
// Engine's ring-exchange overlap splits a product into t chunks and sends one while
// computing another, so the first chunk's exchange is never hidden: a pass adds the
// longer of 1/t of its communication and the part of it longer than the pass's
// products (the rerun forward's too under full recomputation, which communicates
// again). PyTorch's async tensor parallelism (Options.TensorCommAsync) decomposes the
// same way what it fuses, and leaves the backward reduce-scatter of a summed input
// gradient (piece.bwdGradSum) exposed: half of each of the backward pass's own
// all-reduces (an all-gather and a reduce-scatter of one activation each).
func (c *calc) tensorCommExposed(p piece, fwd, bwd float64) (float64, float64) {
	var unfused float64
	if c.o.TensorCommAsync && p.bwdGradSum {
		unfused = p.bwdAllReduces * c.allReduce / 2
		bwd -= unfused
	}
	f, b := c.chunkedCommExposed(p, fwd, bwd)
	return f, b + unfused
}

// chunkedCommExposed is tensorCommExposed's chunked overlap of fwd and bwd seconds of
// communication behind the pass's products.
func (c *calc) chunkedCommExposed(p piece, fwd, bwd float64) (float64, float64) {
	var fg, bg float64
	for _, o := range p.ops {
		if o.core || o.fwd.flops == 0 {
			continue
		}
		fg += c.rf.opSeconds(o, false)
		bg += c.rf.opSeconds(o, true)
		if c.rerun(p) {
			bg += c.rf.opSeconds(o, false)
		}
	}
	t := c.sh.tp
	return max(fwd/t, fwd-fg), max(bwd/t, bwd-bg)
}

// eagerHostOps is what the host dispatches in each pass of layer l (built from ps) in
// eager PyTorch: the counted pieces' operators (the forward's again in the backward
// when fully recomputed, and the eager attention core's under selective
// recomputation), the other pieces' kernels, and the communication kernels.
func (c *calc) eagerHostOps(ps []piece, l Layer) (fwd, bwd float64) {
	fwd, bwd = l.FwdTerms.CommKernels, l.BwdTerms.CommKernels
	share, _ := c.sacPolicy(ps)
	for i, p := range ps {
		var fk, bk float64
		for j, o := range p.ops {
			fk += o.fwd.kernels
			bk += o.bwd.kernels
			bk += c.rerunShare(p, o, share, i, j) * o.fwd.kernels
		}
		if p.eagerCounted {
			fk, bk = p.eager.fwd, p.eager.bwd
			switch {
			case c.rerun(p) || share != nil:
				// torchtitan's per-op policy reruns the block's code whole, its saved
				// operations answered from the cache: dispatched again all the same.
				bk += p.eager.fwd
			case c.o.Recompute == Selective:
				if c.o.modules()&ModCoreAttn != 0 {
					bk += p.eagerCoreFwd
				}
				for _, o := range p.ops {
					if o.module != 0 && c.rerunOp(p, o) {
						bk += o.fwd.kernels // an output-discarding module's operations again
					}
				}
			}
		}
		fwd += fk
		if c.sh.train {
			bwd += bk
		}
	}
	return fwd, bwd
}

// contextSeconds is the time a context-parallel attention core adds to a pass in which
// the core itself takes core seconds, moving the piece's contextBytes (bwd: the
// backward pass, which moves twice the ring's bytes: keys and values, and their
// gradients). Ring (Liu et al. 2023): c - 1 point-to-point steps, each overlapped with
// the attention on the block already received (1/c of the core), so a step adds
// max(0, step - core/c). All-to-all (Jacobs et al. 2023): the all-to-alls are not
// overlapped and add their whole time. Hierarchical (Megatron-LM's a2a+p2p): the
// all-to-all over the inner group of g, not overlapped, plus the ring over c/g groups
// with the piece's ringBytes per step.
func (c *calc) contextSeconds(p piece, core float64, bwd bool) (seconds, kernels float64) {
	if !p.context {
		return 0, 0
	}
	k := c.sh.cp
	switch c.o.ContextMethod {
	case AllToAll:
		return cluster.AllToAllSeconds(c.contextLink, p.contextBytes, int(k)), 2
	case Hierarchical:
		// The all-to-all inside the inner group (over the tensor link: it sits in a
		// node), then a ring over the k/g groups, each step overlapped with 1/(k/g) of
		// the core.
		g := float64(c.o.ContextInner)
		a2a := cluster.AllToAllSeconds(c.target.tensorLink(), p.contextBytes, int(g))
		r, rk := c.ringSeconds(p.ringBytes, core, k/g, bwd)
		return a2a + r, 2 + rk
	case AllGather:
		return c.allGatherSeconds(p.contextBytes, core, k, bwd)
	}
	return c.ringSeconds(p.contextBytes, core, k, bwd)
}

// allGatherSeconds is the time PyTorch's context parallelism (AllGather) adds to a pass
// over k devices whose attention core takes core seconds, each device holding n bytes
// of keys and values: one ring all-gather of the k devices' n, behind the first of the
// k steps (1/k of the core); in the backward pass that gather again, then after each
// step the keys' and values' gradients in fp32 (4/e times n) sent to the next device,
// each behind the next step's core, the last one exposed. Where the framework waits on
// traced communication at once (cluster.Framework.TracedCommWaits: torch.compile)
// nothing is hidden.
func (c *calc) allGatherSeconds(n, core, k float64, bwd bool) (seconds, kernels float64) {
	gather := cluster.RingAllGatherSeconds(c.contextLink, k*n, int(k))
	hide := core / k
	if c.fw.TracedCommWaits {
		hide = 0
	}
	seconds, kernels = max(0, gather-hide), 1
	if bwd {
		pass := cluster.PointToPointSeconds(c.contextLink, 4/c.sh.e*n)
		seconds += (k-1)*max(0, pass-hide) + pass
		kernels += k
	}
	return seconds, kernels
}

// ringSeconds is the time ring attention over k devices adds to a pass whose attention
// core takes core seconds: k - 1 point-to-point steps of n bytes (twice n in the
// backward pass: keys and values, and their gradients) over the context link, each
// overlapped with the attention on the block already received (1/k of the core), so a
// step adds max(0, step - core/k).
func (c *calc) ringSeconds(n, core, k float64, bwd bool) (seconds, kernels float64) {
	if bwd {
		n *= 2
	}
	step := cluster.PointToPointSeconds(c.contextLink, n)
	return (k - 1) * max(0, step-core/k), k - 1
}

// asyncChunks is piece p as PyTorch's async tensor parallelism (Options.TensorCommAsync)
// runs it: a product fused with a collective is decomposed into t products of m/t rows,
// one per device's shard (symm_mem's fused_all_gather_matmul and
// fused_matmul_reduce_scatter), each a kernel of its own whose waves are quantized
// apart ("magnified wave quantization", Wang et al. 2024): in the forward pass every
// gathering and scattering projection; in the backward the scattering projections'
// input gradients (their output gradient's all-gather is fused) and, where one product
// makes it (no bwdGradSum), the gathering projection's input gradient, fused into its
// reduce-scatter. The weight gradients are not decomposed. The piece gains the
// fusions' own copies (asyncCopies).
func (c *calc) asyncChunks(p piece) piece {
	if !c.o.TensorCommAsync {
		return c.userbuffersChunks(p)
	}
	t := c.sh.tp
	p.ops = slices.Clone(p.ops)
	for i := range p.ops {
		o := &p.ops[i]
		if !o.gathers && !o.scatters {
			continue
		}
		o.gemm.fwdChunks = t
		o.fwd.kernels += t - 1
		if o.scatters || !p.bwdGradSum {
			o.gemm.dgradChunks = t
			o.bwd.kernels += t - 1
		}
	}
	if cp, ok := asyncCopies(p, c.sh.e, t); ok {
		p.ops = append(p.ops, cp)
	}
	return p
}

// asyncCopies is what PyTorch's async tensor parallelism (Options.TensorCommAsync)
// moves on the compute stream around the products it fuses in piece p (e-byte
// activations, t devices), beyond what NCCL's collectives did in their place. Read
// from torch/distributed/_symmetric_memory/__init__.py (PyTorch 2.5 of 2024 through
// 2.8 of 2025: the versions of torchtitan's December 2024 and June 2025 runs and of
// pytorch#149990):
//
//   - fused_matmul_reduce_scatter (_fused_matmul_reduce_scatter_impl) has each device
//     compute its t partial products into stacked_partials (_pipelined_produce_and_
//     all2all pulls the peers' chunks into it: the exchange that hides behind the
//     products) and then sums them with reduce_fn over the stack, "a single reduction
//     kernel" after the last product: it reads the t chunks of m/t rows, the whole
//     m x n partial output (e m n bytes), and writes the device's m/t rows. NCCL's
//     reduce-scatter, which it replaces, sums inside the collective. So e m n (1 +
//     1/t) bytes in one kernel, for the forward's scattering projection (its m x n
//     output, n the model width), and for the backward's input gradient of a
//     gathering projection where one product makes it (no bwdGradSum: the m x k
//     gradient of its input).
//   - fused_all_gather_matmul (_pipelined_all_gather_and_consume) first copies the
//     device's own shard into its symmetric-memory buffer ("mv"), then barriers, and
//     the source says it gives up overlapping that copy with the first product: the
//     m/t x k shard read and written, 2 e m k / t bytes in one kernel, once per
//     all-gather (one for the sublayer's gathering projections, which share the
//     gathered input: Inductor fuses an all-gather with all its matmul users), in the
//     forward pass before the gathering projections, and in the backward before the
//     scattering projection's input gradient (its m/t x n output gradient gathered).
//     Its later copy of the shard into the gathered output (ag_out) is issued beside
//     the last product and is not priced.
//
// The bytes are priced at e per element, the 16-bit activations (a Float8 run's
// products write 16-bit outputs; its all-gathered input is priced as 16-bit too).
// ok is false for a piece with no fused projection.
func asyncCopies(p piece, e, t float64) (op, bool) {
	var fwd, bwd work
	var gathered, scattered bool
	var gatherCopy float64
	for _, o := range p.ops {
		m, k, n := o.gemm.m, o.gemm.k, o.gemm.n
		if o.gathers && !gathered { // one all-gather for the sublayer's gathering projections
			gatherCopy = 2 * e * m * k / t
			fwd.bytes += gatherCopy
			fwd.kernels++
			if !p.bwdGradSum { // one product makes its input gradient: one fused reduce-scatter
				bwd.bytes += e * m * k * (1 + 1/t)
				bwd.kernels++
			}
			gathered = true
		}
		if o.scatters && !scattered {
			fwd.bytes += e * m * n * (1 + 1/t)
			fwd.kernels++
			bwd.bytes += 2 * e * m * n / t
			bwd.kernels++
			scattered = true
		}
	}
	if !gathered && !scattered {
		return op{}, false
	}
	return op{name: "async TP: own-shard copy and partial sums", fwd: fwd, bwd: bwd, gatherShare: gatherCopy / fwd.bytes}, true
}

// sequenceCopies is what PyTorch's tensor parallelism with sequence parallelism
// copies on the compute stream around the collectives of piece p (a block's sublayer),
// per microbatch, where the framework runs PyTorch's own (DTensor) tensor parallelism
// (shape.pytorchCode: eager and compiled). torchtitan shards the sublayers' inputs and
// outputs on the sequence dimension, dim 1 of a [b, s, h] activation
// (SequenceParallel, PrepareModuleInput from Shard(1), RowwiseParallel to Shard(1):
// torchtitan 9dec370 and 820504e, apply_tp), and the functional collectives that
// DTensor's redistribution calls gather and scatter on dim 0 only: all_gather_tensor
// with gather_dim != 0 runs torch.cat(torch.chunk(res, group_size, dim=0),
// dim=gather_dim) on the gathered tensor, reduce_scatter_tensor with scatter_dim != 0
// runs torch.cat(torch.chunk(self, group_size, dim=scatter_dim)) on its input
// (torch/distributed/_functional_collectives.py, from 2023 through 2025's releases; the
// all-gather's copy is left out for a batch of one only from pytorch#169404, December 2025). So
// "an extra aten.cat after each collective" (torchtitan#437, a maintainer, July 2024,
// which measured "about 0.18 ms out of 3 ms of FFN compute" for the two of a 70B MLP
// at 8k tokens, TP 8, on an H100): a copy of the whole gathered activation, e T h bytes
// read and written, one kernel each. A sublayer's forward all-reduce is one all-gather
// (its input, the products' input: g bytes an element, the fp8 products' input with
// dtype fp8, which torchao's Float8ColwiseParallel gathers cast) and one
// reduce-scatter (its output), its backward all-reduce the output gradient's
// all-gather and the input gradient's reduce-scatter (16-bit); the rerun forward
// copies again under full recomputation, and under torchtitan's per-op policy
// (share) its rerun all-gather does (the reduce-scatter's output is saved:
// sacCommRerun).
//
// With async TP (Options.TensorCommAsync) the micro-pipeline pass matches the
// non-zero-dim patterns themselves (the split + cat after the all-gather and before
// the reduce-scatter, torch/_inductor/fx_passes/micro_pipeline_tp.py,
// find_all_gather_patterns and find_reduce_scatter_patterns), and the fused operators
// take gather_dim and scatter_dim: no copy where it fuses (the gathers before the
// gathering projections and the output gradient's before the scattering one's input
// gradient, the reduce-scatter after the scattering projection, the input gradient's
// where one product makes it), the copy stays on the input gradient's reduce-scatter of
// a summed gradient (piece.bwdGradSum: Llama's query, key and value; gate and up). The
// fused operators return what they gather in the gathered dimension's order:
// fused_all_gather_matmul's outputs and its gathered A are unflatten(t) =
// t.view(group, ...).flatten(0, 1).movedim(0, gather_dim)
// (torch/distributed/_symmetric_memory/__init__.py, _fused_all_gather_matmul_impl), a
// [b, s, n] tensor laid out sequence first. The products' consumers in the forward
// pass read it as it is (the heads' views, Inductor's rotary and SiLU kernels), but a
// weight gradient's product reshapes its operands to [b s, n] matrices, which such a
// layout cannot view for b > 1: in the backward pass the gathered input of the
// gathering projections (the recomputed gather's, or the saved one) and the gathered
// output gradient of the scattering projection are each copied once more, 2 g T h and
// 2 e T h bytes. ok is false elsewhere.
func (c *calc) sequenceCopies(p piece, share [][]float64) (op, bool) {
	if !c.sh.pytorchCode || c.sh.tp <= 1 || !c.o.SequenceParallel || !p.recomputable || p.fwdAllReduces == 0 {
		return op{}, false
	}
	var gathering, scattering bool
	for _, o := range p.ops {
		gathering, scattering = gathering || o.gathers, scattering || o.scatters
	}
	async := c.o.TensorCommAsync
	act := c.sh.e * c.sh.t * c.sh.h // a gathered 16-bit activation
	in := c.sh.ge * c.sh.t * c.sh.h // the gathered input of the products
	var fwd, bwd work
	copyIf := func(w *work, n, bytes float64, fused bool) {
		if !fused {
			w.bytes += 2 * n * bytes
			w.kernels += n
		}
	}
	copyIf(&fwd, p.fwdAllReduces, in, async && gathering)
	copyIf(&fwd, p.fwdAllReduces, act, async && scattering)
	if c.sh.train {
		copyIf(&bwd, p.bwdAllReduces, act, async && scattering)
		copyIf(&bwd, p.bwdAllReduces, act, async && gathering && !p.bwdGradSum)
		if async && c.sh.b > 1 {
			// The fused operators' gathered tensors, returned in the gathered
			// dimension's order, copied for the weight gradients' products.
			copyIf(&bwd, p.bwdAllReduces, in, !gathering)
			copyIf(&bwd, p.bwdAllReduces, act, !scattering)
		}
		switch {
		case c.rerun(p):
			bwd.bytes, bwd.kernels = bwd.bytes+fwd.bytes, bwd.kernels+fwd.kernels
		case share != nil:
			copyIf(&bwd, p.fwdAllReduces, in, async && gathering)
		}
	}
	if fwd.kernels+bwd.kernels == 0 {
		return op{}, false
	}
	return op{name: "sequence-parallel cat copies", fwd: fwd, bwd: bwd}, true
}

// userbuffersCommSMs is the multiprocessors Transformer Engine's userbuffers give the
// communication kernel of a "pipeline" or "bulk" overlap by default (num_sm 16:
// initialize_ub's get_default_config, transformer_engine/pytorch/module/base.py). From
// Transformer Engine 2.0 on the default also sets set_sm_margin for them, and the GEMM
// runs on sm_count - num_comm_sm multiprocessors (CommOverlapCore's _math_sms,
// transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp); before 2.0
// set_sm_margin defaulted off and the comm kernel's thread blocks held their 16 beside
// a GEMM launched for all of them.
const userbuffersCommSMs = 16

// userbuffersPipelineSplits is the default num_splits of a "pipeline" overlap
// (initialize_ub's get_default_config: 4 where the method is not ring_exchange).
const userbuffersPipelineSplits = 4

// userbuffersChunks is piece p as Transformer Engine's userbuffers overlap
// (Options.TensorCommOverlap without TensorCommAsync) runs its products with
// initialize_ub's default methods (transformer_engine/pytorch/module/base.py:
// "ring_exchange" for qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad; "pipeline" for
// proj_fprop and fc2_fprop; "bulk" for qkv_dgrad, qkv_wgrad, fc1_dgrad and fc1_wgrad),
// which Megatron-Core and NeMo use where no userbuffers config names others:
//   - ring exchange (CommOverlapP2P: num_splits tp_size, num_sm 1 and the copy engine,
//     no SM margin): the gathering projections' forward and the scattering
//     projections' input gradient launch t products of m/t rows, on every
//     multiprocessor;
//   - pipeline (CommOverlap: num_splits 4, num_sm 16, set_sm_margin): the scattering
//     projections' forward launches 4 products of m/4 rows on sm_count - 16
//     multiprocessors, the reduce-scatter's kernel holding the other 16;
//   - bulk (num_sm 16, set_sm_margin): the gathering projections' backward products
//     (input and weight gradients) run on sm_count - 16 beside the all-gather of their
//     input and the reduce-scatter of the input gradient.
//
// The chunks of one product run on several compute streams (_stream_compute, up to
// num_max_streams of them), so their waves are taken as the whole product's
// (gemmShape.fraction) where PyTorch's async tensor parallelism quantizes each
// (asyncChunks); the margin is taken for the product's whole time, as Transformer
// Engine 2.x sizes its grid (userbuffersCommSMs).
//
// A tuned config (Options.TensorCommConfig, userbuffersConfigs) replaces the defaults'
// six slots, per GEMM: the attention's (qkv_dgrad, qkv_wgrad, proj_fprop) in the piece
// with the output projection, the MLP's (fc1_dgrad, fc1_wgrad, fc2_fprop) in the
// others. A bulk slot's margin is its num_sm with set_sm_margin, none without (every
// tuned config's bulk overlaps: their GEMMs are launched for every multiprocessor, and
// lose the kernel's only while the collective runs, calc.bulkContention), the input
// gradient's from the dgrad slot and the weight gradient's from the wgrad slot; the
// scattering projection's forward is a pipeline of num_splits products or a ring
// exchange of t (ring_exchange, tp_size splits), on sm_count less its slot's margin.
func (c *calc) userbuffersChunks(p piece) piece {
	if !c.o.TensorCommOverlap {
		return p
	}
	cfg, _ := LookupUserbuffersConfig(c.o.TensorCommConfig)
	dgrad, wgrad, fprop := cfg.FC1Dgrad, cfg.FC1Wgrad, cfg.FC2Fprop
	if slices.ContainsFunc(p.ops, func(o op) bool { return o.scatters && o.name == "output projection" }) {
		dgrad, wgrad, fprop = cfg.QKVDgrad, cfg.QKVWgrad, cfg.ProjFprop
	}
	t := c.sh.tp
	p.ops = slices.Clone(p.ops)
	for i := range p.ops {
		o := &p.ops[i]
		switch {
		case o.gathers:
			o.fwd.kernels += t - 1
			o.gemm.bwdMarginSMs = dgrad.MarginSMs()
			o.gemm.wgradMarginSMs = wgrad.MarginSMs()
		case o.scatters:
			if fprop.Method == UBRingExchange {
				o.fwd.kernels += t - 1
			} else {
				o.fwd.kernels += float64(fprop.NumSplits) - 1
			}
			o.gemm.fwdMarginSMs = fprop.MarginSMs()
			o.bwd.kernels += t - 1
		}
	}
	return p
}

// bulkContention is what the bulk overlaps of Transformer Engine's userbuffers add to
// piece p's backward pass where their config runs them without set_sm_margin (every
// tuned config's qkv_dgrad, qkv_wgrad, fc1_dgrad and fc1_wgrad: userbuffersConfigs).
// The GEMM is then launched for every multiprocessor (CommOverlapCore's _math_sms is
// sm_count), but the communication kernel, launched first (Megatron-Bridge's
// comm_overlap.py sets CUDA_DEVICE_MAX_CONNECTIONS 1 on Hopper "to schedule a
// communication kernel before the overlapping persistent GEMM kernel"), holds num_sm of
// them while it runs: the input gradient's product runs beside the all-gather of the
// sublayer's input (the dgrad slot), the weight gradient's beside the reduce-scatter
// of the input gradient (the wgrad slot), each collective one activation, half of an
// all-reduce (calc.allReduce). Each pair is priced as every overlapped collective is,
// cluster.OverlappedSeconds(product, collective, num_sm / sms), less what the pair
// takes without the kernel's multiprocessors (max(product, collective), which
// tensorCommExposed prices): about num_sm / sms of the collective's time. With
// set_sm_margin (initialize_ub's defaults) the product leaves the multiprocessors for
// its whole time instead (gemmShape's margins), and nothing is added here. The
// products are taken as half the gathering projections' backward time each (the input
// and weight gradients' FLOPs are equal). 0 without the overlap, for async TP, and for
// a piece without a gathering projection.
func (c *calc) bulkContention(p piece) float64 {
	if !c.o.TensorCommOverlap || c.o.TensorCommAsync || c.rf.sms <= 0 || p.bwdAllReduces == 0 {
		return 0
	}
	cfg, _ := LookupUserbuffersConfig(c.o.TensorCommConfig)
	dgrad, wgrad := cfg.FC1Dgrad, cfg.FC1Wgrad
	if slices.ContainsFunc(p.ops, func(o op) bool { return o.scatters && o.name == "output projection" }) {
		dgrad, wgrad = cfg.QKVDgrad, cfg.QKVWgrad
	}
	var product float64
	for _, o := range p.ops {
		if o.gathers {
			product += c.rf.opSeconds(o, true)
		}
	}
	if product == 0 {
		return 0
	}
	comm := p.bwdAllReduces * c.allReduce / 2
	var extra float64
	for _, g := range []UserbuffersGEMM{dgrad, wgrad} {
		if g.SetSMMargin || g.NumSM <= 0 {
			continue
		}
		share := min(1, float64(g.NumSM)/c.rf.sms)
		extra += cluster.OverlappedSeconds(product/2, comm, share) - max(product/2, comm)
	}
	return extra
}

// fullyShardCopies is what PyTorch FSDP2 (Options.FullyShard) copies around the
// per-layer collectives of a layer of pieces ps (one FSDP unit: its parameters are
// gathered and reduced together), on the compute stream, per microbatch. After each all-gather
// (before the forward pass, and again before the backward pass: the weights are
// resharded after the forward), foreach_all_gather_copy_out waits on it in the current
// stream and copies the gathered buffer out into the unsharded parameters with one
// torch.split_with_sizes_copy: the gathered w-byte weights read and written, 2 w bytes
// a parameter. After the backward pass, foreach_reduce copies the unsharded e-byte
// gradients into the reduce-scatter's input in the reduce dtype (r bytes: 4 with
// ReduceFP32, else e) with one torch._chunk_cat (torch.cat over the chunks in older
// versions), e + r bytes a parameter, and the compute stream waits for that copy
// before it goes on (to free the gradients). Read from
// torch/distributed/_composable/fsdp/_fsdp_collectives.py and _fsdp_param_group.py
// (wait_for_unshard) in PyTorch of 2024 (the copy-in on the reduce-scatter stream with
// the current stream waiting on it, later on the current stream itself; either way in
// the compute's path). So the forward pass moves 2 w bytes a parameter in one kernel,
// the backward 2 w + e + r in two.
//
// Where the weights stay gathered through the step (KeepGathered: FSDP2 under PyTorch's
// pipelining, gradient sync off until the last microbatch) they are gathered and
// reduced once a step, not a microbatch, and those copies are not priced; instead each
// microbatch's post_backward adds every parameter's new e-byte gradient to its
// accumulated fp32 one, one parameter at a time (FSDPParam.
// accumulate_unsharded_grad_if_needed, unsharded_accumulated_grad += grad, after the
// first microbatch's to_accumulated_grad_if_needed cast it to the reduce dtype;
// _fsdp_param.py in PyTorch of 2024): one kernel a tensor reading e + 4 and writing 4
// bytes a parameter, with ReduceFP32 (torchtitan's case; without it FSDP2 leaves the
// accumulation to autograd, not priced here). The first microbatch's cast (e + 4
// bytes) is priced as an accumulation. ok is false elsewhere, and for a layer without
// parameters.
func (c *calc) fullyShardCopies(ps []piece) (o op, ok bool) {
	var n, tensors float64
	for _, p := range ps {
		n += float64(p.params + p.tied)
		tensors += float64(p.tensors)
	}
	if !c.o.FullyShard || c.o.Sharding.Level() < 3 || c.o.ShardGroup < 2 || !c.sh.train || n <= 0 {
		return op{}, false
	}
	pp := c.o.perParam()
	if c.o.keepsGathered() {
		if !c.o.ReduceFP32 {
			return op{}, false
		}
		return op{name: "FSDP2 fp32 gradient accumulation", bwd: work{0, (pp.grad + 8) * n, tensors}}, true
	}
	w, e, r := pp.weight, pp.grad, pp.grad
	if c.o.ReduceFP32 {
		r = 4
	}
	// The weights gathered in fp8 (Options.FP8FSDPAllGather) are copied out at 1 byte.
	f8 := float64(c.fp8Gathered(ps))
	gathered := w*(n-f8) + f8
	return op{name: "FSDP2 all-gather copy-out and reduce-scatter copy-in",
		fwd: work{0, 2 * gathered, 1}, bwd: work{0, 2*gathered + (e+r)*n, 2}}, true
}

// hpGradAccumulate is what DeepSpeed's BF16 optimizer (precision deepspeed-bf16) does
// with piece p's gradients after each microbatch's backward pass: update_hp_grads
// (deepspeed/runtime/bf16_optimizer.py, as microsoft/DeepSpeed#1801 merged it; the
// pipeline engine calls it after every BackwardPass instruction, pipe/engine.py) adds
// each 16-bit gradient to its fp32 copy, one parameter tensor at a time,
// hp_grad.add_(lp.grad.to(fp32)): a cast (the 16-bit gradient read, an fp32 temporary
// written) and an add (both fp32 tensors read, the sum written), two memory-bound
// kernels a tensor and e + 16 bytes a parameter (18 in bf16). Megatron-style
// frameworks accumulate in the weight-gradient products instead. ok is false
// elsewhere, and for a piece without parameters.
func (c *calc) hpGradAccumulate(p piece) (o op, ok bool) {
	n := float64(p.params + p.tied)
	if !c.sh.train || c.o.Precision != DeepSpeedBF16 || n <= 0 {
		return op{}, false
	}
	return op{name: "bf16 optimizer: fp32 gradient accumulation", bwd: work{0, (c.sh.e + 16) * n, 2 * float64(p.tensors)}}, true
}

// gradAccumulate is PyTorch's AccumulateGrad adding piece p's gradients into their
// .grad after a microbatch's backward pass, where the framework keeps them there
// (cluster.Framework.ParamGradAccumulate: DeepSpeed's engines under ZeRO stages 0 and
// 1): variable_grad += new_grad for every parameter tensor
// (torch/csrc/autograd/functions/accumulate_grad.h), one add kernel a tensor reading
// the two gradients and writing the sum, 3g bytes a parameter of g-byte gradients.
// The first of a step's m microbatches finds .grad unset (zero_grad set it to None)
// and keeps its own gradient, so each microbatch carries (m-1)/m of an add on average.
// ok is false for other frameworks, one microbatch, inference, DeepSpeed's BF16
// optimizer (precision deepspeed-bf16: clear_lp_grads sets every .grad to None before
// each backward pass, and update_hp_grads accumulates in fp32, hpGradAccumulate),
// ZeRO-2 and 3 (their gradient hooks reduce and free each gradient), and a piece
// without parameters.
func (c *calc) gradAccumulate(p piece, accumulate bool) (o op, ok bool) {
	n := float64(p.params + p.tied)
	m := float64(c.o.Microbatches)
	g := c.o.perParam().grad
	if !accumulate || !c.sh.train || m <= 1 || c.o.Precision == DeepSpeedBF16 || c.o.Sharding.Level() >= 2 || n <= 0 || g <= 0 {
		return op{}, false
	}
	f := (m - 1) / m
	return op{name: "autograd gradient accumulation", bwd: work{0, f * 3 * g * n, f * float64(p.tensors)}}, true
}

// amaxReductions counts the all-reduces of one amax over the tensor-parallel group
// that piece p's fp8 quantizations wait for in each pass, under current scaling with
// sequence parallelism: a column-parallel product's input is quantized before it is
// all-gathered (forward), a row-parallel product's output gradient before it is
// all-gathered for the weight gradient (backward), and every rank's shard must share
// one scale, so Transformer Engine reduces the shards' amax (MAX) over the group first
// (transformer_engine/pytorch/module/linear.py, layernorm_linear.py and
// layernorm_mlp.py, _customize_quantizers_float8_current_scaling: with_amax_reduction
// and amax_reduction_group = tp_group when sequence_parallel, column-parallel inputs
// and row-parallel output gradients; csrc/quantizer.cpp,
// Float8CurrentScalingQuantizer::quantize_impl: amax kernel, then
// amax_reduction_group->allreduce(MAX)->wait(), then the scale and the cast, TE
// v2.x). The wait puts NCCL's small all-reduce (cluster.SmallAllReduceSeconds, the
// group in one node) on the compute stream between the amax and the cast, so it adds
// to the pass. Delayed scaling takes its scale from the amax history (its amaxes are
// reduced once per fp8_autocast, not per quantization), and the block recipes scale
// each block from its own elements: 0 for them. Only the quantizations still priced
// count (a gated MLP's gate and up share one: oneFC1).
func (c *calc) amaxReductions(p piece) (fwd, bwd float64) {
	if c.sh.fp8 == nil || c.o.FP8Recipe != Current || !c.o.SequenceParallel || c.o.TensorParallel <= 1 {
		return 0, 0
	}
	for _, o := range p.ops {
		if o.gathers && o.fwdQuant > 0 {
			fwd++
		}
		if o.scatters && o.bwdQuant > 0 {
			bwd++
		}
	}
	return fwd, bwd
}

// addOp charges op o's forward work (asBwd false) or backward work (asBwd true) to the
// layer's backward pass (bwd) or forward pass: its FLOPs, its time at the roofline rf,
// its launches and its terms. A rerun forward is the forward work in the backward pass.
func (l *Layer) addOp(rf roofline, bwd bool, o op, asBwd bool) {
	w, _ := o.pass(asBwd)
	seconds := rf.opSeconds(o, asBwd)
	if bwd {
		l.BwdFLOPs += w.flops
		l.BwdDeviceSeconds += seconds
		l.BwdKernels += w.kernels
		rf.addTerms(&l.BwdTerms, o, asBwd)
		return
	}
	l.FwdFLOPs += w.flops
	l.FwdDeviceSeconds += seconds
	l.FwdKernels += w.kernels
	rf.addTerms(&l.FwdTerms, o, asBwd)
}

// addComm charges communication the pass waits for, seconds in kernels launches, to the
// layer's backward pass (bwd) or forward pass.
func (l *Layer) addComm(bwd bool, seconds, kernels float64) {
	if bwd {
		l.BwdDeviceSeconds += seconds
		l.BwdKernels += kernels
		l.BwdTerms.CommSeconds += seconds
		l.BwdTerms.CommKernels += kernels
		return
	}
	l.FwdDeviceSeconds += seconds
	l.FwdKernels += kernels
	l.FwdTerms.CommSeconds += seconds
	l.FwdTerms.CommKernels += kernels
}

func (c *calc) layer(name, kind string, ps ...piece) Layer {
	l := Layer{Name: name, Kind: kind}
	pp := c.o.devicePerParam()
	train := c.sh.train
	share, sacSaved := c.sacPolicy(ps)
	for i, p := range ps {
		p = c.asyncChunks(p)
		l.Params += p.params + p.tied
		l.TiedParams += p.tied
		l.ExpertParams += p.expertParams
		l.extraFLOPs += p.extraFLOPs
		l.ParamTensors += p.tensors
		l.MegatronParams = append(l.MegatronParams, p.megatronParams()...)
		if c.allReduce > 0 {
			ars, bwdKernels := p.fwdAllReduces, 0.0
			if train {
				ars += p.bwdAllReduces
				bwdKernels = p.bwdAllReduces
				if c.rerun(p) {
					ars += p.fwdAllReduces // the rerun forward communicates again
					bwdKernels += p.fwdAllReduces
				}
				sar, sk := c.sacCommRerun(p, share) // the per-op policy's gathers again
				ars, bwdKernels = ars+sar, bwdKernels+sk
			}
			l.TensorAllReduceSeconds += ars * c.allReduce
			fwdComm, bwdComm := p.fwdAllReduces*c.allReduce, (ars-p.fwdAllReduces)*c.allReduce
			if c.o.TensorCommOverlap {
				fwdComm, bwdComm = c.tensorCommExposed(p, fwdComm, bwdComm)
				if train {
					bwdComm += c.bulkContention(p)
				}
			}
			l.addComm(false, fwdComm, p.fwdAllReduces)
			if train {
				l.addComm(true, bwdComm, bwdKernels)
			}
		}
		if fwdAmax, bwdAmax := c.amaxReductions(p); fwdAmax+bwdAmax > 0 {
			ar := cluster.SmallAllReduceSeconds(c.o.TensorParallel, 1)
			l.addComm(false, fwdAmax*ar, fwdAmax)
			if train {
				n := bwdAmax
				if c.rerun(p) {
					n += fwdAmax // the rerun forward quantizes again
				}
				l.addComm(true, n*ar, n)
			}
		}
		for j, o := range p.ops {
			l.addOp(c.rf, false, o, false)
			if !train {
				continue
			}
			l.addOp(c.rf, true, o, true)
			if f := c.rerunShare(p, o, share, i, j); f > 0 {
				if f < 1 {
					o = o.times(f)
				}
				l.addOp(c.rf, true, o, false) // the rerun forward, in the backward pass
			}
		}
		if o, ok := c.hpGradAccumulate(p); ok {
			l.addOp(c.rf, true, o, true)
		}
		if o, ok := c.sequenceCopies(p, share); ok {
			l.addOp(c.rf, false, o, false)
			if train {
				l.addOp(c.rf, true, o, true)
			}
		}
		if o, ok := c.gradAccumulate(p, c.target.Framework.ParamGradAccumulate); ok {
			l.addOp(c.rf, true, o, true)
		}
		if p.context {
			var coreFwd, coreBwd float64
			for _, o := range p.ops {
				if o.core {
					coreFwd += c.rf.opSeconds(o, false)
					coreBwd += c.rf.opSeconds(o, true)
				}
			}
			fs, fk := c.contextSeconds(p, coreFwd, false)
			l.ContextSeconds += fs
			l.addComm(false, fs, fk)
			if train {
				bs, bk := c.contextSeconds(p, coreBwd, true)
				if c.rerun(p) {
					bs, bk = bs+fs, bk+fk // the rerun forward exchanges again
				}
				l.ContextSeconds += bs
				l.addComm(true, bs, bk)
			}
		}
	}
	if o, ok := c.fullyShardCopies(ps); ok {
		l.addOp(c.rf, false, o, false)
		l.addOp(c.rf, true, o, true)
	}
	fwdExposed, bwdExposed := c.expertComm(&l, ps)
	// The host queues kernels ahead of the device; a pass takes the longer of the two
	// (except across a dropless mixture's host synchronization, moeHostSeconds).
	// It dispatches the layer's kernels, or with a framework that counts eager
	// PyTorch's operators (cluster.Framework.EagerOps) what the pieces' HuggingFace code
	// dispatches (eagerops.go) and the kernels of the pieces without counts, and the
	// communication kernels either way.
	l.FwdTerms.HostOps, l.BwdTerms.HostOps = l.FwdKernels, l.BwdKernels
	if c.fw.EagerOps {
		l.FwdTerms.HostOps, l.BwdTerms.HostOps = c.eagerHostOps(ps, l)
	}
	l.FwdHostSeconds = c.fw.HostSeconds(l.FwdTerms.HostOps, 1)
	l.FwdSeconds = max(l.FwdDeviceSeconds, l.FwdHostSeconds)
	if train {
		l.BwdHostSeconds = c.fw.HostSeconds(l.BwdTerms.HostOps, 1)
		l.BwdSeconds = max(l.BwdDeviceSeconds, l.BwdHostSeconds)
	}
	c.moeHostSeconds(&l, ps, fwdExposed, bwdExposed)
	// Routed experts shard over their own group (Options.expertSharded).
	ep := c.o.expertDevicePerParam()
	dense, experts := float64(l.Params-l.ExpertParams), float64(l.ExpertParams)
	l.ParamBytes = ceil(dense*pp.weight + experts*ep.weight)
	l.GradBytes = ceil(dense*pp.grad + experts*ep.grad)
	l.GradCopyBytes = ceil(float64(l.Params) * pp.gradCopy)
	l.ExpertGradBytes = ceil(experts * c.o.perParam().grad) // whole, as they are reduced
	l.OptimizerBytes = ceil(float64(l.Params-l.ExpertParams)*c.o.optimizerShard() + float64(l.ExpertParams)*c.o.expertOptimizerShard())
	last := ps[len(ps)-1]
	l.OutputBytes = int64(last.output)
	var fp8, dropped float64
	for _, p := range ps {
		k, d := c.sh.fp8Bytes(p)
		fp8, dropped = fp8+k, dropped+d
		if c.sh.fp8 != nil {
			// A piece's routed experts' weights come first among its fp8 products'
			// (moe: the routed experts', then the shared experts').
			l.fp8Weights += int64(p.fp8Weights)
			l.fp8ExpertWeights += int64(min(p.fp8Weights, float64(p.expertParams)))
		}
	}
	l.FP8WeightBytes, l.bf16Dropped = ceil(fp8), int64(dropped)
	l.fp8Gathered = c.fp8Gathered(ps)
	if c.o.keepsGathered() {
		// The gathered copy held through the step is fp8 for these weights.
		l.bf16Dropped += ceil(float64(l.fp8Gathered) * (c.o.perParam().weight - 1))
	}
	l.ParamBytes -= l.bf16Dropped

	if !train {
		var work float64
		for _, p := range ps {
			work = max(work, p.input+p.output+p.inferExtra)
		}
		l.TemporaryBytes = int64(work)
		return l
	}
	gradIn := func(p piece, i int) float64 {
		if kind == "embedding" && i == 0 {
			return 0 // token ids have no gradient
		}
		return p.input
	}
	full := (c.o.Recompute == Full || c.o.Recompute == SelectiveOp) && ps[0].recomputable
	var saved, fwdWork, bwdWork float64
	if full {
		// Only the layer's input is kept; the forward pass runs as in inference, and the
		// backward pass rebuilds everything before it differentiates.
		saved = ps[0].input
		var rebuilt float64
		for i, p := range ps {
			fwdWork = max(fwdWork, p.input+p.output+p.inferExtra)
			bwdWork = max(bwdWork, saved+rebuilt+p.bwdSaved+p.bwdExtra+p.output+gradIn(p, i))
			rebuilt += p.bwdSaved
		}
		// torchtitan's per-op policy keeps its saved outputs beside the input; the
		// backward pass rebuilds the rest, and its working memory is full
		// recomputation's (the saved outputs are among what it rebuilds).
		saved += sacSaved
	} else {
		var before float64 // saved by the pieces before
		for i, p := range ps {
			if c.rerun(p) {
				// A checkpointed part (selective recomputation's mlp or moe) keeps its
				// input, runs its forward as in inference, and rebuilds its activations
				// in the backward pass, as full recomputation does a whole layer.
				fwdWork = max(fwdWork, before+p.input+p.output+p.inferExtra)
				bwdWork = max(bwdWork, before+p.input+p.bwdSaved+p.bwdExtra+p.output+gradIn(p, i))
				before += p.input
				continue
			}
			fwdWork = max(fwdWork, before+p.saved+p.fwdExtra+p.output)
			bwdWork = max(bwdWork, before+p.bwdSaved+p.bwdExtra+p.output+gradIn(p, i))
			before += p.saved
		}
		saved = before
	}
	l.SavedActivationBytes = int64(saved)
	l.TemporaryBytes = int64(max(fwdWork, bwdWork)) + c.gatheredBytes(l.Params, l.fp8Gathered)
	return l
}

// fp8Gathered is the weight elements of pieces ps that FSDP all-gathers in fp8
// (Options.FP8FSDPAllGather): the fp8 products' weights (torchao's Float8Linear layers;
// torchtitan leaves the output projection, which the planner runs in 16 bits, out), 0
// without the option or where nothing is gathered.
func (c *calc) fp8Gathered(ps []piece) int64 {
	if !c.o.FP8FSDPAllGather || c.sh.fp8 == nil || c.o.Sharding.Level() < 3 || c.o.ShardGroup < 2 || !c.sh.train {
		return 0
	}
	var n float64
	for _, p := range ps {
		n += p.fp8Weights
	}
	return int64(n)
}

// gatheredBytes is the working memory ZeRO-3 (and HSDP) adds to a layer of params
// parameters beyond the shards: its weights all-gathered while it runs, the next
// layer's gathered beside them when they are prefetched (counted as this layer's size),
// and its whole gradients before they are reduce-scattered (Rajbhandari et al. 2020,
// section 5.3; PyTorch FSDP2 frees each layer's gathered weights after its forward and
// its backward: reshard_after_forward).
//
// fp8 of the params are gathered in fp8 (Options.FP8FSDPAllGather): fsdp_post_all_gather
// wraps the gathered 1-byte data in the Float8Tensor the layer's products read, so each
// gathered copy holds 1 byte for those weights where it held full.weight; the
// gradients are whole and 16-bit as before.
func (c *calc) gatheredBytes(params, fp8 int64) int64 {
	if c.o.Sharding.Level() < 3 || c.o.ShardGroup < 2 {
		return 0
	}
	full := c.o.perParam()
	if c.o.keepsGathered() {
		return ceil(float64(params) * full.grad) // the 16-bit gradient before it is added in fp32
	}
	copies := 2.0
	if c.o.NoPrefetch {
		copies = 1
	}
	weights := float64(params-fp8)*full.weight + float64(fp8)
	return ceil(copies*weights + float64(params)*full.grad)
}

// FullBytes are the weights and gradients of layer i's own parameters (without a tied
// embedding matrix: TiedFullBytes) on one device of a tensor-parallel group before any
// sharding: what a ZeRO-3 layer all-gathers and reduce-scatters, and what the
// data-parallel gradient reduction moves.
//
// The weights FSDP gathers in fp8 (Options.FP8FSDPAllGather) count 1 byte each: torchao's
// fsdp_pre_all_gather hands FSDP2 the fp8 cast of the shard to gather, in the forward
// pass and again in the backward pass's re-gather; the gradients are reduce-scattered
// in their own type as before.
func (r *Result) FullBytes(i int) (weights, grads int64) {
	p := r.Opts.perParam()
	l := r.Layers[i]
	n := float64(l.Params - l.TiedParams)
	return ceil((n-float64(l.fp8Gathered))*p.weight + float64(l.fp8Gathered)), ceil(n * p.grad)
}

// FP8GatherWeightBytes are FullBytes(i)'s weights as FSDP all-gathers them with
// Options.FP8FSDPAllGather, whether or not these options set it: the fp8 products'
// weights at 1 byte, the rest at their own size (FullBytes's without fp8). The search
// bounds a candidate that takes the option with it from an estimate without sharding.
func (r *Result) FP8GatherWeightBytes(i int) int64 {
	p := r.Opts.perParam()
	l := r.Layers[i]
	n := float64(l.Params - l.TiedParams)
	return ceil((n-float64(l.fp8Weights))*p.weight + float64(l.fp8Weights))
}

// ExpertFullBytes are the part of FullBytes(i) that is routed experts (Layer.ExpertParams):
// what the expert-data-parallel group reduces and gathers.
func (r *Result) ExpertFullBytes(i int) (weights, grads int64) {
	p := r.Opts.perParam()
	n := float64(r.Layers[i].ExpertParams)
	return ceil(n * p.weight), ceil(n * p.grad)
}

// ParamGatherBytes are the weights of FullBytes(i) (and of them ExpertFullBytes(i)'s)
// as the distributed optimizer's all-gather after the update moves them (ZeRO-1 and
// ZeRO-2; Megatron-Core's _ParamAndGradBucketGroup.start_param_sync all-gathers each
// bucket's param_data): in the weights' 16-bit type, but for fp8 primary weights
// (Options.FP8ParamGather) the fp8 products' weights at fp8GatherElementBytes an
// element. The gradients' reduction is untouched: their buffer keeps the parameters'
// nominal 16-bit type, or fp32 with grad_reduce_in_fp32 (grad_dtype = torch.float if
// ddp_config.grad_reduce_in_fp32 else param.dtype, distributed_data_parallel.py,
// core_v0.12.0 to core_v0.16.0), as FullBytes' gradients are.
//
// The weights are the 16-bit ones whatever FSDP's gather (FullBytes) moves: the two fp8
// gathers are refused together (Options.Validate), so this counts the fp8 weights once.
func (r *Result) ParamGatherBytes(i int) (weights, expertWeights int64) {
	l := &r.Layers[i]
	w := ceil(float64(l.Params-l.TiedParams) * r.Opts.perParam().weight)
	ew, _ := r.ExpertFullBytes(i)
	if !r.Opts.FP8ParamGather || l.fp8Weights == 0 {
		return w, ew
	}
	less := r.Opts.perParam().weight - r.Opts.fp8GatherElementBytes()
	return w - int64(float64(l.fp8Weights)*less), ew - int64(float64(l.fp8ExpertWeights)*less)
}

// TiedFullBytes are FullBytes of the tied embedding matrix, held once by a stage whose
// layers have TiedParams; 0 without one.
func (r *Result) TiedFullBytes() (weights, grads int64) {
	p := r.Opts.perParam()
	n := float64(r.Layers[0].usesTied)
	return ceil(n * p.weight), ceil(n * p.grad)
}

// GradCopyBytes are the 16-bit gradient copies (precision deepspeed-bf16) of layer i's
// own parameters, without a tied embedding matrix, and of the tied matrix when layer i
// uses it; both 0 for other precisions.
func (r *Result) GradCopyBytes(i int) (own, tied int64) {
	g := r.perParam.gradCopy
	l := r.Layers[i]
	return ceil(float64(l.Params-l.TiedParams) * g), ceil(float64(l.usesTied) * g)
}

// deepEPSMs is the number of streaming multiprocessors DeepEP's dispatch and combine
// kernels occupy while they run beside computation: DeepSeek-V3's take 20 of an
// H800's 132 SMs, enough to fill its InfiniBand and NVLink bandwidth (DeepSeek-V3
// Technical Report, arXiv 2412.19437, section 3.2.2; DeepEP's default
// Buffer.num_sms is 20 too). overlapCommSMs is their share of the H800's, taken for a
// device that states no count.
const (
	deepEPSMs      = 20.0
	overlapCommSMs = deepEPSMs / 132
)

// expertOverlapHidden is the fraction of a mixture's all-to-all time that runs beside
// computation when its overlap is on: Megatron-Core's combined 1F1B pairs each
// dispatch and combine with one sub-module of another microbatch (the attention or
// the experts of its other pass), so an all-to-all hides only behind the kernels it
// is paired with and only while both run, not behind the whole layer. Measured by
// NVIDIA on Qwen3 30B-A3B pre-training on 16 H100s (BF16, sequence 4,096, EP16, MBS 1,
// GBS 1,024, flex dispatcher with HybridEP, Transformer Engine's CUDA graphs of the
// router and preprocessing): with --overlap-moe-expert-parallel-comm, Nsight Systems
// found 3,959 ms of communication concurrent with GEMMs and attention, 36.55% of the
// communication time (9 ms, 0.11%, without), and the step fell from 24.71 s to 20.99
// s, 34% of that communication time (Megatron-Bridge, skills/nemo-mbridge-perf-
// expert-parallel-overlap/SKILL.md, "HybridEP Production-Shape Benchmark",
// 2026-07-25). Taken for every device and link; not fitted to the runs it is tested
// on. (DeepSeek's DualPipe claims to hide its all-to-alls fully, DeepSeek-V3
// Technical Report section 3.2.1; pipeplan has no DualPipe schedule, and prices its
// overlap as Megatron-Core's.)
const expertOverlapHidden = 0.3655

// expertComm adds the mixtures' dispatch and combine (piece.fwdExpertComm,
// bwdExpertComm) to the passes' device time, again in the backward pass for a forward
// that full recomputation reruns. With Options.ExpertOverlap the forward pass's
// communication hides behind the layer's backward computation and the backward pass's
// behind its forward computation (another microbatch's, under combined 1F1B), but only
// the part h = expertOverlapHidden of it that runs beside the computation it is paired
// with; the communication kernels hold a share f of the SMs while they run
// (expertCommSMShare), so the computation beside them runs that much slower. The paired
// part h*D beside computation C takes cluster.OverlappedSeconds(C, h*D, f), the rule
// every overlapped collective is priced by (core/request: ZeRO-3's gathers, the
// data-parallel reductions), and the rest (1 - h)*D is exposed: D - C or (1 - h)*D +
// f*h*D exposed, whichever is longer.
//
// The router's load-balancing loss's all-reduce (piece.fwdAuxReduce) is added to the
// forward pass whole (and to the backward's for a rerun forward), one NCCL call: it
// runs in the router, before the dispatch, so it is neither paired with other work nor
// after the dropless host synchronization (it is not part of what is returned).
func (c *calc) expertComm(l *Layer, ps []piece) (fwdExposed, bwdExposed float64) {
	var fwd, bwd, auxFwd, auxBwd, auxCalls, auxBwdCalls float64
	for _, p := range ps {
		fwd += p.fwdExpertComm
		auxFwd += p.fwdAuxReduce
		if p.fwdAuxReduce > 0 {
			auxCalls++
		}
		if c.sh.train {
			bwd += p.bwdExpertComm
			if c.rerun(p) {
				bwd += p.fwdExpertComm
				auxBwd += p.fwdAuxReduce
				if p.fwdAuxReduce > 0 {
					auxBwdCalls++ // the rerun forward's call
				}
			}
		}
	}
	if auxFwd > 0 {
		l.ExpertCommSeconds += auxFwd + auxBwd
		l.ExpertExposedSeconds += auxFwd + auxBwd
		l.FwdDeviceSeconds += auxFwd
		l.BwdDeviceSeconds += auxBwd
		l.FwdTerms.CommSeconds += auxFwd
		l.BwdTerms.CommSeconds += auxBwd
		l.FwdKernels += auxCalls
		l.FwdTerms.CommKernels += auxCalls
		l.BwdKernels += auxBwdCalls
		l.BwdTerms.CommKernels += auxBwdCalls
	}
	if fwd == 0 && bwd == 0 {
		return
	}
	l.ExpertCommSeconds += fwd + bwd
	if c.o.ExpertOverlap {
		fwdCompute, bwdCompute := l.FwdDeviceSeconds, l.BwdDeviceSeconds
		f, h := c.expertCommSMShare(), expertOverlapHidden
		fwd = (1-h)*fwd + cluster.OverlappedSeconds(bwdCompute, h*fwd, f) - bwdCompute
		bwd = (1-h)*bwd + cluster.OverlappedSeconds(fwdCompute, h*bwd, f) - fwdCompute
	}
	l.ExpertExposedSeconds += fwd + bwd
	l.FwdDeviceSeconds += fwd
	l.BwdDeviceSeconds += bwd
	l.FwdTerms.CommSeconds += fwd
	l.BwdTerms.CommSeconds += bwd
	fk, bk := c.expertCollectives()
	l.FwdKernels += fk
	l.FwdTerms.CommKernels += fk
	if c.sh.train {
		l.BwdKernels += bk
		l.BwdTerms.CommKernels += bk
	}
	return fwd, bwd
}

// expertCollectives is the collectives a mixture launches in its forward and backward
// pass: the dispatch and combine all-to-alls (and the expert-tensor gathers), and the
// metadata collectives whose time the layer already carries, each its own NCCL call:
// Megatron-Core's all-to-all dispatcher also all-gathers the tokens per expert in the
// forward pass (preprocess's gather_from_sequence_parallel_region over tp_ep_group) and
// sends the routing probabilities in an all-to-all of their own beside the tokens'
// (token_dispatch's second all_to_all, whose gradient is an all-to-all backward):
// megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher,
// core_v0.15.0 (shape.alltoallMetadataSeconds prices their time); HybridEP all-gathers
// the routing map before each forward dispatch (shape.routingMapGatherSeconds). So 4
// and 3 with the all-to-all dispatcher, 3 and 2 with HybridEP, 2 and 2 otherwise (one
// expert-parallel member: the two exchanges alone, as before).
func (c *calc) expertCollectives() (fwd, bwd float64) {
	fwd, bwd = 2, 2
	if c.o.ExpertParallel <= 1 {
		return fwd, bwd
	}
	switch {
	case !c.o.Dispatcher.flex():
		fwd, bwd = fwd+2, bwd+1
	case c.o.Dispatcher == DispatchHybridEP:
		fwd++
	}
	return fwd, bwd
}

// expertCommSMShare is the share of the device's multiprocessors the dispatch and
// combine kernels hold while they run: NCCL's CTAs (cluster.CollectiveSMShare) for
// Megatron-Core's alltoall dispatcher, which calls NCCL's all-to-all, DeepEP's own
// deepEPSMs for deepep and deepep-fp8 (the same kernels); overlapCommSMs where the
// device states no count.
func (c *calc) expertCommSMShare() float64 {
	sms := c.rf.sms
	if sms <= 0 {
		return overlapCommSMs
	}
	if c.o.Dispatcher == DispatchDeepEP || c.o.Dispatcher == DispatchDeepEPFP8 {
		return min(1, deepEPSMs/sms)
	}
	return cluster.CollectiveSMShare(int(sms))
}

func ceil(v float64) int64 { return int64(math.Ceil(v)) }

func (r *Result) total(a *arch.Arch, t Target, c *calc) {
	o := r.Opts
	tt := &r.Total
	tt.Params = a.Params()
	if !o.Inference() {
		tt.Params += a.MTPParams()
	}
	for _, l := range r.Layers {
		tt.DeviceParams += l.Params
		tt.DeviceExpertParams += l.ExpertParams
	}
	if a.TiedEmbeddings && o.Tie == TieCopy {
		tt.DeviceParams -= r.Layers[0].TiedParams // both ends count the matrix
	}
	var dropped int64
	for _, l := range r.Layers {
		tt.FP8WeightBytes += l.FP8WeightBytes
		dropped += l.bf16Dropped
	}
	ep := o.expertDevicePerParam()
	dense, experts := float64(tt.DeviceParams-tt.DeviceExpertParams), float64(tt.DeviceExpertParams)
	tt.WeightsBytes = ceil(dense*r.perParam.weight+experts*ep.weight) - dropped + tt.FP8WeightBytes
	tt.GradsBytes = ceil(dense*r.perParam.grad + experts*ep.grad)
	tt.GradCopyBytes = ceil(float64(tt.DeviceParams) * r.perParam.gradCopy)
	tt.OptimizerBytes = ceil(float64(tt.DeviceParams-tt.DeviceExpertParams)*r.optShard + float64(tt.DeviceExpertParams)*r.expertOptShard)
	var before, peak int64
	for _, l := range r.Layers {
		tt.ParamTensors += l.ParamTensors
		tt.FwdFLOPs += l.FwdFLOPs
		tt.ModelFwdFLOPs += l.FwdFLOPs - l.extraFLOPs
		tt.BwdFLOPs += l.BwdFLOPs
		tt.FwdSeconds += l.FwdSeconds
		tt.BwdSeconds += l.BwdSeconds
		peak = max(peak, before+l.TemporaryBytes)
		before += l.SavedActivationBytes
	}
	tt.ActivationBytes = before
	r.paramSums = make([]int64, len(r.Layers)+1)
	for i, l := range r.Layers {
		r.paramSums[i+1] = r.paramSums[i] + l.Params
	}
	if !o.Inference() {
		r.tempPerParam = t.Framework.OptimizerTempBytesPerParam
		tt.OptimizerTempBytes = r.OptimizerTempBytes(0, len(r.Layers)-1)
	}
	tt.PeakBytes = tt.WeightsBytes + tt.GradsBytes + tt.GradCopyBytes + tt.OptimizerBytes + max(peak, tt.OptimizerTempBytes)
	tt.FrameworkBytes = t.Framework.FixedBytes
	tt.ReservedBytes = ceil(float64(tt.PeakBytes) * t.Framework.AllocatorReserve)
	tt.PeakDeviceBytes = tt.PeakBytes + tt.ReservedBytes + tt.FrameworkBytes
	if !o.Inference() {
		r.rf, r.tensorSeconds, r.foreach = c.rf, c.fw.OptimizerTensorSeconds, t.Framework.ForeachOptimizer
		r.zeroGrads = t.Framework.MainGradBuffer
		var device float64
		device, tt.OptimizerHostSeconds = r.OptimizerSeconds(0, len(r.Layers)-1)
		tt.OptimizerSeconds = max(device, tt.OptimizerHostSeconds)
		if a.TiedEmbeddings && o.Tie == TieCopy {
			tt.TiedAllReduceBytes = ceil(float64(r.Layers[0].TiedParams) * r.perParam.grad)
			tt.TiedAllReduceSeconds = linkSeconds(t.Link, float64(tt.TiedAllReduceBytes))
		}
	}
	tt.StepSeconds = tt.FwdSeconds + tt.BwdSeconds + tt.OptimizerSeconds
	if tt.StepSeconds > 0 {
		tt.TokensPerSecond = float64(o.StepTokens()) / tt.StepSeconds
	}
}

// Model returns the estimate as a model for the partitioner, times in seconds. Each
// layer's ParamBytes holds its weights and (training) their gradients; OptimizerBytes its
// optimizer state and fp32 master weights; ActivationBytes what it keeps for its backward
// pass; TemporaryBytes its working memory; its output feeds the next layer. A tied
// embedding matrix (weights, gradients and state) is the shared item TiedGroup of the
// embedding and the head, so a stage holding both counts it once; with Tie "stage" the
// two also form a tie group, which keeps them (and everything between) in one stage.
func (r *Result) Model() *model.Model {
	m := &model.Model{
		Name:     fmt.Sprintf("%s (%s)", r.Name, r.Opts),
		TimeUnit: model.Seconds,
		Inputs:   []model.Tensor{{ID: "input_ids", Bytes: r.inputBytes}},
	}
	if r.Name == "" {
		m.Name = "model (" + r.Opts.String() + ")"
	}
	perTied := r.perParam.weight + r.perParam.grad + r.perParam.gradCopy + r.optShard
	ep := r.Opts.expertDevicePerParam()
	prev := "input_ids"
	// Tensor parallelism without sequence parallelism leaves every device of a group with
	// the whole activation; Megatron-LM's scatter-gather sends each device's 1/t of it to
	// the next stage, which all-gathers it over the fast intra-node link.
	t := int64(r.Opts.TensorParallel)
	scatter := t > 1 && !r.Opts.SequenceParallel
	var prevSend int64
	for i, l := range r.Layers {
		own := float64(l.Params - l.TiedParams)
		ml := model.Layer{
			Name:            l.Name,
			Kind:            l.Kind,
			ForwardSeconds:  l.FwdSeconds,
			BackwardSeconds: l.BwdSeconds,
			ParamBytes:      ceil((own-float64(l.ExpertParams))*(r.perParam.weight+r.perParam.grad)+float64(l.ExpertParams)*(ep.weight+ep.grad)) - l.bf16Dropped + l.FP8WeightBytes + ceil(own*r.perParam.gradCopy),
			GradBytes:       ceil((own-float64(l.ExpertParams))*r.perParam.grad+float64(l.ExpertParams)*ep.grad) + ceil(own*r.perParam.gradCopy),
			OptimizerBytes:  ceil((own-float64(l.ExpertParams))*r.optShard + float64(l.ExpertParams)*r.expertOptShard),
			TemporaryBytes:  l.TemporaryBytes,
			ActivationBytes: l.SavedActivationBytes,
			InputIDs:        []string{prev},
			Outputs:         []model.Tensor{{ID: l.Name + ".out", Bytes: l.OutputBytes}},
		}
		if scatter {
			send := (l.OutputBytes + t - 1) / t
			ml.SendBytes = &send
			if i > 0 {
				recv := prevSend
				ml.RecvBytes = &recv
			}
			prevSend = send
		}
		if l.usesTied > 0 {
			ml.Shared = map[string]int64{TiedGroup: ceil(float64(l.usesTied) * perTied)}
			if r.Opts.Tie == TieStage {
				ml.TieGroup = TiedGroup
			}
		}
		prev = l.Name + ".out"
		m.Layers = append(m.Layers, ml)
	}
	return m
}

// checkContext requires what context parallelism splits to split evenly: a causal
// model's sequence into 2c chunks under ring attention (the load-balanced split gives
// each device chunks i and 2c-1-i, as Megatron-LM requires), and for all-to-all the
// query and key/value heads on a device (those of a tensor-parallel rank) over c; and
// for all-gather (PyTorch's context_parallel) an attention kernel it splits.
func checkContext(a *arch.Arch, o Options) error {
	c := o.Context
	if c <= 1 {
		return nil
	}
	var es model.Errors
	if o.ContextMethod == AllGather && (o.FP8Attention || o.Attention != "" && o.Attention != Flash && o.Attention != CuDNN) {
		// PyTorch's context_parallel splits the attention by dispatching
		// scaled_dot_product_attention's flash, memory-efficient and cuDNN kernels
		// (torch.distributed.tensor.experimental._attention): an attention that does not
		// call them (eager matmul and softmax, flash-attn's FlashAttention-3, Triton's,
		// Transformer Engine's fp8 attention) is not split.
		if o.FP8Attention {
			es.Add("fp8_attention", "context_method all-gather is PyTorch's context_parallel, which splits scaled_dot_product_attention's 16-bit flash and cuDNN kernels only, not Transformer Engine's fp8 attention")
		} else {
			es.Add("attention", "context_method all-gather is PyTorch's context_parallel, which splits scaled_dot_product_attention's flash and cuDNN kernels only: use attention flash or cudnn, got %s", o.Attention)
		}
		return es.Err()
	}
	switch {
	case o.ContextMethod == AllToAll || o.ContextMethod == Hierarchical:
		t := o.TensorParallel
		g, what := c, "all-to-all splits the heads"
		if o.ContextMethod == Hierarchical {
			g, what = o.ContextInner, "the hierarchical split's all-to-all splits the heads over context_inner"
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"num_heads", a.NumHeads}, {"num_kv_heads", a.NumKVHeads}} {
			if g < 1 || (f.v/t)%g != 0 {
				es.Add("context_parallel", "%s: it must divide the model's %s on a device (%d / %d-way tensor parallelism = %d), got %d", what, f.name, f.v, t, f.v/t, g)
			}
		}
		if o.ContextMethod == Hierarchical && a.Causal() && o.Seq%(2*c) != 0 {
			es.Add("context_parallel", "the hierarchical split's ring balances a causal model's load over 2c chunks of the sequence: 2 x %d must divide the sequence (%d tokens)", c, o.Seq)
		}
	case a.Causal() && o.Seq%(2*c) != 0 && o.ContextMethod == AllGather:
		es.Add("context_parallel", "context_method all-gather (PyTorch's context_parallel) balances a causal model's load over 2c chunks of the sequence (its load balancing, enable_load_balance): 2 x %d must divide the sequence (%d tokens)", c, o.Seq)
	case a.Causal() && o.Seq%(2*c) != 0:
		es.Add("context_parallel", "ring attention on a causal model balances the load over 2c chunks of the sequence: 2 x %d must divide the sequence (%d tokens)", c, o.Seq)
	}
	return es.Err()
}

// checkRecipe refuses an fp8 run the device cannot do: fp8 without fp8 matrix units,
// MXFP8 without microscaling in them, blockwise scaling where no library runs it.
func checkRecipe(t Target, o Options) error {
	if o.DType != FP8 {
		return nil
	}
	name := t.Device.Name
	switch {
	case !(t.Perf.FP8FLOPSPerSecond > 0):
		return &model.FieldError{Path: "dtype", Reason: fmt.Sprintf(
			"fp8 needs a device with fp8 matrix units (Hopper, Blackwell, MI300X, MI355X, Gaudi 3, Trainium2): %s states no fp8_flops_per_second", name)}
	case o.FP8Recipe == MXFP8 && !t.Perf.MXFP8:
		return &model.FieldError{Path: "fp8_recipe", Reason: fmt.Sprintf(
			"mxfp8 needs matrix units that take microscaling (MX) fp8 (Blackwell: b200, b300, gb200, gb300; CDNA 4: mi355x): %s has none; use delayed or current", name)}
	case o.FP8Recipe == Blockwise && !t.Perf.BlockFP8:
		return &model.FieldError{Path: "fp8_recipe", Reason: fmt.Sprintf(
			"blockwise needs block-scaled fp8 products (Transformer Engine's Float8BlockScaling runs on NVIDIA Hopper and Blackwell): %s has none; use delayed or current", name)}
	}
	return nil
}

// checkFusedMLP refuses Options.ExpertFusedMLP where Transformer Engine's fused grouped
// MLP cannot run: a model without routed experts or without a gated MLP (the fusion's
// pattern is grouped product, gated activation, grouped product), or a device other
// than the compute-capability-10 Blackwell GPUs its cuDNN kernels are built for
// (grouped_gemm_swiglu_wrapper_sm100).
func checkFusedMLP(device string, a *arch.Arch, o Options) error {
	if !o.ExpertFusedMLP {
		return nil
	}
	switch {
	case !a.MoE():
		return &model.FieldError{Path: "expert_fused_mlp", Reason: "fuses a mixture of experts' routed experts: the model has none"}
	case !a.GatedMLP():
		return &model.FieldError{Path: "expert_fused_mlp", Reason: "fuses a gated activation (SwiGLU) into the experts' products: the model's MLP is not gated"}
	}
	switch strings.ToLower(device) {
	case "b200", "gb200", "b300", "gb300":
		return nil
	}
	return &model.FieldError{Path: "expert_fused_mlp", Reason: fmt.Sprintf(
		"cuDNN's fused grouped GEMMs run on Blackwell GPUs of compute capability 10.x only (b200, gb200, b300, gb300), not %s", device)}
}

// checkTensorParallel requires t to divide what it splits: the query heads, the
// key/value heads and the dense and shared MLP widths; and for a mixture of experts,
// expert parallelism to divide the experts (Megatron-LM: "num_experts must be divisible
// by expert_model_parallel_size") and expert tensor parallelism an expert's width.
func checkTensorParallel(a *arch.Arch, o Options) error {
	t := o.TensorParallel
	var es model.Errors
	type size struct {
		name string
		v    int
	}
	fs := []size{{"num_heads", a.NumHeads}, {"num_kv_heads", a.NumKVHeads}}
	if a.MoELayers() < a.NumLayers {
		fs = append(fs, size{"intermediate_size", a.DenseWidth()})
	}
	if a.SharedExpertSize > 0 {
		fs = append(fs, size{"shared_expert_size", a.SharedExpertSize})
	}
	for _, f := range fs {
		if f.v%t != 0 {
			es.Add("tensor_parallel", "must divide the model's %s (%d), got %d", f.name, f.v, t)
		}
	}
	if !a.MoE() {
		if o.ExpertParallel > 1 || o.ExpertTensorParallel != t {
			es.Add("expert_parallel", "splits a mixture of experts: %s has none (give expert parallelism 1 and no expert tensor parallelism)", a.ModelType)
		}
		return es.Err()
	}
	if a.NumExperts%o.ExpertParallel != 0 {
		es.Add("expert_parallel", "must divide the model's %d experts, got %d", a.NumExperts, o.ExpertParallel)
	}
	if a.IntermediateSize%o.ExpertTensorParallel != 0 {
		es.Add("expert_tensor_parallel", "must divide an expert's width (%d), got %d", a.IntermediateSize, o.ExpertTensorParallel)
	}
	return es.Err()
}

// ParamTensor is one parameter tensor: its elements on one device, and whether it is a
// linear layer's weight (Product: what fp8 primary weights hold in fp8, so in
// Megatron-Core a buffer of its own).
type ParamTensor struct {
	Elements int64
	Product  bool
}

// megatronParams are p's Megatron-Core parameter tensors: its own list (mcore), or its
// params less its routed experts' (which Megatron-Core keeps in a buffer of their own)
// as its tensors' equal shares, and its tied matrix as one.
func (p piece) megatronParams() []ParamTensor {
	if p.mcore != nil {
		return p.mcore
	}
	var out []ParamTensor
	if n, dense := int64(max(1, p.tensors)), p.params-p.expertParams; dense > 0 {
		for i := int64(0); i < n; i++ {
			out = append(out, ParamTensor{Elements: dense/n + btoi(i < dense%n)})
		}
	}
	if p.tied > 0 {
		out = append(out, ParamTensor{Elements: p.tied})
	}
	return out
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
