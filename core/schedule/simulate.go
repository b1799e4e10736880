package schedule

import (
	"errors"
	"fmt"
	"math"

	"pipeplan/core/model"
)

// Simulate runs one step of the pipeline under the schedule and reports its timeline,
// makespan, bubble, throughput, in-flight microbatches and peak memory per device, with
// advice. Bad input gives errors naming the field (model.Errors).
func Simulate(p *Pipeline, cfg Config) (*Result, error) { return simulate(p, cfg, true, false) }

// SimulateStep is Simulate without the timeline: the Result's Events and InFlight are
// nil, everything else is the same. A search simulates thousands of steps and reads
// their makespans and peaks only.
func SimulateStep(p *Pipeline, cfg Config) (*Result, error) { return simulate(p, cfg, false, false) }

// simulate runs the step; without events, the schedules whose dependencies are the
// common ones go through simulateDirect, unless graph (the reference in tests).
func simulate(p *Pipeline, cfg Config, events, graph bool) (*Result, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	var r *Result
	if !events && !graph && direct(cfg.Kind) {
		if err := cfg.Validate(len(p.Stages)); err != nil {
			return nil, err
		}
		var err error
		if r, err = simulateDirect(p, cfg); err != nil {
			return nil, err
		}
	} else {
		g, err := build(cfg, len(p.Stages))
		if err != nil {
			return nil, err
		}
		s := &sim{g: g, p: p, events: events}
		if err := s.run(); err != nil {
			return nil, err
		}
		r = s.result()
	}
	if n := len(p.LimitBytes); n != 0 && n != r.Devices {
		return nil, &model.FieldError{Path: "limit_bytes", Reason: fmt.Sprintf("must hold one limit per device (%d) or none, got %d", r.Devices, n)}
	}
	r.LimitBytes = p.LimitBytes
	r.Advice = advise(p, cfg, r)
	return r, nil
}

type sim struct {
	g          *graph
	p          *Pipeline
	start, end []float64
	events     bool // keep the timeline (Result.Events and InFlight)
}

// dep is an edge of the schedule graph: the operation may start lag seconds after
// operation from has ended.
type dep struct {
	from int32
	lag  float64
}

func (s *sim) duration(o op) float64 {
	if o.barrier {
		return 0
	}
	st := s.p.Stages[o.stage]
	zb := s.g.cfg.Kind == ZBH1
	switch o.kind {
	case Backward:
		t := st.BackwardSeconds
		if zb {
			t -= st.WeightGradSeconds
		}
		if s.g.cfg.Recompute {
			t += st.ForwardSeconds
		}
		return t
	case WeightGrad:
		return st.WeightGradSeconds
	}
	return st.ForwardSeconds
}

// outLag is the transfer after an operation: a forward sends activations to the next
// stage, a backward sends gradients to the previous one.
func (s *sim) outLag(o op) float64 {
	switch {
	case o.barrier || o.mb < 0:
		return 0
	case o.kind == Forward && int(o.stage) < s.g.S-1:
		return s.p.transfer(int(o.stage))
	case o.kind == Backward && o.stage > 0:
		return s.p.transfer(int(o.stage) - 1)
	}
	return 0
}

// deps lists what operation id waits for besides its device's previous operation.
func (s *sim) deps(id int32, out []dep) []dep {
	g := s.g
	o := g.ops[id]
	if o.barrier {
		for _, x := range g.stepOps[o.step] {
			out = append(out, dep{x, s.outLag(g.ops[x])})
		}
		return out
	}
	if o.step > 0 {
		if b := g.barrier[o.step-1]; b >= 0 {
			out = append(out, dep{b, 0})
		}
	}
	if o.mb < 0 {
		return out
	}
	st, j := int(o.stage), int(o.mb)
	switch o.kind {
	case Forward:
		if st > 0 {
			out = append(out, dep{g.find(Forward, st-1, j), s.p.transfer(st - 1)})
		}
	case Backward:
		out = append(out, dep{g.find(Forward, st, j), 0})
		if st < g.S-1 {
			out = append(out, dep{g.find(Backward, st+1, j), s.p.transfer(st)})
		}
	case WeightGrad:
		out = append(out, dep{g.find(Backward, st, j), 0})
	}
	return out
}

