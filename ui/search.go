package ui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// Searcher is the Search panel: the knobs to fix or search, a search running (with its
// progress and Cancel), and its report. The search is core's (core/search over
// core/request); the panel only builds its knobs and draws its report.
type Searcher struct {
	// Fixed knobs as typed or chosen ("" searches the knob, or leaves it to core), by
	// the query's names (wire.SearchKnobs; the Search panel's rows, knobRows' group
	// "search"). They are kept with the request in the URL and localStorage (Fragment).
	Knobs map[string]string

	Running  bool
	Progress wire.SearchProgress
	// Report is the search's answer (core/wire.SearchAnswer, the one JSON of every search).
	Report *wire.SearchAnswer
	// Cancelled is set when the user stopped the search; Err when it failed.
	Cancelled bool
	Err       string
	// SortBy is the results table's column; Asc its direction.
	SortBy string
	Asc    bool

	// query is the running or last search's query (JSON), which Apply asks the planner
	// about.
	query  string
	cancel func()
}

// SearchKnob is a knob's text.
func (a *App) SearchKnob(id string) string {
	if v, ok := a.Search.Knobs[id]; ok {
		return v
	}
	if id == "max_devices" {
		return strconv.Itoa(a.deviceCount())
	}
	return ""
}

// deviceCount is the devices of the cluster the user set up: what the search starts from.
func (a *App) deviceCount() int {
	f := a.Form()
	if f.FromFile || len(f.Devices) == 0 {
		return 8
	}
	return len(f.Devices)
}

// SetSearchKnob handles a knob's input, and keeps it with the request (Fragment).
func (a *App) SetSearchKnob(id, v string) {
	if a.Search.Knobs == nil {
		a.Search.Knobs = map[string]string{}
	}
	if v = strings.TrimSpace(v); v == "" {
		delete(a.Search.Knobs, id)
	} else {
		a.Search.Knobs[id] = v
	}
	a.keep(false)
}

// knobs reads the knobs; errors name the knob.
func (a *App) knobs() (wire.SearchKnobs, error) {
	var k wire.SearchKnobs
	num := func(id string, dst *int) error {
		v := a.SearchKnob(id)
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: enter a whole number of at least 1, or leave it empty to search it", id)
		}
		*dst = n
		return nil
	}
	for _, f := range []struct {
		id  string
		dst *int
	}{
		{"max_devices", &k.MaxDevices}, {"stages", &k.Stages}, {"replicas", &k.Replicas}, {"tensor", &k.Tensor},
		{"context", &k.Context}, {"expert", &k.Expert}, {"microbatch_size", &k.MicrobatchSize}, {"global_batch", &k.GlobalBatch},
		{"shard_group", &k.ShardGroup}, {"microbatches", &k.Microbatches},
	} {
		if err := num(f.id, f.dst); err != nil {
			return k, err
		}
	}
	if k.MaxDevices == 0 {
		return k, fmt.Errorf("max_devices: say how many devices are at hand")
	}
	k.Schedule, k.Recompute = a.SearchKnob("schedule"), a.SearchKnob("recompute")
	k.Reshard, k.ContextMethod = a.SearchKnob("reshard"), a.SearchKnob("context_method")
	if z := a.SearchKnob("zero"); z != "" {
		i := slices.Index(wire.SearchZeROStages(), z)
		if i < 0 {
			return k, fmt.Errorf("zero: choose one of %s, or leave it empty to search it", strings.Join(wire.SearchZeROStages(), ", "))
		}
		k.ZeRO = &i
	}
	return k, nil
}

