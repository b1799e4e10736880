package ops

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// truth are the figures the synthetic profile was "measured" with: not the presets'.
var truth = calibrate.Figures{MatmulEfficiency: 0.5, MemoryEfficiency: 0.6, KernelSeconds: 3e-6, HostKernelSeconds: 25e-6, HostLayerSeconds: 40e-6}

// syntheticProfile is the profile an h100-sxm in eager PyTorch with the truth's figures
// would measure of gpt2 at b=4, s=512 (as cmd/pipeplan's calibrate tests make it).
func syntheticProfile(t *testing.T) string {
	t.Helper()
	a, _ := arch.Bundled("gpt2")
	tg, _ := analytic.PresetTarget("h100-sxm")
	tg.Framework, _ = cluster.LookupFramework(cluster.Eager)
	est, err := analytic.Estimate(a, truth.Apply(tg), analytic.Options{Batch: 4, Seq: 512})
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	m.MeasuredOn = &model.MeasuredOn{Name: "h100-sxm"}
	m.MicrobatchSize, m.TokensPerSample = 4, 512
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const gpt2Request = `{"model": {"architecture": {"name": "gpt2", "framework": "eager"}}, "cluster": {"device": "h100-sxm"}}`

// The operation gives what request.Calibrate gives, and the fit finds the truth.
func TestCalibrateJSONGivesCore(t *testing.T) {
	prof := syntheticProfile(t)
	out := calibrateJSON(gpt2Request, prof)
	r, err := request.Decode([]byte(gpt2Request))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := load.Model([]byte(prof))
	if err != nil {
		t.Fatal(err)
	}
	want, err := request.Calibrate(context.Background(), r, m)
	if err != nil {
		t.Fatal(err)
	}
	if out != mustJSON(want) {
		t.Errorf("calibrateJSON differs from request.Calibrate's:\n%s", out)
	}
	var got struct {
		Fitted       calibrate.Figures    `json:"fitted"`
		Preset       calibrate.Figures    `json:"preset"`
		RMSAfter     float64              `json:"rms_error_after"`
		Residuals    []calibrate.Residual `json:"residuals"`
		Architecture wire.Architecture    `json:"architecture"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.RMSAfter > 0.02 || len(got.Residuals) == 0 || got.Preset == got.Fitted {
		t.Errorf("fit: rms %v, %d residuals, fitted %+v", got.RMSAfter, len(got.Residuals), got.Fitted)
	}
	a := got.Architecture
	if a.Name != "gpt2" || a.MatmulEfficiency != got.Fitted.MatmulEfficiency || a.HostKernelSeconds == nil ||
		math.Abs(*a.HostKernelSeconds-got.Fitted.HostKernelSeconds) > 0 {
		t.Errorf("architecture: %+v", a)
	}
	// Through Do, as the worker calls it.
	if d, err := Do(context.Background(), "calibrate", []string{gpt2Request, prof}, nil, nil); err != nil || d != out {
		t.Errorf("Do: %v, %.200s", err, d)
	}
}

// Bad input is an error object naming the field: the profile's under "profile".
func TestCalibrateJSONErrors(t *testing.T) {
	prof := syntheticProfile(t)
	for _, c := range []struct {
		name, req, prof, path, msg string
	}{
		{"no architecture", `{"model": {"example": "gpt2-small"}}`, prof, "model.architecture", "is required"},
		{"bad request", `{"model": {"architecture": {"name": "nope"}}}`, prof, "model.architecture.name", ""},
		{"no profile", gpt2Request, "", "profile", "is required"},
		{"not JSON", gpt2Request, "this is not a profile", "profile", "profile"},
		{"cycles", gpt2Request, `{"time_unit": "cycles", "layers": [{"name": "a", "forward_seconds": 1}]}`, "profile", "profile"},
		{"duplicate", gpt2Request, strings.Replace(prof, `"block.3"`, `"block.7"`, 1), "profile.layers[8].name", "profile.layers[8].name: "},
		{"another model", `{"model": {"architecture": {"name": "gpt2-medium"}}}`, prof, "profile.layers", "profile.layers"},
	} {
		var e apiError
		if err := json.Unmarshal([]byte(calibrateJSON(c.req, c.prof)), &e); err != nil {
			t.Fatal(err)
		}
		if e.Error == "" || len(e.Fields) == 0 || !strings.HasPrefix(e.Fields[0].Path, c.path) || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
}
