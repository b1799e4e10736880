package ui

import (
	"context"
	"strings"
	"testing"

	"pipeplan/wasm/planner/ops"
)

// local is the planner of the tests: wasm/planner/ops in this process, as the browser's
// planner worker runs it; closing stop cancels the call's context.
func local(stop <-chan struct{}, op string, args []string, progress func(string)) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ops.Do(ctx, op, args, progress, nil)
}

// TestErrorObject: the planner's error objects are read as errors, compact or indented,
// and a result (even one that says "error" inside) is not decoded as one.
func TestErrorObject(t *testing.T) {
	bad, err := local(nil, "plan", []string{`{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 0}}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, err := local(nil, "plan", []string{`{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"the planner's error", bad, true},
		{"compact", `{"error":"x"}`, true},
		{"spaced", " \n{ \n\t\"error\": \"x\", \"fields\": [{\"path\": \"a\", \"reason\": \"b\"}]}", true},
		{"the planner's result", good, false},
		{"an error inside", `{"plan": {"error": "x"}}`, false},
		{"not JSON", `{"error"`, false},
	} {
		if e := errorObject(tc.out); (e != nil) != tc.want {
			t.Errorf("%s: errorObject = %v, want an error %v", tc.name, e, tc.want)
		}
	}
	if e := errorObject(bad); e == nil || len(e.fields) == 0 || e.fields[0].Path != "cluster.count" {
		t.Errorf("the planner's error %+v does not name cluster.count", e)
	}
}

// TestStatusSaysWhyNothingFits: when no plan fits, the line under the header gives core's
// reason (Result.FirstError), not only "No plan fits" (issue 23's misleading defaults).
func TestStatusSaysWhyNothingFits(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-2-70b")
	if a.Res == nil || a.Res.Feasible {
		t.Fatalf("llama-2-70b on the initial cluster: want no plan, got %+v", a.Res)
	}
	d := a.Res.FirstError()
	if d == nil {
		t.Fatal("an infeasible result without an error diagnostic")
	}
	status := a.Status()
	if !strings.HasPrefix(status, "No plan fits: ") || !strings.Contains(status, strings.TrimSuffix(d.Message[len("no plan fits: "):], ".")) {
		t.Errorf("status %q does not give the reason %q", status, d.Message)
	}
}
