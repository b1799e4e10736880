// Package partition finds the optimal split of n layers into p contiguous, non-empty
// pipeline stages, stage i on device i.
//
// Two objectives are offered (Graphcore's auto-pipeline tool): the bottleneck, max over stages of compute time;
// and max stage compute + max stage transfer, for pipelines whose transfers all happen
// after the slowest stage computes. Ranges that do not fit their device's memory, or that
// split a tie group, are never chosen. Among optimal splits the one with the lower total
// stage time, then the lower variance of stage times (Alpa's rule), is returned.
//
// # Algorithm
//
// Everything rests on one test, the probe: is there a split whose every stage computes
// within [lo, u] and transfers within t, and fits? It is answered by reachability: R_i,
// the positions where stage i can end in such a split, is the union over j in R_{i-1} of
// the ends q of the admissible ranges [j, q). Positions are the allowed cuts only, so tie
// groups are whole "atoms" and vanish from the problem. Compute only grows with a range,
// and memory only grows as a range grows to the right, so the ends admissible from a start
// j are an interval [L(j), E(j)] (less those whose transfer fails); the sets R_i are kept
// as sorted lists of intervals. When memory also never decreases as a range grows to the
// left (Costs.MemoryMonotone) and there is no transfer bound, E and L never decrease with
// j and the union over an interval of starts is found by binary searches on compute and a
// walk of one memory window, run by run: a probe then costs about one walk over the layers,
// O(n + p log n), like the greedy probe of the classic min-max linear partition
// (Pinar and Aykanat, "Fast optimal load balancing algorithms for 1D partitioning", JPDC
// 64(8), 2004), which it generalises to devices of different speeds and memory, memory
// limits that depend on the stage (microbatches in flight) and tie groups. Otherwise each
// start's E(j) is found by moving the window's two ends, at a cost of the distance they
// move, and a transfer bound keeps, per end, the reachable start that receives fastest.
// Memory does not depend on the probe's bounds: once the sweeps of the stages with one
// memory limit and count in flight have moved the window over twice the positions they
// use, the least start that fits each end is tabulated over them (and extended to the
// right as later stages need), and later sweeps look it up (ski rental: the table costs
// about one sweep, and a probe search runs dozens). Before the sets are built, caps bound where each stage may end, so that no stage
// sweeps positions no split can use: greedies from the last stage make each as long as
// compute and memory allow (and as short as a lower bound on compute does), and, with a
// transfer bound, a walk from the last stage back keeps each stage's start where its
// receive time fits beside the least send time of an end beyond it. Where transfers grow
// steadily along the model, the last stages' transfers, not compute, decide where every
// stage may end, which a forward sweep cannot see, and the walk confines every set to the
// few positions they allow. No table of layers x stages is built.
//
// The least bottleneck is a parametric search over u with the probe as its test
// (bisection over exact candidate sets): a probe that fails reports the least stage
// compute it rejected, and nothing below that can pass, so the lower end jumps to it; one
// that passes gives a split, whose largest compute becomes the upper end. Both ends stay
// values of real stages and the search stops when they meet, exact to the bit.
//
// For compute + transfer, Graphcore's auto-pipeline tool enumerates every transfer bound T and solves the
// compute problem F(T) for each. We search the same candidates, but only where the
// optimum can be: F only decreases as T grows, so a gap [a, b) of bounds not yet tried,
// between tried ones, holds no split better than F(b) + a, and is skipped when that is no
// better than the best sum found. A gap is split at its middle, and every evaluation of F
// covers a whole interval of bounds [T_w, T_r): T_w the largest transfer of the split it
// found, T_r the least transfer its failed probes rejected. Each evaluation so covers at
// least one candidate that the enumeration evaluates, and starts from the bracket that its
// neighbours give.
//
// Where transfers fall steadily as stages lengthen, max compute + max transfer can tie
// over hundreds of frontier points (a flat stretch). When one starts, one probe over the
// rest of the gap bounds from below the total of every split in it that ties the best; the
// gap's ties are deferred behind that bound (a deferred box), and the gap is swept from its
// left end only for splits strictly better than the best: a probe that fails clears every
// bound up to the least transfer it rejected, and after a run of failures the next probe
// gallops ahead by the width cleared so far. Each optimal box keeps a lower bound on its
// total (the model's work plus each stage's least transfer among the ranges the probe
// admitted), and the tie-break runs on the boxes in that order, stopping when a bound
// exceeds the best total found; a deferred box reached so is swept for its tied boxes,
// which join the queue.
//
// Ties are broken under the optimal bounds (widened by a relative 1e-12, so that splits
// whose maxima differ from the optimum only by rounding take part) by a DP over the
// reachable sets of a probe within them, minimising (total, sum of squared deviations of
// the stage times) lexicographically, each within a relative 1e-12 so that rounding does
// not decide. The sets are narrow near an optimum, so this costs little unless very many
// splits tie. On identical devices every split has the same total and the DP minimises the
// squares alone: a split read back from the probe as evenly as allowed bounds them, and
// that bound, with Jensen's inequality on the other stages, confines each stage's time to
// an interval around the mean and each stage's end to a window around an even split
// (narrow), so the DP runs over small sets even when all times are zero or equal, or one
// huge layer leaves every other stage free.
package partition

