package plan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// The reference below costs every stage of every split straight from the definitions
// (tensor liveness by looping over tensors, shared items by a set, the peak by its
// formula), independently of the estimator's prefix sums, difference arrays and scanner,
// and of the partitioner's DP. Instances use integer-valued times and power-of-two speed
// ratios and bandwidths, so every sum is exact and the optimum must agree to the bit.

type refStage struct {
	compute, transfer float64
	memory, limit     int64
}

type reference struct {
	m   *model.Model
	c   *cluster.Cluster
	opt estimate.Options
}

func (r reference) stage(i, a, b int) refStage {
	m, c, n, p := r.m, r.c, len(r.m.Layers), len(r.c.Devices)
	var s refStage
	scale := c.SpeedScale(i)
	for l := a; l <= b; l++ {
		t := m.Forward(l)
		if !r.opt.Inference {
			t += m.Backward(l)
		}
		s.compute += t
	}
	s.compute *= scale

	// Tensors: producer (-1 for model inputs) and last consumer (-1 for none).
	type tensor struct {
		producer, last int
		bytes          int64
	}
	var ts []tensor
	index := map[string]int{}
	for _, t := range m.Inputs {
		index[t.ID] = len(ts)
		ts = append(ts, tensor{-1, -1, t.Bytes})
	}
	for l, layer := range m.Layers {
		for _, id := range layer.InputIDs {
			ts[index[id]].last = max(ts[index[id]].last, l)
		}
		for _, t := range layer.Outputs {
			index[t.ID] = len(ts)
			ts = append(ts, tensor{l, -1, t.Bytes})
		}
	}
	crossing := func(k int) (sum int64) { // bytes crossing the cut before layer k
		for _, t := range ts {
			if t.producer < k && k <= t.last {
				sum += t.bytes
			}
		}
		return sum
	}
	var recv, send int64
	switch {
	case i == 0 && m.Layers[0].RecvBytes != nil:
		recv = *m.Layers[0].RecvBytes
	case i == 0:
		for _, t := range m.Inputs {
			recv += t.Bytes
		}
	case m.Layers[a].RecvBytes != nil:
		recv = *m.Layers[a].RecvBytes
	default:
		recv = crossing(a)
	}
	switch {
	case i == p-1 && m.Layers[n-1].SendBytes != nil:
		send = *m.Layers[n-1].SendBytes
	case i == p-1:
		for _, t := range ts {
			if t.producer >= 0 && t.last < 0 {
				send += t.bytes
			}
		}
	case m.Layers[b].SendBytes != nil:
		send = *m.Layers[b].SendBytes
	default:
		send = crossing(b + 1)
	}
	linkTime := func(l *cluster.Link, bytes int64) float64 {
		switch {
		case l == nil:
			return 0
		case m.Unit() == model.Cycles:
			return float64(l.Cycles(bytes, c.Devices[i].ClockHz))
		}
		return l.Seconds(bytes, c.Devices[i].ClockHz)
	}
	s.transfer = linkTime(c.RecvLink(i), recv) + linkTime(c.SendLink(i), send)

	seen := map[string]bool{}
	var static, peak, acc, act int64
	for l := a; l <= b; l++ {
		layer := m.Layers[l]
		static += layer.ParamBytes + layer.OptimizerBytes + layer.ExclusiveBytes
		for k, v := range layer.Shared {
			if !seen[k] {
				seen[k] = true
				static += v
			}
		}
		carry := layer.CarryOverBytes
		for _, t := range ts {
			if t.producer < l && l < t.last {
				carry += t.bytes
			}
		}
		peak = max(peak, layer.TemporaryBytes+carry+acc)
		if !r.opt.Inference {
			acc += layer.ActivationBytes
		}
	}
	act = acc
	// Where its forward ends and its backward begins a microbatch holds all its
	// activations, whatever its layers' temporaries say.
	peak = max(peak, act)
	k := int64(1)
	if r.opt.InFlight != nil && !r.opt.Inference {
		k = int64(max(1, r.opt.InFlight(i)))
	}
	stash := (k - 1) * act
	if r.opt.Recompute {
		stash = (k - 1) * recv
	}
	// The optimizer step's temporaries, when they outgrow the passes; then the
	// allocator's reserve and the framework's fixed memory.
	var temp int64
	if r.opt.OptimizerTempBytes != nil && !r.opt.Inference {
		temp = r.opt.OptimizerTempBytes(a, b)
	}
	alloc := static + max(peak+stash, temp)
	s.memory = alloc + int64(math.Ceil(float64(alloc)*r.opt.AllocatorReserve)) + r.opt.FixedBytes
	s.limit = c.Devices[i].MemoryLimitBytes(r.opt.MemoryProportion)
	return s
}

