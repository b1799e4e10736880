package ui

import (
	"slices"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestSearchKnobRows: the Search panel's rows are KnobRows of group "search" whose
// choices are core's lists ("" first: searched, or left to core, as the row says), and
// the request's fields every candidate keeps are group "searchbase".
func TestSearchKnobRows(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	lists := map[string][]string{"search.schedule": wire.SearchSchedules(), "search.recompute": wire.RecomputeModes(),
		"search.zero": wire.SearchZeROStages(), "search.reshard": wire.ReshardModes(), "search.context_method": wire.ContextMethods()}
	var names []string
	for _, k := range a.KnobFields("search") {
		names = append(names, strings.TrimPrefix(k.Name, "search."))
		if want := "search-" + strings.TrimPrefix(k.Name, "search."); k.ID != want || k.Disabled {
			t.Errorf("%s: id %q (want %q), disabled %v", k.Name, k.ID, want, k.Disabled)
		}
		if want, ok := lists[k.Name]; ok && (len(k.Choices) == 0 || k.Choices[0] != "" || !slices.Equal(k.Choices[1:], want)) {
			t.Errorf("%s: choices %q, want \"\" then %q", k.Name, k.Choices, want)
		}
	}
	if got := strings.Join(names, " "); got != "max_devices stages replicas tensor context context_method expert schedule recompute zero shard_group reshard microbatch_size microbatches global_batch" {
		t.Errorf("search rows %s", got)
	}
	if got := a.ChoiceText("search.schedule", ""); got != "searched: "+strings.Join(wire.SearchedSchedules(), ", ") {
		t.Errorf("the empty schedule reads %q", got)
	}
	if got := a.DefaultText("search.stages"); got != "searched" {
		t.Errorf("an empty degree reads %q", got)
	}
	var base []string
	for _, k := range a.KnobFields("searchbase") {
		base = append(base, k.Name)
	}
	if len(base) == 0 || !slices.Contains(base, "precision") {
		t.Errorf("searchbase rows %q", base)
	}
}

// TestSearchKnobsQueryAndFragment: the rows' values make the query's knobs (the zero
// knob by its sharding's name), a bad one is refused naming it, and the knobs are kept
// with the request in the fragment (URL and localStorage), which reads back to both;
// a fragment without knobs clears them.
func TestSearchKnobsQueryAndFragment(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	for name, v := range map[string]string{"search.max_devices": "16", "search.schedule": "interleaved-pytorch:2", "search.recompute": "selective-op",
		"search.zero": "zero3", "search.shard_group": "2", "search.reshard": "layer", "search.context_method": "all-to-all",
		"search.microbatches": "8", "search.stages": " 4 "} {
		a.SetField(name, v)
	}
	k, err := a.knobs()
	if err != nil {
		t.Fatal(err)
	}
	if k.MaxDevices != 16 || k.Stages != 4 || k.Schedule != "interleaved-pytorch:2" || k.Recompute != "selective-op" || k.ZeRO == nil || *k.ZeRO != 3 ||
		k.ShardGroup != 2 || k.Reshard != "layer" || k.ContextMethod != "all-to-all" || k.Microbatches != 8 {
		t.Errorf("knobs %+v", k)
	}
	if len(h.kept) == 0 {
		t.Fatal("the knobs were not kept")
	}
	f := h.kept[len(h.kept)-1]
	if got := FragmentSearch(f); got["zero"] != "zero3" || got["stages"] != "4" || len(got) != 9 {
		t.Errorf("the fragment's knobs %q", got)
	}
	if r, err := DecodeFragment(f, FlateInflate); err != nil || r.Model.Example != a.Req.Model.Example {
		t.Errorf("the fragment's request: %v, %v", r, err)
	}
	again, _ := a.Fragment()
	if again != f {
		t.Error("the same state gives another fragment")
	}
	a.SetField("search.zero", "zero9")
	if _, err := a.knobs(); err == nil || !strings.HasPrefix(err.Error(), "zero:") {
		t.Errorf("zero9: %v", err)
	}
	plain, _ := EncodeFragment(a.Req)
	a.Restore(plain)
	if len(a.Search.Knobs) != 0 {
		t.Errorf("a fragment without knobs leaves %q", a.Search.Knobs)
	}
	a.Restore(f)
	if a.SearchKnob("reshard") != "layer" {
		t.Errorf("restored knobs %q", a.Search.Knobs)
	}
}
