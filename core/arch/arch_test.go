package arch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"pipeplan/core/model"
)

// TestParamsPublished checks the parameter counts of every bundled config against the
// figures published with the models (data/hf-configs/README.md), exactly.
func TestParamsPublished(t *testing.T) {
	// BERT's published counts are BertModel's: embeddings, encoder and the pooler (h*h + h),
	// without the masked-LM head. Arch describes BertForMaskedLM, which has no pooler but a
	// head: transform dense (h*h + h) and LayerNorm (2h), and the decoder bias (V); its
	// decoder matrix is tied.
	bertAdjust := func(h, v int64) int64 { return -(h*h + h) + (h*h + h + 2*h + v) }
	tests := []struct {
		name string
		want int64
	}{
		{"gpt2", 124_439_808},
		{"gpt2-medium", 354_823_168},
		{"gpt2-large", 774_030_080},
		{"gpt2-xl", 1_557_611_200},
		{"bert-base-uncased", 109_482_240 + bertAdjust(768, 30522)},
		{"bert-large-uncased", 335_141_888 + bertAdjust(1024, 30522)},
		{"llama-2-7b", 6_738_415_616},
		{"llama-2-70b", 68_976_648_192},
		{"meta-llama-3-8b", 8_030_261_248},
		{"llama-3.2-1b", 1_235_814_400},
		{"mistral-7b-v0.1", 7_241_732_096},
		{"mixtral-8x7b-v0.1", 46_702_792_704},
		{"qwen2-7b", 7_615_616_512},
	}
	for _, tt := range tests {
		a, err := Bundled(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Params(); got != tt.want {
			t.Errorf("%s: Params() = %d, want %d (off by %d)", tt.name, got, tt.want, got-tt.want)
		}
	}
}

// TestParamsLlama70BUntied checks llama-3.1-70b (untied, vocabulary 128256) from its
// closed form: 2Vh + L(2h + h(q + 2kv) + qh + 3hf) + h.
func TestParamsLlama31(t *testing.T) {
	a, err := Bundled("llama-3.1-70b")
	if err != nil {
		t.Fatal(err)
	}
	const h, L, q, kv, f, V = 8192, 80, 8192, 1024, 28672, 128256
	want := int64(2*V*h + L*(2*h+h*(q+2*kv)+q*h+3*h*f) + h)
	if got := a.Params(); got != want {
		t.Errorf("Params() = %d, want %d", got, want)
	}
}

// TestGPT3 checks GPT-3 175B from its published architecture: 12 L h^2 + 13 L h for the
// blocks, V h + 2048 h for the embeddings, 2h for the final norm.
func TestGPT3(t *testing.T) {
	data, err := os.ReadFile("testdata/gpt3-175b.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	const h, L, V, S = 12288, 96, 50257, 2048
	want := int64(12*L*h*h + 13*L*h + V*h + S*h + 2*h)
	if got := a.Params(); got != want {
		t.Errorf("Params() = %d, want %d", got, want)
	}
	// The paper reports "175.0B"; the exact count is 174.6B, within 0.3% of it.
	if r := float64(a.Params()) / 175e9; r < 0.997 || r > 1.003 {
		t.Errorf("Params()/175e9 = %.4f, want within 0.3%%", r)
	}
}

// TestParamsMoEPublished checks the bundled mixtures of experts against the total and
// active parameter counts their authors publish, to the precision published: within one
// unit of the last digit given, as publishers round (DeepSeek-V2's 235.7B is "236B") or
// truncate (Qwen3-30B-A3B's 3.35B active is "3.3B", Maverick's 400.7B "400B"). Where a publisher counts the active
// parameters without the token embedding (gpt-oss's model card, DeepSeek-V2-Lite's) the
// embedding matrix is taken off ActiveParams, which counts both ends.
func TestParamsMoEPublished(t *testing.T) {
	tests := []struct {
		name string
		// total and active published, and the unit of their last digit.
		total, active, digit   float64
		activeWithoutEmbedding bool
		source                 string
	}{
		{"deepseek-v3", 671e9, 37e9, 1e9, false, "DeepSeek-V3 Technical Report (arXiv 2412.19437), abstract: 671B total, 37B activated"},
		{"deepseek-v2", 236e9, 21e9, 1e9, false, "DeepSeek-V2 paper (arXiv 2405.04434), abstract: 236B total, 21B activated"},
		{"deepseek-v2-lite", 15.7e9, 2.4e9, 0.1e9, true, "DeepSeek-V2 paper, appendix B: V2-Lite 15.7B total, 2.4B activated"},
		{"mixtral-8x7b-v0.1", 46.7e9, 12.9e9, 0.1e9, false, "Mixtral of Experts (arXiv 2401.04088): 47B total, 13B active; Mistral's release post: 46.7B, 12.9B"},
		{"mixtral-8x22b-v0.1", 141e9, 39e9, 1e9, false, "Mistral's Mixtral 8x22B release post: 141B total, 39B active"},
		{"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.1e9, false, "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"},
		{"qwen3-235b-a22b", 235e9, 22e9, 1e9, false, "Qwen3-235B-A22B model card: 235B total, 22B activated"},
		{"qwen1.5-moe-a2.7b", 14.3e9, 2.7e9, 0.1e9, false, "Qwen1.5-MoE-A2.7B model card: 14.3B total, 2.7B activated"},
		{"llama-4-maverick-17b-128e", 400e9, 17e9, 1e9, false, "Llama 4 model card: Maverick 400B total, 17B active"},
		{"gpt-oss-120b", 116.83e9, 5.13e9, 0.01e9, true, "gpt-oss model card (OpenAI 2025), table 1: 116.83B total, 5.13B active"},
		{"gpt-oss-20b", 20.91e9, 3.61e9, 0.01e9, true, "gpt-oss model card, table 1: 20.91B total, 3.61B active"},
	}
	for _, tt := range tests {
		a, err := Bundled(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		active := a.ActiveParams()
		if tt.activeWithoutEmbedding {
			active -= a.EmbeddingWeightParams()
		}
		for _, c := range []struct {
			what      string
			got       int64
			published float64
		}{{"total", a.Params(), tt.total}, {"active", active, tt.active}} {
			if d := float64(c.got) - c.published; d <= -tt.digit || d >= tt.digit {
				t.Errorf("%s: %s parameters %d, published %.4g (%s)", tt.name, c.what, c.got, c.published, tt.source)
			}
		}
	}
	// Llama 4 Scout's 109B counts its vision encoder too: the text model is 107.8B, and
	// its 17B active.
	a, _ := Bundled("llama-4-scout")
	if p, act := a.Params(), a.ActiveParams(); p < 107.5e9 || p > 108e9 || act < 16.5e9 || act >= 17.5e9 {
		t.Errorf("llama-4-scout: %d total, %d active; want the text model's 107.8B and 17B active", p, act)
	}
}

// TestParamsDeepSeekV3ClosedForm checks DeepSeek-V3 against its structure written out:
// latent attention, 3 dense layers, 58 layers of 256 routed experts plus one shared, a
// router with a score-correction bias, untied embedding and head, and the MTP module.
func TestParamsDeepSeekV3ClosedForm(t *testing.T) {
	a, err := Bundled("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	const h, L, dense, H, qr, kvr, rope, nope, v, f, fd, E, V = 7168, 61, 3, 128, 1536, 512, 64, 128, 128, 2048, 18432, 256, 129280
	attn := int64(h + h*qr + qr + qr*H*(nope+rope) + h*(kvr+rope) + kvr + kvr*H*(nope+v) + H*v*h)
	moe := int64(h + h*E + E + (E+1)*3*h*f)
	mlp := int64(h + 3*h*fd)
	want := int64(2*V*h+h) + L*attn + dense*mlp + (L-dense)*moe
	if got := a.Params(); got != want {
		t.Errorf("Params() = %d, want %d", got, want)
	}
	if got, want := a.MTPParams(), int64(3*h+2*h*h)+attn+moe; got != want {
		t.Errorf("MTPParams() = %d, want %d", got, want)
	}
	if got, want := a.ActiveParams(), want-(L-dense)*int64((E-8)*3*h*f); got != want {
		t.Errorf("ActiveParams() = %d, want %d", got, want)
	}
	for i, moe := range map[int]bool{0: false, 2: false, 3: true, 60: true} {
		if a.MoELayer(i) != moe {
			t.Errorf("MoELayer(%d) = %v, want %v", i, !moe, moe)
		}
	}
}

// TestMoELayersInterleaved: Llama 4 Maverick's MoE layers are every second one
// (interleave_moe_layer_step 2: layers 1, 3, ..., 47), the others dense MLPs of
// intermediate_size_mlp.
func TestMoELayersInterleaved(t *testing.T) {
	a, err := Bundled("llama-4-maverick")
	if err != nil {
		t.Fatal(err)
	}
	if a.MoELayer(0) || !a.MoELayer(1) || a.MoELayer(46) || !a.MoELayer(47) || a.MoELayers() != 24 {
		t.Errorf("MoE layers: 0 %v, 1 %v, 46 %v, 47 %v, count %d", a.MoELayer(0), a.MoELayer(1), a.MoELayer(46), a.MoELayer(47), a.MoELayers())
	}
	if a.DenseWidth() != 16384 || a.IntermediateSize != 8192 || a.SharedExpertSize != 8192 {
		t.Errorf("widths: dense %d, expert %d, shared %d", a.DenseWidth(), a.IntermediateSize, a.SharedExpertSize)
	}
}

func TestActiveParamsMixtral(t *testing.T) {
	a, err := Bundled("mixtral-8x7b")
	if err != nil {
		t.Fatal(err)
	}
	// 6 idle experts of 3 * 4096 * 14336 in each of 32 layers.
	want := int64(46_702_792_704 - 32*6*3*4096*14336)
	if got := a.ActiveParams(); got != want {
		t.Errorf("ActiveParams() = %d, want %d", got, want)
	}
	if got := a.ActiveParams(); got < 12.8e9 || got > 13.0e9 {
		t.Errorf("ActiveParams() = %d, published as about 12.9B", got)
	}
}

func TestParseFields(t *testing.T) {
	a, err := Bundled("meta-llama-3-8b")
	if err != nil {
		t.Fatal(err)
	}
	want := Arch{Name: "meta-llama-3-8b", ModelType: "llama", Family: Llama, HiddenSize: 4096, NumLayers: 32,
		NumHeads: 32, NumKVHeads: 8, HeadDim: 128, IntermediateSize: 14336, VocabSize: 128256, MaxPositions: 8192}
	if *a != want {
		t.Errorf("got %+v\nwant %+v", *a, want)
	}
	g, err := Bundled("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	wantG := Arch{Name: "gpt2", ModelType: "gpt2", Family: GPT2, HiddenSize: 768, NumLayers: 12, NumHeads: 12,
		NumKVHeads: 12, HeadDim: 64, IntermediateSize: 3072, VocabSize: 50257, MaxPositions: 1024,
		TiedEmbeddings: true, QKVBias: true, OutBias: true, MLPBias: true, Activation: "gelu_new", Dropout: true}
	if *g != wantG {
		t.Errorf("got %+v\nwant %+v", *g, wantG)
	}
}

func TestBundledNames(t *testing.T) {
	got := strings.Join(BundledNames(), " ")
	want := "bert-base-uncased bert-large-uncased deepseek-v2 deepseek-v2-lite deepseek-v3 gemma-2b gemma-7b gpt-oss-120b gpt-oss-20b gpt2 gpt2-large gpt2-medium gpt2-xl llama-2-70b llama-2-7b llama-3.1-70b llama-3.2-1b llama-4-maverick-17b-128e llama-4-scout-17b-16e meta-llama-3-8b minitron-4b mistral-7b-v0.1 mixtral-8x22b-v0.1 mixtral-8x7b-v0.1 nemotron-4-340b qwen1.5-moe-a2.7b qwen2-7b qwen3-235b-a22b qwen3-30b-a3b"
	if got != want {
		t.Errorf("BundledNames() = %s\nwant %s", got, want)
	}
	// The list is the directory's.
	entries, err := configs.ReadDir("configs")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(files)
	if !slices.Equal(files, bundledNames) {
		t.Errorf("configs/ holds %v; bundledNames lists %v", files, bundledNames)
	}
	for alias := range aliases {
		if _, ok := BundledConfig(alias); !ok {
			t.Errorf("alias %q names no bundled config", alias)
		}
	}
	for _, bad := range []string{"", "gpt-5", "../arch.go", "configs/gpt2"} {
		if _, ok := BundledConfig(bad); ok {
			t.Errorf("BundledConfig(%q) found something", bad)
		}
	}
	if _, err := Bundled("gpt-5"); err == nil || !strings.Contains(err.Error(), "gpt2-xl") {
		t.Errorf("Bundled(gpt-5) error %v should list the bundled names", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"not json", `{`, "not a JSON object"},
		{"array", `[1]`, "not a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"trailing", `{"model_type":"gpt2"} x`, "unexpected data"},
		{"unknown type", `{"model_type":"t5"}`, `model_type: unsupported model type "t5"`},
		{"no type", `{"hidden_size": 8}`, "model_type: is missing"},
		{"unknown architecture", `{"architectures":["T5Model"]}`, `architectures: unsupported architecture "T5Model"`},
		{"missing size", `{"model_type":"llama","num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10}`,
			"hidden_size: is missing"},
		{"heads divide", `{"model_type":"llama","hidden_size":4096,"num_hidden_layers":2,"num_attention_heads":30,"intermediate_size":8,"vocab_size":10}`,
			"num_attention_heads: must divide hidden_size (4096) when head_dim is not given, got 30"},
		{"gpt2 heads divide", `{"model_type":"gpt2","n_embd":10,"n_layer":1,"n_head":3,"vocab_size":10}`,
			"n_head: must divide n_embd (10), got 3"},
		{"kv heads divide", `{"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":3,"intermediate_size":8,"vocab_size":10}`,
			"num_key_value_heads: must divide num_attention_heads (8), got 3"},
		{"kv heads too many", `{"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":16,"intermediate_size":8,"vocab_size":10}`,
			"num_key_value_heads: must be between 1 and num_attention_heads (8), got 16"},
		{"not integer", `{"model_type":"gpt2","n_embd":"big","n_layer":1,"n_head":1,"vocab_size":10}`,
			`n_embd: must be an integer, got the string "big"`},
		{"number as a string", `{"model_type":"llama","hidden_size":"4096","num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10}`,
			`hidden_size: must be an integer, got the string "4096"`},
		{"probability as a string", `{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":1,"vocab_size":10,"resid_pdrop":"0.1"}`,
			`resid_pdrop: must be a probability in [0, 1], got "0.1"`},
		{"duplicate key", `{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":1,"vocab_size":10,"n_layer":48}`,
			"n_layer: is given twice"},
		{"unknown hidden_act", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"hidden_act":"swiglu2"}`,
			`hidden_act: unknown activation "swiglu2"; HuggingFace's are gelu, gelu_10,`},
		{"unknown activation_function", `{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":1,"vocab_size":10,"activation_function":"gelu_neww"}`,
			`activation_function: unknown activation "gelu_neww"`},
		{"hidden_act not a string", `{"model_type":"bert","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":1,"intermediate_size":8,"vocab_size":10,"hidden_act":3}`,
			"hidden_act: must be a string, got 3"},
		{"required null", `{"model_type":"gpt2","n_embd":null,"n_layer":1,"n_head":1,"vocab_size":10}`,
			"n_embd: must be an integer, got null"},
		{"too big", `{"model_type":"gpt2"` + strings.Repeat(" ", 1<<20) + `}`, "config.json: is 1048597 bytes; a config.json is at most 1048576 (1 MiB)"},
		{"fraction", `{"model_type":"gpt2","n_embd":7.5,"n_layer":1,"n_head":1,"vocab_size":10}`,
			"n_embd: must be an integer, got 7.5"},
		{"negative", `{"model_type":"gpt2","n_embd":-8,"n_layer":1,"n_head":1,"vocab_size":10}`,
			"n_embd: must be between 0 and 2^31, got -8"},
		{"zero layers", `{"model_type":"gpt2","n_embd":8,"n_layer":0,"n_head":1,"vocab_size":10}`,
			"n_layer: must be between 1 and 4096, got 0"},
		{"alias conflict", `{"model_type":"gpt2","n_embd":8,"hidden_size":16,"n_layer":1,"n_head":1,"vocab_size":10}`,
			"hidden_size: disagrees with n_embd (16 vs 8)"},
		{"experts", `{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"num_local_experts":4,"num_experts_per_tok":5}`,
			"num_experts_per_tok: must be between 1 and 4, got 5"},
		{"dropout", `{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":1,"vocab_size":10,"attn_pdrop":2}`,
			"attn_pdrop: must be a probability in [0, 1], got 2"},
		{"tie", `{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":1,"vocab_size":10,"tie_word_embeddings":"yes"}`,
			`tie_word_embeddings: must be true or false, got "yes"`},
		{"experts per token", `{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"num_experts":4,"num_experts_per_tok":5}`,
			"num_experts_per_tok: must be between 1 and 4, got 5"},
		{"mlp only layers", `{"model_type":"qwen2_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"mlp_only_layers":[0]}`,
			"mlp_only_layers: dense layers named one by one are not modelled"},
		{"moe layer freq", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"kv_lora_rank":16,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"moe_layer_freq":2}`,
			"moe_layer_freq: must be 1"},
		{"kv lora rank", `{"model_type":"deepseek_v2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10}`,
			"kv_lora_rank: is missing"},
		{"llama4 text config", `{"model_type":"llama4","text_config":{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"interleave_moe_layer_step":0}}`,
			"text_config.interleave_moe_layer_step: must be between 1 and 2, got 0"},
		{"llama4 moe layers", `{"model_type":"llama4","text_config":{"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"interleave_moe_layer_step":2,"moe_layers":[0,2]}}`,
			"text_config.moe_layers: must be every interleave_moe_layer_step-th layer ([1 3])"},
		{"dense first layers", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":8,"vocab_size":10,"kv_lora_rank":16,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"first_k_dense_replace":3}`,
			"first_k_dense_replace: must be between 0 and 2, got 3"},
		{"huge", `{"model_type":"llama","hidden_size":131072,"num_hidden_layers":4096,"num_attention_heads":1024,"intermediate_size":1048576,"vocab_size":10}`,
			"hidden_size: the model would have more than 2^50 parameters"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.config))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	// Config errors are field errors naming the config key.
	_, err := Parse([]byte(`{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":3,"vocab_size":10}`))
	var es model.Errors
	if !errors.As(err, &es) || es[0].Path != "n_head" {
		t.Errorf("error %v: want model.Errors with path n_head", err)
	}
}

// TestParseNullIsDefault: null in a config.json means the field's default, as in
// HuggingFace's config classes (GPT2Config's n_inner: null is 4 * n_embd).
func TestParseNullIsDefault(t *testing.T) {
	a, err := Parse([]byte(`{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":2,"vocab_size":3,"n_inner":null,"n_positions":null,"hidden_act":null,"tie_word_embeddings":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.IntermediateSize != 32 || a.MaxPositions != 1024 || !a.TiedEmbeddings {
		t.Errorf("defaults: %+v", a)
	}
}

// TestParseArchitecturesOnly: model_type may be inferred from "architectures".
func TestParseArchitecturesOnly(t *testing.T) {
	a, err := Parse([]byte(`{"architectures":["Qwen2ForCausalLM"],"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":128,"vocab_size":100}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.ModelType != "qwen2" || !a.QKVBias || a.OutBias {
		t.Errorf("got %+v, want qwen2 with qkv bias only", a)
	}
}

func ExampleBundled() {
	a, _ := Bundled("gpt2-xl")
	fmt.Println(a.Description())
	// Output: gpt2: 48 layers, hidden 1600, 25 heads, mlp 6400, vocab 50257, tied embeddings, 1.56B parameters
}

// TestGptOssClampAndScaledRotary: gpt-oss's experts clamp their activation's inputs
// unless swiglu_limit is null or 0, and its rotary embedding is scaled where rope_scaling
// is YaRN with an attention factor other than 1 (GptOssConfig's defaults: limit 7,
// YaRN factor 32 without mscale, so 0.1 ln 32 + 1); DeepSeek-V3's YaRN (mscale and
// mscale_all_dim both 1) and Llama 3.1's llama3 scaling leave it unscaled.
func TestGptOssClampAndScaledRotary(t *testing.T) {
	base, ok := BundledConfig("gpt-oss-20b")
	if !ok {
		t.Fatal("gpt-oss-20b is not bundled")
	}
	for _, tt := range []struct {
		extra          string
		clamp, rotated bool
	}{
		{``, true, true},
		{`"swiglu_limit": 7.0, "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096}`, true, true},
		{`"swiglu_limit": null, "rope_scaling": null`, false, false},
		{`"swiglu_limit": 0`, false, true},
		{`"rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0}`, true, false},
		{`"rope_scaling": {"type": "yarn", "factor": 40, "mscale": 0.707, "mscale_all_dim": 1.0}`, true, true},
		{`"rope_scaling": {"rope_type": "yarn", "factor": 32, "attention_factor": 1.0}`, true, false},
		{`"rope_scaling": {"rope_type": "yarn", "factor": 1.0}`, true, false},
		{`"rope_scaling": {"rope_type": "llama3", "factor": 8.0}`, true, false},
	} {
		cfg := base
		if tt.extra != "" {
			cfg = []byte(strings.Replace(string(base), "{", "{"+tt.extra+",", 1))
		}
		a, err := Parse(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.extra, err)
		}
		if a.GLUClamp != tt.clamp || a.RotaryScaled != tt.rotated {
			t.Errorf("%s: clamp %v, scaled rotary %v; want %v, %v", tt.extra, a.GLUClamp, a.RotaryScaled, tt.clamp, tt.rotated)
		}
	}
	if _, err := Parse([]byte(strings.Replace(string(base), "{", `{"swiglu_limit": "seven",`, 1))); err == nil || !strings.Contains(err.Error(), "swiglu_limit") {
		t.Errorf("swiglu_limit \"seven\": error %v, want one naming the field", err)
	}
}
