package wire

import (
	"slices"
	"testing"
)

// TestPlanInItsUnit: a plan's bottleneck and a stage's times are read in the model's
// unit, seconds or cycles, from the fields JSON carries.
func TestPlanInItsUnit(t *testing.T) {
	for _, tc := range []struct {
		unit                       string
		bottleneck, compute, trans float64
	}{
		{"seconds", 0.5, 0.25, 0.125},
		{"cycles", 6e8, 3e8, 1.5e8},
	} {
		s := Stage{ComputeSeconds: 0.25, TransferSeconds: 0.125}
		p := Plan{TimeUnit: tc.unit, BottleneckSeconds: 0.5, Stages: []Stage{s}}
		if tc.unit == "cycles" {
			p.BottleneckCycles, p.Stages[0].ComputeCycles, p.Stages[0].TransferCycles = 6e8, 3e8, 1.5e8
		}
		c, x := p.Stages[0].Time(p.TimeUnit)
		if p.Bottleneck() != tc.bottleneck || c != tc.compute || x != tc.trans {
			t.Errorf("%s: bottleneck %g, stage %g and %g; want %g, %g and %g", tc.unit, p.Bottleneck(), c, x, tc.bottleneck, tc.compute, tc.trans)
		}
	}
}

// TestLayerRuns: ascending layers are written as runs, a graph split's stage with gaps
// as several.
func TestLayerRuns(t *testing.T) {
	for _, tc := range []struct {
		layers []int
		runs   [][2]int
		text   string
	}{
		{nil, nil, ""},
		{[]int{4}, [][2]int{{4, 4}}, "4"},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, [][2]int{{0, 7}}, "0–7"},
		{[]int{0, 1, 2, 14, 17, 18, 19, 20}, [][2]int{{0, 2}, {14, 14}, {17, 20}}, "0–2, 14, 17–20"},
	} {
		if got := Runs(tc.layers); !slices.Equal(got, tc.runs) {
			t.Errorf("Runs(%v) = %v, want %v", tc.layers, got, tc.runs)
		}
		if got := LayerRuns(tc.layers); got != tc.text {
			t.Errorf("LayerRuns(%v) = %q, want %q", tc.layers, got, tc.text)
		}
	}
}
