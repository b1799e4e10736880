package evaluate

import (
	"fmt"
	"slices"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// DefaultBatchPerDevice is the samples per step per device at hand of the search's
// default global batch when the base request does not say one: core/request's
// DefaultMicrobatchesPerStage microbatches of one sample per device, what a request
// plans by default on those devices as one pipeline (times a profile's own samples per
// microbatch).
const DefaultBatchPerDevice = request.DefaultMicrobatchesPerStage

// defaultBatch is the search's global batch when the knobs fix none (no global_batch,
// microbatches or microbatches_per_stage), so that every candidate runs the same
// samples per step and their throughputs compare: the base request's samples per step
// (microbatch size x microbatches x replicas, as core normalizes it), else
// DefaultBatchPerDevice per device at hand. The rule says which, for people.
func (r *Evaluator) defaultBatch(devices int) (int, string) {
	if r.baseBatch > 0 {
		return r.baseBatch, fmt.Sprintf("the planned request's samples per step (microbatch size × microbatches × replicas): %d", r.baseBatch)
	}
	per := 1
	if r.arch == nil {
		per = max(1, r.prepared.Model().MicrobatchSize)
	}
	b := DefaultBatchPerDevice * devices * per
	return b, fmt.Sprintf("%d samples per device at hand (core's default of %d microbatches per pipeline device): %d", DefaultBatchPerDevice*per, request.DefaultMicrobatchesPerStage, b)
}

// longSequence is the sequence length from which the search tries context parallelism
// by default, up to maxSearchedContext devices.
const (
	longSequence       = 32768
	maxSearchedContext = 32
)

// Fix sets the knobs that hold for every candidate rather than spanning the grid:
// reshard, for the ZeRO-3 and HSDP candidates in training (step needs an architecture).
// Space calls it; a candidate's request alone (Request) needs it called with the
// query's knobs first. Errors name the knob.
func (r *Evaluator) Fix(k wire.SearchKnobs) error {
	switch {
	case k.Reshard == "":
	case !r.train:
		return &model.FieldError{Path: "reshard", Reason: "goes with training: ZeRO-3 and HSDP shard training state"}
	case k.ZeRO != nil && *k.ZeRO < 3:
		return &model.FieldError{Path: "reshard", Reason: fmt.Sprintf("goes with ZeRO stage 3 (zero 3, or zero unset), which gathers weights layer by layer, got zero %d", *k.ZeRO)}
	case k.Reshard == request.ReshardStep && r.arch == nil:
		return &model.FieldError{Path: "reshard", Reason: "step needs model.architecture: a profile does not say the type its whole gradients accumulate in"}
	}
	r.reshard = k.Reshard
	return nil
}

// Space is the grid of the knobs: tensor-parallel degrees that divide the devices per
// node (or the devices at hand) and the model's heads, key/value heads and MLP width;
// stages up to the model's layers; every replica count that fits.
func (r *Evaluator) Space(k wire.SearchKnobs) (search.Space, error) {
	s := search.Space{MaxDevices: k.MaxDevices, GlobalBatch: k.GlobalBatch, MemoryProportions: k.MemoryProportions}
	if err := search.ValidateKnobs(&k); err != nil {
		return s, err
	}
	if err := r.Fix(k); err != nil {
		return s, err
	}
	layers := 0
	switch {
	case r.arch != nil:
		layers = r.arch.NumLayers + 2
		if r.base.Model.Architecture.Split == string(analytic.Sublayers) {
			layers = 2*r.arch.NumLayers + 2
		}
		if r.train {
			layers += r.arch.MTPLayers
		}
	default:
		layers = r.layers
	}
	fix := func(v int, all []int) []int {
		if v > 0 {
			return []int{v}
		}
		return all
	}
	var ps []int
	for p := 1; p <= min(layers, k.MaxDevices, cluster.MaxStages); p++ {
		ps = append(ps, p)
	}
	s.Pipelines = fix(k.Stages, ps)
	if k.Replicas > 0 {
		s.Data = []int{k.Replicas}
	}
	ts := []int{1}
	if r.arch != nil {
		group := k.MaxDevices
		if r.topo != nil {
			group = r.topo.DevicesPerNode
		}
		ts = nil
		for t := 1; t <= group && t <= k.MaxDevices && t <= cluster.MaxStages; t++ {
			a := r.arch
			if group%t == 0 && a.NumHeads%t == 0 && a.NumKVHeads%t == 0 && a.IntermediateSize%t == 0 &&
				a.DenseWidth()%t == 0 && a.SharedExpertSize%t == 0 {
				ts = append(ts, t)
			}
		}
	}
	s.Tensors = fix(k.Tensor, ts)
	switch {
	case r.arch != nil && r.arch.MoE():
		// Every expert-parallel degree that divides the experts (a candidate's data x
		// context devices must be a multiple of it).
		var es []int
		for e := 1; e <= min(r.arch.NumExperts, k.MaxDevices); e++ {
			if r.arch.NumExperts%e == 0 {
				es = append(es, e)
			}
		}
		s.Experts = fix(k.Expert, es)
	case k.Expert > 1:
		return s, &model.FieldError{Path: "expert", Reason: "splits the experts of a mixture of experts; the model has none"}
	}
	if r.topo != nil {
		s.StageGroup = r.topo.DevicesPerNode
	}
	switch {
	case k.Context > 0:
		s.Contexts = []int{k.Context}
	case len(k.Contexts) > 0:
		s.Contexts = k.Contexts
	case r.arch != nil && r.base.Model.Architecture.Seq >= longSequence:
		// Long sequences: powers of two that split the sequence into 2c chunks and fit
		// a node (or the devices) beside t = 1.
		seq := r.base.Model.Architecture.Seq
		group := k.MaxDevices
		if r.topo != nil {
			group = r.topo.DevicesPerNode
		}
		for c := 1; c <= maxSearchedContext && c <= group && c <= k.MaxDevices; c *= 2 {
			if group%c == 0 && seq%(2*c) == 0 {
				s.Contexts = append(s.Contexts, c)
			}
		}
	}
	if r.arch != nil && slices.ContainsFunc(s.Contexts, func(c int) bool { return c > 1 }) {
		// Context degrees, given or the long sequences' own, in every form core has
		// (ring, all-to-all, hierarchical: searchedContextMethods), or the one the base
		// request names; the splits core refuses for a tensor degree (all-to-all's
		// degree must divide the heads on a device, hierarchical's group must fit a
		// node) are left out (Refuses).
		s.ContextMethods = searchedContextMethods()
		switch {
		case k.ContextMethod != "":
			s.ContextMethods = []string{k.ContextMethod}
		case r.contextNamed:
			s.ContextMethods = []string{r.contextMethod}
		}
		if k.Context > 1 {
			// A given degree that core refuses with every tensor degree and method tried
			// can never apply: say so, with core's reason, rather than that nothing fits.
			var first error
			applies := false
			for _, t := range s.Tensors {
				for _, m := range s.ContextMethods {
					switch err := r.refusal(t, k.Context, m); {
					case err == nil:
						applies = true
					case first == nil:
						first = err
					}
				}
			}
			if !applies && first != nil {
				return s, &model.FieldError{Path: "context", Reason: fmt.Sprintf("%d-way context parallelism applies with no tensor degree and method tried (%v, %v): %v", k.Context, s.Tensors, s.ContextMethods, first)}
			}
		}
	}
	if k.ContextMethod != "" && len(s.ContextMethods) == 0 {
		return s, &model.FieldError{Path: "context_method", Reason: "goes with context parallelism: give context 2 or more (an architecture's; sequences of 32,768 tokens or more search it)"}
	}
	switch {
	case k.Schedule != "":
		s.Schedules = []string{k.Schedule}
	case len(k.Schedules) > 0:
		s.Schedules = k.Schedules
	case !r.train:
		s.Schedules = []string{string(schedule.Inference)}
	default:
		s.Schedules = wire.SearchedSchedules()
	}
	switch {
	case k.Recompute != "":
		s.Recomputes = []string{k.Recompute}
	case !r.train:
		s.Recomputes = []string{"none"}
	default:
		s.Recomputes = wire.SearchedRecomputes(r.arch != nil)
	}
	// The ZeRO stages the base request's precision runs with (DeepSpeed's BF16
	// optimizer: ZeRO-1 at most).
	maxZeRO := analytic.Precision(r.base.Training.Precision).MaxShardingLevel()
	switch {
	case k.ZeRO != nil && r.train && *k.ZeRO > maxZeRO:
		return s, &model.FieldError{Path: "zero", Reason: fmt.Sprintf("the base request's training.precision %s runs with ZeRO stages up to %d, got %d", r.base.Training.Precision, maxZeRO, *k.ZeRO)}
	case k.ZeRO != nil:
		s.ZeROs = []int{*k.ZeRO}
	case r.train && r.arch != nil:
		s.ZeROs = []int{0, 1, 2, 3}[:maxZeRO+1]
	case r.train:
		s.ZeROs = []int{0, 1}
	default:
		s.ZeROs = []int{0}
	}
	switch {
	case k.ShardGroup > 0 && !slices.Contains(s.ZeROs, 3):
		return s, &model.FieldError{Path: "shard_group", Reason: "HSDP is ZeRO-3 inside shard groups: it needs training and zero 3 (or zero unset) among the stages searched"}
	case k.ShardGroup > 0:
		s.ShardGroups = []int{k.ShardGroup}
	case r.train && r.arch != nil && r.topo != nil && slices.Contains(s.ZeROs, 3):
		s.ShardGroups = []int{0} // the replicas a node holds
	}
	if len(s.MemoryProportions) == 0 {
		s.MemoryProportions = []float64{1}
	}
	switch {
	case k.GlobalBatch > 0:
		s.GlobalBatchRule = "given (global_batch)"
	case k.Microbatches > 0:
		s.Microbatches = []int{k.Microbatches}
	case len(k.MicrobatchesPerStage) > 0:
		s.MicrobatchesPerStage = k.MicrobatchesPerStage
	default:
		s.GlobalBatch, s.GlobalBatchRule = r.defaultBatch(k.MaxDevices)
	}
	switch {
	case k.MicrobatchSize > 0:
		s.MicrobatchSizes = []int{k.MicrobatchSize}
	case k.MaxMicrobatchSize > 0:
		s.MaxMicrobatchSize = k.MaxMicrobatchSize
	case r.arch != nil:
		s.MaxMicrobatchSize = 64
	default:
		s.MaxMicrobatchSize = 128
	}
	return s, s.Validate()
}

// searchedContextMethods are the context methods a search tries by default: every one
// core has but all-gather, which is PyTorch's implementation of the ring (its
// context_parallel's rotate method allgather) rather than another way to split the
// attention; a base request that names it has its candidates take it alone.
func searchedContextMethods() []string {
	return slices.DeleteFunc(wire.ContextMethods(), func(m string) bool { return m == string(analytic.AllGather) })
}
