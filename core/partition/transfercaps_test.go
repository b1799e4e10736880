package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// slopeCosts builds a small transfer-dominated instance, where the transfer caps bite:
// outputs that grow (or shrink) steadily along the model over slow links, so that where a
// stage may end is bounded by its transfers far more than by its compute; sometimes with
// a host, tie groups, jittered times and sizes, or memory that stops long stages.
func slopeCosts(rng *rand.Rand, n, p int) Costs {
	shrink := rng.IntN(2) == 0
	jitter := rng.IntN(2) == 0
	m := &model.Model{}
	for l := range n {
		size := float64(l + 1)
		if shrink {
			size = float64(n - l)
		}
		fw := 1.0
		if jitter {
			fw = 0.5 + rng.Float64()
			size *= 0.8 + 0.4*rng.Float64()
		}
		L := model.Layer{Name: fmt.Sprint(l), ForwardSeconds: fw, ParamBytes: int64(rng.IntN(10)),
			Outputs: []model.Tensor{{ID: fmt.Sprint("t", l), Bytes: int64(size * 1000)}}}
		if l > 0 {
			L.InputIDs = []string{fmt.Sprint("t", l-1)}
		}
		if rng.IntN(12) == 0 {
			L.TieGroup = fmt.Sprint("g", rng.IntN(2))
		}
		m.Layers = append(m.Layers, L)
	}
	mem := int64(1 << 40)
	if rng.IntN(3) == 0 {
		mem = int64(10 * (n/p + 1 + rng.IntN(n)))
	}
	c := cluster.Homogeneous(cluster.Device{MemoryBytes: mem}, p, cluster.Link{BytesPerSecond: 1000}, nil)
	if rng.IntN(3) == 0 {
		c.Host = &cluster.Link{LatencySeconds: 1, BytesPerSecond: 1000}
		m.Inputs = []model.Tensor{{ID: "x", Bytes: int64(1000 * rng.IntN(n))}}
		m.Layers[0].InputIDs = []string{"x"}
	}
	e, err := estimate.New(m, c, estimate.Options{})
	if err != nil {
		panic(err)
	}
	return estimated{e}
}

// TestTransferCapsAgainstBrute checks probes on transfer-dominated instances, with bounds
// where the transfer bound decides where stages end (loose compute, tight transfer, as on
// a flat stretch of the compute+transfer frontier): by both paths, every end some split
// within the bounds uses is reached and only reachable ends are; the witness is within the
// bounds; and moving the bounds short of the probe's events leaves its sets as they are.
// A transfer cap that cut off an end in use, or that missed an event, fails here.
func TestTransferCapsAgainstBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	sets, same := probeSets, sameSets
	counts := map[string]int{}
	for k := range 1500 {
		n := 3 + rng.IntN(22)
		p := 2 + rng.IntN(min(n-1, 6))
		c := slopeCosts(rng, n, p)
		s, g, f, best, ok := threeSolvers(c, p)
		if !ok {
			continue
		}
		for range 4 {
			sp := spec{u: best.maxC * (0.9 + 3*rng.Float64()), t: best.maxT * (0.2 + rng.Float64()), strict: rng.IntN(3) == 0}
			if rng.IntN(2) == 0 { // a bound some range meets exactly: strictness decides
				i, j := rng.IntN(p), rng.IntN(s.m)
				sp.t = s.transfer(i, j, j+1+rng.IntN(s.m-j))
			}
			if rng.IntN(4) == 0 {
				sp.lo = best.minC * rng.Float64()
			}
			want, reached := bruteReach(s, sp)
			feasible := want[p-1][s.m]
			counts[fmt.Sprint(feasible)]++
			var first [][]ival
			for _, x := range []*solver{s, f, g} {
				ok, r, ev := sets(x, sp)
				if ok != feasible {
					t.Fatalf("instance %d (general %v, n=%d p=%d) %+v: probe %v, brute force %v", k, x.general, n, p, sp, ok, feasible)
				}
				if x == s {
					first = r
				} else if ok && !same(first, r) {
					t.Fatalf("instance %d %+v: paths disagree: %v, general %v", k, sp, first, r)
				}
				if ok {
					for i := range p {
						for q := 0; q <= s.m; q++ {
							in := false
							for _, iv := range r[i] {
								in = in || iv.lo <= q && q <= iv.hi
							}
							if in && !reached[i][q] || want[i][q] && !in {
								t.Fatalf("instance %d (general %v, n=%d p=%d) %+v: stage %d end %d: probe %v, brute force reaches %v, uses %v", k, x.general, n, p, sp, i, q, in, reached[i][q], want[i][q])
							}
						}
					}
					if err := within(c, x.witness(sp, x.evenPick()), sp); err != nil {
						t.Fatalf("instance %d %+v: witness: %v", k, sp, err)
					}
				}
				// Events: the same answer anywhere short of them.
				moved := []spec{sp, sp}
				moved[0].u = between(sp.u, ev.up)
				moved[1].t = between(sp.t, ev.tr)
				for y, m := range moved {
					if math.IsInf(m.u, 1) || math.IsNaN(m.u) || math.IsNaN(m.t) {
						continue
					}
					ok2, r2, _ := sets(g, m)
					if ok2 != ok || ok && !same(r, r2) {
						t.Fatalf("instance %d (general %v) %+v (events %+v): moving bound %d to %+v changes the answer: %v %v, then %v %v", k, x.general, sp, ev, y, m, ok, r, ok2, r2)
					}
				}
			}
		}
	}
	t.Logf("probes checked (feasible): %v", counts)
}

