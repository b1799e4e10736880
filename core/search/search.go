// Package search finds the configuration that runs a model fastest on the devices at
// hand: Graphcore's auto-pipeline tool's "auto-auto" max-throughput search, over pipeline, data and tensor
// parallelism, schedule, microbatches and microbatch size, recomputation, ZeRO and the
// memory proportion. Every candidate is planned and simulated by the same planner a
// single request goes through (an Evaluator: core/search/evaluate, over core/request's
// Run); the search decides which candidates to plan. This package holds the search and
// its data (Query, Knobs, Report, Answer); it plans nothing itself and imports neither
// core/request nor the Evaluator (core/search/evaluate, whose RunQuery is the one search
// doorway of every front end). The requests it carries are core/wire's.
//
// # Method
//
// Graphcore's auto-pipeline tool grid-searches the knobs that are not monotone (device count, memory
// proportion) and binary-searches the batch size, whose throughput grows until memory
// runs out. Here the grid is every configuration (Config) and the microbatch size is
// walked inside each, with branch and bound (Land and Doig 1960) over the whole grid:
//
//   - The evaluator bounds every candidate's throughput from above before it is planned
//     (Evaluator.Bound: work per device, the part of the pipeline bubble no split can
//     avoid, the data-parallel all-reduce and the optimizer update, from cached analytic
//     estimates). Candidates are planned in decreasing order of their bound; one whose
//     bound is below (1 - NearTie) times the best throughput found with as many devices
//     or fewer can neither be the best (which prefers memory headroom within NearTie of
//     the fastest) nor on the Pareto front of throughput against devices, and is pruned
//     without planning.
//
//   - Memory grows with the microbatch size, so the sizes that fit a configuration are
//     1..b* (Graphcore's auto-pipeline tool's monotonicity). b* is found by galloping and bisection (Bentley
//     and Yao 1976), among the sizes that may still win only (the bound grows with the
//     size: the probes start at the first size whose bound reaches the best found, and
//     the smaller sizes are pruned without learning whether they fit), and shared by
//     every configuration with the same memory (the
//     evaluator's MemoryKey: data-parallel degree and microbatch count often do not
//     change what a stage holds). Without a global batch the bound grows with the
//     microbatch size, so a configuration's sizes are walked from b* down, each only while
//     its bound can still win: the search plans b*, and smaller sizes only when they might
//     beat it (a different split, a smaller bubble share).
//
//   - Three optional helpers of the evaluator settle candidates without planning them,
//     each exact. Twins: a candidate whose outcome equals one earlier in the grid's order
//     (selective recomputation that keeps what none keeps, as with flash attention) is
//     left to it, which the tie-break prefers anyway (TwinSizes asks once per
//     configuration). Fitter: a lower bound on a stage's
//     memory, covered greedily, shows that no split fits (CannotFit); the search asks it
//     before each plan, probes for b* included. Refiner: a dearer bound, asked just
//     before a plan (the largest stage's work over the splits that may fit memory),
//     prunes a candidate that the first bound let through.
//
// The result is exact for the grid (the same best and Pareto front as planning every
// candidate, Exhaustive) as long as the bounds hold and memory grows with the microbatch
// size; the search counts bound violations it observes (Stats.BoundViolations).
package search

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
	"time"

	"pipeplan/core/wire"
)

// Outcome is a planned candidate: its throughput and step, or why it does not fit.
type Outcome struct {
	Candidate
	// Devices used: p x d x t.
	Devices int `json:"devices"`
	// Feasible: a split fits every device's memory.
	Feasible bool `json:"feasible"`
	// SamplesPerSecond and TokensPerSecond over the whole step.
	SamplesPerSecond float64 `json:"samples_per_second"`
	TokensPerSecond  float64 `json:"tokens_per_second,omitempty"`
	StepSeconds      float64 `json:"step_seconds,omitempty"`
	BubbleFraction   float64 `json:"bubble_fraction,omitempty"`
	// MFU is the model's FLOPs per step over the devices' dense peak during it.
	MFU float64 `json:"mfu,omitempty"`
	// HeadroomBytes is the least free memory over the stages (limit - need);
	// HeadroomFraction the same over the limit.
	HeadroomBytes    int64   `json:"headroom_bytes,omitempty"`
	HeadroomFraction float64 `json:"headroom_fraction,omitempty"`
	// Boundaries is the split: [0, s1, ..., n]; none for a graph partition whose stages
	// are not ranges of the layer order (the request's partition "graph").
	Boundaries []int `json:"boundaries,omitempty"`
	// Reason says why an infeasible candidate does not fit (which stage, by how much).
	Reason string `json:"reason,omitempty"`
	// Bound is the upper bound on SamplesPerSecond the search held before planning it.
	Bound float64 `json:"bound"`
	// Alike, in Report.Rows, are the candidates collapsed into this one (Alike): they
	// differ only in knobs that changed nothing the search measures.
	Alike []Candidate `json:"alike,omitempty"`

	group int // index of the configuration in the grid's canonical order
}

