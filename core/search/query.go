package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"pipeplan/core/model"
	"pipeplan/core/request/spec"
)

// Query is a search as plain data, what the browser's JS API takes
// (docs/search.md): the base planning request, whose model and cluster (a device preset,
// with devices_per_node for nodes) are searched over, and the knobs, of which those left
// zero are searched.
type Query struct {
	// Request is the base planning request (docs/request.md).
	Request *spec.Request `json:"request"`
	// Knobs fix or bound what is searched; max_devices is required.
	Knobs
	// Exhaustive plans every candidate, pruning nothing (slow: to check the search).
	Exhaustive bool `json:"exhaustive,omitempty"`
}

// DecodeQuery reads a query from JSON: one object, no unknown keys. Errors name the field.
func DecodeQuery(data []byte) (*Query, error) {
	if len(data) > spec.MaxBytes {
		return nil, &model.FieldError{Reason: fmt.Sprintf("the query is %d bytes, more than the %d it may hold", len(data), spec.MaxBytes)}
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
	r, err := spec.Decode(raw.Request)
	if err != nil {
		return nil, model.Prefixed("request", err)
	}
	return &Query{Request: r, Knobs: raw.Knobs, Exhaustive: raw.Exhaustive}, nil
}

// Knobs are what the user fixes; the zero value of each is searched. Space turns them
// into the grid.
type Knobs struct {
	// MaxDevices is the devices at hand: p x d x t x c at most.
	MaxDevices int `json:"max_devices"`
	// Stages, Replicas, Tensor fix p, d, t.
	Stages   int `json:"stages,omitempty"`
	Replicas int `json:"replicas,omitempty"`
	Tensor   int `json:"tensor,omitempty"`
	// Schedule fixes the schedule; Schedules lists those to try (default: 1f1b, gpipe,
	// interleaved:2, zb-h1 in training, inference in inference).
	Schedule  string   `json:"schedule,omitempty"`
	Schedules []string `json:"schedules,omitempty"`
	// Recompute fixes recomputation (default: none, selective and full for an
	// architecture, none and full for a profile; none in inference).
	Recompute string `json:"recompute,omitempty"`
	// ZeRO fixes the ZeRO stage, 0 to 3 (nil: 0, 1, 2 and 3 in training).
	ZeRO *int `json:"zero,omitempty"`
	// Context fixes the context-parallel degree; Contexts lists those to try (default:
	// 1, and for sequences of 32,768 tokens or more every power of two up to 32 that
	// splits the sequence and fits a node beside the tensor group).
	Context  int   `json:"context,omitempty"`
	Contexts []int `json:"contexts,omitempty"`
	// MemoryProportions to try (default: 1).
	MemoryProportions []float64 `json:"memory_proportions,omitempty"`
	// GlobalBatch fixes samples per step; else Microbatches fixes m, else m is searched
	// over MicrobatchesPerStage x p (default 1, 2, 4, 8).
	GlobalBatch          int   `json:"global_batch,omitempty"`
	Microbatches         int   `json:"microbatches,omitempty"`
	MicrobatchesPerStage []int `json:"microbatches_per_stage,omitempty"`
	// MicrobatchSize fixes the samples per microbatch; else it is searched up to
	// MaxMicrobatchSize (default 64 for architectures, 128 for profiles).
	MicrobatchSize    int `json:"microbatch_size,omitempty"`
	MaxMicrobatchSize int `json:"max_microbatch_size,omitempty"`
}

// Answer is a query's answer: the best candidate with the planning request that
// reproduces it alone, the ten fastest, the Pareto front and the counts.
type Answer struct {
	Best *Outcome `json:"best"`
	// BestRequest is the best candidate's planning request.
	BestRequest *spec.Request `json:"best_request,omitempty"`
	// Top are the fastest feasible candidates planned, fastest first (at most ten).
	Top    []Outcome `json:"top"`
	Pareto []Outcome `json:"pareto"`
	Stats  Stats     `json:"stats"`
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
