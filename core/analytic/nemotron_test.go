package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
)

// nemotronSmall is a small Nemotron (transformers' NemotronConfig): 16 query heads of 64
// and 4 key/value heads over a hidden size of 1,024, an ungated squared-ReLU MLP of
// 4,096, half of each head turned by the rotary embedding.
const nemotronSmall = `{"model_type": "nemotron", "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4,
 "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32000, "partial_rotary_factor": 0.5}`

// TestActivationsNemotron checks a Nemotron block (no dropout, grouped-query attention,
// an ungated MLP) against the closed form of its saved tensors with flash attention:
// the norms' and the first projections' inputs 4eTh, Q and the output projection's
// input 2eTq, K and V 2eT*kv, the softmax statistics 4*b*a*s; the MLP keeps the
// activation's input and the down projection's input, 2eTf (a SwiGLU of the same width
// keeps 4eTf, TestActivationsLlama). Its MLP is two products (up, down: 4 T h f FLOPs
// forward) around one activation kernel that reads and writes eTf each; its norms hold
// a weight and a bias; its rotary embedding, partial or not, moves the whole of Q and K
// (2e T (q + kv)) in one fused kernel.
func TestActivationsNemotron(t *testing.T) {
	a, err := arch.Parse([]byte(nemotronSmall))
	if err != nil {
		t.Fatal(err)
	}
	const b, s, e = 2, 2048, 2
	const T, h, q, kv, f, heads = b * s, 1024, 1024, 256, 4096, 16
	want := int64(e*(4*T*h+2*T*q+2*T*f) + e*2*T*kv + 4*b*heads*s)
	if got := block(estimate(t, a, Options{Batch: b, Seq: s, Attention: Flash})).SavedActivationBytes; got != want {
		t.Errorf("saved %d, want %d", got, want)
	}
	sh := newShape(a, Options{Batch: b, Seq: s, Attention: Flash}.withDefaults())
	p := sh.mlp()
	var flops, actBytes, actKernels float64
	var names []string
	for _, o := range p.ops {
		names = append(names, o.name)
		flops += o.fwd.flops
		if o.name == "gelu" {
			actBytes, actKernels = o.fwd.bytes, o.fwd.kernels
		}
	}
	if flops != 4*T*h*f {
		t.Errorf("MLP forward FLOPs %g, want 4Thf = %g (ops %v)", flops, float64(4*T*h*f), names)
	}
	if actBytes != 2*e*T*f || actKernels != 1 {
		t.Errorf("activation: %g bytes in %g kernels, want %d in 1", actBytes, actKernels, 2*e*T*f)
	}
	if got := mlpTensors(a); got != 2 {
		t.Errorf("MLP tensors %d, want 2 (up and down)", got)
	}
	if got := sh.normTensors(); got != 2 {
		t.Errorf("norm tensors %d, want 2 (LayerNorm1P's weight and bias)", got)
	}
	var rotary *op
	att := sh.attention(false)
	for i := range att.ops {
		if att.ops[i].name == "rotary" {
			rotary = &att.ops[i]
		}
	}
	if rotary == nil || rotary.fwd.bytes != 2*e*T*(q+kv) || rotary.fwd.kernels != 2 {
		t.Errorf("rotary %+v, want %d bytes in 2 kernels", rotary, 2*e*T*(q+kv))
	}
}

