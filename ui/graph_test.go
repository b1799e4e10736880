package ui

import (
	"testing"

	"pipeplan/core/wire"
)

// TestGraphPlanViews: a graph split whose stages are not contiguous in the model's layer
// order shows each stage's layers as runs, on the bar and in the table, offers no
// boundaries to drag or type, and the layer table finds each layer's stage by its own
// index.
func TestGraphPlanViews(t *testing.T) {
	p := &wire.Plan{
		Boundaries: []int{0, 2, 5},
		LayerOrder: []int{0, 2, 1, 3, 4},
		Stages: []wire.Stage{
			{FirstLayer: 0, LastLayer: 1, Layers: []int{0, 2}, ComputeSeconds: 1, LimitBytes: 1},
			{FirstLayer: 2, LastLayer: 4, Layers: []int{1, 3, 4}, ComputeSeconds: 1, LimitBytes: 1},
		},
	}
	rows := NewStageRows(p)
	if rows[0].Layers != "0, 2" || rows[1].Layers != "1, 3–4" {
		t.Errorf("table layers %q, %q; want \"0, 2\" and \"1, 3–4\"", rows[0].Layers, rows[1].Layers)
	}
	bar := NewStageBar(p)
	if len(bar.Handles) != 0 {
		t.Errorf("%d handles on a graph split's bar", len(bar.Handles))
	}
	if want := "stage 0: layers 0, 2"; len(bar.Segments) != 2 || bar.Segments[0].Title[:len(want)] != want {
		t.Errorf("segments %+v", bar.Segments)
	}
	if got := p.StageOfLayer(); !equalInts(got, []int{0, 1, 0, 1, 1}) {
		t.Errorf("stage of each layer %v", got)
	}
	page := LayerPage(&wire.ModelInfo{Layers: 5}, p.StageOfLayer(), 0, 10)
	if page[1].Stage != "1" || page[2].Stage != "0" {
		t.Errorf("layer table stages %q, %q; want 1 and 0", page[1].Stage, page[2].Stage)
	}
}
