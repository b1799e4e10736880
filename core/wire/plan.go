package wire

import (
	"fmt"
	"strings"
)

// The types below are a result's plan, simulated schedule and placement as data: the
// planner's own types (core/plan, core/schedule, core/cluster) are converted to them by
// core/request, so that a program that reads results links none of the planner. Their
// JSON is the planner's, field for field (docs/request.md).

// Plan is an optimal split of a model over a cluster (core/plan's Plan).
type Plan struct {
	// TimeUnit of the model's times: seconds or cycles.
	TimeUnit string `json:"time_unit"`
	// Objective names what was minimised.
	Objective string `json:"objective"`
	// Boundaries: [0, s1, ..., n]; stage i holds layers Boundaries[i] .. Boundaries[i+1]-1
	// of the layer order: the model's, or LayerOrder when set.
	Boundaries []int `json:"boundaries"`
	// Partition is how the split was found: PartitionGraph when the model's tensor graph
	// was split, else empty: ranges of the layer order.
	Partition string `json:"partition,omitempty"`
	// LayerOrder, for a graph split whose stages are not all contiguous in the model's
	// layer order: the model's layers stage by stage (each stage's ascending), a
	// topological order of the graph in which every stage is contiguous. Boundaries and
	// every stage's FirstLayer and LastLayer are positions in it; Stage.Layers lists
	// each stage's layers as the model numbers them. Empty: the model's own order.
	LayerOrder []int `json:"layer_order,omitempty"`
	// GraphFallback says why a graph split was asked for but the split is of ranges of
	// the layer order.
	GraphFallback *GraphFallback `json:"graph_fallback,omitempty"`
	// Stages with their costs.
	Stages []Stage `json:"stages"`
	// BottleneckSeconds is the minimised value (max stage compute, or max compute + max
	// transfer) in seconds, and BottleneckCycles in device 0's cycles when the model's
	// unit is cycles.
	BottleneckSeconds float64 `json:"bottleneck_seconds"`
	BottleneckCycles  float64 `json:"bottleneck_cycles,omitempty"`
}

// Bottleneck is the minimised value in the model's unit: BottleneckCycles for a model in
// cycles, else BottleneckSeconds.
func (p *Plan) Bottleneck() float64 {
	if p.TimeUnit == "cycles" {
		return p.BottleneckCycles
	}
	return p.BottleneckSeconds
}

// GraphFallback says why a plan asked to split the graph split ranges of the layer order
// instead.
type GraphFallback struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// Stage is one pipeline stage of a plan.
type Stage struct {
	Device string `json:"device,omitempty"`
	// FirstLayer and LastLayer: the stage holds layers FirstLayer .. LastLayer of the
	// plan's layer order (Plan.LayerOrder when set, else the model's).
	FirstLayer int `json:"first_layer"`
	LastLayer  int `json:"last_layer"`
	// Layers, when the plan has a LayerOrder: the stage's layers as the model numbers
	// them, ascending (Plan.StageLayers gives them for every plan).
	Layers []int `json:"layers,omitempty"`
	// FirstName and LastName are the names of its first and last layers.
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	// ComputeSeconds is the stage's forward and backward time for one microbatch;
	// TransferSeconds the time of its transfers (in and out) for one microbatch.
	ComputeSeconds  float64 `json:"compute_seconds"`
	TransferSeconds float64 `json:"transfer_seconds"`
	// ComputeCycles and TransferCycles: the same in device 0's cycles, for a model in
	// cycles.
	ComputeCycles  float64 `json:"compute_cycles,omitempty"`
	TransferCycles float64 `json:"transfer_cycles,omitempty"`
	// Memory and its parts. LimitBytes is the device's limit; for a chunk of an
	// interleaved schedule, what its device leaves it beside the device's other chunks.
	MemoryBytes     int64 `json:"memory_bytes"`
	LimitBytes      int64 `json:"limit_bytes"`
	ParamBytes      int64 `json:"param_bytes"`
	OptimizerBytes  int64 `json:"optimizer_bytes"`
	ExclusiveBytes  int64 `json:"exclusive_bytes"`
	SharedBytes     int64 `json:"shared_bytes"`
	PeakBytes       int64 `json:"peak_bytes"`
	ActivationBytes int64 `json:"activation_bytes"`
	StashBytes      int64 `json:"stash_bytes"`
	InFlight        int   `json:"in_flight"`
	RecvBytes       int64 `json:"recv_bytes"`
	SendBytes       int64 `json:"send_bytes"`
	// OptimizerTempBytes is what the optimizer step allocates for the stage's parameters;
	// FrameworkBytes the framework's fixed memory and ReservedBytes the caching
	// allocator's reserve, all in MemoryBytes.
	OptimizerTempBytes int64 `json:"optimizer_temp_bytes,omitempty"`
	FrameworkBytes     int64 `json:"framework_bytes,omitempty"`
	ReservedBytes      int64 `json:"reserved_bytes,omitempty"`
	// Memory is MemoryBytes by what it holds, at the stage's peak.
	Memory Memory `json:"memory"`
	// Recompute is what the stage recomputes under per-layer recomputation, and what it
	// costs; nil otherwise.
	Recompute *StageRecompute `json:"recompute,omitempty"`
}

