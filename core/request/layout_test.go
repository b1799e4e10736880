package request

import (
	"context"
	"pipeplan/core/wire"
	"testing"
)

// TestStartLayout: Llama-3-8B on 2 nodes of 8 H100s does not start as 16 pipeline
// stages: the starting layout is the fastest split into stages x replicas (ZeRO-1 where
// it helps), checked against planning every split; a request that fixes its layout
// comes back as given.
func TestStartLayout(t *testing.T) {
	base := &wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b"}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 16, DevicesPerNode: 8}}
	l, err := StartLayout(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Run(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	if l.Pipeline == 0 || l.Pipeline*l.Data != 16 || l.Tried != 9 {
		t.Fatalf("layout %d x %d after %d plans: %s", l.Pipeline, l.Data, l.Tried, l.Rule)
	}
	if all.Feasible && l.SamplesPerSecond <= all.Step.SamplesPerSecond {
		t.Errorf("the layout runs %v samples/s, 16 stages %v", l.SamplesPerSecond, all.Step.SamplesPerSecond)
	}
	// Brute force: no split is more than LayoutTie faster, and the layout's request
	// plans to the throughput it states.
	for _, d := range []int{1, 2, 4, 8, 16} {
		for _, sh := range []string{"", "zero1"} {
			if sh == "zero1" && d == 1 {
				continue
			}
			c := clone(base)
			c.Parallelism.Data, c.Parallelism.Sharding = d, sh
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Feasible && res.Step.SamplesPerSecond > l.SamplesPerSecond*(1+LayoutTie) {
				t.Errorf("%d replicas %q: %v samples/s, faster than the layout's %v", d, sh, res.Step.SamplesPerSecond, l.SamplesPerSecond)
			}
		}
	}
	res, err := Run(context.Background(), l.Request)
	if err != nil || res.Step == nil || res.Step.SamplesPerSecond != l.SamplesPerSecond {
		t.Errorf("the layout's request: %v %+v, want %v samples/s", err, res, l.SamplesPerSecond)
	}
	t.Logf("%s: %.2f samples/s (16 stages: %.2f)", l.Rule, l.SamplesPerSecond, all.Step.SamplesPerSecond)

	fixed := clone(base)
	fixed.Parallelism.Data = 2
	if l, err := StartLayout(context.Background(), fixed); err != nil || l.Pipeline != 0 || l.Request != fixed {
		t.Errorf("a request with its replicas: %v %+v", err, l)
	}
	profile := &wire.Request{Model: wire.ModelSpec{Example: "gpt2-medium"}, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8}}
	if l, err := StartLayout(context.Background(), profile); err != nil || l.Pipeline != 0 || l.Request != profile {
		t.Errorf("a measured profile: %v %+v", err, l)
	}
	if _, err := StartLayout(context.Background(), &wire.Request{Model: wire.ModelSpec{Example: "gpt2-medium"}}); err == nil {
		t.Error("a request without a cluster: no error")
	}
}
