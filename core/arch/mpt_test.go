package arch

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/core/model"
)

// mptYAML is a model of LLM Foundry's scripts/train/yamls/pretrain/mpt-*.yaml (v0.4.0) as
// the benchmark runs built it: MPTConfig's defaults (biases, learned positions, tied
// embeddings, vocabulary 50,368) with max_seq_len the run's length.
func mptYAML(d, heads, layers, seq int) []byte {
	return []byte(fmt.Sprintf(`{"model_type": "mpt", "d_model": %d, "n_heads": %d, "n_layers": %d, "expansion_ratio": 4, "max_seq_len": %d, "vocab_size": 50368, "attn_config": {"attn_impl": "triton"}, "norm_type": "low_precision_layernorm"}`, d, heads, layers, seq))
}

// TestParamsMPTLLMFoundry: the NumParams column of LLM Foundry's benchmark tables
// (scripts/train/benchmarking/README.md as #838 left it, January 2024), exactly, for every
// model size at its shortest length there: the count of MPTForCausalLM with biases in
// every linear layer and LayerNorm and a learned position table of max_seq_len rows.
func TestParamsMPTLLMFoundry(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		d, heads, layers, seq int
		want                  int64
	}{
		{"125m", 768, 12, 12, 512, 124131840},
		{"350m", 1024, 16, 24, 512, 354412544},
		{"760m", 1536, 12, 24, 512, 758111232},
		{"760m", 1536, 12, 24, 32768, 807656448},
		{"1b", 2048, 16, 24, 512, 1312804864},
		{"3b", 2560, 20, 32, 512, 2647905280},
		{"7b", 4096, 32, 32, 512, 6652567552},
		{"7b", 4096, 32, 32, 2048, 6658859008},
		{"13b", 5120, 40, 40, 512, 12846090240},
		{"30b", 7168, 56, 48, 512, 29964204032},
		{"30b", 7168, 56, 48, 2048, 29975214080},
		{"70b", 8192, 64, 80, 2048, 64862437376},
	} {
		a, err := Parse(mptYAML(tt.d, tt.heads, tt.layers, tt.seq))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if a.Family != MPT || !a.LearnedPositions() || !a.QKVBias || a.NoNormBias || a.Activation != "gelu" || a.Dropout {
			t.Errorf("%s: parsed %+v", tt.name, a)
		}
		if got := a.Params(); got != tt.want {
			t.Errorf("MPT-%s at %d: Params() = %d, want %d (off by %d)", tt.name, tt.seq, got, tt.want, got-tt.want)
		}
	}
}

// TestParamsMPTReleased: MosaicML's released MPT-7B (6.7B parameters, its model card)
// and MPT-30B (30B), from their config.json (ALiBi, no biases, vocabulary 50,432), within
// one unit of the published figure's last digit; and in closed form: V h + L (12 h^2 +
// 2 h) + h, no position table (ALiBi) and weight-only LayerNorms (no_bias).
func TestParamsMPTReleased(t *testing.T) {
	for _, tt := range []struct {
		name            string
		d, layers, seq  int
		published, unit float64
	}{
		{"mpt-7b", 4096, 32, 2048, 6.7e9, 0.1e9},
		{"mpt-30b", 7168, 48, 8192, 30e9, 1e9},
	} {
		cfg := fmt.Sprintf(`{"architectures": ["MPTForCausalLM"], "model_type": "mpt", "d_model": %d, "n_heads": 32, "n_layers": %d, "expansion_ratio": 4, "max_seq_len": %d, "vocab_size": 50432, "no_bias": true, "learned_pos_emb": true, "emb_pdrop": 0, "resid_pdrop": 0, "norm_type": "low_precision_layernorm", "attn_config": {"alibi": true, "alibi_bias_max": 8, "attn_impl": "torch", "attn_pdrop": 0, "attn_type": "multihead_attention", "attn_uses_sequence_id": false, "clip_qkv": null, "prefix_lm": false, "qk_ln": false, "softmax_scale": null}, "init_config": {"name": "kaiming_normal_"}, "logit_scale": null, "use_cache": false}`, tt.d, tt.layers, tt.seq)
		a, err := Parse([]byte(cfg))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		h, l := int64(tt.d), int64(tt.layers)
		want := 50432*h + l*(12*h*h+2*h) + h
		if got := a.Params(); got != want || a.LearnedPositions() || !a.ALiBi || !a.NoNormBias || a.QKVBias {
			t.Errorf("%s: Params() = %d, want %d; %+v", tt.name, got, want, a)
		}
		if math.Abs(float64(a.Params())-tt.published) > tt.unit {
			t.Errorf("%s: %d parameters, published %.3g", tt.name, a.Params(), tt.published)
		}
	}
}

