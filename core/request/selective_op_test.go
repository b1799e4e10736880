package request

import (
	"context"
	"testing"

	"pipeplan/core/wire"
)

// TestSelectiveOpRequest: training.recompute selective-op (torchtitan's per-op selective
// checkpointing) through a request: a Llama 3 8B step on 8 H100s (FSDP), and on 16 with
// tensor parallelism 2 (sequence parallel), keeps more than full recomputation and less
// than none, and takes less time than full and more than none (it reruns the key,
// output and up projections, the memory-bound operations and, with tensor parallelism,
// the all-gathers, not the others).
func TestSelectiveOpRequest(t *testing.T) {
	run := func(recompute string, tp int) (*wire.Result, error) {
		return Run(context.Background(), &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 4096}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", Count: 8 * tp, DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 1, Data: 8, Tensor: tp, SequenceParallel: tp > 1, Sharding: "fsdp"},
			Training:    wire.Training{Recompute: recompute},
		})
	}
	type step struct{ seconds, activations float64 }
	for _, tp := range []int{1, 2} {
		got := map[string]step{}
		for _, r := range []string{"none", "selective-op", "full"} {
			res, err := run(r, tp)
			if err != nil || !res.Feasible {
				t.Fatalf("tensor %d, %s: %v (feasible: %v)", tp, r, err, err == nil && res.Feasible)
			}
			got[r] = step{res.Step.StepSeconds, float64(res.Plan.Stages[0].Memory.ActivationBytes)}
		}
		n, op, f := got["none"], got["selective-op"], got["full"]
		if !(f.seconds > op.seconds && op.seconds > n.seconds) {
			t.Errorf("tensor %d: step seconds: none %v, selective-op %v, full %v: want selective-op between", tp, n.seconds, op.seconds, f.seconds)
		}
		if !(f.activations < op.activations && op.activations < n.activations) {
			t.Errorf("tensor %d: activation bytes: none %v, selective-op %v, full %v: want selective-op between", tp, n.activations, op.activations, f.activations)
		}
	}
}
