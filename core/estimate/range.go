package estimate

import (
	"math"

	"pipeplan/core/model"
)

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
	// range's layers of (temporary + carried tensors + activations accumulated so far),
	// and at least ActivationBytes, all alive where its forward ends
	// (model.WorkingPeakBytes, the rule the schedule's simulation charges too).
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
	r.ActivationBytes = e.act[b+1] - e.act[a]
	r.PeakBytes = model.WorkingPeakBytes(peak-e.act[a], r.ActivationBytes)
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
