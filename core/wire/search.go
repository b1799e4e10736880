package wire

import "fmt"

// The types below are a search as data (docs/search.md): the query a front end sends, the
// progress it reports and the answer it gives, the one JSON of every search (pipeplan
// search --json, pipeplan.search, the page). core/search runs a query and converts its
// own outcomes to these.

// SearchQuery is a search: the base planning request, whose model and cluster (a device
// preset, with devices_per_node for nodes) are searched over, and the knobs, of which
// those left zero are searched.
type SearchQuery struct {
	// Request is the base planning request (docs/request.md).
	Request *Request `json:"request"`
	// SearchKnobs fix or bound what is searched; max_devices is required.
	SearchKnobs
	// Exhaustive plans every candidate, pruning nothing (slow: to check the search).
	Exhaustive bool `json:"exhaustive,omitempty"`
}

// SearchKnobs are what the user fixes; the zero value of each is searched
// (core/search.ValidateKnobs checks their bounds).
type SearchKnobs struct {
	// MaxDevices is the devices at hand: p x d x t x c at most.
	MaxDevices int `json:"max_devices"`
	// Stages, Replicas, Tensor fix p, d, t.
	Stages   int `json:"stages,omitempty"`
	Replicas int `json:"replicas,omitempty"`
	Tensor   int `json:"tensor,omitempty"`
	// Expert fixes the expert-parallel degree of a mixture of experts (default: every
	// degree that divides the experts and a candidate's replicas).
	Expert int `json:"expert,omitempty"`
	// Schedule fixes the schedule; Schedules lists those to try (default:
	// SearchedSchedules in training, inference in inference).
	Schedule  string   `json:"schedule,omitempty"`
	Schedules []string `json:"schedules,omitempty"`
	// Recompute fixes recomputation (default: SearchedRecomputes; none in inference).
	// auto (per stage) is searched only when fixed here.
	Recompute string `json:"recompute,omitempty"`
	// ZeRO fixes the ZeRO stage, 0 to 3 (nil: 0, 1, 2 and 3 in training).
	ZeRO *int `json:"zero,omitempty"`
	// ShardGroup is HSDP's shard group, in replicas, to try beside ZeRO-3 (default: for
	// an architecture in training on nodes, cluster.devices_per_node, the replicas a
	// node holds, core/request's default; HSDP needs ZeRO stage 3 among those searched).
	ShardGroup int `json:"shard_group,omitempty"`
	// Context fixes the context-parallel degree; Contexts lists those to try (default:
	// 1, and for sequences of 32,768 tokens or more every power of two up to 32 that
	// splits the sequence and fits a node beside the tensor group).
	Context  int   `json:"context,omitempty"`
	Contexts []int `json:"contexts,omitempty"`
	// ContextMethod fixes how the candidates with context >= 2 exchange keys and values
	// (ContextMethods; default: the base request's context_method, else every method
	// but all-gather).
	ContextMethod string `json:"context_method,omitempty"`
	// Reshard fixes parallelism.reshard of the ZeRO-3 and HSDP candidates in training
	// (ReshardModes; default: core's rule for each candidate, request.DefaultReshard:
	// step with 2 pipeline stages or more, else layer).
	Reshard string `json:"reshard,omitempty"`
	// MemoryProportions to try (default: 1).
	MemoryProportions []float64 `json:"memory_proportions,omitempty"`
	// GlobalBatch fixes samples per step; else Microbatches fixes m, else m is searched
	// over MicrobatchesPerStage x p (default 1, 2, 4, 8).
	GlobalBatch          int   `json:"global_batch,omitempty"`
	Microbatches         int   `json:"microbatches,omitempty"`
	MicrobatchesPerStage []int `json:"microbatches_per_stage,omitempty"`
	// MicrobatchSize fixes the samples per microbatch; else it is searched up to
	// MaxMicrobatchSize (default 64 for architectures, 128 for profiles).
	MicrobatchSize    int `json:"microbatch_size,omitempty"`
	MaxMicrobatchSize int `json:"max_microbatch_size,omitempty"`
}

