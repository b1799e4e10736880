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
