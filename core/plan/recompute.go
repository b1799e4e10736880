package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// StageRecompute is what a stage recomputes under per-layer recomputation
// (Options.Recompute) and what that costs.
type StageRecompute struct {
	// Layers are the layers that recompute something, in the plan's layer order.
	Layers []RecomputedLayer `json:"layers"`
	// ExtraSeconds is the time the recomputation adds to the stage's backward pass for
	// one microbatch (in Stage.ComputeSeconds); ExtraCycles the same in device 0's
	// cycles for a model in cycles.
	ExtraSeconds float64 `json:"extra_seconds"`
	ExtraCycles  float64 `json:"extra_cycles,omitempty"`
	// SavedBytes is the memory it saves the stage: what the stage would need keeping
	// every activation, less its MemoryBytes.
	SavedBytes int64 `json:"saved_bytes"`
	// WholeStage says the stage recomputes its whole forward pass keeping only its
	// input (as global full recomputation does every stage), rather than each layer
	// keeping its own input: Layers then lists every layer of the stage.
	WholeStage bool `json:"whole_stage,omitempty"`
	// Summary says it for people (Describe): what front ends show as it is.
	Summary string `json:"summary"`
}

// RecomputedLayer is one layer's recomputation.
type RecomputedLayer struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Part is what it recomputes: recompute.Full (the whole layer, from its input),
	// recompute.Attention (the attention core), or another set of a block's parts named
	// by Megatron-LM's modules joined by commas ("layernorm,moe_act"; recompute.Label).
	Part string `json:"part"`
}

// perLayerCosts adapts an estimator and per-layer options to partition.SweepCosts: a
// stage's cost is its compute plus the least extra time of a recomputation that fits
// it (core/recompute).
type perLayerCosts struct {
	e        *estimate.Estimator
	c        recompute.Choices
	sw       *recompute.Sweep
	sc       *estimate.Scanner
	alloc    []int64 // allocatable bytes per stage
	maxAlloc int64
	// bound: no range costing more is needed (partition.SweepBounder); minScale the
	// least speed scale of a stage, by which a bound limits a range's extra time.
	bound, minScale float64
	// classes are the stages' distinct (in flight - 1, allocatable bytes): a state
	// fits no stage when it fits none of them.
	classes [][2]int64
	// stages offers each stage the whole-stage form (Options.RecomputeStages); fwd is
	// the prefix sum of the layers' forward times on device 0, what it adds.
	stages bool
	fwd    []float64
}

// wholeStage returns the whole-stage form's extra time for the range [a, b] and its
// passes' peak with k in flight over its always-alive memory, as Estimate.Recompute
// costs it: one microbatch's peak as nothing recomputed (the forward runs again in the
// backward pass), and the stage's input for each other microbatch in flight. ok is
// false where the form is not offered.
func (pc *perLayerCosts) wholeStage(sc *estimate.Scanner, k int) (extra float64, passes int64, ok bool) {
	if !pc.stages {
		return 0, 0, false
	}
	a, b := sc.First(), sc.Last()
	base, _, _ := sc.Memory()
	always, _ := sc.Always()
	return pc.fwd[b+1] - pc.fwd[a], base - always + int64(max(1, k)-1)*pc.e.InputBytes(a), true
}

// keeper is the sweep's filter for the range [a, b] of that work: a state is kept when
// its extra time is within the bound's and its memory fits some stage beside the
// range's always-alive memory without shared items (which only grows).
func (pc *perLayerCosts) keeper(a, b int, work float64) func(p, m int64, t float64) bool {
	static := pc.e.StaticBytes(a, b)
	tcut := pc.timeCut(work)
	return func(p, m int64, t float64) bool {
		if t > tcut {
			return false
		}
		for _, c := range pc.classes {
			if m+c[0]*p <= c[1]-static {
				return true
			}
		}
		return false
	}
}

// Bound makes ranges costing more than u report +Inf: their sweeps drop the states of
// more extra time than u allows, and end once the work alone exceeds it.
func (pc *perLayerCosts) Bound(u float64) { pc.bound = min(pc.bound, u) }

// timeCut is the most extra time a range of that work may take and cost at most the
// bound on some stage (with a relative 1e-9 of room, so that rounding drops nothing
// needed); +Inf without a bound.
func (pc *perLayerCosts) timeCut(work float64) float64 {
	if math.IsInf(pc.bound, 1) {
		return math.Inf(1)
	}
	u := pc.bound / pc.minScale
	return u - work + 1e-9*math.Abs(u)
}

