package units

import (
	"fmt"
	"math"
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

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0 tokens/s"},
		{1.913e5, "191.3k tokens/s"},
		{191300.4, "191.3k tokens/s"},
		{1913, "1.913k tokens/s"},
		{2000, "2k tokens/s"},
		{45.666, "45.67 tokens/s"},
		{999.94, "999.9 tokens/s"},
		{999.96, "1k tokens/s"},
		{2.4e6, "2.4M tokens/s"},
		{1.5e9, "1.5G tokens/s"},
		{3.25e18, "3.25E tokens/s"},
		{1e21, "1.000e+21 tokens/s"},
		{0.5, "0.5 tokens/s"},
		{0.0001234, "1.234e-04 tokens/s"},
		{-1913, "-1.913k tokens/s"},
		{math.Inf(1), "+Inf tokens/s"},
		{math.NaN(), "NaN tokens/s"},
	} {
		if got := Rate(tc.v, "tokens/s"); got != tc.want {
			t.Errorf("Rate(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := Rate(1.913e5, ""); got != "191.3k" {
		t.Errorf("Rate(1.913e5, \"\") = %q, want 191.3k", got)
	}
}

func ExampleRate() {
	fmt.Println(Rate(1.913e5, "tokens/s"))
	fmt.Println(Rate(93.44, "samples/s"))
	// Output:
	// 191.3k tokens/s
	// 93.44 samples/s
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		noun string
		want string
	}{
		{1, "replica", "1 replica"}, {2, "replica", "2 replicas"}, {0, "stage", "0 stages"},
		{1, "microbatch", "1 microbatch"}, {16, "microbatch", "16 microbatches"}, {1, "layer", "1 layer"},
	} {
		if got := Count(tc.n, tc.noun); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}
