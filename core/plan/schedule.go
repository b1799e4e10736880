package plan

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
)

// ScheduleOptions makes a plan schedule-aware: the partitioner charges each stage the
// activations of the microbatches the schedule keeps in flight on it, and the plan carries
// a simulated run of one step (core/schedule).
//
// Interleaved with v chunks plans p*v contiguous stages, stage j on device j mod p. A
// device's chunks share its memory: what is bounded is the device's total over its
// chunks (their allocated peaks, the allocator's reserve of their sum and the
// framework's fixed memory once), not each chunk's share (sharedBudgetSplit). The
// wrap-around transfer from device p-1 to device 0 uses the link between devices 0 and
// 1, which the cluster describes.
//
// ZB-H1 is planned with 1F1B's in-flight counts: its B frees the activations, and the
// little its delayed W passes keep is not in the model (schedule.Stage.WeightGradBytes 0).
type ScheduleOptions struct {
	schedule.Config
	// MicrobatchSize is the samples in one microbatch, for the throughput; 0 means 1.
	MicrobatchSize int
	// WeightGradFraction is the share of each backward that computes weight gradients,
	// which ZB-H1 runs as separate W passes; 0 means 0.5 (for matrix products, the input
	// and weight gradients cost the same).
	WeightGradFraction float64
	// Events keeps the timeline (events per device, in-flight microbatches over time).
	Events bool
	// BlockingTransfers runs the transfers between stages in the stages' own streams, as
	// DeepSpeed's PipelineEngine does (cluster.Framework.BlockingPipelineTransfers):
	// each occupies both stages it joins, so stage s's forward pass takes the transfer
	// from stage s-1 twice longer (its activation received, the previous gradient sent
	// back) and its backward pass the transfer to stage s+1 twice (the previous
	// activation sent, its gradient received), and none waits beside compute. Otherwise
	// a transfer delays only the operation that waits for it. It applies to training
	// without the schedule's own recomputation (Config.Recompute reruns each forward
	// pass inside the backward, which would count its transfers again): an
	// architecture's stages, whose backward passes carry their recomputation. Inference
	// (DeepSpeed's InferenceSchedule) sends each activation forward only: each transfer
	// is in the forward pass of both stages it joins, once.
	BlockingTransfers bool
	// PartitionedBoundary, when set with BlockingTransfers, is the work DeepSpeed's
	// PipelineEngine does on the stages' own streams around a boundary whose transfer
	// sends n bytes a device, the tensor-parallel group's slice of the activation
	// (cluster.DeepSpeedPartitionedBoundary: the sender slices, the receiver gathers
	// the whole tensor back, the sender gathers its output and the gradient back for
	// its backward pass). It is added to the passes it names, per microbatch; nil for
	// none (no tensor parallelism, or another framework).
	PartitionedBoundary func(n int64) cluster.PartitionedBoundary
	// OneMicrobatch charges each stage the activations of one microbatch, as Graphcore's
	// auto-pipeline tool counts them, rather than of the microbatches the schedule keeps
	// in flight on it: the split is the tool's, and the simulated step's peak memory
	// still counts what the schedule keeps (and advises where that exceeds a device).
	OneMicrobatch bool

	// deviceFixedBytes is the framework's fixed memory of a whole device
	// (estimate.Options.FixedBytes before Interleaved shares it among the chunks).
	deviceFixedBytes int64
	// devicePeaks is Interleaved's schedule.DevicePeaks, set by scheduled.
	devicePeaks [][][]int
}

// scheduled prepares a schedule-aware plan: it checks the schedule, sets the estimator's
// in-flight counts, recomputation and inference from it, and returns the cluster of
// stages to partition over (p*v stages for Interleaved, else the cluster itself).
func scheduled(c *cluster.Cluster, opt *Options) (*cluster.Cluster, error) {
	so := opt.Schedule
	if so == nil {
		return c, nil
	}
	if f := so.WeightGradFraction; math.IsNaN(f) || f < 0 || f > 1 {
		return nil, &model.FieldError{Path: "schedule.weight_grad_fraction", Reason: fmt.Sprintf("must be in [0, 1], got %v", f)}
	}
	if so.MicrobatchSize < 0 {
		return nil, &model.FieldError{Path: "schedule.microbatch_size", Reason: fmt.Sprintf("must be >= 0, got %d", so.MicrobatchSize)}
	}
	switch {
	case so.Kind == schedule.Inference:
		opt.Estimate.Inference = true
	case opt.Estimate.Inference:
		return nil, &model.FieldError{Path: "schedule", Reason: fmt.Sprintf("%s is a training schedule, but the plan is for inference: use the inference schedule", so.Config)}
	}
	so.Recompute = so.Recompute || opt.Estimate.Recompute
	opt.Estimate.Recompute = so.Recompute
	sc := c
	so.deviceFixedBytes = opt.Estimate.FixedBytes
	if so.Kind == schedule.Interleaved && so.Chunks >= 2 {
		sc = stageCluster(c, so.Chunks)
		// Each chunk carries 1/v of the framework's fixed memory (rounded up); its
		// device's memory is shared with the device's other chunks.
		v := int64(so.Chunks)
		opt.Estimate.FixedBytes = (opt.Estimate.FixedBytes + v - 1) / v
	}
	so.devicePeaks = nil
	var counts []int
	if len(sc.Devices) > len(c.Devices) {
		// One count of the schedule's operations gives each device's moments of most
		// (devicesOf), each chunk's own most (the largest of its counts at those moments)
		// and each device's (the largest sum): schedule.InFlight and DeviceInFlight.
		peaks, err := schedule.DevicePeaks(so.Config, len(sc.Devices), len(c.Devices))
		if err != nil {
			return nil, err
		}
		so.devicePeaks = peaks
		counts = deviceShares(peaks, len(sc.Devices))
	} else {
		var err error
		if counts, err = schedule.InFlight(so.Config, len(sc.Devices)); err != nil {
			return nil, err
		}
	}
	if so.OneMicrobatch {
		opt.Estimate.InFlight = nil // one microbatch on every stage
		return sc, nil
	}
	opt.Estimate.InFlight = func(i int) int { return counts[i] }
	return sc, nil
}

