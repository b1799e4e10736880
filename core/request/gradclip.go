package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
)

// gradClipSeconds is what gradient-norm clipping adds to device dev's optimizer step,
// once a step, for normBytes of main gradients (analytic.Result.GradNormBytes over the
// device's layers): 0 outside training, outside Megatron-Core (the framework with its
// main-gradient buffer, cluster.Framework.MainGradBuffer: megatron; cuda-graphs, which
// also stands for torch.compile's reduce-overhead, does not set it) or with nothing to
// read. torchtitan's clip_grad_norm_ and DeepSpeed's gradient_clipping are not priced.
//
// Megatron-LM's --clip-grad defaults to 1.0 (megatron/training/arguments.py) and
// Megatron-Core's OptimizerConfig.clip_grad too (megatron/core/optimizer/
// optimizer_config.py), and MixedPrecisionOptimizer.step calls clip_grad_norm when
// clip_grad > 0 (megatron/core/optimizer/optimizer.py, core_v0.8.0 to core_v0.16.0).
// get_grad_norm_fp32 (clip_grads.py) then, in order on the step's critical path:
//   - multi_tensor_l2norm reads the rank's main gradients (normBytes) at the device's
//     memory rate (its memory efficiency), one kernel;
//   - torch.distributed.all_reduce of the one fp32 squared norm over the gradient-stats
//     group (model parallel, and data parallel under the distributed optimizer): priced
//     over the data-parallel ring (gradNormAllReduceSeconds);
//   - total_norm.item(): a copy of the scalar to the host (one kernel) and a
//     synchronization, the device idle while the host, woken, issues its next operator
//     (the framework's host time an operator, at least eager PyTorch's, as
//     gradNaNCheckSeconds prices its synchronizations).
//
// clip_grad_by_total_norm_fp32's multi_tensor_scale runs only when max_norm /
// (total_norm + 1e-6) < 1 (clip_coeff is a host float after the .item()): a step whose
// norm is under max_norm, as a stable run's is, skips it, so it is not priced.
func (p *prepared) gradClipSeconds(dev int, normBytes float64) float64 {
	if !p.train() || !p.framework.MainGradBuffer || normBytes <= 0 {
		return 0
	}
	host := p.framework.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds
	if eager, err := cluster.LookupFramework(cluster.Eager); err == nil {
		host = max(host, eager.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds)
	}
	read := 0.0
	if dev < len(p.cluster.Devices) && dev < len(p.memoryEfficiency) {
		if bw := p.cluster.Devices[dev].MemoryBytesPerSecond * p.memoryEfficiency[dev]; bw > 0 {
			read = normBytes / bw
		}
	}
	return gradClipClosedForm(read, p.gradNormAllReduceSeconds(dev), p.target.Perf.KernelSeconds, host)
}

// gradClipClosedForm is the norm's parts added: its read, its all-reduce, two kernels
// (the norm and the scalar's copy to the host) and one host operator after the sync.
func gradClipClosedForm(read, allReduce, kernel, host float64) float64 {
	return read + allReduce + 2*kernel + host
}

// gradNormAllReduceSeconds is the all-reduce of one fp32 (4 bytes) over device dev's
// data-parallel ring (shardLinks, dataRing) under the distributed optimizer (ZeRO-1
// and beyond, whose get_grad_stats_parallel_group spans the data-parallel ranks): NCCL's
// tuned time where its model describes the ring (cluster.NCCLTune), the ring formula's
// otherwise. 0 with one replica or without the distributed optimizer, where the group
// is model parallel only: its members (tensor parallelism inside a node, the pipeline's
// stages) are not priced.
func (p *prepared) gradNormAllReduceSeconds(dev int) float64 {
	if analytic.Sharding(p.req.Parallelism.Sharding).Level() < 1 {
		return 0 // no distributed optimizer: the group is model parallel only
	}
	link, n, _, _, ok := p.shardLinks()
	if !ok || n < 2 || dev >= len(p.cluster.Devices) {
		return 0
	}
	l := secondsLink(link, p.cluster.Devices[dev].ClockHz)
	if r := p.dataRing(n, false); r.nccl && l.BytesPerSecond > 0 {
		return cluster.NCCLTune(p.ncclComm(r, l), cluster.NCCLAllReduce, 4).Seconds
	}
	return cluster.RingAllReduceSeconds(l, 4, n)
}
