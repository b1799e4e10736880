package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"pipeplan/core/cluster"
	"pipeplan/core/dagsplit"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
)

// MaxTransferBounds bounds the transfer bounds the exact method of per-layer
// recomputation under the compute+transfer objective tries (autoElsewhere): each costs
// one run of the per-layer program over every split, bounded by the best objective
// found. PipeDream's profiles need at most 158 (ResNet-50 on 8 stages: 161 distinct stage
// transfers). Beyond it, the plan is the heuristic's.
const MaxTransferBounds = 1024

// MaxChunkSplits bounds the splits of an interleaved schedule's chunks that per-layer
// recomputation tries one by one (autoElsewhere); beyond it, the heuristic's plan.
const MaxChunkSplits = 4096

// autoElsewhere plans per-layer recomputation (Options.Recompute) where perLayerPlan's
// program, which minimises the slowest stage's compute over ranges of the layer order
// with one stage per device, does not reach: a graph partition of a branching graph
// (Options.Graph), an interleaved schedule (its chunks share their device's memory) and
// the compute+transfer objective.
//
// # Method
//
// Under compute+transfer, on ranges of the layer order with one stage per device, it is
// exact: a stage's transfers do not depend on what it recomputes, so the objective,
// max compute + max transfer, is the least over transfer bounds t of OPT(t) + t, where
// OPT(t) is the least slowest-stage compute (with each stage's optimal recomputation,
// core/recompute) over the splits whose every stage transfers at most t (the
// enumeration of Graphcore's auto-pipeline tool, over partition.SolveSweep). Bounds
// are tried from the least; once OPT(+Inf) + t reaches the best found, no larger t can
// do better, and under each bound only ranges costing less than the best found less t
// are swept (the unbounded split's objective is the first best). Beyond
// MaxTransferBounds bounds, the heuristic below is the plan.
//
// With a graph partition it is exact (exactGraph): core/dagsplit's program over ideals
// with each candidate stage costed with its optimal recomputation (graphRecomputeCosts),
// for either objective, within the least objective the heuristic's plans reach.
//
// Under an interleaved schedule, whose chunks share their device's memory, each
// device's chunks choose together (deviceChoice: every combination of their undominated
// choices, the device's memory counted as devicesOf counts it, the least slowest chunk
// kept), which is exact for a given split; with at most MaxChunkSplits splits, every
// split is tried so, and the least bottleneck is exact. Beyond, it is a heuristic, sound
// and never slower than a global mode: each global mode the request could have named
// (nothing recomputed, each of Options.RecomputeFixed on every layer, and with
// Options.RecomputeStages every stage whole) is planned as the planner plans it (the
// interleaved split under its devices' shared memory), and then its devices' chunks
// choose together on its split; per-layer recomputation's best split is also found with
// every chunk within an equal share of what its device's chunks may allocate (a split
// that fits so fits every device) and within what each mode's chunk in its place held.
// Every plan is checked against the devices' memory, and the one of shortest simulated
// step is kept. Plan.RecomputeHeuristic says so. The same candidates (each graph split's
// order split again as ranges) are the plan where the exact methods give up.
func autoElsewhere(e *estimate.Estimator, m *model.Model, c, sc *cluster.Cluster, opt Options, bounds []int) (*Plan, error) {
	// opt is as solve scheduled it (scheduled: the in-flight counts, an interleaved
	// chunk's share of the fixed memory); solve schedules base again, so it gets the
	// fixed memory as given, while graphPlan takes the scheduled options (sched).
	sched := opt
	sched.Recompute, sched.RecomputeStages, sched.RecomputeFixed = nil, false, nil
	base := sched
	if opt.Schedule != nil {
		base.Estimate.FixedBytes = opt.Schedule.deviceFixedBytes
	}
	ae := &autoEval{m: m, c: c, sc: sc, opt: opt, base: base, sched: sched, e: e, chunked: chunked(c, sc)}
	var best *Plan
	upper := math.Inf(1) // the least objective of a plan that fits
	keep := func(p *Plan) {
		if p == nil || !fitsAll(p) {
			return
		}
		upper = min(upper, p.Bottleneck)
		if best == nil || faster(p, best) {
			best = p
		}
	}
	// A given split: each stage's (each device's chunks') choice is optimal.
	exact := bounds != nil
	if ae.chunked && bounds == nil {
		// Few enough splits: each with its devices' optimal choices (deviceChoice), the
		// least bottleneck found among them all.
		var bestB, bestC []int
		least, leastC := math.Inf(1), math.Inf(1)
		// Under compute+transfer a split's transfers do not depend on what its chunks
		// recompute: its least objective is its devices' least slowest chunk plus its
		// largest transfer.
		exact = chunkSplits(len(m.Layers), len(sc.Devices), MaxChunkSplits, func(b []int) {
			_, _, u, ok := ae.deviceChoice(b)
			if !ok {
				return
			}
			if u < leastC {
				leastC, bestC = u, b
			}
			if opt.Objective == partition.MaxComputePlusTransfer {
				u += ae.maxTransfer(b)
			}
			if u < least {
				least, bestB = u, b
			}
		})
		// The least objective's split, and under compute+transfer also the least
		// compute's (a candidate whose simulated step may be shorter).
		for _, b := range [][]int{bestB, bestC} {
			if b != nil {
				choice, whole, _, _ := ae.deviceChoice(b)
				keep(ae.finishChoice(nil, b, choice, whole, nil))
			}
			if opt.Objective != partition.MaxComputePlusTransfer {
				break
			}
		}
	}
	if !ae.chunked && bounds == nil && opt.Objective == partition.MaxComputePlusTransfer && (!opt.Graph || dagsplit.IsChain(newGraphCosts(e, m))) {
		p, ok, err := ae.transferBounds()
		if err != nil {
			return nil, err
		}
		keep(p)
		exact = ok
	}
	var fallback *Plan // the first mode's plan, when no plan fits (a given split)
	var orders [][]int // the graph splits' orders seen
	for _, md := range ae.modes() {
		pg, err := ae.evaluate(md, nil, bounds)
		if err != nil {
			continue
		}
		if fallback == nil {
			fallback = pg
		}
		keep(pg)
		keep(ae.refine(pg, md))
		if ae.chunked && bounds == nil {
			// Every chunk within what the mode's chunk in its place allocated, the split
			// found again (a guess at what its device can give: the plan is checked).
			budget := make([]int64, len(pg.Stages))
			for j, s := range pg.Stages {
				budget[j] = s.ParamBytes + s.OptimizerBytes + s.ExclusiveBytes + s.SharedBytes + max(s.PeakBytes+s.StashBytes, s.OptimizerTempBytes)
			}
			keep(ae.sweepSplit(nil, budget, pg))
		}
		if o := pg.LayerOrder; o != nil && bounds == nil && !slices.ContainsFunc(orders, func(x []int) bool { return slices.Equal(x, o) }) {
			// The best split of ranges of this order, each stage recomputing optimally.
			orders = append(orders, o)
			keep(ae.sweepSplit(o, nil, pg))
		}
	}
	if ae.chunked && bounds == nil {
		// Each chunk within an equal share of what its device's chunks may allocate in
		// all: a split whose chunks all fit their shares fits about every device (a
		// chunk alone is charged its share of the device's microbatches in flight, which
		// the device's moments of most may exceed: the plan is checked).
		d, err := newDevicesOf(e, c, ae.opt)
		if err != nil {
			return nil, err
		}
		v := len(sc.Devices) / len(c.Devices)
		budget := make([]int64, len(sc.Devices))
		for j := range budget {
			budget[j] = d.avail[j%d.p] / int64(v)
		}
		var like *Plan
		if fallback != nil {
			like = &Plan{Partition: fallback.Partition, GraphFallback: fallback.GraphFallback}
		}
		keep(ae.sweepSplit(nil, budget, like))
	}
	if opt.Graph && bounds == nil && !ae.chunked {
		// Exact, within the least objective the candidates above reach.
		p, ok, err := ae.exactGraph(upper)
		if err != nil {
			return nil, err
		}
		if p != nil && fitsAll(p) && (best == nil || !faster(best, p)) {
			best = p // exact: kept on a tie
		}
		exact = ok
	}
	if ae.chunkGaveUp {
		exact = false // some device's chunks were not chosen for exactly
	}
	if best == nil {
		if fallback != nil {
			if ae.chunkGaveUp {
				// That nothing fits is not proven either.
				fallback.RecomputeHeuristic = ae.why()
			}
			return fallback, nil
		}
		el, err := estimate.New(m, sc, opt.Estimate)
		if err != nil {
			return nil, err
		}
		return nil, &NoFitError{Diagnose(el, m, sc)}
	}
	if !exact {
		best.RecomputeHeuristic = ae.why()
	}
	return best, nil
}

