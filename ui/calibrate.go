package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// --- The Model panel's calibration: an architecture's device figures fitted to a
// measured profile by the planner (operation "calibrate", request.Calibrate). The page
// shows core's numbers; it computes none.

// calibration is the Model panel's calibration state.
type calibration struct {
	// Fit is the last fit, of the file File, for the architecture whose key is For.
	Fit  *wire.Calibration
	File string
	For  string
	// Err is why the last file did not calibrate; Busy is set while the planner fits.
	Err  string
	Busy bool
}

// archKey identifies the model a calibration fits: the architecture's name or config.
func archKey(a *wire.Architecture) string {
	if a == nil {
		return ""
	}
	return a.Name + "\x00" + string(a.Config)
}

// Calibrating reports whether the planner is fitting a profile.
func (a *App) Calibrating() bool { return a.calib.Busy }

// CalibrationError is why the last profile did not calibrate ("" when it did).
func (a *App) CalibrationError() string {
	if a.ModelSource() != "architecture" {
		return ""
	}
	return a.calib.Err
}

// Calibration returns the fit of the architecture shown, nil when there is none.
func (a *App) Calibration() *wire.Calibration {
	if a.ModelSource() != "architecture" || a.calib.Fit == nil || a.calib.For != archKey(a.Req.Model.Architecture) {
		return nil
	}
	return a.calib.Fit
}

// CalibrationFile is the name of the profile the fit shown was made from.
func (a *App) CalibrationFile() string { return a.calib.File }

// profileFacts are what a measured profile says of how it was measured: the request of
// the fit leaves them out for core to take from the profile.
type profileFacts struct {
	// MeasuredOn is a device preset's name or an object (model.MeasuredOn).
	MeasuredOn      json.RawMessage `json:"measured_on"`
	MicrobatchSize  int             `json:"microbatch_size"`
	TokensPerSample int             `json:"tokens_per_sample"`
}

// calibrationRequest is the request the fit is made with: the page's architecture with
// the preset's figures (none of the overrides a previous fit set), its training, and the
// page's device and microbatch size and sequence length where the profile does not state
// its own (measured_on, microbatch_size, tokens_per_sample). The whole model is costed on
// one device (the cluster's base device), so parallelism and the rest of the cluster are
// left out.
func calibrationRequest(r *wire.Request, device string, profile []byte) *wire.Request {
	c := clone(r)
	ar := c.Model.Architecture
	ar.MatmulEfficiency, ar.MemoryEfficiency = 0, 0
	ar.KernelSeconds, ar.HostKernelSeconds, ar.HostLayerSeconds = nil, nil, nil
	var facts profileFacts
	if bytes.HasPrefix(bytes.TrimSpace(profile), []byte("{")) {
		json.Unmarshal(profile, &facts) // best effort: the planner reports a bad profile
	}
	if m := string(bytes.TrimSpace(facts.MeasuredOn)); m != "" && m != "null" && m != `""` {
		device = ""
	}
	if facts.TokensPerSample > 0 {
		ar.Seq = 0
	}
	if facts.MicrobatchSize > 0 {
		c.Schedule.MicrobatchSize = 0
	}
	return &wire.Request{Version: c.Version, Model: wire.ModelSpec{Architecture: ar}, Cluster: wire.ClusterSpec{Device: device},
		Training: c.Training, Schedule: wire.Schedule{MicrobatchSize: c.Schedule.MicrobatchSize}}
}

// Calibrate fits the architecture's figures to a measured profile picked by the user (a
// native model file, as the profiler writes it), in the background. A file that does not
// fit leaves a message naming the problem; the model does not change either way.
func (a *App) Calibrate(name string, data []byte) {
	if a.ModelSource() != "architecture" {
		return
	}
	fail := func(err error) {
		a.calib.Err = fmt.Sprintf("%s was not used: %v. The model shown is unchanged.", name, err)
		a.calib.Busy = false
	}
	switch {
	case len(data) == 0:
		fail(errors.New("the file is empty"))
		return
	case len(data) > maxImportBytes:
		fail(fmt.Errorf("the file is larger than %d MiB", maxImportBytes>>20))
		return
	}
	key := archKey(a.Req.Model.Architecture)
	r := calibrationRequest(a.Req, a.Form().Device, data)
	a.calib.Busy, a.calib.Err = true, ""
	a.background(func() {
		fit := new(wire.Calibration)
		err := a.call(nil, "calibrate", fit, r, string(data))
		if err == nil && fit.Architecture == nil {
			err = errors.New("the planner's answer has no fit")
		}
		a.update(func() {
			if err != nil {
				fail(err)
				return
			}
			a.calib = calibration{Fit: fit, File: name, For: key}
		})
	})
}

