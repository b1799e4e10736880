// Package schedule simulates how a pipeline runs under a schedule: which device runs which
// forward or backward work of which microbatch when, how long one training step (or one
// batch of inference) takes, how much of it devices sit idle (the bubble), how many
// microbatches each stage holds at once, and the memory that needs.
//
// # Method
//
// Every schedule is two things: a rule that orders each device's operations (forward F,
// backward B, and for zero-bubble schedules the weight-gradient W split off B), and the
// data dependencies between operations, which are the same for all schedules: F of stage s
// needs F of stage s-1 of the same microbatch plus the transfer over the boundary; B of
// stage s needs B of stage s+1 (or the stage's own F on the last stage) plus the transfer
// back; W needs its B. Lockstep schedules (the IPU's bulk-synchronous pipeline cycles,
// popxl's pipelining guide; the TPU's three-phase steps, jax_tpu_embedding's SparseCore
// pipelining) add a barrier after each step.
//
// The simulation is list scheduling over that graph: an operation starts when its device has
// finished the operation before it in the device's order and all its inputs have arrived.
// With fixed orders the start times are the longest paths in a directed acyclic graph, so
// they are computed exactly in one topological pass (Kahn's algorithm), independent of the
// order in which ready operations are visited: the result is deterministic.
//
// # Memory
//
// A stage keeps a microbatch's activations from the start of its forward to the end of its
// backward (B; the input gradient in ZB-H1, whose W keeps only WeightGradBytes). Under
// recomputation it keeps only the stage input and rebuilds the rest in the backward. A
// device's peak is its stages' static bytes, plus the largest sum over time of what its
// in-flight microbatches keep, with one of them counted at its working peak (PeakBytes)
// instead of what it keeps. For one stage per device this is exactly what core/estimate
// charges a range with the same number of microbatches in flight.
//
// References: GPipe (Huang et al. 2019); PipeDream-Flush / 1F1B (Narayanan et al. 2021);
// Megatron-LM's interleaved schedule (Narayanan et al. 2021, "Efficient large-scale
// language model training on GPU clusters") and PyTorch's ScheduleInterleaved1F1B
// (torch.distributed.pipelining, which orders it with a shorter warm-up when m = p,
// interleaved-pytorch:V); ZB-H1 (Qi et al. 2023, "Zero Bubble
// Pipeline Parallelism"); popxl's pipelining guide; TPU SparseCore and
// TensorCore overlap (jax_tpu_embedding's SparseCore pipelining).
package schedule

import (
	"fmt"
	"strconv"
	"strings"

	"pipeplan/core/model"
)

// Kind names a schedule.
type Kind string

// The schedules.
const (
	// GPipe runs all forwards, then all backwards (fill-drain): m microbatches in flight.
	GPipe Kind = "gpipe"
	// OneFOneB is PipeDream-Flush: p-1-i warm-up forwards on stage i, then one forward
	// and one backward alternately; stage i holds min(p-i, m) microbatches.
	OneFOneB Kind = "1f1b"
	// Interleaved is Megatron-LM's interleaved 1F1B: the model is cut into p*v stages and
	// device d runs stages d, d+p, d+2p, ... (v model chunks per device). With
	// Config.PyTorchOrder, PyTorch's ScheduleInterleaved1F1B.
	Interleaved Kind = "interleaved"
	// ZBH1 is the zero-bubble schedule ZB-H1 (Qi et al. 2023): 1F1B with the backward
	// split into the input gradient B and the weight gradient W; stage i delays its W
	// passes by i microbatches so that they fill the tail of the pipeline.
	ZBH1 Kind = "zb-h1"
	// IPU is Graphcore's pipelining (popxl's pipelining guide): forward stages on devices 0..p-1, the loss
	// and the last backward on device p-1, backward stages back down on the same devices,
	// 2p-1 pipeline stages run in lockstep cycles; device i stashes its activations in a
	// FIFO of depth backward_stage - forward_stage = 2(p-1-i).
	IPU Kind = "ipu"
	// Overlap is jax_tpu_embedding's SparseCore pipelining's three-phase TPU pipeline on two stages: SparseCore (stage 0:
	// embedding forward and backward) and TensorCore (stage 1: dense forward and backward).
	// Step i runs SC backward of batch i-2, then SC forward of batch i, while TC runs batch
	// i-1; n + 2 steps, no dense work in the first and last, dummy inputs in the last two.
	Overlap Kind = "overlap"
	// Inference runs forwards only.
	Inference Kind = "inference"
)

// Kinds lists the schedules in the order the command line documents them.
var Kinds = []Kind{GPipe, OneFOneB, Interleaved, ZBH1, IPU, Overlap, Inference}

// Config chooses a schedule.
type Config struct {
	// Kind is the schedule.
	Kind Kind `json:"kind"`
	// Microbatches per step (m; n batches for Overlap).
	Microbatches int `json:"microbatches"`
	// Chunks is v, the model chunks per device, for Interleaved (>= 2).
	Chunks int `json:"chunks,omitempty"`
	// PyTorchOrder, for Interleaved, orders each device as PyTorch's
	// torch.distributed.pipelining.ScheduleInterleaved1F1B does (written
	// interleaved-pytorch:V) instead of as Megatron-LM does: the same orders for
	// m > p, but at m = p PyTorch still warms up only (v-1)p + 2(p-1-d) forwards on
	// device d (capped at mv), where Megatron-LM runs every forward before the first
	// backward, so fewer microbatches are in flight.
	PyTorchOrder bool `json:"pytorch_order,omitempty"`
	// Recompute stashes only each stage's input and recomputes the forward before each
	// backward.
	Recompute bool `json:"recompute,omitempty"`
}

