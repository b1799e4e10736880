# pipeplan export (version 1): Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)
# model mixtral-8x7b-v0.1: 35 layers; 4 pipeline devices, data parallel 4, tensor parallel 1
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: 1f1b, 8 microbatches of 1; 1.101 s per step, 29.06 samples/s (1f1b)

# Launch on 16 GPUs: tensor 1 x pipeline 4 x data 4 (Megatron-LM derives the
# data-parallel size from the world size).
PIPEPLAN_ARGS=(
  --num-layers 32
  --seq-length 2048
  --micro-batch-size 1
  --global-batch-size 32  # 1 x 8 microbatches x data parallel 4
  --tensor-model-parallel-size 1
  --expert-model-parallel-size 4
  --expert-tensor-parallel-size 1
  --overlap-moe-expert-parallel-comm  # combined 1F1B: all-to-alls behind an adjacent microbatch
  --bf16
  --grad-reduce-in-bf16  # 16-bit gradients, as priced (--bf16 alone keeps fp32 main_grad buffers)
  # the loss: pipeplan priced PyTorch's unfused F.cross_entropy on fp32 logits (HuggingFace's); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)
  --pipeline-model-parallel-size 4
  --pipeline-model-parallel-layout "E,t*8|t*8|t*8|t*8,L"
  --overlap-grad-reduce  # priced: the gradient reduction during the last backward pass
  --no-check-for-nan-in-loss-and-grad  # the plan prices no NaN check (training.check_for_nan_in_grad off)
)
# Megatron-LM without --pipeline-model-parallel-layout, the same split:
#   replace the layout with --decoder-first-pipeline-num-layers 8 --decoder-last-pipeline-num-layers 8  (or neither: the even split)
# torchrun ... pretrain_gpt.py "${PIPEPLAN_ARGS[@]}" ...
