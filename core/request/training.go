package request

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// weightsOnly reports whether the model's param_bytes are weights only, to which training
// adds gradients and optimizer state: PipeDream profiles.
func (p *prepared) weightsOnly() bool { return p.format == load.PipeDream }

func (p *prepared) training(es *model.Errors) {
	t := &p.req.Training
	if t.FP8Recipe != "" && p.arch == nil {
		es.Add("training.fp8_recipe", "applies to architectures (a measured profile ran in the precision it was measured in)")
	}
	if t.FP8AmaxTPOnly && (p.arch == nil || (t.FP8Recipe != "" && t.FP8Recipe != "delayed")) {
		es.Add("training.fp8_amax_tp_only", "applies to architectures in fp8 with fp8_recipe delayed (the other recipes keep no amax history)")
	}
	if t.FP8ParamGather && p.arch == nil {
		es.Add("training.fp8_param_gather", "applies to architectures (a measured profile states its weights' memory)")
	}
	if t.FP8FSDPAllGather {
		// torchtitan's Float8Handler turns torchao's FSDP float8 all-gather on only with
		// parallel_dims.dp_shard_enabled (torchtitan/float8.py at 9dec370;
		// components/quantization/float8.py at e7c0cae): the replicas FSDP shards over,
		// not the context devices it also shards over.
		par := p.req.Parallelism
		dpShard := par.Data
		if par.Sharding == string(analytic.HSDP) {
			dpShard = par.ShardGroup
		}
		switch {
		case p.arch == nil:
			es.Add("training.fp8_fsdp_all_gather", "applies to architectures (a measured profile states its weights' memory and collectives)")
		case p.arch.NumExperts > 0:
			es.Add("training.fp8_fsdp_all_gather", "applies to dense architectures (torchao gathers Float8Linear weights in fp8; routed experts' grouped weights are not)")
		case analytic.Sharding(par.Sharding).Level() >= 3 && dpShard < 2:
			es.Add("training.fp8_fsdp_all_gather", "needs more than one replica in the shard group (torchtitan enables it only with dp_shard > 1), got %d", dpShard)
		}
	}
	switch {
	case t.TrainMetrics < 0 || t.TrainMetrics > wire.MaxTrainMetrics:
		es.Add("training.train_metrics", "must be between 0 and %d, got %d", wire.MaxTrainMetrics, t.TrainMetrics)
	case t.TrainMetrics > 0 && p.arch == nil:
		es.Add("training.train_metrics", "applies to architectures (a metric reads the model's logits; a profile has none)")
	case t.TrainMetrics > 0 && !p.train():
		es.Add("training.train_metrics", "applies to training: inference runs no training loop")
	}
	if t.MoEAuxLoss == string(analytic.AuxLossNone) {
		t.MoEAuxLoss = "" // the default, one normal form
	}
	if v := t.MoEAuxLoss; v != "" && v != string(analytic.AuxLossNone) {
		const field = "training.moe_aux_loss"
		switch {
		case v != string(analytic.AuxLossMicrobatch) && v != string(analytic.AuxLossSequence):
			es.Add(field, "must be %q, %q or %q (or left out: none), got %q", analytic.AuxLossNone, analytic.AuxLossMicrobatch, analytic.AuxLossSequence, v)
		case p.arch == nil || p.arch.NumExperts == 0:
			es.Add(field, "applies to architectures with routed experts (the loss balances a mixture's router)")
		case !p.train():
			es.Add(field, "applies to training: inference computes no load-balancing loss")
		}
	}
	switch b := p.req.Parallelism.DPBucketBytes; {
	case b < 0 || b > wire.MaxDPBucketBytes:
		es.Add("parallelism.dp_bucket_bytes", "must be between 0 and %d, got %d", int64(wire.MaxDPBucketBytes), b)
	case b > 0 && !p.train():
		es.Add("parallelism.dp_bucket_bytes", "applies to training: inference has no gradients to reduce")
	case b > 0 && analytic.Sharding(p.req.Parallelism.Sharding).Level() >= 3:
		// zero3's and hsdp's collectives are priced a layer at a time, not a bucket.
		es.Add("parallelism.dp_bucket_bytes", "is priced with sharding none, zero1 or zero2 (their gradient reduction and weight gather run a bucket at a time), got sharding %s", p.req.Parallelism.Sharding)
	}
	if t.MoEForceLoadBalancing && (p.arch == nil || p.arch.NumExperts == 0) {
		es.Add("training.moe_force_load_balancing", "applies to architectures with routed experts (it replaces a mixture's router logits)")
	}
	if t.CheckForNaNInGrad && (p.arch == nil || !p.train()) {
		es.Add("training.check_for_nan_in_grad", "applies to training of architectures run by Megatron-Core (it checks the gradients before their reduction)")
	}
	switch b := p.req.Parallelism.DPBucketElements; {
	case b < 0 || b > wire.MaxDPBucketBytes:
		es.Add("parallelism.dp_bucket_elements", "must be between 0 and %d, got %d", int64(wire.MaxDPBucketBytes), b)
	case b == 0:
	case !p.train():
		es.Add("parallelism.dp_bucket_elements", "applies to training: inference has no gradients to reduce")
	case p.req.Parallelism.DPBucketBytes > 0:
		es.Add("parallelism.dp_bucket_elements", "sets Megatron-Core's bucket_size: leave out parallelism.dp_bucket_bytes, another framework's bucket")
	case p.arch == nil:
		es.Add("parallelism.dp_bucket_elements", "applies to architectures run by Megatron-Core (a measured profile has no framework's buckets)")
	}
	for _, o := range []struct{ field, v string }{
		{"parallelism.overlap_grad_reduce", p.req.Parallelism.OverlapGradReduce},
		{"parallelism.overlap_param_gather", p.req.Parallelism.OverlapParamGather},
		{"parallelism.overlap_tensor_comm", p.req.Parallelism.OverlapTensorComm},
	} {
		tensor := o.field == "parallelism.overlap_tensor_comm"
		switch {
		case tensor && o.v != "" && !slices.Contains(wire.TensorOverlapModes(), o.v):
			es.Add(o.field, "must be %q, %q, %q or %q (or left out: the framework's default), got %q", OverlapOn, OverlapOff, OverlapUserbuffers, OverlapAsyncTP, o.v)
		case !tensor && o.v != "" && o.v != OverlapOn && o.v != OverlapOff:
			es.Add(o.field, "must be %q or %q (or left out: the framework's default), got %q", OverlapOn, OverlapOff, o.v)
		case o.v != "" && p.arch == nil:
			es.Add(o.field, "applies to architectures (their framework overlaps the communication or not; a profile's plan hides none)")
		case o.v != "" && !p.train() && tensor:
			es.Add(o.field, "applies to training: inference is priced without the tensor-parallel overlap")
		case o.v != "" && !p.train():
			es.Add(o.field, "applies to training: inference has no gradients to reduce or updated weights to gather")
		}
	}
	if v := p.req.Parallelism.TPCommOverlapConfig; v != "" {
		const field = "parallelism.tp_comm_overlap_config"
		switch _, ok := analytic.LookupUserbuffersConfig(v); {
		case !ok:
			es.Add(field, "must be %s or one of the published userbuffers configs (%s), got %q", analytic.TEDefaultUserbuffers, strings.Join(analytic.UserbuffersConfigNames()[1:], ", "), v)
		case p.arch == nil:
			es.Add(field, "applies to architectures (Transformer Engine's userbuffers overlap their products; a profile's plan hides no communication)")
		case !p.train():
			es.Add(field, "applies to training: inference is priced without the tensor-parallel overlap")
		}
	}
	if !p.train() {
		if t.Optimizer != "" {
			es.Add("training.optimizer", "applies to training: inference has no optimizer")
		}
		if t.Precision != "" {
			es.Add("training.precision", "applies to training (master weights and optimizer state): inference has neither")
		}
		if t.Recompute != "" && t.Recompute != "none" {
			es.Add("training.recompute", "applies to training: inference keeps no activations for a backward pass to recompute")
		}
		t.Recompute = "none"
		return // ZeRO with inference is refused by parallelism
	}
	switch {
	case p.arch != nil || p.weightsOnly():
		if t.Optimizer == "" {
			t.Optimizer = string(analytic.AdamW)
		}
		switch analytic.Optimizer(t.Optimizer) {
		case analytic.AdamW, analytic.Adam, analytic.SGD:
		default:
			es.Add("training.optimizer", "must be adamw, adam or sgd, got %q (for inference set training.mode)", t.Optimizer)
		}
	case t.Optimizer != "":
		es.Add("training.optimizer", "applies to architectures and to profiles that give weights only (PipeDream): this profile states its optimizer state (layers[].optimizer_bytes)")
	}
	switch {
	case p.arch != nil:
		switch analytic.Precision(t.Precision) {
		case "", analytic.Mixed, analytic.MixedFP32Grads, analytic.AMP, analytic.Pure, analytic.DeepSpeedBF16:
		default:
			es.Add("training.precision", "must be mixed, mixed-fp32-grads, amp, pure or deepspeed-bf16, got %q", t.Precision)
		}
	case p.weightsOnly():
		if t.Precision == "" {
			t.Precision = string(analytic.Pure)
		}
		if t.Precision != string(analytic.Pure) {
			es.Add("training.precision", "must be pure for a PipeDream profile: its weights were measured in fp32, with no 16-bit copy to keep master weights of")
		}
	case t.Precision != "":
		es.Add("training.precision", "applies to architectures and to profiles that give weights only (PipeDream): this profile states its optimizer state (layers[].optimizer_bytes)")
	}
	if t.Recompute == "" {
		t.Recompute = string(analytic.NoRecompute)
	}
	switch analytic.Recompute(t.Recompute) {
	case analytic.NoRecompute, analytic.Full, RecomputeAuto:
	case analytic.Selective, analytic.SelectiveOp:
		if p.arch == nil {
			es.Add("training.recompute", "%s recomputation needs an architecture (a measured profile does not say which activations are cheap to rebuild): use none or full", t.Recompute)
		}
	default:
		es.Add("training.recompute", "must be none, selective, selective-op, full or auto, got %q", t.Recompute)
	}
	p.recomputeStages = p.arch == nil && t.Recompute == string(analytic.Full)
	p.recomputeModules(es)
}

