package ui

import (
	"context"
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