import (
	"errors"
	"math"
	"sort"
)

// Costs is what the partitioner needs to know about a model on a cluster.
type Costs interface {
	// Layers and Stages: n and p.
	Layers() int
	Stages() int
	// CutAllowed reports whether a stage may start at layer k, 0 < k < n.
	CutAllowed(k int) bool
	// Prefix is the work of layers [0, k) on a device of speed scale 1, 0 <= k <= n; it
	// must not decrease with k, and Prefix(0) is 0. Stage i holding layers [a, b] computes
	// (Prefix(b+1) - Prefix(a)) * Scale(i).
	Prefix(k int) float64
	Scale(i int) float64
	// Recv and Send: stage i holding layers [a, b] transfers Recv(i, a) + Send(i, b).
	Recv(i, a int) float64
	Send(i, b int) float64
	// Memory: a range with parts (base, stash, floor) needs
	// max(base + (InFlight(i)-1)*stash, floor) bytes on stage i (floor: what the range
	// needs whatever the microbatches in flight, as an optimizer step's temporaries), and
	// fits when that is at most LimitBytes(i).
	InFlight(i int) int
	LimitBytes(i int) int64
	// MemoryUpper bounds the parts of layers [a, b] from above, in O(1).
	MemoryUpper(a, b int) (base, stash, floor int64)
	// MemoryMonotone reports whether a range's memory never decreases as the range grows
	// (then a Scanner's Lower gives the memory its Memory does, on every stage). It must
	// never decrease as a range grows to the right in any case.
	MemoryMonotone() bool
	// NewScanner returns a memory scanner.
	NewScanner() Scanner
}

// Scanner is a window of layers [first, last] whose memory parts it keeps up to date as
// either end moves by one layer.
type Scanner interface {
	// Reset makes the window the layer [a, a].
	Reset(a int)
	// ExtendLeft and ExtendRight add the layer before or after the window; ShrinkLeft and
	// ShrinkRight drop its first or last layer (the window keeps one).
	ExtendLeft()
	ExtendRight()
	ShrinkLeft()
	ShrinkRight()
	// Memory returns the window's parts; Lower parts that bound them from below for the
	// window and every window containing it.
	Memory() (base, stash, floor int64)
	Lower() (base, stash, floor int64)
}

// Objective is what the partitioner minimises.
type Objective int

