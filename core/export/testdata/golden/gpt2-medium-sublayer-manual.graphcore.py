# -*- coding: utf-8 -*-
# pipeplan export (version 1): Graphcore IPU: Keras pipeline stages and popxl IPU mapping
# model gpt2-medium: 51 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: zb-h1, 8 microbatches of 4; 166.234 ms per step, 192.5 samples/s (zb-h1)
# NOT EXACT: this runs ipu, split [0 18 36 50 51]; not priced
# (and runs another precision than planned: see the notes)
# note: the plan recomputes part of every block (recompute selective: the attention core), and
#       Graphcore's pipelining recomputes whole stages: the export sets no recomputation:
#       recompute in the pipeline yourself (IPUConfig allow_recompute with Keras's
#       set_pipelining_options recomputation_mode, and recomputation checkpoints where the plan
#       keeps activations) or keep the activations (more memory than planned)
# note: Graphcore's IPUs compute in fp16 or fp32, not bf16: plan with model.architecture.dtype
#       fp16 to price what the IPUs run
# note: Graphcore's pipelining runs its own schedule (forward stages on IPUs 0..P-1, backward
#       stages back down on the same IPUs: pipeplan's ipu schedule); the export runs ipu instead
#       of the planned zb-h1
# note: STAGE_OF is keyed by pipeplan's layer names, which are not Keras layer names for an
#       architecture: rename them to your model's layers
# note: Graphcore's pipeline has 7 stages on 4 IPUs; it wants at least twice as many
#       microbatches (gradient accumulation >= 14), has 8

P = 4  # IPUs in the pipeline: stage i on IPU i
GRADIENT_ACCUMULATION = 8  # microbatches per step
MICROBATCH_SIZE = 4

# The pipeline stage of every layer (all calls of a layer share its stage).
STAGE_OF = {
    "embedding": 0,
    "block.0.attention": 0,
    "block.0.mlp": 0,
    "block.1.attention": 0,
    "block.1.mlp": 0,
    "block.2.attention": 0,
    "block.2.mlp": 0,
    "block.3.attention": 0,
    "block.3.mlp": 0,
    "block.4.attention": 0,
    "block.4.mlp": 0,
    "block.5.attention": 0,
    "block.5.mlp": 0,
    "block.6.attention": 0,
    "block.6.mlp": 0,
    "block.7.attention": 0,
    "block.7.mlp": 0,
    "block.8.attention": 0,
    "block.8.mlp": 1,
    "block.9.attention": 1,
    "block.9.mlp": 1,
    "block.10.attention": 1,
    "block.10.mlp": 1,
    "block.11.attention": 1,
    "block.11.mlp": 1,
    "block.12.attention": 1,
    "block.12.mlp": 1,
    "block.13.attention": 1,
    "block.13.mlp": 1,
    "block.14.attention": 1,
    "block.14.mlp": 1,
    "block.15.attention": 1,
    "block.15.mlp": 1,
    "block.16.attention": 1,
    "block.16.mlp": 1,
    "block.17.attention": 1,
    "block.17.mlp": 2,
    "block.18.attention": 2,
    "block.18.mlp": 2,
    "block.19.attention": 2,
    "block.19.mlp": 2,
    "block.20.attention": 2,
    "block.20.mlp": 2,
    "block.21.attention": 2,
    "block.21.mlp": 2,
    "block.22.attention": 2,
    "block.22.mlp": 2,
    "block.23.attention": 2,
    "block.23.mlp": 2,
    "final_norm": 2,
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
