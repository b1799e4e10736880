package calibrate

import (
	"math"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

func target(t *testing.T, fw string) analytic.Target {
	t.Helper()
	tg, err := analytic.PresetTarget("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	tg.Framework, err = cluster.LookupFramework(fw)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// measure is a synthetic profile: the estimate on a device with the true figures.
func measure(t *testing.T, a *arch.Arch, tg analytic.Target, o analytic.Options) *model.Model {
	t.Helper()
	est, err := analytic.Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	return m
}

func TestTermsReproduceDeviceTime(t *testing.T) {
	a, _ := arch.Bundled("llama-3.2-1b")
	for _, o := range []analytic.Options{{Batch: 2, Seq: 1024}, {Batch: 1, Seq: 512, DType: analytic.FP8, Recompute: analytic.Full, TensorParallel: 2}} {
		est, err := analytic.Estimate(a, target(t, cluster.Eager), o)
		if err != nil {
			t.Fatal(err)
		}
		x := toX(Figures{0.7, 0.8, 4e-6, 0, 0})
		for _, l := range est.Layers {
			for _, c := range []struct {
				terms analytic.Terms
				want  float64
			}{{l.FwdTerms, l.FwdDeviceSeconds}, {l.BwdTerms, l.BwdDeviceSeconds}} {
				got := deviceSeconds(observation{terms: c.terms}, x)
				if math.Abs(got-c.want) > 1e-9*c.want+1e-15 {
					t.Errorf("%s %s: terms give %g, the estimate %g", o, l.Name, got, c.want)
				}
			}
		}
	}
}

// The fit recovers a device and framework that differ from the presets from one
// profile, and predicts another batch size and sequence length with them.
func TestFitRecoversFigures(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	preset := target(t, cluster.Eager)
	truth := Figures{MatmulEfficiency: 0.55, MemoryEfficiency: 0.62, KernelSeconds: 2.5e-6, HostKernelSeconds: 22e-6, HostLayerSeconds: 35e-6}
	real := truth.Apply(preset)
	o := analytic.Options{Batch: 4, Seq: 1024}
	m := measure(t, a, real, o)
	est, err := analytic.Estimate(a, preset, o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fit(est, preset, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted %+v (truth %+v), rms %.3g -> %.3g in %d iterations, notes %v", r.Fitted, truth, r.RMSBefore, r.RMSAfter, r.Iterations, r.Notes)
	if r.RMSAfter > 0.02 || r.RMSAfter > r.RMSBefore/5 {
		t.Errorf("rms error %.3g after the fit (%.3g before)", r.RMSAfter, r.RMSBefore)
	}
	// Another shape, costed with the fitted figures, against the truth.
	o2 := analytic.Options{Batch: 16, Seq: 512}
	want, _ := analytic.Estimate(a, real, o2)
	got, _ := analytic.Estimate(a, r.Fitted.Apply(preset), o2)
	base, _ := analytic.Estimate(a, preset, o2)
	e := (got.Total.StepSeconds - want.Total.StepSeconds) / want.Total.StepSeconds
	e0 := (base.Total.StepSeconds - want.Total.StepSeconds) / want.Total.StepSeconds
	t.Logf("b=16 s=512 step: truth %.4g s, fitted %.4g s (%+.1f%%), preset %.4g s (%+.1f%%)", want.Total.StepSeconds, got.Total.StepSeconds, 100*e, base.Total.StepSeconds, 100*e0)
	if math.Abs(e) > 0.05 {
		t.Errorf("fitted figures predict the other shape %+.1f%% off", 100*e)
	}
}

func TestFitErrors(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	tg := target(t, cluster.Eager)
	est, _ := analytic.Estimate(a, tg, analytic.Options{Batch: 1, Seq: 128})
	for _, m := range []*model.Model{
		{Layers: []model.Layer{{Name: "x", ForwardSeconds: 1}}},
		{TimeUnit: model.Cycles, Layers: []model.Layer{{Name: "x", ForwardCycles: 1}}},
		{Layers: make([]model.Layer, len(est.Layers))},
	} {
		if _, err := Fit(est, tg, m); err == nil {
			t.Errorf("%d layers: no error", len(m.Layers))
		}
	}
}
