package ui

import (
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestTimelineMergesNarrowOperations: operations too short to tell apart (under
// minOpWidth) are drawn in one path per device and kind, whose rectangles are each such
// operation where it is, and wider ones as elements of their own; every operation drawn
// is in one or the other, and no path's data is over maxPathBytes.
func TestTimelineMergesNarrowOperations(t *testing.T) {
	// Two devices; each runs 1,000 alternating forwards and backwards of 1 ms, then one
	// forward of 500 ms: a step of 1.5 s, 900 units wide, so 0.6 units a short operation.
	s := &wire.ScheduleResult{MakespanSeconds: 1.5}
	for d := range 2 {
		var evs []wire.Event
		for i := range 1000 {
			k := wire.OpForward
			if i%2 == 1 {
				k = wire.OpBackward
			}
			evs = append(evs, wire.Event{Stage: d, Kind: k, Microbatch: i / 2, StartSeconds: float64(i) * 0.001, EndSeconds: float64(i+1) * 0.001})
		}
		evs = append(evs, wire.Event{Stage: d, Kind: wire.OpForward, Microbatch: 500, StartSeconds: 1, EndSeconds: 1.5})
		s.Events = append(s.Events, evs)
	}
	tl, drawn, total := NewTimeline(s, 0)
	if drawn != 2002 || total != 2002 {
		t.Fatalf("drawn %d of %d, want 2002 of 2002", drawn, total)
	}
	if len(tl.Ops) != 2 || tl.Ops[0].Text != "F500" || tl.Ops[1].Y == tl.Ops[0].Y {
		t.Errorf("%d operations drawn apart, want the two long ones: %+v", len(tl.Ops), tl.Ops)
	}
	rects := 0
	want := []struct{ class, title string }{
		{"op-f", "device 0: forward of 500 operations too short to draw apart"},
		{"op-b", "device 0: backward of 500 operations too short to draw apart"},
		{"op-f", "device 1: forward of 500 operations too short to draw apart"},
		{"op-b", "device 1: backward of 500 operations too short to draw apart"},
	}
	// Each device's 500 forwards and 500 backwards: about 14 KB of path data each, so
	// two paths each (over maxPathBytes), all under the kind's title.
	var got []string
	seen := map[string]bool{}
	for _, m := range tl.Merged {
		if len(m.D) > maxPathBytes {
			t.Errorf("a path of %d bytes", len(m.D))
		}
		rects += strings.Count(m.D, "M")
		if k := m.Class + " " + m.Title; !seen[k] {
			seen[k] = true
			got = append(got, k)
		}
	}
	if len(tl.Merged) <= len(want) || len(got) != len(want) {
		t.Fatalf("%d merged paths: %q", len(tl.Merged), got)
	}
	for i, w := range want {
		if got[i] != w.class+" "+w.title {
			t.Errorf("merged %d: %q, want %s %q", i, got[i], w.class, w.title)
		}
	}
	if rects+len(tl.Ops) != drawn {
		t.Errorf("%d rectangles in paths and %d operations, want %d in all", rects, len(tl.Ops), drawn)
	}
	// The first forward of device 0: at the left edge, 0.6 units wide.
	if d := tl.Merged[0].D; !strings.HasPrefix(d, "M90.0 18.0h0.60v22.0h-0.60z") {
		t.Errorf("the first rectangle: %.40s", d)
	}
}

// TestTimelineWindow: a timeline of a view's window (the operations that start in the
// first window seconds) spans the window, says so, and gives each device's busy share of
// the whole step.
func TestTimelineWindow(t *testing.T) {
	s := &wire.ScheduleResult{MakespanSeconds: 10, BusySeconds: []float64{8}, Events: [][]wire.Event{{
		{Kind: wire.OpForward, StartSeconds: 0, EndSeconds: 1}, {Kind: wire.OpBackward, StartSeconds: 1, EndSeconds: 2.5},
	}}}
	for _, c := range []struct {
		window        float64
		shown, lastAt string
		end           float64
	}{{2, "2.00 s", "2.00 s", 990}, {0, "", "10.00 s", 990}, {10, "", "10.00 s", 990}} {
		tl, _, _ := NewTimeline(s, c.window)
		last := tl.Ticks[len(tl.Ticks)-1]
		if tl.Window != c.shown || last.Label != c.lastAt || last.X != c.end || tl.Rows[0].Busy != "busy 80%" || tl.Makespan != "10.00 s" {
			t.Errorf("window %g: shown %q, last tick %q at %g, %q, makespan %q", c.window, tl.Window, last.Label, last.X, tl.Rows[0].Busy, tl.Makespan)
		}
	}
}
