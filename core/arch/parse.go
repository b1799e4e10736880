package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"pipeplan/core/model"
)

// Bounds on sizes: far beyond any real model, and small enough that every count and byte
// figure derived from them stays exact in int64 and float64.
const (
	maxHidden  = 1 << 17
	maxLayers  = 1 << 12
	maxHeads   = 1 << 12
	maxInner   = 1 << 20
	maxVocab   = 1 << 22
	maxPos     = 1 << 24
	maxTypes   = 1 << 10
	maxExperts = 1 << 10
	maxMTP     = 1 << 4
	// maxParams bounds the total parameter count (2^50, a thousand trillion).
	maxParams = 1 << 50
)

// modelTypes maps config.json's model_type to a family.
var modelTypes = map[string]Family{
	"gpt2":        GPT2,
	"bert":        BERT,
	"llama":       Llama,
	"mistral":     Llama,
	"qwen2":       Llama,
	"qwen3":       Llama,
	"mixtral":     Llama,
	"qwen2_moe":   Llama,
	"qwen3_moe":   Llama,
	"deepseek_v2": Llama,
	"deepseek_v3": Llama,
	"llama4":      Llama,
	"llama4_text": Llama,
	"gpt_oss":     Llama,
	"gemma":       Llama,
	"mpt":         MPT,
	"nemotron":    Nemotron,
}

// architectureTypes maps an "architectures" entry's prefix to a model_type, for configs
// without model_type.
var architectureTypes = []struct{ prefix, modelType string }{
	{"GPT2", "gpt2"}, {"Bert", "bert"}, {"Llama4", "llama4"}, {"Llama", "llama"}, {"Mistral", "mistral"},
	{"Qwen2Moe", "qwen2_moe"}, {"Qwen3Moe", "qwen3_moe"}, {"Qwen2", "qwen2"}, {"Qwen3", "qwen3"},
	{"Mixtral", "mixtral"}, {"DeepseekV2", "deepseek_v2"}, {"DeepseekV3", "deepseek_v3"}, {"GptOss", "gpt_oss"},
	{"MPT", "mpt"}, {"Mpt", "mpt"},
	// Gemma 2 and 3 (sliding windows, soft-capping, four norms a block) are other models,
	// not supported: named so that the Gemma prefix does not take them.
	{"Gemma2", "gemma2"}, {"Gemma3", "gemma3"}, {"Gemma", "gemma"},
	// NemotronH (the hybrid Mamba-Transformer) is another model, not supported: named so
	// that the Nemotron prefix does not take it.
	{"NemotronH", "nemotron_h"}, {"Nemotron", "nemotron"},
}

// ModelTypes lists the supported model_type values, sorted.
func ModelTypes() []string {
	names := make([]string, 0, len(modelTypes))
	for k := range modelTypes {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// MaxConfigBytes bounds a config.json (1 MiB): real ones are a few kilobytes. Front ends
// that read a file check its size against it before reading it.
const MaxConfigBytes = 1 << 20

// Parse reads a HuggingFace config.json. Fields that do not shape cost are ignored; the
// ones that do are checked, and every problem is reported as a model.FieldError naming the
// config field ("num_attention_heads: must divide hidden_size (4096), got 30"). A key
// given twice is an error (encoding/json would keep the last), as is a number written as
// a string; null means what it means to HuggingFace: the field's default.
func Parse(data []byte) (*Arch, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("config.json: is %d bytes; a config.json is at most %d (1 MiB)", len(data), MaxConfigBytes)
	}
	// A UTF-8 byte order mark, as some Windows editors write, is not part of the JSON.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	raw, err := topLevel(data)
	if err != nil {
		return nil, err
	}
	f := &fields{raw: raw}
	a := f.parse()
	if err := f.es.Err(); err != nil {
		return nil, err
	}
	return a, nil
}

// topLevel decodes a JSON object into its keys and their raw values, refusing a key given
// twice.
func topLevel(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	switch {
	case err != nil:
		return nil, fmt.Errorf("config.json: not a JSON object: %v", err)
	case t == nil:
		return nil, fmt.Errorf("config.json: must be a JSON object, got null")
	case t != json.Delim('{'):
		return nil, fmt.Errorf("config.json: not a JSON object")
	}
	raw := map[string]json.RawMessage{}
	var es model.Errors
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("config.json: not a JSON object: %v", err)
		}
		key := t.(string) // object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("config.json: not a JSON object: %v", err)
		}
		if _, dup := raw[key]; dup {
			path := key
			if path == "" {
				path = `""` // the empty key, named
			}
			es.Add(path, "is given twice (a key must appear once in config.json)")
		}
		raw[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, fmt.Errorf("config.json: not a JSON object: %v", err)
	}
	off := dec.InputOffset()
	if rest := bytes.TrimLeft(data[off:], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("config.json: unexpected data after the JSON object at byte %d", len(data)-len(rest))
	}
	if len(es) > 0 {
		return nil, es
	}
	return raw, nil
}

type fields struct {
	raw map[string]json.RawMessage
	es  model.Errors
}

