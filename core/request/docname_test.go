package request

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDocumentName(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"name": "gpt2", "layers": []}`, "gpt2"},
		{` {"layers": [{"name": "inner"}], "name": "after \"layers\""}`, `after "layers"`},
		{`{"layerName": ["a"], "layerInfo": [{"name": "x"}]}`, ""}, // Graphcore: none at the top
		{`{"name": 3}`, ""},
		{`{"name": null}`, ""},
		{`{"Name": "upper case is another key"}`, ""},
		{`{"n\u0061me": "escaped"}`, "escaped"},
		{`{"n\u0061mes": "another key", "name": "x"}`, "x"},
		{`"a string"`, ""},
		{`{"name": "unterminated`, ""},
		{`{"na`, ""},
		{`{"a": {"b": [1, {"c": "}]"}]}, "name": "nested brackets in strings"}`, "nested brackets in strings"},
		{``, ""},
	} {
		if got := DocumentName([]byte(tc.doc)); got != tc.want {
			t.Errorf("DocumentName(%s) = %q, want %q", tc.doc, got, tc.want)
		}
	}
	for _, file := range []string{"../load/testdata/graphcore/transfer_4.json", "../arch/testdata/gpt3-175b.json", "testdata/gpt2-4xa100.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Name string }
		if err := json.Unmarshal(data, &v); err != nil || DocumentName(data) != v.Name {
			t.Errorf("%s: DocumentName %q, encoding/json %q (%v)", file, DocumentName(data), v.Name, err)
		}
	}
}

// FuzzDocumentName: never a panic, and on valid JSON objects whose keys are exact (no
// other case of "name", no escapes) the name encoding/json reads.
func FuzzDocumentName(f *testing.F) {
	for _, s := range []string{`{"name":"a","layers":[{"name":"b"}]}`, `{"x":[1,"]"],"name":"c"}`, `{"name":`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got := DocumentName(doc)
		var m map[string]json.RawMessage
		if json.Unmarshal(doc, &m) != nil {
			return
		}
		for k := range m {
			if k != "name" && (len(k) == 4 && (k[0]|0x20) == 'n') {
				return // encoding/json would match it case-insensitively
			}
		}
		var want string
		if raw, ok := m["name"]; ok && json.Unmarshal(raw, &want) != nil {
			want = ""
		}
		if got != want {
			t.Errorf("DocumentName(%s) = %q, encoding/json reads %q", doc, got, want)
		}
	})
}
