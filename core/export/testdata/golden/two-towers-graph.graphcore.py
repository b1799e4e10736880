# -*- coding: utf-8 -*-
# pipeplan export (version 1): Graphcore IPU: Keras pipeline stages and popxl IPU mapping
# model two-towers: 6 layers; 2 pipeline devices, data parallel 1, tensor parallel 1
# planned: 1f1b, 4 microbatches of 1; 75.066 ms per step, 53.29 samples/s (1f1b)
# NOT EXACT: this runs ipu, split [0 3 6]; 75.082 ms per step, 53.27 samples/s (ipu)
# note: Graphcore's pipelining runs its own schedule (forward stages on IPUs 0..P-1, backward
#       stages back down on the same IPUs: pipeplan's ipu schedule); the export runs ipu instead
#       of the planned 1f1b
# note: the plan splits the model's graph into convex stages that are not contiguous in the
#       model's layer order: STAGE_OF gives every layer its stage, and every layer reads only
#       tensors of its own stage or earlier ones, as a pipeline's stages must
# note: Graphcore's pipeline has 3 stages on 2 IPUs; it wants at least twice as many
#       microbatches (gradient accumulation >= 6), has 4

P = 2  # IPUs in the pipeline: stage i on IPU i
GRADIENT_ACCUMULATION = 4  # microbatches per step
MICROBATCH_SIZE = 1

# The pipeline stage of every layer (all calls of a layer share its stage).
STAGE_OF = {
    "stem": 0,
    "tower_b.0": 0,
    "tower_b.1": 0,
    "tower_a.0": 1,
    "tower_a.1": 1,
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
