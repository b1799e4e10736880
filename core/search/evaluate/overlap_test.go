package evaluate

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestSearchKeepsOverlaps: the base request's parallelism.overlap_grad_reduce,
// overlap_param_gather and overlap_tensor_comm (here PyTorch's async TP under
// torch.compile, and Transformer Engine's userbuffers under megatron, against the
// modes' defaults) reach every candidate: the best's request states them, plans alone
// to the best's step, and the search with them finds another step than without them.
// The bounds hold (exhaustive search, no bound violations), tensor parallelism or not.
func TestSearchKeepsOverlaps(t *testing.T) {
	for _, c := range []struct {
		name, framework, grad, param, tensor string
	}{
		{"async-tp, compiled", "compiled", "off", "off", "async-tp"},
		{"userbuffers, megatron", "megatron", "on", "on", "userbuffers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			query := func(overlaps bool) *wire.SearchQuery {
				par := `"sequence_parallel": true`
				if overlaps {
					par += `, "overlap_grad_reduce": "` + c.grad + `", "overlap_param_gather": "` + c.param + `", "overlap_tensor_comm": "` + c.tensor + `"`
				}
				q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048, "framework": "` + c.framework + `"}},
					"cluster": {"device": "h100-sxm", "devices_per_node": 8}, "parallelism": {` + par + `}},
					"max_devices": 8, "tensor": 2, "zero": 1, "microbatches": 8, "microbatch_size": 1}`))
				if err != nil {
					t.Fatal(err)
				}
				return q
			}
			a, err := RunQuery(context.Background(), query(true), search.Options{Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			if a.Best == nil {
				t.Fatalf("no best: %+v", a.Stats)
			}
			if a.Stats.BoundViolations != 0 {
				t.Errorf("%d bound violations", a.Stats.BoundViolations)
			}
			p := a.BestRequest.Parallelism
			if p.OverlapGradReduce != c.grad || p.OverlapParamGather != c.param || p.OverlapTensorComm != c.tensor {
				t.Errorf("the best's request overlaps grad %q, param %q, tensor %q; want %q, %q, %q", p.OverlapGradReduce, p.OverlapParamGather, p.OverlapTensorComm, c.grad, c.param, c.tensor)
			}
			res, err := request.Run(context.Background(), a.BestRequest)
			if err != nil || res.Step == nil {
				t.Fatalf("best_request: %v", err)
			}
			if res.Step.StepSeconds != a.Best.StepSeconds {
				t.Errorf("best_request plans a step of %v s, the search's best %v s", res.Step.StepSeconds, a.Best.StepSeconds)
			}
			without, err := RunQuery(context.Background(), query(false), search.Options{Exhaustive: true})
			if err != nil || without.Best == nil {
				t.Fatalf("without overlaps: %v", err)
			}
			if without.Best.SearchCandidate == a.Best.SearchCandidate && without.Best.StepSeconds == a.Best.StepSeconds {
				t.Errorf("the overlaps change nothing: %s, step %v s both", a.Best.SearchCandidate, a.Best.StepSeconds)
			}
		})
	}
}

// TestSearchDeepSpeedBF16: precision deepspeed-bf16 (DeepSpeed's BF16 optimizer, ZeRO-1
// at most: analytic.Precision.MaxShardingLevel) is searched over the ZeRO stages it runs
// with, none and zero1, rather than failing on the first zero2 candidate core refuses;
// a zero knob it does not run with is refused naming zero.
func TestSearchDeepSpeedBF16(t *testing.T) {
	q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "gpt2", "seq": 1024}}, "cluster": {"device": "a100-40gb", "devices_per_node": 8},
		"training": {"precision": "deepspeed-bf16"}}, "max_devices": 8}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := RunQuery(context.Background(), q, search.Options{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Best == nil || a.Stats.BoundViolations != 0 {
		t.Fatalf("best %v, %d bound violations", a.Best, a.Stats.BoundViolations)
	}
	for _, o := range a.Evaluated {
		if o.ZeRO > 1 {
			t.Errorf("%s tried: deepspeed-bf16 runs with ZeRO-1 at most", o.SearchCandidate)
		}
	}
	two := 2
	q.ZeRO = &two
	_, err = RunQuery(context.Background(), q, search.Options{})
	fes, _ := model.AsFieldErrors(err)
	if len(fes) != 1 || fes[0].Path != "zero" || !strings.Contains(fes[0].Reason, "deepspeed-bf16") {
		t.Errorf("zero 2 with deepspeed-bf16: error %v, want one on zero naming the precision", err)
	}
}