// Evaluator plans candidates for the search and bounds them beforehand.
type Evaluator interface {
	// Bound is an upper bound on the candidate's samples per second, computed without
	// planning it (+Inf when none is known). At fixed microbatches it must not decrease
	// as the microbatch size grows.
	Bound(c Candidate) (float64, error)
	// MemoryKey names what decides whether a candidate fits: two candidates with the same
	// key and microbatch sizes b <= b' either both fit at b' or the one at b fits too.
	MemoryKey(c Candidate) string
	// Evaluate plans and simulates the candidate. Errors are for bad input and
	// cancellation; a candidate that does not fit is an Outcome with Feasible false.
	Evaluate(ctx context.Context, c Candidate) (Outcome, error)
}

// Twins is what an Evaluator may also do: name, for a candidate, another candidate of
// the grid whose outcome is the same in every number the search compares (feasible or
// not, samples per second, headroom) on as many devices, with the same microbatches and
// microbatch size. The search then plans only the twin that comes first in the grid's
// canonical order, which is also the one the tie-break prefers (Report.Best, Pareto):
// the other can neither be the best nor on the front, whatever its outcome ties with.
// Exhaustive searches plan both.
type Twins interface {
	// MayHaveTwins is false when no candidate of the configuration has a twin: Twin is
	// then not asked for its microbatch sizes (a grid holds millions of candidates).
	MayHaveTwins(g Config) bool
	// Twin returns c's twin, or ok false when it knows none.
	Twin(c Candidate) (twin Candidate, ok bool)
}

// TwinSizes is what a Twins evaluator may also do, sparing the search a question per
// candidate (a grid holds millions): answer Twin for every size of a configuration at
// once. It sets has[k] to whether Twin names a twin for g's candidate of size
// sizes[k], and returns the configuration those twins share (each of the same size);
// ok false when it names none.
type TwinSizes interface {
	TwinSizes(g Config, sizes []int, has []bool) (twin Config, ok bool)
}

// Fitter is what an Evaluator may also do: tell, without planning, that a candidate
// cannot fit, by a necessary condition of fitting (a lower bound on memory). When
// CannotFit says true, Evaluate would give an Outcome with Feasible false; false means
// only "not known".
type Fitter interface {
	CannotFit(c Candidate) bool
}

// Refuser is what an Evaluator may also do: say that its rules refuse a configuration
// of the grid as a whole (a combination no microbatch size makes valid, such as an
// all-to-all context split whose degree does not divide the heads on a device). The
// search leaves such configurations out of the grid, exhaustive or not.
type Refuser interface {
	Refuses(g Config) bool
}

// Refiner is what an Evaluator may also do: a tighter upper bound on one candidate's
// samples per second than Bound, dearer to compute and with no monotonicity asked. The
// search asks it just before it would plan a candidate (not for the probes that find
// the largest microbatch that fits), and plans the candidate only when the refined
// bound can still win.
type Refiner interface {
	Refine(c Candidate) (float64, error)
}

// Options configure a search.
type Options struct {
	// Progress, when set, is called after each planned candidate and each pruned batch.
	Progress func(wire.SearchProgress)
	// Yield, when set, is called after each planned candidate and between steps that
	// plan nothing: a single-threaded host (the browser) lets its event loop run there,
	// as often as it likes (it may return at once).
	Yield func()
	// Exhaustive plans every candidate of the grid, pruning nothing: the reference the
	// search is tested against.
	Exhaustive bool
}

