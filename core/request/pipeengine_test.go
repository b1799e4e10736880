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
