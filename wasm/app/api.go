package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/ui"
)

// apiOptions is the options argument of window.pipeplan.plan, as JSON.
type apiOptions struct {
	// Objective: "compute" (the default) or "compute+transfer".
	Objective string `json:"objective,omitempty"`
	// MemoryProportion of each device's usable memory a stage may fill; 0 means 1.
	MemoryProportion float64 `json:"memory_proportion,omitempty"`
	// Inference plans forward passes only.
	Inference bool `json:"inference,omitempty"`
	// Recompute stashes only stage inputs and rebuilds activations in backward.
	Recompute bool `json:"recompute,omitempty"`
}

// apiError is what window.pipeplan.plan returns instead of a plan.
type apiError struct {
	// Error is the whole message, for people.
	Error string `json:"error"`
	// NoFit is true when the inputs were valid but no split fits the devices' memory.
	NoFit bool `json:"no_fit,omitempty"`
	// Fields lists the bad fields of an input, when the error is about fields.
	Fields []apiField `json:"fields,omitempty"`
}

// apiField names one bad field: in which input ("model", "cluster" or "options"), its path
// inside it, and why.
type apiField struct {
	Input  string `json:"input"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// planJSON is window.pipeplan.plan: it decodes a model (any format core/load knows), a
// cluster and options (empty: defaults), makes the optimal plan and returns it as JSON, or
// an apiError as JSON. It never panics on bad input.
func planJSON(modelJSON, clusterJSON, optionsJSON string) string {
	p, err := makePlan([]byte(modelJSON), []byte(clusterJSON), []byte(optionsJSON))
	if err != nil {
		return mustJSON(err.(*inputError).api())
	}
	return mustJSON(p)
}

// inputError is an error in one of the three inputs, or a no-fit.
type inputError struct {
	input string // "model", "cluster", "options" or "" for a planning failure
	err   error
}

func (e *inputError) Error() string {
	if e.input == "" {
		return e.err.Error()
	}
	return e.input + ": " + e.err.Error()
}

func (e *inputError) api() apiError {
	a := apiError{Error: e.Error(), NoFit: errors.Is(e.err, plan.ErrNoFit)}
	if fes, ok := model.AsFieldErrors(e.err); ok {
		for _, fe := range fes {
			input := e.input
			if input == "" {
				input = inputOf(fe.Path)
			}
			a.Fields = append(a.Fields, apiField{Input: input, Path: fe.Path, Reason: fe.Reason})
		}
	}
	return a
}

// inputOf says which input a field found while planning belongs to, by its path: the
// estimator checks how model and cluster fit together, and its own options.
func inputOf(path string) string {
	for _, p := range []struct{ prefix, input string }{
		{"devices", "cluster"}, {"links", "cluster"}, {"host", "cluster"},
		{"layers", "model"}, {"inputs", "model"}, {"time_unit", "model"},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return p.input
		}
	}
	return "options"
}

func makePlan(modelJSON, clusterJSON, optionsJSON []byte) (*plan.Plan, error) {
	if len(bytes.TrimSpace(modelJSON)) == 0 {
		return nil, &inputError{"model", errors.New("is empty: give a model as JSON")}
	}
	m, _, err := load.Model(modelJSON)
	if err != nil {
		return nil, &inputError{"model", err}
	}
	if len(bytes.TrimSpace(clusterJSON)) == 0 {
		return nil, &inputError{"cluster", errors.New("is empty: give a cluster as JSON")}
	}
	c, err := load.Cluster(clusterJSON)
	if err != nil {
		return nil, &inputError{"cluster", err}
	}
	opt, err := decodeOptions(optionsJSON)
	if err != nil {
		return nil, &inputError{"options", err}
	}
	p, err := plan.Make(m, c, opt)
	if err != nil {
		return nil, &inputError{"", err}
	}
	return p, nil
}

func decodeOptions(data []byte) (plan.Options, error) {
	var o apiOptions
	if s := bytes.TrimSpace(data); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return plan.Options{}, fmt.Errorf("invalid JSON: %v", err)
		}
		if dec.More() {
			return plan.Options{}, errors.New("unexpected data after the JSON value")
		}
	}
	var opt plan.Options
	if o.Objective != "" {
		obj, err := partition.ParseObjective(o.Objective)
		if err != nil {
			return plan.Options{}, &model.FieldError{Path: "objective", Reason: err.Error()}
		}
		opt.Objective = obj
	}
	opt.Estimate.MemoryProportion = o.MemoryProportion
	opt.Estimate.Inference = o.Inference
	opt.Estimate.Recompute = o.Recompute
	return opt, nil
}

// mustJSON encodes v; plans and errors hold only strings and finite numbers, so a failure
// is a bug, reported as an error object rather than a panic that would stop the app.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(apiError{Error: "internal error: " + err.Error()})
	}
	return string(b)
}

// searchUnavailable is what pipeplan.search rejects with until core/search lands.
const searchUnavailable = "pipeplan.search: the search (core/search) has not landed in this build yet"

// planRequestJSON is window.pipeplan.plan(request): the request's result as JSON, or an
// apiError. It runs the page's planner (ui.Run), so the API and the page cannot disagree.
func planRequestJSON(requestJSON string) string {
	r, err := ui.DecodeRequest([]byte(requestJSON))
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	res, err := ui.Run(context.Background(), r)
	if err != nil {
		a := apiError{Error: err.Error()}
		if fes, ok := model.AsFieldErrors(err); ok {
			for _, fe := range fes {
				a.Fields = append(a.Fields, apiField{Input: "request", Path: fe.Path, Reason: fe.Reason})
			}
		}
		return mustJSON(a)
	}
	return mustJSON(res)
}

// estimateJSON is window.pipeplan.estimate(architecture, device, options): the analytic
// profile (core/analytic) of a bundled architecture's name or a config.json, on a device
// preset, for options as analytic.Options's JSON ({"batch": 1, "seq": 1024, ...}).
func estimateJSON(archArg, device, optionsJSON string) string {
	var name string
	var a *arch.Arch
	var err error
	if json.Unmarshal([]byte(archArg), &name) == nil || !strings.HasPrefix(strings.TrimSpace(archArg), "{") {
		if name == "" {
			name = archArg
		}
		a, err = arch.Bundled(name)
	} else {
		a, err = arch.Parse([]byte(archArg))
	}
	if err != nil {
		return mustJSON(apiError{Error: "architecture: " + err.Error()})
	}
	t, err := analytic.PresetTarget(device)
	if err != nil {
		return mustJSON(apiError{Error: "device: " + err.Error()})
	}
	var o analytic.Options
	if s := strings.TrimSpace(optionsJSON); s != "" && s != "null" {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return mustJSON(apiError{Error: "options: " + err.Error()})
		}
	}
	res, err := analytic.Estimate(a, t, o)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	return mustJSON(res)
}
