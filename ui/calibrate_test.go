package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// syntheticProfile is what an h100-sxm in eager PyTorch with other figures than the
// presets' would measure of gpt2 at b=4, s=512 (as cmd/pipeplan's calibrate tests make it).
func syntheticProfile(t *testing.T) []byte {
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
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCalibrate(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	a.SetTab("model")
	if strings.Contains(render(t, a), `id="calibrate"`) {
		t.Error("an example offers calibration")
	}
	a.PickModel("arch:gpt2")
	a.SetKnob("seq", "1024") // the page's knobs differ from the profile's: the profile's are used
	a.SetKnob("batch", "2")
	a.Req.Model.Architecture.Framework = "eager"
	before, _ := EncodeFragment(a.Req)
	a.Calibrate("bad.json", []byte(`{"time_unit": "seconds", "layers": [{"name": "x", "forward_seconds": -1}]}`))
	if e := a.CalibrationError(); !strings.Contains(e, "bad.json was not used") || !strings.Contains(e, "forward_seconds") || a.Calibration() != nil {
		t.Errorf("a bad profile: %q", e)
	}
	if after, _ := EncodeFragment(a.Req); after != before {
		t.Error("a bad profile changed the request")
	}
	a.Calibrate("profile.json", syntheticProfile(t))
	c := a.Calibration()
	if c == nil || a.CalibrationError() != "" {
		t.Fatalf("no fit: %q", a.CalibrationError())
	}
	if c.RMSAfter > 0.02 || c.Device != "h100-sxm" || c.Framework != "eager" || len(a.CalibrationResiduals()) != len(c.Residuals) {
		t.Errorf("fit: %+v", *c)
	}
	html := render(t, a)
	for _, want := range []string{"Calibrate against a measured profile", "Matmul efficiency", "Host time per layer", "Use the fitted figures", "block.11", "RMS relative error"} {
		if !strings.Contains(html, want) {
			t.Errorf("the panel lacks %q", want)
		}
	}
	if after, _ := EncodeFragment(a.Req); after != before || a.CalibrationInUse() {
		t.Error("fitting changed the request")
	}
	a.UseCalibration()
	ar := a.Req.Model.Architecture
	f := c.Fitted
	if ar.MatmulEfficiency != f.MatmulEfficiency || ar.MemoryEfficiency != f.MemoryEfficiency || *ar.KernelSeconds != f.KernelSeconds ||
		*ar.HostKernelSeconds != f.HostKernelSeconds || *ar.HostLayerSeconds != f.HostLayerSeconds || ar.Seq != 1024 {
		t.Errorf("the architecture after Use: %+v", ar)
	}
	if !a.CalibrationInUse() || a.Err != nil {
		t.Errorf("in use %v, err %v", a.CalibrationInUse(), a.Err)
	}
	r, err := DecodeFragment(h.kept[len(h.kept)-1], FlateInflate)
	if err != nil || r.Model.Architecture.HostLayerSeconds == nil || *r.Model.Architecture.HostLayerSeconds != f.HostLayerSeconds {
		t.Errorf("the kept request: %v", err)
	}
	// Refitting compares with the preset, not with the figures in use.
	a.Calibrate("profile.json", syntheticProfile(t))
	if a.Calibration().Preset != c.Preset {
		t.Errorf("refit's preset: %+v", a.Calibration().Preset)
	}
	// Another architecture has no fit.
	a.PickModel("arch:gpt2-medium")
	if a.Calibration() != nil {
		t.Error("the fit of gpt2 shows for gpt2-medium")
	}
}
