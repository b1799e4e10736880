package arch

import "fmt"

// Parameter counts follow the HuggingFace modules: GPT2LMHeadModel, BertForMaskedLM,
// MPTForCausalLM (LLM Foundry's, as the MPT checkpoints' own code holds it),
// LlamaForCausalLM (MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM alike),
// MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM,
// DeepseekV3ForCausalLM, Llama4ForCausalLM (its text model) and GptOssForCausalLM.

func (a *Arch) h() int64 { return int64(a.HiddenSize) }

// normParams is one norm: LayerNorm has a weight and a bias, RMSNorm (and MPT's
// LayerNorm without biases) only a weight.
func (a *Arch) normParams() int64 { return a.normWidthParams(a.h()) }

// normWidthParams is one norm over n features.
func (a *Arch) normWidthParams(n int64) int64 {
	if a.RMSNorm() || a.NoNormBias {
		return n
	}
	return 2 * n
}

// EmbeddingWeightParams is the token embedding matrix, V x h (the one an LM head may tie).
func (a *Arch) EmbeddingWeightParams() int64 { return int64(a.VocabSize) * a.h() }

// EmbeddingParams is the embedding layer: tokens, plus learned positions (GPT-2, BERT),
// plus BERT's token types and its embedding LayerNorm.
func (a *Arch) EmbeddingParams() int64 {
	n := a.EmbeddingWeightParams()
	if a.LearnedPositions() {
		n += int64(a.MaxPositions) * a.h()
	}
	if a.Family == BERT {
		n += int64(a.TypeVocabSize)*a.h() + a.normParams()
	}
	return n
}

// AttentionParams is one block's attention part: its norm (before it in pre-norm blocks,
// after it in BERT), the query, key, value and output projections and their biases, and
// Qwen3's query and key norms or gpt-oss's sinks. Latent attention (DeepSeek's
// DeepseekV3Attention) holds q_a_proj (h x QLoRARank) with its norm and q_b_proj
// (QLoRARank x heads*(nope+rope)), or one q_proj (h x heads*(nope+rope)) without a
// query rank; kv_a_proj_with_mqa (h x (KVLoRARank + rope)) with its norm, kv_b_proj
// (KVLoRARank x heads*(nope+v)) and o_proj (heads*v x h).
func (a *Arch) AttentionParams() int64 {
	h, q, kv := a.h(), a.QDim(), a.KVDim()
	if a.MLA() {
		heads := int64(a.NumHeads)
		n := a.normParams()
		if r := int64(a.QLoRARank); r > 0 {
			n += h*r + r + r*q
		} else {
			n += h * q
		}
		r := int64(a.KVLoRARank)
		n += h*(r+int64(a.QKRopeHeadDim)) + r + r*heads*int64(a.QKNopeHeadDim+a.VHeadDim) + a.VDim()*h
		return n
	}
	n := a.normParams() + h*(q+2*kv) + q*h
	if a.QKVBias {
		n += q + 2*kv
	}
	if a.OutBias {
		n += h
	}
	if a.QKNorm {
		n += 2 * int64(a.HeadDim)
	}
	if a.QKLayerNorm { // MPT's q_ln (d_model wide) and k_ln (kv_n_heads x head_dim)
		n += a.normWidthParams(q) + a.normWidthParams(kv)
	}
	if a.AttentionSinks {
		n += int64(a.NumHeads)
	}
	return n
}

// mlpParams is one MLP of inner width f: two projections around a GELU, or gate, up and
// down projections (SwiGLU), with their biases when the model has them.
func (a *Arch) mlpParams(f int64) int64 {
	h := a.h()
	if a.GatedMLP() {
		n := 3 * h * f
		if a.MLPBias {
			n += 2*f + h
		}
		return n
	}
	n := 2 * h * f
	if a.MLPBias {
		n += f + h
	}
	return n
}

// ExpertParams is one MLP: the dense MLP, or one routed expert of a mixture.
func (a *Arch) ExpertParams() int64 { return a.mlpParams(int64(a.IntermediateSize)) }

// SharedExpertParams is a mixture's shared expert(s) (a SwiGLU of SharedExpertSize,
// without biases) and Qwen2-MoE's gate on it; 0 without.
func (a *Arch) SharedExpertParams() int64 {
	if a.SharedExpertSize == 0 {
		return 0
	}
	n := 3 * a.h() * int64(a.SharedExpertSize)
	if a.SharedExpertGate {
		n += a.h()
	}
	return n
}

// RouterParams is a mixture's router (h x experts, and a bias per expert where the model
// has one); 0 for a dense MLP.
func (a *Arch) RouterParams() int64 {
	n := a.h() * int64(a.NumExperts)
	if a.RouterBias {
		n += int64(a.NumExperts)
	}
	return n
}

