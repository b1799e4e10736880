// Package requests is the search's Evaluator over planning requests: every candidate of
// core/search's grid is the base request with the candidate's knobs, planned and
// simulated by core/request's Run, exactly as a user's request would be, and bounded from
// cached analytic estimates. RunQuery runs a core/search Query with it.
//
// It is core/search's planner side, apart from the search's data (Query, Knobs, Report),
// so that a program that only builds queries and reads reports (the browser page, whose
// planner runs in a Web Worker) links none of the planner.
package requests

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
)

// RunQuery is the one search doorway: it runs a query (core/search.Query: a base request
// and knobs) with an Evaluator over its request and answers with search.Answer, the JSON
// the command line, the JS API and the page all give. Errors of the base request name
// its fields under "request". On cancellation it returns the answer so far with the
// context's error.
func RunQuery(ctx context.Context, q *search.Query, opt search.Options) (*search.Answer, error) {
	if err := q.Knobs.Validate(); err != nil { // before the request is prepared
		return nil, err
	}
	ev, err := New(q.Request)
	if err != nil {
		return nil, model.Prefixed("request", err)
	}
	s, err := ev.Space(q.Knobs)
	if err != nil {
		return nil, err
	}
	opt.Exhaustive = opt.Exhaustive || q.Exhaustive
	rep, err := search.Run(ctx, s, ev, opt)
	if rep == nil {
		return nil, err
	}
	a := search.NewAnswer(rep)
	if rep.Best != nil {
		best, err := ev.Request(rep.Best.Candidate)
		if err != nil {
			return nil, err
		}
		if a.BestID, err = request.ID(best); err != nil {
			return nil, err
		}
		a.BestRequest = best
	}
	if err == nil {
		err = ctx.Err()
	}
	return a, err
}

// Evaluator evaluates candidates as planning requests: each candidate is the base request
// with the candidate's knobs set (parallelism, schedule, microbatches and their size,
// recomputation, memory proportion), planned and simulated by request.Run, exactly as a
// user's request would be. Request gives the request of a candidate, so any outcome can
// be reproduced alone.
//
// Bounds come from the analytic estimates of the architecture, cached per tensor-parallel
// degree, microbatch size and recomputation, which every candidate with those shares
// (see Bound). A profile (a measured model document) is scaled with the microbatch size
// (ScaleProfile) and bounded by its scaled layer times.
type Evaluator struct {
	base *request.Request // normalized, without the knobs
	// prepared is the base request prepared: every candidate is a variant of it
	// (request.Prepared.With), which reuses its model, documents and estimates.
	prepared *request.Prepared
	arch     *arch.Arch
	// secondsPer converts a profile's time unit to seconds on the cluster's device
	// (cycles at its clock; times are in seconds once prepared).
	secondsPer float64
	topo       *cluster.Topology
	link       cluster.Link // between devices, without nodes
	memoryBW   float64      // bytes/s the optimizer update reaches
	train      bool
	sp         bool // sequence parallelism wherever t > 1
	// contextMethod is the base request's context_method (ring unless it says).
	contextMethod string
	terms         map[termKey]*terms
	estimates     map[termKey]*analytic.Result // analytic estimates without their terms (Twin)
	layers        int                          // the model's layers
	// twins caches Twin's comparison per tensor-parallel degree, expert-parallel degree
	// and microbatch size.
	twins map[[3]int]bool
	// expertOverlap: the base request's parallelism.expert_overlap, for the candidates
	// it applies to (expert parallelism, no full recomputation); dispatcher its
	// parallelism.expert_dispatcher.
	expertOverlap bool
	dispatcher    string
	// gathered caches the terms of ZeRO-3 candidates (termsFor).
	gathered map[gatherKey]*terms
	// device is the cluster's device, as one stage's cluster holds it (memory limits).
	device *cluster.Device
}

type termKey struct {
	t, b      int
	recompute string
	c         int // context-parallel degree
	e         int // expert-parallel degree (0: none stated)
}

// terms are what bounds a candidate, for one microbatch on one device of a
// tensor-parallel group: the work of every layer, forward and backward; the gradient
// bytes all-reduced across replicas; the bytes the optimizer update touches.
type terms struct {
	work, grads, params, optimizer float64
	// layers are the layers' work; bottleneck[k] the least, over splits into k
	// contiguous stages, of the largest stage's work (computed when first asked).
	layers     []float64
	bottleneck map[int]float64
	// est is the architecture's analytic estimate (nil for a profile), for Twin.
	est *analytic.Result
	// mem are the layers' memory terms, for CannotFit (architectures in training).
	mem []layerMemory
}

// layerMemory is what a layer adds to the memory of a stage that holds it (core/estimate's
// Range): its own always-alive bytes (fixed: parameters with their gradients and exclusive
// bytes, of which grad are the gradients; opt: optimizer state without ZeRO), what one
// microbatch keeps for the backward (act), and its working peak beyond what the layers
// before it in the stage keep (peak: temporaries and carried tensors).
type layerMemory struct {
	fixed, grad, opt, act, peak int64
}

