package wire

import (
	"slices"
	"testing"
)

// TestSearchedAreValues: what the search tries when its query names nothing is among the
// values the request's fields accept, so that the Search panel's hints and the search
// name the same modes.
func TestSearchedAreValues(t *testing.T) {
	tests := []struct {
		name          string
		searched, all []string
	}{
		{"schedules", SearchedSchedules(), Schedules()},
		{"recomputes of an architecture", SearchedRecomputes(true), RecomputeModes()},
		{"recomputes of a profile", SearchedRecomputes(false), RecomputeModes()},
	}
	for _, tc := range tests {
		if len(tc.searched) == 0 {
			t.Errorf("%s: the search tries nothing", tc.name)
		}
		for _, v := range tc.searched {
			if !slices.Contains(tc.all, v) {
				t.Errorf("%s: %q is searched but is no value of the field (%q)", tc.name, v, tc.all)
			}
		}
	}
	if slices.Contains(SearchedRecomputes(false), "selective") {
		t.Errorf("a profile's search tries selective recomputation, which a profile cannot express")
	}
}
