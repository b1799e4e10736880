package request

import "testing"

// TestParamGatherBytesOfDevice: a device's weight all-gather under the distributed
// optimizer (zero1) moves its weights in the type Megatron-Core's param buffer holds
// them (analytic.Result.ParamGatherBytes), the reduce-scatter its gradients in theirs:
// Llama 3 8B's 8,030,261,248 parameters, of which 32 blocks' linear weights (218,103,808
// elements a block) are the fp8 products'. With fp8 primary weights under delayed and
// current scaling those gather at 1 byte (a torch.uint8 buffer) and the rest (the
// embedding, the output layer, the norms) at 2; under mxfp8 all at 2 (gathered in bf16
// through the gradient buffer, then quantized); the gradients at 2, or 4 with
// grad_reduce_in_fp32 (precision mixed-fp32-grads), whatever the recipe.
func TestParamGatherBytesOfDevice(t *testing.T) {
	const params, products = 8_030_261_248, 32 * (4096*6144 + 4096*4096 + 2*14336*4096 + 14336*4096)
	for _, tt := range []struct {
		name, device, recipe, precision string
		fp8Params                       bool
		weights, grads                  int64
	}{
		{"bf16", "h100-sxm", "", "mixed", false, 2 * params, 2 * params},
		{"bf16, grads in fp32", "h100-sxm", "", "mixed-fp32-grads", false, 2 * params, 4 * params},
		{"delayed, 16-bit copies", "h100-sxm", "delayed", "mixed", false, 2 * params, 2 * params},
		{"delayed, fp8 primary weights", "h100-sxm", "delayed", "mixed", true, 2*(params-products) + products, 2 * params},
		{"current, fp8 primary weights, grads in fp32", "h100-sxm", "current", "mixed-fp32-grads", true, 2*(params-products) + products, 4 * params},
		{"mxfp8, fp8 primary weights", "b200", "mxfp8", "mixed", true, 2 * params, 2 * params},
		{"mxfp8, fp8 primary weights, grads in fp32", "b200", "mxfp8", "mixed-fp32-grads", true, 2 * params, 4 * params},
	} {
		r := llamaRequest(1, 8, 1)
		r.Model.Architecture.Framework = "megatron"
		r.Cluster.Device, r.Cluster.DevicesPerNode = tt.device, 8
		r.Parallelism.Sharding = "zero1"
		if tt.recipe != "" {
			r.Model.Architecture.DType = "fp8"
		}
		r.Training.Precision, r.Training.FP8Recipe, r.Training.FP8ParamGather = tt.precision, tt.recipe, tt.fp8Params
		res := run(t, r)
		d := res.Devices[0]
		if d.WeightBytes != tt.weights || d.GradBytes != tt.grads {
			t.Errorf("%s: all-gathers %d bytes and reduce-scatters %d, want %d and %d", tt.name, d.WeightBytes, d.GradBytes, tt.weights, tt.grads)
		}
		if d.AllGatherSeconds <= 0 || d.ReduceScatterSeconds <= 0 {
			t.Errorf("%s: all-gather %g s, reduce-scatter %g s: not priced", tt.name, d.AllGatherSeconds, d.ReduceScatterSeconds)
		}
	}
}
