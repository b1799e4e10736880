package request

import (
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// breakdown is Step.Breakdown: the parts that add up to StepSeconds, then the
// data-parallel communication the framework hides behind compute, so that every front
// end says the same thing:
//
//	pipeline 268.64 ms + the last backward slowed 1.75 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the last backward, slowing it 1.75 ms (NCCL's SMs)
//	pipeline 268.64 ms + data-parallel all-reduce 1.75 ms exposed + the last backward slowed 1.44 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, 7.90 ms of it hidden behind the last backward, slowing it 1.44 ms (NCCL's SMs)
//	pipeline 55.75 ms (including each layer's compute slowed 1.17 ms) + optimizer 5.43 ms; per-layer all-gather + reduce-scatter 5.25 ms, all of it hidden behind each layer's compute, slowing it 1.17 ms (NCCL's SMs)
//
// A collective hidden behind compute still adds to the step: it holds NCCL's SMs while
// it runs and slows the compute (cluster.OverlapSlowdownSeconds), which is named as
// the compute slowed, not as exposed communication; exposed is only what outlasts the
// compute. The hidden part is the slowest device's communication less its exposed
// part. ZeRO-3's and HSDP's per-layer collectives are inside the pipeline's passes:
// what they add to them is named as a part of the pipeline. Parts that are 0 are left
// out.
func breakdown(s *wire.Step) string {
	if s == nil {
		return ""
	}
	sec := func(v float64) string { return units.Time(v, model.Seconds) }
	dp, all, behind, it := "data-parallel all-reduce", s.DataParallelAllReduceSeconds, "the last backward", "it"
	switch {
	case s.DataParallelAllGatherSeconds > 0 && s.DataParallelAllReduceSeconds > 0:
		// DeepSpeed's BF16 optimizer: the whole gradients all-reduced, the weights gathered.
		dp, all, behind, it = "data-parallel all-reduce + all-gather", s.DataParallelAllReduceSeconds+s.DataParallelAllGatherSeconds, "the last backward and the first forward", "them"
	case s.DataParallelReduceScatterSeconds+s.DataParallelAllGatherSeconds > 0:
		dp, all, behind, it = "data-parallel reduce-scatter + all-gather", s.DataParallelReduceScatterSeconds+s.DataParallelAllGatherSeconds, "the last backward and the first forward", "them"
	}
	const layer = "per-layer all-gather + reduce-scatter"
	slow, exposed, hidden := split(s.DataParallelExposedSeconds, s.DataParallelSlowdownSeconds, all)
	lslow, lexposed, lhidden := split(s.DataParallelLayerAddedSeconds, s.DataParallelLayerSlowdownSeconds, s.DataParallelLayerSeconds)

	out := "pipeline " + sec(s.PipelineSeconds)
	var in []string
	if lexposed > 0 {
		part := layer + " " + sec(lexposed)
		if lhidden > 0 {
			part += " exposed"
		}
		in = append(in, part)
	}
	if lslow > 0 {
		in = append(in, "each layer's compute slowed "+sec(lslow))
	}
	if len(in) > 0 {
		out += " (including " + strings.Join(in, " and ") + ")"
	}
	if s.TiedAllReduceSeconds > 0 {
		out += " + tied all-reduce " + sec(s.TiedAllReduceSeconds)
	}
	if exposed > 0 {
		out += " + " + dp + " " + sec(exposed)
		if hidden > 0 {
			out += " exposed"
		}
	}
	if slow > 0 {
		out += " + " + behind + " slowed " + sec(slow)
	}
	if s.OptimizerSeconds > 0 {
		out += " + optimizer " + sec(s.OptimizerSeconds)
	}
	if s.TrainMetricSyncSeconds > 0 {
		out += " + training-metric sync " + sec(s.TrainMetricSyncSeconds)
	}
	if s.ExpertUnpairedSeconds > 0 {
		out += " + unpaired expert all-to-alls " + sec(s.ExpertUnpairedSeconds)
	}
	hiddenBehind := func(what string, all, exposed, hidden, slow float64, behind, it string) string {
		part := "all"
		if exposed > 0 {
			part = sec(hidden)
		}
		out := "; " + what + " " + sec(all) + ", " + part + " of it hidden behind " + behind
		if slow > 0 {
			out += ", slowing " + it + " " + sec(slow) + " (NCCL's SMs)"
		}
		return out
	}
	if hidden > 0 {
		out += hiddenBehind(dp, all, exposed, hidden, slow, behind, it)
	}
	if lhidden > 0 {
		out += hiddenBehind(layer, s.DataParallelLayerSeconds, lexposed, lhidden, lslow, "each layer's compute", "it")
	}
	return out
}

// split divides what communication of all seconds adds to a step, added, into the
// compute it slows (slowdown, at most added) and the communication that outlasts the
// compute (exposed), and says how much of the communication hides (hidden, all less
// exposed). An exposed part within rounding of 0 (a billionth of all) is 0: the
// communication is then all hidden.
func split(added, slowdown, all float64) (slow, exposed, hidden float64) {
	slow = min(max(slowdown, 0), added)
	exposed = added - slow
	if exposed <= 1e-9*all {
		exposed = 0
	}
	return slow, exposed, all - exposed
}