// Report is the search's answer.
type Report struct {
	// Best is the feasible candidate with the most memory headroom among those within
	// NearTie (1%) of the fastest (then the fastest, fewer devices, the grid's order);
	// nil when nothing fits.
	Best *Outcome `json:"best"`
	// GlobalBatch is the samples per step every candidate runs (0: free, the
	// candidates compare different batches), and GlobalBatchRule says where it comes
	// from (Space.GlobalBatchRule).
	GlobalBatch     int    `json:"global_batch,omitempty"`
	GlobalBatchRule string `json:"global_batch_rule,omitempty"`
	// Rows are the feasible candidates planned as a front end lists them: the best
	// first, then fastest first, with alike outcomes (Alike) collapsed into one row.
	Rows []Outcome `json:"rows"`
	// Evaluated are the planned candidates in the order they were planned.
	Evaluated []Outcome `json:"evaluated"`
	// Pareto is the front of throughput against devices: for each device count (rising),
	// the best candidate if it beats every candidate with fewer devices.
	Pareto []Outcome        `json:"pareto"`
	Stats  wire.SearchStats `json:"stats"`
}

// boundSlack widens bounds by a relative 1e-9, against rounding differences between a
// bound and a simulation that sum the same times in another order.
const boundSlack = 1 + 1e-9

// Run searches the space. On cancellation it returns what it has found so far with the
// context's error.
func Run(ctx context.Context, s Space, ev Evaluator, opt Options) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	groups, err := s.groups()
	if err != nil {
		return nil, err
	}
	if rf, ok := ev.(Refuser); ok {
		groups = slices.DeleteFunc(groups, rf.Refuses)
	}
	r := &runner{ctx: ctx, s: &s, ev: ev, opt: opt, groups: groups, rep: &Report{Evaluated: []Outcome{}},
		fits: map[string]*fit{}, best: newPrefixMax(s.MaxDevices), planned: map[int][]int{}}
	r.rep.Stats.Configurations = len(groups)
	r.sizes = make([][]int, len(groups))
	if f, ok := ev.(Fitter); ok && !opt.Exhaustive {
		r.fitter = f
	}
	if f, ok := ev.(Refiner); ok && !opt.Exhaustive {
		r.refiner = f
	}
	tw, _ := ev.(Twins)
	var index map[Config]int
	if tw != nil && !opt.Exhaustive {
		index = make(map[Config]int, len(groups))
		for i, g := range groups {
			index[g] = i
		}
	}
	// The sizes per replica count (one list for all without a global batch), shared by
	// the groups that keep them all.
	sizes := map[int][]int{}
	var tl twinLookup
	ts, _ := tw.(TwinSizes)
	var has []bool
	for i, g := range groups {
		key := g.Data
		if s.free() {
			key = 0
		}
		all, ok := sizes[key]
		if !ok {
			all = s.sizes(g.Data)
			sizes[key] = all
		}
		twins := index != nil && tw.MayHaveTwins(g)
		if !twins && s.free() { // every size is a candidate of its own
			r.rep.Stats.Candidates += len(all)
			r.sizes[i] = all
			continue
		}
		// With TwinSizes, the twins' group (-1: none), asked once.
		twinGroup := -1
		if twins && ts != nil {
			has = slices.Grow(has[:0], len(all))[:len(all)]
			clear(has)
			if t, ok := ts.TwinSizes(g, all, has); ok {
				twinGroup = r.twinGroup(index, &tl, i, t)
			}
		}
		var kept []int // nil while every size so far is kept
		for k, b := range all {
			c, ok := s.candidate(g, b)
			twin := false
			if ok {
				r.rep.Stats.Candidates++
				switch {
				case !twins:
				case ts != nil:
					twin = twinGroup >= 0 && has[k] && r.candidateOK(twinGroup, b)
				default:
					twin = r.hasTwin(tw, index, &tl, i, c)
				}
				if twin {
					r.rep.Stats.Twins++
					r.done++
				}
			}
			switch {
			case ok && !twin && kept != nil:
				kept = append(kept, b)
			case (!ok || twin) && kept == nil:
				kept = append(make([]int, 0, len(all)), all[:k]...)
			}
		}
		r.sizes[i] = all
		if kept != nil {
			r.sizes[i] = kept
		}
	}
	if opt.Exhaustive {
		err = r.exhaustive()
	} else {
		err = r.branchAndBound()
	}
	r.rep.Pareto = pareto(r.rep.Evaluated)
	r.rep.Best = pickBest(r.rep.Evaluated)
	r.rep.Rows = rows(r.rep.Evaluated, r.rep.Best)
	r.rep.GlobalBatch, r.rep.GlobalBatchRule = s.GlobalBatch, s.GlobalBatchRule
	r.rep.Stats.Seconds = time.Since(start).Seconds()
	r.progress()
	return r.rep, err
}

