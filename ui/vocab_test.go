package ui

import (
	"slices"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
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
		{"schedule", wire.Schedules()},
		{"objective", wire.Objectives()},
		{"partition", wire.Partitions()},
		{"framework", wire.Frameworks()},
		{"cross_entropy", wire.CrossEntropies()},
		{"split", wire.Splits()},
		{"tie", wire.Ties()},
		{"data_link", wire.LinkPresets()},
	} {
		if got, want := KnobChoices(tc.knob), append([]string{""}, tc.core...); !slices.Equal(got, want) {
			t.Errorf("KnobChoices(%q) = %q, want %q", tc.knob, got, want)
		}
	}
	if got := KnobChoices("precision"); !slices.Contains(got, "amp") || !slices.Contains(got, "mixed-fp32-grads") {
		t.Errorf("the precision picker offers %q, without amp or mixed-fp32-grads", got)
	}
}

// TestPresetPickers: the Cluster panel's device and link pickers and each device's usual
// links, the Model panel's architectures, are core's presets (its tests import the
// planner; the page's code does not).
func TestPresetPickers(t *testing.T) {
	if got := DeviceNames(); !slices.Equal(got, cluster.DeviceNames()) {
		t.Errorf("DeviceNames() = %q, core/cluster's %q", got, cluster.DeviceNames())
	}
	if got := LinkNames(); !slices.Equal(got, cluster.LinkNames()) {
		t.Errorf("LinkNames() = %q, core/cluster's %q", got, cluster.LinkNames())
	}
	for _, d := range cluster.DeviceNames() {
		p, _ := cluster.LookupDevice(d)
		for _, name := range []string{d, strings.ToUpper(d)} {
			if intra, inter := UsualLinks(name); intra != p.Link || inter != p.Network {
				t.Errorf("UsualLinks(%q) = %q, %q; core/cluster's %q, %q", name, intra, inter, p.Link, p.Network)
			}
		}
	}
	if intra, inter := UsualLinks("made-up"); intra != "" || inter != "" {
		t.Errorf("UsualLinks of an unknown device = %q, %q", intra, inter)
	}
	var archs []string
	for _, o := range (&App{Req: InitialRequest()}).ModelOptions() {
		if n, ok := strings.CutPrefix(o.Value, "arch:"); ok {
			archs = append(archs, n)
		}
	}
	if !slices.Equal(archs, arch.BundledNames()) {
		t.Errorf("the model picker's architectures %q, core/arch's %q", archs, arch.BundledNames())
	}
}
