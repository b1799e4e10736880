package ops

import (
	"context"
	"encoding/json"
	"fmt"

	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// apiError is what the JS API returns instead of a result: the whole message, and the bad
// fields of the request by their paths ("schedule.microbatches").
type apiError struct {
	// Error is the whole message, for people.
	Error string `json:"error"`
	// Fields lists the bad fields of the request, when the error is about fields.
	Fields []apiField `json:"fields,omitempty"`
	// NoPlan is set by the export functions when the request is valid but no split fits:
	// there is nothing to export (pipeplan.plan says why, as data).
	NoPlan bool `json:"no_plan,omitempty"`
}

// apiField names one bad field of the request and why.
type apiField struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func errorOf(err error) apiError {
	a := apiError{Error: err.Error()}
	if fes, ok := model.AsFieldErrors(err); ok {
		for _, fe := range fes {
			if fe.Path != "" {
				a.Fields = append(a.Fields, apiField{Path: fe.Path, Reason: fe.Reason})
			}
		}
	}
	return a
}

// planJSON is window.pipeplan.planJSON: it decodes a planning request (docs/request.md),
// runs it with core and returns the result as JSON, indented as the command line prints
// it, or an apiError as JSON. It never panics on bad input.
func planJSON(requestJSON string) string { return mustJSON(plan(requestJSON)) }

// plan is the result of a planning request (JSON), or an apiError.
func plan(requestJSON string) any {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return errorOf(err)
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		return errorOf(err)
	}
	return res
}

// estimateJSON is window.pipeplan.estimate's JSON: the analytic estimate of a request's
// architecture.
func estimateJSON(requestJSON string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	est, err := request.Estimate(context.Background(), r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return mustJSON(est)
}

// exampleRequest is the request of the default example on its default cluster.
func exampleRequest() *wire.Request {
	e := examples.Default()
	return &wire.Request{Version: wire.Version, Model: wire.ModelSpec{Example: e.Name},
		Cluster: wire.ClusterSpec{Device: e.Device, Count: e.Stages}}
}

// mustJSON encodes v as the command line's --json does (two-space indent, a final
// newline); results and errors hold only strings and finite numbers, so a failure is a
// bug, reported as an error object rather than a panic that would stop the app.
func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b, _ = json.MarshalIndent(apiError{Error: "internal error: " + err.Error()}, "", "  ")
	}
	return string(b) + "\n"
}

// recovered turns a panic in a JS callback into an error object, so that the Go program
// keeps running and the next call works.
func recovered(out *string) {
	if v := recover(); v != nil {
		err, ok := v.(error)
		if !ok {
			err = fmt.Errorf("%v", v)
		}
		*out = mustJSON(apiError{Error: "internal error: " + err.Error()})
	}
}
