package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/cluster"
)

// TestGradNaNCheckSeconds: Megatron-Core's check_for_nan_in_grad
// (param_and_grad_buffer.py check_grads, core_v0.13.1) priced once a step: each bucket's
// norm, isnan and isinf kernels and two scalar copies (five kernels) and two
// synchronizations, each the host's next operator; the norms read every gradient once.
// Llama 3 8B on 64 H100s (zero1, megatron, bucket_size 64: 195 buckets, a bucket a
// parameter): the check adds exactly GradBytes / (memory rate x efficiency) + 195 x
// (5 x kernel + 2 x host op) to the exposed data-parallel time, and to the step.
func TestGradNaNCheckSeconds(t *testing.T) {
	if got, want := gradNaNCheckBucketSeconds(15e-6, 3e-6), 5*3e-6+2*15e-6; !near(got, want) {
		t.Errorf("a bucket: %v s, want %v", got, want)
	}
	r := llamaRequest(1, 64, 1)
	r.Model.Architecture.Seq, r.Model.Architecture.Framework = 8192, "megatron"
	r.Cluster.DevicesPerNode = 8
	r.Parallelism.Sharding, r.Parallelism.OverlapGradReduce, r.Parallelism.OverlapParamGather = "zero1", OverlapOn, OverlapOn
	r.Parallelism.DPBucketElements = 64
	off := run(t, r)
	r.Training.CheckForNaNInGrad = true
	on := run(t, r)
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	eager, _ := cluster.LookupFramework(cluster.Eager)
	host := max(p.framework.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds, eager.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds)
	if host <= 0 || p.target.Perf.KernelSeconds <= 0 {
		t.Fatalf("host op %v s, kernel %v s: want both above 0", host, p.target.Perf.KernelSeconds)
	}
	grads := on.Devices[0].GradBytes
	want := float64(grads)/(p.cluster.Devices[0].MemoryBytesPerSecond*p.memoryEfficiency[0]) + 195*gradNaNCheckBucketSeconds(host, p.target.Perf.KernelSeconds)
	if got := on.Step.DataParallelExposedSeconds - off.Step.DataParallelExposedSeconds; !near(got, want) {
		t.Errorf("the check adds %v s exposed, want %v", got, want)
	}
	if got := on.Step.StepSeconds - off.Step.StepSeconds; !near(got, want) {
		t.Errorf("the check adds %v s a step, want %v", got, want)
	}
	// Refusals: inference, and framework modes without Megatron-Core's DDP.
	for _, tt := range []struct{ mode, framework, want string }{
		{"inference", "megatron", "training.check_for_nan_in_grad: applies to training"},
		{"", "eager", "training.check_for_nan_in_grad: is Megatron-Core's DistributedDataParallelConfig check"},
	} {
		q := llamaRequest(1, 8, 1)
		q.Model.Architecture.Framework, q.Training.Mode, q.Training.CheckForNaNInGrad = tt.framework, tt.mode, true
		if _, err := Run(context.Background(), q); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: %v, want %q", tt.mode, tt.framework, err, tt.want)
		}
	}
}
