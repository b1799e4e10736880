package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"pipeplan/core/model"
)

// op is one operation of the schedule graph. Barriers (lockstep schedules) are ops on the
// pseudo-device D with no duration.
type op struct {
	kind    OpKind
	stage   int32
	mb      int32 // -1: a dummy input
	step    int32 // -1: not lockstep
	dev     int32
	barrier bool
}

// graph is a schedule's operations and each device's order; dependencies are added by
// the simulation, which knows the transfer times.
type graph struct {
	cfg     Config
	S, D, m int
	ops     []op
	order   [][]int32  // per device, and order[D] for barriers
	index   [3][]int32 // by kind (F, B, W), then stage*m + microbatch: the op, or -1
	stepOps [][]int32  // lockstep schedules: the ops of each step
	barrier []int32    // lockstep schedules: the barrier closing each step, or -1
	// visit, when set, receives each operation in the order the rules add it, and no
	// graph is stored: InFlight counts without building one.
	visit func(k OpKind, stage, mb int)
}

func kindIndex(k OpKind) int {
	switch k {
	case Backward:
		return 1
	case WeightGrad:
		return 2
	}
	return 0
}

// build orders every device's operations by the schedule's rule.
func build(cfg Config, stages int) (*graph, error) {
	if err := cfg.Validate(stages); err != nil {
		return nil, err
	}
	g := &graph{cfg: cfg, S: stages, D: cfg.Devices(stages), m: cfg.Microbatches}
	perStage := 2 * g.m // F and B per microbatch; ZB-H1 adds W, Overlap dummies
	if cfg.Kind == ZBH1 || cfg.Kind == Overlap {
		perStage = 3 * g.m
	}
	g.ops = make([]op, 0, g.S*perStage+g.m+2*g.D+2)
	g.order = make([][]int32, g.D+1)
	for d := 0; d < g.D; d++ {
		g.order[d] = make([]int32, 0, perStage*(g.S/g.D))
	}
	for k := range g.index {
		g.index[k] = make([]int32, g.S*g.m)
		for i := range g.index[k] {
			g.index[k][i] = -1
		}
	}
	g.orderOps()
	return g, nil
}

// orderOps adds every device's operations in the schedule's order.
func (g *graph) orderOps() {
	cfg := g.cfg
	p, m := g.D, g.m
	switch cfg.Kind {
	case GPipe:
		for d := 0; d < p; d++ {
			for j := 0; j < m; j++ {
				g.add(Forward, d, j, -1)
			}
			for j := 0; j < m; j++ {
				g.add(Backward, d, j, -1)
			}
		}
	case OneFOneB, ZBH1:
		for d := 0; d < p; d++ {
			g.oneFOneB(d, cfg.Kind == ZBH1)
		}
	case Interleaved:
		for d := 0; d < p; d++ {
			g.interleaved(d)
		}
	case IPU:
		g.ipu()
	case Overlap:
		g.overlap()
	case Inference:
		for d := 0; d < p; d++ {
			for j := 0; j < m; j++ {
				g.add(Forward, d, j, -1)
			}
		}
	}
}

// add appends the operation to its stage's device (or, when counting, only visits it).
func (g *graph) add(k OpKind, stage, mb, step int) {
	if g.visit != nil {
		g.visit(k, stage, mb)
		return
	}
	id := int32(len(g.ops))
	dev := stage % g.D
	g.ops = append(g.ops, op{kind: k, stage: int32(stage), mb: int32(mb), step: int32(step), dev: int32(dev)})
	g.order[dev] = append(g.order[dev], id)
	if mb >= 0 {
		g.index[kindIndex(k)][stage*g.m+mb] = id
	}
	if step >= 0 {
		for len(g.stepOps) <= step {
			g.stepOps = append(g.stepOps, nil)
		}
		g.stepOps[step] = append(g.stepOps[step], id)
	}
}

