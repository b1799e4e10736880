package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestMoEAuxLossRequest: training.moe_aux_loss is none, aux_loss or seq_aux_loss ("none"
// normalized to the default, left out); it applies to an architecture with routed
// experts in training under Megatron-Core's framework modes (not HuggingFace's eager or
// compiled code), and a loss makes each mixture layer's passes longer (its
// launches and bytes), never shorter.
func TestMoEAuxLossRequest(t *testing.T) {
	megatron := megatronMoERequest
	for _, c := range []struct {
		name   string
		req    func() *wire.Request
		loss   string
		reason string
	}{
		{"unknown", func() *wire.Request { return megatron() }, "z_loss", "must be"},
		{"dense", func() *wire.Request { return llamaRequest(2, 1, 1) }, "aux_loss", "routed experts"},
		{"eager", func() *wire.Request { return moeRequest(2, 8, 1, 8) }, "aux_loss", "framework megatron"},
		{"inference", func() *wire.Request {
			r := moeRequest(2, 8, 1, 8)
			r.Training.Mode, r.Schedule.Name = wire.ModeInference, "inference"
			return r
		}, "seq_aux_loss", "inference"},
	} {
		r := c.req()
		r.Training.MoEAuxLoss = c.loss
		_, err := Run(context.Background(), r)
		fes, _ := model.AsFieldErrors(err)
		found := false
		for _, e := range fes {
			found = found || e.Path == "training.moe_aux_loss" && strings.Contains(e.Reason, c.reason)
		}
		if !found {
			t.Errorf("%s: error %v, want training.moe_aux_loss refused (%s)", c.name, err, c.reason)
		}
	}
	r := moeRequest(2, 8, 1, 8)
	r.Training.MoEAuxLoss = "none"
	n, err := Normalize(r)
	if err != nil {
		t.Fatal(err)
	}
	if n.Training.MoEAuxLoss != "" {
		t.Errorf("none normalized to %q, want it left out", n.Training.MoEAuxLoss)
	}
	steps := map[string]float64{}
	for _, loss := range []string{"", "aux_loss", "seq_aux_loss"} {
		r := megatron()
		r.Training.MoEAuxLoss = loss
		res := run(t, r)
		if !res.Feasible || res.Step == nil {
			t.Fatalf("%q: no plan: %v", loss, res.Diagnostics)
		}
		steps[loss] = res.Step.StepSeconds
	}
	if !(steps[""] < steps["aux_loss"] && steps["aux_loss"] < steps["seq_aux_loss"]) {
		t.Errorf("steps without a loss, with aux_loss and seq_aux_loss: %v, want increasing", steps)
	}
}

// megatronMoERequest is moeRequest(2, 8, 1, 8) under Megatron-LM's framework mode, where
// Megatron-Core's router (its aux loss, forced balancing) runs.
func megatronMoERequest() *wire.Request {
	r := moeRequest(2, 8, 1, 8)
	r.Model.Architecture.Framework = cluster.Megatron
	return r
}
