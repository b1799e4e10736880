package evaluate

import (
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
)

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
// this is more than the bottleneck over every split. Under recompute auto, a stage's
// work in the cover also counts the least recomputation its memory forces: the stage
// keeps at least fixed + peak + (k - 1) x (activations without recomputation - S) with
// peak and fixed CannotFit's (the leanest options'), so its options must save S >= need
// bytes of activations, which takes at least autoSaving.leastExtra (the knapsack's linear
// relaxation); that grows with the range at either end as the work does (need grows by
// at least the bytes a new layer may save), so the cover's argument stands. No split
// fits: 0.
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
	// lo: no cover known (or the bound over all splits); hi: covers (under recompute
	// auto, no stage's least recomputation exceeds every layer's most, saving.most).
	lo, hi := least, x.work
	if x.saving != nil {
		hi += x.saving.most
	}
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
	case schedule.Interleaved:
		// Device d runs the stages d, d + p, ...: its first operation waits for a forward
		// through stages 0 .. d-1, and its last, stage d's backward (every later stage's
		// backward of that microbatch comes before it), is followed by the backwards of
		// stages d-1 .. 0; the step lasts at least their work plus m times the device's.
		// Stages 0 .. d-1 hold at least layers 0 .. d-1, so the average over the devices
		// bounds every split: m*W/p + (1/p) sum over d of the work of layers 0 .. d-1.
		if r.train {
			pipe = max(pipe, m*x.work/p+x.fillOf(c.Pipeline)/p)
		}
		pipe = max(pipe, x.work)
	case schedule.ZBH1:
		// Weight gradients run apart, beside other stages' work: one microbatch's whole
		// work is no bound. But device j still waits for the first forward to pass the
		// stages before it, at least a (the least forward share of a layer's work) of
		// their work: max_j (a*(s_0 + ... + s_(j-1)) + m*s_j), over every split at least
		// a*W / (1 - (1 - a/m)^p) (1F1B's closed form with the prefix scaled by a).
		if a := x.forwardShare; r.train && a > 0 {
			pipe = max(pipe, a*x.work/(1-math.Pow(1-a/m, p)))
		}
	default:
		pipe = max(pipe, x.work)
	}
	step := pipe
	if r.train {
		step += r.optimizerBound(c, x)/p + r.exposedBound(c, x)
	}
	samples := float64(c.MicrobatchSize) * m * float64(c.Data)
	if step <= 0 {
		return math.Inf(1)
	}
	return samples / step
}

// exposedBound is a lower bound on the step's exposed data-parallel communication, the
// largest device's request.DataParallelExposedSeconds (core/request's rule, called here
// alike): that rule is convex in the collectives and the passes together and never
// decreases as a collective grows, and a ring's time is at least its bandwidth term,
// linear in the bytes, so the average device's (1/p of the model's whole gradient and
// weight bytes, analytic.Result.FullBytes's gradients and ParamGatherBytes's weights as
// core gathers them, and of one microbatch's forward and backward)
// bounds the largest device's from below, over the fastest link the ring may cross in
// any placement (gatherLink) without its latency, the all-reduce's gradients in the
// bytes they cross in (deepspeed-bf16's in bf16). It counts where core costs the
// communication so: ZeRO 0 to 2 without HSDP, d >= 2 replicas, no routed experts (their
// own groups), each layer's recomputation fixed (auto's passes are those its plan picks);
// elsewhere 0.
func (r *Evaluator) exposedBound(c search.Candidate, x *terms) float64 {
	if x.est == nil || c.ZeRO > 2 || c.ShardGroup > 0 || c.Data < 2 || c.Recompute == request.RecomputeAuto ||
		r.base.Cluster.FreeTransfers || x.est.Total.DeviceExpertParams > 0 {
		return 0
	}
	link, ok := r.gatherLink(c.Config)
	if !ok {
		return 0
	}
	link.LatencySeconds = 0
	n := c.Data * max(1, c.Context)
	s := x.dataParallelOf()
	p := float64(c.Pipeline)
	grads, weights, forward, backward := s[0]/p, s[1]/p, s[2]/p, s[3]/p
	if c.ZeRO == 0 {
		// The all-reduce moves the gradients as communicated (deepspeed-bf16: its fp32
		// gradients in bf16, analytic.Precision.CommunicatedGradBytes), as core prices it.
		grads = float64(x.est.Opts.Precision.CommunicatedGradBytes(int64(s[0]))) / p
		return request.DataParallelExposedSeconds(r.framework, cluster.RingAllReduceSeconds(link, grads, n), 0, backward, forward, 1, r.collectiveShare)
	}
	times := 1
	if c.ZeRO == 2 {
		times = c.Microbatches
	}
	return request.DataParallelExposedSeconds(r.framework, cluster.RingReduceScatterSeconds(link, grads, n),
		cluster.RingAllGatherSeconds(link, weights, n), backward, forward, times, r.collectiveShare)
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
		if !x.optSet {
			x.opt[0], x.opt[1] = x.est.OptimizerSeconds(0, len(x.est.Layers)-1)
			x.optSet = true
		}
		device, host := x.opt[0], x.opt[1]
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