// bottleneckOf is a lower bound on the largest stage's work over every split of the
// layers into k contiguous stages: the smallest X such that a greedy split into stages of
// at most X needs at most k stages, found by bisection and taken from below (the largest
// X found too small), so that it never exceeds the true minimum.
func (x *terms) bottleneckOf(k int) float64 {
	if v, ok := x.bottleneck[k]; ok {
		return v
	}
	lo, hi := 0.0, x.work
	for _, w := range x.layers {
		lo = max(lo, w)
	}
	lo = math.Nextafter(lo, 0) // the largest layer is a stage's least; lo stays too small
	fits := func(limit float64) bool {
		n, cur := 1, 0.0
		for _, w := range x.layers {
			if cur+w > limit {
				n, cur = n+1, 0
			}
			cur += w
		}
		return n <= k
	}
	for range 64 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	x.bottleneck[k] = lo
	return lo
}

// New prepares an evaluator for a base request: a model (an architecture, or a
// profile document or example) on a device preset (cluster.device, with
// cluster.devices_per_node for nodes). Its parallelism, schedule, microbatch, recompute
// and memory-proportion fields are what each candidate sets.
func New(base *request.Request) (*Evaluator, error) {
	b := *base
	// The knobs the search sets are cleared, so that the base normalizes whatever they are.
	if c, err := schedule.Parse(b.Schedule.Name); err == nil && b.Schedule.Name != "" && c.Kind == schedule.Inference {
		b.Training.Mode = request.ModeInference
	}
	b.Parallelism = request.Parallelism{Pipeline: 1}
	b.Schedule = request.Schedule{}
	b.Training.Recompute, b.MemoryProportion, b.Boundaries, b.Events = "", 0, nil, false
	b.Cluster.Count = 0
	if b.Cluster.Device == "" {
		return nil, &model.FieldError{Path: "cluster.device", Reason: "the search needs a device preset (and devices_per_node for nodes): it decides how many devices a pipeline uses"}
	}
	prepared, err := request.Prepare(&b)
	if err != nil {
		return nil, err
	}
	n := prepared.Request()
	n.Parallelism = request.Parallelism{}
	n.Schedule = request.Schedule{}
	n.Cluster.Count = 0
	r := &Evaluator{base: n, prepared: prepared, arch: prepared.Architecture(), layers: len(prepared.Model().Layers),
		sp: base.Parallelism.SequenceParallel, train: n.Training.Mode == request.ModeTraining,
		expertOverlap: base.Parallelism.ExpertOverlap, dispatcher: base.Parallelism.ExpertDispatcher,
		contextMethod: contextMethodOf(base.Parallelism.ContextMethod),
		terms:         map[termKey]*terms{}, estimates: map[termKey]*analytic.Result{}, twins: map[[3]int]bool{}, gathered: map[gatherKey]*terms{}, secondsPer: 1}
	dp, err := cluster.LookupDevice(n.Cluster.Device)
	if err != nil {
		return nil, err
	}
	r.memoryBW = dp.Perf.MemoryBytesPerSecond * dp.Perf.MemoryEfficiency
	if one, err := cluster.FromPreset(n.Cluster.Device, 1); err == nil {
		r.device = &one.Devices[0]
	}
	if n.Cluster.DevicesPerNode > 0 {
		topo, err := cluster.PresetTopology(1, n.Cluster.DevicesPerNode, n.Cluster.LinkIntra, n.Cluster.LinkInter)
		if err != nil {
			return nil, err
		}
		r.topo = &topo
	} else {
		l, err := cluster.LookupLink(n.Cluster.Link)
		if err != nil {
			return nil, err
		}
		r.link = l.Link
	}
	if n.Cluster.FreeTransfers {
		r.link, r.topo = cluster.Link{}, nil
	}
	if prepared.Model().Unit() == model.Cycles {
		if !(dp.ClockHz > 0) {
			return nil, &model.FieldError{Path: "cluster.device", Reason: fmt.Sprintf("%s states no clock to convert the profile's cycles with", dp.Name)}
		}
		r.secondsPer = 1 / dp.ClockHz
	}
	return r, nil
}

// Request is the planning request of a candidate: the base with the candidate's knobs
// (a profile scaled to the candidate's microbatch size, request.Prepared.With).
func (r *Evaluator) Request(c search.Candidate) (*request.Request, error) {
	k := r.knobs(c)
	q := *r.base
	q.Parallelism, q.Schedule, q.Training.Recompute, q.MemoryProportion = k.Parallelism, k.Schedule, k.Recompute, k.MemoryProportion
	if r.arch == nil {
		v, err := r.prepare(c)
		if err != nil {
			return nil, err
		}
		q.Model = v.Request().Model
	}
	return &q, nil
}

// knobs are a candidate's knobs of the base request.
func (r *Evaluator) knobs(c search.Candidate) request.Knobs {
	k := request.Knobs{Parallelism: request.Parallelism{Pipeline: c.Pipeline, Data: c.Data, Tensor: c.Tensor,
		Sharding: zeroStages[c.ZeRO], SequenceParallel: r.seqParallel(c.Tensor, c.Expert), Expert: c.Expert,
		ExpertOverlap: r.expertOverlap && c.Expert > 1 && c.Recompute != string(analytic.Full), ExpertDispatcher: r.dispatcher},
		Schedule:  request.Schedule{Name: c.Schedule, Microbatches: c.Microbatches, MicrobatchSize: c.MicrobatchSize},
		Recompute: c.Recompute, MemoryProportion: c.MemoryProportion, Partition: r.base.Partition}
	if c.Context > 1 {
		k.Parallelism.Context, k.Parallelism.ContextMethod = c.Context, r.contextMethod
	}
	if !r.train {
		k.Recompute = ""
	}
	return k
}

