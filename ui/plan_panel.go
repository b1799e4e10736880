package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// --- The Plan panel.

// SetPlanOption handles the schedule, microbatch and objective inputs.
func (a *App) SetPlanOption(field, v string) {
	v = strings.TrimSpace(v)
	switch field {
	case "schedule":
		a.Req.Schedule.Name = v
	case "microbatches", "microbatch_size":
		n, err := strconv.Atoi(v)
		if v == "" {
			n, err = 0, nil
		}
		if err != nil || n < 0 || n > 1<<16 {
			a.typed(field, v, false)
			a.notice(field+": enter a whole number", true)
			return
		}
		a.typed(field, v, true)
		if field == "microbatches" {
			a.Req.Schedule.Microbatches = n
		} else {
			a.Req.Schedule.MicrobatchSize = n
		}
	case "objective":
		a.Req.Objective = v
	case "partition":
		a.Req.Partition = v
		if v == wire.PartitionGraph {
			a.Req.Boundaries, a.BoundsText = nil, "" // the graph partition finds the split
		}
	default:
		return
	}
	a.notice("", false)
	a.changed(false)
}

// Bar is the stage bar of the current result, or nil.
func (a *App) Bar() *StageBar {
	if a.Res == nil || a.Res.Plan == nil {
		return nil
	}
	return a.bars.of(a.View, 0)
}

// OptBar is the optimum's stage bar beside a manual split, or nil.
func (a *App) OptBar() *StageBar {
	if a.Opt == nil || a.Opt.Plan == nil {
		return nil
	}
	return a.bars.of(a.OptView, 1)
}

// barMemo keeps the stage bars of the views last drawn (the plan's, the optimum's), so
// that a render draws them without placing every stage again: a view's bar costs time in
// its stages, and the page renders at every event.
type barMemo struct {
	view [2]*wire.View
	bar  [2]*StageBar
}

// of is ViewBar(v), made once per view (slot 0: the plan's, 1: the optimum's).
func (m *barMemo) of(v *wire.View, slot int) *StageBar {
	if m.view[slot] != v || m.bar[slot] == nil {
		b := ViewBar(v)
		m.view[slot], m.bar[slot] = v, &b
	}
	return m.bar[slot]
}

// Rows are the stage table's rows: its window, from StageStart.
func (a *App) Rows() []StageRow {
	if a.Res == nil || a.Res.Plan == nil {
		return nil
	}
	v := a.View
	w := a.StageWindow()
	return stagePage(a.Res.Plan, v.StageStart, v.Bottleneck, w.Start, w.End-w.Start)
}

// StageWindow is the stage table's window: from StageStart, moved back so that it
// shows a full window when the plan has fewer stages than before.
func (a *App) StageWindow() Window { return window(a.StageStart, StagePageSize, a.StageCount()) }

// Window is the rows [Start, End) of N that a table shows.
type Window struct{ Start, End, N int }

// First and Last say whether the window is the first or the last; Range names its rows
// ("stages 0–49 of 3000").
func (w Window) First() bool { return w.Start == 0 }
func (w Window) Last() bool  { return w.End >= w.N }
func (w Window) Range(rows string) string {
	return fmt.Sprintf("%s %d–%d of %d", rows, w.Start, w.End-1, w.N)
}

// window is the window of size rows from start over n rows, moved back to show a full
// window where start is past the end.
func window(start, size, n int) Window {
	start = max(0, min(start, n-size))
	return Window{start, min(n, start+size), n}
}

// StageCount is the number of stages in the plan shown, 0 without one.
func (a *App) StageCount() int {
	if a.Res == nil || a.Res.Plan == nil {
		return 0
	}
	return a.View.Stages
}

// PageStages moves the stage table's window by delta rows.
func (a *App) PageStages(delta int) {
	a.StageStart = window(a.StageWindow().Start+delta, StagePageSize, a.StageCount()).Start
	a.refetch()
}

// DeviceWindow is the per-device overrides' window: the presets of the devices from
// DeviceRange().Start.
func (a *App) DeviceWindow() []string {
	w := a.DeviceRange()
	return a.Form().Devices[w.Start:w.End]
}

// PageDevices moves the overrides' window by delta devices.
func (a *App) PageDevices(delta int) {
	n := len(a.Form().Devices)
	a.DeviceStart = window(window(a.DeviceStart, DevicePageSize, n).Start+delta, DevicePageSize, n).Start
}

// DeviceRange is the overrides' window.
func (a *App) DeviceRange() Window {
	n := 0
	if cs := a.Req.Cluster; len(cs.Document) == 0 {
		// Form's devices, counted without listing them (the panel asks for each row).
		n = cs.Count
		if d := cs.DevicesPerNode; d > 0 {
			n = max(1, (cs.Count+d-1)/d) * d
		}
	} else {
		n = len(a.Form().Devices)
	}
	return window(a.DeviceStart, DevicePageSize, n)
}

// Summary is the Plan panel's headline numbers, formatted.
type Summary struct {
	// StepLine is Step as the sum of its parts, with the communication hidden behind
	// compute named (core's spec.Step.Breakdown).
	Bottleneck, Step, StepLine, Throughput, Tokens, Bubble, Schedule, MFU string
	Stages, Layers                                                        int
	Manual                                                                bool
}

