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
	// maxParams bounds the total parameter count (2^50, a thousand trillion).
	maxParams = 1 << 50
)

// modelTypes maps config.json's model_type to a family.
var modelTypes = map[string]Family{
	"gpt2":    GPT2,
	"bert":    BERT,
	"llama":   Llama,
	"mistral": Llama,
	"qwen2":   Llama,
	"mixtral": Llama,
}

// architectureTypes maps an "architectures" entry's prefix to a model_type, for configs
// without model_type.
var architectureTypes = []struct{ prefix, modelType string }{
	{"GPT2", "gpt2"}, {"Bert", "bert"}, {"Llama", "llama"}, {"Mistral", "mistral"},
	{"Qwen2", "qwen2"}, {"Mixtral", "mixtral"},
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
	switch a.Family {
	case GPT2:
		f.gpt2(a)
	case BERT:
		f.bert(a)
	case Llama:
		f.llama(a)
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

// activation checks hidden_act (BERT, Llama) and activation_function (GPT-2).
func (f *fields) activation() {
	for _, name := range []string{"hidden_act", "activation_function"} {
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
	if a.NumHeads > 0 {
		a.HeadDim = a.HiddenSize / a.NumHeads
	}
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
	defaultHeadDim := 0
	if a.NumHeads > 0 {
		defaultHeadDim = a.HiddenSize / a.NumHeads
	}
	a.HeadDim = f.optional(defaultHeadDim, "head_dim")
	if _, given := f.raw["head_dim"]; !given && a.NumHeads > 0 && a.HiddenSize%a.NumHeads != 0 {
		f.es.Add("num_attention_heads", "must divide hidden_size (%d) when head_dim is not given, got %d", a.HiddenSize, a.NumHeads)
	}
	switch a.ModelType {
	case "llama":
		a.QKVBias = f.boolean("attention_bias", false)
		a.OutBias = a.QKVBias
		a.MLPBias = f.boolean("mlp_bias", false)
	case "qwen2":
		a.QKVBias = true
	case "mixtral":
		a.NumExperts = f.optional(8, "num_local_experts")
		a.ExpertsPerToken = f.optional(2, "num_experts_per_tok")
	}
}

// check validates sizes against each other and the bounds.
func (f *fields) check(a *Arch) {
	es := &f.es
	bound := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			es.Add(name, "must be between %d and %d, got %d", lo, hi, v)
		}
	}
	bound(f.name("hidden_size", "n_embd"), a.HiddenSize, 1, maxHidden)
	bound(f.name("num_hidden_layers", "n_layer"), a.NumLayers, 1, maxLayers)
	bound(f.name("num_attention_heads", "n_head"), a.NumHeads, 1, maxHeads)
	bound(f.name("intermediate_size", "n_inner"), a.IntermediateSize, 1, maxInner)
	bound("vocab_size", a.VocabSize, 1, maxVocab)
	if a.LearnedPositions() {
		bound(f.name("max_position_embeddings", "n_positions"), a.MaxPositions, 1, maxPos)
	} else {
		bound("max_position_embeddings", a.MaxPositions, 0, maxPos)
	}
	if a.Family == BERT {
		bound("type_vocab_size", a.TypeVocabSize, 0, maxTypes)
	}
	if len(*es) > 0 {
		return
	}
	if a.Family != Llama && a.HiddenSize%a.NumHeads != 0 {
		es.Add(f.name("num_attention_heads", "n_head"), "must divide %s (%d), got %d", f.name("hidden_size", "n_embd"), a.HiddenSize, a.NumHeads)
	}
	bound("head_dim", a.HeadDim, 1, maxHidden)
	if a.NumKVHeads < 1 || a.NumKVHeads > a.NumHeads {
		es.Add("num_key_value_heads", "must be between 1 and num_attention_heads (%d), got %d", a.NumHeads, a.NumKVHeads)
	} else if a.NumHeads%a.NumKVHeads != 0 {
		es.Add("num_key_value_heads", "must divide num_attention_heads (%d), got %d", a.NumHeads, a.NumKVHeads)
	}
	if a.ModelType == "mixtral" {
		bound("num_local_experts", a.NumExperts, 1, maxExperts)
		bound("num_experts_per_tok", a.ExpertsPerToken, 1, max(1, a.NumExperts))
	}
	if len(*es) > 0 {
		return
	}
	// Bound the total in float64 first: the int64 count could overflow for absurd sizes.
	h, v, l := float64(a.HiddenSize), float64(a.VocabSize), float64(a.NumLayers)
	blocks := l * (4*h*float64(a.NumHeads*a.HeadDim) + 3*h*float64(a.IntermediateSize)*float64(max(1, a.NumExperts)))
	if blocks+2*v*h+float64(a.MaxPositions)*h > maxParams {
		es.Add(f.name("hidden_size", "n_embd"), "the model would have more than 2^50 parameters")
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
