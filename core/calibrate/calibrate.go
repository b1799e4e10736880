// Package calibrate fits a device's efficiencies and a framework's host costs to a
// measured profile of a model, so that the analytic profiler (package analytic) predicts
// what that device and framework really do, for other batch sizes, sequence lengths and
// cluster sizes than the one measured.
//
// # Method
//
// The analytic profiler times each pass (forward or backward) of each layer as the longer
// of its device time and its host time. With the pass's terms (analytic.Terms) the device
// time is linear in the device's figures,
//
//	device = a * MatmulSeconds + b * MemorySeconds + c * Kernels + CommSeconds
//
// with a = 1 / matmul efficiency, b = 1 / memory efficiency, c the device's cost per
// kernel; and the host time is linear in the framework's,
//
//	host = d * Kernels + e
//
// with d the host time per kernel and e per layer and pass. Fit finds x = (a, b, c, d, e)
// by least squares on relative residuals ((predicted - measured) / measured, so a small
// layer counts as much as a large one), with two refinements:
//
//   - The max: each measured pass is assigned to the device or the host side by the
//     current x, the linear problem of each side is solved, and the assignment repeated
//     until it no longer changes (an active-set iteration; at most 50 rounds).
//   - Identifiability: one profile of identical blocks cannot separate terms that grow
//     together (FLOPs and bytes of one shape), so the fit is regularised towards the
//     preset's figures (Tikhonov / ridge regression: Lambda times the squared relative
//     change of each figure is added to the squared residuals), and a figure whose
//     solution is negative is held at 0 and the rest refitted (a small non-negative
//     least squares, Lawson and Hanson 1974, by elimination).
//
// The normal equations (A^T A + Lambda D) x = A^T t + Lambda D x0 are 5 x 5 and solved by
// Gaussian elimination with partial pivoting. Everything is deterministic.
package calibrate

