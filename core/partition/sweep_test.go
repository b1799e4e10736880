package partition

import (
	"math"
	"math/rand/v2"
	"testing"
)

// table is a SweepCosts with any cost per stage and range, non-decreasing as a range
// grows to the right, +Inf where it does not fit.
type table struct {
	n, p int
	cost [][][]float64 // cost[i][a][b]
	ties map[int]bool  // cuts not allowed
}

func (t table) Layers() int           { return t.n }
func (t table) Stages() int           { return t.p }
func (t table) CutAllowed(k int) bool { return !t.ties[k] }
func (t table) Sweep(a int, visit func(int, func(int) float64) bool) {
	for b := a; b < t.n; b++ {
		if !visit(b, func(i int) float64 { return t.cost[i][a][b] }) {
			return
		}
	}
}

// TestSolveSweepBruteForce: the least bottleneck, then the least total, of every split,
// on random stage costs that depend on the stage and the whole range.
func TestSolveSweepBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 4))
	for trial := range 400 {
		n := 1 + rng.IntN(8)
		p := 1 + rng.IntN(min(n, 4))
		tb := table{n: n, p: p, ties: map[int]bool{}}
		for k := 1; k < n; k++ {
			if rng.IntN(6) == 0 {
				tb.ties[k] = true
			}
		}
		for range p {
			c := make([][]float64, n)
			for a := range n {
				c[a] = make([]float64, n)
				x := 0.0
				for b := a; b < n; b++ {
					x += float64(rng.IntN(5))
					c[a][b] = x
					if rng.IntN(10) == 0 || b > a && math.IsInf(c[a][b-1], 1) {
						c[a][b] = math.Inf(1) // does not fit, nor does a longer range
					}
				}
			}
			tb.cost = append(tb.cost, c)
		}
		wantMax, wantTotal := math.Inf(1), math.Inf(1)
		var walk func(i, a int, worst, total float64)
		walk = func(i, a int, worst, total float64) {
			if i == p {
				if a == n && (worst < wantMax || worst == wantMax && total < wantTotal) {
					wantMax, wantTotal = worst, total
				}
				return
			}
			for k := a + 1; k <= n; k++ {
				if k < n && tb.ties[k] {
					continue
				}
				x := tb.cost[i][a][k-1]
				if !math.IsInf(x, 1) {
					walk(i+1, k, max(worst, x), total+x)
				}
			}
		}
		walk(0, 0, 0, 0)
		r, err := SolveSweep(tb)
		if math.IsInf(wantMax, 1) {
			if err == nil {
				t.Fatalf("trial %d: a split %v where none fits", trial, r.Boundaries)
			}
			continue
		}
		if err != nil || r.MaxCompute != wantMax || r.Total != wantTotal {
			t.Fatalf("trial %d: %+v %v, brute force max %v total %v", trial, r, err, wantMax, wantTotal)
		}
	}
}
