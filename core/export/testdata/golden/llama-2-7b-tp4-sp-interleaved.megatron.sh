# pipeplan export (version 1): Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 1, tensor parallel 4 with sequence parallelism
# precision priced: bf16; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state
# planned: interleaved:2, 8 microbatches of 1; 375.809 ms per step, 21.29 samples/s (interleaved:2)

# Launch on 16 GPUs: tensor 4 x pipeline 4 x data 1 (Megatron-LM derives the
# data-parallel size from the world size).
PIPEPLAN_ARGS=(
  --num-layers 32
  --seq-length 4096
  --micro-batch-size 1
  --global-batch-size 8  # 1 x 8 microbatches x data parallel 1
  --tensor-model-parallel-size 4
  --sequence-parallel
  --bf16
  --grad-reduce-in-bf16  # 16-bit gradients, as priced (--bf16 alone keeps fp32 main_grad buffers)
  # the loss: pipeplan priced PyTorch's unfused F.cross_entropy on fp32 logits (HuggingFace's); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)
  --pipeline-model-parallel-size 4
  --pipeline-model-parallel-layout "E,t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4,L"
  --no-check-for-nan-in-loss-and-grad  # the plan prices no NaN check (training.check_for_nan_in_grad off)
)
# Megatron-LM without --pipeline-model-parallel-layout, the same split:
#   replace the layout with --num-layers-per-virtual-pipeline-stage 4
# torchrun ... pretrain_gpt.py "${PIPEPLAN_ARGS[@]}" ...
