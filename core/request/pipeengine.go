package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// PipelineEngineRefusal is core's error for a training step that framework deepspeed
// cannot run: on stages >= 2 pipeline stages DeepSpeed's PipelineEngine runs its own
// 1F1B schedule alone (deepspeed/runtime/pipe/engine.py, train_batch builds
// schedule.TrainSchedule, whatever else is asked), refuses ZeRO stages 2 and 3 ("ZeRO-2
// and ZeRO-3 are incompatible with pipeline parallelism", asserted in
// PipelineEngine.__init__; hsdp is ZeRO-3 in groups), and reduces the data-parallel
// gradients after the schedule's last backward pass (enable_backward_allreduce False),
// with the weights gathered after the update (overlap stated "on" is refused). nil for
// other frameworks, one stage, inference, or a step it runs. The request's validation
// (architecture) and the search's grid (evaluate.Evaluator.Refuses) ask it.
func PipelineEngineRefusal(framework string, stages int, sched schedule.Config, sharding, overlapGradReduce, overlapParamGather string) *model.FieldError {
	if framework != cluster.DeepSpeed || stages < 2 || sched.Kind == schedule.Inference {
		return nil
	}
	switch {
	case sched.Kind != schedule.OneFOneB:
		return &model.FieldError{Path: "schedule.name", Reason: "framework deepspeed runs DeepSpeed's PipelineEngine, whose only training schedule is its 1F1B TrainSchedule: use 1f1b, got " + sched.String()}
	case analytic.Sharding(sharding).Level() >= 2:
		return &model.FieldError{Path: "parallelism.sharding", Reason: "framework deepspeed runs DeepSpeed's PipelineEngine, which refuses ZeRO stages 2 and 3 with pipeline parallelism: use none or zero1, got " + sharding}
	case overlapGradReduce == OverlapOn:
		return &model.FieldError{Path: "parallelism.overlap_grad_reduce", Reason: "framework deepspeed's PipelineEngine reduces the gradients after the schedule's last backward pass: it cannot overlap them (leave it out, or off)"}
	case overlapParamGather == OverlapOn:
		return &model.FieldError{Path: "parallelism.overlap_param_gather", Reason: "framework deepspeed's PipelineEngine gathers the updated weights after the optimizer step: it cannot overlap them with the next forward pass (leave it out, or off)"}
	}
	return nil
}

// TensorCommRefusal is core's error for parallelism.overlap_tensor_comm on (or
// userbuffers) under framework deepspeed: Megatron-DeepSpeed builds its tensor-parallel
// layers from Megatron-LM's ColumnParallelLinear and RowParallelLinear of 2021-2022,
// without Transformer Engine, so it has no userbuffers overlap to hide their all-gathers
// and reduce-scatters behind the matrix products (and async-tp is torch.compile's). nil
// for other frameworks or other values. The request's validation and the search's grid
// (evaluate.Evaluator.Refuses) ask it.
func TensorCommRefusal(framework, overlapTensorComm string) *model.FieldError {
	if framework != cluster.DeepSpeed || (overlapTensorComm != OverlapOn && overlapTensorComm != OverlapUserbuffers) {
		return nil
	}
	return &model.FieldError{Path: "parallelism.overlap_tensor_comm", Reason: "framework deepspeed runs Megatron-DeepSpeed's tensor-parallel layers, which have no Transformer Engine userbuffers overlap: leave it out, or off, got " + overlapTensorComm}
}
