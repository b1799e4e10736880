package main

import (
	"fmt"
	"io"
	"pipeplan/core/units"
	"strings"
	"text/tabwriter"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// printSchedule writes a summary of the simulated step: time, bubble, throughput, memory
// per device, advice, and a timeline for small pipelines.
func printSchedule(w io.Writer, res *wire.Result) {
	s := res.Schedule
	if s == nil {
		return
	}
	re := ""
	if s.Recompute {
		re = ", recomputing activations"
	}
	fmt.Fprintf(w, "\nschedule %s, %s of %d%s: pipeline %s, bubble %.1f%%\n\n",
		s.Schedule, units.Count(int64(s.Microbatches), "microbatch"), res.Model.MicrobatchSize, re, units.Time(s.MakespanSeconds, model.Seconds), 100*s.BubbleFraction)
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
	if s.Devices <= 8 && s.Microbatches <= 16 && s.Events != nil {
		fmt.Fprintln(w)
		timeline(w, s, 96)
	}
}

// timeline draws the events as one row of width columns per device: forward of microbatch
// 0, 1, ... as a, b, ...; its backward as A, B, ...; ZB-H1's weight gradient as ~, a dummy
// input as ?, idle as '.'.
func timeline(w io.Writer, s *wire.ScheduleResult, width int) {
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
			case e.Kind == wire.OpForward:
				g = 'a' + byte(e.Microbatch%26)
			case e.Kind == wire.OpBackward:
				g = 'A' + byte(e.Microbatch%26)
			case e.Kind == wire.OpWeightGrad:
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
