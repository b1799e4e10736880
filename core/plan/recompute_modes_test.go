package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
)

// TestPerLayerTransferBruteForce: under the compute+transfer objective, per-layer
// recomputation's plan minimises max compute + max transfer over every split and every
// choice of options (and, with RecomputeStages, each stage's whole-stage form) that fits,
// each stage costed by the estimator on the model running the choice, under 1F1B's
// in-flight counts, on links slow enough that transfers weigh.
func TestPerLayerTransferBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	solved, recomputing, bound := 0, 0, 0
	for trial := range 120 {
		n := 2 + rng.IntN(5)
		p := 2 + rng.IntN(min(n-1, 2))
		stages := trial%2 == 1
		m, c := perLayerModel(rng, n, stages)
		cl := &cluster.Cluster{Links: []cluster.Link{{BytesPerSecond: float64(2 + rng.IntN(8))}}}
		for range p {
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(200 + rng.IntN(700))})
		}
		counts, _ := schedule.InFlight(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}, p)
		eo := estimate.Options{InFlight: func(i int) int { return counts[i] }}
		opt := Options{Recompute: c, RecomputeStages: stages, Objective: partition.MaxComputePlusTransfer, Estimate: eo}
		want, wantNone := bruteTransfer(t, m, c, cl, p, eo, stages)
		pl, err := Make(m, cl, opt)
		if math.IsInf(want, 1) {
			if err == nil {
				t.Fatalf("trial %d: a plan (objective %v) where no split and choice fits", trial, pl.Bottleneck)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v, brute force %v", trial, err, want)
		}
		if math.Abs(pl.Bottleneck-want) > 1e-9*want {
			t.Fatalf("trial %d: objective %v, brute force %v (split %v)", trial, pl.Bottleneck, want, pl.Boundaries)
		}
		if pl.RecomputeHeuristic != "" {
			t.Fatalf("trial %d: the plan says it is a heuristic's: %s", trial, pl.RecomputeHeuristic)
		}
		if pl.Bottleneck != pl.MaxCompute+pl.MaxTransfer || pl.MaxTransfer <= 0 {
			t.Fatalf("trial %d: objective %v, compute %v + transfer %v", trial, pl.Bottleneck, pl.MaxCompute, pl.MaxTransfer)
		}
		solved++
		if want < wantNone {
			bound++ // memory binds: recomputation pays
		}
		for _, s := range pl.Stages {
			if s.MemoryBytes > s.LimitBytes || s.Recompute == nil {
				t.Fatalf("trial %d: stage %+v", trial, s)
			}
			if len(s.Recompute.Layers) > 0 {
				recomputing++
			}
		}
	}
	t.Logf("%d plans, %d where recomputation pays, %d stages recomputing", solved, bound, recomputing)
	if solved < 40 || bound < 10 || recomputing < 20 {
		t.Fatalf("%d plans, %d where recomputation pays, %d stages recomputing: the instances do not test the choice", solved, bound, recomputing)
	}
}

// bruteTransfer is the least max compute + max transfer over every split of m into p
// stages and every choice of options (and, with whole, each subset of stages taking the
// whole-stage form) that fits; and the same with nothing recomputed.
func bruteTransfer(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, p int, eo estimate.Options, whole bool) (best, none float64) {
	n := len(m.Layers)
	fo := eo
	fo.Recompute = true
	ef, err := estimate.New(m, cl, fo)
	if err != nil {
		t.Fatal(err)
	}
	best, none = math.Inf(1), math.Inf(1)
	choice := make([]int, n)
	var choices func(l int, bounds []int)
	choices = func(l int, bounds []int) {
		if l < n {
			for k := range c[l] {
				choice[l] = k
				choices(l+1, bounds)
			}
			choice[l] = 0
			return
		}
		e, err := estimate.New(recompute.Apply(m, c, choice), cl, eo)
		if err != nil {
			t.Fatal(err)
		}
		for mask := 0; mask < 1<<p; mask++ {
			if !whole && mask != 0 {
				break
			}
			maxC, maxT, fits := 0.0, 0.0, true
			for i := 0; i < p && fits; i++ {
				a, b := bounds[i], bounds[i+1]-1
				r := e.Range(i, a, b)
				if mask&(1<<i) != 0 {
					r = ef.Range(i, a, b)
					for l := a; l <= b; l++ {
						r.Compute += m.Forward(l) * ef.Scale(i)
					}
				}
				fits = r.Fits()
				maxC, maxT = max(maxC, r.Compute), max(maxT, r.Transfer)
			}
			if fits {
				best = min(best, maxC+maxT)
				if mask == 0 && !slices.ContainsFunc(choice, func(k int) bool { return k != 0 }) {
					none = min(none, maxC+maxT)
				}
			}
		}
	}
	forSplits(n, p, func(bounds []int) { choices(0, bounds) })
	return best, none
}

