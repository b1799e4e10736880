package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// links checks that every transfer between stages has a link with a bandwidth, unless
// transfers are free, and finds the links of the gradient all-reduces.
func (p *prepared) links(es *model.Errors) {
	r := p.req
	c := p.cluster
	if r.Cluster.FreeTransfers {
		c.Links, c.Host = nil, nil
		for i := range c.Devices {
			c.Devices[i].Recv, c.Devices[i].Send = nil, nil
		}
		return
	}
	field := func(i int) string {
		if r.Cluster.Device != "" {
			return "cluster.link"
		}
		if f := c.SendLinkField(i); f != "" {
			return "cluster.document." + f
		}
		return "cluster.document.links"
	}
	if p.topo != nil {
		p.place(es)
		if len(*es) > 0 {
			return
		}
	}
	var slowest *cluster.Link
	for i := 0; i+1 < len(c.Devices); i++ {
		l := c.SendLink(i)
		switch {
		case l == nil:
			es.Add(field(i), "no link joins devices %d and %d, which pass activations between stages: give one, or set cluster.free_transfers", i, i+1)
			return
		case !hasBandwidth(l):
			es.Add(field(i), "has no bandwidth (0 bytes/s) between devices %d and %d: give bytes_per_second or gbps, or set cluster.free_transfers", i, i+1)
			return
		}
		if slowest == nil || bandwidth(l, c.Devices[i].ClockHz) < bandwidth(slowest, c.Devices[i].ClockHz) {
			slowest = l
		}
	}
	if len(c.Devices) > 1 {
		p.tiedLink = slowest
	}
	if r.Parallelism.Data < 2 || !p.train() {
		return
	}
	switch {
	case p.placement != nil:
		p.dataLink = &p.placement.DataLink
	case r.Cluster.Device != "":
		p.dataLink = &c.Links[0]
	case r.Cluster.DataLink != "":
		l, _ := cluster.LookupLink(r.Cluster.DataLink)
		p.dataLink = &l.Link
	case slowest != nil:
		p.dataLink = slowest
		p.note(wire.Diagnostic{Code: wire.CodeDataLinkAssumed, Severity: wire.Note, Field: "cluster.data_link",
			Message: "the data-parallel all-reduce is costed on the slowest link between the pipeline's stages (set cluster.data_link to name another)"})
	default:
		es.Add("cluster.data_link", "the pipeline has one device, so no link of the cluster document joins the data-parallel replicas: name a link preset")
	}
}

// place lays the run on the nodes (cluster.Topology.Choose) with the traffic of one step:
// each device's gradients, all-reduced with its replicas, and what crosses a stage
// boundary (the largest layer output, sent per microbatch); the pipeline's links become
// the ones its stage boundaries cross.
func (p *prepared) place(es *model.Errors) {
	r := p.req
	par := r.Parallelism
	var tr cluster.Traffic
	var out int64
	for i := range p.model.Layers {
		l := &p.model.Layers[i]
		if p.train() {
			tr.GradientBytes += float64(gradBytes(l))
		}
		send := int64(0)
		if l.SendBytes != nil {
			send = *l.SendBytes
		} else {
			for _, t := range l.Outputs {
				send += t.Bytes
			}
		}
		out = max(out, send)
	}
	tr.GradientBytes /= float64(par.Pipeline)
	tr.StageBytes = float64(out) * float64(r.Schedule.Microbatches)
	if p.train() {
		tr.StageBytes *= 2 // activations forward, their gradients back
	}
	orders := cluster.Orders
	if par.Expert > 1 {
		orders = cluster.ExpertOrders // the order the expert groups are priced in
	}
	pl, err := p.topo.ChooseAmong(orders, par.Pipeline, par.Data, par.Tensor*par.Context, tr)
	if err != nil {
		addPrefixed(es, "parallelism", err)
		return
	}
	if par.Context > 1 {
		pl.Tensor, pl.Context = par.Tensor, par.Context // placed as one group of t x c
		// The tensor group's all-reduces run on its t members' rings (tensorLink; on a
		// full mesh t-1 links, where the t x c group placed would get t x c - 1).
		pl.TensorLink = p.tensorLink
	}
	p.placement = pl
	c := pl.StageCluster(p.cluster.Devices[0])
	p.cluster.Links = c.Links
}

