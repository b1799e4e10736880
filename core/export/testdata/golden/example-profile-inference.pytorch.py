# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)
# model gpt2-medium: 26 layers; 2 pipeline devices, data parallel 1, tensor parallel 1
# planned: inference, 4 microbatches of 8; 119.618 ms per step, 267.5 samples/s (inference)
# note: the layer names are used as module paths (as pipeplan_profile.py writes them); for
#       another profile, replace them with the paths of the modules that start each stage

import torch
from torch.distributed.pipelining import SplitPoint, pipeline, ScheduleGPipe

NUM_RANKS = 2  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 2
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one pipeline rank, splitting its blocks
N_MICROBATCHES = 4
MICROBATCH_SIZE = 8  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
SPLIT_SPEC = {
    "block.14": SplitPoint.BEGINNING,  # stage 1: block.14 .. head
}

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
STAGE_MODULES = [
    ["embed", "block.0", "block.1", "block.2", "block.3", "block.4", "block.5", "block.6", "block.7", "block.8", "block.9", "block.10", "block.11", "block.12", "block.13"],
    ["block.14", "block.15", "block.16", "block.17", "block.18", "block.19", "block.20", "block.21", "block.22", "block.23", "head"],
]


def stage_indices(rank):
    """The stage a rank runs: one per rank."""
    return [rank]


def build(model, example_microbatch, rank, device, group=None):
    """Splits model as planned and returns the schedule that runs this rank's stages.

    example_microbatch is one microbatch of inputs (a tuple of model(*args) arguments);
    there is no loss_fn: the schedule runs forward passes only (inference). Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    if not isinstance(example_microbatch, tuple):
        example_microbatch = (example_microbatch,)
    pipe = pipeline(model, mb_args=example_microbatch, split_spec=SPLIT_SPEC)
    if pipe.num_stages != NUM_STAGES:
        raise ValueError("the split gave %d stages, the plan has %d" % (pipe.num_stages, NUM_STAGES))
    stage = pipe.build_stage(rank, device, group)
    return ScheduleGPipe(stage, n_microbatches=N_MICROBATCHES)