// MaxRecomputeStates bounds the states per-layer recomputation's sweeps make for one
// plan (about a second of work per ten million): architectures, whose blocks are alike,
// need few (Llama-2-70B's 83 layers on 8 stages: thousands); profiles of long stages of
// layers of many different sizes may need more, and are refused rather than left to run.
const MaxRecomputeStates = 20_000_000

func newPerLayerCosts(e *estimate.Estimator, m *model.Model, c recompute.Choices, stages bool) *perLayerCosts {
	pc := &perLayerCosts{e: e, c: c, sw: recompute.NewSweep(c, e.CarryBytes), sc: e.Scanner(), bound: math.Inf(1), minScale: math.Inf(1), stages: stages}
	pc.fwd = make([]float64, len(m.Layers)+1)
	for l := range m.Layers {
		pc.fwd[l+1] = pc.fwd[l] + m.Forward(l)
	}
	pc.sw.SetBudget(MaxRecomputeStates)
	// Ranges of alike layers share their states (an architecture's blocks, from any
	// start, and on every probe of the partitioner): keeper reads a range's static
	// bytes and work, so a layer's label is its own (its work as the estimator sums it).
	pc.sw.Memoize(func(l int) string {
		return strconv.FormatInt(e.StaticBytes(l, l), 36) + "|" + strconv.FormatUint(math.Float64bits(m.Forward(l)+m.Backward(l)), 36)
	})
	for i := range e.Stages() {
		pc.alloc = append(pc.alloc, e.AllocatableBytes(i))
		pc.maxAlloc = max(pc.maxAlloc, pc.alloc[i])
		pc.minScale = min(pc.minScale, e.Scale(i))
		c := [2]int64{int64(e.InFlight(i) - 1), pc.alloc[i]}
		if !slices.Contains(pc.classes, c) {
			pc.classes = append(pc.classes, c)
		}
	}
	return pc
}

func (pc *perLayerCosts) Layers() int           { return pc.e.Layers() }
func (pc *perLayerCosts) Stages() int           { return pc.e.Stages() }
func (pc *perLayerCosts) CutAllowed(k int) bool { return pc.e.CutAllowed(k) }

// Sweep grows [a, b] one layer at a time; a stage's cost is (work + least extra time)
// times its speed scale, +Inf when no choice fits its memory.
func (pc *perLayerCosts) Sweep(a int, visit func(b int, cost func(i int) float64) bool) {
	e := pc.e
	pc.sc.Reset(a)
	pc.sw.Reset(a)
	for b := a; b < e.Layers(); b++ {
		if b > a {
			pc.sc.ExtendRight()
		}
		work := e.Prefix(b+1) - e.Prefix(a)
		left := pc.sw.Extend(pc.keeper(a, b, work))
		if pc.sw.Exceeded() {
			return
		}
		always, temp := pc.sc.Always()
		// The whole-stage form's peak only grows with the range (its input is fixed):
		// once it fits no stage, nor will a longer range's.
		wExtra, _, wOK := pc.wholeStage(pc.sc, 1)
		if wOK {
			wOK = false
			for i := range pc.alloc {
				if _, passes, _ := pc.wholeStage(pc.sc, e.InFlight(i)); always+passes <= pc.alloc[i] {
					wOK = true
				}
			}
		}
		if !left && !wOK {
			return // no state fits any stage or the bound, nor will a longer range's
		}
		cost := func(i int) float64 {
			lim := pc.alloc[i]
			if always+temp > lim {
				return math.Inf(1)
			}
			extra, _, ok := pc.sw.Best(lim-always, e.InFlight(i))
			if _, passes, w := pc.wholeStage(pc.sc, e.InFlight(i)); w && always+passes <= lim && (!ok || wExtra < extra) {
				extra, ok = wExtra, true
			}
			if !ok {
				return math.Inf(1)
			}
			return (work + extra) * e.Scale(i)
		}
		if !visit(b, cost) {
			return
		}
	}
}

