package ui

import (
	"context"

	"pipeplan/core/request"
)

// Result is what running a request gives (core/request).
type Result = request.Result

// Diagnostic is one finding of core about a request: why nothing fits, what is over
// memory, what was assumed, advice.
type Diagnostic = request.Diagnostic

// Run plans a request: core/request's Run, the one doorway every front end goes through.
func Run(ctx context.Context, r *Request) (*Result, error) { return request.Run(ctx, r) }
