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
	"sort"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/units"
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

// maxTime bounds every compute and transfer time of a range, in the model's unit: far
// beyond any real time (1e100 seconds), and low enough that sums of stage times and of
// their squares (the partitioner's tie-break) stay finite. Finite but extreme inputs (times
// near math.MaxFloat64, speed ratios of 1e300, bandwidths of 1e-300) would otherwise give
// infinite or NaN costs, which no split can be compared by.
const maxTime = 1e100

// checkComputeTimes requires the model's total time to be within maxTime on every device.
// Compute of any range is at most the total times the device's speed scale.
func (e *Estimator) checkComputeTimes() error {
	total, unit := e.time[e.n], e.m.Unit()
	if !(total <= maxTime) { // also NaN and +Inf
		return &model.FieldError{Path: "layers", Reason: fmt.Sprintf("times add up to %.3g %s, more than %g: check the units", total, unit, maxTime)}
	}
	field := e.c.SpeedField()
	for i, s := range e.scale {
		path := fmt.Sprintf("devices[%d].%s", i, field)
		switch {
		case !(s > 0) || math.IsInf(s, 0):
			return &model.FieldError{Path: path, Reason: fmt.Sprintf("makes device %d %.3g times as slow as device 0, which must be a finite ratio > 0: check the units", i, s)}
		case !(total*s <= maxTime):
			return &model.FieldError{Path: path, Reason: fmt.Sprintf("makes device %d %.3g times as slow as device 0: the model's layers would take it %.3g %s, more than %g: check the units", i, s, total*s, unit, maxTime)}
		}
	}
	return nil
}

// maxByteTotal bounds the model's byte total times (microbatches in flight + 1): 2^62
// bytes, 4 EiB.
const maxByteTotal = 1 << 62

// checkByteTotal keeps every memory sum the estimator forms within int64. A range's memory
// adds up distinct byte counts of the model (parameters, optimizer state, exclusive,
// shared, temporary, carried and activation bytes, tensors) plus in flight - 1 times its
// activations or input, so it is at most (in flight) times B, the sum of every byte count
// of the model. Requiring B * (most in flight + 1) <= 2^62 leaves every sum, lower bound
// and difference below 2^62. model.Validate bounds each count by 2^60, not their sum.
func (e *Estimator) checkByteTotal() error {
	var most int64 = 1
	for _, k := range e.inFlight {
		most = max(most, k)
	}
	limit := int64(0)
	if most < maxByteTotal {
		limit = maxByteTotal / (most + 1)
	}
	var sum int64
	add := func(v int64) { // saturates just above limit; counts are >= 0 once validated
		if v > 0 {
			sum += min(v, limit+1-sum)
		}
	}
	for _, t := range e.m.Inputs {
		add(t.Bytes)
	}
	for i := range e.m.Layers {
		l := &e.m.Layers[i]
		for _, v := range []int64{l.ParamBytes, l.OptimizerBytes, l.ExclusiveBytes, l.TemporaryBytes, l.ActivationBytes, l.CarryOverBytes} {
			add(v)
		}
		if l.RecvBytes != nil {
			add(*l.RecvBytes)
		}
		if l.SendBytes != nil {
			add(*l.SendBytes)
		}
		for _, v := range l.Shared {
			add(v)
		}
		for _, t := range l.Outputs {
			add(t.Bytes)
		}
	}
	if sum <= limit {
		return nil
	}
	reason := fmt.Sprintf("byte counts add up to more than %s: check the units", units.Bytes(limit))
	if most > 1 {
		reason = fmt.Sprintf("byte counts add up to more than %s, which %d microbatches in flight could multiply beyond 4 EiB: check the units", units.Bytes(limit), most)
	}
	return &model.FieldError{Path: "layers", Reason: reason}
}