// closeStep adds the barrier that ends a lockstep step: the next step starts when every
// operation of this one has finished and sent its output.
func (g *graph) closeStep(step int) {
	if g.visit != nil {
		return
	}
	for len(g.barrier) <= step {
		g.barrier = append(g.barrier, -1)
	}
	id := int32(len(g.ops))
	g.ops = append(g.ops, op{stage: -1, mb: -1, step: int32(step), dev: int32(g.D), barrier: true})
	g.order[g.D] = append(g.order[g.D], id)
	g.barrier[step] = id
}

// oneFOneB orders device d as PipeDream-Flush: min(p-1-d, m) warm-up forwards, then one
// forward and one backward alternately, then the remaining backwards. With zb (ZB-H1, Qi
// et al. 2023, the handcrafted schedule of their section 2.1) the backward is the input
// gradient only, and the weight gradient of microbatch k-d follows the backward of
// microbatch k: device d delays its W passes by d microbatches, and the W passes still
// pending run at the end, filling what would be the drain bubble.
func (g *graph) oneFOneB(d int, zb bool) {
	p, m := g.D, g.m
	w := min(p-1-d, m)
	for j := 0; j < w; j++ {
		g.add(Forward, d, j, -1)
	}
	backward := func(k int) {
		g.add(Backward, d, k, -1)
		if zb && k >= d {
			g.add(WeightGrad, d, k-d, -1)
		}
	}
	for i := 0; i < m-w; i++ {
		g.add(Forward, d, w+i, -1)
		backward(i)
	}
	for k := m - w; k < m; k++ {
		backward(k)
	}
	if zb {
		for j := max(0, m-d); j < m; j++ {
			g.add(WeightGrad, d, j, -1)
		}
	}
}

// interleaved orders device d as Megatron-LM's interleaved 1F1B
// (forward_backward_pipelining_with_interleaving): the k-th forward runs chunk
// (k mod pv) / p on microbatch (k / pv) * p + k mod p, the k-th backward the same
// microbatch on chunk v-1 minus that; the warm-up is 2(p-d-1) + (v-1)p forwards, or all of
// them when m = p; then one forward and one backward alternately. In PyTorch's order
// (ScheduleInterleaved1F1B, Config.PyTorchOrder) the operations are the same (its
// forward_stage_index and backward_stage_index give these chunks with its
// microbatches_per_round = p for m a multiple of p), only the warm-up differs:
// interleavedWarm.
func (g *graph) interleaved(d int) {
	p, m, v := g.D, g.m, g.cfg.Chunks
	total := m * v
	warm := interleavedWarm(p, m, v, d, g.cfg.PyTorchOrder)
	at := func(k int, fwd bool) (stage, mb int) {
		c := k % (p * v) / p
		if !fwd {
			c = v - 1 - c
		}
		return c*p + d, k/(p*v)*p + k%p
	}
	forward := func(k int) { s, j := at(k, true); g.add(Forward, s, j, -1) }
	backward := func(k int) { s, j := at(k, false); g.add(Backward, s, j, -1) }
	for k := 0; k < warm; k++ {
		forward(k)
	}
	for k := 0; k < total-warm; k++ {
		forward(k + warm)
		backward(k)
	}
	for k := total - warm; k < total; k++ {
		backward(k)
	}
}

// interleavedWarm is the forwards device d of p runs before its first backward under
// Megatron-LM's interleaved 1F1B with v chunks and m microbatches: all m*v where m = p,
// else 2(p-d-1) + (v-1)p. Under PyTorch's ScheduleInterleaved1F1B (pytorch), m = p is
// no exception: its get_rank_warmup_ops gives (v-1)q + 2(p-1-d), capped at mv, with
// q = m / max(1, floor(m/p)) microbatches per round, which is p for every m that is a
// multiple of p (Validate requires one).
func interleavedWarm(p, m, v, d int, pytorch bool) int {
	if m == p && !pytorch {
		return m * v
	}
	return min(2*(p-d-1)+(v-1)*p, m*v)
}

