package evaluate

import (
	"math/rand"
	"testing"

	"pipeplan/core/schedule"
)

// TestInterleavedFillBound checks Bound's interleaved fill and drain against the
// schedule's simulator on every split (brute force): for layers of uneven work, each
// split of them into p x v contiguous non-empty stages, with and without transfers, the
// interleaved step lasts at least m*W/p + fillOf(p)/p. With even layers the bound rises
// above m*W/p, the bound without it.
func TestInterleavedFillBound(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, tc := range []struct {
		p, v, n int
		even    bool
	}{
		{2, 2, 7, false}, {3, 2, 9, false}, {4, 2, 10, false}, {2, 3, 8, false}, {3, 3, 11, false},
		{4, 2, 8, true}, {3, 2, 10, true},
	} {
		x := &terms{}
		for range tc.n {
			w := 1.0
			if !tc.even {
				w = 0.05 + 3*rng.Float64()
			}
			x.layers = append(x.layers, w)
			x.work += w
		}
		S := tc.p * tc.v
		for _, m := range []int{tc.p, 2 * tc.p, 3 * tc.p} {
			bound := float64(m)*x.work/float64(tc.p) + x.fillOf(tc.p)/float64(tc.p)
			if tc.even && !(bound > float64(m)*x.work/float64(tc.p)) {
				t.Errorf("p=%d: the fill adds nothing to the bound", tc.p)
			}
			cfg := schedule.Config{Kind: schedule.Interleaved, Chunks: tc.v, Microbatches: m}
			splits := 0
			cuts := make([]int, S+1)
			cuts[S] = tc.n
			var walk func(s, first int)
			walk = func(s, first int) {
				if s == S {
					splits++
					for _, transfer := range []float64{0, 0.3} {
						pl := &schedule.Pipeline{}
						for j := range S {
							var w float64
							for l := cuts[j]; l < cuts[j+1]; l++ {
								w += x.layers[l]
							}
							pl.Stages = append(pl.Stages, schedule.Stage{ForwardSeconds: w / 3, BackwardSeconds: 2 * w / 3})
							if transfer > 0 && j+1 < S {
								pl.TransferSeconds = append(pl.TransferSeconds, transfer)
							}
						}
						r, err := schedule.SimulateStep(pl, cfg)
						if err != nil {
							t.Fatalf("p=%d v=%d m=%d %v: %v", tc.p, tc.v, m, cuts, err)
						}
						if r.MakespanSeconds < bound*(1-1e-12) {
							t.Fatalf("p=%d v=%d m=%d split %v transfer %v: makespan %v below the bound %v", tc.p, tc.v, m, cuts, transfer, r.MakespanSeconds, bound)
						}
					}
					return
				}
				// stage s starts at cuts[s] = first; it ends leaving a layer for each later stage
				cuts[s] = first
				for end := first + 1; end <= tc.n-(S-1-s); end++ {
					if s == S-1 && end != tc.n {
						continue
					}
					walk(s+1, end)
				}
			}
			walk(0, 0)
			if splits == 0 {
				t.Fatalf("p=%d v=%d n=%d: no split", tc.p, tc.v, tc.n)
			}
		}
	}
}