// graphPerLayer plans per-layer recomputation with a graph partition (Options.Graph):
// where the graph split is one of ranges of the layer order (a given split, a chain, an
// interleaved schedule, layers stating their transfers; graphSplit), as perLayerPlan
// plans ranges, exactly; elsewhere by autoElsewhere's heuristic.
func graphPerLayer(e *estimate.Estimator, m *model.Model, c, sc *cluster.Cluster, opt Options, bounds []int) (*Plan, error) {
	g := newGraphCosts(e, m)
	why := g.s.Graphable()
	if bounds == nil && !chunked(c, sc) && why == "" && !dagsplit.IsChain(g) {
		return autoElsewhere(e, m, c, sc, opt, bounds)
	}
	o := opt
	o.Graph = false
	p, err := perLayerPlan(e, m, c, sc, o, bounds)
	if err != nil || bounds != nil {
		return p, err
	}
	switch {
	case chunked(c, sc):
		p.GraphFallback = &GraphFallback{Code: FallbackSharedChunks,
			Reason: "an interleaved schedule's chunks share their device's memory, which the graph split does not bound: ranges of the layer order are split instead"}
	case why != "":
		p.GraphFallback = &GraphFallback{Code: FallbackStatedTransfers, Reason: why}
	default:
		p.Partition = PartitionGraph // a chain: its convex splits are its ranges
	}
	return p, nil
}