// TestParseMPTOptions: grouped-query attention, the query and key LayerNorms (qk_ln:
// d_model and kv_n_heads x head_dim wide, weight and bias each), clip_qkv, dropout, a
// fractional expansion ratio and ffn_hidden_size, and no position table without
// learned_pos_emb.
func TestParseMPTOptions(t *testing.T) {
	a, err := Parse([]byte(`{"model_type": "mpt", "d_model": 1024, "n_heads": 16, "n_layers": 2, "expansion_ratio": 2.5, "vocab_size": 1000, "learned_pos_emb": false,
		"attn_config": {"attn_type": "grouped_query_attention", "kv_n_heads": 4, "qk_ln": true, "clip_qkv": 6, "attn_pdrop": 0.1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.NumKVHeads != 4 || a.IntermediateSize != 2560 || !a.QKLayerNorm || !a.ClipQKV || !a.Dropout || a.LearnedPositions() {
		t.Errorf("parsed %+v", a)
	}
	// norm 2h, Wqkv h x (h + 2 kv) and its bias, out_proj and bias, q_ln 2h, k_ln 2 kv.
	h, kv := int64(1024), int64(256)
	if got, want := a.AttentionParams(), 2*h+h*(h+2*kv)+(h+2*kv)+h*h+h+2*h+2*kv; got != want {
		t.Errorf("AttentionParams() = %d, want %d", got, want)
	}
	b, err := Parse([]byte(`{"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 1, "ffn_config": {"ffn_type": "mptmlp", "ffn_hidden_size": 100}}`))
	if err != nil || b.IntermediateSize != 100 || b.MaxPositions != 2048 || b.VocabSize != 50368 || !b.TiedEmbeddings {
		t.Errorf("defaults and ffn_hidden_size: %+v %v", b, err)
	}
}

// TestParseMPTErrors: what MPT's pricing does not model is refused by field, nested
// paths named in full.
func TestParseMPTErrors(t *testing.T) {
	base := `"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 1`
	for _, tt := range []struct{ extra, path, reason string }{
		{`"attn_config": {"rope": true}`, "attn_config.rope", "not modelled"},
		{`"attn_config": {"attn_impl": "sdpa"}`, "attn_config.attn_impl", "torch, flash and triton"},
		{`"attn_config": {"attn_type": "grouped_query_attention", "kv_n_heads": 3}`, "attn_config.kv_n_heads", "must divide"},
		{`"attn_config": {"clip_qkv": "8"}`, "attn_config.clip_qkv", "must be a number"},
		{`"attn_config": {"qk_ln": true, "qk_ln": false}`, "attn_config.qk_ln", "given twice"},
		{`"attn_config": [1]`, "attn_config", "JSON object"},
		{`"ffn_config": {"ffn_type": "te_ln_mlp"}`, "ffn_config.ffn_type", "not modelled"},
		{`"norm_type": "rmsnorm"`, "norm_type", "not modelled"},
		{`"expansion_ratio": 0`, "expansion_ratio", "above 0"},
		{`"expansion_ratio": "4"`, "expansion_ratio", "must be a number"},
		{`"n_heads": 5`, "n_heads", "must divide d_model"},
		{`"resid_pdrop": 2`, "resid_pdrop", "probability"},
	} {
		cfg := "{" + base + ", " + tt.extra + "}"
		if strings.Contains(tt.extra, `"n_heads"`) {
			cfg = `{"model_type": "mpt", "d_model": 64, "n_layers": 1, ` + tt.extra + "}"
		}
		_, err := Parse([]byte(cfg))
		fe, ok := model.AsFieldErrors(err)
		found := false
		for _, e := range fe {
			found = found || (e.Path == tt.path && strings.Contains(e.Reason, tt.reason))
		}
		if !ok || !found {
			t.Errorf("%s: %v, want %s: ...%s...", tt.extra, err, tt.path, tt.reason)
		}
	}
}
