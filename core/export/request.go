package export

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"pipeplan/core/analytic"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// ErrNoPlan is returned by FromRequest when no split fits: there is nothing to export.
var ErrNoPlan = errors.New("no plan to export")

// ErrNotContiguous is wrapped by the errors of exports that write each stage as a range
// of the model's layers (Megatron-LM's layer counts) for a graph split whose stages are
// not contiguous in the model's layer order (Plan.LayerOrder).
var ErrNotContiguous = errors.New("the plan's stages are not contiguous in the model's layer order")

// FromRequest plans a request (core/request) and returns what an export reads: the
// result's split with the settings the request planned it for (the schedule, the
// microbatches, recomputation, and the parallelism: data, ZeRO, tensor and sequence
// parallel, as the normalized request states them), and a Coster that prices other
// splits and schedules by planning the same request with them. Bad requests give field
// errors; a request whose model fits no split gives an error wrapping ErrNoPlan with the
// reason. A graph split (partition graph, Plan.LayerOrder) gives its layers in the
// plan's order (Input.LayerOrder) and the tensors crossing each cut (Input.CutTensors),
// and a Coster that prices it as planned only.
func FromRequest(ctx context.Context, r *wire.Request) (*Input, *wire.Result, error) {
	pr, err := request.Prepare(r)
	if err != nil {
		return nil, nil, err
	}
	if k := pr.Knobs(); k.Events {
		k.Events = false
		if pr, err = pr.With(k); err != nil {
			return nil, nil, err
		}
	}
	n := pr.Request()
	res, err := pr.Run(ctx)
	if err != nil {
		return nil, nil, err
	}
	if res.Plan == nil {
		why := "no split fits"
		if d := res.FirstError(); d != nil {
			why = d.Message
		}
		return nil, res, fmt.Errorf("%w: %s", ErrNoPlan, why)
	}
	sched, err := schedule.Parse(n.Schedule.Name)
	if err != nil {
		return nil, nil, err
	}
	sched.Microbatches = n.Schedule.Microbatches
	in := &Input{
		Model:                 res.Model.Name,
		LayerNames:            res.Model.LayerNames,
		LayerOrder:            slices.Clone(res.Plan.LayerOrder),
		Boundaries:            res.Plan.Boundaries,
		Schedule:              sched,
		MicrobatchSize:        n.Schedule.MicrobatchSize,
		Data:                  n.Parallelism.Data,
		Tensor:                n.Parallelism.Tensor,
		SequenceParallel:      n.Parallelism.SequenceParallel,
		ZeRO:                  analytic.Sharding(n.Parallelism.Sharding).Level(),
		Sharding:              n.Parallelism.Sharding,
		ShardGroup:            n.Parallelism.ShardGroup,
		Reshard:               n.Parallelism.Reshard,
		ReduceDType:           n.Parallelism.ReduceDType,
		FullyShard:            n.Parallelism.FullyShard,
		Context:               n.Parallelism.Context,
		ContextMethod:         n.Parallelism.ContextMethod,
		ContextInner:          n.Parallelism.ContextInner,
		Expert:                n.Parallelism.Expert,
		ExpertTensor:          n.Parallelism.ExpertTensor,
		ExpertOverlap:         n.Parallelism.ExpertOverlap,
		ExpertDispatcher:      n.Parallelism.ExpertDispatcher,
		Recompute:             n.Training.Recompute,
		RecomputeModules:      n.Training.RecomputeModules,
		Precision:             n.Training.Precision,
		FP8Recipe:             n.Training.FP8Recipe,
		FP8ParamGather:        n.Training.FP8ParamGather,
		FP8AmaxTPOnly:         n.Training.FP8AmaxTPOnly,
		FP8FSDPAllGather:      n.Training.FP8FSDPAllGather,
		TrainMetrics:          n.Training.TrainMetrics,
		DPBucketBytes:         n.Parallelism.DPBucketBytes,
		DPBucketElements:      n.Parallelism.DPBucketElements,
		CheckForNaNInGrad:     n.Training.CheckForNaNInGrad,
		MoEAuxLoss:            n.Training.MoEAuxLoss,
		MoEForceLoadBalancing: n.Training.MoEForceLoadBalancing,
		Plan:                  res.Plan,
		Coster:                &RequestCoster{Request: pr, Context: ctx},
	}
	if in.LayerOrder != nil {
		// A graph split: the layers in the plan's order, with the tensors of each cut;
		// the request prices this split only as planned.
		if m := pr.Model(); m != nil && len(m.Layers) == len(in.LayerOrder) {
			in.LayerNames, in.CutTensors = graphOf(m, in.LayerOrder, in.Boundaries)
		} else {
			return nil, res, fmt.Errorf("%w: the plan's model is not at hand to name its stages' layers", ErrNotContiguous)
		}
		in.Coster = &graphCoster{rc: &RequestCoster{Request: pr, Context: ctx}, order: in.LayerOrder, bounds: slices.Clone(in.Boundaries),
			sched: in.planned(), cost: resultCost(res, in.planned())}
	}
	ov := request.PricedOverlaps(n)
	in.OverlapGradReduce, in.OverlapParamGather, in.OverlapTensorComm = ov.GradReduce, ov.ParamGather, ov.TensorComm
	in.TensorCommMethod, in.TensorCommConfig = ov.TensorCommMethod, ov.TensorCommConfig
	if a := n.Model.Architecture; a != nil {
		in.Arch = pr.Architecture()
		in.Seq = a.Seq
		in.DType = a.DType
		in.FP8Attention = a.FP8Attention
		// Inference too runs DeepSpeed's transfers blocking (InferenceSchedule).
		in.BlockingTransfers = pr.Framework().BlockingPipelineTransfers
		if n.Training.Mode != wire.ModeInference {
			in.CrossEntropy = pr.Framework().CrossEntropy()
		}
	}
	return in, res, nil
}

