// Package export turns a plan into what a training framework takes: a PyTorch
// torch.distributed.pipelining split and schedule, a DeepSpeed PipelineModule partition,
// Megatron-LM's pipeline arguments, a Graphcore Keras stage assignment and popxl IPU
// mapping, or pipeplan's own versioned plan JSON. Make writes an export from an Input
// and does no I/O; FromRequest plans the request through core/request to build the
// Input, and its Coster plans the same request again to price the alternatives an
// export falls back to. The exports' types (wire.Export, wire.Format, wire.ExportNote)
// are core/wire's, so the page lists and reads exports without linking this package.
//
// # What an export says
//
// Every export states the split it expresses (Export.Boundaries, in pipeplan's layer
// indices) and the schedule the framework will run. Where the framework cannot express
// the plan exactly (a schedule it lacks, a cut inside a transformer block that Megatron-LM
// cannot make, an interleaved split on a framework with one stage per device), the export
// says so in a Note and expresses the closest plan it can instead: the same split under the
// framework's schedule, the cuts moved to where the framework can make them, or the best
// split under the framework's schedule. A Coster prices that plan as the planner prices its
// own, so Export.Expressed sits beside Export.Planned and the user sees what the
// difference costs.
//
// # Input
//
// FromRequest plans a planning request (core/request) and returns the Input: the result's
// split and the settings it was planned for, with a RequestCoster that prices other
// splits and schedules by planning the same request with them, so every price an export
// states is the whole step as core/request states it. The request's tensor parallelism
// is part of the plan (core/analytic costs each stage's blocks split over t devices):
// exports state the same t, and a framework that cannot split blocks refuses the plan.
//
// # Module names
//
// Frameworks name layers by their modules. For an architecture costed by core/analytic
// (layers embedding, block.N, block.N.attention, block.N.mlp, final_norm, lm_head) the
// names are HuggingFace's module paths for the family (Llama's model.layers.8, GPT-2's
// transformer.h.8, BERT's bert.encoder.layer.8). A profile's layer names are taken as
// module names: pipeplan_profile.py (core/profiler) writes them so.
//
// # Escaping
//
// No input becomes code. Every string a user gave (the model's name, layer and module
// names, notes quoting them) is written through one of two escapers: pyStr for a Python
// string literal, commentText for a comment line (Python's or the shell's), which keeps no
// line break, control, bidirectional override or invalid byte (Boucher and Anderson 2021,
// "Trojan Source"). Python exports declare their encoding on the first line, so that no
// name on the second can declare another (PEP 263). Shell exports hold no user string
// outside comments.
package export

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// ParseFormat reads a format name.
func ParseFormat(s string) (wire.Format, error) {
	f := wire.Format(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(wire.Formats, f) {
		return f, nil
	}
	names := make([]string, len(wire.Formats))
	for i, f := range wire.Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown export format %q: use %s", s, strings.Join(names, ", "))
}

// Input is what an export reads: the plan and the settings it was made for.
type Input struct {
	// Model is the model's name, for the header.
	Model string
	// LayerNames are the model's layers in order: the model's, or, for a graph split
	// (LayerOrder), the plan's.
	LayerNames []string
	// LayerOrder, for a graph split whose stages are convex cuts of the model's graph but
	// not contiguous in its layer order (wire.Plan.LayerOrder), is the order in which
	// they are: LayerNames[k] is the model's layer LayerOrder[k], and Boundaries are
	// positions in it. nil: the model's order.
	LayerOrder []int
	// CutTensors, for a graph split, are the tensors crossing each cut (CutTensors[k]
	// from stage k to stage k+1): exports that build stages by hand list them.
	CutTensors [][]CutTensor
	// Arch is the architecture when the model was costed from one (core/analytic); nil
	// for a profile.
	Arch *arch.Arch
	// Seq is the architecture's sequence length (tokens per sample), 0 if unknown.
	Seq int
	// Boundaries is the planned split: [0, s1, ..., n], one entry per stage plus one (per
	// model chunk for interleaved: stage j runs on device j mod Devices).
	Boundaries []int
	// Schedule is the planned schedule (Kind, Chunks, Microbatches, Recompute). A zero
	// Kind means the plan was made without one: exports then assume 1F1B with
	// Microbatches (at least 1).
	Schedule schedule.Config
	// MicrobatchSize is the samples in one microbatch (0: 1).
	MicrobatchSize int
	// Data is the number of data-parallel replicas of the pipeline (0: 1).
	Data int
	// Tensor is the tensor-parallel degree t the plan was costed with (0: 1): every
	// pipeline device is a group of t devices splitting each transformer block
	// Megatron-style, so the run uses pipeline x Data x Tensor devices. FromRequest takes
	// it from the request's parallelism.tensor; exports state it in the framework's terms
	// (Megatron-LM's --tensor-model-parallel-size, DeepSpeed's topology, a PyTorch device
	// mesh), and a framework that cannot split blocks refuses the plan rather than drop t.
	Tensor int
	// SequenceParallel: the plan also splits along the sequence what tensor parallelism
	// leaves whole (norms, dropout, residuals), as the request's
	// parallelism.sequence_parallel; it needs Tensor >= 2. Megatron-LM states it as
	// --sequence-parallel.
	SequenceParallel bool
	// ZeRO is the ZeRO stage: 0, 1 (optimizer state sharded over the data-parallel
	// devices), 2 (and gradients) or 3 (and weights); Sharding names it as the request
	// does (zero1, zero2, zero3, hsdp; "" from ZeRO alone), with hsdp's ShardGroup.
	ZeRO       int
	Sharding   string
	ShardGroup int
	// Reshard, ReduceDType and FullyShard say how ZeRO-3 and HSDP were priced, as the
	// request's parallelism.reshard (layer or step), reduce_dtype ("" or fp32) and
	// fully_shard (PyTorch FSDP2's copies).
	Reshard     string
	ReduceDType string
	FullyShard  bool
	// Context is the context-parallel degree (0: 1) and ContextMethod its exchange
	// (ring, all-to-all or hierarchical), as the request's parallelism.context and
	// context_method; ContextInner is the hierarchical split's all-to-all group
	// (parallelism.context_inner), which Megatron-LM states as the first of
	// --hierarchical-context-parallel-sizes.
	Context       int
	ContextMethod string
	ContextInner  int
	// Expert and ExpertTensor are a mixture of experts' expert-parallel and expert
	// tensor-parallel degrees (0: 1, and Tensor); ExpertOverlap hides its all-to-alls
	// behind an adjacent microbatch (the request's parallelism.expert,
	// parallelism.expert_tensor and parallelism.expert_overlap). Megatron-LM states them
	// as --expert-model-parallel-size, --expert-tensor-parallel-size and
	// --overlap-moe-expert-parallel-comm; the other exports note what the framework must
	// be told.
	Expert, ExpertTensor int
	ExpertOverlap        bool
	// OverlapGradReduce, OverlapParamGather and OverlapTensorComm are the communication
	// overlaps the plan was priced with (request.PricedOverlaps: the framework mode's
	// defaults and the request's parallelism.overlap_*); Megatron-LM states them as
	// --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap.
	OverlapGradReduce, OverlapParamGather, OverlapTensorComm bool
	// TensorCommMethod is how OverlapTensorComm was priced: request.OverlapUserbuffers
	// (Transformer Engine's, which --tp-comm-overlap runs) or request.OverlapAsyncTP
	// (PyTorch's async TP under torch.compile, which hides less).
	TensorCommMethod string
	// TensorCommConfig is the tuned userbuffers config the overlap was priced with
	// (request.Overlaps.TensorCommConfig; "": initialize_ub's defaults): Megatron-LM
	// takes its settings as the yaml of --tp-comm-overlap-cfg.
	TensorCommConfig string
	// ExpertDispatcher is the request's parallelism.expert_dispatcher: Megatron-LM runs
	// deepep as --moe-token-dispatcher-type flex --moe-enable-deepep (and has no fp8
	// dispatch: deepep-fp8 is written as deepep, with a comment).
	ExpertDispatcher string
	// Recompute is the activation recomputation: none, selective, full or auto ("" is
	// none); under auto, what each stage recomputes is the plan's (Plan's
	// Stages[i].Recompute).
	Recompute string
	// RecomputeModules is what selective recomputation reruns, in Megatron-LM's
	// --recompute-modules names (analytic.Modules; none: the attention core).
	RecomputeModules []string
	// DType, Precision, FP8Recipe and FP8ParamGather are the precision the plan was
	// priced with, as the normalized request states them (model.architecture.dtype:
	// bf16, fp16, fp32 or fp8; training.precision: mixed, mixed-fp32-grads, amp, pure
	// or deepspeed-bf16, "" for inference; training.fp8_recipe: delayed, current,
	// blockwise or mxfp8; training.fp8_param_gather). DType "" states none (a profile):
	// exports then set no precision. Each export states them in its framework's terms
	// (precision.go).
	DType, Precision, FP8Recipe string
	FP8ParamGather              bool
	// FP8AmaxTPOnly is training.fp8_amax_tp_only: delayed scaling's amax history
	// reduced over the tensor-parallel group only (Megatron-LM's --tp-only-amax-red).
	FP8AmaxTPOnly bool
	// FP8FSDPAllGather is training.fp8_fsdp_all_gather: FSDP2 all-gathers the fp8
	// layers' weight shards cast to fp8 (torchao's Float8LinearConfig
	// enable_fsdp_float8_all_gather, with precompute_float8_dynamic_scale_for_fsdp).
	FP8FSDPAllGather bool
	// FP8Attention is model.architecture.fp8_attention: the attention core priced in
	// fp8 (Transformer Engine's fp8_dpa, Megatron-LM's --fp8-dot-product-attention).
	FP8Attention bool
	// CrossEntropy is the loss kernel the plan was priced with
	// (cluster.CrossEntropyKinds: model.architecture.cross_entropy, or its framework
	// mode's), "" for inference or a profile. Megatron-LM runs fused-inplace as
	// --cross-entropy-loss-fusion and vocab-parallel by default.
	CrossEntropy string
	// TrainMetrics is the request's training.train_metrics: the training metrics the
	// plan's training loop computes on every microbatch's logits and synchronises every
	// step (Composer's Trainer), which no export's loop runs.
	TrainMetrics int
	// MoEAuxLoss is the request's training.moe_aux_loss: the load-balancing loss the
	// plan priced as Megatron-Core's fused router computes it ("" for none).
	// Megatron-LM runs it as --moe-router-load-balancing-type with a coefficient above 0
	// and --moe-router-fusion; the other exports' model code does not run those kernels.
	MoEAuxLoss string
	// MoEForceLoadBalancing is the request's training.moe_force_load_balancing: the plan
	// priced random router logits and balanced experts. Megatron-LM runs it as
	// --moe-router-force-load-balancing; the other exports' model code routes by the
	// learned router.
	MoEForceLoadBalancing bool
	// DPBucketBytes is the request's parallelism.dp_bucket_bytes: the plan priced the
	// data-parallel collectives one a bucket of that many bytes on every stage (a
	// recipe's, e.g. Apex's DistributedFusedAdam's bucket_cap_mb), which no export's
	// framework is configured to cut so (Megatron-Core buckets the first stage's first
	// chunk alone, DeepSpeed's pipeline engine 5e8 elements, the PyTorch export's DDP
	// 25 MiB); 0 for the framework's own buckets.
	DPBucketBytes int64
	// DPBucketElements is the request's parallelism.dp_bucket_elements: Megatron-Core's
	// bucket_size, the plan's first-stage gradient buckets closed at parameters' ends
	// once they hold that many elements. Megatron-LM runs it as --ddp-bucket-size
	// (megatron/training/training.py: kwargs['bucket_size'] = args.ddp_bucket_size);
	// the other exports' frameworks cut their own buckets. 0 for Megatron-Core's default.
	DPBucketElements int64
	// CheckForNaNInGrad is the request's training.check_for_nan_in_grad: the plan priced
	// Megatron-Core's check of each gradient bucket's norm before its reduction.
	// Megatron-LM runs it by default (--no-check-for-nan-in-loss-and-grad, store_false,
	// turns it off; training.py: kwargs['check_for_nan_in_grad'] =
	// args.check_for_nan_in_loss_and_grad), so its export passes the no- flag for a
	// plan that priced none; the other exports' frameworks run no such check.
	CheckForNaNInGrad bool
	// BlockingTransfers: the plan priced the pipeline's sends and receives as blocking
	// both stages they join (model.architecture.framework deepspeed:
	// cluster.Framework.BlockingPipelineTransfers), as DeepSpeed's PipelineEngine alone
	// runs them.
	BlockingTransfers bool
	// Plan is the planner's plan, embedded in the JSON export when set.
	Plan *wire.Plan
	// Coster prices other splits and schedules, for the closest plan a framework can
	// express; nil: exports still say what they changed, without its cost.
	Coster Coster
}

// Coster prices plans as the planner does.
type Coster interface {
	// Cost prices a split under a schedule.
	Cost(bounds []int, sched schedule.Config) (wire.Cost, error)
	// Best is the optimal split under a schedule, and its price.
	Best(sched schedule.Config) ([]int, wire.Cost, error)
}

// Make exports the plan in one format.
func Make(in *Input, f wire.Format) (*wire.Export, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	var gen func(*job) error
	switch f {
	case wire.PyTorch:
		gen = pytorch
	case wire.DeepSpeed:
		gen = deepspeed
	case wire.Megatron:
		gen = megatron
	case wire.Graphcore:
		gen = graphcore
	case wire.JSON:
		gen = planJSON
	default:
		_, err := ParseFormat(string(f))
		return nil, err
	}
	j := &job{in: in, ex: &wire.Export{Format: f, Version: wire.ExportVersion}}
	j.sched = in.planned()
	if in.Coster != nil {
		c, err := in.Coster.Cost(in.Boundaries, j.sched)
		if err == nil {
			j.ex.Planned = &c
		} else {
			j.note(wire.NoteCost, "the plan could not be priced: %v", err)
		}
	}
	j.trainingLoop(f)
	if err := gen(j); err != nil {
		return nil, err
	}
	j.settle()
	return j.ex, nil
}

// check validates the input; errors name the field.
func (in *Input) check() error {
	var es model.Errors
	n := len(in.LayerNames)
	b := in.Boundaries
	if n == 0 {
		es.Add("layer_names", "must name at least one layer")
	}
	if len(b) < 2 || b[0] != 0 || b[len(b)-1] != n {
		es.Add("boundaries", "must run from 0 to the %d layers, got %v", n, b)
	} else {
		for i := 1; i < len(b); i++ {
			if b[i] <= b[i-1] {
				es.Add(fmt.Sprintf("boundaries[%d]", i), "must be greater than %d: every stage holds a layer", b[i-1])
			}
		}
	}
	in.checkGraph(&es)
	s := in.planned()
	if err := s.Validate(len(b) - 1); err != nil && len(b) >= 2 {
		if fes, ok := model.AsFieldErrors(err); ok {
			for _, fe := range fes {
				es.Add("schedule."+fe.Path, "%s", fe.Reason)
			}
		} else {
			es.Add("schedule", "%v", err)
		}
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"microbatch_size", in.MicrobatchSize}, {"data", in.Data}, {"tensor", in.Tensor}, {"seq", in.Seq}, {"zero", in.ZeRO}, {"context", in.Context},
		{"expert", in.Expert}, {"expert_tensor", in.ExpertTensor}} {
		if v.v < 0 {
			es.Add(v.name, "must be >= 0, got %d", v.v)
		}
	}
	if in.ZeRO > 3 {
		es.Add("zero", "must be 0, 1, 2 or 3, got %d", in.ZeRO)
	}
	switch c, g := orOne(in.Context), in.ContextInner; {
	case in.ContextMethod != "hierarchical" && g != 0:
		es.Add("context_inner", "goes with context_method hierarchical")
	case in.ContextMethod == "hierarchical" && (g < 2 || g >= c || c%g != 0):
		es.Add("context_inner", "must divide context (%d) and lie between 2 and %d, got %d", c, c/2, g)
	}
	if in.SequenceParallel && in.Tensor < 2 {
		es.Add("sequence_parallel", "splits along the sequence what tensor parallelism leaves whole: it needs tensor >= 2, got %d", orOne(in.Tensor))
	}
	if (in.Expert > 1 || in.ExpertTensor > 0) && (in.Arch == nil || !in.Arch.MoE()) {
		es.Add("expert", "splits the experts of a mixture-of-experts architecture; the plan's model has none")
	}
	// The precision is written into flags and config entries: only the request's names.
	switch in.DType {
	case "", "bf16", "fp16", "fp32", "fp8":
	default:
		es.Add("dtype", "must be bf16, fp16, fp32 or fp8, got %q", in.DType)
	}
	switch in.Precision {
	case "", "mixed", "mixed-fp32-grads", "amp", "pure", "deepspeed-bf16":
	default:
		es.Add("precision", "must be mixed, mixed-fp32-grads, amp, pure or deepspeed-bf16, got %q", in.Precision)
	}
	if _, ok := fp8Names[in.FP8Recipe]; in.DType == "fp8" && !ok {
		es.Add("fp8_recipe", "must be delayed, current, blockwise or mxfp8 with dtype fp8, got %q", in.FP8Recipe)
	} else if in.DType != "fp8" && in.FP8Recipe != "" {
		es.Add("fp8_recipe", "needs dtype fp8, got %q", in.DType)
	}
	if in.DType != "fp8" && in.FP8ParamGather {
		es.Add("fp8_param_gather", "needs dtype fp8, got %q", in.DType)
	}
	if in.DType != "fp8" && in.FP8FSDPAllGather {
		es.Add("fp8_fsdp_all_gather", "needs dtype fp8, got %q", in.DType)
	} else if in.FP8FSDPAllGather && in.FP8ParamGather {
		es.Add("fp8_fsdp_all_gather", "casts 16-bit weights that fp8_param_gather's fp8 primary weights do not have: set one of them")
	}
	switch in.Recompute {
	case "", "none", "selective", "selective-op", "full", "auto":
	default:
		es.Add("recompute", "must be none, selective, selective-op, full or auto, got %q", in.Recompute)
	}
	if len(in.RecomputeModules) > 0 {
		if in.Recompute != "selective" && in.Recompute != "auto" {
			es.Add("recompute_modules", "names what selective recomputation reruns: it needs recompute selective or auto, got %q", in.Recompute)
		} else if _, err := analytic.ParseModules(in.RecomputeModules); err != nil {
			var fe *model.FieldError
			if errors.As(err, &fe) {
				es.Add("recompute_modules"+fe.Path, "%s", fe.Reason)
			} else {
				es.Add("recompute_modules", "%v", err)
			}
		}
	}
	return es.Err()
}

