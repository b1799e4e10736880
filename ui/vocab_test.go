package ui

import (
	"slices"
	"testing"

	"pipeplan/core/wire"
)

// TestChoicesAreCores: the page's pickers offer core's values (core/wire), after "" for
// core's default; the page's own lists had lost amp and mixed-fp32-grads (issue 20).
func TestChoicesAreCores(t *testing.T) {
	for _, tc := range []struct {
		knob string
		core []string
	}{
		{"dtype", wire.DTypes()},
		{"fp8_recipe", wire.FP8Recipes()},
		{"attention", wire.Attentions()},
		{"precision", wire.Precisions()},
		{"optimizer", wire.Optimizers()},
		{"recompute", wire.RecomputeModes()},
		{"mode", wire.Modes()},
		{"sharding", wire.ShardingModes()},
		{"context_method", wire.ContextMethods()},
		{"expert_dispatcher", wire.ExpertDispatchers()},
	} {
		if got, want := KnobChoices(tc.knob), append([]string{""}, tc.core...); !slices.Equal(got, want) {
			t.Errorf("KnobChoices(%q) = %q, want %q", tc.knob, got, want)
		}
	}
	if got := KnobChoices("precision"); !slices.Contains(got, "amp") || !slices.Contains(got, "mixed-fp32-grads") {
		t.Errorf("the precision picker offers %q, without amp or mixed-fp32-grads", got)
	}
	if got, want := Schedules(), append([]string{""}, wire.Schedules()...); !slices.Equal(got, want) {
		t.Errorf("Schedules() = %q, want %q", got, want)
	}
}
