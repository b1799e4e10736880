// Package dagsplit finds the optimal split of a model given as a directed acyclic graph
// of layers into p pipeline stages, stage i on device i, where every stage is a convex
// set of layers (no path leaves a stage and comes back into it) and no edge runs from a
// later stage to an earlier one. A chain of layers has only contiguous such splits, which
// core/partition finds faster; this package is for graphs that branch (residual blocks,
// encoder-decoders, several towers), whose best stages need not be contiguous in any one
// order fixed beforehand.
//
// The objectives, rules and tie-break are core/partition's: the bottleneck (largest stage
// compute), or largest compute plus largest transfer; a stage that does not fit its
// device's memory, or that splits a tie group, is never chosen; among optimal splits the
// one with the least total stage time, then the least variance of stage times (Alpa's
// rule), wins. What a stage costs is the Costs' business: it is asked about a candidate
// stage with the layers that run before it.
//
// # Algorithm
//
// The stages of a split, in order, are the differences of a chain of ideals (downsets:
// sets of layers holding every predecessor of a member) ∅ = I_0 ⊂ I_1 ⊂ ... ⊂ I_p = all:
// stage i is I_{i+1} \ I_i. The difference of two nested ideals is always convex, and a
// split whose edges all run forwards gives such a chain, so the splits and the chains
// are the same thing. A dynamic program over ideals then is exact:
//
//	F(i, J) = min over ideals I ⊊ J of max(F(i-1, I), cost_i(J \ I)),
//
// with F(-1, ∅) = 0, the optimum F(p-1, all). This is the method of PipeDream's optimizer
// (Narayanan et al., "PipeDream: generalized pipeline parallelism for DNN training", SOSP
// 2019), which runs it over the ideals its antichains generate, and the exact dynamic
// program over all ideals of Tarnawski et al. ("Efficient algorithms for device placement
// of DNN graph operators", NeurIPS 2020), which it follows: every ideal, so that no convex
// split is missed. Ideals whose boundary would split a tie group are left out (a tie
// group lies in one stage, so in or out of every ideal between stages). The work is
// O(p * pairs of nested ideals) stage costings, which is why the number of ideals is
// bounded (Options.MaxIdeals): a chain has n+1, a graph of k parallel branches of length
// L about L^k. Beyond the bound (or beyond MaxLayers layers) Solve returns
// ErrTooManyIdeals, and the caller falls back to a contiguous split of one topological
// order.
//
// For compute + transfer each state keeps its Pareto front of (largest compute, largest
// transfer) pairs, the objective is the least sum on the last state's front, and the
// tie-break runs under every optimal pair (a box) as in core/partition. The tie-break is a
// second dynamic program over the same ideals, within the optimal bounds widened by a
// relative 1e-12, minimising (total, sum of squared stage times) lexicographically.
package dagsplit

import (
	"fmt"
	"math"
	"sort"

	"pipeplan/core/partition"
)

// Costs is what the splitter needs to know about a model's graph on a cluster.
type Costs interface {
	// Layers and Stages: n and p.
	Layers() int
	Stages() int
	// Preds lists the layers whose outputs layer l reads; each is less than l (the
	// layer order is a topological order of the graph).
	Preds(l int) []int
	// TieGroup is the tie group of layer l (layers that must share a stage), or -1.
	TieGroup(l int) int
	// Work is layer l's compute on a device of speed scale 1, and Scale stage i's speed
	// scale: a stage's Compute on stage i is at least the sum of its layers' Work times
	// Scale(i), to rounding (Options.Upper prunes by it).
	Work(l int) float64
	Scale(i int) float64
	// Cost costs the candidate stage that holds the layers of set (ascending) and runs
	// after the layers marked in before (an ideal; set ∪ before is one too), on every
	// stage at once: out[i] for stage i, len(out) == Stages().
	Cost(before []bool, set []int, out []StageCost)
}

// StageCost is a candidate stage's cost on one device.
type StageCost struct {
	// Compute and Transfer are the stage's times; Fits whether it fits the device's
	// memory.
	Compute, Transfer float64
	Fits              bool
}

// Options bound the work.
type Options struct {
	// MaxIdeals bounds the ideals enumerated (tie groups or not); 0 means DefaultMaxIdeals.
	MaxIdeals int
	// Upper, when positive, is an objective some split is known to reach (a contiguous
	// split's, say): candidate stages whose compute alone exceeds it are not costed.
	Upper float64
}

// MaxLayers bounds the layers of a graph the exact method takes: every candidate stage
// costs O(layers) to build and to cost, and there are up to MaxIdeals^2 of them.
const MaxLayers = 8192