// choose returns each layer's option under the split: per stage, the fitting choice of
// least extra time, or, where none fits, the one needing the least memory; and which
// stages take the whole-stage form (their layers' options are then unused). With
// filtered (a split of SolveSweep, every stage of which fits at a cost within the
// bound), the stages' states are those its sweeps kept (keeper): the stage's best
// choice is among them, and the memoised ranges serve again; a stage none of them fits
// is swept again without the filter.
func (pc *perLayerCosts) choose(bounds []int, filtered bool) ([]int, []bool) {
	e := pc.e
	choice := make([]int, e.Layers())
	whole := make([]bool, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]-1
		sweep := func(filtered bool) {
			pc.sc.Reset(a)
			pc.sw.Reset(a)
			for l := a; l <= b; l++ {
				if l > a {
					pc.sc.ExtendRight()
				}
				if filtered {
					pc.sw.Extend(pc.keeper(a, l, e.Prefix(l+1)-e.Prefix(a)))
				} else {
					pc.sw.Extend(nil)
				}
			}
		}
		sweep(filtered)
		always, _ := pc.sc.Always()
		k := e.InFlight(i)
		extra, at, ok := pc.sw.Best(pc.alloc[i]-always, k)
		if !ok && filtered {
			sweep(false)
			extra, at, ok = pc.sw.Best(pc.alloc[i]-always, k)
		}
		wExtra, wPasses, w := pc.wholeStage(pc.sc, k)
		switch {
		case w && always+wPasses <= pc.alloc[i] && (!ok || wExtra < extra):
			whole[i] = true
			continue
		case ok:
		case w && (pc.sw.States() == 0 || wPasses < leastPasses(pc.sw, k)):
			whole[i] = true
			continue
		default:
			at = pc.sw.Least(k)
		}
		copy(choice[a:b+1], pc.sw.Choice(at))
	}
	return choice, whole
}

// leastPasses is the least passes' peak of a sweep's states with k in flight.
func leastPasses(sw *recompute.Sweep, k int) int64 {
	_, p, m := sw.StateAt(sw.Least(k))
	return m + int64(max(1, k)-1)*p
}

// applyWholeStages returns m (already running the chosen options elsewhere) with the
// stages of bounds that whole marks running the whole-stage form, stated per layer so
// that core/estimate costs it as Estimate.Recompute does: the stage's activations total
// its input (on its first layer, the excess over the first layer's activation on its
// last), each later layer's temporary grows by what the dropped activations before it
// held in the peak (so that one microbatch's peak is that of nothing recomputed), and
// every layer's backward pass runs its forward again.
func applyWholeStages(m *model.Model, e *estimate.Estimator, bounds []int, whole []bool) *model.Model {
	out := *m
	out.Layers = append([]model.Layer(nil), m.Layers...)
	for i, w := range whole {
		if !w {
			continue
		}
		a, b := bounds[i], bounds[i+1]-1
		in := e.InputBytes(a)
		first := min(in, m.Layers[a].ActivationBytes)
		var run int64 // activations of [a, l) as nothing recomputed
		for l := a; l <= b; l++ {
			ly := &out.Layers[l]
			if l > a {
				ly.TemporaryBytes += run - first
			}
			run += m.Layers[l].ActivationBytes
			ly.ActivationBytes = 0
			if m.Unit() == model.Cycles {
				ly.BackwardCycles += ly.ForwardCycles
			} else {
				ly.BackwardSeconds += ly.ForwardSeconds
			}
		}
		out.Layers[a].ActivationBytes = first
		out.Layers[b].ActivationBytes += in - first
	}
	return &out
}

// noneBinds returns the optimal split without recomputation when memory does not bind
// it: when its bottleneck equals that of the best split on devices of unbounded memory,
// which bounds from below the bottleneck of every split with any recomputation.
func noneBinds(e *estimate.Estimator, m *model.Model, sc *cluster.Cluster, opt Options) ([]int, bool) {
	u, err := partition.Bottleneck(Costs{e})
	if err != nil {
		return nil, false
	}
	free := *sc
	free.Devices = slices.Clone(sc.Devices)
	for i := range free.Devices {
		free.Devices[i].MemoryBytes, free.Devices[i].UsableFraction = cluster.MaxMemoryBytes, 1
	}
	eo := opt.Estimate
	eo.FixedBytes, eo.AllocatorReserve, eo.MemoryProportion = 0, 0, 1
	ef, err := estimate.New(m, &free, eo)
	if err != nil {
		return nil, false
	}
	lb, err := partition.Bottleneck(Costs{ef})
	if err != nil || u > lb*(1+2e-12) {
		// Memory binds (Solve's MaxCompute is within a relative 1e-12 of Bottleneck's):
		// the splits, whose ties Solve breaks, are not needed to tell.
		return nil, false
	}
	r, err := partition.Solve(Costs{e}, partition.MaxCompute)
	if err != nil {
		return nil, false
	}
	rf, err := partition.Solve(Costs{ef}, partition.MaxCompute)
	if err != nil || rf.MaxCompute != r.MaxCompute {
		return nil, false
	}
	return r.Boundaries, true
}

