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
func syntheticProfile(t *testing.T) string { return syntheticProfileSplit(t, analytic.Blocks, nil) }

// syntheticProfileSplit is syntheticProfile measured with the split, its layers edited.
func syntheticProfileSplit(t *testing.T, split analytic.Split, edit func(*model.Model)) string {
	t.Helper()
	a, _ := arch.Bundled("gpt2")
	tg, _ := analytic.PresetTarget("h100-sxm")
	tg.Framework, _ = cluster.LookupFramework(cluster.Eager)
	truth := calibrate.Figures{MatmulEfficiency: 0.5, MemoryEfficiency: 0.6, KernelSeconds: 3e-6, HostKernelSeconds: 25e-6, HostLayerSeconds: 40e-6}
	est, err := analytic.Estimate(a, truth.Apply(tg), analytic.Options{Batch: 4, Seq: 512, Split: split})
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	if edit != nil {
		edit(m)
	}
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

// TestCalibrateSublayers: a profile measured by sublayers under a profiler's names,
// with a loss layer of its own, is matched with the estimate split by sublayers.
func TestCalibrateSublayers(t *testing.T) {
	path := syntheticProfileSplit(t, analytic.Sublayers, func(m *model.Model) {
		for i := range m.Layers {
			m.Layers[i].Name = strings.Replace(m.Layers[i].Name, "block.", "transformer.h.", 1)
		}
		m.Layers = append(m.Layers, model.Layer{Name: "loss", ForwardSeconds: 2e-6, InputIDs: []string{m.Layers[len(m.Layers)-1].Name + ".out"}})
	})
	code, out, errs := runCLI("calibrate", "--model", path, "--hf-config", "gpt2", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		RMSAfter  float64 `json:"rms_error_after"`
		Residuals []struct {
			Layer string `json:"layer"`
		} `json:"residuals"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.RMSAfter > 0.02 || len(got.Residuals) == 0 || got.Residuals[2].Layer != "transformer.h.0.attention" {
		t.Errorf("fit: rms %v, residuals %+v", got.RMSAfter, got.Residuals)
	}
	// A layer between blocks cannot be matched: the error names it.
	bad := syntheticProfileSplit(t, analytic.Blocks, func(m *model.Model) {
		extra := model.Layer{Name: "adapter", ForwardSeconds: 1e-5, InputIDs: []string{m.Layers[3].Name + ".out"}}
		m.Layers = append(m.Layers[:4], append([]model.Layer{extra}, m.Layers[4:]...)...)
	})
	code, _, errs = runCLI("calibrate", "--model", bad, "--hf-config", "gpt2")
	if want := `layers[5].name: the profile: "block.3" is in block 3, after "adapter", which names no block`; code != exitBad || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, exitBad, want)
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
