# -*- coding: utf-8 -*-
# pipeplan export (version 1): Graphcore IPU: Keras pipeline stages and popxl IPU mapping
# model gpt2-medium: 26 layers; 2 pipeline devices, data parallel 1, tensor parallel 1
# planned: inference, 4 microbatches of 8; 119.618 ms per step, 267.5 samples/s (inference)

P = 2  # IPUs in the pipeline: stage i on IPU i
GRADIENT_ACCUMULATION = 4  # microbatches per step
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
    "block.7": 0,
    "block.8": 0,
    "block.9": 0,
    "block.10": 0,
    "block.11": 0,
    "block.12": 0,
    "block.13": 0,
    "block.14": 1,
    "block.15": 1,
    "block.16": 1,
    "block.17": 1,
    "block.18": 1,
    "block.19": 1,
    "block.20": 1,
    "block.21": 1,
    "block.22": 1,
    "block.23": 1,
    "head": 1,
}
DEVICE_MAPPING = [0, 1]  # stage i on IPU DEVICE_MAPPING[i]


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
