package evaluate

import (
	"context"
	"testing"

	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestSearchSelectiveOp: a search whose recomputes name selective-op (torchtitan's
// per-op selective checkpointing) beside full, over tensor degrees 1 and 2, plans
// selective-op where core takes it (tensor 1) and leaves out where core refuses it
// (tensor 2: core/analytic does not price its collectives) through Refuses, without an
// error; the pruned search finds exhaustive's best, which recomputes selective-op
// (it reruns less than full), and no candidate breaks the search's lower bound.
func TestSearchSelectiveOp(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 32, MaxMicrobatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines, s.Tensors, s.Recomputes = []int{1, 2, 4}, []int{1, 2}, []string{"selective-op", "full"}
	if err := s.Validate(); err != nil {
		t.Fatalf("a space naming selective-op: %v", err)
	}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || ex.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Best.Recompute != "selective-op" {
		t.Errorf("best %s: want recompute selective-op, which reruns less than full", got.Best.Candidate)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	var opTP, fullTP int
	for _, o := range ex.Evaluated {
		switch {
		case o.Recompute == "selective-op" && o.Tensor > 1:
			opTP++
		case o.Tensor > 1:
			fullTP++
		}
	}
	if opTP == 0 || fullTP == 0 {
		t.Errorf("exhaustive planned %d selective-op candidates and %d full ones with tensor 2: want some of each", opTP, fullTP)
	}
	replan(t, ev, got.Best)
}

// TestSearchSelectiveOpRefused: where core refuses selective-op whatever the split
// (eager attention, a mixture of experts), a search that names it alone plans nothing
// and says nothing fits, rather than failing.
func TestSearchSelectiveOpRefused(t *testing.T) {
	for _, a := range []wire.Architecture{
		{Name: "llama-3.2-1b", Seq: 2048, Attention: "eager"},
		{Name: "mixtral-8x7b", Seq: 1024},
	} {
		ev, err := New(&wire.Request{Model: wire.ModelSpec{Architecture: &a}, Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 16, MaxMicrobatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		s.Pipelines, s.Tensors, s.Recomputes = []int{2}, []int{1}, []string{"selective-op"}
		rep, err := search.Run(context.Background(), s, ev, search.Options{})
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		if rep.Best != nil || len(rep.Evaluated) != 0 {
			t.Errorf("%s (attention %q): planned %d candidates, best %v: core refuses selective-op", a.Name, a.Attention, len(rep.Evaluated), rep.Best)
		}
	}
}
