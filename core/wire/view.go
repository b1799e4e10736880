package wire

import (
	"math"
	"slices"
)

// A page draws a result in frames of a few milliseconds, on the thread that also answers
// the person: a result of thousands of stages or of a hundred thousand layers is megabytes
// of JSON (4.4 MB for 20,000 layers on 3,000 stages), too much to decode there. So the
// planner (in its Web Worker) keeps the whole result and hands the page a View: the
// result cut to what the page draws (Cut), with windows of rows that the page asks for
// again as a person pages through them. What a View holds is bounded whatever the size
// of the model, the cluster and the schedule, but for the plan's boundaries (an int per
// stage, which the page's boundaries box and stage bar show whole).

// The bounds of a View.
const (
	// ViewStages is the most stages of a window of a plan over ViewGroups stages (a
	// plan up to ViewGroups stages is held whole, for the stage bar draws each stage):
	// a page of the stage table, which the page asks for as a person pages; each stage
	// is about 620 bytes of JSON, which the page's thread decodes. ViewLayers is the
	// most layers.
	ViewStages = 50
	ViewLayers = 100
	// ViewGroups is the most segments of the stage bar: more stages are drawn in groups
	// of consecutive stages, so that a plan up to it is drawn stage by stage.
	ViewGroups = 100
	// ViewDevices is the most devices (pipeline stages) of the schedule a View keeps:
	// the timeline's rows, their busy times and their microbatches in flight.
	ViewDevices = 64
	// ViewEvents is the most operations of the timeline: those that start in a time
	// window from the step's start, the same for every device kept (View.TimelineSeconds),
	// so that each device's row is complete over that window.
	ViewEvents = 2000
	// ViewSamples is the most points of one stage's microbatches in flight: more are
	// decimated to the highest count in each of ViewSamples/2 spans of time.
	ViewSamples = 600
	// ViewDeviceSteps is the most per-device steps (Result.Devices) a View keeps.
	ViewDeviceSteps = 64
)

// Window is which rows a View holds: Stages from StageStart, layers from LayerStart
// (at most ViewStages stages of a plan over ViewGroups stages, and ViewLayers layers).
type Window struct {
	StageStart int `json:"stage_start"`
	LayerStart int `json:"layer_start"`
}

// View is a result cut to what a page draws (Cut).
type View struct {
	// Result is the result with its lists cut: Plan.Stages from StageStart (every
	// stage of a plan up to ViewGroups stages),
	// Model.LayerNames and LayerCosts from LayerStart, the schedule's lists to its first
	// ViewDevices devices and ViewEvents operations, its in-flight samples decimated, and
	// Devices to ViewDeviceSteps.
	Result *Result `json:"result"`
	// Handle names the whole result where the planner holds it (for other windows and
	// the whole result's JSON); 0 where nothing holds it.
	Handle int `json:"handle,omitempty"`
	// Stages is the plan's stage count; StageStart the first stage of Plan.Stages.
	Stages     int `json:"stages"`
	StageStart int `json:"stage_start"`
	// Bottleneck is the stage with the largest compute time (the first of equals; -1
	// without a plan) and BottleneckSeconds its compute time.
	Bottleneck        int     `json:"bottleneck"`
	BottleneckSeconds float64 `json:"bottleneck_seconds"`
	// Groups are the stage bar's segments when the plan has more than ViewGroups
	// stages (each a run of consecutive stages), else nil: the bar is drawn from
	// Plan.Stages, which then holds every stage.
	Groups []StageGroup `json:"groups,omitempty"`
	// LayerStart is the first layer of Model.LayerNames and LayerCosts; LayerStages the
	// stage of each of those layers.
	LayerStart  int   `json:"layer_start"`
	LayerStages []int `json:"layer_stages,omitempty"`
	// Events is how many operations the whole schedule has; MaxInFlight the most
	// microbatches in flight on any stage.
	Events      int `json:"events"`
	MaxInFlight int `json:"max_in_flight"`
	// TimelineSeconds is the end of the window of the step whose operations the view
	// keeps: every operation of a kept device that starts before it (the makespan when
	// all are kept). The in-flight samples are cut to it too.
	TimelineSeconds float64 `json:"timeline_seconds"`
	// Ops are Result.Schedule.Events in a compact form for the page's thread to decode
	// (2,000 operations as objects were 295 KB of JSON): per device, five numbers an
	// operation, what the page draws: its kind (OpKind's letter as a number), stage,
	// microbatch, the time from the end of the operation before (from 0 for the
	// first) and its duration, in TimeUnitSeconds. Cut fills Ops and leaves Events
	// empty; Expand restores Events (but for their Chunk and Step).
	Ops [][]int `json:"ops,omitempty"`
	// Samples are Result.Schedule.InFlight in the same compact form (as objects, the
	// samples were 72 to 97 KB of a long schedule's view on 8 to 64 devices): per stage, two
	// numbers a sample, its time from the sample before (from 0 for the first) in
	// TimeUnitSeconds, and its count. Cut fills Samples and leaves InFlight empty;
	// Expand restores InFlight, each time to within a unit.
	Samples         [][]int `json:"samples,omitempty"`
	TimeUnitSeconds float64 `json:"time_unit_seconds,omitempty"`
}

