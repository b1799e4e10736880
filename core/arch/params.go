package arch

import "fmt"

// Parameter counts follow the HuggingFace modules: GPT2LMHeadModel, BertForMaskedLM,
// LlamaForCausalLM (MistralForCausalLM, Qwen2ForCausalLM alike) and MixtralForCausalLM.

func (a *Arch) h() int64 { return int64(a.HiddenSize) }

// normParams is one norm: LayerNorm has a weight and a bias, RMSNorm only a weight.
func (a *Arch) normParams() int64 {
	if a.RMSNorm() {
		return a.h()
	}
	return 2 * a.h()
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
// after it in BERT), the query, key, value and output projections and their biases.
func (a *Arch) AttentionParams() int64 {
	h, q, kv := a.h(), a.QDim(), a.KVDim()
	n := a.normParams() + h*(q+2*kv) + q*h
	if a.QKVBias {
		n += q + 2*kv
	}
	if a.OutBias {
		n += h
	}
	return n
}

// ExpertParams is one MLP (one expert of a mixture): two projections around a GELU, or
// gate, up and down projections (SwiGLU), with their biases when the model has them.
func (a *Arch) ExpertParams() int64 {
	h, f := a.h(), int64(a.IntermediateSize)
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

// RouterParams is a mixture's router (h x experts, no bias); 0 for a dense MLP.
func (a *Arch) RouterParams() int64 { return a.h() * int64(a.NumExperts) }

// MLPParams is one block's MLP part: its norm, its MLP or all experts and the router.
func (a *Arch) MLPParams() int64 {
	if a.MoE() {
		return a.normParams() + a.RouterParams() + int64(a.NumExperts)*a.ExpertParams()
	}
	return a.normParams() + a.ExpertParams()
}

// BlockParams is one transformer block.
func (a *Arch) BlockParams() int64 { return a.AttentionParams() + a.MLPParams() }

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

// Params is the number of distinct parameters (a tied matrix counted once).
func (a *Arch) Params() int64 {
	return a.EmbeddingParams() + int64(a.NumLayers)*a.BlockParams() + a.FinalNormParams() + a.HeadParams()
}

// ActiveParams is the parameters one token uses: for a mixture of experts only
// ExpertsPerToken experts per block; Params otherwise.
func (a *Arch) ActiveParams() int64 {
	if !a.MoE() {
		return a.Params()
	}
	idle := int64(a.NumExperts-a.ExpertsPerToken) * a.ExpertParams()
	return a.Params() - int64(a.NumLayers)*idle
}

func describe(a *Arch) string {
	s := fmt.Sprintf("%s: %d layers, hidden %d, %d heads", a.ModelType, a.NumLayers, a.HiddenSize, a.NumHeads)
	if a.NumKVHeads != a.NumHeads {
		s += fmt.Sprintf(" (%d kv)", a.NumKVHeads)
	}
	s += fmt.Sprintf(", mlp %d", a.IntermediateSize)
	if a.MoE() {
		s += fmt.Sprintf(" x %d experts (%d per token)", a.NumExperts, a.ExpertsPerToken)
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
