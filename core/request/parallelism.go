package request

import (
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

func (p *prepared) parallelism(es *model.Errors) {
	r := p.req
	par, cs := &r.Parallelism, &r.Cluster
	if par.Data == 0 {
		par.Data = 1
	}
	if par.Data < 1 || par.Data > cluster.MaxStages {
		es.Add("parallelism.data", "must be between 1 and %d, got %d", cluster.MaxStages, par.Data)
		return
	}
	if par.Pipeline < 0 || par.Pipeline > cluster.MaxStages {
		es.Add("parallelism.pipeline", "must be between 1 and %d, got %d", cluster.MaxStages, par.Pipeline)
		return
	}
	if par.Tensor == 0 {
		par.Tensor = 1
	}
	if par.Tensor < 1 || par.Tensor > cluster.MaxStages {
		es.Add("parallelism.tensor", "must be between 1 and %d, got %d", cluster.MaxStages, par.Tensor)
		return
	}
	if par.Tensor > 1 && p.arch == nil {
		es.Add("parallelism.tensor", "splits an architecture's blocks (model.architecture); a measured profile cannot be split")
	}
	if par.SequenceParallel && par.Tensor < 2 {
		es.Add("parallelism.sequence_parallel", "splits along the sequence what tensor parallelism leaves whole: it needs parallelism.tensor >= 2")
	}
	p.context(es)
	p.sharding(es)
	p.experts(es)
	if p.cluster != nil { // a document: its devices are one pipeline
		n := len(p.cluster.Devices)
		if par.Pipeline != 0 && par.Pipeline != n {
			es.Add("parallelism.pipeline", "must be %d, the devices of the cluster document (one per pipeline device), got %d", n, par.Pipeline)
		}
		par.Pipeline = n
		return
	}
	t := par.Tensor * par.Context // a stage's group: tensor x context devices
	switch {
	case par.Pipeline == 0 && cs.Count == 0:
		es.Add("cluster.count", "give the number of devices (or parallelism.pipeline)")
		return
	case par.Pipeline == 0:
		if cs.Count%(par.Data*t) != 0 {
			es.Add("parallelism.data", "%d replicas of stages of %d devices (tensor x context) do not divide the %d devices of cluster.count: give parallelism.pipeline", par.Data, t, cs.Count)
			return
		}
		par.Pipeline = cs.Count / (par.Data * t)
	case cs.Count == 0:
		cs.Count = par.Pipeline * par.Data * t
	}
	if need := int64(par.Pipeline) * int64(par.Data) * int64(t); need > int64(cs.Count) {
		if par.Context > 1 {
			es.Add("cluster.count", "%d devices cannot hold %d pipeline stages times %d replicas times %d-way tensor times %d-way context parallelism (%d devices)", cs.Count, par.Pipeline, par.Data, par.Tensor, par.Context, need)
		} else {
			es.Add("cluster.count", "%d devices cannot hold %d pipeline stages times %d replicas times %d-way tensor parallelism (%d devices)", cs.Count, par.Pipeline, par.Data, t, need)
		}
		return
	}
	c, err := cluster.FromPreset(cs.Device, par.Pipeline)
	if err != nil {
		es.Add("parallelism.pipeline", "%v", err)
		return
	}
	if p.topo != nil {
		// Stage links are placed in links(), once the model's traffic is known.
		p.topo.Nodes = (cs.Count + p.topo.DevicesPerNode - 1) / p.topo.DevicesPerNode
		if p.topo.DevicesPerNode%par.Tensor != 0 {
			es.Add("parallelism.tensor", "must divide cluster.devices_per_node (%d): a tensor-parallel group stays inside a node, got %d", p.topo.DevicesPerNode, par.Tensor)
			return
		}
		if K := p.topo.DevicesPerNode; K%t != 0 && t%K != 0 {
			es.Add("parallelism.context", "times parallelism.tensor (%d x %d) must divide cluster.devices_per_node (%d), or be whole nodes: a stage's group of tensor x context devices fills nodes evenly", par.Context, par.Tensor, K)
			return
		}
		c.Links = []cluster.Link{p.topo.Intra}
		// On a full mesh the tensor-parallel collectives run on the group's t-1 links
		// (cluster.Topology.IntraRing); a stage's send on one.
		p.tensorLink = p.topo.IntraRing(par.Tensor)
	} else {
		l, _ := cluster.LookupLink(cs.Link)
		c.Links = []cluster.Link{l.Link}
		// A full mesh (cluster.MeshRing): a group's collectives on its t-1 links.
		p.mesh = l.MeshBytesPerSecond
		if d, err := cluster.LookupDevice(cs.Device); err == nil {
			p.meshDevices = d.ScaleUpDevices // a mesh joins a platform's devices alone
		}
		p.tensorLink = cluster.MeshRing(l.Link, p.mesh, p.meshMembers(par.Tensor))
		if d, err := cluster.LookupDevice(cs.Device); err == nil && d.ScaleUpDevices > 0 && cs.Count > d.ScaleUpDevices && strings.EqualFold(cs.Link, d.Link) {
			p.note(wire.Diagnostic{Code: wire.CodeBeyondScaleUp, Severity: wire.Warning, Field: "cluster.devices_per_node",
				Message: fmt.Sprintf("%d %s are planned as one %s fabric, but it joins %d of them (its scale-up domain): give cluster.devices_per_node %d to place the rest across its network",
					cs.Count, d.Name, d.Link, d.ScaleUpDevices, d.ScaleUpDevices)})
		}
	}
	p.cluster = c
	if idle := cs.Count - par.Pipeline*par.Data*t; idle > 0 {
		msg := fmt.Sprintf("%d of the %d devices are idle: the plan uses %d pipeline stages times %d replicas", idle, cs.Count, par.Pipeline, par.Data)
		if par.Tensor > 1 {
			msg += fmt.Sprintf(" times %d-way tensor parallelism", par.Tensor)
		}
		if par.Context > 1 {
			msg += fmt.Sprintf(" times %d-way context parallelism", par.Context)
		}
		p.note(wire.Diagnostic{Code: wire.CodeIdleDevices, Severity: wire.Warning, Field: "cluster.count", Message: msg})
	}
}

// The shardings of parallelism.sharding, and its aliases.
var shardings = map[string]analytic.Sharding{
	"none": analytic.NoSharding, "zero1": analytic.ZeRO1, "zero2": analytic.ZeRO2,
	"zero3": analytic.ZeRO3, "fsdp": analytic.ZeRO3, "hsdp": analytic.HSDP,
}

// The values of parallelism.prefetch.
const (
	PrefetchNextLayer = "next-layer"
	PrefetchNone      = "none"
)

// The values of parallelism.reshard (analytic.Options.KeepGathered).
const (
	ReshardLayer = "layer"
	ReshardStep  = "step"
)

// ReduceFP32 is parallelism.reduce_dtype fp32: PyTorch FSDP2's
// MixedPrecisionPolicy(reduce_dtype=torch.float32).
const ReduceFP32 = "fp32"

// DefaultReshard is parallelism.reshard's default for zero3 or hsdp (core's one rule,
// which the normal form states, so that the page, the CLI and the search show and plan
// the same): step where a training step of an architecture has pipeline stages >= 2,
// else layer. torchtitan's apply_fsdp (torchtitan/models/llama3/infra/parallelize.py at
// commit 81c1243, fsdp_reshard_after_forward "default", its default) passes
// reshard_after_forward=False to every block and to the root when pipeline parallelism
// is on ("For PP, do not reshard after forward to avoid per-microbatch all-gathers"),
// and PyTorch's pipelining stage (torch/distributed/pipelining/stage.py,
// backward_maybe_with_nosync) sets set_reshard_after_backward(False) and
// set_requires_gradient_sync(False) for every microbatch's backward but the last: the
// weights stay gathered and the gradients accumulate whole through the step
// (analytic.Options.KeepGathered). Without pipeline stages torchtitan reshards each
// block after its forward pass (all but the last, which FSDP2 prefetches at once for
// the backward: a layer's worth, which the layer rule's working memory already holds).
// A measured profile cannot take step (its gradients' type is not known), and inference
// has no sharding; DeepSpeed's PipelineEngine refuses ZeRO-3 with pipeline stages
// (PipelineEngineRefusal), so the rule is FSDP2's wherever zero3 meets a pipeline.
func DefaultReshard(stages int, architecture, training bool) string {
	if stages >= 2 && architecture && training {
		return ReshardStep
	}
	return ReshardLayer
}

// defaultReshard states parallelism.reshard's default (DefaultReshard) for zero3 and
// hsdp, once the pipeline's stages are known.
func (p *prepared) defaultReshard() {
	par := &p.req.Parallelism
	if par.Reshard != "" || analytic.Sharding(par.Sharding).Level() < 3 {
		return
	}
	par.Reshard = DefaultReshard(par.Pipeline, p.arch != nil, p.train())
}

// context checks and defaults context parallelism: c >= 1, only for an architecture
// (a measured profile's sequence cannot be split), the method for c >= 2 only.
func (p *prepared) context(es *model.Errors) {
	par := &p.req.Parallelism
	if par.Context == 0 {
		par.Context = 1
	}
	if par.Context < 1 || par.Context > cluster.MaxStages {
		es.Add("parallelism.context", "must be between 1 and %d, got %d", cluster.MaxStages, par.Context)
		par.Context = 1
		return
	}
	if par.Context > 1 && p.arch == nil {
		es.Add("parallelism.context", "splits an architecture's sequence (model.architecture); a measured profile's cannot be split")
	}
	switch {
	case par.Context == 1 && par.ContextMethod != "":
		es.Add("parallelism.context_method", "goes with parallelism.context >= 2")
	case par.Context == 1:
	case par.ContextMethod == "":
		par.ContextMethod = string(analytic.Ring)
	case par.ContextMethod != string(analytic.Ring) && par.ContextMethod != string(analytic.AllToAll) && par.ContextMethod != string(analytic.Hierarchical) && par.ContextMethod != string(analytic.AllGather):
		es.Add("parallelism.context_method", "must be %s, %s, %s or %s, got %q", analytic.Ring, analytic.AllToAll, analytic.Hierarchical, analytic.AllGather, par.ContextMethod)
	}
	p.contextInner(es)
}

// sharding checks and defaults the sharding of training state: zero (the former
// field) moves to sharding, fsdp reads as zero3, and a sharding needs training and at
// least two devices to shard over (replicas x context); hsdp's shard group must divide
// the replicas and leave at least two groups.
func (p *prepared) sharding(es *model.Errors) {
	par := &p.req.Parallelism
	field := "parallelism.sharding"
	switch par.ZeRO {
	case 0:
	case 1:
		if par.Sharding != "" && par.Sharding != "zero1" {
			es.Add("parallelism.zero", "1 means sharding zero1, and parallelism.sharding says %q: give sharding alone", par.Sharding)
			return
		}
		par.Sharding, par.ZeRO, field = "zero1", 0, "parallelism.zero"
	default:
		es.Add("parallelism.zero", "must be 0 or 1 (for ZeRO-2 and 3 give parallelism.sharding: zero2, zero3), got %d", par.ZeRO)
		return
	}
	if par.Sharding == "" {
		par.Sharding = "none"
	}
	sh, ok := shardings[par.Sharding]
	if !ok {
		es.Add(field, "must be one of none, zero1, zero2, zero3, fsdp, hsdp, got %q", par.Sharding)
		return
	}
	par.Sharding = string(sh)
	level := sh.Level()
	if level > 0 {
		name := fmt.Sprintf("ZeRO-%d", level)
		if sh == analytic.HSDP {
			name = "HSDP"
		}
		switch n := par.Data * par.Context; {
		case n >= 2:
		case level == 1:
			es.Add(field, "ZeRO-1 shards optimizer state over data-parallel replicas: it needs parallelism.data >= 2, got %d", par.Data)
		default:
			es.Add(field, "%s shards training state over the data-parallel devices: it needs parallelism.data (or parallelism.context) >= 2, got %d", name, n)
		}
		if !p.train() {
			es.Add(field, "shards optimizer state, which inference does not have")
		}
	}
	switch {
	case level == 3 && par.Prefetch == "":
		par.Prefetch = PrefetchNextLayer
	case level == 3 && par.Prefetch != PrefetchNextLayer && par.Prefetch != PrefetchNone:
		es.Add("parallelism.prefetch", "must be %s or %s, got %q", PrefetchNextLayer, PrefetchNone, par.Prefetch)
	case level < 3 && par.Prefetch != "":
		es.Add("parallelism.prefetch", "goes with sharding zero3 or hsdp, which gather weights layer by layer")
	}
	switch {
	case level == 3 && par.Reshard != "" && par.Reshard != ReshardLayer && par.Reshard != ReshardStep:
		es.Add("parallelism.reshard", "must be %s or %s, got %q", ReshardLayer, ReshardStep, par.Reshard)
	case level < 3 && par.Reshard != "":
		es.Add("parallelism.reshard", "goes with sharding zero3 or hsdp, which gather weights layer by layer")
	case par.Reshard == ReshardStep && p.arch == nil:
		es.Add("parallelism.reshard", "step needs model.architecture: a profile does not say the type its whole gradients accumulate in")
	}
	switch {
	case par.ReduceDType == "":
	case level < 3:
		es.Add("parallelism.reduce_dtype", "goes with sharding zero3 or hsdp (PyTorch FSDP2's reduce_dtype)")
	case par.ReduceDType != ReduceFP32:
		es.Add("parallelism.reduce_dtype", "must be %s (or empty: the gradients' own type), got %q", ReduceFP32, par.ReduceDType)
	case !p.train():
		es.Add("parallelism.reduce_dtype", "reduces gradients, which inference does not have")
	case p.arch == nil:
		es.Add("parallelism.reduce_dtype", "needs model.architecture: a profile does not say the type its gradients are in")
	}
	switch {
	case !par.FullyShard:
	case level < 3:
		es.Add("parallelism.fully_shard", "goes with sharding zero3 or hsdp (PyTorch FSDP2's fully_shard)")
	case p.arch == nil:
		es.Add("parallelism.fully_shard", "needs model.architecture: its copies are priced in the layers of an architecture")
	}
	if sh != analytic.HSDP {
		if par.ShardGroup != 0 {
			es.Add("parallelism.shard_group", "goes with sharding hsdp")
		}
		return
	}
	if par.ShardGroup == 0 {
		if p.topo == nil {
			es.Add("parallelism.shard_group", "give the replicas in a shard group (or cluster.devices_per_node, whose node holds one)")
			return
		}
		// The replicas a node holds, at most the replicas (a divisor of both).
		fit := max(1, p.topo.DevicesPerNode/(par.Tensor*par.Context))
		g := 1
		for k := 1; k <= min(fit, par.Data); k++ {
			if par.Data%k == 0 && fit%k == 0 {
				g = k
			}
		}
		par.ShardGroup = g
	}
	switch g := par.ShardGroup; {
	case g < 1 || g > par.Data:
		es.Add("parallelism.shard_group", "must be between 1 and parallelism.data (%d), got %d", par.Data, g)
	case par.Data%g != 0:
		es.Add("parallelism.shard_group", "must divide parallelism.data (%d): the replicas form whole shard groups, got %d", par.Data, g)
	case g == par.Data:
		es.Add("parallelism.shard_group", "holds all %d replicas, which leaves nothing to replicate: use sharding zero3", par.Data)
	case g*par.Context < 2:
		es.Add("parallelism.shard_group", "one device per shard group shards nothing: give at least 2 replicas (or context parallelism)")
	}
}

// experts checks and defaults the expert parallelism of a mixture of experts: expert 1
// and expert_tensor the tensor degree by default; for other models both stay unset (1
// is read as unset), and any other value is refused. Whether EP divides the experts and
// EP x expert_tensor the data x tensor devices is core/analytic's check (archPaths).
func (p *prepared) experts(es *model.Errors) {
	r := p.req
	par := &r.Parallelism
	moe := p.arch != nil && p.arch.MoE()
	for _, f := range []struct {
		name string
		v    int
	}{{"expert", par.Expert}, {"expert_tensor", par.ExpertTensor}} {
		if f.v < 0 || f.v > cluster.MaxStages {
			es.Add("parallelism."+f.name, "must be between 1 and %d, got %d", cluster.MaxStages, f.v)
			return
		}
	}
	if !moe {
		if par.Expert > 1 || (par.ExpertTensor > 1 && par.ExpertTensor != par.Tensor) || par.ExpertOverlap {
			field := "parallelism.expert"
			switch {
			case par.ExpertOverlap && par.Expert <= 1:
				field = "parallelism.expert_overlap"
			case par.Expert <= 1:
				field = "parallelism.expert_tensor"
			}
			es.Add(field, "splits the experts of a mixture-of-experts architecture; the model has none")
		}
		if par.ExpertDispatcher != "" {
			es.Add("parallelism.expert_dispatcher", "moves the tokens of a mixture of experts; the model has none")
		}
		par.Expert, par.ExpertTensor, par.ExpertOverlap, par.ExpertDispatcher = 0, 0, false, ""
		if a := r.Model.Architecture; a != nil && a.ExpertImbalance != 0 {
			es.Add("model.architecture.expert_imbalance", "applies to a mixture of experts; the model has none")
		}
		if a := r.Model.Architecture; a != nil && a.CapacityFactor != 0 {
			es.Add("model.architecture.capacity_factor", "applies to a mixture of experts; the model has none")
		}
		return
	}
	if par.Expert == 0 {
		par.Expert = 1
	}
	if par.ExpertTensor == 0 {
		par.ExpertTensor = par.Tensor
	}
	if par.ExpertDispatcher == "" {
		par.ExpertDispatcher = string(analytic.DispatchAllToAll)
	}
	if par.ExpertOverlap && par.Expert < 2 {
		es.Add("parallelism.expert_overlap", "hides the expert-parallel all-to-alls: it needs parallelism.expert >= 2")
	}
	if a := r.Model.Architecture; a.ExpertImbalance == 1 {
		a.ExpertImbalance = 0 // 1 is the default, balanced routing
	}
}

// shardGroup is the number of devices training state is sharded over: the replicas
// times the context-parallel degree (the devices that hold the same layers), or for hsdp
// its shard group's.
func (p *prepared) shardGroup() int {
	par := p.req.Parallelism
	if par.Sharding == string(analytic.HSDP) {
		return par.ShardGroup * par.Context
	}
	return par.Data * par.Context
}