// SearchConfig is every knob of a candidate but the microbatch size (core/search's
// Config): how the devices are used, the schedule and its microbatches, recomputation,
// ZeRO and the memory proportion.
type SearchConfig struct {
	// Pipeline stages p, data-parallel replicas d, tensor-parallel degree t.
	Pipeline int `json:"stages"`
	Data     int `json:"replicas"`
	Tensor   int `json:"tensor_parallel"`
	// Expert is the expert-parallel degree of a mixture of experts (1, or 0, for none).
	Expert int `json:"expert_parallel,omitempty"`
	// Schedule as a request names it: gpipe, 1f1b, interleaved:V, interleaved-pytorch:V,
	// zb-h1.
	Schedule string `json:"schedule"`
	// Recompute: none, selective, selective-op, full or auto.
	Recompute string `json:"recompute"`
	// ZeRO stage: 0 (none), 1 (optimizer state), 2 (and gradients) or 3 (and weights).
	ZeRO int `json:"zero"`
	// Context is the context-parallel degree c (0 reads as 1).
	Context int `json:"context,omitempty"`
	// ContextMethod, with c >= 2, is how the context group exchanges keys and values
	// when the search chose it (ring, all-to-all, hierarchical); "" for the base
	// request's.
	ContextMethod string `json:"context_method,omitempty"`
	// ShardGroup, with ZeRO 3, is HSDP's shard group in replicas (0: none).
	ShardGroup int `json:"shard_group,omitempty"`
	// MemoryProportion of each device's usable memory a stage may fill.
	MemoryProportion float64 `json:"memory_proportion"`
	// Microbatches per step and replica; 0 in a group of a fixed global batch.
	Microbatches int `json:"microbatches"`
}

// SearchCandidate is one point of the search: a configuration and a microbatch size.
type SearchCandidate struct {
	SearchConfig
	// MicrobatchSize is the samples in one microbatch.
	MicrobatchSize int `json:"microbatch_size"`
}

// String is a compact label: "p4 d2 t8 1f1b m16 b2 rc=none z0 mp=1" (with " c4" after
// t8 under context parallelism, " c4:all-to-all" where the candidate names its context
// method, " e8" under expert parallelism, and "hsdp4" for z3 under HSDP with shard groups
// of 4 replicas).
func (c SearchCandidate) String() string {
	ctx := ""
	if c.Context > 1 {
		ctx = fmt.Sprintf(" c%d", c.Context)
		if c.ContextMethod != "" {
			ctx += ":" + c.ContextMethod
		}
	}
	if c.Expert > 1 {
		ctx += fmt.Sprintf(" e%d", c.Expert)
	}
	z := fmt.Sprintf("z%d", c.ZeRO)
	if c.ShardGroup > 0 {
		z = fmt.Sprintf("hsdp%d", c.ShardGroup)
	}
	return fmt.Sprintf("p%d d%d t%d%s %s m%d b%d rc=%s %s mp=%g", c.Pipeline, c.Data, c.Tensor, ctx, c.Schedule,
		c.Microbatches, c.MicrobatchSize, c.Recompute, z, c.MemoryProportion)
}

