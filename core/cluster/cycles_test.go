package cluster_test

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

func TestLinkCycles(t *testing.T) {
	cases := []struct {
		name  string
		link  cluster.Link
		bytes int64
		clock float64
		want  int64
	}{
		// Graphcore's auto-pipeline tool: idle + bytes / (GBps * 2^30 / clock), truncated.
		{"one byte per cycle", cluster.Link{GBps: 1, IdleCycles: 7}, 1000, 1 << 30, 1007},
		{"truncated", cluster.Link{GBps: 7, IdleCycles: 50000}, 1 << 20, 1.85e9, 308091}, // 50000 + 258091.07
		{"no bytes", cluster.Link{GBps: 7, IdleCycles: 3}, 0, 1.85e9, 3},
		{"latency-bandwidth", cluster.Link{LatencySeconds: 1e-6, BytesPerSecond: 1e9}, 1000, 1e9, 2000},
		// Out of int64's range: saturate instead of wrapping to a negative count.
		{"slow link", cluster.Link{GBps: 1e-300, IdleCycles: 5}, 1000, 1e9, math.MaxInt64},
		{"long latency", cluster.Link{LatencySeconds: 1e300}, 10, 1e9, math.MaxInt64},
		{"exactly 2^63", cluster.Link{IdleCycles: 1, GBps: 1}, 1 << 33, 1 << 60, math.MaxInt64},
	}
	for _, tc := range cases {
		if got := tc.link.Cycles(tc.bytes, tc.clock); got != tc.want {
			t.Errorf("%s: Cycles = %d, want %d", tc.name, got, tc.want)
		}
	}
}