// expertParallel is the plan's expert and expert tensor parallelism, (1, Tensor) when
// it states none.
func (in *Input) expertParallel() (ep, etp int) {
	ep, etp = orOne(in.Expert), in.ExpertTensor
	if etp == 0 {
		etp = orOne(in.Tensor)
	}
	return ep, etp
}

// planned is the planned schedule, 1F1B when the plan named none.
func (in *Input) planned() schedule.Config {
	s := in.Schedule
	if s.Kind == "" {
		s.Kind = schedule.OneFOneB
		s.Microbatches = max(s.Microbatches, 1)
	}
	if in.Recompute == "full" {
		s.Recompute = true
	}
	return s
}

func orOne(v int) int { return max(v, 1) }

// devices is the number of pipeline devices.
func (in *Input) devices() int {
	s := in.planned()
	return s.Devices(len(in.Boundaries) - 1)
}

// job is one export being made.
type job struct {
	in    *Input
	ex    *wire.Export
	sched schedule.Config // the planned schedule
	runs  *schedule.Config
	moved []int // a split other than the plan's, when the framework needs one
	// unsharded: the framework runs another sharding or no context parallelism (the
	// NoteParallelism notes say what); the export is then not exact, and not priced.
	unsharded bool
	// imprecise: the framework runs another precision (the NotePrecision note says
	// what); the export is then not exact, and not priced.
	imprecise bool
	// recomputes: the framework recomputes other layers than the plan's per-layer
	// recomputation (the NoteRecompute note says what); the export is then not exact,
	// and not priced.
	recomputes bool
	// looped: the framework's loop runs other work than the plan's training loop (the
	// NoteTrainingLoop notes say what); the export is then not exact, and not priced.
	looped bool
	// settled: what is expressed is decided and priced (no more runSchedule, moveSplit).
	settled bool
}

