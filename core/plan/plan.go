// Package plan ties the planner together for the front ends: a validated model and
// cluster go in, the optimal split comes out with every stage's costs, or an explanation
// a user can act on when nothing fits.
package plan

import (
	"errors"
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
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
}

// Plan is an optimal split of a model over a cluster.
type Plan struct {
	// Unit of every time in the plan: the model's.
	Unit model.TimeUnit `json:"time_unit"`
	// Objective names what was minimised.
	Objective string `json:"objective"`
	// Boundaries: [0, s1, ..., n]; stage i holds layers Boundaries[i] .. Boundaries[i+1]-1.
	Boundaries []int `json:"boundaries"`
	// Stages with their costs.
	Stages []Stage `json:"stages"`
	// Bottleneck is the minimised value: max stage compute, or max compute + max transfer.
	Bottleneck float64 `json:"bottleneck"`
	// MaxCompute and MaxTransfer over stages.
	MaxCompute  float64 `json:"max_compute"`
	MaxTransfer float64 `json:"max_transfer"`
	// Schedule is the simulated step under Options.Schedule, when set.
	Schedule *schedule.Result `json:"schedule,omitempty"`
}

// Stage is one pipeline stage of a plan.
type Stage struct {
	Device     string `json:"device,omitempty"`
	FirstLayer int    `json:"first_layer"`
	LastLayer  int    `json:"last_layer"`
	// FirstName and LastName are the names of its first and last layers.
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	// Compute and Transfer in the plan's unit.
	Compute  float64 `json:"compute"`
	Transfer float64 `json:"transfer"`
	// Memory and its parts.
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
}

// ErrNoFit wraps the explanation returned when no split fits.
var ErrNoFit = errors.New("no plan fits")

// Make validates the inputs and returns the optimal plan. Bad input gives errors naming
// the field (model.Errors); a model that fits no split gives an error wrapping ErrNoFit
// whose text says why.
func Make(m *model.Model, c *cluster.Cluster, opt Options) (*Plan, error) {
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
		return nil, fmt.Errorf("%w: %s", ErrNoFit, tooManyStages(n, p))
	}
	e, err := estimate.New(m, sc, opt.Estimate)
	if err != nil {
		return nil, err
	}
	r, err := partition.Solve(Costs{e}, opt.Objective)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoFit, Explain(e, m, sc))
	}
	p := FromBoundaries(e, m, sc, r.Boundaries, opt.Objective)
	if opt.Schedule != nil {
		if p.Schedule, err = simulate(e, m, c, sc, r.Boundaries, opt); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// FromBoundaries describes a given split (optimal or not) with every stage's costs.
func FromBoundaries(e *estimate.Estimator, m *model.Model, c *cluster.Cluster, bounds []int, obj partition.Objective) *Plan {
	p := &Plan{Unit: m.Unit(), Objective: obj.String(), Boundaries: bounds}
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]-1
		r := e.Range(i, a, b)
		p.Stages = append(p.Stages, Stage{
			Device:     c.Devices[i].Name,
			FirstLayer: a, LastLayer: b,
			FirstName: m.Layers[a].Name, LastName: m.Layers[b].Name,
			Compute: r.Compute, Transfer: r.Transfer,
			MemoryBytes: r.MemoryBytes, LimitBytes: r.LimitBytes,
			ParamBytes: r.ParamBytes, OptimizerBytes: r.OptimizerBytes,
			ExclusiveBytes: r.ExclusiveBytes, SharedBytes: r.SharedBytes,
			PeakBytes: r.PeakBytes, ActivationBytes: r.ActivationBytes,
			StashBytes: r.StashBytes, InFlight: r.InFlight,
			RecvBytes: r.RecvBytes, SendBytes: r.SendBytes,
		})
		p.MaxCompute = max(p.MaxCompute, r.Compute)
		p.MaxTransfer = max(p.MaxTransfer, r.Transfer)
	}
	p.Bottleneck = p.MaxCompute
	if obj == partition.MaxComputePlusTransfer {
		p.Bottleneck += p.MaxTransfer
	}
	return p
}

// Costs adapts an Estimator to partition.Costs.
type Costs struct{ *estimate.Estimator }

// NewScanner returns the estimator's memory scanner.
func (c Costs) NewScanner() partition.Scanner { return c.Scanner() }
