package ui

import (
	"math"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// KnobField is one row of a panel's knobs, drawn from a list (KnobFields) so that each
// is one row of the KnobRows component: a select of core's values (Choices, "" first
// for core's default), a check box (Check), a text box (Text: a list, applied when the
// box is left) or a number box (else) with Step and Max ("any" and core's bound for a
// fraction, else whole numbers up to wire.MaxDevices). The knob's value, its default and
// its setter go by Name (Field, DefaultText, SetField); its element's id is ID.
type KnobField struct {
	ID, Name, Label, Hint string
	Choices               []string
	Check, Text           bool
	Step                  string
	Max                   int
	// Disabled: core's normal form of the request has no value for the knob (it does not
	// apply, e.g. a shard group without hsdp) and the request sets none.
	Disabled bool
	choose   bool // a select of KnobChoices(Name)
	arch     bool // an architecture's knob only
	always   bool // never disabled (as each hand-written control before the rows was)
	// search: a Search panel knob ("search." and the query's knob), whose text is the
	// search's (App.SearchKnob), never the request's; empty says what "" does.
	search bool
	empty  string
	// on, when given, is the knob whose value in core's normal form says this one
	// applies (a token dispatcher where the model is a mixture: expert_tensor).
	on    string
	doc   bool // a cluster document's knob only
	group string
	// ref is the request's field, aref its architecture's: a *string, *bool, *int,
	// *float64, **float64 or *[]string; both nil for the knobs Knob and SetKnob read
	// and set.
	ref  func(r *wire.Request) any
	aref func(ar *wire.Architecture) any
	// set, when given, sets the knob instead of SetField's own parsing (a degree, whose
	// edit lays the devices out again).
	set func(a *App, v string)
}

// knobRows are KnobFields' rows, in order, by group: the Model panel's "arch"
// (architecture knobs), "train" and "figures" (the device's and framework's figures,
// which a calibration fits); the Cluster panel's "cluster" (after the devices and
// links), "data" (data parallelism), "par" (tensor, context and expert parallelism) and
// "finer"; the Plan panel's "plan"; the Search panel's "search" (the query's knobs) and
// "searchbase" (the planned request's fields every candidate keeps).
var knobRows = [...]KnobField{
	{group: "arch", Name: "seq", Label: "Sequence length (tokens)", Max: math.MaxInt32, always: true, aref: func(ar *wire.Architecture) any { return &ar.Seq }},
	{group: "arch", Name: "dtype", Label: "Data type", choose: true, always: true, aref: func(ar *wire.Architecture) any { return &ar.DType }},
	{group: "arch", ID: "knob-fp8-recipe", Name: "fp8_recipe", Label: "FP8 recipe", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Training.FP8Recipe }},
	{group: "arch", ID: "knob-fp8-param-gather", Name: "fp8_param_gather", ref: func(r *wire.Request) any { return &r.Training.FP8ParamGather }, Label: "FP8 primary weights", Check: true, always: true,
		Hint: "keeps the fp8 products' weights in fp8 only, without their 16-bit copy (Megatron-LM's --fp8-param-gather; needs fp8)"},
	{group: "arch", Name: "fp8_amax_tp_only", ref: func(r *wire.Request) any { return &r.Training.FP8AmaxTPOnly }, Label: "FP8 amax over TP only", Check: true,
		Hint: "delayed scaling's amax all-reduce over the tensor-parallel group, not all of the stage's ranks (Megatron-LM's --tp-only-amax-red)"},
	{group: "arch", Name: "expert_fused_mlp", aref: func(ar *wire.Architecture) any { return &ar.ExpertFusedMLP }, Label: "Fused expert MLP", Check: true,
		Hint: "a mixture's experts as Transformer Engine's fused grouped MLP (needs mxfp8 and a Blackwell device)"},
	{group: "arch", Name: "attention", Label: "Attention", choose: true, always: true, aref: func(ar *wire.Architecture) any { return &ar.Attention }},
	{group: "arch", Name: "fp8_attention", aref: func(ar *wire.Architecture) any { return &ar.FP8Attention }, Label: "FP8 attention", Check: true,
		Hint: "the attention core in fp8 at cuDNN's rates (Transformer Engine's fp8_dpa; needs fp8 and attention cudnn)"},
	{group: "arch", Name: "precision", Label: "Precision", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Training.Precision }},
	{group: "arch", Name: "optimizer", Label: "Optimizer", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Training.Optimizer }},
	{group: "arch", Name: "framework", aref: func(ar *wire.Architecture) any { return &ar.Framework }, Label: "Framework", choose: true, always: true,
		Hint: "how the model runs: its host time per kernel, fusions, memory and overlaps (pipeplan devices lists the modes)"},
	{group: "arch", Name: "cross_entropy", aref: func(ar *wire.Architecture) any { return &ar.CrossEntropy }, Label: "Loss kernel", choose: true},
	{group: "arch", Name: "split", aref: func(ar *wire.Architecture) any { return &ar.Split }, Label: "One layer is", choose: true, always: true},
	{group: "arch", Name: "tie", aref: func(ar *wire.Architecture) any { return &ar.Tie }, Label: "Tied embedding", choose: true, always: true,
		Hint: "copy: on both ends, gradients all-reduced; stage: in one stage"},
	{group: "train", Name: "batch", Label: "Microbatch size (samples)", Max: math.MaxInt32, always: true, ref: func(r *wire.Request) any { return &r.Schedule.MicrobatchSize }},
	{group: "train", Name: "mode", Label: "Mode", choose: true, always: true},
	{group: "train", Name: "recompute", Label: "Recomputation", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Training.Recompute }},
	{group: "train", Name: "recompute_modules", ref: func(r *wire.Request) any { return &r.Training.RecomputeModules }, Label: "Recomputed parts", Text: true, arch: true},
	{group: "train", Name: "train_metrics", Label: "Training metrics", Max: wire.MaxTrainMetrics, arch: true, ref: func(r *wire.Request) any { return &r.Training.TrainMetrics },
		Hint: "metrics the training loop computes on every microbatch's logits and synchronises every step (Composer's; LLM Foundry's MPT has two)"},
	{group: "figures", Name: "matmul_efficiency", aref: func(ar *wire.Architecture) any { return &ar.MatmulEfficiency }, Label: "Matmul efficiency", Max: 1, Step: "any",
		Hint: "the fraction of the device's peak FLOP/s large matrix products reach"},
	{group: "figures", Name: "memory_efficiency", aref: func(ar *wire.Architecture) any { return &ar.MemoryEfficiency }, Label: "Memory efficiency", Max: 1, Step: "any",
		Hint: "the fraction of its memory bandwidth memory-bound kernels reach"},
	{group: "figures", Name: "kernel_seconds", aref: func(ar *wire.Architecture) any { return &ar.KernelSeconds }, Label: "Device time per kernel (s)", Max: 1, Step: "any"},
	{group: "figures", Name: "host_kernel_seconds", aref: func(ar *wire.Architecture) any { return &ar.HostKernelSeconds }, Label: "Host time per kernel (s)", Max: 1, Step: "any"},
	{group: "figures", Name: "host_layer_seconds", aref: func(ar *wire.Architecture) any { return &ar.HostLayerSeconds }, Label: "Host time per layer (s)", Max: 1, Step: "any",
		Hint: "per layer and pass; the fit above sets these five"},
	{group: "data", ID: "cluster-replicas", Name: "data", Label: "Replicas", Max: wire.MaxDevices, always: true,
		ref: func(r *wire.Request) any { return &r.Parallelism.Data }, set: func(a *App, v string) { a.SetDegree("data", v) },
		Hint: "Copies of the pipeline, each on its own devices, training on their share of the batch."},
	{group: "data", ID: "cluster-sharding", Name: "sharding", Label: "Sharding", choose: true, always: true,
		Hint: "Training state sharded over the replicas: zero1 the optimizer state (Megatron-LM's distributed optimizer), zero2 also the gradients, zero3 also the weights, gathered layer by layer (FSDP), hsdp zero3 inside a node and replicated across nodes."},
	{group: "par", ID: "cluster-tensor", Name: "tensor", Label: "Tensor-parallel degree", Max: wire.MaxDevices, always: true,
		ref: func(r *wire.Request) any { return &r.Parallelism.Tensor }, set: (*App).SetTensor,
		Hint: "Each pipeline device becomes a group of this many devices splitting every block (Megatron-style), inside a node: it divides the devices per node, and the pipeline gets devices ÷ degree stages."},
	{group: "par", ID: "cluster-sp", Name: "sequence_parallel", Label: "Sequence parallelism", Check: true, ref: func(r *wire.Request) any { return &r.Parallelism.SequenceParallel },
		Hint: "splits norms, dropout and residuals along the sequence too (needs a degree of 2 or more)"},
	{group: "par", ID: "cluster-context", Name: "context", Label: "Context-parallel degree", Max: wire.MaxDevices, always: true,
		ref: func(r *wire.Request) any { return &r.Parallelism.Context }, set: func(a *App, v string) { a.SetDegree("context", v) },
		Hint: "Each sequence is split over this many devices of a node (beside the tensor-parallel group), which exchange keys and values in every attention layer: for long sequences."},
	{group: "par", ID: "cluster-context-method", Name: "context_method", Label: "Context exchange", choose: true},
	{group: "par", ID: "cluster-expert", Name: "expert", Label: "Expert-parallel degree", Max: wire.MaxDevices, always: true,
		ref: func(r *wire.Request) any { return &r.Parallelism.Expert }, set: func(a *App, v string) { a.SetDegree("expert", v) },
		Hint: "Mixtures of experts: each device of a group of this many holds that share of every mixture layer's experts, fed by all-to-alls. It uses no devices of its own: it divides replicas × tensor and the experts."},
	{group: "par", ID: "cluster-ep-overlap", Name: "expert_overlap", Label: "Overlap expert all-to-alls", Check: true, ref: func(r *wire.Request) any { return &r.Parallelism.ExpertOverlap },
		Hint: "behind an adjacent microbatch's computation (Megatron-Core's combined 1F1B, DeepSeek's DualPipe)"},
	{group: "par", ID: "cluster-dispatcher", Name: "expert_dispatcher", Label: "Token dispatcher", choose: true, ref: func(r *wire.Request) any { return &r.Parallelism.ExpertDispatcher }},
	{group: "plan", ID: "plan-schedule", Name: "schedule", Label: "Schedule", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Schedule.Name }},
	{group: "plan", ID: "plan-microbatches", Name: "microbatches", Label: "Microbatches per step", Max: 1 << 16, always: true, ref: func(r *wire.Request) any { return &r.Schedule.Microbatches }},
	{group: "plan", Name: "weight_grad_fraction", ref: func(r *wire.Request) any { return &r.Schedule.WeightGradFraction }, Label: "Weight-gradient share", Max: 1, Step: "any",
		Hint: "zb-h1: the share of each backward that computes weight gradients, run apart"},
	{group: "plan", ID: "plan-objective", Name: "objective", Label: "Objective", choose: true, always: true, ref: func(r *wire.Request) any { return &r.Objective }},
	{group: "plan", ID: "plan-partition", Name: "partition", Label: "Stages", choose: true, always: true,
		ref: func(r *wire.Request) any { return &r.Partition }, set: func(a *App, v string) { a.SetPlanOption("partition", v) },
		Hint: "layers: ranges of the layer order; graph: parts of the layer graph (models that branch)"},
	{group: "cluster", ID: "cluster-mem", Name: "memory_proportion", Label: "Memory proportion", Max: 1, Step: "any", always: true, ref: func(r *wire.Request) any { return &r.MemoryProportion },
		Hint: "The share of each device's usable memory a stage may fill (Graphcore's auto-pipeline tool's memoryProportion)."},
	{group: "cluster", Name: "free_transfers", ref: func(r *wire.Request) any { return &r.Cluster.FreeTransfers }, Label: "Free transfers", Check: true, always: true,
		Hint: "plans as if every transfer took no time"},
	{group: "cluster", Name: "data_link", ref: func(r *wire.Request) any { return &r.Cluster.DataLink }, Label: "Data-parallel link", choose: true, doc: true,
		Hint: "the link the gradient all-reduce crosses"},
	{group: "finer", Name: "shard_group", ref: func(r *wire.Request) any { return &r.Parallelism.ShardGroup }, Label: "HSDP shard group (replicas)", Max: wire.MaxDevices,
		Hint: "hsdp shards inside a group of this many replicas and replicates across groups; it divides the replicas."},
	{group: "finer", Name: "prefetch", ref: func(r *wire.Request) any { return &r.Parallelism.Prefetch }, Label: "Weight prefetch", choose: true,
		Hint: "zero3 and hsdp: next-layer gathers a layer's weights while the layer before it computes (FSDP2), none when it runs."},
	{group: "finer", Name: "reshard", ref: func(r *wire.Request) any { return &r.Parallelism.Reshard }, Label: "Reshard", choose: true,
		Hint: "zero3 and hsdp: layer frees each layer's gathered weights after its pass (FSDP2's reshard_after_forward), step keeps them gathered and the gradients whole through the step (FSDP2 under pipelining, as torchtitan runs it)."},
	{group: "finer", Name: "reduce_dtype", ref: func(r *wire.Request) any { return &r.Parallelism.ReduceDType }, Label: "Gradient reduce type", choose: true,
		Hint: "zero3 and hsdp in training: fp32 casts the 16-bit gradients to fp32 before they are reduce-scattered, twice the bytes (FSDP2's MixedPrecisionPolicy reduce_dtype, as torchtitan runs it); default their own type."},
	{group: "finer", Name: "fully_shard", ref: func(r *wire.Request) any { return &r.Parallelism.FullyShard }, Label: "FSDP2 copies (fully_shard)", Check: true,
		Hint: "zero3 and hsdp in training: PyTorch FSDP2's fully_shard, which copies every all-gather out into the parameters and every reduce-scatter's input in from the gradients; off for FSDP1 and DeepSpeed ZeRO-3."},
	{group: "finer", Name: "overlap_grad_reduce", ref: func(r *wire.Request) any { return &r.Parallelism.OverlapGradReduce }, Label: "Overlap gradient reduction", choose: true, arch: true,
		Hint: "the gradients' all-reduce or reduce-scatter in buckets during the last backward (Megatron-LM's --overlap-grad-reduce)."},
	{group: "finer", Name: "overlap_param_gather", ref: func(r *wire.Request) any { return &r.Parallelism.OverlapParamGather }, Label: "Overlap weight all-gather", choose: true, arch: true,
		Hint: "zero1 and zero2: the updated weights' all-gather during the next step's first forward (Megatron-LM's --overlap-param-gather)."},
	{group: "finer", Name: "dp_bucket_bytes", ref: func(r *wire.Request) any { return &r.Parallelism.DPBucketBytes }, Label: "Gradient bucket (bytes)", Max: wire.MaxDPBucketBytes,
		Hint: "bytes of gradients one data-parallel collective reduces (e.g. 41943040 for 40 MiB); empty: the framework's own buckets."},
	{group: "finer", Name: "dp_bucket_elements", ref: func(r *wire.Request) any { return &r.Parallelism.DPBucketElements }, Label: "Gradient bucket (elements)", Max: wire.MaxDPBucketBytes,
		Hint: "Megatron-Core's bucket_size (Megatron-LM's --ddp-bucket-size), its buckets closed at parameters' ends; megatron and cuda-graphs."},
	{group: "finer", Name: "check_for_nan_in_grad", ref: func(r *wire.Request) any { return &r.Training.CheckForNaNInGrad }, Label: "NaN check of gradients", Check: true,
		Hint: "each bucket's norm read back to the host before its reduction (Megatron-Core's check_for_nan_in_grad); megatron and cuda-graphs."},
	{group: "finer", Name: "overlap_tensor_comm", ref: func(r *wire.Request) any { return &r.Parallelism.OverlapTensorComm }, Label: "Overlap tensor-parallel communication", choose: true, arch: true,
		Hint: "with sequence parallelism: tensor parallelism's all-gathers and reduce-scatters in chunks behind the linear layers' products: userbuffers (Transformer Engine's, Megatron-LM's --tp-comm-overlap), async-tp (PyTorch's async TP, torch.compile only: the backward reduce-scatters of summed gradients stay exposed), on (the framework's own)."},
	{group: "finer", Name: "tp_comm_overlap_config", ref: func(r *wire.Request) any { return &r.Parallelism.TPCommOverlapConfig }, Label: "Userbuffers config", choose: true, arch: true,
		Hint: "with the userbuffers overlap: te-default (Transformer Engine's initialize_ub defaults) or a tuned config NVIDIA's recipes pass as tp_comm_overlap_cfg, of one hidden size, tensor degree and device family (h100, b200) each; an fp8 one needs fp8."},
	{group: "finer", Name: "context_inner", ref: func(r *wire.Request) any { return &r.Parallelism.ContextInner }, Label: "All-to-all group (hierarchical context)", Max: wire.MaxDevices,
		Hint: "hierarchical context parallelism: all-to-all inside groups of this many devices, a ring between the groups."},
	{group: "finer", Name: "expert_tensor", ref: func(r *wire.Request) any { return &r.Parallelism.ExpertTensor }, Label: "Expert tensor-parallel degree", Max: wire.MaxDevices,
		Hint: "each expert split over this many devices (Megatron-Core's expert_tensor_parallel_size)."},
	{group: "finer", Name: "expert_imbalance", aref: func(ar *wire.Architecture) any { return &ar.ExpertImbalance }, Label: "Routing imbalance", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "how many times the mean routed tokens the busiest device of an expert-parallel group gets."},
	{group: "search", ID: "search-max_devices", Name: "search.max_devices", Label: "Devices at hand", Max: wire.MaxDevices, search: true, empty: "required"},
	{group: "search", ID: "search-stages", Name: "search.stages", Label: "Pipeline stages", Max: wire.MaxDevices, search: true},
	{group: "search", ID: "search-replicas", Name: "search.replicas", Label: "Data-parallel replicas", Max: wire.MaxDevices, search: true},
	{group: "search", ID: "search-tensor", Name: "search.tensor", Label: "Tensor-parallel degree", Max: wire.MaxDevices, search: true},
	{group: "search", ID: "search-context", Name: "search.context", Label: "Context-parallel degree", Max: wire.MaxDevices, search: true,
		Hint: "searched from 32,768 tokens (architectures), else 1"},
	{group: "search", ID: "search-context_method", Name: "search.context_method", Label: "Context exchange", choose: true, search: true,
		empty: "the request's, else searched"},
	{group: "search", ID: "search-expert", Name: "search.expert", Label: "Expert-parallel degree", Max: wire.MaxDevices, search: true},
	{group: "search", ID: "search-schedule", Name: "search.schedule", Label: "Schedule", choose: true, search: true,
		empty: "searched: " + strings.Join(wire.SearchedSchedules(), ", ")},
	{group: "search", ID: "search-recompute", Name: "search.recompute", Label: "Recomputation", choose: true, search: true,
		empty: "searched: " + strings.Join(wire.SearchedRecomputes(true), ", "), Hint: "a profile's: " + strings.Join(wire.SearchedRecomputes(false), ", ")},
	{group: "search", ID: "search-zero", Name: "search.zero", Label: "Sharding (ZeRO)", choose: true, search: true,
		Hint: "zero3 with a shard group is HSDP"},
	{group: "search", ID: "search-shard_group", Name: "search.shard_group", Label: "HSDP shard group (replicas)", Max: wire.MaxDevices, search: true,
		empty: "default", Hint: "default: a node's replicas, tried beside zero3"},
	{group: "search", ID: "search-reshard", Name: "search.reshard", Label: "Reshard", choose: true, search: true,
		empty: "default", Hint: "default: core's, step with 2 stages or more (FSDP2 under pipelining), else layer"},
	{group: "search", ID: "search-microbatch_size", Name: "search.microbatch_size", Label: "Microbatch size", Max: wire.MaxDevices, search: true},
	{group: "search", ID: "search-microbatches", Name: "search.microbatches", Label: "Microbatches per step", Max: 1 << 20, search: true,
		empty: "default", Hint: "default: from the global batch"},
	{group: "search", ID: "search-global_batch", Name: "search.global_batch", Label: "Global batch (samples per step)", Max: 1 << 30, search: true,
		empty: "default", Hint: "default: the request's"},
	{group: "searchbase", ID: "search-framework", Name: "framework", Label: "Framework", choose: true, arch: true},
	{group: "searchbase", ID: "search-precision", Name: "precision", Label: "Precision", choose: true, always: true},
	{group: "searchbase", ID: "search-dispatcher", Name: "expert_dispatcher", Label: "Token dispatcher", choose: true, on: "expert_tensor"},
	{group: "searchbase", ID: "search-train_metrics", Name: "train_metrics", Label: "Training metrics", Max: wire.MaxTrainMetrics, arch: true},
	{group: "searchbase", ID: "search-overlap_grad_reduce", Name: "overlap_grad_reduce", Label: "Overlap gradient reduction", choose: true, arch: true},
	{group: "searchbase", ID: "search-overlap_param_gather", Name: "overlap_param_gather", Label: "Overlap weight all-gather", choose: true, arch: true},
	{group: "searchbase", ID: "search-tp_comm_overlap_config", Name: "tp_comm_overlap_config", Label: "Userbuffers config", choose: true, arch: true,
		Hint: "kept on candidates of tensor degree 1 (dropped) or its own; others are not tried"},
	{group: "searchbase", ID: "search-dp_bucket_bytes", Name: "dp_bucket_bytes", Label: "Gradient bucket (bytes)", Max: wire.MaxDPBucketBytes, Hint: bucketKept},
	{group: "searchbase", ID: "search-dp_bucket_elements", Name: "dp_bucket_elements", Label: "Gradient bucket (elements)", Max: wire.MaxDPBucketBytes, Hint: bucketKept},
	{group: "searchbase", ID: "search-check_for_nan_in_grad", Name: "check_for_nan_in_grad", Label: "NaN check of gradients", Check: true},
	{group: "finer", Name: "capacity_factor", aref: func(ar *wire.Architecture) any { return &ar.CapacityFactor }, Label: "Capacity factor", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "caps each expert's tokens at this many times the mean, dropping the rest; 0 is dropless."},
	{group: "finer", Name: "moe_aux_loss", ref: func(r *wire.Request) any { return &r.Training.MoEAuxLoss }, Label: "Load-balancing loss", choose: true,
		Hint: "the router's loss kernels each mixture layer launches (Megatron-Core's moe_router_load_balancing_type): aux_loss per microbatch, seq_aux_loss per sequence."},
	{group: "finer", Name: "moe_force_load_balancing", ref: func(r *wire.Request) any { return &r.Training.MoEForceLoadBalancing }, Label: "Forced load balancing", Check: true,
		Hint: "random router logits, the experts evenly loaded (Megatron-Core's moe_router_force_load_balancing, as Megatron-Bridge's benchmarks run); needs routing imbalance 1."},
}