// UseCalibration sets the architecture's figures to the fit's and replans.
func (a *App) UseCalibration() {
	c := a.Calibration()
	if c == nil {
		return
	}
	ar, f := a.Req.Model.Architecture, c.Architecture
	ar.MatmulEfficiency, ar.MemoryEfficiency = f.MatmulEfficiency, f.MemoryEfficiency
	ar.KernelSeconds, ar.HostKernelSeconds, ar.HostLayerSeconds = f.KernelSeconds, f.HostKernelSeconds, f.HostLayerSeconds
	a.notice(fmt.Sprintf("The architecture now uses the figures fitted to %s.", a.calib.File), false)
	a.changed(true)
}

// CalibrationInUse reports whether the request's architecture has the fit's figures.
func (a *App) CalibrationInUse() bool {
	c := a.Calibration()
	if c == nil {
		return false
	}
	ar, f := a.Req.Model.Architecture, c.Architecture
	eq := func(x, y *float64) bool { return x != nil && y != nil && *x == *y }
	return ar.MatmulEfficiency == f.MatmulEfficiency && ar.MemoryEfficiency == f.MemoryEfficiency &&
		eq(ar.KernelSeconds, f.KernelSeconds) && eq(ar.HostKernelSeconds, f.HostKernelSeconds) && eq(ar.HostLayerSeconds, f.HostLayerSeconds)
}

// FigureRow is one row of the fitted figures' table: the preset's and the fit's.
type FigureRow struct{ Name, Field, Preset, Fitted string }

// CalibrationFigures are the fit's figures beside the preset's, as text.
func (a *App) CalibrationFigures() []FigureRow {
	c := a.Calibration()
	if c == nil {
		return nil
	}
	p, f := c.Preset, c.Fitted
	eff := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	t := func(v float64) string { return units.Time(v, model.Seconds) }
	return []FigureRow{
		{"Matmul efficiency", "matmul_efficiency", eff(p.MatmulEfficiency), eff(f.MatmulEfficiency)},
		{"Memory efficiency", "memory_efficiency", eff(p.MemoryEfficiency), eff(f.MemoryEfficiency)},
		{"Device time per kernel", "kernel_seconds", t(p.KernelSeconds), t(f.KernelSeconds)},
		{"Host time per kernel", "host_kernel_seconds", t(p.HostKernelSeconds), t(f.HostKernelSeconds)},
		{"Host time per layer", "host_layer_seconds", t(p.HostLayerSeconds), t(f.HostLayerSeconds)},
	}
}

// CalibrationSummary is the fit's one-line summary: what was fitted and the RMS errors.
func (a *App) CalibrationSummary() string {
	c := a.Calibration()
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s on %s, framework %s: RMS relative error %.1f%% with the preset's figures, %.1f%% with the fitted ones (%d measured passes, %d iterations).",
		a.calib.File, c.Device, c.Framework, 100*c.RMSBefore, 100*c.RMSAfter, len(c.Residuals), c.Iterations)
}

// ResidualRow is one row of the residuals' table, its cells under residualHeads.
type ResidualRow []string

// column is a table's column head: its label and class ("num": right-aligned).
type column struct{ Label, Class string }

// The heads of the figures' and the residuals' tables.
var (
	figureHeads   = []column{{"Figure", ""}, {"Preset", "num"}, {"Fitted", "num"}}
	residualHeads = []column{{"Layer", ""}, {"Pass", ""}, {"Measured", "num"}, {"Preset", "num"}, {"Fitted", "num"}, {"Error", "num"}, {"Bound", ""}}
)

// CalibrationResiduals are the fit's per-layer residuals, as text.
func (a *App) CalibrationResiduals() []ResidualRow {
	c := a.Calibration()
	if c == nil {
		return nil
	}
	t := func(v float64) string { return units.Time(v, model.Seconds) }
	out := make([]ResidualRow, len(c.Residuals))
	for i, r := range c.Residuals {
		bound := "device"
		if r.HostBound {
			bound = "host"
		}
		out[i] = ResidualRow{r.Layer, r.Pass, t(r.Measured), t(r.Before), t(r.After), fmt.Sprintf("%+.1f%%", 100*r.Error), bound}
	}
	return out
}

// CalibrationNotes are the fit's notes (what it could not determine or clamped).
func (a *App) CalibrationNotes() []string {
	if c := a.Calibration(); c != nil {
		return c.Notes
	}
	return nil
}