// InFlight is the microbatches in flight a plan charges each of a schedule's stages on
// devices devices (stages = devices x v for interleaved's v chunks) alone:
// schedule.InFlight's counts, which for chunks sharing a device are their shares of the
// device's peak (deviceShares). A device's total counts its chunks at each of its
// moments of most instead (devicesOf), which the shares may exceed where its chunks
// hold unequal activations: a bound on a device's memory from outside reads
// PeakInFlight.
func InFlight(cfg schedule.Config, stages, devices int) ([]int, error) {
	if stages <= devices {
		return schedule.InFlight(cfg, stages)
	}
	peaks, err := schedule.DevicePeaks(cfg, stages, devices)
	if err != nil {
		return nil, err
	}
	return deviceShares(peaks, stages), nil
}

// PeakInFlight is the microbatches in flight on each of a schedule's stages at one
// moment of its device's most (stages = devices x v for interleaved's v chunks): the
// first of schedule.DevicePeaks, whose counts add up to the device's most
// (schedule.DeviceInFlight). What a device's stages hold at that moment is at most what
// a plan counts for the device (devicesOf), whatever each stage's bytes per microbatch,
// so that a bound on a device's memory from outside (the search's CannotFit) may read
// these counts; for chunks of equal activations they hold what the shares (InFlight)
// do.
func PeakInFlight(cfg schedule.Config, stages, devices int) ([]int, error) {
	if stages <= devices {
		return schedule.InFlight(cfg, stages)
	}
	peaks, err := schedule.DevicePeaks(cfg, stages, devices)
	if err != nil {
		return nil, err
	}
	counts := make([]int, stages)
	for d, moments := range peaks {
		for k, n := range moments[0] {
			counts[d+k*devices] = n
		}
	}
	return counts, nil
}

// deviceShares spreads each device's peak of in-flight microbatch-chunks over its
// chunks, so that the chunks' counts add up to what the device holds at its peak
// (schedule.DeviceInFlight: the largest sum of its DevicePeaks vectors) rather than to
// the sum of each chunk's own peak (schedule.InFlight: its largest count in them): the
// chunks of an interleaved schedule peak at different times, and a device needs the
// maximum over time of their sum (Korthikanti et al. 2022: 1 + (p-1)/(pv) times p
// microbatches on the first device, where summing the chunks' maxima gives about a
// quarter more). Equal shares (the remainder to the first) keep the device's total; no
// chunk gets more than its own peak (water-filling: what a chunk cannot take goes to the
// others). These are the counts a chunk alone is charged (estimate.Options.InFlight);
// a device's total counts each chunk's own count at each moment (devicesOf), which
// differs where its chunks hold unequal activations.
func deviceShares(peaks [][][]int, stages int) []int {
	devices := len(peaks)
	counts := make([]int, stages)
	out := make([]int, stages)
	v := stages / devices
	for d, vs := range peaks {
		total := 0
		for _, u := range vs {
			sum := 0
			for k, n := range u {
				counts[d+k*devices] = max(counts[d+k*devices], n)
				sum += n
			}
			total = max(total, sum)
		}
		// Water-filling: the chunks with the lowest peaks first, each its equal share of
		// what is left or its own peak, whichever is less.
		chunks := make([]int, v)
		for k := range chunks {
			chunks[k] = k*devices + d
		}
		sort.SliceStable(chunks, func(a, b int) bool { return counts[chunks[a]] < counts[chunks[b]] })
		left := total
		for k, j := range chunks {
			share := (left + (v - k) - 1) / (v - k) // ceil(left / chunks remaining)
			out[j] = max(1, min(share, counts[j]))
			left -= out[j]
		}
	}
	return out
}

// stageCluster returns the cluster of p*v stages that Interleaved runs on p devices:
// stage j on device j mod p, with the device's memory (which the device's chunks share:
// sharedBudgetSplit bounds their total); the link from stage j to j+1 is the one between
// their devices (devices 0 and 1's for the wrap from p-1 to 0). The host link and
// HostEveryStage carry over: with it, every stage waits for both host transfers.
func stageCluster(c *cluster.Cluster, v int) *cluster.Cluster {
	p := len(c.Devices)
	s := &cluster.Cluster{Name: c.Name, Host: c.Host, HostEveryStage: c.HostEveryStage}
	between := func(d int) cluster.Link {
		if p == 1 {
			return cluster.Link{} // chunks on one device: no transfer
		}
		if d == p-1 {
			d = 0
		}
		if l := c.SendLink(d); l != nil {
			return *l
		}
		return cluster.Link{}
	}
	for j := 0; j < p*v; j++ {
		s.Devices = append(s.Devices, c.Devices[j%p])
		if j+1 < p*v {
			s.Links = append(s.Links, between(j%p))
		}
	}
	return s
}

