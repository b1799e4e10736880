package plan

import (
	"testing"

	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
)

// badBounds are splits of 6 layers into 3 stages that are not splits: each must be an
// error naming the field, never an index out of range.
var badBounds = []struct {
	name   string
	bounds []int
	path   string
}{
	{"empty", []int{}, "boundaries"},
	{"too short", []int{0, 6}, "boundaries"},
	{"too long", []int{0, 2, 4, 5, 6}, "boundaries"},
	{"not from 0", []int{1, 3, 5, 6}, "boundaries"},
	{"not to n", []int{0, 2, 4, 5}, "boundaries"},
	{"beyond n", []int{0, 2, 4, 9}, "boundaries"},
	{"empty stage", []int{0, 2, 2, 6}, "boundaries[2]"},
	{"decreasing", []int{0, 4, 2, 6}, "boundaries[2]"},
	{"negative", []int{0, -1, 3, 6}, "boundaries[1]"},
}

func fieldPath(t *testing.T, err error) string {
	t.Helper()
	es, ok := model.AsFieldErrors(err)
	if !ok || len(es) == 0 {
		t.Fatalf("error %v (%T) is not a field error", err, err)
	}
	return es[0].Path
}

func TestFromBoundariesRefusesBadInput(t *testing.T) {
	m, c := chain(6, mib, mib, mib), devices(3, 1<<40)
	e, err := estimate.New(m, c, estimate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range badBounds {
		p, err := FromBoundaries(e, m, c, tt.bounds, partition.MaxCompute)
		if err == nil || p != nil {
			t.Errorf("%s %v: plan %v, error %v", tt.name, tt.bounds, p, err)
			continue
		}
		if got := fieldPath(t, err); got != tt.path {
			t.Errorf("%s %v: error %q at %q, want %q", tt.name, tt.bounds, err, got, tt.path)
		}
	}
	if _, err := FromBoundaries(nil, m, c, []int{0, 2, 4, 6}, partition.MaxCompute); err == nil {
		t.Error("no estimator: no error")
	}
	if _, err := FromBoundaries(e, nil, c, []int{0, 2, 4, 6}, partition.MaxCompute); err == nil {
		t.Error("no model: no error")
	}
	if _, err := FromBoundaries(e, m, nil, []int{0, 2, 4, 6}, partition.MaxCompute); err == nil {
		t.Error("no cluster: no error")
	}
	// An estimator of another model or cluster.
	if _, err := FromBoundaries(e, chain(8, mib, mib, mib), c, []int{0, 2, 4, 8}, partition.MaxCompute); err == nil {
		t.Error("estimator of 6 layers, model of 8: no error")
	}
	if _, err := FromBoundaries(e, m, devices(2, 1<<40), []int{0, 3, 6}, partition.MaxCompute); err == nil {
		t.Error("estimator of 3 stages, cluster of 2: no error")
	}
	if p, err := FromBoundaries(e, m, c, []int{0, 2, 4, 6}, partition.MaxCompute); err != nil || len(p.Stages) != 3 {
		t.Errorf("a good split: %v, %v", p, err)
	}
}

func TestEvaluateRefusesBadBoundaries(t *testing.T) {
	m, c := chain(6, mib, mib, mib), devices(3, 1<<40)
	for _, opt := range []Options{{}, with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})} {
		for _, tt := range badBounds {
			p, err := Evaluate(m, c, opt, tt.bounds)
			if err == nil || p != nil {
				t.Errorf("%s %v: plan %v, error %v", tt.name, tt.bounds, p, err)
				continue
			}
			if got := fieldPath(t, err); got != tt.path {
				t.Errorf("%s %v: error %q at %q, want %q", tt.name, tt.bounds, err, got, tt.path)
			}
		}
		if _, err := Evaluate(m, c, opt, nil); err == nil || fieldPath(t, err) != "boundaries" {
			t.Errorf("no boundaries: %v", err)
		}
	}
	// Interleaved splits p*v stages: 3 devices x 2 chunks need 7 entries, not 4.
	il := with(schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 3})
	if _, err := Evaluate(m, c, il, []int{0, 2, 4, 6}); err == nil || fieldPath(t, err) != "boundaries" {
		t.Errorf("interleaved with one entry per device: %v", err)
	}
	if p, err := Evaluate(m, c, il, []int{0, 1, 2, 3, 4, 5, 6}); err != nil || len(p.Stages) != 6 {
		t.Errorf("interleaved with one entry per stage: %v, %v", p, err)
	}
}

func TestSimulateRefusesBadBoundaries(t *testing.T) {
	m, c := chain(6, mib, mib, mib), devices(3, 1<<40)
	opt := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})
	for _, tt := range badBounds {
		if r, err := Simulate(m, c, tt.bounds, opt); err == nil || r != nil {
			t.Errorf("%s %v: result %v, error %v", tt.name, tt.bounds, r, err)
		}
	}
}

func TestMakeRefusesMissingInputs(t *testing.T) {
	if _, err := Make(nil, devices(2, 1<<40), Options{}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := Make(chain(4, mib, mib, mib), nil, Options{}); err == nil {
		t.Error("no cluster: no error")
	}
	if _, err := Evaluate(nil, nil, Options{}, []int{0, 1}); err == nil {
		t.Error("Evaluate without model and cluster: no error")
	}
}

func TestSimulateRefusesMissingInputs(t *testing.T) {
	opt := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})
	if _, err := Simulate(nil, devices(2, 1<<40), []int{0, 1, 2}, opt); err == nil {
		t.Error("no model: no error")
	}
	if _, err := Simulate(chain(2, mib, mib, mib), nil, []int{0, 1, 2}, opt); err == nil {
		t.Error("no cluster: no error")
	}
}
