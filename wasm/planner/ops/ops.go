// Package ops is what planner.wasm (wasm/planner) does for the page: each operation
// takes JSON texts and answers JSON text, so that the page (main.wasm, which does not
// link the planner) and the worker exchange only strings. It is plain Go, tested natively;
// wasm/planner only carries messages between a Web Worker and Do.
//
// The operations, by name (docs/js-api.md describes those of the JS API):
//
//	plan [request]               the result as compact JSON, or an error object (pipeplan.plan)
//	planJSON [request]           the result as the command line prints it (pipeplan.planJSON)
//	estimate [request]           the analytic estimate of the request's architecture
//	search [query]               core/search's answer (pipeplan.search and the page's search);
//	                             streams progress, and on cancellation gives what was found so far
//	export [request, options]    the plan in options.format (pipeplan.export)
//	exports [request, options]   the plan in every format (pipeplan.exports)
//	profiler []                  {filename, text}: the PyTorch profiler script
//	candidate [query, candidate] the request of a searched candidate, in core's normal form
//	calibrate [request, profile] request.Calibration: the request's architecture fitted to
//	                             a measured profile (its text, a native model file)
//	                             (pipeplan.calibrate)
//
// Bad input comes back as an error object ({error, fields}), never as a Go error: Do's
// error is only the context's, when a search is cancelled.
package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/search/requests"
)

// Do runs the operation op on its arguments (JSON texts). progress, when set, receives a
// search's progress as JSON; yield, when set, is called every searchSlice of a search's
// work (where a single-threaded host lets its event loop run, to see a cancel message).
// A panic comes back as an error object.
func Do(ctx context.Context, op string, args []string, progress func(string), yield func()) (out string, err error) {
	defer recovered(&out)
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "plan":
		b, err := json.Marshal(plan(arg(0)))
		if err != nil {
			return mustJSON(apiError{Error: "internal error: " + err.Error()}), nil
		}
		return string(b), nil
	case "planJSON":
		return planJSON(arg(0)), nil
	case "estimate":
		return estimateJSON(arg(0)), nil
	case "search":
		return searchJSON(ctx, arg(0), progress, yield)
	case "export":
		return exportJSON(arg(0), arg(1)), nil
	case "exports":
		return exportsJSON(arg(0), arg(1)), nil
	case "profiler":
		return profilerJSON(), nil
	case "candidate":
		return candidateJSON(arg(0), arg(1)), nil
	case "calibrate":
		return calibrateJSON(arg(0), arg(1)), nil
	}
	return mustJSON(apiError{Error: fmt.Sprintf("unknown operation %q", op)}), nil
}

// candidateJSON is the request of one candidate of a query's search (its JSON, as the
// report gives it), in core's normal form (every knob stated).
func candidateJSON(queryJSON, candidateJSON string) string {
	q, err := search.DecodeQuery([]byte(queryJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	ev, err := requests.New(q.Request)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	var c search.Candidate
	if err := json.Unmarshal([]byte(candidateJSON), &c); err != nil {
		return mustJSON(apiError{Error: "candidate: " + err.Error()})
	}
	r, err := ev.Request(c)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	if n, err := request.Normalize(r); err == nil {
		r = n
	}
	return mustJSON(r)
}

// searchOptions reports progress at most every progressEvery (and at the end) and yields
// every searchSlice.
func searchOptions(progress func(string), yield func()) search.Options {
	var opt search.Options
	if progress != nil {
		last := time.Time{}
		opt.Progress = func(p search.Progress) {
			if now := time.Now(); now.Sub(last) >= progressEvery || p.Done == p.Total {
				last = now
				progress(mustJSON(p))
			}
		}
	}
	if yield != nil {
		last := time.Now()
		opt.Yield = func() {
			if time.Since(last) >= searchSlice {
				yield()
				last = time.Now()
			}
		}
	}
	return opt
}
