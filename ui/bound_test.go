package ui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vugu/vugu"

	"pipeplan/core/wire"
)

// deepProfile is a native profile of n layers in a chain.
func deepProfile(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name": "deep", "inputs": [{"id": "x", "bytes": 1024}], "layers": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		in := "x"
		if i > 0 {
			in = fmt.Sprintf("h%d", i-1)
		}
		fmt.Fprintf(&b, `{"name": "l%d", "forward_seconds": 0.0001, "backward_seconds": 0.0002, "param_bytes": 1048576, "activation_bytes": 1048576, "inputs": [%q], "outputs": [{"id": "h%d", "bytes": 4096}]}`, i, in, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// build builds the page for a as the browser does, without rendering it.
func build(t *testing.T, a *App) *vugu.BuildResults {
	t.Helper()
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	return env.RunBuild(&Root{A: a})
}

// TestBoundRender: what does not fit domrender's buffer is cut or left out, to the
// byte: a text of RenderBufferBytes-6 bytes is an instruction of RenderBufferBytes-1,
// the most the buffer takes beside its terminator.
func TestBoundRender(t *testing.T) {
	fits := strings.Repeat("é", (RenderBufferBytes-6)/2) // 16378 bytes
	long := fits + "x"
	root := &vugu.VGNode{Type: vugu.ElementNode, Data: "div"}
	keep := vgText(vgElement(root, "", "p"), fits)
	cut := vgText(vgElement(root, "", "pre"), long)
	in := vgElement(root, "", "input", "id", "x", "title", long[:RenderBufferBytes-9-len("title")-1])
	vgProp(in, "value", strings.Repeat("y", RenderBufferBytes))
	vgProp(in, "checked", true)
	a := vgElement(root, "", "a", "href", long)
	br := &vugu.BuildResults{Out: &vugu.BuildOut{Out: []*vugu.VGNode{root}}}
	if n := BoundRender(br); n != 3 { // the pre's text, the input's value, the link's href
		t.Errorf("BoundRender changed %d, want 3", n)
	}
	if keep.Data != fits {
		t.Error("a text that fits was cut")
	}
	if n := textInstruction(cut.Data); n > maxInstruction || !strings.HasSuffix(cut.Data, fmt.Sprintf(" … (%d more bytes not shown)", len(long)-strings.Index(cut.Data, " …"))) {
		t.Errorf("the cut text is an instruction of %d bytes ending %q", n, cut.Data[len(cut.Data)-40:])
	}
	if len(in.Attr) != 2 || len(in.Prop) != 1 || in.Prop[0].Key != "checked" || len(a.Attr) != 0 {
		t.Errorf("kept attributes %v, properties %v, link attributes %v", in.Attr, in.Prop, a.Attr)
	}
	if again := BoundRender(br); again != 0 {
		t.Errorf("a bounded output is changed again: %d", again)
	}
}

// TestLongStringsStayOutOfTheVirtualDOM: the three ways issue 23 found to kill the page
// (a 5,000-layer profile's Export panel: its link; Llama-3-8B with 1,024 microbatches'
// Schedule panel: the microbatches in flight; a 20,000-layer profile on thousands of
// devices: the boundaries) build a page that fits vugu's render buffer as it is, every
// panel, with the long strings among the detached values.
func TestLongStringsStayOutOfTheVirtualDOM(t *testing.T) {
	deep := NewApp(nil, &fakeHost{}, local)
	deep.Import("deep.json", deepProfile(5000))
	llama := NewApp(nil, &fakeHost{}, local)
	llama.PickModel("arch:meta-llama-3-8b")
	llama.SetPlanOption("microbatches", "1024")
	wide := NewApp(nil, &fakeHost{}, local)
	wide.Import("deep.json", deepProfile(20000))
	wide.SetPlanOption("microbatches", "1")
	wide.SetCluster("per_node", "3000")
	for _, tc := range []struct {
		name string
		a    *App
		// long is the detached value that would not fit.
		long string
	}{
		{"5,000 layers", deep, "#share-link"},
		{"1,024 microbatches", llama, ""},
		{"3,000 stages", wide, "#bar-main"},
	} {
		if tc.a.Err != nil || tc.a.Res == nil || tc.a.NoticeBad {
			t.Fatalf("%s: no plan: %v %q", tc.name, tc.a.Err, tc.a.Notice)
		}
		found := tc.long == ""
		for _, tab := range Tabs {
			tc.a.SetTab(tab.ID)
			if changed := BoundRender(build(t, tc.a)); changed > 0 {
				t.Errorf("%s, %s panel: %d strings do not fit the render buffer", tc.name, tab.ID, changed)
			}
			for _, d := range tc.a.Detached() {
				if d.Selector == tc.long && attrInstruction(d.Name, d.Value) > maxInstruction {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: %s is not a detached value longer than the buffer: the case proves nothing", tc.name, tc.long)
		}
	}
	// The Schedule panel's chart of microbatches in flight: decimated, and in pieces.
	llama.SetTab("schedule")
	tl, _, _ := llama.Timeline()
	for _, p := range tl.InFlight {
		n := 0
		for _, pts := range p.Points {
			n += strings.Count(pts, " ") + 1
		}
		if n > 4*1000+len(p.Points) {
			t.Errorf("%s: %d points, more than four a column", p.Label, n)
		}
	}
	// The stage table and the per-device overrides draw windows.
	wide.SetTab("plan")
	if n := len(wide.Rows()); n != StagePageSize {
		t.Errorf("the stage table draws %d rows of 3,000, want %d", n, StagePageSize)
	}
	wide.PageStages(2990)
	if r := wide.Rows(); len(r) != StagePageSize || r[0].Stage != 3000-StagePageSize {
		t.Errorf("the last window: %d rows from stage %d", len(r), r[0].Stage)
	}
	// The stage bar draws groups of stages, without handles, end to end.
	bar := wide.Bar()
	if len(bar.Segments) != maxBarSegments || len(bar.Handles) != 0 {
		t.Errorf("the bar of 3,000 stages: %d segments, %d handles", len(bar.Segments), len(bar.Handles))
	}
	x, bottlenecks := 0.0, 0
	for i, sg := range bar.Segments {
		if math.Abs(sg.X-x) > 1e-9 || sg.Stage != 30*i {
			t.Errorf("segment %d: stage %d at %g, want stage %d at %g", i, sg.Stage, sg.X, 30*i, x)
		}
		x = sg.X + sg.W
		if sg.Bottleneck {
			bottlenecks++
		}
	}
	if math.Abs(x-BarWidth) > 1e-6 || bottlenecks != 1 {
		t.Errorf("the bar ends at %g with %d bottleneck groups", x, bottlenecks)
	}
	if n := len(wide.DeviceWindow()); n != DevicePageSize {
		t.Errorf("the overrides draw %d devices, want %d", n, DevicePageSize)
	}
}

// TestStepPoints: the decimated step chart covers, in every column, the levels the
// series takes there, ends each column at the series' level, and carries the last level
// to the end; in pieces that join.
func TestStepPoints(t *testing.T) {
	// A series with 20 changes a column for 400 columns, then a quiet one.
	var xs, ys []float64
	for i := range 8000 {
		xs = append(xs, 100+float64(i)/20)
		ys = append(ys, float64(i%7))
	}
	xs, ys = append(xs, 600), append(ys, 3)
	pts := stepPoints(xs, ys, 10, 900)
	if len(pts) > 4*401+1 {
		t.Errorf("%d points for 401 columns", len(pts))
	}
	// Brute force: per column, the levels of the series (with the level before it).
	type span struct{ lo, hi, last float64 }
	want := map[float64]*span{}
	prev := 10.0
	for i, x := range xs {
		c := math.Floor(x)
		s := want[c]
		if s == nil {
			s = &span{prev, prev, prev}
			want[c] = s
		}
		s.lo, s.hi, s.last = math.Min(s.lo, ys[i]), math.Max(s.hi, ys[i]), ys[i]
		prev = ys[i]
	}
	got := map[float64]*span{}
	for i, p := range pts[:len(pts)-1] {
		c := math.Floor(p[0])
		s := got[c]
		if s == nil {
			s = &span{p[1], p[1], p[1]}
			got[c] = s
		}
		s.lo, s.hi, s.last = math.Min(s.lo, p[1]), math.Max(s.hi, p[1]), p[1]
		if i > 0 && p[0] < pts[i-1][0] {
			t.Fatalf("point %d goes back", i)
		}
	}
	for c, w := range want {
		if g := got[c]; g == nil || *g != *w {
			t.Errorf("column %g: drawn %+v, want %+v", c, g, w)
		}
	}
	if last := pts[len(pts)-1]; last != [2]float64{900, 3} {
		t.Errorf("ends at %v", last)
	}
	chunks := chunkPoints(pts)
	if len(chunks) < 2 {
		t.Fatalf("%d points in %d pieces", len(pts), len(chunks))
	}
	for i := 1; i < len(chunks); i++ {
		end := chunks[i-1][strings.LastIndex(chunks[i-1], " ")+1:]
		if !strings.HasPrefix(chunks[i], end+" ") {
			t.Errorf("piece %d does not start where %d ends (%s)", i, i-1, end)
		}
	}
	for i, c := range chunks {
		if n := strings.Count(c, " ") + 1; n > maxPolylinePoints {
			t.Errorf("piece %d has %d points", i, n)
		}
	}
}

// TestStageRuns: a stage's layers as runs, as wire.LayerRuns writes them, for ranges
// (written without listing them) and for a graph split's lists.
func TestStageRuns(t *testing.T) {
	p := &wire.Plan{Stages: []wire.Stage{
		{FirstLayer: 0, LastLayer: 7}, {FirstLayer: 8, LastLayer: 8}, {FirstLayer: 9, LastLayer: 199999},
		{Layers: []int{0, 1, 2, 5, 7, 8}}, {FirstLayer: 3, LastLayer: 2},
	}}
	for i := range p.Stages {
		if got, want := stageRuns(p, i), wire.LayerRuns(p.StageLayers(i)); got != want {
			t.Errorf("stage %d: %q, want %q", i, got, want)
		}
	}
}