// fitsAll reports whether every stage of p fits its limit.
func fitsAll(p *Plan) bool {
	for _, s := range p.Stages {
		if s.MemoryBytes > s.LimitBytes {
			return false
		}
	}
	return true
}

// faster reports whether p's simulated step is shorter than q's (by a relative 1e-12),
// or, without a schedule, its objective lower.
func faster(p, q *Plan) bool {
	if p.Schedule != nil && q.Schedule != nil {
		return p.Schedule.MakespanSeconds < q.Schedule.MakespanSeconds*(1-1e-12)
	}
	return p.Bottleneck < q.Bottleneck*(1-1e-12)
}

// autoEval plans the candidates of autoElsewhere.
type autoEval struct {
	m          *model.Model
	c, sc      *cluster.Cluster
	opt        Options
	base       Options             // opt without recomputation, for solve
	sched      Options             // the same, scheduled, for graphPlan
	e          *estimate.Estimator // of m on sc, nothing recomputed
	chunked    bool
	transferCp bool // the exact method gave up (too many transfer bounds)
	// chunkGaveUp: deviceChoice gave up on some split (too many combinations of a
	// device's chunks' choices, or too many trade-offs in a chunk's sweep).
	chunkGaveUp bool
	// tooManyIdeals: the exact graph method gave up (more ideals than it enumerates);
	// setStates: it left out stages whose trade-offs were too many.
	tooManyIdeals, setStates bool
}

// why says for the plan why its recomputation is the heuristic's.
func (ae *autoEval) why() string {
	var where string
	switch {
	case ae.chunkGaveUp:
		where = fmt.Sprintf("an interleaved schedule's chunks share their device's memory, and some device's chunks have more combinations of choices than the %d tried (or more trade-offs of memory and time than are walked)", maxChunkCombos)
	case ae.chunked:
		where = fmt.Sprintf("an interleaved schedule's chunks share their device's memory, and its splits are more than the %d tried one by one", MaxChunkSplits)
	case ae.tooManyIdeals:
		where = "the graph has more ideals than the exact graph split enumerates"
	case ae.setStates:
		where = "some candidate stages of the graph split have too many trade-offs of memory and time to walk"
	case ae.transferCp:
		where = fmt.Sprintf("the compute+transfer objective has more than %d transfer bounds to try", MaxTransferBounds)
	default:
		where = "the split is given"
	}
	return where + ": the recomputation is chosen per stage of the best split of each global mode (none, selective, full), within the memory that mode gave the stage, and the plan is the fastest of those, never slower than a global mode, not proven optimal"
}

// mode is a global recomputation mode stated per layer.
type mode struct {
	choice []int
	whole  bool
}

