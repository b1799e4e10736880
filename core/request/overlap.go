package request

import "pipeplan/core/cluster"
import "pipeplan/core/wire"

// Overlaps are the communication overlaps a plan is priced with: the framework mode's
// defaults (cluster.Framework) with the request's parallelism.overlap_* overrides.
// GradReduce: the data-parallel gradient reduction during the last backward pass;
// ParamGather: the distributed optimizer's weight all-gather during the next forward;
// TensorComm: tensor parallelism's all-gathers and reduce-scatters behind the products.
// Exports state them in their framework's terms (Megatron-LM's --overlap-grad-reduce,
// --overlap-param-gather and --tp-comm-overlap).
type Overlaps struct {
	GradReduce, ParamGather, TensorComm bool
}

// PricedOverlaps returns the overlaps a normalized request is priced with (none for a
// measured profile, whose plan hides no communication, or an unknown framework).
func PricedOverlaps(n *wire.Request) Overlaps {
	a := n.Model.Architecture
	if a == nil {
		return Overlaps{}
	}
	fw, err := cluster.LookupFramework(a.Framework)
	if err != nil {
		return Overlaps{}
	}
	applyOverlaps(&fw, n.Parallelism)
	return Overlaps{GradReduce: fw.OverlapGradReduce, ParamGather: fw.OverlapParamGather, TensorComm: fw.OverlapTensorComm}
}

// applyOverlaps sets a framework's overlaps that the request's parallelism states.
func applyOverlaps(fw *cluster.Framework, par wire.Parallelism) {
	if v := par.OverlapGradReduce; v != "" {
		fw.OverlapGradReduce = v == OverlapOn
	}
	if v := par.OverlapParamGather; v != "" {
		fw.OverlapParamGather = v == OverlapOn
	}
	if v := par.OverlapTensorComm; v != "" {
		fw.OverlapTensorComm = v == OverlapOn
	}
}
