package export

import (
	"slices"
	"testing"

	"pipeplan/core/arch"
)

// TestMPTModuleNames: an MPT plan names LLM Foundry's MPTForCausalLM modules
// (transformer.blocks.N.norm_1, attn, norm_2, ffn), the position table only where the
// model has one (ALiBi models have none).
func TestMPTModuleNames(t *testing.T) {
	for _, c := range []struct {
		alibi bool
		emb   []string
	}{
		{false, []string{"transformer.wte", "transformer.wpe"}},
		{true, []string{"transformer.wte"}},
	} {
		cfg := `{"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 2, "attn_config": {"alibi": false}}`
		if c.alibi {
			cfg = `{"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 2, "attn_config": {"alibi": true}}`
		}
		a, err := arch.Parse([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		in := &Input{Arch: a, LayerNames: []string{"embedding", "block.0.attention", "block.0.mlp", "block.1", "final_norm", "lm_head"}}
		names, ok := in.moduleNames()
		want := []string{"transformer.wte", "transformer.blocks.0.norm_1", "transformer.blocks.0.norm_2", "transformer.blocks.1", "transformer.norm_f", "lm_head"}
		if !ok || !slices.Equal(names, want) {
			t.Errorf("alibi %t: module names %v, want %v", c.alibi, names, want)
		}
		parts := in.partModules()
		if !slices.Equal(parts[0], c.emb) || !slices.Equal(parts[1], []string{"transformer.blocks.0.norm_1", "transformer.blocks.0.attn"}) ||
			!slices.Equal(parts[2], []string{"transformer.blocks.0.norm_2", "transformer.blocks.0.ffn"}) {
			t.Errorf("alibi %t: parts %v", c.alibi, parts)
		}
	}
}

// TestNemotronGemmaModuleNames: transformers' NemotronForCausalLM (modeling_nemotron.py)
// and GemmaForCausalLM (modeling_gemma.py) name their modules as LlamaForCausalLM does:
// model.embed_tokens, model.layers.N.input_layernorm, self_attn, post_attention_layernorm
// and mlp, model.norm, lm_head (Gemma's tied head is a module all the same).
func TestNemotronGemmaModuleNames(t *testing.T) {
	for _, cfg := range []string{
		`{"model_type": "nemotron", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}`,
		`{"model_type": "gemma", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}`,
	} {
		a, err := arch.Parse([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		in := &Input{Arch: a, LayerNames: []string{"embedding", "block.0.attention", "block.0.mlp", "block.1", "final_norm", "lm_head"}}
		names, ok := in.moduleNames()
		want := []string{"model.embed_tokens", "model.layers.0.input_layernorm", "model.layers.0.post_attention_layernorm", "model.layers.1", "model.norm", "lm_head"}
		if !ok || !slices.Equal(names, want) {
			t.Errorf("%s: module names %v, want %v", a.ModelType, names, want)
		}
		parts := in.partModules()
		if !slices.Equal(parts[0], []string{"model.embed_tokens"}) || !slices.Equal(parts[1], []string{"model.layers.0.input_layernorm", "model.layers.0.self_attn"}) ||
			!slices.Equal(parts[2], []string{"model.layers.0.post_attention_layernorm", "model.layers.0.mlp"}) {
			t.Errorf("%s: parts %v", a.ModelType, parts)
		}
	}
}
