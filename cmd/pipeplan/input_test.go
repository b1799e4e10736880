package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/load"
)

func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path string
		want       string // "" reads
	}{
		{"at the limit", write("ten", 10), ""},
		{"over the limit", write("eleven", 11), "the input is 11 bytes; at most 10"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := readInput(tt.path, 10)
			switch {
			case tt.want == "" && (err != nil || len(data) != 10):
				t.Errorf("read %d bytes, %v", len(data), err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestPlanRefusesAHugeFileUnread: a model file over load.MaxInputBytes is refused from its
// size (a sparse file: nothing of it is read), naming the file and the bound.
func TestPlanRefusesAHugeFileUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(load.MaxInputBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, _, stderr := runCLI("plan", "--model", p, "--device", "a100-80gb", "--stages", "2")
	if want := "huge.json: the input is 536870913 bytes; at most 536870912 (512 MiB) are read"; code != exitBad || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitBad, want)
	}
}

// TestModelFileClassified: --model takes any model file, classified by core
// (spec.ModelFromFile): a HuggingFace config.json given as --model plans as --hf-config does.
func TestModelFileClassified(t *testing.T) {
	const config = "../../../shared/data/hf-configs/gpt2.json"
	code, viaModel, errs := runCLI("plan", "--model", config, "--device", "a100-80gb", "--devices", "4", "--seq", "512")
	if code != 0 {
		t.Fatalf("--model %s: exit %d, %s", config, code, errs)
	}
	code, viaHF, errs := runCLI("plan", "--hf-config", config, "--device", "a100-80gb", "--devices", "4", "--seq", "512")
	if code != 0 {
		t.Fatalf("--hf-config %s: exit %d, %s", config, code, errs)
	}
	if viaModel != viaHF || !strings.HasPrefix(viaModel, "gpt2: ") {
		t.Errorf("--model gives\n%s\n--hf-config gives\n%s", viaModel, viaHF)
	}
}
