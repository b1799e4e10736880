package ui

import (
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestStageBarRecompute: a stage that recomputes per layer carries a strip as wide as
// the share of its time the recomputation adds, and says what it recomputes; the layer
// table marks each recomputed layer by its part.
func TestStageBarRecompute(t *testing.T) {
	p := &wire.Plan{Boundaries: []int{0, 3, 5}, Stages: []wire.Stage{
		{FirstLayer: 0, LastLayer: 2, ComputeSeconds: 3, Recompute: &wire.StageRecompute{ExtraSeconds: 0.75, Summary: "whole layers 1, attention core of 2: +750 ms per microbatch, saves 0 B",
			Layers: []wire.RecomputedLayer{{Layer: 1, Part: wire.RecomputeLayer}, {Layer: 2, Part: wire.RecomputeAttention}}}},
		{FirstLayer: 3, LastLayer: 4, ComputeSeconds: 1, Recompute: &wire.StageRecompute{Layers: []wire.RecomputedLayer{}}},
	}}
	b := NewStageBar(p)
	s0, s1 := b.Segments[0], b.Segments[1]
	if want := BarWidth * 0.75 * 0.25; s0.RecomputeW != want || s0.RecomputeX != s0.X+s0.W-want {
		t.Errorf("stage 0's strip at %v, width %v; want width %v at its end (%v + %v)", s0.RecomputeX, s0.RecomputeW, want, s0.X, s0.W)
	}
	if !strings.Contains(s0.Title, "recomputes whole layers 1, attention core of 2") || s1.RecomputeW != 0 || strings.Contains(s1.Title, "recomputes") {
		t.Errorf("titles %q and %q, strip of stage 1 %v", s0.Title, s1.Title, s1.RecomputeW)
	}
	rows := []LayerRow{{Index: 1}, {Index: 2}, {Index: 3}}
	markRecomputed(rows, p)
	if rows[0].Recompute != "whole layer" || rows[1].Recompute != "attention core" || rows[2].Recompute != "" {
		t.Errorf("rows %+v", rows)
	}
}