// prepare is the candidate's request prepared, as a variant of the base.
func (r *Evaluator) prepare(c search.Candidate) (*request.Prepared, error) {
	return r.prepared.With(r.knobs(c))
}

// contextMethodOf is the context method of the search's candidates: the base request's,
// ring when it gives none.
func contextMethodOf(m string) string {
	if m == "" {
		return string(analytic.Ring)
	}
	return m
}

// zeroStages are the request's shardings of the search's ZeRO stages.
var zeroStages = [...]string{"none", "zero1", "zero2", "zero3"}

// Evaluate plans the candidate's request.
func (r *Evaluator) Evaluate(ctx context.Context, c search.Candidate) (search.Outcome, error) {
	v, err := r.prepare(c)
	if err != nil {
		return search.Outcome{}, fmt.Errorf("%s: %w", c, err)
	}
	res, err := v.Plan(ctx) // no content id: only the reported candidates get one
	if err != nil {
		return search.Outcome{}, fmt.Errorf("%s: %w", c, err)
	}
	return outcome(res), nil
}

// outcome reads a result.
func outcome(res *request.Result) search.Outcome {
	o := search.Outcome{Feasible: res.Feasible}
	if res.Plan != nil {
		if res.Plan.LayerOrder == nil { // a graph partition's are positions in an order of its own
			o.Boundaries = res.Plan.Boundaries
		}
		o.HeadroomBytes = math.MaxInt64
		for _, s := range res.Plan.Stages {
			if h := s.LimitBytes - s.MemoryBytes; h < o.HeadroomBytes {
				o.HeadroomBytes = h
				if s.LimitBytes > 0 {
					o.HeadroomFraction = float64(h) / float64(s.LimitBytes)
				}
			}
		}
	}
	if st := res.Step; st != nil && res.Feasible {
		o.SamplesPerSecond, o.TokensPerSecond, o.StepSeconds = st.SamplesPerSecond, st.TokensPerSecond, st.StepSeconds
		o.BubbleFraction, o.MFU = st.BubbleFraction, st.MFU
	}
	if !res.Feasible {
		var why []string
		for _, d := range res.Diagnostics {
			if d.Severity == request.Error {
				why = append(why, d.Message)
			}
		}
		o.Reason = strings.Join(why, "; ")
	}
	return o
}

// MemoryKey: what a stage holds depends on the tensor- and context-parallel degrees, the
// stages, the microbatches the schedule keeps in flight on each, recomputation, the ZeRO
// stage and the devices it shards over (replicas x context) and the memory proportion,
// not on the replicas otherwise or the links.
//
// The microbatches in flight follow from the schedule, the stages and the microbatches:
// for 1F1B and ZB-H1, min(p - i, m) on stage i, which depends on m only up to p.
func (r *Evaluator) MemoryKey(c search.Candidate) string {
	sc, _ := schedule.Parse(c.Schedule)
	inFlight := c.Microbatches
	if sc.Kind == schedule.OneFOneB || sc.Kind == schedule.ZBH1 {
		inFlight = min(c.Microbatches, c.Pipeline)
	}
	z := 0
	if c.ZeRO >= 1 {
		z = shardDegree(c.Config)
	}
	return fmt.Sprintf("%d/%d/%s/%d/%s/%d/%d/%d/%d/%g", c.Tensor, c.Pipeline, sc, inFlight, c.Recompute, c.ZeRO, z, c.Context, c.Expert, c.MemoryProportion)
}

// Twin: a candidate with selective recomputation is the twin of the same candidate
// without recomputation when the architecture's analytic estimates of the two are equal
// in every layer and in total (as with flash attention, which keeps no attention scores
// for selective recomputation to drop: core/analytic gives both the same costs).
//
// Proof that their outcomes are equal: for an architecture, training.recompute reaches
// the planner only through the analytic options (core/request's prepare: the schedule's
// and the estimator's stage recomputation is for full recomputation of profiles), and
// Run reads the estimate only through its model (est.Model(), from est.Layers and the
// estimate's input), its layers and totals, and its options' types, which recomputation
// does not set. The data-parallel and ZeRO options the candidate adds to those compared
// here change each layer's state shares, and under ZeRO-3 its gathered working memory
// and its gathers' exposed time, from its parameters and its (equal) times alone, in the
// same way with either recomputation. So the two requests plan the same model on the same cluster with the
// same schedule: the same split, step and throughput. None comes first in the grid's
// order (search.Space lists none before selective), as Twins asks.
func (r *Evaluator) Twin(c search.Candidate) (search.Candidate, bool) {
	if !r.MayHaveTwins(c.Config) {
		return c, false
	}
	k := [3]int{c.Tensor, c.Expert, c.MicrobatchSize}
	same, known := r.twins[k]
	if !known {
		// The estimates alone: the terms (and models) are built only for what is bounded.
		none, err := r.estimateOf(c.Tensor, c.MicrobatchSize, string(analytic.NoRecompute), 1, c.Expert)
		if err != nil {
			return c, false
		}
		sel, err := r.estimateOf(c.Tensor, c.MicrobatchSize, c.Recompute, 1, c.Expert)
		if err != nil {
			return c, false
		}
		same = sameEstimate(sel, none)
		r.twins[k] = same
	}
	if !same {
		return c, false
	}
	c.Recompute = string(analytic.NoRecompute)
	return c, true
}

