# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: interleaved:2, 16 microbatches of 1; 4.623 s per step, 3.461 samples/s (interleaved:2)

import torch
from torch.distributed.pipelining import SplitPoint, pipeline, ScheduleInterleaved1F1B

NUM_RANKS = 4  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 8
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one pipeline rank, splitting its blocks
PARAM_DTYPE = torch.bfloat16  # model.to(PARAM_DTYPE) for the passes; precision mixed was priced:
# the optimizer must step fp32 master copies of the weights (torch.optim keeps none of bf16
# parameters), with 16-bit gradients
N_MICROBATCHES = 16
MICROBATCH_SIZE = 1  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
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


def build(model, example_microbatch, rank, device, group=None, loss_fn=None):
    """Splits model as planned and returns the schedule that runs this rank's stages.

    example_microbatch is one microbatch of inputs (a tuple of model(*args) arguments);
    loss_fn(output, target) is the training loss. Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    if not isinstance(example_microbatch, tuple):
        example_microbatch = (example_microbatch,)
    pipe = pipeline(model, mb_args=example_microbatch, split_spec=SPLIT_SPEC)
    if pipe.num_stages != NUM_STAGES:
        raise ValueError("the split gave %d stages, the plan has %d" % (pipe.num_stages, NUM_STAGES))
    stages = [pipe.build_stage(i, device, group) for i in stage_indices(rank)]
    return ScheduleInterleaved1F1B(stages, n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