// bucketKept is where the search keeps the request's bucket sizes (core/search/evaluate:
// withOverlaps).
const bucketKept = "kept on candidates sharded none, zero1 or zero2 (a bucket at a time); zero3 and hsdp drop it"

// KnobFields lists a group's knobs (knobRows, whose doc names the groups). The lists of
// values and the bounds are core's (core/wire); whether a knob applies is what core's
// normal form says (Resolved): a knob that is not always on is disabled where core's
// normal form has no value for it and the request sets none, unless core refuses the
// request naming the knob's field.
func (a *App) KnobFields(group string) []KnobField {
	// A knob whose field core's refusal names stays enabled: the request has no normal
	// form then, and the knob is how the refusal is answered (hsdp whose default group
	// holds every replica: parallelism.shard_group).
	refused := map[string]bool{}
	if fes, ok := model.AsFieldErrors(a.Err); ok {
		for _, fe := range fes {
			refused[fe.Path[strings.LastIndexByte(fe.Path, '.')+1:]] = true
		}
	}
	var out []KnobField
	for _, f := range knobRows {
		if f.group != group || f.arch && a.ModelSource() != "architecture" || f.doc && !a.Form().FromFile {
			continue
		}
		if f.ID == "" {
			f.ID = "knob-" + f.Name
		}
		if f.Text { // recompute_modules: core's names
			f.Hint = "selective: what it reruns; auto: what it may choose from; with commas, of " + strings.Join(wire.RecomputeModules(), ", ")
		}
		if f.choose {
			f.Choices = KnobChoices(f.Name)
		} else if f.Step == "" {
			f.Step = "1"
		}
		on := f.Name
		if f.on != "" {
			on = f.on
		}
		f.Disabled = !f.always && !f.search && a.Field(f.Name) == "" && a.Resolved(on) == "" && !refused[f.Name]
		out = append(out, f)
	}
	return out
}