// MayHaveTwins: only candidates with selective recomputation of an architecture in
// training, without context parallelism (Twin compares estimates with none), may have
// twins (Twin).
func (r *Evaluator) MayHaveTwins(g search.Config) bool {
	return g.Recompute == string(analytic.Selective) && r.arch != nil && r.train && g.Context <= 1
}

// sameEstimate reports whether two analytic estimates of options that differ in
// recomputation alone cost every layer alike: the same layers and totals. Their models
// are then equal too (but for the name, which states the options): Result.Model builds
// a model from the layers and from what the other options decide (bytes per parameter,
// the optimizer's share, the input, tensor and sequence parallelism).
func sameEstimate(a, b *analytic.Result) bool {
	return reflect.DeepEqual(a.Layers, b.Layers) && a.Total == b.Total
}

// termsOf are the bound's terms for a tensor-parallel degree, microbatch size and
// recomputation, computed once.
func (r *Evaluator) termsOf(t, b int, recompute string, c, e int) (*terms, error) {
	k := termKey{t, b, recompute, max(1, c), e}
	if x := r.terms[k]; x != nil {
		return x, nil
	}
	var est *analytic.Result
	var m *model.Model
	if r.arch != nil {
		var err error
		if est, err = r.estimateOf(t, b, recompute, c, e); err != nil {
			return nil, err
		}
	} else {
		// The profile scaled to b on one device, as every candidate of size b plans it.
		v, err := r.prepared.With(request.Knobs{Parallelism: request.Parallelism{Pipeline: 1}, Schedule: request.Schedule{MicrobatchSize: b}})
		if err != nil {
			return nil, err
		}
		m = v.Model()
	}
	x := r.termsFrom(est, m)
	r.terms[k] = x
	return x, nil
}

// estimateOf is the architecture's analytic estimate for the bound's terms (termsOf),
// computed once.
func (r *Evaluator) estimateOf(t, b int, recompute string, c, e int) (*analytic.Result, error) {
	k := termKey{t, b, recompute, max(1, c), e}
	if x := r.terms[k]; x != nil && x.est != nil {
		return x.est, nil
	}
	if est := r.estimates[k]; est != nil {
		return est, nil
	}
	// The request of one device (tensor and context groups aside) with e replicas, the
	// fewest expert parallelism e allows, which change nothing else without ZeRO: its
	// analytic estimate is the one the candidates' plans cost their layers with.
	var ctx int
	var method string
	if c > 1 {
		ctx, method = c, r.contextMethod
	}
	v, err := r.prepared.With(request.Knobs{
		Parallelism: request.Parallelism{Pipeline: 1, Data: max(1, e), Tensor: t, SequenceParallel: r.seqParallel(t, e),
			Context: ctx, ContextMethod: method, Expert: e, ExpertOverlap: r.train && r.expertOverlap && e > 1 && recompute != string(analytic.Full),
			ExpertDispatcher: r.dispatcher},
		Schedule: request.Schedule{MicrobatchSize: b}, Recompute: recompute, Partition: r.base.Partition})
	if err != nil {
		return nil, err
	}
	est, err := v.Estimate()
	if err != nil {
		return nil, err
	}
	r.estimates[k] = est
	return est, nil
}

// seqParallel is whether a candidate of tensor degree t and expert degree e runs
// sequence parallelism: as the base request says wherever t > 1, and always with both
// tensor and expert parallelism, which Megatron-LM requires it for.
func (r *Evaluator) seqParallel(t, e int) bool { return t > 1 && (r.sp || e > 1) }

// termsFrom builds the terms of an architecture's analytic estimate, or of a profile's
// model (est nil).
func (r *Evaluator) termsFrom(est *analytic.Result, m *model.Model) *terms {
	x := &terms{bottleneck: map[int]float64{}}
	if est != nil {
		m = est.Model()
		x.est = est
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		w := m.Forward(i) * r.secondsPer
		if r.train {
			w += m.Backward(i) * r.secondsPer
		}
		x.layers = append(x.layers, w)
		x.work += w
		x.grads += float64(l.GradBytes)
		x.params += float64(l.ParamBytes)
		x.optimizer += float64(l.OptimizerBytes)
	}
	if !r.train || r.arch == nil {
		x.grads, x.params, x.optimizer = 0, 0, 0 // a profile's state is not bounded
	}
	if r.train && r.arch != nil {
		x.mem = make([]layerMemory, len(m.Layers))
		for i := range m.Layers {
			l := &m.Layers[i]
			x.mem[i] = layerMemory{fixed: l.ParamBytes + l.ExclusiveBytes, grad: l.GradBytes, opt: l.OptimizerBytes, act: l.ActivationBytes,
				peak: l.TemporaryBytes + l.CarryOverBytes}
		}
	}
	return x
}