// TestEagerRotaryNemotron: HuggingFace's partial rotary embedding in eager PyTorch
// (modeling_nemotron.py, apply_rotary_pos_emb) turns the partial_rotary_factor share of
// Q and K as Llama's eager code does (Llama's measured bytes an element over that share,
// its kernels) and joins the turned and passed parts with one torch.cat each for q and
// k (2 kernels reading and writing 2 bytes an element: 4); a full rotary embedding
// (factor 1) is Llama's plus the cats; the fused path stays 2e T (q + kv) in 2 kernels.
func TestEagerRotaryNemotron(t *testing.T) {
	llama := eagerTraffic[arch.Llama].rotary
	const b, s, e = 2, 512, 2
	const T, q, kv = b * s, 1024, 256
	for _, c := range []struct {
		config           string
		eager            bool
		perElem, kernels float64
	}{
		{nemotronSmall, true, 0.5*llama.bytesPerElement + 4, llama.kernels + 2},
		{strings.Replace(nemotronSmall, `"partial_rotary_factor": 0.5`, `"partial_rotary_factor": 1`, 1), true, llama.bytesPerElement + 4, llama.kernels + 2},
		{nemotronSmall, false, 2 * e, 2},
	} {
		a, err := arch.Parse([]byte(c.config))
		if err != nil {
			t.Fatal(err)
		}
		sh := newShape(a, Options{Batch: b, Seq: s, Attention: Flash}.withDefaults())
		sh.eagerCode = c.eager
		var got *op
		p := sh.attention(false)
		for i := range p.ops {
			if p.ops[i].name == "rotary" {
				got = &p.ops[i]
			}
		}
		if got == nil || math.Abs(got.fwd.bytes-c.perElem*T*(q+kv)) > 1e-6*c.perElem*T*(q+kv) || got.fwd.kernels != c.kernels {
			t.Errorf("factor %g, eager %t: rotary %+v, want %g bytes an element of Q and K in %g kernels", a.RotaryFraction, c.eager, got, c.perElem, c.kernels)
		}
	}
}

// TestEagerReluSquared: HuggingFace's relu2 in eager PyTorch is two kernels (relu, then
// square), 8 bytes an element of the MLP's width in 16 bits; the Megatron-Core path
// (torch.compile'd squared_relu) one kernel of 4 bytes an element.
func TestEagerReluSquared(t *testing.T) {
	a, err := arch.Parse([]byte(nemotronSmall))
	if err != nil {
		t.Fatal(err)
	}
	const T, f = 2 * 512, 4096
	for _, c := range []struct {
		eager            bool
		perElem, kernels float64
	}{{true, 8, 2}, {false, 4, 1}} {
		sh := newShape(a, Options{Batch: 2, Seq: 512, Attention: Flash}.withDefaults())
		sh.eagerCode = c.eager
		var got *op
		p := sh.mlp()
		for i := range p.ops {
			if p.ops[i].name == "gelu" {
				got = &p.ops[i]
			}
		}
		if got == nil || got.fwd.bytes != c.perElem*T*f || got.fwd.kernels != c.kernels {
			t.Errorf("eager %t: activation %+v, want %g bytes an element in %g kernels", c.eager, got, c.perElem, c.kernels)
		}
	}
}

// TestGemmaEmbeddingScale: Gemma multiplies the embedding's output by sqrt(h), one kernel
// reading and writing e T h each way and keeping nothing; Llama does not.
func TestGemmaEmbeddingScale(t *testing.T) {
	const b, s, e = 2, 1024, 2
	for _, tt := range []struct {
		name string
		want bool
	}{{"gemma-2b", true}, {"llama-3.2-1b", false}} {
		a := bundled(t, tt.name)
		sh := newShape(a, Options{Batch: b, Seq: s, Attention: Flash}.withDefaults())
		p := sh.embedding()
		var got *op
		for i := range p.ops {
			if p.ops[i].name == "embedding scale" {
				got = &p.ops[i]
			}
		}
		n := float64(2 * e * b * s * a.HiddenSize)
		switch {
		case (got != nil) != tt.want:
			t.Errorf("%s: embedding scale %v, want it %t", tt.name, got, tt.want)
		case got != nil && (got.fwd.bytes != n || got.bwd.bytes != n || got.fwd.kernels != 1 || got.bwd.kernels != 1):
			t.Errorf("%s: embedding scale %+v, want %g bytes and one kernel each way", tt.name, got, n)
		}
		if tt.want && p.saved != 8*b*s {
			t.Errorf("%s: embedding keeps %g bytes, want the token ids' %d", tt.name, p.saved, 8*b*s)
		}
	}
}
