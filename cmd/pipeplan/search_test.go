package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/search/evaluate"
	"pipeplan/core/wire"
)

// TestSearchJSON: --json gives the search's answer (core/wire.SearchAnswer), the JSON
// pipeplan.search gives: the best with the request that reproduces it and its id, the
// ten fastest, every configuration planned and the Pareto front; plain output renders
// the same answer as a table and the counts.
func TestSearchJSON(t *testing.T) {
	args := []string{"search", "--hf-config", "llama-3.2-1b", "--device", "h100-sxm", "--max-devices", "8", "--devices-per-node", "4",
		"--global-batch", "32", "--seq", "2048", "--max-batch", "4"}
	code, out, errs := runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v wire.SearchAnswer
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Best map[string]any `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stages", "replicas", "tensor_parallel", "microbatch_size", "microbatches", "schedule", "recompute",
		"samples_per_second", "tokens_per_second", "mfu", "step_seconds", "boundaries"} {
		if _, ok := keys.Best[k]; !ok {
			t.Errorf("best lacks %q", k)
		}
	}
	if len(v.Evaluated) == 0 || len(v.Pareto) == 0 || len(v.Top) == 0 || v.Top[0].SearchCandidate != v.Best.SearchCandidate {
		t.Errorf("%d evaluated, %d on the Pareto front, top %v, best %v", len(v.Evaluated), len(v.Pareto), v.Top, v.Best)
	}
	if id, err := request.ID(v.BestRequest); err != nil || id != v.BestID {
		t.Errorf("best_id %q, the best request's id %q (%v)", v.BestID, id, err)
	}
	// The same query as the JS API takes it (pipeplan.search) gives the same answer.
	q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 4}}, "max_devices": 8, "global_batch": 32, "max_microbatch_size": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	js, err := evaluate.RunQuery(context.Background(), q, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	js.Stats.Seconds, v.Stats.Seconds = 0, 0
	a, _ := json.Marshal(js)
	b, _ := json.Marshal(&v)
	if string(a) != string(b) {
		t.Errorf("pipeplan search --json and pipeplan.search answer differently:\n%.800s\n%.800s", b, a)
	}
	code, out, errs = runCLI(args...)
	if code != 0 || !strings.Contains(out, "best: ") || !strings.Contains(out, "pruned by bound") || strings.Contains(errs, "[") {
		t.Errorf("plain: exit %d, %s\n%s", code, errs, out)
	}
	code, _, errs = runCLI("search", "--hf-config", "llama-3.2-1b", "--device", "h100-sxm")
	if code != exitBad || !strings.Contains(errs, "--max-devices: must be between 1 and 65536, got 0") {
		t.Errorf("no --max-devices: exit %d, %s", code, errs)
	}
}

// TestSearchPipeDream: pipeplan search answers for a real PipeDream profile (AlexNet, from
// ../shared/data), whose weights-only meaning a scaled candidate keeps, and pipeplan plan
// on the best's request (best_request) gives the search's best: the same throughput,
// step and split.
func TestSearchPipeDream(t *testing.T) {
	code, out, errs := runCLI("search", "--model", "../../../shared/data/pipedream/alexnet.graph.txt", "--device", "a100-40gb",
		"--max-devices", "4", "--batch", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var a wire.SearchAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Best == nil || a.BestRequest == nil || a.Best.MicrobatchSize < 2 {
		t.Fatalf("best %+v", a.Best)
	}
	file := filepath.Join(t.TempDir(), "best.json")
	b, err := json.Marshal(a.BestRequest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI("plan", "--request", file, "--json")
	if code != 0 {
		t.Fatalf("plan best_request: exit %d: %s", code, errs)
	}
	var res wire.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Step == nil || res.Plan == nil || res.Step.SamplesPerSecond != a.Best.SamplesPerSecond || res.Step.StepSeconds != a.Best.StepSeconds ||
		!slices.Equal(res.Plan.Boundaries, a.Best.Boundaries) || res.ID != a.BestID {
		t.Errorf("search's best %s: %v samples/s, step %v s, split %v, id %s; pipeplan plan of best_request: %s", a.Best.SearchCandidate,
			a.Best.SamplesPerSecond, a.Best.StepSeconds, a.Best.Boundaries, a.BestID, out)
	}
	for _, code := range []string{wire.CodeStateAdded, wire.CodeProfileScaled} {
		if !slices.ContainsFunc(res.Diagnostics, func(d wire.Diagnostic) bool { return d.Code == code }) {
			t.Errorf("the best's plan has no %s note", code)
		}
	}
	code, out, errs = runCLI("search", "--model", "../../../shared/data/pipedream/alexnet.graph.txt", "--device", "a100-40gb", "--max-devices", "4", "--max-batch", "64")
	if code != 0 || !strings.Contains(out, "best: ") {
		t.Errorf("plain: exit %d, %s\n%s", code, errs, out)
	}
}
