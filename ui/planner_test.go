package ui

import (
	"context"

	"pipeplan/wasm/planner/ops"
)

// local is the planner of the tests: wasm/planner/ops in this process, as the browser's
// planner worker runs it.
func local(ctx context.Context, op string, args []string, progress func(string)) (string, error) {
	return ops.Do(ctx, op, args, progress, nil)
}
