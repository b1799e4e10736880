package evaluate

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestSearchKeepsDPBucketBytes: the base request's parallelism.dp_bucket_bytes reaches
// every candidate whose sharding reduces a bucket at a time (none, zero1, zero2), so the
// search prices the recipe's buckets as the single request does, not the framework's
// own; and none is refused for it. The best's request names it and plans the search's
// step.
func TestSearchKeepsDPBucketBytes(t *testing.T) {
	const bucket = 1 << 20
	q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "gpt2", "seq": 1024, "framework": "megatron"}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 4},
		"parallelism": {"dp_bucket_bytes": 1048576}},
		"max_devices": 8, "zero": 1, "microbatches": 4, "microbatch_size": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(q.Request)
	if err != nil {
		t.Fatal(err)
	}
	k := ev.knobs(search.Candidate{Config: search.Config{Pipeline: 1, Data: 8, Tensor: 1, ZeRO: 1, Schedule: "1f1b", Microbatches: 4}, MicrobatchSize: 2})
	if k.Parallelism.DPBucketBytes != bucket {
		t.Errorf("a zero1 candidate's dp_bucket_bytes %d, want the base's %d", k.Parallelism.DPBucketBytes, bucket)
	}
	a, err := RunQuery(context.Background(), q, search.Options{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Best == nil {
		t.Fatalf("no best: %+v", a.Stats)
	}
	if got := a.BestRequest.Parallelism.DPBucketBytes; got != bucket {
		t.Errorf("the best's request has dp_bucket_bytes %d, want %d", got, bucket)
	}
	res, err := request.Run(context.Background(), a.BestRequest)
	if err != nil || res.Step == nil || res.Step.StepSeconds != a.Best.StepSeconds {
		t.Errorf("best_request plans %v (%v), the search's best %v s", res, err, a.Best.StepSeconds)
	}
}

// TestSearchKeepsDPBucketElements: the base request's parallelism.dp_bucket_elements
// (Megatron-Core's bucket_size) reaches every candidate whose sharding reduces a
// bucket at a time (none, zero1, zero2), as dp_bucket_bytes does, so a megatron search
// prices the recipe's buckets rather than Megatron-Core's 40M-element default; the
// best's request names it and plans the search's step, and that step differs from the
// same search without the field (the field is priced, not only carried).
func TestSearchKeepsDPBucketElements(t *testing.T) {
	const bucket = 1 << 16
	query := func(field string) *wire.SearchQuery {
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "gpt2", "seq": 1024, "framework": "megatron"}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 4},
		"parallelism": {"overlap_grad_reduce": "on"` + field + `}},
		"max_devices": 8, "zero": 1, "microbatches": 4, "microbatch_size": 2}`))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := query(`, "dp_bucket_elements": 65536`)
	ev, err := New(q.Request)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range []int{0, 1, 2} {
		k := ev.knobs(search.Candidate{Config: search.Config{Pipeline: 1, Data: 8, Tensor: 1, ZeRO: z, Schedule: "1f1b", Microbatches: 4}, MicrobatchSize: 2})
		if k.Parallelism.DPBucketElements != bucket {
			t.Errorf("a zero%d candidate's dp_bucket_elements %d, want the base's %d", z, k.Parallelism.DPBucketElements, bucket)
		}
	}
	a, err := RunQuery(context.Background(), q, search.Options{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Best == nil {
		t.Fatalf("no best: %+v", a.Stats)
	}
	if got := a.BestRequest.Parallelism.DPBucketElements; got != bucket {
		t.Errorf("the best's request has dp_bucket_elements %d, want %d", got, bucket)
	}
	res, err := request.Run(context.Background(), a.BestRequest)
	if err != nil || res.Step == nil || res.Step.StepSeconds != a.Best.StepSeconds {
		t.Errorf("best_request plans %v (%v), the search's best %v s", res, err, a.Best.StepSeconds)
	}
	d, err := RunQuery(context.Background(), query(""), search.Options{Exhaustive: true})
	if err != nil || d.Best == nil {
		t.Fatalf("the search without the field: %v", err)
	}
	if d.Best.StepSeconds == a.Best.StepSeconds {
		t.Errorf("64Ki-element buckets priced as Megatron-Core's default: %v s both", a.Best.StepSeconds)
	}
}

// TestSearchKeepsCheckForNaNInGrad: training.check_for_nan_in_grad, a training field
// the search does not set, reaches the best's request, and the search's step prices
// it (the same search without it plans a shorter step).
func TestSearchKeepsCheckForNaNInGrad(t *testing.T) {
	query := func(training string) *wire.SearchQuery {
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "gpt2", "seq": 1024, "framework": "megatron"}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 4}` + training + `},
		"max_devices": 8, "zero": 1, "microbatches": 4, "microbatch_size": 2}`))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	a, err := RunQuery(context.Background(), query(`, "training": {"check_for_nan_in_grad": true}`), search.Options{Exhaustive: true})
	if err != nil || a.Best == nil {
		t.Fatalf("the search: %v", err)
	}
	if !a.BestRequest.Training.CheckForNaNInGrad {
		t.Error("the best's request dropped training.check_for_nan_in_grad")
	}
	res, err := request.Run(context.Background(), a.BestRequest)
	if err != nil || res.Step == nil || res.Step.StepSeconds != a.Best.StepSeconds {
		t.Errorf("best_request plans %v (%v), the search's best %v s", res, err, a.Best.StepSeconds)
	}
	d, err := RunQuery(context.Background(), query(""), search.Options{Exhaustive: true})
	if err != nil || d.Best == nil {
		t.Fatalf("the search without the check: %v", err)
	}
	if d.Best.StepSeconds >= a.Best.StepSeconds {
		t.Errorf("the check priced nothing: %v s with it, %v without", a.Best.StepSeconds, d.Best.StepSeconds)
	}
}

// TestSearchRefusesDPBucketElementsOutsideMegatron: a search whose framework has no
// Megatron-Core buckets refuses parallelism.dp_bucket_elements up front, naming the
// request's field, as it refuses training.check_for_nan_in_grad.
func TestSearchRefusesDPBucketElementsOutsideMegatron(t *testing.T) {
	for _, field := range []string{`"parallelism": {"dp_bucket_elements": 65536}`, `"training": {"check_for_nan_in_grad": true}`} {
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "gpt2", "seq": 1024, "framework": "eager"}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 4}, ` + field + `},
		"max_devices": 8, "microbatches": 4, "microbatch_size": 2}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = RunQuery(context.Background(), q, search.Options{Exhaustive: true})
		if err == nil || !strings.HasPrefix(err.Error(), "request.") || !strings.Contains(err.Error(), "eager") {
			t.Errorf("%s under eager: %v, want the request's field refused", field, err)
		}
	}
}
