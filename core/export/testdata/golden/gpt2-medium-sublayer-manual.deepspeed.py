# -*- coding: utf-8 -*-
# pipeplan export (version 1): DeepSpeed PipelineModule
# model gpt2-medium: 51 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: zb-h1, 8 microbatches of 4; 166.234 ms per step, 192.5 samples/s (zb-h1)
# NOT EXACT: this runs 1f1b, split [0 18 36 50 51]; not priced
# note: DeepSpeed's PipelineEngine blocks both stages on every send and receive between them
#       (TrainSchedule and InferenceSchedule alike), where the plan prices those transfers
#       beside compute: the run waits more than priced; plan with model.architecture.framework
#       deepspeed to price what it runs
# note: DeepSpeed's PipelineEngine runs one stage per rank under its own 1F1B schedule
#       (TrainSchedule); the export runs 1f1b instead of the planned zb-h1
# note: the layers list given to PipelineModule must hold one entry (LayerSpec or module) per
#       pipeplan layer, in LAYER_NAMES's order: PARTS counts entries of that list
# note: PlannedPipelineModule overrides PipelineModule._partition_layers, a DeepSpeed internal
#       (deepspeed/runtime/pipe/module.py)
# note: PipelineModule has no selective recomputation: recompute the attention core inside the
#       layers (pipeplan planned selective recomputation)
# note: the head reuses the embedding matrix on another stage: build both with
#       deepspeed.pipe.TiedLayerSpec under one key, and DeepSpeed all-reduces the tied gradients

from deepspeed.pipe import PipelineModule
from deepspeed.runtime.pipe.topology import PipeDataParallelTopology

NUM_STAGES = 4
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one stage, splitting its layers
# Stage i holds entries PARTS[i] .. PARTS[i+1]-1 of the layers list.
PARTS = [0, 18, 36, 50, 51]
# pipeplan's layers, in order: the layers list must match them one to one.
LAYER_NAMES = [
    # stage 0
    "embedding",
    "block.0.attention",
    "block.0.mlp",
    "block.1.attention",
    "block.1.mlp",
    "block.2.attention",
    "block.2.mlp",
    "block.3.attention",
    "block.3.mlp",
    "block.4.attention",
    "block.4.mlp",
    "block.5.attention",
    "block.5.mlp",
    "block.6.attention",
    "block.6.mlp",
    "block.7.attention",
    "block.7.mlp",
    "block.8.attention",
    # stage 1
    "block.8.mlp",
    "block.9.attention",
    "block.9.mlp",
    "block.10.attention",
    "block.10.mlp",
    "block.11.attention",
    "block.11.mlp",
    "block.12.attention",
    "block.12.mlp",
    "block.13.attention",
    "block.13.mlp",
    "block.14.attention",
    "block.14.mlp",
    "block.15.attention",
    "block.15.mlp",
    "block.16.attention",
    "block.16.mlp",
    "block.17.attention",
    # stage 2
    "block.17.mlp",
    "block.18.attention",
    "block.18.mlp",
    "block.19.attention",
    "block.19.mlp",
    "block.20.attention",
    "block.20.mlp",
    "block.21.attention",
    "block.21.mlp",
    "block.22.attention",
    "block.22.mlp",
    "block.23.attention",
    "block.23.mlp",
    "final_norm",
    # stage 3
    "lm_head",
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
    kwargs.setdefault("activation_checkpoint_interval", 0)
    # The ranks: NUM_STAGES x DATA_PARALLEL, the last axis fastest.
    topology = PipeDataParallelTopology(num_pp=NUM_STAGES, num_dp=DATA_PARALLEL)
    return PlannedPipelineModule(layers=layers, topology=topology, loss_fn=loss_fn, **kwargs)


# deepspeed.initialize(model=build(layers, loss_fn), config=DS_CONFIG, ...); then
# engine.train_batch(data_iter) runs one step of gradient_accumulation_steps microbatches.
DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 8,  # the microbatches of one step
    "train_batch_size": 32,  # 4 x 8 microbatches x data parallel 1
    "bf16": {"enabled": True},
    "data_types": {"grad_accum_dtype": "bf16"},  # 16-bit gradients, as priced (BF16_Optimizer's default is fp32)
}