// run computes every operation's start and end: each starts at the latest of its
// device's previous end and its inputs' arrivals, in one topological pass (Kahn).
func (s *sim) run() error {
	g := s.g
	n := len(g.ops)
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	for _, ord := range g.order {
		for k := 1; k < len(ord); k++ {
			prev[ord[k]], next[ord[k-1]] = ord[k-1], ord[k]
		}
	}
	// Dependencies in compressed rows, and their reverse for the successors.
	off := make([]int32, n+1)
	all := make([]dep, 0, 2*n)
	for i := 0; i < n; i++ {
		all = s.deps(int32(i), all)
		off[i+1] = int32(len(all))
	}
	for _, d := range all {
		if d.from < 0 {
			return errors.New("schedule: internal error: an operation depends on one the schedule never runs")
		}
	}
	soff := make([]int32, n+1)
	for _, d := range all {
		soff[d.from+1]++
	}
	for i := 0; i < n; i++ {
		soff[i+1] += soff[i]
	}
	succ := make([]int32, len(all))
	fill := append([]int32(nil), soff[:n]...)
	indeg := make([]int32, n)
	for i := 0; i < n; i++ {
		for _, d := range all[off[i]:off[i+1]] {
			succ[fill[d.from]] = int32(i)
			fill[d.from]++
		}
		indeg[i] = off[i+1] - off[i]
		if prev[i] >= 0 {
			indeg[i]++
		}
	}
	s.start, s.end = make([]float64, n), make([]float64, n)
	queue := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	release := func(j int32) {
		if indeg[j]--; indeg[j] == 0 {
			queue = append(queue, j)
		}
	}
	for h := 0; h < len(queue); h++ {
		i := queue[h]
		t := 0.0
		if prev[i] >= 0 {
			t = s.end[prev[i]]
		}
		for _, d := range all[off[i]:off[i+1]] {
			t = max(t, s.end[d.from]+d.lag)
		}
		s.start[i], s.end[i] = t, t+s.duration(g.ops[i])
		for _, j := range succ[soff[i]:soff[i+1]] {
			release(j)
		}
		if next[i] >= 0 {
			release(next[i])
		}
	}
	if len(queue) != n {
		return errors.New("schedule: internal error: the schedule's orders deadlock")
	}
	return nil
}

// change is a step of a count or of memory at a time. A stage's changes all happen on its
// device, whose operations run one after another, so changes appended in the device's
// order are in time order, and at equal times in causal order: what an operation frees
// at its end is free for the next one starting at that instant, and a zero-length
// forward counts before its own backward ends.
type change struct {
	t     float64
	delta int64
}

