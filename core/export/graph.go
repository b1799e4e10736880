package export

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// CutTensor is a tensor that crosses a cut between two stages of a graph split: made
// by a layer of a stage at or before the cut (or a model input), read by a layer of a
// stage after it. A pipeline passes it from stage to stage until its last reader.
type CutTensor struct {
	ID    string
	Bytes int64
}

// graphOf returns, for a graph split of m (order: the plan's layer order, in which
// bounds are contiguous), the layers' names in that order and the tensors crossing
// each cut: cut k, between stage k and stage k+1, lists every tensor produced in a
// stage <= k (a model input counts as produced before stage 0) and read in a stage > k,
// in the order they are produced (model inputs first, in the model's order).
func graphOf(m *model.Model, order, bounds []int) (names []string, cuts [][]CutTensor) {
	n := len(m.Layers)
	stage := make([]int, n) // stage of each of m's layers
	for i := 0; i+1 < len(bounds); i++ {
		for _, l := range order[bounds[i]:bounds[i+1]] {
			stage[l] = i
		}
	}
	names = make([]string, len(order))
	for k, l := range order {
		names[k] = m.Layers[l].Name
	}
	type made struct {
		t     model.Tensor
		from  int // stage that makes it, -1: a model input
		until int // last stage that reads it
	}
	var ts []made
	at := map[string]int{}
	add := func(t model.Tensor, from int) {
		if _, ok := at[t.ID]; ok {
			return
		}
		at[t.ID] = len(ts)
		ts = append(ts, made{t: t, from: from, until: from})
	}
	for _, t := range m.Inputs {
		add(t, -1)
	}
	// Produce in the plan's order, so that tensors are listed stage by stage.
	for _, l := range order {
		for _, t := range m.Layers[l].Outputs {
			add(t, stage[l])
		}
	}
	for l := range m.Layers {
		for _, id := range m.Layers[l].InputIDs {
			if i, ok := at[id]; ok {
				ts[i].until = max(ts[i].until, stage[l])
			}
		}
	}
	cuts = make([][]CutTensor, len(bounds)-2)
	for k := range cuts {
		cuts[k] = []CutTensor{}
		for _, t := range ts {
			// A model input the first stage alone reads is the microbatch, not sent.
			if t.from <= k && t.until > k && (t.from >= 0 || t.until > 0) {
				cuts[k] = append(cuts[k], CutTensor{ID: t.t.ID, Bytes: t.t.Bytes})
			}
		}
	}
	return names, cuts
}

// graphCoster prices a graph split: its stages are contiguous in an order of their own
// (Input.LayerOrder), and a planning request takes a given split only as ranges of the
// model's layer order. So it prices the plan as planned (the result at hand), and under
// another schedule by planning the request's graph split again under it, which is
// this split's price when that plan makes the same stages in the same order; another
// split is not priced.
type graphCoster struct {
	rc            *RequestCoster
	order, bounds []int
	sched         schedule.Config
	cost          wire.Cost
}

func (g *graphCoster) same(s schedule.Config) bool {
	return s.String() == g.sched.String() && s.Microbatches == g.sched.Microbatches && s.Recompute == g.sched.Recompute
}

// replan plans the request's graph split under s; it reports whether that plan is g's.
func (g *graphCoster) replan(s schedule.Config) (*wire.Result, error) {
	if g.rc == nil {
		return nil, fmt.Errorf("a graph split is priced as planned (%s), and without the request not under %s", g.sched, s)
	}
	res, err := g.rc.run(nil, s)
	if err != nil {
		return nil, err
	}
	if p := res.Plan; !slices.Equal(p.LayerOrder, g.order) || !slices.Equal(p.Boundaries, g.bounds) {
		return nil, fmt.Errorf("under %s the graph is split otherwise (the stages this export writes are the plan's under %s): plan the request with schedule %s to export its split", s, g.sched, s)
	}
	return res, nil
}

func (g *graphCoster) Cost(bounds []int, s schedule.Config) (wire.Cost, error) {
	if !slices.Equal(bounds, g.bounds) {
		return wire.Cost{}, fmt.Errorf("a graph split's stages are in an order of their own: a request gives a split as ranges of the model's layer order, so only the plan's split %v is priced", g.bounds)
	}
	if g.same(s) {
		return g.cost, nil
	}
	res, err := g.replan(s)
	if err != nil {
		return wire.Cost{}, err
	}
	return resultCost(res, s), nil
}

