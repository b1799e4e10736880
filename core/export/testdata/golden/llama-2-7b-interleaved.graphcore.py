# -*- coding: utf-8 -*-
# pipeplan export (version 1): Graphcore IPU: Keras pipeline stages and popxl IPU mapping
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: interleaved:2, 16 microbatches of 1; 4.623 s per step, 3.461 samples/s (interleaved:2)
# NOT EXACT: this runs ipu, split [0 9 17 25 35]; not priced
# (and runs another precision than planned: see the notes)
# note: Graphcore's IPUs compute in fp16 or fp32, not bf16: plan with model.architecture.dtype
#       fp16 to price what the IPUs run
# note: Graphcore's pipelining runs its own schedule (forward stages on IPUs 0..P-1, backward
#       stages back down on the same IPUs: pipeplan's ipu schedule), with one stage per IPU in
#       pipeplan's pricing; the export gives the best split under ipu instead of the planned
#       interleaved:2
# note: STAGE_OF is keyed by pipeplan's layer names, which are not Keras layer names for an
#       architecture: rename them to your model's layers

P = 4  # IPUs in the pipeline: stage i on IPU i
GRADIENT_ACCUMULATION = 16  # microbatches per step
MICROBATCH_SIZE = 1

# The pipeline stage of every layer (all calls of a layer share its stage).
STAGE_OF = {
    "embedding": 0,
    "block.0": 0,
    "block.1": 0,
    "block.2": 0,
    "block.3": 0,
    "block.4": 0,
    "block.5": 0,
    "block.6": 0,
    "block.7": 0,
    "block.8": 1,
    "block.9": 1,
    "block.10": 1,
    "block.11": 1,
    "block.12": 1,
    "block.13": 1,
    "block.14": 1,
    "block.15": 1,
    "block.16": 2,
    "block.17": 2,
    "block.18": 2,
    "block.19": 2,
    "block.20": 2,
    "block.21": 2,
    "block.22": 2,
    "block.23": 2,
    "block.24": 3,
    "block.25": 3,
    "block.26": 3,
    "block.27": 3,
    "block.28": 3,
    "block.29": 3,
    "block.30": 3,
    "block.31": 3,
    "final_norm": 3,
    "lm_head": 3,
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