// CannotFit reports that the candidate fits no split, by a lower bound on what a stage
// needs (Fitter). It answers for architectures in training under gpipe, 1f1b, zb-h1 and
// interleaved; otherwise it says false (not known).
//
// core/estimate charges a stage of layers [a, b], holding k microbatches in flight, its
// parameters, optimizer state, exclusive and shared bytes, its working peak, the maximum
// over l in [a, b] of (temporary + carried + activations of the layers a..l-1 + tensors
// carried across l) and (k - 1) times its activations. Leaving out the shared bytes and
// the carried tensors, each at least 0, gives a lower bound LB(i, a, b) that grows as the
// range grows at either end. The stages' k are schedule.InFlight's: m under gpipe,
// min(p - i, m) under 1f1b and zb-h1; under interleaved at least 1 (core/plan shares a
// device's count among its chunks, each at least 1), against the whole device's memory
// (a device's chunks share it: core/plan bounds their total, so no chunk holds more).
// Optimizer state: the estimate without ZeRO gives o = ceil(x) per layer; ZeRO over n
// devices (replicas x context) gives ceil(x/n) >= (o - 1)/n, less a byte for rounding;
// likewise the gradients from ZeRO-2 on and the weights under ZeRO-3, whose gathered
// copies only add working memory (shardedFixed). Context parallelism's terms are those
// of the estimate with it (termsOf).
//
// If some split fits, its stages satisfy LB <= limit; then the greedy cover (each stage
// in turn takes as many layers as keep LB within its limit) also reaches the last layer
// (cover). So when the greedy cover does not reach the last layer, no split fits.
func (r *Evaluator) CannotFit(c search.Candidate) bool {
	if !r.train || r.arch == nil || r.device == nil {
		return false
	}
	sc, err := schedule.Parse(c.Schedule)
	if err != nil {
		return false
	}
	limit, ok := r.stageCeiling(sc, c.MemoryProportion)
	if !ok {
		return false
	}
	x, err := r.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, c.Expert)
	if err != nil || x.mem == nil {
		return false
	}
	return !r.cover(c, x, sc, limit, math.Inf(1))
}

// stageCeiling is memoryCeiling for one stage of the schedule: a device's memory (for
// interleaved:v, each chunk's: the chunks share their device's memory, and none holds
// more than all of it). It reports false for the schedules the memory bound does not
// cover.
func (r *Evaluator) stageCeiling(sc schedule.Config, proportion float64) (int64, bool) {
	dev := *r.device
	switch sc.Kind {
	case schedule.GPipe, schedule.OneFOneB, schedule.ZBH1, schedule.Interleaved:
	default:
		return 0, false
	}
	return memoryCeiling(dev, proportion), true
}

// memoryCeiling bounds from above the memory a stage's model tensors may use on dev: its
// whole memory times the proportion. The request's real limit is at most this: a
// preset's usable fraction, or (for an architecture run by a GPU framework) the
// framework's fixed memory and the allocator's reserve, only take from it. A bound
// against the ceiling never rules out a candidate that fits.
func memoryCeiling(dev cluster.Device, proportion float64) int64 {
	dev.UsableFraction = 1
	return dev.MemoryLimitBytes(proportion)
}

// cover reports whether the greedy cover reaches the last layer with stages whose
// memory lower bound (CannotFit) is within limit and whose work (terms.layers) is at most
// most: each stage in turn takes as many layers as keep both. Both grow with a range at
// either end, so the cover reaches the last layer if any split of stages within both
// does (by induction, its i-th stage ends no earlier than the split's).
func (r *Evaluator) cover(c search.Candidate, x *terms, sc schedule.Config, limit int64, most float64) bool {
	p, m := c.Pipeline, c.Microbatches
	stages := p * max(1, sc.Chunks)
	n := len(x.mem)
	a := 0
	for i := 0; i < stages && a < n; i++ {
		k := int64(1)
		switch sc.Kind {
		case schedule.GPipe:
			k = int64(m)
		case schedule.OneFOneB, schedule.ZBH1:
			k = int64(min(p-i, m))
		}
		var fixed, act, peak int64 // peak: the most of (peak + activations before) over the range
		var work float64
		b := a
		for ; b < n; b++ {
			l := &x.mem[b]
			f := fixed + shardedFixed(l, c.ZeRO, int64(shardDegree(c.Config)))
			pk := max(peak, l.peak+act)
			ac := act + l.act
			w := work + x.layers[b]
			if f+pk+(k-1)*ac > limit || w > most {
				break
			}
			fixed, peak, act, work = f, pk, ac, w
		}
		a = b
	}
	return a == n
}

// gatherKey keys the terms of ZeRO-3 candidates: termsOf's, the shard group's size and
// the link its gathers are bounded over.
type gatherKey struct {
	termKey
	n    int
	link cluster.Link
}

