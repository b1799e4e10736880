package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestSelectiveOpRequest: training.recompute selective-op (torchtitan's per-op selective
// checkpointing) through a request: a Llama 3 8B step on 8 H100s (FSDP) keeps more than full
// recomputation and less than none, and takes less time than full and more than none
// (it reruns the key, output and up projections and the memory-bound operations, not
// the others); with tensor parallelism it is refused, naming training.recompute.
func TestSelectiveOpRequest(t *testing.T) {
	run := func(recompute string, tp int) (*wire.Result, error) {
		return Run(context.Background(), &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 4096}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", Count: 8 * tp, DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 1, Data: 8, Tensor: tp, Sharding: "fsdp"},
			Training:    wire.Training{Recompute: recompute},
		})
	}
	type step struct{ seconds, activations float64 }
	got := map[string]step{}
	for _, r := range []string{"none", "selective-op", "full"} {
		res, err := run(r, 1)
		if err != nil || !res.Feasible {
			t.Fatalf("%s: %v (feasible: %v)", r, err, err == nil && res.Feasible)
		}
		got[r] = step{res.Step.StepSeconds, float64(res.Plan.Stages[0].Memory.ActivationBytes)}
	}
	n, op, f := got["none"], got["selective-op"], got["full"]
	if !(f.seconds > op.seconds && op.seconds > n.seconds) {
		t.Errorf("step seconds: none %v, selective-op %v, full %v: want selective-op between", n.seconds, op.seconds, f.seconds)
	}
	if !(f.activations < op.activations && op.activations < n.activations) {
		t.Errorf("activation bytes: none %v, selective-op %v, full %v: want selective-op between", n.activations, op.activations, f.activations)
	}
	_, err := run("selective-op", 2)
	if err == nil || !strings.Contains(err.Error(), "training.recompute") || !strings.Contains(err.Error(), "tensor parallelism") {
		t.Errorf("tensor 2: %v, want a training.recompute error about tensor parallelism", err)
	}
}
