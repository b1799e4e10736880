package cluster

import (
	"math"
	"testing"
)

// The collectives' closed forms (NCCL's bus bandwidth: all-reduce 2(k-1)/k, all-gather
// and reduce-scatter (k-1)/k of the size per rank): a link of 1e9 B/s and 1 µs latency.
func TestCollectivesClosedForm(t *testing.T) {
	l := Link{BytesPerSecond: 1e9, LatencySeconds: 1e-6}
	n := 8e9 // 8 GB
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"all-reduce k=8", RingAllReduceSeconds(l, n, 8), 2*7.0/8*8 + 14e-6},
		{"all-gather k=8", RingAllGatherSeconds(l, n, 8), 7.0/8*8 + 7e-6},
		{"reduce-scatter k=8", RingReduceScatterSeconds(l, n, 8), 7.0/8*8 + 7e-6},
		{"all-to-all k=4", AllToAllSeconds(l, n, 4), 3.0/4*8 + 3e-6},
		{"p2p", PointToPointSeconds(l, n), 8 + 1e-6},
		{"reduce-scatter + all-gather = all-reduce", RingReduceScatterSeconds(l, n, 16) + RingAllGatherSeconds(l, n, 16), RingAllReduceSeconds(l, n, 16)},
		{"one member", RingAllGatherSeconds(l, n, 1), 0},
		{"nothing", PointToPointSeconds(l, 0), 0},
	} {
		if math.Abs(c.got-c.want) > 1e-12*max(1, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
