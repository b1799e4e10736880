package evaluate

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestSearchKeepsFSDP2: the base request's parallelism.fully_shard and reduce_dtype
// fp32 (PyTorch FSDP2 as torchtitan runs it) reach every candidate that shards weights
// (zero3, hsdp) and no other (core refuses them there): with the zero knob at 3 the
// best's request states them and plans alone to the best's step, which is slower than
// the same search's without them (FSDP2's copies and an fp32 reduce-scatter only add
// time); with zero 1 they are dropped and change nothing. The bounds hold (exhaustive).
func TestSearchKeepsFSDP2(t *testing.T) {
	query := func(zero int, fsdp2 bool) *wire.SearchQuery {
		par := ""
		if fsdp2 {
			par = `, "parallelism": {"fully_shard": true, "reduce_dtype": "fp32"}`
		}
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048, "framework": "compiled"}},
			"cluster": {"device": "h100-sxm", "devices_per_node": 8}` + par + `},
			"max_devices": 8, "stages": 1, "replicas": 8, "zero": ` + string(rune('0'+zero)) + `, "microbatches": 4, "microbatch_size": 1}`))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	run := func(q *wire.SearchQuery) *wire.SearchAnswer {
		a, err := RunQuery(context.Background(), q, search.Options{Exhaustive: true})
		if err != nil {
			t.Fatal(err)
		}
		if a.Best == nil {
			t.Fatalf("no best: %+v", a.Stats)
		}
		if a.Stats.BoundViolations != 0 {
			t.Errorf("%d bound violations", a.Stats.BoundViolations)
		}
		return a
	}
	with, without := run(query(3, true)), run(query(3, false))
	p := with.BestRequest.Parallelism
	if analytic.Sharding(p.Sharding).Level() != 3 || !p.FullyShard || p.ReduceDType != request.ReduceFP32 {
		t.Errorf("zero 3: the best's request has sharding %q, fully_shard %v, reduce_dtype %q; want zero3 or hsdp, true, fp32", p.Sharding, p.FullyShard, p.ReduceDType)
	}
	res, err := request.Run(context.Background(), with.BestRequest)
	if err != nil || res.Step == nil {
		t.Fatalf("best_request: %v", err)
	}
	if res.Step.StepSeconds != with.Best.StepSeconds {
		t.Errorf("best_request plans a step of %v s, the search's best %v s", res.Step.StepSeconds, with.Best.StepSeconds)
	}
	if !(with.Best.StepSeconds > without.Best.StepSeconds) {
		t.Errorf("zero 3: step %v s with FSDP2's copies and fp32 reduction, %v s without: want slower", with.Best.StepSeconds, without.Best.StepSeconds)
	}
	one, oneWithout := run(query(1, true)), run(query(1, false))
	if p := one.BestRequest.Parallelism; p.FullyShard || p.ReduceDType != "" {
		t.Errorf("zero 1: the best's request has fully_shard %v, reduce_dtype %q; want them dropped", p.FullyShard, p.ReduceDType)
	}
	if one.Best.StepSeconds != oneWithout.Best.StepSeconds {
		t.Errorf("zero 1: step %v s with the FSDP2 fields, %v s without: want the same", one.Best.StepSeconds, oneWithout.Best.StepSeconds)
	}
}

// TestSearchRefusesFSDP2: the base request's FSDP2 fields are refused, naming them, where
// core refuses them on a candidate that shards weights: a reduce dtype other than fp32,
// inference.
func TestSearchRefusesFSDP2(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{`"parallelism": {"reduce_dtype": "bf16"}`, "parallelism.reduce_dtype: must be fp32"},
		{`"parallelism": {"reduce_dtype": "fp32"}, "training": {"mode": "inference"}`, "parallelism.reduce_dtype"},
	} {
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048}},
			"cluster": {"device": "h100-sxm", "devices_per_node": 8}, ` + c.extra + `}, "max_devices": 8}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = RunQuery(context.Background(), q, search.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.extra, err, c.want)
		}
	}
}