// meshInNode is what a collective's rings get from one link of the full mesh that
// joins the data-parallel reduction's members (cluster.LinkPreset.MeshBytesPerSecond:
// AMD Infinity Fabric), where the members share one: a node of the topology the ring
// stays in, or the device preset's cluster.link joining all the devices; 0 otherwise.
func (p *prepared) meshInNode() float64 {
	if p.topo == nil {
		return p.mesh
	}
	if p.placement != nil && p.placement.DataCrossesNodes {
		return 0
	}
	return p.topo.IntraMeshBytesPerSecond
}

// meshMembers is how many of a ring's k members share one full mesh, and so how many
// less one of its links each drives (cluster.MeshRing): at most a node's devices, or
// without nodes the device preset's scale-up domain that cluster.link's mesh joins (8
// on AMD's Infinity Fabric platforms), where more devices than that are planned as one
// fabric (the beyond-scale-up warning).
func (p *prepared) meshMembers(k int) int {
	switch {
	case p.topo != nil:
		return min(k, p.topo.DevicesPerNode)
	case p.meshDevices > 0:
		return min(k, p.meshDevices)
	}
	return k
}

// shardLinks are the links and group sizes of the data-parallel reductions: the
// devices that hold the same layers (replicas times the context group) reduce their
// gradients over link (the slowest a ring crosses: the data link, or with one replica
// the context group's link inside a node). Under hsdp the shard group reduces over
// link (inside a node when the group fits one, cluster.devices_per_node) and the
// replicas of each shard across groups over across. ok is false when there is no
// reduction (inference, or one device).
func (p *prepared) shardLinks() (link *cluster.Link, members int, across *cluster.Link, groups int, ok bool) {
	par := p.req.Parallelism
	n := par.Data * par.Context
	if !p.train() || n < 2 || p.req.Cluster.FreeTransfers || (par.Data > 1 && p.dataLink == nil) {
		return nil, 0, nil, 0, false
	}
	link = p.dataLink
	if link == nil {
		link = &p.tensorLink // one replica: the context group, inside a node
	}
	if mesh := p.meshInNode(); mesh > 0 {
		// The n members share a node's full mesh: their ring runs on n-1 of its links,
		// at most a node's less one (one replica's context group over whole nodes).
		ring := cluster.MeshRing(*link, mesh, p.meshMembers(n))
		link = &ring
	}
	if par.Context > 1 && par.Data > 1 && p.topo != nil && p.placement != nil && p.placement.DataCrossesNodes {
		// The reduction's ring runs over the replicas and their context groups alike:
		// Context of its members in each replica's block, so Context times the
		// placement's replicas in a node, each on its own NIC (Topology.RingInter).
		inter := p.topo.RingInter(max(1, p.placement.DataMembersPerNode) * par.Context)
		link = &inter
	}
	if par.Sharding != string(analytic.HSDP) {
		return link, n, nil, 0, true
	}
	g := par.ShardGroup * par.Context
	across = link
	if p.topo != nil && p.placement != nil && p.placement.Order == cluster.TDP && g*par.Tensor <= p.topo.DevicesPerNode {
		intra := p.topo.IntraRing(g) // TDP numbers replicas next to each other: a group fits a node
		link = &intra
	}
	if p.topo != nil && p.placement != nil && p.placement.DataCrossesNodes {
		// A ring across the groups has 1/g of a data-parallel ring's members in a node
		// (at least one), each on its own NIC (cluster.Topology.RingInter).
		inter := p.topo.RingInter(max(1, p.placement.DataMembersPerNode/g))
		across = &inter
	}
	return link, g, across, n / g, true
}