// forSplits calls f with every split of n layers into p non-empty ranges.
func forSplits(n, p int, f func(bounds []int)) {
	var rec func(i, a int, bounds []int)
	rec = func(i, a int, bounds []int) {
		if i == p-1 {
			f(append(bounds, n))
			return
		}
		for k := a + 1; k <= n-(p-1-i); k++ {
			rec(i+1, k, append(bounds, k))
		}
	}
	rec(0, 0, []int{0})
}

// branchingModel is a profile of n layers whose graph branches: each layer reads the
// output of one or two random earlier layers (or the model's input), each keeping
// activations larger than what it reads, so that recomputing a layer saves memory.
func branchingModel(rng *rand.Rand, n int) (*model.Model, recompute.Choices) {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(1 + rng.IntN(30))}}}
	ids := []string{"x"}
	for l := range n {
		out := fmt.Sprintf("t%d", l)
		in := []string{ids[rng.IntN(len(ids))]}
		if l > 1 && rng.IntN(2) == 0 {
			if o := ids[rng.IntN(len(ids))]; o != in[0] {
				in = append(in, o)
			}
		}
		if l > 0 && !slices.Contains(in, ids[len(ids)-1]) && rng.IntN(2) == 0 {
			in = append(in, ids[len(ids)-1])
		}
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1 + rng.IntN(8)), BackwardSeconds: float64(2 + rng.IntN(16)),
			ParamBytes: int64(rng.IntN(120)), TemporaryBytes: int64(rng.IntN(40)),
			ActivationBytes: int64(40 + rng.IntN(200)), InputIDs: in,
			Outputs: []model.Tensor{{ID: out, Bytes: int64(1 + rng.IntN(40))}}})
		ids = append(ids, out)
	}
	return m, recompute.ForProfile(m)
}

// TestPerLayerHeuristicBruteForce: with an interleaved schedule (two chunks per device)
// or a graph partition of a branching model, per-layer recomputation's plan fits (every
// stage, and so every device) and is never slower than a global mode (nothing
// recomputed, every stage whole) that fits; on these small instances it is exact in its
// objective (TestPerLayerGraphBruteForce, TestPerLayerChunksBruteForce) and says so. Its
// simulated step is compared with the brute force's shortest over every split (every
// convex split of the graph, stages in an order of their own) and every choice of
// options, each costed and simulated as the planner plans a given split, to measure how
// far from the shortest step the least bottleneck is (logged, not asserted).
func TestPerLayerHeuristicBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 9))
	for _, kind := range []string{"interleaved", "graph"} {
		planned, optimal, beatsGlobal := 0, 0, 0
		worst := 1.0
		for trial := range 60 {
			var m *model.Model
			var c recompute.Choices
			devices := 2
			cfg := schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4}
			if kind == "interleaved" {
				m, c = perLayerModel(rng, 4+rng.IntN(3), trial%2 == 1)
				cfg = schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4}
			} else {
				m, c = branchingModel(rng, 4+rng.IntN(2))
				devices = 2 + rng.IntN(2)
			}
			cl := &cluster.Cluster{}
			for range devices {
				cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(250 + rng.IntN(900))})
			}
			opt := Options{Schedule: &ScheduleOptions{Config: cfg}, Graph: kind == "graph"}
			auto := opt
			auto.Recompute, auto.RecomputeStages = c, true
			pl, err := Make(m, cl, auto)
			var globals []float64
			for _, whole := range []bool{false, true} {
				o := opt
				o.Estimate.Recompute = whole
				if g, err := Make(m, cl, o); err == nil && fitsAll(g) {
					globals = append(globals, g.Schedule.MakespanSeconds)
				}
			}
			best := bruteMakespan(t, m, c, cl, opt)
			if err != nil {
				if len(globals) > 0 {
					t.Fatalf("%s trial %d: a global mode plans (%v), auto does not: %v", kind, trial, globals, err)
				}
				continue
			}
			planned++
			if !fitsAll(pl) {
				t.Fatalf("%s trial %d: a stage over its limit: %+v", kind, trial, pl.Stages)
			}
			if pl.RecomputeHeuristic != "" {
				t.Errorf("%s trial %d: a small instance's plan says it is a heuristic's: %q", kind, trial, pl.RecomputeHeuristic)
			}
			got := pl.Schedule.MakespanSeconds
			for _, g := range globals {
				if got > g*(1+1e-12) {
					t.Fatalf("%s trial %d: auto's step %v, a global mode's %v", kind, trial, got, g)
				}
			}
			if len(globals) == 0 || got < slices.Min(globals)*(1-1e-12) {
				beatsGlobal++
			}
			if got <= best*(1+1e-12) {
				optimal++
			}
			if !math.IsInf(best, 1) {
				worst = max(worst, got/best)
			}
		}
		t.Logf("%s: %d plans, %d faster than every global mode, %d as fast as the brute force's optimum; worst step %.4f x the optimum", kind, planned, beatsGlobal, optimal, worst)
		if planned < 20 || beatsGlobal < 3 {
			t.Fatalf("%s: %d plans, %d faster than every global mode: the instances do not test the choice", kind, planned, beatsGlobal)
		}
	}
}