// ipu orders the devices as Graphcore's pipeline (popxl's pipelining guide): 2p-1 pipeline stages, the
// forward of device d is pipeline stage d and its backward pipeline stage 2(p-1)-d; in
// cycle t, pipeline stage k works on microbatch t-k, so device d runs the forward of
// microbatch t-d and then the backward of microbatch t-2(p-1)+d. All devices move from one
// cycle to the next together (bulk-synchronous): m + 2(p-1) cycles.
func (g *graph) ipu() {
	p, m := g.D, g.m
	cycles := m + 2*(p-1)
	for t := 0; t < cycles; t++ {
		for d := 0; d < p; d++ {
			if j := t - d; j >= 0 && j < m {
				g.add(Forward, d, j, t)
			}
			if j := t - 2*(p-1) + d; j >= 0 && j < m {
				g.add(Backward, d, j, t)
			}
		}
		if t+1 < cycles {
			g.closeStep(t)
		}
	}
}

// overlap orders jax_tpu_embedding's SparseCore pipelining's three-phase pipeline: step i (0 <= i < n+2) runs, on the
// SparseCore (stage 0), the backward of batch i-2 and then the forward of batch i, while
// the TensorCore (stage 1) runs forward and backward of batch i-1. The first and last steps
// have no dense work (fake_tc_step); the last two feed the SparseCore forward dummy inputs,
// which it computes and discards (Microbatch -1).
func (g *graph) overlap() {
	n := g.m
	for i := 0; i < n+2; i++ {
		if i >= 2 {
			g.add(Backward, 0, i-2, i)
		}
		if i < n {
			g.add(Forward, 0, i, i)
		} else {
			g.add(Forward, 0, -1, i)
		}
		if i >= 1 && i <= n {
			g.add(Forward, 1, i-1, i)
			g.add(Backward, 1, i-1, i)
		}
		if i+1 < n+2 {
			g.closeStep(i)
		}
	}
}

// find returns the operation of kind k on stage s for microbatch j, or -1.
func (g *graph) find(k OpKind, s, j int) int32 {
	return g.index[kindIndex(k)][s*g.m+j]
}

// InFlight returns, for each of the given number of stages, the most microbatches whose
// activations the stage holds at once under the schedule: forward started, backward (B)
// not finished. It depends on the devices' orders only, not on times: GPipe gives m,
// 1F1B and ZB-H1 min(p-i, m), the IPU min(2(p-1-i)+1, m) (the stash FIFO of depth
// backward_stage - forward_stage plus the microbatch at work), Interleaved Megatron-LM's
// count for each chunk, and Inference 1. This is what core/estimate.Options.InFlight needs.
func InFlight(cfg Config, stages int) ([]int, error) {
	if err := cfg.Validate(stages); err != nil {
		return nil, err
	}
	most := make([]int, stages)
	// The closed forms of the rules below (tests check them against the counting).
	switch cfg.Kind {
	case GPipe, Inference:
		n := cfg.Microbatches
		if cfg.Kind == Inference {
			n = 1
		}
		for i := range most {
			most[i] = n
		}
		return most, nil
	case OneFOneB, ZBH1:
		for i := range most {
			most[i] = min(stages-i, cfg.Microbatches)
		}
		return most, nil
	}
	return inFlightCounted(steadyInterleaved(cfg, stages), stages), nil
}

// steadyInterleaved caps an interleaved schedule's microbatches at 3p where it has more
// (p devices; m a multiple of p, as Validate requires): the counts of InFlight and
// DeviceInFlight are the same for every m >= 3p, so counting 3p's operations gives
// them. Device d's order (graph.interleaved) runs w = 2(p-d-1) + (v-1)p forwards, then
// forward k+w and backward k for k < mv - w, then the backwards left. A chunk's
// forwards among the first n operations of their kind number p per pv plus a part
// that depends on n mod pv alone, and so do its backwards; so in the steady phase
// its microbatches in flight depend on k mod pv only, and every value they take is
// taken in its first pv steps, which mv - w >= pv ensures for m >= 3p (3pv >= w + pv
// as w < (v+1)p). The warm-up's forwards are the same for every such m and the
// backwards left only lower the counts. (m = p, where every forward comes first, is
// not capped.) TestInterleavedInFlightSteady checks the cap against counting every
// microbatch.
func steadyInterleaved(cfg Config, stages int) Config {
	if cfg.Kind != Interleaved || cfg.Chunks < 2 {
		return cfg
	}
	p := cfg.Devices(stages)
	if p >= 1 && cfg.Microbatches > 3*p && cfg.Microbatches%p == 0 {
		cfg.Microbatches = 3 * p
	}
	return cfg
}

