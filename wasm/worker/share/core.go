package share

import (
	"context"
	"encoding/json"
	"fmt"

	"pipeplan/core/request"
)

// CorePlanner is the Planner of the Worker and the twin: core/request decodes the body
// strictly, normalizes and validates it (Canonical) and gives its content id; Run plans
// the canonical request and its Result is stored as JSON. Its errors are core's field
// errors.
func CorePlanner(body []byte) (*Prepared, error) {
	r, err := request.Decode(body)
	if err != nil {
		return nil, err
	}
	canonical, err := request.Canonical(r)
	if err != nil {
		return nil, err
	}
	id, err := request.ID(r)
	if err != nil {
		return nil, err
	}
	// Run the canonical request, not the one posted: the stored result is then the one
	// the stored request replays to, whichever spelling of it came first. (They differ
	// in notes: a default that Normalize fills in is no longer reported as missing.)
	c, err := request.Decode(canonical)
	if err != nil {
		return nil, fmt.Errorf("core's canonical request does not decode: %w", err)
	}
	return &Prepared{
		ID:        id,
		Canonical: canonical,
		// The document holds the canonical request and the result.
		MinDocumentBytes: int64(len(canonical)) + request.MinResultBytes(c),
		Run: func(ctx context.Context) ([]byte, error) {
			res, err := request.Run(ctx, c)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}, nil
}
