// Package sharetest tests implementations of the shared-plans API (package share): a
// conformance suite for Stores, an API suite and a load test that run against any base
// URL (an httptest server, the local twin, the Worker under wrangler dev), and a stub
// Planner for tests of the handler that should not depend on core's results.
package sharetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"pipeplan/core/model"
	"pipeplan/share"
)

// StubPlanner is a Planner for handler tests. A request is a JSON object with "version":
// 1 (else a field error); its canonical form is the object re-encoded with sorted keys,
// its id the SHA-256 of that; its result is {"feasible": true, "keys": N}, or an error
// when the request holds "fail": true.
func StubPlanner(body []byte) (*share.Prepared, error) {
	var req map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&req); err != nil {
		return nil, err
	}
	if v, ok := req["version"].(json.Number); !ok || v.String() != "1" {
		return nil, model.Errors{{Path: "version", Reason: fmt.Sprintf("must be 1, got %v", req["version"])}}
	}
	canonical, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canonical)
	return &share.Prepared{
		ID:        hex.EncodeToString(sum[:]),
		Canonical: canonical,
		Run: func(ctx context.Context) ([]byte, error) {
			if req["fail"] == true {
				return nil, errors.New("the stub was asked to fail")
			}
			return fmt.Appendf(nil, `{"feasible":true,"keys":%d}`, len(req)), nil
		},
	}, nil
}

// StubFixture is the Fixture for StubPlanner.
func StubFixture() Fixture {
	return Fixture{
		Plan:         StubPlanner,
		Valid:        func(i int) []byte { return fmt.Appendf(nil, `{"version": 1, "n": %d, "name": "request %d"}`, i, i) },
		Invalid:      []byte(`{"version": 2}`),
		InvalidField: "version",
	}
}
