// Package arch reads a transformer's architecture from a HuggingFace config.json and
// describes it in the terms that shape its cost: sizes, heads, vocabulary, experts, norms,
// biases, tied embeddings. It counts parameters exactly as the HuggingFace implementations
// hold them. Supported: GPT-2, BERT, and the Llama family (Llama, Mistral, Qwen2, Qwen3),
// with its mixtures of experts: Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2 and V3
// (multi-head latent attention, shared experts, dense first layers, multi-token
// prediction), Llama 4 (interleaved MoE layers, a shared expert), gpt-oss and Gemma; MPT;
// and NVIDIA's Nemotron-4 and Minitron (model_type nemotron).
//
// Well-known configs are bundled (Bundled, BundledNames), so nothing is fetched at run
// time.
package arch

// Family is a group of architectures with one layer structure.
type Family string

// The supported families.
const (
	// GPT2: learned positions, pre-LayerNorm blocks, GELU MLP, biases everywhere, causal.
	GPT2 Family = "gpt2"
	// BERT: learned positions and token types, post-LayerNorm blocks, GELU MLP, biases,
	// bidirectional attention, a masked-language-model head.
	BERT Family = "bert"
	// Llama: rotary positions, pre-RMSNorm blocks, SwiGLU MLP (or a mixture of SwiGLU
	// experts), grouped-query attention, causal; Llama, Mistral, Qwen2, Mixtral and Gemma
	// (whose gate runs GELU's tanh form and whose RMSNorm multiplies by 1 + weight: the
	// same parameters and kernels).
	Llama Family = "llama"
	// MPT: MosaicML's decoder (LLM Foundry's MPTForCausalLM, and transformers'
	// MptForCausalLM): pre-LayerNorm blocks (LLM Foundry's low-precision LayerNorm), one
	// fused Wqkv projection, torch's exact GELU MLP, learned positions or ALiBi, biases
	// everywhere or (no_bias) nowhere, norms' included.
	MPT Family = "mpt"
	// Nemotron: NVIDIA's Nemotron-4 and Minitron (transformers' NemotronForCausalLM,
	// models/nemotron/modeling_nemotron.py): rotary positions over partial_rotary_factor
	// of each head (0.5 by default), pre-LayerNorm blocks whose LayerNorm1P keeps a
	// weight and a bias (it multiplies by weight + 1), grouped-query attention, an
	// UNGATED MLP (up_proj and down_proj around squared ReLU, hidden_act relu2),
	// optional attention and MLP biases (attention_bias, mlp_bias; none by default),
	// untied embeddings by default, causal.
	Nemotron Family = "nemotron"
)

