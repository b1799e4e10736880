package arch

import (
	"strings"
	"testing"

	"pipeplan/core/model"
)

// FuzzParse: any input gives an architecture or an error, never a panic. An error is
// field errors naming a config key, or says the input is not a config.json at all; an
// accepted architecture has a positive parameter count within the bound. Seeds beyond the
// bundled configs (hostile ones, and any crasher found) are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, name := range BundledNames() {
		data, _ := BundledConfig(name)
		f.Add(data)
	}
	f.Add([]byte(`{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":2,"vocab_size":3,"n_inner":null}`))
	f.Add([]byte(`{"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"head_dim":3,"intermediate_size":4,"vocab_size":3}`))
	f.Add([]byte(`{"model_type":"mpt","d_model":8,"n_heads":2,"n_layers":1,"expansion_ratio":2.5,"vocab_size":3,"no_bias":true,"attn_config":{"attn_type":"grouped_query_attention","kv_n_heads":1,"alibi":true,"qk_ln":true,"clip_qkv":6},"ffn_config":{"ffn_type":"mptmlp"}}`))
	f.Add([]byte(`{"architectures":["NemotronForCausalLM"],"hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":3,"intermediate_size":4,"vocab_size":3,"partial_rotary_factor":0.25,"attention_bias":true,"mlp_bias":true}`))
	f.Add([]byte(`{"architectures":["GemmaForCausalLM"],"hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"intermediate_size":4,"vocab_size":3,"hidden_activation":"gelu_pytorch_tanh","attention_bias":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data)
		if err != nil {
			if a != nil {
				t.Fatalf("an architecture and an error %v", err)
			}
			es, ok := model.AsFieldErrors(err)
			if !ok && !strings.HasPrefix(err.Error(), "config.json: ") {
				t.Fatalf("error %q is neither field errors nor about the file", err)
			}
			for _, e := range es {
				if e.Path == "" {
					t.Fatalf("field error %q names no field", e)
				}
			}
			return
		}
		if n := a.Params(); n <= 0 || n > maxParams {
			t.Errorf("accepted %s with %d parameters", data, n)
		}
	})
}
