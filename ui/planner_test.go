package ui

import (
	"context"

	"pipeplan/wasm/planner/ops"
)

// local is the planner of the tests: wasm/planner/ops in this process, as the browser's
// planner worker runs it; closing stop cancels the call's context.
func local(stop <-chan struct{}, op string, args []string, progress func(string)) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ops.Do(ctx, op, args, progress, nil)
}