// expertShardLink is the link of the routed experts' data-parallel ring (Megatron-Core's
// expert-data-parallel group), given link, the data-parallel ring's. Megatron-Core
// lays each expert-parallel group of EP x ETP devices on consecutive ranks
// (megatron/core/parallel_state.py: initialize_model_parallel's default order
// "tp-cp-ep-dp-pp", the expert RankGenerator's tp-ep-dp over the same ranks), so the expert-data-parallel group
// holds one device of every EP x ETP block: where the data-parallel ring has d devices in
// a node, an expert ring has d / (EP x ETP) of them (at least one), and all EP x ETP of
// them reduce at once, each on its own share of the node's NICs (Topology.RingInter,
// one NIC per device). A ring with one member per node runs on one NIC, not on the node's
// d NICs that the whole data-parallel ring drives: 8-way expert parallelism inside
// 8-GPU nodes reduces its experts' gradients at one NIC's bandwidth. Inside a node, or
// without a topology, it is link; on a full mesh (meshInNode) the expert ring's own
// members links less one (cluster.MeshRing), fewer than the data-parallel ring's: the
// EP x ETP expert rings of a node run at once on disjoint links.
func (p *prepared) expertShardLink(link *cluster.Link, members int) *cluster.Link {
	par := p.req.Parallelism
	if p.topo == nil || p.placement == nil || !p.placement.DataCrossesNodes || link == nil {
		if mesh := p.meshInNode(); mesh > 0 && link != nil && members > 1 {
			ring := cluster.MeshRing(*link, mesh, p.meshMembers(members))
			return &ring
		}
		return link
	}
	block := max(1, par.Expert) * max(1, par.ExpertTensor) // one expert-parallel group's devices
	inNode := p.placement.DataMembersPerNode * max(1, par.Tensor) * max(1, par.Context)
	l := p.topo.RingInter(max(1, inNode/block))
	return &l
}