type score struct{ objective, total, variance float64 }

// less is the partitioner's documented order: the objective, then the total and the
// variance of stage times, each with values within a relative 1e-12 equal.
func (x score) less(y score) bool {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b)) }
	if !near(x.objective, y.objective) {
		return x.objective < y.objective
	}
	if !near(x.total, y.total) {
		return x.total < y.total
	}
	return x.variance < y.variance && !near(x.variance, y.variance)
}

// scoreOf costs a split; ok is false when a stage does not fit or splits a tie group.
func (r reference) scoreOf(bounds []int, obj partition.Objective) (score, bool) {
	var sc score
	var maxC, maxT float64
	var times []float64
	group := map[string]int{} // tie group -> stage
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]-1
		for l := a; l <= b; l++ {
			if g := r.m.Layers[l].TieGroup; g != "" {
				if s, ok := group[g]; ok && s != i {
					return sc, false
				}
				group[g] = i
			}
		}
		st := r.stage(i, a, b)
		if st.memory > st.limit {
			return sc, false
		}
		t := st.compute
		if obj == partition.MaxComputePlusTransfer {
			t += st.transfer
		}
		sc.total += t
		times = append(times, t)
		maxC, maxT = max(maxC, st.compute), max(maxT, st.transfer)
	}
	for _, t := range times {
		d := t - sc.total/float64(len(times))
		sc.variance += d * d / float64(len(times))
	}
	sc.objective = maxC
	if obj == partition.MaxComputePlusTransfer {
		sc.objective += maxT
	}
	return sc, true
}

// best enumerates every split of n layers into p non-empty stages.
func (r reference) best(obj partition.Objective) (score, bool) {
	n, p := len(r.m.Layers), len(r.c.Devices)
	var best score
	found := false
	bounds := make([]int, p+1)
	bounds[p] = n
	var rec func(i, from int)
	rec = func(i, from int) {
		if i == p {
			if sc, ok := r.scoreOf(bounds, obj); ok && (!found || sc.less(best)) {
				best, found = sc, true
			}
			return
		}
		for s := from; s <= n-(p-i); s++ {
			bounds[i] = s
			rec(i+1, s+1)
		}
	}
	if n >= p {
		bounds[0] = 0
		rec(1, 1)
	}
	return best, found
}