// SearchOutcome is a planned candidate: its throughput and step, or why it does not fit
// (core/search's Outcome).
type SearchOutcome struct {
	SearchCandidate
	// Devices used: p x d x t x c.
	Devices int `json:"devices"`
	// Feasible: a split fits every device's memory.
	Feasible bool `json:"feasible"`
	// SamplesPerSecond and TokensPerSecond over the whole step.
	SamplesPerSecond float64 `json:"samples_per_second"`
	TokensPerSecond  float64 `json:"tokens_per_second,omitempty"`
	StepSeconds      float64 `json:"step_seconds,omitempty"`
	BubbleFraction   float64 `json:"bubble_fraction,omitempty"`
	// MFU is the model's FLOPs per step over the devices' dense peak during it.
	MFU float64 `json:"mfu,omitempty"`
	// HeadroomBytes is the least free memory over the stages (limit - need);
	// HeadroomFraction the same over the limit.
	HeadroomBytes    int64   `json:"headroom_bytes,omitempty"`
	HeadroomFraction float64 `json:"headroom_fraction,omitempty"`
	// Boundaries is the split: [0, s1, ..., n]; none for a graph partition whose stages
	// are not ranges of the layer order.
	Boundaries []int `json:"boundaries,omitempty"`
	// Reason says why an infeasible candidate does not fit (which stage, by how much).
	Reason string `json:"reason,omitempty"`
	// Bound is the upper bound on SamplesPerSecond the search held before planning it.
	Bound float64 `json:"bound"`
	// Alike, in SearchAnswer.Rows, are the candidates collapsed into this one: they
	// differ only in knobs that changed nothing the search measures.
	Alike []SearchCandidate `json:"alike,omitempty"`
}

// SearchProgress is reported as the search goes.
type SearchProgress struct {
	// Done of Total candidates are settled (planned, or pruned).
	Done  int `json:"done"`
	Total int `json:"total"`
	// Evaluated candidates were planned.
	Evaluated int `json:"evaluated"`
	// Best so far; nil while nothing fits.
	Best *SearchOutcome `json:"best,omitempty"`
}

// SearchStats count a search's work.
type SearchStats struct {
	// Configurations in the grid, and Candidates (configurations x microbatch sizes).
	Configurations int `json:"configurations"`
	Candidates     int `json:"candidates"`
	// Evaluated candidates were planned; Feasible of them fit.
	Evaluated int `json:"evaluated"`
	Feasible  int `json:"feasible"`
	// PrunedByBound were not planned: their bound could not beat the best with as many
	// devices or fewer. KnownInfeasible were not planned: a smaller microbatch of the
	// same memory did not fit.
	PrunedByBound   int `json:"pruned_by_bound"`
	KnownInfeasible int `json:"known_infeasible"`
	// CannotFit were not planned: a necessary condition of fitting showed they fit no
	// split.
	CannotFit int `json:"cannot_fit,omitempty"`
	// Twins were not planned: a candidate earlier in the grid has the same outcome.
	Twins int `json:"twins,omitempty"`
	// BoundViolations counts planned candidates faster than their bound (should be 0).
	BoundViolations int `json:"bound_violations"`
	// Seconds the search took.
	Seconds float64 `json:"seconds"`
}

// SearchAnswer is a query's answer: the best candidate with the planning request that
// reproduces it alone and its content id, the ten fastest, the Pareto front, every
// candidate planned and the counts.
type SearchAnswer struct {
	Best *SearchOutcome `json:"best"`
	// BestRequest is the best candidate's planning request, and BestID its content id
	// (core/request's ID): the one candidate of a search that gets an id.
	BestRequest *Request `json:"best_request,omitempty"`
	BestID      string   `json:"best_id,omitempty"`
	// Top are the first of Rows (core/search.TopCount): the best, then the fastest,
	// alike outcomes collapsed into one.
	Top []SearchOutcome `json:"top"`
	// Rows are every feasible candidate planned as a front end lists them: the page's
	// results table.
	Rows   []SearchOutcome `json:"rows"`
	Pareto []SearchOutcome `json:"pareto"`
	// GlobalBatch and GlobalBatchRule: the samples per step every candidate ran, and
	// where that comes from.
	GlobalBatch     int    `json:"global_batch,omitempty"`
	GlobalBatchRule string `json:"global_batch_rule,omitempty"`
	// Rule says, for people, how the candidates were compared: the global batch and
	// where it comes from, the near-tie rule and the rows' collapse.
	Rule string `json:"rule"`
	// Evaluated are the candidates planned, in the order they were planned.
	Evaluated []SearchOutcome `json:"evaluated"`
	Stats     SearchStats     `json:"stats"`
}
