// Package partition finds the optimal split of n layers into p contiguous, non-empty
// pipeline stages, stage i on device i.
//
// Two objectives are offered (seed 000): the bottleneck, max over stages of compute time;
// and max stage compute + max stage transfer, for pipelines whose transfers all happen
// after the slowest stage computes. Ranges that do not fit their device's memory, or that
// split a tie group, are never chosen. Among optimal splits the one with the lower total
// stage time, then the lower variance of stage times (Alpa's rule), is returned.
//
// # Algorithm
//
// The bottleneck is the classic min-max linear partition DP, best[i][b] = min over a of
// max(best[i-1][a-1], cost(i, a, b)) (seed 000), visiting for each end b the starts a from
// b downwards. Compute only grows as a range grows, so a walk stops as soon as the range's
// compute reaches the best value found for that state, and as soon as a monotone lower
// bound of its memory exceeds the device; ranges are thus only as long as a stage can be,
// which makes the DP close to O(n^2 / p * log p) in practice instead of O(p n^2).
//
// For compute + transfer, seed 000 enumerates every candidate transfer bound. We walk the
// Pareto frontier of (max compute, max transfer) instead: C_0 is the least bottleneck;
// T_k is the least max transfer among splits with max compute <= C_k; C_{k+1} is the least
// max compute among splits with max transfer < T_k. The optimum of C + T is a frontier
// point, and the walk stops once C_k alone reaches the best sum found, so only the points
// that can still win are visited.
//
// Ties are broken by a second DP that, under the optimal bounds, minimises the pair
// (sum of stage times, sum of their squares) lexicographically; pairs of sums are
// additive, so that DP is exact.
package partition

import (
	"errors"
	"math"
)

// Scanner walks the ranges ending at one layer, growing them to the left, and says
// whether each fits its stage's memory.
type Scanner interface {
	// Reset starts at the range [b, b] on stage i.
	Reset(i, b int)
	// Extend adds the layer before the range; ExtendRight the layer after it.
	Extend()
	ExtendRight()
	// Fits reports whether the range fits stage i's memory.
	Fits() bool
	// Hopeless reports that neither the range nor any range containing it fits.
	Hopeless() bool
}

// Costs is what the partitioner needs to know about a model on a cluster.
type Costs interface {
	// Layers and Stages: n and p.
	Layers() int
	Stages() int
	// CutAllowed reports whether a stage may start at layer k.
	CutAllowed(k int) bool
	// Compute and Transfer of layers [a, b] on stage i. Compute must not decrease as a
	// range grows.
	Compute(i, a, b int) float64
	Transfer(i, a, b int) float64
	// NewScanner returns a memory scanner.
	NewScanner() Scanner
}

// Objective is what the partitioner minimises.
type Objective int

const (
	// MaxCompute minimises the bottleneck: the largest stage compute time.
	MaxCompute Objective = iota
	// MaxComputePlusTransfer minimises the largest stage compute time plus the largest
	// stage transfer time (seed 000's objective).
	MaxComputePlusTransfer
)

// String names the objective as the command line does.
func (o Objective) String() string {
	if o == MaxComputePlusTransfer {
		return "compute+transfer"
	}
	return "compute"
}

// Result is an optimal split.
type Result struct {
	// Boundaries: [0, s1, ..., n]; stage i holds layers Boundaries[i] .. Boundaries[i+1]-1.
	Boundaries []int
	// Objective is the minimised value; MaxCompute and MaxTransfer are its parts.
	Objective, MaxCompute, MaxTransfer float64
	// Total and SumSquares are the sum of stage times and of their squares (a stage's
	// time is its compute, plus its transfer under MaxComputePlusTransfer).
	Total, SumSquares float64
}

// ErrInfeasible is returned when no split satisfies the constraints.
var ErrInfeasible = errors.New("no split into stages fits")

var inf = math.Inf(1)

// Solve returns an optimal split, or ErrInfeasible.
func Solve(c Costs, obj Objective) (Result, error) {
	n, p := c.Layers(), c.Stages()
	if p < 1 || n < p {
		return Result{}, ErrInfeasible
	}
	s := &solver{c: c, n: n, p: p, scan: c.NewScanner(), best: make([]float64, p*n)}
	none := bounds{compute: inf, transfer: inf}
	if obj == MaxCompute {
		cstar := s.minMax(keyCompute, none)
		if math.IsInf(cstar, 1) {
			return Result{}, ErrInfeasible
		}
		r := s.tieBreak(bounds{compute: cstar, transfer: inf}, false)
		r.Objective = r.MaxCompute
		return r, nil
	}
	bestSum := inf
	var boxes []bounds
	ck := s.minMax(keyCompute, none)
	for !math.IsInf(ck, 1) && ck <= bestSum {
		tk := s.minMax(keyTransfer, bounds{compute: ck, transfer: inf})
		switch sum := ck + tk; {
		case sum < bestSum:
			bestSum, boxes = sum, []bounds{{compute: ck, transfer: tk}}
		case sum == bestSum:
			boxes = append(boxes, bounds{compute: ck, transfer: tk})
		}
		ck = s.minMax(keyCompute, bounds{compute: inf, transfer: tk, strictTransfer: true})
	}
	if len(boxes) == 0 {
		return Result{}, ErrInfeasible
	}
	var best Result
	for k, b := range boxes {
		r := s.tieBreak(b, true)
		if k == 0 || r.Total < best.Total || r.Total == best.Total && r.SumSquares < best.SumSquares {
			best = r
		}
	}
	best.Objective = best.MaxCompute + best.MaxTransfer
	return best, nil
}

type key int

const (
	keyCompute key = iota
	keyTransfer
)