// recomputeModules checks training.recompute_modules and puts it in Megatron-LM's order:
// architectures only, with recompute selective (what it reruns) or auto (what auto may
// choose from).
func (p *prepared) recomputeModules(es *model.Errors) {
	t := &p.req.Training
	if len(t.RecomputeModules) == 0 {
		t.RecomputeModules = nil
		return
	}
	switch {
	case p.arch == nil:
		es.Add("training.recompute_modules", "applies to architectures (a measured profile's layers have no parts pipeplan knows): use recompute full or auto")
		return
	case t.Recompute != string(analytic.Selective) && t.Recompute != RecomputeAuto:
		es.Add("training.recompute_modules", "names what selective recomputation reruns (or what auto chooses from): it needs recompute selective or auto, got %q", t.Recompute)
		return
	}
	m, err := analytic.ParseModules(t.RecomputeModules)
	if err != nil {
		addPrefixed(es, "training.recompute_modules", err)
		return
	}
	t.RecomputeModules = m.Names()
	p.modules = m
}

// defaultMicrobatches is DefaultMicrobatchesPerStage per pipeline device, or fewer on
// pipelines so long that the simulator would refuse that many: then the most it takes
// (for interleaved schedules, which run microbatches in groups of the devices, the most
// multiple of the devices, at least the devices).
func defaultMicrobatches(devices, chunks int) int {
	m := DefaultMicrobatchesPerStage * devices
	if most := schedule.MaxMicrobatches(devices * chunks); m > most {
		m = max(1, most)
		if chunks > 1 {
			m = max(1, most/devices) * devices
		}
	}
	return m
}

