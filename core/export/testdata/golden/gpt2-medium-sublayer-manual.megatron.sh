# pipeplan export (version 1): Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)
# model gpt2-medium: 51 layers; 4 pipeline devices, data parallel 1, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: zb-h1, 8 microbatches of 4; 166.234 ms per step, 192.5 samples/s (zb-h1)
# NOT EXACT: this runs 1f1b, split [0 17 35 49 51]; 190.118 ms per step, 168.3 samples/s (1f1b)
# note: Megatron-LM trains with 1F1B (or interleaved 1F1B), not zb-h1; the export runs 1f1b
#       instead of the planned zb-h1
# note: Megatron-LM cuts only between whole transformer layers, and keeps the final norm with
#       the output layer: the export splits at [embedding | block.8.attention |
#       block.17.attention | final_norm] instead of the planned [embedding | block.8.mlp |
#       block.17.mlp | lm_head]

# Launch on 4 GPUs: tensor 1 x pipeline 4 x data 1 (Megatron-LM derives the
# data-parallel size from the world size).
PIPEPLAN_ARGS=(
  --num-layers 24
  --seq-length 1024
  --micro-batch-size 4
  --global-batch-size 32  # 4 x 8 microbatches x data parallel 1
  --tensor-model-parallel-size 1
  --bf16
  --grad-reduce-in-bf16  # 16-bit gradients, as priced (--bf16 alone keeps fp32 main_grad buffers)
  # the loss: pipeplan priced PyTorch's unfused F.cross_entropy on fp32 logits (HuggingFace's); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)
  --pipeline-model-parallel-size 4
  --pipeline-model-parallel-layout "E,t*8|t*9|t*7|L"
  --recompute-activations  # selective: the attention core
  --no-check-for-nan-in-loss-and-grad  # the plan prices no NaN check (training.check_for_nan_in_grad off)
)
# This split needs --pipeline-model-parallel-layout: the older first/last-stage and
# virtual-stage arguments cannot express it.
# torchrun ... pretrain_gpt.py "${PIPEPLAN_ARGS[@]}" ...
