package evaluate

import (
	"fmt"
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
)

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
	return fmt.Sprintf("%d/%d/%s/%d/%s/%d/%d/%d/%s/%d/%g/%t", c.Tensor, c.Pipeline, sc, inFlight, c.Recompute, c.ZeRO, z, c.Context, r.methodOf(c.Config), c.Expert, c.MemoryProportion, c.ShardGroup > 0)
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
	x, err := r.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, r.methodOf(c.Config), c.Expert)
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
	sharded := x.fixedOf(c.ZeRO, shardDegree(c.Config))
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
			f := fixed + sharded[b]
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