// interleavedPyTorch is the name of Interleaved in PyTorch's order (Config.PyTorchOrder).
const interleavedPyTorch = "interleaved-pytorch"

// Parse reads a schedule name as the command line writes it: gpipe, 1f1b,
// interleaved:V, interleaved-pytorch:V, zb-h1, ipu, overlap or inference. Microbatches
// and Recompute are left to the caller.
func Parse(s string) (Config, error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	k := Kind(name)
	pytorch := name == interleavedPyTorch
	if pytorch {
		k = Interleaved
	}
	known := false
	for _, x := range Kinds {
		known = known || x == k
	}
	if !known {
		return Config{}, fmt.Errorf("unknown schedule %q: use gpipe, 1f1b, interleaved:V, interleaved-pytorch:V, zb-h1, ipu, overlap or inference", s)
	}
	c := Config{Kind: k, PyTorchOrder: pytorch}
	switch {
	case k == Interleaved && !hasArg:
		return Config{}, fmt.Errorf("schedule %q: %s needs its chunks per device, as %s:2", s, name, name)
	case k == Interleaved:
		v, err := strconv.Atoi(arg)
		if err != nil || v < 2 {
			return Config{}, fmt.Errorf("schedule %q: the chunks per device must be an integer >= 2", s)
		}
		c.Chunks = v
	case hasArg:
		return Config{}, fmt.Errorf("schedule %q: only interleaved takes an argument", s)
	}
	return c, nil
}

// String writes the schedule as Parse reads it.
func (c Config) String() string {
	if c.Kind == Interleaved && c.PyTorchOrder {
		return fmt.Sprintf("%s:%d", interleavedPyTorch, c.Chunks)
	}
	if c.Kind == Interleaved {
		return fmt.Sprintf("interleaved:%d", c.Chunks)
	}
	return string(c.Kind)
}

// chunks is v: the stages per device.
func (c Config) chunks() int {
	if c.Kind == Interleaved {
		return c.Chunks
	}
	return 1
}

// Training reports whether the schedule runs backward passes.
func (c Config) Training() bool { return c.Kind != Inference }

// Devices is the number of devices a pipeline of the given stages runs on: stages / v for
// Interleaved, stages otherwise.
func (c Config) Devices(stages int) int { return stages / c.chunks() }

// Depth is the number of pipeline stages a microbatch passes through one after another,
// the count in popxl's pipelining guide's rule that the microbatches per step should be at least twice
// it: 2p - 1 for the IPU's forward and backward stages, 3 phases for Overlap, p otherwise.
func (c Config) Depth(stages int) int {
	p := c.Devices(stages)
	switch c.Kind {
	case IPU:
		return 2*p - 1
	case Overlap:
		return 3
	}
	return p
}

// maxOps bounds the work of one simulation (operations), so that a huge input gives an
// error rather than exhausting memory.
const maxOps = 1 << 22

// MaxMicrobatches is the most microbatches the simulator takes on a pipeline of that many
// stages (chunks of every device counted): Config.Validate refuses more.
func MaxMicrobatches(stages int) int {
	if stages < 1 {
		return maxOps / 4
	}
	return maxOps / 4 / stages
}

// Validate checks the configuration for a pipeline of the given number of stages; errors
// name the field.
func (c Config) Validate(stages int) error {
	var es model.Errors
	known := false
	for _, k := range Kinds {
		known = known || k == c.Kind
	}
	if !known {
		es.Add("schedule", "unknown schedule %q", c.Kind)
		return es.Err()
	}
	if c.Microbatches < 1 {
		es.Add("microbatches", "must be >= 1, got %d", c.Microbatches)
	}
	if stages < 1 {
		es.Add("stages", "must hold at least one stage")
	}
	switch c.Kind {
	case Interleaved:
		v := c.Chunks
		switch {
		case v < 2:
			es.Add("chunks", "interleaved needs at least 2 chunks per device, got %d", v)
		case stages%v != 0:
			es.Add("stages", "interleaved:%d needs a multiple of %d stages (p devices times %d chunks), got %d", v, v, v, stages)
		case c.Microbatches >= 1 && c.Microbatches%(stages/v) != 0:
			es.Add("microbatches", "interleaved needs a multiple of the %d devices (Megatron-LM runs microbatches through the chunks in groups of p), got %d", stages/v, c.Microbatches)
		}
	case Overlap:
		if stages != 2 {
			es.Add("stages", "overlap runs on exactly 2 stages (SparseCore embedding, TensorCore dense), got %d", stages)
		}
	default:
		if c.Chunks != 0 && c.Chunks != 1 {
			es.Add("chunks", "only interleaved takes chunks, got %d for %s", c.Chunks, c.Kind)
		}
	}
	if c.PyTorchOrder && c.Kind != Interleaved {
		es.Add("pytorch_order", "only interleaved has PyTorch's order, got it for %s", c.Kind)
	}
	if c.Microbatches >= 1 && stages >= 1 && c.Microbatches > MaxMicrobatches(stages) {
		es.Add("microbatches", "%d microbatches on %d stages is more than the simulator takes (%d operations at most)", c.Microbatches, stages, maxOps)
	}
	return es.Err()
}
