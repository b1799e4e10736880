package request

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"pipeplan/core/model"
)

// fieldError returns err's only field error, failing the test when err is not one.
func fieldError(t *testing.T, err error) *model.FieldError {
	t.Helper()
	var fe *model.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	if es, ok := model.AsFieldErrors(err); ok && len(es) > 0 {
		return es[0]
	}
	t.Fatalf("error %v (%T) is not a field error", err, err)
	return nil
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// path and reason (a substring) of the error; "" reason: no error.
		path, reason string
	}{
		{name: "minimal", in: `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`},
		{name: "byte order mark and spaces", in: "\xef\xbb\xbf \n{\"version\": 1}\n\t "},
		{name: "unknown top-level field", in: `{"verison":1}`, path: "verison", reason: "is not a field of the request"},
		{name: "unknown nested field", in: `{"model":{"exmaple":"gpt2-medium"}}`, path: "model.exmaple", reason: "is not a field"},
		{name: "unknown field two deep", in: `{"model":{"architecture":{"name":"gpt2","sequence":8}}}`, path: "model.architecture.sequence", reason: "is not a field"},
		{name: "unknown field after known ones", in: `{"cluster":{"device":"a100-80gb"},"schedule":{"microbatches":4,"size":2}}`, path: "schedule.size", reason: "is not a field"},
		{name: "documents hold any keys", in: `{"model":{"document":{"exmaple":1,"layers":[]}}}`},
		{name: "wrong type", in: `{"schedule":{"microbatches":"16"}}`, path: "schedule.microbatches", reason: "must be an integer, got string"},
		{name: "wrong type string", in: `{"cluster":{"device":3}}`, path: "cluster.device", reason: "must be a string, got number"},
		{name: "wrong type bool", in: `{"events":"yes"}`, path: "events", reason: "must be true or false"},
		{name: "wrong type array", in: `{"boundaries":{"0":1}}`, path: "boundaries", reason: "must be an array"},
		{name: "fraction for an integer", in: `{"version":1.5}`, path: "version", reason: "must be an integer, got number 1.5"},
		{name: "trailing object", in: `{"version":1} {"version":1}`, reason: "unexpected data after the request's JSON object"},
		{name: "trailing bracket", in: `{"version":1}]`, reason: "unexpected data after"},
		{name: "trailing garbage", in: `{"version":1}x`, reason: "unexpected data after"},
		{name: "empty", in: "", reason: "the request is empty"},
		{name: "blank", in: " \n\t", reason: "the request is empty"},
		{name: "null", in: `null`, reason: "must be a JSON object, got null"},
		{name: "array", in: `[{"version":1}]`, reason: "must be a JSON object, got array"},
		{name: "string", in: `"gpt2"`, reason: "must be a JSON object, got string"},
		{name: "ends early", in: `{"version":1`, reason: "ends early"},
		{name: "syntax error", in: `{"version":}`, reason: "invalid JSON at byte 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode([]byte(tt.in))
			if tt.reason == "" {
				if err != nil || r == nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode accepted %.80q", tt.in)
			}
			if r != nil {
				t.Errorf("Decode returned a request with its error")
			}
			fe := fieldError(t, err)
			if fe.Path != tt.path || !strings.Contains(fe.Reason, tt.reason) {
				t.Errorf("error %q (path %q), want path %q and a reason with %q", err, fe.Path, tt.path, tt.reason)
			}
		})
	}
}

// TestDecodeKeepsDocuments: embedded documents are kept as given, for Normalize to read.
func TestDecodeKeepsDocuments(t *testing.T) {
	doc := `{ "layers" : [ {"name": "a", "forward_seconds": 1e-3} ] }`
	r, err := Decode([]byte(`{"model":{"document":` + doc + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Model.Document, []byte(doc)) {
		t.Errorf("document %s, want %s", r.Model.Document, doc)
	}
}
