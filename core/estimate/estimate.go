// Package estimate says what a contiguous range of layers costs when it runs as one
// pipeline stage on one device: compute time, memory (always-alive and peak
// not-always-alive parts) and the transfers in and out.
//
// The method is Graphcore's auto-pipeline tool's range estimator. After O(n) preparation (prefix sums, and a
// difference array for the tensors carried across layers), compute, transfer and every
// memory term but the shared items cost O(1) per range; shared items (counted once per
// range, with the size first seen) cost O(keys) per layer added when a Scanner grows a
// range one layer at a time, which is how the partitioner walks ranges.
package estimate

import (
	"fmt"
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Options changes how ranges are costed.
type Options struct {
	// MemoryProportion scales every device's memory limit (Graphcore's auto-pipeline tool's memoryProportion),
	// in (0, 1]; 0 means 1, so that the zero Options plan with all the memory. Front ends
	// that take the proportion from people refuse 0 themselves (it reads as "none").
	MemoryProportion float64
	// Inference ignores backward times and keeps no activations for a backward pass.
	Inference bool
	// InFlight returns how many microbatches' activations stage i holds at once in
	// training (the schedule decides: all m for GPipe, min(p-i, m) for 1F1B). Nil: 1.
	InFlight func(stage int) int
	// Recompute stashes only each stage's input for the microbatches in flight and
	// rebuilds activations in the backward pass (the peak of one microbatch remains).
	Recompute bool
	// OptimizerTempBytes, when set, is what the optimizer step allocates beside the
	// state for the parameters of layers [first, last] (torch.optim's foreach AdamW: one
	// fp32 temporary per parameter). The step runs once the passes are done and their
	// activations freed, so a stage's allocated peak is its always-alive memory plus the
	// larger of the passes' peak and this: the maximum over the step. It must not
	// decrease as a range grows, and should cost O(1) (prefix sums). Nil: none.
	OptimizerTempBytes func(first, last int) int64
	// FixedBytes is device memory the framework holds on every stage outside the
	// model's tensors (the CUDA context, library workspaces, communication buffers), and
	// AllocatorReserve the fraction of a stage's allocated peak that the caching
	// allocator keeps reserved beyond it (cluster.Framework). Both count in a stage's
	// memory, which its device's whole limit then holds: the model's tensors may fill
	// the limit less these. 0: none (a measured profile's memory is what it measured).
	FixedBytes       int64
	AllocatorReserve float64
}

// Estimator costs ranges of one model on one cluster.
type Estimator struct {
	m    *model.Model
	c    *cluster.Cluster
	opt  Options
	n, p int

	time      []float64       // prefix sums of forward (+ backward in training) time
	static    []int64         // prefix sums of param + optimizer + exclusive bytes
	act       []int64         // prefix sums of activation bytes
	peakAt    []int64         // temp + carry + act[l]: peak(a, b) = max peakAt[a..b] - act[a]
	recvBytes []int64         // bytes a stage starting at layer a receives
	sendBytes []int64         // bytes a stage ending at layer b sends
	recvLink  []*cluster.Link // per stage: the link it receives over (nil: free)
	sendLink  []*cluster.Link // per stage: the link it sends over (nil: free)
	recvCost  []linkCost      // per stage: recvLink's time, worked out once
	sendCost  []linkCost
	cutOK     []bool    // cutOK[k]: a stage may start at layer k (no tie group spans the cut)
	scale     []float64 // time scale per stage (device speed)
	limit     []int64   // memory limit per stage
	inFlight  []int64   // microbatches in flight per stage
	hostTime  float64   // both host transfers, when the cluster's HostEveryStage is set

	peak maxTable // range maxima of peakAt

	// Shared items: layer l's are entries[entryAt[l]:entryAt[l+1]], keys interned.
	entryAt  []int32
	entries  []entry
	keyMin   []int64  // smallest size of each key anywhere (for lower bounds)
	keyMax   int64    // sum over keys of their largest size (for upper bounds)
	itemSum  []int64  // prefix sums over layers of their shared items' sizes
	keys     []string // interned key names
	monotone bool     // memory never decreases as a range grows (see MemoryMonotone)
}

// entry is one shared item of a layer: its key, its size there, and the index in entries
// of the key's next item (in a later layer), or -1.
type entry struct {
	key, next int32
	size      int64
}

// New prepares an estimator: O(n + tensors + shared items). The model and cluster must
// have passed their Validate; errors here concern how the two fit together.
func New(m *model.Model, c *cluster.Cluster, opt Options) (*Estimator, error) {
	if opt.MemoryProportion == 0 {
		opt.MemoryProportion = 1
	}
	if p := opt.MemoryProportion; math.IsNaN(p) || p <= 0 || p > 1 {
		return nil, &model.FieldError{Path: "memory_proportion", Reason: fmt.Sprintf("must be in (0, 1], got %v", p)}
	}
	if r := opt.AllocatorReserve; !(r >= 0 && r <= 1) {
		return nil, &model.FieldError{Path: "allocator_reserve", Reason: fmt.Sprintf("must be in [0, 1], got %v", r)}
	}
	if f := opt.FixedBytes; f < 0 || f > cluster.MaxMemoryBytes {
		return nil, &model.FieldError{Path: "fixed_bytes", Reason: fmt.Sprintf("must be between 0 and %d, got %d", int64(cluster.MaxMemoryBytes), f)}
	}
	n, p := len(m.Layers), len(c.Devices)
	e := &Estimator{m: m, c: c, opt: opt, n: n, p: p}
	if m.Unit() == model.Cycles {
		for i, d := range c.Devices {
			if d.ClockHz <= 0 && e.hasLink(i) {
				return nil, &model.FieldError{Path: fmt.Sprintf("devices[%d].clock_hz", i),
					Reason: "is needed to express transfer times in cycles, as the model's times are"}
			}
		}
		for i, d := range c.Devices {
			if c.Devices[0].ClockHz <= 0 && d.ClockHz > 0 && (c.RecvLink(i) != nil || c.SendLink(i) != nil) {
				return nil, &model.FieldError{Path: "devices[0].clock_hz",
					Reason: fmt.Sprintf("is needed to express device %d's transfer cycles in device 0's cycles, the unit of the plan", i)}
			}
		}
	}
	e.scale = make([]float64, p)
	e.limit = make([]int64, p)
	e.inFlight = make([]int64, p)
	for i := range c.Devices {
		e.scale[i] = c.SpeedScale(i)
		e.limit[i] = c.Devices[i].MemoryLimitBytes(opt.MemoryProportion)
		e.inFlight[i] = 1
		if opt.InFlight != nil && !opt.Inference {
			e.inFlight[i] = int64(max(1, opt.InFlight(i)))
		}
	}
	if err := e.checkByteTotal(); err != nil {
		return nil, err
	}
	e.prepareSums()
	if err := e.checkComputeTimes(); err != nil {
		return nil, err
	}
	e.prepareTensors()
	e.prepareTies()
	e.prepareShared()
	if err := e.prepareLinks(); err != nil {
		return nil, err
	}
	return e, nil
}

// CarryBytes is the memory of earlier tensors alive across layer l that a range holding
// it keeps beside its own activations: the tensors carried over it from their producers
// to later consumers, and its stated carry-over bytes (what every range's peak adds to
// the layer's temporary and the activations accumulated before it).
func (e *Estimator) CarryBytes(l int) int64 {
	return e.peakAt[l] - e.m.Layers[l].TemporaryBytes - e.act[l]
}

// InputBytes is what a stage whose first layer is a receives: what recomputing whole
// stages (Options.Recompute) keeps per microbatch in flight.
func (e *Estimator) InputBytes(a int) int64 { return e.recvBytes[a] }

// Layers is the number of layers.
func (e *Estimator) Layers() int { return e.n }

// Stages is the number of pipeline stages (devices).
func (e *Estimator) Stages() int { return e.p }

// Unit is the unit of compute and transfer times: the model's.
func (e *Estimator) Unit() model.TimeUnit { return e.m.Unit() }

// CutAllowed reports whether a stage may start at layer k, 0 <= k <= n: no tie group has
// layers on both sides of the cut before k.
func (e *Estimator) CutAllowed(k int) bool { return e.cutOK[k] }

// LimitBytes is the memory limit of stage i.
func (e *Estimator) LimitBytes(i int) int64 { return e.limit[i] }

// AllocatableBytes is what stage i's model tensors may allocate at most: the largest
// allocated peak whose device memory (with the allocator's reserve and the framework's
// fixed memory) fits the stage's limit; the limit itself without a framework, 0 when
// the fixed memory alone exceeds it.
func (e *Estimator) AllocatableBytes(i int) int64 {
	limit := e.limit[i]
	a := limit - e.opt.FixedBytes
	if a <= 0 {
		return 0
	}
	a = int64(float64(a) / (1 + e.opt.AllocatorReserve))
	for a > 0 && e.device(a) > limit {
		a--
	}
	for a < limit && e.device(a+1) <= limit {
		a++
	}
	return a
}

// Inference reports whether ranges are costed for inference (forward passes only).
func (e *Estimator) Inference() bool { return e.opt.Inference }

// InFlight is the number of microbatches whose activations stage i holds.
func (e *Estimator) InFlight(i int) int { return int(e.inFlight[i]) }

// Compute is the time of layers [a, b] on stage i, forward plus backward in training, in
// the model's unit, scaled by the device's speed: (Prefix(b+1) - Prefix(a)) * Scale(i).
func (e *Estimator) Compute(i, a, b int) float64 {
	return (e.time[b+1] - e.time[a]) * e.scale[i]
}

// Prefix is the time of layers [0, k) on device 0, forward plus backward in training, in
// the model's unit.
func (e *Estimator) Prefix(k int) float64 { return e.time[k] }

// Scale is how much longer stage i's device takes than device 0 for the same work.
func (e *Estimator) Scale(i int) float64 { return e.scale[i] }

// MemoryUpper returns parts that bound those of layers [a, b] (see Scanner.Memory) from
// above, in O(1): the range's shared items are counted at most once per item and at most
// at each key's largest size; the rest is exact.
func (e *Estimator) MemoryUpper(a, b int) (base, stash, floor int64) {
	shared := min(e.keyMax, e.itemSum[b+1]-e.itemSum[a])
	always := e.static[b+1] - e.static[a] + shared
	base = always + model.WorkingPeakBytes(e.peak.max(a, b)-e.act[a], e.act[b+1]-e.act[a])
	floor = always + e.optimizerTemp(a, b)
	if e.opt.Recompute {
		return base, e.recvBytes[a], floor
	}
	return base, e.act[b+1] - e.act[a], floor
}

// MemoryMonotone reports whether a range's memory never decreases as the range grows, so
// that a Scanner's Lower gives the memory its Memory does on every stage: every shared key has one size throughout the
// model, and recomputation (whose stash is the stage's input, which a longer range may
// have smaller) does not combine with more than one microbatch in flight.
func (e *Estimator) MemoryMonotone() bool { return e.monotone }
