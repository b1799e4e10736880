package request

import (
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// The values of parallelism.overlap_grad_reduce, overlap_param_gather and
// overlap_tensor_comm ("" is the framework's default).
const (
	OverlapOn  = "on"
	OverlapOff = "off"
)

// The methods parallelism.overlap_tensor_comm may name beside on and off (on is the
// framework mode's own: cluster.Framework.AsyncTensorComm).
const (
	// OverlapUserbuffers: Transformer Engine's userbuffers (Megatron-LM's
	// --tp-comm-overlap): every all-gather and reduce-scatter in chunks behind its
	// products.
	OverlapUserbuffers = "userbuffers"
	// OverlapAsyncTP: PyTorch's asynchronous tensor parallelism under torch.compile
	// (torchtitan's --parallelism.enable_async_tensor_parallel): what its
	// micro-pipeline pass fuses, which leaves the backward reduce-scatter of a summed
	// input gradient exposed (analytic.Options.TensorCommAsync).
	OverlapAsyncTP = "async-tp"
)

// lookupFramework resolves model.architecture.framework on the device preset named
// device: its default is eager on GPUs and none elsewhere (Normalize).
func (p *prepared) lookupFramework(es *model.Errors, device string) (cluster.Framework, bool) {
	a := p.req.Model.Architecture
	if a.Framework == "" {
		a.Framework = cluster.NoFramework
		if d, err := cluster.LookupDevice(device); err == nil && d.GPU {
			a.Framework = cluster.DefaultFramework
		}
	}
	fw, err := cluster.LookupFramework(a.Framework)
	if err != nil {
		es.Add("model.architecture.framework", "must be one of %s, got %q", strings.Join(cluster.FrameworkNames(), ", "), a.Framework)
		return cluster.Framework{}, false
	}
	a.Framework = fw.Name
	if a.HostKernelSeconds != nil {
		fw.HostKernelSeconds = *a.HostKernelSeconds
	}
	if a.HostLayerSeconds != nil {
		fw.HostLayerSeconds = *a.HostLayerSeconds
	}
	if a.CrossEntropy != "" {
		own := fw.CrossEntropy()
		if err := fw.SetCrossEntropy(a.CrossEntropy); err != nil {
			es.Add("model.architecture.cross_entropy", "%v", err)
			return cluster.Framework{}, false
		}
		if !p.train() {
			es.Add("model.architecture.cross_entropy", "applies to training: inference computes no loss")
		}
		if a.CrossEntropy == own {
			// The mode's own kernel is the default: left out, as a request that leaves
			// it out states it, so that the two have one id.
			a.CrossEntropy = ""
		}
	}
	own := tensorCommMethod(cluster.Framework{OverlapTensorComm: true, AsyncTensorComm: fw.AsyncTensorComm}) // what on means in the mode
	defaults := fw
	applyOverlaps(&fw, p.req.Parallelism)
	par := &p.req.Parallelism
	if par.OverlapTensorComm == OverlapAsyncTP && fw.Name != cluster.Compiled {
		es.Add("parallelism.overlap_tensor_comm", "async-tp is torch.compile's micro-pipeline pass: it needs model.architecture.framework %s, got %s (userbuffers overlaps in other modes)", cluster.Compiled, fw.Name)
	} else if fe := TensorCommRefusal(fw.Name, par.OverlapTensorComm); fe != nil {
		es.Add(fe.Path, "%s", fe.Reason)
	} else if par.OverlapTensorComm == own {
		// The mode's own method is what on names: one normal form, one id.
		par.OverlapTensorComm = OverlapOn
	}
	// An overlap stated as the mode's default is left out, as a request that leaves it
	// out states it: the two have one id.
	leaveOutDefault(&par.OverlapGradReduce, defaults.OverlapGradReduce)
	leaveOutDefault(&par.OverlapParamGather, defaults.OverlapParamGather)
	leaveOutDefault(&par.OverlapTensorComm, defaults.OverlapTensorComm)
	if par.TPCommOverlapConfig == analytic.TEDefaultUserbuffers {
		// Transformer Engine's defaults are what a request without a config states:
		// one normal form, one id.
		par.TPCommOverlapConfig = ""
	}
	p.framework = fw
	return fw, true
}

// overlapWindow is how much of device dev's data-parallel all-reduce its framework hides
// behind the backward pass: PyTorch DDP all-reduces gradient buckets as the last
// microbatch's backward produces them (gradient accumulation skips the all-reduce on the
// others), so up to one microbatch's backward time of the device's stages overlaps it.
// Megatron-LM's --overlap-grad-reduce does the same with its buckets. Frameworks that
// all-reduce after the backward (Megatron-LM's default) hide nothing, nor do profiles
// (no framework is known). The framework's mode sets the default
// (cluster.Framework.OverlapGradReduce), parallelism.overlap_grad_reduce overrides it;
// DataParallelExposedSeconds applies it. Cycles hide nothing (0).
func (p *prepared) overlapWindow(pl *wire.Plan, dev, devices int) float64 {
	if p.model.Unit() != model.Seconds {
		return 0
	}
	var w float64
	for s := range pl.Stages {
		if s%devices != dev {
			continue
		}
		for _, l := range pl.StageLayers(s) {
			w += p.model.Layers[l].BackwardSeconds
		}
	}
	return w
}

// forwardWindow is how much of device dev's weight all-gather (zero1, zero2) its
// framework hides behind the next step's first forward pass: one microbatch's forward
// time of the device's stages, where the framework overlaps the gather
// (cluster.Framework.OverlapParamGather, parallelism.overlap_param_gather, which
// DataParallelExposedSeconds applies). Cycles hide nothing (0).
func (p *prepared) forwardWindow(pl *wire.Plan, dev, devices int) float64 {
	if p.model.Unit() != model.Seconds {
		return 0
	}
	var w float64
	for s := range pl.Stages {
		if s%devices != dev {
			continue
		}
		for _, l := range pl.StageLayers(s) {
			w += p.model.Layers[l].ForwardSeconds
		}
	}
	return w
}

// leaveOutDefault clears an overlap field (on or off) that states the framework's
// default, def.
func leaveOutDefault(v *string, def bool) {
	if (*v == OverlapOn && def) || (*v == OverlapOff && !def) {
		*v = ""
	}
}
