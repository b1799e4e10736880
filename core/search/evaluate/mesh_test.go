package evaluate

import (
	"testing"

	"pipeplan/core/wire"
)

// TestMeshGatherBound: on a full mesh (two nodes of 8 MI355Xs, AMD Infinity Fabric: a
// ring of k devices of a node runs on k-1 links, cluster.Topology.IntraRing), ZeRO-3's
// gathers and HSDP's groups are bounded over the fastest ring a candidate's members may
// make in a node, not over one link: the search breaks no bound and finds exhaustive's
// best and Pareto front; and so on eight MI355Xs without nodes (the device's link).
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
		s, err := ev.Space(wire.SearchKnobs{MaxDevices: map[int]int{8: 16, 0: 8}[perNode], GlobalBatch: 32, MaxMicrobatchSize: 4, ZeRO: &three, Schedule: "1f1b"})
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
