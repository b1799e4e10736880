package search

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// Config is every knob of a candidate but the microbatch size: how the devices are used,
// the schedule and its microbatches, recomputation, ZeRO and the memory proportion.
type Config struct {
	// Pipeline stages p, data-parallel replicas d, tensor-parallel degree t: the run
	// uses p x d x t devices.
	Pipeline int `json:"stages"`
	Data     int `json:"replicas"`
	Tensor   int `json:"tensor_parallel"`
	// Expert is the expert-parallel degree of a mixture of experts (1, or 0, for none):
	// it uses no devices of its own, and divides the data x context devices (Megatron-Core's
	// rule with expert tensor parallelism at its default, the tensor degree).
	Expert int `json:"expert_parallel,omitempty"`
	// Schedule as schedule.Parse reads it: gpipe, 1f1b, interleaved:V, zb-h1.
	Schedule string `json:"schedule"`
	// Recompute: none, selective, selective-op (torchtitan's per-op policy), full or auto
	// (per stage, core/recompute).
	Recompute string `json:"recompute"`
	// ZeRO stage: 0 (none), 1 (optimizer state), 2 (and gradients) or 3 (and weights,
	// gathered layer by layer: FSDP), sharded over the replicas x context devices.
	ZeRO int `json:"zero"`
	// Context is the context-parallel degree c (0 reads as 1): the run uses
	// p x d x t x c devices.
	Context int `json:"context,omitempty"`
	// ContextMethod, with c >= 2, is how the context group exchanges keys and values
	// (Space.ContextMethods: ring, all-to-all, hierarchical); "" leaves it to the
	// evaluator (the base request's).
	ContextMethod string `json:"context_method,omitempty"`
	// ShardGroup, with ZeRO 3, is HSDP's shard group in replicas (0: none, ZeRO-3 over
	// every replica): the state is sharded over ShardGroup x c devices and replicated
	// across the d / ShardGroup groups (PyTorch HSDP).
	ShardGroup int `json:"shard_group,omitempty"`
	// MemoryProportion of each device's usable memory a stage may fill.
	MemoryProportion float64 `json:"memory_proportion"`
	// Microbatches per step and replica; 0 in a group of a fixed global batch, where it
	// follows from the microbatch size.
	Microbatches int `json:"microbatches"`
}

// Devices is p x d x t x c.
func (c Config) Devices() int { return c.Pipeline * c.Data * c.Tensor * c.contextOrOne() }

// contextOrOne is the context-parallel degree, 0 read as 1.
func (c Config) contextOrOne() int { return max(1, c.Context) }

// Candidate is one point of the search: a configuration and a microbatch size.
type Candidate struct {
	Config
	// MicrobatchSize is the samples in one microbatch.
	MicrobatchSize int `json:"microbatch_size"`
}

// String is a compact label (wire.SearchCandidate's).
func (c Candidate) String() string { return wireCandidate(c).String() }

