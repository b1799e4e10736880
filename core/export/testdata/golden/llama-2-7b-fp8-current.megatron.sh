# pipeplan export (version 1): Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)
# model llama-2-7b: 35 layers; 4 pipeline devices, data parallel 2, tensor parallel 1
# precision priced: fp8 (current scaling) products, bf16 elsewhere; mixed-fp32-grads: 16-bit weights, fp32 gradients, master weights and optimizer state; fp8 weights kept in fp8 only
# planned: 1f1b, 8 microbatches of 1; 933.354 ms per step, 17.14 samples/s (1f1b)

# Launch on 8 GPUs: tensor 1 x pipeline 4 x data 2 (Megatron-LM derives the
# data-parallel size from the world size).
PIPEPLAN_ARGS=(
  --num-layers 32
  --seq-length 4096
  --micro-batch-size 1
  --global-batch-size 16  # 1 x 8 microbatches x data parallel 2
  --tensor-model-parallel-size 1
  --bf16
  --fp8-format hybrid  # e4m3 forward, e5m2 gradients (Transformer Engine's default)
  --fp8-recipe tensorwise
  --fp8-param-gather  # fp8 weights without their 16-bit copy
  # gradients accumulated and all-reduced in fp32 main_grad buffers: --bf16's default
  # the loss: pipeplan priced PyTorch's unfused F.cross_entropy on fp32 logits (HuggingFace's); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)
  --pipeline-model-parallel-size 4
  --pipeline-model-parallel-layout "E,t*8|t*8|t*8|t*8,L"
  --overlap-grad-reduce  # priced: the gradient reduction during the last backward pass
  --no-check-for-nan-in-loss-and-grad  # the plan prices no NaN check (training.check_for_nan_in_grad off)
)
# Megatron-LM without --pipeline-model-parallel-layout, the same split:
#   replace the layout with --decoder-first-pipeline-num-layers 8 --decoder-last-pipeline-num-layers 8  (or neither: the even split)
# torchrun ... pretrain_gpt.py "${PIPEPLAN_ARGS[@]}" ...
