package request

import (
	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// breakdown is Step.Breakdown: the parts that add up to StepSeconds, then the
// data-parallel communication the framework hides behind compute, so that every front
// end says the same thing:
//
//	pipeline 268.64 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the last backward
//	pipeline 268.64 ms + data-parallel all-reduce 1.75 ms exposed + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, 7.90 ms of it hidden behind the last backward
//	pipeline 55.75 ms (per-layer all-gather + reduce-scatter 1.17 ms of it) + optimizer 5.43 ms; per-layer all-gather + reduce-scatter 5.25 ms, 4.09 ms of it hidden behind each layer's compute
//
// The hidden part is the slowest device's communication less the slowest device's
// exposed part. ZeRO-3's and HSDP's per-layer collectives are inside the pipeline's
// passes: what they add to them is named as a part of the pipeline. Parts that are 0
// are left out.
func breakdown(s *wire.Step) string {
	if s == nil {
		return ""
	}
	sec := func(v float64) string { return units.Time(v, model.Seconds) }
	dp, all, behind := "data-parallel all-reduce", s.DataParallelAllReduceSeconds, "the last backward"
	switch {
	case s.DataParallelAllGatherSeconds > 0 && s.DataParallelAllReduceSeconds > 0:
		// DeepSpeed's BF16 optimizer: the whole gradients all-reduced, the weights gathered.
		dp, all, behind = "data-parallel all-reduce + all-gather", s.DataParallelAllReduceSeconds+s.DataParallelAllGatherSeconds, "the last backward and the first forward"
	case s.DataParallelReduceScatterSeconds+s.DataParallelAllGatherSeconds > 0:
		dp, all, behind = "data-parallel reduce-scatter + all-gather", s.DataParallelReduceScatterSeconds+s.DataParallelAllGatherSeconds, "the last backward and the first forward"
	}
	out := "pipeline " + sec(s.PipelineSeconds)
	const layer = "per-layer all-gather + reduce-scatter"
	if s.DataParallelLayerAddedSeconds > 0 {
		out += " (" + layer + " " + sec(s.DataParallelLayerAddedSeconds) + " of it)"
	}
	if s.TiedAllReduceSeconds > 0 {
		out += " + tied all-reduce " + sec(s.TiedAllReduceSeconds)
	}
	hidden := all - s.DataParallelExposedSeconds
	if s.DataParallelExposedSeconds > 0 {
		out += " + " + dp + " " + sec(s.DataParallelExposedSeconds)
		if hidden > 0 {
			out += " exposed"
		}
	}
	if s.OptimizerSeconds > 0 {
		out += " + optimizer " + sec(s.OptimizerSeconds)
	}
	if s.TrainMetricSyncSeconds > 0 {
		out += " + training-metric sync " + sec(s.TrainMetricSyncSeconds)
	}
	if hidden > 0 {
		part := "all"
		if s.DataParallelExposedSeconds > 0 {
			part = sec(hidden)
		}
		out += "; " + dp + " " + sec(all) + ", " + part + " of it hidden behind " + behind
	}
	if hidden := s.DataParallelLayerSeconds - s.DataParallelLayerAddedSeconds; hidden > 0 {
		part := "all"
		if s.DataParallelLayerAddedSeconds > 0 {
			part = sec(hidden)
		}
		out += "; " + layer + " " + sec(s.DataParallelLayerSeconds) + ", " + part + " of it hidden behind each layer's compute"
	}
	return out
}