// prepareLinks notes each stage's receive and send links and refuses a link that takes
// more than maxTime (or an infinite time) to move some transfer: O(n + p), no table of
// stages x layers. A link's time only grows with the bytes it moves, so a stage's largest
// transfer decides; only when it is too slow are the cuts scanned, in order, for the first
// transfer that is, so that the error names the same one a scan of every cut would.
func (e *Estimator) prepareLinks() error {
	n, p := e.n, e.p
	e.recvLink = make([]*cluster.Link, p)
	e.sendLink = make([]*cluster.Link, p)
	e.recvCost = make([]linkCost, p)
	e.sendCost = make([]linkCost, p)
	for i := range p {
		e.recvLink[i], e.sendLink[i] = e.c.RecvLink(i), e.c.SendLink(i)
		e.recvCost[i], e.sendCost[i] = e.newLinkCost(e.recvLink[i], i), e.newLinkCost(e.sendLink[i], i)
	}
	if n == 0 || p == 0 {
		return nil
	}
	// check reports whether link l of stage i moves bytes within maxTime, and if not
	// returns the field error naming it.
	check := func(l *cluster.Link, field string, bytes int64, i int) error {
		if t := e.linkTime(l, bytes, i); !(t <= maxTime) { // also NaN and +Inf
			return &model.FieldError{Path: field, Reason: fmt.Sprintf("takes %.3g %s to move %d bytes for device %d, more than %g: check its bandwidth and the units",
				t, e.m.Unit(), bytes, i, maxTime)}
		}
		return nil
	}
	if e.c.HostEveryStage {
		if err := check(e.recvLink[0], e.c.RecvLinkField(0), e.recvBytes[0], 0); err != nil {
			return err
		}
		if err := check(e.sendLink[p-1], e.c.SendLinkField(p-1), e.sendBytes[n-1], p-1); err != nil {
			return err
		}
		e.hostTime = e.linkTime(e.recvLink[0], e.recvBytes[0], 0) + e.linkTime(e.sendLink[p-1], e.sendBytes[n-1], p-1)
	}
	var maxRecv, maxSend int64
	for l := range n {
		maxRecv, maxSend = max(maxRecv, e.recvBytes[l]), max(maxSend, e.sendBytes[l])
	}
	for i := range p {
		recvField, sendField := e.c.RecvLinkField(i), e.c.SendLinkField(i)
		// The bytes stage i may receive and send: what any cut moves, or only the model's
		// input and output at the ends of the pipeline.
		in, out := maxRecv, maxSend
		recvAll, sendAll := true, true
		switch {
		case e.c.HostEveryStage:
			// Exchanges with neighbour stages only; the host terms are checked above.
			recvAll, sendAll = i > 0, i < p-1
		default:
			if i == 0 {
				in, recvAll = e.recvBytes[0], false
			}
			if i == p-1 {
				out, sendAll = e.sendBytes[n-1], false
			}
		}
		recvOK := !recvAll && e.c.HostEveryStage || check(e.recvLink[i], recvField, in, i) == nil
		sendOK := !sendAll && e.c.HostEveryStage || check(e.sendLink[i], sendField, out, i) == nil
		if recvOK && sendOK {
			continue
		}
		for l := range n {
			switch {
			case recvAll:
				if err := check(e.recvLink[i], recvField, e.recvBytes[l], i); err != nil {
					return err
				}
			case !recvOK:
				return check(e.recvLink[i], recvField, in, i)
			}
			switch {
			case sendAll:
				if err := check(e.sendLink[i], sendField, e.sendBytes[l], i); err != nil {
					return err
				}
			case !sendOK:
				return check(e.sendLink[i], sendField, out, i)
			}
		}
	}
	return nil
}

func (e *Estimator) hasLink(i int) bool {
	l1, l2 := e.c.RecvLink(i), e.c.SendLink(i)
	return (l1 != nil && !l1.CyclesStyle()) || (l2 != nil && !l2.CyclesStyle())
}