func (s *sim) result() *Result {
	g, p, cfg := s.g, s.p, s.g.cfg
	r := &Result{
		Schedule: cfg.String(), Microbatches: g.m, Recompute: cfg.Recompute, Devices: g.D,
		StageDevices: make([]int, g.S), BusySeconds: make([]float64, g.D),
		PeakMemoryBytes: make([]int64, g.D), MaxInFlight: make([]int, g.S),
	}
	if s.events {
		r.InFlight, r.Events = make([][]Sample, g.S), make([][]Event, g.D)
	}
	for st := range r.StageDevices {
		r.StageDevices[st] = st % g.D
	}
	for _, e := range s.end {
		r.MakespanSeconds = max(r.MakespanSeconds, e)
	}
	mem := make([][]change, g.D)
	count := make([][]change, g.S)
	for st := range count {
		count[st] = make([]change, 0, 2*g.m)
	}
	for d := 0; d < g.D; d++ {
		if s.events {
			r.Events[d] = make([]Event, 0, len(g.order[d]))
		}
		mem[d] = make([]change, 0, len(g.order[d])+g.m)
		for _, id := range g.order[d] {
			o := g.ops[id]
			a, b := s.start[id], s.end[id]
			if s.events {
				r.Events[d] = append(r.Events[d], Event{Stage: int(o.stage), Chunk: int(o.stage) / g.D, Kind: o.kind,
					Microbatch: int(o.mb), Step: int(o.step), StartSeconds: a, EndSeconds: b})
			}
			if o.mb < 0 {
				continue // a dummy input: wasted work, and nothing kept
			}
			r.BusySeconds[d] += b - a
			st := p.Stages[o.stage]
			unit := st.ActivationBytes
			if cfg.Recompute {
				unit = st.InputBytes
			}
			c := &count[o.stage]
			switch {
			case !cfg.Training():
				*c = append(*c, change{a, 1}, change{b, -1})
			case o.kind == Forward:
				*c = append(*c, change{a, 1})
				mem[d] = append(mem[d], change{a, unit})
			case o.kind == Backward:
				*c = append(*c, change{b, -1})
				mem[d] = append(mem[d], change{b, -unit})
				if cfg.Kind == ZBH1 {
					mem[d] = append(mem[d], change{b, st.WeightGradBytes})
				}
			case o.kind == WeightGrad:
				mem[d] = append(mem[d], change{b, -st.WeightGradBytes})
			}
		}
	}
	var busy float64
	for _, b := range r.BusySeconds {
		busy += b
	}
	if r.MakespanSeconds > 0 {
		r.BubbleFraction = 1 - busy/(float64(g.D)*r.MakespanSeconds)
		size := max(1, p.MicrobatchSize)
		r.Throughput = float64(g.m*size) / r.MakespanSeconds
	}
	for st := 0; st < g.S; st++ {
		cur := 0
		for k, c := range count[st] {
			cur += int(c.delta)
			r.MaxInFlight[st] = max(r.MaxInFlight[st], cur)
			if !s.events {
				continue
			}
			last := k+1 == len(count[st]) || count[st][k+1].t != c.t
			if n := len(r.InFlight[st]); last && (n == 0 || r.InFlight[st][n-1].Count != cur) {
				r.InFlight[st] = append(r.InFlight[st], Sample{TimeSeconds: c.t, Count: cur})
			}
		}
	}
	// Peak per device: static + the most kept at once + one microbatch's working memory
	// beyond what it keeps.
	work := make([]int64, g.D)
	seen := make([]bool, g.D)
	for st, x := range p.Stages {
		d := st % g.D
		peak := model.WorkingPeakBytes(x.PeakBytes, x.ActivationBytes)
		switch {
		case !cfg.Training():
		case cfg.Recompute:
			peak -= x.InputBytes
		default:
			peak -= x.ActivationBytes
		}
		if !seen[d] || peak > work[d] {
			work[d], seen[d] = peak, true
		}
		r.PeakMemoryBytes[d] += x.StaticBytes
	}
	temp := make([]int64, g.D)
	if cfg.Training() {
		for st, x := range p.Stages {
			temp[st%g.D] += x.OptimizerTempBytes
		}
	}
	for d := 0; d < g.D; d++ {
		var cur, most int64
		for _, c := range mem[d] {
			cur += c.delta
			most = max(most, cur)
		}
		// The optimizer step follows the passes: the device's peak is the larger.
		alloc := r.PeakMemoryBytes[d] + max(most+work[d], temp[d])
		var reserve int64
		if p.AllocatorReserve > 0 && alloc > 0 {
			reserve = int64(math.Ceil(float64(alloc) * p.AllocatorReserve))
		}
		r.PeakMemoryBytes[d] = alloc + reserve + p.FixedBytes
	}
	return r
}
