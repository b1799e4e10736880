package request

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// jsonFields lists the JSON keys of a struct type's fields, with their Go kinds, in
// order; embedded structs are flattened as encoding/json flattens them.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name+" "+tag+" "+kindOf(f.Type))
	}
	return out
}

// kindOf is a type's shape for the comparison: kinds, not names (plan.Stage and
// wire.Stage are both "[]struct").
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return t.Kind().String() + " " + kindOf(t.Elem())
	}
	return t.Kind().String()
}

// TestWireTypesMatchPlanner: every type a result converts from the planner's (core/plan,
// core/schedule, core/cluster) has the same JSON fields, in the same order, as its
// core/wire form, so that a field added to the planner's type and not to the wire's (or
// the conversion) fails here, and results stay byte for byte what they were.
func TestWireTypesMatchPlanner(t *testing.T) {
	tests := []struct {
		planner, wire any
		skip          []string // the planner's fields a result does not carry
		extra         []string // the wire type's fields the planner's lacks, last
	}{
		{plan.Plan{}, wire.Plan{}, []string{"schedule"}, nil},
		{plan.Stage{}, wire.Stage{}, nil, nil},
		{plan.Memory{}, wire.Memory{}, nil, nil},
		{plan.StageRecompute{}, wire.StageRecompute{}, nil, nil},
		{plan.RecomputedLayer{}, wire.RecomputedLayer{}, nil, nil},
		{plan.GraphFallback{}, wire.GraphFallback{}, nil, nil},
		{schedule.Result{}, wire.ScheduleResult{}, nil, nil},
		{schedule.Event{}, wire.Event{}, nil, nil},
		{schedule.Sample{}, wire.Sample{}, nil, nil},
		{cluster.Placement{}, wire.Placement{}, nil, nil},
		{cluster.Link{}, wire.Link{}, nil, nil},
		{calibrate.Result{}, wire.Calibration{}, nil, []string{"architecture architecture ptr struct"}},
		{calibrate.Figures{}, wire.CalibrationFigures{}, nil, nil},
		{calibrate.Residual{}, wire.CalibrationResidual{}, nil, nil},
	}
	for _, tc := range tests {
		pt, wt := reflect.TypeOf(tc.planner), reflect.TypeOf(tc.wire)
		var want []string
		for _, f := range jsonFields(pt) {
			if !slices.Contains(tc.skip, strings.Fields(f)[0]) {
				want = append(want, f)
			}
		}
		want = append(want, tc.extra...)
		if got := jsonFields(wt); !slices.Equal(got, want) {
			t.Errorf("%v's JSON fields\n%q\ndiffer from %v's\n%q", wt, got, pt, want)
		}
	}
}

// TestWireVocabulary: the values core/wire names for the planner's are the planner's.
func TestWireVocabulary(t *testing.T) {
	pairs := [][2]string{
		{wire.PhasePasses, plan.PhasePasses}, {wire.PhaseOptimizer, plan.PhaseOptimizer},
		{wire.RecomputeLayer, recompute.Full}, {wire.RecomputeAttention, recompute.Attention},
		{string(wire.OpForward), string(schedule.Forward)}, {string(wire.OpBackward), string(schedule.Backward)},
		{string(wire.OpWeightGrad), string(schedule.WeightGrad)},
		{string(model.Cycles), "cycles"},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("core/wire says %q where the planner says %q", p[0], p[1])
		}
	}
}

// TestWirePlanConverts: a plan with per-layer recomputation, its schedule's timeline and
// a placement on nodes come out of the conversion as the planner's own JSON.
func TestWirePlanConverts(t *testing.T) {
	r := llamaRequest(2, 8, 1)
	r.Cluster.DevicesPerNode = 8
	r.Training.Recompute = "auto"
	r.Events = true
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Make(p.model, p.cluster, p.options())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Schedule == nil || len(pl.Schedule.Events) == 0 || len(pl.Schedule.InFlight) == 0 || p.placement == nil {
		t.Fatalf("the plan has no timeline or no placement: %+v", pl.Schedule)
	}
	recomputes := false
	for _, s := range pl.Stages {
		recomputes = recomputes || s.Recompute != nil && len(s.Recompute.Layers) > 0
	}
	if !recomputes {
		t.Fatal("no stage recomputes: the case does not check the conversion of per-layer recomputation")
	}
	same := func(name string, planner, w any) {
		a, err := json.Marshal(planner)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("%s: the wire form's JSON differs from the planner's:\n%s\n%s", name, b, a)
		}
	}
	same("schedule", pl.Schedule, wireSchedule(pl.Schedule))
	same("placement", p.placement, wirePlacement(p.placement))
	sched := pl.Schedule
	pl.Schedule = nil
	same("plan", pl, wirePlan(pl))
	pl.Schedule = sched
}
