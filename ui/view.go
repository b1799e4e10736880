package ui

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// This file turns core's results into what the components draw: positions, labels and
// formatted numbers. It computes no cost: every figure comes from core, and the only
// arithmetic is placing them on the screen.

// BarWidth and BarHeight are the stage bar's SVG viewBox.
const (
	BarWidth  = 1000.0
	BarHeight = 44.0
)

// StageBar is the stage bar: one segment per stage along the model's layers, each layer
// as wide as its time in the profile (forward plus backward in training), so that a
// stage's width is in proportion to its time.
type StageBar struct {
	Segments []Segment
	// Handles are the draggable boundaries between stages (Boundaries[1..p-1]).
	Handles []Handle
	// Boundaries as "0,8,15,22,26".
	Boundaries string
	Layers     int
	// spans are the stages' places on the bar, for xAt and LayerAt (how a drag maps
	// back to a layer); points is the number of layer positions, 0 to Layers (0 on a
	// bar of groups, which has no handles). The bar keeps one span a stage, not one
	// position a layer: a model of 200,000 layers would make each bar 1.6 MB, and its
	// frame wait for the garbage collector.
	spans  []barSpan
	points int
}

// barSpan is a stage on the bar: its layers first to last share its width w from x.
type barSpan struct {
	first, last int
	x, w        float64
}

// Segment is one stage on the bar.
type Segment struct {
	Stage      int
	X, W       float64
	Label      string // drawn inside when it fits: "S0 · 0–7"
	Title      string // the tooltip and accessible name
	Bottleneck bool
	Pattern    string // the fill: a pattern per stage, so that neighbours differ without colour
	// RecomputeX and RecomputeW: the strip at the segment's end that is the time its
	// per-layer recomputation adds (recompute auto); RecomputeW 0 without one.
	RecomputeX, RecomputeW float64
}

// Handle is a draggable boundary: Index into Boundaries, the first layer of the stage
// after it, and its position.
type Handle struct {
	Index, Layer int
	X            float64
	Label        string
}

// maxBarSegments bounds the stage bar's segments (beyond it a segment is a group of
// consecutive stages); maxBarHandles the plans whose boundaries are drawn as handles
// to drag (beyond it they would cover the bar: the Plan panel's boundaries box takes
// them).
const (
	maxBarSegments = 100
	maxBarHandles  = 64
)

