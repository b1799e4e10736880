package request

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// decode reads a request written in the test, failing the test on an error.
func decode(t *testing.T, s string) *wire.Request {
	t.Helper()
	r, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("Decode(%.200s): %v", s, err)
	}
	return r
}

// run plans a request, failing the test on an error.
func run(t *testing.T, r *wire.Request) *wire.Result {
	t.Helper()
	res, err := Run(context.Background(), r)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// runJSON decodes and plans a request, and checks that it has a plan.
func runJSON(t *testing.T, s string) *wire.Result {
	t.Helper()
	res := run(t, decode(t, s))
	if !res.Feasible || res.Plan == nil || res.Step == nil {
		t.Fatalf("no feasible plan for %.200s: %+v", s, res.Diagnostics)
	}
	return res
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// vgg16 is the PipeDream profile of VGG-16 (a copy of ../shared/data/pipedream's, which
// core/load tests with), as a JSON string for a request's model.document.
func vgg16(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../load/testdata/pipedream/vgg16.graph.txt")
	if err != nil {
		t.Fatal(err)
	}
	return quote(string(b))
}

// hasFieldError reports whether err holds a field error at path whose reason contains
// reason.
func hasFieldError(err error, path, reason string) bool {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return false
	}
	for _, e := range es {
		if e.Path == path && strings.Contains(e.Reason, reason) {
			return true
		}
	}
	return false
}

// diagnostic returns the result's diagnostic with that code, or nil.
func diagnostic(res *wire.Result, code string) *wire.Diagnostic {
	for i := range res.Diagnostics {
		if res.Diagnostics[i].Code == code {
			return &res.Diagnostics[i]
		}
	}
	return nil
}

// near reports whether got equals want to a relative 1e-12: for figures computed in
// another order of floating-point operations than the test's (a sum of scaled terms
// against a scaled sum).
func near(got, want float64) bool {
	if got == want {
		return true
	}
	d := got - want
	if d < 0 {
		d = -d
	}
	s := want
	if s < 0 {
		s = -s
	}
	return d <= 1e-12*s
}