// randomInstance builds a small model and cluster with every feature the planner handles.
func randomInstance(rng *rand.Rand) (*model.Model, *cluster.Cluster, estimate.Options) {
	n := 1 + rng.IntN(9)
	p := 1 + rng.IntN(min(n, 5))
	m := &model.Model{}
	cycles := rng.IntN(4) == 0
	if cycles {
		m.TimeUnit = model.Cycles
	}
	keys := []string{"code:a", "code:b", "code:c"}
	m.Inputs = []model.Tensor{{ID: "x", Bytes: int64(rng.IntN(4))}}
	ids := []string{"x"}
	groups := []string{"", "", "", "g1", "g2"}
	for l := 0; l < n; l++ {
		layer := model.Layer{Name: fmt.Sprintf("l%d", l)}
		f, b := rng.IntN(20), rng.IntN(20)
		if cycles {
			layer.ForwardCycles, layer.BackwardCycles = int64(f), int64(b)
		} else {
			layer.ForwardSeconds, layer.BackwardSeconds = float64(f), float64(b)
		}
		layer.ParamBytes = int64(rng.IntN(10))
		layer.OptimizerBytes = int64(rng.IntN(5))
		layer.ExclusiveBytes = int64(rng.IntN(3))
		if rng.IntN(2) == 0 {
			layer.Shared = map[string]int64{}
			for _, k := range keys {
				if rng.IntN(2) == 0 {
					layer.Shared[k] = int64(1 + rng.IntN(6)) // sizes may differ per layer
				}
			}
		}
		layer.TemporaryBytes = int64(rng.IntN(6))
		layer.ActivationBytes = int64(rng.IntN(6))
		layer.CarryOverBytes = int64(rng.IntN(2))
		for _, id := range ids {
			if rng.IntN(3) == 0 || id == ids[len(ids)-1] && rng.IntN(2) == 0 {
				layer.InputIDs = append(layer.InputIDs, id)
			}
		}
		if rng.IntN(4) > 0 {
			id := fmt.Sprintf("t%d", l)
			layer.Outputs = []model.Tensor{{ID: id, Bytes: int64(rng.IntN(8))}}
			ids = append(ids, id)
		}
		if rng.IntN(8) == 0 {
			v := int64(rng.IntN(8))
			layer.RecvBytes = &v
		}
		if rng.IntN(8) == 0 {
			v := int64(rng.IntN(8))
			layer.SendBytes = &v
		}
		layer.TieGroup = groups[rng.IntN(len(groups))]
		m.Layers = append(m.Layers, layer)
	}
	c := &cluster.Cluster{}
	speeds := []float64{1e12, 2e12, 4e12}
	hetero := rng.IntN(2) == 0
	for i := 0; i < p; i++ {
		d := cluster.Device{MemoryBytes: int64(25 + rng.IntN(90)), FLOPSPerSecond: 1e12, ClockHz: 1 << 30}
		if hetero {
			d.MemoryBytes = int64(20 + rng.IntN(100))
			d.FLOPSPerSecond = speeds[rng.IntN(3)]
		}
		if rng.IntN(4) == 0 {
			d.UsableFraction = 0.5
		}
		c.Devices = append(c.Devices, d)
	}
	// Slow links make transfers dwarf compute (the transfer-dominated case), so that the
	// compute+transfer frontier has many points.
	slow := 1.0
	if rng.IntN(4) == 0 {
		slow = 1.0 / 32
	}
	link := func() cluster.Link {
		if rng.IntN(2) == 0 {
			return cluster.Link{GBps: []float64{0.5, 1, 2}[rng.IntN(3)] * slow, IdleCycles: int64(rng.IntN(3))}
		}
		return cluster.Link{LatencySeconds: float64(rng.IntN(3)), BytesPerSecond: []float64{1, 2, 4}[rng.IntN(3)] * slow}
	}
	switch rng.IntN(3) {
	case 0:
		c.Links = []cluster.Link{link()}
	case 1:
		for i := 0; i+1 < p; i++ {
			c.Links = append(c.Links, link())
		}
	default:
		for i := range c.Devices {
			r, s := link(), link()
			c.Devices[i].Recv, c.Devices[i].Send = &r, &s
		}
	}
	if rng.IntN(2) == 0 {
		h := link()
		c.Host = &h
	}
	var opt estimate.Options
	opt.Inference = rng.IntN(5) == 0
	opt.Recompute = rng.IntN(3) == 0
	if rng.IntN(2) == 0 {
		inflight := make([]int, p)
		for i := range inflight {
			inflight[i] = 1 + rng.IntN(p-i+1)
		}
		opt.InFlight = func(i int) int { return inflight[i] }
	}
	if rng.IntN(3) == 0 {
		opt.MemoryProportion = 0.75
	}
	// A framework: optimizer temporaries per layer, fixed memory, an allocator reserve.
	if rng.IntN(3) == 0 {
		temps := make([]int64, n)
		for l := range temps {
			temps[l] = int64(rng.IntN(12))
		}
		opt.OptimizerTempBytes = func(a, b int) (sum int64) {
			for l := a; l <= b; l++ {
				sum += temps[l]
			}
			return sum
		}
		opt.FixedBytes = int64(rng.IntN(6))
		opt.AllocatorReserve = []float64{0, 0.125, 0.5}[rng.IntN(3)]
	}
	return m, c, opt
}

