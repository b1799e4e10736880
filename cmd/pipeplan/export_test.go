package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/wire"
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
		// Tensor parallelism is the request's: --tp (and --sp) cost the plan with it, and
		// the export states it.
		{"tensor parallel", []string{"export", "--hf-config", "llama-2-7b", "--device", "h100-sxm", "--stages", "4", "--tp", "2", "--format", "megatron"}, 0,
			[]string{"--tensor-model-parallel-size 2\n", "--pipeline-model-parallel-size 4\n", "Launch on 8 GPUs", "data parallel 1, tensor parallel 2\n"}, nil},
		{"sequence parallel", []string{"export", "--hf-config", "llama-2-7b", "--device", "h100-sxm", "--stages", "4", "--tp", "4", "--sp", "--format", "megatron"}, 0,
			[]string{"--tensor-model-parallel-size 4\n  --sequence-parallel\n", "tensor parallel 4 with sequence parallelism"}, nil},
		{"tensor parallel pytorch", []string{"export", "--hf-config", "llama-2-7b", "--device", "h100-sxm", "--stages", "4", "--tp", "2", "--format", "pytorch"}, 0,
			[]string{"TENSOR_PARALLEL = 2", `mesh_dim_names=("pp", "tp")`, "parallelize_module(module, mesh[\"tp\"], tp_plan)"}, nil},
		{"tensor parallel graphcore", []string{"export", "--hf-config", "llama-2-7b", "--device", "h100-sxm", "--stages", "4", "--tp", "2", "--format", "graphcore"}, 2,
			nil, []string{"plan with parallelism.tensor 1 for Graphcore"}},
		{"sp without tp", append([]string{"export", "--format", "megatron", "--sp"}, llama...), 2, nil, []string{"--sp: splits along the sequence what tensor parallelism leaves whole"}},
		{"request with tp", []string{"export", "--request", req, "--format", "megatron", "--tp", "2"}, 2, nil, []string{"--request: the request file says everything; drop --tp"}},
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

// TestExportEveryFormat runs pipeplan export in every format, for a profile and for a
// tensor-parallel architecture: each writes its export, or says why it cannot.
func TestExportEveryFormat(t *testing.T) {
	inputs := map[string][]string{
		"profile":         {"--example", "gpt2-medium", "--device", "a100-80gb", "--stages", "4"},
		"tensor parallel": {"--hf-config", "llama-2-7b", "--device", "h100-sxm", "--stages", "4", "--tp", "2", "--dp", "2", "--microbatches", "8"},
	}
	refused := map[string]string{
		"profile megatron":          "needs a transformer architecture",
		"tensor parallel graphcore": "tensor parallelism",
	}
	for name, in := range inputs {
		for _, f := range wire.Formats {
			t.Run(name+" "+string(f), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(append([]string{"export", "--format", string(f)}, in...), &stdout, &stderr)
				if why, ok := refused[name+" "+string(f)]; ok {
					if code != exitBad || !strings.Contains(stderr.String(), why) {
						t.Errorf("exit %d, stderr %s; want %d and %q", code, stderr.String(), exitBad, why)
					}
					return
				}
				if code != exitOK || stdout.Len() == 0 {
					t.Fatalf("exit %d, %d bytes of export\nstderr: %s", code, stdout.Len(), stderr.String())
				}
				if name == "tensor parallel" && f != wire.JSON && !strings.Contains(stdout.String(), "data parallel 2, tensor parallel 2\n") {
					t.Errorf("the export does not state the request's parallelism:\n%s", stdout.String())
				}
			})
		}
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
	var ex wire.Export
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	d, err := export.ReadDocument([]byte(ex.Text))
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Exact || ex.Format != wire.JSON || !slices.Equal(d.Boundaries, ex.Boundaries) || d.Model.Name != "gpt2-medium" {
		t.Errorf("export %+v, document %+v", ex, d)
	}
}

// TestExportHostileName runs the attack: a model name with line breaks, through
// --name and through a request's model.name, exported in every format and then run (bash
// for the shell script, python3 for the Python ones, whose header runs before their
// imports). No name may run: the file the payload would create must not exist.
// core/export's TestHostileNamesDoNotRun covers every hostile name and the layer names.
func TestExportHostileName(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	names := map[string]string{
		"shell":  "x\ntouch PWNED\n#",
		"python": "x\nopen('PWNED', 'w')\n#",
	}
	llama := []string{"--hf-config", "llama-2-7b", "--device", "a100-80gb", "--stages", "4"}
	for _, f := range wire.Formats {
		lang := "python"
		if f == wire.Megatron {
			lang = "shell"
		}
		name := names[lang]
		req, err := json.Marshal(map[string]any{
			"model":       map[string]any{"architecture": map[string]any{"name": "llama-2-7b"}, "name": name},
			"cluster":     map[string]any{"device": "a100-80gb"},
			"parallelism": map[string]any{"pipeline": 4},
		})
		if err != nil {
			t.Fatal(err)
		}
		reqFile := writeFile(t, "request.json", string(req))
		for how, args := range map[string][]string{
			"--name":             append([]string{"--name", name}, llama...),
			"request model.name": {"--request", reqFile},
		} {
			out := filepath.Join(dir, string(f)+"-"+strings.ReplaceAll(how, " ", "_"))
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"export", "--format", string(f), "-o", out}, args...), &stdout, &stderr); code != exitOK {
				t.Fatalf("%s %s: exit %d\n%s", f, how, code, stderr.String())
			}
			var cmd *exec.Cmd
			switch lang {
			case "shell":
				cmd = exec.Command("bash", out)
			default:
				cmd = exec.Command(py, out) // fails at its first import; the header ran before
			}
			cmd.Dir = dir
			res, _ := cmd.CombinedOutput()
			if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
				t.Fatalf("%s through %s: the model's name ran as code\n%s", f, how, res)
			}
			if f == wire.JSON || f == wire.Megatron {
				if text, _ := os.ReadFile(out); !bytes.Contains(text, []byte(`x\n`)) {
					t.Errorf("%s through %s: the export does not show the name escaped:\n%s", f, how, text)
				}
			}
		}
	}
}
