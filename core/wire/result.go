package wire

// Result is what Run returns for a valid request: the plan (or why there is none), the
// simulated step and the whole step's time and throughput, with diagnostics. Every time
// is in seconds (a plan of a profile in cycles also gives cycles).
type Result struct {
	// Version is the request format's version.
	Version int `json:"version"`
	// ID is the request's content id (core/request.ID).
	ID string `json:"id"`
	// PlannerVersion is the planner that made the result.
	PlannerVersion string `json:"planner_version"`
	// Model describes the model that was planned.
	Model ModelInfo `json:"model"`
	// Feasible is false when no split fits (Diagnostics say why) or a given split does
	// not fit its devices' memory.
	Feasible bool `json:"feasible"`
	// Plan is the split and each stage's costs for one microbatch; nil when no split fits.
	Plan *Plan `json:"plan,omitempty"`
	// Placement says which links the stage transfers and the data-parallel all-reduce
	// cross, for a cluster of nodes (cluster.devices_per_node).
	Placement *Placement `json:"placement,omitempty"`
	// Devices are the pipeline's devices with what runs once per step on each: the
	// optimizer update and the gradient all-reduces.
	Devices []DeviceStep `json:"devices,omitempty"`
	// Schedule is the simulated pipeline of one step (one replica); nil when no split fits.
	Schedule *ScheduleResult `json:"schedule,omitempty"`
	// Step is the whole training step (or inference batch) and the throughput.
	Step *Step `json:"step,omitempty"`
	// Diagnostics: why nothing fits, what is over memory, what was assumed, advice.
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// ModelInfo describes the planned model.
type ModelInfo struct {
	Name string `json:"name"`
	// Source is "example", "document" or "architecture"; Format the document's format.
	Source string `json:"source"`
	Format string `json:"format,omitempty"`
	Layers int    `json:"layers"`
	// LayerNames in order, for front ends that show or export the split.
	LayerNames []string `json:"layer_names"`
	// TimeUnit of the profile: seconds or cycles.
	TimeUnit string `json:"time_unit"`
	// MicrobatchSize is the samples per microbatch; TokensPerSample the tokens in one
	// sample (0 when unknown).
	MicrobatchSize  int `json:"microbatch_size"`
	TokensPerSample int `json:"tokens_per_sample,omitempty"`
	// Params is the number of parameters of an architecture (0 for profiles).
	Params int64 `json:"params,omitempty"`
	// LayerCosts are every layer's costs as planned, with the request's layers.
	LayerCosts *LayerCosts `json:"layer_costs,omitempty"`
}

// LayerCosts are every layer's costs for one microbatch as the planner used them (a
// profile's times rescaled to the cluster's device, an architecture's costed on it), as
// lists with one entry per layer: columns, so that 10,000 layers stay compact. Times are
// in seconds, or in cycles for a profile in cycles (ModelInfo.TimeUnit).
type LayerCosts struct {
	ForwardSeconds  []float64 `json:"forward_seconds,omitempty"`
	BackwardSeconds []float64 `json:"backward_seconds,omitempty"`
	ForwardCycles   []int64   `json:"forward_cycles,omitempty"`
	BackwardCycles  []int64   `json:"backward_cycles,omitempty"`
	// ParamBytes: the layer's parameter memory (model.Layer.ParamBytes).
	ParamBytes []int64 `json:"param_bytes"`
	// ActivationBytes: what the layer keeps for the backward pass.
	ActivationBytes []int64 `json:"activation_bytes"`
	// OutputBytes: the bytes of the tensors the layer outputs.
	OutputBytes []int64 `json:"output_bytes"`
}

// DeviceStep is what one pipeline device does once per step besides the pipeline.
type DeviceStep struct {
	Device int    `json:"device"`
	Name   string `json:"name,omitempty"`
	// Stages on the device (one, or v for interleaved).
	Stages []int `json:"stages"`
	// GradBytes are the gradients of its stages: what its data-parallel peers all-reduce.
	GradBytes int64 `json:"grad_bytes"`
	// OptimizerSeconds is its optimizer update: the longer of a memory-bound pass that
	// reads the gradients and the optimizer state and writes the weights and the state,
	// and the framework's host time per parameter tensor (OptimizerHostSeconds), plus,
	// under Megatron-Core, the gradient-norm clipping before it (the norm's read of the
	// main gradients, its one-float all-reduce and its read to the host).
	OptimizerSeconds     float64 `json:"optimizer_seconds"`
	OptimizerHostSeconds float64 `json:"optimizer_host_seconds,omitempty"`
	// AllReduceSeconds is its data-parallel gradient all-reduce (ring);
	// ExposedAllReduceSeconds the part its framework does not overlap with the backward
	// pass (all of it unless the framework overlaps, as PyTorch DDP does).
	AllReduceSeconds        float64 `json:"allreduce_seconds"`
	ExposedAllReduceSeconds float64 `json:"exposed_allreduce_seconds"`
	// ExposedSlowdownSeconds is, of ExposedAllReduceSeconds, the computation slowed by
	// the collectives running beside it (they hold NCCL's SMs,
	// cluster.OverlapSlowdownSeconds); the rest is communication that outlasts the
	// computation. A collective hidden behind the computation adds only this.
	ExposedSlowdownSeconds float64 `json:"exposed_slowdown_seconds,omitempty"`
	// WeightBytes are the weights of its stages, whole: what ZeRO-1 and 2 all-gather
	// after the update, in the type the all-gather moves them (fp8 primary weights'
	// fp8 products in fp8 but under mxfp8; analytic.Result.ParamGatherBytes) (0 under
	// other shardings).
	WeightBytes int64 `json:"weight_bytes,omitempty"`
	// ReduceScatterSeconds and AllGatherSeconds: under zero1 and zero2 its gradients
	// reduce-scattered (once per step; per microbatch under zero2) and its weights
	// all-gathered over the shard group (ring). ExposedAllReduceSeconds then counts the
	// part of both that is not hidden. Under zero3 they are in the layers' times, and
	// hsdp's AllReduceSeconds is the all-reduce of a gradient shard across the groups.
	ReduceScatterSeconds float64 `json:"reduce_scatter_seconds,omitempty"`
	AllGatherSeconds     float64 `json:"all_gather_seconds,omitempty"`
	// LayerCollectiveSeconds: under zero3 and hsdp, its stages' per-layer weight
	// all-gathers and gradient reduce-scatters over the shard group in one step (every
	// microbatch), which run beside the layers' compute; LayerAddedSeconds what they add
	// to its passes (in the pipeline's time), the rest hidden behind each layer's compute.
	LayerCollectiveSeconds float64 `json:"layer_collective_seconds,omitempty"`
	LayerAddedSeconds      float64 `json:"layer_added_seconds,omitempty"`
	// LayerSlowdownSeconds is, of LayerAddedSeconds, the layers' compute slowed by the
	// collectives beside it (NCCL's SMs); the rest is communication that outlasts it.
	LayerSlowdownSeconds float64 `json:"layer_slowdown_seconds,omitempty"`
}

// Step is one whole step: the pipeline's makespan, then once per step the tied-embedding
// all-reduce, the data-parallel all-reduce and the optimizer update. Only the
// data-parallel all-reduce overlaps the pipeline, and only where the framework overlaps
// it (model.architecture.framework eager or compiled: PyTorch DDP); pipeline transfers
// are in the makespan, and the tied all-reduce and the optimizer follow the backward
// passes, as in Megatron-LM and PyTorch.
type Step struct {
	// PipelineSeconds is the simulated schedule's makespan.
	PipelineSeconds float64 `json:"pipeline_seconds"`
	// TiedAllReduceSeconds: the gradients of a tied embedding held on the first and the
	// last stage, all-reduced between them.
	TiedAllReduceSeconds float64 `json:"tied_allreduce_seconds"`
	// DataParallelAllReduceSeconds: the slowest device's ring all-reduce of its gradients
	// over the replicas: 2(d-1)/d x bytes / bandwidth + 2(d-1) x latency.
	DataParallelAllReduceSeconds float64 `json:"data_parallel_allreduce_seconds"`
	// DataParallelExposedSeconds: what the slowest device's data-parallel communication
	// adds to the step (ExposedAllReduceSeconds): the communication that compute does not
	// hide, and the compute slowed by what it hides (DataParallelSlowdownSeconds of it).
	DataParallelExposedSeconds float64 `json:"data_parallel_exposed_seconds"`
	// DataParallelSlowdownSeconds: of DataParallelExposedSeconds, that device's compute
	// slowed by the collectives hidden behind it (DeviceStep.ExposedSlowdownSeconds).
	DataParallelSlowdownSeconds float64 `json:"data_parallel_slowdown_seconds,omitempty"`
	// DataParallelReduceScatterSeconds and DataParallelAllGatherSeconds: the slowest
	// device's reduce-scatter and all-gather under zero1 and zero2 (DeviceStep).
	DataParallelReduceScatterSeconds float64 `json:"data_parallel_reduce_scatter_seconds,omitempty"`
	DataParallelAllGatherSeconds     float64 `json:"data_parallel_all_gather_seconds,omitempty"`
	// DataParallelLayerSeconds and DataParallelLayerAddedSeconds: the slowest device's
	// per-layer all-gathers and reduce-scatters under zero3 and hsdp, and what they add
	// to its passes (DeviceStep.LayerCollectiveSeconds, LayerAddedSeconds). They are in
	// PipelineSeconds, not beside it.
	DataParallelLayerSeconds      float64 `json:"data_parallel_layer_seconds,omitempty"`
	DataParallelLayerAddedSeconds float64 `json:"data_parallel_layer_added_seconds,omitempty"`
	// DataParallelLayerSlowdownSeconds: of DataParallelLayerAddedSeconds, that device's
	// compute slowed by the per-layer collectives (DeviceStep.LayerSlowdownSeconds).
	DataParallelLayerSlowdownSeconds float64 `json:"data_parallel_layer_slowdown_seconds,omitempty"`
	// OptimizerSeconds: the slowest device's optimizer update.
	OptimizerSeconds float64 `json:"optimizer_seconds"`
	// TrainMetricSyncSeconds: the training loop's synchronisation of its training
	// metrics across all devices once a step (training.train_metrics), with the device
	// idle.
	TrainMetricSyncSeconds float64 `json:"train_metric_sync_seconds,omitempty"`
	// ExpertUnpairedSeconds: on a training run without pipeline parallelism under
	// parallelism.expert_overlap, the expert all-to-alls of the step's first forward and
	// last backward, which Megatron-Core's combined 1F1B runs unpaired (the passes are
	// priced paired, so their hidden part is added once a step).
	ExpertUnpairedSeconds float64 `json:"expert_unpaired_seconds,omitempty"`
	// StepSeconds is their sum, with the data-parallel all-reduce's exposed part, the
	// training metrics' synchronisation and the unpaired expert all-to-alls.
	StepSeconds float64 `json:"step_seconds"`
	// Breakdown writes the step as the parts that add up to StepSeconds, then the
	// data-parallel communication that compute hides, named with what hides it and by
	// how much it slows it: "pipeline 268.64 ms + the last backward slowed 1.75 ms +
	// optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the
	// last backward, slowing it 1.75 ms (NCCL's SMs)". Front ends show it as it is.
	Breakdown string `json:"breakdown"`
	// BubbleFraction is the pipeline's idle share (schedule).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Devices used: pipeline x data x tensor x context.
	Devices int `json:"devices"`
	// SamplesPerStep = microbatch size x microbatches x replicas; TokensPerStep with the
	// tokens per sample, when known.
	SamplesPerStep int64 `json:"samples_per_step"`
	TokensPerStep  int64 `json:"tokens_per_step,omitempty"`
	// SamplesPerSecond and TokensPerSecond: per step over StepSeconds.
	SamplesPerSecond float64 `json:"samples_per_second"`
	TokensPerSecond  float64 `json:"tokens_per_second,omitempty"`
	// ModelFLOPsPerStep: for architectures, the model's FLOPs of one step (forward and
	// backward, 3x the forward, without recomputation); MFU is them over the devices'
	// dense peak during the step.
	ModelFLOPsPerStep float64 `json:"model_flops_per_step,omitempty"`
	MFU               float64 `json:"mfu,omitempty"`
}

// Severities of a diagnostic.
const (
	// Error: the request has no plan, or the plan does not fit.
	Error = "error"
	// Warning: a plan exists but wastes something or needs attention.
	Warning = "warning"
	// Note: what the planner assumed.
	Note = "note"
)

// Diagnostic codes beyond plan's no-fit reasons (plan.TooFewLayers, ...).
const (
	CodeStageOverMemory = "stage_over_memory"
	CodeScheduleAdvice  = "schedule_advice"
	CodeIdleDevices     = "idle_devices"
	// CodeBeyondScaleUp: more devices than a preset's scale-up domain are joined by its
	// scale-up link, without cluster.devices_per_node to place them on nodes.
	CodeBeyondScaleUp         = "beyond_scale_up"
	CodeTimesScaled           = "times_scaled"
	CodeTimesNotScaled        = "times_not_scaled"
	CodeMicrobatchSizeUnknown = "microbatch_size_unknown"
	CodeStateAdded            = "state_added"
	CodeStateRemoved          = "state_removed"
	CodeDataLinkAssumed       = "data_link_assumed"
	CodeGradBytesAssumed      = "grad_bytes_assumed"
	CodeOptimizerTimeUnknown  = "optimizer_time_unknown"
	// CodeGraphPartitionFallback: split "graph" was asked for, and the split is of ranges
	// of the layer order instead (Plan.GraphFallback says why).
	CodeGraphPartitionFallback = "graph_partition_fallback"
	// CodeGraphcoreMemoryRule: a Graphcore profile in training is planned with Graphcore's
	// auto-pipeline tool's memory rule, one microbatch's activations per stage, rather
	// than the schedule's in-flight microbatches (docs/formats.md).
	CodeGraphcoreMemoryRule = "graphcore_memory_rule"
	// CodeProfileScaled: the profile was scaled linearly from the microbatch size it was
	// measured with to the one planned (its scaled_from; request.ScaleProfile).
	CodeProfileScaled = "profile_scaled"
	// CodeRecomputeHeuristic: under training.recompute auto, what each stage recomputes
	// was chosen by a heuristic, never slower than a global mode but not proven optimal
	// (a graph partition, an interleaved schedule; plan.Plan.RecomputeHeuristic says why).
	CodeRecomputeHeuristic = "recompute_auto_heuristic"
)

// FirstError is the result's first error diagnostic (why no plan fits, or why the plan
// does not), or nil when it has none: the one reason a front end states in a line.
func (r *Result) FirstError() *Diagnostic {
	if r == nil {
		return nil
	}
	for i := range r.Diagnostics {
		if r.Diagnostics[i].Severity == Error {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

// Diagnostic is one finding, as data a front end can act on and in words.
type Diagnostic struct {
	// Code names the kind of finding (the constants above and plan's no-fit codes).
	Code string `json:"code"`
	// Severity: error, warning or note.
	Severity string `json:"severity"`
	// Message says it in words.
	Message string `json:"message"`
	// Field is the request field it concerns, if any.
	Field string `json:"field,omitempty"`
	// Layer and LastLayer: the layers concerned (0-based), if any.
	Layer     *int `json:"layer,omitempty"`
	LastLayer *int `json:"last_layer,omitempty"`
	// Stage and Device concerned, if any.
	Stage  *int `json:"stage,omitempty"`
	Device *int `json:"device,omitempty"`
	// BytesNeeded against CapacityBytes, for memory findings.
	BytesNeeded   int64 `json:"bytes_needed,omitempty"`
	CapacityBytes int64 `json:"capacity_bytes,omitempty"`
	// Suggestion is what to change.
	Suggestion string `json:"suggestion,omitempty"`
}
