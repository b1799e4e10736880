package examples

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"pipeplan/core/model"
)

var update = flag.Bool("update", false, "rewrite gpt2-medium.json from the formulas in gpt2Medium")

// gpt2Medium computes the example profile from GPT-2 medium's shape with the usual
// analytic formulas; gpt2-medium.json is this function's output, and a test keeps the two
// equal. Shape: 24 blocks, hidden h = 1024, 16 heads, vocabulary V = 50257, 1024
// positions; training with a microbatch of b = 8 sequences of s = 1024 tokens, fp16
// weights and activations with Adam (fp32 master weights and two moments).
//
//   - Parameters hold fp16 weights and gradients (4 bytes per parameter); the optimizer
//     holds fp32 master weights and two moments (12 bytes per parameter).
//   - Block time: forward FLOPs 24*b*s*h^2 + 4*b*s^2*h (Narayanan et al., 2021), backward
//     twice the forward, at 140 TFLOP/s achieved (45% of an A100's 312 dense bf16).
//   - Block activations kept for backward: s*b*h*(34 + 5*a*s/h) bytes (Korthikanti et al.,
//     2022, no recomputation); temporary: the fp16 attention scores, 2*b*a*s^2.
//   - Embedding: memory-bound, at 1.5 TB/s; the head (final layer norm, an untied
//     1024 x V projection and the cross-entropy loss) costs 2*b*s*h*V FLOPs forward and
//     keeps the fp32 softmax of the logits.
//
// Times are rounded to 0.1 microsecond so that the file reads well.
func gpt2Medium() *model.Model {
	const (
		blocks = 24
		h      = 1024
		heads  = 16
		vocab  = 50257
		pos    = 1024
		b      = 8
		s      = 1024
		flops  = 140e12 // achieved FLOP/s
		hbm    = 1.5e12 // achieved bytes/s for memory-bound layers
	)
	round := func(sec float64) float64 { return math.Round(sec*1e7) / 1e7 }
	sbh := int64(s * b * h)
	hidden := 2 * sbh // one fp16 hidden state
	m := &model.Model{
		Name:            "gpt2-medium",
		TimeUnit:        model.Seconds,
		MeasuredOn:      &model.MeasuredOn{Name: "a100-80gb"},
		MicrobatchSize:  8,
		TokensPerSample: 1024,
		Inputs:          []model.Tensor{{ID: "tokens", Bytes: 8 * b * s}},
	}

	embedParams := int64(vocab*h + pos*h)
	m.Layers = append(m.Layers, model.Layer{
		Name:            "embed",
		Kind:            fmt.Sprintf("Embedding(%d,%d)+Position(%d,%d)", vocab, h, pos, h),
		ForwardSeconds:  round(float64(3*hidden) / hbm),
		BackwardSeconds: round(float64(2*embedParams+2*hidden) / hbm),
		ParamBytes:      4 * embedParams,
		OptimizerBytes:  12 * embedParams,
		TemporaryBytes:  hidden,
		ActivationBytes: sbh, // dropout mask
		InputIDs:        []string{"tokens"},
		Outputs:         []model.Tensor{{ID: "h0", Bytes: hidden}},
	})

	blockParams := int64(12*h*h + 13*h)
	blockFLOPs := float64(24*b*s*h*h + 4*b*s*s*h)
	for i := range blocks {
		m.Layers = append(m.Layers, model.Layer{
			Name:            fmt.Sprintf("block.%d", i),
			Kind:            fmt.Sprintf("GPT2Block(h=%d,heads=%d)", h, heads),
			ForwardSeconds:  round(blockFLOPs / flops),
			BackwardSeconds: round(2 * blockFLOPs / flops),
			ParamBytes:      4 * blockParams,
			OptimizerBytes:  12 * blockParams,
			TemporaryBytes:  2 * b * heads * s * s,
			ActivationBytes: sbh * (34 + 5*heads*s/h),
			InputIDs:        []string{fmt.Sprintf("h%d", i)},
			Outputs:         []model.Tensor{{ID: fmt.Sprintf("h%d", i+1), Bytes: hidden}},
		})
	}

	headParams := int64(vocab*h + 2*h)
	headFLOPs := float64(2 * b * s * h * vocab)
	m.Layers = append(m.Layers, model.Layer{
		Name:            "head",
		Kind:            fmt.Sprintf("LayerNorm(%d)+Linear(%d,%d)+CrossEntropy", h, h, vocab),
		ForwardSeconds:  round(headFLOPs / flops),
		BackwardSeconds: round(2 * headFLOPs / flops),
		ParamBytes:      4 * headParams,
		OptimizerBytes:  12 * headParams,
		TemporaryBytes:  2 * b * s * vocab,             // fp16 logits
		ActivationBytes: 2*hidden + 4*int64(b*s*vocab), // norm in/out, fp32 softmax
		InputIDs:        []string{fmt.Sprintf("h%d", blocks)},
		Outputs:         []model.Tensor{{ID: "loss", Bytes: 4}},
	})
	return m
}

func TestGPT2MediumMatchesFormulas(t *testing.T) {
	want, err := json.MarshalIndent(gpt2Medium(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("gpt2-medium.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return // the embedded copy is the old one until the next build
	}
	if !bytes.Equal(gpt2MediumJSON, want) {
		t.Fatal("gpt2-medium.json differs from gpt2Medium(); run go test ./core/examples -run Formulas -update")
	}
}
