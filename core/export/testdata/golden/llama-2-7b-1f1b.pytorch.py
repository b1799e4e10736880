# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining and tensor parallel (PyTorch 2.6 or later)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 2, tensor parallel 2
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: 1f1b, 16 microbatches of 1; 2.891 s per step, 11.07 samples/s (1f1b)
# note: torch.distributed.pipelining does not split a stage over devices, and the plan runs
#       every stage tensor-parallel over 2 devices: build_tensor_parallel shards each stage with
#       parallelize_module (DTensor) over the "tp" dimension of a device mesh and builds its
#       PipelineStage on the "pp" group. Split the model by hand (STAGE_MODULES): pipeline()'s
#       traced stages are graphs, not the nn.Linear modules parallelize_module shards. tp_plan
#       is your modules' plan: ColwiseParallel for the attention's query, key and value and the
#       MLP's input projections, RowwiseParallel for their output projections

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.pipelining import PipelineStage, SplitPoint, Schedule1F1B
from torch.distributed.tensor.parallel import parallelize_module

NUM_RANKS = 4  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 4
DATA_PARALLEL = 2  # replicas of the pipeline
TENSOR_PARALLEL = 2  # devices of one pipeline rank, splitting its blocks
PARAM_DTYPE = torch.bfloat16  # model.to(PARAM_DTYPE) for the passes; precision mixed was priced:
# the optimizer must step fp32 master copies of the weights (torch.optim keeps none of bf16
# parameters), with 16-bit gradients
N_MICROBATCHES = 16
MICROBATCH_SIZE = 1  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
# (pipeline()'s tracer takes it; with tensor parallelism, split by hand: STAGE_MODULES.)
SPLIT_SPEC = {
    "model.layers.8": SplitPoint.BEGINNING,  # stage 1: block.8 .. block.15
    "model.layers.16": SplitPoint.BEGINNING,  # stage 2: block.16 .. block.23
    "model.layers.24": SplitPoint.BEGINNING,  # stage 3: block.24 .. lm_head
}

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
STAGE_MODULES = [
    ["model.embed_tokens", "model.layers.0", "model.layers.1", "model.layers.2", "model.layers.3", "model.layers.4", "model.layers.5", "model.layers.6", "model.layers.7"],
    ["model.layers.8", "model.layers.9", "model.layers.10", "model.layers.11", "model.layers.12", "model.layers.13", "model.layers.14", "model.layers.15"],
    ["model.layers.16", "model.layers.17", "model.layers.18", "model.layers.19", "model.layers.20", "model.layers.21", "model.layers.22", "model.layers.23"],
    ["model.layers.24", "model.layers.25", "model.layers.26", "model.layers.27", "model.layers.28", "model.layers.29", "model.layers.30", "model.layers.31", "model.norm", "lm_head"],
]


def stage_indices(rank):
    """The stage a rank runs: one per rank."""
    return [rank]


def device_mesh(device_type="cuda"):
    """All 16 ranks as a ("pp", "dp", "tp") device mesh.

    The last dimension varies fastest: a tensor-parallel group, mesh["tp"], is on
    neighbouring ranks (inside a node). A rank's pipeline rank is
    mesh["pp"].get_local_rank() and its pipeline group mesh["pp"].get_group(). Its
    stages' replicas are mesh["dp"]: wrap the stage modules for the gradient all-reduce
    (FSDP's fully_shard, or replicate).
    """
    return init_device_mesh(device_type, (NUM_RANKS, DATA_PARALLEL, TENSOR_PARALLEL), mesh_dim_names=("pp", "dp", "tp"))


def build_tensor_parallel(stage_modules, mesh, device, tp_plan, data_parallel=None, loss_fn=None):
    """Shards this rank's stages over mesh["tp"] and returns the schedule that runs them.

    stage_modules holds one module per stage of
    stage_indices(mesh["pp"].get_local_rank()), each holding only that stage's
    STAGE_MODULES (split by hand). tp_plan maps module paths inside a stage module
    (wildcards allowed) to ColwiseParallel(), RowwiseParallel() or SequenceParallel()
    (torch.distributed.tensor.parallel). data_parallel(module, dp_mesh) wraps each
    sharded stage module for the gradient all-reduce over the DATA_PARALLEL replicas
    (FSDP's fully_shard, or replicate). loss_fn(output, target) is the training loss.
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
        if data_parallel is not None:
            module = data_parallel(module, mesh["dp"])
        stages.append(PipelineStage(module, i, NUM_STAGES, device, group=pp.get_group()))
    return Schedule1F1B(stages[0], n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
