package share

import (
	"context"
	"encoding/json"

	"pipeplan/core/request"
)

// CorePlanner is the Planner of the Worker and the twin: core/request decodes the body
// strictly, normalizes and validates it (Canonical) and gives its content id; Run plans
// it and the Result is stored as JSON. Its errors are core's field errors.
func CorePlanner(body []byte) (*Prepared, error) {
	r, err := request.Decode(body)
	if err != nil {
		return nil, err
	}
	canonical, err := r.Canonical()
	if err != nil {
		return nil, err
	}
	id, err := r.ID()
	if err != nil {
		return nil, err
	}
	return &Prepared{
		ID:        id,
		Canonical: canonical,
		Run: func(ctx context.Context) ([]byte, error) {
			res, err := request.Run(ctx, r)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}, nil
}