// NewStageBar places a plan's stages on the bar, each as wide as its compute time
// (core's ComputeSeconds); a stage's layers share its width evenly.
func NewStageBar(p *wire.Plan) StageBar {
	n := 0
	if k := len(p.Boundaries); k > 0 {
		n = p.Boundaries[k-1]
	}
	total := 0.0
	for _, s := range p.Stages {
		total += max(s.ComputeSeconds, 0)
	}
	b := StageBar{Layers: n, Boundaries: joinInts(p.Boundaries), points: n + 1,
		spans: make([]barSpan, len(p.Stages))}
	slow := bottleneck(p)
	pos := 0.0
	// More stages than maxBarSegments are drawn in groups of consecutive stages, one
	// segment each: a bar of thousands of stages would be borders only.
	group := (len(p.Stages) + maxBarSegments - 1) / maxBarSegments
	starts := make([]float64, len(p.Stages)+1)
	for i, s := range p.Stages {
		w := BarWidth / float64(max(len(p.Stages), 1))
		if total > 0 {
			w = max(s.ComputeSeconds, 0) / total * BarWidth
		}
		b.spans[i] = barSpan{first: s.FirstLayer, last: s.LastLayer, x: pos, w: w}
		starts[i] = pos
		pos += w
		starts[i+1] = pos
		if group > 1 {
			continue
		}
		layers := stageRuns(p, i)
		seg := Segment{
			Stage: i, X: starts[i], W: w, Bottleneck: i == slow,
			Pattern: "url(#pp-fill-" + strconv.Itoa(i%4) + ")",
			Title: fmt.Sprintf("stage %d: layers %s (%s … %s), %s", i, layers,
				s.FirstName, s.LastName, units.Time(s.ComputeSeconds, model.Seconds)),
		}
		if i == slow {
			seg.Title += ", the bottleneck"
		}
		if r := s.Recompute; r != nil && len(r.Layers) > 0 {
			seg.Title += "; recomputes " + r.Summary
			if s.ComputeSeconds > 0 {
				seg.RecomputeW = w * min(1, max(0, r.ExtraSeconds/s.ComputeSeconds))
				seg.RecomputeX = starts[i] + w - seg.RecomputeW
			}
		}
		label := fmt.Sprintf("S%d · %s", i, layers)
		if seg.W >= float64(len(label))*7.5 {
			seg.Label = label
		} else if short := "S" + strconv.Itoa(i); seg.W >= float64(len(short))*8 {
			seg.Label = short
		}
		b.Segments = append(b.Segments, seg)
	}
	if group > 1 {
		b.Segments = groupSegments(wire.Groups(p, group), slow, p.Stages[slow].ComputeSeconds, p.LayerOrder == nil, total)
	}
	if len(p.Stages) > maxBarHandles {
		return b
	}
	for k := 1; k+1 < len(p.Boundaries) && p.LayerOrder == nil; k++ {
		// A graph split in an order of its own has no boundaries in the model's order to
		// drag.
		l := p.Boundaries[k]
		b.Handles = append(b.Handles, Handle{Index: k, Layer: l, X: b.xAt(l),
			Label: fmt.Sprintf("boundary %d, before layer %d: arrow keys move it", k, l)})
	}
	return b
}

// groupSegments draws runs of consecutive stages as the bar's segments, each as wide as
// its share of total compute (all of it: total); slow is the bottleneck stage and
// slowSeconds its compute; ranges says the stages are ranges of layers.
func groupSegments(groups []wire.StageGroup, slow int, slowSeconds float64, ranges bool, total float64) []Segment {
	var out []Segment
	pos := 0.0
	for g, x := range groups {
		w := BarWidth / float64(max(len(groups), 1))
		if total > 0 {
			w = x.ComputeSeconds / total * BarWidth
		}
		stages := strconv.Itoa(x.First) + "–" + strconv.Itoa(x.Last)
		seg := Segment{
			Stage: x.First, X: pos, W: w, Bottleneck: x.First <= slow && slow <= x.Last,
			Pattern: "url(#pp-fill-" + strconv.Itoa(g%4) + ")",
			Title:   "stages " + stages,
		}
		pos += w
		if ranges { // a graph split's stages are not ranges of layers
			seg.Title += ": layers " + strconv.Itoa(x.FirstLayer) + "–" + strconv.Itoa(x.LastLayer)
		}
		seg.Title += " (" + x.FirstName + " … " + x.LastName + ")"
		if seg.Bottleneck {
			seg.Title += ", with the bottleneck (stage " + strconv.Itoa(slow) + ", " + units.Time(slowSeconds, model.Seconds) + ")"
		}
		if label := "S" + stages; seg.W >= float64(len(label))*7.5 {
			seg.Label = label
		}
		out = append(out, seg)
	}
	return out
}

// ViewBar is the stage bar of a planner's view: its stages, or beyond spec.ViewGroups
// the groups the planner made of them (without handles to drag).
func ViewBar(v *wire.View) StageBar {
	p := v.Result.Plan
	if v.Groups == nil {
		return NewStageBar(p)
	}
	total := 0.0
	for _, g := range v.Groups {
		total += g.ComputeSeconds
	}
	n := 0
	if k := len(p.Boundaries); k > 0 {
		n = p.Boundaries[k-1]
	}
	return StageBar{Layers: n, Boundaries: joinInts(p.Boundaries),
		Segments: groupSegments(v.Groups, v.Bottleneck, v.BottleneckSeconds, p.LayerOrder == nil, total)}
}

