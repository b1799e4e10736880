package request

import (
	"testing"

	"pipeplan/core/cluster"
)

// TestDataParallelSlowdownSeconds: of what the data-parallel collectives add to a step
// (DataParallelBucketedExposedSeconds), the part that is compute slowed by those beside
// it, in closed form: share x D for a collective D hidden behind computation C, share x
// C / (1 - share) for one that outlasts it, nothing for one the framework does not
// overlap or a bucket that runs apart from the passes (Megatron-Core's last-ready
// reduction and first-needed gather). The slowdown is never more than what is added.
func TestDataParallelSlowdownSeconds(t *testing.T) {
	on := cluster.Framework{OverlapGradReduce: true, OverlapParamGather: true}
	share := cluster.CollectiveSMShare(132)
	for _, tt := range []struct {
		name                                  string
		fw                                    cluster.Framework
		reduce, gather, last, first, bwd, fwd float64
		times                                 int
		want                                  float64
	}{
		{"all-reduce hidden", on, 0.010, 0, 0, 0, 0.100, 0.050, 1, share * 0.010},
		{"all-reduce longer than the backward", on, 0.150, 0, 0, 0, 0.100, 0.050, 1, share * 0.100 / (1 - share)},
		{"not overlapped", cluster.Framework{}, 0.010, 0.020, 0, 0, 0.100, 0.050, 1, 0},
		{"zero2 per microbatch", on, 0.010, 0, 0, 0, 0.100, 0.050, 4, 4 * share * 0.010},
		{"all-gather longer than the forward", on, 0.010, 0.080, 0, 0, 0.100, 0.050, 1, share*0.010 + share*0.050/(1-share)},
		{"megatron's buckets apart", on, 0.030, 0.020, 0.010, 0.005, 0.100, 0.050, 1, share*0.020 + share*0.015},
		{"nothing", on, 0, 0, 0, 0, 0.100, 0.050, 1, 0},
	} {
		got := DataParallelBucketedSlowdownSeconds(tt.fw, tt.reduce, tt.gather, tt.last, tt.first, tt.bwd, tt.fwd, tt.times, share)
		if !near(got, tt.want) {
			t.Errorf("%s: %v s, want %v s", tt.name, got, tt.want)
		}
		if added := DataParallelBucketedExposedSeconds(tt.fw, tt.reduce, tt.gather, tt.last, tt.first, tt.bwd, tt.fwd, tt.times, share); got > added*(1+1e-12) {
			t.Errorf("%s: %v s slowed of %v s added", tt.name, got, added)
		}
	}
}
