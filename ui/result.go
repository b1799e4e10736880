package ui

import (
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// Result mirrors core/request.Result (see Request): what running a request gives.
type Result struct {
	ID             string           `json:"id,omitempty"`
	PlannerVersion string           `json:"planner_version,omitempty"`
	Request        *Request         `json:"request"`
	Feasible       bool             `json:"feasible"`
	Plan           *plan.Plan       `json:"plan,omitempty"`
	Schedule       *schedule.Result `json:"schedule,omitempty"`
	Step           Step             `json:"step,omitzero"`
	Diagnostics    []Diagnostic     `json:"diagnostics,omitempty"`

	// Model is the model the request resolved to. The contract's Result does not carry
	// it, but the page needs its layers for the layer table and the stage bar; core should
	// give it (a field here, or a request.Model function).
	Model *model.Model `json:"-"`
}

// Step is the simulated training (or inference) step.
type Step struct {
	PipelineSeconds              float64 `json:"pipeline_seconds,omitempty"`
	OptimizerSeconds             float64 `json:"optimizer_seconds,omitempty"`
	DataParallelAllreduceSeconds float64 `json:"data_parallel_allreduce_seconds,omitempty"`
	TiedAllreduceSeconds         float64 `json:"tied_allreduce_seconds,omitempty"`
	StepSeconds                  float64 `json:"step_seconds,omitempty"`
	SamplesPerStep               float64 `json:"samples_per_step,omitempty"`
	SamplesPerSecond             float64 `json:"samples_per_second,omitempty"`
	TokensPerSecond              float64 `json:"tokens_per_second,omitempty"`
	BubbleFraction               float64 `json:"bubble_fraction,omitempty"`
}

// Diagnostic is one thing core says about a plan: why it does not fit, or how to run it
// better, with what the user can change (Suggestion, Field).
type Diagnostic struct {
	Code          string `json:"code"`
	Severity      string `json:"severity"` // "error", "warning", "info"
	Message       string `json:"message"`
	Field         string `json:"field,omitempty"`
	Layer         *int   `json:"layer,omitempty"`
	Stage         *int   `json:"stage,omitempty"`
	Device        *int   `json:"device,omitempty"`
	BytesNeeded   int64  `json:"bytes_needed,omitempty"`
	CapacityBytes int64  `json:"capacity_bytes,omitempty"`
	Suggestion    string `json:"suggestion,omitempty"`
}