func (p *prepared) schedule(es *model.Errors) {
	r := p.req
	s := &r.Schedule
	if s.Name == "" {
		s.Name = DefaultSchedule
		if !p.train() {
			s.Name = string(schedule.Inference)
		}
	}
	c, err := schedule.Parse(s.Name)
	if err != nil {
		es.Add("schedule.name", "%v", err)
		return
	}
	s.Name = c.String()
	switch {
	case p.train() && c.Kind == schedule.Inference:
		es.Add("schedule.name", "inference runs forward passes only, but training.mode is training")
	case !p.train() && c.Kind != schedule.Inference:
		es.Add("schedule.name", "%s is a training schedule, but training.mode is inference: use the inference schedule", c)
	}
	devices := r.Parallelism.Pipeline
	if s.Microbatches == 0 {
		s.Microbatches = defaultMicrobatches(devices, max(1, c.Chunks))
	}
	c.Microbatches = s.Microbatches
	c.Recompute = p.recomputeStages
	if err := c.Validate(devices * max(1, c.Chunks)); err != nil {
		// The schedule's "stages" are the request's pipeline devices (times the chunks).
		fes, _ := model.AsFieldErrors(err)
		for _, fe := range fes {
			switch fe.Path {
			case "stages":
				es.Add("parallelism.pipeline", "%s", fe.Reason)
			default:
				addPrefixed(es, "schedule", fe)
			}
		}
		if len(fes) == 0 {
			es.Add("schedule", "%v", err)
		}
	}
	if n := TimelineEvents(r); r.Events && n > MaxEvents {
		es.Add("events", "the timeline of %d microbatches on %d pipeline stages holds at least %d events, more than the %d a result may keep: leave events out, or ask for fewer microbatches", s.Microbatches, devices*max(1, c.Chunks), n, MaxEvents)
	}
	switch {
	case c.Kind == schedule.ZBH1 && s.WeightGradFraction == 0:
		s.WeightGradFraction = DefaultWeightGradFraction
	case c.Kind == schedule.ZBH1:
		if f := s.WeightGradFraction; !(f >= 0 && f <= 1) {
			es.Add("schedule.weight_grad_fraction", "must be in [0, 1], got %v", f)
		}
	case s.WeightGradFraction != 0:
		es.Add("schedule.weight_grad_fraction", "applies to zb-h1, which runs weight gradients apart; %s does not", c)
	}
	// Samples per microbatch: an architecture's batch, or what the profile was measured with.
	switch {
	case p.arch != nil:
		if s.MicrobatchSize == 0 {
			s.MicrobatchSize = 1
		}
	case p.model.MicrobatchSize > 0:
		if s.MicrobatchSize != 0 && s.MicrobatchSize != p.model.MicrobatchSize {
			es.Add("schedule.microbatch_size", "must be %d, the samples per microbatch the profile was measured with (its microbatch_size), got %d", p.model.MicrobatchSize, s.MicrobatchSize)
		}
		s.MicrobatchSize = p.model.MicrobatchSize
	default:
		// The note depends on the profile alone, not on whether the request spelled the
		// size out, so that a request and its normalized form give the same result.
		if s.MicrobatchSize == 0 {
			s.MicrobatchSize = 1
		}
		p.note(wire.Diagnostic{Code: wire.CodeMicrobatchSizeUnknown, Severity: wire.Note, Field: "schedule.microbatch_size",
			Message: fmt.Sprintf("the profile does not say how many samples a microbatch holds (its microbatch_size): throughput counts %d per microbatch (schedule.microbatch_size)", s.MicrobatchSize)})
	}
	if s.MicrobatchSize < 1 || s.MicrobatchSize > 1<<20 {
		es.Add("schedule.microbatch_size", "must be between 1 and %d, got %d", 1<<20, s.MicrobatchSize)
	}
	// A step's tokens must fit the result's integer. Samples per step are at most 2^56
	// (microbatch size 2^20, microbatches 2^20, replicas 2^16); an architecture's tokens
	// per microbatch are at most 2^26 (core/analytic), a profile's are its own.
	if t := int64(p.modelTokensPerSample()); t > 0 && s.MicrobatchSize >= 1 && s.Microbatches >= 1 {
		samples := int64(s.MicrobatchSize) * int64(s.Microbatches) * int64(r.Parallelism.Data)
		if t > maxTokensPerStep/samples {
			es.Add(p.modelField("tokens_per_sample"), "%d tokens per sample times the %d samples of a step is more than the %d tokens a step may count", t, samples, int64(maxTokensPerStep))
		}
	}
	p.toolMemoryNote(c)
	p.sched = c
}