// StartSearch starts a search over the current request's model and device, in the
// background: the page stays responsive (the search yields to the browser between
// candidates) and shows its progress.
func (a *App) StartSearch() {
	s := &a.Search
	if s.Running || a.Host == nil {
		return
	}
	s.Err, s.Cancelled, s.Report, s.Progress = "", false, nil, wire.SearchProgress{}
	k, err := a.knobs()
	if err != nil {
		s.Err = err.Error()
		return
	}
	base := clone(a.Req)
	if f := a.Form(); !f.FromFile && len(base.Cluster.Devices) > 0 {
		// The search places stages on nodes of a device preset itself.
		base.Cluster = wire.ClusterSpec{Device: f.Device, Link: f.Link}
	}
	q, err := json.Marshal(wire.SearchQuery{Request: base, SearchKnobs: k})
	if err != nil {
		s.Err = "The search cannot start: " + err.Error()
		return
	}
	stop := make(chan struct{})
	var once sync.Once
	cancel := func() { once.Do(func() { close(stop) }) }
	s.query, s.cancel, s.Running = string(q), cancel, true
	host := a.Host
	last := time.Now()
	progress := func(text string) {
		var p wire.SearchProgress
		if json.Unmarshal([]byte(text), &p) != nil {
			return
		}
		draw := time.Since(last) > 100*time.Millisecond
		if draw {
			last = time.Now()
		}
		host.Update(func() { s.Progress = p }, draw)
	}
	host.Background(func() {
		var rep *wire.SearchAnswer
		out, err := a.Planner(stop, "search", []string{string(q)}, progress)
		if out != "" {
			if e := errorObject(out); e != nil {
				err = fmt.Errorf("The search cannot start: %w", e)
			} else {
				rep = new(wire.SearchAnswer)
				if uerr := json.Unmarshal([]byte(out), rep); uerr != nil {
					rep, err = nil, fmt.Errorf("the planner's report does not read: %v", uerr)
				}
			}
		}
		host.Update(func() {
			s.Running, s.Report, s.cancel = false, rep, nil
			if rep != nil {
				s.Progress.Done = s.Progress.Total
			}
			switch {
			case closed(stop):
				s.Cancelled = true
			case err != nil:
				s.Err = err.Error()
			}
			// The focus goes to the results (the Search button, disabled while the
			// search ran, dropped it to <body>); without results it stays where it is
			// and the status or the error (an alert) says why.
			host.Focus("#search-results")
			cancel()
		}, true)
	})
}

