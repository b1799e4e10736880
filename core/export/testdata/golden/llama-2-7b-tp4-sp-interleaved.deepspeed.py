# -*- coding: utf-8 -*-
# pipeplan export (version 1): DeepSpeed PipelineModule
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 1, tensor parallel 4 with sequence parallelism
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: interleaved:2, 8 microbatches of 1; 375.809 ms per step, 21.29 samples/s (interleaved:2)
# NOT EXACT: this runs 1f1b, split [0 9 17 25 35]; not priced
# note: DeepSpeed's PipelineEngine blocks both stages on every send and receive between them
#       (TrainSchedule and InferenceSchedule alike), where the plan prices those transfers
#       beside compute: the run waits more than priced; plan with model.architecture.framework
#       deepspeed to price what it runs
# note: DeepSpeed's PipelineEngine runs one stage per rank under its own 1F1B schedule
#       (TrainSchedule), so an interleaved split cannot run; the export gives the best split
#       under 1f1b instead of the planned interleaved:2
# note: the layers list given to PipelineModule must hold one entry (LayerSpec or module) per
#       pipeplan layer, in LAYER_NAMES's order: PARTS counts entries of that list
# note: PlannedPipelineModule overrides PipelineModule._partition_layers, a DeepSpeed internal
#       (deepspeed/runtime/pipe/module.py)
# note: PipelineModule does not split layers, and the plan runs every stage tensor-parallel over
#       4 devices: each entry of the layers list must build a tensor-parallel layer over the 4
#       ranks of the topology's "model" axis (as Megatron-DeepSpeed's ColumnParallelLinear and
#       RowParallelLinear do), and with sequence parallelism split the norms and dropout along
#       the sequence too

from deepspeed.pipe import PipelineModule
from deepspeed.runtime.pipe.topology import PipeModelDataParallelTopology

NUM_STAGES = 4
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 4  # devices of one stage, splitting its layers
# Stage i holds entries PARTS[i] .. PARTS[i+1]-1 of the layers list.
PARTS = [0, 9, 17, 25, 35]
# pipeplan's layers, in order: the layers list must match them one to one.
LAYER_NAMES = [
    # stage 0
    "embedding",
    "block.0",
    "block.1",
    "block.2",
    "block.3",
    "block.4",
    "block.5",
    "block.6",
    "block.7",
    # stage 1
    "block.8",
    "block.9",
    "block.10",
    "block.11",
    "block.12",
    "block.13",
    "block.14",
    "block.15",
    # stage 2
    "block.16",
    "block.17",
    "block.18",
    "block.19",
    "block.20",
    "block.21",
    "block.22",
    "block.23",
    # stage 3
    "block.24",
    "block.25",
    "block.26",
    "block.27",
    "block.28",
    "block.29",
    "block.30",
    "block.31",
    "final_norm",
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
    # The ranks: NUM_STAGES x DATA_PARALLEL x TENSOR_PARALLEL, the last axis fastest.
    topology = PipeModelDataParallelTopology(num_pp=NUM_STAGES, num_mp=TENSOR_PARALLEL, num_dp=DATA_PARALLEL)
    return PlannedPipelineModule(layers=layers, topology=topology, loss_fn=loss_fn, **kwargs)


# deepspeed.initialize(model=build(layers, loss_fn), config=DS_CONFIG, ...); then
# engine.train_batch(data_iter) runs one step of gradient_accumulation_steps microbatches.
DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 1,
    "gradient_accumulation_steps": 8,  # the microbatches of one step
    "train_batch_size": 8,  # 1 x 8 microbatches x data parallel 1
    "bf16": {"enabled": True},
    "data_types": {"grad_accum_dtype": "bf16"},  # 16-bit gradients, as priced (BF16_Optimizer's default is fp32)
}
