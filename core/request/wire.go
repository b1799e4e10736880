package request

import (
	"pipeplan/core/cluster"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// The planner's plan, schedule and placement are converted to core/wire's types for a
// result, field by field: the JSON is the same, and a program that reads results links
// none of the planner.

// wirePlan is p as data, without its schedule (a result holds it once, as
// Result.Schedule).
func wirePlan(p *plan.Plan) *wire.Plan {
	if p == nil {
		return nil
	}
	w := &wire.Plan{TimeUnit: string(p.Unit), Objective: p.Objective, Boundaries: p.Boundaries, Partition: p.Partition,
		LayerOrder: p.LayerOrder, BottleneckSeconds: p.BottleneckSeconds, BottleneckCycles: p.BottleneckCycles}
	if fb := p.GraphFallback; fb != nil {
		w.GraphFallback = &wire.GraphFallback{Code: fb.Code, Reason: fb.Reason}
	}
	if p.Stages != nil {
		w.Stages = make([]wire.Stage, len(p.Stages))
	}
	for i := range p.Stages {
		s := &p.Stages[i]
		w.Stages[i] = wire.Stage{Device: s.Device, FirstLayer: s.FirstLayer, LastLayer: s.LastLayer, Layers: s.Layers,
			FirstName: s.FirstName, LastName: s.LastName, ComputeSeconds: s.ComputeSeconds, TransferSeconds: s.TransferSeconds,
			ComputeCycles: s.ComputeCycles, TransferCycles: s.TransferCycles, MemoryBytes: s.MemoryBytes, LimitBytes: s.LimitBytes,
			ParamBytes: s.ParamBytes, OptimizerBytes: s.OptimizerBytes, ExclusiveBytes: s.ExclusiveBytes, SharedBytes: s.SharedBytes,
			PeakBytes: s.PeakBytes, ActivationBytes: s.ActivationBytes, StashBytes: s.StashBytes, InFlight: s.InFlight,
			RecvBytes: s.RecvBytes, SendBytes: s.SendBytes, OptimizerTempBytes: s.OptimizerTempBytes,
			FrameworkBytes: s.FrameworkBytes, ReservedBytes: s.ReservedBytes, Memory: wire.Memory(s.Memory)}
		if r := s.Recompute; r != nil {
			wr := &wire.StageRecompute{ExtraSeconds: r.ExtraSeconds, ExtraCycles: r.ExtraCycles, SavedBytes: r.SavedBytes,
				WholeStage: r.WholeStage, Summary: r.Summary}
			if r.Layers != nil {
				wr.Layers = make([]wire.RecomputedLayer, len(r.Layers))
			}
			for j, l := range r.Layers {
				wr.Layers[j] = wire.RecomputedLayer(l)
			}
			w.Stages[i].Recompute = wr
		}
	}
	return w
}

// wireSchedule is a simulated step as data.
func wireSchedule(s *schedule.Result) *wire.ScheduleResult {
	if s == nil {
		return nil
	}
	w := &wire.ScheduleResult{Schedule: s.Schedule, Microbatches: s.Microbatches, Recompute: s.Recompute, Devices: s.Devices,
		StageDevices: s.StageDevices, MakespanSeconds: s.MakespanSeconds, BubbleFraction: s.BubbleFraction,
		Throughput: s.Throughput, BusySeconds: s.BusySeconds, PeakMemoryBytes: s.PeakMemoryBytes, LimitBytes: s.LimitBytes,
		MaxInFlight: s.MaxInFlight, Advice: s.Advice}
	if s.InFlight != nil {
		w.InFlight = make([][]wire.Sample, len(s.InFlight))
		for i, samples := range s.InFlight {
			if samples == nil {
				continue
			}
			w.InFlight[i] = make([]wire.Sample, len(samples))
			for j, x := range samples {
				w.InFlight[i][j] = wire.Sample(x)
			}
		}
	}
	if s.Events != nil {
		w.Events = make([][]wire.Event, len(s.Events))
		for i, events := range s.Events {
			if events == nil {
				continue
			}
			w.Events[i] = make([]wire.Event, len(events))
			for j, e := range events {
				w.Events[i][j] = wire.Event{Stage: e.Stage, Chunk: e.Chunk, Kind: wire.OpKind(e.Kind), Microbatch: e.Microbatch,
					Step: e.Step, StartSeconds: e.StartSeconds, EndSeconds: e.EndSeconds}
			}
		}
	}
	return w
}

// wirePlacement is a placement as data.
func wirePlacement(p *cluster.Placement) *wire.Placement {
	if p == nil {
		return nil
	}
	w := &wire.Placement{Order: string(p.Order), Pipeline: p.Pipeline, Data: p.Data, Tensor: p.Tensor, Context: p.Context,
		Nodes: p.Nodes, StageCrossesNodes: p.StageCrossesNodes, DataLink: wire.Link(p.DataLink),
		DataCrossesNodes: p.DataCrossesNodes, TensorLink: wire.Link(p.TensorLink)}
	if p.StageLinks != nil {
		w.StageLinks = make([]wire.Link, len(p.StageLinks))
		for i, l := range p.StageLinks {
			w.StageLinks[i] = wire.Link(l)
		}
	}
	return w
}
