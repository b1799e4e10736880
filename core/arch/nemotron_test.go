package arch

import (
	"math"
	"strings"
	"testing"
)

// nemotron4_15B is Nemotron-4 15B (Parmar et al. 2024, "Nemotron-4 15B Technical
// Report", arXiv 2402.16819, Table 1) as a HuggingFace nemotron config.json: 32 layers,
// hidden 6,144, 48 query heads and 8 key/value heads, an ungated squared-ReLU MLP of 4h,
// vocabulary 256,000, untied, no biases.
const nemotron4_15B = `{"architectures": ["NemotronForCausalLM"], "model_type": "nemotron", "hidden_act": "relu2",
 "hidden_size": 6144, "intermediate_size": 24576, "num_hidden_layers": 32, "num_attention_heads": 48,
 "num_key_value_heads": 8, "vocab_size": 256000, "max_position_embeddings": 4096, "partial_rotary_factor": 0.5,
 "tie_word_embeddings": false, "norm_eps": 1e-05}`

// TestParamsNemotron4_15B: the report's non-embedding count (section 2: 12.5 billion;
// the embedding and output layer add 2 V h = 3.1 billion, the "15B" of its title) to its
// last digit, and the closed form of NemotronForCausalLM: per layer the query and output projections (h x
// q each), key and value (h x kv each), up_proj and down_proj (2 h f, no gate), two
// LayerNorm1P with weight and bias (4h); a final LayerNorm1P (2h); the untied embedding
// and lm_head (2 V h).
func TestParamsNemotron4_15B(t *testing.T) {
	a, err := Parse([]byte(nemotron4_15B))
	if err != nil {
		t.Fatal(err)
	}
	if a.Family != Nemotron || a.GatedMLP() || a.RMSNorm() || a.LearnedPositions() || !a.Rotary() ||
		a.TiedEmbeddings || a.QKVBias || a.OutBias || a.MLPBias || a.Dropout || a.Activation != "relu2" || a.RotaryFraction != 0.5 {
		t.Fatalf("parsed %+v", a)
	}
	const h, L, q, kv, f, V = 6144, 32, 6144, 8 * 128, 24576, 256000
	want := int64(L*(2*h*q+2*h*kv+2*h*f+4*h) + 2*h + 2*V*h)
	if got := a.Params(); got != want {
		t.Errorf("Params() = %d, want %d", got, want)
	}
	emb := int64(2 * V * h)
	if got := math.Round(float64(a.Params()-emb) / 1e8); got != 125 {
		t.Errorf("non-embedding %.1fB, the report's 12.5B", got/10)
	}
	if got := a.MLPParams(); got != 2*h*f+2*h {
		t.Errorf("MLPParams() = %d, want 2hf + 2h = %d", got, 2*h*f+2*h)
	}
}