// bounds restrict the ranges a split may use: compute <= compute, and transfer <= transfer
// (or < transfer when strictTransfer).
type bounds struct {
	compute, transfer float64
	strictTransfer    bool
}

func (b bounds) transferOK(t float64) bool {
	if b.strictTransfer {
		return t < b.transfer
	}
	return t <= b.transfer
}

type solver struct {
	c    Costs
	n, p int
	scan Scanner
	best []float64 // best[i*n + b]: value of layers [0, b] on stages 0..i
}

// walkFirst visits the admissible first-stage ranges [0, b] for b = 0, 1, ..., hi, calling
// visit(b, compute, transfer) for each one that fits, until compute exceeds limit or memory
// rules out every longer range.
func (s *solver) walkFirst(hi int, limit float64, visit func(b int, compute, transfer float64)) {
	s.scan.Reset(0, 0)
	for b := 0; b <= hi; b++ {
		if b > 0 {
			s.scan.ExtendRight()
		}
		comp := s.c.Compute(0, 0, b)
		if comp > limit || s.scan.Hopeless() {
			return
		}
		if s.c.CutAllowed(b+1) && s.scan.Fits() {
			visit(b, comp, s.c.Transfer(0, 0, b))
		}
	}
}

// walk visits the admissible ranges [a, b] on stage i > 0 for a = b, b-1, ..., i, calling
// visit(a, compute, transfer) for each one that fits, until visit returns false, compute
// exceeds limit, or memory rules out every longer range.
func (s *solver) walk(i, b int, limit float64, visit func(a int, compute, transfer float64) bool) {
	lo := i
	if !s.c.CutAllowed(b + 1) {
		return
	}
	s.scan.Reset(i, b)
	for a := b; a >= lo; a-- {
		if a < b {
			s.scan.Extend()
		}
		comp := s.c.Compute(i, a, b)
		if comp > limit || s.scan.Hopeless() {
			return
		}
		if !s.c.CutAllowed(a) || !s.scan.Fits() {
			continue
		}
		if !visit(a, comp, s.c.Transfer(i, a, b)) {
			return
		}
	}
}

// span is the range of ends b that stage i can have: it leaves at least one layer for
// every stage before and after it.
func (s *solver) span(i int) (lo, hi int) { return i, s.n - s.p + i }

// minMax returns the least achievable max over stages of the key (compute or transfer)
// among splits within the bounds, or +Inf.
func (s *solver) minMax(k key, bd bounds) float64 {
	n := s.n
	value := func(comp, tr float64) float64 {
		if k == keyTransfer {
			return tr
		}
		return comp
	}
	for i := range s.best {
		s.best[i] = inf
	}
	s.walkFirst(s.n-s.p, bd.compute, func(b int, comp, tr float64) {
		if bd.transferOK(tr) {
			s.best[b] = value(comp, tr)
		}
	})
	for i := 1; i < s.p; i++ {
		lo, hi := s.span(i)
		if i == s.p-1 {
			lo = n - 1
		}
		for b := lo; b <= hi; b++ {
			cur := inf
			s.walk(i, b, bd.compute, func(a int, comp, tr float64) bool {
				if bd.transferOK(tr) {
					cur = min(cur, max(value(comp, tr), s.best[(i-1)*n+a-1]))
				}
				// Compute only grows to the left: once it reaches cur, nothing longer is better.
				return k != keyCompute || comp < cur
			})
			s.best[i*n+b] = cur
		}
	}
	return s.best[(s.p-1)*n+n-1]
}

// tieBreak returns, among splits within the bounds, one with the least (total, sum of
// squares) of stage times; withTransfer adds each stage's transfer to its time.
func (s *solver) tieBreak(bd bounds, withTransfer bool) Result {
	n, p := s.n, s.p
	type pair struct{ total, squares float64 }
	best := make([]pair, p*n)
	from := make([]int, p*n)
	for i := range best {
		best[i] = pair{inf, inf}
	}
	less := func(x, y pair) bool { return x.total < y.total || x.total == y.total && x.squares < y.squares }
	stageTime := func(comp, tr float64) float64 {
		if withTransfer {
			return comp + tr
		}
		return comp
	}
	s.walkFirst(n-p, bd.compute, func(b int, comp, tr float64) {
		if bd.transferOK(tr) {
			t := stageTime(comp, tr)
			best[b] = pair{t, t * t}
		}
	})
	for i := 1; i < p; i++ {
		lo, hi := s.span(i)
		if i == p-1 {
			lo = n - 1
		}
		for b := lo; b <= hi; b++ {
			cur, arg := pair{inf, inf}, -1
			s.walk(i, b, bd.compute, func(a int, comp, tr float64) bool {
				prev := best[(i-1)*n+a-1]
				if !bd.transferOK(tr) || math.IsInf(prev.total, 1) {
					return true
				}
				t := stageTime(comp, tr)
				if v := (pair{prev.total + t, prev.squares + t*t}); less(v, cur) {
					cur, arg = v, a
				}
				return true
			})
			best[i*n+b], from[i*n+b] = cur, arg
		}
	}
	r := Result{Boundaries: make([]int, p+1)}
	r.Boundaries[p] = n
	for i, b := p-1, n-1; i > 0; i-- {
		a := from[i*n+b]
		r.Boundaries[i] = a
		b = a - 1
	}
	last := best[(p-1)*n+n-1]
	r.Total, r.SumSquares = last.total, last.squares
	for i := 0; i < p; i++ {
		a, b := r.Boundaries[i], r.Boundaries[i+1]-1
		r.MaxCompute = max(r.MaxCompute, s.c.Compute(i, a, b))
		r.MaxTransfer = max(r.MaxTransfer, s.c.Transfer(i, a, b))
	}
	return r
}