func (e *Estimator) prepareSums() {
	n := e.n
	e.time = make([]float64, n+1)
	e.static = make([]int64, n+1)
	e.act = make([]int64, n+1)
	for i := range e.m.Layers {
		l := &e.m.Layers[i]
		t := e.m.Forward(i)
		if !e.opt.Inference {
			t += e.m.Backward(i)
		}
		e.time[i+1] = e.time[i] + t
		e.static[i+1] = e.static[i] + l.ParamBytes + l.OptimizerBytes + l.ExclusiveBytes
		a := l.ActivationBytes
		if e.opt.Inference {
			// In inference an activation lives only until its consumers ran; the tensor
			// graph (carry-over) accounts for that, so nothing accumulates.
			a = 0
		}
		e.act[i+1] = e.act[i] + a
	}
}

// prepareTensors finds, from each tensor's producer and last consumer, the bytes carried
// across each layer and crossing each cut, with difference arrays and prefix sums (Graphcore's auto-pipeline tool).
func (e *Estimator) prepareTensors() {
	n := e.n
	type span struct {
		producer, lastUse int
		bytes             int64
	}
	// A tensor is found by its id, as an index into order: one map of n entries sized at
	// once, not n spans allocated one by one.
	spans := make(map[string]int, len(e.m.Inputs)+n)
	order := make([]span, 0, len(e.m.Inputs)+n)
	var hostIn int64
	for _, t := range e.m.Inputs {
		spans[t.ID] = len(order)
		order = append(order, span{producer: -1, lastUse: -1, bytes: t.Bytes})
		hostIn += t.Bytes
	}
	for i, l := range e.m.Layers {
		for _, id := range l.InputIDs {
			k, ok := len(order)-1, e.m.FromPrevious(i, id)
			if !ok { // not the previous layer's output (most are): look it up
				k, ok = spans[id]
			}
			if ok && i > order[k].lastUse {
				order[k].lastUse = i
			}
		}
		for _, t := range l.Outputs {
			spans[t.ID] = len(order)
			order = append(order, span{producer: i, lastUse: -1, bytes: t.Bytes})
		}
	}
	carry := make([]int64, n+1) // layers strictly between producer and last use
	cross := make([]int64, n+2) // cuts k with producer < k <= lastUse
	var hostOut int64
	for _, s := range order {
		if s.lastUse < 0 {
			if s.producer >= 0 {
				hostOut += s.bytes // never consumed: a model output
			}
			continue
		}
		if s.lastUse-s.producer > 1 {
			carry[s.producer+1] += s.bytes
			carry[s.lastUse] -= s.bytes
		}
		cross[s.producer+1] += s.bytes
		cross[s.lastUse+1] -= s.bytes
	}
	e.peakAt = make([]int64, n)
	defer func() { e.peak = newMaxTable(e.peakAt) }()
	e.recvBytes = make([]int64, n)
	e.sendBytes = make([]int64, n)
	var run, cut int64
	cuts := make([]int64, n+1)
	for k := 0; k <= n; k++ {
		cut += cross[k]
		cuts[k] = cut
	}
	for i, l := range e.m.Layers {
		run += carry[i]
		e.peakAt[i] = l.TemporaryBytes + l.CarryOverBytes + run + e.act[i]
		e.recvBytes[i] = cuts[i]
		if i == 0 {
			e.recvBytes[i] = hostIn
		}
		if l.RecvBytes != nil {
			e.recvBytes[i] = *l.RecvBytes
		}
		if i+1 < n {
			e.sendBytes[i] = cuts[i+1]
		} else {
			e.sendBytes[i] = hostOut
		}
		if l.SendBytes != nil {
			e.sendBytes[i] = *l.SendBytes
		}
	}
}

// prepareTies marks the cuts no tie group spans: a range keeps a group whole exactly when
// neither of its two cuts falls inside the group's first..last occurrence.
func (e *Estimator) prepareTies() {
	first, last := map[string]int{}, map[string]int{}
	for i, l := range e.m.Layers {
		if l.TieGroup == "" {
			continue
		}
		if _, ok := first[l.TieGroup]; !ok {
			first[l.TieGroup] = i
		}
		last[l.TieGroup] = i
	}
	inside := make([]int, e.n+2)
	for g, f := range first {
		inside[f+1]++
		inside[last[g]+1]--
	}
	e.cutOK = make([]bool, e.n+1)
	run := 0
	for k := 0; k <= e.n; k++ {
		run += inside[k]
		e.cutOK[k] = run == 0
	}
}

