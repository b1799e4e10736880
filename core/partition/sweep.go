package partition

import "math"

// SweepCosts costs stages whose time is not their layers' work times a speed: a stage's
// cost may depend on the whole range and on the stage (a per-stage choice such as which
// layers recompute, core/recompute), provided that it never decreases as a range grows
// to the right.
type SweepCosts interface {
	// Layers and Stages: n and p.
	Layers() int
	Stages() int
	// CutAllowed reports whether a stage may start at layer k, 0 < k < n.
	CutAllowed(k int) bool
	// Sweep visits the ranges [a, b] for b = a, a+1, ... in order: visit gets b and the
	// cost of [a, b] on a stage i (+Inf where it does not fit), and returns false to end
	// the sweep. Sweep may end it earlier, when no longer range fits any stage.
	Sweep(a int, visit func(b int, cost func(i int) float64) bool)
}

// SweepBounder is a SweepCosts that may skip work on ranges that cost more than a
// bound: after Bound(u), a range costing more than u may be reported as +Inf. SolveSweep
// calls it whenever it knows that no such range can take part in the answer.
type SweepBounder interface {
	Bound(u float64)
}

// SolveSweep returns the split that minimises the largest stage cost, then the total
// (lexicographically, exact to the bit), or ErrInfeasible. It is the classic dynamic
// program of the min-max linear partition (Bokhari, "Partitioning problems in parallel,
// pipelined, and distributed computing", IEEE Trans. Computers 37(1), 1988): best[i][k],
// the best split of layers [0, k) into i stages, is the least over starts a of best[i-1][a]
// combined with stage i-1's cost of [a, k). One sweep from each allowed start a serves
// every stage, so the costs are asked O(n^2 p) times (fewer where sweeps end early: a
// range that fits no stage, or costs at least the best split found, ends its sweep), and
// no table of layers x stages of costs is kept.
//
// Use Solve where a stage's compute is its work times its device's speed: it is exact
// and much faster.
func SolveSweep(c SweepCosts) (Result, error) {
	n, p := c.Layers(), c.Stages()
	if p < 1 || n < p {
		return Result{}, ErrInfeasible
	}
	// The least bottleneck first, then the least total among splits within it: a
	// program on (max, total) together would not be exact for the total (a prefix of
	// larger max may lead to a smaller total once a later stage sets the max).
	u, _, ok := sweepDP(c, inf)
	if !ok {
		return Result{}, ErrInfeasible
	}
	_, bounds, ok := sweepDP(c, u)
	if !ok {
		return Result{}, ErrInfeasible
	}
	r := Result{Boundaries: bounds}
	costs := make([]float64, p)
	for i := range p {
		a, b := bounds[i], bounds[i+1]-1
		c.Sweep(a, func(bb int, cost func(int) float64) bool {
			if bb == b {
				costs[i] = cost(i)
				return false
			}
			return true
		})
		r.MaxCompute = max(r.MaxCompute, costs[i])
		r.Total += costs[i]
	}
	r.Objective = r.MaxCompute
	mean := r.Total / float64(p)
	for _, x := range costs {
		r.Variance += (x - mean) * (x - mean)
	}
	r.Variance /= float64(p)
	return r, nil
}

// sweepDP runs the program: with limit +Inf it minimises the largest stage cost and
// returns it; with a finite limit it minimises the total of the splits whose every
// stage costs at most limit and returns that total. It returns the split found, and
// whether one exists.
func sweepDP(c SweepCosts, limit float64) (float64, []int, bool) {
	n, p := c.Layers(), c.Stages()
	minMax := math.IsInf(limit, 1)
	bounder, _ := c.(SweepBounder)
	if bounder != nil && !minMax {
		bounder.Bound(limit)
	}
	type cell struct {
		v    float64 // the max (minMax) or the total
		from int     // the previous stage's start: the stage holds [from, k)
		ok   bool
	}
	best := make([][]cell, p+1) // best[i][k]: i stages over layers [0, k)
	for i := range best {
		best[i] = make([]cell, n+1)
	}
	best[0][0] = cell{ok: true}
	for a := 0; a < n; a++ {
		if a > 0 && !c.CutAllowed(a) {
			continue
		}
		live := false
		for i := 0; i < p; i++ {
			live = live || best[i][a].ok
		}
		if !live {
			continue
		}
		c.Sweep(a, func(b int, cost func(i int) float64) bool {
			k := b + 1
			if k < n && !c.CutAllowed(k) {
				return true
			}
			bound := limit // no stage may cost more
			if inc := best[p][n]; minMax && inc.ok {
				bound = inc.v
			}
			more := false // some stage may still take a longer range
			for i := 0; i < p; i++ {
				from := best[i][a]
				// Stage i holds [a, k): layers enough must be left for the stages after.
				if !from.ok || n-k < p-i-1 {
					continue
				}
				if i == p-1 && k != n {
					more = true // the last stage ends at the last layer
					continue
				}
				if minMax && from.v > bound {
					continue
				}
				x := cost(i)
				if math.IsInf(x, 1) || math.IsNaN(x) {
					more = true // this stage's memory may not hold it; another's may hold longer
					continue
				}
				if x > bound {
					continue // longer ranges cost no less
				}
				more = true
				v := from.v + x
				if minMax {
					v = max(from.v, x)
				}
				if cur := best[i+1][k]; !cur.ok || v < cur.v {
					best[i+1][k] = cell{v: v, from: a, ok: true}
					if minMax && bounder != nil && i+1 == p {
						bounder.Bound(v) // a split of bottleneck v: nothing costlier is needed
					}
				}
			}
			return more
		})
	}
	if !best[p][n].ok {
		return 0, nil, false
	}
	bounds := make([]int, p+1)
	bounds[p] = n
	for i, k := p, n; i > 0; i-- {
		k = best[i][k].from
		bounds[i-1] = k
	}
	return best[p][n].v, bounds, true
}