// Summarize reads a result's headline numbers.
func Summarize(r *wire.Result) Summary {
	var s Summary
	if r == nil || r.Plan == nil {
		return s
	}
	s.Stages, s.Layers = len(r.Plan.Stages), r.Model.Layers
	s.Bottleneck = units.Time(r.Plan.BottleneckSeconds, model.Seconds)
	if r.Schedule != nil {
		s.Schedule = fmt.Sprintf("%s, %s", r.Schedule.Schedule, units.Count(int64(r.Schedule.Microbatches), "microbatch"))
	}
	if st := r.Step; st != nil {
		s.Step = units.Time(st.StepSeconds, model.Seconds)
		s.StepLine = s.Step + " = " + st.Breakdown
		s.Throughput = units.Rate(st.SamplesPerSecond, "samples/s")
		if st.TokensPerSecond > 0 {
			s.Tokens = units.Rate(st.TokensPerSecond, "tokens/s")
		}
		if st.MFU > 0 {
			s.MFU = fmt.Sprintf("%.1f%%", 100*st.MFU)
		}
		s.Bubble = fmt.Sprintf("%.1f%%", 100*st.BubbleFraction)
	}
	return s
}

// Summary of the current result.
func (a *App) Summary() Summary {
	s := Summarize(a.Res)
	s.Manual = len(a.Req.Boundaries) > 0
	if s.Stages > 0 {
		s.Stages = a.View.Stages
	}
	return s
}

// OptSummary of the optimum beside a manual split.
func (a *App) OptSummary() Summary {
	s := Summarize(a.Opt)
	if s.Stages > 0 {
		s.Stages = a.OptView.Stages
	}
	return s
}

// ErrorLines are the field errors (or the message) of a bad request, one per line.
func (a *App) ErrorLines() []string {
	if a.Err == nil {
		return nil
	}
	if fes, ok := model.AsFieldErrors(a.Err); ok {
		out := make([]string, len(fes))
		for i, fe := range fes {
			out[i] = fe.Path + ": " + fe.Reason
		}
		return out
	}
	return []string{a.Err.Error()}
}

// Boundaries is the boundaries box's text.
func (a *App) Boundaries() string {
	if a.BoundsText != "" {
		return a.BoundsText
	}
	if a.Res != nil && a.Res.Plan != nil && a.Res.Plan.LayerOrder == nil {
		return joinInts(a.Res.Plan.Boundaries)
	}
	return joinInts(a.Req.Boundaries)
}

// SetBoundaries handles the boundaries box: a manual split to cost beside the optimum.
func (a *App) SetBoundaries(v string) {
	a.BoundsText = v
	b, err := ParseBoundaries(v)
	if err != nil {
		a.notice(err.Error(), true)
		return
	}
	if len(b) == 0 {
		a.ClearManual()
		return
	}
	a.Req.Boundaries, a.Req.Partition = b, "" // a manual split is of ranges
	a.notice("", false)
	a.changed(true)
	if a.Err == nil {
		a.BoundsText = ""
	}
}

// MoveBoundary moves boundary k (1..p-1) to layer l, keeping every stage non-empty.
func (a *App) MoveBoundary(k, l int) {
	if a.Res == nil || a.Res.Plan == nil {
		return
	}
	b := slices.Clone(a.Res.Plan.Boundaries)
	if k <= 0 || k >= len(b)-1 {
		return
	}
	l = max(b[k-1]+1, min(l, b[k+1]-1))
	if l == b[k] {
		return
	}
	b[k] = l
	a.Req.Boundaries, a.Req.Partition = b, ""
	a.BoundsText = ""
	a.notice("", false)
	a.changed(false)
}

// ClearManual goes back to the optimum.
func (a *App) ClearManual() {
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	a.changed(true)
}

// Diagnostics of the current result.
func (a *App) Diagnostics() []wire.Diagnostic {
	if a.Res == nil {
		return nil
	}
	return a.Res.Diagnostics
}

// --- The Schedule panel.

// Timeline of the current result, laid out once per view (timelineMemo).
func (a *App) Timeline() (Timeline, int, int) {
	if a.Res == nil {
		return Timeline{}, 0, 0
	}
	m := &a.timeline
	if m.res == a.Res {
		return m.t, m.drawn, m.total
	}
	window := 0.0
	if a.View != nil {
		window = a.View.TimelineSeconds
	}
	t, drawn, total := NewTimeline(a.Res.Schedule, window)
	if a.Res.Schedule != nil && total > 0 && a.View != nil {
		// The planner cut the schedule (spec.ViewEvents): its counts are the whole's.
		total = max(total, a.View.Events)
		t.Devices = max(t.Devices, a.Res.Schedule.Devices)
	}
	*m = timelineMemo{a.Res, t, drawn, total}
	return t, drawn, total
}

// timelineMemo keeps the timeline of the result last drawn: its operations (2,000 in a
// view of a long schedule, each with its title) took 50 to 100 ms to lay out in the
// page's WebAssembly, and the Schedule panel asks for the timeline four times a render.
type timelineMemo struct {
	res          *wire.Result
	t            Timeline
	drawn, total int
}
