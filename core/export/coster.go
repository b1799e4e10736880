package export

import (
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// PlanCoster prices plans of a model on a cluster as plan.Make and plan.Simulate do, with
// Options (its schedule's microbatch size and weight-gradient share carry over to every
// schedule priced).
type PlanCoster struct {
	Model   *model.Model
	Cluster *cluster.Cluster
	Options plan.Options
}

func (pc *PlanCoster) options(s schedule.Config) plan.Options {
	o := pc.Options
	var so plan.ScheduleOptions
	if o.Schedule != nil {
		so = *o.Schedule
	}
	so.Config, so.Events = s, false
	o.Schedule = &so
	return o
}

// Cost simulates the split under the schedule.
func (pc *PlanCoster) Cost(bounds []int, s schedule.Config) (Cost, error) {
	r, err := plan.Simulate(pc.Model, pc.Cluster, bounds, pc.options(s))
	if err != nil {
		return Cost{}, err
	}
	return costOf(bounds, s, r), nil
}

// Best plans the optimal split under the schedule and simulates it.
func (pc *PlanCoster) Best(s schedule.Config) ([]int, Cost, error) {
	p, err := plan.Make(pc.Model, pc.Cluster, pc.options(s))
	if err != nil {
		return nil, Cost{}, err
	}
	return p.Boundaries, costOf(p.Boundaries, s, p.Schedule), nil
}

func costOf(bounds []int, s schedule.Config, r *schedule.Result) Cost {
	fits := true
	for d, peak := range r.PeakMemoryBytes {
		if d < len(r.LimitBytes) && r.LimitBytes[d] > 0 && peak > r.LimitBytes[d] {
			fits = false
		}
	}
	return Cost{Schedule: s.String(), Boundaries: append([]int(nil), bounds...),
		StepSeconds: r.MakespanSeconds, SamplesPerSecond: r.Throughput, Fits: fits}
}