func (j *job) note(code, format string, args ...any) {
	j.ex.Notes = append(j.ex.Notes, wire.ExportNote{Code: code, Message: fmt.Sprintf(format, args...)})
}

// runSchedule records the schedule the framework will run, when it is not the planned one.
func (j *job) runSchedule(s schedule.Config, why string) {
	s.Microbatches, s.Recompute = j.sched.Microbatches, j.sched.Recompute
	j.runs = &s
	j.note(wire.NoteSchedule, "%s; the export runs %s instead of the planned %s", why, s, j.sched)
}

// approximate records that the framework runs a schedule close to the planned one, which
// pipeplan prices as the planned one.
func (j *job) approximate(why string) {
	s := j.sched
	j.runs = &s
	j.note(wire.NoteSchedule, "%s; pipeplan prices it as %s", why, s)
}

// ranSchedule is the schedule the framework runs.
func (j *job) ranSchedule() schedule.Config {
	if j.runs != nil {
		return *j.runs
	}
	return j.sched
}

// split is the split the export expresses.
func (j *job) split() []int {
	if j.moved != nil {
		return j.moved
	}
	return j.in.Boundaries
}

// moveSplit records a split other than the plan's.
func (j *job) moveSplit(b []int, why string) {
	j.moved = b
	j.note(wire.NoteSplit, "%s: the export splits at %s instead of the planned %s", why, j.describe(b), j.describe(j.in.Boundaries))
}

