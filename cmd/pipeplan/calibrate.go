package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"pipeplan/core/analytic"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/units"
)

func init() {
	register(&command{name: "calibrate", summary: "fit a device's efficiencies and the framework's host costs to a measured profile", run: runCalibrate})
}

// calibration is calibrate's JSON output: the fit, and the model.architecture fields that
// carry the fitted figures into a planning request.
type calibration struct {
	*calibrate.Result
	Architecture request.Architecture `json:"architecture"`
}

func runCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stderr)
	var f requestFlags
	f.add(fs, false)
	asJSON := fs.Bool("json", false, "print the fit as JSON (with the model.architecture fields of a request)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case f.modelFile == "":
		return errors.New("--model: a measured profile (pipeplan's native JSON, as the profiler writes it) is required")
	case f.hfConfig == "":
		return errors.New("--hf-config: the profiled model's config.json file or bundled name is required")
	case f.requestFile != "" || f.example != "" || f.clusterFile != "":
		return errors.New("calibrate takes --model, --hf-config and --device (with the architecture's flags)")
	}
	data, err := os.ReadFile(f.modelFile)
	if err != nil {
		return err
	}
	prof, _, err := load.Model(data)
	if err != nil {
		return fmt.Errorf("--model %s: %w", f.modelFile, err)
	}
	if f.device == "" && prof.MeasuredOn != nil {
		f.device = prof.MeasuredOn.Name
	}
	if f.device == "" {
		return errors.New("--device: the device the profile was measured on is required (the profile states no measured_on)")
	}
	if f.batch == 0 {
		f.batch = prof.MicrobatchSize
	}
	if f.seq == 0 {
		f.seq = prof.TokensPerSample
	}
	profile := f.modelFile
	f.modelFile = ""
	norm, est, err := calibrationEstimate(&f)
	if err != nil {
		return err
	}
	// A profile measured by sublayers (attention and MLP apart) is matched one for one
	// with the estimate split the same way, unless --split says otherwise.
	if f.split == "" && sublayered(est, prof) {
		f.split = string(analytic.Sublayers)
		if norm, est, err = calibrationEstimate(&f); err != nil {
			return err
		}
	}
	t, err := analytic.PresetTarget(est.Device)
	if err != nil {
		return err
	}
	a := norm.Model.Architecture
	if t.Framework, err = cluster.LookupFramework(a.Framework); err != nil {
		return err
	}
	if a.MatmulEfficiency != 0 {
		t.Perf.MatmulEfficiency = a.MatmulEfficiency
	}
	if a.MemoryEfficiency != 0 {
		t.Perf.MemoryEfficiency = a.MemoryEfficiency
	}
	if a.KernelSeconds != nil {
		t.Perf.KernelSeconds = *a.KernelSeconds
	}
	r, err := calibrate.Fit(est, t, prof)
	if err != nil {
		return fmt.Errorf("--model %s: %w", profile, err)
	}
	fit := r.Fitted
	out := calibration{Result: r, Architecture: request.Architecture{Framework: a.Framework,
		MatmulEfficiency: fit.MatmulEfficiency, MemoryEfficiency: fit.MemoryEfficiency,
		KernelSeconds: &fit.KernelSeconds, HostKernelSeconds: &fit.HostKernelSeconds, HostLayerSeconds: &fit.HostLayerSeconds}}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	printCalibration(stdout, est, r)
	return nil
}

// calibrationEstimate is the estimate of the flags' architecture on one device.
func calibrationEstimate(f *requestFlags) (*request.Request, *analytic.Result, error) {
	rq, err := f.build()
	if err != nil {
		return nil, nil, err
	}
	rq.Parallelism.Pipeline = 1
	norm, err := rq.Normalize()
	if err != nil {
		return nil, nil, f.flagError(err)
	}
	est, err := request.Estimate(context.Background(), norm)
	if err != nil {
		return nil, nil, f.flagError(err)
	}
	return norm, est, nil
}

// sublayered reports whether the profile measures each of the estimate's blocks in two
// layers (calibrate.Match sums them against one).
func sublayered(est *analytic.Result, prof *model.Model) bool {
	groups, err := calibrate.Match(est, prof)
	if err != nil {
		return false
	}
	blocks := 0
	for _, g := range groups {
		if g.EstimateEnd-g.EstimateFirst == 1 && est.Layers[g.EstimateFirst].Kind == "block" {
			if g.ProfileEnd-g.ProfileFirst != 2 {
				return false
			}
			blocks++
		}
	}
	return blocks > 0
}

func printCalibration(w io.Writer, est *analytic.Result, r *calibrate.Result) {
	fmt.Fprintf(w, "%s on %s, framework %s\n%s\n\n", est.Name, r.Device, r.Framework, est.Opts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tpreset\tfitted\t")
	fmt.Fprintf(tw, "matmul efficiency\t%.3f\t%.3f\t\n", r.Preset.MatmulEfficiency, r.Fitted.MatmulEfficiency)
	fmt.Fprintf(tw, "memory efficiency\t%.3f\t%.3f\t\n", r.Preset.MemoryEfficiency, r.Fitted.MemoryEfficiency)
	us := func(s float64) string { return units.Time(s, model.Seconds) }
	fmt.Fprintf(tw, "device time per kernel\t%s\t%s\t\n", us(r.Preset.KernelSeconds), us(r.Fitted.KernelSeconds))
	fmt.Fprintf(tw, "host time per kernel\t%s\t%s\t\n", us(r.Preset.HostKernelSeconds), us(r.Fitted.HostKernelSeconds))
	fmt.Fprintf(tw, "host time per layer\t%s\t%s\t\n", us(r.Preset.HostLayerSeconds), us(r.Fitted.HostLayerSeconds))
	tw.Flush()
	fmt.Fprintf(w, "\nrms relative error: %.1f%% with the preset, %.1f%% fitted (%d iterations)\n\n", 100*r.RMSBefore, 100*r.RMSAfter, r.Iterations)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layer\tpass\tmeasured\tpreset\tfitted\terror\tbound\t")
	for _, res := range r.Residuals {
		bound := "device"
		if res.HostBound {
			bound = "host"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%s\t\n", res.Layer, res.Pass, us(res.Measured), us(res.Before), us(res.After), 100*res.Error, bound)
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "\nuse them: pipeplan plan ... --matmul-efficiency M --memory-efficiency E --kernel-us K (calibrate --json gives model.architecture fields for a request)")
}
