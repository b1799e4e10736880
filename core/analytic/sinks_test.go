package analytic

import (
	"fmt"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// TestDefaultAttention holds DefaultAttention to Transformer Engine's rule: a model
// with attention sinks (gpt-oss) runs cuDNN's fused attention under the Megatron-style
// modes, and every other case keeps FlashAttention-2, the default.
func TestDefaultAttention(t *testing.T) {
	for _, tc := range []struct {
		model, framework string
		want             Attention
	}{
		{"gpt-oss-120b", cluster.Megatron, CuDNN},
		{"gpt-oss-20b", cluster.CUDAGraphs, CuDNN},
		{"gpt-oss-20b", cluster.Eager, Flash},
		{"gpt-oss-20b", cluster.Compiled, Flash},
		{"qwen3-30b-a3b", cluster.Megatron, Flash},
		{"llama-2-7b", cluster.CUDAGraphs, Flash},
	} {
		a := bundled(t, tc.model)
		if got := DefaultAttention(a, tc.framework); got != tc.want {
			t.Errorf("DefaultAttention(%s, %s) = %s, want %s", tc.model, tc.framework, got, tc.want)
		}
	}
	if got := DefaultAttention(nil, cluster.Megatron); got != Flash {
		t.Errorf("DefaultAttention(nil, megatron) = %s, want %s", got, Flash)
	}
}

// ExampleDefaultAttention shows Transformer Engine's rule for gpt-oss's learnable
// softmax: no FlashAttention, so cuDNN's fused attention, under Megatron-Core.
func ExampleDefaultAttention() {
	a, err := arch.Bundled("gpt-oss-120b")
	if err != nil {
		panic(err)
	}
	fmt.Println(DefaultAttention(a, cluster.Megatron), DefaultAttention(a, cluster.Eager))
	// Output: cudnn flash
}
