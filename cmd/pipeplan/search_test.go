package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSearchJSON: --json gives the best with the request that reproduces it, every
// configuration planned and the Pareto front; plain output a table and the counts.
func TestSearchJSON(t *testing.T) {
	args := []string{"search", "--hf-config", "llama-3.2-1b", "--device", "h100-sxm", "--max-devices", "8", "--devices-per-node", "4",
		"--global-batch", "32", "--seq", "2048", "--max-batch", "4"}
	code, out, errs := runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Best      map[string]any   `json:"best"`
		Evaluated []map[string]any `json:"evaluated"`
		Pareto    []map[string]any `json:"pareto"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stages", "replicas", "tensor_parallel", "microbatch_size", "microbatches", "schedule", "recompute",
		"throughput", "tokens_per_second", "mfu", "step_seconds", "boundaries", "request"} {
		if _, ok := v.Best[k]; !ok {
			t.Errorf("best lacks %q", k)
		}
	}
	if len(v.Evaluated) == 0 || len(v.Pareto) == 0 {
		t.Errorf("%d evaluated, %d on the Pareto front", len(v.Evaluated), len(v.Pareto))
	}
	code, out, errs = runCLI(args...)
	if code != 0 || !strings.Contains(out, "best: ") || !strings.Contains(out, "pruned by bound") || strings.Contains(errs, "[") {
		t.Errorf("plain: exit %d, %s\n%s", code, errs, out)
	}
	code, _, errs = runCLI("search", "--hf-config", "llama-3.2-1b", "--device", "h100-sxm")
	if code != exitBad || !strings.Contains(errs, "--max-devices: must be between 1 and 65536, got 0") {
		t.Errorf("no --max-devices: exit %d, %s", code, errs)
	}
}