// Arch is a transformer's architecture.
type Arch struct {
	// Name is a label (the bundled name or the file name).
	Name string `json:"name,omitempty"`
	// ModelType is config.json's model_type ("gpt2", "llama", "mixtral", ...).
	ModelType string `json:"model_type"`
	// Family decides the layer structure.
	Family Family `json:"family"`

	// HiddenSize is the width h of the residual stream.
	HiddenSize int `json:"hidden_size"`
	// NumLayers is the number of transformer blocks.
	NumLayers int `json:"num_layers"`
	// NumHeads is the number of query heads a; NumKVHeads the number of key/value heads
	// (equal for multi-head attention, fewer for grouped-query attention).
	NumHeads   int `json:"num_heads"`
	NumKVHeads int `json:"num_kv_heads"`
	// HeadDim is the width of one head (usually HiddenSize / NumHeads).
	HeadDim int `json:"head_dim"`
	// IntermediateSize is the MLP's inner width f (per routed expert for mixtures of
	// experts: DeepSeek's and Qwen's moe_intermediate_size).
	IntermediateSize int `json:"intermediate_size"`
	// VocabSize is the vocabulary V.
	VocabSize int `json:"vocab_size"`
	// MaxPositions is the longest sequence; for learned positions also the size of the
	// position embedding table.
	MaxPositions int `json:"max_positions"`
	// TypeVocabSize is BERT's number of token types (segment embeddings).
	TypeVocabSize int `json:"type_vocab_size,omitempty"`
	// NumExperts and ExpertsPerToken describe a mixture-of-experts MLP (0 for a dense MLP).
	NumExperts      int `json:"num_experts,omitempty"`
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	// DenseIntermediateSize is the MLP width of a mixture's dense layers (DeepSeek's
	// intermediate_size, Llama 4's intermediate_size_mlp); 0: IntermediateSize.
	DenseIntermediateSize int `json:"dense_intermediate_size,omitempty"`
	// SharedExpertSize is the inner width of the shared expert(s) every token passes
	// through beside its routed ones (DeepSeek: n_shared_experts x moe_intermediate_size;
	// Qwen2-MoE: shared_expert_intermediate_size; Llama 4: intermediate_size); 0: none.
	// SharedExpertGate: Qwen2-MoE's sigmoid gate on it (h x 1).
	SharedExpertSize int  `json:"shared_expert_size,omitempty"`
	SharedExpertGate bool `json:"shared_expert_gate,omitempty"`
	// RouterBias: the router has one bias per expert (gpt-oss's router bias,
	// DeepSeek-V3's e_score_correction_bias).
	RouterBias bool `json:"router_bias,omitempty"`
	// RouteGroups and GroupsPerToken: group-limited routing (DeepSeek's n_group and
	// topk_group with topk_method group_limited_greedy or noaux_tc): the experts are in
	// RouteGroups equal groups and a token's experts come from at most GroupsPerToken of
	// them, which DeepSeek lays out one group per device or node to bound the devices or
	// nodes a token reaches (DeepSeek-V2 paper, section 2.2.2, device-limited routing;
	// DeepSeek-V3 Technical Report, section 2.1.2, node-limited routing). 0: unlimited.
	RouteGroups    int `json:"route_groups,omitempty"`
	GroupsPerToken int `json:"groups_per_token,omitempty"`
	// FirstDenseLayers are dense before the first mixture (DeepSeek's
	// first_k_dense_replace); MoEEvery makes only every n-th layer after them a mixture
	// (layer i when (i+1) % n == 0: Llama 4's interleave_moe_layer_step, Qwen's
	// decoder_sparse_step); 0 or 1: every layer.
	FirstDenseLayers int `json:"first_dense_layers,omitempty"`
	MoEEvery         int `json:"moe_every,omitempty"`
	// Multi-head latent attention (DeepSeek-V2, V3; KVLoRARank > 0): queries through a
	// rank-QLoRARank bottleneck (0: a plain projection), keys and values from one
	// KVLoRARank-wide latent plus a QKRopeHeadDim-wide rotary key shared by the heads;
	// each head's query and key are QKNopeHeadDim + QKRopeHeadDim wide (HeadDim), its
	// value VHeadDim.
	QLoRARank     int `json:"q_lora_rank,omitempty"`
	KVLoRARank    int `json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim int `json:"qk_rope_head_dim,omitempty"`
	QKNopeHeadDim int `json:"qk_nope_head_dim,omitempty"`
	VHeadDim      int `json:"v_head_dim,omitempty"`
	// MTPLayers is DeepSeek-V3's multi-token prediction depth (num_nextn_predict_layers):
	// each module is two norms, a 2h x h projection, one mixture-of-experts block and a
	// norm, sharing the embedding and the output head with the main model.
	MTPLayers int `json:"mtp_layers,omitempty"`
	// LocalWindow limits the keys some layers attend to: with LocalChunked, attention
	// within chunks of LocalWindow tokens (Llama 4's attention_chunk_size), else a
	// sliding window of the LocalWindow latest tokens (gpt-oss's sliding_window). Layer i
	// is local unless (i+1) % GlobalEvery == 0 (Llama 4: every 4th layer global; gpt-oss:
	// every 2nd). 0: every layer attends to the whole sequence.
	LocalWindow  int  `json:"local_window,omitempty"`
	LocalChunked bool `json:"local_chunked,omitempty"`
	GlobalEvery  int  `json:"global_every,omitempty"`
	// QKNorm: RMSNorm weights on each query and key head (Qwen3); AttentionSinks: one
	// learned sink logit per head (gpt-oss).
	QKNorm         bool `json:"qk_norm,omitempty"`
	AttentionSinks bool `json:"attention_sinks,omitempty"`
	// GLUClamp: the gated activation clamps its inputs first (gpt-oss's swiglu_limit:
	// the gate at most the limit, the linear half within plus or minus it).
	GLUClamp bool `json:"glu_clamp,omitempty"`
	// RotaryScaled: the rotary embedding scales its cos and sin by an attention factor
	// other than 1 (YaRN's mscale, 0.1 ln(factor) + 1 where the config names no mscale:
	// gpt-oss's rope_scaling, yarn with factor 32).
	RotaryScaled bool `json:"rotary_scaled,omitempty"`
	// Activation is GPT-2's activation_function (default gelu_new, HuggingFace's
	// GPT2Config) or Nemotron's hidden_act (default relu2): the analytic model costs
	// every activation alike but where eager PyTorch runs gelu_new or relu2 unfused
	// (package analytic).
	Activation string `json:"activation,omitempty"`
	// EmbeddingScale: the token embedding's output is multiplied by sqrt(hidden_size)
	// before the first block (Gemma's normalizer, GemmaModel.forward).
	EmbeddingScale bool `json:"embedding_scale,omitempty"`
	// RotaryFraction is the part of each head's width the rotary embedding turns
	// (Nemotron's partial_rotary_factor); 0 means all of it (every other rotary model).
	RotaryFraction float64 `json:"rotary_fraction,omitempty"`

	// NoNormBias: the LayerNorms have a weight and no bias (MPT's no_bias removes every
	// bias, the norms' too: MPTModel.__init__).
	NoNormBias bool `json:"no_norm_bias,omitempty"`
	// NoPositionTable: a family with learned positions has no position table (MPT with
	// ALiBi or learned_pos_emb false). ALiBi: attention scores biased by distance (MPT's
	// attn_config.alibi), which no parameter holds.
	NoPositionTable bool `json:"no_position_table,omitempty"`
	ALiBi           bool `json:"alibi,omitempty"`
	// QKLayerNorm: a LayerNorm over all query heads and one over all key heads (MPT's
	// attn_config.qk_ln); ClipQKV: the fused query/key/value output is clamped
	// (attn_config.clip_qkv).
	QKLayerNorm bool `json:"qk_layer_norm,omitempty"`
	ClipQKV     bool `json:"clip_qkv,omitempty"`

	// TiedEmbeddings: the LM head reuses the input embedding matrix.
	TiedEmbeddings bool `json:"tied_embeddings"`
	// QKVBias and OutBias: biases on the query/key/value and output projections;
	// MLPBias on the MLP's projections.
	QKVBias bool `json:"qkv_bias"`
	OutBias bool `json:"out_bias"`
	MLPBias bool `json:"mlp_bias"`
	// Dropout: the model applies dropout in training (attention and residual), which keeps
	// masks for the backward pass.
	Dropout bool `json:"dropout"`
}

// Causal reports whether attention is causal (decoders) rather than bidirectional.
func (a *Arch) Causal() bool { return a.Family != BERT }

// RMSNorm reports whether the norms are RMSNorm (one weight vector) rather than LayerNorm
// (weight and bias).
func (a *Arch) RMSNorm() bool { return a.Family == Llama }

// GatedMLP reports whether the MLP is gated (SwiGLU: gate, up and down projections)
// rather than two projections around a GELU.
func (a *Arch) GatedMLP() bool { return a.Family == Llama }

// LearnedPositions reports whether positions are a learned embedding table (GPT-2, BERT,
// MPT without ALiBi) rather than rotary (Llama, Nemotron) or ALiBi's biases.
func (a *Arch) LearnedPositions() bool { return !a.Rotary() && !a.NoPositionTable }

// Rotary reports whether queries and keys are turned by a rotary embedding (Llama,
// Nemotron).
func (a *Arch) Rotary() bool { return a.Family == Llama || a.Family == Nemotron }

// MoE reports whether the MLP is a mixture of experts (in some layers at least).
func (a *Arch) MoE() bool { return a.NumExperts > 0 }

// MoELayer reports whether block i's MLP is a mixture of experts: every block of a
// mixture, but the first FirstDenseLayers and those MoEEvery skips.
func (a *Arch) MoELayer(i int) bool {
	if !a.MoE() || i < a.FirstDenseLayers {
		return false
	}
	return (i+1)%max(1, a.MoEEvery) == 0
}

// MoELayers counts the blocks whose MLP is a mixture of experts.
func (a *Arch) MoELayers() int {
	n := 0
	for i := range a.NumLayers {
		if a.MoELayer(i) {
			n++
		}
	}
	return n
}

// DenseWidth is the MLP width of a dense block: DenseIntermediateSize in a mixture that
// has one, else IntermediateSize.
func (a *Arch) DenseWidth() int {
	if a.MoE() && a.DenseIntermediateSize > 0 {
		return a.DenseIntermediateSize
	}
	return a.IntermediateSize
}

// LocalLayer reports whether block i attends within LocalWindow only.
func (a *Arch) LocalLayer(i int) bool {
	return a.LocalWindow > 0 && (a.GlobalEvery < 1 || (i+1)%a.GlobalEvery != 0)
}

// MLA reports whether attention is multi-head latent attention (DeepSeek-V2, V3).
func (a *Arch) MLA() bool { return a.KVLoRARank > 0 }

// QDim is the width of all query heads together (NumHeads * HeadDim).
func (a *Arch) QDim() int64 { return int64(a.NumHeads) * int64(a.HeadDim) }

// KVDim is the width of all key (or value) heads together (NumKVHeads * HeadDim).
func (a *Arch) KVDim() int64 { return int64(a.NumKVHeads) * int64(a.HeadDim) }

// VDim is the width of all value heads together: KVDim, or with latent attention
// NumHeads * VHeadDim.
func (a *Arch) VDim() int64 {
	if a.MLA() {
		return int64(a.NumHeads) * int64(a.VHeadDim)
	}
	return a.KVDim()
}

// Description is a one-line summary for people.
func (a *Arch) Description() string {
	return describe(a)
}
