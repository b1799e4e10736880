package analytic

import (
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// DefaultAttention is the attention kernel a run that names none uses: FlashAttention-2
// (Flash), except where Transformer Engine runs a model with attention sinks.
//
// Transformer Engine's rule for learnable softmax: gpt-oss's sink per head is
// Megatron-Core's softmax_type "learnable", and Transformer Engine's
// get_attention_backend turns FlashAttention off for any softmax_type but "vanilla"
// (transformer_engine/pytorch/attention/dot_product_attention/utils.py, "Filter:
// Softmax type", from v2.8: use_flash_attention = False), leaving FusedAttention
// (cuDNN, which takes learnable softmax from cuDNN 9.13.1: transformer_engine/common/
// fused_attn/fused_attn.cpp) and the unfused fallback. So under the Megatron-style
// modes (cluster.Megatron and cluster.CUDAGraphs: Megatron-Core with Transformer
// Engine) such a model runs cuDNN's fused attention on every device, Hopper included
// (where a model without sinks gets the Flash default). A kernel the request names
// stays its own.
func DefaultAttention(a *arch.Arch, framework string) Attention {
	if a != nil && a.AttentionSinks && (framework == cluster.Megatron || framework == cluster.CUDAGraphs) {
		return CuDNN
	}
	return Flash
}
