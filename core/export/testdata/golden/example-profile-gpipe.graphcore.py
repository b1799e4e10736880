# -*- coding: utf-8 -*-
# pipeplan export (version 1): Graphcore IPU: Keras pipeline stages and popxl IPU mapping
# model gpt2-medium: 26 layers; 4 pipeline devices, data parallel 2, tensor parallel 1
# planned: gpipe, 8 microbatches of 8; 531.054 ms per step, 241 samples/s (gpipe)
# NOT EXACT: this runs ipu, split [0 8 15 22 26]; not priced
# note: the plan recomputes every layer from its input (recompute full), which Graphcore's
#       pipelining runs only with a recomputation checkpoint at each layer's input: the export
#       sets no recomputation: recompute in the pipeline yourself (IPUConfig allow_recompute
#       with Keras's set_pipelining_options recomputation_mode, and recomputation checkpoints
#       where the plan keeps activations) or keep the activations (more memory than planned)
# note: Graphcore's pipelining runs its own schedule (forward stages on IPUs 0..P-1, backward
#       stages back down on the same IPUs: pipeplan's ipu schedule); the export runs ipu instead
#       of the planned gpipe
# note: Graphcore's pipeline has 7 stages on 4 IPUs; it wants at least twice as many
#       microbatches (gradient accumulation >= 14), has 8

P = 4  # IPUs in the pipeline: stage i on IPU i
GRADIENT_ACCUMULATION = 8  # microbatches per step
MICROBATCH_SIZE = 8

# The pipeline stage of every layer (all calls of a layer share its stage).
STAGE_OF = {
    "embed": 0,
    "block.0": 0,
    "block.1": 0,
    "block.2": 0,
    "block.3": 0,
    "block.4": 0,
    "block.5": 0,
    "block.6": 0,
    "block.7": 1,
    "block.8": 1,
    "block.9": 1,
    "block.10": 1,
    "block.11": 1,
    "block.12": 1,
    "block.13": 1,
    "block.14": 2,
    "block.15": 2,
    "block.16": 2,
    "block.17": 2,
    "block.18": 2,
    "block.19": 2,
    "block.20": 2,
    "block.21": 3,
    "block.22": 3,
    "block.23": 3,
    "head": 3,
}
DEVICE_MAPPING = [0, 1, 2, 3]  # stage i on IPU DEVICE_MAPPING[i]


def assign_keras_stages(model):
    """Applies the split to a Keras model built in an IPUStrategy scope (TensorFlow 2 for IPUs)."""
    assignments = model.get_pipeline_stage_assignment()
    for a in assignments:
        if a.layer.name not in STAGE_OF:
            raise KeyError("layer %r is not in pipeplan's plan" % a.layer.name)
        a.pipeline_stage = STAGE_OF[a.layer.name]
    model.set_pipeline_stage_assignment(assignments)
    model.set_pipelining_options(
        gradient_accumulation_steps_per_replica=GRADIENT_ACCUMULATION,
        device_mapping=DEVICE_MAPPING,
    )


# popxl: build each layer's graphs in popxl.ipu(IPU_OF[layer]); inside
# addons.pipelined_execution, run its forward in p.stage(forward_stage(layer)) and its
# backward in p.stage(backward_stage(layer)), on that IPU. The last IPU runs its forward,
# the loss and its backward in one stage: 2P-1 stages in all.
IPU_OF = dict(STAGE_OF)


def forward_stage(layer):
    return IPU_OF[layer]


def backward_stage(layer):
    return 2 * P - 2 - IPU_OF[layer]