// termsFor are the bound's terms of a candidate: termsOf's, and under ZeRO-3 each
// layer's work raised by what its gathers add to it as core/request costs them
// (gatherLayers, with its default prefetch: forward max(0, AG - F), backward
// max(0, AG + RS - B), AG and RS rings over the n = d x c devices), over the fastest
// link the shard group's ring may cross in any placement (gatherLink). The gathers then
// add at most what the plan adds, so the terms stay lower bounds.
func (r *Evaluator) termsFor(c search.Candidate) (*terms, error) {
	x, err := r.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, c.Expert)
	if err != nil || c.ZeRO < 3 || x.est == nil || !r.train || r.base.Cluster.FreeTransfers {
		return x, err
	}
	link, ok := r.gatherLink(c.Config)
	if !ok {
		return x, nil
	}
	n := shardDegree(c.Config)
	k := gatherKey{termKey{c.Tensor, c.MicrobatchSize, c.Recompute, max(1, c.Context), c.Expert}, n, link}
	if y := r.gathered[k]; y != nil {
		return y, nil
	}
	y := &terms{bottleneck: map[int]float64{}, est: x.est, mem: x.mem, grads: x.grads, params: x.params,
		optimizer: x.optimizer, layers: make([]float64, len(x.layers))}
	for i := range y.layers {
		l := &x.est.Layers[i]
		w, g := x.est.FullBytes(i)
		ag := cluster.RingAllGatherSeconds(link, float64(w), n)
		rs := cluster.RingReduceScatterSeconds(link, float64(g), n)
		f, b := l.FwdSeconds, l.BwdSeconds
		f += max(0, ag-f)
		b += max(0, ag+rs-b)
		y.layers[i] = f + b
		y.work += y.layers[i]
	}
	r.gathered[k] = y
	return y, nil
}

// gatherLink is the fastest link a candidate's shard group may reduce over in
// core/request: with one replica the context group's (the node's link, or the cluster's
// link), else the data-parallel ring's in some placement (the node's link when a ring
// stays in a node in some order, else the network); ok is false when the fastest is not
// known (a network faster than the node's link).
func (r *Evaluator) gatherLink(c search.Config) (cluster.Link, bool) {
	if r.topo == nil {
		return r.link, true
	}
	in, out := r.topo.Intra, r.topo.Inter
	if c.Data < 2 {
		return in, true
	}
	if out.BytesPerSecond > in.BytesPerSecond || out.LatencySeconds < in.LatencySeconds {
		return cluster.Link{}, false
	}
	topo := *r.topo
	topo.Nodes = (c.Devices() + topo.DevicesPerNode - 1) / topo.DevicesPerNode
	link := out
	for _, o := range cluster.Orders {
		pl, err := topo.Place(c.Pipeline, c.Data, c.Tensor*max(1, c.Context), o)
		if err != nil {
			return cluster.Link{}, false
		}
		if !pl.DataCrossesNodes {
			link = in
		}
	}
	return link, true
}

// shardDegree is the devices a candidate's state is sharded over: replicas x context.
func shardDegree(c search.Config) int { return c.Data * max(1, c.Context) }

// shardedFixed is a lower bound on layer l's always-alive bytes under ZeRO stage z over
// n devices: each sharded part ceil(x/n) >= (ceil(x) - 2)/n (cover).
func shardedFixed(l *layerMemory, z int, n int64) int64 {
	shard := func(v int64) int64 { return max(0, (v-2)/n) }
	weights := l.fixed - l.grad // with the exclusive bytes, which stay whole
	grad, opt := l.grad, l.opt
	if z >= 1 {
		opt = shard(opt)
	}
	if z >= 2 {
		grad = shard(grad)
	}
	if z >= 3 {
		weights = shard(weights)
	}
	return weights + grad + opt
}

// Bound is an upper bound on a candidate's samples per second: its samples per step over
// a lower bound on the step. The pipeline of m microbatches on p devices, whose stages
// take s_j per microbatch (sum W), lasts at least m*W/p (the average device's work) and,
// but for ZB-H1 whose weight gradients run beside other stages' work, W (one microbatch
// through every stage); in inference W + (m-1) * the largest stage; for GPipe and 1F1B,
// at least max_j (s_0 + ... +
// s_(j-1) + m*s_j), since device j waits for the first forward and the last backward to
// pass the stages before it, which over every split is at least W / (1 - (1 - 1/m)^p).
// To it comes the optimizer update (the average device's state at the device's memory
// bandwidth). Transfers, the tied all-reduce, the data-parallel all-reduce (which the
// backward may hide) and the rest of the bubble only add. And the device of the largest
// stage works m times it, which no split makes less than the least bottleneck over
// contiguous splits of the layers (terms.bottleneckOf).
func (r *Evaluator) Bound(c search.Candidate) (float64, error) {
	x, err := r.termsFor(c)
	if err != nil {
		return 0, err
	}
	sc, _ := schedule.Parse(c.Schedule)
	return r.bound(c, x, sc, x.bottleneckOf(c.Pipeline*max(1, sc.Chunks))), nil
}

