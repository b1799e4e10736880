package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const sixLayers = `{"name": "six", "time_unit": "cycles", "layers": [
  {"name": "a", "forward_cycles": 10000, "param_bytes": 100},
  {"name": "b", "forward_cycles": 10000, "param_bytes": 100},
  {"name": "c", "forward_cycles": 10000, "param_bytes": 100},
  {"name": "d", "forward_cycles": 10000, "param_bytes": 100},
  {"name": "e", "forward_cycles": 10000, "param_bytes": 100},
  {"name": "f", "forward_cycles": 10000, "param_bytes": 100}]}`

func clusterJSON(memory int, n int) string {
	var devs []string
	for range n {
		devs = append(devs, `{"memory_bytes": `+itoa(memory)+`, "clock_hz": 1073741824}`)
	}
	return `{"devices": [` + strings.Join(devs, ",") + `], "links": [{"gbps": 1}]}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestPlanCommand(t *testing.T) {
	model := writeFile(t, "model.json", sixLayers)
	two := writeFile(t, "two.json", clusterJSON(1000, 2))
	tiny := writeFile(t, "tiny.json", clusterJSON(150, 2))
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		boundaries []int
	}{
		{"json", []string{"plan", "--model", model, "--cluster", two, "--json"}, 0, []string{`"bottleneck_cycles": 30000`, `"first_layer": 3`}, nil, []int{0, 3, 6}},
		{"table", []string{"plan", "--model", model, "--cluster", two}, 0, []string{"six: 6 layers on 2 stages", "30000 cyc", "300 B"}, nil, nil},
		{"transfer objective", []string{"plan", "--model", model, "--cluster", two, "--objective", "compute+transfer", "--json"}, 0, []string{`"objective": "compute+transfer"`}, nil, []int{0, 3, 6}},
		{"no fit", []string{"plan", "--model", model, "--cluster", tiny}, 1, nil, []string{"no plan fits", "alone need 600 B, and the 2 devices hold 300 B together"}, nil},
		{"missing model", []string{"plan", "--cluster", two}, 2, nil, []string{"--model: a model file is required"}, nil},
		{"bad objective", []string{"plan", "--model", model, "--cluster", two, "--objective", "speed"}, 2, nil, []string{`--objective: must be "compute" or "compute+transfer", got "speed"`}, nil},
		{"both clusters", []string{"plan", "--model", model, "--cluster", two, "--device", "gc200", "--stages", "2"}, 2, nil, []string{"give one of them"}, nil},
		{"unknown device", []string{"plan", "--model", model, "--device", "tpu-v9", "--stages", "2"}, 2, nil, []string{`unknown device "tpu-v9"`}, nil},
		{"preset", []string{"plan", "--model", writeFile(t, "s.json", strings.ReplaceAll(strings.ReplaceAll(sixLayers, "cycles", "seconds"), "10000", "1")), "--device", "h100-sxm", "--stages", "3", "--json"}, 0, nil, nil, []int{0, 2, 4, 6}},
		{"bad model field", []string{"plan", "--model", writeFile(t, "bad.json", `{"layers": [{"name": "a", "param_bytes": -4}]}`), "--cluster", two}, 2, nil, []string{"layers[0].param_bytes: must be >= 0, got -4"}, nil},
		{"unknown field", []string{"plan", "--model", writeFile(t, "typo.json", `{"layers": [{"name": "a", "param_byte": 4}]}`), "--cluster", two}, 2, nil, []string{`unknown field "param_byte"`}, nil},
		{"syntax", []string{"plan", "--model", writeFile(t, "syn.json", "{\n\"layers\": [,]}"), "--cluster", two}, 2, nil, []string{"line 2, column"}, nil},
		{"unknown command", []string{"plot"}, 2, nil, []string{`unknown command "plot"`}, nil},
		// 0 used to reach the estimator, whose 0 means "unset, 1": all the memory.
		{"memory proportion 0", []string{"plan", "--model", model, "--cluster", two, "--memory-proportion", "0"}, 2, nil, []string{"--memory-proportion: must be in (0, 1], got 0"}, nil},
		{"memory proportion above 1", []string{"plan", "--model", model, "--cluster", two, "--memory-proportion", "1.5"}, 2, nil, []string{"--memory-proportion: must be in (0, 1], got 1.5"}, nil},
		{"memory proportion NaN", []string{"plan", "--model", model, "--cluster", two, "--memory-proportion", "NaN"}, 2, nil, []string{"--memory-proportion: must be in (0, 1], got NaN"}, nil},
		// Three 100-byte layers per stage: 300 bytes fit 1000 * 0.3, not 1000 * 0.29.
		{"memory proportion", []string{"plan", "--model", model, "--cluster", two, "--memory-proportion", "0.3", "--json"}, 0, nil, nil, []int{0, 3, 6}},
		{"memory proportion too small", []string{"plan", "--model", model, "--cluster", two, "--memory-proportion", "0.29"}, 1, nil, []string{"no plan fits"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
			if tt.boundaries != nil {
				var res struct {
					Plan struct {
						Boundaries []int `json:"boundaries"`
						Stages     []struct {
							FirstLayer  int     `json:"first_layer"`
							LastLayer   int     `json:"last_layer"`
							Compute     float64 `json:"compute_cycles"`
							Transfer    float64 `json:"transfer"`
							MemoryBytes int64   `json:"memory_bytes"`
						} `json:"stages"`
					} `json:"plan"`
				}
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					t.Fatal(err)
				}
				p := res.Plan
				if !slices.Equal(p.Boundaries, tt.boundaries) || len(p.Stages) != len(tt.boundaries)-1 {
					t.Errorf("boundaries %v with %d stages, want %v", p.Boundaries, len(p.Stages), tt.boundaries)
				}
				for i, s := range p.Stages {
					if s.FirstLayer != p.Boundaries[i] || s.LastLayer != p.Boundaries[i+1]-1 || s.MemoryBytes != int64(100*(s.LastLayer-s.FirstLayer+1)) {
						t.Errorf("stage %d = %+v", i, s)
					}
				}
			}
		})
	}
}

// A cluster file whose devices are named after presets, without their figures: the model
// is costed on devices[0]'s preset, and each device's layer times scale by the presets'
// FLOP/s. They used to fall back to devices[0]'s speed (cluster.SpeedScale's 1 when a
// device lacks flops_per_second), planning an A100 as fast as an H100.
func TestPlanHFConfigPresetNamedCluster(t *testing.T) {
	c := writeFile(t, "c.json", `{"devices": [{"name": "h100-sxm", "memory_bytes": 85899345920}, {"name": "a100-80gb", "memory_bytes": 85899345920}], "links": [{"latency_seconds": 5e-6, "bytes_per_second": 25e9}]}`)
	code, stdout, stderr := runCLI("plan", "--hf-config", "gpt2-xl", "--cluster", c, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Plan struct {
			Boundaries []int `json:"boundaries"`
			Stages     []struct {
				Compute float64 `json:"compute_seconds"`
			} `json:"stages"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	// The H100 is ~3x faster (989 vs 312 TFLOP/s): it should take well over half the blocks.
	if n := p.Boundaries[1]; n <= p.Boundaries[2]-n+5 {
		t.Errorf("boundaries %v: the H100 and the A100 get equal shares", p.Boundaries)
	}
	// Stage 1's compute is its layers' H100 times (pipeplan estimate) times 989/312.
	_, est, _ := runCLI("estimate", "--hf-config", "gpt2-xl", "--device", "h100-sxm", "--json")
	var e struct {
		Layers []struct {
			Fwd float64 `json:"fwd_seconds"`
			Bwd float64 `json:"bwd_seconds"`
		} `json:"layers"`
	}
	if err := json.Unmarshal([]byte(est), &e); err != nil {
		t.Fatal(err)
	}
	var h100 float64
	for _, l := range e.Layers[p.Boundaries[1]:] {
		h100 += l.Fwd + l.Bwd
	}
	if want := h100 * 989 / 312; math.Abs(p.Stages[1].Compute-want) > 1e-12*want {
		t.Errorf("stage 1 (a100-80gb) compute %v s, want %v (its layers' H100 time %v s times 989/312)", p.Stages[1].Compute, want, h100)
	}

	// A device that is no preset and states no FLOP/s could not be scaled: refused.
	c = writeFile(t, "c.json", `{"devices": [{"name": "h100-sxm"}, {"name": "mine", "memory_bytes": 85899345920}], "links": [{"latency_seconds": 5e-6, "bytes_per_second": 25e9}]}`)
	code, _, stderr = runCLI("plan", "--hf-config", "gpt2-xl", "--cluster", c)
	if want := "devices[1].flops_per_second: is missing, but devices[0] states one"; code != exitBad || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitBad, want)
	}
}

