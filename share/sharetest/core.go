package sharetest

import (
	"bytes"
	"fmt"

	"pipeplan/share"
)

// coreSchedules are the schedules CoreFixture's requests go round, so that a load test
// compares documents of several simulations, not one.
var coreSchedules = []string{"1f1b", "gpipe", "zb-h1", "interleaved:2", "inference"}

// CoreFixture is the Fixture for share.CorePlanner: the bundled GPT-2 medium profile on
// four A100s, under five schedules (inference among them) and distinct memory
// proportions, so that Valid(i) for i < 50,000 are distinct requests; and a profile of
// 4,000 layers (about 1 MB) as the large request.
func CoreFixture() Fixture {
	return Fixture{
		Plan: share.CorePlanner,
		Valid: func(i int) []byte {
			return fmt.Appendf(nil, `{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4},
				"parallelism": {"pipeline": 4}, "schedule": {"name": %q}, "memory_proportion": %.5f}`,
				coreSchedules[i%len(coreSchedules)], 1-float64(i/len(coreSchedules))*1e-5)
		},
		Invalid:      []byte(`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "no-such-gpu", "count": 4}}`),
		InvalidField: "cluster.device",
		Large:        LargeProfile(4000),
	}
}

// LargeProfile returns a request whose model is an imported profile of n layers (a
// native-JSON document of about 250 bytes a layer), planned on 8 H100s: what a URL
// fragment cannot carry and the store is for.
func LargeProfile(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version": 1, "cluster": {"device": "h100-sxm", "count": 8}, "parallelism": {"pipeline": 8},
	"schedule": {"name": "1f1b", "microbatches": 32}, "model": {"name": "synthetic", "document": {"time_unit": "seconds",
	"inputs": [{"id": "x0", "bytes": 1048576}], "layers": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		// Times and sizes vary with i so that the split is not trivial.
		fmt.Fprintf(&b, `{"name": "layer.%d", "kind": "Block", "forward_seconds": %.6f, "backward_seconds": %.6f, "param_bytes": %d, "optimizer_bytes": %d, "activation_bytes": %d, "inputs": ["x%d"], "outputs": [{"id": "x%d", "bytes": 1048576}]}`,
			i, 1e-4*(1+float64(i%7)), 2e-4*(1+float64(i%5)), 1<<20*(1+i%3), 3<<20*(1+i%3), 4<<20*(1+i%4), i, i+1)
	}
	b.WriteString("]}}}")
	return b.Bytes()
}