// searchRow is the Search panel's row of knob name ("search." and the query's knob), or
// nil.
func searchRow(name string) *KnobField {
	for i := range knobRows {
		if k := &knobRows[i]; k.search && k.Name == name {
			return k
		}
	}
	return nil
}

// knob is the row of knob name, nil for the knobs Knob and SetKnob handle.
func knob(name string) *KnobField {
	for i := range knobRows {
		if k := &knobRows[i]; k.Name == name && (k.ref != nil || k.aref != nil) {
			return k
		}
	}
	return nil
}

// field is knob k's field in the request: nil for an architecture's field where the
// model is a profile.
func (a *App) field(k *KnobField) any {
	if k.ref != nil {
		return k.ref(a.Req)
	}
	if ar := a.Req.Model.Architecture; ar != nil {
		return k.aref(ar)
	}
	return nil
}

// Field is a knob's value as its box or select shows it ("" for core's default).
func (a *App) Field(name string) string {
	if id, ok := strings.CutPrefix(name, "search."); ok {
		return a.SearchKnob(id)
	}
	k := knob(name)
	if k == nil {
		return a.Knob(name)
	}
	switch p := a.field(k).(type) {
	case *string:
		return *p
	case *bool:
		return check(*p)
	case *int:
		return itoa0(*p)
	case *int64:
		return itoa0(int(*p))
	case *[]string:
		return strings.Join(*p, ",")
	case *float64:
		if *p != 0 {
			return strconv.FormatFloat(*p, 'g', -1, 64)
		}
	case **float64:
		if *p != nil {
			return strconv.FormatFloat(**p, 'g', -1, 64)
		}
	}
	return ""
}