// viewTimeSteps is how many units of time (View.TimeUnitSeconds) the timeline's window
// spans: a millionth of it, far below a pixel of the page's chart.
const viewTimeSteps = 1e6

// compact sets v.Ops from s's events and v.Samples from its in-flight samples, and
// empties both.
func (v *View) compact(s *ScheduleResult) {
	v.TimeUnitSeconds = v.TimelineSeconds / viewTimeSteps
	if v.TimeUnitSeconds <= 0 {
		return
	}
	q := func(t float64) int { return int(math.Round(t / v.TimeUnitSeconds)) }
	for _, evs := range s.Events {
		o, end := make([]int, 0, 5*len(evs)), 0
		for _, e := range evs {
			a, z := q(e.StartSeconds), q(e.EndSeconds)
			o = append(o, int(e.Kind[0]), e.Stage, e.Microbatch, a-end, z-a)
			end = z
		}
		v.Ops = append(v.Ops, o)
	}
	s.Events = nil
	for _, samples := range s.InFlight {
		o, prev := make([]int, 0, 2*len(samples)), 0
		for _, x := range samples {
			t := q(x.TimeSeconds) // rounded from the time itself: no error adds up
			o = append(o, t-prev, x.Count)
			prev = t
		}
		v.Samples = append(v.Samples, o)
	}
	s.InFlight = nil
}

// Expand restores the schedule's Events from Ops (a View decoded from JSON), but for
// their Chunk and Step (0), and its InFlight from Samples, and drops Ops and Samples;
// it leaves Events where Ops is empty, and InFlight where Samples is.
func (v *View) Expand() {
	if v.Result == nil || v.Result.Schedule == nil {
		return
	}
	if v.Samples != nil {
		in := make([][]Sample, len(v.Samples))
		for st, o := range v.Samples {
			in[st] = make([]Sample, len(o)/2)
			t := 0
			for i := range in[st] {
				t += o[2*i]
				in[st][i] = Sample{TimeSeconds: float64(t) * v.TimeUnitSeconds, Count: o[2*i+1]}
			}
		}
		v.Result.Schedule.InFlight, v.Samples = in, nil
	}
	if v.Ops == nil {
		return
	}
	evs := make([][]Event, len(v.Ops))
	for d, o := range v.Ops {
		evs[d] = make([]Event, len(o)/5)
		t := 0
		for i := range evs[d] {
			e, x := &evs[d][i], o[5*i:]
			e.Kind, e.Stage, e.Microbatch = OpKind(rune(x[0])), x[1], x[2]
			t += x[3]
			e.StartSeconds = float64(t) * v.TimeUnitSeconds
			t += x[4]
			e.EndSeconds = float64(t) * v.TimeUnitSeconds
		}
	}
	v.Result.Schedule.Events, v.Ops = evs, nil
}

