package ui

// This file is a stand-in for core/request.Run while that package is being written
// (issue 7): it turns the page's Request into the calls the command line makes today
// (core/examples, core/arch + core/analytic, core/load, core/cluster, core/plan) and
// wraps what they return in a Result. It computes no cost itself. When core/request lands
// on main, this file is deleted and Run becomes request.Run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/examples"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// Run plans a request. Bad input is an error naming the field (model.Errors); a request
// that fits no split is a Result with Feasible false and diagnostics.
func Run(ctx context.Context, r *Request) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := resolveModel(r)
	if err != nil {
		return nil, err
	}
	c, err := resolveCluster(r)
	if err != nil {
		return nil, err
	}
	opt, err := planOptions(r)
	if err != nil {
		return nil, err
	}
	res := &Result{Request: r, Model: m}
	var p *plan.Plan
	if len(r.Boundaries) > 0 {
		p, err = manualPlan(m, c, r.Boundaries, opt)
		if err != nil {
			return nil, err
		}
		if opt.Schedule != nil {
			p.Schedule, err = plan.Simulate(m, c, r.Boundaries, opt)
			if err != nil {
				return nil, err
			}
		}
		res.Feasible = true
		for i, s := range p.Stages {
			if s.MemoryBytes > s.LimitBytes {
				res.Feasible = false
				res.Diagnostics = append(res.Diagnostics, Diagnostic{
					Code: "stage_memory", Severity: "error", Stage: &i, Field: "boundaries",
					BytesNeeded: s.MemoryBytes, CapacityBytes: s.LimitBytes,
					Message:    fmt.Sprintf("stage %d (layers %d–%d) needs more memory than device %d holds", i, s.FirstLayer, s.LastLayer, i),
					Suggestion: "move a boundary to give this stage fewer layers, or clear the manual split to see the optimum",
				})
			}
		}
	} else {
		p, err = plan.Make(m, c, opt)
		switch {
		case errors.Is(err, plan.ErrNoFit):
			res.Diagnostics = append(res.Diagnostics, Diagnostic{
				Code: "no_fit", Severity: "error", Message: strings.TrimPrefix(err.Error(), plan.ErrNoFit.Error()+": "),
			})
			return res, nil
		case err != nil:
			return nil, err
		}
		res.Feasible = true
	}
	res.Plan = p
	if s := p.Schedule; s != nil {
		res.Schedule = s
		res.Step = Step{
			PipelineSeconds:  s.MakespanSeconds,
			StepSeconds:      s.MakespanSeconds,
			SamplesPerSecond: s.Throughput,
			SamplesPerStep:   s.Throughput * s.MakespanSeconds,
			BubbleFraction:   s.BubbleFraction,
		}
		for _, a := range s.Advice {
			res.Diagnostics = append(res.Diagnostics, Diagnostic{Code: "schedule_advice", Severity: "warning", Message: a})
		}
	}
	return res, nil
}

func resolveModel(r *Request) (*model.Model, error) {
	ms := r.Model
	n := 0
	for _, set := range []bool{len(ms.Document) > 0, ms.Example != "", ms.Architecture != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, &model.FieldError{Path: "model", Reason: "give exactly one of document, example and architecture"}
	}
	switch {
	case ms.Example != "":
		e, err := examples.Lookup(ms.Example)
		if err != nil {
			return nil, &model.FieldError{Path: "model.example", Reason: err.Error()}
		}
		return e.Model()
	case ms.Architecture != nil:
		return archModel(r)
	}
	doc := []byte(ms.Document)
	var text string
	if json.Unmarshal(doc, &text) == nil {
		doc = []byte(text)
	}
	m, _, err := load.Model(doc)
	if err != nil {
		return nil, prefixFields("model.document", err)
	}
	return m, nil
}

func archModel(r *Request) (*model.Model, error) {
	a := r.Model.Architecture
	var ar *arch.Arch
	var err error
	if len(a.Config) > 0 {
		ar, err = arch.Parse(a.Config)
		if err != nil {
			return nil, prefixFields("model.architecture.config", err)
		}
	} else {
		ar, err = arch.Bundled(a.Name)
		if err != nil {
			return nil, &model.FieldError{Path: "model.architecture.name", Reason: err.Error()}
		}
	}
	device := r.Cluster.Device
	if device == "" {
		return nil, &model.FieldError{Path: "cluster.device", Reason: "an architecture is costed on a device preset: name one"}
	}
	t, err := analytic.PresetTarget(device)
	if err != nil {
		return nil, &model.FieldError{Path: "cluster.device", Reason: err.Error()}
	}
	// The command line's defaults (cmd/pipeplan/estimate.go), until request.Normalize
	// owns them: one sequence of the model's context, at most 4096 tokens.
	batch, seq := a.Batch, a.Seq
	if batch == 0 {
		batch = 1
	}
	if seq == 0 {
		seq = 4096
		if ar.MaxPositions > 0 && ar.MaxPositions < seq {
			seq = ar.MaxPositions
		}
	}
	o := analytic.Options{
		Batch: batch, Seq: seq,
		DType: analytic.DType(a.DType), Attention: analytic.Attention(a.Attention),
		Precision: analytic.Precision(r.Training.Precision), Optimizer: analytic.Optimizer(r.Training.Optimizer),
		Recompute:    analytic.Recompute(r.Training.Recompute),
		DataParallel: r.Parallelism.Data, ZeRO1: r.Parallelism.Zero == 1,
	}
	if r.Training.Mode == "inference" {
		o.Optimizer = analytic.None
	}
	res, err := analytic.Estimate(ar, t, o)
	if err != nil {
		return nil, prefixFields("model.architecture", err)
	}
	return res.Model(), nil
}

