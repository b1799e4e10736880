package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestMoEForceLoadBalancingRequest: training.moe_force_load_balancing applies to an
// architecture with routed experts under Megatron-Core's framework modes (not
// HuggingFace's eager or compiled code), refuses an expert imbalance above 1 (random
// logits balance the experts), and adds the random logits' two launches a mixture
// layer's forward: a longer step, never a shorter one.
func TestMoEForceLoadBalancingRequest(t *testing.T) {
	megatron := megatronMoERequest
	for _, c := range []struct {
		name, field, reason string
		req                 func() *wire.Request
	}{
		{"dense", "training.moe_force_load_balancing", "routed experts", func() *wire.Request { return llamaRequest(2, 1, 1) }},
		{"eager", "training.moe_force_load_balancing", "framework megatron", func() *wire.Request { return moeRequest(2, 8, 1, 8) }},
		{"imbalance", "model.architecture.expert_imbalance", "moe_force_load_balancing", func() *wire.Request {
			r := megatron()
			r.Model.Architecture.ExpertImbalance = 1.5
			return r
		}},
	} {
		r := c.req()
		r.Training.MoEForceLoadBalancing = true
		_, err := Run(context.Background(), r)
		fes, _ := model.AsFieldErrors(err)
		found := false
		for _, e := range fes {
			found = found || e.Path == c.field && strings.Contains(e.Reason, c.reason)
		}
		if !found {
			t.Errorf("%s: error %v, want %s refused (%s)", c.name, err, c.field, c.reason)
		}
	}
	steps := map[bool]float64{}
	for _, force := range []bool{false, true} {
		r := megatron()
		r.Training.MoEForceLoadBalancing = force
		res := run(t, r)
		if !res.Feasible || res.Step == nil {
			t.Fatalf("force %v: no plan: %v", force, res.Diagnostics)
		}
		steps[force] = res.Step.StepSeconds
	}
	if !(steps[false] < steps[true]) {
		t.Errorf("steps without and with forced balancing: %v, want longer with it", steps)
	}
}
