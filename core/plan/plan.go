// Package plan splits one model over one cluster: a validated model and cluster go in
// (with the schedule and the memory settings as Options), the optimal split comes out
// with every stage's costs and its simulated schedule, or an explanation a user can act
// on when nothing fits. It joins core/estimate (what a range of layers costs),
// core/partition (the best contiguous split) or core/dagsplit (a split of the layer
// graph), and core/schedule (the pipeline's simulation). Front ends do not call it:
// core/request prepares a request (defaults, presets, analytic costs, replicas and
// placement) and runs it through here.
package plan

import (
	"errors"
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
)

// Options configures a plan.
type Options struct {
	// Objective: partition.MaxCompute (default) or partition.MaxComputePlusTransfer.
	Objective partition.Objective
	// Estimate configures range costing (memory proportion, training or inference,
	// microbatches in flight per stage, recomputation).
	Estimate estimate.Options
	// Schedule, when set, plans for a pipeline schedule: its in-flight microbatches per
	// stage set the memory each stage needs (overriding Estimate.InFlight), and the plan
	// carries a simulated step. See ScheduleOptions.
	Schedule *ScheduleOptions
	// Graph splits the model's tensor graph into convex stages (core/dagsplit) rather
	// than its layer order into ranges: a model whose layers branch (a layer reading an
	// output other than the previous layer's) may then have stages that are not
	// contiguous in its layer order (Plan.LayerOrder). A chain is split as ranges either
	// way; a graph with more than MaxIdeals ideals (0: dagsplit.DefaultMaxIdeals), or
	// whose transfers are stated per cut of the layer order, falls back to ranges of
	// the layer order, and the plan says why (Plan.GraphFallback).
	Graph     bool
	MaxIdeals int
	// Recompute, when set, chooses per stage which layers (or parts of layers)
	// recompute their forward pass in the backward pass: each layer's options
	// (core/recompute), option 0 as the model states it. The split and each stage's
	// choice are optimal together: a stage costs its compute plus the least extra time
	// of a choice that fits its memory (Stage.Recompute says what it chose). It needs
	// training. Exact with either objective, on ranges of the layer order or with a
	// graph partition, with a device per stage; with an interleaved schedule (chunks
	// sharing their device's memory) exact up to MaxChunkSplits splits, beyond a
	// heuristic never slower than a global mode (autoElsewhere, Plan.RecomputeHeuristic).
	Recompute recompute.Choices
	// RecomputeStages adds to each stage's choices under Recompute the whole-stage form
	// that Estimate.Recompute costs for every stage: keep only the stage's input and
	// recompute its whole forward pass (a measured profile's global full), so that the
	// choice is never worse than that.
	RecomputeStages bool
	// RecomputeFixed names the parts (recompute.Option.Part) of the global modes a
	// request could name instead of auto (selective's, full): a plan under Recompute is
	// never slower than the plan with each of them on every layer, nor than none's.
	RecomputeFixed []string
}

