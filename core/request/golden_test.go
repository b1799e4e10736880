package request

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"pipeplan/core/wire"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden results in testdata")

// goldens are requests in testdata with their results beside them (NAME.json and
// NAME.result.json). Front ends check that they give the same bytes: the command line,
// core under WebAssembly in node (this test, run with GOOS=js GOARCH=wasm), the page.
var goldens = []string{"gpt2-4xa100"}

// marshalResult is how a golden result is written: indented by two spaces, with a final
// newline.
func marshalResult(t *testing.T, res *wire.Result) []byte {
	t.Helper()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestGolden(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, decode(t, string(in)))
			got := marshalResult(t, res)
			path := filepath.Join("testdata", name+".result.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./core/request -run TestGolden -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("result of testdata/%s.json differs from %s (rerun with -update if the change is meant):\n%s", name, path, firstDiff(got, want))
			}
		})
	}
}

// TestGoldenRequest pins what the golden request is: the lead's front-end checks rely
// on it (gpt2-medium on 4 x a100-80gb, 1F1B, 16 microbatches).
func TestGoldenRequest(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "gpt2-4xa100.json"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Normalize(decode(t, string(in)))
	if err != nil {
		t.Fatal(err)
	}
	if n.Model.Example != "gpt2-medium" || n.Cluster.Device != "a100-80gb" || n.Parallelism.Pipeline != 4 ||
		n.Parallelism.Data != 1 || n.Schedule.Name != "1f1b" || n.Schedule.Microbatches != 16 || n.Training.Mode != wire.ModeTraining {
		t.Errorf("the golden request is %+v", n)
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b []byte
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if !bytes.Equal(a, b) {
			return "line " + itoa(i+1) + ":\n  got  " + string(a) + "\n  want " + string(b)
		}
	}
	return "(no line differs)"
}
