package estimate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// TestSetCarryBytes: for a stage that is a range [a, b] of a model whose layers read
// random earlier tensors (a set after the ideal [0, a)), what SetCoster.CarryBytes says
// each layer carries is what Estimator.CarryBytes says of it, and with the layer's
// temporaries and the activations kept before it in the stage it makes the stage's
// PeakBytes.
func TestSetCarryBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 5))
	for trial := range 200 {
		n := 2 + rng.IntN(8)
		m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(1 + rng.IntN(50))}}}
		ids := []string{"x"}
		for l := range n {
			in := []string{ids[rng.IntN(len(ids))], ids[len(ids)-1]}
			out := fmt.Sprintf("t%d", l)
			m.Layers = append(m.Layers, model.Layer{Name: out, ForwardSeconds: 1, BackwardSeconds: 2,
				TemporaryBytes: int64(rng.IntN(30)), ActivationBytes: int64(rng.IntN(60)), CarryOverBytes: int64(rng.IntN(3)),
				InputIDs: in, Outputs: []model.Tensor{{ID: out, Bytes: int64(1 + rng.IntN(50))}}})
			ids = append(ids, out)
		}
		e, err := estimate.New(m, &cluster.Cluster{Devices: []cluster.Device{{MemoryBytes: 1 << 30}}}, estimate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a := rng.IntN(n)
		b := a + rng.IntN(n-a)
		before := make([]bool, n)
		for l := range a {
			before[l] = true
		}
		var set []int
		for l := a; l <= b; l++ {
			set = append(set, l)
		}
		s := e.NewSetCoster()
		out := make([]estimate.Range, 1)
		s.Stages(before, set, out)
		carry := s.CarryBytes(set, nil)
		var peak, act int64
		for x, l := range set {
			if carry[x] != e.CarryBytes(l) {
				t.Fatalf("trial %d: layer %d of [%d, %d] carries %d, the estimator says %d", trial, l, a, b, carry[x], e.CarryBytes(l))
			}
			peak = max(peak, m.Layers[l].TemporaryBytes+carry[x]+act)
			act += m.Layers[l].ActivationBytes
		}
		peak = max(peak, act) // all its activations are alive where its forward ends
		if peak != out[0].PeakBytes {
			t.Fatalf("trial %d: peak %d from the carried bytes, the stage's %d", trial, peak, out[0].PeakBytes)
		}
	}
}