// StageGroup is a run of consecutive stages, First to Last, drawn as one segment of the
// stage bar: their layers (FirstLayer to LastLayer, for a split into ranges; names
// FirstName to LastName) and the sum of their compute times.
type StageGroup struct {
	First          int     `json:"first"`
	Last           int     `json:"last"`
	FirstLayer     int     `json:"first_layer"`
	LastLayer      int     `json:"last_layer"`
	FirstName      string  `json:"first_name"`
	LastName       string  `json:"last_name"`
	ComputeSeconds float64 `json:"compute_seconds"`
}

// Cut returns r cut to a View of window w. r is not changed: the View shares what it
// keeps whole.
func Cut(r *Result, w Window) *View {
	v := &View{Bottleneck: -1}
	c := *r
	v.Result = &c
	m := &c.Model
	n := m.Layers
	v.LayerStart = max(0, min(w.LayerStart, n-ViewLayers))
	end := min(n, v.LayerStart+ViewLayers)
	if v.LayerStart < len(m.LayerNames) {
		m.LayerNames = m.LayerNames[v.LayerStart:min(end, len(m.LayerNames))]
	} else {
		m.LayerNames = nil
	}
	if lc := m.LayerCosts; lc != nil {
		x := LayerCosts{
			ForwardSeconds: cutList(lc.ForwardSeconds, v.LayerStart, end), BackwardSeconds: cutList(lc.BackwardSeconds, v.LayerStart, end),
			ForwardCycles: cutList(lc.ForwardCycles, v.LayerStart, end), BackwardCycles: cutList(lc.BackwardCycles, v.LayerStart, end),
			ParamBytes: cutList(lc.ParamBytes, v.LayerStart, end), ActivationBytes: cutList(lc.ActivationBytes, v.LayerStart, end),
			OutputBytes: cutList(lc.OutputBytes, v.LayerStart, end),
		}
		m.LayerCosts = &x
	}
	if p := r.Plan; p != nil {
		cp := *p
		c.Plan = &cp
		v.Stages = len(p.Stages)
		for i, s := range p.Stages {
			if v.Bottleneck < 0 || s.ComputeSeconds > p.Stages[v.Bottleneck].ComputeSeconds {
				v.Bottleneck = i
			}
		}
		if v.Bottleneck >= 0 {
			v.BottleneckSeconds = p.Stages[v.Bottleneck].ComputeSeconds
		}
		if v.Stages > ViewGroups {
			v.Groups = Groups(p, (v.Stages+ViewGroups-1)/ViewGroups)
		}
		size := ViewStages
		if v.Stages <= ViewGroups {
			size = v.Stages // the stage bar draws each stage
		}
		v.StageStart = max(0, min(w.StageStart, v.Stages-size))
		cp.Stages = p.Stages[v.StageStart:min(v.Stages, v.StageStart+size)]
		if end > v.LayerStart {
			v.LayerStages = make([]int, end-v.LayerStart)
			for i := range v.LayerStages {
				v.LayerStages[i] = -1
			}
			for i, s := range p.Stages {
				if s.Layers == nil && (s.LastLayer < v.LayerStart || s.FirstLayer >= end) {
					continue
				}
				for _, l := range p.StageLayers(i) {
					if l >= v.LayerStart && l < end {
						v.LayerStages[l-v.LayerStart] = i
					}
				}
			}
		}
	}
	if len(c.Devices) > ViewDeviceSteps {
		c.Devices = c.Devices[:ViewDeviceSteps]
	}
	if s := r.Schedule; s != nil {
		v.Events, v.MaxInFlight, v.TimelineSeconds = cutSchedule(&c, s)
		v.compact(c.Schedule)
	}
	return v
}

func cutList[T any](s []T, start, end int) []T {
	if start >= len(s) {
		return nil
	}
	return s[start:min(end, len(s))]
}

