package search

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestWireOutcome: an outcome with every field set, and its wire form (what an answer
// and progress carry), are the same JSON, so that a field added to Outcome, Candidate or
// Config and not to core/wire's types (or to the conversion) fails here.
func TestWireOutcome(t *testing.T) {
	c := Candidate{Config: Config{Pipeline: 4, Data: 2, Tensor: 8, Expert: 2, Schedule: "interleaved:2", Recompute: "selective",
		ZeRO: 3, Context: 2, ContextMethod: "all-to-all", ShardGroup: 2, MemoryProportion: 0.9, Microbatches: 16}, MicrobatchSize: 2}
	o := Outcome{Candidate: c, Devices: 128, Feasible: true, SamplesPerSecond: 1.5, TokensPerSecond: 6144, StepSeconds: 21,
		BubbleFraction: 0.2, MFU: 0.4, HeadroomBytes: 1 << 30, HeadroomFraction: 0.1, Boundaries: []int{0, 8, 16, 24, 32},
		Reason: "stage 3 is over", Bound: 2, Alike: []Candidate{c, c}, group: 7}
	a, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(wireOutcome(&o))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("the wire form's JSON differs:\n%s\n%s", b, a)
	}
	var back map[string]any
	if err := json.Unmarshal(a, &back); err != nil {
		t.Fatal(err)
	}
	// Every field is set: a field left out of the case would pass unseen.
	if n := jsonFieldCount(reflect.TypeFor[Outcome]()); len(back) != n {
		t.Errorf("the case sets %d of the outcome's %d JSON fields: set the new ones", len(back), n)
	}
	if got, want := wireCandidate(c).String(), c.String(); got != want || want != "p4 d2 t8 c2:all-to-all e2 interleaved:2 m16 b2 rc=selective hsdp2 mp=0.9" {
		t.Errorf("labels %q and %q", got, want)
	}
}

// jsonFieldCount counts a struct's JSON fields, those of embedded structs included.
func jsonFieldCount(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case !f.IsExported() || f.Tag.Get("json") == "-":
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			n += jsonFieldCount(f.Type)
		default:
			n++
		}
	}
	return n
}
