package ops

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"pipeplan/core/search"
	"pipeplan/core/search/evaluate"
	"pipeplan/core/wire"
)

const smallQuery = `{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048}},
	"cluster": {"device": "h100-sxm", "devices_per_node": 8}}, "max_devices": 8, "global_batch": 32}`

// searchJSON gives the answer core's search gives, reports progress and yields.
func TestSearchJSON(t *testing.T) {
	var progress []wire.SearchProgress
	yields := 0
	out, err := searchJSON(context.Background(), smallQuery, func(p string) {
		var v wire.SearchProgress
		if err := json.Unmarshal([]byte(p), &v); err != nil {
			t.Fatal(err)
		}
		progress = append(progress, v)
	}, func() { yields++ })
	if err != nil {
		t.Fatal(err)
	}
	var got wire.SearchAnswer
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	q, err := search.DecodeQuery([]byte(smallQuery))
	if err != nil {
		t.Fatal(err)
	}
	want, err := evaluate.RunQuery(context.Background(), q, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Best == nil || got.Best.SearchCandidate != want.Best.SearchCandidate || got.Best.SamplesPerSecond != want.Best.SamplesPerSecond {
		t.Errorf("best %+v, core's %+v", got.Best, want.Best)
	}
	if got.BestRequest == nil || got.BestRequest.Parallelism.Pipeline != want.Best.Pipeline || len(got.Top) == 0 || len(got.Pareto) == 0 {
		t.Errorf("answer without its request, top or front: %s", out)
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != progress[len(progress)-1].Total || progress[len(progress)-1].Best == nil {
		t.Errorf("progress %+v: the last report should be complete, with the best", progress)
	}
	_ = yields // time-sliced: a fast search may finish within one slice
}

func TestSearchJSONErrors(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{`{"max_devices": 8}`, "request: is required"},
		{`{"request": {"model": {"architecture": {"name": "llama-3.2-1b"}}, "cluster": {"device": "h100-sxm"}}}`, "max_devices: must be between 1 and 65536, got 0"},
		{`{"request": {"model": {"architecture": {"name": "nope"}}, "cluster": {"device": "h100-sxm"}}, "max_devices": 8}`, "request.model.architecture.name"},
		{`{"request": {"model": {"architecture": {"name": "llama-3.2-1b"}}, "cluster": {"device": "h100-sxm", "cuont": 2}}, "max_devices": 8}`, "request.cluster.cuont"},
		{`{"request": {}, "max_devices": 8, "bogus": 1}`, "unknown field"},
		{`[`, "invalid search query"},
	} {
		out, err := searchJSON(context.Background(), tc.query, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		if json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: got %s, want an error with %q", tc.query, out, tc.want)
		}
	}
}

// Cancelling stops the search with the context's error and the answer so far: before
// it starts, nothing planned.
func TestSearchJSONCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := searchJSON(ctx, smallQuery, nil, func() {})
	var a wire.SearchAnswer
	if !errors.Is(err, context.Canceled) || json.Unmarshal([]byte(out), &a) != nil || a.Best != nil || a.Stats.Evaluated != 0 {
		t.Errorf("cancelled search: %q, %v", out, err)
	}
}

// The page's search is pipeplan.search: its answer holds every candidate planned, and
// a candidate's request comes in normal form.
func TestSearchAnswerAndCandidate(t *testing.T) {
	out, err := Do(context.Background(), "search", []string{smallQuery}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep wire.SearchAnswer
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Best == nil || len(rep.Evaluated) == 0 || rep.BestID == "" {
		t.Fatalf("answer: %v, %s", err, out[:min(len(out), 300)])
	}
	c, _ := json.Marshal(rep.Best.SearchCandidate)
	out, _ = Do(context.Background(), "candidate", []string{smallQuery, string(c)}, nil, nil)
	if !strings.Contains(out, `"pipeline": `) || strings.Contains(out, `"error"`) {
		t.Errorf("candidate: %s", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Do(ctx, "search", []string{smallQuery}, nil, func() {}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
	if out, _ := Do(context.Background(), "nope", nil, nil, nil); !strings.Contains(out, `unknown operation \"nope\"`) {
		t.Errorf("unknown op: %s", out)
	}
}
