package schedule

import (
	"fmt"

	"pipeplan/core/model"
)

// Pipeline is what a schedule runs: stages in model order with their per-microbatch costs,
// and the transfers between consecutive stages. Times are in seconds; a profile in cycles
// converts with the device clock before it comes here (core/plan does).
type Pipeline struct {
	// Stages in model order. Stage s runs on device s, or s mod p for Interleaved.
	Stages []Stage `json:"stages"`
	// TransferSeconds[s] is the time to move one microbatch's activations from stage s to
	// s+1 (link latency + bytes / bandwidth), and its gradients back; len(Stages)-1 entries,
	// or none for free transfers.
	TransferSeconds []float64 `json:"transfer_seconds,omitempty"`
	// MicrobatchSize is the samples in one microbatch, for the throughput; 0 means 1.
	MicrobatchSize int `json:"microbatch_size,omitempty"`
	// LimitBytes, when set, is each device's memory limit: a peak above it gets advice.
	LimitBytes []int64 `json:"limit_bytes,omitempty"`
	// FixedBytes is the framework's memory on every device outside the model's tensors
	// (CUDA context, workspaces), and AllocatorReserve the fraction of a device's
	// allocated peak its caching allocator keeps beyond it (rounded up): both count in
	// the device's peak (cluster.Framework).
	FixedBytes       int64   `json:"fixed_bytes,omitempty"`
	AllocatorReserve float64 `json:"allocator_reserve,omitempty"`
}

// Stage is one stage's cost for one microbatch.
type Stage struct {
	// ForwardSeconds and BackwardSeconds: the whole backward, input and weight gradients.
	ForwardSeconds  float64 `json:"forward_seconds"`
	BackwardSeconds float64 `json:"backward_seconds"`
	// WeightGradSeconds is the part of BackwardSeconds that computes weight gradients:
	// ZB-H1 runs it as a separate W operation, and the rest as B. Other schedules ignore it.
	WeightGradSeconds float64 `json:"weight_grad_seconds,omitempty"`
	// StaticBytes are always alive: parameters, optimizer state, code.
	StaticBytes int64 `json:"static_bytes"`
	// ActivationBytes is what one microbatch keeps from its forward until its backward.
	ActivationBytes int64 `json:"activation_bytes"`
	// InputBytes is the stage's input for one microbatch: all that recomputation keeps.
	InputBytes int64 `json:"input_bytes,omitempty"`
	// PeakBytes is one microbatch's working peak while the stage runs it (core/estimate's
	// not-always-alive peak); below ActivationBytes (0 included) it is read as
	// ActivationBytes, all alive where the microbatch's forward ends
	// (model.WorkingPeakBytes, the planner's rule too). A device's peak counts it for the
	// microbatch at work and what the others in flight keep.
	PeakBytes int64 `json:"peak_bytes,omitempty"`
	// WeightGradBytes is what ZB-H1 keeps per microbatch from B until W.
	WeightGradBytes int64 `json:"weight_grad_bytes,omitempty"`
	// OptimizerTempBytes is what the optimizer step allocates for the stage's
	// parameters once the passes are done: a device's peak is the larger of its passes'
	// and its stages' optimizer temporaries, over StaticBytes.
	OptimizerTempBytes int64 `json:"optimizer_temp_bytes,omitempty"`
}

// validate checks the pipeline's fields; errors name the field path.
func (p *Pipeline) validate() error {
	var es model.Errors
	if len(p.Stages) == 0 {
		es.Add("stages", "must hold at least one stage")
	}
	for i, s := range p.Stages {
		path := fmt.Sprintf("stages[%d]", i)
		es.NonNegative(path+".forward_seconds", s.ForwardSeconds)
		es.NonNegative(path+".backward_seconds", s.BackwardSeconds)
		es.NonNegative(path+".weight_grad_seconds", s.WeightGradSeconds)
		if s.WeightGradSeconds > s.BackwardSeconds {
			es.Add(path+".weight_grad_seconds", "must be <= backward_seconds (%v), got %v", s.BackwardSeconds, s.WeightGradSeconds)
		}
		for _, f := range []struct {
			name string
			v    int64
		}{{"static_bytes", s.StaticBytes}, {"activation_bytes", s.ActivationBytes}, {"input_bytes", s.InputBytes},
			{"peak_bytes", s.PeakBytes}, {"weight_grad_bytes", s.WeightGradBytes}, {"optimizer_temp_bytes", s.OptimizerTempBytes}} {
			if f.v < 0 {
				es.Add(path+"."+f.name, "must be >= 0, got %d", f.v)
			}
		}
	}
	if n := len(p.TransferSeconds); n != 0 && n != len(p.Stages)-1 {
		es.Add("transfer_seconds", "must hold one time per boundary (%d) or none, got %d", max(0, len(p.Stages)-1), n)
	}
	for i, t := range p.TransferSeconds {
		es.NonNegative(fmt.Sprintf("transfer_seconds[%d]", i), t)
	}
	for i, l := range p.LimitBytes {
		if l < 0 {
			es.Add(fmt.Sprintf("limit_bytes[%d]", i), "must be >= 0, got %d", l)
		}
	}
	if p.MicrobatchSize < 0 {
		es.Add("microbatch_size", "must be >= 0, got %d", p.MicrobatchSize)
	}
	if p.FixedBytes < 0 || p.FixedBytes > 1<<60 {
		es.Add("fixed_bytes", "must be between 0 and 2^60, got %d", p.FixedBytes)
	}
	if r := p.AllocatorReserve; !(r >= 0 && r <= 1) {
		es.Add("allocator_reserve", "must be in [0, 1], got %v", r)
	}
	return es.Err()
}

