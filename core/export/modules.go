package export

import (
	"fmt"
	"strconv"
	"strings"

	"pipeplan/core/arch"
)

// role is what a layer of an analytic model is.
type role int

const (
	other role = iota
	embedding
	block     // a whole transformer block
	attention // a block's attention sublayer
	mlp       // a block's MLP sublayer
	finalNorm
	head
)

// layerRole reads a core/analytic layer name: embedding, block.N, block.N.attention,
// block.N.mlp, final_norm, lm_head or mlm_head. It returns the block number for blocks.
func layerRole(name string) (role, int) {
	switch name {
	case "embedding":
		return embedding, -1
	case "final_norm":
		return finalNorm, -1
	case "lm_head", "mlm_head":
		return head, -1
	}
	rest, ok := strings.CutPrefix(name, "block.")
	if !ok {
		return other, -1
	}
	num, sub, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return other, -1
	}
	switch sub {
	case "":
		return block, n
	case "attention":
		return attention, n
	case "mlp":
		return mlp, n
	}
	return other, -1
}

// hfNames are a family's HuggingFace module paths (the *ForCausalLM / *ForMaskedLM
// classes): the embedding, block N, the first module of block N's attention and MLP
// parts, the final norm and the head; and the modules of the embedding and of the
// attention and MLP parts, first ones first.
type hfNames struct {
	embedding, blockFmt, attentionFmt, mlpFmt, finalNorm, head string
	embeddingParts, attentionParts, mlpParts                   []string
}

var hfFamilies = map[arch.Family]hfNames{
	// LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM.
	arch.Llama: {"model.embed_tokens", "model.layers.%d", "model.layers.%d.input_layernorm",
		"model.layers.%d.post_attention_layernorm", "model.norm", "lm_head",
		[]string{"model.embed_tokens"},
		[]string{"model.layers.%d.input_layernorm", "model.layers.%d.self_attn"},
		[]string{"model.layers.%d.post_attention_layernorm", "model.layers.%d.mlp"}},
	// NemotronForCausalLM (transformers' modeling_nemotron.py names its modules as Llama).
	arch.Nemotron: {"model.embed_tokens", "model.layers.%d", "model.layers.%d.input_layernorm",
		"model.layers.%d.post_attention_layernorm", "model.norm", "lm_head",
		[]string{"model.embed_tokens"},
		[]string{"model.layers.%d.input_layernorm", "model.layers.%d.self_attn"},
		[]string{"model.layers.%d.post_attention_layernorm", "model.layers.%d.mlp"}},
	// GPT2LMHeadModel.
	arch.GPT2: {"transformer.wte", "transformer.h.%d", "transformer.h.%d.ln_1",
		"transformer.h.%d.ln_2", "transformer.ln_f", "lm_head",
		[]string{"transformer.wte", "transformer.wpe"},
		[]string{"transformer.h.%d.ln_1", "transformer.h.%d.attn"},
		[]string{"transformer.h.%d.ln_2", "transformer.h.%d.mlp"}},
	// MPTForCausalLM (LLM Foundry's; transformers' MptForCausalLM names its modules
	// alike): transformer.wpe only with a position table (partModules). The head is
	// lm_head as transformers' class has it; LLM Foundry's tied model has no lm_head
	// module (transformer.wte computes the logits).
	arch.MPT: {"transformer.wte", "transformer.blocks.%d", "transformer.blocks.%d.norm_1",
		"transformer.blocks.%d.norm_2", "transformer.norm_f", "lm_head",
		[]string{"transformer.wte", "transformer.wpe"},
		[]string{"transformer.blocks.%d.norm_1", "transformer.blocks.%d.attn"},
		[]string{"transformer.blocks.%d.norm_2", "transformer.blocks.%d.ffn"}},
	// BertForMaskedLM (post-LayerNorm: the MLP part starts at the intermediate projection).
	arch.BERT: {"bert.embeddings", "bert.encoder.layer.%d", "bert.encoder.layer.%d.attention",
		"bert.encoder.layer.%d.intermediate", "", "cls",
		[]string{"bert.embeddings"},
		[]string{"bert.encoder.layer.%d.attention"},
		[]string{"bert.encoder.layer.%d.intermediate", "bert.encoder.layer.%d.output"}},
}

// moduleNames returns the module path of every layer, and whether they were derived from
// an architecture (false: the layer names themselves).
func (in *Input) moduleNames() ([]string, bool) {
	names := make([]string, len(in.LayerNames))
	hf, ok := hfNames{}, false
	if in.Arch != nil {
		hf, ok = hfFamilies[in.Arch.Family]
	}
	if !ok {
		copy(names, in.LayerNames)
		return names, false
	}
	for i, l := range in.LayerNames {
		r, n := layerRole(l)
		switch r {
		case embedding:
			names[i] = hf.embedding
		case block:
			names[i] = fmt.Sprintf(hf.blockFmt, n)
		case attention:
			names[i] = fmt.Sprintf(hf.attentionFmt, n)
		case mlp:
			names[i] = fmt.Sprintf(hf.mlpFmt, n)
		case finalNorm:
			names[i] = hf.finalNorm
		case head:
			names[i] = hf.head
		}
		if names[i] == "" {
			names[i] = l
		}
	}
	return names, true
}

// partModules returns the modules each layer consists of: for an architecture's
// embedding and sublayers, all their modules; otherwise the one module moduleNames gives.
func (in *Input) partModules() [][]string {
	mods, _ := in.moduleNames()
	out := make([][]string, len(mods))
	hf, ok := hfNames{}, false
	if in.Arch != nil {
		hf, ok = hfFamilies[in.Arch.Family]
	}
	for i, m := range mods {
		out[i] = []string{m}
		if !ok {
			continue
		}
		r, n := layerRole(in.LayerNames[i])
		var fmts []string
		switch r {
		case embedding:
			fmts = hf.embeddingParts
		case attention:
			fmts = hf.attentionParts
		case mlp:
			fmts = hf.mlpParts
		}
		if fmts != nil {
			out[i] = nil
			for _, f := range fmts {
				if f == "transformer.wpe" && !in.Arch.LearnedPositions() {
					continue // MPT with ALiBi has no position table
				}
				if strings.Contains(f, "%d") {
					f = fmt.Sprintf(f, n)
				}
				out[i] = append(out[i], f)
			}
		}
	}
	return out
}

// hasSublayers reports whether the layers split blocks into attention and MLP parts.
func hasSublayers(names []string) bool {
	for _, n := range names {
		if r, _ := layerRole(n); r == attention || r == mlp {
			return true
		}
	}
	return false
}
