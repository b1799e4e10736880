package request

import (
	"context"
	"math"
	"testing"

	"pipeplan/core/wire"
)

// TestExpertUnpairedSeconds: under parallelism.expert_overlap without pipeline
// parallelism, Megatron-Core's combined_1f1b_schedule_for_no_pipelining runs the first
// forward and the last backward unpaired (combined_1f1b.py, core_v0.14.0 on), so the
// step adds, once, each layer's hidden expert communication (Layer.ExpertCommSeconds -
// ExpertExposedSeconds) where the device bounds the passes, max(P, D + hidden) - P
// in general. Closed forms on GPT-OSS 120B's GB200 recipe with the overlap (NeMo
// 26.02.01, PP 1, 5 microbatches): the term is that sum over the estimate's layers,
// the same at 5 and 10 microbatches (once a step, not per microbatch), in the step's
// sum, and the estimate's; 0 without the overlap and on a pipeline.
func TestExpertUnpairedSeconds(t *testing.T) {
	row := bridgeMoERun{name: "GPT-OSS 120B, 64 GB200, BF16, MBS4 EP64", source: bridge26021, model: "gpt-oss-120b", device: "gb200", precision: "bf16",
		gpus: 64, gbs: 1280, mbs: 4, seq: 4096, tp: 1, pp: 1, vp: 1, ep: 64, tokensPerGPU: 15754, overlap: true, recompute: "layernorm, moe_act"}
	ctx := context.Background()
	run := func(r *wire.Request) *wire.Step {
		t.Helper()
		res, err := Run(ctx, r)
		if err != nil || res.Step == nil {
			t.Fatalf("%v", err)
		}
		return res.Step
	}
	r := row.request(t)
	est, err := Estimate(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	var want, hiddenSum float64
	for _, l := range est.Layers {
		hidden := l.ExpertCommSeconds - l.ExpertExposedSeconds
		hiddenSum += hidden
		pass := l.FwdSeconds + l.BwdSeconds
		want += max(pass, l.FwdDeviceSeconds+l.BwdDeviceSeconds+hidden) - pass
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-12) }
	if !(hiddenSum > 0) {
		t.Fatalf("no hidden expert communication: %g", hiddenSum)
	}
	if !near(want, hiddenSum) {
		t.Errorf("unpaired %g s, hidden %g s: the GB200 row's passes are device-bound, want them equal", want, hiddenSum)
	}
	st := run(r)
	if !near(st.ExpertUnpairedSeconds, want) {
		t.Errorf("ExpertUnpairedSeconds %g, want %g (hidden over all layers %g)", st.ExpertUnpairedSeconds, want, hiddenSum)
	}
	if sum := st.PipelineSeconds + st.TiedAllReduceSeconds + st.DataParallelExposedSeconds + st.OptimizerSeconds + st.TrainMetricSyncSeconds + st.ExpertUnpairedSeconds; !near(st.StepSeconds, sum) {
		t.Errorf("StepSeconds %g, its terms %g", st.StepSeconds, sum)
	}
	if !near(est.Total.ExpertUnpairedSeconds, want) {
		t.Errorf("the estimate's ExpertUnpairedSeconds %g, want %g", est.Total.ExpertUnpairedSeconds, want)
	}
	// Once a step: twice the microbatches, the same two unpaired passes.
	r2 := row.request(t)
	r2.Schedule.Microbatches *= 2
	if got := run(r2).ExpertUnpairedSeconds; !near(got, st.ExpertUnpairedSeconds) {
		t.Errorf("at %d microbatches %g, at %d %g: want the same", r2.Schedule.Microbatches, got, r.Schedule.Microbatches, st.ExpertUnpairedSeconds)
	}
	off := row
	off.overlap = false
	if got := run(off.request(t)).ExpertUnpairedSeconds; got != 0 {
		t.Errorf("without the overlap %g, want 0", got)
	}
	piped := row
	piped.pp, piped.gpus = 2, 128
	if got := run(piped.request(t)).ExpertUnpairedSeconds; got != 0 {
		t.Errorf("on a pipeline %g, want 0 (not priced there)", got)
	}
}