import (
	"fmt"
	"math"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Lambda weighs the pull towards the preset's figures against the measured residuals:
// 1e-3 lets a handful of measured passes move every figure freely where the data
// determine it, and keeps the figures the data cannot see at the preset's.
const Lambda = 1e-3

// Figures are what Fit fits: a device's efficiencies and launch cost, and a framework's
// host costs. The host costs are stated as cluster.Framework states them, for the
// reference host (an H100 machine's x86 host), which package analytic multiplies by the
// device's cluster.Perf.HostScale (Grace: 2.75): the units of the request's
// host_kernel_seconds and host_layer_seconds, which a calibration fills.
type Figures struct {
	MatmulEfficiency  float64 `json:"matmul_efficiency"`
	MemoryEfficiency  float64 `json:"memory_efficiency"`
	KernelSeconds     float64 `json:"kernel_seconds"`
	HostKernelSeconds float64 `json:"host_kernel_seconds"`
	HostLayerSeconds  float64 `json:"host_layer_seconds"`
}

// Residual compares one layer's measured pass with the estimate before and after the fit.
type Residual struct {
	Layer string `json:"layer"`
	// Pass is forward or backward.
	Pass     string  `json:"pass"`
	Measured float64 `json:"measured_seconds"`
	// Before and After: the estimate with the preset's figures and with the fitted ones.
	Before float64 `json:"before_seconds"`
	After  float64 `json:"after_seconds"`
	// Error is (After - Measured) / Measured.
	Error float64 `json:"error"`
	// HostBound: the fitted host time is longer than the device time.
	HostBound bool `json:"host_bound"`
}

// Result is a fit.
type Result struct {
	Device    string  `json:"device"`
	Framework string  `json:"framework"`
	Preset    Figures `json:"preset"`
	Fitted    Figures `json:"fitted"`
	// Residuals, one per measured pass.
	Residuals []Residual `json:"residuals"`
	// RMSBefore and RMSAfter: the root mean square of the relative errors.
	RMSBefore float64 `json:"rms_error_before"`
	RMSAfter  float64 `json:"rms_error_after"`
	// Iterations of the host/device assignment.
	Iterations int `json:"iterations"`
	// Notes: what the fit could not determine or had to clamp.
	Notes []string `json:"notes,omitempty"`
}

// Apply returns the target with the fitted figures.
func (f Figures) Apply(t analytic.Target) analytic.Target {
	t.Perf.MatmulEfficiency = f.MatmulEfficiency
	t.Perf.MemoryEfficiency = f.MemoryEfficiency
	t.Perf.KernelSeconds = f.KernelSeconds
	t.Framework.HostKernelSeconds = f.HostKernelSeconds
	t.Framework.HostLayerSeconds = f.HostLayerSeconds
	return t
}

// observation is one measured pass and its terms, of one layer or of a group of the
// estimate's layers (Match) summed.
type observation struct {
	layer, pass string
	t           float64
	terms       analytic.Terms
	// layers counts the estimate's layers: each pays the host time per layer.
	layers float64
}

// addTerms sums two passes' terms.
func addTerms(a, b analytic.Terms) analytic.Terms {
	a.MatmulSeconds += b.MatmulSeconds
	a.MemorySeconds += b.MemorySeconds
	a.Kernels += b.Kernels
	a.CommSeconds += b.CommSeconds
	a.CommKernels += b.CommKernels
	a.HostOps += b.HostOps
	return a
}

const n = 5

// Fit fits the figures of est's target to the measured profile m, with its times in
// seconds for the same microbatch. m's layers are matched to est's by Match: one for one
// when they are as many, else by transformer block (a profile split by sublayers, or
// with layers of its own before or after the blocks), with a field error naming the
// first layer that cannot be matched. Passes measured as 0 are left out.
func Fit(est *analytic.Result, t analytic.Target, m *model.Model) (*Result, error) {
	if m.Unit() != model.Seconds {
		return nil, &model.FieldError{Path: "time_unit", Reason: "must be seconds: calibration fits times measured on a GPU"}
	}
	groups, err := Match(est, m)
	if err != nil {
		return nil, err
	}
	var obs []observation
	for _, g := range groups {
		var fwd, bwd float64
		for i := g.ProfileFirst; i < g.ProfileEnd; i++ {
			fwd += m.Layers[i].ForwardSeconds
			bwd += m.Layers[i].BackwardSeconds
		}
		var ft, bt analytic.Terms
		for i := g.EstimateFirst; i < g.EstimateEnd; i++ {
			ft = addTerms(ft, est.Layers[i].FwdTerms)
			bt = addTerms(bt, est.Layers[i].BwdTerms)
		}
		layers := float64(g.EstimateEnd - g.EstimateFirst)
		if fwd > 0 {
			obs = append(obs, observation{g.Name, "forward", fwd, ft, layers})
		}
		if bwd > 0 && !est.Opts.Inference() {
			obs = append(obs, observation{g.Name, "backward", bwd, bt, layers})
		}
	}
	if len(obs) == 0 {
		return nil, &model.FieldError{Path: "layers", Reason: "no layer states a measured time"}
	}
	preset := Figures{t.Perf.MatmulEfficiency, t.Perf.MemoryEfficiency, t.Perf.KernelSeconds,
		t.Framework.HostKernelSeconds, t.Framework.HostLayerSeconds}
	r := &Result{Device: t.Device.Name, Framework: t.Framework.Name, Preset: preset}
	// The profile's host time is the device's host's: the fit runs in its seconds (the
	// framework's figures times HostScale, as the estimate priced them) and states the
	// host figures back in the reference host's (toFigures).
	scale := t.Perf.HostScale()
	x0 := toX(preset, scale)
	x := x0
	// Start from the preset's assignment: a pass the preset already finds host-bound
	// starts on the host side (starting all on the device side, a device fit of
	// host-bound passes can stay there).
	host := make([]bool, len(obs))
	for i, o := range obs {
		host[i] = hostSeconds(o, x0) > deviceSeconds(o, x0)
	}
	for r.Iterations = 1; r.Iterations <= 50; r.Iterations++ {
		x = solve(obs, host, x0)
		changed := false
		for i, o := range obs {
			h := hostSeconds(o, x) > deviceSeconds(o, x)
			changed = changed || h != host[i]
			host[i] = h
		}
		if !changed {
			break
		}
	}
	r.Iterations = min(r.Iterations, 50)
	r.Fitted = r.toFigures(x, scale)
	var before, after float64
	for i, o := range obs {
		b := predict(o, x0)
		a := predict(o, toX(r.Fitted, scale))
		res := Residual{Layer: o.layer, Pass: o.pass, Measured: o.t, Before: b, After: a, Error: (a - o.t) / o.t, HostBound: host[i]}
		r.Residuals = append(r.Residuals, res)
		before += sq((b - o.t) / o.t)
		after += sq(res.Error)
	}
	r.RMSBefore = math.Sqrt(before / float64(len(obs)))
	r.RMSAfter = math.Sqrt(after / float64(len(obs)))
	if r.RMSAfter > PoorFit {
		r.Notes = append(r.Notes, fmt.Sprintf("a poor fit: %.0f%% rms relative error after fitting (more than %.0f%%): the profile may not be of this architecture, sequence length and microbatch size, or not of this device (a CPU run): do not plan with these figures", 100*r.RMSAfter, 100*PoorFit))
	}
	return r, nil
}

// PoorFit is the rms relative error after fitting beyond which a fit is reported as
// poor (a note): a model of five figures that misses the measured times by more than a
// quarter is not describing that run.
const PoorFit = 0.25

func sq(v float64) float64 { return v * v }

// toX maps figures to the linear coefficients (a, b, c, d, e), the host ones (d, e) in
// seconds of a host hostScale times slower than the reference (cluster.Perf.HostScale).
func toX(f Figures, hostScale float64) [n]float64 {
	return [n]float64{1 / f.MatmulEfficiency, 1 / f.MemoryEfficiency, f.KernelSeconds, f.HostKernelSeconds * hostScale, f.HostLayerSeconds * hostScale}
}

// toFigures maps coefficients back (toX's inverse, the host figures divided by
// hostScale), clamping efficiencies to (0, 1].
func (r *Result) toFigures(x [n]float64, hostScale float64) Figures {
	f := Figures{KernelSeconds: x[2], HostKernelSeconds: x[3] / hostScale, HostLayerSeconds: x[4] / hostScale}
	eff := func(name string, v, preset float64) float64 {
		if !(v > 0) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: the profile does not determine it; the preset's %.3g is kept", name, preset))
			return preset
		}
		e := 1 / v
		if e > 1 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: the fit gives %.3g, above the peak; clamped to 1 (the estimate's work is an overcount for this model)", name, e))
			return 1
		}
		return e
	}
	f.MatmulEfficiency = eff("matmul_efficiency", x[0], r.Preset.MatmulEfficiency)
	f.MemoryEfficiency = eff("memory_efficiency", x[1], r.Preset.MemoryEfficiency)
	return f
}