// MLPParams is the MLP part of a mixture-of-experts block (its norm, the router, every
// routed expert and the shared ones), or of a dense model's block.
func (a *Arch) MLPParams() int64 {
	if a.MoE() {
		return a.normParams() + a.RouterParams() + int64(a.NumExperts)*a.ExpertParams() + a.SharedExpertParams()
	}
	return a.normParams() + a.ExpertParams()
}

// DenseMLPParams is the MLP part of a dense block (its norm and one MLP of DenseWidth).
func (a *Arch) DenseMLPParams() int64 { return a.normParams() + a.mlpParams(int64(a.DenseWidth())) }

// LayerMLPParams is block i's MLP part.
func (a *Arch) LayerMLPParams(i int) int64 {
	if a.MoELayer(i) {
		return a.MLPParams()
	}
	return a.DenseMLPParams()
}

// BlockParams is one transformer block (a mixture-of-experts block in a mixture).
func (a *Arch) BlockParams() int64 { return a.AttentionParams() + a.MLPParams() }

// MTPParams is the multi-token prediction modules (DeepSeek-V3's MTP, HuggingFace
// checkpoint layers num_hidden_layers and on): per module the enorm and hnorm, eh_proj
// (2h x h), one mixture-of-experts block and shared_head's norm; the embedding and the
// output head are the main model's. 0 without.
func (a *Arch) MTPParams() int64 {
	if a.MTPLayers == 0 {
		return 0
	}
	per := 3*a.normParams() + 2*a.h()*a.h() + a.AttentionParams() + a.MLPParams()
	return int64(a.MTPLayers) * per
}

// FinalNormParams is the norm after the last block (none in BERT, whose blocks end in one).
func (a *Arch) FinalNormParams() int64 {
	if a.Family == BERT {
		return 0
	}
	return a.normParams()
}

// HeadParams is the LM head without the embedding matrix it ties to: for GPT-2 and Llama
// nothing when tied, else the V x h projection; for BERT's masked-LM head its transform
// (dense, LayerNorm) and the decoder bias, plus the decoder matrix when untied.
func (a *Arch) HeadParams() int64 {
	var n int64
	if a.Family == BERT {
		n = a.h()*a.h() + a.h() + a.normParams() + int64(a.VocabSize)
	}
	if !a.TiedEmbeddings {
		n += a.EmbeddingWeightParams()
	}
	return n
}

// blocksParams sums the blocks, each with its own MLP (mixture or dense).
func (a *Arch) blocksParams() int64 {
	moe := int64(a.MoELayers())
	dense := int64(a.NumLayers) - moe
	return int64(a.NumLayers)*a.AttentionParams() + moe*a.MLPParams() + dense*a.DenseMLPParams()
}

// Params is the number of distinct parameters of the main model (a tied matrix counted
// once), as model cards state it: without multi-token prediction modules (MTPParams;
// DeepSeek-V3's "671B" is the main model, its checkpoint's 685B adds the 14B MTP
// module with a copy of the embedding and the head).
func (a *Arch) Params() int64 {
	return a.EmbeddingParams() + a.blocksParams() + a.FinalNormParams() + a.HeadParams()
}

// ActiveParams is the parameters one token uses: for a mixture of experts only
// ExpertsPerToken routed experts (and the shared ones) in each mixture block; Params
// otherwise. Both the embedding and the head count.
func (a *Arch) ActiveParams() int64 {
	if !a.MoE() {
		return a.Params()
	}
	idle := int64(a.NumExperts-a.ExpertsPerToken) * a.ExpertParams()
	return a.Params() - int64(a.MoELayers())*idle
}

func describe(a *Arch) string {
	s := fmt.Sprintf("%s: %d layers, hidden %d, %d heads", a.ModelType, a.NumLayers, a.HiddenSize, a.NumHeads)
	if a.NumKVHeads != a.NumHeads {
		s += fmt.Sprintf(" (%d kv)", a.NumKVHeads)
	}
	s += fmt.Sprintf(", mlp %d", a.IntermediateSize)
	if a.MoE() {
		s += fmt.Sprintf(" x %d experts (%d per token)", a.NumExperts, a.ExpertsPerToken)
		if a.SharedExpertSize > 0 {
			s += fmt.Sprintf(", shared %d", a.SharedExpertSize)
		}
		if n := a.MoELayers(); n < a.NumLayers {
			s += fmt.Sprintf(" in %d layers (dense mlp %d)", n, a.DenseWidth())
		}
	}
	if a.MLA() {
		s += fmt.Sprintf(", latent attention (kv rank %d)", a.KVLoRARank)
	}
	if a.MTPLayers > 0 {
		s += fmt.Sprintf(", %d mtp", a.MTPLayers)
	}
	s += fmt.Sprintf(", vocab %d", a.VocabSize)
	if a.TiedEmbeddings {
		s += ", tied embeddings"
	}
	return s + fmt.Sprintf(", %s parameters", humanCount(a.Params()))
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprint(n)
}
