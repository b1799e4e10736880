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
// bound of its memory exceeds the device.
//
// The DP is also bounded from outside. For a bound u on every stage's compute, a greedy
// that packs each stage as far as u and memory's lower bound allow (ignoring tie groups,
// letting a stage stay empty) covers the longest prefix any split within u can cover;
// run forwards and backwards it confines each stage's end to a window. A binary search on
// u for the least u the greedy accepts gives a lower bound L on the optimum; the DP then
// runs inside the windows of u = L(1 + 1/256), L(1 + 1/16), ... and is exact as soon as it
// finds a split within u, since no split within u was excluded. Near the optimum the
// windows are narrow: 10,000 layers on 64 stages take tens of milliseconds, where the
// unbounded DP took seconds.
//
// For compute + transfer, seed 000 enumerates every candidate transfer bound. We walk the
// Pareto frontier of (max compute, max transfer) instead: C_0 is the least bottleneck;
// T_k is the least max transfer among splits with max compute <= C_k; C_{k+1} is the least
// max compute among splits with max transfer < T_k. The optimum of C + T is a frontier
// point, and the walk stops once C_k alone reaches the best sum found, so only the points
// that can still win are visited.
//
// Ties are broken by a second DP that, under the optimal bounds, minimises the pair
// (sum of stage times, their variance) lexicographically. Objectives, totals and
// sums of squares within a relative 1e-12 count as equal, so that rounding does not
// decide; pairs of sums are additive, so that DP is exact.
//
// The compute + transfer walk visits every frontier point whose compute is below the best
// sum. Where transfers dwarf compute and fall steadily as stages lengthen, the frontier has
// about as many points as layers, each costing two DPs: 200 layers on 16 stages then take
// seconds (BenchmarkPlanTransferDominated). Realistic profiles have a handful of points.
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
	// Total and Variance are the sum and the (population) variance of stage times; a
	// stage's time is its compute, plus its transfer under MaxComputePlusTransfer.
	Total, Variance float64
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
	lower := s.lowerBound()
	if math.IsInf(lower, 1) {
		return Result{}, ErrInfeasible
	}
	if obj == MaxCompute {
		cstar := s.minCompute(lower, inf, bounds{compute: inf, transfer: inf})
		if math.IsInf(cstar, 1) {
			return Result{}, ErrInfeasible
		}
		r := s.tieBreak(bounds{compute: tolerant(cstar), transfer: inf}, false)
		r.Objective = r.MaxCompute
		return r, nil
	}
	bestSum := inf
	var boxes []bounds
	ck := s.minCompute(lower, inf, bounds{compute: inf, transfer: inf})
	for !math.IsInf(ck, 1) && ck <= bestSum {
		tk := s.minMax(keyTransfer, bounds{compute: ck, transfer: inf})
		if math.IsInf(tk, 1) {
			break // cannot happen: a split reached ck; but never loop on it
		}
		switch sum := ck + tk; {
		case near(sum, bestSum):
			boxes = append(boxes, bounds{compute: tolerant(ck), transfer: tolerant(tk)})
			bestSum = min(bestSum, sum)
		case sum < bestSum:
			bestSum, boxes = sum, []bounds{{compute: tolerant(ck), transfer: tolerant(tk)}}
		}
		// The next frontier point needs strictly less transfer, hence strictly more compute;
		// it only matters if its compute alone does not exceed the best sum.
		ck = s.minCompute(ck, bestSum, bounds{compute: inf, transfer: tk, strictTransfer: true})
	}
	if len(boxes) == 0 {
		return Result{}, ErrInfeasible
	}
	var best Result
	for k, b := range boxes {
		r := s.tieBreak(b, true)
		if k == 0 || lessTimes(r.Total, r.Variance, best.Total, best.Variance) && near(r.MaxCompute+r.MaxTransfer, bestSum) {
			best = r
		}
	}
	best.Objective = best.MaxCompute + best.MaxTransfer
	return best, nil
}

// lessTimes orders (total, spread) of stage times lexicographically, taking values
// within a relative 1e-12 as equal. Stage times are differences of prefix sums, rounded
// differently for every split, so totals that are equal in exact arithmetic (every split
// of a homogeneous pipeline has the same total) differ in their last bits; exact
// comparison would let that noise, not the variance, break the tie.
func lessTimes(total1, spread1, total2, spread2 float64) bool {
	if !near(total1, total2) {
		return total1 < total2
	}
	return spread1 < spread2 && !near(spread1, spread2)
}

