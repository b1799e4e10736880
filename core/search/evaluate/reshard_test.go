package evaluate

import (
	"slices"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestReshardKnob: the search's ZeRO-3 candidates reshard by core's rule
// (request.DefaultReshard: step on 2 stages or more, layer on one) unless the reshard
// knob fixes it, which holds for every ZeRO-3 and HSDP candidate and for none other; the
// knob is refused, naming it, with a value core does not have, beside ZeRO stages below
// 3, in inference, and step with a measured profile.
func TestReshardKnob(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	candidate := func(p, zero, group int) search.Candidate {
		return search.Candidate{Config: search.Config{Pipeline: p, Data: 4, Tensor: 1, Schedule: "1f1b", Recompute: "none",
			ZeRO: zero, ShardGroup: group, MemoryProportion: 1, Microbatches: 4}, MicrobatchSize: 1}
	}
	reshard := func(ev *Evaluator, c search.Candidate) string {
		q, err := ev.Request(c)
		if err != nil {
			t.Fatal(err)
		}
		n, err := request.Normalize(q)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		return n.Parallelism.Reshard
	}
	for _, c := range []struct {
		knob string
		// want: the normal form's reshard for p = 1, 2 under ZeRO-3, p = 2 under HSDP,
		// and p = 2 under ZeRO-1.
		want [4]string
	}{
		{"", [4]string{"layer", "step", "step", ""}},
		{"layer", [4]string{"layer", "layer", "layer", ""}},
		{"step", [4]string{"step", "step", "step", ""}},
	} {
		ev, err := New(base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, GlobalBatch: 16, Reshard: c.knob}); err != nil {
			t.Fatal(err)
		}
		got := [4]string{reshard(ev, candidate(1, 3, 0)), reshard(ev, candidate(2, 3, 0)), reshard(ev, candidate(2, 3, 2)), reshard(ev, candidate(2, 1, 0))}
		if got != c.want {
			t.Errorf("reshard %q: candidates reshard %q, want %q", c.knob, got, c.want)
		}
	}
	one, three := 1, 3
	profile := &wire.Request{Model: wire.ModelSpec{Example: "gpt2-medium"}, Cluster: wire.ClusterSpec{Device: "h100-sxm"}}
	inference := &wire.Request{Model: base.Model, Cluster: base.Cluster, Training: wire.Training{Mode: wire.ModeInference}}
	for _, c := range []struct {
		name   string
		base   *wire.Request
		knobs  wire.SearchKnobs
		reason string
	}{
		{"never", base, wire.SearchKnobs{MaxDevices: 16, Reshard: "never"}, "must be one of layer, step"},
		{"zero 1", base, wire.SearchKnobs{MaxDevices: 16, Reshard: "step", ZeRO: &one}, "goes with ZeRO stage 3"},
		{"inference", inference, wire.SearchKnobs{MaxDevices: 16, Reshard: "layer"}, "goes with training"},
		{"profile", profile, wire.SearchKnobs{MaxDevices: 16, Reshard: "step", ZeRO: &three}, "step needs model.architecture"},
	} {
		ev, err := New(c.base)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ev.Space(c.knobs)
		if !hasFieldError(err, "reshard", c.reason) {
			t.Errorf("%s: %v, want reshard: %s", c.name, err, c.reason)
		}
	}
}

// TestContextMethodKnob: the context_method knob fixes the method of every candidate
// with context >= 2 (over the base request's), and is refused, naming it, with a method
// core does not have or without context parallelism in the grid.
func TestContextMethodKnob(t *testing.T) {
	base := &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
		Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		Parallelism: wire.Parallelism{Context: 2, ContextMethod: "ring"},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, Context: 2, ContextMethod: "all-to-all", GlobalBatch: 16})
	if err != nil || !slices.Equal(s.ContextMethods, []string{"all-to-all"}) {
		t.Errorf("context methods %v, %v; want [all-to-all]", s.ContextMethods, err)
	}
	s, err = ev.Space(wire.SearchKnobs{MaxDevices: 16, Context: 2, GlobalBatch: 16})
	if err != nil || !slices.Equal(s.ContextMethods, []string{"ring"}) {
		t.Errorf("without the knob: context methods %v, %v; want the base's [ring]", s.ContextMethods, err)
	}
	for _, c := range []struct {
		knobs  wire.SearchKnobs
		reason string
	}{
		{wire.SearchKnobs{MaxDevices: 16, Context: 2, ContextMethod: "ulysses"}, "must be one of ring, all-to-all, hierarchical, all-gather"},
		{wire.SearchKnobs{MaxDevices: 16, ContextMethod: "ring"}, "goes with context parallelism"},
	} {
		if _, err := ev.Space(c.knobs); !hasFieldError(err, "context_method", c.reason) {
			t.Errorf("%+v: %v, want context_method: %s", c.knobs, err, c.reason)
		}
	}
}

// hasFieldError reports whether err holds an error at path whose reason contains reason.
func hasFieldError(err error, path, reason string) bool {
	fes, _ := model.AsFieldErrors(err)
	return slices.ContainsFunc(fes, func(e *model.FieldError) bool {
		return e.Path == path && strings.Contains(e.Reason, reason)
	})
}

// TestSearchVocabulary: the Search panel's lists are what the search takes: every
// schedule of wire.SearchSchedules passes the space's check (overlap, which it refuses,
// is not among them), and wire.SearchZeROStages names ZeRO stage i by the sharding its
// candidates' requests state.
func TestSearchVocabulary(t *testing.T) {
	for _, name := range wire.SearchSchedules() {
		s := search.Space{MaxDevices: 8, Pipelines: []int{2}, Tensors: []int{1}, Schedules: []string{name}, Recomputes: []string{"none"},
			ZeROs: []int{0}, MemoryProportions: []float64{1}, MaxMicrobatchSize: 1, Microbatches: []int{4}}
		if err := s.Validate(); err != nil {
			t.Errorf("schedule %q: %v", name, err)
		}
	}
	if slices.Contains(wire.SearchSchedules(), "overlap") {
		t.Error("SearchSchedules lists overlap, which the search refuses")
	}
	if !slices.Equal(wire.SearchZeROStages(), zeroStages[:]) {
		t.Errorf("SearchZeROStages %q, the candidates' shardings %q", wire.SearchZeROStages(), zeroStages)
	}
}
