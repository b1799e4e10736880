package dagsplit_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pipeplan/core/dagsplit"
	"pipeplan/core/partition"
)

// toy is a graph whose stage costs are simple and integer: compute is the sum of the
// layers' work times the device's scale; transfer is the number of edges into the stage
// from outside it plus the edges out of it; memory is the number of layers, against a
// limit per stage.
type toy struct {
	work  []float64
	preds [][]int
	ties  []int
	scale []float64
	limit []int
}

func (g *toy) Layers() int         { return len(g.work) }
func (g *toy) Stages() int         { return len(g.scale) }
func (g *toy) Preds(l int) []int   { return g.preds[l] }
func (g *toy) Work(l int) float64  { return g.work[l] }
func (g *toy) Scale(i int) float64 { return g.scale[i] }
func (g *toy) TieGroup(l int) int {
	if g.ties == nil {
		return -1
	}
	return g.ties[l]
}
func (g *toy) Cost(before []bool, set []int, out []dagsplit.StageCost) {
	in := make([]bool, len(g.work))
	for _, l := range set {
		in[l] = true
	}
	var w, edges float64
	for _, l := range set {
		w += g.work[l]
	}
	for l := range g.work {
		for _, q := range g.preds[l] {
			if in[l] != in[q] && (in[l] || in[q]) {
				edges++
			}
		}
	}
	for i := range out {
		out[i] = dagsplit.StageCost{Compute: w * g.scale[i], Transfer: edges, Fits: len(set) <= g.limit[i]}
	}
}

// brute returns the least objective over every convex split (stage of each layer, edges
// never running backwards, stages non-empty, tie groups whole), and the tie order's best
// total and variance among the optimal ones.
func brute(g *toy, obj partition.Objective) (best dagsplit.Result, ok bool) {
	n, p := g.Layers(), g.Stages()
	stage := make([]int, n)
	out := make([]dagsplit.StageCost, p)
	var rec func(l int)
	rec = func(l int) {
		if l < n {
			for s := range p {
				stage[l] = s
				rec(l + 1)
			}
			return
		}
		for v := range n {
			for _, q := range g.preds[v] {
				if stage[q] > stage[v] {
					return
				}
			}
			if g.ties != nil {
				for u := range n {
					if g.ties[u] >= 0 && g.ties[u] == g.ties[v] && stage[u] != stage[v] {
						return
					}
				}
			}
		}
		var r dagsplit.Result
		times := make([]float64, p)
		for s := range p {
			var set []int
			before := make([]bool, n)
			for v := range n {
				before[v] = stage[v] < s
				if stage[v] == s {
					set = append(set, v)
				}
			}
			if len(set) == 0 {
				return
			}
			g.Cost(before, set, out)
			if !out[s].Fits {
				return
			}
			r.MaxCompute, r.MaxTransfer = max(r.MaxCompute, out[s].Compute), max(r.MaxTransfer, out[s].Transfer)
			times[s] = out[s].Compute
			if obj == partition.MaxComputePlusTransfer {
				times[s] += out[s].Transfer
			}
			r.Total += times[s]
		}
		for _, t := range times {
			d := t - r.Total/float64(p)
			r.Variance += d * d / float64(p)
		}
		r.Objective = r.MaxCompute
		if obj == partition.MaxComputePlusTransfer {
			r.Objective += r.MaxTransfer
		}
		if !ok || r.Objective < best.Objective || r.Objective == best.Objective &&
			(r.Total < best.Total || r.Total == best.Total && r.Variance < best.Variance) {
			best, ok = r, true
		}
	}
	rec(0)
	return best, ok
}

// diamond: a -> {b, c} -> d; towers: two chains of three joined at the end.
var (
	diamond = [][]int{nil, {0}, {0}, {1, 2}}
	towers  = [][]int{nil, {0}, {1}, nil, {3}, {4}, {2, 5}}
	chain   = [][]int{nil, {0}, {1}, {2}, {3}}
)

func TestSolveHandPicked(t *testing.T) {
	cases := []struct {
		name   string
		g      toy
		obj    partition.Objective
		want   float64 // objective; -1: infeasible
		stages [][]int // when the optimum is unique
	}{
		// Two towers of work 4+1+1 and 4+1+1, joined: the best contiguous split of the
		// order 0..6 is 6 | 6 ({0,1,2} | {3..6}), and so is the convex one.
		{"towers", toy{work: []float64{4, 1, 1, 4, 1, 1, 0}, preds: towers, scale: []float64{1, 1}, limit: []int{7, 7}},
			partition.MaxCompute, 6, nil},
		// Heavy layers first in each tower (0 and 3): {0, 1} | the rest, 5 | 5.
		{"towers, heavy tops", toy{work: []float64{4, 1, 1, 4, 0, 0, 0}, preds: towers, scale: []float64{1, 1}, limit: []int{7, 7}},
			partition.MaxCompute, 5, nil},
		{"diamond p=3", toy{work: []float64{1, 4, 4, 1}, preds: diamond, scale: []float64{1, 1, 1}, limit: []int{4, 4, 4}},
			partition.MaxCompute, 5, nil},
		// Memory: at most one layer on stage 0, so {a} then two stages over b, c, d.
		{"diamond, memory", toy{work: []float64{5, 1, 1, 1}, preds: diamond, scale: []float64{1, 1, 1}, limit: []int{1, 2, 2}},
			partition.MaxCompute, 5, [][]int{{0}, {1}, {2, 3}}},
		// Tie: b and c together.
		{"diamond, tie", toy{work: []float64{1, 4, 4, 1}, preds: diamond, ties: []int{-1, 0, 0, -1}, scale: []float64{1, 1, 1}, limit: []int{4, 4, 4}},
			partition.MaxCompute, 8, [][]int{{0}, {1, 2}, {3}}},
		{"diamond, too few layers", toy{work: []float64{1, 1, 1, 1}, preds: diamond, scale: []float64{1, 1, 1, 1, 1}, limit: []int{4, 4, 4, 4, 4}},
			partition.MaxCompute, -1, nil},
		{"chain, transfer", toy{work: []float64{3, 1, 1, 1, 3}, preds: chain, scale: []float64{1, 1}, limit: []int{5, 5}},
			partition.MaxComputePlusTransfer, 6, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := dagsplit.Solve(&tc.g, tc.obj, dagsplit.Options{})
			if tc.want < 0 {
				if !errors.Is(err, partition.ErrInfeasible) {
					t.Fatalf("got %+v, %v; want ErrInfeasible", r, err)
				}
				return
			}
			if err != nil || r.Objective != tc.want {
				t.Fatalf("objective %v (%v), want %v", r.Objective, err, tc.want)
			}
			if tc.stages != nil && !slices.EqualFunc(r.Stages, tc.stages, slices.Equal) {
				t.Errorf("stages %v, want %v", r.Stages, tc.stages)
			}
			if ref, _ := brute(&tc.g, tc.obj); ref.Objective != r.Objective || ref.Total != r.Total || !near(ref.Variance, r.Variance) {
				t.Errorf("brute force: %+v; Solve %+v", ref, r)
			}
		})
	}
}

