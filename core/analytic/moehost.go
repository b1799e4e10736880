package analytic

import "pipeplan/core/cluster"

// moeHostSeconds adds to a layer's passes the host time that a dropless mixture of
// experts exposes.
//
// Without a capacity factor the tokens each expert receives are known only on the
// device, and Megatron-Core's all-to-all (and DeepEP) token dispatchers copy them to
// the host before the all-to-all and the grouped expert GEMMs can be sized: a host
// synchronization in every mixture layer's forward pass (Megatron-Core's developer guide,
// core.transformer.moe.token_dispatcher_inference: the all-to-all dispatcher's "host
// synchronizations ... would break CUDA graph capture"). So the dispatch, the routed
// experts and the combine are not captured by CUDA graphs and run eagerly ("Dynamic
// dispatch, expert compute, and combine remain eager", NeMo AutoModel's partial CUDA
// graphs, nemo_automodel.components.cuda_graphs.partial; Megatron-Bridge's MoE
// training optimization guide names "small expert GEMMs + host overhead" as MoE's
// compute-efficiency wall). At the synchronization the device's queue drains, so the
// host cannot run ahead across it: a pass takes the longer of device and host time
// before it, plus the longer of the two after it, instead of the longer of the totals.
//
// The host operations before it are the layer's (Terms.HostOps) less the experts'
// kernels. The part after it is the routed experts' operations (piece.eagerFrom to eagerTo),
// their kernels launched at the eager framework's host cost per kernel
// (cluster.Eager's HostKernelSeconds, times the device's host's Perf.HostScale, as
// the framework's own figures are) whatever the framework's own figure is lower,
// and the expert communication left exposed. A mixture with a capacity factor has
// fixed shapes, no synchronization, and nothing is added; nor without a host side
// (cluster.NoFramework).
//
// The backward pass reads nothing from the device: the dispatchers keep what the
// forward's synchronization gave the host (Megatron-Core core_v0.14.0 to core_v0.16.0:
// tensor_parallel/mappings.py _AllToAll.backward reruns all_to_all_single with the
// split sizes saved in ctx; transformer/moe/fused_a2a.py FusedDispatch and
// FusedCombine pass DeepEP the forward's handle, whose cached mode sizes the
// receive buffer without the CPU's wait; HybridEPCombine.backward passes
// dispatch_with_permute the handle and the num_permuted_tokens the dispatcher summed
// on the host; Transformer Engine's GroupedLinear saves m_splits). So the backward's
// host can run ahead: its routed experts' kernels still cost the eager host time
// (autograd runs the eager forward's backward eagerly), added to the rest, and the
// pass takes the longer of device and host time. Only when the mixture's forward is
// rerun in the backward (full recomputation, or Megatron-Core's selective "moe"
// module, moe_layer.py's checkpoint of the whole MoELayer.forward) does the rerun
// dispatcher synchronize again, and the backward is split there as the forward is.
func (c *calc) moeHostSeconds(l *Layer, ps []piece, fwdComm, bwdComm float64) {
	if c.fw.Name == "" || c.fw.Name == cluster.NoFramework {
		return
	}
	eager, err := cluster.LookupFramework(cluster.Eager)
	if err != nil {
		return
	}
	perKernel := max(c.fw.HostKernelSeconds, eager.ScaleHost(c.target.Perf.HostScale()).HostKernelSeconds)
	train := c.sh.train
	var fwdDev, bwdDev, fwdK, bwdK float64
	any, bwdSync := false, false
	for _, p := range ps {
		if p.eagerTo <= p.eagerFrom {
			continue
		}
		any = true
		bwdSync = bwdSync || c.rerun(p)
		for _, o := range p.ops[p.eagerFrom:p.eagerTo] {
			fwdDev += c.rf.opSeconds(o, false)
			fwdK += o.fwd.kernels
			if !train {
				continue
			}
			bwdDev += c.rf.opSeconds(o, true)
			bwdK += o.bwd.kernels
			if c.rerun(p) {
				bwdDev += c.rf.opSeconds(o, false)
				bwdK += o.fwd.kernels
			}
		}
	}
	if !any {
		return
	}
	split := func(device, hostOps, postDevice, postKernels float64) (seconds, host float64) {
		preHost := c.fw.HostSeconds(max(0, hostOps-postKernels), 1)
		postHost := postKernels * perKernel
		return max(device-postDevice, preHost) + max(postDevice, postHost), preHost + postHost
	}
	l.FwdSeconds, l.FwdHostSeconds = split(l.FwdDeviceSeconds, l.FwdTerms.HostOps, fwdDev+fwdComm, fwdK)
	switch {
	case train && bwdSync:
		l.BwdSeconds, l.BwdHostSeconds = split(l.BwdDeviceSeconds, l.BwdTerms.HostOps, bwdDev+bwdComm, bwdK)
	case train:
		l.BwdHostSeconds = c.fw.HostSeconds(max(0, l.BwdTerms.HostOps-bwdK), 1) + bwdK*perKernel
		l.BwdSeconds = max(l.BwdDeviceSeconds, l.BwdHostSeconds)
	}
}
