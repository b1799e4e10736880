package analytic_test

import (
	"fmt"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
)

// Estimate GPT-2 XL on an A100 for a microbatch of 8 sequences of 1024 tokens, trained
// in mixed precision with AdamW, and turn it into a model for the partitioner.
func ExampleEstimate() {
	a, _ := arch.Bundled("gpt2-xl")
	t, _ := analytic.PresetTarget("a100-80gb")
	r, err := analytic.Estimate(a, t, analytic.Options{Batch: 8, Seq: 1024, Attention: analytic.Eager})
	if err != nil {
		fmt.Println(err)
		return
	}
	block := r.Layers[1] // 34*s*b*h + 5*a*s*s*b bytes (Korthikanti et al. 2022)
	fmt.Println(block.Name, block.Params, "params,", block.SavedActivationBytes, "bytes saved for backward")
	fmt.Println(r.Total.WeightsBytes+r.Total.GradsBytes+r.Total.OptimizerBytes, "bytes of weights, gradients and Adam state")
	m := r.Model()
	fmt.Println(len(m.Layers), "layers:", m.Layers[0].Name, "..", m.Layers[len(m.Layers)-1].Name)
	// Output:
	// block.0 30740800 params, 1494220800 bytes saved for backward
	// 24921779200 bytes of weights, gradients and Adam state
	// 51 layers: embedding .. lm_head
}