// bruteMakespan is the shortest simulated step over every split (every convex split of
// the graph with opt.Graph, its stages in the order of their layers' stages, then the
// model's) and every choice of options that fits, each planned as a given split is
// (Evaluate; graphPlan for a split in an order of its own).
func bruteMakespan(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, opt Options) float64 {
	n := len(m.Layers)
	best := math.Inf(1)
	choice := make([]int, n)
	try := func(order, bounds []int) {
		var rec func(l int)
		rec = func(l int) {
			if l < n {
				for k := range c[l] {
					choice[l] = k
					rec(l + 1)
				}
				choice[l] = 0
				return
			}
			mm := recompute.Apply(m, c, choice)
			var p *Plan
			var err error
			if order == nil {
				o := opt
				o.Graph = false
				p, err = Evaluate(mm, cl, o, bounds)
			} else {
				o := opt
				if o.Schedule != nil {
					so := *o.Schedule
					o.Schedule = &so
				}
				sc, serr := scheduled(cl, &o)
				if serr != nil {
					t.Fatal(serr)
				}
				p, err = graphPlan(mm, cl, sc, o, order, bounds)
			}
			if err == nil && fitsAll(p) {
				best = min(best, p.Schedule.MakespanSeconds)
			}
		}
		rec(0)
	}
	stages := len(cl.Devices)
	if opt.Schedule.Kind == schedule.Interleaved {
		stages *= opt.Schedule.Chunks
	}
	if !opt.Graph {
		forSplits(n, stages, func(bounds []int) { try(nil, bounds) })
		return best
	}
	edges := graphEdges(m)
	stage := make([]int, n)
	var assign func(l int)
	assign = func(l int) {
		if l < n {
			for s := range stages {
				stage[l] = s
				assign(l + 1)
			}
			return
		}
		for _, e := range edges {
			if stage[e[0]] > stage[e[1]] {
				return
			}
		}
		order := make([]int, 0, n)
		bounds := []int{0}
		for s := range stages {
			for l := range n {
				if stage[l] == s {
					order = append(order, l)
				}
			}
			if len(order) == bounds[len(bounds)-1] {
				return // an empty stage
			}
			bounds = append(bounds, len(order))
		}
		try(order, bounds)
	}
	assign(0)
	return best
}