func (f *fields) parse() *Arch {
	a := &Arch{}
	a.ModelType = f.modelType()
	if a.ModelType == "" {
		return a
	}
	a.Family = modelTypes[a.ModelType]
	if r, ok := f.raw["text_config"]; ok && a.ModelType == "llama4" && string(bytes.TrimSpace(r)) != "null" {
		// Llama 4's config.json nests the language model's fields (Llama4TextConfig) in
		// text_config beside the vision encoder's: the text model is what is costed.
		sub, err := topLevel(r)
		if err != nil {
			fe, ok := model.AsFieldErrors(err)
			if !ok {
				f.es.Add("text_config", "%s", strings.TrimPrefix(err.Error(), "config.json: "))
			}
			for _, e := range fe {
				f.es.Add("text_config."+e.Path, "%s", e.Reason)
			}
			return a
		}
		inner := &fields{raw: sub}
		inner.llama(a)
		inner.activation()
		if len(inner.es) == 0 {
			inner.check(a)
		}
		for _, e := range inner.es {
			f.es.Add("text_config."+e.Path, "%s", e.Reason)
		}
		return a
	}
	switch a.Family {
	case GPT2:
		f.gpt2(a)
	case BERT:
		f.bert(a)
	case Llama:
		f.llama(a)
	case MPT:
		f.mpt(a)
	case Nemotron:
		f.nemotron(a)
	}
	f.activation()
	if len(f.es) == 0 {
		f.check(a)
	}
	return a
}

// activations are the names HuggingFace's ACT2FN knows (transformers/activations.py).
// pipeplan costs every elementwise activation alike (one pass over the MLP's inner
// width, its input kept for backward), so the name is checked, not used.
var activations = []string{
	"gelu", "gelu_10", "gelu_accurate", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
	"laplace", "leaky_relu", "linear", "mish", "prelu", "quick_gelu", "relu", "relu2", "relu6",
	"sigmoid", "silu", "swish", "tanh", "xielu",
}

// activation checks hidden_act (BERT, Llama), hidden_activation (Gemma) and
// activation_function (GPT-2).
func (f *fields) activation() {
	for _, name := range []string{"hidden_act", "hidden_activation", "activation_function"} {
		s, ok := f.str(name)
		if ok && !slices.Contains(activations, s) {
			f.es.Add(name, "unknown activation %q; HuggingFace's are %s", s, strings.Join(activations, ", "))
		}
	}
}

func (f *fields) modelType() string {
	if s, ok := f.str("model_type"); ok {
		if _, known := modelTypes[s]; !known {
			f.es.Add("model_type", "unsupported model type %q; supported: %s", s, strings.Join(ModelTypes(), ", "))
			return ""
		}
		return s
	}
	var archs []string
	if r, ok := f.raw["architectures"]; ok && json.Unmarshal(r, &archs) != nil {
		f.es.Add("architectures", "must be an array of strings")
		return ""
	}
	for _, name := range archs {
		for _, t := range architectureTypes {
			if strings.HasPrefix(name, t.prefix) {
				if _, known := modelTypes[t.modelType]; !known {
					f.es.Add("architectures", "unsupported architecture %q and no model_type; supported model types: %s", name, strings.Join(ModelTypes(), ", "))
					return ""
				}
				return t.modelType
			}
		}
	}
	if len(archs) > 0 {
		f.es.Add("architectures", "unsupported architecture %q and no model_type; supported model types: %s", archs[0], strings.Join(ModelTypes(), ", "))
	} else {
		f.es.Add("model_type", "is missing (and no architectures entry names the model); supported: %s", strings.Join(ModelTypes(), ", "))
	}
	return ""
}

// gpt2 reads GPT2Config: n_embd, n_layer, n_head, n_inner (null: 4 * n_embd),
// n_positions, vocab_size; the HuggingFace aliases hidden_size, num_hidden_layers,
// num_attention_heads and max_position_embeddings are accepted too.
func (f *fields) gpt2(a *Arch) {
	a.HiddenSize = f.required("n_embd", "hidden_size")
	a.NumLayers = f.required("n_layer", "num_hidden_layers")
	a.NumHeads = f.required("n_head", "num_attention_heads")
	a.NumKVHeads = a.NumHeads
	a.IntermediateSize = f.optional(4*a.HiddenSize, "n_inner", "intermediate_size")
	a.MaxPositions = f.optional(1024, "n_positions", "max_position_embeddings")
	a.VocabSize = f.required("vocab_size")
	a.TiedEmbeddings = f.boolean("tie_word_embeddings", true)
	a.QKVBias, a.OutBias, a.MLPBias = true, true, true
	a.Dropout = f.anyPositive(0.1, "attn_pdrop", "resid_pdrop", "embd_pdrop")
	a.Activation = "gelu_new"
	if s, ok := f.str("activation_function"); ok {
		a.Activation = s
	}
	if a.NumHeads > 0 {
		a.HeadDim = a.HiddenSize / a.NumHeads
	}
}