// tolerant widens a bound by the same relative 1e-12, so that splits whose maximum differs
// from the optimum only by rounding take part in breaking the tie.
func tolerant(v float64) float64 { return v + 1e-12*math.Abs(v) }

func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b))
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
	// transfers says whether the current DP looks at transfer times; when it does not,
	// walks pass 0 and skip computing them.
	transfers bool
	// lo[i]..hi[i] are the ends stage i may have in a split whose stages all compute
	// within the current bound (see window).
	lo, hi []int
}

// window narrows, for a bound u on every stage's compute, the ends each stage can have:
// stages 0..i cannot cover more than a greedy that packs each stage as far as u and memory
// allow, and stages i+1..p-1 cannot cover more than the same greedy run from the end.
// Greedy packing is optimal for covering a prefix when costs grow with the range, and it
// ignores tie groups and uses memory's monotone lower bound, so it only relaxes the
// problem: the window keeps every split within u. With u near the optimum the windows are
// narrow, which is what makes the DP fast. It reports false when no split is within u.
func (s *solver) window(u float64) bool {
	n, p := s.n, s.p
	if s.lo == nil {
		s.lo, s.hi = make([]int, p), make([]int, p)
	}
	fits := func(i, a, b int) bool { return s.c.Compute(i, a, b) <= u && !s.scan.Hopeless() }
	// Forward: the relaxation lets a stage stay empty when it cannot take the next layer
	// (a slow device), so that the covering stays maximal.
	start := 0
	for i := 0; i < p; i++ {
		if start < n {
			s.scan.Reset(i, start)
			if fits(i, start, start) {
				end := start
				for end+1 < n {
					s.scan.ExtendRight()
					if !fits(i, start, end+1) {
						break
					}
					end++
				}
				start = end + 1
			}
		}
		s.hi[i] = start - 1
	}
	if start < n {
		return false
	}
	end := n - 1
	s.lo[p-1] = n - 1
	for i := p - 1; i > 0; i-- {
		if end >= 0 {
			s.scan.Reset(i, end)
			if fits(i, end, end) {
				first := end
				for first > 0 {
					s.scan.Extend()
					if !fits(i, first-1, end) {
						break
					}
					first--
				}
				end = first - 1
			}
		}
		s.lo[i-1] = end // stage i-1 ends no earlier than where stages i.. can start, less one
	}
	// Whatever stages 1.. leave, stage 0 covers: the forward pass showed the cover exists.
	for i := 0; i < p; i++ {
		lo, hi := i, n-p+i // every stage keeps at least one layer
		s.lo[i], s.hi[i] = max(s.lo[i], lo), min(s.hi[i], hi)
		if s.lo[i] > s.hi[i] {
			return false
		}
	}
	return true
}