// modes are the global modes a request could name instead of auto (fixedModes'):
// nothing recomputed, each part of Options.RecomputeFixed on every layer that offers it,
// and with Options.RecomputeStages every stage whole.
func (ae *autoEval) modes() []mode {
	n := len(ae.m.Layers)
	var out []mode
	for _, part := range append([]string{recompute.None}, ae.opt.RecomputeFixed...) {
		choice := make([]int, n)
		for l, os := range ae.opt.Recompute {
			for k, o := range os[1:] {
				if part != recompute.None && (o.Part == part || slices.Contains(o.Covers, part)) {
					choice[l] = k + 1
				}
			}
		}
		out = append(out, mode{choice: choice})
	}
	if ae.opt.RecomputeStages {
		out = append(out, mode{choice: make([]int, n), whole: true})
	}
	return out
}

// evaluate plans m running md: with bounds nil, the planner's best split of it (the
// graph split, the interleaved split, the objective), else that split of the layer
// order order (nil: the model's). The plan's stages say what they recompute.
func (ae *autoEval) evaluate(md mode, order, bounds []int) (*Plan, error) {
	mm := recompute.Apply(ae.m, ae.opt.Recompute, md.choice)
	p, err := ae.plan(mm, md.whole, order, bounds)
	if err != nil {
		return nil, err
	}
	if md.whole {
		// The estimator's whole stages leave the forward they run again to the
		// schedule: the split's stages stated per layer (applyWholeStages) carry it in
		// their compute, as auto's own whole stages do.
		all := make([]bool, len(p.Stages))
		for i := range all {
			all[i] = true
		}
		mm = ae.applied(make([]int, len(ae.m.Layers)), p.LayerOrder, p.Boundaries, all)
		if mm == nil {
			return nil, errNoEstimate
		}
		part, fb := p.Partition, p.GraphFallback
		if p, err = ae.plan(mm, false, p.LayerOrder, p.Boundaries); err != nil {
			return nil, err
		}
		p.Partition, p.GraphFallback = part, fb
	}
	wholes := make([]bool, len(p.Stages))
	for i := range wholes {
		wholes[i] = md.whole
	}
	ae.describe(p, mm, md.choice, wholes)
	return p, nil
}

// plan plans mm, with every stage whole (estimate.Options.Recompute) when whole: the
// planner's best split when bounds is nil, else that split of the layer order order
// (nil: the model's).
func (ae *autoEval) plan(mm *model.Model, whole bool, order, bounds []int) (*Plan, error) {
	if order != nil {
		o := ae.sched
		if whole {
			o.Estimate.Recompute = true
			if o.Schedule != nil {
				so := *o.Schedule
				so.Recompute = true
				o.Schedule = &so
			}
		}
		return graphPlan(mm, ae.c, ae.sc, o, order, bounds)
	}
	o := ae.base
	o.Estimate.Recompute = whole
	return solve(mm, ae.c, o, bounds)
}

// describe fills each stage's Recompute: the layers it recomputes (every layer of a
// whole stage), the time that adds (what mm's backward passes add to m's, at the stage's
// speed) and the memory it saves (the same split of m, nothing recomputed).
func (ae *autoEval) describe(p *Plan, mm *model.Model, choice []int, whole []bool) {
	m := ae.m
	seconds, err := secondsOf(m, ae.sc)
	if err != nil {
		return
	}
	none, _ := ae.plan(m, false, p.LayerOrder, p.Boundaries)
	for i := range p.Stages {
		s := &p.Stages[i]
		rec := &StageRecompute{Layers: []RecomputedLayer{}, WholeStage: whole[i]}
		var extra float64
		for _, l := range p.StageLayers(i) {
			switch {
			case whole[i]:
				rec.Layers = append(rec.Layers, RecomputedLayer{Layer: l, Name: m.Layers[l].Name, Part: recompute.Full})
				extra += m.Forward(l)
			case choice[l] > 0:
				rec.Layers = append(rec.Layers, RecomputedLayer{Layer: l, Name: m.Layers[l].Name, Part: ae.opt.Recompute[l][choice[l]].Part})
				extra += mm.Backward(l) - m.Backward(l)
			}
		}
		extra *= ae.e.Scale(i)
		rec.ExtraSeconds = seconds(extra)
		if m.Unit() == model.Cycles {
			rec.ExtraCycles = extra
		}
		if none != nil && i < len(none.Stages) {
			rec.SavedBytes = none.Stages[i].MemoryBytes - s.MemoryBytes
		}
		rec.Summary = rec.Describe(m.Unit())
		s.Recompute = rec
	}
}

