package partition

import "testing"

func TestParseObjective(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Objective
		err  string
	}{
		{"compute", MaxCompute, ""},
		{"compute+transfer", MaxComputePlusTransfer, ""},
		{"Compute", 0, `must be "compute" or "compute+transfer", got "Compute"`},
		{"", 0, `must be "compute" or "compute+transfer", got ""`},
	} {
		got, err := ParseObjective(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ParseObjective(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