// gatherLayers adds to each layer's times the communication of ZeRO-3 (and HSDP) that
// its compute does not hide: per microbatch, its weights all-gathered over the shard
// group before its forward and again before its backward, and its gradients
// reduce-scattered after its backward (Rajbhandari et al. 2020, section 7: 1.5 x the
// all-reduce's volume). With prefetch (PyTorch FSDP2's default: the next layer's
// all-gather is issued while this one computes, docs of torch.distributed.fsdp.fully_shard)
// an all-gather hides behind a layer's compute, counted as this layer's (a transformer's
// blocks are alike); the reduce-scatter always runs beside the next layer's backward.
// The collectives beside the compute hold cluster.CollectiveSMShare of the device's
// multiprocessors while they run (NCCL's CTAs), slowing it: a pass of compute C beside
// communication D takes cluster.OverlappedSeconds, max(D, C + share x D). Forward
// OverlappedSeconds(F, AG) (F + AG without prefetch), backward OverlappedSeconds(B,
// AG + RS) (AG + OverlappedSeconds(B, RS) without prefetch). Each layer's collectives
// per microbatch (2 AG + RS), what they add to its passes, the compute slowed of that
// (cluster.OverlapSlowdownSeconds) and those in its backward (AG + RS) are kept
// (layerComm, layerAdded, layerSlow, layerBackward), for the step to name them and for
// HSDP's all-reduce across the groups, which hides in what of the backward they leave.
func (p *prepared) gatherLayers(es *model.Errors) {
	if analytic.Sharding(p.req.Parallelism.Sharding).Level() < 3 {
		return
	}
	link, n, _, _, ok := p.shardLinks()
	if !ok || p.req.Cluster.FreeTransfers {
		return
	}
	if p.model.Unit() != model.Seconds {
		es.Add("parallelism.sharding", "%s adds gathers to each layer's time: it needs a profile timed in seconds, not cycles", p.req.Parallelism.Sharding)
		return
	}
	prefetch := p.req.Parallelism.Prefetch != PrefetchNone
	p.model.Layers = append([]model.Layer(nil), p.model.Layers...) // a cached model's layers are shared
	sl := secondsLink(link, p.cluster.Devices[0].ClockHz)
	share := p.collectiveSMShare()
	nl := len(p.model.Layers)
	p.layerComm, p.layerAdded, p.layerSlow, p.layerBackward = make([]float64, nl), make([]float64, nl), make([]float64, nl), make([]float64, nl)
	for i := range p.model.Layers {
		l := &p.model.Layers[i]
		fwd, bwd := l.ForwardSeconds, l.BackwardSeconds
		ag := cluster.RingAllGatherSeconds(sl, float64(p.fullWeights[i]), n)
		rs := cluster.RingReduceScatterSeconds(sl, p.reduceBytes(p.fullGrads[i]), n)
		if prefetch {
			l.ForwardSeconds = cluster.OverlappedSeconds(l.ForwardSeconds, ag, share)
			l.BackwardSeconds = cluster.OverlappedSeconds(l.BackwardSeconds, ag+rs, share)
			p.layerSlow[i] = cluster.OverlapSlowdownSeconds(fwd, ag, share) + cluster.OverlapSlowdownSeconds(bwd, ag+rs, share)
		} else {
			l.ForwardSeconds += ag
			l.BackwardSeconds = ag + cluster.OverlappedSeconds(l.BackwardSeconds, rs, share)
			p.layerSlow[i] = cluster.OverlapSlowdownSeconds(bwd, rs, share)
		}
		p.layerComm[i], p.layerBackward[i] = 2*ag+rs, ag+rs
		p.layerAdded[i] = (l.ForwardSeconds - fwd) + (l.BackwardSeconds - bwd)
	}
}

// reduceBytes is what the data-parallel reduction of gradients of grads bytes (in the
// type the backward pass makes them) moves: grads, or with parallelism.reduce_dtype fp32
// the same gradients in fp32, 4/e times grads for e-byte gradients. PyTorch FSDP2's
// foreach_reduce (torch/distributed/_composable/fsdp/_fsdp_collectives.py at
// pytorch/pytorch 1963fc8, the version of torchtitan's benchmarks of December 2024)
// allocates the reduce-scatter's input in the policy's reduce_dtype and copies the
// 16-bit unsharded gradients into it (foreach_reduce_scatter_copy_in, torch._chunk_cat),
// so the reduce-scatter, and HSDP's all-reduce of its output across the groups, move
// fp32. torchtitan passes reduce_dtype float32 (parallelize_llama.py apply_fsdp;
// config_manager.py training.mixed_precision_reduce, default and only choice
// "float32", at 9dec370).
func (p *prepared) reduceBytes(grads int64) float64 {
	if p.req.Parallelism.ReduceDType != ReduceFP32 || p.est == nil {
		return float64(grads)
	}
	e := p.est.Opts.GradBytesPerParam()
	if e <= 0 || e >= 4 {
		return float64(grads)
	}
	return float64(grads) * 4 / e
}

// collectiveSMShare is the share of the target device's multiprocessors that an NCCL
// collective holds while it runs (cluster.CollectiveSMShare).
func (p *prepared) collectiveSMShare() float64 {
	return cluster.CollectiveSMShare(p.target.Perf.Multiprocessors)
}

func hasBandwidth(l *cluster.Link) bool {
	if l.CyclesStyle() {
		return l.GBps > 0
	}
	return l.BytesPerSecond > 0
}

// bandwidth is a link's bytes per second.
func bandwidth(l *cluster.Link, clockHz float64) float64 {
	if l.CyclesStyle() {
		return l.GBps * cluster.GiB
	}
	return l.BytesPerSecond
}
