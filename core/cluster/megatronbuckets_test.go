package cluster

import (
	"slices"
	"testing"
)

// TestMegatronBucketSizes: _ParamAndGradBuffer's walk (param_and_grad_buffer.py,
// core_v0.13.1) on parameters of 10, 100, 30 and 5 elements in registration order,
// walked 5, 30, 100, 10, worked by hand.
func TestMegatronBucketSizes(t *testing.T) {
	params := []int64{10, 100, 30, 5}
	for _, tt := range []struct {
		name    string
		bucket  int64
		dp      int
		distOpt bool
		want    []int64
	}{
		// 5 + 30 + 100 = 135 reaches 64 at the 100's end (not inside it); 10 is left over.
		{"bucket 64", 64, 8, false, []int64{135, 10}},
		// Below the smallest parameter: a bucket each, in reverse order.
		{"bucket below every parameter", 1, 8, false, []int64{5, 30, 100, 10}},
		// None: one bucket.
		{"no bucketing", 0, 8, false, []int64{145}},
		// Larger than everything: one bucket, the rest.
		{"bucket above the total", 1000, 8, false, []int64{145}},
		// Distributed optimizer, DP 2: each bucket's end padded to lcm(2, 128) = 128, so
		// every one-parameter bucket is 128 elements (5, 30, 100, 10 each padded).
		{"distributed optimizer, a bucket each", 1, 2, true, []int64{128, 128, 128, 128}},
		// DP 64, bucket 64: 5 ends at 5; the 30 starts at 64 (a parameter starts at a
		// multiple of 64) and ends at 94, closing [0, 128); the 100 fills [128, 228),
		// closing [128, 256); the 10 is the last, [256, 384).
		{"distributed optimizer, DP 64", 64, 64, true, []int64{128, 128, 128}},
		// DP 384: lcm(384, 128) = 384.
		{"distributed optimizer, DP 384", 1000, 384, true, []int64{384}},
	} {
		if got := MegatronBucketSizes(params, tt.bucket, tt.dp, tt.distOpt); !slices.Equal(got, tt.want) {
			t.Errorf("%s: MegatronBucketSizes = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := MegatronBucketSizes(nil, 64, 8, true); got != nil {
		t.Errorf("no parameters: %v, want nil", got)
	}
}