// Space is the grid the search walks. A knob with one value is fixed (the user's);
// with several it is searched. The microbatch size is searched over 1..MaxMicrobatchSize
// (or MicrobatchSizes), the microbatches over Microbatches or MicrobatchesPerStage x p,
// unless GlobalBatch fixes microbatch size x microbatches x replicas.
type Space struct {
	// MaxDevices bounds p x d x t x c.
	MaxDevices int `json:"max_devices"`
	// Pipelines, Data and Tensors are the degrees to try (p, d, t); Data nil: every d
	// that fits.
	Pipelines []int `json:"pipelines"`
	Data      []int `json:"data,omitempty"`
	Tensors   []int `json:"tensors"`
	// Contexts are the context-parallel degrees c to try (nil: 1).
	Contexts []int `json:"contexts,omitempty"`
	// ContextMethods are the context methods to try with each c >= 2, in order (nil:
	// the evaluator's, one per c). A combination the evaluator's rules refuse (Refuser)
	// is left out of the grid.
	ContextMethods []string `json:"context_methods,omitempty"`
	// Experts are the expert-parallel degrees to try (nil: none stated, each candidate's
	// Expert 0); a degree that does not divide a candidate's data x context devices is
	// skipped.
	Experts []int `json:"experts,omitempty"`
	// StageGroup, when > 0, is the devices of a node: under context parallelism a
	// stage's t x c devices must divide it or be a multiple of it (whole nodes).
	StageGroup int `json:"stage_group,omitempty"`
	// Schedules, Recomputes, ZeROs and MemoryProportions to try.
	Schedules         []string  `json:"schedules"`
	Recomputes        []string  `json:"recomputes"`
	ZeROs             []int     `json:"zeros"`
	MemoryProportions []float64 `json:"memory_proportions"`
	// ShardGroups are HSDP's shard groups to try beside ZeRO stage 3 (in ZeROs), in
	// replicas (nil: none): a group g gives a candidate of d replicas and context c an
	// HSDP twin of its ZeRO-3 candidate when g divides d, g < d and g x c >= 2. 0 stands
	// for the replicas a node holds (StageGroup / (t x c), at most d, a divisor of both:
	// core/request's default shard group).
	ShardGroups []int `json:"shard_groups,omitempty"`
	// GlobalBatch, when > 0, fixes the samples per step: microbatch size x microbatches x
	// replicas. Replica counts that do not divide it are skipped. GlobalBatchRule says
	// where it comes from, for people (Report.GlobalBatchRule).
	GlobalBatch     int    `json:"global_batch,omitempty"`
	GlobalBatchRule string `json:"global_batch_rule,omitempty"`
	// Microbatches per step, or MicrobatchesPerStage: m = k x p (without a global batch;
	// one of the two).
	Microbatches         []int `json:"microbatches,omitempty"`
	MicrobatchesPerStage []int `json:"microbatches_per_stage,omitempty"`
	// MicrobatchSizes, when set, are the sizes to try; otherwise 1..MaxMicrobatchSize.
	MicrobatchSizes   []int `json:"microbatch_sizes,omitempty"`
	MaxMicrobatchSize int   `json:"max_microbatch_size,omitempty"`
}

// maxGroups bounds the grid (1,048,576 configurations, about 100 bytes each and as much
// again for the search's own tables), so that a huge request gives an error, not an
// exhausted machine. Space.Validate counts the grid before it is built.
const maxGroups = 1 << 20