// check is a check box's value as Field gives it: "true", or "" (core's default, off).
func check(on bool) string {
	if on {
		return "true"
	}
	return ""
}

// SetCheck handles a check box of KnobFields.
func (a *App) SetCheck(name string, on bool) { a.SetField(name, check(on)) }

// SetField handles a knob: "" is core's default (for a figure, the preset's; 0 is a
// time of none). A number that does not parse or is out of the row's bounds (Max) is
// kept as typed with a notice; core checks the rest (a shard group that does not divide
// the replicas, an imbalance below 1, a module name) and says so by field. A list is
// typed with commas.
func (a *App) SetField(name, v string) {
	v = strings.TrimSpace(v)
	if id, ok := strings.CutPrefix(name, "search."); ok {
		a.SetSearchKnob(id, v) // checked when the search starts (App.knobs)
		return
	}
	k := knob(name)
	switch {
	case k == nil:
		a.SetKnob(name, v) // the Model panel's first knobs
		return
	case k.set != nil:
		k.set(a, v)
		return
	}
	f, err := 0.0, error(nil)
	if v != "" {
		f, err = strconv.ParseFloat(v, 64)
	}
	most := float64(k.Max)
	switch p := a.field(k).(type) {
	case nil:
		return
	case *string:
		*p = v
	case *bool:
		*p = v != ""
	case *[]string:
		*p = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	case *int, *int64:
		if err != nil || f != float64(int(f)) || !(f >= 0 && f <= most) {
			a.typed(name, v, false)
			a.notice(name+": enter a whole number", true)
			return
		}
		a.typed(name, v, true)
		if q, ok := p.(*int); ok {
			*q = int(f)
		} else {
			*p.(*int64) = int64(f)
		}
	default:
		if err != nil || !(f >= 0 && f <= most) { // NaN too, which JSON cannot carry
			a.typed(name, v, false)
			a.notice(name+": enter a number up to "+strconv.FormatFloat(most, 'g', -1, 64), true)
			return
		}
		a.typed(name, v, true)
		switch p := p.(type) {
		case *float64:
			*p = f
		case **float64:
			if *p = nil; v != "" {
				*p = &f
			}
		}
	}
	a.notice("", false)
	a.changed(false)
}

// emptyText is what a Search panel knob left empty does: its own words, else searched.
func (k *KnobField) emptyText() string {
	if k.empty != "" {
		return k.empty
	}
	return "searched"
}
