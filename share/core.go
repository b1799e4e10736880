package share

import (
	"context"
	"encoding/json"

	"pipeplan/core/request"
)

// CorePlanner is the Planner of the Worker and the twin: core/request decodes the body
// strictly and prepares it once (request.Prepare: normalized and validated, its canonical
// form and content id); Run plans it and its Result is stored as JSON. Its errors are
// core's field errors.
func CorePlanner(body []byte) (*Prepared, error) {
	r, err := request.Decode(body)
	if err != nil {
		return nil, err
	}
	p, err := request.Prepare(r)
	if err != nil {
		return nil, err
	}
	canonical, err := p.Canonical()
	if err != nil {
		return nil, err
	}
	id, err := p.ID()
	if err != nil {
		return nil, err
	}
	// The request as posted and its canonical form plan to the same result
	// (core/request's TestRunNormalizedIsRun), the one the stored request replays to.
	return &Prepared{
		ID:        id,
		Canonical: canonical,
		// The document holds the canonical request and the result.
		MinDocumentBytes: int64(len(canonical)) + request.MinResultBytes(p.Request()),
		Run: func(ctx context.Context) ([]byte, error) {
			res, err := p.Run(ctx)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}, nil
}
