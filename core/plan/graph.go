package plan

import (
	"errors"
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/dagsplit"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/wire"
)

// How a plan's split was found (Plan.Partition).
const (
	// PartitionGraph: convex stages of the model's tensor graph (core/dagsplit), which need
	// not be contiguous in the model's layer order.
	PartitionGraph = "graph"
)

// Why a graph split fell back to ranges of the layer order (GraphFallback.Code).
const (
	// FallbackTooManyIdeals: the graph has more ideals than the exact method enumerates.
	FallbackTooManyIdeals = "too_many_ideals"
	// FallbackStatedTransfers: layers state their recv_bytes or send_bytes, or the
	// cluster charges the host on every stage: transfers of the layer order's cuts.
	FallbackStatedTransfers = "stated_transfers"
	// FallbackSharedChunks: an interleaved schedule's chunks share their device's memory
	// (sharedBudgetSplit), a bound the graph split does not take.
	FallbackSharedChunks = "shared_chunks"
)

// GraphFallback says why a plan asked to split the graph (Options.Graph) split ranges
// of the layer order instead.
type GraphFallback struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// graphCosts adapts an estimator's SetCoster to dagsplit.Costs.
type graphCosts struct {
	e      *estimate.Estimator
	s      *estimate.SetCoster
	tie    []int
	ranges []estimate.Range
}

func newGraphCosts(e *estimate.Estimator, m *model.Model) *graphCosts {
	g := &graphCosts{e: e, s: e.NewSetCoster(), tie: make([]int, len(m.Layers)), ranges: make([]estimate.Range, e.Stages())}
	groups := map[string]int{}
	for l, layer := range m.Layers {
		g.tie[l] = -1
		if t := layer.TieGroup; t != "" {
			if _, ok := groups[t]; !ok {
				groups[t] = len(groups)
			}
			g.tie[l] = groups[t]
		}
	}
	return g
}

func (g *graphCosts) Layers() int         { return g.e.Layers() }
func (g *graphCosts) Stages() int         { return g.e.Stages() }
func (g *graphCosts) Preds(l int) []int   { return g.s.Preds(l) }
func (g *graphCosts) TieGroup(l int) int  { return g.tie[l] }
func (g *graphCosts) Work(l int) float64  { return g.s.Work(l) }
func (g *graphCosts) Scale(i int) float64 { return g.e.Scale(i) }
func (g *graphCosts) Cost(before []bool, set []int, out []dagsplit.StageCost) {
	g.s.Stages(before, set, g.ranges)
	for i, r := range g.ranges {
		out[i] = dagsplit.StageCost{Compute: r.Compute, Transfer: r.Transfer, Fits: r.Fits()}
	}
}

// graphSplit splits m's tensor graph (Options.Graph). It returns the layer order in which
// the split is contiguous (nil when it is the model's own) and its boundaries, or, when
// the graph cannot be split as one, a fallback saying why, with the best split of ranges
// of the layer order when it found it (else the caller finds it). A chain's convex splits are its contiguous ones: core/partition
// finds them, as for a plan of ranges.
func graphSplit(e *estimate.Estimator, m *model.Model, obj partition.Objective, maxIdeals int) (order, bounds []int, fb *GraphFallback, err error) {
	g := newGraphCosts(e, m)
	if why := g.s.Graphable(); why != "" {
		return nil, nil, &GraphFallback{Code: FallbackStatedTransfers, Reason: why}, nil
	}
	// A contiguous split is a convex one: its objective bounds the graph's from above,
	// and a chain has no other.
	chain, chainErr := partition.Solve(Costs{e}, obj)
	if dagsplit.IsChain(g) {
		return nil, chain.Boundaries, nil, chainErr
	}
	upper := 0.0
	if chainErr == nil {
		upper = chain.MaxCompute
		if obj == partition.MaxComputePlusTransfer {
			upper = chain.Objective
		}
	}
	r, err := dagsplit.Solve(g, obj, dagsplit.Options{MaxIdeals: maxIdeals, Upper: upper})
	switch {
	case errors.Is(err, dagsplit.ErrTooManyIdeals):
		return nil, chain.Boundaries, &GraphFallback{Code: FallbackTooManyIdeals,
			Reason: fmt.Sprintf("%v: the split is of ranges of the layer order", err)}, chainErr
	case err != nil:
		return nil, nil, nil, err
	}
	for k, l := range r.Order {
		if l != k {
			return r.Order, r.Boundaries, nil, nil
		}
	}
	return nil, r.Boundaries, nil, nil
}

// reordered returns m with its layers in the given order, and estimator options whose
// optimizer temporaries (a function of ranges of m's layers) are summed over the runs
// of consecutive layers of m in a range of the new order.
func reordered(m *model.Model, order []int, opt estimate.Options) (*model.Model, estimate.Options) {
	m2 := *m
	m2.Layers = make([]model.Layer, len(order))
	for k, l := range order {
		m2.Layers[k] = m.Layers[l]
	}
	if temp := opt.OptimizerTempBytes; temp != nil {
		opt.OptimizerTempBytes = func(a, b int) int64 {
			var sum int64
			for _, run := range wire.Runs(order[a : b+1]) {
				sum += max(0, temp(run[0], run[1]))
			}
			return sum
		}
	}
	return &m2, opt
}

// graphPlan costs the split of the reordered model and reports it in m's terms: each
// stage lists m's layers, and the plan its order.
func graphPlan(m *model.Model, c, sc *cluster.Cluster, opt Options, order, bounds []int) (*Plan, error) {
	m2, eopt := reordered(m, order, opt.Estimate)
	e2, err := estimate.New(m2, sc, eopt)
	if err != nil {
		return nil, err
	}
	p, err := FromBoundaries(e2, m2, sc, bounds, opt.Objective)
	if err != nil {
		return nil, err
	}
	p.Partition, p.LayerOrder = PartitionGraph, append([]int(nil), order...)
	for i := range p.Stages {
		s := &p.Stages[i]
		s.Layers = append([]int(nil), order[bounds[i]:bounds[i+1]]...)
	}
	if opt.Schedule != nil {
		o2 := opt
		o2.Estimate = eopt
		if p.Schedule, err = simulate(e2, m2, c, sc, bounds, o2); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// StageOfLayer returns the stage of each of the model's layers (indexed as the model
// numbers them).
func (p *Plan) StageOfLayer() []int {
	n := 0
	if k := len(p.Boundaries); k > 0 {
		n = p.Boundaries[k-1]
	}
	out := make([]int, n)
	for i := range p.Stages {
		for _, l := range p.StageLayers(i) {
			if l >= 0 && l < n {
				out[l] = i
			}
		}
	}
	return out
}

// StageLayers lists the model's layers that stage i holds, ascending: Layers for a graph
// split in an order of its own, else FirstLayer .. LastLayer.
func (p *Plan) StageLayers(i int) []int {
	s := &p.Stages[i]
	if s.Layers != nil {
		return s.Layers
	}
	out := make([]int, 0, s.LastLayer-s.FirstLayer+1)
	for l := s.FirstLayer; l <= s.LastLayer; l++ {
		out = append(out, l)
	}
	return out
}
