package evaluate

import (
	"math"
	"strconv"

	"pipeplan/core/cluster"
	"pipeplan/core/plan"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
)

// MemoryKey: what a stage holds depends on the tensor- and context-parallel degrees, the
// stages, the microbatches the schedule keeps in flight on each, recomputation, the ZeRO
// stage and the devices it shards over (replicas x context) and the memory proportion,
// not on the replicas otherwise or the links.
//
// The microbatches in flight follow from the schedule, the stages and the microbatches:
// for 1F1B and ZB-H1, min(p - i, m) on stage i, which depends on m only up to p; for
// interleaved (m a multiple of p), the same for every m >= 3p (schedule.DevicePeaks,
// InFlight and DeviceInFlight count 3p's operations), and core/plan reads m nowhere
// else but under recompute auto. Where the base request's framework runs PyTorch's
// pipelining (cluster.Framework.PipelineStageBuffers) a training step's stages also
// hold two boundary tensors per microbatch of the step (cluster.PipelineStageBufferBytes),
// so there every microbatch count has its own key.
func (r *Evaluator) MemoryKey(c search.Candidate) string {
	sc, _ := schedule.Parse(c.Schedule)
	inFlight := c.Microbatches
	switch {
	case r.train && r.framework.PipelineStageBuffers && c.Pipeline >= 2:
		// The stage buffers grow with every microbatch of the step.
	case sc.Kind == schedule.OneFOneB || sc.Kind == schedule.ZBH1:
		inFlight = min(c.Microbatches, c.Pipeline)
	case sc.Kind == schedule.Interleaved && c.Recompute != request.RecomputeAuto && c.Pipeline > 0 && c.Microbatches%c.Pipeline == 0:
		inFlight = min(c.Microbatches, 3*c.Pipeline)
	}
	z := 0
	if c.ZeRO >= 1 {
		z = shardDegree(c.Config)
	}
	// fmt.Sprintf("%d/%d/%s/%d/%s/%d/%d/%d/%s/%d/%g/%t", ...) written by strconv (the
	// search asks for a key per candidate): the same string (TestMemoryKeyIsSprintf).
	b := make([]byte, 0, 64)
	num := func(v int) { b = append(strconv.AppendInt(b, int64(v), 10), '/') }
	str := func(v string) { b = append(append(b, v...), '/') }
	num(c.Tensor)
	num(c.Pipeline)
	str(sc.String())
	num(inFlight)
	str(c.Recompute)
	num(c.ZeRO)
	num(z)
	num(c.Context)
	str(r.methodOf(c.Config))
	num(c.Expert)
	b = append(strconv.AppendFloat(b, c.MemoryProportion, 'g', -1, 64), '/')
	b = strconv.AppendBool(b, c.ShardGroup > 0)
	return string(b)
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
// If some split fits, its stages satisfy LB <= limit (what a stage may allocate:
// stageCeiling); then the greedy cover (each stage in turn takes as many layers as keep
// LB within its limit) also reaches the last layer (cover). So when the greedy cover
// does not reach the last layer, no split fits. Under interleaved, a device's chunks
// together must fit it too (sharedCannotFit).
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
	x, err := r.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, r.methodOf(c.Config), c.Expert)
	if err != nil || x.mem == nil {
		return false
	}
	if !r.cover(c, x, sc, limit, math.Inf(1)) {
		return true
	}
	return r.sharedCannotFit(c, x, sc, limit)
}

// sharedCannotFit is CannotFit's bound over whole devices for an interleaved schedule,
// whose v chunks on a device share its memory: core/plan's split fits each device's
// total over its chunks (plan's deviceMem: their static bytes added, what their
// microbatches in flight hold at the device's moment of most, the working memory of one
// chunk at a time), so under every split that fits, device d holds at least LB_d = the
// sum over its chunks j of fixed_j + held_j, plus the largest of their work_j, where
// held_j = (k_j - 1) x act_j + min(act_j, peak_j) and work_j = peak_j - min(act_j,
// peak_j) (parts; k_j: chunk j's microbatches in flight at one moment of its device's
// most, plan.PeakInFlight, not the share core/plan charges the chunk alone, which the
// device's moments may hold less of where chunks' activations differ; fixed, act and
// peak CannotFit's lower bounds, below core/plan's parts since each grows with them).
// It reports true when no split of the layers into p x v chunks has every LB_d within
// what a device may allocate:
//
//   - first by the devices' sum (the least over the splits of the sum over the chunks of
//     fixed + held + work / v, which is at most the sum of the LB_d, a dynamic programme
//     over the layers, above p devices' memory);
//   - then by a depth-first search over the chunks' ends, pruned by each device's LB
//     so far and by the sum's least over the layers left; past sharedNodes states it
//     gives up (false: not known).
func (r *Evaluator) sharedCannotFit(c search.Candidate, x *terms, sc schedule.Config, limit int64) bool {
	if sc.Kind != schedule.Interleaved || sc.Chunks < 2 {
		return false
	}
	p, v := c.Pipeline, sc.Chunks
	stages, n := p*v, len(x.mem)
	ks := r.chunkInFlight(sc, p, c.Microbatches)
	if ks == nil || stages > n {
		return false
	}
	d := &sharedSearch{x: x, ks: ks, p: p, v: v, limit: limit, sharded: x.fixedOf(c.ZeRO, shardDegree(c.Config))}
	d.suffixes()
	if d.suf[0] > int64(p)*limit {
		return true // also when no split's chunks each fit alone
	}
	d.acc, d.peak = make([]int64, p), make([]int64, p)
	found := d.search(0, 0, 0)
	return !found && d.nodes <= sharedNodes
}

