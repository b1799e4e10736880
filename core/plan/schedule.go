package plan

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// ScheduleOptions makes a plan schedule-aware: the partitioner charges each stage the
// activations of the microbatches the schedule keeps in flight on it, and the plan carries
// a simulated run of one step (core/schedule).
//
// Interleaved with v chunks plans p*v contiguous stages, stage j on device j mod p, each
// with 1/v of its device's memory (a conservative share: the simulation then reports what
// each device really holds at its peak). The wrap-around transfer from device p-1 to
// device 0 uses the link between devices 0 and 1, which the cluster describes.
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

	// deviceFixedBytes is the framework's fixed memory of a whole device
	// (estimate.Options.FixedBytes before Interleaved shares it among the chunks).
	deviceFixedBytes int64
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
		// Each chunk has 1/v of its device's memory, and carries 1/v of the framework's
		// fixed memory (rounded up).
		v := int64(so.Chunks)
		opt.Estimate.FixedBytes = (opt.Estimate.FixedBytes + v - 1) / v
	}
	counts, err := schedule.InFlight(so.Config, len(sc.Devices))
	if err != nil {
		return nil, err
	}
	if len(sc.Devices) > len(c.Devices) {
		if counts, err = deviceShares(so.Config, counts, len(c.Devices)); err != nil {
			return nil, err
		}
	}
	opt.Estimate.InFlight = func(i int) int { return counts[i] }
	return sc, nil
}

// deviceShares spreads each device's peak of in-flight microbatch-chunks over its
// chunks (schedule.DeviceInFlight), so that the chunks' counts add up to what the device
// holds at its peak rather than to the sum of each chunk's own peak: the chunks of an
// interleaved schedule peak at different times, and a device needs the maximum over time
// of their sum (Korthikanti et al. 2022: 1 + (p-1)/(pv) times p microbatches on the
// first device, where summing the chunks' maxima gives about a quarter more). Chunks of
// one device hold about equal layers, so equal shares (the remainder to the first) keep
// the device's total; no chunk gets more than its own peak (water-filling: what a chunk
// cannot take goes to the others).
func deviceShares(cfg schedule.Config, counts []int, devices int) ([]int, error) {
	totals, err := schedule.DeviceInFlight(cfg, len(counts), devices)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(counts))
	v := len(counts) / devices
	for d := 0; d < devices; d++ {
		// Water-filling: the chunks with the lowest peaks first, each its equal share of
		// what is left or its own peak, whichever is less.
		chunks := make([]int, v)
		for k := range chunks {
			chunks[k] = k*devices + d
		}
		sort.SliceStable(chunks, func(a, b int) bool { return counts[chunks[a]] < counts[chunks[b]] })
		left := totals[d]
		for k, j := range chunks {
			share := (left + (v - k) - 1) / (v - k) // ceil(left / chunks remaining)
			out[j] = max(1, min(share, counts[j]))
			left -= out[j]
		}
	}
	return out, nil
}

// stageCluster returns the cluster of p*v stages that Interleaved runs on p devices:
// stage j on device j mod p with 1/v of its memory; the link from stage j to j+1 is the
// one between their devices (devices 0 and 1's for the wrap from p-1 to 0). The host link
// and HostEveryStage carry over: with it, every stage waits for both host transfers.
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
		d := c.Devices[j%p]
		d.MemoryBytes /= int64(v)
		s.Devices = append(s.Devices, d)
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
	// (Graphcore's bulk-synchronous exchange, seed 000) every stage waits for both.
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
