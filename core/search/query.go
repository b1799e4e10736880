package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"pipeplan/core/model"
	"pipeplan/core/request"
)

// Query is a search as plain data, what the browser's JS API takes
// (docs/search.md): the base planning request, whose model and cluster (a device preset,
// with devices_per_node for nodes) are searched over, and the knobs, of which those left
// zero are searched.
type Query struct {
	// Request is the base planning request (docs/request.md).
	Request *request.Request `json:"request"`
	// Knobs fix or bound what is searched; max_devices is required.
	Knobs
	// Exhaustive plans every candidate, pruning nothing (slow: to check the search).
	Exhaustive bool `json:"exhaustive,omitempty"`
}

// DecodeQuery reads a query from JSON: one object, no unknown keys. Errors name the field.
func DecodeQuery(data []byte) (*Query, error) {
	if len(data) > request.MaxBytes {
		return nil, &model.FieldError{Reason: fmt.Sprintf("the query is %d bytes, more than the %d it may hold", len(data), request.MaxBytes)}
	}
	var raw struct {
		Request json.RawMessage `json:"request"`
		Knobs
		Exhaustive bool `json:"exhaustive,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, &model.FieldError{Reason: "invalid search query: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &model.FieldError{Reason: "unexpected data after the query's JSON object"}
	}
	if len(bytes.TrimSpace(raw.Request)) == 0 || string(bytes.TrimSpace(raw.Request)) == "null" {
		return nil, &model.FieldError{Path: "request", Reason: "is required: the planning request to search around (docs/request.md)"}
	}
	r, err := request.Decode(raw.Request)
	if err != nil {
		return nil, prefixed("request", err)
	}
	return &Query{Request: r, Knobs: raw.Knobs, Exhaustive: raw.Exhaustive}, nil
}

// Answer is a query's answer: the best candidate with the planning request that
// reproduces it alone, the ten fastest, the Pareto front and the counts.
type Answer struct {
	Best *Outcome `json:"best"`
	// BestRequest is the best candidate's planning request.
	BestRequest *request.Request `json:"best_request,omitempty"`
	// Top are the fastest feasible candidates planned, fastest first (at most ten).
	Top    []Outcome `json:"top"`
	Pareto []Outcome `json:"pareto"`
	Stats  Stats     `json:"stats"`
}

// Run runs the query. On cancellation it returns the answer so far with the context's
// error.
func (q *Query) Run(ctx context.Context, opt Options) (*Answer, error) {
	ev, err := NewRequests(q.Request)
	if err != nil {
		return nil, prefixed("request", err)
	}
	s, err := ev.Space(q.Knobs)
	if err != nil {
		return nil, err
	}
	opt.Exhaustive = opt.Exhaustive || q.Exhaustive
	rep, err := Run(ctx, s, ev, opt)
	if rep == nil {
		return nil, err
	}
	a := &Answer{Best: rep.Best, Pareto: rep.Pareto, Stats: rep.Stats, Top: Top(rep.Evaluated, 10)}
	if rep.Best != nil {
		if a.BestRequest, err = ev.Request(rep.Best.Candidate); err != nil {
			return nil, err
		}
	}
	return a, ctx.Err()
}

// Top returns the n fastest feasible outcomes, fastest first (ties as Report.Best).
func Top(os []Outcome, n int) []Outcome {
	var fs []Outcome
	for _, o := range os {
		if o.Feasible {
			fs = append(fs, o)
		}
	}
	slices.SortStableFunc(fs, func(a, b Outcome) int {
		switch {
		case better(&a, &b):
			return -1
		case better(&b, &a):
			return 1
		}
		return 0
	})
	if len(fs) > n {
		fs = fs[:n]
	}
	if fs == nil {
		fs = []Outcome{}
	}
	return fs
}

// prefixed puts field errors under a prefix ("request.cluster.device").
func prefixed(prefix string, err error) error {
	fes, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	var es model.Errors
	for _, fe := range fes {
		path := prefix
		if fe.Path != "" {
			path += "." + fe.Path
		}
		es = append(es, &model.FieldError{Path: path, Reason: fe.Reason})
	}
	return es
}
