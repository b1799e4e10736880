package request

import (
	"context"
	"testing"
)

// TestEstimateAgreesWithOneStagePlan: the analytic estimate and the same request planned
// on one stage and one microbatch state each quantity once (issue 19 item 6): the
// pipeline is the estimate's forward plus backward, the optimizer update its optimizer
// time, the stage's memory its peak on the device, to the last bit.
func TestEstimateAgreesWithOneStagePlan(t *testing.T) {
	for _, tt := range []struct{ name, req string }{
		{"gpt2 a100 bf16", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1}}`},
		{"llama-3.2-1b h100", `{"model":{"architecture":{"name":"llama-3.2-1b"}},"cluster":{"device":"h100-sxm","count":1}}`},
		{"llama-3.2-1b h100 fp32", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":512,"dtype":"fp32"}},"cluster":{"device":"h100-sxm","count":1}}`},
		{"llama-3.2-1b h100 fp8", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":1024}},"cluster":{"device":"h100-sxm","count":1},"training":{"fp8_recipe":"delayed"}}`},
		{"gpt2-medium a100 zero1 dp4", `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"data":4,"sharding":"zero1"}}`},
		{"gpt2-medium a100 zero3 dp4", `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"data":4,"sharding":"zero3"}}`},
		{"llama-3.2-1b h100 tp2", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":2048}},"cluster":{"device":"h100-sxm","count":2},"parallelism":{"tensor":2}}`},
		{"gpt2 a100 inference", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1},"training":{"mode":"inference"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := EstimateOneStage(context.Background(), decode(t, tt.req))
			if err != nil {
				t.Fatal(err)
			}
			tot, res := o.Estimate.Total, o.Result
			if !res.Feasible || res.Plan == nil || res.Step == nil || len(res.Plan.Stages) != 1 {
				t.Fatalf("no one-stage plan: %+v", res.Diagnostics)
			}
			st := res.Step
			if want := tot.FwdSeconds + tot.BwdSeconds; st.PipelineSeconds != want {
				t.Errorf("pipeline %v s, want the estimate's forward + backward %v s", st.PipelineSeconds, want)
			}
			if st.OptimizerSeconds != tot.OptimizerSeconds {
				t.Errorf("optimizer %v s, want the estimate's %v s", st.OptimizerSeconds, tot.OptimizerSeconds)
			}
			if st.DataParallelExposedSeconds == 0 && st.StepSeconds != tot.StepSeconds {
				t.Errorf("step %v s, want the estimate's %v s", st.StepSeconds, tot.StepSeconds)
			}
			if m := res.Plan.Stages[0].MemoryBytes; m != tot.PeakDeviceBytes {
				t.Errorf("stage memory %d bytes, want the estimate's peak %d bytes", m, tot.PeakDeviceBytes)
			}
		})
	}
}

// TestOneStageVerdict: EstimateOneStage says whether the whole model fits one device,
// so that a front end states core's verdict; when it does not, FirstError says why.
func TestOneStageVerdict(t *testing.T) {
	for _, tt := range []struct {
		name, req string
		fits      bool
	}{
		{"gpt2 on an a100", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1}}`, true},
		{"llama-2-70b on an a100", `{"model":{"architecture":{"name":"llama-2-70b"}},"cluster":{"device":"a100-80gb","count":1}}`, false},
		{"llama-2-7b on an a100-40gb with adamw", `{"model":{"architecture":{"name":"llama-2-7b"}},"cluster":{"device":"a100-40gb","count":1}}`, false},
		{"llama-2-7b inference on an a100-40gb", `{"model":{"architecture":{"name":"llama-2-7b","seq":1024}},"cluster":{"device":"a100-40gb","count":1},"training":{"mode":"inference"}}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := EstimateOneStage(context.Background(), decode(t, tt.req))
			if err != nil {
				t.Fatal(err)
			}
			if o.Fits != tt.fits {
				t.Fatalf("Fits = %v, want %v (feasible %v, diagnostics %+v)", o.Fits, tt.fits, o.Result.Feasible, o.Result.Diagnostics)
			}
			if o.Fits {
				s := o.Result.Plan.Stages[0]
				if s.MemoryBytes > s.LimitBytes {
					t.Errorf("fits, but the stage needs %d bytes of %d", s.MemoryBytes, s.LimitBytes)
				}
			} else if o.Result.FirstError() == nil {
				t.Errorf("does not fit, and the result gives no reason")
			}
		})
	}
}