// stageRuns is wire.LayerRuns of stage i's layers, without listing the layers of a
// range (a stage of 50,000 layers would be 50,000 of them, at each render).
func stageRuns(p *wire.Plan, i int) string {
	s := &p.Stages[i]
	switch {
	case s.Layers != nil:
		return wire.LayerRuns(s.Layers)
	case s.FirstLayer == s.LastLayer:
		return strconv.Itoa(s.FirstLayer)
	case s.FirstLayer > s.LastLayer:
		return ""
	}
	return strconv.Itoa(s.FirstLayer) + "–" + strconv.Itoa(s.LastLayer)
}

// xAt is where the boundary before layer l (0..Layers) sits on the bar: the layers of a
// stage share its width evenly, the last stage that holds l (or ends just before it)
// places it, and l = Layers is the bar's end (0 where no stage places l).
func (b StageBar) xAt(l int) float64 {
	if l < 0 || l >= b.points {
		return 0
	}
	if l == b.Layers && l > 0 {
		return BarWidth
	}
	for i := len(b.spans) - 1; i >= 0; i-- {
		s := b.spans[i]
		if s.first <= l && l <= s.last+1 {
			if s.last < s.first {
				return s.x
			}
			return s.x + s.w*float64(l-s.first)/float64(s.last-s.first+1)
		}
	}
	return 0
}

// LayerAt returns the boundary position (0..n) nearest to x on the bar.
func (b StageBar) LayerAt(x float64) int {
	i := sort.Search(b.points, func(l int) bool { return b.xAt(l) >= x })
	if i >= b.points {
		return b.points - 1
	}
	if i > 0 && x-b.xAt(i-1) < b.xAt(i)-x {
		return i - 1
	}
	return i
}

// bottleneck is the stage with the largest compute (the first of equals), -1 for none.
func bottleneck(p *wire.Plan) int {
	slow := -1
	for i, s := range p.Stages {
		if slow < 0 || s.ComputeSeconds > p.Stages[slow].ComputeSeconds {
			slow = i
		}
	}
	return slow
}

// StageRow is one stage in the Plan panel's table.
type StageRow struct {
	Stage                                  int
	Device, Layers, Names                  string
	Compute, Transfer, Memory, Limit, Used string
	UsedPct                                float64 // for the meter, clamped to [0, 100]
	Over, Bottleneck                       bool
	Parts                                  []MemPart
	InFlight                               int
}

// MemPart is one part of a stage's memory, for the breakdown bar and its legend.
type MemPart struct {
	Name, Value, Class string
	Pct                float64 // of the device's capacity (the limit)
}

// NewStageRows formats the stages of a plan.
func NewStageRows(p *wire.Plan) []StageRow { return StagePage(p, 0, len(p.Stages)) }

// StagePage formats the stages [start, start+size) of a plan: the Plan panel's table
// shows a window of the stages, as the layer table does of the layers.
func StagePage(p *wire.Plan, start, size int) []StageRow {
	return stagePage(p, 0, bottleneck(p), start, size)
}

