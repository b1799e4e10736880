package ui

import "pipeplan/core/request/spec"

// Result is what running a request gives (core/request's Run, in the planner worker).
type Result = spec.Result

// ModelInfo describes the planned model (Result.Model).
type ModelInfo = spec.ModelInfo

// Diagnostic is one finding of core about a request: why nothing fits, what is over
// memory, what was assumed, advice.
type Diagnostic = spec.Diagnostic

// View is a result cut to what the page draws (spec.Cut): the planner worker holds the
// whole result, and the page asks for other windows of its rows.
type View = spec.View