type runner struct {
	ctx     context.Context
	s       *Space
	ev      Evaluator
	opt     Options
	groups  []Config
	sizes   [][]int // per group, the microbatch sizes to try, ascending
	rep     *Report
	fits    map[string]*fit
	fitter  Fitter  // nil: none
	refiner Refiner // nil: none
	best    *prefixMax
	done    int
	// planned holds, per configuration, the indices of the sizes planned as probes.
	planned map[int][]int
}

// fit is what is known of a memory key: sizes up to lo fit, from hi on they do not (hi 0:
// none known not to fit).
type fit struct{ lo, hi int }

func (f *fit) fits(b int) (known, ok bool) {
	switch {
	case b <= f.lo:
		return true, true
	case f.hi > 0 && b >= f.hi:
		return true, false
	}
	return false, false
}

func (r *runner) fitOf(c Candidate) *fit {
	k := r.ev.MemoryKey(c)
	f := r.fits[k]
	if f == nil {
		f = &fit{}
		r.fits[k] = f
	}
	return f
}

// hasTwin reports whether candidate c of group g has a twin (Twins) in an earlier group
// of the grid, with the same microbatch size, microbatches and devices.
func (r *runner) hasTwin(tw Twins, index map[Config]int, tl *twinLookup, g int, c Candidate) bool {
	t, ok := tw.Twin(c)
	if !ok || t.MicrobatchSize != c.MicrobatchSize || t.Microbatches != c.Microbatches || t.Devices() != c.Devices() {
		return false
	}
	tg := t.Config
	tg.Microbatches = r.groups[g].Microbatches // 0 in a group of a fixed global batch
	i := tl.find(index, tg)
	if i < 0 || i >= g {
		return false
	}
	_, ok = r.s.candidate(r.groups[i], c.MicrobatchSize)
	return ok
}

// twinGroup is the group of configuration t, the twins TwinSizes names for group g's
// candidates: -1 unless it comes before g in the grid's order and runs on as many
// devices (its microbatches are g's: TwinSizes names twins of the same microbatches).
func (r *runner) twinGroup(index map[Config]int, tl *twinLookup, g int, t Config) int {
	if t.Devices() != r.groups[g].Devices() {
		return -1
	}
	t.Microbatches = r.groups[g].Microbatches
	if tl.find(index, t) >= g {
		return -1
	}
	return tl.index
}

// candidateOK reports whether group g has a candidate of size b.
func (r *runner) candidateOK(g, b int) bool {
	if r.s.free() {
		return true
	}
	_, ok := r.s.candidate(r.groups[g], b)
	return ok
}

// twinLookup remembers the last twin configuration looked up and its group (-1: none):
// a group's sizes mostly share their twin's group.
type twinLookup struct {
	config Config
	index  int
	ok     bool
}

// find is configuration c's group in index, -1 if none, looked up again only when c is
// not the configuration last asked for.
func (tl *twinLookup) find(index map[Config]int, c Config) int {
	if !tl.ok || tl.config != c {
		tl.config = c
		tl.index, tl.ok = index[c]
		if !tl.ok {
			tl.index = -1
		}
		tl.ok = true
	}
	return tl.index
}

func (r *runner) candidate(g, b int) Candidate {
	c, _ := r.s.candidate(r.groups[g], b)
	return c
}

func (r *runner) bound(g, b int) (float64, error) {
	u, err := r.ev.Bound(r.candidate(g, b))
	if err != nil {
		return 0, err
	}
	if math.IsNaN(u) {
		u = math.Inf(1)
	}
	return u * boundSlack, nil
}

