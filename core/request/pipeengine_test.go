package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestDeepSpeedPipelineEngineRefusals: framework deepspeed on two or more stages runs
// DeepSpeed's PipelineEngine, so a training request it cannot run is refused on the
// field that asks for it (another schedule than 1f1b, ZeRO stages 2 and 3 or hsdp, the
// gradient reduction or weight gather overlapped), where it used to be priced as if the
// engine ran it; one stage, inference and the engine's own settings plan.
func TestDeepSpeedPipelineEngineRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     int
		set   func(r *wire.Request)
		field string // "" plans
	}{
		{"1f1b", 4, func(r *wire.Request) {}, ""},
		{"zero1", 4, func(r *wire.Request) { r.Parallelism.Sharding = "zero1" }, ""},
		{"overlap off", 4, func(r *wire.Request) { r.Parallelism.OverlapGradReduce = OverlapOff }, ""},
		{"zb-h1", 4, func(r *wire.Request) { r.Schedule.Name = "zb-h1" }, "schedule.name"},
		{"interleaved", 4, func(r *wire.Request) { r.Schedule.Name = "interleaved:2" }, "schedule.name"},
		{"gpipe", 4, func(r *wire.Request) { r.Schedule.Name = "gpipe" }, "schedule.name"},
		{"zero2", 4, func(r *wire.Request) { r.Parallelism.Sharding = "zero2" }, "parallelism.sharding"},
		{"zero3", 4, func(r *wire.Request) { r.Parallelism.Sharding = "zero3" }, "parallelism.sharding"},
		{"hsdp", 4, func(r *wire.Request) {
			r.Parallelism.Data, r.Parallelism.Sharding, r.Parallelism.ShardGroup = 4, "hsdp", 2
		}, "parallelism.sharding"},
		{"overlap grad", 4, func(r *wire.Request) { r.Parallelism.OverlapGradReduce = OverlapOn }, "parallelism.overlap_grad_reduce"},
		{"overlap param", 4, func(r *wire.Request) {
			r.Parallelism.Sharding, r.Parallelism.OverlapParamGather = "zero1", OverlapOn
		}, "parallelism.overlap_param_gather"},
		{"one stage zero3", 1, func(r *wire.Request) { r.Parallelism.Sharding = "zero3" }, ""},
		{"one stage gpipe", 1, func(r *wire.Request) { r.Schedule.Name = "gpipe" }, ""},
		{"inference", 4, func(r *wire.Request) { r.Training.Mode, r.Schedule.Name = "inference", "" }, ""},
	} {
		r := llamaRequest(tc.p, 2, 1)
		r.Model.Architecture.Framework = "deepspeed"
		tc.set(r)
		_, err := Run(context.Background(), r)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		fes, _ := model.AsFieldErrors(err)
		if len(fes) != 1 || fes[0].Path != tc.field || !strings.Contains(fes[0].Reason, "PipelineEngine") {
			t.Errorf("%s: error %v, want one on %s naming DeepSpeed's PipelineEngine", tc.name, err, tc.field)
		}
	}
}

// TestDeepSpeedTensorCommRefused: framework deepspeed runs Megatron-DeepSpeed's
// tensor-parallel layers, which have no Transformer Engine userbuffers overlap, so
// parallelism.overlap_tensor_comm on or userbuffers is refused on that field (on any
// number of stages); off, or left out, plans, and the other modes take userbuffers.
func TestDeepSpeedTensorCommRefused(t *testing.T) {
	for _, tc := range []struct {
		framework, overlap string
		p                  int
		refused            bool
	}{
		{"deepspeed", OverlapOn, 4, true},
		{"deepspeed", OverlapUserbuffers, 4, true},
		{"deepspeed", OverlapUserbuffers, 1, true},
		{"deepspeed", OverlapOff, 4, false},
		{"deepspeed", "", 4, false},
		{"megatron", OverlapUserbuffers, 4, false},
	} {
		r := llamaRequest(tc.p, 1, 2)
		r.Model.Architecture.Framework = tc.framework
		r.Parallelism.SequenceParallel = true
		r.Parallelism.OverlapTensorComm = tc.overlap
		_, err := Run(context.Background(), r)
		if !tc.refused {
			if err != nil {
				t.Errorf("%s %q p=%d: %v", tc.framework, tc.overlap, tc.p, err)
			}
			continue
		}
		fes, _ := model.AsFieldErrors(err)
		if len(fes) != 1 || fes[0].Path != "parallelism.overlap_tensor_comm" || !strings.Contains(fes[0].Reason, "userbuffers") {
			t.Errorf("%s %q p=%d: error %v, want one on parallelism.overlap_tensor_comm naming userbuffers", tc.framework, tc.overlap, tc.p, err)
		}
	}
}

