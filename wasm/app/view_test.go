package main

import (
	"slices"
	"testing"

	"pipeplan/core/examples"
	"pipeplan/core/plan"
)

func TestParseStages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"4", 4, true}, {" 12 ", 12, true}, {"1", 1, true}, {"1024", 1024, true},
		{"0", 0, false}, {"-3", 0, false}, {"1025", 0, false}, {"2.5", 0, false},
		{"", 0, false}, {"four", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := parseStages(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseStages(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestInitialStages(t *testing.T) {
	for _, tc := range []struct {
		url, storage string
		want         int
	}{
		{"", "", 4}, {"6", "3", 6}, {"", "3", 3}, {"zero", "3", 3}, {"0", "x", 4}, {"2", "", 2},
	} {
		if got := initialStages(tc.url, tc.storage, 4); got != tc.want {
			t.Errorf("initialStages(%q, %q, 4) = %d, want %d", tc.url, tc.storage, got, tc.want)
		}
	}
}

func TestPlanViewOfExample(t *testing.T) {
	e := examples.Default()
	m, _ := e.Model()
	c, _ := e.Cluster(4)
	p, err := plan.Make(m, c, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := newPlanView(m, e.Device, p)
	if v.Boundaries != "0,8,15,22,26" {
		t.Errorf("boundaries %q", v.Boundaries)
	}
	wantSummary := "26 layers on 4 × a100-80gb: bottleneck 36.20 ms per microbatch on stage 0, highlighted (objective compute)."
	if v.Summary != wantSummary {
		t.Errorf("summary %q, want %q", v.Summary, wantSummary)
	}
	want := [][]string{
		{"0", "a100-80gb", "0–7", "embed … block.6", "36.20 ms", "58.9 µs", "7.7 GiB", "76 GiB", "10%"},
		{"1", "a100-80gb", "8–14", "block.7 … block.13", "36.08 ms", "117.8 µs", "6.91 GiB", "76 GiB", "9%"},
		{"2", "a100-80gb", "15–21", "block.14 … block.20", "36.08 ms", "117.8 µs", "6.91 GiB", "76 GiB", "9%"},
		{"3", "a100-80gb", "22–25", "block.21 … head", "33.53 ms", "58.9 µs", "4.77 GiB", "76 GiB", "6%"},
	}
	if len(v.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(v.Rows), len(want))
	}
	for i, r := range v.Rows {
		if !slices.Equal(r.Cells, want[i]) {
			t.Errorf("row %d: %q, want %q", i, r.Cells, want[i])
		}
		if r.Bottleneck != (i == 0) {
			t.Errorf("row %d: bottleneck %v", i, r.Bottleneck)
		}
		if got := float64(p.Stages[i].MemoryBytes) / float64(p.Stages[i].LimitBytes); r.UsedFraction != got {
			t.Errorf("row %d: used %v, want %v", i, r.UsedFraction, got)
		}
	}
}
