package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/internal/jsonscan"
)

// TestDuplicateKeys: a key given twice anywhere in the request's own objects is refused
// naming its path; in an embedded document it is left to the document's loader.
func TestDuplicateKeys(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"version": 1, "version": 1}`, "version: is given twice"},
		{`{"version": 1, "cluster": {"device": "a100-80gb", "count": 4, "count": 8}}`, "cluster.count: is given twice"},
		{`{"version": 1, "model": {"architecture": {"name": "gpt2", "seq": 1, "se\u0071": 2}}}`, "model.architecture.seq: is given twice"},
		{`{"version": 1, "model": {"document": {"a": 1, "a": 2}}}`, ""},
		{`{"version": 1, "model": {"architecture": {"config": {"n_layer": 1, "n_layer": 2}}}}`, ""},
	} {
		_, err := Decode([]byte(tc.json))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
}

// FuzzDecode: any bytes decode to a request or give an error, never a panic; a request
// that decodes has no key twice in its own objects (encoding/json's map keeps one of
// them, so the map's keys are as many as the object's members).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}}`,
		`{"version": 1, "cluster": {"count": 4, "count": 4}}`,
		`{"version": 1, "model": {"document": {"layers": [], "layers": []}}}`,
		"\xef\xbb\xbf{}", `[]`, `null`, `{"version": 1}{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil || r == nil {
			return
		}
		body := []byte(strings.TrimPrefix(string(data), "\xef\xbb\xbf"))
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatalf("decoded, but not an object: %v", err)
		}
		members := 0
		jsonscan.Members(body, func([]byte, int) bool { members++; return true })
		if members != len(top) {
			t.Fatalf("decoded with %d members at the top for %d distinct keys: a key given twice", members, len(top))
		}
	})
}