// best replaces the plan with the optimal one under the schedule the framework runs, for
// frameworks that cannot express the planned split's structure (interleaving). Without
// a Coster it returns an error: there is no other split to offer.
func (j *job) best(s schedule.Config, why string) error {
	s.Microbatches, s.Recompute = j.sched.Microbatches, j.sched.Recompute
	if j.in.Coster == nil {
		return fmt.Errorf("%s, and without a planner to find the best split for %s there is no split to offer", why, s)
	}
	b, _, err := j.in.Coster.Best(s)
	if err != nil {
		return fmt.Errorf("%s, and no split fits under %s: %w", why, s, err)
	}
	j.runs = &s
	j.moved = b
	j.note(wire.NoteSchedule, "%s; the export gives the best split under %s instead of the planned %s", why, s, j.sched)
	return nil
}

// describe writes a split by each stage's first layer.
func (j *job) describe(b []int) string {
	var parts []string
	for i := 0; i+1 < len(b); i++ {
		parts = append(parts, j.in.LayerNames[b[i]])
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

// settle fills the split, the schedule, exactness and the price of what is expressed,
// once: generators call it when they have decided what they express, before writing it.
func (j *job) settle() {
	if j.settled {
		return
	}
	j.settled = true
	j.ex.Boundaries = slices.Clone(j.split())
	run := j.ranSchedule()
	j.ex.Schedule = run.String()
	j.ex.Exact = j.runs == nil && j.moved == nil && !j.unsharded && !j.imprecise && !j.recomputes && !j.looped
	if j.ex.Exact || j.in.Coster == nil || j.unsharded || j.imprecise || j.recomputes || j.looped {
		return
	}
	c, err := j.in.Coster.Cost(j.ex.Boundaries, run)
	if err != nil {
		j.note(wire.NoteCost, "what the export expresses could not be priced: %v", err)
		return
	}
	j.ex.Expressed = &c
}

// trainingLoop records what the plan priced in its training loop that format f's
// framework does not run so (the plan JSON states the plan as it is): training metrics
// (no export writes Composer's Trainer), and the blocking pipeline transfers of
// framework deepspeed where the export's framework runs them beside compute
// (Megatron-LM's batched isend/irecv, torch.distributed.pipelining's), or, the other
// way round, transfers priced beside compute where the DeepSpeed export's PipelineEngine
// blocks on them (in training and inference alike). The export is then not exact.
func (j *job) trainingLoop(f wire.Format) {
	in := j.in
	if f == wire.JSON {
		return
	}
	if in.TrainMetrics > 0 {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices %d training metrics computed on every microbatch's logits and gathered from every device each step (training.train_metrics: Composer's Trainer); this export's training loop computes none: the run takes less time than priced; plan with train_metrics 0 to price what it runs", in.TrainMetrics)
	}
	if in.DPBucketBytes > 0 && in.Data > 1 {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices the data-parallel gradient reduction (and a sharded optimizer's weight gather) as one collective a bucket of %d bytes on every stage (parallelism.dp_bucket_bytes); this export's framework cuts its own buckets, so each collective's latency is paid another number of times than priced: plan without dp_bucket_bytes to price the framework's buckets", in.DPBucketBytes)
	}
	// Both of Megatron-Core's fields are priced where the gradients are reduced over
	// data x context ranks (request's dataParallel): nothing is priced on one.
	reduced := orOne(in.Data)*orOne(in.Context) > 1
	if in.DPBucketElements > 0 && reduced && f != wire.Megatron {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices Megatron-Core's gradient buckets of %d elements (parallelism.dp_bucket_elements: its bucket_size, the first stage's buckets closed at parameters' ends); this export's framework cuts its own buckets, so each collective's latency is paid another number of times than priced: plan without dp_bucket_elements, or export to Megatron-LM (--ddp-bucket-size), to price what runs", in.DPBucketElements)
	}
	if in.CheckForNaNInGrad && reduced && f != wire.Megatron {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices Megatron-Core's check for NaN and Inf in each gradient bucket's norm before its reduction (training.check_for_nan_in_grad: the norms and two waits for the device a bucket); this export's framework runs no such check: the run takes less time than priced; plan without it, or export to Megatron-LM (its default), to price what runs")
	}
	if in.MoEAuxLoss != "" && f != wire.Megatron {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices Megatron-Core's %s load-balancing loss in every mixture layer (training.moe_aux_loss: its fused router's kernels); this export's model code does not run them: plan with moe_aux_loss none, or export to Megatron-LM, to price what runs", in.MoEAuxLoss)
	}
	if in.MoEForceLoadBalancing && f != wire.Megatron {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices Megatron-Core's forced load balancing (training.moe_force_load_balancing: random router logits, balanced experts); this export's model code routes by its learned router, whose load may be uneven: plan without it, or export to Megatron-LM, to price what runs")
	}
	if in.BlockingTransfers && f != wire.DeepSpeed && len(in.Boundaries) > 2 {
		j.looped = true
		j.note(wire.NoteTrainingLoop, "the plan prices DeepSpeed's PipelineEngine's blocking sends and receives between stages (model.architecture.framework deepspeed); this export's pipeline runs them beside compute: the run waits less than priced; plan with the framework this export runs to price it")
	}
	if !in.BlockingTransfers && f == wire.DeepSpeed && len(in.Boundaries) > 2 {
		j.looped = true
		how := "plan with model.architecture.framework deepspeed to price what it runs"
		if in.Arch == nil {
			how = "pipeplan prices them blocking for an architecture (model.architecture.framework deepspeed), not for a profile's measured stages"
		}
		j.note(wire.NoteTrainingLoop, "DeepSpeed's PipelineEngine blocks both stages on every send and receive between them (TrainSchedule and InferenceSchedule alike), where the plan prices those transfers beside compute: the run waits more than priced; %s", how)
	}
}

// parallelism records that the framework cannot shard or split as planned: a
// NoteParallelism note, and the export is not exact. Call it before the header.
func (j *job) parallelism(format string, args ...any) {
	j.unsharded = true
	j.note(wire.NoteParallelism, format, args...)
}

// imprecision records that the framework cannot run the planned precision: a
// NotePrecision note, and the export is not exact. Call it before the header.
func (j *job) imprecision(format string, args ...any) {
	j.imprecise = true
	j.note(wire.NotePrecision, format, args...)
}

// errNeedsArch is returned by frameworks that only take transformers.
var errNeedsArch = errors.New("needs a transformer architecture (plan --hf-config, or a request's model.architecture): a profile's layers are not Megatron-LM's")

// stagesOf lists the stages of a split: first and last layer (inclusive).
func stagesOf(b []int) [][2]int {
	var s [][2]int
	for i := 0; i+1 < len(b); i++ {
		s = append(s, [2]int{b[i], b[i+1] - 1})
	}
	return s
}

// costLine writes a price for a header comment.
func costLine(c *wire.Cost) string {
	if c == nil {
		return "not priced"
	}
	fits := ""
	if !c.Fits {
		fits = ", DOES NOT FIT memory"
	}
	return fmt.Sprintf("%s per step, %.4g samples/s (%s)%s", seconds(c.StepSeconds), c.SamplesPerSecond, c.Schedule, fits)
}

// seconds writes a time readably and stably.
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f us", s*1e6)
}

// tiedAcross reports whether an architecture's tied embedding matrix is used on two
// stages of the split (the embedding's and the head's).
func (j *job) tiedAcross() bool {
	in := j.in
	if in.Arch == nil || !in.Arch.TiedEmbeddings {
		return false
	}
	b := j.split()
	return len(b) > 2 // the embedding is on the first stage, the head on the last
}
