package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/examples"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

func exampleInputs(t *testing.T, stages int) (model, cluster string) {
	t.Helper()
	e := examples.Default()
	c, err := e.Cluster(stages)
	if err != nil {
		t.Fatal(err)
	}
	cj, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(e.ModelJSON()), string(cj)
}

func TestPlanJSONGivesCorePlan(t *testing.T) {
	mj, cj := exampleInputs(t, 4)
	e := examples.Default()
	m, _ := e.Model()
	c, _ := e.Cluster(4)
	for _, tc := range []struct {
		options string
		opt     plan.Options
	}{
		{"", plan.Options{}},
		{"null", plan.Options{}},
		{`{}`, plan.Options{}},
		{`{"objective": "compute+transfer", "memory_proportion": 0.5, "inference": true}`,
			func() plan.Options {
				o := plan.Options{Objective: partition.MaxComputePlusTransfer}
				o.Estimate.MemoryProportion, o.Estimate.Inference = 0.5, true
				return o
			}()},
		{`{"recompute": true}`, func() plan.Options { var o plan.Options; o.Estimate.Recompute = true; return o }()},
	} {
		want, err := plan.Make(m, c, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		if got := planJSON(mj, cj, tc.options); got != string(wantJSON) {
			t.Errorf("options %s:\n got %s\nwant %s", tc.options, got, wantJSON)
		}
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(planJSON(mj, cj, "")), &p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Boundaries, []int{0, 8, 15, 22, 26}) {
		t.Errorf("boundaries %v", p.Boundaries)
	}
}

func TestPlanJSONErrors(t *testing.T) {
	mj, cj := exampleInputs(t, 4)
	_, cj30 := exampleInputs(t, 30)
	for _, tc := range []struct {
		name                    string
		model, cluster, options string
		want                    apiError
	}{
		{"empty model", "", cj, "", apiError{Error: "model: is empty: give a model as JSON"}},
		{"empty cluster", mj, " ", "", apiError{Error: "cluster: is empty: give a cluster as JSON"}},
		{"model field", `{"layers": [{"name": "a", "param_bytes": -1}]}`, cj, "",
			apiError{Error: "model: layers[0].param_bytes: must be >= 0, got -1",
				Fields: []apiField{{"model", "layers[0].param_bytes", "must be >= 0, got -1"}}}},
		{"cluster field", mj, `{"devices": [{"memory_bytes": 0}]}`, "",
			apiError{Error: "cluster: devices[0].memory_bytes: must be > 0, got 0",
				Fields: []apiField{{"cluster", "devices[0].memory_bytes", "must be > 0, got 0"}}}},
		{"unknown option", mj, cj, `{"stages": 4}`,
			apiError{Error: `options: invalid JSON: json: unknown field "stages"`}},
		{"objective", mj, cj, `{"objective": "speed"}`,
			apiError{Error: `options: objective: must be "compute" or "compute+transfer", got "speed"`,
				Fields: []apiField{{"options", "objective", `must be "compute" or "compute+transfer", got "speed"`}}}},
		{"memory proportion", mj, cj, `{"memory_proportion": 2}`,
			apiError{Error: "memory_proportion: must be in (0, 1], got 2",
				Fields: []apiField{{"options", "memory_proportion", "must be in (0, 1], got 2"}}}},
		{"no fit", mj, cj30, "",
			apiError{Error: "no plan fits: the model has 26 layers but the cluster has 30 stages, and every stage needs at least one layer: use at most 26 stages", NoFit: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := json.Marshal(tc.want)
			if got := planJSON(tc.model, tc.cluster, tc.options); got != string(want) {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestPlanJSONSyntaxError(t *testing.T) {
	_, cj := exampleInputs(t, 4)
	// Only the line is checked: core/load's column is its concern.
	got := planJSON("{\n  \"layers\": [}", cj, "")
	if want := `{"error":"model: JSON syntax error at line 2, column `; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, `: invalid character '}' looking for beginning of value"}`) {
		t.Errorf("got %s", got)
	}
}

func TestInputOf(t *testing.T) {
	for path, want := range map[string]string{
		"devices[2].clock_hz": "cluster", "links[0].gbps": "cluster", "host.gbps": "cluster",
		"layers[1].name": "model", "inputs[0].bytes": "model", "time_unit": "model",
		"memory_proportion": "options", "": "options",
	} {
		if got := inputOf(path); got != want {
			t.Errorf("inputOf(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestMustJSONNeverPanics(t *testing.T) {
	got := mustJSON(plan.Plan{BottleneckSeconds: 1.0 / zero()})
	if !strings.HasPrefix(got, `{"error":"internal error: json: unsupported value: +Inf"`) {
		t.Errorf("mustJSON(+Inf) = %s", got)
	}
}

func zero() float64 { return 0 }
