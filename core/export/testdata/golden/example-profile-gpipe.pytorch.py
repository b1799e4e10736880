# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)
# model gpt2-medium: 26 layers; 4 pipeline devices, data parallel 2, tensor parallel 1
# planned: gpipe, 8 microbatches of 8; 531.054 ms per step, 241 samples/s (gpipe)
# NOT EXACT: this runs gpipe, split [0 8 15 22 26]; not priced
# note: the layer names are used as module paths (as pipeplan_profile.py writes them); for
#       another profile, replace them with the paths of the modules that start each stage
# note: stages 0, 1, 2, 3 recompute their whole forward keeping only the stage's input, as
#       planned; the checkpoint wrappers keep each module's input (more memory than planned): to
#       keep only the stage's input, wrap the stage's module (its pipe.split_gm submodule) in
#       one checkpoint wrapper instead

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.pipelining import SplitPoint, pipeline, ScheduleGPipe

NUM_RANKS = 4  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 4
DATA_PARALLEL = 2  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one pipeline rank, splitting its blocks
N_MICROBATCHES = 8
MICROBATCH_SIZE = 8  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
SPLIT_SPEC = {
    "block.7": SplitPoint.BEGINNING,  # stage 1: block.7 .. block.13
    "block.14": SplitPoint.BEGINNING,  # stage 2: block.14 .. block.20
    "block.21": SplitPoint.BEGINNING,  # stage 3: block.21 .. head
}

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
STAGE_MODULES = [
    ["embed", "block.0", "block.1", "block.2", "block.3", "block.4", "block.5", "block.6"],
    ["block.7", "block.8", "block.9", "block.10", "block.11", "block.12", "block.13"],
    ["block.14", "block.15", "block.16", "block.17", "block.18", "block.19", "block.20"],
    ["block.21", "block.22", "block.23", "head"],
]

# Recomputation as planned (recompute full), stage by stage: "full" reruns the
# module's forward in the backward pass, keeping only its input; any other value names
# the parts of the block recomputed, in Megatron-LM's --recompute-modules names
# (core_attn: the attention core; see the notes: a wrapper cannot reach them).
RECOMPUTE = {
    "embed": "full",  # stage 0
    "block.0": "full",  # stage 0
    "block.1": "full",  # stage 0
    "block.2": "full",  # stage 0
    "block.3": "full",  # stage 0
    "block.4": "full",  # stage 0
    "block.5": "full",  # stage 0
    "block.6": "full",  # stage 0
    "block.7": "full",  # stage 1
    "block.8": "full",  # stage 1
    "block.9": "full",  # stage 1
    "block.10": "full",  # stage 1
    "block.11": "full",  # stage 1
    "block.12": "full",  # stage 1
    "block.13": "full",  # stage 1
    "block.14": "full",  # stage 2
    "block.15": "full",  # stage 2
    "block.16": "full",  # stage 2
    "block.17": "full",  # stage 2
    "block.18": "full",  # stage 2
    "block.19": "full",  # stage 2
    "block.20": "full",  # stage 2
    "block.21": "full",  # stage 3
    "block.22": "full",  # stage 3
    "block.23": "full",  # stage 3
    "head": "full",  # stage 3
}


def apply_recompute(model):
    """Wraps every module RECOMPUTE runs "full" in a checkpoint wrapper; call it before pipeline()."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    for path, part in RECOMPUTE.items():
        if part != "full":
            continue
        parent, _, name = path.rpartition(".")
        owner = model.get_submodule(parent) if parent else model
        setattr(owner, name, checkpoint_wrapper(owner.get_submodule(name)))
    return model


def stage_indices(rank):
    """The stage a rank runs: one per rank."""
    return [rank]


def device_mesh(device_type="cuda"):
    """All 8 ranks as a ("pp", "dp") device mesh.

    A rank's pipeline rank is mesh["pp"].get_local_rank() and its pipeline group
    mesh["pp"].get_group(): build's rank and group. Its stages' replicas are mesh["dp"]:
    wrap the stage modules for the gradient all-reduce (FSDP's fully_shard, or
    replicate).
    """
    return init_device_mesh(device_type, (NUM_RANKS, DATA_PARALLEL), mesh_dim_names=("pp", "dp"))


def build(model, example_microbatch, rank, device, group=None, loss_fn=None):
    """Splits model as planned and returns the schedule that runs this rank's stages.

    example_microbatch is one microbatch of inputs (a tuple of model(*args) arguments);
    loss_fn(output, target) is the training loss. Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    if not isinstance(example_microbatch, tuple):
        example_microbatch = (example_microbatch,)
    model = apply_recompute(model)  # the planned per-layer recomputation
    pipe = pipeline(model, mb_args=example_microbatch, split_spec=SPLIT_SPEC)
    if pipe.num_stages != NUM_STAGES:
        raise ValueError("the split gave %d stages, the plan has %d" % (pipe.num_stages, NUM_STAGES))
    stage = pipe.build_stage(rank, device, group)
    return ScheduleGPipe(stage, n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
