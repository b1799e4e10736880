package partition

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBottleneck: Bottleneck is Solve's least bottleneck without the tie-break: within a
// relative 1e-12 below Solve's MaxCompute (ties are broken under that tolerance), and
// infeasible exactly where Solve is, on random models with every feature the estimator
// has (memory limits, tie groups, device speeds).
func TestBottleneck(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 11))
	feasible, infeasible := 0, 0
	for range 1500 {
		n := 1 + rng.IntN(14)
		p := 1 + rng.IntN(min(n, 5))
		c := randomCosts(rng, n, p, rng.IntN(3) > 0)
		r, err := Solve(c, MaxCompute)
		u, uerr := Bottleneck(c)
		if err != nil {
			if !errors.Is(uerr, ErrInfeasible) {
				t.Fatalf("Solve: %v; Bottleneck %v, %v", err, u, uerr)
			}
			infeasible++
			continue
		}
		if uerr != nil || u > r.MaxCompute || r.MaxCompute > u+1e-12*math.Abs(u) {
			t.Fatalf("Bottleneck %v (%v), Solve's MaxCompute %v", u, uerr, r.MaxCompute)
		}
		feasible++
	}
	if feasible < 300 || infeasible < 30 {
		t.Fatalf("%d feasible, %d infeasible: the instances test too little", feasible, infeasible)
	}
}