func (p *Pipeline) transfer(boundary int) float64 {
	if len(p.TransferSeconds) == 0 {
		return 0
	}
	return p.TransferSeconds[boundary]
}

// OpKind is what an operation computes.
type OpKind string

// The operation kinds.
const (
	// Forward of one microbatch through one stage.
	Forward OpKind = "F"
	// Backward: the whole backward, or in ZB-H1 only the input gradient. Under
	// recomputation it includes the forward that rebuilds the activations.
	Backward OpKind = "B"
	// WeightGrad is ZB-H1's weight-gradient work, split off the backward.
	WeightGrad OpKind = "W"
)

// Event is one operation as it ran, for drawing a timeline.
type Event struct {
	// Stage is the model stage; Chunk its index among its device's stages (s / p).
	Stage int    `json:"stage"`
	Chunk int    `json:"chunk"`
	Kind  OpKind `json:"kind"`
	// Microbatch is the microbatch (batch, for Overlap); -1 for a dummy input.
	Microbatch int `json:"microbatch"`
	// Step is the lockstep step the operation belongs to (the IPU's pipeline cycle, an
	// iteration of jax_tpu_embedding's SparseCore pipelining); -1 in schedules that do not
	// run in lockstep.
	Step         int     `json:"step"`
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
}

// Sample is a value of a step function over time: Count from TimeSeconds on.
type Sample struct {
	TimeSeconds float64 `json:"time_seconds"`
	Count       int     `json:"count"`
}

// Result is a simulated run of one step.
type Result struct {
	// Schedule as Parse reads it, microbatches, devices.
	Schedule     string `json:"schedule"`
	Microbatches int    `json:"microbatches"`
	Recompute    bool   `json:"recompute"`
	Devices      int    `json:"devices"`
	// StageDevices[s] is the device that runs stage s.
	StageDevices []int `json:"stage_devices"`
	// MakespanSeconds is the time from the first operation's start to the last one's end.
	MakespanSeconds float64 `json:"makespan_seconds"`
	// BubbleFraction is the share of device time spent idle (or on dummy inputs):
	// 1 - sum of busy seconds / (devices * makespan).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Throughput in samples per second of the pipeline alone: microbatches * microbatch
	// size / makespan, for one replica, without the work a step does once (optimizer
	// update, gradient all-reduces; core/request's Step has the whole step).
	Throughput float64 `json:"pipeline_samples_per_second"`
	// BusySeconds per device: the time it computes real work.
	BusySeconds []float64 `json:"busy_seconds"`
	// PeakMemoryBytes per device (= per stage except for Interleaved, where a device
	// holds several stages): its stages' static memory, the larger of the passes' peak
	// and the optimizer step's temporaries, the allocator's reserve and the framework's
	// fixed memory (Pipeline.FixedBytes).
	PeakMemoryBytes []int64 `json:"peak_memory_bytes"`
	// LimitBytes per device, when the pipeline states them.
	LimitBytes []int64 `json:"limit_bytes,omitempty"`
	// MaxInFlight per stage: the most microbatches whose forward has started and whose
	// backward (B) has not ended at once.
	MaxInFlight []int `json:"max_in_flight"`
	// InFlight per stage over time.
	InFlight [][]Sample `json:"in_flight,omitempty"`
	// Advice says how to run the pipeline better.
	Advice []string `json:"advice,omitempty"`
	// Events per device in the device's order.
	Events [][]Event `json:"events,omitempty"`
}
