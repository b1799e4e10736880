package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// syntheticProfile writes the profile a device and framework with other figures than
// the presets' would measure: gpt2 at b=4, s=512 on an h100-sxm in eager PyTorch.
func syntheticProfile(t *testing.T) string {
	t.Helper()
	a, _ := arch.Bundled("gpt2")
	tg, _ := analytic.PresetTarget("h100-sxm")
	tg.Framework, _ = cluster.LookupFramework(cluster.Eager)
	truth := calibrate.Figures{MatmulEfficiency: 0.5, MemoryEfficiency: 0.6, KernelSeconds: 3e-6, HostKernelSeconds: 25e-6, HostLayerSeconds: 40e-6}
	est, err := analytic.Estimate(a, truth.Apply(tg), analytic.Options{Batch: 4, Seq: 512})
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	m.MeasuredOn = &model.MeasuredOn{Name: "h100-sxm"}
	m.MicrobatchSize, m.TokensPerSample = 4, 512
	data, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), "profile.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCalibrate(t *testing.T) {
	path := syntheticProfile(t)
	code, out, errs := runCLI("calibrate", "--model", path, "--hf-config", "gpt2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"matmul efficiency", "host time per kernel", "rms relative error", "block.11"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = runCLI("calibrate", "--model", path, "--hf-config", "gpt2", "--device", "h100-sxm", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		RMSAfter     float64 `json:"rms_error_after"`
		Architecture struct {
			HostKernelSeconds *float64 `json:"host_kernel_seconds"`
			Framework         string   `json:"framework"`
		} `json:"architecture"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.RMSAfter > 0.02 || got.Architecture.HostKernelSeconds == nil || got.Architecture.Framework != "eager" {
		t.Errorf("fit: %+v", got)
	}
}

func TestCalibrateErrors(t *testing.T) {
	path := syntheticProfile(t)
	for _, args := range [][]string{
		{"calibrate", "--hf-config", "gpt2"},
		{"calibrate", "--model", path},
		{"calibrate", "--model", path, "--hf-config", "llama-3.2-1b"},
		{"calibrate", "--model", path, "--hf-config", "gpt2", "--framework", "jit"},
	} {
		if code, _, _ := runCLI(args...); code != exitBad {
			t.Errorf("%v: exit %d, want %d", args, code, exitBad)
		}
	}
}
