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

// TestSearchKeepsFP8FSDPAllGather: the base request's training.fp8_fsdp_all_gather
// (torchao's FSDP2 float8 all-gather) reaches the candidates whose weights FSDP2 shards
// over two replicas or more, and no other (core refuses it there): with the zero knob
// at 3 the best's request states it and plans alone to the best's step, faster than
// the same search's without it (its all-gathers and copy-outs move 1 byte a weight of
// the fp8 products, not 2); with zero 1 it is dropped and changes nothing. The bounds
// hold (exhaustive).
func TestSearchKeepsFP8FSDPAllGather(t *testing.T) {
	query := func(zero int, gather bool) *wire.SearchQuery {
		tr := ""
		if gather {
			tr = `, "training": {"fp8_fsdp_all_gather": true}`
		}
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048, "dtype": "fp8", "framework": "compiled"}},
			"cluster": {"device": "h100-sxm", "devices_per_node": 8}, "parallelism": {"fully_shard": true, "reduce_dtype": "fp32"}` + tr + `},
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
	if analytic.Sharding(p.Sharding).Level() != 3 || !with.BestRequest.Training.FP8FSDPAllGather {
		t.Errorf("zero 3: the best's request has sharding %q, fp8_fsdp_all_gather %v; want zero3 or hsdp, true", p.Sharding, with.BestRequest.Training.FP8FSDPAllGather)
	}
	res, err := request.Run(context.Background(), with.BestRequest)
	if err != nil || res.Step == nil {
		t.Fatalf("best_request: %v", err)
	}
	if res.Step.StepSeconds != with.Best.StepSeconds {
		t.Errorf("best_request plans a step of %v s, the search's best %v s", res.Step.StepSeconds, with.Best.StepSeconds)
	}
	if !(with.Best.StepSeconds < without.Best.StepSeconds) {
		t.Errorf("zero 3: step %v s with fp8 all-gathers, %v s without: want faster", with.Best.StepSeconds, without.Best.StepSeconds)
	}
	one, oneWithout := run(query(1, true)), run(query(1, false))
	if one.BestRequest.Training.FP8FSDPAllGather {
		t.Error("zero 1: the best's request has fp8_fsdp_all_gather; want it dropped")
	}
	if one.Best.StepSeconds != oneWithout.Best.StepSeconds {
		t.Errorf("zero 1: step %v s with the field, %v s without: want the same", one.Best.StepSeconds, oneWithout.Best.StepSeconds)
	}
}

// TestSearchRefusesFP8FSDPAllGather: the base request's training.fp8_fsdp_all_gather is
// refused, naming it, where core refuses it on every candidate: bf16, no fully_shard,
// framework megatron, beside fp8 primary weights (training.fp8_param_gather, which
// no candidate could then take with it).
func TestSearchRefusesFP8FSDPAllGather(t *testing.T) {
	for _, c := range []struct{ arch, par, train string }{
		{`"framework": "compiled"`, `"fully_shard": true`, ""},
		{`"dtype": "fp8", "framework": "compiled"`, `"reduce_dtype": "fp32"`, ""},
		{`"dtype": "fp8", "framework": "megatron"`, `"fully_shard": true`, ""},
		{`"dtype": "fp8", "framework": "compiled"`, `"fully_shard": true`, `, "fp8_param_gather": true`},
	} {
		q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048, ` + c.arch + `}},
			"cluster": {"device": "h100-sxm", "devices_per_node": 8}, "parallelism": {` + c.par + `}, "training": {"fp8_fsdp_all_gather": true` + c.train + `}}, "max_devices": 8}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = RunQuery(context.Background(), q, search.Options{})
		if err == nil || !strings.Contains(err.Error(), "training.fp8_fsdp_all_gather") {
			t.Errorf("%s %s%s: error %v, want one on training.fp8_fsdp_all_gather", c.arch, c.par, c.train, err)
		}
	}
}
