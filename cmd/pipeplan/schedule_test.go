package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeInputs writes a model of 8 equal layers (forward 1 s, backward 2 s, 1 MiB of
// parameters and of activations) and a cluster of 4 devices of memoryMiB each.
func writeInputs(t *testing.T, memoryMiB int) (modelPath, clusterPath string) {
	t.Helper()
	dir := t.TempDir()
	var layers []string
	for i := 0; i < 8; i++ {
		layers = append(layers, fmt.Sprintf(`{"name":"l%d","forward_seconds":1,"backward_seconds":2,"param_bytes":1048576,"activation_bytes":1048576}`, i))
	}
	modelPath = filepath.Join(dir, "model.json")
	clusterPath = filepath.Join(dir, "cluster.json")
	dev := fmt.Sprintf(`{"name":"d","memory_bytes":%d}`, memoryMiB<<20)
	files := map[string]string{
		modelPath:   `{"name":"eight","layers":[` + strings.Join(layers, ",") + `]}`,
		clusterPath: `{"devices":[` + strings.Repeat(dev+",", 3) + dev + `]}`,
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return modelPath, clusterPath
}

func TestPlanScheduleJSON(t *testing.T) {
	mp, cp := writeInputs(t, 64)
	code, out, errs := runCLI("plan", "--model", mp, "--cluster", cp, "--free-transfers", "--schedule", "1f1b", "--microbatches", "8", "--batch", "4", "--json", "--events")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Schedule struct {
			MakespanSeconds float64   `json:"makespan_seconds"`
			BubbleFraction  float64   `json:"bubble_fraction"`
			Throughput      float64   `json:"pipeline_samples_per_second"`
			PeakMemoryBytes []int64   `json:"peak_memory_bytes"`
			Events          [][]any   `json:"events"`
			InFlight        [][]any   `json:"in_flight"`
			MaxInFlight     []int     `json:"max_in_flight"`
			Busy            []float64 `json:"busy_seconds"`
		} `json:"schedule"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	s := p.Schedule
	// 2 layers per stage: F = 2 s, B = 4 s; (m + p - 1)(F + B) = 11 * 6 s.
	if s.MakespanSeconds != 66 || s.Throughput != 32.0/66 {
		t.Errorf("makespan %v s, throughput %v samples/s; want 66 s and 32/66", s.MakespanSeconds, s.Throughput)
	}
	if d := s.BubbleFraction - 3.0/11; d > 1e-12 || d < -1e-12 {
		t.Errorf("bubble %v, want 3/11", s.BubbleFraction)
	}
	// Stage i keeps min(4 - i, 8) microbatches: 2 MiB static + the one at work at its
	// working peak, its 2 MiB of activations (model.WorkingPeakBytes: the layers state no
	// temporaries) + (4-i-1) * 2 MiB.
	for i, b := range s.PeakMemoryBytes {
		if want := int64(2+2+2*(3-i)) << 20; b != want {
			t.Errorf("device %d peak %d, want %d", i, b, want)
		}
	}
	if len(s.Events) != 4 || len(s.Events[0]) != 16 || len(s.InFlight) != 4 {
		t.Errorf("events for %d devices (%d on device 0), in flight for %d stages; want 4 devices of 16 and 4 stages", len(s.Events), len(s.Events[0]), len(s.InFlight))
	}

	code, out, _ = runCLI("plan", "--model", mp, "--cluster", cp, "--free-transfers", "--schedule", "1f1b", "--microbatches", "8", "--json")
	if code != exitOK || strings.Contains(out, `"events"`) || !strings.Contains(out, `"makespan_seconds": 66`) {
		t.Errorf("without --events: exit %d, output:\n%s", code, out)
	}
}

func TestPlanSchedulePlain(t *testing.T) {
	mp, cp := writeInputs(t, 64)
	code, out, errs := runCLI("plan", "--model", mp, "--cluster", cp, "--free-transfers", "--schedule", "gpipe", "--microbatches", "4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"schedule gpipe, 4 microbatches of 1: pipeline 42.00 s, bubble 42.9%",
		"step 42.00 s = pipeline 42.00 s\nthroughput 0.09524 samples/s (4 samples per step on 4 devices)",
		"warning: 4 microbatches on 4 stages: the bubble wastes 43% of the step; use at least 8",
		"note: the profile does not say how many samples a microbatch holds",
		// 42 s over 96 columns: device 0's four 2 s forwards take 4.57 columns each.
		"device 0 |aaaaabbbbcccccdddd",
		"device 3 |" + strings.Repeat(".", 14) + "a",
		"a, b, ...: forward of microbatch 0, 1, ...",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanScheduleErrors(t *testing.T) {
	mp, cp := writeInputs(t, 12)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--schedule", "interleaved:2", "--microbatches", "6"}, exitBad, "microbatches: interleaved needs a multiple of the 4 devices"},
		{[]string{"--schedule", "bogus", "--microbatches", "6"}, exitBad, "--schedule: unknown schedule"},
		{[]string{"--schedule", "1f1b", "--microbatches", "0"}, exitBad, "--microbatches: must be >= 1, got 0"},
		{[]string{"--schedule", "1f1b", "--microbatches", "4", "--recompute", "selective"}, exitBad, "--recompute: selective recomputation needs an architecture"},
		{[]string{"--schedule", "1f1b", "--microbatches", "4", "--recompute", "all"}, exitBad, `--recompute: must be none, selective, selective-op, full or auto, got "all"`},
		{[]string{"--schedule", "1f1b", "--microbatches", "4", "--batch", "0"}, exitBad, "--batch: must be >= 1, got 0"},
		{[]string{"--schedule", "1f1b", "--microbatches", "4", "--inference"}, exitBad, "1f1b is a training schedule"},
		{[]string{"--schedule", "inference", "--microbatches", "4", "--recompute", "full"}, exitBad, "--recompute: applies to training: inference keeps no activations"},
		{[]string{"--inference", "--recompute", "full"}, exitBad, "--recompute: applies to training"},
		{[]string{"--inference", "--optimizer", "sgd"}, exitBad, "--optimizer: applies to training"},
		{[]string{"--zero1"}, exitBad, "--zero1: ZeRO-1 shards optimizer state over data-parallel replicas: it needs parallelism.data >= 2, got 1"},
		{[]string{"--seq", "128"}, exitBad, "--seq: describes an architecture, and goes with --hf-config"},
		{[]string{"--dtype", "fp32"}, exitBad, "--dtype: describes an architecture"},
		{[]string{"--attention", "eager"}, exitBad, "--attention: describes an architecture"},
		{[]string{"--optimizer", "sgd"}, exitBad, "--optimizer: applies to architectures and to profiles that give weights only"},
		// GPipe keeps 32 microbatches of 1 MiB per layer: no layer fits 12 MiB.
		{[]string{"--schedule", "gpipe", "--microbatches", "32"}, exitNoPlan, "no plan fits"},
	}
	for _, c := range cases {
		args := append([]string{"plan", "--model", mp, "--cluster", cp, "--free-transfers"}, c.args...)
		code, _, errs := runCLI(args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
