package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"pipeplan/core/request"
	"pipeplan/core/units"
	"reflect"
	"text/tabwriter"

	"pipeplan/core/analytic"
	"pipeplan/core/model"
)

func init() {
	register(&command{name: "estimate", summary: "estimate a HuggingFace model's per-layer costs on a device", run: runEstimate})
}

func runEstimate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("estimate", stderr)
	var f requestFlags
	f.add(fs, false)
	asJSON := fs.Bool("json", false, "print the estimate as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case f.requestFile == "" && f.hfConfig == "":
		return errors.New("--hf-config: a config.json file or bundled name is required")
	case f.requestFile == "" && f.device == "":
		return errors.New("--device: a device preset is required (see pipeplan devices)")
	}
	rq, err := f.build()
	if err != nil {
		return err
	}
	if rq.Parallelism.Pipeline == 0 && f.requestFile == "" {
		rq.Parallelism.Pipeline = 1 // the whole model on one device
	}
	o, err := request.EstimateOneStage(context.Background(), rq)
	if err != nil {
		return f.flagError(err)
	}
	if *asJSON {
		return writeJSON(stdout, o.Estimate)
	}
	printEstimate(stdout, o)
	return nil
}

// printEstimate writes a table of the layers (consecutive identical layers on one row)
// and the totals: the state and activations from the estimate, the memory, the step and
// the throughput from the one-stage plan, and core's verdict (core/request.EstimateOneStage:
// OneStage.Fits), so that they are a plan's figures.
func printEstimate(w io.Writer, o *request.OneStage) {
	r, res := o.Estimate, o.Result
	fmt.Fprintf(w, "%s on %s\n%s\n%s\n\n", r.Name, r.Device, r.Arch, r.Opts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layers\tkind\tparams\tfwd GFLOP\tfwd\tbwd\tsaved\toutput\tworking\t")
	ls := r.Layers
	for i := 0; i < len(ls); {
		// Collapse repeats of one layer, or of a pair (attention and MLP sublayers).
		period, reps := 1, 1
		for p := 1; p <= 2; p++ {
			n := 1
			for i+(n+1)*p <= len(ls) && sameRun(ls[i:i+p], ls[i+n*p:i+(n+1)*p]) {
				n++
			}
			if n > 1 && n*p > reps*period {
				period, reps = p, n
			}
		}
		for k := 0; k < period; k++ {
			l := ls[i+k]
			name := l.Name
			if reps > 1 {
				name = fmt.Sprintf("%s .. %s (x%d)", l.Name, ls[i+(reps-1)*period+k].Name, reps)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", name, l.Kind, count(l.Params), l.FwdFLOPs/1e9,
				units.Time(l.FwdSeconds, model.Seconds), units.Time(l.BwdSeconds, model.Seconds),
				units.Bytes(l.SavedActivationBytes), units.Bytes(l.OutputBytes), units.Bytes(l.TemporaryBytes))
		}
		i += reps * period
	}
	tw.Flush()
	tt := r.Total
	fmt.Fprintf(w, "\nparameters   %s", count(tt.Params))
	if tp := r.Opts.TensorParallel; tp > 1 {
		fmt.Fprintf(w, ", %s on each of %d tensor-parallel devices (the figures below are one device's)", count(tt.DeviceParams), tp)
	}
	fmt.Fprintln(w)
	copies := ""
	if tt.GradCopyBytes > 0 {
		copies = ", 16-bit gradient copies " + units.Bytes(tt.GradCopyBytes)
	}
	fmt.Fprintf(w, "state        weights %s, gradients %s%s, optimizer %s\n", units.Bytes(tt.WeightsBytes), units.Bytes(tt.GradsBytes), copies, units.Bytes(tt.OptimizerBytes))
	fmt.Fprintf(w, "activations  %s per microbatch\n", units.Bytes(tt.ActivationBytes))
	var host, device float64
	for _, l := range r.Layers {
		host += l.FwdHostSeconds + l.BwdHostSeconds
		device += l.FwdDeviceSeconds + l.BwdDeviceSeconds
	}
	if host > 0 {
		fmt.Fprintf(w, "host         %s of framework dispatch against %s of device time in the passes (a pass takes the longer)\n",
			units.Time(host, model.Seconds), units.Time(device, model.Seconds))
	}
	sec := func(v float64) string { return units.Time(v, model.Seconds) }
	if o.Fits {
		s := res.Plan.Stages[0]
		fmt.Fprintf(w, "peak memory  %s on one device (%s allocated", units.Bytes(s.MemoryBytes), units.Bytes(tt.PeakBytes))
		if tt.FrameworkBytes > 0 {
			fmt.Fprintf(w, ", with the allocator's reserve and the framework's %s", units.Bytes(tt.FrameworkBytes))
		}
		fmt.Fprintf(w, "); %s usable on %s: fits\n", units.Bytes(s.LimitBytes), r.Device)
	}
	if st := res.Step; st != nil {
		fmt.Fprintf(w, "step time    %s = %s\n", sec(st.StepSeconds), st.Breakdown)
		fmt.Fprintf(w, "pipeline     forward %s + backward %s", sec(tt.FwdSeconds), sec(tt.BwdSeconds))
		if dp := r.DataParallel; dp != nil && dp.LayerAddedSeconds > 0 {
			fmt.Fprintf(w, " + per-layer all-gather + reduce-scatter %s", sec(dp.LayerAddedSeconds))
			if dp.LayerSlowdownSeconds > 0 {
				fmt.Fprintf(w, " (of it, compute slowed by NCCL's SMs %s)", sec(dp.LayerSlowdownSeconds))
			}
		}
		fmt.Fprintln(w)
		// The whole job's (core's wire.Step.TokensPerSecond, the estimate's
		// Total.TokensPerSecond): every replica's tokens, on all its devices.
		fmt.Fprintf(w, "throughput   %s", units.Rate(st.TokensPerSecond, "tokens/s"))
		if st.Devices > 1 {
			fmt.Fprintf(w, " on all %d devices", st.Devices)
		}
		if st.MFU > 0 {
			fmt.Fprintf(w, ", MFU %.1f%%", 100*st.MFU)
		}
		fmt.Fprintln(w)
	}
	if !o.Fits {
		fmt.Fprintf(w, "peak memory  %s allocated on one device: does not fit\n", units.Bytes(tt.PeakBytes))
		printDiagnostics(w, res)
		fmt.Fprintln(w, "pipeline it: pipeplan plan --hf-config ... --stages N")
	}
	if tt.TiedAllReduceBytes > 0 {
		fmt.Fprintf(w, "tied embedding: when pipelined, first and last stage all-reduce %s of gradients per step (%s)\n",
			units.Bytes(tt.TiedAllReduceBytes), units.Time(tt.TiedAllReduceSeconds, model.Seconds))
	}
}

// sameRun reports whether two runs of layers cost the same, names aside.
func sameRun(a, b []analytic.Layer) bool {
	for i := range a {
		x, y := a[i], b[i]
		x.Name, y.Name = "", ""
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// count formats a parameter count: 1.56B, 124.4M, 3200.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