// mpt reads MPTConfig (LLM Foundry's llmfoundry/models/mpt/configuration_mpt.py at
// v0.4.0; transformers' MptConfig has the same fields): d_model, n_heads, n_layers,
// expansion_ratio (4; the MLP is int(d_model x expansion_ratio) wide, or
// ffn_config.ffn_hidden_size), max_seq_len (2048), vocab_size (50368), no_bias (false:
// every linear layer and LayerNorm has a bias; true: none has), learned_pos_emb (true),
// tie_word_embeddings (true), resid_pdrop and emb_pdrop (0), norm_type
// (low_precision_layernorm or layernorm: the same parameters), attn_config (attn_type,
// kv_n_heads, attn_impl, alibi, qk_ln, clip_qkv, attn_pdrop; rope is refused) and
// ffn_config (ffn_type mptmlp: torch's exact GELU between two projections). The
// position table exists when learned_pos_emb is true and alibi false: LLM Foundry up to
// v0.2.0 made it only without ALiBi, and the ALiBi checkpoints (MPT-7B, MPT-30B, whose
// config.json says learned_pos_emb true) hold none, as transformers' MptModel has none.
func (f *fields) mpt(a *Arch) {
	a.HiddenSize = f.required("d_model")
	a.NumLayers = f.required("n_layers")
	a.NumHeads = f.required("n_heads")
	a.NumKVHeads = a.NumHeads
	a.MaxPositions = f.optional(2048, "max_seq_len")
	a.VocabSize = f.optional(50368, "vocab_size")
	a.TiedEmbeddings = f.boolean("tie_word_embeddings", true)
	bias := !f.boolean("no_bias", false)
	a.QKVBias, a.OutBias, a.MLPBias, a.NoNormBias = bias, bias, bias, !bias
	a.Activation = "gelu"
	a.Dropout = f.anyPositive(0, "resid_pdrop", "emb_pdrop")
	learned := f.boolean("learned_pos_emb", true)
	if s, ok := f.str("norm_type"); ok && s != "low_precision_layernorm" && s != "layernorm" {
		f.es.Add("norm_type", "%q is not modelled; supported: low_precision_layernorm, layernorm", s)
	}
	ratio := 4.0
	if r, ok := f.raw["expansion_ratio"]; ok && string(bytes.TrimSpace(r)) != "null" {
		ratio = f.number(r, "expansion_ratio")
		if !(ratio > 0 && ratio <= maxInner) {
			f.es.Add("expansion_ratio", "must be above 0 and at most %d, got %s", maxInner, bytes.TrimSpace(r))
			ratio = 0
		}
	}
	a.IntermediateSize = int(float64(a.HiddenSize) * ratio)

	attn := f.sub("attn_config")
	switch s, _ := attn.str("attn_type"); s {
	case "", "multihead_attention":
	case "multiquery_attention":
		a.NumKVHeads = 1
	case "grouped_query_attention":
		a.NumKVHeads = attn.required("kv_n_heads")
	default:
		attn.es.Add("attn_type", "%q is not modelled; supported: multihead_attention, grouped_query_attention, multiquery_attention", s)
	}
	if s, ok := attn.str("attn_impl"); ok && s != "torch" && s != "flash" && s != "triton" {
		attn.es.Add("attn_impl", "unknown attention implementation %q; LLM Foundry's are torch, flash and triton", s)
	}
	a.ALiBi = attn.boolean("alibi", false)
	a.QKLayerNorm = attn.boolean("qk_ln", false)
	if r, ok := attn.raw["clip_qkv"]; ok && string(bytes.TrimSpace(r)) != "null" {
		c := attn.number(r, "clip_qkv")
		if c < 0 {
			attn.es.Add("clip_qkv", "must be a positive number or null, got %s", bytes.TrimSpace(r))
		}
		a.ClipQKV = c > 0 // LLM Foundry clamps when clip_qkv is truthy
	}
	if attn.boolean("rope", false) {
		attn.es.Add("rope", "rotary positions in MPT are not modelled")
	}
	a.Dropout = a.Dropout || attn.anyPositive(0, "attn_pdrop")
	f.adopt("attn_config", attn)

	ffn := f.sub("ffn_config")
	if s, ok := ffn.str("ffn_type"); ok && s != "mptmlp" {
		ffn.es.Add("ffn_type", "%q is not modelled; supported: mptmlp (two projections around torch's exact GELU)", s)
	}
	if _, ok := ffn.raw["ffn_hidden_size"]; ok {
		a.IntermediateSize = ffn.optional(a.IntermediateSize, "ffn_hidden_size")
	}
	f.adopt("ffn_config", ffn)

	a.NoPositionTable = a.ALiBi || !learned
	if a.NumHeads > 0 {
		a.HeadDim = a.HiddenSize / a.NumHeads
	}
}