// TestSolveAgainstBruteForce: random small DAGs with integer work, memory limits, tie
// groups and device speeds; Solve's optimum and tie-break agree bit for bit with every
// convex split's.
func TestSolveAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 22))
	counts := map[string]int{}
	for k := range 1500 {
		n := 1 + rng.IntN(7)
		p := 1 + rng.IntN(min(n, 4))
		g := &toy{work: make([]float64, n), preds: make([][]int, n)}
		for l := range n {
			g.work[l] = float64(rng.IntN(10))
			for q := range l {
				if rng.IntN(3) == 0 {
					g.preds[l] = append(g.preds[l], q)
				}
			}
		}
		if rng.IntN(4) == 0 {
			g.ties = make([]int, n)
			for l := range n {
				g.ties[l] = rng.IntN(4) - 2 // -2, -1: none
				if g.ties[l] < 0 {
					g.ties[l] = -1
				}
			}
		}
		for range p {
			g.scale = append(g.scale, float64(1+rng.IntN(2)))
			g.limit = append(g.limit, 1+rng.IntN(n))
		}
		obj := partition.Objective(rng.IntN(2))
		want, feasible := brute(g, obj)
		got, err := dagsplit.Solve(g, obj, dagsplit.Options{})
		switch {
		case !feasible:
			if !errors.Is(err, partition.ErrInfeasible) {
				t.Fatalf("instance %d: no split fits, Solve gave %+v, %v", k, got, err)
			}
			counts["infeasible"]++
			continue
		case err != nil:
			t.Fatalf("instance %d: %v; brute force %+v", k, err, want)
		}
		if got.Objective != want.Objective || got.Total != want.Total || !near(got.Variance, want.Variance) {
			t.Fatalf("instance %d (%v, preds %v, ties %v): Solve %+v, brute force %+v", k, obj, g.preds, g.ties, got, want)
		}
		if !dagsplit.IsChain(g) {
			counts["branching"]++
		}
		counts[fmt.Sprintf("p=%d", p)]++
	}
	for key, least := range map[string]int{"infeasible": 150, "branching": 500, "p=2": 150, "p=3": 100, "p=4": 50} {
		if counts[key] < least {
			t.Errorf("%s: %d instances, want at least %d", key, counts[key], least)
		}
	}
	t.Logf("outcomes: %v", counts)
}

// near: the variance is summed in another order than the brute force's (the stages'
// times are integers, their mean and squares need not be).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b), 1) }

// TestTooManyIdeals: k independent chains of length L have (L+1)^k ideals; past the
// bound Solve says so instead of working on.
func TestTooManyIdeals(t *testing.T) {
	g := &toy{scale: []float64{1, 1}, limit: []int{100, 100}}
	for range 4 { // four chains of four: 5^4 = 625 ideals
		for k := range 4 {
			var preds []int
			if k > 0 {
				preds = []int{len(g.work) - 1}
			}
			g.work = append(g.work, 1)
			g.preds = append(g.preds, preds)
		}
	}
	_, err := dagsplit.Solve(g, partition.MaxCompute, dagsplit.Options{MaxIdeals: 600})
	if !errors.Is(err, dagsplit.ErrTooManyIdeals) {
		t.Fatalf("error %v, want ErrTooManyIdeals", err)
	}
	if r, err := dagsplit.Solve(g, partition.MaxCompute, dagsplit.Options{MaxIdeals: 625}); err != nil || r.Ideals != 625 || r.Objective != 8 {
		t.Errorf("with the bound at the count: %d ideals, objective %v, %v; want 625, 8", r.Ideals, r.Objective, err)
	}
}

// Two towers joined at the end, the heavy layers first in each: the best two-stage split
// puts the top of one tower with the other's, which no contiguous split of the layer
// order 0..4 does (its best is 6).
func ExampleSolve() {
	g := &toy{
		work:  []float64{4, 4, 1, 1, 0},
		preds: [][]int{nil, {0}, nil, {2}, {1, 3}},
		scale: []float64{1, 1},
		limit: []int{5, 5},
	}
	r, err := dagsplit.Solve(g, partition.MaxCompute, dagsplit.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Stages, r.Objective)
	// Output: [[0 2] [1 3 4]] 5
}