// stagePage is StagePage of a plan whose Stages start at stage off (a spec.View's), with
// the bottleneck stage slow.
func stagePage(p *wire.Plan, off, slow, start, size int) []StageRow {
	start = max(off, min(start, off+len(p.Stages)-1))
	end := min(off+len(p.Stages), start+max(size, 0))
	if end <= start {
		return nil
	}
	rows := make([]StageRow, end-start)
	for i := start; i < end; i++ {
		s := p.Stages[i-off]
		used := 0.0
		if s.LimitBytes > 0 {
			used = float64(s.MemoryBytes) / float64(s.LimitBytes)
		}
		r := StageRow{
			Stage: i, Device: s.Device, Layers: stageRuns(p, i-off),
			Names:   s.FirstName + " … " + s.LastName,
			Compute: units.Time(s.ComputeSeconds, model.Seconds), Transfer: units.Time(s.TransferSeconds, model.Seconds),
			Memory: units.Bytes(s.MemoryBytes), Limit: units.Bytes(s.LimitBytes),
			Used: fmt.Sprintf("%.0f%%", 100*used), UsedPct: math.Min(100, 100*used),
			Over: s.MemoryBytes > s.LimitBytes, Bottleneck: i == slow, InFlight: s.InFlight,
		}
		for _, part := range []struct {
			name, class string
			v           int64
		}{
			{"weights and gradients", "mp-w", s.ParamBytes},
			{"optimizer state", "mp-o", s.OptimizerBytes},
			{"other static (code, shared)", "mp-x", s.ExclusiveBytes + s.SharedBytes - s.Memory.PipelineBufferBytes},
			{"pipeline stage buffers (PyTorch's, one set per microbatch)", "mp-b", s.Memory.PipelineBufferBytes},
			{fmt.Sprintf("activations of %d microbatches in flight", max(s.InFlight-1, 0)), "mp-a", s.StashBytes},
			{"working peak of one microbatch (temporaries, activations)", "mp-t", s.PeakBytes},
			{"framework (CUDA context, workspaces) and allocator reserve", "mp-f", s.FrameworkBytes + s.ReservedBytes},
		} {
			if part.v == 0 && (part.class == "mp-b" || part.class == "mp-f") {
				continue // parts most plans do not have
			}
			pct := 0.0
			if s.LimitBytes > 0 {
				pct = 100 * float64(part.v) / float64(s.LimitBytes)
			}
			r.Parts = append(r.Parts, MemPart{Name: part.name, Class: part.class, Value: units.Bytes(part.v), Pct: pct})
		}
		rows[i-start] = r
	}
	return rows
}

// Timeline is the Schedule panel's SVG: a row per device with its operations over the
// step, and a row per device of microbatches in flight over time.
type Timeline struct {
	Width, Height, RowH, Left float64
	Rows                      []TimelineRow
	Ops                       []TimelineOp
	// Merged are the operations narrower than minOpWidth, drawn as one path per device
	// and kind, not as an element each (a long schedule's 2,000 operations were 8,000
	// elements, 400 ms of the page's thread to build and draw).
	Merged   []TimelineMerged
	Ticks    []Tick
	Makespan string
	// Window is the time drawn where it is less than the step (the operations that start
	// in it, on every device drawn), else "".
	Window string
	// InFlight are step charts (SVG polyline points) of microbatches in flight per stage.
	InFlight                  []Polyline
	InFlightHeight, InFlightY float64
	MaxInFlight               int
	// Devices is the step's device count; the rows are the first maxTimelineDevices.
	Devices int
}

// TimelineRow labels a device's row.
type TimelineRow struct {
	Y     float64
	Label string
	Busy  string // "busy 81%"
}

// TimelineOp is one operation: forward, backward or weight-gradient of one microbatch.
type TimelineOp struct {
	X, Y, W, H float64
	Kind       string // "F", "B", "W"
	Class      string
	Text       string // the microbatch, when it fits
	Title      string
}

// TimelineMerged is a device's operations of one kind (Class) too narrow to tell apart,
// as SVG path data of rectangles (D, at most maxPathBytes: a long string is not drawn
// through vugu's render buffer; more are further paths of the same device and kind),
// and a title saying how many there are.
type TimelineMerged struct {
	Class string
	D     string
	Title string
	kind  wire.OpKind
	n     int // the device's operations of the kind, in its first path
}

// minOpWidth is the width (SVG units, pixels at 1:1) under which an operation is drawn
// in its device's merged path; maxPathBytes bounds a path's data.
const (
	minOpWidth   = 3
	maxPathBytes = 12 << 10
)

// Tick is a time axis tick.
type Tick struct {
	X     float64
	Label string
}

// Polyline is a step chart, drawn as consecutive polylines: Points are their SVG
// points, each at most maxPolylinePoints points (a long string is not drawn through
// vugu's render buffer: RenderBufferBytes), each starting where the one before ends.
type Polyline struct {
	Points []string
	Label  string
	Y      float64
}