// Plan is an optimal split of a model over a cluster.
type Plan struct {
	// Unit of every time in the plan: the model's.
	Unit model.TimeUnit `json:"time_unit"`
	// Objective names what was minimised.
	Objective string `json:"objective"`
	// Boundaries: [0, s1, ..., n]; stage i holds layers Boundaries[i] .. Boundaries[i+1]-1
	// of the layer order: the model's, or LayerOrder when set.
	Boundaries []int `json:"boundaries"`
	// Partition is how the split was found: PartitionGraph when Options.Graph split the
	// model's tensor graph (a chain's included), else empty: ranges of the layer order.
	Partition string `json:"partition,omitempty"`
	// LayerOrder, for a graph split whose stages are not all contiguous in the model's
	// layer order: the model's layers stage by stage (each stage's ascending), a
	// topological order of the graph in which every stage is contiguous. Boundaries and
	// every stage's FirstLayer and LastLayer are positions in it; Stage.Layers lists
	// each stage's layers as the model numbers them. Empty: the model's own order.
	LayerOrder []int `json:"layer_order,omitempty"`
	// GraphFallback says why a graph split was asked for (Options.Graph) but the split
	// is of ranges of the layer order.
	GraphFallback *GraphFallback `json:"graph_fallback,omitempty"`
	// Stages with their costs.
	Stages []Stage `json:"stages"`
	// Bottleneck is the minimised value, in the model's unit: max stage compute, or max
	// compute + max transfer. BottleneckSeconds is the same in seconds, and
	// BottleneckCycles in device 0's cycles when the model's unit is cycles.
	Bottleneck        float64 `json:"-"`
	BottleneckSeconds float64 `json:"bottleneck_seconds"`
	BottleneckCycles  float64 `json:"bottleneck_cycles,omitempty"`
	// MaxCompute and MaxTransfer over stages, in the model's unit.
	MaxCompute  float64 `json:"-"`
	MaxTransfer float64 `json:"-"`
	// Schedule is the simulated step under Options.Schedule, when set.
	Schedule *schedule.Result `json:"schedule,omitempty"`
	// RecomputeHeuristic, under per-layer recomputation (Options.Recompute), says why
	// what the stages recompute was chosen by a heuristic (never slower than a global
	// mode, not proven optimal) rather than exactly; empty when exact.
	RecomputeHeuristic string `json:"-"`
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
	// Compute and Transfer in the plan's unit (Plan.Unit).
	Compute  float64 `json:"-"`
	Transfer float64 `json:"-"`
	// ComputeSeconds is the stage's forward and backward time for one microbatch;
	// TransferSeconds the time of its transfers (in and out) for one microbatch.
	ComputeSeconds  float64 `json:"compute_seconds"`
	TransferSeconds float64 `json:"transfer_seconds"`
	// ComputeCycles and TransferCycles: the same in device 0's cycles, for a model in
	// cycles.
	ComputeCycles  float64 `json:"compute_cycles,omitempty"`
	TransferCycles float64 `json:"transfer_cycles,omitempty"`
	// Memory and its parts. LimitBytes is the device's limit; for a chunk of an
	// interleaved schedule, what its device leaves it beside the device's other chunks
	// (its memory plus the device's headroom), so that every chunk fits exactly when its
	// device's total does.
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
	// OptimizerTempBytes is what the optimizer step allocates for the stage's parameters
	// (in MemoryBytes when above the passes' peak and stash); FrameworkBytes the
	// framework's fixed memory and ReservedBytes the caching allocator's reserve, both
	// in MemoryBytes (estimate.Range).
	OptimizerTempBytes int64 `json:"optimizer_temp_bytes,omitempty"`
	FrameworkBytes     int64 `json:"framework_bytes,omitempty"`
	ReservedBytes      int64 `json:"reserved_bytes,omitempty"`
	// Memory is MemoryBytes by what it holds, at the stage's peak.
	Memory Memory `json:"memory"`
	// Recompute is what the stage recomputes under per-layer recomputation
	// (Options.Recompute), and what it costs; nil otherwise.
	Recompute *StageRecompute `json:"recompute,omitempty"`
}