// DefaultMaxIdeals is the default bound on the ideals enumerated: each pass of the
// dynamic program tests the O(ideals^2) pairs for nesting (about 8 million here, a
// fraction of a second) and costs those a split can use.
const DefaultMaxIdeals = 4096

// Result is an optimal split.
type Result struct {
	// Stages lists each stage's layers, ascending.
	Stages [][]int
	// Order is the layers stage by stage (each stage's in ascending order): a
	// topological order in which every stage is contiguous, and Boundaries the split
	// of Order: stage i holds Order[Boundaries[i]:Boundaries[i+1]].
	Order, Boundaries []int
	// Objective is the minimised value; MaxCompute and MaxTransfer its parts; Total and
	// Variance the sum and the population variance of stage times (compute, plus
	// transfer under MaxComputePlusTransfer), as in core/partition.
	Objective, MaxCompute, MaxTransfer float64
	Total, Variance                    float64
	// Ideals is the number of ideals the dynamic program ran over.
	Ideals int
}

// IsChain reports whether every layer of c reads the output of the layer before it:
// the graph then has n+1 ideals, its convex splits are the contiguous ones, and
// core/partition finds them faster.
func IsChain(c Costs) bool {
	g, err := newGraph(c)
	return err == nil && g.chain()
}

var inf = math.Inf(1)

// solver holds the ideals and, per ideal, the ideals strictly inside it.
type solver struct {
	c      Costs
	n, p   int
	ideals []ideal
	full   int
	work   []float64 // per ideal: the sum of its layers' Work
	byWork []int32   // ideals by work (then index): those inside J lie below J's work
	upper  float64   // stages whose Work sum exceeds it are skipped
	// scratch for Cost calls
	before []bool
	set    []int
	out    []StageCost
}

// Solve returns an optimal split, partition.ErrInfeasible when none fits, or an error
// wrapping ErrTooManyIdeals.
func Solve(c Costs, obj partition.Objective, opt Options) (Result, error) {
	n, p := c.Layers(), c.Stages()
	if p < 1 || n < p {
		return Result{}, partition.ErrInfeasible
	}
	if n > MaxLayers {
		return Result{}, fmt.Errorf("%w: a graph of %d layers, more than %d (dagsplit.MaxLayers)", ErrTooManyIdeals, n, MaxLayers)
	}
	g, err := newGraph(c)
	if err != nil {
		return Result{}, err
	}
	limit := opt.MaxIdeals
	if limit <= 0 {
		limit = DefaultMaxIdeals
	}
	ids, err := g.ideals(limit)
	if err != nil {
		return Result{}, err
	}
	s := &solver{c: c, n: n, p: p, ideals: ids, full: len(ids) - 1,
		before: make([]bool, n), out: make([]StageCost, p)}
	if ids[s.full].size != n {
		return Result{}, partition.ErrInfeasible // cannot happen: all layers form an ideal
	}
	s.work = make([]float64, len(ids))
	for j, id := range ids {
		for l := range n {
			if id.members.has(l) {
				s.work[j] += c.Work(l)
			}
		}
	}
	s.byWork = make([]int32, len(ids))
	for j := range s.byWork {
		s.byWork[j] = int32(j)
	}
	sort.SliceStable(s.byWork, func(a, b int) bool { return s.work[s.byWork[a]] < s.work[s.byWork[b]] })
	s.upper = inf
	if opt.Upper > 0 {
		least := inf
		for i := range p {
			least = min(least, c.Scale(i))
		}
		// The sums above and a stage's own may round differently: a margin of a
		// relative 1e-9 of the model's work keeps every stage that can reach Upper.
		s.upper = opt.Upper/least + 1e-9*s.work[s.full]
	}
	var chain []int
	if obj == partition.MaxCompute {
		u := s.bottleneck()
		if math.IsInf(u, 1) {
			return Result{}, partition.ErrInfeasible
		}
		chain = s.tieDP(tolerant(u), inf, false)
	} else {
		boxes := s.boxes()
		if len(boxes) == 0 {
			return Result{}, partition.ErrInfeasible
		}
		var best Result
		for k, b := range boxes {
			x := s.result(s.tieDP(tolerant(b.c), tolerant(b.t), true), true)
			if k == 0 || better(x, best) && near(x.Objective, best.Objective) {
				best = x
			}
		}
		best.Ideals = len(ids)
		return best, nil
	}
	r := s.result(chain, false)
	r.Ideals = len(ids)
	return r, nil
}