// nemotron reads NemotronConfig (transformers' models/nemotron/configuration_nemotron.py):
// hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads (default the
// query heads), head_dim (default hidden_size / heads), intermediate_size (the ungated
// MLP's up_proj width), vocab_size, max_position_embeddings (4096), hidden_act (relu2),
// partial_rotary_factor (0.5), attention_bias and mlp_bias (false), attention_dropout
// (0), tie_word_embeddings (false). NemotronLayerNorm1P is an nn.LayerNorm with its
// weight and bias (modeling_nemotron.py).
func (f *fields) nemotron(a *Arch) {
	a.HiddenSize = f.required("hidden_size")
	a.NumLayers = f.required("num_hidden_layers")
	a.NumHeads = f.required("num_attention_heads")
	a.NumKVHeads = f.optional(a.NumHeads, "num_key_value_heads")
	a.IntermediateSize = f.required("intermediate_size")
	a.MaxPositions = f.optional(4096, "max_position_embeddings")
	a.VocabSize = f.required("vocab_size")
	a.TiedEmbeddings = f.boolean("tie_word_embeddings", false)
	a.Dropout = f.anyPositive(0, "attention_dropout")
	a.QKVBias = f.boolean("attention_bias", false)
	a.OutBias = a.QKVBias
	a.MLPBias = f.boolean("mlp_bias", false)
	a.Activation = "relu2"
	if s, ok := f.str("hidden_act"); ok {
		a.Activation = s
	}
	f.headDim(a, 0, true)
	a.RotaryFraction = 0.5
	if r, ok := f.raw["partial_rotary_factor"]; ok && string(bytes.TrimSpace(r)) != "null" {
		n := len(f.es)
		a.RotaryFraction = f.number(r, "partial_rotary_factor")
		if len(f.es) == n && !(a.RotaryFraction > 0 && a.RotaryFraction <= 1) {
			f.es.Add("partial_rotary_factor", "must be above 0 and at most 1, got %s", bytes.TrimSpace(r))
			a.RotaryFraction = 0.5
		}
	}
}

// headDim reads head_dim, by default def, or where def is 0 hidden_size / heads, which
// with divides the heads must then divide (LlamaConfig's and NemotronConfig's default;
// Gemma's is a constant, 256, that asks nothing of hidden_size).
func (f *fields) headDim(a *Arch, def int, divides bool) {
	if def == 0 && a.NumHeads > 0 {
		def = a.HiddenSize / a.NumHeads
		if _, given := f.raw["head_dim"]; !given && divides && a.HiddenSize%a.NumHeads != 0 {
			f.es.Add("num_attention_heads", "must divide hidden_size (%d) when head_dim is not given, got %d", a.HiddenSize, a.NumHeads)
		}
	}
	a.HeadDim = f.optional(def, "head_dim")
}

// sub reads a nested object (MPT's attn_config, ffn_config) as fields of its own: an
// absent or null one is empty; errors go to f under name (adopt).
func (f *fields) sub(name string) *fields {
	r, ok := f.raw[name]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return &fields{raw: map[string]json.RawMessage{}}
	}
	m, err := topLevel(r)
	if err != nil {
		if fe, ok := model.AsFieldErrors(err); ok {
			for _, e := range fe {
				f.es.Add(name+"."+e.Path, "%s", e.Reason)
			}
		} else {
			f.es.Add(name, "must be a JSON object")
		}
		return &fields{raw: map[string]json.RawMessage{}}
	}
	return &fields{raw: m}
}

// adopt moves a nested object's errors to f, their paths under name.
func (f *fields) adopt(name string, sub *fields) {
	for _, e := range sub.es {
		f.es.Add(name+"."+e.Path, "%s", e.Reason)
	}
}

// number reads a JSON number (not a string), 0 with an error otherwise.
func (f *fields) number(r json.RawMessage, name string) float64 {
	var n json.Number
	if isString(r) || json.Unmarshal(r, &n) != nil {
		f.es.Add(name, "must be a number, got %s", bytes.TrimSpace(r))
		return 0
	}
	v, err := n.Float64()
	if err != nil || math.IsInf(v, 0) {
		f.es.Add(name, "must be a number, got %s", n)
		return 0
	}
	return v
}

// bert reads BertConfig (BertForMaskedLM: the decoder ties to the word embeddings unless
// tie_word_embeddings is false).
func (f *fields) bert(a *Arch) {
	a.HiddenSize = f.required("hidden_size")
	a.NumLayers = f.required("num_hidden_layers")
	a.NumHeads = f.required("num_attention_heads")
	a.NumKVHeads = a.NumHeads
	a.IntermediateSize = f.required("intermediate_size")
	a.MaxPositions = f.optional(512, "max_position_embeddings")
	a.TypeVocabSize = f.optional(2, "type_vocab_size")
	a.VocabSize = f.required("vocab_size")
	a.TiedEmbeddings = f.boolean("tie_word_embeddings", true)
	a.QKVBias, a.OutBias, a.MLPBias = true, true, true
	a.Dropout = f.anyPositive(0.1, "hidden_dropout_prob", "attention_probs_dropout_prob")
	if a.NumHeads > 0 {
		a.HeadDim = a.HiddenSize / a.NumHeads
	}
}

