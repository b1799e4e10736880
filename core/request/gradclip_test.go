package request

import (
	"testing"

	"pipeplan/core/cluster"
)

// TestGradClipSeconds: Megatron-Core's gradient-norm clipping (clip_grads.py
// get_grad_norm_fp32, clip_grad 1.0 by default) priced once a step before the update:
// multi_tensor_l2norm's read of the rank's fp32 main gradients at the memory rate, the
// all-reduce of one fp32 over the data-parallel ring under the distributed optimizer,
// and total_norm.item(): two kernels (the norm, the scalar's copy) and one host
// operator after the synchronization. Llama 3 8B on 64 H100s, zero1, megatron: the
// norm reads 4 B x the model's parameters / 64 (no tied copy), and device 0's
// optimizer step is the update's max(device, host) plus exactly that closed form.
// Eager PyTorch (no Megatron-Core optimizer) prices none; without the distributed
// optimizer the one-float all-reduce runs over the model-parallel group, not priced.
func TestGradClipSeconds(t *testing.T) {
	if got, want := gradClipClosedForm(65e-6, 20e-6, 3e-6, 15e-6), 65e-6+20e-6+2*3e-6+15e-6; !near(got, want) {
		t.Errorf("closed form: %v s, want %v", got, want)
	}
	r := llamaRequest(1, 64, 1)
	r.Model.Architecture.Framework = "megatron"
	r.Cluster.DevicesPerNode = 8
	r.Parallelism.Sharding = "zero1"
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	last := len(p.est.Layers) - 1
	var params int64
	for _, l := range p.est.Layers {
		params += l.Params
	}
	bytes := p.est.GradNormBytes(0, last)
	if want := 4 * float64(params) / 64; !near(bytes, want) {
		t.Errorf("norm reads %v B, want 4 x %d / 64 = %v", bytes, params, want)
	}
	if got := p.est.GradNormBytes(0, 0) + p.est.GradNormBytes(1, last); !near(got, bytes) {
		t.Errorf("ranges add to %v B, want %v", got, bytes)
	}
	eager, _ := cluster.LookupFramework(cluster.Eager)
	host := max(p.framework.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds, eager.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds)
	reduce := p.gradNormAllReduceSeconds(0)
	if reduce <= 0 || reduce > 1e-3 {
		t.Errorf("one fp32's all-reduce over 64 ranks: %v s, want a latency above 0 and under 1 ms", reduce)
	}
	read := bytes / (p.cluster.Devices[0].MemoryBytesPerSecond * p.memoryEfficiency[0])
	want := read + reduce + 2*p.target.Perf.KernelSeconds + host
	if got := p.gradClipSeconds(0, bytes); !near(got, want) {
		t.Errorf("clip: %v s, want %v", got, want)
	}
	t.Logf("read %.1f us, all-reduce %.1f us, kernels %.1f us, host %.1f us: %.1f us a step", read*1e6, reduce*1e6, 2*p.target.Perf.KernelSeconds*1e6, host*1e6, want*1e6)
	res := run(t, r)
	device, opHost := p.est.OptimizerSeconds(0, last)
	if got, w := res.Devices[0].OptimizerSeconds, max(device, opHost)+want; !near(got, w) {
		t.Errorf("device 0's optimizer step %v s, want the update's %v + clip %v", got, max(device, opHost), want)
	}
	// Without the distributed optimizer: no data-parallel all-reduce of the norm.
	r.Parallelism.Sharding = "none"
	if q, err := prepare(r); err != nil {
		t.Fatal(err)
	} else if got := q.gradNormAllReduceSeconds(0); got != 0 {
		t.Errorf("no distributed optimizer: all-reduce %v s, want 0", got)
	}
	// Eager PyTorch: not Megatron-Core's optimizer, nothing priced.
	r.Parallelism.Sharding, r.Model.Architecture.Framework = "zero1", "eager"
	if q, err := prepare(r); err != nil {
		t.Fatal(err)
	} else if got := q.gradClipSeconds(0, bytes); got != 0 {
		t.Errorf("eager: clip %v s, want 0", got)
	}
}