func tooManyStates(n, p int) error {
	return &model.FieldError{Path: "recompute", Reason: fmt.Sprintf("auto: choosing what %d layers on %d stages recompute takes more than %d trade-offs of memory and time, which this planner refuses to walk: plan with more stages (fewer layers each), or recompute none or full", n, p, MaxRecomputeStates)}
}

// leaner reports whether option x needs no more memory than y on every stage (no more
// activation and temporary bytes) and is strictly leaner in one of them.
func leaner(x, y recompute.Option) bool {
	return x.ActivationBytes <= y.ActivationBytes && x.TemporaryBytes <= y.TemporaryBytes &&
		(x.ActivationBytes < y.ActivationBytes || x.TemporaryBytes < y.TemporaryBytes)
}

// perLayerPlan plans with per-layer recomputation (Options.Recompute): the split that
// minimises the bottleneck with each stage's optimal recomputation (partition.SolveSweep
// over perLayerCosts), or the given split with each stage's optimal recomputation; then
// the plan of the model whose layers run the chosen options.
func perLayerPlan(e *estimate.Estimator, m *model.Model, c, sc *cluster.Cluster, opt Options, bounds []int) (*Plan, error) {
	switch {
	case len(opt.Recompute) != len(m.Layers):
		return nil, &model.FieldError{Path: "recompute", Reason: "must give options for every layer"}
	case opt.Estimate.Inference:
		return nil, &model.FieldError{Path: "recompute", Reason: "applies to training: inference keeps no activations to recompute"}
	case opt.Estimate.Recompute:
		return nil, &model.FieldError{Path: "recompute", Reason: "per-layer recomputation chooses what each stage stashes: it does not combine with recomputing whole stages"}
	}
	for _, os := range opt.Recompute {
		if len(os) == 0 {
			return nil, &model.FieldError{Path: "recompute", Reason: "every layer needs its option 0 (as it is)"}
		}
	}
	if opt.Graph {
		return graphPerLayer(e, m, c, sc, opt, bounds)
	}
	if opt.Objective != partition.MaxCompute || chunked(c, sc) {
		return autoElsewhere(e, m, c, sc, opt, bounds)
	}
	pc := newPerLayerCosts(e, m, opt.Recompute, opt.RecomputeStages)
	given := bounds != nil
	free := false // memory does not bind: nothing is recomputed
	var modes []fixedMode
	if bounds == nil {
		if r, ok := noneBinds(e, m, sc, opt); ok {
			// Memory does not bind: the split without recomputation attains the least
			// bottleneck any split can have, extra times being >= 0, and its stages fit
			// recomputing nothing (no stage's sweep is needed).
			bounds, free = r, true
		}
	}
	if bounds == nil {
		// Every layer as lean as its options make it: the fast partitioner's optimum of
		// that model is a split whose stages fit with that choice, so the optimum costs
		// no more (a bound that prunes the sweeps); where nothing fits, it explains why.
		lean := make([]int, len(m.Layers))
		for l, os := range opt.Recompute {
			for k := range os {
				if leaner(os[k], os[lean[l]]) {
					lean[l] = k
				}
			}
		}
		ml := recompute.Apply(m, opt.Recompute, lean)
		el, err := estimate.New(ml, sc, opt.Estimate)
		if err != nil {
			return nil, err
		}
		if u, err := partition.Bottleneck(Costs{el}); err == nil {
			pc.Bound(u * (1 + 1e-9))
		}
		if opt.Schedule != nil {
			// The global modes stated per layer, planned below anyway, are choices too:
			// the least of their bottlenecks bounds the optimum as the leanest choice's
			// does, and is often much nearer it (fewer states kept). Not the whole-stage
			// form's: the estimator's compute leaves out the forward it runs again.
			modes = pc.fixedModes(m, sc, opt)
			for _, f := range modes {
				if !f.stages {
					pc.Bound(f.bottleneck * (1 + 1e-9))
				}
			}
		}
		r, err := partition.SolveSweep(pc)
		if pc.sw.Exceeded() {
			return nil, tooManyStates(len(m.Layers), e.Stages())
		}
		if err != nil {
			return nil, &NoFitError{Diagnose(el, ml, sc)}
		}
		bounds = r.Boundaries
	}
	choice, whole := make([]int, len(m.Layers)), make([]bool, len(bounds)-1)
	if !free {
		choice, whole = pc.choose(bounds, !given)
	}
	if pc.sw.Exceeded() {
		return nil, tooManyStates(len(m.Layers), e.Stages())
	}
	p, err := pc.finish(m, c, sc, opt, bounds, choice, whole)
	if err != nil || given || opt.Schedule == nil {
		return p, err
	}
	// The least bottleneck is not always the shortest step: GPipe's (and any schedule's
	// fill and drain) also grows with the stages' total, which no split here minimises.
	// So auto also plans what the request's global modes plan (nothing recomputed, each
	// of Options.RecomputeFixed on every layer, and, where offered, every stage whole),
	// each with its own least-bottleneck split, and keeps the shortest pipeline: auto is
	// never slower than a mode it could have been asked for.
	seconds, err := secondsOf(m, sc)
	if err != nil {
		return nil, err
	}
	if modes == nil {
		modes = pc.fixedModes(m, sc, opt)
	}
	for _, f := range modes {
		// Its busiest device alone computes every microbatch of its slowest stage (one
		// stage per device: auto is not chunked), so where that is no shorter, nor is
		// the mode's plan: asked of its least bottleneck, then of its split's.
		longer := func() bool {
			return p.Schedule != nil && seconds(f.bottleneck)*float64(max(1, opt.Schedule.Microbatches)) >= p.Schedule.MakespanSeconds
		}
		if longer() || !f.split() || longer() {
			continue
		}
		q, err := pc.finish(m, c, sc, opt, f.bounds, f.choice, f.whole)
		if err != nil || q.Schedule == nil || p.Schedule == nil {
			continue
		}
		if q.Schedule.MakespanSeconds < p.Schedule.MakespanSeconds*(1-1e-12) {
			p = q
		}
	}
	return p, nil
}