// Refine is Bound with the bottleneck of the splits that may fit (Refiner): the largest
// stage's work is at least the least X for which the greedy cover of CannotFit's
// memory bound, with stages of work at most X, reaches the last layer (found by
// bisection, from below); where memory binds (1F1B's first stages hold p microbatches)
// this is more than the bottleneck over every split. No split fits: 0.
func (r *Evaluator) Refine(c search.Candidate) (float64, error) {
	x, err := r.termsFor(c)
	if err != nil {
		return 0, err
	}
	sc, _ := schedule.Parse(c.Schedule)
	stages := c.Pipeline * max(1, sc.Chunks)
	least := x.bottleneckOf(stages)
	if !r.train || r.arch == nil || r.device == nil || x.mem == nil {
		return r.bound(c, x, sc, least), nil
	}
	limit, ok := r.stageCeiling(sc, c.MemoryProportion)
	if !ok {
		return r.bound(c, x, sc, least), nil
	}
	if !r.cover(c, x, sc, limit, math.Inf(1)) {
		return 0, nil
	}
	lo, hi := least, x.work // lo: no cover known (or the bound over all splits); hi: covers
	if r.cover(c, x, sc, limit, lo) {
		return r.bound(c, x, sc, least), nil
	}
	for range 40 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if r.cover(c, x, sc, limit, mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return r.bound(c, x, sc, lo), nil
}

// bound is Bound with a lower bound on the largest stage's work.
func (r *Evaluator) bound(c search.Candidate, x *terms, sc schedule.Config, bottleneck float64) float64 {
	m, p := float64(c.Microbatches), float64(c.Pipeline)
	pipe := max(m*x.work/p, m*bottleneck)
	switch sc.Kind {
	case schedule.GPipe, schedule.OneFOneB:
		pipe = max(pipe, x.work/(1-math.Pow(1-1/m, p)))
	case schedule.Inference:
		// The device of stage j starts after the stages before it and the last
		// microbatch still crosses the stages after it.
		pipe = max(pipe, x.work+(m-1)*bottleneck)
	case schedule.ZBH1:
		// Weight gradients run apart, beside other stages' work: one microbatch's whole
		// work is no bound.
	default:
		pipe = max(pipe, x.work)
	}
	step := pipe
	if r.train {
		step += r.optimizerBound(c, x) / p
		// The data-parallel all-reduce adds nothing to the bound: frameworks that overlap
		// it with the backward (PyTorch DDP, request's framework modes) may hide it whole.
	}
	samples := float64(c.MicrobatchSize) * m * float64(c.Data)
	if step <= 0 {
		return math.Inf(1)
	}
	return samples / step
}

// optimizerBound is a lower bound on the optimizer update of all the devices of a
// pipeline together: an architecture's is the analytic estimate's
// (analytic.Result.OptimizerSeconds, which the plan's step uses), whose memory-bound pass
// ZeRO-1 and beyond divide over at most the shard group (routed experts over at most the
// shard group times the tensor group) and whose host time over the shard group; the
// slowest device updates at least the average. A profile's reads and writes its
// parameters and twice its state at the device's bandwidth, each layer's part sharded to
// at least (its whole - 1)/n.
func (r *Evaluator) optimizerBound(c search.Candidate, x *terms) float64 {
	n := float64(shardDegree(c.Config))
	if x.est != nil {
		device, host := x.est.OptimizerSeconds(0, len(x.est.Layers)-1)
		if c.ZeRO >= 1 {
			spread := n
			if x.est.Total.DeviceExpertParams > 0 {
				spread *= float64(max(1, c.Tensor))
			}
			device, host = device/spread, host/n
		}
		return max(device, host)
	}
	opt, params := x.optimizer, x.params
	layers := float64(len(x.layers))
	if c.ZeRO >= 1 {
		opt = max(0, (opt-layers)/n)
	}
	if c.ZeRO >= 2 {
		params = max(0, (params-layers)/n)
	}
	if r.memoryBW > 0 {
		return (params + 2*opt) / r.memoryBW
	}
	return 0
}

// ringBound is the least time of the candidate's data-parallel ring all-reduce of n bytes
// per device: over the link a ring crosses in the placement (Topology.Choose picks one
// of cluster.Orders) that makes it cheapest.
func (r *Evaluator) ringBound(c search.Candidate, n float64) float64 {
	if r.topo == nil || c.Data < 2 {
		return cluster.RingAllReduceSeconds(r.link, n, c.Data)
	}
	topo := *r.topo
	topo.Nodes = (c.Devices() + topo.DevicesPerNode - 1) / topo.DevicesPerNode
	least := math.Inf(1)
	for _, o := range cluster.Orders {
		if pl, err := topo.Place(c.Pipeline, c.Data, c.Tensor*max(1, c.Context), o); err == nil {
			least = min(least, cluster.RingAllReduceSeconds(pl.DataLink, n, c.Data))
		}
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return least
}

// longSequence is the sequence length from which the search tries context parallelism
// by default, up to maxSearchedContext devices.
const (
	longSequence       = 32768
	maxSearchedContext = 32
)

// Space is the grid of the knobs: tensor-parallel degrees that divide the devices per
// node (or the devices at hand) and the model's heads, key/value heads and MLP width;
// stages up to the model's layers; every replica count that fits.
func (r *Evaluator) Space(k search.Knobs) (search.Space, error) {
	s := search.Space{MaxDevices: k.MaxDevices, GlobalBatch: k.GlobalBatch, MemoryProportions: k.MemoryProportions}
	if err := k.Validate(); err != nil {
		return s, err
	}
	layers := 0
	switch {
	case r.arch != nil:
		layers = r.arch.NumLayers + 2
		if r.base.Model.Architecture.Split == string(analytic.Sublayers) {
			layers = 2*r.arch.NumLayers + 2
		}
		if r.train {
			layers += r.arch.MTPLayers
		}
	default:
		layers = r.layers
	}
	fix := func(v int, all []int) []int {
		if v > 0 {
			return []int{v}
		}
		return all
	}
	var ps []int
	for p := 1; p <= min(layers, k.MaxDevices, cluster.MaxStages); p++ {
		ps = append(ps, p)
	}
	s.Pipelines = fix(k.Stages, ps)
	if k.Replicas > 0 {
		s.Data = []int{k.Replicas}
	}
	ts := []int{1}
	if r.arch != nil {
		group := k.MaxDevices
		if r.topo != nil {
			group = r.topo.DevicesPerNode
		}
		ts = nil
		for t := 1; t <= group && t <= k.MaxDevices && t <= cluster.MaxStages; t++ {
			a := r.arch
			if group%t == 0 && a.NumHeads%t == 0 && a.NumKVHeads%t == 0 && a.IntermediateSize%t == 0 &&
				a.DenseWidth()%t == 0 && a.SharedExpertSize%t == 0 {
				ts = append(ts, t)
			}
		}
	}
	s.Tensors = fix(k.Tensor, ts)
	switch {
	case r.arch != nil && r.arch.MoE():
		// Every expert-parallel degree that divides the experts (a candidate's data x
		// context devices must be a multiple of it).
		var es []int
		for e := 1; e <= min(r.arch.NumExperts, k.MaxDevices); e++ {
			if r.arch.NumExperts%e == 0 {
				es = append(es, e)
			}
		}
		s.Experts = fix(k.Expert, es)
	case k.Expert > 1:
		return s, &model.FieldError{Path: "expert", Reason: "splits the experts of a mixture of experts; the model has none"}
	}
	if r.topo != nil {
		s.StageGroup = r.topo.DevicesPerNode
	}
	switch {
	case k.Context > 0:
		s.Contexts = []int{k.Context}
	case len(k.Contexts) > 0:
		s.Contexts = k.Contexts
	case r.arch != nil && r.base.Model.Architecture.Seq >= longSequence && r.contextMethod == string(analytic.Ring):
		// Long sequences: ring attention over powers of two that split the sequence
		// into 2c chunks and fit a node (or the devices) beside t = 1. (All-to-all's
		// degrees must divide the heads of each t: the user gives them.)
		seq := r.base.Model.Architecture.Seq
		group := k.MaxDevices
		if r.topo != nil {
			group = r.topo.DevicesPerNode
		}
		for c := 1; c <= maxSearchedContext && c <= group && c <= k.MaxDevices; c *= 2 {
			if group%c == 0 && seq%(2*c) == 0 {
				s.Contexts = append(s.Contexts, c)
			}
		}
	}
	switch {
	case k.Schedule != "":
		s.Schedules = []string{k.Schedule}
	case len(k.Schedules) > 0:
		s.Schedules = k.Schedules
	case !r.train:
		s.Schedules = []string{string(schedule.Inference)}
	default:
		s.Schedules = []string{"1f1b", "gpipe", "interleaved:2", "zb-h1"}
	}
	switch {
	case k.Recompute != "":
		s.Recomputes = []string{k.Recompute}
	case !r.train:
		s.Recomputes = []string{"none"}
	case r.arch != nil:
		s.Recomputes = []string{"none", "selective", "full"}
	default:
		s.Recomputes = []string{"none", "full"}
	}
	switch {
	case k.ZeRO != nil:
		s.ZeROs = []int{*k.ZeRO}
	case r.train && r.arch != nil:
		s.ZeROs = []int{0, 1, 2, 3}
	case r.train:
		s.ZeROs = []int{0, 1}
	default:
		s.ZeROs = []int{0}
	}
	if len(s.MemoryProportions) == 0 {
		s.MemoryProportions = []float64{1}
	}
	switch {
	case k.GlobalBatch > 0:
	case k.Microbatches > 0:
		s.Microbatches = []int{k.Microbatches}
	case len(k.MicrobatchesPerStage) > 0:
		s.MicrobatchesPerStage = k.MicrobatchesPerStage
	default:
		s.MicrobatchesPerStage = []int{1, 2, 4, 8}
	}
	switch {
	case k.MicrobatchSize > 0:
		s.MicrobatchSizes = []int{k.MicrobatchSize}
	case k.MaxMicrobatchSize > 0:
		s.MaxMicrobatchSize = k.MaxMicrobatchSize
	case r.arch != nil:
		s.MaxMicrobatchSize = 64
	default:
		s.MaxMicrobatchSize = 128
	}
	return s, s.Validate()
}
