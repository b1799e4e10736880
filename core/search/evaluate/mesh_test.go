package evaluate

import (
	"testing"

	"pipeplan/core/wire"
)

// TestMeshGatherBound: on a full mesh (two nodes of 8 MI355Xs, AMD Infinity Fabric: a
// ring of k devices of a node runs on k-1 links, cluster.Topology.IntraRing), ZeRO-3's
// gathers and HSDP's groups are bounded over the fastest ring a candidate's members may
// make in a node, not over one link: the search breaks no bound and finds exhaustive's
// best and Pareto front; and so on sixteen MI355Xs without nodes (the device's link,
// a mesh of eight at most: core/request's meshMembers).
func TestMeshGatherBound(t *testing.T) {
	for _, perNode := range []int{8, 0} {
		base := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
			Cluster: wire.ClusterSpec{Device: "mi355x", DevicesPerNode: perNode},
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
		s.Pipelines, s.Tensors, s.Recomputes = []int{1, 2}, []int{1, 2}, []string{"none"}
		got, ex := prunedAndExhaustive(t, s, ev)
		if got.Best == nil || got.Best.Candidate != ex.Best.Candidate {
			t.Fatalf("%d a node: best %v, exhaustive %v", perNode, got.Best, ex.Best)
		}
		if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 || len(got.Pareto) != len(ex.Pareto) {
			t.Errorf("%d a node: bound violations %d, %d; Pareto %d, exhaustive %d", perNode, got.Stats.BoundViolations, ex.Stats.BoundViolations, len(got.Pareto), len(ex.Pareto))
		}
	}
}

// TestGatherBoundContextOverNodes: ZeRO-3's gather bound with context parallelism over
// two nodes of 8 (CP 8 and 16). Two replicas of a node-wide context group of 8 reduce
// over a ring of 8 members a node, on 8 NICs (core/request's shardLinks), where the
// bound took the placement's one replica a node, one NIC, and so fell below the plan's
// samples a second: one violation in the exhaustive search, on MI355Xs and H100s alike.
// One replica's context group of 16 is held to a node's links (IntraRing) by
// TestMeshDataRing.
func TestGatherBoundContextOverNodes(t *testing.T) {
	for _, device := range []string{"mi355x", "h100-sxm"} {
		testGatherBoundContextOverNodes(t, device)
	}
}

func testGatherBoundContextOverNodes(t *testing.T, device string) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 8192}},
		Cluster: wire.ClusterSpec{Device: device, DevicesPerNode: 8},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	three := 3
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, GlobalBatch: 8, MaxMicrobatchSize: 1, ZeRO: &three, Schedule: "1f1b"})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines, s.Tensors, s.Contexts, s.Recomputes = []int{1}, []int{1}, []int{8, 16}, []string{"none"}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || ex.Best == nil {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("%s: bound violations %d, %d", device, got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
}
