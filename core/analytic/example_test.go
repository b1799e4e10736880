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

// A mixture of experts with expert parallelism: each device of DeepSeek-V3's 64-way
// expert-parallel group holds 4 of a layer's 256 routed experts, with their gradients
// and optimizer state (ZeRO-1 shards an expert's state over the 64 / EP devices that hold
// a copy of it), beside the latent attention, the router and the shared expert.
func ExampleEstimate_expertParallel() {
	a, _ := arch.Bundled("deepseek-v3")
	t, _ := analytic.PresetTarget("h100-sxm")
	for _, ep := range []int{1, 8, 64} {
		r, err := analytic.Estimate(a, t, analytic.Options{Batch: 1, Seq: 4096, DataParallel: 64, ExpertParallel: ep, Sharding: analytic.ZeRO1})
		if err != nil {
			fmt.Println(err)
			continue
		}
		l := r.Layers[4] // block.3, the first mixture
		fmt.Printf("EP %2d: %s holds %.2fB parameters (%.2fB in experts): %.1f GiB with gradients and optimizer state\n",
			ep, l.Name, float64(l.Params)/1e9, float64(l.ExpertParams)/1e9, float64(l.ParamBytes+l.GradBytes+l.OptimizerBytes)/(1<<30))
	}
	// Output:
	// EP  1: block.3 holds 11.51B parameters (11.27B in experts): 44.9 GiB with gradients and optimizer state
	// EP  8: block.3 holds 1.64B parameters (1.41B in experts): 8.1 GiB with gradients and optimizer state
	// EP 64: block.3 holds 0.41B parameters (0.18B in experts): 3.5 GiB with gradients and optimizer state
}