// llama reads LlamaConfig, MistralConfig, Qwen2Config and MixtralConfig. Biases follow the
// implementations: Llama's attention_bias (all four projections) and mlp_bias; Qwen2
// always has query/key/value biases and no others; Mistral and Mixtral have none.
func (f *fields) llama(a *Arch) {
	a.HiddenSize = f.required("hidden_size")
	a.NumLayers = f.required("num_hidden_layers")
	a.NumHeads = f.required("num_attention_heads")
	a.NumKVHeads = f.optional(a.NumHeads, "num_key_value_heads")
	a.IntermediateSize = f.required("intermediate_size")
	a.MaxPositions = f.optional(0, "max_position_embeddings")
	a.VocabSize = f.required("vocab_size")
	a.TiedEmbeddings = f.boolean("tie_word_embeddings", false)
	a.Dropout = f.anyPositive(0, "attention_dropout")
	switch a.ModelType {
	case "gemma":
		f.headDim(a, 256, false) // GemmaConfig's head_dim
	case "deepseek_v2", "deepseek_v3":
		// Latent attention's heads have their own widths (mla): hidden_size need not
		// divide.
		f.headDim(a, 0, false)
	default:
		f.headDim(a, 0, true)
	}
	switch a.ModelType {
	case "gemma":
		// GemmaConfig (transformers' models/gemma/configuration_gemma.py): head_dim 256,
		// tied embeddings, attention_bias for all four projections, no MLP biases; the
		// embedding's output is scaled by sqrt(hidden_size) (GemmaModel.forward).
		a.TiedEmbeddings = f.boolean("tie_word_embeddings", true)
		a.QKVBias = f.boolean("attention_bias", false)
		a.OutBias = a.QKVBias
		a.EmbeddingScale = true
	case "llama":
		a.QKVBias = f.boolean("attention_bias", false)
		a.OutBias = a.QKVBias
		a.MLPBias = f.boolean("mlp_bias", false)
	case "qwen2":
		a.QKVBias = true
	case "qwen3":
		a.QKVBias = f.boolean("attention_bias", false)
		a.OutBias = a.QKVBias
		a.QKNorm = true
	case "mixtral":
		a.NumExperts = f.optional(8, "num_local_experts")
		a.ExpertsPerToken = f.optional(2, "num_experts_per_tok")
	case "qwen2_moe", "qwen3_moe":
		// Qwen2MoeConfig, Qwen3MoeConfig: intermediate_size is the dense MLP's (of the
		// layers mlp_only_layers names), moe_intermediate_size each expert's.
		a.DenseIntermediateSize = a.IntermediateSize
		if a.ModelType == "qwen2_moe" {
			a.QKVBias = true
			a.NumExperts = f.optional(60, "num_experts")
			a.ExpertsPerToken = f.optional(4, "num_experts_per_tok")
			a.IntermediateSize = f.optional(1408, "moe_intermediate_size")
			a.SharedExpertSize = f.optional(5632, "shared_expert_intermediate_size")
			a.SharedExpertGate = a.SharedExpertSize > 0
		} else {
			a.QKVBias = f.boolean("attention_bias", false)
			a.OutBias = a.QKVBias
			a.QKNorm = true
			a.NumExperts = f.optional(128, "num_experts")
			a.ExpertsPerToken = f.optional(8, "num_experts_per_tok")
			a.IntermediateSize = f.optional(768, "moe_intermediate_size")
		}
		a.MoEEvery = f.optional(1, "decoder_sparse_step")
		if n := f.intList("mlp_only_layers"); len(n) > 0 {
			f.es.Add("mlp_only_layers", "dense layers named one by one are not modelled: give [] (dense layers follow decoder_sparse_step)")
		}
	case "deepseek_v2", "deepseek_v3":
		f.deepseek(a)
	case "llama4", "llama4_text":
		// Llama4TextConfig: every MoE layer has a shared expert as wide as a routed one;
		// the dense layers between them are intermediate_size_mlp wide.
		a.QKVBias = f.boolean("attention_bias", false)
		a.OutBias = a.QKVBias
		a.NumExperts = f.optional(16, "num_local_experts")
		a.ExpertsPerToken = f.optional(1, "num_experts_per_tok")
		a.SharedExpertSize = a.IntermediateSize
		a.DenseIntermediateSize = f.optional(16384, "intermediate_size_mlp")
		a.MoEEvery = f.optional(1, "interleave_moe_layer_step")
		// Llama4TextAttention: layers with rotary embedding attend within chunks of
		// attention_chunk_size; every no_rope_layer_interval-th (4th) layer is global.
		if n := f.optional(0, "attention_chunk_size"); n > 0 {
			a.LocalWindow, a.LocalChunked, a.GlobalEvery = n, true, f.optional(4, "no_rope_layer_interval")
		}
		if list, ok := f.raw["moe_layers"]; ok && string(bytes.TrimSpace(list)) != "null" {
			got := f.intList("moe_layers")
			var want []int
			for i := range a.NumLayers {
				if a.MoEEvery > 0 && (i+1)%a.MoEEvery == 0 {
					want = append(want, i)
				}
			}
			if got != nil && !slices.Equal(got, want) {
				f.es.Add("moe_layers", "must be every interleave_moe_layer_step-th layer (%v): other layouts are not modelled", want)
			}
		}
	case "gpt_oss":
		// GptOssConfig: biased attention with a sink per head, experts with biases, a
		// biased router.
		a.QKVBias = f.boolean("attention_bias", true)
		a.OutBias = a.QKVBias
		a.AttentionSinks = true
		a.NumExperts = f.optional(128, "num_local_experts")
		a.ExpertsPerToken = f.optional(4, "num_experts_per_tok", "experts_per_token")
		a.MLPBias, a.RouterBias = true, true
		// GptOssConfig.rope_scaling: YaRN with factor 32 and no mscale by default, so
		// cos and sin are scaled by 0.1 ln 32 + 1.
		a.RotaryScaled = true
		if r, ok := f.raw["rope_scaling"]; ok {
			a.RotaryScaled = yarnScaled(r)
		}
		// GptOssConfig.swiglu_limit (7.0 by default): the experts' activation clamps the
		// gate and linear halves before the gated product; null or 0 clamps nothing.
		a.GLUClamp = true
		if r, ok := f.raw["swiglu_limit"]; ok {
			var limit *float64
			if json.Unmarshal(r, &limit) != nil {
				f.es.Add("swiglu_limit", "must be a number or null")
			} else {
				a.GLUClamp = limit != nil && *limit > 0
			}
		}
		// GptOssConfig.layer_types: sliding_attention and full_attention alternate,
		// the first sliding.
		if n := f.optional(128, "sliding_window"); n > 0 {
			a.LocalWindow, a.GlobalEvery = n, 2
		}
		if types, ok := f.raw["layer_types"]; ok && string(bytes.TrimSpace(types)) != "null" {
			var ts []string
			if json.Unmarshal(types, &ts) != nil {
				f.es.Add("layer_types", "must be an array of strings")
			} else {
				for i, t := range ts {
					want := "full_attention"
					if a.LocalLayer(i) {
						want = "sliding_attention"
					}
					if t != want {
						f.es.Add(fmt.Sprintf("layer_types[%d]", i), "must be %s (sliding and full attention alternate, the first sliding: other layouts are not modelled), got %q", want, t)
						break
					}
				}
			}
		}
	}
}