// sharedNodes bounds the states sharedCannotFit's search visits.
const sharedNodes = 1 << 12

// sharedSearch is sharedCannotFit's search.
type sharedSearch struct {
	x       *terms
	ks      []int
	p, v    int
	limit   int64
	sharded []int64
	// suf[j*(n+1)+a] is the least sum over chunks j.. of their part of the devices' sum
	// (fixed + (k - 1) x activations + peak / v) over the splits of layers a.. whose
	// chunks each fit alone (sharedNone: none).
	suf []int64
	// acc and peak are each device's fixed and held bytes, and its largest working
	// memory, over the chunks placed so far; nodes the states visited.
	acc, peak []int64
	nodes     int
}

const sharedNone = math.MaxInt64

// chunk is chunk j's range of layers [a, b] extended by layer b: its fixed bytes,
// activations and working peak (CannotFit's terms).
func (d *sharedSearch) extend(fixed, act, peak int64, b int) (int64, int64, int64) {
	l := &d.x.mem[b]
	return fixed + d.sharded[b], act + l.act, max(peak, l.peak+act)
}

// parts splits a chunk's memory beyond its fixed bytes, with k microbatches in flight,
// activations act and working peak peak (CannotFit's), as core/plan's chunkMem does: what
// it holds between its operations, at least (k - 1) x act and the part of the peak it
// keeps (min(act, peak)), and its working memory beyond that (peak - act, or 0), live
// for one chunk of a device at a time. held + work is the chunk's own peak.
func (d *sharedSearch) parts(k, act, peak int64) (held, work int64) {
	kept := min(act, peak)
	return (k-1)*act + kept, peak - kept
}

// suffixes fills suf, from the last chunk back.
func (d *sharedSearch) suffixes() {
	n, stages := len(d.x.mem), d.p*d.v
	d.suf = make([]int64, (stages+1)*(n+1))
	for i := range d.suf {
		d.suf[i] = sharedNone
	}
	d.suf[stages*(n+1)+n] = 0
	for j := stages - 1; j >= 0; j-- {
		k := int64(d.ks[j])
		row, next := d.suf[j*(n+1):], d.suf[(j+1)*(n+1):]
		last := n - (stages - j) // chunk j ends by this layer: the others hold one each
		for a := j; a <= last; a++ {
			var fixed, act, peak int64
			for b := a; b <= last; b++ {
				fixed, act, peak = d.extend(fixed, act, peak, b)
				if fixed+peak+(k-1)*act > d.limit {
					break // the chunk alone does not fit, nor any longer one
				}
				if rest := next[b+1]; rest != sharedNone {
					held, work := d.parts(k, act, peak)
					row[a] = min(row[a], rest+fixed+held+work/int64(d.v))
				}
			}
		}
	}
}

// search reports whether chunks j.. can take layers a.. with every device's LB within
// its memory, sum being the devices' sum's part of the chunks before j.
func (d *sharedSearch) search(j, a int, sum int64) bool {
	n, stages := len(d.x.mem), d.p*d.v
	if j == stages {
		return a == n
	}
	if d.nodes++; d.nodes > sharedNodes {
		return false
	}
	dev, k := j%d.p, int64(d.ks[j])
	total := int64(d.p) * d.limit
	last := n - (stages - j)
	var fixed, act, peak int64
	for b := a; b <= last; b++ {
		fixed, act, peak = d.extend(fixed, act, peak, b)
		held, work := d.parts(k, act, peak)
		acc, pk := d.acc[dev]+fixed+held, max(d.peak[dev], work)
		if fixed+peak+(k-1)*act > d.limit || acc+pk > d.limit {
			break // nor any longer chunk
		}
		rest := d.suf[(j+1)*(n+1)+b+1]
		part := sum + fixed + held + work/int64(d.v)
		if rest == sharedNone || part+rest > total {
			continue
		}
		saved, savedPeak := d.acc[dev], d.peak[dev]
		d.acc[dev], d.peak[dev] = acc, pk
		ok := d.search(j+1, b+1, part)
		d.acc[dev], d.peak[dev] = saved, savedPeak
		if ok || d.nodes > sharedNodes {
			return ok
		}
	}
	return false
}