// TestSolveTransferDominatedAgainstEnumeration checks Solve end to end on small
// transfer-dominated instances, whose compute+transfer frontiers are flat over long
// stretches, against every split: the same objective, total and variance (each within a
// relative 1e-12), for both objectives.
func TestSolveTransferDominatedAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	type key struct{ objective, total, variance float64 }
	nearly := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b)) }
	less := func(x, y key) bool {
		if !nearly(x.objective, y.objective) {
			return x.objective < y.objective
		}
		if !nearly(x.total, y.total) {
			return x.total < y.total
		}
		return x.variance < y.variance && !nearly(x.variance, y.variance)
	}
	solved := 0
	for k := range 400 {
		n := 2 + rng.IntN(12)
		p := 1 + rng.IntN(min(n, 5))
		c := slopeCosts(rng, n, p)
		e := c.(estimated).Estimator
		s := newSolver(c)
		for _, obj := range []Objective{MaxCompute, MaxComputePlusTransfer} {
			var best key
			found := false
			bounds := make([]int, p+1)
			bounds[p] = n
			var rec func(i int)
			rec = func(i int) {
				if i == p {
					for x := range p {
						if !e.Range(x, bounds[x], bounds[x+1]-1).Fits() {
							return
						}
					}
					r := s.result(slices.Clone(bounds), obj == MaxComputePlusTransfer)
					if v := (key{r.Objective, r.Total, r.Variance}); !found || less(v, best) {
						best, found = v, true
					}
					return
				}
				for b := bounds[i-1] + 1; b <= n-(p-i); b++ {
					if c.CutAllowed(b) {
						bounds[i] = b
						rec(i + 1)
					}
				}
			}
			rec(1)
			got, err := Solve(c, obj)
			if !found {
				if err == nil {
					t.Fatalf("instance %d (%v): no split fits; Solve returned %v", k, obj, got.Boundaries)
				}
				continue
			}
			if err != nil {
				t.Fatalf("instance %d (%v): Solve: %v; enumeration finds %+v", k, obj, err, best)
			}
			v := key{got.Objective, got.Total, got.Variance}
			if less(v, best) || less(best, v) {
				t.Fatalf("instance %d (%v, n=%d p=%d): Solve %v scores %+v; enumeration %+v", k, obj, n, p, got.Boundaries, v, best)
			}
			solved++
		}
	}
	t.Logf("%d instances solved", solved)
}
