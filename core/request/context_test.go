package request

import (
	"context"
	"pipeplan/core/wire"
	"testing"
)

// TestHierarchicalContextRequest: context_method hierarchical (Megatron-LM's a2a+p2p)
// defaults its all-to-all group to the largest divisor of context that fits in a node
// beside the tensor group, keeps the flat ring's activations (1/c of a block's), and
// over nodes joined by InfiniBand exposes less context time than the flat ring, whose
// c - 1 steps all cross the network.
func TestHierarchicalContextRequest(t *testing.T) {
	req := func(method string) *wire.Request {
		r := llamaRequest(2, 1, 2)
		r.Model.Architecture.Seq = 16384
		r.Parallelism.Context, r.Parallelism.ContextMethod = 8, method
		r.Cluster.DevicesPerNode = 8
		r.Layers = true
		return r
	}
	n, err := Normalize(req("hierarchical"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Parallelism.ContextInner != 4 {
		t.Errorf("context_inner %d, want 4 (8 devices a node / tensor 2)", n.Parallelism.ContextInner)
	}
	ring, hier := run(t, req("ring")), run(t, req("hierarchical"))
	if hier.Step.Devices != 32 {
		t.Errorf("%d devices, want 2 x 1 x 2 x 8 = 32", hier.Step.Devices)
	}
	if a, b := ring.Model.LayerCosts.ActivationBytes[1], hier.Model.LayerCosts.ActivationBytes[1]; a != b {
		t.Errorf("a block keeps %d bytes hierarchical, %d on the ring: want the same", b, a)
	}
	if !(hier.Step.StepSeconds < ring.Step.StepSeconds) {
		t.Errorf("step %v s hierarchical, %v s on a ring across nodes: want faster", hier.Step.StepSeconds, ring.Step.StepSeconds)
	}
}

// TestHierarchicalContextRefused: a hierarchical split that cannot be laid out is
// refused at parallelism.context_inner with the reason.
func TestHierarchicalContextRefused(t *testing.T) {
	for _, c := range []struct {
		edit         func(*wire.Request)
		path, reason string
	}{
		{func(r *wire.Request) { r.Parallelism.Context, r.Parallelism.ContextInner = 4, 2 }, "parallelism.context_inner", "goes with parallelism.context_method hierarchical"},
		{func(r *wire.Request) { r.Parallelism.Context, r.Parallelism.ContextMethod = 4, "hierarchical" }, "parallelism.context_inner", "give the all-to-all group's size"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.ContextMethod, r.Parallelism.ContextInner = 8, "hierarchical", 3
		}, "parallelism.context_inner", "must divide parallelism.context (8)"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.ContextMethod, r.Parallelism.ContextInner = 4, "hierarchical", 4
		}, "parallelism.context_inner", "at least two groups on the ring"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.ContextMethod, r.Parallelism.ContextInner = 8, "hierarchical", 4
			r.Parallelism.Tensor, r.Cluster.DevicesPerNode = 4, 8
		}, "parallelism.context_inner", "(4 x 4) must fit in a node of cluster.devices_per_node (8)"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.ContextMethod = 2, "hierarchical"
			r.Cluster.DevicesPerNode = 8
		}, "parallelism.context_inner", "no divisor of parallelism.context (2)"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.ContextMethod, r.Parallelism.ContextInner = 32, "hierarchical", 16
		}, "parallelism.context", "num_kv_heads"},
	} {
		r := llamaRequest(2, 4, 1)
		c.edit(r)
		_, err := Run(context.Background(), r)
		if !hasFieldError(err, c.path, c.reason) {
			t.Errorf("%s: error %v, want one at %s saying %q", c.path, err, c.path, c.reason)
		}
	}
}
