package request

import (
	"context"
	"testing"

	"pipeplan/core/cluster"
)

// TestHSDPBackwardHidesItsLengthOnce: HSDP's all-reduce across the groups and the shard
// group's per-layer all-gathers and reduce-scatters run in the same backward pass, so
// the backward's time counts once as room to hide them (issue 19 item 6). In closed
// form, from the estimate's layer times and NCCL's ring formulas: layer i's backward
// B_i beside its collectives d_i = AG_i + RS_i takes T_i = max(d_i, B_i + share x d_i)
// and leaves F = sum(T_i - d_i) of the link free; the all-reduce A hides in that, and
// adds max(A - F, share x A). So the communication hidden in the backward, sum
// min(d_i, B_i / (1 - share)) + min(A, F / (1 - share)), is at most the backward's
// length as NCCL's SMs slow it, sum B_i / (1 - share). GPT-2 medium on two nodes of two
// H100s, the shard group inside a node over InfiniBand HDR and the groups across nodes
// over EDR: the all-reduce would fit in the whole backward, not in what the per-layer
// collectives leave of it, so counting the backward twice would hide it all.
func TestHSDPBackwardHidesItsLengthOnce(t *testing.T) {
	const req = `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},
		"cluster":{"device":"h100-sxm","count":4,"devices_per_node":2,"link_intra":"ib-hdr","link_inter":"ib-edr"},
		"parallelism":{"data":4,"sharding":"hsdp","shard_group":2}}`
	o, err := EstimateOneStage(context.Background(), decode(t, req))
	if err != nil {
		t.Fatal(err)
	}
	st := o.Result.Step
	if st == nil {
		t.Fatalf("no step: %+v", o.Result.Diagnostics)
	}
	intra, err := cluster.LookupLink("ib-hdr")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cluster.LookupDevice("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	share := float64(cluster.CollectiveCTAs) / float64(dev.Perf.Multiprocessors)
	var free, backward, hiddenLayers float64
	for i, l := range o.Estimate.Layers {
		w, g := o.Estimate.FullBytes(i)
		d := cluster.RingAllGatherSeconds(intra.Link, float64(w), 2) + cluster.RingReduceScatterSeconds(intra.Link, float64(g), 2)
		free += max(d, l.BwdSeconds+share*d) - d
		backward += l.BwdSeconds
		hiddenLayers += min(d, l.BwdSeconds/(1-share))
	}
	a := st.DataParallelAllReduceSeconds
	if !(a*(1-share) > free) || !(a*(1-share) < backward) {
		t.Fatalf("all-reduce %v s, %v s of the backward left by the per-layer collectives, backward %v s: the case does not tell the two apart", a, free, backward)
	}
	want := max(a-free, share*a)
	if !near(st.DataParallelExposedSeconds, want) {
		t.Errorf("the all-reduce adds %v s, want max(A - F, share x A) = %v s (A %v s, F %v s)", st.DataParallelExposedSeconds, want, a, free)
	}
	if want := share * free / (1 - share); !near(st.DataParallelSlowdownSeconds, want) {
		t.Errorf("the all-reduce slows the backward %v s, want share x F / (1 - share) = %v s", st.DataParallelSlowdownSeconds, want)
	}
	hidden := hiddenLayers + a - (st.DataParallelExposedSeconds - st.DataParallelSlowdownSeconds)
	if limit := backward / (1 - share); hidden > limit*(1+1e-9) {
		t.Errorf("the backward hides %v s of communication, more than its %v s", hidden, limit)
	}
}