// TestPerLayerGraphBruteForce: with a graph partition of a branching model, per-layer
// recomputation's plan minimises the objective (the bottleneck, or max compute + max
// transfer) over every convex split (stages in an order of their own) and every choice
// of options that fits, each stage costed by the estimator on the model running the
// choice in that order, under 1F1B's in-flight counts; and it says it is exact.
func TestPerLayerGraphBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 11))
	solved, bound, reordered := 0, 0, 0
	for trial := range 80 {
		m, c := branchingModel(rng, 4+rng.IntN(3))
		p := 2 + rng.IntN(2)
		cl := &cluster.Cluster{Links: []cluster.Link{{BytesPerSecond: float64(2 + rng.IntN(8))}}}
		for range p {
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(250 + rng.IntN(900))})
		}
		counts, _ := schedule.InFlight(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 2 * p}, p)
		eo := estimate.Options{InFlight: func(i int) int { return counts[i] }}
		obj := partition.Objective(trial % 2)
		want, wantNone := bruteGraph(t, m, c, cl, eo, obj)
		pl, err := Make(m, cl, Options{Recompute: c, Objective: obj, Estimate: eo, Graph: true})
		if math.IsInf(want, 1) {
			if err == nil {
				t.Fatalf("trial %d: a plan where no convex split and choice fits", trial)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v, brute force %v", trial, err, want)
		}
		if math.Abs(pl.Bottleneck-want) > 1e-9*want || pl.RecomputeHeuristic != "" || !fitsAll(pl) {
			t.Fatalf("trial %d (%v): objective %v (%q), brute force %v (split %v of %v)", trial, obj, pl.Bottleneck, pl.RecomputeHeuristic, want, pl.Boundaries, pl.LayerOrder)
		}
		solved++
		if want < wantNone {
			bound++
		}
		if pl.LayerOrder != nil {
			reordered++
		}
	}
	t.Logf("%d plans, %d where recomputation pays, %d in an order of their own", solved, bound, reordered)
	if solved < 40 || bound < 10 || reordered < 5 {
		t.Fatalf("%d plans, %d where recomputation pays, %d reordered: the instances do not test the choice", solved, bound, reordered)
	}
}

// bruteGraph is the least objective over every convex split of m's graph into the
// cluster's stages and every choice of options that fits; and the same with nothing
// recomputed.
func bruteGraph(t *testing.T, m *model.Model, c recompute.Choices, cl *cluster.Cluster, eo estimate.Options, obj partition.Objective) (best, none float64) {
	n, p := len(m.Layers), len(cl.Devices)
	best, none = math.Inf(1), math.Inf(1)
	edges := graphEdges(m)
	stage := make([]int, n)
	choice := make([]int, n)
	var try func(order, bounds []int, l int)
	try = func(order, bounds []int, l int) {
		if l < n {
			for k := range c[l] {
				choice[l] = k
				try(order, bounds, l+1)
			}
			choice[l] = 0
			return
		}
		mm, o := reordered(recompute.Apply(m, c, choice), order, eo)
		e, err := estimate.New(mm, cl, o)
		if err != nil {
			t.Fatal(err)
		}
		maxC, maxT, fits := 0.0, 0.0, true
		for i := 0; i < p && fits; i++ {
			r := e.Range(i, bounds[i], bounds[i+1]-1)
			fits = r.Fits()
			maxC, maxT = max(maxC, r.Compute), max(maxT, r.Transfer)
		}
		if !fits {
			return
		}
		v := maxC
		if obj == partition.MaxComputePlusTransfer {
			v += maxT
		}
		best = min(best, v)
		if !slices.ContainsFunc(choice, func(k int) bool { return k != 0 }) {
			none = min(none, v)
		}
	}
	var assign func(l int)
	assign = func(l int) {
		if l < n {
			for s := range p {
				stage[l] = s
				assign(l + 1)
			}
			return
		}
		for _, e := range edges {
			if stage[e[0]] > stage[e[1]] {
				return
			}
		}
		order := make([]int, 0, n)
		bounds := []int{0}
		for s := range p {
			for l := range n {
				if stage[l] == s {
					order = append(order, l)
				}
			}
			if len(order) == bounds[len(bounds)-1] {
				return
			}
			bounds = append(bounds, len(order))
		}
		try(order, bounds, 0)
	}
	assign(0)
	return best, none
}

// TestPerLayerChunksBruteForce: under an interleaved schedule, with either objective (two chunks per device,
// sharing its memory), per-layer recomputation's plan has the least bottleneck over
// every split and every choice of options whose devices all fit (each planned as a given
// split is: Evaluate, whose chunks' limits are their devices' shares), unless a plan of
// a shorter step replaced it (then its step is shorter than every least-bottleneck
// plan's); and it says it is exact.
func TestPerLayerChunksBruteForce(t *testing.T) {
	for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
		t.Run(obj.String(), func(t *testing.T) { perLayerChunksBruteForce(t, obj) })
	}
}