// MaxEvents bounds the schedule timeline a result keeps (events: true) to 1,048,576
// events, about 160 MB of JSON: more than a page draws or a person reads, and a
// request of a few hundred bytes may otherwise ask the simulator for its whole 2^22
// operations as JSON (0.9 GB, 20 s).
const MaxEvents = 1 << 20

// MinEventBytes is the fewest bytes one event of the timeline takes in a result's JSON
// ({"stage":0,"chunk":0,"kind":"F","microbatch":0,"step":-1,"start_seconds":0,...}).
const MinEventBytes = 80

// TimelineEvents is the fewest events the schedule timeline of a normalized request
// holds: a forward per microbatch and stage (pipeline devices times chunks), and a
// backward too in training. It prices a request's work before it runs: with events, its
// result's JSON holds at least MinEventBytes times as many bytes.
func TimelineEvents(n *wire.Request) int64 {
	c, err := schedule.Parse(n.Schedule.Name)
	if err != nil || n.Parallelism.Pipeline < 1 || n.Schedule.Microbatches < 1 {
		return 0
	}
	per := int64(2)
	if c.Kind == schedule.Inference || c.Kind == schedule.Overlap {
		per = 1
	}
	return int64(n.Parallelism.Pipeline) * int64(max(1, c.Chunks)) * int64(n.Schedule.Microbatches) * per
}