// deepseek reads DeepseekV2Config and DeepseekV3Config: latent attention, routed and
// shared experts of moe_intermediate_size, first_k_dense_replace dense layers of
// intermediate_size, multi-token prediction modules (V3), and V3's per-expert score
// correction bias (topk_method noaux_tc).
func (f *fields) deepseek(a *Arch) {
	a.DenseIntermediateSize = a.IntermediateSize
	a.QLoRARank = f.optional(0, "q_lora_rank")
	a.KVLoRARank = f.required("kv_lora_rank")
	a.QKRopeHeadDim = f.optional(64, "qk_rope_head_dim")
	a.QKNopeHeadDim = f.optional(128, "qk_nope_head_dim")
	a.VHeadDim = f.optional(128, "v_head_dim")
	a.HeadDim = a.QKNopeHeadDim + a.QKRopeHeadDim
	a.NumKVHeads = a.NumHeads // every head has its own key and value, from the latent
	a.NumExperts = f.optional(0, "n_routed_experts")
	if a.NumExperts > 0 {
		a.ExpertsPerToken = f.required("num_experts_per_tok")
		a.IntermediateSize = f.required("moe_intermediate_size")
		a.SharedExpertSize = f.optional(0, "n_shared_experts") * a.IntermediateSize
		a.FirstDenseLayers = f.optional(0, "first_k_dense_replace")
		if freq := f.optional(1, "moe_layer_freq"); freq != 1 {
			f.es.Add("moe_layer_freq", "must be 1 (every layer after first_k_dense_replace a mixture): other layouts are not modelled, got %d", freq)
		}
	}
	if s, ok := f.str("topk_method"); ok && (s == "noaux_tc" || s == "group_limited_greedy") {
		a.RouterBias = s == "noaux_tc"
		if a.NumExperts > 0 {
			a.RouteGroups = f.optional(1, "n_group")
			a.GroupsPerToken = f.optional(1, "topk_group")
			if a.RouteGroups < 1 || a.NumExperts%a.RouteGroups != 0 {
				f.es.Add("n_group", "must divide n_routed_experts (%d), got %d", a.NumExperts, a.RouteGroups)
			} else if a.GroupsPerToken < 1 || a.GroupsPerToken > a.RouteGroups {
				f.es.Add("topk_group", "must be between 1 and n_group (%d), got %d", a.RouteGroups, a.GroupsPerToken)
			}
		}
	}
	if a.ModelType == "deepseek_v3" {
		a.MTPLayers = f.optional(0, "num_nextn_predict_layers")
	}
	if f.boolean("attention_bias", false) {
		f.es.Add("attention_bias", "latent attention with biases is not modelled: DeepSeek's configs have none")
	}
}

// intList reads an array of integers (nil when absent or null).
func (f *fields) intList(name string) []int {
	r, ok := f.raw[name]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return nil
	}
	var vs []json.Number
	if json.Unmarshal(r, &vs) != nil {
		f.es.Add(name, "must be an array of integers, got %s", bytes.TrimSpace(r))
		return nil
	}
	out := make([]int, 0, len(vs))
	for _, v := range vs {
		out = append(out, f.integer(json.RawMessage(v), name))
	}
	return out
}

