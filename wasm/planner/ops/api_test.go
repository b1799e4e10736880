package ops

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// The request in testdata gives, through the JS API's Go side, exactly the result JSON the
// command line prints (core/request/testdata/gpt2-4xa100.result.json, checked by cmd/pipeplan too).
func TestPlanJSONGivesTheGoldenResult(t *testing.T) {
	req, err := os.ReadFile("../../../core/request/testdata/gpt2-4xa100.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../core/request/testdata/gpt2-4xa100.result.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := planJSON(string(req)); got != string(want) {
		t.Errorf("planJSON differs from core/request/testdata/gpt2-4xa100.result.json:\n%s", got)
	}
}

func TestPlanJSONGivesCoreResult(t *testing.T) {
	r := exampleRequest()
	res, err := request.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(r)
	if got, want := planJSON(string(text)), mustJSON(res); got != want {
		t.Errorf("planJSON(example) differs from request.Run's result")
	}
	if !res.Feasible || len(res.Plan.Stages) != 4 {
		t.Errorf("the example request plans %+v", res.Plan)
	}
}

func TestPlanJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, request string
		want          apiError
	}{
		{"empty", "", apiError{Error: "the request is empty: give a JSON object"}},
		{"unknown field", `{"version": 1, "stages": 4}`,
			apiError{Error: "stages: is not a field of the request (docs/request.md lists them)", Fields: []apiField{{"stages", "is not a field of the request (docs/request.md lists them)"}}}},
		{"wrong type", `{"schedule": {"microbatches": "8"}}`,
			apiError{Error: "schedule.microbatches: must be an integer, got string", Fields: []apiField{{"schedule.microbatches", "must be an integer, got string"}}}},
		{"bad field", `{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}, "memory_proportion": 2}`,
			apiError{Error: "memory_proportion: must be in (0, 1], got 2", Fields: []apiField{{"memory_proportion", "must be in (0, 1], got 2"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := planJSON(tc.request), mustJSON(tc.want); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
	// A request that fits no split is a result, not an error: the diagnostics say why.
	var res wire.Result
	if err := json.Unmarshal([]byte(planJSON(`{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 30}}`)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Feasible || res.Plan != nil || len(res.Diagnostics) == 0 || res.Diagnostics[len(res.Diagnostics)-1].Code != "too_few_layers" {
		t.Errorf("30 stages of 26 layers: %+v", res)
	}
}

func TestEstimateJSON(t *testing.T) {
	got := estimateJSON(`{"model": {"architecture": {"name": "gpt2"}}, "cluster": {"device": "h100-sxm", "count": 1}}`)
	if !strings.Contains(got, `"params": 124439808`) {
		t.Errorf("estimate of gpt2:\n%.400s", got)
	}
	if got := estimateJSON(`{"model": {"example": "gpt2-medium"}, "cluster": {"device": "h100-sxm", "count": 1}}`); !strings.Contains(got, `"error": "model.architecture: is required`) {
		t.Errorf("estimate of a profile: %s", got)
	}
}

// TestEstimateJSONStatesTheOneStageStep: the JS API's estimate of a request with data
// parallelism prices its communication in core (data_parallel), as the same request
// planned on one stage and one microbatch does: the same step and the same words.
func TestEstimateJSONStatesTheOneStageStep(t *testing.T) {
	for _, sharding := range []string{"none", "zero1", "zero2", "zero3", "hsdp"} {
		req := `{"model": {"architecture": {"name": "gpt2-medium", "seq": 1024}}, "cluster": {"device": "a100-80gb", "count": 4},
			"parallelism": {"pipeline": 1, "data": 4, "sharding": "` + sharding + `", "shard_group": ` + map[bool]string{true: "2", false: "0"}[sharding == "hsdp"] + `}, "schedule": {"microbatches": 1}}`
		var est struct {
			Total struct {
				StepSeconds float64 `json:"step_seconds"`
			} `json:"total"`
			DataParallel *struct{ Breakdown string } `json:"data_parallel"`
		}
		if err := json.Unmarshal([]byte(estimateJSON(req)), &est); err != nil || est.DataParallel == nil {
			t.Fatalf("%s: estimate without data_parallel (%v)", sharding, err)
		}
		var res wire.Result
		if err := json.Unmarshal([]byte(planJSON(req)), &res); err != nil || res.Step == nil {
			t.Fatalf("%s: no plan (%v)", sharding, err)
		}
		if est.Total.StepSeconds != res.Step.StepSeconds || est.DataParallel.Breakdown != res.Step.Breakdown {
			t.Errorf("%s: estimate's step %v s %q, the plan's %v s %q", sharding, est.Total.StepSeconds, est.DataParallel.Breakdown, res.Step.StepSeconds, res.Step.Breakdown)
		}
	}
}

func TestMustJSONNeverPanics(t *testing.T) {
	got := mustJSON(wire.Step{StepSeconds: 1.0 / zero()})
	if !strings.HasPrefix(got, "{\n  \"error\": \"internal error: json: unsupported value: +Inf\"") {
		t.Errorf("mustJSON(+Inf) = %s", got)
	}
}

func zero() float64 { return 0 }
