package evaluate

import (
	"context"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
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