// Groups splits a plan's stages into runs of size consecutive stages.
func Groups(p *Plan, size int) []StageGroup {
	var out []StageGroup
	for first := 0; first < len(p.Stages); first += size {
		last := min(len(p.Stages), first+size) - 1
		a, z := p.Stages[first], p.Stages[last]
		g := StageGroup{First: first, Last: last, FirstLayer: a.FirstLayer, LastLayer: z.LastLayer, FirstName: a.FirstName, LastName: z.LastName}
		for _, s := range p.Stages[first : last+1] {
			g.ComputeSeconds += max(s.ComputeSeconds, 0)
		}
		out = append(out, g)
	}
	return out
}

// cutSchedule sets c.Schedule to s cut to its first ViewDevices devices and to the
// operations that start before a time, the window's end, the same for every device: the
// latest that keeps at most ViewEvents operations (the makespan where all fit). Devices
// with no operation in the window are left out from the first of them on, and the window
// is taken again over those kept, so that every device drawn has its operations of the
// window. Each stage's in-flight samples are cut to the window and decimated to
// ViewSamples. It returns how many operations s has, its most microbatches in flight,
// and the window's end.
func cutSchedule(c *Result, s *ScheduleResult) (events, inFlight int, window float64) {
	cs := *s
	c.Schedule = &cs
	for _, e := range s.Events {
		events += len(e)
	}
	for _, k := range s.MaxInFlight {
		inFlight = max(inFlight, k)
	}
	devices := min(len(s.Events), ViewDevices)
	window, all := s.MakespanSeconds, true
	for pass := 0; pass < 2; pass++ {
		var starts []float64
		for _, e := range s.Events[:devices] {
			for _, o := range e {
				starts = append(starts, o.StartSeconds)
			}
		}
		if len(starts) <= ViewEvents {
			break
		}
		slices.Sort(starts)
		all, window = false, starts[ViewEvents] // those before it are at most ViewEvents
		for d, e := range s.Events[:devices] {
			if len(e) > 0 && e[0].StartSeconds >= window {
				devices = d
				break
			}
		}
	}
	cut := func(n int) int { return min(n, devices) }
	cs.StageDevices = s.StageDevices[:cut(len(s.StageDevices))]
	cs.BusySeconds = s.BusySeconds[:cut(len(s.BusySeconds))]
	cs.PeakMemoryBytes = s.PeakMemoryBytes[:cut(len(s.PeakMemoryBytes))]
	cs.LimitBytes = s.LimitBytes[:cut(len(s.LimitBytes))]
	cs.MaxInFlight = s.MaxInFlight[:cut(len(s.MaxInFlight))]
	cs.Events = nil
	for _, e := range s.Events[:devices] {
		var kept []Event
		for _, o := range e {
			if all || o.StartSeconds < window {
				kept = append(kept, o)
			}
		}
		cs.Events = append(cs.Events, kept)
	}
	cs.InFlight = nil
	for _, samples := range s.InFlight[:cut(len(s.InFlight))] {
		k := 0
		for k < len(samples) && (all || samples[k].TimeSeconds < window) {
			k++
		}
		cs.InFlight = append(cs.InFlight, Decimate(samples[:k], ViewSamples))
	}
	return events, inFlight, window
}

// Decimate reduces a step chart of samples (a count from each sample's time to the next)
// to at most limit samples: the time is split into limit/2 spans of as many samples each,
// and each span is drawn as its highest count from its start, then its last count from the
// time of its last sample, so that peaks and where each span ends stay as they were.
func Decimate(samples []Sample, limit int) []Sample {
	if len(samples) <= limit || limit < 2 {
		return samples
	}
	spans := limit / 2
	size := (len(samples) + spans - 1) / spans
	out := make([]Sample, 0, limit)
	for first := 0; first < len(samples); first += size {
		span := samples[first:min(len(samples), first+size)]
		peak := span[0]
		for _, s := range span {
			peak.Count = max(peak.Count, s.Count)
		}
		out = append(out, peak)
		if last := span[len(span)-1]; len(span) > 1 && last.Count != peak.Count {
			out = append(out, last)
		}
	}
	return out
}
