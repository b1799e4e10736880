package wire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// chain is a native profile of n layers in a chain, each 0.1 ms forward and 0.2 ms
// backward (layer i's forward is 0.1 ms + i ns, so that stages differ).
func chain(n int) string {
	var b strings.Builder
	b.WriteString(`{"name":"chain","inputs":[{"id":"x","bytes":1024}],"layers":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		in := "x"
		if i > 0 {
			in = fmt.Sprintf("h%d", i-1)
		}
		fmt.Fprintf(&b, `{"name":"l%d","forward_seconds":%g,"backward_seconds":0.0002,"param_bytes":1048576,"activation_bytes":1048576,"inputs":[%q],"outputs":[{"id":"h%d","bytes":4096}]}`, i, 0.0001+float64(i)*1e-9, in, i)
	}
	b.WriteString("]}")
	return b.String()
}

func run(t *testing.T, layers, devices, microbatches int) *wire.Result {
	t.Helper()
	r, err := request.Decode(fmt.Appendf(nil, `{"version":1,"model":{"document":%s},"cluster":{"device":"A100-80GB","count":%d},"schedule":{"microbatches":%d},"events":true,"layers":true}`, chain(layers), devices, microbatches))
	if err != nil {
		t.Fatal(err)
	}
	res, err := request.Run(context.Background(), r)
	if err != nil || res.Plan == nil {
		t.Fatalf("%v (feasible %v)", err, res != nil && res.Feasible)
	}
	return res
}

// TestCut: a View holds the rows of its window, as the whole result has them, the
// bottleneck and the groups of the whole plan, and its JSON stays under a bound however
// large the result.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		layers, devices, microbatches int
		w                             wire.Window
	}{
		{6000, 1000, 1, wire.Window{StageStart: 450, LayerStart: 2990}},
		{6000, 1000, 1, wire.Window{StageStart: 5000, LayerStart: 9000}}, // past the end: the last rows
		{300, 4, 400, wire.Window{}},                                     // a long schedule
		{30, 3, 4, wire.Window{StageStart: 1, LayerStart: 7}},            // small: whole
	} {
		t.Run(fmt.Sprintf("%d-layers-%d-devices-%d-microbatches", c.layers, c.devices, c.microbatches), func(t *testing.T) {
			res := run(t, c.layers, c.devices, c.microbatches)
			whole, _ := json.Marshal(res)
			v := wire.Cut(res, c.w)
			b, _ := json.Marshal(v)
			t.Logf("the result: %d bytes of JSON; its view: %d", len(whole), len(b))
			if len(b) > 512<<10 {
				t.Errorf("the view is %d bytes of JSON", len(b))
			}
			p := res.Plan
			if v.Stages != len(p.Stages) {
				t.Errorf("stages %d, want %d", v.Stages, len(p.Stages))
			}
			// A plan drawn stage by stage is held whole; a larger one a page at a time.
			size := len(p.Stages)
			if size > wire.ViewGroups {
				size = wire.ViewStages
			}
			wantStart := max(0, min(c.w.StageStart, len(p.Stages)-size))
			got := v.Result.Plan.Stages
			if v.StageStart != wantStart || len(got) != size {
				t.Fatalf("stages from %d, %d of them; want from %d", v.StageStart, len(got), wantStart)
			}
			for i, s := range got {
				if q := p.Stages[v.StageStart+i]; s.FirstLayer != q.FirstLayer || s.LastLayer != q.LastLayer || s.ComputeSeconds != q.ComputeSeconds || s.MemoryBytes != q.MemoryBytes {
					t.Fatalf("stage %d differs", v.StageStart+i)
				}
			}
			slow := 0
			for i, s := range p.Stages {
				if s.ComputeSeconds > p.Stages[slow].ComputeSeconds {
					slow = i
				}
			}
			if v.Bottleneck != slow || v.BottleneckSeconds != p.Stages[slow].ComputeSeconds {
				t.Errorf("bottleneck %d (%g), want %d", v.Bottleneck, v.BottleneckSeconds, slow)
			}
			if len(p.Stages) > wire.ViewGroups {
				if len(v.Groups) > wire.ViewGroups || v.Groups[0].First != 0 || v.Groups[len(v.Groups)-1].Last != len(p.Stages)-1 {
					t.Errorf("%d groups, from %d to %d", len(v.Groups), v.Groups[0].First, v.Groups[len(v.Groups)-1].Last)
				}
				sum, total := 0.0, 0.0
				for k, g := range v.Groups {
					if k > 0 && g.First != v.Groups[k-1].Last+1 {
						t.Errorf("group %d starts at %d", k, g.First)
					}
					sum += g.ComputeSeconds
				}
				for _, s := range p.Stages {
					total += s.ComputeSeconds
				}
				if d := sum - total; d > 1e-9*total || d < -1e-9*total {
					t.Errorf("the groups' compute %g, the stages' %g", sum, total)
				}
			} else if v.Groups != nil {
				t.Errorf("%d groups of %d stages", len(v.Groups), len(p.Stages))
			}
			n := res.Model.Layers
			ls := max(0, min(c.w.LayerStart, n-wire.ViewLayers))
			end := min(n, ls+wire.ViewLayers)
			if v.LayerStart != ls || !slices.Equal(v.Result.Model.LayerNames, res.Model.LayerNames[ls:end]) ||
				!slices.Equal(v.Result.Model.LayerCosts.ParamBytes, res.Model.LayerCosts.ParamBytes[ls:end]) {
				t.Errorf("layers from %d: %v", v.LayerStart, v.Result.Model.LayerNames)
			}
			if !slices.Equal(v.LayerStages, p.StageOfLayer()[ls:end]) {
				t.Errorf("the layers' stages %v, want %v", v.LayerStages, p.StageOfLayer()[ls:end])
			}
			s := res.Schedule
			var got2 wire.View // the page's: decoded, and its events expanded
			if err := json.Unmarshal(b, &got2); err != nil {
				t.Fatal(err)
			}
			got2.Expand()
			cs := got2.Result.Schedule
			events := 0
			for _, e := range s.Events {
				events += len(e)
			}
			checkTimeline(t, s, &got2)
			if v.Events != events {
				t.Errorf("the view says %d events of %d", v.Events, events)
			}
			if len(cs.InFlight) > wire.ViewDevices || len(cs.Events) > wire.ViewDevices || len(cs.BusySeconds) > wire.ViewDevices {
				t.Errorf("the schedule's lists hold %d, %d, %d devices", len(cs.InFlight), len(cs.Events), len(cs.BusySeconds))
			}
			if res.Plan.Stages[0].FirstName == "" || len(res.Plan.Stages) != v.Stages {
				t.Error("Cut changed the result")
			}
		})
	}
}

// TestDecimate: a step chart decimated keeps its highest count in each span, its first
// and last points, and at most limit points; a short one is kept as it is.
func TestDecimate(t *testing.T) {
	var s []wire.Sample
	for i := range 5000 {
		s = append(s, wire.Sample{TimeSeconds: float64(i), Count: (i * 7919) % 13})
	}
	s[4321].Count = 99
	d := wire.Decimate(s, 600)
	if len(d) > 600 || d[0].TimeSeconds != s[0].TimeSeconds {
		t.Fatalf("%d points, first %v", len(d), d[0])
	}
	peak := 0
	for k, x := range d {
		peak = max(peak, x.Count)
		if k > 0 && x.TimeSeconds <= d[k-1].TimeSeconds {
			t.Fatalf("point %d goes back in time", k)
		}
	}
	if peak != 99 {
		t.Errorf("the peak %d, want 99", peak)
	}
	if last := d[len(d)-1]; last.TimeSeconds != s[len(s)-1].TimeSeconds && last.Count != s[len(s)-1].Count {
		t.Errorf("ends at %v, the chart at %v", last, s[len(s)-1])
	}
	if short := s[:600]; len(wire.Decimate(short, 600)) != 600 {
		t.Error("a chart of the limit was decimated")
	}
}

// TestViewBounded: what the page's thread decodes of a plan does not grow with the plan.
// Less the plan's boundaries (an int per stage, which the page shows whole), the view of
// 20,000 layers on 3,000 stages is the size of the view of 2,000 layers on 200 stages:
// a page of stages, a window of layers, the stage bar's groups, and the first devices of
// the schedule.
func TestViewBounded(t *testing.T) {
	size := func(layers, devices int) (all, bounds int) {
		v := wire.Cut(run(t, layers, devices, 1), wire.Window{StageStart: devices / 2, LayerStart: layers / 2})
		b, _ := json.Marshal(v)
		bb, _ := json.Marshal(v.Result.Plan.Boundaries)
		return len(b), len(bb)
	}
	smallAll, smallBounds := size(2000, 200)
	bigAll, bigBounds := size(20000, 3000)
	small, big := smallAll-smallBounds, bigAll-bigBounds
	t.Logf("views: %d bytes for 2,000 layers on 200 stages (%d of boundaries), %d for 20,000 on 3,000 (%d of boundaries)", smallAll, smallBounds, bigAll, bigBounds)
	if big > small+small/20 || big > 96<<10 {
		t.Errorf("less the boundaries, the view of 20,000 layers on 3,000 stages is %d bytes, that of 2,000 on 200 %d (want within 5%%, and at most 96 KiB)", big, small)
	}
}

// checkTimeline: a view's timeline (decoded and expanded) keeps, on each device it
// keeps, every operation of the whole that starts before its window's end and no other,
// with its stage, kind and microbatch, and its times to a unit (TimeUnitSeconds); every device kept has operations, the window
// is the makespan where the operations fit, and they are at most ViewEvents.
func checkTimeline(t *testing.T, s *wire.ScheduleResult, v *wire.View) {
	t.Helper()
	cs, w := v.Result.Schedule, v.TimelineSeconds
	all := 0
	for _, e := range s.Events[:min(len(s.Events), wire.ViewDevices)] {
		all += len(e)
	}
	if all <= wire.ViewEvents && (w != s.MakespanSeconds || len(cs.Events) != min(len(s.Events), wire.ViewDevices)) {
		t.Errorf("%d operations fit, yet the window is %g of %g s on %d devices", all, w, s.MakespanSeconds, len(cs.Events))
	}
	shown := 0
	for d, e := range cs.Events {
		if len(e) == 0 && len(s.Events[d]) > 0 {
			t.Errorf("device %d has no operation in the window (%g s)", d, w)
		}
		var want []wire.Event
		for _, o := range s.Events[d] {
			if o.StartSeconds < w || all <= wire.ViewEvents {
				want = append(want, o)
			}
		}
		if len(e) != len(want) {
			t.Fatalf("device %d: %d operations, want the %d that start before %g s", d, len(e), len(want), w)
		}
		for i, o := range e {
			x := want[i]
			if o.Stage != x.Stage || o.Kind != x.Kind || o.Microbatch != x.Microbatch ||
				math.Abs(o.StartSeconds-x.StartSeconds) > v.TimeUnitSeconds || math.Abs(o.EndSeconds-x.EndSeconds) > v.TimeUnitSeconds {
				t.Fatalf("device %d's operation %d is %+v, want %+v", d, i, o, x)
			}
		}
		shown += len(e)
	}
	if shown > wire.ViewEvents {
		t.Errorf("%d operations, over %d", shown, wire.ViewEvents)
	}
	// Samples are restored to within a unit: one before the window's end may be
	// rounded up to it, no further.
	for st, samples := range cs.InFlight {
		if len(samples) > wire.ViewSamples || len(samples) > 0 && samples[len(samples)-1].TimeSeconds > w+v.TimeUnitSeconds/2 && all > wire.ViewEvents {
			t.Errorf("stage %d: %d samples in flight, past the window", st, len(samples))
		}
	}
}

// TestCutTimeline: a long schedule's view keeps a window of the step common to every
// device it keeps, each with its operations in it, at most ViewEvents of them, and its
// JSON (the page's thread decodes it) stays small: 2,000 operations as objects were
// 295 KB.
func TestCutTimeline(t *testing.T) {
	for _, c := range []struct{ layers, devices, microbatches int }{
		{64, 8, 1024}, {128, 64, 256}, {300, 4, 400}, {30, 3, 4},
	} {
		t.Run(fmt.Sprintf("%d-devices-%d-microbatches", c.devices, c.microbatches), func(t *testing.T) {
			res := run(t, c.layers, c.devices, c.microbatches)
			b, _ := json.Marshal(wire.Cut(res, wire.Window{}))
			var v wire.View
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			v.Expand()
			n := 0
			for _, e := range v.Result.Schedule.Events {
				n += len(e)
			}
			t.Logf("%d operations of %d on %d devices, the first %.3g s of %.3g; %d bytes of JSON", n, v.Events, len(v.Result.Schedule.Events), v.TimelineSeconds, res.Schedule.MakespanSeconds, len(b))
			checkTimeline(t, res.Schedule, &v)
			// Up to 8 devices, each keeps at least its 250 first operations' window;
			// on 64, the last devices start after the others ran 2,000 operations
			// (a 1F1B warm-up of 64 - d forwards on device d): the view keeps fewer.
			if kept := len(v.Result.Schedule.Events); c.devices <= 8 && kept != c.devices || kept < c.devices*9/10 {
				t.Errorf("%d devices of %d kept", kept, c.devices)
			}
			ops, _ := json.Marshal(wire.Cut(res, wire.Window{}).Ops)
			if len(ops) > 48<<10 {
				t.Errorf("the view's operations are %d bytes of JSON", len(ops))
			}
		})
	}
}

// TestViewLongSchedule: the view of a long schedule, as the page's thread decodes it,
// is at most 100 KB of JSON (its timeline's operations and in-flight samples as
// integers: as objects, the samples alone were 72 to 97 KB), and expanded it gives
// back the cut's in-flight samples, each count exact and each time within a unit
// (View.TimeUnitSeconds). On 64 devices the plan's 64 stages, held whole for the stage
// bar (about 625 bytes each), come on top: the rest of the view is at most 100 KB.
// Megatron-Core runs the steps: eager PyTorch's pipeline stages would hold two boundary
// tensors per microbatch (cluster.PipelineStageBufferBytes), 128 GiB at 1,024.
func TestViewLongSchedule(t *testing.T) {
	llama := func(microbatches int) *wire.Result {
		r := &wire.Request{Version: 1, Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Framework: "megatron"}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 4, DevicesPerNode: 8}, Events: true}
		r.Schedule.Microbatches = microbatches
		res, err := request.Run(context.Background(), r)
		if err != nil || res.Schedule == nil {
			t.Fatalf("%v", err)
		}
		return res
	}
	for _, c := range []struct {
		name   string
		res    func() *wire.Result
		stages bool // the plan's stages count in the bound
	}{
		{"llama-3-8b-4-devices-1024-microbatches", func() *wire.Result { return llama(1024) }, true},
		{"chain-8-devices-1024-microbatches", func() *wire.Result { return run(t, 64, 8, 1024) }, true},
		{"chain-64-devices-256-microbatches", func() *wire.Result { return run(t, 128, 64, 256) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := c.res()
			cut := wire.Cut(res, wire.Window{})
			b, err := json.Marshal(cut)
			if err != nil {
				t.Fatal(err)
			}
			var in, ops int
			for _, s := range cut.Samples {
				in += len(s) / 2
			}
			for _, o := range cut.Ops {
				ops += len(o) / 5
			}
			stages, _ := json.Marshal(cut.Result.Plan.Stages)
			timeline, _ := json.Marshal([][][]int{cut.Ops, cut.Samples})
			t.Logf("%d bytes of JSON (%d of the plan's stages, %d of the timeline): %d operations, %d samples in flight on %d stages",
				len(b), len(stages), len(timeline), ops, in, len(cut.Samples))
			if n := len(b) - len(stages); c.stages && len(b) > 100_000 || n > 100_000 {
				t.Errorf("the view is %d bytes of JSON, %d less the plan's stages: over 100,000", len(b), n)
			}
			if len(timeline) > 64<<10 {
				t.Errorf("the timeline's operations and samples are %d bytes of JSON", len(timeline))
			}
			var v wire.View
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			v.Expand()
			got := v.Result.Schedule.InFlight
			want := cutSamples(res.Schedule, len(got), v.TimelineSeconds, v.TimelineSeconds == res.Schedule.MakespanSeconds)
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("%d stages of samples, want %d", len(got), len(want))
			}
			for st := range want {
				if len(got[st]) != len(want[st]) {
					t.Fatalf("stage %d: %d samples, want %d", st, len(got[st]), len(want[st]))
				}
				for i, x := range want[st] {
					if g := got[st][i]; g.Count != x.Count || math.Abs(g.TimeSeconds-x.TimeSeconds) > v.TimeUnitSeconds {
						t.Fatalf("stage %d's sample %d is %+v, want %+v (a unit is %g s)", st, i, g, x, v.TimeUnitSeconds)
					}
				}
			}
			checkTimeline(t, res.Schedule, &v)
		})
	}
}

// cutSamples is what a view keeps of s's in-flight samples, computed apart from Cut:
// each of the first stages' samples before the window's end (all where all operations
// are kept), decimated to ViewSamples.
func cutSamples(s *wire.ScheduleResult, stages int, window float64, all bool) [][]wire.Sample {
	var out [][]wire.Sample
	for _, samples := range s.InFlight[:min(stages, len(s.InFlight))] {
		var kept []wire.Sample
		for _, x := range samples {
			if all || x.TimeSeconds < window {
				kept = append(kept, x)
			}
		}
		out = append(out, wire.Decimate(kept, wire.ViewSamples))
	}
	return out
}