const (
	// MaxCompute minimises the bottleneck: the largest stage compute time.
	MaxCompute Objective = iota
	// MaxComputePlusTransfer minimises the largest stage compute time plus the largest
	// stage transfer time (Graphcore's auto-pipeline tool's objective).
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

// Solve returns an optimal split, or ErrInfeasible.
func Solve(c Costs, obj Objective) (Result, error) {
	n, p := c.Layers(), c.Stages()
	if p < 1 || n < p {
		return Result{}, ErrInfeasible
	}
	s := newSolver(c)
	if s.m < p {
		return Result{}, ErrInfeasible
	}
	best, _ := s.minCompute(inf, false, s.lowerBound(), inf, measured{})
	if math.IsInf(best.maxC, 1) {
		return Result{}, ErrInfeasible
	}
	if obj == MaxCompute {
		return s.result(s.breakTies(best), false), nil
	}
	// The optimal boxes, cheapest total first: a box whose lower bound on the total exceeds
	// the best total found cannot win the tie-break. A deferred box is swept for its boxes
	// when its bound is reached, and they join the queue.
	boxes, sum := s.frontier(best)
	sort.SliceStable(boxes, func(x, y int) bool { return boxes[x].lbTotal < boxes[y].lbTotal })
	var r Result
	tried := false
	seen := map[[2]float64]bool{} // a box that a deferred one's sweep finds again is tried once
	for k := 0; k < len(boxes); k++ {
		b := boxes[k]
		if tried && b.lbTotal > r.Total && !near(b.lbTotal, r.Total) {
			break
		}
		if key := [2]float64{b.maxC, b.maxT}; b.deferred == nil {
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		if b.deferred != nil {
			more := s.expand(*b.deferred, sum)
			boxes = append(boxes[:k+1:k+1], append(more, boxes[k+1:]...)...)
			rest := boxes[k+1:]
			sort.SliceStable(rest, func(x, y int) bool { return rest[x].lbTotal < rest[y].lbTotal })
			continue
		}
		sp := spec{u: tolerant(b.maxC), t: tolerant(b.maxT)}
		x := s.result(s.tieDP(sp, true, sp.u/2+sp.t), true)
		if !tried || (score{x.Total, x.Variance}).better(score{r.Total, r.Variance}) && near(x.Objective, r.Objective) {
			r = x
		}
		tried = true
	}
	return r, nil
}

// Bottleneck returns the least bottleneck (max over stages of compute) of any split, as
// Solve's search finds it before it breaks ties, without the split: Solve's MaxCompute
// is within a relative 1e-12 above it (ties are broken under that tolerance). It is for
// callers that need only the value (a bound), at a fraction of Solve's cost.
func Bottleneck(c Costs) (float64, error) {
	n, p := c.Layers(), c.Stages()
	if p < 1 || n < p {
		return 0, ErrInfeasible
	}
	s := newSolver(c)
	if s.m < p {
		return 0, ErrInfeasible
	}
	best, _ := s.minCompute(inf, false, s.lowerBound(), inf, measured{})
	if math.IsInf(best.maxC, 1) {
		return 0, ErrInfeasible
	}
	return best.maxC, nil
}

// breakTies returns, among the splits with the least bottleneck (that of best), one with
// the least (total, variance). On identical devices every split has the same total: when
// every stage time is zero all splits tie, and otherwise the DP runs within the bounds
// that an even split's variance leaves (narrow).
func (s *solver) breakTies(best measured) []int {
	sp := spec{u: tolerant(best.maxC), t: inf}
	if !s.same {
		return s.tieDP(sp, false, sp.u/2)
	}
	if ok, _ := s.probe(sp); !ok {
		panic("partition: the least bottleneck admits no split")
	}
	x := s.witness(sp, s.evenPick())
	if best.maxC == 0 {
		return x
	}
	return s.tieDP(s.narrow(sp, x), false, s.layerWork(0, s.m)*s.scale[0]/float64(s.p))
}

// evenPick returns a witness's choice that makes each stage, from the last backwards, as
// close as allowed to an even share of the compute before its end: splits read back so
// have a largest compute near the least, which speeds the searches, and look balanced.
// The largest atom counts apart: the stage that holds it is made as short as allowed, the
// others share the rest, and the stages after it are as many as their share of the rest
// asks for, so that one huge layer does not skew every share.
func (s *solver) evenPick() func(i, j, q int, c float64) (take, stop bool) {
	k := 0
	for j, a := range s.atoms.work {
		if a > s.atoms.work[k] {
			k = j
		}
	}
	// The stage that should hold atom k: the stages before it take the work before it in
	// proportion to its share of all but the atom's.
	rest := s.layerWork(0, s.m) - s.atoms.work[k]
	if s.p < 2 || s.atoms.work[k] <= s.layerWork(0, s.m)/float64(s.p) {
		k = -1 // no atom exceeds an even share: nothing to count apart
	}
	at := 0
	if rest > 0 && k >= 0 {
		at = int(math.Round(s.layerWork(0, k) / rest * float64(s.p-1)))
		at = min(max(at, min(k, 1)), s.p-1)
	}
	stage, gap := -1, inf
	return func(i, j, q int, c float64) (take, stop bool) {
		if i != stage {
			stage, gap = i, inf
		}
		target := s.compute(i, 0, q) / float64(i+1)
		switch {
		case k < 0:
		case j <= k && k < q:
			target = s.atoms.work[k] * s.scale[i]
		case k < j && i > at:
			target = s.compute(i, k+1, q) / float64(i-at)
		case k < j:
			target = (s.compute(i, 0, q) - s.atoms.work[k]*s.scale[i]) / float64(max(i, 1))
		}
		if d := math.Abs(c - target); d < gap {
			gap = d
			return true, false
		}
		return false, c > target // compute only grows as j falls
	}
}

// result describes a split.
func (s *solver) result(bounds []int, withTransfer bool) Result {
	r := Result{Boundaries: bounds}
	times := make([]float64, s.p)
	for i := range s.p {
		a, b := bounds[i], bounds[i+1]-1
		c := (s.c.Prefix(b+1) - s.c.Prefix(a)) * s.scale[i]
		t := s.c.Recv(i, a) + s.c.Send(i, b)
		r.MaxCompute, r.MaxTransfer = max(r.MaxCompute, c), max(r.MaxTransfer, t)
		if withTransfer {
			c += t
		}
		times[i] = c
		r.Total += c
	}
	for _, t := range times {
		d := t - r.Total/float64(s.p)
		r.Variance += d * d / float64(s.p)
	}
	r.Objective = r.MaxCompute
	if withTransfer {
		r.Objective += r.MaxTransfer
	}
	return r
}

// tolerant widens a bound by a relative 1e-12, so that splits whose maximum differs from
// the optimum only by rounding take part in breaking the tie.
func tolerant(v float64) float64 { return v + 1e-12*math.Abs(v) }

func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b))
}