// check validates sizes against each other and the bounds.
func (f *fields) check(a *Arch) {
	es := &f.es
	bound := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			es.Add(name, "must be between %d and %d, got %d", lo, hi, v)
		}
	}
	bound(f.name("hidden_size", "n_embd", "d_model"), a.HiddenSize, 1, maxHidden)
	bound(f.name("num_hidden_layers", "n_layer", "n_layers"), a.NumLayers, 1, maxLayers)
	bound(f.name("num_attention_heads", "n_head", "n_heads"), a.NumHeads, 1, maxHeads)
	bound(f.name("intermediate_size", "n_inner", "expansion_ratio"), a.IntermediateSize, 1, maxInner)
	bound("vocab_size", a.VocabSize, 1, maxVocab)
	if a.LearnedPositions() {
		bound(f.name("max_position_embeddings", "n_positions", "max_seq_len"), a.MaxPositions, 1, maxPos)
	} else {
		bound("max_position_embeddings", a.MaxPositions, 0, maxPos)
	}
	if a.Family == BERT {
		bound("type_vocab_size", a.TypeVocabSize, 0, maxTypes)
	}
	if len(*es) > 0 {
		return
	}
	if a.Family != Llama && a.Family != Nemotron && a.HiddenSize%a.NumHeads != 0 {
		es.Add(f.name("num_attention_heads", "n_head", "n_heads"), "must divide %s (%d), got %d", f.name("hidden_size", "n_embd", "d_model"), a.HiddenSize, a.NumHeads)
	}
	bound("head_dim", a.HeadDim, 1, maxHidden)
	kvName := "num_key_value_heads"
	if a.Family == MPT {
		kvName = "attn_config.kv_n_heads"
	}
	if a.NumKVHeads < 1 || a.NumKVHeads > a.NumHeads {
		es.Add(kvName, "must be between 1 and num_attention_heads (%d), got %d", a.NumHeads, a.NumKVHeads)
	} else if a.NumHeads%a.NumKVHeads != 0 {
		es.Add(kvName, "must divide num_attention_heads (%d), got %d", a.NumHeads, a.NumKVHeads)
	}
	switch a.ModelType {
	case "mixtral", "llama4", "llama4_text", "gpt_oss":
		bound("num_local_experts", a.NumExperts, 1, maxExperts)
	case "qwen2_moe", "qwen3_moe":
		bound("num_experts", a.NumExperts, 1, maxExperts)
	case "deepseek_v2", "deepseek_v3":
		bound("n_routed_experts", a.NumExperts, 0, maxExperts)
		bound("q_lora_rank", a.QLoRARank, 0, maxHidden)
		bound("kv_lora_rank", a.KVLoRARank, 1, maxHidden)
		bound("qk_rope_head_dim", a.QKRopeHeadDim, 1, maxHidden)
		bound("qk_nope_head_dim", a.QKNopeHeadDim, 0, maxHidden)
		bound("v_head_dim", a.VHeadDim, 1, maxHidden)
		bound("num_nextn_predict_layers", a.MTPLayers, 0, maxMTP)
	}
	if a.LocalWindow > 0 {
		bound(f.name("attention_chunk_size", "sliding_window"), a.LocalWindow, 1, maxPos)
		bound(f.name("no_rope_layer_interval"), a.GlobalEvery, 1, maxLayers)
	}
	if a.NumExperts > 0 {
		bound(f.name("num_experts_per_tok", "experts_per_token"), a.ExpertsPerToken, 1, a.NumExperts)
		bound(f.name("moe_intermediate_size", "intermediate_size"), a.IntermediateSize, 1, maxInner)
		bound(f.name("intermediate_size_mlp", "intermediate_size"), a.DenseIntermediateSize, 0, maxInner)
		bound(f.name("shared_expert_intermediate_size", "n_shared_experts", "intermediate_size"), a.SharedExpertSize, 0, maxInner)
		bound("first_k_dense_replace", a.FirstDenseLayers, 0, a.NumLayers)
		if a.MoEEvery != 0 || f.raw["interleave_moe_layer_step"] != nil || f.raw["decoder_sparse_step"] != nil {
			bound(f.name("interleave_moe_layer_step", "decoder_sparse_step"), a.MoEEvery, 1, a.NumLayers)
		}
	}
	if len(*es) > 0 {
		return
	}
	// Bound the total in float64 first: the int64 count could overflow for absurd sizes.
	h, v, l := float64(a.HiddenSize), float64(a.VocabSize), float64(a.NumLayers+a.MTPLayers)
	mlp := float64(a.IntermediateSize)*float64(max(1, a.NumExperts)) + float64(a.SharedExpertSize) + float64(a.DenseIntermediateSize)
	attn := 4 * h * float64(a.NumHeads) * float64(a.HeadDim+a.VHeadDim)
	if a.MLA() {
		attn += float64(a.QLoRARank+a.KVLoRARank) * (h + float64(a.NumHeads)*float64(a.HeadDim+a.VHeadDim))
	}
	blocks := l * (attn + 3*h*mlp + 2*h*h)
	if blocks+2*v*h+float64(a.MaxPositions)*h > maxParams {
		es.Add(f.name("hidden_size", "n_embd", "d_model"), "the model would have more than 2^50 parameters")
	}
}