// inFlightCounted is InFlight by counting the rules' operations.
func inFlightCounted(cfg Config, stages int) []int {
	// Each stage belongs to one device, so the order in which the rules add a stage's
	// operations is its device's order: count them as they come, storing nothing.
	cur := make([]int, stages)
	most := make([]int, stages)
	train := cfg.Training()
	g := &graph{cfg: cfg, S: stages, D: cfg.Devices(stages), m: cfg.Microbatches}
	g.visit = func(k OpKind, stage, mb int) {
		if mb < 0 {
			return
		}
		switch k {
		case Forward:
			cur[stage]++
			most[stage] = max(most[stage], cur[stage])
			if !train {
				cur[stage]--
			}
		case Backward:
			cur[stage]--
		}
	}
	g.orderOps()
	return most
}

// DeviceInFlight returns, for each device of the schedule (stages mod devices), the most
// microbatch-stages whose activations the device holds at one moment: the maximum over
// time of the sum over its stages, which for Interleaved is less than the sum of each
// chunk's own maximum (InFlight), since the chunks peak at different times. For
// Megatron-LM's interleaved 1F1B it is p*v + p - 1 - 2i on device i for m >= p
// (Korthikanti et al. 2022, section 4.2.3: the first stage holds (1 + (p-1)/(pv)) times
// p microbatches of its L/p layers).
func DeviceInFlight(cfg Config, stages, devices int) ([]int, error) {
	if err := cfg.Validate(stages); err != nil {
		return nil, err
	}
	return deviceInFlightCounted(steadyInterleaved(cfg, stages), stages, devices), nil
}

// deviceInFlightCounted is DeviceInFlight by counting the rules' operations.
func deviceInFlightCounted(cfg Config, stages, devices int) []int {
	// The rules add each device's operations in its order (as InFlight counts them):
	// count as they come, storing nothing.
	cur := make([]int, devices)
	most := make([]int, devices)
	train := cfg.Training()
	g := &graph{cfg: cfg, S: stages, D: cfg.Devices(stages), m: cfg.Microbatches}
	g.visit = func(k OpKind, stage, mb int) {
		if mb < 0 {
			return
		}
		dev := stage % devices
		switch k {
		case Forward:
			cur[dev]++
			most[dev] = max(most[dev], cur[dev])
			if !train {
				cur[dev]--
			}
		case Backward:
			cur[dev]--
		}
	}
	g.orderOps()
	return most
}

// DevicePeaks returns, for each device of the schedule (stages mod devices), the
// in-flight counts of its stages at each moment that may be the peak of what the device
// holds: vector k of device d counts stage d + i*devices at index i. A device holds the
// most right after a forward that its next operation does not follow with another
// forward (a forward only adds to the counts); of those moments, the ones whose counts
// are each at most another's (dominated) are left out, and repeated counts are given
// once. With unit bytes kept per microbatch on each stage, the most a device holds at
// once is the largest over its vectors of the sum of count times unit, as
// schedule.Simulate counts it; DeviceInFlight is that with a unit of one on every
// stage. For Interleaved (with m >= 3p, counted over 3p microbatches as InFlight is:
// steadyInterleaved) a device has at most about p*v/2 vectors; for the other schedules,
// one stage a device, one.
func DevicePeaks(cfg Config, stages, devices int) ([][][]int, error) {
	if err := cfg.Validate(stages); err != nil {
		return nil, err
	}
	if devices < 1 || stages%devices != 0 {
		return nil, &model.FieldError{Path: "devices", Reason: fmt.Sprintf("must divide the %d stages evenly, got %d", stages, devices)}
	}
	return devicePeaksCounted(steadyInterleaved(cfg, stages), stages, devices), nil
}

// devicePeaksCounted is DevicePeaks by counting the rules' operations, which they add
// in each device's order.
func devicePeaksCounted(cfg Config, stages, devices int) [][][]int {
	return devicePeaksRecorded(cfg, stages, devices, true)
}

