package request

import "testing"
import "pipeplan/core/wire"

// TestStepBreakdown: the parts before the semicolon are those StepSeconds adds up, and
// the hidden communication comes after it, named by what hides it.
func TestStepBreakdown(t *testing.T) {
	for _, tt := range []struct {
		name string
		step wire.Step
		want string
	}{
		{"pipeline alone", wire.Step{PipelineSeconds: 0.25, StepSeconds: 0.25}, "pipeline 250.00 ms"},
		{"all hidden", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965},
			"pipeline 268.64 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the last backward"},
		{"partly hidden", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965, DataParallelExposedSeconds: 0.00175},
			"pipeline 268.64 ms + data-parallel all-reduce 1.75 ms exposed + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, 7.90 ms of it hidden behind the last backward"},
		{"none hidden", wire.Step{PipelineSeconds: 0.1, TiedAllReduceSeconds: 0.001, DataParallelAllReduceSeconds: 0.002, DataParallelExposedSeconds: 0.002},
			"pipeline 100.00 ms + tied all-reduce 1.00 ms + data-parallel all-reduce 2.00 ms"},
		{"sharded", wire.Step{PipelineSeconds: 0.1, DataParallelReduceScatterSeconds: 0.003, DataParallelAllGatherSeconds: 0.002, DataParallelExposedSeconds: 0.001},
			"pipeline 100.00 ms + data-parallel reduce-scatter + all-gather 1.00 ms exposed; data-parallel reduce-scatter + all-gather 5.00 ms, 4.00 ms of it hidden behind the last backward and the first forward"},
		{"all-reduced, then gathered (deepspeed-bf16)", wire.Step{PipelineSeconds: 0.1, DataParallelAllReduceSeconds: 0.006, DataParallelAllGatherSeconds: 0.002, DataParallelExposedSeconds: 0.008},
			"pipeline 100.00 ms + data-parallel all-reduce + all-gather 8.00 ms"},
	} {
		if got := breakdown(&tt.step); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	if got := breakdown(nil); got != "" {
		t.Errorf("nil step: %q", got)
	}
}
