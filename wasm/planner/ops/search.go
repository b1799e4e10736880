package ops

import (
	"context"
	"time"

	"pipeplan/core/search"
	"pipeplan/core/search/evaluate"
)

// searchSlice is how long a search runs between yields to the browser's event loop: short
// enough that the page keeps drawing frames and answering clicks, long enough that the
// yields cost little.
const searchSlice = 25 * time.Millisecond

// progressEvery is how often a search reports its progress (and always at its end).
const progressEvery = 100 * time.Millisecond

// searchJSON is the Go side of window.pipeplan.search and of the page's search: it
// decodes a search query (docs/search.md), runs it (core/search/evaluate.RunQuery, the one
// search doorway), and returns its answer as JSON, or an apiError as JSON for a bad query.
// progress, when set, receives {done, total, evaluated, best} as JSON at most every
// progressEvery; yield, when set, is called at most every searchSlice of work, and is
// where a single-threaded host lets its event loop run. Cancelling ctx stops the search:
// searchJSON then returns the answer so far (if any) with ctx's error.
func searchJSON(ctx context.Context, queryJSON string, progress func(string), yield func()) (string, error) {
	q, err := search.DecodeQuery([]byte(queryJSON))
	if err != nil {
		return mustJSON(errorOf(err)), nil
	}
	a, err := evaluate.RunQuery(ctx, q, searchOptions(progress, yield))
	if ctx.Err() != nil {
		if a == nil {
			return "", ctx.Err()
		}
		return mustJSON(a), ctx.Err()
	}
	if err != nil {
		return mustJSON(errorOf(err)), nil
	}
	return mustJSON(a), nil
}