func (g *graphCoster) Best(s schedule.Config) ([]int, wire.Cost, error) {
	if g.same(s) {
		return slices.Clone(g.bounds), g.cost, nil
	}
	res, err := g.replan(s)
	if err != nil {
		return nil, wire.Cost{}, err
	}
	return slices.Clone(g.bounds), resultCost(res, s), nil
}

// graph reports whether the plan is a graph split whose stages are not contiguous in
// the model's layer order (Input.LayerOrder).
func (in *Input) graph() bool { return in.LayerOrder != nil }

// position maps the model's layer l to its position in LayerNames (the plan's order).
func (in *Input) position(l int) int {
	if in.LayerOrder == nil {
		return l
	}
	if i := slices.Index(in.LayerOrder, l); i >= 0 {
		return i
	}
	return l
}

// checkGraph validates LayerOrder and CutTensors.
func (in *Input) checkGraph(es *model.Errors) {
	n := len(in.LayerNames)
	if in.LayerOrder != nil {
		seen := make([]bool, n)
		ok := len(in.LayerOrder) == n
		for _, l := range in.LayerOrder {
			if l < 0 || l >= n || seen[l] {
				ok = false
				break
			}
			seen[l] = true
		}
		if !ok {
			es.Add("layer_order", "must list each of the %d layers once", n)
		}
	}
	if in.CutTensors != nil && len(in.CutTensors) != max(0, len(in.Boundaries)-2) {
		es.Add("cut_tensors", "must list the tensors of each of the %d cuts, got %d", max(0, len(in.Boundaries)-2), len(in.CutTensors))
	}
}

// graphNote says, for a graph split, what the layers list a framework runs in order
// must do.
func (j *job) graphNote(list, more string) {
	j.note(wire.NoteLayerList, "the plan splits the model's graph into convex stages that are not contiguous in the model's layer order: %s holds the layers in the plan's order (a topological order in which each stage is contiguous), and CUT_TENSORS lists the tensors crossing each cut, which the stage before it must send on (tensors a later stage reads pass through the stages between)%s", list, more)
}

// modelOrder returns v (one entry per layer, in LayerNames's order) in the model's
// layer order.
func (in *Input) modelOrder(v []string) []string {
	if in.LayerOrder == nil {
		return v
	}
	out := make([]string, len(v))
	for k, l := range in.LayerOrder {
		out[l] = v[k]
	}
	return out
}

// writeCutTensors writes CUT_TENSORS: for each cut, the (tensor id, bytes) pairs crossing it.
func writeCutTensors(w *strings.Builder, in *Input) {
	w.WriteString("# The tensors crossing each cut, (id, bytes per microbatch): CUT_TENSORS[i] goes from\n")
	w.WriteString("# stage i to stage i + 1, in this order.\nCUT_TENSORS = [\n")
	for k, ts := range in.CutTensors {
		fmt.Fprintf(w, "    [  # stage %d -> %d\n", k, k+1)
		for _, t := range ts {
			fmt.Fprintf(w, "        (%s, %d),\n", pyStr(t.ID), t.Bytes)
		}
		w.WriteString("    ],\n")
	}
	w.WriteString("]\n\n")
}

// scattered says which stage of a graph split is not a run of the model's layers, by
// the model's layer numbers: "stage 2 holds layers 5-9, 12, 14-15".
func (in *Input) scattered() string {
	for i := 0; i+1 < len(in.Boundaries); i++ {
		ls := slices.Clone(in.LayerOrder[in.Boundaries[i]:in.Boundaries[i+1]])
		slices.Sort(ls)
		runs := wire.Runs(ls)
		if len(runs) < 2 {
			continue
		}
		parts := make([]string, len(runs))
		for k, r := range runs {
			parts[k] = fmt.Sprint(r[0])
			if r[1] > r[0] {
				parts[k] = fmt.Sprintf("%d-%d", r[0], r[1])
			}
		}
		return fmt.Sprintf("stage %d holds the model's layers %s", i, strings.Join(parts, ", "))
	}
	return "its stages are in an order of their own"
}
