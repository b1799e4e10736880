package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"pipeplan/core/analytic"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

func init() {
	register(&command{name: "calibrate", summary: "fit a device's efficiencies and the framework's host costs to a measured profile", run: runCalibrate})
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
	data, err := readInput(f.modelFile, load.MaxInputBytes)
	if err != nil {
		return err
	}
	profile := f.modelFile
	f.modelFile = "" // the profile is what is fitted to, not the request's model
	f.clusterOptional = true
	rq, err := f.build()
	if err != nil {
		return err
	}
	c, err := request.CalibrateText(context.Background(), rq, data)
	if err != nil {
		return f.flagError(profileOnFlag(err, "--model "+profile))
	}
	if *asJSON {
		return writeJSON(stdout, c)
	}
	printCalibration(stdout, c.Estimate, &c.Calibration)
	return nil
}

// profileOnFlag names the profile's fields (core's paths under "profile") by the flag
// that gave the profile: "profile.layers[5].name" becomes "--model FILE: layers[5].name".
func profileOnFlag(err error, flag string) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	out := make(model.Errors, len(es))
	for i, e := range es {
		out[i] = e
		if rest, ok := strings.CutPrefix(e.Path, "profile"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			path := flag
			if rest = strings.TrimPrefix(rest, "."); rest != "" {
				path += ": " + rest
			}
			out[i] = &model.FieldError{Path: path, Reason: e.Reason}
		}
	}
	return out
}

func printCalibration(w io.Writer, est *analytic.Result, r *wire.Calibration) {
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
