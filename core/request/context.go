package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/model"
)

// contextInner checks and defaults parallelism.context_inner, the all-to-all group of
// hierarchical context parallelism (Megatron-LM's a2a+p2p): only with that method; it
// divides context and leaves at least two groups on the ring; with
// cluster.devices_per_node it sits in a node beside the tensor group, and by default it
// is the largest divisor of context that does (the all-to-all on the fast link, the
// ring's fewer steps across nodes, as Megatron-LM's hierarchical_context_parallel_sizes
// are usually set).
func (p *prepared) contextInner(es *model.Errors) {
	par := &p.req.Parallelism
	c, g := par.Context, par.ContextInner
	if par.ContextMethod != string(analytic.Hierarchical) {
		if g != 0 {
			es.Add("parallelism.context_inner", "goes with parallelism.context_method %s", analytic.Hierarchical)
		}
		return
	}
	fit := c - 1
	if p.topo != nil && p.topo.DevicesPerNode > 0 {
		fit = min(fit, p.topo.DevicesPerNode/max(1, par.Tensor))
	}
	if g == 0 {
		if p.topo == nil {
			es.Add("parallelism.context_inner", "give the all-to-all group's size (or cluster.devices_per_node, whose node holds one)")
			return
		}
		for k := 2; k <= fit; k++ {
			if c%k == 0 {
				g = k
			}
		}
		if g == 0 {
			es.Add("parallelism.context_inner", "no divisor of parallelism.context (%d) from 2 to %d fits in a node beside the %d-way tensor group: use context_method ring or all-to-all", c, c/2, par.Tensor)
			return
		}
		par.ContextInner = g
		return
	}
	switch {
	case g < 2 || g >= c || c%g != 0:
		es.Add("parallelism.context_inner", "must divide parallelism.context (%d) and lie between 2 and %d (at least two groups on the ring), got %d", c, c/2, g)
	case p.topo != nil && g*max(1, par.Tensor) > p.topo.DevicesPerNode:
		es.Add("parallelism.context_inner", "times parallelism.tensor (%d x %d) must fit in a node of cluster.devices_per_node (%d): the all-to-all group sits in a node", g, par.Tensor, p.topo.DevicesPerNode)
	}
}
