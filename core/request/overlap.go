package request

import "pipeplan/core/cluster"
import "pipeplan/core/wire"

// Overlaps are the communication overlaps a plan is priced with: the framework mode's
// defaults (cluster.Framework) with the request's parallelism.overlap_* overrides.
// GradReduce: the data-parallel gradient reduction during the last backward pass;
// ParamGather: the distributed optimizer's weight all-gather during the next forward;
// TensorComm: tensor parallelism's all-gathers and reduce-scatters behind the products,
// by TensorCommMethod (OverlapUserbuffers or OverlapAsyncTP; "" when off).
// Exports state them in their framework's terms (Megatron-LM's --overlap-grad-reduce,
// --overlap-param-gather and --tp-comm-overlap).
type Overlaps struct {
	GradReduce, ParamGather, TensorComm bool
	TensorCommMethod                    string
	// TensorCommConfig is the tuned userbuffers config (parallelism.
	// tp_comm_overlap_config) the userbuffers overlap is priced with ("":
	// initialize_ub's defaults, or another method).
	TensorCommConfig string
}

// PricedOverlaps returns the overlaps a normalized request is priced with (none for a
// measured profile, whose plan hides no communication, for inference, which reduces no
// gradients and whose tensor parallelism is priced without overlap, or for an unknown
// framework).
func PricedOverlaps(n *wire.Request) Overlaps {
	a := n.Model.Architecture
	if a == nil || n.Training.Mode == wire.ModeInference {
		return Overlaps{}
	}
	fw, err := cluster.LookupFramework(a.Framework)
	if err != nil {
		return Overlaps{}
	}
	applyOverlaps(&fw, n.Parallelism)
	ov := Overlaps{GradReduce: fw.OverlapGradReduce, ParamGather: fw.OverlapParamGather, TensorComm: fw.OverlapTensorComm,
		TensorCommMethod: tensorCommMethod(fw)}
	if ov.TensorCommMethod == OverlapUserbuffers {
		ov.TensorCommConfig = n.Parallelism.TPCommOverlapConfig
	}
	return ov
}

// tensorCommMethod names how a framework with its overlaps applied hides tensor
// parallelism's communication ("" when it does not).
func tensorCommMethod(fw cluster.Framework) string {
	switch {
	case !fw.OverlapTensorComm:
		return ""
	case fw.AsyncTensorComm:
		return OverlapAsyncTP
	}
	return OverlapUserbuffers
}

// applyOverlaps sets a framework's overlaps that the request's parallelism states.
func applyOverlaps(fw *cluster.Framework, par wire.Parallelism) {
	if v := par.OverlapGradReduce; v != "" {
		fw.OverlapGradReduce = v == OverlapOn
	}
	if v := par.OverlapParamGather; v != "" {
		fw.OverlapParamGather = v == OverlapOn
	}
	switch par.OverlapTensorComm {
	case OverlapOn: // the mode's own method (cluster.Framework.AsyncTensorComm)
		fw.OverlapTensorComm = true
	case OverlapUserbuffers:
		fw.OverlapTensorComm, fw.AsyncTensorComm = true, false
	case OverlapAsyncTP:
		fw.OverlapTensorComm, fw.AsyncTensorComm = true, true
	case OverlapOff:
		fw.OverlapTensorComm = false
	}
}
