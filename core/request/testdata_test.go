package request

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// The request in the repository's testdata gives the result in testdata byte for byte:
// natively and under WebAssembly (./build.sh test runs this package in node), as the
// command line (cmd/pipeplan) and the page's API in chromium (wasm/app) also check.
func TestRepositoryTestdata(t *testing.T) {
	data, err := os.ReadFile("../../testdata/gpt2-4xa100.request.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../testdata/gpt2-4xa100.result.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("the result differs from testdata/gpt2-4xa100.result.json:\n%s", got)
	}
}