// devicePeaksRecorded is devicePeaksCounted; steady, for Interleaved in training,
// records a device's counts only up to its first p*v forwards after the warm-up:
// they then repeat (the counts in the steady phase depend on the step mod pv alone,
// steadyInterleaved) and only fall in the backwards left.
func devicePeaksRecorded(cfg Config, stages, devices int, steady bool) [][][]int {
	v := stages / devices
	train := cfg.Training()
	type device struct {
		cur      []int
		hash     uint64 // the sum over chunks of count times weight (mod 2^64)
		forwards int
		last     int  // the forwards after which no counts are recorded
		pending  bool // the last operation was a forward: a candidate
		flat     []int
		seen     map[uint64]int32 // a candidate's hash: its index in flat, by v
	}
	// Each chunk's weight in the hash: odd multiples of the golden ratio's fraction.
	weight := make([]uint64, v)
	for k := range weight {
		weight[k] = (uint64(k)+1)*0x9e3779b97f4a7c15 | 1
	}
	devs := make([]device, devices)
	for d := range devs {
		x := &devs[d]
		x.cur, x.last, x.seen = make([]int, v), math.MaxInt, map[uint64]int32{}
		n := cfg.Microbatches * v // at most one candidate a forward
		if steady && train && cfg.Kind == Interleaved && cfg.Chunks >= 2 && devices == cfg.Devices(stages) {
			x.last = interleavedWarm(devices, cfg.Microbatches, v, d, cfg.PyTorchOrder) + devices*v
			n = min(n, devices*v+1)
		}
		x.flat = make([]int, 0, n*v)
	}
	record := func(x *device) {
		if i, ok := x.seen[x.hash]; ok && slices.Equal(x.flat[int(i)*v:int(i+1)*v], x.cur) {
			return // seen (a different vector of the same hash is kept too)
		}
		x.seen[x.hash] = int32(len(x.flat) / v)
		x.flat = append(x.flat, x.cur...)
	}
	g := &graph{cfg: cfg, S: stages, D: cfg.Devices(stages), m: cfg.Microbatches}
	g.visit = func(k OpKind, stage, mb int) {
		if mb < 0 {
			return
		}
		x, chunk := &devs[stage%devices], stage/devices
		switch k {
		case Forward:
			x.cur[chunk]++
			x.hash += weight[chunk]
			x.forwards++
			x.pending = x.forwards <= x.last
			if !train {
				if x.pending {
					record(x)
				}
				x.cur[chunk]--
				x.hash -= weight[chunk]
				x.pending = false
			}
		case Backward:
			if x.pending {
				record(x)
				x.pending = false
			}
			x.cur[chunk]--
			x.hash -= weight[chunk]
		}
	}
	g.orderOps()
	peaks := make([][][]int, devices)
	for d := range peaks {
		x := &devs[d]
		if x.pending {
			record(x)
		}
		peaks[d] = undominated(x.flat, v)
	}
	return peaks
}

// undominated returns the vectors of v counts in flat (distinct: devicePeaksRecorded
// records each once, but for a collision of 64-bit hashes, which would only repeat a
// vector) that no other is at least in every count, by decreasing sum: a vector can
// only be dominated by one of a larger sum. (In a training schedule's steady phase every
// candidate has the same sum, a forward and a backward a step.)
func undominated(flat []int, v int) [][]int {
	n := len(flat) / v
	vec := func(i int32) []int { return flat[int(i)*v : int(i+1)*v : int(i+1)*v] }
	sums := make([]int, n)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
		for _, c := range vec(int32(i)) {
			sums[i] += c
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(sums[b], sums[a]) })
	var out [][]int
	larger := 0 // out[:larger] have a larger sum than the vector at hand
	for k, i := range order {
		if k > 0 && sums[i] < sums[order[k-1]] {
			larger = len(out)
		}
		x := vec(i)
		dominated := false
		for _, y := range out[:larger] {
			dominated = true
			for c := range x {
				if y[c] < x[c] {
					dominated = false
					break
				}
			}
			if dominated {
				break
			}
		}
		if !dominated {
			out = append(out, x)
		}
	}
	return out
}