// TestDeepSpeedZeRO1AllReduce: DeepSpeed's ZeRO-1 all-reduces the whole 16-bit
// gradients (stage 1 gets no contiguous_gradients, so reduce_ipg_grads takes
// buffered_reduce_fallback's dist.all_reduce, zero/stage2.py at v0.5.4) and then
// all-gathers the updated weights: over d ranks of one ring, an all-reduce of G bytes
// is the same ring's reduce-scatter and all-gather of them, 2(d-1)/d G over the link,
// so framework deepspeed's zero1 reduces in exactly the time its unsharded run does
// (the same all-reduce of the same gradients), reduce-scatters nothing, and gathers
// weights of as many bytes as its gradients (16-bit both, precision mixed) in half
// that time; Megatron-LM's ZeRO-1 (its distributed optimizer) reduce-scatters them in
// that half instead. Each collective also pays NCCL's latency once a bucket
// (cluster.NCCLTune), which the halves do not share: they agree to within 3%.
func TestDeepSpeedZeRO1AllReduce(t *testing.T) {
	req := func(framework, sharding string) *wire.Request {
		r := llamaRequest(2, 8, 1)
		r.Model.Architecture.Name, r.Model.Architecture.Seq = "gpt2", 1024
		r.Cluster.DevicesPerNode = 8
		r.Model.Architecture.Framework = framework
		r.Parallelism.Sharding = sharding
		r.Training.Precision = "mixed"
		return r
	}
	z1, z0, mg := run(t, req("deepspeed", "zero1")), run(t, req("deepspeed", "")), run(t, req("megatron", "zero1"))
	for _, r := range []*wire.Result{z1, z0, mg} {
		if r.Plan == nil || len(r.Devices) == 0 {
			t.Fatalf("no plan: %v", r.Diagnostics)
		}
	}
	within := func(a, b, tol float64) bool { return a > 0 && b > 0 && (a-b)/b < tol && (b-a)/b < tol }
	near := func(a, b float64) bool { return within(a, b, 1e-9) }
	half := func(a, b float64) bool { return within(a, b, 0.03) }
	for i := range z1.Devices {
		d, u, m := z1.Devices[i], z0.Devices[i], mg.Devices[i]
		if d.GradBytes != u.GradBytes || d.GradBytes != d.WeightBytes || d.ReduceScatterSeconds != 0 || !near(d.AllReduceSeconds, u.AllReduceSeconds) || !half(2*d.AllGatherSeconds, d.AllReduceSeconds) {
			t.Errorf("device %d: deepspeed zero1 reduces %d bytes of gradients in an all-reduce of %v s (reduce-scatter %v s) and gathers %d bytes of weights in %v s; unsharded %d bytes in %v s: want the unsharded all-reduce, no reduce-scatter and a gather of half its time",
				i, d.GradBytes, d.AllReduceSeconds, d.ReduceScatterSeconds, d.WeightBytes, d.AllGatherSeconds, u.GradBytes, u.AllReduceSeconds)
		}
		if m.GradBytes == d.GradBytes && (m.AllReduceSeconds != 0 || !half(2*m.ReduceScatterSeconds, d.AllReduceSeconds)) {
			t.Errorf("device %d: megatron zero1 all-reduces %v s and reduce-scatters %v s of the same %d bytes: want a reduce-scatter of half deepspeed's all-reduce (%v s)", i, m.AllReduceSeconds, m.ReduceScatterSeconds, m.GradBytes, d.AllReduceSeconds)
		}
	}
	if !strings.Contains(z1.Step.Breakdown, "data-parallel all-reduce + all-gather") {
		t.Errorf("breakdown %q: want the all-reduce and the all-gather named", z1.Step.Breakdown)
	}
}
