package units

import (
	"testing"

	"pipeplan/core/model"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1024: "1 KiB", 1536: "1.5 KiB", 600 << 20: "600 MiB", 1288490189: "1.2 GiB", 1288490188 * 2: "2.4 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

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
		{1e-7, model.Seconds, "0.1 µs"},
		{1e-12, model.Seconds, "1.0e-12 s"},
		{999999, model.Seconds, "999999.00 s"},
		{1e6, model.Seconds, "1.0e+06 s"},
		{1e300, model.Seconds, "1.0e+300 s"},
		{999999999999, model.Cycles, "999999999999 cyc"},
		{2.5e300, model.Cycles, "2.5e+300 cyc"},
	} {
		if got := Time(tc.v, tc.unit); got != tc.want {
			t.Errorf("Time(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
