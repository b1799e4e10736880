package evaluate

import (
	"context"
	"testing"

	"pipeplan/core/search"
)

// TestAutoRefineSound: under recompute auto, Refine's least recomputation time (each
// memory-bound stage's fractional knapsack over its layers' options) never bounds a
// candidate below what core plans for it: for every feasible auto candidate of grids
// whose memory binds (Llama-3.2-1B at 32,768 tokens, Llama-3-8B at 8,192, Qwen3-30B-A3B
// at half the memory), Refine is at least the planned samples per second; the knapsack
// tightens the bound of some candidates (so that it is tested at all); and the search
// with auto in the grid gives the same best and Pareto front as planning every
// candidate, with no bound broken.
func TestAutoRefineSound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		arch       string
		seq        int
		devices    int
		maxSize    int
		proportion float64
	}{
		{"llama-3.2-1b", "llama-3.2-1b", 32768, 4, 2, 0.75},
		{"llama-3-8b", "meta-llama-3-8b", 8192, 8, 4, 0},
		{"qwen3-30b-a3b", "qwen3-30b-a3b", 4096, 8, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, s := pruneSpace(t, tc.arch, tc.seq, tc.devices, tc.devices, tc.maxSize, tc.proportion)
			s.Recomputes = []string{"none", "full", "auto"}
			s.ZeROs = []int{0, 1, 3} // ZeRO-3's gathers raise the layers' time
			ex, err := search.Run(context.Background(), s, ev, search.Options{Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			if ex.Best == nil {
				t.Fatal("nothing fits")
			}
			autos, tighter := 0, 0
			for _, o := range ex.Evaluated {
				c := o.Candidate
				if c.Recompute != "auto" || !o.Feasible {
					continue
				}
				autos++
				got, err := ev.Refine(c)
				if err != nil {
					t.Fatal(err)
				}
				if got*(1+1e-9) < o.SamplesPerSecond {
					t.Errorf("%s: Refine %.6g samples/s, planned %.6g", c, got, o.SamplesPerSecond)
				}
				x, err := ev.termsFor(c)
				if err != nil {
					t.Fatal(err)
				}
				if save := x.saving; save != nil {
					x.saving = nil
					loose, err := ev.Refine(c)
					x.saving = save
					if err != nil {
						t.Fatal(err)
					}
					if got < loose {
						tighter++
					}
				}
			}
			if autos == 0 || tighter == 0 {
				t.Fatalf("%d feasible auto candidates, %d bounded tighter by recomputation: the bound is not tested", autos, tighter)
			}
			got, err := search.Run(context.Background(), s, ev, search.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Best == nil || got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
				t.Errorf("best %v, exhaustive %s (%.6g/s)", got.Best, ex.Best.Candidate, ex.Best.SamplesPerSecond)
			}
			if len(got.Pareto) != len(ex.Pareto) {
				t.Fatalf("Pareto front of %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
			}
			for i := range ex.Pareto {
				if got.Pareto[i].Candidate != ex.Pareto[i].Candidate || got.Pareto[i].SamplesPerSecond != ex.Pareto[i].SamplesPerSecond {
					t.Errorf("Pareto point %d: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
				}
			}
			if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
				t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
			}
			t.Logf("%d feasible auto candidates, %d bounded tighter; planned %d of %d", autos, tighter, got.Stats.Evaluated, ex.Stats.Evaluated)
		})
	}
}