// maxTimelineOps bounds what the timeline draws: beyond it the operations of the later
// microbatches are left out, and the panel says so. maxTimelineDevices bounds the
// devices (rows, and stages in flight) it draws: the first ones.
const (
	maxTimelineOps     = 6000
	maxTimelineDevices = 64
)

// maxPolylinePoints bounds one polyline's points: "1234.5,1234.5 " is at most 14
// bytes, so 500 points stay far below RenderBufferBytes.
const maxPolylinePoints = 500

// stepPoints draws a step chart at the timeline's resolution: the samples (x, y) in x
// order, each a change of level from the one before (starting at y0), and its last level
// carried to xEnd. Changes that fall in one column of the viewBox (1 unit wide) draw as
// one vertical stroke spanning their levels, so the chart has at most four points per
// column however many microbatches the step has, and it looks the same on the screen
// (Douglas–Peucker-like simplification is not needed: a column is a pixel or less).
func stepPoints(xs, ys []float64, y0, xEnd float64) [][2]float64 {
	pts := make([][2]float64, 0, 8)
	prev := y0
	for i := 0; i < len(xs); {
		col, x := math.Floor(xs[i]), xs[i]
		lo, hi := prev, prev
		j := i
		for ; j < len(xs) && math.Floor(xs[j]) == col; j++ {
			lo, hi = math.Min(lo, ys[j]), math.Max(hi, ys[j])
		}
		last := ys[j-1]
		// (x, prev), the span's far end, its near end, then the level the column ends
		// at, each only where it differs from the point before.
		for _, y := range [4]float64{prev, hi, lo, last} {
			if n := len(pts); n == 0 || pts[n-1] != [2]float64{x, y} {
				pts = append(pts, [2]float64{x, y})
			}
		}
		prev, i = last, j
	}
	return append(pts, [2]float64{xEnd, prev})
}

// chunkPoints writes points as SVG polylines of at most maxPolylinePoints each, each
// starting at the point the one before ends at.
func chunkPoints(pts [][2]float64) []string {
	var out []string
	for start := 0; start < len(pts); start += maxPolylinePoints - 1 {
		var b []byte
		for i, p := range pts[start:min(len(pts), start+maxPolylinePoints)] {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendFloat(b, p[0], 'f', 1, 64)
			b = append(b, ',')
			b = strconv.AppendFloat(b, p[1], 'f', 1, 64)
		}
		out = append(out, string(b))
		if start+maxPolylinePoints >= len(pts) {
			break
		}
	}
	return out
}

