package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"pipeplan/core/wire"
	"pipeplan/wasm/planner/ops"
)

// chain is a native profile of n layers in a chain.
func chain(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name": "chain", "inputs": [{"id": "x", "bytes": 1024}], "layers": [`)
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

// importStored imports data as the planner worker does (ops.Store.Import, the answer to
// Host.ImportFile).
func importStored(a *App, name string, data []byte) {
	sum := sha256.Sum256(data)
	a.ImportAnswer(name, ops.Models.Import(name, hex.EncodeToString(sum[:]), data, true), nil)
}

// TestImportStoredModel: a large model file comes back from the planner as a reference:
// the page plans it, keeps a short fragment, and a page opened on that fragment plans
// the same model; one whose file the planner does not hold says so.
func TestImportStoredModel(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	data := chain(3000)
	importStored(a, "chain-3000.json", data)
	if a.Err != nil || a.Res == nil || a.Res.Model.Layers != 3000 || !a.StoredModel() {
		t.Fatalf("err %v, stored %v", a.Err, a.StoredModel())
	}
	if !strings.Contains(a.Notice, "Loaded chain-3000.json: 3000 layers. It is kept in this browser's storage") {
		t.Errorf("the notice: %s", a.Notice)
	}
	f := h.kept[len(h.kept)-1]
	if len(f) > 512 {
		t.Errorf("the fragment of a %d-byte model is %d bytes", len(data), len(f))
	}
	r, err := DecodeFragment(f, FlateInflate)
	if err != nil {
		t.Fatal(err)
	}
	b := NewApp(r, &fakeHost{}, local)
	if b.Err != nil || b.Res == nil || b.Res.Model.Layers != 3000 || b.Summary() != a.Summary() {
		t.Errorf("the fragment's page: %v, %+v", b.Err, b.Summary())
	}
	// Another browser: the reference names a file the planner does not hold.
	r.Model.Document = json.RawMessage(strings.Replace(string(r.Model.Document), `"stored":"sha256-`, `"stored":"sha256-0`, 1))
	c := NewApp(r, &fakeHost{}, local)
	if lines := c.ErrorLines(); len(lines) != 1 || !strings.Contains(lines[0], "chain-3000.json") || !strings.Contains(lines[0], "not in this one") {
		t.Errorf("a model not stored here: %q", lines)
	}
}

// TestViewWindows: the page holds a window of a large plan's stages and layers; paging
// past it brings the rows from the planner, as the whole result has them.
func TestViewWindows(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.SetPlanOption("microbatches", "1")
	importStored(a, "chain-3000.json", chain(3000))
	a.SetCluster("count", "300")
	if a.Err != nil || a.StageCount() != 300 || len(a.Res.Plan.Stages) > 100 {
		t.Fatalf("err %v, %d stages, %d held", a.Err, a.StageCount(), len(a.Res.Plan.Stages))
	}
	whole := new(wire.Result)
	if err := json.Unmarshal(a.ResultJSON(), whole); err != nil {
		t.Fatal(err)
	}
	stageOf := whole.Plan.StageOfLayer()
	a.PageStages(250)
	rows := a.Rows()
	if w := a.StageWindow(); w.Start != 250 || len(rows) != StagePageSize || rows[0].Stage != 250 ||
		rows[0].Layers != wire.LayerRuns(whole.Plan.StageLayers(250)) {
		t.Errorf("stages from %d: %d rows, the first %+v", w.Start, len(rows), rows[0])
	}
	a.PageLayers(0, 2222)
	layers := a.Layers()
	if len(layers) != LayerPageSize || layers[0].Name != "l2222" || layers[0].Stage != fmt.Sprint(stageOf[2222]) || layers[49].Stage != fmt.Sprint(stageOf[2271]) {
		t.Errorf("layers from 2222: %+v … %+v", layers[0], layers[len(layers)-1])
	}
	if bar := a.Bar(); len(bar.Segments) != 100 || bar.Boundaries != joinInts(whole.Plan.Boundaries) {
		t.Errorf("the bar: %d segments", len(bar.Segments))
	}
}

// laterHost runs the page's background work when the test says (run), so that answers
// can come in another order than they were asked for.
type laterHost struct {
	fakeHost
	queue []func()
}

func (h *laterHost) Background(f func()) { h.queue = append(h.queue, f) }

// TestViewWindowsPagedFast: a person pages three times before the planner answers; the
// stage table then shows the rows of where the person is, as the whole result has them,
// whether the windows come back in the order asked for or the reverse (the first answer
// replaced the view the later two were asked from, which then were dropped, leaving the
// table on rows the view did not hold).
func TestViewWindowsPagedFast(t *testing.T) {
	h := &laterHost{}
	a := NewApp(nil, &h.fakeHost, local)
	a.SetPlanOption("microbatches", "1")
	importStored(a, "chain-3000.json", chain(3000))
	a.SetCluster("count", "300")
	if a.Err != nil || a.StageCount() != 300 || len(a.Res.Plan.Stages) != wire.ViewStages {
		t.Fatalf("err %v, %d stages, %d held", a.Err, a.StageCount(), len(a.Res.Plan.Stages))
	}
	whole := new(wire.Result)
	if err := json.Unmarshal(a.ResultJSON(), whole); err != nil {
		t.Fatal(err)
	}
	a.Host = h
	for _, reverse := range []bool{false, true} {
		for range 3 {
			a.PageStages(StagePageSize)
		}
		for len(h.queue) > 0 {
			i := 0
			if reverse {
				i = len(h.queue) - 1
			}
			f := h.queue[i]
			h.queue = append(h.queue[:i], h.queue[i+1:]...)
			f()
		}
		want := 150
		if reverse {
			want = 250 // the last page: 300 stages
		}
		rows := a.Rows()
		if w := a.StageWindow(); w.Start != want || len(rows) != StagePageSize || rows[0].Stage != want ||
			rows[0].Layers != wire.LayerRuns(whole.Plan.StageLayers(want)) || rows[49].Layers != wire.LayerRuns(whole.Plan.StageLayers(want+49)) {
			t.Errorf("reverse %v: stages from %d: %d rows, the first %+v", reverse, w.Start, len(rows), rows[0])
		}
	}
}

// TestImportDrawsLayersNextFrame: with DrawInFrames (the browser's page), the render
// after an import draws no layer rows and asks for the next (DrawNext), each of which
// draws LayerFrameRows more, up to the table's page, after which DrawNext asks for no
// more; without DrawInFrames the first render draws the whole page.
func TestImportDrawsLayersNextFrame(t *testing.T) {
	for _, c := range []struct {
		frames bool
		rows   []int // the rows each render draws
	}{
		{false, []int{LayerPageSize}},
		{true, []int{0, LayerFrameRows, LayerPageSize}},
	} {
		a := NewApp(nil, &fakeHost{}, local)
		a.DrawInFrames = c.frames
		importStored(a, "chain-3000.json", chain(3000))
		if a.Res == nil || a.Res.Model.Layers != 3000 {
			t.Fatalf("frames %v: the import did not plan: %v", c.frames, a.Err)
		}
		var drawn []int
		for range 5 {
			rows := a.Layers()
			drawn = append(drawn, len(rows))
			if len(rows) > 0 && rows[0].Name != "l0" {
				t.Errorf("frames %v: the first row is %q", c.frames, rows[0].Name)
			}
			if !a.DrawNext() {
				break
			}
		}
		if fmt.Sprint(drawn) != fmt.Sprint(c.rows) {
			t.Errorf("frames %v: the renders drew %v layer rows, want %v", c.frames, drawn, c.rows)
		}
		if n := len(a.Layers()); n != LayerPageSize {
			t.Errorf("frames %v: a later render draws %d rows", c.frames, n)
		}
	}
}

// placeEveryLayer is the stage bar's positions as the page once kept them, one a layer
// (X[l] is where layer l starts, X[n] the bar's end): the oracle of xAt and LayerAt,
// which keep one span a stage.
func placeEveryLayer(p *wire.Plan) []float64 {
	n := p.Boundaries[len(p.Boundaries)-1]
	total := 0.0
	for _, s := range p.Stages {
		total += max(s.ComputeSeconds, 0)
	}
	x, pos := make([]float64, n+1), 0.0
	for _, s := range p.Stages {
		w := max(s.ComputeSeconds, 0) / total * BarWidth
		k := s.LastLayer - s.FirstLayer + 1
		for l := s.FirstLayer; l <= s.LastLayer+1 && l <= n; l++ {
			x[l] = pos + w*float64(l-s.FirstLayer)/float64(k)
		}
		pos += w
	}
	x[n] = BarWidth
	return x
}

// TestStageBarPositions: the bar places each boundary and maps each point back to the
// nearest boundary as the one-position-a-layer array did (placeEveryLayer, with
// sort.SearchFloat64s), for splits into even, uneven and one-layer stages, and for a
// bar of 200,000 layers whose handles sit where the layers put them.
func TestStageBarPositions(t *testing.T) {
	split := func(seconds []float64, bounds ...int) *wire.Plan {
		p := &wire.Plan{Boundaries: bounds}
		for i := range len(bounds) - 1 {
			p.Stages = append(p.Stages, wire.Stage{FirstLayer: bounds[i], LastLayer: bounds[i+1] - 1, ComputeSeconds: seconds[i]})
		}
		return p
	}
	for _, p := range []*wire.Plan{
		split([]float64{1, 1, 1, 1}, 0, 8, 15, 22, 26),
		split([]float64{5, 0.5, 3}, 0, 1, 2, 40),
		split([]float64{2, 7}, 0, 199999, 200000),
	} {
		want := placeEveryLayer(p)
		b := NewStageBar(p)
		for l := range want {
			if got := b.xAt(l); math.Abs(got-want[l]) > 1e-9 {
				t.Errorf("%v: layer %d at %g, want %g", p.Boundaries, l, got, want[l])
				break
			}
		}
		for _, h := range b.Handles {
			if h.X != want[h.Layer] {
				t.Errorf("%v: handle %d at %g, want %g", p.Boundaries, h.Index, h.X, want[h.Layer])
			}
		}
		for x := -5.0; x <= BarWidth+5; x += 0.37 {
			i := sort.SearchFloat64s(want, x)
			switch {
			case i >= len(want):
				i = len(want) - 1
			case i > 0 && x-want[i-1] < want[i]-x:
				i--
			}
			if got := b.LayerAt(x); got != i {
				t.Errorf("%v: LayerAt(%g) = %d, want %d", p.Boundaries, x, got, i)
				break
			}
		}
	}
}
