package plan

import (
	"testing"

	"pipeplan/core/model"
)

func TestTime(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit model.TimeUnit
		want string
	}{
		{0, model.Seconds, "0 s"},
		{58.9e-6, model.Seconds, "58.9 µs"},
		{0.036204, model.Seconds, "36.20 ms"},
		{1.25, model.Seconds, "1.25 s"},
		{2.5, model.Seconds, "2.50 s"},
		{123456, model.Cycles, "123456 cyc"},
		{0, "", "0 s"},
	} {
		if got := Time(tc.v, tc.unit); got != tc.want {
			t.Errorf("Time(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
