# pipeplan export (version 1): Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 2, tensor parallel 2
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: 1f1b, 16 microbatches of 1; 2.891 s per step, 11.07 samples/s (1f1b)

# Launch on 16 GPUs: tensor 2 x pipeline 4 x data 2 (Megatron-LM derives the
# data-parallel size from the world size).
PIPEPLAN_ARGS=(
  --num-layers 32
  --seq-length 4096
  --micro-batch-size 1
  --global-batch-size 32  # 1 x 16 microbatches x data parallel 2
  --tensor-model-parallel-size 2
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
