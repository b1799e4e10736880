package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

func init() {
	register(&command{name: "plan", summary: "find the optimal split of a model into pipeline stages, and simulate its step", run: runPlan})
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	var f requestFlags
	f.add(fs, true)
	asJSON := fs.Bool("json", false, "print the result as JSON (docs/request.md)")
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := f.build()
	if err != nil {
		return err
	}
	if f.printRequest {
		n, err := request.Normalize(r)
		if err != nil {
			return f.flagError(err)
		}
		return writeJSON(stdout, n)
	}
	if !*asJSON {
		r.Events = true // the plain output draws the timeline
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		return f.flagError(err)
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		printResult(stdout, res)
	}
	if !res.Feasible {
		return noPlanError{fmt.Errorf("%s", firstError(res))}
	}
	return nil
}

// firstError is the message of the result's first error diagnostic.
func firstError(res *wire.Result) string {
	if d := res.FirstError(); d != nil {
		return d.Message
	}
	return "no plan fits"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printResult writes the plan as a table with a row per stage, the simulated step and the
// diagnostics.
func printResult(w io.Writer, res *wire.Result) {
	p := res.Plan
	if p == nil {
		printDiagnostics(w, res)
		return
	}
	unit := model.TimeUnit(res.Model.TimeUnit)
	if res.Model.Name != "" {
		fmt.Fprintf(w, "%s: ", res.Model.Name)
	}
	fmt.Fprintf(w, "%s on %s, objective %s, bottleneck %s\n\n",
		units.Count(int64(res.Model.Layers), "layer"), units.Count(int64(len(p.Stages)), "stage"), p.Objective, units.Time(p.Bottleneck(), unit))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tlayers\tfirst .. last\ttime\ttransfer\tmemory\tcapacity\tused\t")
	for i := range p.Stages {
		s := &p.Stages[i]
		compute, transfer := s.Time(res.Model.TimeUnit)
		used := 100 * float64(s.MemoryBytes) / float64(s.LimitBytes)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t\n", i, ellipsis(layerRuns(p.StageLayers(i)), 24),
			ellipsis(s.FirstName+" .. "+s.LastName, 40), units.Time(compute, unit), units.Time(transfer, unit),
			units.Bytes(s.MemoryBytes), units.Bytes(s.LimitBytes), used)
	}
	tw.Flush()
	printRecompute(w, p)
	printSchedule(w, res)
	printStep(w, res)
	printDiagnostics(w, res)
}

// printRecompute writes what each stage recomputes under per-layer recomputation.
func printRecompute(w io.Writer, p *wire.Plan) {
	if len(p.Stages) == 0 || p.Stages[0].Recompute == nil {
		return
	}
	fmt.Fprintln(w, "\nrecomputed per stage (recompute auto):")
	for i, s := range p.Stages {
		fmt.Fprintf(w, "  stage %d: %s\n", i, s.Recompute.Summary)
	}
}

// layerRuns writes ascending layer indices as runs: "0-7", or "0-12,14,17-20" for a
// stage of a graph split that is not contiguous in the model's layer order.
func layerRuns(layers []int) string {
	var b strings.Builder
	for _, r := range wire.Runs(layers) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", r[0], r[1])
	}
	return b.String()
}

// printStep writes the whole step and the throughput.
func printStep(w io.Writer, res *wire.Result) {
	st := res.Step
	if st == nil {
		return
	}
	sec := func(v float64) string { return units.Time(v, model.Seconds) }
	fmt.Fprintf(w, "\nstep %s = %s", sec(st.StepSeconds), st.Breakdown)
	fmt.Fprintf(w, "\nthroughput %s", units.Rate(st.SamplesPerSecond, "samples/s"))
	if st.TokensPerSecond > 0 {
		fmt.Fprintf(w, ", %s", units.Rate(st.TokensPerSecond, "tokens/s"))
	}
	fmt.Fprintf(w, " (%s per step on %s)", units.Count(int64(st.SamplesPerStep), "sample"), units.Count(int64(st.Devices), "device"))
	if st.MFU > 0 {
		fmt.Fprintf(w, ", MFU %.1f%%", 100*st.MFU)
	}
	fmt.Fprintln(w)
}

// printDiagnostics writes the diagnostics, errors first.
func printDiagnostics(w io.Writer, res *wire.Result) {
	if len(res.Diagnostics) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, sev := range []string{wire.Error, wire.Warning, wire.Note} {
		for _, d := range res.Diagnostics {
			if d.Severity != sev {
				continue
			}
			msg := d.Message
			if d.Suggestion != "" && !strings.Contains(msg, d.Suggestion) {
				msg += ": " + d.Suggestion
			}
			fmt.Fprintf(w, "%s: %s\n", d.Severity, msg)
		}
	}
}

func ellipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