// lowerBound returns the least u for which window succeeds, to within a relative 1e-9
// (a lower bound on the optimal bottleneck, up to that precision), or +Inf when no u does.
func (s *solver) lowerBound() float64 {
	var hi float64
	for i := 0; i < s.p; i++ {
		hi = max(hi, s.c.Compute(i, 0, s.n-1))
	}
	if !s.window(hi) {
		return inf
	}
	lo := 0.0
	for k := 0; k < 100 && hi-lo > 1e-9*hi; k++ {
		if mid := lo + (hi-lo)/2; s.window(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// minCompute returns the least achievable max stage compute, at most limit, among splits
// within the transfer bound of bd, or +Inf. lower is a lower bound on it: the DP runs with
// the windows of growing guesses above it, each exact if the optimum lies below the guess,
// and finally with the windows of limit itself.
func (s *solver) minCompute(lower, limit float64, bd bounds) float64 {
	for _, slack := range []float64{1.0 / 256, 1.0 / 16, 1.0 / 2, 4} {
		u := lower * (1 + slack)
		if u == 0 || u >= limit {
			break
		}
		if !s.window(u) {
			continue
		}
		if v := s.minMax(keyCompute, bounds{compute: u, transfer: bd.transfer, strictTransfer: bd.strictTransfer}); !math.IsInf(v, 1) {
			return v
		}
	}
	if !s.window(limit) {
		return inf
	}
	return s.minMax(keyCompute, bounds{compute: limit, transfer: bd.transfer, strictTransfer: bd.strictTransfer})
}

// walkFirst visits the admissible first-stage ranges [0, b] for b = 0, 1, ..., hi, calling
// visit(b, compute, transfer) for each one that fits, until compute exceeds limit or memory
// rules out every longer range.
func (s *solver) walkFirst(limit float64, visit func(b int, compute, transfer float64)) {
	s.scan.Reset(0, 0)
	for b := 0; b <= s.hi[0]; b++ {
		if b > 0 {
			s.scan.ExtendRight()
		}
		comp := s.c.Compute(0, 0, b)
		if comp > limit || s.scan.Hopeless() {
			return
		}
		if b >= s.lo[0] && s.c.CutAllowed(b+1) && s.scan.Fits() {
			visit(b, comp, s.transfer(0, 0, b))
		}
	}
}

// walk visits the admissible ranges [a, b] on stage i > 0 for a = b, b-1, ... down to the
// start the previous stage's window allows, calling visit(a, compute, transfer) for each
// one that fits, until visit returns false, compute exceeds limit, or memory rules out
// every longer range.
func (s *solver) walk(i, b int, limit float64, visit func(a int, compute, transfer float64) bool) {
	if !s.c.CutAllowed(b + 1) {
		return
	}
	lo, hi := s.lo[i-1]+1, s.hi[i-1]+1 // stage i-1 ends at a-1 within its window
	s.scan.Reset(i, b)
	for a := b; a >= lo; a-- {
		if a < b {
			s.scan.Extend()
		}
		comp := s.c.Compute(i, a, b)
		if comp > limit || s.scan.Hopeless() {
			return
		}
		if a > hi || !s.c.CutAllowed(a) || !s.scan.Fits() {
			continue
		}
		if !visit(a, comp, s.transfer(i, a, b)) {
			return
		}
	}
}

func (s *solver) transfer(i, a, b int) float64 {
	if !s.transfers {
		return 0
	}
	return s.c.Transfer(i, a, b)
}

// minMax returns the least achievable max over stages of the key (compute or transfer)
// among splits within the bounds, or +Inf. The windows must be those of bd.compute (or
// wider).
func (s *solver) minMax(k key, bd bounds) float64 {
	n := s.n
	if k == keyTransfer && !s.window(bd.compute) {
		return inf
	}
	s.transfers = k == keyTransfer || !math.IsInf(bd.transfer, 1)
	value := func(comp, tr float64) float64 {
		if k == keyTransfer {
			return tr
		}
		return comp
	}
	for i := range s.best {
		s.best[i] = inf
	}
	s.walkFirst(bd.compute, func(b int, comp, tr float64) {
		if bd.transferOK(tr) {
			s.best[b] = value(comp, tr)
		}
	})
	for i := 1; i < s.p; i++ {
		for b := s.lo[i]; b <= s.hi[i]; b++ {
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
	s.window(bd.compute)
	s.transfers = withTransfer || !math.IsInf(bd.transfer, 1)
	type pair struct{ total, squares float64 }
	best := make([]pair, p*n)
	from := make([]int, p*n)
	for i := range best {
		best[i] = pair{inf, inf}
	}
	less := func(x, y pair) bool { return lessTimes(x.total, x.squares, y.total, y.squares) }
	// Among splits with equal totals, the sum of squares of (t - ref) orders them as the
	// variance does for any ref; a ref near a typical stage time keeps a large common part
	// (Graphcore's host transfers on every stage) from swamping the differences.
	ref := bd.compute / 2
	if withTransfer && !math.IsInf(bd.transfer, 1) {
		ref += bd.transfer
	}
	stageTime := func(comp, tr float64) float64 {
		if withTransfer {
			return comp + tr
		}
		return comp
	}
	s.walkFirst(bd.compute, func(b int, comp, tr float64) {
		if bd.transferOK(tr) {
			t := stageTime(comp, tr)
			best[b] = pair{t, (t - ref) * (t - ref)}
		}
	})
	for i := 1; i < p; i++ {
		for b := s.lo[i]; b <= s.hi[i]; b++ {
			cur, arg := pair{inf, inf}, -1
			s.walk(i, b, bd.compute, func(a int, comp, tr float64) bool {
				prev := best[(i-1)*n+a-1]
				if !bd.transferOK(tr) || math.IsInf(prev.total, 1) {
					return true
				}
				t := stageTime(comp, tr)
				if v := (pair{prev.total + t, prev.squares + (t-ref)*(t-ref)}); less(v, cur) {
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
	times := make([]float64, p)
	for i := 0; i < p; i++ {
		a, b := r.Boundaries[i], r.Boundaries[i+1]-1
		comp, tr := s.c.Compute(i, a, b), s.c.Transfer(i, a, b)
		r.MaxCompute, r.MaxTransfer = max(r.MaxCompute, comp), max(r.MaxTransfer, tr)
		times[i] = stageTime(comp, tr)
		r.Total += times[i]
	}
	for _, t := range times {
		d := t - r.Total/float64(p)
		r.Variance += d * d / float64(p)
	}
	return r
}