// perLayerChunksBruteForce is TestPerLayerChunksBruteForce under the objective obj (the
// plan's Bottleneck); under compute+transfer the links are slow enough that transfers
// weigh on the split.
func perLayerChunksBruteForce(t *testing.T, obj partition.Objective) {
	rng := rand.New(rand.NewPCG(22, 13))
	solved, bound, replaced := 0, 0, 0
	for trial := range 60 {
		m, c := perLayerModel(rng, 4+rng.IntN(3), trial%2 == 1)
		cl := &cluster.Cluster{}
		for range 2 {
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(250 + rng.IntN(900))})
		}
		if obj == partition.MaxComputePlusTransfer {
			cl.Links = []cluster.Link{{BytesPerSecond: 1 + rng.Float64()*10}}
		}
		opt := Options{Objective: obj, Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4}}}
		least, step, none := math.Inf(1), math.Inf(1), math.Inf(1)
		n := len(m.Layers)
		choice := make([]int, n)
		forSplits(n, 4, func(bounds []int) {
			var rec func(l int)
			rec = func(l int) {
				if l < n {
					for k := range c[l] {
						choice[l] = k
						rec(l + 1)
					}
					choice[l] = 0
					return
				}
				p, err := Evaluate(recompute.Apply(m, c, choice), cl, opt, bounds)
				if err != nil || !fitsAll(p) {
					return
				}
				switch {
				case p.Bottleneck < least*(1-1e-12):
					least, step = p.Bottleneck, p.Schedule.MakespanSeconds
				case p.Bottleneck <= least*(1+1e-12):
					step = min(step, p.Schedule.MakespanSeconds)
				}
				if !slices.ContainsFunc(choice, func(k int) bool { return k != 0 }) {
					none = min(none, p.Bottleneck)
				}
			}
			rec(0)
		})
		auto := opt
		auto.Recompute = c
		pl, err := Make(m, cl, auto)
		if math.IsInf(least, 1) {
			if err == nil {
				t.Fatalf("trial %d: a plan where no split and choice fits", trial)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v, brute force %v", trial, err, least)
		}
		if !fitsAll(pl) || pl.RecomputeHeuristic != "" || pl.Bottleneck < least*(1-1e-9) {
			t.Fatalf("trial %d: bottleneck %v (%q), brute force %v", trial, pl.Bottleneck, pl.RecomputeHeuristic, least)
		}
		if pl.Bottleneck > least*(1+1e-9) {
			if pl.Schedule.MakespanSeconds >= step*(1-1e-12) {
				t.Fatalf("trial %d: bottleneck %v, brute force %v, and its step %v is no shorter than %v", trial, pl.Bottleneck, least, pl.Schedule.MakespanSeconds, step)
			}
			replaced++
		}
		solved++
		if least < none {
			bound++
		}
	}
	t.Logf("%d plans, %d where recomputation pays, %d replaced by a shorter step", solved, bound, replaced)
	if solved < 30 || bound < 10 {
		t.Fatalf("%d plans, %d where recomputation pays: the instances do not test the choice", solved, bound)
	}
}

// TestPerLayerChunksGiveUp: where deviceChoice gives up (more combinations of a device's
// chunks' choices than maxChunkCombos), the interleaved plan of per-layer recomputation,
// of the best split or of a given one, is not called exact: it says why.
func TestPerLayerChunksGiveUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 13))
	defer func(n int) { maxChunkCombos = n }(maxChunkCombos)
	checked := map[bool]int{}
	for trial := range 40 {
		m, c := perLayerModel(rng, 4+rng.IntN(3), trial%2 == 1)
		cl := &cluster.Cluster{}
		for range 2 {
			cl.Devices = append(cl.Devices, cluster.Device{MemoryBytes: int64(250 + rng.IntN(900))})
		}
		opt := Options{Recompute: c, Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4}}}
		maxChunkCombos = 1 << 16
		pl, err := Make(m, cl, opt)
		if err != nil || pl.RecomputeHeuristic != "" {
			continue
		}
		maxChunkCombos = 1 // every device with a choice gives up
		for _, given := range []bool{false, true} {
			var q *Plan
			if given {
				q, err = Evaluate(m, cl, opt, pl.Boundaries)
			} else {
				q, err = Make(m, cl, opt)
			}
			if err != nil {
				continue
			}
			if !strings.Contains(q.RecomputeHeuristic, "combinations") {
				t.Fatalf("trial %d (given split %t): deviceChoice gave up, yet the plan says %q", trial, given, q.RecomputeHeuristic)
			}
			checked[given]++
		}
	}
	if checked[false] < 5 || checked[true] < 5 {
		t.Fatalf("plans checked (given split or not): %v: the instances do not test giving up", checked)
	}
}
