package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/export"
)

func TestExportCommand(t *testing.T) {
	model := writeFile(t, "model.json", sixLayers)
	tiny := writeFile(t, "tiny.json", clusterJSON(150, 2))
	req := filepath.Join("..", "..", "core", "request", "testdata", "gpt2-4xa100.json")
	llama := []string{"--hf-config", "llama-2-7b", "--device", "a100-80gb", "--stages", "4", "--microbatches", "16", "--seq", "4096", "--batch", "1"}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"pytorch", append([]string{"export", "--format", "pytorch"}, llama...), 0,
			[]string{`"model.layers.8": SplitPoint.BEGINNING,`, "Schedule1F1B(stage, n_microbatches=N_MICROBATCHES, loss_fn=loss_fn)"}, nil},
		{"megatron", append([]string{"export", "--format", "megatron", "--tp", "2", "--dp", "2"}, llama...), 0,
			[]string{`--pipeline-model-parallel-layout "E,t*8|t*8|t*8|t*8,L"`, "--tensor-model-parallel-size 2", "--global-batch-size 32", "Launch on 16 GPUs"}, nil},
		{"deepspeed interleaved", append([]string{"export", "--format", "deepspeed", "--schedule", "interleaved:2"}, llama...), 0,
			[]string{"PARTS = [0, 9, 17, 25, 35]", "NOT EXACT: this runs 1f1b"}, []string{"deepspeed cannot run the plan exactly: it runs 1f1b, split [0 9 17 25 35]"}},
		{"request file", []string{"export", "--request", req, "--format", "graphcore"}, 0, []string{`"block.0": 0,`, "GRADIENT_ACCUMULATION = 16"}, nil},
		{"request with plan flags", []string{"export", "--request", req, "--format", "json", "--stages", "2"}, 2, nil, []string{"--request: the request file says everything; drop --stages"}},
		{"profile to megatron", []string{"export", "--format", "megatron", "--example", "gpt2-medium", "--device", "a100-80gb", "--stages", "4"}, 2, nil, []string{"needs a transformer architecture"}},
		{"no format", append([]string{"export"}, llama...), 2, nil, []string{"--format: give one of pytorch, deepspeed, megatron, graphcore, json"}},
		{"bad format", append([]string{"export", "--format", "jax"}, llama...), 2, nil, []string{`--format: unknown export format "jax"`}},
		{"bad tp", append([]string{"export", "--format", "megatron", "--tp", "0"}, llama...), 2, nil, []string{"--tp: must be >= 1, got 0"}},
		{"no fit", []string{"export", "--format", "json", "--model", model, "--cluster", tiny}, 1, nil, []string{"no plan to export"}},
		{"bad flag value", append([]string{"export", "--format", "json", "--microbatches", "3", "--schedule", "interleaved:2"}, llama[:6]...), 2, nil, []string{"--microbatches"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
		})
	}
}

func TestExportJSONAndFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	var stdout, stderr bytes.Buffer
	args := []string{"export", "--format", "json", "--json", "-o", out, "--example", "gpt2-medium", "--device", "a100-80gb", "--stages", "4"}
	if code := run(args, &stdout, &stderr); code != exitOK || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ex export.Export
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	d, err := export.ReadDocument([]byte(ex.Text))
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Exact || ex.Format != export.JSON || !slices.Equal(d.Boundaries, ex.Boundaries) || d.Model.Name != "gpt2-medium" {
		t.Errorf("export %+v, document %+v", ex, d)
	}
}