// better is core/partition's tie order on (total, variance).
func better(x, y Result) bool {
	if !near(x.Total, y.Total) {
		return x.Total < y.Total
	}
	return x.Variance < y.Variance && !near(x.Variance, y.Variance)
}

// each calls fn with the costs of every candidate stage J \ I, I ⊊ J, that can be
// stage lo .. hi of a split within the upper bound: stage 0 starts at ∅ and stage p-1
// ends at every layer; the stages before one must hold I's layers, at least one each
// and each within the bound, and those after it the layers after J alike. need, when
// set, says whether the candidate is worth costing (a reachable state before it); fn must
// not keep out.
func (s *solver) each(j int, need func(i, lo, hi int) bool, fn func(i, lo, hi int, out []StageCost)) {
	J, size := s.ideals[j].members, s.ideals[j].size
	after := s.n - size
	restWork := s.work[s.full] - s.work[j]
	// The ideals inside J weigh at most J (work is never negative), and those a stage
	// within the bound can start from at least J's work less the bound: a range of
	// byWork, found by bisection with a margin for rounding.
	from := sort.Search(len(s.byWork), func(k int) bool {
		w := s.work[s.byWork[k]]
		return w >= s.work[j]-s.upper-1e-9*s.work[s.full] || s.work[j]-w <= s.upper
	})
	for _, i32 := range s.byWork[from:] {
		i := int(i32)
		if s.work[i] > s.work[j] {
			break
		}
		I := s.ideals[i].members
		if s.ideals[i].size >= size || s.work[j]-s.work[i] > s.upper {
			continue
		}
		lo, hi := 1, s.p-2
		if i == 0 {
			lo, hi = 0, 0
		}
		if j == s.full {
			lo, hi = max(lo, s.p-1), s.p-1
		} else {
			hi = min(hi, s.p-1-1) // stages after it hold the rest, one layer at least each
			hi = min(hi, s.p-1-ceilDiv(restWork, s.upper))
			lo = max(lo, s.p-1-after)
		}
		if i != 0 {
			hi = min(hi, s.ideals[i].size)
			lo = max(lo, ceilDiv(s.work[i], s.upper))
		}
		if lo > hi || (need != nil && !need(i, lo, hi)) || !I.subset(J) {
			continue
		}
		s.set = s.set[:0]
		for l := range s.n {
			s.before[l] = I.has(l)
			if !s.before[l] && J.has(l) {
				s.set = append(s.set, l)
			}
		}
		s.c.Cost(s.before, s.set, s.out)
		fn(i, lo, hi, s.out)
	}
}

// ceilDiv is the least number of stages, each within u, that work w needs (0 when u is
// infinite).
func ceilDiv(w, u float64) int {
	if math.IsInf(u, 1) || w <= 0 {
		return 0
	}
	k := math.Ceil(w/u - 1e-9)
	if k > 1<<30 {
		return 1 << 30
	}
	return int(k)
}

// bottleneck is the least largest stage compute over every split.
func (s *solver) bottleneck() float64 {
	f := s.table(inf)
	for j := 1; j < len(s.ideals); j++ {
		s.each(j, func(i, lo, hi int) bool {
			return reachable(f, i, lo, hi)
		}, func(i, lo, hi int, out []StageCost) {
			for st := lo; st <= hi; st++ {
				if !out[st].Fits {
					continue
				}
				prev := 0.0
				if st > 0 {
					prev = f[st-1][i]
				}
				if v := max(prev, out[st].Compute); v < f[st][j] {
					f[st][j] = v
				}
			}
		})
	}
	return f[s.p-1][s.full]
}

// reachable reports whether some stage lo .. hi can follow ideal i: stage 0 follows ∅,
// stage st > 0 a state of stage st-1 that some split reaches.
func reachable(f [][]float64, i, lo, hi int) bool {
	for st := lo; st <= hi; st++ {
		if st == 0 || !math.IsInf(f[st-1][i], 1) {
			return true
		}
	}
	return false
}

func (s *solver) table(v float64) [][]float64 {
	f := make([][]float64, s.p)
	for st := range f {
		f[st] = make([]float64, len(s.ideals))
		for j := range f[st] {
			f[st][j] = v
		}
	}
	return f
}

// point is one (largest compute, largest transfer) pair of a Pareto front.
type point struct{ c, t float64 }

