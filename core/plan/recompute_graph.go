package plan

import (
	"errors"
	"math"

	"pipeplan/core/dagsplit"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
)

// graphRecomputeCosts adapts per-layer recomputation to dagsplit.Costs, so that a graph
// split and each stage's recomputation are optimal together: a candidate stage (a set of
// layers after an ideal) costs its compute plus the least extra time of a choice of
// options that fits its memory (core/recompute's program run over the set's layers in
// ascending order, each carrying what estimate.SetCoster finds alive across it), or, with
// whole stages offered, the whole-stage form's (its forward again, its input kept per
// microbatch in flight), whichever is less. A stage's cost is never below its work times
// its speed, as dagsplit's pruning assumes.
type graphRecomputeCosts struct {
	*graphCosts
	e      *estimate.Estimator
	m      *model.Model
	c      recompute.Choices
	stages bool
	alloc  []int64
	// upper, when positive, is an objective some split reaches: a state whose extra time
	// takes its stage beyond it on the fastest device is dropped; minScale is that speed.
	upper, minScale float64
	// scratch
	sub   recompute.Choices
	carry []int64
	// made counts the states every set's program made; exceeded: some set's made more
	// than maxSetStates, and was left out.
	made     int64
	exceeded bool
}

// maxSetStates bounds the states one candidate stage's program makes: a set beyond it
// is left out (graphRecomputeCosts.exceeded), so that a graph whose stages have very many
// trade-offs is planned in bounded time, by the heuristic where the exact split is lost.
const maxSetStates = 1 << 20

func newGraphRecomputeCosts(e *estimate.Estimator, m *model.Model, c recompute.Choices, stages bool) *graphRecomputeCosts {
	g := &graphRecomputeCosts{graphCosts: newGraphCosts(e, m), e: e, m: m, c: c, stages: stages}
	g.minScale = math.Inf(1)
	for i := range e.Stages() {
		g.alloc = append(g.alloc, e.AllocatableBytes(i))
		g.minScale = min(g.minScale, e.Scale(i))
	}
	return g
}

// Cost costs the stage holding set after before on every stage.
func (g *graphRecomputeCosts) Cost(before []bool, set []int, out []dagsplit.StageCost) {
	g.s.Stages(before, set, g.ranges)
	g.carry = g.s.CarryBytes(set, g.carry)
	g.sub = g.sub[:0]
	var fwd float64
	for _, l := range set {
		g.sub = append(g.sub, g.c[l])
		fwd += g.m.Forward(l)
	}
	sw := recompute.NewSweep(g.sub, func(x int) int64 { return g.carry[x] })
	sw.SetBudget(maxSetStates)
	sw.Reset(0)
	// Keep the states that fit some stage beside the set's always-alive memory, and
	// whose extra time leaves the stage within the bound (a split known to reach it).
	r0 := g.ranges[0]
	static := r0.ParamBytes + r0.OptimizerBytes + r0.ExclusiveBytes + r0.SharedBytes
	var work float64
	for _, l := range set {
		work += g.Work(l)
	}
	tcut := math.Inf(1)
	if g.upper > 0 {
		tcut = g.upper/g.minScale - work + 1e-9*g.upper/g.minScale
	}
	keep := func(p, m int64, t float64) bool {
		if t > tcut {
			return false
		}
		for i, r := range g.ranges {
			if m+int64(max(1, r.InFlight)-1)*p <= g.alloc[i]-static {
				return true
			}
		}
		return false
	}
	for range set {
		if !sw.Extend(keep) {
			break
		}
	}
	g.made += sw.Made()
	if sw.Exceeded() {
		// The set's trade-offs are too many to walk: it is left out (the same on every
		// call, so that dagsplit's passes agree), and the split is not proven optimal.
		g.exceeded = true
		for i := range out {
			out[i] = dagsplit.StageCost{Compute: math.Inf(1)}
		}
		return
	}
	swept := sw.States() > 0
	for i, r := range g.ranges {
		always := r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes
		lim := g.alloc[i]
		cost := dagsplit.StageCost{Compute: r.Compute, Transfer: r.Transfer}
		if always+r.OptimizerTempBytes <= lim {
			extra, ok := 0.0, false
			if swept {
				extra, _, ok = sw.Best(lim-always, r.InFlight)
			}
			if g.stages {
				passes := r.PeakBytes + int64(max(1, r.InFlight)-1)*r.RecvBytes
				if always+passes <= lim && (!ok || fwd < extra) {
					extra, ok = fwd, true
				}
			}
			if ok {
				cost.Compute += extra * g.e.Scale(i)
				cost.Fits = true
			}
		}
		out[i] = cost
	}
}

// exactGraph is per-layer recomputation's optimal graph split (dagsplit.Solve over
// graphRecomputeCosts) with each stage's optimal choice, planned; upper (0: none) is an
// objective some plan reaches, which prunes the candidate stages. ok is false when the
// graph has more ideals than the exact method enumerates (the heuristic's plan stands).
func (ae *autoEval) exactGraph(upper float64) (p *Plan, ok bool, err error) {
	e, m := ae.e, ae.m
	gc := newGraphRecomputeCosts(e, m, ae.opt.Recompute, ae.opt.RecomputeStages)
	if upper > 0 && !math.IsInf(upper, 1) {
		gc.upper = upper * (1 + 1e-9)
	}
	r, err := dagsplit.Solve(gc, ae.opt.Objective, dagsplit.Options{MaxIdeals: ae.opt.MaxIdeals, Upper: gc.upper})
	switch {
	case errors.Is(err, dagsplit.ErrTooManyIdeals):
		ae.tooManyIdeals = true
		return nil, false, nil
	case err != nil:
		return nil, !gc.exceeded, nil // no convex split fits with any choice
	}
	order := r.Order
	if isIdentity(order) {
		order = nil
	}
	mo, c, eo := ae.inOrder(order)
	if eo == nil {
		return nil, false, errNoEstimate
	}
	pc := newPerLayerCosts(eo, mo, c, ae.opt.RecomputeStages)
	choice, whole := pc.choose(r.Boundaries, false)
	if pc.sw.Exceeded() {
		return nil, false, tooManyStates(len(m.Layers), e.Stages())
	}
	p = ae.finishChoice(order, r.Boundaries, choice, whole, &Plan{Partition: PartitionGraph})
	ae.setStates = gc.exceeded
	return p, p != nil && !gc.exceeded, nil
}

func isIdentity(order []int) bool {
	for k, l := range order {
		if k != l {
			return false
		}
	}
	return true
}