// closed reports whether stop is closed.
func closed(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// CancelSearch stops the running search; what it found so far stays.
func (a *App) CancelSearch() {
	if a.Search.cancel != nil {
		a.Search.cancel()
	}
}

// ProgressPct is the search's progress in percent.
func (a *App) ProgressPct() int {
	p := a.Search.Progress
	if p.Total == 0 {
		return 0
	}
	return 100 * p.Done / p.Total
}

// ProgressText says how far the search is.
func (a *App) ProgressText() string {
	s := a.Search
	p := s.Progress
	best := "nothing fits yet"
	if p.Best != nil {
		best = fmt.Sprintf("best so far %s on %d devices", units.Rate(p.Best.SamplesPerSecond, "samples/s"), p.Best.Devices)
	}
	switch {
	case s.Running:
		return fmt.Sprintf("Searching: %d of %d candidates settled, %d planned; %s.", p.Done, p.Total, p.Evaluated, best)
	case s.Cancelled:
		return fmt.Sprintf("Cancelled after %d of %d candidates; the table shows what was found.", p.Done, p.Total)
	case s.Report != nil:
		st := s.Report.Stats
		return fmt.Sprintf("Done: %d configurations, %d candidates; %d planned, %d fit, %d pruned by their bound, in %.1f s.",
			st.Configurations, st.Candidates, st.Evaluated, st.Feasible, st.PrunedByBound, st.Seconds)
	}
	return ""
}

// ResultRow is a row of the results table.
type ResultRow struct {
	Key                                                                   string
	Devices, Stages, Replicas, Tensor, Context, Microbatches, Batch, ZeRO int
	// Expert is the expert-parallel degree (1 without experts).
	Expert                                                       int
	Schedule, Recompute, Throughput, Step, Bubble, MFU, Headroom string
	Best, Pareto                                                 bool
	o                                                            wire.SearchOutcome
}

// ResultColumns are the results table's sortable columns: id and label.
var ResultColumns = []struct{ ID, Label string }{
	{"throughput", "Samples/s"}, {"devices", "Devices"}, {"stages", "p"}, {"replicas", "d"}, {"tensor", "t"},
	{"context", "c"}, {"expert", "e"}, {"schedule", "Schedule"}, {"microbatches", "m"}, {"batch", "b"}, {"recompute", "Recompute"}, {"zero", "ZeRO"},
	{"step", "Step"}, {"bubble", "Bubble"}, {"mfu", "MFU"}, {"headroom", "Headroom"},
}

// maxResultRows bounds the results table.
const maxResultRows = 50

// Results are core's rows of the search (wire.SearchAnswer.Rows: the feasible candidates,
// the best first, then the fastest, alike candidates collapsed), in that order or
// sorted by the chosen column, at most maxResultRows.
func (a *App) Results() []ResultRow {
	rep := a.Search.Report
	if rep == nil {
		return nil
	}
	pareto := map[string]bool{}
	for _, o := range rep.Pareto {
		pareto[o.SearchCandidate.String()] = true
	}
	var rows []ResultRow
	for _, o := range rep.Rows {
		r := ResultRow{Key: o.SearchCandidate.String(), Devices: o.Devices, Stages: o.Pipeline, Replicas: o.Data, Tensor: o.Tensor, Context: max(1, o.Context), Expert: max(1, o.Expert),
			Microbatches: o.Microbatches, Batch: o.MicrobatchSize, ZeRO: o.ZeRO, Schedule: o.Schedule, Recompute: o.Recompute,
			Throughput: units.Rate(o.SamplesPerSecond, ""), Step: units.Time(o.StepSeconds, model.Seconds),
			Bubble: fmt.Sprintf("%.1f%%", 100*o.BubbleFraction), Headroom: units.Bytes(o.HeadroomBytes),
			Pareto: pareto[o.SearchCandidate.String()], o: o}
		if o.MFU > 0 {
			r.MFU = fmt.Sprintf("%.1f%%", 100*o.MFU)
		}
		r.Best = rep.Best != nil && rep.Best.SearchCandidate == o.SearchCandidate
		rows = append(rows, r)
	}
	by := a.Search.SortBy
	if by == "" { // core's order
		return rows[:min(len(rows), maxResultRows)]
	}
	key := func(r ResultRow) float64 {
		o := r.o
		switch by {
		case "devices":
			return float64(o.Devices)
		case "stages":
			return float64(o.Pipeline)
		case "replicas":
			return float64(o.Data)
		case "tensor":
			return float64(o.Tensor)
		case "context":
			return float64(max(1, o.Context))
		case "expert":
			return float64(max(1, o.Expert))
		case "microbatches":
			return float64(o.Microbatches)
		case "batch":
			return float64(o.MicrobatchSize)
		case "zero":
			return float64(o.ZeRO)
		case "step":
			return o.StepSeconds
		case "bubble":
			return o.BubbleFraction
		case "mfu":
			return o.MFU
		case "headroom":
			return float64(o.HeadroomBytes)
		}
		return o.SamplesPerSecond
	}
	text := by == "schedule" || by == "recompute"
	slices.SortStableFunc(rows, func(x, y ResultRow) int {
		var c int
		if text {
			c = cmp.Compare(x.Schedule+x.Recompute, y.Schedule+y.Recompute)
			if by == "recompute" {
				c = cmp.Compare(x.Recompute, y.Recompute)
			}
		} else {
			c = cmp.Compare(key(x), key(y))
		}
		if !a.Search.Asc {
			c = -c
		}
		return c
	})
	return rows[:min(len(rows), maxResultRows)]
}

// RowCount is the number of core's rows (wire.SearchAnswer.Rows).
func (a *App) RowCount() int {
	if a.Search.Report == nil {
		return 0
	}
	return len(a.Search.Report.Rows)
}

// SearchRule says how core's search compared the candidates (wire.SearchAnswer.Rule: the
// global batch and where it comes from, the tie rule), "" before an answer.
func (a *App) SearchRule() string {
	if a.Search.Report == nil {
		return ""
	}
	return a.Search.Report.Rule
}

// FeasibleCount is the number of feasible candidates planned.
func (a *App) FeasibleCount() int {
	if a.Search.Report == nil {
		return 0
	}
	return a.Search.Report.Stats.Feasible
}

// SortResults sorts the results table by a column (before any, it is in core's order:
// the best first, then the fastest); a second click reverses it.
func (a *App) SortResults(col string) {
	s := &a.Search
	if s.SortBy == col {
		s.Asc = !s.Asc
	} else {
		s.SortBy, s.Asc = col, col == "schedule" || col == "recompute"
	}
}

// AriaSort is a column header's aria-sort.
func (a *App) AriaSort(col string) string {
	by := a.Search.SortBy
	if by != col {
		return "none"
	}
	if a.Search.Asc {
		return "ascending"
	}
	return "descending"
}

// ChartCaption introduces the search chart's caption; the best configuration's
// description follows it. The chart's drawing is hidden from assistive technology (its
// thousands of points would be as many nodes): the caption and the results table say it.
const ChartCaption = "Throughput against devices: every configuration that fits (○), the Pareto front (□ joined by a line: the fastest for its device count that beats every smaller one), and the best (★). "

// Apply loads a result's request into the Plan panel.
func (a *App) Apply(key string) {
	s := &a.Search
	if s.Report == nil || s.query == "" {
		return
	}
	for _, o := range s.Report.Evaluated {
		if o.SearchCandidate.String() != key {
			continue
		}
		query, c := s.query, o.SearchCandidate
		a.background(func() {
			// The planner gives the candidate's request in core's normal form, which
			// states every knob (the device count included), so that the panels show
			// what the search chose.
			q := new(wire.Request)
			err := a.call(nil, "candidate", q, query, c)
			a.update(func() {
				if err != nil {
					a.notice("The result cannot be applied: "+err.Error(), true)
					return
				}
				q.Events = true
				a.Req, a.BoundsText, a.Tab = q, "", "plan"
				a.notice(fmt.Sprintf("Applied %s from the search.", key), false)
				a.changed(true)
				// The Apply button is gone with the Search panel: the focus goes to the
				// plan's summary, which the new plan changes.
				if a.Host != nil {
					a.Host.Focus("#summary")
				}
			})
		})
		return
	}
}

// ParetoChart is the chart of throughput against devices: every feasible candidate, the
// Pareto front, and the best.
type ParetoChart struct {
	Width, Height, Left, Bottom float64
	Points                      []ChartPoint
	Front                       []string // polyline points, in pieces (chunkPoints)
	FrontPts                    []ChartPoint
	XTicks, YTicks              []Tick
	Best                        *ChartPoint
}

// ChartPoint is a candidate on the chart.
type ChartPoint struct {
	X, Y  float64
	Title string
	Front bool
}

// Chart lays out the Pareto chart, or nil without results.
func (a *App) Chart() *ParetoChart {
	rep := a.Search.Report
	if rep == nil || rep.Best == nil {
		return nil
	}
	c := &ParetoChart{Width: 640, Height: 260, Left: 60, Bottom: 30}
	maxD, maxT := 1, 0.0
	for _, o := range rep.Evaluated {
		if o.Feasible {
			maxD = max(maxD, o.Devices)
			maxT = max(maxT, o.SamplesPerSecond)
		}
	}
	if maxT <= 0 || math.IsInf(maxT, 0) {
		return nil
	}
	pw, ph := c.Width-c.Left-16, c.Height-c.Bottom-12
	x := func(d int) float64 { return c.Left + pw*float64(d)/float64(maxD) }
	y := func(t float64) float64 { return 12 + ph*(1-t/maxT) }
	for _, o := range rep.Evaluated {
		if !o.Feasible {
			continue
		}
		c.Points = append(c.Points, ChartPoint{X: x(o.Devices), Y: y(o.SamplesPerSecond),
			Title: fmt.Sprintf("%s: %s on %d devices", o.SearchCandidate, units.Rate(o.SamplesPerSecond, "samples/s"), o.Devices)})
	}
	var front [][2]float64
	for _, o := range rep.Pareto {
		front = append(front, [2]float64{x(o.Devices), y(o.SamplesPerSecond)})
		c.FrontPts = append(c.FrontPts, ChartPoint{X: x(o.Devices), Y: y(o.SamplesPerSecond), Front: true,
			Title: fmt.Sprintf("front: %s, %s on %d devices", o.SearchCandidate, units.Rate(o.SamplesPerSecond, "samples/s"), o.Devices)})
	}
	c.Front = chunkPoints(front)
	b := rep.Best
	c.Best = &ChartPoint{X: x(b.Devices), Y: y(b.SamplesPerSecond),
		Title: fmt.Sprintf("best: %s, %s on %d devices", b.SearchCandidate, units.Rate(b.SamplesPerSecond, "samples/s"), b.Devices)}
	for i := 0; i <= 4; i++ {
		d := int(math.Round(float64(maxD) * float64(i) / 4))
		c.XTicks = append(c.XTicks, Tick{X: x(d), Label: strconv.Itoa(d)})
		t := maxT * float64(i) / 4
		c.YTicks = append(c.YTicks, Tick{X: y(t), Label: fmt.Sprintf("%.3g", t)})
	}
	return c
}