// Simulate runs opt.Schedule over a given split of the model (boundaries as in Plan, for
// the p*v stages of Interleaved) and returns the simulated step, with advice when a
// device's peak exceeds its memory. It is how a plan made without the schedule (or by
// hand) can be checked against it.
func Simulate(m *model.Model, c *cluster.Cluster, bounds []int, opt Options) (*schedule.Result, error) {
	if opt.Schedule == nil {
		return nil, &model.FieldError{Path: "schedule", Reason: "is required to simulate a split"}
	}
	if m == nil || c == nil {
		return nil, errors.New("plan.Simulate: a model and a cluster are required")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	so := *opt.Schedule
	opt.Schedule = &so
	sc, err := scheduled(c, &opt)
	if err != nil {
		return nil, err
	}
	if err := checkBounds(bounds, len(m.Layers), len(sc.Devices)); err != nil {
		return nil, err
	}
	e, err := estimate.New(m, sc, opt.Estimate)
	if err != nil {
		return nil, err
	}
	return simulate(e, m, c, sc, bounds, opt)
}

func checkBounds(b []int, n, stages int) error {
	if len(b) != stages+1 || b[0] != 0 || b[stages] != n {
		return &model.FieldError{Path: "boundaries", Reason: fmt.Sprintf("must run from 0 to %d layers in %d stages (%d entries), got %v", n, stages, stages+1, b)}
	}
	for i := 0; i < stages; i++ {
		if b[i+1] <= b[i] {
			return &model.FieldError{Path: fmt.Sprintf("boundaries[%d]", i+1), Reason: fmt.Sprintf("must be greater than %d: every stage holds a layer", b[i])}
		}
	}
	return nil
}

// simulate builds the schedule's pipeline from the split's stages, in seconds, and runs
// it. c is the real cluster, sc the cluster of stages the estimator costs.
func simulate(e *estimate.Estimator, m *model.Model, c, sc *cluster.Cluster, bounds []int, opt Options) (*schedule.Result, error) {
	so := opt.Schedule
	seconds := func(v float64) float64 { return v }
	if m.Unit() == model.Cycles {
		clock := c.Devices[0].ClockHz
		if clock <= 0 {
			return nil, &model.FieldError{Path: "devices[0].clock_hz", Reason: "is needed to convert the model's cycles to seconds for the schedule"}
		}
		// Estimator times are in device 0's cycles, scaled to each device's speed.
		seconds = func(v float64) float64 { return v / clock }
	}
	frac := so.WeightGradFraction
	if frac == 0 {
		frac = 0.5
	}
	pl := &schedule.Pipeline{MicrobatchSize: so.MicrobatchSize}
	S := len(bounds) - 1
	ranges := make([]estimate.Range, S)
	for i := 0; i < S; i++ {
		a, b := bounds[i], bounds[i+1]-1
		r := e.Range(i, a, b)
		ranges[i] = r
		var f, bw float64
		for l := a; l <= b; l++ {
			f += m.Forward(l)
			bw += m.Backward(l)
		}
		scale := sc.SpeedScale(i)
		f, bw = seconds(f*scale), seconds(bw*scale)
		if !so.Training() {
			bw = 0
		}
		pl.Stages = append(pl.Stages, schedule.Stage{
			ForwardSeconds: f, BackwardSeconds: bw, WeightGradSeconds: frac * bw,
			StaticBytes:     r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes,
			ActivationBytes: r.ActivationBytes, InputBytes: r.RecvBytes, PeakBytes: r.PeakBytes,
			OptimizerTempBytes: r.OptimizerTempBytes,
		})
	}
	// Host transfers: the first stage receives the model's input and the last sends its
	// output, each microbatch, before its forward can start or finish; with HostEveryStage
	// (Graphcore's bulk-synchronous exchange) every stage waits for both.
	var hostIn, hostOut float64
	if l := sc.RecvLink(0); l != nil {
		hostIn = l.Seconds(ranges[0].RecvBytes, sc.Devices[0].ClockHz)
	}
	if l := sc.SendLink(S - 1); l != nil {
		hostOut = l.Seconds(ranges[S-1].SendBytes, sc.Devices[S-1].ClockHz)
	}
	for i := range pl.Stages {
		st := &pl.Stages[i]
		switch {
		case sc.HostEveryStage:
			st.ForwardSeconds += hostIn + hostOut
		default:
			if i == 0 {
				st.ForwardSeconds += hostIn
			}
			if i == S-1 {
				st.ForwardSeconds += hostOut
			}
		}
	}
	for j := 0; j+1 < S; j++ {
		t := 0.0
		if l := sc.SendLink(j); l != nil {
			t = l.Seconds(ranges[j].SendBytes, sc.Devices[j].ClockHz)
		}
		if l := sc.RecvLink(j + 1); l != nil {
			t = max(t, l.Seconds(ranges[j+1].RecvBytes, sc.Devices[j+1].ClockHz))
		}
		if so.BlockingTransfers && so.Training() && !so.Recompute {
			// DeepSpeed's TrainSchedule: stage j sends its activation and receives its
			// gradient in its backward step, stage j+1 receives the activation and sends
			// the gradient in its forward step; the stages wait on each other there.
			pl.Stages[j].BackwardSeconds += 2 * t
			pl.Stages[j+1].ForwardSeconds += 2 * t
			t = 0
		} else if so.BlockingTransfers && !so.Training() {
			// DeepSpeed's InferenceSchedule: in each step stage j sends the activation
			// of its last forward pass and stage j+1 receives it, both blocking, beside
			// their forward passes.
			pl.Stages[j].ForwardSeconds += t
			pl.Stages[j+1].ForwardSeconds += t
			t = 0
		}
		if so.BlockingTransfers && so.PartitionedBoundary != nil && (!so.Training() || !so.Recompute) {
			// The partitioned tensor's slicing and gathering on the stages' streams.
			b := so.PartitionedBoundary(ranges[j].SendBytes)
			pl.Stages[j].ForwardSeconds += b.SenderForward
			pl.Stages[j].BackwardSeconds += b.SenderBackward
			pl.Stages[j+1].ForwardSeconds += b.ReceiverForward
		}
		pl.TransferSeconds = append(pl.TransferSeconds, t)
	}
	proportion := opt.Estimate.MemoryProportion
	if proportion == 0 {
		proportion = 1
	}
	for _, d := range c.Devices {
		pl.LimitBytes = append(pl.LimitBytes, d.MemoryLimitBytes(proportion))
	}
	pl.FixedBytes, pl.AllocatorReserve = so.deviceFixedBytes, opt.Estimate.AllocatorReserve
	if so.Events {
		return schedule.Simulate(pl, so.Config)
	}
	return schedule.SimulateStep(pl, so.Config)
}

// chunked reports whether the stages of sc are the chunks of an interleaved schedule on
// c's devices (stage j on device j mod p).
func chunked(c, sc *cluster.Cluster) bool { return len(sc.Devices) > len(c.Devices) }

// devicesOf is what the chunks of an interleaved schedule hold on their devices, so that
// a device's memory bounds the total over its chunks.
type devicesOf struct {
	e *estimate.Estimator
	p int // devices
	// chunkFixed and deviceFixed are the framework's fixed memory per chunk (the
	// estimator's) and per device.
	chunkFixed, deviceFixed int64
	// limit is each device's memory limit; avail the most its chunks may allocate in
	// all: the largest total whose device memory (total, the allocator's reserve of it
	// and the fixed memory) fits limit.
	limit, avail []int64
	// recompute: the chunks keep only their inputs for the microbatches in flight.
	recompute bool
	// peaks[dev] are the device's microbatches in flight on each of its chunks (chunk j
	// at index j / p) at the moments that may be its peak (schedule.DevicePeaks); one
	// vector of ones when each chunk is charged one microbatch (OneMicrobatch).
	peaks [][][]int
}

func newDevicesOf(e *estimate.Estimator, c *cluster.Cluster, opt Options) (*devicesOf, error) {
	d := &devicesOf{e: e, p: len(c.Devices), chunkFixed: opt.Estimate.FixedBytes, deviceFixed: opt.Schedule.deviceFixedBytes, recompute: opt.Estimate.Recompute}
	if opt.Estimate.InFlight == nil { // one microbatch a chunk
		ones := make([]int, e.Stages()/d.p)
		for k := range ones {
			ones[k] = 1
		}
		for range d.p {
			d.peaks = append(d.peaks, [][]int{ones})
		}
	} else {
		d.peaks = opt.Schedule.devicePeaks
	}
	if len(d.peaks) != d.p {
		return nil, fmt.Errorf("plan: internal error: %d devices' moments of most for %d devices (the schedule was not prepared by scheduled)", len(d.peaks), d.p)
	}
	for i := range c.Devices {
		limit := e.LimitBytes(i) // chunk i is on device i and has its limit
		d.limit = append(d.limit, limit)
		// The device's memory grows with the total: the largest total that fits, by
		// bisection over [0, limit].
		lo, hi := int64(0), limit
		if d.memory(0) > limit {
			d.avail = append(d.avail, -1)
			continue
		}
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if d.memory(mid) <= limit {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		d.avail = append(d.avail, lo)
	}
	return d, nil
}

// memory is the device memory of chunks allocating total bytes in all: the total, the
// allocator's reserve of it, and the framework's fixed memory once.
func (d *devicesOf) memory(total int64) int64 {
	return d.e.DeviceBytes(total) - d.chunkFixed + d.deviceFixed
}

// allocated is what chunk j of a split allocates at its peak (its memory less the
// reserve and the fixed memory).
func allocated(r estimate.Range) int64 { return r.MemoryBytes - r.ReservedBytes - r.FrameworkBytes }

// chunkMem is a chunk's allocated memory in the parts that add up differently over a
// device's chunks: static (parameters, optimizer state, exclusive and shared items) is
// always alive; unit is what each of its microbatches in flight keeps between its
// operations during the passes (its activations, or its input under recomputation);
// work is what its working peak adds beyond one unit while it runs a forward or
// backward (temporaries, carried tensors; negative where the peak is less than a
// unit); opt the optimizer step's temporaries.
type chunkMem struct{ static, unit, work, opt int64 }

// chunk splits range r of a chunk into its parts, as schedule.Simulate reads the stage
// the plan's simulation gives it (simulate): its working peak by the rule both charge
// (model.WorkingPeakBytes), which the estimator's range already follows.
func (d *devicesOf) chunk(r estimate.Range) chunkMem {
	unit := r.ActivationBytes
	if d.recompute {
		unit = r.RecvBytes
	}
	peak := model.WorkingPeakBytes(r.PeakBytes, r.ActivationBytes)
	return chunkMem{
		static: r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes,
		unit:   unit,
		work:   peak - unit,
		opt:    r.OptimizerTempBytes,
	}
}

// deviceMem is what a device's chunks (some of them, while a split is searched) allocate
// in all, as the schedule's simulation counts a device's peak (schedule.Simulate): their
// static memory; during the passes, what their microbatches in flight keep at the
// device's moment of most (held[i]: at the i-th moment of its devicesOf.peaks, the sum
// over its chunks of their count then times their unit) and one chunk's working memory
// beyond its unit, the largest, since a device runs one chunk's forward or backward at a
// time; the optimizer step follows the passes. Megatron-LM's theoretical memory estimate
// (megatron/training/theoretical_memory_usage.py) likewise counts the first stage's
// in-flight activations over its chunks, Korthikanti et al. 2022's Table 2 times
// 1 + (p-1)/(pv), and no working memory per chunk; counting each chunk's microbatches at
// each moment keeps the total exact where a device's chunks hold unequal activations
// (an equal share of the device's count each, estimate.Options.InFlight, is up to 14%
// under it). Every part only grows as chunks are added. add makes a new held, never
// changing the old one, so that copies of a deviceMem may share it; held nil is a
// device without chunks (work unset).
type deviceMem struct {
	static, opt int64
	work        int64   // the largest chunk's work
	held        []int64 // by moment of the device's peaks
}

// maxHeld caps what a device's chunks hold: above any device's memory
// (cluster.MaxMemoryBytes), and with the static memory and the working memory (each
// below 2^61: estimate bounds the model's byte total) within int64.
const maxHeld = 1 << 61

// heldAdd is h + count * unit (h, count and unit not negative), at most maxHeld.
func heldAdd(h int64, count int, unit int64) int64 {
	hi, lo := bits.Mul64(uint64(count), uint64(unit))
	if hi != 0 || lo > maxHeld {
		return maxHeld
	}
	return min(h+int64(lo), maxHeld)
}

// add returns a device's memory m with chunk j's memory c added.
func (d *devicesOf) add(m deviceMem, j int, c chunkMem) deviceMem {
	peaks, k := d.peaks[j%d.p], j/d.p
	held := make([]int64, len(peaks))
	for i, u := range peaks {
		held[i] = heldAdd(m.heldAt(i), u[k], c.unit)
	}
	if m.held == nil || c.work > m.work {
		m.work = c.work
	}
	m.held = held
	m.static += c.static
	m.opt += c.opt
	return m
}

// heldAt is held[i], 0 before any chunk is added.
func (m deviceMem) heldAt(i int) int64 {
	if m.held == nil {
		return 0
	}
	return m.held[i]
}

// total is the device's allocated peak: the static memory and the larger of the passes
// (its chunks' held memory at its moment of most and the largest working memory) and
// the optimizer step.
func (m deviceMem) total() int64 {
	if m.held == nil {
		return m.static + m.opt
	}
	most := m.held[0]
	for _, h := range m.held[1:] {
		most = max(most, h)
	}
	return m.static + max(most+m.work, m.opt)
}

// addedTotal is d.add(m, j, c).total() without making the new held.
func (d *devicesOf) addedTotal(m deviceMem, j int, c chunkMem) int64 {
	peaks, k := d.peaks[j%d.p], j/d.p
	most := int64(math.MinInt64)
	for i, u := range peaks {
		most = max(most, heldAdd(m.heldAt(i), u[k], c.unit))
	}
	work := c.work
	if m.held != nil {
		work = max(work, m.work)
	}
	return m.static + c.static + max(most+work, m.opt+c.opt)
}

// covers reports whether m uses at least what o does in every part, so that whatever
// does not fit beside o does not fit beside m.
func (m deviceMem) covers(o deviceMem) bool {
	switch {
	case o.held == nil:
		return m.static >= o.static && m.opt >= o.opt
	case m.held == nil || m.static < o.static || m.opt < o.opt || m.work < o.work:
		return false
	}
	for i, h := range o.held {
		if m.held[i] < h {
			return false
		}
	}
	return true
}

// totals is each device's allocated peak over its chunks for the split (deviceMem).
func (d *devicesOf) totals(bounds []int) []int64 {
	mem := make([]deviceMem, d.p)
	for dev := range mem {
		mem[dev].held = make([]int64, len(d.peaks[dev]))
		mem[dev].work = math.MinInt64 / 4 // every device has a chunk
	}
	for j := 0; j+1 < len(bounds); j++ {
		c, m := d.chunk(d.e.Range(j, bounds[j], bounds[j+1]-1)), &mem[j%d.p]
		for i, u := range d.peaks[j%d.p] {
			m.held[i] = heldAdd(m.held[i], u[j/d.p], c.unit)
		}
		m.static += c.static
		m.opt += c.opt
		m.work = max(m.work, c.work)
	}
	t := make([]int64, d.p)
	for dev := range t {
		t[dev] = mem[dev].total()
	}
	return t
}

// budgetCosts is the partitioner's view of the chunks with a budget per chunk: what
// chunk j may allocate.
type budgetCosts struct {
	Costs
	budget []int64
}

// LimitBytes is chunk i's budget.
func (c budgetCosts) LimitBytes(i int) int64 { return c.budget[i] }

// maxBudgetRounds bounds the rounds of budgetRounds that move budget between a
// device's chunks.
const maxBudgetRounds = 4

// sharedBudgetSplit finds the split of an interleaved schedule's chunks under the bound
// that matters, each device's total over its chunks (Korthikanti et al. 2022 count a
// device's activations over all its chunks, 1 + (p-1)/(pv) times p microbatches'). The
// partitioner bounds each stage alone, so a device's budget is spread over its chunks:
//
//  1. Relaxation: every chunk may allocate its whole device's budget. Every split whose
//     devices fit passes, so no split fits when this finds none, and its optimum is
//     optimal under the shared bound when its devices fit: then it is returned (the usual
//     case: a device's chunks hold about equal layers). Its bottleneck bounds every
//     answer from below.
//  2. Equal shares: each chunk gets an equal share of its device's budget (the former
//     rule); when its split fits its devices (not always: a chunk is charged its equal
//     share of the device's microbatches in flight, estimate.Options.InFlight, but may
//     hold more of them at the device's peak) and reaches the relaxation's bottleneck,
//     it is optimal.
//  3. Otherwise, for the bottleneck objective, the least bottleneck under the shared
//     bound is found exactly (exactSplit: the partitioner's parametric search with a
//     depth-first search for a split whose chunks compute within a bound and whose
//     devices fit as its test). The split found gives each chunk a budget, its own
//     allocated peak (a device's budgets add up within it), and the partitioner, bounded
//     by them, breaks the ties among the splits of that bottleneck as it always does.
//  4. Where the search would visit more than searchNodes states in all, or for the
//     compute + transfer objective, budgets are moved between each over-full device's
//     chunks in proportion to what they allocated (budgetRounds), and the better of that
//     split and step 2's stands.
//
// A returned split always fits every device's total; it is optimal but where a search
// gives up (TestSharedBudgetAgainstBruteForce checks every split of small models).
func sharedBudgetSplit(e *estimate.Estimator, d *devicesOf, obj partition.Objective) ([]int, error) {
	S := e.Stages()
	budget := make([]int64, S)
	for j := range budget {
		budget[j] = d.avail[j%d.p]
	}
	r, err := partition.Solve(budgetCosts{Costs{e}, budget}, obj)
	if err != nil {
		return nil, err // the relaxation holds every split that fits
	}
	if d.fits(r.Boundaries) {
		return r.Boundaries, nil
	}
	low := d.bottleneck(r.Boundaries)
	equal := d.equalShares(obj)
	if equal != nil && d.bottleneck(equal) <= low {
		return equal, nil
	}
	var b []int
	ok := false
	if obj == partition.MaxCompute {
		b, ok = d.exactSplit(low, equal)
	}
	if !ok { // unknown: the rounds' split, if any
		if rounds := d.budgetRounds(r.Boundaries, budget, equal, obj); rounds != nil {
			return rounds, nil
		}
		return nil, partition.ErrInfeasible
	}
	if b == nil {
		return nil, partition.ErrInfeasible
	}
	for j := range budget {
		budget[j] = allocated(e.Range(j, b[j], b[j+1]-1))
	}
	// A split whose chunks each allocate no more than b's may still put more on a device
	// (its chunks' parts add up differently: deviceMem), hence the check.
	if r, err := partition.Solve(budgetCosts{Costs{e}, budget}, obj); err == nil && d.fits(r.Boundaries) {
		return r.Boundaries, nil
	}
	return b, nil
}

// bottleneck is a split's largest chunk compute.
func (d *devicesOf) bottleneck(bounds []int) float64 {
	var w float64
	for j := 0; j+1 < len(bounds); j++ {
		w = max(w, d.e.Compute(j, bounds[j], bounds[j+1]-1))
	}
	return w
}

// equalShares is the partitioner's split with each chunk an equal share of its device's
// budget (the former rule), if it fits its devices; nil if not or none.
func (d *devicesOf) equalShares(obj partition.Objective) []int {
	S := d.e.Stages()
	v := int64(S / d.p)
	equal := make([]int64, S)
	for j := range equal {
		equal[j] = max(0, d.avail[j%d.p]) / v
	}
	r, err := partition.Solve(budgetCosts{Costs{d.e}, equal}, obj)
	if err != nil || !d.fits(r.Boundaries) {
		return nil
	}
	return r.Boundaries
}

// budgetRounds improves on best (equalShares' split, or nil) from the relaxation's split
// relaxed: budgets moved between each over-full device's chunks in proportion to what
// they allocated, the split found again (at most maxBudgetRounds rounds). It returns the
// better split that fits every device, nil if neither.
func (d *devicesOf) budgetRounds(relaxed []int, budget []int64, best []int, obj partition.Objective) []int {
	e, S := d.e, d.e.Stages()
	bounds := relaxed
	for round := 0; round < maxBudgetRounds; round++ {
		totals, over := d.totals(bounds), false
		for dev, total := range totals {
			if total <= d.avail[dev] {
				continue
			}
			over = true
			for j := dev; j < S; j += d.p {
				a := allocated(e.Range(j, bounds[j], bounds[j+1]-1))
				share := int64(float64(a) * float64(d.avail[dev]) / float64(total))
				budget[j] = min(budget[j], max(0, share))
			}
		}
		if !over {
			if best == nil || d.bottleneck(bounds) < d.bottleneck(best) {
				best = bounds
			}
			break
		}
		r, err := partition.Solve(budgetCosts{Costs{e}, budget}, obj)
		if err != nil {
			break
		}
		bounds = r.Boundaries
	}
	return best
}

// fits reports whether every device's total over its chunks fits the device.
func (d *devicesOf) fits(bounds []int) bool {
	for dev, total := range d.totals(bounds) {
		if total > d.avail[dev] {
			return false
		}
	}
	return true
}

// searchNodes bounds the states exactSplit's tests visit in all when a split that fits
// is known (equal shares'): the search only improves on it, and past the bound the known
// split stands. findNodes bounds them when none is known, where giving up means planning
// no split. Both keep a plan's search to a fraction of a millisecond, as the max-
// throughput search plans thousands (BenchmarkSearchLlama3_8B); every instance of
// TestSharedBudgetAgainstBruteForce and every published run stays within them.
const (
	searchNodes = 1 << 7
	findNodes   = 1 << 9
)

// exactSplit finds a split of least bottleneck (max chunk compute) among those whose
// every device fits, given low, a bound on it from below, and known, a split that fits
// (nil if none is known). It returns the split, nil when none fits, and ok false when its
// tests visited more than searchNodes (findNodes without known) states in all (the
// answer is then unknown).
//
// It is the partitioner's parametric search (core/partition) with sharedSearch as the
// test: the bound low is tested first (the answer is usually there); then bisection over
// [low, high), high the best bottleneck found. A test that passes lowers high to the
// bottleneck of the split it found; one that fails raises low to the least compute time
// it rejected, below which no bound admits another range, so every test in between would
// fail alike. Both ends stay chunks' compute times, and the search stops when they meet.
func (d *devicesOf) exactSplit(low float64, known []int) (bounds []int, ok bool) {
	s := newSharedSearch(d)
	s.limit = searchNodes
	if known == nil {
		s.limit = findNodes
	}
	best, high := known, math.Inf(1)
	if best == nil {
		b, _, ok := s.run(math.Inf(1)) // memory alone
		if !ok || b == nil {
			return nil, ok
		}
		best = b
	}
	high = d.bottleneck(best)
	for u := low; low < high; u = low + (high-low)/2 {
		if u >= high {
			// low and high are adjacent floats: the midpoint rounds to high, whose test
			// passes again with the same split, so bisection would spin to the node
			// bound and give up on a split it holds.
			break
		}
		b, rejected, ok := s.run(u)
		switch {
		case !ok:
			return nil, false
		case b != nil:
			best, high = b, d.bottleneck(b)
		default:
			low = rejected
		}
	}
	return best, true
}

// sharedSearch is a depth-first search over the chunks' ends for a split whose chunks
// compute within a bound and whose devices fit. A chunk's memory never decreases as it
// grows to the right (partition.Costs), nor does its compute, so from a start the ends
// that pass form a prefix, tried from an even share of the layers left outwards. It prunes a state (chunk, start, the
// devices' totals so far) when the chunks left cannot reach the last layer within the
// bound, when a device's chunks left need more than its budget leaves (each at least its
// least one-layer allocation), and when a failed state at the same chunk and start used
// no more on every device.
type sharedSearch struct {
	d      *devicesOf
	allocs [][]chunkMem // allocs[j*n+a][b-a]: chunk j of layers a..b (static -1: not yet costed)
	// restMin[j*p+dev] is the least the chunks after j on device dev add to its total.
	restMin []int64
	failed  map[int][][]deviceMem // by j*(n+1) + a
	finish  [][]bool              // finish[j][a]: chunks j.. can cover layers a.. within the bound
	nodes   int
	limit   int // on nodes: searchNodes, or findNodes when no split that fits is known
}

func newSharedSearch(d *devicesOf) *sharedSearch {
	n, S, p := d.e.Layers(), d.e.Stages(), d.p
	s := &sharedSearch{d: d, allocs: make([][]chunkMem, S*n), restMin: make([]int64, (S+1)*p)}
	// Fill restMin from the back: the chunks after j on each device. A chunk adds at
	// least its static memory and the lesser of its optimizer temporaries and what it
	// holds at every moment of its device's peaks (its fewest microbatches in flight
	// there times its unit) to its device's total (deviceMem.total), and a longer range
	// no less.
	for dev := range p {
		var sum int64
		for j := S - 1; j >= 0; j-- {
			s.restMin[j*p+dev] = sum
			if j%p == dev {
				fewest := math.MaxInt
				for _, u := range d.peaks[dev] {
					fewest = min(fewest, u[j/p])
				}
				least := int64(math.MaxInt64)
				for a := j; a < n; a++ {
					// Not kept (alloc): the search visits few of these starts.
					c := d.chunk(d.e.Range(j, a, a))
					least = min(least, c.static+min(heldAdd(0, fewest, c.unit), c.opt))
				}
				sum += least
			}
		}
	}
	return s
}

func (s *sharedSearch) alloc(j, a, b int) chunkMem {
	n := s.d.e.Layers()
	row := s.allocs[j*n+a]
	if row == nil {
		row = make([]chunkMem, n-a)
		for i := range row {
			row[i].static = -1
		}
		s.allocs[j*n+a] = row
	}
	if v := row[b-a]; v.static >= 0 {
		return v
	}
	v := s.d.chunk(s.d.e.Range(j, a, b))
	row[b-a] = v
	return v
}

// maxFailed bounds the failed states kept per chunk and start.
const maxFailed = 8

// run returns a split within bound u (nil if none) and the least compute time above u
// of a range it rejected (+Inf if none): the next bound at which the test may change.
// ok is false past the search's limit on states.
func (s *sharedSearch) run(u float64) (bounds []int, rejected float64, ok bool) {
	e, p := s.d.e, s.d.p
	n, S := e.Layers(), e.Stages()
	rejected = math.Inf(1)
	s.failed = map[int][][]deviceMem{} // the nodes count over every test of one search
	// finish[j][a] by dynamic programming from the last chunk back.
	s.finish = make([][]bool, S+1)
	for j := range s.finish {
		s.finish[j] = make([]bool, n+1)
	}
	s.finish[S][n] = true
	for j := S - 1; j >= 0; j-- {
		for a := j; a < n; a++ {
			end := a
			for ; end < n && e.Compute(j, a, end) <= u; end++ {
				if (end+1 == n || e.CutAllowed(end+1)) && s.finish[j+1][end+1] {
					s.finish[j][a] = true
					break
				}
			}
			if !s.finish[j][a] && end < n {
				rejected = min(rejected, e.Compute(j, a, end))
			}
		}
	}
	if !s.finish[0][0] {
		return nil, rejected, true
	}
	b := make([]int, S+1)
	b[S] = n
	used := make([]deviceMem, p)
	var dfs func(j, a int) (found, ok bool)
	dfs = func(j, a int) (bool, bool) {
		if j == S {
			return a == n, true
		}
		if s.nodes++; s.nodes > s.limit {
			return false, false
		}
		key := j*(n+1) + a
		for _, f := range s.failed[key] {
			dominated := true
			for dev := range used {
				if !used[dev].covers(f[dev]) {
					dominated = false
					break
				}
			}
			if dominated {
				return false, true
			}
		}
		dev := j % p
		ends := 0 // the longest end within the bound and the device's budget
		for end := a; end < n; end++ {
			if c := e.Compute(j, a, end); c > u {
				rejected = min(rejected, c)
				break
			}
			if s.d.addedTotal(used[dev], j, s.alloc(j, a, end))+s.restMin[j*p+dev] > s.d.avail[dev] {
				break
			}
			ends = end - a + 1
		}
		// Ends nearest an even share of the layers left first (then alternately longer and
		// shorter): a device's chunks hold about equal layers in the splits that fit.
		even := a + (n-a)/(S-j) - 1
		for k := 0; k < 2*ends; k++ {
			end := even + (k+1)/2
			if k%2 == 1 {
				end = even - (k+1)/2
			}
			if end < a || end > a+ends-1 {
				continue
			}
			if !s.finish[j+1][end+1] || end+1 < n && !e.CutAllowed(end+1) {
				continue
			}
			was := used[dev]
			used[dev] = s.d.add(was, j, s.alloc(j, a, end))
			b[j] = a
			found, ok := dfs(j+1, end+1)
			used[dev] = was
			if !ok {
				return false, false
			}
			if found {
				return true, true
			}
		}
		if len(s.failed[key]) < maxFailed {
			s.failed[key] = append(s.failed[key], append([]deviceMem(nil), used...))
		}
		return false, true
	}
	found, ok := dfs(0, 0)
	if !ok || !found {
		return nil, rejected, ok
	}
	return append([]int(nil), b...), rejected, true
}

// shareLimits sets each chunk's LimitBytes to what its device leaves it beside the
// device's other chunks: its memory plus the device's headroom (negative when the
// device is over), so that a chunk fits its limit exactly when its device's total fits.
func (d *devicesOf) shareLimits(p *Plan) {
	totals := d.totals(p.Boundaries)
	for j := range p.Stages {
		s := &p.Stages[j]
		dev := j % d.p
		s.LimitBytes = s.MemoryBytes + d.limit[dev] - d.memory(totals[dev])
	}
}