// Validate checks the space (Run does too); errors name the field.
func (s *Space) Validate() error {
	var es model.Errors
	if s.MaxDevices < 1 || s.MaxDevices > MaxDevices {
		es.Add("max_devices", "must be between 1 and %d, got %d", MaxDevices, s.MaxDevices)
	}
	// Lists of degrees hold at most one entry per value; the others MaxListLength.
	positive := func(name string, vs []int, required bool) {
		if required && len(vs) == 0 {
			es.Add(name, "must hold at least one value")
		}
		if len(vs) > cluster.MaxStages {
			es.Add(name, "must hold at most %d values, got %d", cluster.MaxStages, len(vs))
			return
		}
		for i, v := range vs {
			if v < 1 || v > MaxMicrobatches {
				es.Add(fmt.Sprintf("%s[%d]", name, i), "must be between 1 and %d, got %d", MaxMicrobatches, v)
			}
		}
	}
	positive("pipelines", s.Pipelines, true)
	positive("data", s.Data, false)
	positive("tensors", s.Tensors, true)
	positive("contexts", s.Contexts, false)
	positive("experts", s.Experts, false)
	positive("microbatches", s.Microbatches, false)
	positive("microbatches_per_stage", s.MicrobatchesPerStage, false)
	positive("microbatch_sizes", s.MicrobatchSizes, false)
	for i, g := range s.ShardGroups {
		if g < 0 || g > cluster.MaxStages {
			es.Add(fmt.Sprintf("shard_groups[%d]", i), "must be between 0 (a node's replicas) and %d, got %d", cluster.MaxStages, g)
		}
	}
	if len(s.ShardGroups) > 0 && !slices.Contains(s.ZeROs, 3) {
		es.Add("shard_groups", "HSDP is ZeRO-3 inside shard groups: it goes with ZeRO stage 3 in zeros")
	}
	for i, m := range s.ContextMethods {
		if m == "" || slices.Contains(s.ContextMethods[:i], m) {
			es.Add(fmt.Sprintf("context_methods[%d]", i), "must name a context method once, got %q", m)
		}
	}
	for name, n := range map[string]int{"schedules": len(s.Schedules), "recomputes": len(s.Recomputes),
		"zeros": len(s.ZeROs), "memory_proportions": len(s.MemoryProportions), "shard_groups": len(s.ShardGroups),
		"context_methods": len(s.ContextMethods)} {
		if n > MaxListLength {
			es.Add(name, "must hold at most %d values, got %d", MaxListLength, n)
		}
	}
	if len(s.Schedules) == 0 {
		es.Add("schedules", "must hold at least one schedule")
	}
	for i, name := range s.Schedules {
		c, err := schedule.Parse(name)
		switch {
		case err != nil:
			es.Add(fmt.Sprintf("schedules[%d]", i), "%v", err)
		case c.Kind == schedule.Overlap:
			es.Add(fmt.Sprintf("schedules[%d]", i), "the search tries gpipe, 1f1b, interleaved:V, zb-h1, ipu and inference, got %q", name)
		}
	}
	if len(s.Recomputes) == 0 {
		es.Add("recomputes", "must hold at least one of none, selective, selective-op, full or auto")
	}
	for i, r := range s.Recomputes {
		if !slices.Contains([]string{"none", "selective", "selective-op", "full", "auto"}, r) {
			es.Add(fmt.Sprintf("recomputes[%d]", i), "must be none, selective, selective-op, full or auto, got %q", r)
		}
	}
	if len(s.ZeROs) == 0 {
		es.Add("zeros", "must hold at least one ZeRO stage")
	}
	for i, z := range s.ZeROs {
		if z < 0 || z > 3 {
			es.Add(fmt.Sprintf("zeros[%d]", i), "must be 0, 1, 2 or 3, got %d", z)
		}
	}
	if len(s.MemoryProportions) == 0 {
		es.Add("memory_proportions", "must hold at least one proportion")
	}
	for i, f := range s.MemoryProportions {
		if !(f > 0 && f <= 1) {
			es.Add(fmt.Sprintf("memory_proportions[%d]", i), "must be in (0, 1], got %v", f)
		}
	}
	switch {
	case s.GlobalBatch < 0:
		es.Add("global_batch", "must be >= 0, got %d", s.GlobalBatch)
	case s.GlobalBatch > 0 && (len(s.Microbatches) > 0 || len(s.MicrobatchesPerStage) > 0):
		es.Add("global_batch", "fixes the microbatches with the microbatch size: give no microbatches")
	case s.GlobalBatch == 0 && (len(s.Microbatches) == 0) == (len(s.MicrobatchesPerStage) == 0):
		es.Add("microbatches", "give microbatches or microbatches_per_stage (one of them), or a global batch")
	}
	switch {
	case len(s.MicrobatchSizes) == 0 && s.MaxMicrobatchSize < 1:
		es.Add("max_microbatch_size", "must be >= 1 when no microbatch_sizes are given, got %d", s.MaxMicrobatchSize)
	case s.MaxMicrobatchSize > MaxMicrobatchSize:
		es.Add("max_microbatch_size", "must be at most %d, got %d", MaxMicrobatchSize, s.MaxMicrobatchSize)
	case s.GlobalBatch > MaxGlobalBatch:
		es.Add("global_batch", "must be at most %d, got %d", MaxGlobalBatch, s.GlobalBatch)
	}
	if err := es.Err(); err != nil {
		return err
	}
	if n := s.count(); n > maxGroups {
		return &model.FieldError{Path: "max_devices", Reason: fmt.Sprintf("the grid holds %d configurations, more than the %d a search may walk: fix some knobs (stages, replicas, tensor, context, schedule, recompute, zero, microbatches) or give fewer devices", n, maxGroups)}
	}
	return nil
}

