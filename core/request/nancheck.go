package request

import "pipeplan/core/cluster"

// gradNaNCheckSeconds is what Megatron-Core's check_for_nan_in_grad
// (training.check_for_nan_in_grad) adds to device dev's step, exposed, for buckets
// gradient buckets holding gradBytes: 0 with the check off or nothing to reduce.
//
// _ParamAndGradBucketGroup.start_grad_sync calls check_grads before the bucket group's
// reduce-scatter (megatron/core/distributed/param_and_grad_buffer.py, core_v0.13.1),
// and check_grads takes each bucket's grad_data.norm(p=2) and passes it to
// rerun_state_machine.validate_result twice, with rejection_func torch.isnan and then
// torch.isinf; with reruns disabled (the default) validate_result evaluates
// "if result_rejected:" on the 0-d tensor, a device-to-host read that waits for the
// device (megatron/core/rerun_state_machine.py, core_v0.13.1). So a bucket costs:
//   - the norm's read of its gradients on the compute stream, at the device's memory
//     rate (the device's memory efficiency); all buckets together read gradBytes;
//   - three kernels (the norm, isnan, isinf) and two copies of a scalar to the host, at
//     the device's per-kernel time each;
//   - two synchronizations, each draining the queue the host had launched ahead: the
//     device idles while the host, woken, issues its next operator (the framework's
//     host time an operator, cluster.Framework.HostKernelSeconds scaled to the device's
//     host, and at least eager PyTorch's, as moeHostSeconds prices the eager work after
//     a mixture's synchronization: nothing after the check is captured in a graph).
//
// The check runs once a step (start_grad_sync runs on the step's last microbatch), in
// the backward the buckets' gradients come from: it does not overlap.
func (p *prepared) gradNaNCheckSeconds(dev int, buckets, gradBytes int64) float64 {
	if !p.req.Training.CheckForNaNInGrad || buckets <= 0 || gradBytes <= 0 || !p.train() {
		return 0
	}
	host := p.framework.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds
	if eager, err := cluster.LookupFramework(cluster.Eager); err == nil {
		host = max(host, eager.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds)
	}
	kernel := p.target.Perf.KernelSeconds
	read := 0.0
	if dev < len(p.cluster.Devices) && dev < len(p.memoryEfficiency) {
		if bw := p.cluster.Devices[dev].MemoryBytesPerSecond * p.memoryEfficiency[dev]; bw > 0 {
			read = float64(gradBytes) / bw
		}
	}
	return read + float64(buckets)*gradNaNCheckBucketSeconds(host, kernel)
}

// gradNaNCheckBucketSeconds is one bucket's check beyond its gradients' read: three
// kernels and two scalar copies of kernel seconds each, and two synchronizations, each
// the host's next operator (host seconds) with the device idle.
func gradNaNCheckBucketSeconds(host, kernel float64) float64 {
	return 5*kernel + 2*host
}