// evaluate plans one candidate and records it.
func (r *runner) evaluate(g, b int, bound float64) (Outcome, error) {
	if err := r.ctx.Err(); err != nil {
		return Outcome{}, err
	}
	c := r.candidate(g, b)
	o, err := r.ev.Evaluate(r.ctx, c)
	if err != nil {
		return Outcome{}, err
	}
	o.Candidate, o.Devices, o.Bound, o.group = c, c.Devices(), bound, g
	st := &r.rep.Stats
	st.Evaluated++
	if o.Feasible {
		st.Feasible++
		if o.SamplesPerSecond > bound {
			st.BoundViolations++
		}
		r.best.update(o.Devices, o.SamplesPerSecond)
		if r.rep.Best == nil || better(&o, r.rep.Best) {
			b := o
			r.rep.Best = &b
		}
	}
	if !r.opt.Exhaustive {
		f := r.fitOf(c)
		if o.Feasible {
			f.lo = max(f.lo, b)
		} else if f.hi == 0 || b < f.hi {
			f.hi = b
		}
	}
	r.rep.Evaluated = append(r.rep.Evaluated, o)
	r.done++
	r.progress()
	if r.opt.Yield != nil {
		r.opt.Yield()
	}
	return o, nil
}

// pause lets the host run (Options.Yield) between steps that plan nothing, and stops
// the search when it is cancelled.
func (r *runner) pause() error {
	if r.opt.Yield != nil {
		r.opt.Yield()
	}
	return r.ctx.Err()
}

func (r *runner) progress() {
	if r.opt.Progress == nil {
		return
	}
	r.opt.Progress(wire.SearchProgress{Done: r.done, Total: r.rep.Stats.Candidates, Evaluated: r.rep.Stats.Evaluated,
		Best: wireBest(r.rep.Best)})
}

// better orders outcomes: more samples per second, then fewer devices, then the grid's
// order and the smaller microbatch.
func better(a, b *Outcome) bool {
	if a.SamplesPerSecond != b.SamplesPerSecond {
		return a.SamplesPerSecond > b.SamplesPerSecond
	}
	if a.Devices != b.Devices {
		return a.Devices < b.Devices
	}
	if a.group != b.group {
		return a.group < b.group
	}
	return a.MicrobatchSize < b.MicrobatchSize
}