// TestAgainstBruteForce checks the optimum of the estimator and partitioner together
// against the reference on thousands of random small instances, for both objectives.
func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	const instances = 4000
	for k := 0; k < instances; k++ {
		m, c, opt := randomInstance(rng)
		for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
			ref := reference{m, c, opt}
			if opt.MemoryProportion == 0 {
				ref.opt.MemoryProportion = 1
			}
			want, feasible := ref.best(obj)
			got, err := Make(m, c, Options{Objective: obj, Estimate: opt})
			if !feasible {
				if !errors.Is(err, ErrNoFit) {
					t.Fatalf("instance %d (%v): reference finds no split, Make returned %v, %v", k, obj, got, err)
				}
				counts["infeasible"]++
				continue
			}
			if err != nil {
				t.Fatalf("instance %d (%v): reference optimum %+v, Make failed: %v", k, obj, want, err)
			}
			sc, ok := ref.scoreOf(got.Boundaries, obj)
			if !ok || sc.less(want) || want.less(sc) { // equal under the documented order
				t.Fatalf("instance %d (%v): boundaries %v score %+v (valid %v); reference optimum %+v\nmodel %+v", k, obj, got.Boundaries, sc, ok, want, m)
			}
			if got.Bottleneck != sc.objective { // the plan reports its own split's objective
				t.Fatalf("instance %d (%v): plan bottleneck %v, reference %v", k, obj, got.Bottleneck, want.objective)
			}
			for i, s := range got.Stages {
				r := ref.stage(i, s.FirstLayer, s.LastLayer)
				if s.MemoryBytes != r.memory || s.Compute != r.compute || s.Transfer != r.transfer {
					t.Fatalf("instance %d stage %d: plan says memory %d compute %v transfer %v, reference %d %v %v",
						k, i, s.MemoryBytes, s.Compute, s.Transfer, r.memory, r.compute, r.transfer)
				}
				if mem := s.Memory; mem.Total() != s.MemoryBytes || min(mem.WeightsBytes, mem.GradsBytes, mem.ActivationBytes, mem.TemporaryBytes, mem.OtherBytes) < 0 {
					t.Fatalf("instance %d stage %d: memory %d, its parts %+v add up to %d (or one is negative)", k, i, s.MemoryBytes, mem, mem.Total())
				}
			}
			counts[fmt.Sprintf("p=%d", len(c.Devices))]++
		}
	}
	// The generator must exercise both outcomes and every stage count, or the test is weak.
	if counts["infeasible"] < 2*instances/10 || counts["infeasible"] > 2*instances*6/10 {
		t.Errorf("infeasible instances: %d of %d; the generator should give a real mix", counts["infeasible"], 2*instances)
	}
	for p := 1; p <= 5; p++ {
		if counts[fmt.Sprintf("p=%d", p)] < 50 {
			t.Errorf("only %d feasible instances with %d stages", counts[fmt.Sprintf("p=%d", p)], p)
		}
	}
	t.Logf("outcomes: %v", counts)
}

// TestScannerMatchesRange moves the scanner's window over every range, growing it both
// ways and shrinking it from both ends, and compares its memory (and the O(1) upper and
// lower bounds) with the direct Range computation on every stage.
func TestScannerMatchesRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 500; k++ {
		m, c, opt := randomInstance(rng)
		e, err := estimate.New(m, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		s := e.Scanner()
		n := e.Layers()
		check := func(how string) {
			a, b := s.First(), s.Last()
			base, stash, floor := s.Memory()
			lb, ls, lf := s.Lower()
			ub, us, uf := e.MemoryUpper(a, b)
			for i := 0; i < e.Stages(); i++ {
				want := e.Range(i, a, b).MemoryBytes
				k1 := int64(e.InFlight(i) - 1)
				if got := e.DeviceBytes(max(base+k1*stash, floor)); got != want || s.MemoryBytes(i) != want {
					t.Fatalf("instance %d stage %d [%d,%d] %s: scanner %d, Range %d", k, i, a, b, how, got, want)
				}
				if lo, hi := e.DeviceBytes(max(lb+k1*ls, lf)), e.DeviceBytes(max(ub+k1*us, uf)); lo > want || hi < want {
					t.Fatalf("instance %d stage %d [%d,%d] %s: bounds [%d, %d] miss %d", k, i, a, b, how, lo, hi, want)
				}
				if lo := e.DeviceBytes(max(lb+k1*ls, lf)); e.MemoryMonotone() && lo != want {
					t.Fatalf("instance %d stage %d [%d,%d]: monotone memory, but Lower gives %d, not %d", k, i, a, b, lo, want)
				}
			}
		}
		for b := 0; b < n; b++ {
			s.Reset(b)
			check("reset")
			for a := b - 1; a >= 0; a-- {
				s.ExtendLeft()
				check("grown left")
			}
			for s.First() < s.Last() { // shrink from the left back to [b, b]
				s.ShrinkLeft()
				check("shrunk left")
			}
		}
		s.Reset(0)
		for b := 1; b < n; b++ {
			s.ExtendRight()
			check("grown right")
		}
		for s.First() < s.Last() {
			s.ShrinkRight()
			check("shrunk right")
		}
		// A random walk of both ends.
		s.Reset(rng.IntN(n))
		for range 4 * n {
			switch a, b := s.First(), s.Last(); rng.IntN(4) {
			case 0:
				if a > 0 {
					s.ExtendLeft()
				}
			case 1:
				if b < n-1 {
					s.ExtendRight()
				}
			case 2:
				if a < b {
					s.ShrinkLeft()
				}
			default:
				if a < b {
					s.ShrinkRight()
				}
			}
			check("walked")
		}
	}
}

