package analytic

import (
	"testing"

	"pipeplan/core/arch"
)

// BenchmarkEstimateLlama70B costs the 83 layers of Llama-2-70B and builds the model.
func BenchmarkEstimateLlama70B(b *testing.B) {
	a, err := arch.Bundled("llama-2-70b")
	if err != nil {
		b.Fatal(err)
	}
	t, _ := PresetTarget("h100-sxm")
	for b.Loop() {
		r, err := Estimate(a, t, Options{Batch: 1, Seq: 4096})
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Model()
	}
}
