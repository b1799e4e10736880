package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"pipeplan/core/units"
	"strings"
	"text/tabwriter"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// scheduleFlags choose a pipeline schedule for a plan.
// Recomputation and the microbatch size come from the shared --recompute and --batch.
type scheduleFlags struct {
	name         string
	microbatches int
	events       bool
}

func (f *scheduleFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "schedule", "", "plan for a pipeline `schedule` and simulate it: gpipe, 1f1b, interleaved:V, zb-h1, ipu, overlap or inference")
	fs.IntVar(&f.microbatches, "microbatches", 0, "microbatches per step, with --schedule")
	fs.BoolVar(&f.events, "events", false, "with --json, include the schedule's timeline (events per device, in-flight microbatches)")
}

// inference reports whether --schedule names the inference schedule.
func (f *scheduleFlags) inference() bool {
	c, err := schedule.Parse(f.name)
	return f.name != "" && err == nil && c.Kind == schedule.Inference
}

// apply sets the plan options from the flags. Plain output keeps the events to draw a
// timeline; JSON keeps them only with --events.
//
// recompute is --recompute: for a measured profile "full" stashes only each stage's input
// between forward and backward; with --hf-config the analytic model already keeps only
// what recomputation keeps, layer by layer. batch is --batch, the samples per microbatch.
func (f *scheduleFlags) apply(opt *plan.Options, asJSON bool, recompute string, batch int, analytic bool) error {
	full := false
	switch recompute {
	case "none":
	case "full":
		full = !analytic
	case "selective":
		if !analytic {
			return errors.New("--recompute: selective recomputation needs --hf-config (a measured profile does not say which activations are cheap to rebuild); use none or full")
		}
	default:
		return fmt.Errorf("--recompute: must be none, selective or full, got %q", recompute)
	}
	if recompute != "none" && opt.Estimate.Inference {
		return fmt.Errorf("--recompute: the plan is for inference, which has no backward pass to recompute activations for; use --recompute none")
	}
	opt.Estimate.Recompute = full
	if f.name == "" {
		switch {
		case f.microbatches != 0:
			return errors.New("--microbatches: goes with --schedule")
		case f.events:
			return errors.New("--events: goes with --schedule")
		}
		return nil
	}
	c, err := schedule.Parse(f.name)
	if err != nil {
		return fmt.Errorf("--schedule: %w", err)
	}
	if f.microbatches < 1 {
		return fmt.Errorf("--microbatches: must be >= 1 with --schedule, got %d", f.microbatches)
	}
	if batch < 1 {
		return fmt.Errorf("--batch: must be >= 1, got %d", batch)
	}
	c.Microbatches, c.Recompute = f.microbatches, full
	opt.Schedule = &plan.ScheduleOptions{Config: c, MicrobatchSize: batch, Events: f.events || !asJSON}
	return nil
}

// printSchedule writes a summary of the simulated step: time, bubble, throughput, memory
// per device, advice, and a timeline for small pipelines.
func printSchedule(w io.Writer, p *plan.Plan) {
	s := p.Schedule
	if s == nil {
		return
	}
	re := ""
	if s.Recompute {
		re = ", recomputing activations"
	}
	fmt.Fprintf(w, "\nschedule %s, %d microbatches%s: step %s, bubble %.1f%%, throughput %.4g samples/s\n\n",
		s.Schedule, s.Microbatches, re, units.Time(s.MakespanSeconds, model.Seconds), 100*s.BubbleFraction, s.Throughput)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "device\tstages\tin flight\tpeak memory\tcapacity\tused\tbusy\t")
	for d := 0; d < s.Devices; d++ {
		var stages, flight []string
		for st, dev := range s.StageDevices {
			if dev == d {
				stages = append(stages, fmt.Sprint(st))
				flight = append(flight, fmt.Sprint(s.MaxInFlight[st]))
			}
		}
		limit, used := "-", "-"
		if d < len(s.LimitBytes) && s.LimitBytes[d] > 0 {
			limit = units.Bytes(s.LimitBytes[d])
			used = fmt.Sprintf("%.0f%%", 100*float64(s.PeakMemoryBytes[d])/float64(s.LimitBytes[d]))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t\n", d, strings.Join(stages, ","), strings.Join(flight, "+"),
			units.Bytes(s.PeakMemoryBytes[d]), limit, used, 100*s.BusySeconds[d]/s.MakespanSeconds)
	}
	tw.Flush()
	for _, a := range s.Advice {
		fmt.Fprintf(w, "advice: %s\n", a)
	}
	if s.Devices <= 8 && s.Microbatches <= 16 && s.Events != nil {
		fmt.Fprintln(w)
		timeline(w, s, 96)
	}
}

// timeline draws the events as one row of width columns per device: forward of microbatch
// 0, 1, ... as a, b, ...; its backward as A, B, ...; ZB-H1's weight gradient as ~, a dummy
// input as ?, idle as '.'.
func timeline(w io.Writer, s *schedule.Result, width int) {
	if s.MakespanSeconds <= 0 {
		return
	}
	col := func(t float64) int { return min(width, int(t/s.MakespanSeconds*float64(width)+0.5)) }
	for d, evs := range s.Events {
		row := []byte(strings.Repeat(".", width))
		for _, e := range evs {
			g := byte('?')
			switch {
			case e.Microbatch < 0:
			case e.Kind == schedule.Forward:
				g = 'a' + byte(e.Microbatch%26)
			case e.Kind == schedule.Backward:
				g = 'A' + byte(e.Microbatch%26)
			case e.Kind == schedule.WeightGrad:
				g = '~'
			}
			a, b := col(e.StartSeconds), col(e.EndSeconds)
			if a == b && a < width && row[a] == '.' && e.EndSeconds > e.StartSeconds {
				row[a] = g
			}
			for k := a; k < b; k++ {
				row[k] = g
			}
		}
		fmt.Fprintf(w, "device %d |%s|\n", d, row)
	}
	fmt.Fprintf(w, "%9s 0%s%s\n", "", strings.Repeat(" ", max(0, width-len(units.Time(s.MakespanSeconds, model.Seconds)))), units.Time(s.MakespanSeconds, model.Seconds))
	fmt.Fprintln(w, "a, b, ...: forward of microbatch 0, 1, ...; A, B, ...: its backward; ~: weight gradient; ?: dummy input; .: idle")
}