func (e *Estimator) prepareShared() {
	ids := map[string]int32{}
	e.entryAt = make([]int32, e.n+1)
	var last []int32 // per key, its latest entry so far
	varying := false
	var names []string
	for i, l := range e.m.Layers {
		e.entryAt[i] = int32(len(e.entries))
		names = names[:0]
		for k := range l.Shared {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			size := l.Shared[k]
			id, ok := ids[k]
			if !ok {
				id = int32(len(e.keys))
				ids[k] = id
				e.keys = append(e.keys, k)
				e.keyMin = append(e.keyMin, size)
				last = append(last, -1)
			}
			varying = varying || size != e.keyMin[id] && ok
			e.keyMin[id] = min(e.keyMin[id], size)
			if last[id] >= 0 {
				e.entries[last[id]].next = int32(len(e.entries))
			}
			last[id] = int32(len(e.entries))
			e.entries = append(e.entries, entry{key: id, next: -1, size: size})
		}
	}
	e.entryAt[e.n] = int32(len(e.entries))
	e.itemSum = make([]int64, e.n+1)
	for l := range e.n {
		e.itemSum[l+1] = e.itemSum[l]
		for _, en := range e.entries[e.entryAt[l]:e.entryAt[l+1]] {
			e.itemSum[l+1] += en.size
		}
	}
	largest := make([]int64, len(e.keys))
	for _, en := range e.entries {
		largest[en.key] = max(largest[en.key], en.size)
	}
	for _, v := range largest {
		e.keyMax += v
	}
	e.monotone = !varying
	if e.opt.Recompute {
		for _, k := range e.inFlight {
			e.monotone = e.monotone && k == 1
		}
	}
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
	base = always + e.peak.max(a, b) - e.act[a]
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

// Transfer is the time stage i holding [a, b] spends receiving its input (from the host
// when it is the first stage) and sending its output (to the host when it is the last),
// in the model's unit. In cycles, each term is counted in the cycles of the device doing
// it and truncated as Graphcore's auto-pipeline tool does, then expressed in device 0's cycles (times
// clock_0 / clock_i), the unit compute is stated in: on devices with different clocks the
// two add up.
//
// When the cluster's HostEveryStage is set, every stage's transfer is its exchange with
// its neighbour stages plus both host terms (the first device receiving layer 0's input,
// the last device sending the last layer's output), exactly as Graphcore's auto-pipeline tool counts it.
func (e *Estimator) Transfer(i, a, b int) float64 {
	return e.Recv(i, a) + e.Send(i, b)
}

// Recv is the part of Transfer that depends on the range's first layer a: stage i
// receiving its input (with HostEveryStage, also both host terms). O(1).
func (e *Estimator) Recv(i, a int) float64 {
	if e.c.HostEveryStage {
		t := e.hostTime
		if i > 0 {
			t += e.recvCost[i].time(e.recvBytes[a])
		}
		return t
	}
	if i == 0 {
		a = 0 // the first stage receives the model's input
	}
	return e.recvCost[i].time(e.recvBytes[a])
}

// Send is the part of Transfer that depends on the range's last layer b: stage i sending
// its output. O(1).
func (e *Estimator) Send(i, b int) float64 {
	switch {
	case e.c.HostEveryStage && i == e.p-1:
		return 0 // counted in every stage's Recv
	case i == e.p-1:
		b = e.n - 1 // the last stage sends the model's output
	}
	return e.sendCost[i].time(e.sendBytes[b])
}

func (e *Estimator) linkTime(l *cluster.Link, bytes int64, i int) float64 {
	if l == nil {
		return 0
	}
	clock := e.c.Devices[i].ClockHz
	if e.m.Unit() == model.Cycles {
		c := float64(l.Cycles(bytes, clock))
		if clock0 := e.c.Devices[0].ClockHz; clock != clock0 {
			c *= clock0 / clock // device i's cycles in device 0's
		}
		return c
	}
	return l.Seconds(bytes, clock)
}

// linkCost is linkTime for one link of one stage, with the constants worked out once:
// the same operations on the same values, so the same result to the bit, without the
// lookups (Recv and Send run in the partitioner's inner loops).
type linkCost struct {
	kind        uint8 // 0: no link; 1: latency and bandwidth; 2: Graphcore's GBps and idle cycles
	cycles      bool  // the model's unit is cycles
	scaled      bool  // cycles to be stated in device 0's: times ratio
	latency, bw float64
	idle, denom float64 // idle cycles; GBps * GiB / clock
	clock       float64
	ratio       float64 // clock_0 / clock
}

func (e *Estimator) newLinkCost(l *cluster.Link, i int) linkCost {
	if l == nil {
		return linkCost{}
	}
	clock := e.c.Devices[i].ClockHz
	lc := linkCost{kind: 1, cycles: e.m.Unit() == model.Cycles, latency: l.LatencySeconds, bw: l.BytesPerSecond, clock: clock}
	if l.CyclesStyle() {
		lc.kind, lc.idle, lc.denom = 2, float64(l.IdleCycles), l.GBps*cluster.GiB/clock
	}
	if clock0 := e.c.Devices[0].ClockHz; lc.cycles && clock != clock0 {
		lc.scaled, lc.ratio = true, clock0/clock
	}
	return lc
}

// time is linkTime(l, n, i): cluster.Link's Seconds or Cycles, in device 0's cycles when
// the model's unit is cycles.
func (lc *linkCost) time(n int64) float64 {
	switch lc.kind {
	case 0:
		return 0
	case 1:
		t := lc.latency
		if n > 0 && lc.bw > 0 {
			t += float64(n) / lc.bw
		}
		if !lc.cycles {
			return t
		}
		return lc.scale(float64(truncCycles(t * lc.clock)))
	}
	c := lc.idle
	if n > 0 && lc.denom > 0 {
		c += float64(n) / lc.denom
	}
	c = float64(truncCycles(c))
	if !lc.cycles {
		return c / lc.clock
	}
	return lc.scale(c)
}

func (lc *linkCost) scale(c float64) float64 {
	if lc.scaled {
		c *= lc.ratio
	}
	return c
}

// truncCycles is cluster's: a cycle count truncated to an integer, saturating at
// math.MaxInt64.
func truncCycles(c float64) int64 {
	if !(c < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(c)
}

// Range is the full cost breakdown of layers [First, Last] on stage Stage.
type Range struct {
	Stage, First, Last int
	// Compute and Transfer are in the model's time unit.
	Compute, Transfer float64
	// RecvBytes and SendBytes are the stage's input and output transfers.
	RecvBytes, SendBytes int64
	// Always-alive memory: parameters, optimizer state, exclusive, and shared items
	// counted once per range.
	ParamBytes, OptimizerBytes, ExclusiveBytes, SharedBytes int64
	// PeakBytes is the not-always-alive peak of one microbatch: the largest over the
	// range's layers of (temporary + carried tensors + activations accumulated so far).
	PeakBytes int64
	// ActivationBytes is what one microbatch leaves alive for the backward pass.
	ActivationBytes int64
	// StashBytes is what the other microbatches in flight keep: (in flight - 1) times
	// ActivationBytes, or times RecvBytes under recomputation.
	StashBytes int64
	// OptimizerTempBytes is what the optimizer step allocates for the range's parameters
	// (Options.OptimizerTempBytes); the stage's allocated peak is the always-alive memory
	// plus the larger of PeakBytes + StashBytes (the passes) and this (the step).
	OptimizerTempBytes int64
	// FrameworkBytes is the framework's fixed memory (Options.FixedBytes);
	// ReservedBytes what the caching allocator holds beyond the allocated peak
	// (Options.AllocatorReserve of it, rounded up).
	FrameworkBytes, ReservedBytes int64
	// MemoryBytes is the total: the allocated peak, ReservedBytes and FrameworkBytes;
	// LimitBytes the device's limit.
	MemoryBytes, LimitBytes int64
	// InFlight is the number of microbatches whose activations the stage holds.
	InFlight int
}

// Fits reports whether the range fits its device's memory.
func (r Range) Fits() bool { return r.MemoryBytes <= r.LimitBytes }

// Range costs layers [a, b] on stage i directly (O(b - a)), without a Scanner. Results
// agree exactly with a Scanner's.
func (e *Estimator) Range(i, a, b int) Range {
	r := Range{Stage: i, First: a, Last: b, InFlight: int(e.inFlight[i]), LimitBytes: e.limit[i]}
	r.Compute = e.Compute(i, a, b)
	r.Transfer = e.Transfer(i, a, b)
	r.RecvBytes, r.SendBytes = e.recvBytes[a], e.sendBytes[b]
	if i == 0 {
		r.RecvBytes = e.recvBytes[0]
	}
	if i == e.p-1 {
		r.SendBytes = e.sendBytes[e.n-1]
	}
	seen := map[int32]bool{}
	var peak int64
	for l := a; l <= b; l++ {
		layer := &e.m.Layers[l]
		r.ParamBytes += layer.ParamBytes
		r.OptimizerBytes += layer.OptimizerBytes
		r.ExclusiveBytes += layer.ExclusiveBytes
		for _, en := range e.entries[e.entryAt[l]:e.entryAt[l+1]] {
			if !seen[en.key] {
				seen[en.key] = true
				r.SharedBytes += en.size
			}
		}
		peak = max(peak, e.peakAt[l])
	}
	r.PeakBytes = peak - e.act[a]
	r.ActivationBytes = e.act[b+1] - e.act[a]
	r.StashBytes = e.stash(i, a, r.ActivationBytes)
	r.OptimizerTempBytes = e.optimizerTemp(a, b)
	alloc := r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes + max(r.PeakBytes+r.StashBytes, r.OptimizerTempBytes)
	r.ReservedBytes = e.reserve(alloc)
	r.FrameworkBytes = e.opt.FixedBytes
	r.MemoryBytes = e.device(alloc)
	return r
}

// maxOptimizerTemp bounds the optimizer's temporaries of a range (2^60 bytes, as
// model.Validate bounds every byte count), keeping every sum within int64.
const maxOptimizerTemp = 1 << 60

// optimizerTemp is Options.OptimizerTempBytes of layers [a, b], clamped to [0, 2^60].
func (e *Estimator) optimizerTemp(a, b int) int64 {
	if e.opt.OptimizerTempBytes == nil || e.opt.Inference {
		return 0
	}
	return min(max(0, e.opt.OptimizerTempBytes(a, b)), maxOptimizerTemp)
}

// reserve is the caching allocator's reserve beyond an allocated peak: AllocatorReserve
// of it, rounded up.
func (e *Estimator) reserve(alloc int64) int64 {
	if e.opt.AllocatorReserve == 0 || alloc <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(alloc) * e.opt.AllocatorReserve))
}

// DeviceBytes is the device memory a stage whose allocated peak is alloc needs: with the
// allocator's reserve and the framework's fixed memory.
func (e *Estimator) DeviceBytes(alloc int64) int64 { return e.device(alloc) }

// device is the device memory a stage with that allocated peak needs: the peak, the
// allocator's reserve and the framework's fixed memory, saturating at math.MaxInt64
// (allocated peaks are below 2^62 + 2^60 with the temporaries, the reserve at most as
// much, the fixed memory at most 2^60: the reserve and the fixed memory add up within
// int64, the peak with them may not).
func (e *Estimator) device(alloc int64) int64 {
	extra := e.reserve(alloc) + e.opt.FixedBytes
	if alloc > math.MaxInt64-extra {
		return math.MaxInt64
	}
	return alloc + extra
}

func (e *Estimator) stash(i, a int, activation int64) int64 {
	k := e.inFlight[i] - 1
	if e.opt.Recompute {
		return k * e.recvBytes[a]
	}
	return k * activation
}