// fixedMode is a global recomputation mode stated per layer: each layer's option,
// whether every stage recomputes whole, and, once split is called, its split and which
// stages recompute whole.
type fixedMode struct {
	bounds []int
	choice []int
	whole  []bool
	// bottleneck is its least slowest stage's compute per microbatch: before split,
	// partition.Bottleneck's (which Solve's MaxCompute exceeds by at most a relative
	// 1e-12); after, the split's MaxCompute.
	bottleneck float64
	costs      Costs // its estimator, for split
	// stages: every stage recomputes whole (the profile's global full).
	stages bool
}

// split finds the mode's least-bottleneck split (partition.Solve, ties broken), which
// only a mode that may beat auto's plan needs; false if none is found.
func (f *fixedMode) split() bool {
	if f.bounds != nil {
		return true
	}
	r, err := partition.Solve(f.costs, partition.MaxCompute)
	if err != nil {
		return false
	}
	f.bounds, f.bottleneck = r.Boundaries, r.MaxCompute
	f.whole = make([]bool, len(r.Boundaries)-1)
	for i := range f.whole {
		f.whole[i] = f.stages
	}
	return true
}

// fixedModes are the global modes auto compares its plan with (perLayerPlan), each with
// the least bottleneck of the model running it (its split found on demand, split):
// nothing recomputed; each part of Options.RecomputeFixed on every layer that offers it
// (or an option that dominates it, recompute.Option.Covers); and with
// Options.RecomputeStages every stage whole, as a profile's global full recomputation is
// planned (estimate.Options.Recompute). A mode no split fits is left out.
func (pc *perLayerCosts) fixedModes(m *model.Model, sc *cluster.Cluster, opt Options) []fixedMode {
	var out []fixedMode
	n := len(m.Layers)
	costs := func(mm *model.Model, eo estimate.Options) (Costs, float64, bool) {
		ef, err := estimate.New(mm, sc, eo)
		if err != nil {
			return Costs{}, 0, false
		}
		u, err := partition.Bottleneck(Costs{ef})
		return Costs{ef}, u, err == nil
	}
	parts := append([]string{recompute.None}, opt.RecomputeFixed...)
	for _, part := range parts {
		choice := make([]int, n)
		for l, os := range pc.c {
			for k, o := range os[1:] {
				if part != recompute.None && (o.Part == part || slices.Contains(o.Covers, part)) {
					choice[l] = k + 1
				}
			}
		}
		if cs, u, ok := costs(recompute.Apply(m, pc.c, choice), opt.Estimate); ok {
			out = append(out, fixedMode{choice: choice, bottleneck: u, costs: cs})
		}
	}
	if pc.stages {
		eo := opt.Estimate
		eo.Recompute = true
		if cs, u, ok := costs(m, eo); ok {
			out = append(out, fixedMode{choice: make([]int, n), stages: true, bottleneck: u, costs: cs})
		}
	}
	return out
}

