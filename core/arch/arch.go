// Package arch reads a transformer's architecture from a HuggingFace config.json and
// describes it in the terms that shape its cost: sizes, heads, vocabulary, experts, norms,
// biases, tied embeddings. It counts parameters exactly as the HuggingFace implementations
// hold them. Supported: GPT-2, BERT, and the Llama family (Llama, Mistral, Qwen2, and the
// mixture-of-experts Mixtral).
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
	// experts), grouped-query attention, causal; Llama, Mistral, Qwen2 and Mixtral.
	Llama Family = "llama"
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
	// IntermediateSize is the MLP's inner width f (per expert for mixtures of experts).
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

// LearnedPositions reports whether positions are a learned embedding table (GPT-2, BERT)
// rather than rotary.
func (a *Arch) LearnedPositions() bool { return a.Family != Llama }

// MoE reports whether the MLP is a mixture of experts.
func (a *Arch) MoE() bool { return a.NumExperts > 0 }

// QDim is the width of all query heads together (NumHeads * HeadDim).
func (a *Arch) QDim() int64 { return int64(a.NumHeads) * int64(a.HeadDim) }

// KVDim is the width of all key (or value) heads together (NumKVHeads * HeadDim).
func (a *Arch) KVDim() int64 { return int64(a.NumKVHeads) * int64(a.HeadDim) }

// Description is a one-line summary for people.
func (a *Arch) Description() string {
	return describe(a)
}
