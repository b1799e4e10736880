# -*- coding: utf-8 -*-
# pipeplan export (version 1): DeepSpeed PipelineModule
# model two-towers: 6 layers; 2 pipeline devices, data parallel 1, tensor parallel 1
# planned: 1f1b, 4 microbatches of 1; 78.066 ms per step, 51.24 samples/s (1f1b)
# NOT EXACT: this runs 1f1b, split [0 3 6]; not priced
# note: DeepSpeed's PipelineEngine blocks both stages on every send and receive between them
#       (TrainSchedule and InferenceSchedule alike), where the plan prices those transfers
#       beside compute: the run waits more than priced; pipeplan prices them blocking for an
#       architecture (model.architecture.framework deepspeed), not for a profile's measured
#       stages
# note: the layers list given to PipelineModule must hold one entry (LayerSpec or module) per
#       pipeplan layer, in LAYER_NAMES's order: PARTS counts entries of that list
# note: the plan splits the model's graph into convex stages that are not contiguous in the
#       model's layer order: LAYER_NAMES holds the layers in the plan's order (a topological
#       order in which each stage is contiguous), and CUT_TENSORS lists the tensors crossing
#       each cut, which the stage before it must send on (tensors a later stage reads pass
#       through the stages between): PipelineModule passes each entry's output to the next entry
#       and each stage's last output to the next stage, so every entry must take and return a
#       tuple holding every tensor a later entry reads, and a stage's last entry return exactly
#       that stage's CUT_TENSORS in their order
# note: PlannedPipelineModule overrides PipelineModule._partition_layers, a DeepSpeed internal
#       (deepspeed/runtime/pipe/module.py)
# note: PipelineModule checkpoints every layer or every k-th (activation_checkpoint_interval),
#       the same on every stage; the plan recomputes per stage (stage 0: whole stem; stage 1:
#       nothing): the export checkpoints every layer, keeping less and taking longer than
#       planned

from deepspeed.pipe import PipelineModule
from deepspeed.runtime.pipe.topology import PipeDataParallelTopology

NUM_STAGES = 2
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one stage, splitting its layers
# Stage i holds entries PARTS[i] .. PARTS[i+1]-1 of the layers list.
PARTS = [0, 3, 6]
# pipeplan's layers, in order: the layers list must match them one to one.
LAYER_NAMES = [
    # stage 0
    "stem",
    "tower_b.0",
    "tower_b.1",
    # stage 1
    "tower_a.0",
    "tower_a.1",
    "head",
]

# The tensors crossing each cut, (id, bytes per microbatch): CUT_TENSORS[i] goes from
# stage i to stage i + 1, in this order.
CUT_TENSORS = [
    [  # stage 0 -> 1
        ("x", 1048576),
        ("s", 1048576),
        ("b1", 1048576),
    ],
]


class PlannedPipelineModule(PipelineModule):
    """A PipelineModule split as pipeplan planned, instead of by partition_method."""

    def _partition_layers(self, method="uniform"):
        num_stages = self._topo.get_dim("pipe")
        if num_stages != NUM_STAGES or len(self._layer_specs) != PARTS[-1]:
            raise ValueError(
                "pipeplan planned %d layers on %d stages; this module has %d layers on %d stages"
                % (PARTS[-1], NUM_STAGES, len(self._layer_specs), num_stages))
        self.parts = list(PARTS)
        stage_id = self._topo.get_coord(self.global_rank).pipe
        self._set_bounds(start=self.parts[stage_id], stop=self.parts[stage_id + 1])


def build(layers, loss_fn=None, **kwargs):
    """The pipeline module: layers holds one LayerSpec (or module) per entry of LAYER_NAMES."""
    if len(layers) != len(LAYER_NAMES):
        raise ValueError("pipeplan planned %d layers, got %d" % (len(LAYER_NAMES), len(layers)))
    kwargs.setdefault("activation_checkpoint_interval", 1)
    # The ranks: NUM_STAGES x DATA_PARALLEL, the last axis fastest.
    topology = PipeDataParallelTopology(num_pp=NUM_STAGES, num_dp=DATA_PARALLEL)
    return PlannedPipelineModule(layers=layers, topology=topology, loss_fn=loss_fn, **kwargs)


# deepspeed.initialize(model=build(layers, loss_fn), config=DS_CONFIG, ...); then
# engine.train_batch(data_iter) runs one step of gradient_accumulation_steps microbatches.
DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 1,
    "gradient_accumulation_steps": 4,  # the microbatches of one step
    "train_batch_size": 4,  # 1 x 4 microbatches x data parallel 1
}