// count is the configurations the grid holds at most (groups' skips of schedules with one
// stage, ZeRO-1 without replicas and interleaved microbatches aside), reckoned without
// building it: the degrees (p, d, t) with p x d x t within the devices, times the lists.
// It saturates rather than overflows.
func (s *Space) count() uint64 {
	ts := sortedUnique(s.Tensors)
	ps := sortedUnique(s.Pipelines)
	var ds []int // the replica counts given, or that divide the global batch
	switch {
	case len(s.Data) > 0:
		ds = sortedUnique(s.Data)
	case s.GlobalBatch > 0:
		for d := 1; d <= min(cluster.MaxStages, s.MaxDevices, s.GlobalBatch); d++ {
			if s.GlobalBatch%d == 0 {
				ds = append(ds, d)
			}
		}
	}
	cs := []int{1}
	if len(s.Contexts) > 0 {
		cs = sortedUnique(s.Contexts)
	}
	var degrees uint64
	for _, c := range cs {
		forms := uint64(1)
		if c > 1 && len(s.ContextMethods) > 0 {
			forms = uint64(len(s.ContextMethods))
		}
		for _, tt := range ts {
			t := tt * c // the devices of a stage
			for _, p := range ps {
				if p*t > s.MaxDevices {
					break
				}
				most := s.MaxDevices / (p * t)
				if ds == nil {
					degrees += forms * uint64(min(most, cluster.MaxStages))
				} else {
					n, _ := slices.BinarySearch(ds, most+1)
					degrees += forms * uint64(n)
				}
			}
		}
	}
	ms := uint64(1)
	if s.GlobalBatch == 0 {
		ms = uint64(max(len(s.Microbatches), len(s.MicrobatchesPerStage)))
	}
	per := uint64(len(s.Schedules)) * uint64(len(s.Recomputes)) * uint64(len(s.ZeROs)+len(s.ShardGroups)) * uint64(len(s.MemoryProportions)) * ms
	if per == 0 {
		return 0
	}
	if degrees > (1<<62)/per {
		return 1 << 62
	}
	return degrees * per
}

// sizes are the microbatch sizes to try in a group of replicas d, ascending.
func (s *Space) sizes(d int) []int {
	var out []int
	if len(s.MicrobatchSizes) > 0 {
		out = slices.Clone(s.MicrobatchSizes)
		slices.Sort(out)
		out = slices.Compact(out)
	} else {
		for b := 1; b <= s.MaxMicrobatchSize; b++ {
			out = append(out, b)
		}
	}
	if s.GlobalBatch > 0 {
		per := s.GlobalBatch / d
		out = slices.DeleteFunc(out, func(b int) bool { return per%b != 0 })
	}
	return out
}

// free reports whether the microbatch size is free: monotone in the search's sense
// (the throughput bound grows with it at fixed microbatches), so that a group's sizes
// are walked from the largest that fits downwards. With a global batch the microbatches
// shrink as it grows, and every size is a candidate of its own.
func (s *Space) free() bool { return s.GlobalBatch == 0 }

