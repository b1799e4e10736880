package request

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// canonicalCorpus: documents and values with what the one-pass canonical form must get
// right: nesting, key order, keys given twice, escapes, HTML characters, control
// characters, U+2028, invalid UTF-8, numbers in every spelling, white space.
var canonicalCorpus = []string{
	`{}`, `[]`, `0`, `-1.5e+10`, `true`, `null`, `[1,[2,[3,{}]],[]]`,
	`{"b":1,"a":2,"c":{"z":[1,2,{"y":null,"x":false}],"a":"s"}}`,
	` { "a" : 1 , "a" : 2 , "b" : [ 1 , 2 ] } `,
	`{"a":{"x":1},"a":[2]}`,
	`{"\u0061":1,"a":2}`,
	`{"k\"q":"v\\w","<&>":"<b>&amp;</b>","":""}`,
	`{"ctl":"a\u0001b\tc\nd","sep":"\u2028\u2029","raw sep":"` + "\u2028" + `"}`,
	"{\"bad utf8\":\"a\xffb\",\"k\xfe\":1}",
	`{"n":[1E5,1e-7,-0,0.000,12345678901234567890123,1.0]}`,
	`{"é":1,"e":2,"z":3,"É":4,"ß":{"中文":"文字"}}`,
	`{"esc":"\/\b\f\u00e9\ud83d\ude00\ud800"}`,
}

// TestSortedJSONIsTheTreesForm: the one-pass canonical form is byte for byte the one a
// decoded tree gives (encoding/json with UseNumber), on the corpus and on every JSON
// document in testdata and ../shared/data.
func TestSortedJSONIsTheTreesForm(t *testing.T) {
	docs := map[string][]byte{}
	for i, s := range canonicalCorpus {
		docs[string(rune('A'+i))] = []byte(s)
	}
	for _, pattern := range []string{"testdata/*.json", "../../../shared/data/*/*.json", "../../../shared/data/*.json", "../examples/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs[f] = data
		}
	}
	if len(docs) < len(canonicalCorpus)+3 {
		t.Fatalf("only %d documents found", len(docs))
	}
	for name, doc := range docs {
		checkSortedJSON(t, name, doc)
	}
}

func checkSortedJSON(t *testing.T, name string, doc []byte) {
	t.Helper()
	want, werr := canonicalTree(doc)
	got, gerr := canonicalJSON(doc)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Errorf("%s: one pass %q (%v), tree %q (%v)", name, got, gerr, want, werr)
	}
}

func FuzzSortedJSON(f *testing.F) {
	for _, s := range canonicalCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		checkSortedJSON(t, "fuzz", doc)
	})
}