// name returns the first of names present in the config (the spelling the user wrote),
// else the first.
func (f *fields) name(names ...string) string {
	for _, n := range names {
		if _, ok := f.raw[n]; ok {
			return n
		}
	}
	return names[0]
}

// lookup returns the first non-null value among aliases; aliases that disagree are an error.
func (f *fields) lookup(names ...string) (json.RawMessage, string, bool) {
	var val json.RawMessage
	var from string
	for _, n := range names {
		r, ok := f.raw[n]
		if !ok || string(bytes.TrimSpace(r)) == "null" {
			continue
		}
		if val == nil {
			val, from = r, n
		} else if !bytes.Equal(bytes.TrimSpace(r), bytes.TrimSpace(val)) {
			f.es.Add(n, "disagrees with %s (%s vs %s)", from, bytes.TrimSpace(r), bytes.TrimSpace(val))
		}
	}
	return val, from, val != nil
}

func (f *fields) integer(r json.RawMessage, name string) int {
	var n json.Number
	if isString(r) { // json.Number would read "4096" as a number
		f.es.Add(name, "must be an integer, got the string %s", r)
		return 0
	}
	if json.Unmarshal(r, &n) != nil {
		f.es.Add(name, "must be an integer, got %s", bytes.TrimSpace(r))
		return 0
	}
	v, err := n.Float64()
	if err != nil || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		f.es.Add(name, "must be an integer, got %s", n)
		return 0
	}
	if v < 0 || v > math.MaxInt32 {
		f.es.Add(name, "must be between 0 and 2^31, got %s", n)
		return 0
	}
	return int(v)
}

func (f *fields) required(names ...string) int {
	r, from, ok := f.lookup(names...)
	if !ok {
		if name := f.name(names...); f.raw[name] != nil {
			f.es.Add(name, "must be an integer, got null")
		} else {
			f.es.Add(names[0], "is missing")
		}
		return 0
	}
	return f.integer(r, from)
}

func (f *fields) optional(def int, names ...string) int {
	r, from, ok := f.lookup(names...)
	if !ok {
		return def
	}
	return f.integer(r, from)
}

func (f *fields) str(name string) (string, bool) {
	r, ok := f.raw[name]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		f.es.Add(name, "must be a string, got %s", bytes.TrimSpace(r))
		return "", false
	}
	return s, true
}

func (f *fields) boolean(name string, def bool) bool {
	r, ok := f.raw[name]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return def
	}
	var b bool
	if json.Unmarshal(r, &b) != nil {
		f.es.Add(name, "must be true or false, got %s", bytes.TrimSpace(r))
		return def
	}
	return b
}

// anyPositive reports whether any of the probabilities (each def when absent) is above 0.
func (f *fields) anyPositive(def float64, names ...string) bool {
	any := false
	for _, n := range names {
		p := def
		if r, ok := f.raw[n]; ok && string(bytes.TrimSpace(r)) != "null" {
			var num json.Number
			v, err := 0.0, json.Unmarshal(r, &num)
			if isString(r) { // json.Number would read "0.1" as a number
				err = errors.New("a string")
			}
			if err == nil {
				v, err = num.Float64()
			}
			if err != nil || !(v >= 0 && v <= 1) {
				f.es.Add(n, "must be a probability in [0, 1], got %s", bytes.TrimSpace(r))
				continue
			}
			p = v
		}
		any = any || p > 0
	}
	return any
}

// isString reports whether a raw JSON value is a string.
func isString(r json.RawMessage) bool { return bytes.HasPrefix(bytes.TrimSpace(r), []byte(`"`)) }

// yarnScaled reports whether a rope_scaling object is YaRN whose attention factor is
// not 1: rope_type (or type) "yarn" with a factor above 1, and an attention_factor other
// than 1 or, without one, not both mscale and mscale_all_dim given and equal (their
// ratio is the factor then, as DeepSeek-V3's 1.0 and 1.0 give 1; HuggingFace's
// _compute_yarn_parameters). null, another type or a malformed object: false.
func yarnScaled(raw json.RawMessage) bool {
	var rs struct {
		RopeType        string   `json:"rope_type"`
		Type            string   `json:"type"`
		Factor          float64  `json:"factor"`
		AttentionFactor *float64 `json:"attention_factor"`
		MScale          *float64 `json:"mscale"`
		MScaleAllDim    *float64 `json:"mscale_all_dim"`
	}
	if json.Unmarshal(raw, &rs) != nil || (rs.RopeType != "yarn" && rs.Type != "yarn") || rs.Factor <= 1 {
		return false
	}
	if rs.AttentionFactor != nil {
		return *rs.AttentionFactor != 1
	}
	return rs.MScale == nil || rs.MScaleAllDim == nil || *rs.MScale != *rs.MScaleAllDim
}