// groups enumerates the configurations in canonical order: c, context method, t, p, d,
// e, schedule, recomputation, ZeRO, memory proportion, microbatches. Skipped: p x d x t x c beyond
// the devices; a ZeRO stage with one device to shard over (d x c = 1); schedules other
// than 1f1b with one stage (they all run one stage alike); interleaved with microbatches
// not a multiple of p; replicas that do not divide a global batch; expert parallelism
// that does not divide d x c. HSDP's shard groups follow ZeRO stage 3, ascending.
func (s *Space) groups() ([]Config, error) {
	var out []Config
	cs := []int{1}
	if len(s.Contexts) > 0 {
		cs = sortedUnique(s.Contexts)
	}
	ps := sortedUnique(s.Pipelines)
	for _, c := range cs {
		methods := []string{""}
		if c > 1 && len(s.ContextMethods) > 0 {
			methods = s.ContextMethods
		}
		for _, method := range methods {
			for _, tt := range sortedUnique(s.Tensors) {
				t := tt * c // the devices of a stage: tensor x context
				if c > 1 && s.StageGroup > 0 && s.StageGroup%t != 0 && t%s.StageGroup != 0 {
					continue
				}
				var err error
				if out, err = s.groupsOf(out, c, method, tt, t, ps); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// groupsOf appends the groups of context c with its method and tensor tt (t = tt x c
// devices per stage).
func (s *Space) groupsOf(out []Config, c int, method string, tt, t int, ps []int) ([]Config, error) {
	for _, p := range ps {
		if p*t > s.MaxDevices {
			continue
		}
		var ds []int
		if len(s.Data) > 0 {
			ds = sortedUnique(s.Data)
		} else {
			for d := 1; p*d*t <= s.MaxDevices && d <= cluster.MaxStages; d++ {
				ds = append(ds, d)
			}
		}
		for _, d := range ds {
			if p*d*t > s.MaxDevices || (s.GlobalBatch > 0 && s.GlobalBatch%d != 0) {
				continue
			}
			// ZeRO-3 alone, and beside it HSDP's groups.
			none, hsdp := []int{0}, append([]int{0}, s.shardGroups(d, c, t)...)
			es := []int{0} // no expert parallelism stated
			if len(s.Experts) > 0 {
				es = sortedUnique(s.Experts)
			}
			for _, e := range es {
				if e > 0 && (d*c)%e != 0 {
					continue
				}
				for _, sn := range s.Schedules {
					sc, _ := schedule.Parse(sn) // checked by Validate
					if p == 1 && sc.Kind != schedule.OneFOneB && len(s.Schedules) > 1 {
						continue
					}
					for _, rc := range s.Recomputes {
						for _, z := range s.ZeROs {
							if z >= 1 && d*c < 2 {
								continue
							}
							shards := none
							if z == 3 {
								shards = hsdp
							}
							for _, sg := range shards {
								for _, mp := range s.MemoryProportions {
									for _, m := range s.microbatches(p) {
										if m > 0 && sc.Kind == schedule.Interleaved && m%p != 0 {
											continue
										}
										g := Config{Pipeline: p, Data: d, Tensor: tt, Expert: e, Schedule: sc.String(),
											Recompute: rc, ZeRO: z, ShardGroup: sg, MemoryProportion: mp, Microbatches: m}
										if c > 1 {
											g.Context, g.ContextMethod = c, method
										}
										out = append(out, g)
										if len(out) > maxGroups {
											return nil, &model.FieldError{Path: "max_devices", Reason: fmt.Sprintf("the grid holds more than %d configurations: fix some knobs", maxGroups)}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// shardGroups are HSDP's shard groups (ShardGroups) for d replicas, context c and t
// devices a stage, ascending and each once: those that divide d, lie below it and shard
// over at least two devices (g x c >= 2), with 0 read as the replicas a node holds.
func (s *Space) shardGroups(d, c, t int) []int {
	var out []int
	for _, g := range s.ShardGroups {
		if g == 0 {
			if s.StageGroup <= 0 {
				continue
			}
			fit := max(1, s.StageGroup/t)
			for k := 1; k <= min(fit, d); k++ {
				if d%k == 0 && fit%k == 0 {
					g = k
				}
			}
		}
		if g >= 1 && g < d && d%g == 0 && g*c >= 2 {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// microbatches are the microbatch counts of a group with p stages: 0 with a global batch.
func (s *Space) microbatches(p int) []int {
	switch {
	case s.GlobalBatch > 0:
		return []int{0}
	case len(s.Microbatches) > 0:
		return sortedUnique(s.Microbatches)
	}
	var out []int
	for _, k := range s.MicrobatchesPerStage {
		out = append(out, k*p)
	}
	return sortedUnique(out)
}

// Candidates lists every candidate of the grid, in the canonical order of its
// configurations and by microbatch size: what an exhaustive search plans.
func (s *Space) Candidates() ([]Candidate, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	groups, err := s.groups()
	if err != nil {
		return nil, err
	}
	var cs []Candidate
	for _, g := range groups {
		for _, b := range s.sizes(g.Data) {
			if c, ok := s.candidate(g, b); ok {
				cs = append(cs, c)
			}
		}
	}
	return cs, nil
}

// candidate completes a group with a microbatch size: with a global batch, the
// microbatches follow; ok is false when they do not come out whole or interleaved
// cannot run them.
func (s *Space) candidate(g Config, b int) (Candidate, bool) {
	c := Candidate{Config: g, MicrobatchSize: b}
	if s.GlobalBatch > 0 {
		per := s.GlobalBatch / g.Data
		if per%b != 0 {
			return c, false
		}
		c.Microbatches = per / b
		if strings.HasPrefix(g.Schedule, "interleaved") && c.Microbatches%g.Pipeline != 0 {
			return c, false
		}
		// More microbatches than the simulator takes: no request could run it.
		if sc, err := schedule.Parse(g.Schedule); err == nil && c.Microbatches > schedule.MaxMicrobatches(g.Pipeline*max(1, sc.Chunks)) {
			return c, false
		}
	}
	return c, true
}

func sortedUnique(vs []int) []int {
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}
