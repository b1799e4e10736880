# -*- coding: utf-8 -*-
# pipeplan export (version 1): DeepSpeed PipelineModule
# model gpt2-medium: 26 layers; 4 pipeline devices, data parallel 2, tensor parallel 1
# planned: gpipe, 8 microbatches of 8; 531.054 ms per step, 241 samples/s (gpipe)
# NOT EXACT: this runs 1f1b, split [0 8 15 22 26]; not priced
# note: DeepSpeed's PipelineEngine blocks both stages on every send and receive between them
#       (TrainSchedule and InferenceSchedule alike), where the plan prices those transfers
#       beside compute: the run waits more than priced; pipeplan prices them blocking for an
#       architecture (model.architecture.framework deepspeed), not for a profile's measured
#       stages
# note: DeepSpeed's PipelineEngine runs one stage per rank under its own 1F1B schedule
#       (TrainSchedule); the export runs 1f1b instead of the planned gpipe
# note: the layers list given to PipelineModule must hold one entry (LayerSpec or module) per
#       pipeplan layer, in LAYER_NAMES's order: PARTS counts entries of that list
# note: PlannedPipelineModule overrides PipelineModule._partition_layers, a DeepSpeed internal
#       (deepspeed/runtime/pipe/module.py)
# note: activation_checkpoint_interval=1 keeps every layer's input, where pipeplan planned to
#       keep only each stage's input: a little more memory

from deepspeed.pipe import PipelineModule
from deepspeed.runtime.pipe.topology import PipeDataParallelTopology

NUM_STAGES = 4
DATA_PARALLEL = 2  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one stage, splitting its layers
# Stage i holds entries PARTS[i] .. PARTS[i+1]-1 of the layers list.
PARTS = [0, 8, 15, 22, 26]
# pipeplan's layers, in order: the layers list must match them one to one.
LAYER_NAMES = [
    # stage 0
    "embed",
    "block.0",
    "block.1",
    "block.2",
    "block.3",
    "block.4",
    "block.5",
    "block.6",
    # stage 1
    "block.7",
    "block.8",
    "block.9",
    "block.10",
    "block.11",
    "block.12",
    "block.13",
    # stage 2
    "block.14",
    "block.15",
    "block.16",
    "block.17",
    "block.18",
    "block.19",
    "block.20",
    # stage 3
    "block.21",
    "block.22",
    "block.23",
    "head",
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
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 8,  # the microbatches of one step
    "train_batch_size": 128,  # 8 x 8 microbatches x data parallel 2
}