// refine returns pg's split (a global mode md's best) with each stage's per-layer
// recomputation of least extra time that fits what the stage held under md (its device's
// limit; a chunk of an interleaved schedule, md's allocated peak of it), or nil.
func (ae *autoEval) refine(pg *Plan, md mode) *Plan {
	order := pg.LayerOrder
	m, c, e := ae.inOrder(order)
	if e == nil {
		return nil
	}
	if ae.chunked { // the chunks of each device choose together
		choice, whole, _, ok := ae.deviceChoice(pg.Boundaries)
		if !ok {
			return nil
		}
		return ae.finishChoice(nil, pg.Boundaries, choice, whole, pg)
	}
	pc := newPerLayerCosts(e, m, c, ae.opt.RecomputeStages)
	choice, whole := pc.choose(pg.Boundaries, false)
	if pc.sw.Exceeded() {
		return nil
	}
	return ae.finishChoice(order, pg.Boundaries, choice, whole, pg)
}

// finishChoice plans the split bounds of the layer order order (nil: the model's) whose
// layers run choice (indexed in that order) and whose stages marked whole recompute
// whole, and says what each stage recomputes; like (nil: none) gives the partition and
// fallback to state. nil when it cannot be planned.
func (ae *autoEval) finishChoice(order, bounds, choice []int, whole []bool, like *Plan) *Plan {
	// Each layer's option in the model's numbering (none on a whole stage's layers).
	full := slices.Clone(choice)
	if order != nil {
		for k, l := range order {
			full[l] = choice[k]
		}
	}
	for i, w := range whole {
		if !w {
			continue
		}
		for k := bounds[i]; k < bounds[i+1]; k++ {
			l := k
			if order != nil {
				l = order[k]
			}
			full[l] = 0
		}
	}
	mm := ae.applied(full, order, bounds, whole)
	if mm == nil {
		return nil
	}
	q, err := ae.plan(mm, false, order, bounds)
	if err != nil {
		return nil
	}
	if like != nil {
		q.Partition, q.GraphFallback = like.Partition, like.GraphFallback
	}
	ae.describe(q, mm, full, whole)
	return q
}

// sweepSplit is per-layer recomputation's optimal split of ranges of the layer order
// order (nil: the model's) under the compute objective, each stage allocating at most
// budget[i] (nil: its device's limit), with each stage's optimal choice (perLayerPlan's
// program, partition.SolveSweep); nil when none fits. Every range split of a
// topological order is convex, so with a graph split's order it is a graph split.
func (ae *autoEval) sweepSplit(order []int, budget []int64, like *Plan) *Plan {
	m, c, e := ae.inOrder(order)
	if e == nil {
		return nil
	}
	pc := newPerLayerCosts(e, m, c, ae.opt.RecomputeStages)
	for i := range budget {
		pc.alloc[i] = min(pc.alloc[i], budget[i])
	}
	r, err := partition.SolveSweep(pc)
	if err != nil || pc.sw.Exceeded() {
		return nil
	}
	choice, whole := pc.choose(r.Boundaries, true)
	if pc.sw.Exceeded() {
		return nil
	}
	return ae.finishChoice(order, r.Boundaries, choice, whole, like)
}

// errNoEstimate: a model in a graph split's order could not be estimated.
var errNoEstimate = errors.New("plan: the model in the split's order cannot be estimated")

// inOrder returns the model, its options and its estimator (nothing recomputed) in the
// layer order order (nil: the model's, and ae.e); e is nil when the estimate fails.
func (ae *autoEval) inOrder(order []int) (*model.Model, recompute.Choices, *estimate.Estimator) {
	if order == nil {
		return ae.m, ae.opt.Recompute, ae.e
	}
	m2, eo := reordered(ae.m, order, ae.sched.Estimate)
	c2 := make(recompute.Choices, len(order))
	for k, l := range order {
		c2[k] = ae.opt.Recompute[l]
	}
	e, err := estimate.New(m2, ae.sc, eo)
	if err != nil {
		return nil, nil, nil
	}
	return m2, c2, e
}

