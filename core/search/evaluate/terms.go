package evaluate

import (
	"math"
	"slices"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

type termKey struct {
	t, b      int
	recompute string
	c         int    // context-parallel degree
	method    string // its context method ("" for c = 1)
	e         int    // expert-parallel degree (0: none stated)
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
	// forwardShare is the least share of a layer's work that its forward takes (1
	// without work; Bound's ZB-H1 fill).
	forwardShare float64
	// est is the architecture's analytic estimate (nil for a profile), for Twin.
	est *analytic.Result
	// mem are the layers' memory terms, for CannotFit (architectures in training).
	mem []layerMemory
	// saving is what recompute auto's options save and cost (nil otherwise), for
	// Refine's least recomputation time.
	saving *autoSaving
	// opt caches est.OptimizerSeconds over every layer (device and host seconds), set
	// once optSet (optimizerBound).
	opt    [2]float64
	optSet bool
	// fixed caches, per ZeRO stage and shard degree, each layer's shardedFixed (cover).
	fixed map[[2]int][]int64
	// dp caches dataParallelOf, set once dpSet.
	dp    [4]float64
	dpSet bool
}

// dataParallelOf is, over every layer of the estimate, the gradient and weight bytes
// before sharding (analytic.Result.FullBytes's gradients and ParamGatherBytes's
// weights, what core/request's devices reduce and, under ZeRO-1 and 2, gather) and one
// microbatch's forward and backward seconds, computed once.
func (x *terms) dataParallelOf() [4]float64 {
	if !x.dpSet {
		for i := range x.est.Layers {
			_, g := x.est.FullBytes(i)
			w, _ := x.est.ParamGatherBytes(i)
			l := &x.est.Layers[i]
			x.dp[0], x.dp[1] = x.dp[0]+float64(g), x.dp[1]+float64(w)
			x.dp[2], x.dp[3] = x.dp[2]+l.FwdSeconds, x.dp[3]+l.BwdSeconds
		}
		x.dpSet = true
	}
	return x.dp
}

// fixedOf is each layer's shardedFixed under ZeRO stage z over n devices, computed once.
func (x *terms) fixedOf(z, n int) []int64 {
	k := [2]int{z, n}
	if f, ok := x.fixed[k]; ok {
		return f
	}
	if x.fixed == nil {
		x.fixed = map[[2]int][]int64{}
	}
	f := make([]int64, len(x.mem))
	for i := range x.mem {
		f[i] = shardedFixed(&x.mem[i], z, int64(n))
	}
	x.fixed[k] = f
	return f
}

// fillOf is the sum over d < p of the work of layers 0 .. d-1: what the devices of an
// interleaved pipeline of p devices wait, at least, for the first forward to reach them
// and the last backward to leave them (Bound).
func (x *terms) fillOf(p int) float64 {
	var fill, prefix float64
	for d := 1; d < p && d <= len(x.layers); d++ {
		prefix += x.layers[d-1]
		fill += prefix
	}
	return fill
}

// linkOK is a cached gatherLink answer.
type linkOK struct {
	link cluster.Link
	ok   bool
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
				if n, cur = n+1, 0; n > k {
					return false
				}
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

// termsOf are the bound's terms for a tensor-parallel degree, microbatch size and
// recomputation, computed once.
func (r *Evaluator) termsOf(t, b int, recompute string, c int, method string, e int) (*terms, error) {
	k := termKey{t, b, recompute, max(1, c), method, e}
	if x := r.terms[k]; x != nil {
		return x, nil
	}
	if recompute == request.RecomputeAuto {
		// Per-layer recomputation only adds time to what nothing recomputed takes: none's
		// work bounds it. Its memory is bounded by each layer's leanest options
		// (autoMemory); without them (a profile) it is not bounded (mem nil).
		x, err := r.termsOf(t, b, string(analytic.NoRecompute), c, method, e)
		if err != nil {
			return nil, err
		}
		y := *x
		y.mem, y.bottleneck, y.fixed = nil, map[int]float64{}, nil
		if x.mem != nil {
			if v, err := r.variant(t, b, recompute, c, method, e); err == nil {
				opts := v.RecomputeOptions()
				if y.mem = autoMemory(x.mem, opts); y.mem != nil {
					y.saving = savingOf(x.mem, opts, r.secondsPer)
				}
			}
		}
		r.terms[k] = &y
		return &y, nil
	}
	var est *analytic.Result
	var m *model.Model
	if r.arch != nil {
		var err error
		if est, err = r.estimateOf(t, b, recompute, c, method, e); err != nil {
			return nil, err
		}
	} else {
		// The profile scaled to b on one device, as every candidate of size b plans it.
		v, err := r.prepared.With(request.Knobs{Parallelism: wire.Parallelism{Pipeline: 1}, Schedule: wire.Schedule{MicrobatchSize: b}})
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
func (r *Evaluator) estimateOf(t, b int, recompute string, c int, method string, e int) (*analytic.Result, error) {
	k := termKey{t, b, recompute, max(1, c), method, e}
	if x := r.terms[k]; x != nil && x.est != nil {
		return x.est, nil
	}
	if est := r.estimates[k]; est != nil {
		return est, nil
	}
	v, err := r.variant(t, b, recompute, c, method, e)
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

// variant is the request of one device (tensor and context groups aside) with e
// replicas, the fewest expert parallelism e allows, which change nothing else without
// ZeRO: its analytic estimate is the one the candidates' plans cost their layers with
// (estimateOf), and under recompute auto its layers' options the ones they choose from.
func (r *Evaluator) variant(t, b int, recompute string, c int, method string, e int) (*request.Prepared, error) {
	var ctx int
	if c > 1 {
		ctx = c
	}
	par := wire.Parallelism{Pipeline: 1, Data: max(1, e), Tensor: t, SequenceParallel: r.seqParallel(t, e),
		Context: ctx, ContextMethod: method, ContextInner: r.innerOf(c, method), Expert: e, ExpertOverlap: r.train && r.expertOverlap && e > 1 && recompute != string(analytic.Full),
		ExpertDispatcher: r.dispatcher}
	r.withOverlaps(&par) // the tensor-parallel overlap changes the layers' times
	// One microbatch: a framework that accumulates gradients in .grad prices each
	// microbatch's share of the adds by the step's count (analytic.Options.Microbatches),
	// which only adds time, so the estimate without them bounds every candidate's.
	return r.prepared.With(request.Knobs{Parallelism: par, Schedule: wire.Schedule{MicrobatchSize: b, Microbatches: 1}, Recompute: recompute, Partition: r.base.Partition})
}

// termsFrom builds the terms of an architecture's analytic estimate, or of a profile's
// model (est nil).
func (r *Evaluator) termsFrom(est *analytic.Result, m *model.Model) *terms {
	x := &terms{bottleneck: map[int]float64{}, forwardShare: 1}
	if est != nil {
		m = est.Model()
		x.est = est
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		f := m.Forward(i) * r.secondsPer
		w := f
		if r.train {
			w += m.Backward(i) * r.secondsPer
		}
		if w > 0 {
			x.forwardShare = min(x.forwardShare, f/w)
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

// autoMemory bounds the memory terms of recompute auto from below: each layer's
// activations the least of its options' (recompute.Choices), and its working peak
// none's less its temporary bytes plus the least of its options' temporary bytes (the
// carried tensors stay). Whatever option each layer of a stage takes, its range's
// memory is at least what these terms give in CannotFit's lower bound, which grows with
// each layer's activations and peak; so a candidate no split fits with them fits no
// split with any choice. nil where the options are not those of none's layers.
func autoMemory(none []layerMemory, c recompute.Choices) []layerMemory {
	if len(c) != len(none) {
		return nil
	}
	out := make([]layerMemory, len(none))
	for i, os := range c {
		if len(os) == 0 || os[0].ActivationBytes != none[i].act {
			return nil // not the layers of none's terms
		}
		act, temp := os[0].ActivationBytes, os[0].TemporaryBytes
		for _, o := range os[1:] {
			act, temp = min(act, o.ActivationBytes), min(temp, o.TemporaryBytes)
		}
		out[i] = none[i]
		out[i].act = act
		out[i].peak = none[i].peak - os[0].TemporaryBytes + temp
	}
	return out
}

// autoSaving is, for recompute auto, what each layer's options save and cost: the
// lower convex hull of the points (s_o, ExtraTime_o) of layer l's options o, which keep
// s_o = A_l(none) - A_l(o) > 0 activation bytes fewer, with (0, 0), as segments of
// increasing slope (seconds per byte). Every option of l lies on or above its hull, and
// the hull ends at the most an option of l saves (saved). Segments of equal slope share
// a class; slopes are sorted ascending.
type autoSaving struct {
	segs   [][]segment // per layer
	saved  []int64     // per layer: the most an option saves
	slopes []float64
	// most is the sum over layers of their hull's cost at saved: no stage's least
	// (leastExtra) exceeds it.
	most float64
}

// segment is one piece of a layer's hull: its class (slope) and the bytes it spans.
type segment struct {
	class int
	bytes int64
}

// savingOf builds the autoSaving of the layers none (without recomputation) with options
// c, times scaled by secondsPer (autoMemory has checked that c matches none).
func savingOf(none []layerMemory, c recompute.Choices, secondsPer float64) *autoSaving {
	a := &autoSaving{segs: make([][]segment, len(c)), saved: make([]int64, len(c))}
	type piece struct {
		slope float64
		bytes int64
	}
	hulls := make([][]piece, len(c))
	for i, os := range c {
		var cs int64 // the hull's current point
		var ce float64
		for {
			best, bs, be := math.Inf(1), int64(0), 0.0
			for _, o := range os[1:] {
				s, e := none[i].act-o.ActivationBytes, max(0, o.ExtraTime*secondsPer)
				if s <= cs {
					continue
				}
				// The least slope from the current point; of equal slopes the farthest.
				if sl := max(0, e-ce) / float64(s-cs); sl < best || (sl == best && s > bs) {
					best, bs, be = sl, s, max(e, ce)
				}
			}
			if bs == 0 {
				break
			}
			hulls[i] = append(hulls[i], piece{best, bs - cs})
			a.slopes = append(a.slopes, best)
			a.most += best * float64(bs-cs)
			cs, ce = bs, be
		}
		a.saved[i] = cs
	}
	slices.Sort(a.slopes)
	a.slopes = slices.Compact(a.slopes)
	for i, h := range hulls {
		for _, p := range h {
			k, _ := slices.BinarySearch(a.slopes, p.slope)
			a.segs[i] = append(a.segs[i], segment{k, p.bytes})
		}
	}
	return a
}

// add adds layer l's segments to sums (per class), times sign.
func (a *autoSaving) add(sums []int64, l int, sign int64) {
	for _, g := range a.segs[l] {
		sums[g.class] += sign * g.bytes
	}
}

// leastExtra is the least recomputation time of a range whose layers' hull segments,
// summed per class, are sums, that must save need bytes: the optimum of the linear
// relaxation of the multiple-choice knapsack (choose one option per layer), which
// takes the segments greedily by slope (Sinha and Zoltners, "The multiple-choice
// knapsack problem", Operations Research 27(3), 1979). No choice of options undercuts
// it: each layer's option costs at least its hull at the bytes it saves. need <= 0: 0.
func (a *autoSaving) leastExtra(sums []int64, need float64) float64 {
	extra := 0.0
	for k := 0; k < len(sums) && need > 0; k++ {
		s := min(float64(sums[k]), need)
		extra += a.slopes[k] * s
		need -= s
	}
	return extra
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
// (gatherLayers, with its default prefetch: forward cluster.OverlappedSeconds(F, AG),
// backward OverlappedSeconds(B, AG + RS), NCCL's CTAs holding the request's
// CollectiveSMShare of the SMs; AG and RS rings over the n = d x c devices, or HSDP's
// g x c; without prefetch the plan adds more),
// over the fastest link the shard group's ring may cross in any placement (gatherLink;
// under HSDP the node's link where a group fits in a node). The gathers then add at most
// what the plan adds, so the terms stay lower bounds.
func (r *Evaluator) termsFor(c search.Candidate) (*terms, error) {
	x, err := r.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, r.methodOf(c.Config), c.Expert)
	if err != nil || c.ZeRO < 3 || x.est == nil || !r.train || r.base.Cluster.FreeTransfers {
		return x, err
	}
	link, ok := r.gatherLink(c.Config)
	if !ok {
		return x, nil
	}
	if c.ShardGroup > 0 && r.topo != nil && c.ShardGroup*c.Tensor*max(1, c.Context) <= r.topo.DevicesPerNode {
		link = r.topo.IntraRing(c.ShardGroup * max(1, c.Context)) // HSDP's group may sit in a node (core/request's shardLinks)
	}
	n := shardDegree(c.Config)
	// Whether the candidate gathers its fp8 weights in fp8 (fp8GatherOn) follows from n
	// and c: n/c replicas in the shard group.
	fp8 := r.fp8GatherOn(c.Config)
	k := gatherKey{termKey{c.Tensor, c.MicrobatchSize, c.Recompute, max(1, c.Context), r.methodOf(c.Config), c.Expert}, n, link}
	if y := r.gathered[k]; y != nil {
		return y, nil
	}
	// Recompute auto's options add their time to the gathered layers' backward
	// (recompute.Apply on the model gatherLayers has raised): saving stands.
	y := &terms{bottleneck: map[int]float64{}, forwardShare: 1, est: x.est, mem: x.mem, saving: x.saving, grads: x.grads, params: x.params,
		optimizer: x.optimizer, layers: make([]float64, len(x.layers))}
	for i := range y.layers {
		l := &x.est.Layers[i]
		w, g := x.est.FullBytes(i)
		if fp8 {
			w = x.est.FP8GatherWeightBytes(i) // what core gathers with training.fp8_fsdp_all_gather
		}
		ag := cluster.RingAllGatherSeconds(link, float64(w), n)
		rs := cluster.RingReduceScatterSeconds(link, float64(g), n)
		f := cluster.OverlappedSeconds(l.FwdSeconds, ag, r.collectiveShare)
		b := cluster.OverlappedSeconds(l.BwdSeconds, ag+rs, r.collectiveShare)
		y.layers[i] = f + b
		if f+b > 0 {
			y.forwardShare = min(y.forwardShare, f/(f+b))
		}
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
		// A full mesh: the ring's members on as many links less one (cluster.MeshRing),
		// at most the mesh's devices' (core/request's meshMembers).
		k := max(1, c.Data) * max(1, c.Context)
		if r.meshOf > 0 {
			k = min(k, r.meshOf)
		}
		return cluster.MeshRing(r.link, r.linkMesh, k), true
	}
	k := [3]int{c.Pipeline, c.Data, c.Tensor * max(1, c.Context)}
	if v, ok := r.gatherLinks[k]; ok {
		return v.link, v.ok
	}
	link, ok := r.placedGatherLink(c)
	r.gatherLinks[k] = linkOK{link, ok}
	return link, ok
}

// placedGatherLink is gatherLink with nodes, found by placing the candidate in every
// order (it depends on the stages, replicas and devices of a stage alone).
func (r *Evaluator) placedGatherLink(c search.Config) (cluster.Link, bool) {
	// On a full mesh a ring in a node runs on its members' links less one
	// (cluster.Topology.IntraRing): at most a node's devices, or the stage's replicas
	// and their tensor and context groups (the key's three numbers).
	in, out := r.topo.IntraRing(min(r.topo.DevicesPerNode, c.Data*c.Tensor*max(1, c.Context))), r.topo.Inter
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
		// Across nodes, the ring's NICs (cluster.Topology.RingInter): as fast as the
		// node's link at most, with the network's latency; with context parallelism the
		// ring holds each replica's context group, Context times the replicas a node
		// (core/request's shardLinks).
		dl := pl.DataLink
		if pl.DataCrossesNodes && c.Context > 1 {
			dl = topo.RingInter(max(1, pl.DataMembersPerNode) * c.Context)
		}
		if dl.BytesPerSecond > link.BytesPerSecond || !pl.DataCrossesNodes {
			link = dl
		}
		if !pl.DataCrossesNodes {
			link = in
		}
	}
	return link, true
}