// TestTieBreakIgnoresRounding: with tenths as layer times, prefix-sum differences round
// differently per split, so equal totals differ in their last bits; the lower variance
// must still win (cases from a review).
func TestTieBreakIgnoresRounding(t *testing.T) {
	for _, tc := range []struct {
		tenths []int
		p      int
		want   []int
	}{
		{[]int{3, 1, 5, 9, 8, 7}, 3, []int{0, 3, 4, 6}},       // (0.9, 0.9, 1.5) beats (0.4, 1.4, 1.5)
		{[]int{6, 4, 1, 5, 3, 7, 8}, 3, []int{0, 2, 5, 7}},    // (1.0, 0.9, 1.5) beats (1.1, 1.5, 0.8)
		{[]int{4, 4, 2, 4, 3, 4, 2, 5}, 3, []int{0, 2, 5, 8}}, // (0.8, 0.9, 1.1) beats (1.0, 1.1, 0.7)
	} {
		m := &model.Model{}
		for i, d := range tc.tenths {
			m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprint(i), ForwardSeconds: float64(d) / 10})
		}
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 30}, tc.p, cluster.Link{}, nil)
		p, err := Make(m, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(p.Boundaries) != fmt.Sprint(tc.want) {
			t.Errorf("times %v/10 on %d stages: boundaries %v, want %v (same max, lower variance)", tc.tenths, tc.p, p.Boundaries, tc.want)
		}
	}
}

// TestSolveMatchesExhaustiveOnNonIntegerTimes checks that the partitioner's optimum agrees
// (to the 1e-12 within which rounding makes objectives tie) with exhaustive search over the estimator's own costs on what TestAgainstBruteForce
// keeps exact by construction: non-integer times, speeds from 0.001x to 1000x, with tie
// groups, memory limits, 1F1B-like in-flight counts and recomputation.
func TestSolveMatchesExhaustiveOnNonIntegerTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for k := 0; k < 5000; k++ {
		n := 1 + rng.IntN(12)
		p := 1 + rng.IntN(min(n, 6))
		m := &model.Model{}
		for l := 0; l < n; l++ {
			L := model.Layer{Name: fmt.Sprint(l), ForwardSeconds: rng.Float64() * float64(rng.IntN(3)), BackwardSeconds: float64(rng.IntN(2)) * rng.Float64(),
				ParamBytes: int64(rng.IntN(20)), ActivationBytes: int64(rng.IntN(10)), TemporaryBytes: int64(rng.IntN(10)),
				Outputs: []model.Tensor{{ID: fmt.Sprint("t", l), Bytes: int64(rng.IntN(1000))}}}
			if l > 0 {
				L.InputIDs = []string{fmt.Sprint("t", l-1)}
			}
			if rng.IntN(3) == 0 {
				L.Shared = map[string]int64{"k": int64(1 + rng.IntN(10))}
			}
			if rng.IntN(6) == 0 {
				L.TieGroup = "g"
			}
			m.Layers = append(m.Layers, L)
		}
		c := &cluster.Cluster{Links: []cluster.Link{{LatencySeconds: rng.Float64() * 0.1, BytesPerSecond: 1000 + rng.Float64()*5000}}}
		for i := 0; i < p; i++ {
			c.Devices = append(c.Devices, cluster.Device{MemoryBytes: int64(30 + rng.IntN(120)), FLOPSPerSecond: []float64{1, 1, 2.5, 1000, 0.001}[rng.IntN(5)]})
		}
		e, err := estimate.New(m, c, estimate.Options{InFlight: func(i int) int { return p - i }, Recompute: rng.IntN(3) == 0})
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
			want, ok := math.Inf(1), false
			b := make([]int, p+1)
			b[p] = n
			var rec func(i, from int)
			rec = func(i, from int) {
				if i == p {
					var mc, mt float64
					for s := 0; s < p; s++ {
						x, y := b[s], b[s+1]-1
						if !e.CutAllowed(x) || !e.CutAllowed(y+1) || !e.Range(s, x, y).Fits() {
							return
						}
						mc, mt = max(mc, e.Compute(s, x, y)), max(mt, e.Transfer(s, x, y))
					}
					if obj == partition.MaxCompute {
						mt = 0
					}
					want, ok = min(want, mc+mt), true
					return
				}
				for s := from; s <= n-(p-i); s++ {
					b[i] = s
					rec(i+1, s+1)
				}
			}
			rec(1, 1)
			r, err := partition.Solve(Costs{e}, obj)
			if ok != (err == nil) || ok && math.Abs(r.Objective-want) > 1e-12*want {
				t.Fatalf("instance %d (%v, n=%d p=%d): Solve %v objective %v err %v; exhaustive %v (feasible %v)", k, obj, n, p, r.Boundaries, r.Objective, err, want, ok)
			}
		}
	}
}