// applied returns the model (in its own order) whose layers run choice (by the model's
// numbers) and whose stages of the split bounds of the layer order order that whole
// marks recompute whole (applyWholeStages, in that order); nil when the estimate fails.
func (ae *autoEval) applied(choice, order, bounds []int, whole []bool) *model.Model {
	m, c, e := ae.inOrder(order)
	if e == nil {
		return nil
	}
	ch := choice
	if order != nil {
		ch = make([]int, len(order))
		for k, l := range order {
			ch[k] = choice[l]
		}
	}
	mr := applyWholeStages(recompute.Apply(m, c, ch), e, bounds, whole)
	if order == nil {
		return mr
	}
	mm := *ae.m
	mm.Layers = make([]model.Layer, len(order))
	for k, l := range order {
		mm.Layers[l] = mr.Layers[k]
	}
	return &mm
}

// transferCapped is per-layer recomputation's costs with every stage's transfer
// bounded: a range whose transfer on stage i exceeds tau costs +Inf there.
type transferCapped struct {
	*perLayerCosts
	tau float64
}

func (t transferCapped) Sweep(a int, visit func(b int, cost func(i int) float64) bool) {
	// A stage starting at a receives the same on every range: where it alone exceeds
	// tau on every stage, no range from a fits.
	open := false
	for i := range t.e.Stages() {
		open = open || t.e.Recv(i, a) <= t.tau
	}
	if !open {
		return
	}
	var at int
	var inner func(i int) float64
	capped := func(i int) float64 {
		if t.e.Transfer(i, a, at) > t.tau {
			return math.Inf(1)
		}
		return inner(i)
	}
	t.perLayerCosts.Sweep(a, func(b int, cost func(i int) float64) bool {
		at, inner = b, cost
		return visit(b, capped)
	})
}

// transferBounds is autoElsewhere's exact method under compute+transfer: the least over
// transfer bounds t of OPT(t) + t, and its plan. ok is false when it gave up (more than
// MaxTransferBounds bounds to try), or found no split.
func (ae *autoEval) transferBounds() (*Plan, bool, error) {
	e, m := ae.e, ae.m
	n, p := e.Layers(), e.Stages()
	free := newPerLayerCosts(e, m, ae.opt.Recompute, ae.opt.RecomputeStages)
	r0, err := partition.SolveSweep(free)
	if free.sw.Exceeded() {
		return nil, false, tooManyStates(n, p)
	}
	if err != nil {
		return nil, true, nil // no split fits: none under a bound either
	}
	var taus []float64
	for i := range p {
		for a := 0; a < n; a++ {
			for b := a; b < n; b++ {
				taus = append(taus, e.Transfer(i, a, b))
			}
		}
	}
	slices.Sort(taus)
	taus = slices.Compact(taus)
	// The unbounded split's objective is reached: it bounds the rest from the start.
	maxT := func(bounds []int) float64 {
		var t float64
		for i := range p {
			t = max(t, e.Transfer(i, bounds[i], bounds[i+1]-1))
		}
		return t
	}
	bestObj, var0 := r0.MaxCompute+maxT(r0.Boundaries), r0.Boundaries
	tried := 0
	for _, tau := range taus {
		if r0.MaxCompute+tau >= bestObj {
			break // OPT(t) + t >= OPT(+Inf) + tau for every t >= tau
		}
		if tried++; tried > MaxTransferBounds {
			ae.transferCp = true
			return nil, false, nil
		}
		pc := newPerLayerCosts(e, m, ae.opt.Recompute, ae.opt.RecomputeStages)
		// Only a split of compute below bestObj - tau improves on the best: ranges
		// costing more need not be swept (perLayerCosts.Bound).
		pc.Bound((bestObj - tau) * (1 + 1e-9))
		r, err := partition.SolveSweep(transferCapped{pc, tau})
		if pc.sw.Exceeded() {
			return nil, false, tooManyStates(n, p)
		}
		if err != nil {
			continue
		}
		if obj := r.MaxCompute + maxT(r.Boundaries); obj < bestObj {
			bestObj, var0 = obj, r.Boundaries
		}
	}
	if var0 == nil {
		return nil, true, nil
	}
	pc := newPerLayerCosts(e, m, ae.opt.Recompute, ae.opt.RecomputeStages)
	choice, whole := pc.choose(var0, false)
	q, err := pc.finish(m, ae.c, ae.sc, ae.opt, var0, choice, whole)
	if err != nil {
		return nil, false, err
	}
	return q, true, nil
}