// MinResultBytes is the fewest bytes the JSON of a normalized request's result takes, as
// far as they can be known before it runs (its timeline's, with events): a server that
// keeps results refuses a request whose result cannot fit, before planning it.
func MinResultBytes(n *wire.Request) int64 {
	if !n.Events {
		return 0
	}
	return TimelineEvents(n) * MinEventBytes
}

// maxTokensPerStep bounds the tokens of one step (samples per step times tokens per
// sample), so that the result's counts are exact integers.
const maxTokensPerStep = 1 << 62

// modelTokensPerSample is a profile's tokens_per_sample (an architecture's model is built
// later, with at most 2^26 tokens per microbatch).
func (p *prepared) modelTokensPerSample() int {
	if p.model == nil {
		return 0
	}
	return p.model.TokensPerSample
}

func (p *prepared) objective(es *model.Errors) {
	r := p.req
	if r.Objective == "" {
		r.Objective = partition.MaxCompute.String()
	}
	if _, err := partition.ParseObjective(r.Objective); err != nil {
		es.Add("objective", "%v", err)
	}
	switch r.Partition {
	case "", wire.PartitionLayers:
		r.Partition = ""
	case wire.PartitionGraph:
		if r.Boundaries != nil {
			es.Add("partition", "%q finds the split; boundaries give one: leave one out", r.Partition)
		}
	default:
		es.Add("partition", "must be %q or %q, got %q", wire.PartitionLayers, wire.PartitionGraph, r.Partition)
	}
	if r.MemoryProportion == 0 {
		r.MemoryProportion = 1
	}
	if f := r.MemoryProportion; !(f > 0 && f <= 1) {
		es.Add("memory_proportion", "must be in (0, 1], got %v", f)
	}
}

// MoEForceLoadBalancingApplies reports whether training.moe_force_load_balancing applies
// to n, a request in its normal form (Normalize's, every default filled): an architecture
// with routed experts (the normal form names a token dispatcher exactly for those) under
// a framework that runs Megatron-Core's router (megatronRouter). It is Normalize's own
// rule: the field is refused wherever this is false, and the page offers its control
// where it is true.
func MoEForceLoadBalancingApplies(n *wire.Request) bool {
	ar := n.Model.Architecture
	return ar != nil && n.Parallelism.ExpertDispatcher != "" && megatronRouter(ar.Framework)
}

// MoEAuxLossApplies reports whether training.moe_aux_loss applies to n, a request in its
// normal form: where the forced load balancing does (MoEForceLoadBalancingApplies), in
// training (inference computes no loss). Normalize's own rule, as that one's.
func MoEAuxLossApplies(n *wire.Request) bool {
	return MoEForceLoadBalancingApplies(n) && n.Training.Mode == wire.ModeTraining
}

// DPBucketBytesApplies reports whether parallelism.dp_bucket_bytes applies to n, a
// request in its normal form: training (inference reduces no gradients). Normalize's own
// rule.
func DPBucketBytesApplies(n *wire.Request) bool { return n.Training.Mode == wire.ModeTraining }

// CheckForNaNInGradApplies reports whether training.check_for_nan_in_grad applies to n, a
// request in its normal form: training an architecture under a framework that runs
// Megatron-Core's DistributedDataParallelConfig (cluster.Framework.MegatronBuckets:
// megatron, cuda-graphs). Normalize's own rule: the field is refused wherever this is
// false, and the page offers its control where it is true.
func CheckForNaNInGradApplies(n *wire.Request) bool {
	ar := n.Model.Architecture
	if ar == nil || n.Training.Mode != wire.ModeTraining {
		return false
	}
	fw, err := cluster.LookupFramework(ar.Framework)
	return err == nil && fw.MegatronBuckets
}

// DPBucketElementsApplies reports whether parallelism.dp_bucket_elements, Megatron-Core's
// bucket_size, applies to n, a request in its normal form: where the NaN check does
// (CheckForNaNInGradApplies: training an architecture under Megatron-Core's buckets) and
// parallelism.dp_bucket_bytes, another framework's bucket, is not set. Normalize's own
// rule.
func DPBucketElementsApplies(n *wire.Request) bool {
	return CheckForNaNInGradApplies(n) && n.Parallelism.DPBucketBytes == 0
}

// megatronRouter: framework fw runs a mixture's router as Megatron-Core does (megatron,
// cuda-graphs, deepspeed, none); HuggingFace's code under eager and compiled computes its
// loss otherwise and has no forced balancing.
func megatronRouter(fw string) bool { return fw != cluster.Eager && fw != cluster.Compiled }