// --schedule inference plans forward passes only, as --inference does: an --hf-config model
// used to be costed for AdamW training even so, each stage charged gradients and optimizer
// state. The plan is now the one --inference gives, without optimizer state.
func TestPlanHFConfigInferenceSchedule(t *testing.T) {
	args := []string{"plan", "--hf-config", "gpt2", "--device", "h100-sxm", "--stages", "2", "--schedule", "inference", "--microbatches", "2", "--json"}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, want, _ := runCLI(append(args, "--inference")...)
	if stdout != want {
		t.Errorf("--schedule inference plans otherwise than with --inference:\n%s\nwant\n%s", stdout, want)
	}
	var res struct {
		Plan struct {
			Stages []struct {
				OptimizerBytes int64 `json:"optimizer_bytes"`
			} `json:"stages"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	for i, s := range p.Stages {
		if s.OptimizerBytes != 0 {
			t.Errorf("inference plan, stage %d: %d optimizer bytes", i, s.OptimizerBytes)
		}
	}
}

// The flags build a request: --print-request prints it, and --request runs it to the same
// result; a request file takes no other planning flags.
func TestPlanRequestRoundTrip(t *testing.T) {
	args := []string{"plan", "--example", "gpt2-medium", "--device", "h100-sxm", "--stages", "4", "--dp", "2", "--microbatches", "8"}
	code, req, errs := runCLI(append(args, "--print-request")...)
	if code != exitOK {
		t.Fatalf("--print-request: exit %d, %s", code, errs)
	}
	file := writeFile(t, "request.json", req)
	_, want, _ := runCLI(append(args, "--json")...)
	code, got, errs := runCLI("plan", "--request", file, "--json")
	if code != exitOK || got != want {
		t.Errorf("--request: exit %d, %s\n%s\nwant\n%s", code, errs, got, want)
	}
	code, _, errs = runCLI("plan", "--request", file, "--stages", "2")
	if code != exitBad || !strings.Contains(errs, "--request: the request file says everything; drop --stages") {
		t.Errorf("--request with --stages: exit %d, %s", code, errs)
	}
	// A cluster of two devices and no link cannot pass activations, unless transfers are free.
	model := writeFile(t, "m.json", strings.ReplaceAll(strings.ReplaceAll(sixLayers, "cycles", "seconds"), "10000", "1"))
	nolink := writeFile(t, "c.json", `{"devices": [{"memory_bytes": 1000}, {"memory_bytes": 1000}]}`)
	code, _, errs = runCLI("plan", "--model", model, "--cluster", nolink)
	if code != exitBad || !strings.Contains(errs, "c.json: links: no link joins devices 0 and 1") {
		t.Errorf("no link: exit %d, %s", code, errs)
	}
	if code, _, errs = runCLI("plan", "--model", model, "--cluster", nolink, "--free-transfers"); code != exitOK {
		t.Errorf("no link, free transfers: exit %d, %s", code, errs)
	}
}

// The request in testdata gives the result in testdata, byte for byte (core/request and
// wasm/app check the same file natively, in node and in chromium).
func TestPlanRequestTestdata(t *testing.T) {
	want, err := os.ReadFile("../../core/request/testdata/gpt2-4xa100.result.json")
	if err != nil {
		t.Fatal(err)
	}
	code, got, errs := runCLI("plan", "--request", "../../core/request/testdata/gpt2-4xa100.json", "--json")
	if code != exitOK || got != string(want) {
		t.Errorf("exit %d, %s; output differs from core/request/testdata/gpt2-4xa100.result.json:\n%s", code, errs, got)
	}
}
