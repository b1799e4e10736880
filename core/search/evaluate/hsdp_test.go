package evaluate

import (
	"slices"
	"testing"

	"pipeplan/core/wire"
)

// TestHSDPSearch: on nodes, the search tries HSDP beside ZeRO-3 with the shard group a
// node holds (core/request's default), or the one the knobs fix. Llama-3.2-1B on four
// nodes of 4 H100s, ZeRO-3 fixed: the search finds exhaustive's best and its Pareto
// front with no bound broken, CannotFit rules out no HSDP candidate that fits, HSDP
// candidates plan their own requests (sharding hsdp with their group), and the best's
// request replans to the same throughput.
func TestHSDPSearch(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4, LinkInter: "ib-hdr"},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	three := 3
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, GlobalBatch: 32, MaxMicrobatchSize: 4, ZeRO: &three, Schedule: "1f1b"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.ShardGroups, []int{0}) {
		t.Fatalf("shard groups %v, want [0] (a node's replicas)", s.ShardGroups)
	}
	s.Pipelines, s.Tensors, s.Recomputes = []int{1, 2}, []int{1, 2}, []string{"none", "full"}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 || len(got.Pareto) != len(ex.Pareto) {
		t.Errorf("bound violations %d, %d; Pareto %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations, len(got.Pareto), len(ex.Pareto))
	}
	hsdp := 0
	for _, o := range ex.Evaluated {
		if o.ShardGroup == 0 {
			continue
		}
		// t x g x c devices: a node's replicas.
		if want := 4 / o.Tensor; o.ShardGroup != min(want, o.Data) && o.Data%want == 0 {
			t.Errorf("%s: shard group %d, want a node's %d replicas", o.Candidate, o.ShardGroup, want)
		}
		q, err := ev.Request(o.Candidate)
		if err != nil {
			t.Fatal(err)
		}
		if q.Parallelism.Sharding != "hsdp" || q.Parallelism.ShardGroup != o.ShardGroup {
			t.Errorf("%s: request sharding %q over %d", o.Candidate, q.Parallelism.Sharding, q.Parallelism.ShardGroup)
		}
		if o.Feasible {
			hsdp++
			if ev.CannotFit(o.Candidate) {
				t.Errorf("%s: CannotFit, but it fits", o.Candidate)
			}
		}
	}
	if hsdp == 0 {
		t.Error("no HSDP candidate fits")
	}
	t.Logf("best %s: %.0f tokens/s, MFU %.1f%%; planned %d of %d; %d HSDP candidates fit", got.Best.Candidate, got.Best.TokensPerSecond, 100*got.Best.MFU, got.Stats.Evaluated, ex.Stats.Evaluated, hsdp)
	replan(t, ev, got.Best)
}

// TestHSDPKnob: the shard_group knob fixes HSDP's group, and is refused where ZeRO-3 is
// not searched.
func TestHSDPKnob(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, ShardGroup: 2, GlobalBatch: 32})
	if err != nil || !slices.Equal(s.ShardGroups, []int{2}) {
		t.Errorf("shard groups %v, %v; want [2]", s.ShardGroups, err)
	}
	one := 1
	if _, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, ShardGroup: 2, ZeRO: &one, GlobalBatch: 32}); err == nil {
		t.Error("shard_group with zero 1: no error")
	}
}