// Time is the stage's compute and transfer time in the model's unit: cycles for a model
// in cycles, else seconds.
func (s *Stage) Time(unit string) (compute, transfer float64) {
	if unit == "cycles" {
		return s.ComputeCycles, s.TransferCycles
	}
	return s.ComputeSeconds, s.TransferSeconds
}

// Memory is a stage's memory at its peak by what holds it; the fields add up to the
// stage's MemoryBytes exactly (core/plan's Memory says what each holds).
type Memory struct {
	WeightsBytes   int64 `json:"weights_bytes"`
	GradsBytes     int64 `json:"grads_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// GradCopyBytes are 16-bit copies of the gradients kept beside the fp32 ones
	// through the step (training.precision deepspeed-bf16, DeepSpeed's BF16 optimizer),
	// apart from GradsBytes; the data-parallel reduction does not move them.
	GradCopyBytes int64 `json:"grad_copy_bytes,omitempty"`
	// PipelineBufferBytes are the boundary tensors a PyTorch pipeline stage holds for
	// the step's microbatches beside its activations (framework eager or compiled on
	// pipeline stages: the receive buffers of its inputs and of their output gradients,
	// its outputs awaiting their backward), kept from step to step.
	PipelineBufferBytes int64 `json:"pipeline_buffer_bytes,omitempty"`
	ActivationBytes     int64 `json:"activation_bytes"`
	TemporaryBytes      int64 `json:"temporary_bytes"`
	OtherBytes          int64 `json:"other_bytes"`
	FrameworkBytes      int64 `json:"framework_bytes"`
	ReservedBytes       int64 `json:"reserved_bytes"`
	// Phase is when the peak is: PhasePasses or PhaseOptimizer.
	Phase string `json:"phase"`
}

// The phases of a stage's peak (Memory.Phase).
const (
	PhasePasses    = "passes"
	PhaseOptimizer = "optimizer"
)

// Total is the sum of the parts: the stage's MemoryBytes.
func (m Memory) Total() int64 {
	return m.WeightsBytes + m.GradsBytes + m.GradCopyBytes + m.PipelineBufferBytes + m.OptimizerBytes + m.ActivationBytes + m.TemporaryBytes +
		m.OtherBytes + m.FrameworkBytes + m.ReservedBytes
}

// StageRecompute is what a stage recomputes under per-layer recomputation and what that
// costs.
type StageRecompute struct {
	// Layers are the layers that recompute something, in the plan's layer order.
	Layers []RecomputedLayer `json:"layers"`
	// ExtraSeconds is the time the recomputation adds to the stage's backward pass for
	// one microbatch (in Stage.ComputeSeconds); ExtraCycles the same in device 0's
	// cycles for a model in cycles.
	ExtraSeconds float64 `json:"extra_seconds"`
	ExtraCycles  float64 `json:"extra_cycles,omitempty"`
	// SavedBytes is the memory it saves the stage.
	SavedBytes int64 `json:"saved_bytes"`
	// WholeStage says the stage recomputes its whole forward pass keeping only its input.
	WholeStage bool `json:"whole_stage,omitempty"`
	// Summary says it for people: what front ends show as it is.
	Summary string `json:"summary"`
}

// RecomputedLayer is one layer's recomputation.
type RecomputedLayer struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Part is what it recomputes: RecomputeLayer (the whole layer, from its input),
	// RecomputeAttention (the attention core), or another set of a block's parts named
	// by Megatron-LM's --recompute-modules names joined by commas ("layernorm,moe_act").
	Part string `json:"part"`
}

// The parts of a layer a per-layer recomputation rebuilds (RecomputedLayer.Part; core/
// recompute's Full and Attention).
const (
	RecomputeLayer     = "full"
	RecomputeAttention = "core_attn"
)

// RecomputeLabel says what a part (RecomputedLayer.Part) recomputes, for people: "whole
// layer", "attention core", or the modules of another set of a block's parts
// ("layernorm, moe_act").
func RecomputeLabel(part string) string {
	switch part {
	case RecomputeLayer:
		return "whole layer"
	case RecomputeAttention:
		return "attention core"
	}
	return strings.ReplaceAll(part, ",", ", ")
}

// StageLayers lists the model's layers that stage i holds, ascending: Layers for a graph
// split in an order of its own, else FirstLayer .. LastLayer.
func (p *Plan) StageLayers(i int) []int {
	s := &p.Stages[i]
	if s.Layers != nil {
		return s.Layers
	}
	out := make([]int, 0, s.LastLayer-s.FirstLayer+1)
	for l := s.FirstLayer; l <= s.LastLayer; l++ {
		out = append(out, l)
	}
	return out
}

// StageOfLayer returns the stage of each of the model's layers (indexed as the model
// numbers them).
func (p *Plan) StageOfLayer() []int {
	n := 0
	if k := len(p.Boundaries); k > 0 {
		n = p.Boundaries[k-1]
	}
	out := make([]int, n)
	for i := range p.Stages {
		for _, l := range p.StageLayers(i) {
			if l >= 0 && l < n {
				out[l] = i
			}
		}
	}
	return out
}

// Runs splits ascending layer indices into maximal runs of consecutive ones, [first,
// last]: what a function of ranges of layers is summed over for a stage's layers
// (core/plan), and how front ends write a stage's layers (LayerRuns).
func Runs(layers []int) [][2]int {
	var out [][2]int
	for _, l := range layers {
		if k := len(out); k > 0 && out[k-1][1] == l-1 {
			out[k-1][1] = l
			continue
		}
		out = append(out, [2]int{l, l})
	}
	return out
}

// LayerRuns writes ascending layer indices as runs: "0–7", or "0–12, 14, 17–20" for a
// stage of a graph split that is not contiguous in the model's layer order.
func LayerRuns(layers []int) string {
	var b strings.Builder
	for _, r := range Runs(layers) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if r[0] == r[1] {
			fmt.Fprintf(&b, "%d", r[0])
		} else {
			fmt.Fprintf(&b, "%d–%d", r[0], r[1])
		}
	}
	return b.String()
}

// OpKind is what an operation of a schedule computes.
type OpKind string

// The operation kinds.
const (
	// OpForward of one microbatch through one stage.
	OpForward OpKind = "F"
	// OpBackward: the whole backward, or in ZB-H1 only the input gradient.
	OpBackward OpKind = "B"
	// OpWeightGrad is ZB-H1's weight-gradient work, split off the backward.
	OpWeightGrad OpKind = "W"
)

// Event is one operation as it ran, for drawing a timeline.
type Event struct {
	// Stage is the model stage; Chunk its index among its device's stages.
	Stage int    `json:"stage"`
	Chunk int    `json:"chunk"`
	Kind  OpKind `json:"kind"`
	// Microbatch is the microbatch (batch, for the overlap schedule); -1 for a dummy
	// input.
	Microbatch int `json:"microbatch"`
	// Step is the lockstep step the operation belongs to; -1 in schedules that do not
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

// ScheduleResult is a simulated run of one step (core/schedule's Result).
type ScheduleResult struct {
	// Schedule as a request names it, microbatches, devices.
	Schedule     string `json:"schedule"`
	Microbatches int    `json:"microbatches"`
	Recompute    bool   `json:"recompute"`
	Devices      int    `json:"devices"`
	// StageDevices[s] is the device that runs stage s.
	StageDevices []int `json:"stage_devices"`
	// MakespanSeconds is the time from the first operation's start to the last one's end.
	MakespanSeconds float64 `json:"makespan_seconds"`
	// BubbleFraction is the share of device time spent idle (or on dummy inputs).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Throughput in samples per second of the pipeline alone, for one replica.
	Throughput float64 `json:"pipeline_samples_per_second"`
	// BusySeconds per device: the time it computes real work.
	BusySeconds []float64 `json:"busy_seconds"`
	// PeakMemoryBytes per device.
	PeakMemoryBytes []int64 `json:"peak_memory_bytes"`
	// LimitBytes per device, when the pipeline states them.
	LimitBytes []int64 `json:"limit_bytes,omitempty"`
	// MaxInFlight per stage: the most microbatches in flight at once.
	MaxInFlight []int `json:"max_in_flight"`
	// InFlight per stage over time.
	InFlight [][]Sample `json:"in_flight,omitempty"`
	// Advice says how to run the pipeline better.
	Advice []string `json:"advice,omitempty"`
	// Events per device in the device's order.
	Events [][]Event `json:"events,omitempty"`
}

// Link is a link's cost as the cluster gives it (core/cluster's Link): latency and
// bandwidth, or Graphcore's GB/s and idle cycles.
type Link struct {
	LatencySeconds float64 `json:"latency_seconds,omitempty"`
	BytesPerSecond float64 `json:"bytes_per_second,omitempty"`
	GBps           float64 `json:"gbps,omitempty"`
	IdleCycles     int64   `json:"idle_cycles,omitempty"`
}

// Placement is where a run's stages, replicas and tensor-parallel groups sit on a
// cluster of nodes, and which links their traffic crosses (core/cluster's Placement).
type Placement struct {
	// Order numbers the ranks: "tdp" (tensor, data, pipeline) or "tpd".
	Order    string `json:"order"`
	Pipeline int    `json:"pipeline"`
	Data     int    `json:"data"`
	Tensor   int    `json:"tensor"`
	// Context is the context-parallel degree; 0 for none.
	Context int `json:"context,omitempty"`
	// Nodes is the number of nodes the run occupies.
	Nodes int `json:"nodes"`
	// StageLinks[i] is the link between stage i and i+1; StageCrossesNodes says whether
	// the transfer crosses nodes.
	StageLinks        []Link `json:"stage_links"`
	StageCrossesNodes []bool `json:"stage_crosses_nodes"`
	// DataLink is the slowest link a data-parallel ring crosses; DataCrossesNodes says
	// whether some ring crosses nodes.
	DataLink         Link `json:"data_link"`
	DataCrossesNodes bool `json:"data_crosses_nodes"`
	// TensorLink is the link of the tensor-parallel all-reduces.
	TensorLink Link `json:"tensor_link"`
}
