package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"pipeplan/core/examples"
	"pipeplan/core/wire"
)

// apiError is what the JS API returns for a call it refuses before the planner sees it
// (a value JSON cannot carry, no request): the message. The planner's own error objects
// (wasm/planner/ops) add the request's bad fields by path.
type apiError struct {
	Error string `json:"error"`
}

// exampleRequest is the request of the default example on its default cluster.
func exampleRequest() *wire.Request {
	e := examples.Default()
	return &wire.Request{Version: wire.Version, Model: wire.ModelSpec{Example: e.Name},
		Cluster: wire.ClusterSpec{Device: e.Device, Count: e.Stages}}
}

// mustJSON encodes v as the command line's --json does (two-space indent, a final
// newline), or an error object if it cannot.
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

var errNoRequest = errors.New("give a planning request: an object, or its JSON text (docs/request.md)")
