package cluster

import (
	"math"
	"testing"
)

// TestDeepSpeedPartitionedBoundary: DeepSpeed's PartitionedTensor.full() of n bytes over
// k devices is three copy kernels of n(3 + 2/k) bytes (zeros, the own slice's copy, the
// clone) and a ring all-gather of n; around a boundary the sender slices (one copy of
// n/k), the receiver clones the slice twice, gathers it and slices the gradient back,
// and the sender's backward gathers two whole tensors. Worked by hand: n = 8 MB over 8
// devices on a link of 1 us and 100 GB/s, copies at 1 TB/s and 5 us a kernel.
func TestDeepSpeedPartitionedBoundary(t *testing.T) {
	l := Link{LatencySeconds: 1e-6, BytesPerSecond: 100e9}
	const n, rate, kernel = 8e6, 1e12, 5e-6
	// full: 3 x 5 us + 26 MB / 1 TB/s (26 us) + 7 x 1 us + 7/8 x 8 MB / 100 GB/s (70 us).
	const full = 15e-6 + 26e-6 + 7e-6 + 70e-6
	if got := PartitionedFullSeconds(l, n, 8, rate, kernel); math.Abs(got-full) > 1e-15 {
		t.Errorf("PartitionedFullSeconds = %v, want %v", got, full)
	}
	for _, c := range []struct {
		name     string
		members  int
		training bool
		want     PartitionedBoundary
	}{
		// slice 1 MB: one copy 5 us + 2 us; two copies 10 us + 4 us.
		{"training", 8, true, PartitionedBoundary{SenderForward: 7e-6, ReceiverForward: 14e-6 + full + 7e-6, SenderBackward: 2 * full}},
		{"inference", 8, false, PartitionedBoundary{SenderForward: 7e-6, ReceiverForward: 14e-6 + full}},
		{"one member", 1, true, PartitionedBoundary{}},
	} {
		got := DeepSpeedPartitionedBoundary(l, n, c.members, rate, kernel, c.training)
		if math.Abs(got.SenderForward-c.want.SenderForward) > 1e-15 || math.Abs(got.ReceiverForward-c.want.ReceiverForward) > 1e-15 ||
			math.Abs(got.SenderBackward-c.want.SenderBackward) > 1e-15 {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := PartitionedFullSeconds(l, 0, 8, rate, kernel); got != 0 {
		t.Errorf("nothing to gather: %v s, want 0", got)
	}
}
