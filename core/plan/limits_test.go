package plan

import (
	"errors"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// Inputs at the edges of the numeric ranges: each used to give a wrapped memory, a NaN or
// an infinite cost, or a wrong "no plan fits"; now each plans or is refused by field.

// Two layers of 1 EiB activations under GPipe with 16 microbatches: each field is within
// model.Validate's 2^60, but the stash (15 x 1 EiB) overflowed int64 and the stage "fit"
// 80 GiB with negative memory. The model's byte total is refused instead.
func TestMakeRefusesStashBeyondInt64(t *testing.T) {
	m := &model.Model{Layers: []model.Layer{
		{Name: "a", ForwardSeconds: 1, BackwardSeconds: 1, ActivationBytes: 1 << 60},
		{Name: "b", ForwardSeconds: 1, BackwardSeconds: 1, ActivationBytes: 1 << 60},
	}}
	p, err := Make(m, devices(2, 80<<30), with(schedule.Config{Kind: schedule.GPipe, Microbatches: 16}))
	if err == nil {
		t.Fatalf("16 microbatches of 1 EiB activations fit 80 GiB: stage memory %d bytes", p.Stages[0].MemoryBytes)
	}
	if _, ok := model.AsFieldErrors(err); !ok || errors.Is(err, ErrNoFit) || !strings.HasPrefix(err.Error(), "layers: byte counts add up to more than") {
		t.Errorf("Make = %v, want the field error on the layers' byte total", err)
	}
}
