package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/examples"
	"pipeplan/core/wire"
)

func TestExampleCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"example"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("example: exit %d, %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "gpt2-medium  GPT-2 medium") || !strings.Contains(stdout.String(), "plan with: --device a100-80gb --stages 4\n") {
		t.Errorf("example lists:\n%s", stdout.String())
	}

	stdout.Reset()
	if code := run([]string{"example", "gpt2-medium"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("example gpt2-medium: exit %d, %s", code, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), examples.Default().ModelJSON()) {
		t.Error("example gpt2-medium does not print the embedded JSON")
	}

	// The README's two commands: print the example, then plan it.
	file := filepath.Join(t.TempDir(), "gpt2.json")
	if err := os.WriteFile(file, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{"plan", "--model", file, "--device", "a100-80gb", "--stages", "4", "--json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("plan: exit %d, %s", code, stderr.String())
	}
	var res wire.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 8, 15, 22, 26}; res.Plan == nil || !slices.Equal(res.Plan.Boundaries, want) {
		t.Errorf("plan %+v, want boundaries %v", res.Plan, want)
	}

	stderr.Reset()
	if code := run([]string{"example", "bert"}, &stdout, &stderr); code != exitBad || !strings.Contains(stderr.String(), `unknown example "bert"; known examples: gpt2-medium`) {
		t.Errorf("example bert: exit %d, stderr %q", code, stderr.String())
	}
}