// RequestCoster prices plans by planning variants of a prepared request with their split
// and schedule (request.Prepared.With, which reuses the model and the cluster): the whole
// step (pipeline, optimizer, all-reduces) as core/request states it.
type RequestCoster struct {
	Request *request.Prepared
	Context context.Context
}

func (rc *RequestCoster) run(bounds []int, s schedule.Config) (*wire.Result, error) {
	k := rc.Request.Knobs()
	k.Boundaries = bounds
	if bounds != nil {
		k.Partition = "" // a given split is costed as ranges of the layer order
	}
	k.Schedule.Name = s.String()
	k.Schedule.Microbatches = s.Microbatches
	if s.Kind != schedule.ZBH1 {
		k.Schedule.WeightGradFraction = 0 // zb-h1's alone
	}
	k.Events = false
	ctx := rc.Context
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := rc.Request.With(k)
	if err != nil {
		return nil, err
	}
	res, err := v.Plan(ctx)
	if err != nil {
		return nil, err
	}
	if res.Plan == nil || res.Step == nil {
		if d := res.FirstError(); d != nil {
			return nil, fmt.Errorf("%w: %s", ErrNoPlan, d.Message)
		}
		return nil, ErrNoPlan
	}
	return res, nil
}

// Cost plans the request with the split and the schedule.
func (rc *RequestCoster) Cost(bounds []int, s schedule.Config) (wire.Cost, error) {
	res, err := rc.run(bounds, s)
	if err != nil {
		return wire.Cost{}, err
	}
	return resultCost(res, s), nil
}

// Best plans the request under the schedule.
func (rc *RequestCoster) Best(s schedule.Config) ([]int, wire.Cost, error) {
	res, err := rc.run(nil, s)
	if err != nil {
		return nil, wire.Cost{}, err
	}
	return res.Plan.Boundaries, resultCost(res, s), nil
}

func resultCost(res *wire.Result, s schedule.Config) wire.Cost {
	return wire.Cost{Schedule: s.String(), Boundaries: append([]int(nil), res.Plan.Boundaries...),
		StepSeconds: res.Step.StepSeconds, SamplesPerSecond: res.Step.SamplesPerSecond, Fits: res.Feasible}
}