// chunkInFlight is plan.PeakInFlight for p devices of interleaved schedule sc with m
// microbatches, cached; nil when it has none.
func (r *Evaluator) chunkInFlight(sc schedule.Config, p, m int) []int {
	k := [4]int{p, sc.Chunks, m, 0}
	if sc.PyTorchOrder {
		k[3] = 1
	}
	if ks, ok := r.inFlight[k]; ok {
		return ks
	}
	sc.Microbatches = m
	ks, err := plan.PeakInFlight(sc, p*sc.Chunks, p)
	if err != nil {
		ks = nil
	}
	r.inFlight[k] = ks
	return ks
}

// stageCeiling is what one stage of the schedule may allocate at most (allocatable,
// within memoryCeiling): a device's (for interleaved:v, each chunk's: the chunks share
// their device's memory, and none holds more than all of it). It reports false for the
// schedules the memory bound does not cover.
func (r *Evaluator) stageCeiling(sc schedule.Config, proportion float64) (int64, bool) {
	dev := *r.device
	switch sc.Kind {
	case schedule.GPipe, schedule.OneFOneB, schedule.ZBH1, schedule.Interleaved:
	default:
		return 0, false
	}
	return allocatable(memoryCeiling(dev, proportion), r.framework), true
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

// allocatable bounds from above what a stage's (or an interleaved device's chunks')
// tensors may allocate at their peak within limit: core/estimate charges a stage its
// allocated peak a, the allocator's reserve ceil(a x reserve) and the framework's
// fixed memory once (core/plan a device of chunks likewise), so a + a x reserve + fixed
// <= limit, with the least reserve the framework charges any pipeline
// (cluster.Framework.LeastReserve: the bound holds for every stage count). A byte is
// added against rounding.
func allocatable(limit int64, fw cluster.Framework) int64 {
	reserve := fw.LeastReserve()
	if fw.FixedBytes <= 0 && !(reserve > 0) {
		return limit
	}
	if limit < fw.FixedBytes {
		return 0
	}
	return int64(float64(limit-fw.FixedBytes)/(1+max(0, reserve))) + 1
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
	sharded := x.fixedOf(c.ZeRO, shardDegree(c.Config))
	save := x.saving
	if math.IsInf(most, 1) {
		save = nil
	}
	var sums []int64 // per class of save, the most the range's layers save
	if save != nil {
		sums = make([]int64, len(save.slopes))
	}
	a := 0
	for i := 0; i < stages && a < n; i++ {
		k := int64(1)
		switch sc.Kind {
		case schedule.GPipe:
			k = int64(m)
		case schedule.OneFOneB, schedule.ZBH1:
			k = int64(min(p-i, m))
		}
		var fixed, act, peak, saved int64 // peak: the most of (peak + activations before) over the range
		var work, forced float64
		clear(sums)
		b := a
		for ; b < n; b++ {
			l := &x.mem[b]
			f := fixed + sharded[b]
			pk := max(peak, l.peak+act)
			ac := act + l.act
			w := work + x.layers[b]
			if f+pk+(k-1)*ac > limit || w > most {
				break
			}
			if save != nil {
				// Recompute auto: act are the leanest options' activations, act + saved
				// those without recomputation. Layer b's working peak needs the
				// layers before it to save at least f + peak_b + theirs - limit
				// (their least time: forced, the most of it over b so far); with k > 1,
				// the (k - 1) copies of every layer's need the options to save at
				// least need of the sv bytes they may. Each takes at least leastExtra.
				frc := max(forced, save.leastExtra(sums, float64(f+l.peak+act+saved-limit)))
				sv := saved + save.saved[b]
				save.add(sums, b, 1)
				extra := frc
				if k > 1 {
					need := float64(ac+sv) - float64(limit-f-pk)/float64(k-1)
					extra = max(extra, save.leastExtra(sums, need))
				}
				if w+extra > most {
					save.add(sums, b, -1)
					break
				}
				saved, forced = sv, frc
			}
			fixed, peak, act, work = f, pk, ac, w
		}
		a = b
	}
	return a == n
}

// shardDegree is the devices a candidate's state is sharded over: replicas x context
// (under HSDP its shard group's replicas x context).
func shardDegree(c search.Config) int {
	if c.ShardGroup > 0 {
		return c.ShardGroup * max(1, c.Context)
	}
	return c.Data * max(1, c.Context)
}

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