// finish is the plan of the split bounds whose layers run choice and whose stages marked
// whole recompute whole: each stage says what it recomputes, what that adds and saves,
// and the schedule is simulated.
func (pc *perLayerCosts) finish(m *model.Model, c, sc *cluster.Cluster, opt Options, bounds, choice []int, whole []bool) (*Plan, error) {
	e := pc.e
	m2 := applyWholeStages(recompute.Apply(m, pc.c, choice), e, bounds, whole)
	e2, err := estimate.New(m2, sc, opt.Estimate)
	if err != nil {
		return nil, err
	}
	p, err := FromBoundaries(e2, m2, sc, bounds, opt.Objective)
	if err != nil {
		return nil, err
	}
	seconds, err := secondsOf(m, sc)
	if err != nil {
		return nil, err
	}
	for i := range p.Stages {
		s := &p.Stages[i]
		rec := &StageRecompute{Layers: []RecomputedLayer{}, WholeStage: whole[i]}
		var extra float64
		for l := s.FirstLayer; l <= s.LastLayer; l++ {
			if whole[i] {
				rec.Layers = append(rec.Layers, RecomputedLayer{Layer: l, Name: m.Layers[l].Name, Part: recompute.Full})
				extra += m2.Backward(l) - m.Backward(l)
			} else if k := choice[l]; k > 0 {
				o := pc.c[l][k]
				rec.Layers = append(rec.Layers, RecomputedLayer{Layer: l, Name: m.Layers[l].Name, Part: o.Part})
				extra += (m2.Backward(l) - m.Backward(l))
			}
		}
		extra *= e.Scale(i)
		rec.ExtraSeconds = seconds(extra)
		if m.Unit() == model.Cycles {
			rec.ExtraCycles = extra
		}
		rec.SavedBytes = e.Range(i, s.FirstLayer, s.LastLayer).MemoryBytes - s.MemoryBytes
		rec.Summary = rec.Describe(m.Unit())
		s.Recompute = rec
	}
	if opt.Schedule != nil {
		opt.Recompute = nil
		if p.Schedule, err = simulate(e2, m2, c, sc, bounds, opt); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Describe says what the stage recomputes and what that costs, for people: "whole
// layers 1-7, attention core of 8: +167 ms per microbatch, saves 94.92 GiB", or
// "nothing".
func (r *StageRecompute) Describe(unit model.TimeUnit) string {
	if r == nil || len(r.Layers) == 0 {
		return "nothing"
	}
	if r.WholeStage {
		extra := units.Time(r.ExtraSeconds, model.Seconds)
		if unit == model.Cycles {
			extra = units.Time(r.ExtraCycles, model.Cycles)
		}
		return fmt.Sprintf("the whole stage from its input: +%s per microbatch, saves %s", extra, units.Bytes(r.SavedBytes))
	}
	var parts []string
	names := []string{recompute.Full, recompute.Attention} // then the other sets, as they come
	for _, l := range r.Layers {
		if !slices.Contains(names, l.Part) {
			names = append(names, l.Part)
		}
	}
	for _, name := range names {
		label := wire.RecomputeLabel(name) + " of "
		if name == recompute.Full {
			label = "whole layers "
		}
		var ls []int
		for _, l := range r.Layers {
			if l.Part == name {
				ls = append(ls, l.Layer)
			}
		}
		if len(ls) == 0 {
			continue
		}
		var runs []string
		for _, rn := range wire.Runs(ls) {
			if rn[0] == rn[1] {
				runs = append(runs, strconv.Itoa(rn[0]))
			} else {
				runs = append(runs, fmt.Sprintf("%d-%d", rn[0], rn[1]))
			}
		}
		parts = append(parts, label+strings.Join(runs, ","))
	}
	extra := units.Time(r.ExtraSeconds, model.Seconds)
	if unit == model.Cycles {
		extra = units.Time(r.ExtraCycles, model.Cycles)
	}
	return fmt.Sprintf("%s: +%s per microbatch, saves %s", strings.Join(parts, ", "), extra, units.Bytes(r.SavedBytes))
}