func resolveCluster(r *Request) (*cluster.Cluster, error) {
	cs := r.Cluster
	if len(cs.Document) > 0 {
		c, err := load.Cluster(cs.Document)
		if err != nil {
			return nil, prefixFields("cluster.document", err)
		}
		return c, nil
	}
	c, err := cluster.FromPreset(cs.Device, cs.Count)
	if err != nil {
		return nil, &model.FieldError{Path: "cluster", Reason: err.Error()}
	}
	if cs.Link != "" {
		l, err := cluster.LookupLink(cs.Link)
		if err != nil {
			return nil, &model.FieldError{Path: "cluster.link", Reason: err.Error()}
		}
		c.Links = []cluster.Link{l.Link}
	}
	if cs.FreeTransfers {
		c.Links, c.Host = nil, nil
	}
	return c, nil
}

func planOptions(r *Request) (plan.Options, error) {
	var opt plan.Options
	if r.Objective != "" {
		o, err := partition.ParseObjective(r.Objective)
		if err != nil {
			return opt, &model.FieldError{Path: "objective", Reason: err.Error()}
		}
		opt.Objective = o
	}
	opt.Estimate.MemoryProportion = r.MemoryProportion
	switch r.Training.Mode {
	case "", "training":
	case "inference":
		opt.Estimate.Inference = true
	default:
		return opt, &model.FieldError{Path: "training.mode", Reason: `must be "training" or "inference"`}
	}
	// An architecture's recomputation is costed by the analytic profiler; a measured
	// profile's is the estimator's (full recomputation only).
	if r.Model.Architecture == nil && r.Training.Recompute == "full" {
		opt.Estimate.Recompute = true
	}
	if s := r.Schedule; s.Name != "" {
		cfg, err := schedule.Parse(s.Name)
		if err != nil {
			return opt, &model.FieldError{Path: "schedule.name", Reason: err.Error()}
		}
		cfg.Microbatches = s.Microbatches
		opt.Schedule = &plan.ScheduleOptions{Config: cfg, MicrobatchSize: s.MicrobatchSize, Events: r.Events}
	}
	return opt, nil
}

// manualPlan costs a given split, as plan.Make costs its optimum.
func manualPlan(m *model.Model, c *cluster.Cluster, bounds []int, opt plan.Options) (*plan.Plan, error) {
	n, p := len(m.Layers), len(c.Devices)
	if len(bounds) != p+1 || bounds[0] != 0 || bounds[p] != n {
		return nil, &model.FieldError{Path: "boundaries", Reason: fmt.Sprintf("give %d numbers from 0 to %d: one more than the %d stages", p+1, n, p)}
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			return nil, &model.FieldError{Path: fmt.Sprintf("boundaries[%d]", i), Reason: "must be greater than the one before: every stage needs a layer"}
		}
	}
	eo := opt.Estimate
	if so := opt.Schedule; so != nil {
		if so.Kind == schedule.Interleaved {
			return nil, &model.FieldError{Path: "boundaries", Reason: "a manual split of an interleaved schedule is not supported yet"}
		}
		if so.Kind == schedule.Inference {
			eo.Inference = true
		}
		cfg := so.Config
		cfg.Recompute = cfg.Recompute || eo.Recompute
		counts, err := schedule.InFlight(cfg, p)
		if err != nil {
			return nil, err
		}
		eo.InFlight = func(i int) int { return counts[i] }
	}
	e, err := estimate.New(m, c, eo)
	if err != nil {
		return nil, err
	}
	return plan.FromBoundaries(e, m, c, bounds, opt.Objective), nil
}

// prefixFields puts a path in front of the field errors in err.
func prefixFields(prefix string, err error) error {
	fes, ok := model.AsFieldErrors(err)
	if !ok {
		return &model.FieldError{Path: prefix, Reason: err.Error()}
	}
	out := make(model.Errors, len(fes))
	for i, fe := range fes {
		out[i] = &model.FieldError{Path: prefix + "." + fe.Path, Reason: fe.Reason}
	}
	return out
}
