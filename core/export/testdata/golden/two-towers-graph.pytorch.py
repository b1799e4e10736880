# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)
# model two-towers: 6 layers; 2 pipeline devices, data parallel 1, tensor parallel 1
# planned: 1f1b, 4 microbatches of 1; 75.066 ms per step, 53.29 samples/s (1f1b)
# note: the layer names are used as module paths (as pipeplan_profile.py writes them); for
#       another profile, replace them with the paths of the modules that start each stage
# note: the plan splits the model's graph into convex stages that are not contiguous in the
#       model's layer order: STAGE_MODULES holds the layers in the plan's order (a topological
#       order in which each stage is contiguous), and CUT_TENSORS lists the tensors crossing
#       each cut, which the stage before it must send on (tensors a later stage reads pass
#       through the stages between)
# note: pipeline()'s split points cut the traced program where a module starts, which makes
#       stages contiguous in the program's order: a graph split is built by hand instead, one
#       module per stage running its STAGE_MODULES in order, taking the tensors of the cut
#       before it (the microbatch on the first stage) and returning those of the cut after it
#       (the output on the last), wrapped in PipelineStage by build_stages

import torch
from torch.distributed.pipelining import PipelineStage, Schedule1F1B

NUM_RANKS = 2  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 2
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one pipeline rank, splitting its blocks
N_MICROBATCHES = 4
MICROBATCH_SIZE = 1  # samples per microbatch

# No SPLIT_SPEC: the stages are not contiguous in the model's program order, which
# pipeline()'s split points cut; build each stage by hand (STAGE_MODULES, build_stages).

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
STAGE_MODULES = [
    ["stem", "tower_b.0", "tower_b.1"],
    ["tower_a.0", "tower_a.1", "head"],
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


def stage_indices(rank):
    """The stage a rank runs: one per rank."""
    return [rank]


def build_stages(stage_modules, rank, device, group=None, loss_fn=None):
    """Returns the schedule that runs this rank's stages, built by hand.

    stage_modules holds one module per stage of stage_indices(rank): stage i's runs the
    modules STAGE_MODULES[i] in that order, its forward taking the tensors CUT_TENSORS[i - 1]
    (the microbatch on stage 0) as positional arguments and returning those of
    CUT_TENSORS[i] as a tuple (the output on the last stage).
    loss_fn(output, target) is the training loss.
    Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    indices = stage_indices(rank)
    if len(stage_modules) != len(indices):
        raise ValueError("rank %d runs stages %s, got %d modules" % (rank, indices, len(stage_modules)))
    stages = [PipelineStage(m, i, NUM_STAGES, device, group=group) for i, m in zip(indices, stage_modules)]
    return Schedule1F1B(stages[0], n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
