package evaluate

import (
	"context"
	"testing"

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
