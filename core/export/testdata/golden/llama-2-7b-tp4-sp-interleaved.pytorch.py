# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining and tensor parallel (PyTorch 2.6 or later)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 1, tensor parallel 4 with sequence parallelism
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: interleaved:2, 8 microbatches of 1; 375.809 ms per step, 21.29 samples/s (interleaved:2)
# note: torch.distributed.pipelining does not split a stage over devices, and the plan runs
#       every stage tensor-parallel over 4 devices: build_tensor_parallel shards each stage with
#       parallelize_module (DTensor) over the "tp" dimension of a device mesh and builds its
#       PipelineStage on the "pp" group. Split the model by hand (STAGE_MODULES): pipeline()'s
#       traced stages are graphs, not the nn.Linear modules parallelize_module shards. tp_plan
#       is your modules' plan: ColwiseParallel for the attention's query, key and value and the
#       MLP's input projections, RowwiseParallel for their output projections, and with sequence
#       parallelism SequenceParallel for the norms

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.pipelining import PipelineStage, SplitPoint, ScheduleInterleaved1F1B
from torch.distributed.tensor.parallel import parallelize_module

NUM_RANKS = 4  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 8
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 4  # devices of one pipeline rank, splitting its blocks
SEQUENCE_PARALLEL = True  # norms, dropout and residuals split along the sequence too
PARAM_DTYPE = torch.bfloat16  # model.to(PARAM_DTYPE) for the passes; precision mixed was priced:
# the optimizer must step fp32 master copies of the weights (torch.optim keeps none of bf16
# parameters), with 16-bit gradients
N_MICROBATCHES = 8
MICROBATCH_SIZE = 1  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
# (pipeline()'s tracer takes it; with tensor parallelism, split by hand: STAGE_MODULES.)
SPLIT_SPEC = {
    "model.layers.4": SplitPoint.BEGINNING,  # stage 1: block.4 .. block.7
    "model.layers.8": SplitPoint.BEGINNING,  # stage 2: block.8 .. block.11
    "model.layers.12": SplitPoint.BEGINNING,  # stage 3: block.12 .. block.15
    "model.layers.16": SplitPoint.BEGINNING,  # stage 4: block.16 .. block.19
    "model.layers.20": SplitPoint.BEGINNING,  # stage 5: block.20 .. block.23
    "model.layers.24": SplitPoint.BEGINNING,  # stage 6: block.24 .. block.27
    "model.layers.28": SplitPoint.BEGINNING,  # stage 7: block.28 .. lm_head
}

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
STAGE_MODULES = [
    ["model.embed_tokens", "model.layers.0", "model.layers.1", "model.layers.2", "model.layers.3"],
    ["model.layers.4", "model.layers.5", "model.layers.6", "model.layers.7"],
    ["model.layers.8", "model.layers.9", "model.layers.10", "model.layers.11"],
    ["model.layers.12", "model.layers.13", "model.layers.14", "model.layers.15"],
    ["model.layers.16", "model.layers.17", "model.layers.18", "model.layers.19"],
    ["model.layers.20", "model.layers.21", "model.layers.22", "model.layers.23"],
    ["model.layers.24", "model.layers.25", "model.layers.26", "model.layers.27"],
    ["model.layers.28", "model.layers.29", "model.layers.30", "model.layers.31", "model.norm", "lm_head"],
]


def stage_indices(rank):
    """The stages a rank runs: rank, rank + NUM_RANKS, ... (looped, as ScheduleInterleaved1F1B expects)."""
    return list(range(rank, NUM_STAGES, NUM_RANKS))


def device_mesh(device_type="cuda"):
    """All 16 ranks as a ("pp", "tp") device mesh.

    The last dimension varies fastest: a tensor-parallel group, mesh["tp"], is on
    neighbouring ranks (inside a node). A rank's pipeline rank is
    mesh["pp"].get_local_rank() and its pipeline group mesh["pp"].get_group().
    """
    return init_device_mesh(device_type, (NUM_RANKS, TENSOR_PARALLEL), mesh_dim_names=("pp", "tp"))


def build_tensor_parallel(stage_modules, mesh, device, tp_plan, loss_fn=None):
    """Shards this rank's stages over mesh["tp"] and returns the schedule that runs them.

    stage_modules holds one module per stage of
    stage_indices(mesh["pp"].get_local_rank()), each holding only that stage's
    STAGE_MODULES (split by hand). tp_plan maps module paths inside a stage module
    (wildcards allowed) to ColwiseParallel(), RowwiseParallel() or SequenceParallel()
    (torch.distributed.tensor.parallel). loss_fn(output, target) is the training loss.
    Then every step: schedule.step(batch) on the first pipeline rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    pp = mesh["pp"]
    indices = stage_indices(pp.get_local_rank())
    if len(stage_modules) != len(indices):
        raise ValueError("pipeline rank %d runs stages %s, got %d modules" % (pp.get_local_rank(), indices, len(stage_modules)))
    stages = []
    for i, module in zip(indices, stage_modules):
        parallelize_module(module, mesh["tp"], tp_plan)
        stages.append(PipelineStage(module, i, NUM_STAGES, device, group=pp.get_group()))
    return ScheduleInterleaved1F1B(stages, n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
