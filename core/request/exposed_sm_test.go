package request

import (
	"context"
	"fmt"
	"testing"

	"pipeplan/core/cluster"
)

// TestDataParallelExposedHoldsSMs: an overlapped data-parallel collective holds NCCL's
// CTAs' share of the SMs while it runs (cluster.CollectiveSMShare), so the computation
// it hides behind slows by share x its time (cluster.OverlappedSeconds), as ZeRO-3's
// gathers do (issue 19 item 2): a collective D beside computation C adds max(D - C,
// share x D); one the framework does not overlap adds D. Closed forms, for DDP's
// all-reduce behind the backward, ZeRO-2's reduce-scatter behind each microbatch's,
// and the distributed optimizer's all-gather behind the forward.
func TestDataParallelExposedHoldsSMs(t *testing.T) {
	on := cluster.Framework{OverlapGradReduce: true, OverlapParamGather: true}
	off := cluster.Framework{}
	share := cluster.CollectiveSMShare(132) // an H100's 132 SMs, 24 of them NCCL's
	for _, tt := range []struct {
		name                              string
		fw                                cluster.Framework
		reduce, gather, backward, forward float64
		times                             int
		want                              float64
	}{
		{"ddp all-reduce hidden", on, 0.010, 0, 0.100, 0.050, 1, share * 0.010},
		{"ddp all-reduce longer than the backward", on, 0.150, 0, 0.100, 0.050, 1, 0.050},
		{"all-reduce not overlapped", off, 0.010, 0, 0.100, 0.050, 1, 0.010},
		{"zero2 reduce-scatter per microbatch", on, 0.010, 0, 0.100, 0.050, 4, 4 * share * 0.010},
		{"zero1 reduce-scatter and all-gather", on, 0.010, 0.020, 0.100, 0.050, 1, share*0.010 + share*0.020},
		{"all-gather longer than the forward", on, 0.010, 0.080, 0.100, 0.050, 1, share*0.010 + 0.030},
		{"all-gather not overlapped", cluster.Framework{OverlapGradReduce: true}, 0.010, 0.020, 0.100, 0.050, 1, share*0.010 + 0.020},
		{"nothing to reduce", on, 0, 0, 0.100, 0.050, 1, 0},
	} {
		got := DataParallelExposedSeconds(tt.fw, tt.reduce, tt.gather, tt.backward, tt.forward, tt.times, share)
		if !near(got, tt.want) {
			t.Errorf("%s: %v s, want %v s", tt.name, got, tt.want)
		}
		if free := DataParallelExposedSeconds(tt.fw, tt.reduce, tt.gather, tt.backward, tt.forward, tt.times, 0); free > got {
			t.Errorf("%s: %v s with SMs held, %v s without: holding them cannot hide more", tt.name, got, free)
		}
	}
}

// TestOverlappedAllReduceSlowsTheBackward: a plan prices it so. GPT-2 medium on four
// H100s in eager PyTorch (DDP's buckets behind the last backward) hides its all-reduce
// behind the backward, and the step counts NCCL's CTAs' share of it.
func TestOverlappedAllReduceSlowsTheBackward(t *testing.T) {
	for _, sharding := range []string{"none", "zero1"} {
		req := fmt.Sprintf(`{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},"cluster":{"device":"h100-sxm","count":4},"parallelism":{"data":4,"sharding":%q},"schedule":{"microbatches":4}}`, sharding)
		res, err := Run(context.Background(), decode(t, req))
		if err != nil || res.Step == nil {
			t.Fatalf("%s: %v", sharding, err)
		}
		st := res.Step
		comm := st.DataParallelAllReduceSeconds + st.DataParallelReduceScatterSeconds + st.DataParallelAllGatherSeconds
		if want := cluster.CollectiveSMShare(132) * comm; comm <= 0 || !near(st.DataParallelExposedSeconds, want) {
			t.Errorf("%s: exposed %v s of %v s, want NCCL's share %v s", sharding, st.DataParallelExposedSeconds, comm, want)
		}
	}
}