// boxes returns the optimal pairs for compute + transfer: the points of the last
// state's Pareto front whose sum is (within a relative 1e-12) the least.
func (s *solver) boxes() []point {
	front := make([][][]point, s.p)
	for st := range front {
		front[st] = make([][]point, len(s.ideals))
	}
	for j := 1; j < len(s.ideals); j++ {
		s.each(j, func(i, lo, hi int) bool {
			for st := lo; st <= hi; st++ {
				if st == 0 || len(front[st-1][i]) > 0 {
					return true
				}
			}
			return false
		}, func(i, lo, hi int, out []StageCost) {
			for st := lo; st <= hi; st++ {
				if !out[st].Fits {
					continue
				}
				switch {
				case st == 0:
					front[0][j] = insert(front[0][j], point{out[0].Compute, out[0].Transfer})
				default:
					for _, q := range front[st-1][i] {
						front[st][j] = insert(front[st][j], point{max(q.c, out[st].Compute), max(q.t, out[st].Transfer)})
					}
				}
			}
		})
	}
	last := front[s.p-1][s.full]
	best := inf
	for _, q := range last {
		best = min(best, q.c+q.t)
	}
	var out []point
	for _, q := range last {
		if near(q.c+q.t, best) {
			out = append(out, q)
		}
	}
	return out
}

// insert adds q to a Pareto front (no point at most another in both parts), keeping it
// sorted by compute.
func insert(front []point, q point) []point {
	for _, r := range front {
		if r.c <= q.c && r.t <= q.t {
			return front
		}
	}
	out := front[:0]
	for _, r := range front {
		if !(q.c <= r.c && q.t <= r.t) {
			out = append(out, r)
		}
	}
	out = append(out, q)
	for k := len(out) - 1; k > 0 && out[k].c < out[k-1].c; k-- {
		out[k], out[k-1] = out[k-1], out[k]
	}
	return out
}

// tieDP returns, among splits whose every stage computes within u and transfers within
// t and fits, one with the least (total, sum of squared stage times), as the chain of
// ideal indices I_0 = ∅ .. I_p = all; a stage's time is its compute, plus its transfer
// when withTransfer.
func (s *solver) tieDP(u, t float64, withTransfer bool) []int {
	type val struct {
		total, squares float64
		from           int32
	}
	f := make([][]val, s.p)
	for st := range f {
		f[st] = make([]val, len(s.ideals))
		for j := range f[st] {
			f[st][j] = val{total: inf, squares: inf, from: -1}
		}
	}
	less := func(a, b val) bool {
		if !near(a.total, b.total) {
			return a.total < b.total
		}
		return a.squares < b.squares && !near(a.squares, b.squares)
	}
	for j := 1; j < len(s.ideals); j++ {
		s.each(j, func(i, lo, hi int) bool {
			for st := lo; st <= hi; st++ {
				if st == 0 || f[st-1][i].from >= 0 {
					return true
				}
			}
			return false
		}, func(i, lo, hi int, out []StageCost) {
			for st := lo; st <= hi; st++ {
				o := out[st]
				if !o.Fits || o.Compute > u || o.Transfer > t {
					continue
				}
				x := o.Compute
				if withTransfer {
					x += o.Transfer
				}
				var v val
				switch {
				case st == 0:
					v = val{x, x * x, 0}
				case f[st-1][i].from >= 0:
					v = val{f[st-1][i].total + x, f[st-1][i].squares + x*x, int32(i)}
				default:
					continue
				}
				if f[st][j].from < 0 || less(v, f[st][j]) {
					f[st][j] = v
				}
			}
		})
	}
	chain := make([]int, s.p+1)
	chain[s.p] = s.full
	for st, j := s.p-1, s.full; st >= 0; st-- {
		if f[st][j].from < 0 {
			panic("dagsplit: the optimal bounds admit no split")
		}
		j = int(f[st][j].from)
		chain[st] = j
	}
	return chain
}

// result describes the split given by a chain of ideal indices.
func (s *solver) result(chain []int, withTransfer bool) Result {
	r := Result{Boundaries: []int{0}}
	times := make([]float64, s.p)
	for st := range s.p {
		I, J := s.ideals[chain[st]].members, s.ideals[chain[st+1]].members
		var layers []int
		before := make([]bool, s.n)
		for l := range s.n {
			before[l] = I.has(l)
			if !before[l] && J.has(l) {
				layers = append(layers, l)
			}
		}
		s.c.Cost(before, layers, s.out)
		o := s.out[st]
		r.Stages = append(r.Stages, layers)
		r.Order = append(r.Order, layers...)
		r.Boundaries = append(r.Boundaries, len(r.Order))
		r.MaxCompute, r.MaxTransfer = max(r.MaxCompute, o.Compute), max(r.MaxTransfer, o.Transfer)
		x := o.Compute
		if withTransfer {
			x += o.Transfer
		}
		times[st] = x
		r.Total += x
	}
	for _, x := range times {
		d := x - r.Total/float64(s.p)
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