// NewTimeline lays out a simulated step over its first window seconds (a View's
// TimelineSeconds: the operations that start in it; the whole step where window is 0 or
// the makespan). It returns how many operations it draws and how many it has.
func NewTimeline(s *wire.ScheduleResult, window float64) (t Timeline, drawn, total int) {
	if s == nil || len(s.Events) == 0 || s.MakespanSeconds <= 0 {
		return t, 0, 0
	}
	t.Width, t.Left, t.RowH = 1000, 90, 26
	span := s.MakespanSeconds
	if window > 0 && window < span {
		span = window
		t.Window = units.Time(span, model.Seconds)
	}
	scale := (t.Width - t.Left - 10) / span
	y := 18.0
	t.Devices = len(s.Events)
	for d, evs := range s.Events {
		if d >= maxTimelineDevices {
			for range evs {
				total++
			}
			continue
		}
		busy := ""
		if d < len(s.BusySeconds) {
			busy = fmt.Sprintf("busy %.0f%%", 100*s.BusySeconds[d]/s.MakespanSeconds)
		}
		t.Rows = append(t.Rows, TimelineRow{Y: y, Label: fmt.Sprintf("device %d", d), Busy: busy})
		first := len(t.Merged) // this device's merged paths are t.Merged[first:]
		for _, e := range evs {
			total++
			if drawn >= maxTimelineOps {
				continue
			}
			drawn++
			op := TimelineOp{
				X: t.Left + e.StartSeconds*scale, Y: y, W: math.Max(0.5, (e.EndSeconds-e.StartSeconds)*scale), H: t.RowH - 4,
				Kind: string(e.Kind), Class: "op-" + strings.ToLower(string(e.Kind)),
			}
			mb := strconv.Itoa(e.Microbatch)
			if e.Microbatch < 0 {
				mb = "dummy"
				op.Class += " op-dummy"
			}
			if op.W < minOpWidth {
				// The device's path of this kind with room left (the last one of it).
				i, head := -1, -1
				for j := first; j < len(t.Merged); j++ {
					if t.Merged[j].Class == op.Class {
						i = j
						if head < 0 {
							head = j
						}
					}
				}
				r := rectPath(op.X, op.Y, op.W, op.H)
				if i < 0 || len(t.Merged[i].D)+len(r) > maxPathBytes {
					t.Merged = append(t.Merged, TimelineMerged{Class: op.Class, kind: e.Kind})
					i = len(t.Merged) - 1
					if head < 0 {
						head = i
					}
				}
				t.Merged[i].D += r
				t.Merged[head].n++
				continue
			}
			if op.W >= float64(len(mb)+1)*7 {
				op.Text = string(e.Kind) + mb
			}
			op.Title = fmt.Sprintf("device %d, stage %d: %s of microbatch %s, %s to %s", d, e.Stage, opName(e.Kind), mb,
				units.Time(e.StartSeconds, model.Seconds), units.Time(e.EndSeconds, model.Seconds))
			t.Ops = append(t.Ops, op)
		}
		for i := first; i < len(t.Merged); i++ {
			if m := &t.Merged[i]; m.n > 0 {
				m.Title = fmt.Sprintf("device %d: %s of %d operations too short to draw apart", d, opName(m.kind), m.n)
				for j := i + 1; j < len(t.Merged); j++ {
					if t.Merged[j].Class == m.Class {
						t.Merged[j].Title = m.Title
					}
				}
			}
		}
		y += t.RowH
	}
	for i := 0; i <= 5; i++ {
		v := span * float64(i) / 5
		t.Ticks = append(t.Ticks, Tick{X: t.Left + v*scale, Label: units.Time(v, model.Seconds)})
	}
	t.Makespan = units.Time(s.MakespanSeconds, model.Seconds)
	// Microbatches in flight per stage over time, one step chart per stage.
	t.InFlightY = y + 26
	for _, c := range s.MaxInFlight {
		t.MaxInFlight = max(t.MaxInFlight, c)
	}
	t.InFlightHeight = 20
	for st, samples := range s.InFlight {
		if len(samples) == 0 || t.MaxInFlight == 0 || st >= maxTimelineDevices {
			continue
		}
		base := t.InFlightY + float64(len(t.InFlight))*(t.InFlightHeight+8) + t.InFlightHeight
		xs, ys := make([]float64, len(samples)), make([]float64, len(samples))
		for i, sm := range samples {
			xs[i] = t.Left + sm.TimeSeconds*scale
			ys[i] = base - float64(sm.Count)/float64(t.MaxInFlight)*t.InFlightHeight
		}
		t.InFlight = append(t.InFlight, Polyline{Points: chunkPoints(stepPoints(xs, ys, base, t.Width-10)), Y: base,
			Label: fmt.Sprintf("stage %d", st)})
	}
	t.Height = t.InFlightY + float64(len(t.InFlight))*(t.InFlightHeight+8) + 24
	return t, drawn, total
}

// rectPath is SVG path data of a rectangle.
func rectPath(x, y, w, h float64) string {
	b := []byte{'M'}
	b = strconv.AppendFloat(b, x, 'f', 1, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, y, 'f', 1, 64)
	b = append(b, 'h')
	b = strconv.AppendFloat(b, w, 'f', 2, 64)
	b = append(b, 'v')
	b = strconv.AppendFloat(b, h, 'f', 1, 64)
	b = append(b, 'h')
	b = strconv.AppendFloat(b, -w, 'f', 2, 64)
	return string(append(b, 'z'))
}

