# -*- coding: utf-8 -*-
# pipeplan export (version 1): PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)
# model gpt2-medium: 51 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: zb-h1, 8 microbatches of 4; 166.234 ms per step, 192.5 samples/s (zb-h1)
# NOT EXACT: this runs zb-h1, split [0 18 36 50 51]; not priced
# note: torch's ScheduleInterleavedZeroBubble runs the zero-bubble paper's ZB1P schedule, an
#       automatically scheduled cousin of ZB-H1 with the same memory; pipeplan prices it as
#       zb-h1
# note: the head reuses the embedding matrix, and they are on different stages: each stage holds
#       its copy, so their gradients must be summed each step
# note: the plan recomputes every block's attention core (selective recomputation), which a
#       checkpoint wrapper cannot reach (it recomputes whole modules): the export recomputes
#       nothing; run each block's attention core (scaled_dot_product_attention with the math
#       backend, or your eager attention) under torch.utils.checkpoint.checkpoint in the block's
#       forward, or keep those activations (more memory than planned)

import torch
from torch.distributed.pipelining import SplitPoint, pipeline, ScheduleInterleavedZeroBubble

NUM_RANKS = 4  # pipeline ranks (devices) of one pipeline
NUM_STAGES = 4
DATA_PARALLEL = 1  # replicas of the pipeline
TENSOR_PARALLEL = 1  # devices of one pipeline rank, splitting its blocks
PARAM_DTYPE = torch.bfloat16  # model.to(PARAM_DTYPE) for the passes; precision mixed was priced:
# the optimizer must step fp32 master copies of the weights (torch.optim keeps none of bf16
# parameters), with 16-bit gradients
# Selective recomputation as planned (each block's attention core) is not expressed:
# a checkpoint wrapper recomputes whole modules; see the notes.
N_MICROBATCHES = 8
MICROBATCH_SIZE = 4  # samples per microbatch

# A split point at the beginning of the first module of every stage after the first.
SPLIT_SPEC = {
    "transformer.h.8.ln_2": SplitPoint.BEGINNING,  # stage 1: block.8.mlp .. block.17.attention
    "transformer.h.17.ln_2": SplitPoint.BEGINNING,  # stage 2: block.17.mlp .. final_norm
    "lm_head": SplitPoint.BEGINNING,  # stage 3: lm_head
}

# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).
# A stage that starts or ends inside a block needs that block's forward split by hand.
STAGE_MODULES = [
    ["transformer.wte", "transformer.wpe", "transformer.h.0.ln_1", "transformer.h.0.attn", "transformer.h.0.ln_2", "transformer.h.0.mlp", "transformer.h.1.ln_1", "transformer.h.1.attn", "transformer.h.1.ln_2", "transformer.h.1.mlp", "transformer.h.2.ln_1", "transformer.h.2.attn", "transformer.h.2.ln_2", "transformer.h.2.mlp", "transformer.h.3.ln_1", "transformer.h.3.attn", "transformer.h.3.ln_2", "transformer.h.3.mlp", "transformer.h.4.ln_1", "transformer.h.4.attn", "transformer.h.4.ln_2", "transformer.h.4.mlp", "transformer.h.5.ln_1", "transformer.h.5.attn", "transformer.h.5.ln_2", "transformer.h.5.mlp", "transformer.h.6.ln_1", "transformer.h.6.attn", "transformer.h.6.ln_2", "transformer.h.6.mlp", "transformer.h.7.ln_1", "transformer.h.7.attn", "transformer.h.7.ln_2", "transformer.h.7.mlp", "transformer.h.8.ln_1", "transformer.h.8.attn"],
    ["transformer.h.8.ln_2", "transformer.h.8.mlp", "transformer.h.9.ln_1", "transformer.h.9.attn", "transformer.h.9.ln_2", "transformer.h.9.mlp", "transformer.h.10.ln_1", "transformer.h.10.attn", "transformer.h.10.ln_2", "transformer.h.10.mlp", "transformer.h.11.ln_1", "transformer.h.11.attn", "transformer.h.11.ln_2", "transformer.h.11.mlp", "transformer.h.12.ln_1", "transformer.h.12.attn", "transformer.h.12.ln_2", "transformer.h.12.mlp", "transformer.h.13.ln_1", "transformer.h.13.attn", "transformer.h.13.ln_2", "transformer.h.13.mlp", "transformer.h.14.ln_1", "transformer.h.14.attn", "transformer.h.14.ln_2", "transformer.h.14.mlp", "transformer.h.15.ln_1", "transformer.h.15.attn", "transformer.h.15.ln_2", "transformer.h.15.mlp", "transformer.h.16.ln_1", "transformer.h.16.attn", "transformer.h.16.ln_2", "transformer.h.16.mlp", "transformer.h.17.ln_1", "transformer.h.17.attn"],
    ["transformer.h.17.ln_2", "transformer.h.17.mlp", "transformer.h.18.ln_1", "transformer.h.18.attn", "transformer.h.18.ln_2", "transformer.h.18.mlp", "transformer.h.19.ln_1", "transformer.h.19.attn", "transformer.h.19.ln_2", "transformer.h.19.mlp", "transformer.h.20.ln_1", "transformer.h.20.attn", "transformer.h.20.ln_2", "transformer.h.20.mlp", "transformer.h.21.ln_1", "transformer.h.21.attn", "transformer.h.21.ln_2", "transformer.h.21.mlp", "transformer.h.22.ln_1", "transformer.h.22.attn", "transformer.h.22.ln_2", "transformer.h.22.mlp", "transformer.h.23.ln_1", "transformer.h.23.attn", "transformer.h.23.ln_2", "transformer.h.23.mlp", "transformer.ln_f"],
    ["lm_head"],
]


def stage_indices(rank):
    """The stages a rank runs: rank, rank + NUM_RANKS, ... (looped, as ScheduleInterleavedZeroBubble expects)."""
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
    return ScheduleInterleavedZeroBubble(stages, n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)