// TestParseNemotronOptions: the fields NemotronConfig reads, their defaults, biases,
// head_dim given (Minitron-8B's 48 heads of 128 over a hidden size of 4,096), and the
// errors.
func TestParseNemotronOptions(t *testing.T) {
	minitron := `{"model_type": "nemotron", "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 32,
 "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 256000, "attention_bias": true, "mlp_bias": true}`
	a, err := Parse([]byte(minitron))
	if err != nil {
		t.Fatal(err)
	}
	const h, q, kv, f = 4096, 48 * 128, 8 * 128, 16384
	if a.HeadDim != 128 || a.QDim() != q || a.MaxPositions != 4096 || a.Activation != "relu2" || a.RotaryFraction != 0.5 {
		t.Errorf("parsed %+v", a)
	}
	// NemotronAttention: q, k, v and o_proj all biased with attention_bias; NemotronMLP:
	// up_proj and down_proj with mlp_bias.
	if got, want := a.AttentionParams(), int64(2*h+2*h*q+2*h*kv+q+2*kv+h); got != want {
		t.Errorf("AttentionParams() = %d, want %d", got, want)
	}
	if got, want := a.MLPParams(), int64(2*h+2*h*f+f+h); got != want {
		t.Errorf("MLPParams() = %d, want %d", got, want)
	}
	// The architectures entry names the model where model_type is missing; NemotronH
	// (the hybrid) is another model.
	if a, err := Parse([]byte(`{"architectures": ["NemotronForCausalLM"], "hidden_size": 64, "intermediate_size": 256,
 "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}`)); err != nil || a.ModelType != "nemotron" {
		t.Errorf("architectures NemotronForCausalLM: %v, %v", a, err)
	}
	for _, tt := range []struct{ cfg, want string }{
		{`{"architectures": ["NemotronHForCausalLM"], "hidden_size": 64}`, `architectures: unsupported architecture "NemotronHForCausalLM"`},
		{`{"model_type": "nemotron", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "partial_rotary_factor": 0}`, "partial_rotary_factor: must be above 0 and at most 1"},
		{`{"model_type": "nemotron", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "partial_rotary_factor": "0.5"}`, "partial_rotary_factor: must be a number"},
		{`{"model_type": "nemotron", "hidden_size": 66, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}`, "num_attention_heads: must divide hidden_size (66) when head_dim is not given"},
		{`{"model_type": "nemotron", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 100}`, "num_key_value_heads: must divide num_attention_heads"},
		{`{"model_type": "nemotron", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}`, "intermediate_size: is missing"},
	} {
		_, err := Parse([]byte(tt.cfg))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestBundledNemotron: the bundled configs are NVIDIA's Minitron-4B-Base config.json
// (huggingface.co/nvidia/Minitron-4B-Base, commit 475785aa) and Nemotron-4 340B Base as
// converted to HuggingFace's format (huggingface.co/mgoin/Nemotron-4-340B-Base-hf,
// commit 6c78d6f7: head_dim 192, its rope_percent 0.5 written as transformers'
// partial_rotary_factor). 340B: the report's 9.4 billion embedding and 331.6 billion
// non-embedding parameters (arXiv 2406.11704, section 2.2); Minitron-4B in closed form:
// 24 query heads of 128 and 8 key/value heads over a hidden size of 3,072, an ungated
// MLP of 9,216, 32 layers, 2 V h untied (4.19B: "4B" on its model card).
func TestBundledNemotron(t *testing.T) {
	a, err := Bundled("nemotron-4-340b")
	if err != nil {
		t.Fatal(err)
	}
	emb := int64(2 * 256000 * 18432)
	if a.EmbeddingWeightParams()+a.HeadParams() != emb || math.Round(float64(emb)/1e8) != 94 || math.Round(float64(a.Params()-emb)/1e8) != 3316 {
		t.Errorf("nemotron-4-340b: %d parameters, %d of them embedding and head; the report: 9.4B and 331.6B", a.Params(), emb)
	}
	m, err := Bundled("minitron-4b-base")
	if err != nil {
		t.Fatal(err)
	}
	const h, L, q, kv, f, V = 3072, 32, 24 * 128, 8 * 128, 9216, 256000
	if got, want := m.Params(), int64(L*(2*h*q+2*h*kv+2*h*f+4*h)+2*h+2*V*h); got != want || math.Round(float64(got)/1e8) != 42 {
		t.Errorf("minitron-4b: Params() = %d, want %d", got, want)
	}
}

// TestParamsGemma: Gemma 2B and 7B (HuggingFace's google/gemma-2b and gemma-7b
// config.json) against Table 2 of the Gemma report (Gemma Team 2024, arXiv 2403.08295):
// 1,981,884,416 and 7,751,248,896 non-embedding parameters, exactly (its embedding
// counts are of a 256,128-row table, HuggingFace's holds 256,000 rows); and in closed
// form: per layer the query and output projections (h x 256 heads each), key and value
// (h x 256 kv heads each), a gated MLP (3 h f) and two RMSNorm weights; a final norm;
// one V x h embedding, which the head reuses.
func TestParamsGemma(t *testing.T) {
	for _, tt := range []struct {
		name               string
		h, L, heads, kv, f int64
		nonEmbedding       int64
	}{
		{"gemma-2b", 2048, 18, 8, 1, 16384, 1_981_884_416},
		{"gemma-7b", 3072, 28, 16, 16, 24576, 7_751_248_896},
	} {
		a, err := Bundled(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if a.Family != Llama || !a.GatedMLP() || !a.RMSNorm() || !a.TiedEmbeddings || !a.EmbeddingScale || a.HeadDim != 256 || a.QKVBias {
			t.Errorf("%s: parsed %+v", tt.name, a)
		}
		const V, d = 256000, 256
		want := tt.L*(2*tt.h*tt.heads*d+2*tt.h*tt.kv*d+3*tt.h*tt.f+2*tt.h) + tt.h + V*tt.h
		if got := a.Params(); got != want || got-V*tt.h != tt.nonEmbedding {
			t.Errorf("%s: Params() = %d, want %d (%d non-embedding)", tt.name, got, want, tt.nonEmbedding)
		}
	}
	// GemmaConfig's defaults: head_dim 256, tied; Gemma 2 and 3 are refused by name.
	a, err := Parse([]byte(`{"model_type": "gemma", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 10, "hidden_activation": "gelu_pytorch_tanh"}`))
	if err != nil || a.HeadDim != 256 || !a.TiedEmbeddings {
		t.Errorf("gemma defaults: %+v, %v", a, err)
	}
	// Its default head_dim does not come from hidden_size, which the heads need not divide
	// (GemmaConfig asks nothing of them).
	a, err = Parse([]byte(`{"model_type": "gemma", "hidden_size": 66, "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 10}`))
	if err != nil || a.HeadDim != 256 || a.QDim() != 4*256 {
		t.Errorf("gemma, 4 heads over a hidden size of 66: %+v, %v", a, err)
	}
	for _, name := range []string{"Gemma2ForCausalLM", "Gemma3ForCausalLM"} {
		if _, err := Parse([]byte(`{"architectures": ["` + name + `"]}`)); err == nil || !strings.Contains(err.Error(), "unsupported architecture") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