func opName(k wire.OpKind) string {
	switch k {
	case wire.OpForward:
		return "forward"
	case wire.OpBackward:
		return "backward"
	case wire.OpWeightGrad:
		return "weight gradient"
	}
	return string(k)
}

// LayerRow is one row of the layer table: with the result's layer costs
// (request.layers), the layer's times and memory, formatted.
type LayerRow struct {
	Index                                          int
	Name, Stage                                    string
	Forward, Backward, Params, Activations, Output string
	// Recompute is what the layer recomputes under recompute auto: "whole layer",
	// "attention core", or "".
	Recompute string
}

// LayerPage is the rows [start, start+size) of the layer table: the table shows a window
// of the layers, so that a model of 10,000 layers stays responsive. Core's result names
// the layers (ModelInfo.LayerNames) and, when the request asks (layers), gives their
// costs (ModelInfo.LayerCosts); bounds place them on stages.
func LayerPage(m *wire.ModelInfo, stageOf []int, start, size int) []LayerRow {
	return layerPage(m, 0, stageOf, start, size)
}

// layerPage is LayerPage of a model whose layer names and costs, and stageOf, start at
// layer off (a spec.View's).
func layerPage(m *wire.ModelInfo, off int, stageOf []int, start, size int) []LayerRow {
	if m == nil || m.Layers == 0 {
		return nil
	}
	n := m.Layers
	start = max(0, min(start, n-1))
	end := min(n, start+size)
	rows := make([]LayerRow, 0, end-start)
	for l := start; l < end; l++ {
		r, i := LayerRow{Index: l}, l-off
		if i < 0 {
			i = len(m.LayerNames) + len(stageOf) + n // outside the window: no names, no costs
		}
		if i < len(m.LayerNames) {
			r.Name = m.LayerNames[i]
		}
		if i < len(stageOf) && stageOf[i] >= 0 {
			r.Stage = strconv.Itoa(stageOf[i])
		}
		if lc := m.LayerCosts; lc != nil && i < len(lc.ParamBytes) {
			unit := model.TimeUnit(m.TimeUnit)
			if i < len(lc.ForwardCycles) {
				r.Forward, r.Backward = units.Time(float64(lc.ForwardCycles[i]), unit), units.Time(float64(lc.BackwardCycles[i]), unit)
			} else if i < len(lc.ForwardSeconds) {
				r.Forward, r.Backward = units.Time(lc.ForwardSeconds[i], unit), units.Time(lc.BackwardSeconds[i], unit)
			}
			r.Params, r.Activations = units.Bytes(lc.ParamBytes[i]), units.Bytes(lc.ActivationBytes[i])
			if i < len(lc.OutputBytes) {
				r.Output = units.Bytes(lc.OutputBytes[i])
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ParseBoundaries reads boundaries typed by a person: numbers separated by commas or
// spaces.
func ParseBoundaries(s string) ([]int, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	out := make([]int, 0, len(f))
	for _, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil {
			if len(x) > 40 { // a paste of anything: say which, not all of it
				x = x[:40] + "…"
			}
			return nil, fmt.Errorf("boundaries: %q is not a whole number", x)
		}
		out = append(out, v)
	}
	return out, nil
}

// markRecomputed fills the rows' Recompute from the plan's stages (recompute auto).
func markRecomputed(rows []LayerRow, p *wire.Plan) {
	if len(rows) == 0 {
		return
	}
	first, last := rows[0].Index, rows[len(rows)-1].Index
	for _, s := range p.Stages {
		if s.Recompute == nil {
			continue
		}
		for _, l := range s.Recompute.Layers {
			if l.Layer < first || l.Layer > last {
				continue
			}
			rows[l.Layer-first].Recompute = wire.RecomputeLabel(l.Part)
		}
	}
}