func row(o observation, hostSide bool) [n]float64 {
	if hostSide {
		return [n]float64{0, 0, 0, o.terms.HostOps, max(1, o.layers)}
	}
	return [n]float64{o.terms.MatmulSeconds, o.terms.MemorySeconds, o.terms.Kernels, 0, 0}
}

func deviceSeconds(o observation, x [n]float64) float64 {
	r := row(o, false)
	return dot(r, x) + o.terms.CommSeconds
}

func hostSeconds(o observation, x [n]float64) float64 { return dot(row(o, true), x) }

func predict(o observation, x [n]float64) float64 {
	return max(deviceSeconds(o, x), hostSeconds(o, x))
}

func dot(a, b [n]float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// solve is the regularised, non-negative least squares of the observations, each on its
// side: rows divided by the measured time (relative residuals), the device side's target
// less its communication time.
func solve(obs []observation, host []bool, x0 [n]float64) [n]float64 {
	fixed := [n]bool{}
	for {
		var ata [n][n]float64
		var atb [n]float64
		for i, o := range obs {
			r := row(o, host[i])
			target := o.t
			if !host[i] {
				target -= o.terms.CommSeconds
			}
			w := 1 / o.t
			for j := range n {
				for k := range n {
					ata[j][k] += r[j] * w * r[k] * w
				}
				atb[j] += r[j] * w * target * w
			}
		}
		// Tikhonov towards x0 on each figure's relative change; a figure whose preset is
		// 0 (a framework without host cost) is pulled towards 0 on the scale of a
		// microsecond.
		for j := range n {
			scale := x0[j]
			if scale == 0 {
				scale = 1e-6
			}
			ata[j][j] += Lambda / (scale * scale)
			atb[j] += Lambda * x0[j] / (scale * scale)
		}
		for j := range n {
			if fixed[j] {
				for k := range n {
					ata[j][k], ata[k][j] = 0, 0
				}
				ata[j][j], atb[j] = 1, 0
			}
		}
		x := gauss(ata, atb)
		neg := -1
		for j := range n {
			if !fixed[j] && x[j] < 0 && (neg < 0 || x[j] < x[neg]) {
				neg = j
			}
		}
		if neg < 0 {
			return x
		}
		fixed[neg] = true
	}
}

// gauss solves a x = b by Gaussian elimination with partial pivoting (a is symmetric
// positive definite here, thanks to the regularisation).
func gauss(a [n][n]float64, b [n]float64) [n]float64 {
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		if a[c][c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	var x [n]float64
	for c := n - 1; c >= 0; c-- {
		s := b[c]
		for k := c + 1; k < n; k++ {
			s -= a[c][k] * x[k]
		}
		if a[c][c] != 0 {
			x[c] = s / a[c][c]
		}
	}
	return x
}

// FrameworkOf returns the framework with fitted host costs.
func (f Figures) FrameworkOf(fw cluster.Framework) cluster.Framework {
	fw.HostKernelSeconds, fw.HostLayerSeconds = f.HostKernelSeconds, f.HostLayerSeconds
	return fw
}
