package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/search"
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
func planJSON(requestJSON string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return mustJSON(res)
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
func exampleRequest() *request.Request {
	e := examples.Default()
	return &request.Request{Version: request.Version, Model: request.ModelSpec{Example: e.Name},
		Cluster: request.ClusterSpec{Device: e.Device, Count: e.Stages}}
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

var errNoRequest = errors.New("give a planning request: an object, or its JSON text (docs/request.md)")

// searchKnobs is the knobs argument of pipeplan.search: what the search fixes (a zero
// knob is searched).
type searchKnobs struct {
	MaxDevices     int      `json:"max_devices,omitempty"`
	Stages         int      `json:"stages,omitempty"`
	Replicas       int      `json:"replicas,omitempty"`
	Tensor         int      `json:"tensor,omitempty"`
	Schedule       string   `json:"schedule,omitempty"`
	Schedules      []string `json:"schedules,omitempty"`
	Recompute      string   `json:"recompute,omitempty"`
	GlobalBatch    int      `json:"global_batch,omitempty"`
	Microbatches   int      `json:"microbatches,omitempty"`
	MicrobatchSize int      `json:"microbatch_size,omitempty"`
}

// searchResult is what pipeplan.search resolves to: core/search's report, with the
// request of the best configuration (to plan or show it).
type searchResult struct {
	*search.Report
	BestRequest *request.Request `json:"best_request,omitempty"`
	Cancelled   bool             `json:"cancelled,omitempty"`
}

// searchJSON is pipeplan.search's Go side: it searches the configurations of the
// request's model on its device (core/search over core/request), reporting progress,
// and returns the report as JSON, or an apiError.
func searchJSON(ctx context.Context, requestJSON, knobsJSON string, progress func(search.Progress), yield func()) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	var k searchKnobs
	if s := bytes.TrimSpace([]byte(knobsJSON)); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&k); err != nil {
			return mustJSON(errorOf(&model.FieldError{Path: "knobs", Reason: err.Error()}))
		}
	}
	if k.MaxDevices == 0 {
		k.MaxDevices = max(r.Cluster.Count, 1)
	}
	ev, err := search.NewRequests(r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	space, err := ev.Space(search.Knobs{MaxDevices: k.MaxDevices, Stages: k.Stages, Replicas: k.Replicas, Tensor: k.Tensor,
		Schedule: k.Schedule, Schedules: k.Schedules, Recompute: k.Recompute, GlobalBatch: k.GlobalBatch,
		Microbatches: k.Microbatches, MicrobatchSize: k.MicrobatchSize})
	if err != nil {
		return mustJSON(errorOf(err))
	}
	rep, err := search.Run(ctx, space, ev, search.Options{Progress: progress, Yield: yield})
	if err != nil && rep == nil {
		return mustJSON(errorOf(err))
	}
	out := searchResult{Report: rep, Cancelled: ctx.Err() != nil}
	if rep.Best != nil {
		out.BestRequest, _ = ev.Request(rep.Best.Candidate)
	}
	return mustJSON(out)
}