// Memory is a stage's memory at its peak by what holds it; the fields add up to the
// stage's MemoryBytes exactly. The peak is the maximum over the step: during the passes
// (activations of the microbatches in flight and one microbatch's working memory), or
// during the optimizer step, when its temporaries outgrow that (the passes' activations
// are freed by then).
type Memory struct {
	// WeightsBytes, GradsBytes and OptimizerBytes: the parameters, their gradients, and
	// the optimizer state with master weights. A model layer's gradients are its
	// grad_bytes, or half of its param_bytes in training when it gives none.
	WeightsBytes   int64 `json:"weights_bytes"`
	GradsBytes     int64 `json:"grads_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// GradCopyBytes are 16-bit copies of the gradients kept beside fp32 ones through the
	// step (DeepSpeed's BF16 optimizer: training.precision deepspeed-bf16); the request
	// layer moves them here from GradsBytes. The data-parallel reduction does not move
	// them.
	GradCopyBytes int64 `json:"grad_copy_bytes,omitempty"`
	// PipelineBufferBytes are the boundary tensors a PyTorch pipeline stage holds for the
	// step's microbatches beside its activations (receive buffers for its inputs and
	// their output gradients, its outputs awaiting their backward:
	// cluster.PipelineStageBufferBytes), kept from step to step; the request layer moves
	// them here from OtherBytes.
	PipelineBufferBytes int64 `json:"pipeline_buffer_bytes,omitempty"`
	// ActivationBytes are kept for backward passes by the microbatches in flight (with
	// recomputation, the stashed inputs and one microbatch's rebuilt activations);
	// TemporaryBytes is working memory beyond them: a layer's transient tensors, or the
	// optimizer step's temporaries.
	ActivationBytes int64 `json:"activation_bytes"`
	TemporaryBytes  int64 `json:"temporary_bytes"`
	// OtherBytes: the model's exclusive and shared items that it does not say more of
	// (compiled code, a profile's shared variables).
	OtherBytes int64 `json:"other_bytes"`
	// FrameworkBytes is the framework's fixed memory (CUDA context, workspaces) and
	// ReservedBytes the caching allocator's reserve beyond the allocated peak.
	FrameworkBytes int64 `json:"framework_bytes"`
	ReservedBytes  int64 `json:"reserved_bytes"`
	// Phase is when the peak is: "passes" or "optimizer".
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

// memoryOf breaks a range's memory down (Memory). Gradients: each layer's grad_bytes, or
// half its param_bytes in training; none in inference.
func memoryOf(r estimate.Range, m *model.Model, inference bool) Memory {
	var grads int64
	if !inference {
		for l := r.First; l <= r.Last; l++ {
			layer := &m.Layers[l]
			g := layer.GradBytes
			if g == 0 {
				g = layer.ParamBytes / 2
			}
			grads += min(g, layer.ParamBytes)
		}
	}
	mem := Memory{WeightsBytes: r.ParamBytes - grads, GradsBytes: grads, OptimizerBytes: r.OptimizerBytes,
		OtherBytes: r.ExclusiveBytes + r.SharedBytes, FrameworkBytes: r.FrameworkBytes, ReservedBytes: r.ReservedBytes, Phase: PhasePasses}
	if passes := r.PeakBytes + r.StashBytes; r.OptimizerTempBytes > passes {
		mem.Phase, mem.TemporaryBytes = PhaseOptimizer, r.OptimizerTempBytes
	} else {
		kept := min(r.ActivationBytes, r.PeakBytes)
		mem.ActivationBytes = r.StashBytes + kept
		mem.TemporaryBytes = r.PeakBytes - kept
	}
	return mem
}

// ErrNoFit wraps the explanation returned when no split fits.
var ErrNoFit = errors.New("no plan fits")

// Make validates the inputs and returns the optimal plan. Bad input gives errors naming
// the field (model.Errors); a model that fits no split gives a *NoFitError (which wraps
// ErrNoFit) saying why.
func Make(m *model.Model, c *cluster.Cluster, opt Options) (*Plan, error) {
	return solve(m, c, opt, nil)
}

// Evaluate costs a given split (boundaries as in Plan; for Interleaved, of the p*v
// stages) as Make costs the optimum, and simulates it under opt.Schedule. The split may
// not fit: its stages then show memory above their limits.
func Evaluate(m *model.Model, c *cluster.Cluster, opt Options, bounds []int) (*Plan, error) {
	if bounds == nil {
		return nil, &model.FieldError{Path: "boundaries", Reason: "are required to evaluate a split"}
	}
	return solve(m, c, opt, bounds)
}

func solve(m *model.Model, c *cluster.Cluster, opt Options, bounds []int) (*Plan, error) {
	if m == nil || c == nil {
		return nil, errors.New("plan: a model and a cluster are required")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if opt.Schedule != nil {
		so := *opt.Schedule
		opt.Schedule = &so
	}
	sc, err := scheduled(c, &opt)
	if err != nil {
		return nil, err
	}
	// More stages than layers: no split exists. Say so before any work that grows with
	// layers times stages.
	if n, p := len(m.Layers), len(sc.Devices); p > n {
		return nil, &NoFitError{tooManyStages(n, p)}
	}
	if bounds != nil {
		if err := checkBounds(bounds, len(m.Layers), len(sc.Devices)); err != nil {
			return nil, err
		}
	}
	e, err := estimate.New(m, sc, opt.Estimate)
	if err != nil {
		return nil, err
	}
	if opt.Recompute != nil {
		return perLayerPlan(e, m, c, sc, opt, bounds)
	}
	var fallback *GraphFallback
	partitioned := ""
	if bounds == nil && opt.Graph && chunked(c, sc) {
		fallback = &GraphFallback{Code: FallbackSharedChunks,
			Reason: "an interleaved schedule's chunks share their device's memory, which the graph split does not bound: ranges of the layer order are split instead"}
	} else if bounds == nil && opt.Graph {
		order, b, fb, err := graphSplit(e, m, opt.Objective, opt.MaxIdeals)
		switch {
		case errors.Is(err, partition.ErrInfeasible):
			return nil, &NoFitError{Diagnose(e, m, sc)}
		case err != nil:
			return nil, err
		case order != nil:
			return graphPlan(m, c, sc, opt, order, b)
		}
		bounds, fallback = b, fb
		if fb == nil {
			partitioned = PartitionGraph
		}
	}
	var shared *devicesOf // an interleaved schedule's chunks share their device's memory
	if chunked(c, sc) {
		if shared, err = newDevicesOf(e, c, opt); err != nil {
			return nil, err
		}
	}
	if bounds == nil {
		if shared != nil {
			bounds, err = sharedBudgetSplit(e, shared, opt.Objective)
		} else {
			var r partition.Result
			r, err = partition.Solve(Costs{e}, opt.Objective)
			bounds = r.Boundaries
		}
		if err != nil {
			return nil, &NoFitError{Diagnose(e, m, sc)}
		}
	}
	p, err := FromBoundaries(e, m, sc, bounds, opt.Objective)
	if err != nil {
		return nil, err
	}
	p.Partition, p.GraphFallback = partitioned, fallback
	if shared != nil {
		shared.shareLimits(p)
	}
	if opt.Schedule != nil {
		if p.Schedule, err = simulate(e, m, c, sc, bounds, opt); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// FromBoundaries describes a given split (optimal or not) with every stage's costs. The
// estimator must be of m on c; boundaries that do not split m's layers into c's stages
// give an error naming the field "boundaries".
func FromBoundaries(e *estimate.Estimator, m *model.Model, c *cluster.Cluster, bounds []int, obj partition.Objective) (*Plan, error) {
	if e == nil || m == nil || c == nil {
		return nil, errors.New("plan.FromBoundaries: the estimator, model and cluster are required")
	}
	if e.Layers() != len(m.Layers) || e.Stages() != len(c.Devices) {
		return nil, fmt.Errorf("plan.FromBoundaries: the estimator costs %d layers on %d stages, the model has %d layers and the cluster %d devices", e.Layers(), e.Stages(), len(m.Layers), len(c.Devices))
	}
	if err := checkBounds(bounds, len(m.Layers), len(c.Devices)); err != nil {
		return nil, err
	}
	seconds, err := secondsOf(m, c)
	if err != nil {
		return nil, err
	}
	p := &Plan{Unit: m.Unit(), Objective: obj.String(), Boundaries: append([]int(nil), bounds...)}
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]-1
		r := e.Range(i, a, b)
		p.Stages = append(p.Stages, Stage{
			Device:     c.Devices[i].Name,
			FirstLayer: a, LastLayer: b,
			FirstName: m.Layers[a].Name, LastName: m.Layers[b].Name,
			Compute: r.Compute, Transfer: r.Transfer,
			ComputeSeconds: seconds(r.Compute), TransferSeconds: seconds(r.Transfer),
			MemoryBytes: r.MemoryBytes, LimitBytes: r.LimitBytes,
			ParamBytes: r.ParamBytes, OptimizerBytes: r.OptimizerBytes,
			ExclusiveBytes: r.ExclusiveBytes, SharedBytes: r.SharedBytes,
			PeakBytes: r.PeakBytes, ActivationBytes: r.ActivationBytes,
			StashBytes: r.StashBytes, InFlight: r.InFlight,
			RecvBytes: r.RecvBytes, SendBytes: r.SendBytes,
			OptimizerTempBytes: r.OptimizerTempBytes, FrameworkBytes: r.FrameworkBytes, ReservedBytes: r.ReservedBytes,
			Memory: memoryOf(r, m, e.Inference()),
		})
		p.MaxCompute = max(p.MaxCompute, r.Compute)
		p.MaxTransfer = max(p.MaxTransfer, r.Transfer)
	}
	p.Bottleneck = p.MaxCompute
	if obj == partition.MaxComputePlusTransfer {
		p.Bottleneck += p.MaxTransfer
	}
	p.BottleneckSeconds = seconds(p.Bottleneck)
	if p.Unit == model.Cycles {
		p.BottleneckCycles = p.Bottleneck
		for i := range p.Stages {
			s := &p.Stages[i]
			s.ComputeCycles, s.TransferCycles = s.Compute, s.Transfer
		}
	}
	return p, nil
}

// secondsOf converts the estimator's times to seconds: they are in the model's unit, and
// cycles are device 0's (estimate scales every device's work to them). Without device 0's
// clock, cycle counts have no seconds: NaN-free zero is not an answer, so it is an error.
func secondsOf(m *model.Model, c *cluster.Cluster) (func(float64) float64, error) {
	if m.Unit() != model.Cycles {
		return func(v float64) float64 { return v }, nil
	}
	clock := c.Devices[0].ClockHz
	if clock <= 0 {
		return nil, &model.FieldError{Path: "devices[0].clock_hz", Reason: "is needed to convert the model's cycles to seconds"}
	}
	return func(v float64) float64 { return v / clock }, nil
}

// Costs adapts an Estimator to partition.Costs.
type Costs struct{ *estimate.Estimator }

// NewScanner returns the estimator's memory scanner.
func (c Costs) NewScanner() partition.Scanner { return c.Scanner() }

// LimitBytes is what stage i's allocated peak may reach: the device's limit less the
// allocator's reserve and the framework's fixed memory (estimate.AllocatableBytes), the
// bound the partitioner compares a range's parts with.
func (c Costs) LimitBytes(i int) int64 { return c.AllocatableBytes(i) }