func (r *runner) exhaustive() error {
	for g := range r.groups {
		for _, b := range r.sizes[g] {
			u, err := r.bound(g, b)
			if err != nil {
				return err
			}
			if _, err := r.evaluate(g, b, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// item is a configuration's microbatch sizes sizes[0..top] still to settle (with a free
// microbatch size), or the one size sizes[top] (with a global batch), keyed by the bound
// of sizes[top].
type item struct {
	g, top int
	bound  float64
	// walking: the sizes up to top are known to fit (b* found), and are walked down.
	walking bool
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].bound != q[j].bound {
		return q[i].bound > q[j].bound
	}
	if q[i].g != q[j].g {
		return q[i].g < q[j].g
	}
	return q[i].top > q[j].top
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (r *runner) branchAndBound() error {
	q := queue{}
	free := r.s.free()
	for g := range r.groups {
		n := len(r.sizes[g])
		if n == 0 {
			continue
		}
		if g%256 == 0 {
			if err := r.pause(); err != nil {
				return err
			}
		}
		if free {
			u, err := r.bound(g, r.sizes[g][n-1])
			if err != nil {
				return err
			}
			q = append(q, item{g: g, top: n - 1, bound: u})
			continue
		}
		for i := range r.sizes[g] {
			u, err := r.bound(g, r.sizes[g][i])
			if err != nil {
				return err
			}
			q = append(q, item{g: g, top: i, bound: u})
		}
	}
	if !free {
		// Nothing is queued again without a free size: the items leave in the heap's
		// order, which is total (Less ends on the group and the size), so one sort gives
		// it at less cost than a pop each.
		slices.SortFunc(q, func(a, b item) int {
			switch {
			case a == b:
				return 0
			case queue{a, b}.Less(0, 1):
				return -1
			}
			return 1
		})
		for _, it := range q {
			if err := r.pause(); err != nil {
				return err
			}
			if err := r.settle(&q, it, free); err != nil {
				return err
			}
		}
		return nil
	}
	heap.Init(&q)
	for q.Len() > 0 {
		if err := r.pause(); err != nil {
			return err
		}
		it := heap.Pop(&q).(item)
		if err := r.settle(&q, it, free); err != nil {
			return err
		}
	}
	return nil
}

// settle handles the item of largest bound: prune it, plan it, or narrow it and queue it
// again.
func (r *runner) settle(q *queue, it item, free bool) error {
	g := it.g
	sizes := r.sizes[g]
	if it.bound < tieFloor(r.best.upTo(r.groups[g].Devices())) {
		n := 1
		if free {
			n = it.top + 1 - r.plannedUpTo(g, it.top)
		}
		r.rep.Stats.PrunedByBound += n
		r.done += n
		r.progress()
		return nil
	}
	b := sizes[it.top]
	f := r.fitOf(r.candidate(g, b))
	if !free {
		if known, ok := f.fits(b); known && !ok {
			r.rep.Stats.KnownInfeasible++
			r.done++
			return nil
		}
		if r.cannotFit(g, b, f) {
			return nil
		}
		u, ok, err := r.refine(g, b, it.bound)
		if err != nil || !ok {
			return err
		}
		_, err = r.evaluate(g, b, u)
		return err
	}
	if !it.walking {
		// Find the largest size that fits, from what the memory key knows and by probing.
		lo, hi, err := r.largestFit(g, it.top, f)
		if err != nil {
			return err
		}
		for i := lo + 1; i <= it.top; i++ {
			if r.isPlanned(g, i) {
				continue
			}
			if i >= hi {
				r.rep.Stats.KnownInfeasible++
			} else {
				r.rep.Stats.PrunedByBound++ // probing stopped: no size below hi can win
			}
			r.done++
		}
		if lo < 0 {
			r.progress()
			return nil
		}
		u, err := r.bound(g, sizes[lo])
		if err != nil {
			return err
		}
		heap.Push(q, item{g: g, top: lo, bound: u, walking: true})
		return nil
	}
	if !r.isPlanned(g, it.top) {
		u, ok, err := r.refine(g, b, it.bound)
		if err != nil {
			return err
		}
		if ok {
			if _, err := r.evaluate(g, b, u); err != nil {
				return err
			}
		}
	}
	if it.top > 0 {
		u, err := r.bound(g, sizes[it.top-1])
		if err != nil {
			return err
		}
		heap.Push(q, item{g: g, top: it.top - 1, bound: u, walking: true})
	}
	return nil
}

// largestFit finds, for configuration g, the largest of sizes[0..top] that fits: it
// returns lo, the index of the largest size known to fit (-1: none), and hi, of the
// smallest known not to (top+1: none of sizes[0..top]). It probes by planning:
// galloping up from the largest size known to fit, then bisecting; it stops early,
// with lo + 1 < hi, when no size below hi could beat the best.
func (r *runner) largestFit(g, top int, f *fit) (lo, hi int, err error) {
	sizes := r.sizes[g]
	devices := r.groups[g].Devices()
	lo, hi = -1, top+1
	for i := top; i >= 0; i-- {
		if known, ok := f.fits(sizes[i]); known {
			if ok {
				lo = i
				break
			}
			hi = i
		}
	}
	probe := func(i int) (bool, error) {
		if r.cannotFit(g, sizes[i], f) {
			r.planned[g] = append(r.planned[g], i) // settled
			return false, nil
		}
		u, err := r.bound(g, sizes[i])
		if err != nil {
			return false, err
		}
		o, err := r.evaluate(g, sizes[i], u)
		if err != nil {
			return false, err
		}
		r.planned[g] = append(r.planned[g], i)
		return o.Feasible, nil
	}
	galloping := true // double the size while it fits, then bisect
	for hi-lo > 1 {
		// Only the sizes from w on may still win (the bound grows with the size): the
		// probes need not tell which of the smaller ones fit.
		w, err := r.winnable(g, lo+1, hi, tieFloor(r.best.upTo(devices)))
		if err != nil || w == hi {
			return lo, hi, err
		}
		if w > lo+1 {
			// Whether w fits decides whether any size that may win fits: probe it
			// first, then gallop on from it.
			ok, err := probe(w)
			if err != nil {
				return lo, hi, err
			}
			if !ok {
				return lo, w, nil // the sizes below w cannot win, from w on none fits
			}
			lo = w
			continue
		}
		i := lo + (hi-lo)/2
		if galloping {
			i = 2*lo + 1 // index of twice the size (sizes run 1, 2, 3, ... when free)
			if lo < 0 {
				i = 0
			}
			if i >= hi {
				galloping = false
				continue
			}
		}
		ok, err := probe(i)
		if err != nil {
			return lo, hi, err
		}
		if ok {
			lo = i
		} else {
			hi, galloping = i, false
		}
	}
	return lo, hi, nil
}

// winnable is the first index w in [from, to) whose size's bound in configuration g is
// at least floor (to: none), found by bisection: the bound does not decrease as the
// size grows (Evaluator.Bound), so the sizes below w cannot beat floor and those from w
// on may.
func (r *runner) winnable(g, from, to int, floor float64) (int, error) {
	sizes := r.sizes[g]
	lo, hi := from, to // the answer lies in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		u, err := r.bound(g, sizes[mid])
		if err != nil {
			return to, err
		}
		if u < floor {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// refine asks the Refiner for a tighter bound on candidate (g, b) than u: ok false when
// it cannot beat the best with as many devices or fewer, and the candidate is settled
// as pruned; else the bound to plan it with.
func (r *runner) refine(g, b int, u float64) (float64, bool, error) {
	if r.refiner == nil {
		return u, true, nil
	}
	v, err := r.refiner.Refine(r.candidate(g, b))
	if err != nil {
		return 0, false, err
	}
	if !math.IsNaN(v) {
		u = min(u, v*boundSlack)
	}
	if u < tieFloor(r.best.upTo(r.groups[g].Devices())) {
		r.rep.Stats.PrunedByBound++
		r.done++
		return u, false, nil
	}
	return u, true, nil
}

// cannotFit asks the Fitter whether candidate (g, b) cannot fit; if so it is settled as
// such, and its memory key learns that sizes from b on do not fit.
func (r *runner) cannotFit(g, b int, f *fit) bool {
	if r.fitter == nil || !r.fitter.CannotFit(r.candidate(g, b)) {
		return false
	}
	if f.hi == 0 || b < f.hi {
		f.hi = b
	}
	r.rep.Stats.CannotFit++
	r.done++
	return true
}

func (r *runner) isPlanned(g, i int) bool { return slices.Contains(r.planned[g], i) }

// plannedUpTo counts the sizes of g up to index top that were planned (as probes).
func (r *runner) plannedUpTo(g, top int) int {
	n := 0
	for _, i := range r.planned[g] {
		if i <= top {
			n++
		}
	}
	return n
}

// prefixMax is a Fenwick tree of maxima over device counts: upTo(n) is the best
// throughput found with n devices or fewer.
type prefixMax struct{ t []float64 }

func newPrefixMax(n int) *prefixMax { return &prefixMax{t: make([]float64, n+1)} }

func (p *prefixMax) update(n int, v float64) {
	for i := n; i < len(p.t); i += i & -i {
		p.t[i] = max(p.t[i], v)
	}
}

func (p *prefixMax) upTo(n int) float64 {
	var v float64
	for i := min(n, len(p.t)-1); i > 0; i -= i & -i {
		v = max(v, p.t[i])
	}
	return v
}

// pareto is the front of throughput against devices: for each device count, the best
// feasible outcome if it beats every outcome with fewer devices.
func pareto(os []Outcome) []Outcome {
	var fs []Outcome
	for _, o := range os {
		if o.Feasible {
			fs = append(fs, o)
		}
	}
	slices.SortFunc(fs, func(a, b Outcome) int {
		if c := cmp.Compare(a.Devices, b.Devices); c != 0 {
			return c
		}
		if better(&a, &b) {
			return -1
		}
		if better(&b, &a) {
			return 1
		}
		return 0
	})
	out := []Outcome{}
	for i, o := range fs {
		if i > 0 && fs[i-1].Devices == o.Devices {
			continue // not the best of its device count
		}
		if len(out) > 0 && o.SamplesPerSecond <= out[len(out)-1].SamplesPerSecond {
			continue
		}
		out = append(out, o)
	}
	return out
}
