package main

import (
	"strings"
	"testing"
)

// TestExpertFlags: --ep, --etp and --ep-overlap fill the request's expert parallelism,
// Megatron's export states it, and its errors name the flag.
func TestExpertFlags(t *testing.T) {
	mixtral := []string{"--hf-config", "mixtral-8x7b", "--device", "h100-sxm", "--devices-per-node", "8", "--seq", "2048", "--zero1"}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"export", append([]string{"export", "--format", "megatron", "--stages", "4", "--dp", "8", "--ep", "8", "--ep-overlap"}, mixtral...), 0,
			[]string{"--expert-model-parallel-size 8\n", "--expert-tensor-parallel-size 1\n", "--overlap-moe-expert-parallel-comm"}},
		{"expert tensor", append([]string{"export", "--format", "megatron", "--stages", "4", "--dp", "4", "--tp", "2", "--sp", "--ep", "2", "--etp", "1"}, mixtral...), 0,
			[]string{"--expert-model-parallel-size 2\n", "--expert-tensor-parallel-size 1\n"}},
		{"request", append([]string{"plan", "--stages", "4", "--dp", "8", "--ep", "4", "--expert-imbalance", "1.2", "--print-request"}, mixtral...), 0,
			[]string{`"expert": 4`, `"expert_imbalance": 1.2`}},
		{"not dividing", append([]string{"plan", "--stages", "4", "--dp", "4", "--ep", "8"}, mixtral...), 2,
			[]string{"--ep: expert x expert tensor parallelism (8 x 1) must divide data x context x tensor parallelism (4 x 1 x 1)"}},
		{"dense", []string{"plan", "--hf-config", "llama-3.2-1b", "--device", "h100-sxm", "--stages", "2", "--dp", "2", "--ep", "2"}, 2,
			[]string{"--ep: splits the experts of a mixture-of-experts architecture"}},
	} {
		code, out, errs := runCLI(tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d: %s", tt.name, code, tt.code, errs)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out+errs, w) {
				t.Errorf("%s: output lacks %q:\n%s%s", tt.name, w, out, errs)
			}
		}
	}
}
