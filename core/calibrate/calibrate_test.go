package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

func target(t *testing.T, fw string) analytic.Target {
	t.Helper()
	return deviceTarget(t, "h100-sxm", fw)
}

// deviceTarget is a device preset's target under framework mode fw.
func deviceTarget(t *testing.T, device, fw string) analytic.Target {
	t.Helper()
	tg, err := analytic.PresetTarget(device)
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
		x := toX(Figures{0.7, 0.8, 4e-6, 0, 0}, 1)
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
// profile, and predicts another batch size and sequence length with them. The host
// figures are recovered as the framework states them, for an H100 machine's x86 host,
// also on a device whose host is slower (GB200's Grace, cluster.Perf.HostSecondsScale
// 2.75): the profile's host time is theirs times the scale, and the fitted figures,
// planned on that device again, are scaled once, not twice.
func TestFitRecoversFigures(t *testing.T) {
	for _, device := range []string{"h100-sxm", "gb200"} {
		t.Run(device, func(t *testing.T) { fitRecoversFigures(t, device) })
	}
}

func fitRecoversFigures(t *testing.T, device string) {
	a, _ := arch.Bundled("gpt2")
	preset := deviceTarget(t, device, cluster.Eager)
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
	if h := r.Fitted.HostKernelSeconds; math.Abs(h-truth.HostKernelSeconds) > 0.05*truth.HostKernelSeconds {
		t.Errorf("host_kernel_seconds fitted %.3g, truth %.3g (the reference host's)", h, truth.HostKernelSeconds)
	}
	if h := r.Preset.HostKernelSeconds; h != preset.Framework.HostKernelSeconds {
		t.Errorf("preset host_kernel_seconds %.3g, the framework states %.3g", h, preset.Framework.HostKernelSeconds)
	}
	if r.RMSBefore == 0 {
		t.Errorf("rms error before the fit is 0: the preset is the truth?")
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

// rename gives a profile's layers other names (a profiler's module paths).
func rename(m *model.Model, f func(i int, name string) string) *model.Model {
	c := *m
	c.Layers = append([]model.Layer(nil), m.Layers...)
	for i := range c.Layers {
		c.Layers[i].Name = f(i, c.Layers[i].Name)
	}
	return &c
}

// TestFitMatchesByBlock: a profile measured by sublayers, under a profiler's names, with
// layers of its own before and after the blocks, is matched by block number against the
// block-split estimate, and the fit recovers the figures.
func TestFitMatchesByBlock(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	preset := target(t, cluster.Eager)
	truth := Figures{MatmulEfficiency: 0.55, MemoryEfficiency: 0.62, KernelSeconds: 2.5e-6, HostKernelSeconds: 22e-6, HostLayerSeconds: 35e-6}
	o := analytic.Options{Batch: 4, Seq: 1024}
	sub := o
	sub.Split = analytic.Sublayers
	m := measure(t, a, truth.Apply(preset), sub)
	// HuggingFace module paths: transformer.h.3.attn, ...; the embedding measured as
	// two layers (wte, then wpe with dropout), the head with a separate loss.
	m = rename(m, func(i int, name string) string {
		name = strings.Replace(name, "block.", "transformer.h.", 1)
		return strings.NewReplacer(".attention", ".attn", "embedding", "transformer.wte", "final_norm", "transformer.ln_f").Replace(name)
	})
	wpe := m.Layers[0]
	wpe.Name, wpe.ForwardSeconds, wpe.BackwardSeconds = "transformer.wpe", wpe.ForwardSeconds/2, wpe.BackwardSeconds/2
	m.Layers[0].ForwardSeconds, m.Layers[0].BackwardSeconds = wpe.ForwardSeconds, wpe.BackwardSeconds
	loss := model.Layer{Name: "loss", ForwardSeconds: 1e-6}
	m.Layers = append(append([]model.Layer{m.Layers[0], wpe}, m.Layers[1:]...), loss)

	est, err := analytic.Estimate(a, preset, o)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := Match(est, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2+a.NumLayers {
		t.Errorf("%d groups, want the embedding, %d blocks and the head", len(groups), a.NumLayers)
	}
	if g := groups[1]; g.Name != "transformer.h.0.attn .. transformer.h.0.mlp" || g.EstimateEnd-g.EstimateFirst != 1 {
		t.Errorf("block 0's group %+v", g)
	}
	// Against the estimate split the same way (what pipeplan calibrate does for such a
	// profile), the blocks' layers match one for one, and the fit recovers the figures.
	subEst, _ := analytic.Estimate(a, preset, sub)
	groups, err = Match(subEst, m)
	if err != nil {
		t.Fatal(err)
	}
	if g := groups[1]; g.ProfileEnd-g.ProfileFirst != 1 || g.Name != "transformer.h.0.attn" {
		t.Errorf("sublayer against sublayer: group %+v", g)
	}
	r, err := Fit(subEst, preset, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted %+v (truth %+v), rms %.3g -> %.3g", r.Fitted, truth, r.RMSBefore, r.RMSAfter)
	// Most of these passes are host-bound: the host figures are determined, the
	// device's less so; the times are reproduced.
	if r.RMSAfter > 0.02 || math.Abs(r.Fitted.HostKernelSeconds-truth.HostKernelSeconds) > 0.05*truth.HostKernelSeconds {
		t.Errorf("rms error %.3g after the fit, host time per kernel %.3g (truth %.3g)", r.RMSAfter, r.Fitted.HostKernelSeconds, truth.HostKernelSeconds)
	}
	if got := r.Residuals[0].Layer; got != "transformer.wte .. transformer.wpe" {
		t.Errorf("first residual %q, want the embedding's two layers", got)
	}
}

// TestMatchErrors: a profile that cannot be matched gets an error naming its first
// mismatch.
func TestMatchErrors(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	tg := target(t, cluster.Eager)
	est, _ := analytic.Estimate(a, tg, analytic.Options{Batch: 1, Seq: 128})
	blocks := func(names ...string) *model.Model {
		m := &model.Model{}
		for _, n := range names {
			m.Layers = append(m.Layers, model.Layer{Name: n, ForwardSeconds: 1e-3})
		}
		return m
	}
	twelve := func(prefix string, from int) []string {
		var s []string
		for i := range 12 {
			s = append(s, fmt.Sprintf("%s.%d", prefix, i+from))
		}
		return s
	}
	between := append(append([]string{"wte"}, twelve("h", 0)[:6]...), "extra")
	between = append(between, twelve("h", 0)[6:]...)
	swapped := twelve("h", 0)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	for _, tt := range []struct {
		m    *model.Model
		want string
	}{
		{blocks("a", "b"), `layers: the profile has 2 layers, the architecture 15 (embedding, ..., lm_head), and no layer name numbers a transformer block`},
		{blocks(twelve("h", 0)[:10]...), `layers[0].name: the profile numbers 10 transformer blocks ("h.0" to "h.9"), the architecture has 12`},
		{blocks(between...), `layers[8].name: the profile: "h.6" is in block 6, after "extra", which names no block`},
		{blocks(swapped...), `layers[3].name: the profile: "h.4" is in block 4, after block 2`},
		{blocks(twelve("h", 2)...), `layers[0].name: the profile: the first block is 2 ("h.2")`},
	} {
		_, err := Fit(est, tg, tt.m)
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
	// Numbered from 1 (Megatron's layer numbers) is as good as from 0.
	if _, err := Fit(est, tg, blocks(twelve("layers", 1)...)); err != nil {
		t.Errorf("blocks numbered from 1: %v", err)
	}
}

// TestPoorFitIsNoted: a profile that no figures describe (each layer's times scaled by a
// factor of its own between 1/8 and 8, as a run on another device or of another model
// looks) gets a note saying the fit is poor; a good fit gets none.
func TestPoorFitIsNoted(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	preset := target(t, cluster.Eager)
	o := analytic.Options{Batch: 4, Seq: 1024}
	est, err := analytic.Estimate(a, preset, o)
	if err != nil {
		t.Fatal(err)
	}
	good := measure(t, a, preset, o)
	bad := measure(t, a, preset, o)
	for i := range bad.Layers {
		f := math.Pow(8, math.Sin(float64(7*i+3))) // deterministic, spread over [1/8, 8]
		bad.Layers[i].ForwardSeconds *= f
		bad.Layers[i].BackwardSeconds /= f
	}
	poor := func(r *Result) bool {
		return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "a poor fit: ") })
	}
	r, err := Fit(est, preset, good)
	if err != nil || poor(r) || r.RMSAfter > PoorFit {
		t.Errorf("a good fit: rms %.3g, notes %v, %v", r.RMSAfter, r.Notes, err)
	}
	r, err = Fit(est, preset, bad)
	if err != nil || r.RMSAfter <= PoorFit || !poor(r) {
		t.Errorf("a poor fit: rms %.3g, notes %v, %v", r.RMSAfter, r.Notes, err)
	}
}
