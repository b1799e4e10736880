package request

import (
	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// dataParallelBuckets is how many collectives device dev's gradient reduction (and,
// with the optimizer sharded, its weight all-gather) issues a step for its dense
// gradients of denseBytes and its routed experts' of expertBytes, one a bucket, by the
// framework that runs it:
//
//   - parallelism.dp_bucket_bytes set: that many bytes of gradients a bucket, on every
//     stage (Apex's DistributedFusedAdam, NeMo's distributed_fused_adam: bucket_cap_mb
//     MiB of its grad_sync_dtype, apex/contrib/optimizers/distributed_fused_adam.py,
//     "bucket_size = 1024 * 1024 * bucket_cap_mb / dtype_size");
//   - Megatron-Core's buckets (cluster.Framework.MegatronBuckets, with the reduction
//     overlapped: "Set bucket_size to infinity if overlap_grad_reduce is False",
//     megatron/training/training.py): each model chunk is its own buffer, one
//     collective, and only the first chunk of pipeline rank 0 is cut into buckets,
//     closed at parameters' ends (cluster.MegatronBucketSizes over the chunk's
//     analytic.Layer.MegatronParams, one buffer for fp8 primary weights and one for the
//     rest) once they hold megatronBucketElements (the routed experts' buffer, whose
//     tensors are not listed, by its elements over that size) ("Turn off bucketing if we are on a pipeline stage
//     that is not the first", distributed_data_parallel.py; "Turn off bucketing for
//     model_chunk 2 onwards", disable_bucketing=(model_chunk_idx > 0), training.py);
//   - DeepSpeed: cluster.DeepSpeedBucketElements elements a bucket;
//   - PyTorch DDP (eager and compiled without sharding): cluster.DDPBucketBytes of
//     gradients a bucket after a first of cluster.DDPFirstBucketBytes;
//   - otherwise (the eager and compiled modes' zero1 and zero2, profiles): one.
//
// 0 for no bytes. Each bucket pays a collective's latency (dataRing).
func (p *prepared) dataParallelBuckets(pl *wire.Plan, dev, devices int, denseBytes, expertBytes int64, level int) (dense, expert int64) {
	one := func(b int64) int64 { return cluster.BucketCount(b, 0, 0) }
	fw := p.framework
	switch {
	case p.req.Parallelism.DPBucketBytes > 0:
		b := p.req.Parallelism.DPBucketBytes
		if p.est != nil {
			// the bytes as they are reduced (deepspeed-bf16: its fp32 gradients in bf16)
			prec := p.est.Opts.Precision
			denseBytes, expertBytes = prec.CommunicatedGradBytes(denseBytes), prec.CommunicatedGradBytes(expertBytes)
		}
		return cluster.BucketCount(denseBytes, 0, b), cluster.BucketCount(expertBytes, 0, b)
	case p.est == nil:
		return one(denseBytes), one(expertBytes)
	case fw.MegatronBuckets && fw.OverlapGradReduce:
		chunks := int64(0)
		for s := range pl.Stages {
			if s%devices == dev {
				chunks++
			}
		}
		if dev != 0 || len(pl.Stages) == 0 {
			return min(chunks, denseBytes), min(chunks, expertBytes)
		}
		var e0 int64
		var products, others []int64
		for _, l := range pl.StageLayers(0) {
			lay := &p.est.Layers[l]
			e0 += lay.ExpertParams
			for _, t := range lay.MegatronParams {
				if t.Product && p.req.Training.FP8ParamGather {
					products = append(products, t.Elements)
				} else {
					others = append(others, t.Elements)
				}
			}
		}
		bucket := p.megatronBucketElements()
		// Megatron-Core keeps a buffer for each parameter dtype (fp8 primary weights
		// apart), each walked for its own buckets; the distributed optimizer pads over
		// the data-parallel group with its context ranks.
		distOpt, dpw := p.req.Parallelism.Sharding == "zero1" || p.req.Parallelism.Sharding == "zero2", max(1, p.req.Parallelism.Data)*max(1, p.req.Parallelism.Context)
		d0 := int64(len(cluster.MegatronBucketSizes(products, bucket, dpw, distOpt)) + len(cluster.MegatronBucketSizes(others, bucket, dpw, distOpt)))
		dense = max(d0, 1) + chunks - 1
		expert = cluster.BucketCount(e0, 0, bucket) + chunks - 1
		return min(dense, denseBytes), min(expert, expertBytes)
	case fw.Name == cluster.DeepSpeed:
		de, ee := p.deviceElements(pl, dev, devices)
		return min(cluster.BucketCount(de, 0, cluster.DeepSpeedBucketElements), denseBytes), min(cluster.BucketCount(ee, 0, cluster.DeepSpeedBucketElements), expertBytes)
	case level == 0 && (fw.Name == cluster.Eager || fw.Name == cluster.Compiled):
		return cluster.BucketCount(denseBytes, cluster.DDPFirstBucketBytes, cluster.DDPBucketBytes), cluster.BucketCount(expertBytes, cluster.DDPFirstBucketBytes, cluster.DDPBucketBytes)
	}
	return one(denseBytes), one(expertBytes)
}

// deviceElements are the dense and routed-expert parameters of device dev's stages.
func (p *prepared) deviceElements(pl *wire.Plan, dev, devices int) (dense, expert int64) {
	for s := range pl.Stages {
		if s%devices != dev {
			continue
		}
		for _, l := range pl.StageLayers(s) {
			lay := &p.est.Layers[l]
			dense += lay.Params - lay.ExpertParams
			expert += lay.ExpertParams
		}
	}
	return dense, expert
}

// dpRing is a data-parallel ring: its members, the nodes they span, and whether NCCL's
// tuning model prices its latency (nccl: the cluster's intra-node link and network are
// ones it describes, cluster.NCCLLinkHop), with intra its hop inside a node.
type dpRing struct {
	members, nodes int
	nccl           bool
	intra          cluster.NCCLHop
}

// dataRing is the data-parallel ring of members devices (expert: the routed experts'
// expert-data-parallel ring, fewer of them in a node, expertShardLink) as the cluster's
// topology and placement lay it out: inside a node unless the placement's rings cross
// nodes, then as many of its members in a node as the placement puts there
// (DataMembersPerNode replicas, each with its context group; for the experts' ring, of
// those devices one an expert-parallel block). Without a topology, or over links NCCL's
// model does not describe, nccl is false.
func (p *prepared) dataRing(members int, expert bool) dpRing {
	r := dpRing{members: members, nodes: 1}
	if p.topo == nil || members < 2 {
		return r
	}
	hop, ok := cluster.NCCLLinkHop(p.req.Cluster.LinkIntra)
	if !ok {
		return r
	}
	par := p.req.Parallelism
	if par.Data < 2 && max(1, par.Tensor)*max(1, par.Context) > p.topo.DevicesPerNode {
		return r // a context ring across nodes: not laid out here
	}
	if p.placement != nil && p.placement.DataCrossesNodes {
		if net, ok := cluster.NCCLLinkHop(p.req.Cluster.LinkInter); !ok || net != cluster.NCCLNet {
			return r
		}
		perNode := p.placement.DataMembersPerNode * max(1, par.Context)
		if expert {
			perNode = p.placement.DataMembersPerNode * max(1, par.Tensor) * max(1, par.Context) / (max(1, par.Expert) * max(1, par.ExpertTensor))
		}
		perNode = max(1, perNode)
		r.nodes = max(1, min(members, (members+perNode-1)/perNode))
	}
	r.nccl, r.intra = true, hop
	return r
}

// linkRingLatency is the latency term the ring formulas (ringAllReduce, cluster's
// RingReduceScatterSeconds and RingAllGatherSeconds) charge one collective of k members
// over l: (k-1) x its latency, 2(k-1) for an all-reduce; 0 for one member.
func linkRingLatency(allReduce bool, k int, l cluster.Link) float64 {
	if k < 2 {
		return 0
	}
	steps := float64(k - 1)
	if allReduce {
		steps *= 2
	}
	return steps * l.LatencySeconds
}

// ncclComm is ring r as a communicator of NCCL's tuning model at link l's rate (the
// Simple ring's bus bandwidth), its devices' SM version from the cluster's intra-node
// link (cluster.NCCLCompCapOfLink). NVLink SHARP is not priced: NVIDIA's NeMo and
// Megatron-Bridge performance scripts set NCCL_NVLS_ENABLE=0, and no request field
// says where a run kept NCCL's default.
func (p *prepared) ncclComm(r dpRing, l cluster.Link) cluster.NCCLComm {
	return cluster.NCCLComm{
		Ranks: r.members, Nodes: r.nodes, Intra: r.intra,
		ComputeCapability: cluster.NCCLCompCapOfLink(p.req.Cluster.LinkIntra),
		AMDHost:           cluster.NCCLAMDHost(p.req.Cluster.Device),
		BusBytesPerSecond: l.BytesPerSecond,
	}
}

// bucketed is a collective f of ring r over link l of bytes on each member (an
// all-reduce's or reduce-scatter's buffer, an all-gather's gathered whole), run as
// buckets collectives of equal bytes. Where NCCL's model describes the ring (r.nccl),
// each bucket takes the time NCCL's tuner gives a collective of its bytes
// (cluster.NCCLTune: the fastest of its algorithms and protocols, each latency + bytes /
// bandwidth, the Simple ring's bandwidth l's); otherwise the ring formulas price the
// whole (cluster.RingAllReduceSeconds, RingReduceScatterSeconds and
// RingAllGatherSeconds: its bytes at l's rate and l's latency a step, linkRingLatency)
// and each bucket pays l's latency a step beside its share of the bytes' time. last is,
// of that, the bucket that fraction of the bytes fill (Megatron-Core's unhidden bucket,
// lastBucketFractions), priced the same way; 0 for fraction 0. Nothing for no
// collective (no bytes, one member, or no time by the ring formulas) or no buckets. The
// buckets' latency is part of the collective's time, and so hides behind the passes as
// its bytes do (DataParallelBucketedExposedSeconds): only what outlasts the window, and
// the unhidden bucket, is exposed.
func (p *prepared) bucketed(r dpRing, f cluster.NCCLFunc, bytes float64, l cluster.Link, buckets int64, fraction float64) (seconds, last float64) {
	ar := f == cluster.NCCLAllReduce
	whole := cluster.RingReduceScatterSeconds(l, bytes, r.members) // an all-gather's alike
	if ar {
		whole = cluster.RingAllReduceSeconds(l, bytes, r.members)
	}
	if whole <= 0 || buckets <= 0 {
		return 0, 0
	}
	if !r.nccl || l.BytesPerSecond <= 0 {
		linkLat := linkRingLatency(ar, r.members, l)
		bytesSeconds := max(0, whole-linkLat)
		seconds = bytesSeconds + float64(buckets)*linkLat
		if fraction > 0 {
			last = min(seconds, fraction*bytesSeconds+linkLat)
		}
		return seconds, last
	}
	c := p.ncclComm(r, l)
	seconds = float64(buckets) * cluster.NCCLTune(c, f, bytes/float64(buckets)).Seconds
	if fraction > 0 {
		last = min(seconds, cluster.NCCLTune(c, f, fraction*bytes).Seconds)
	}
	return seconds, last
}

// megatronBucketElements is Megatron-Core's bucket_size: parallelism.dp_bucket_elements
// where set, else its default for the data-parallel size (cluster.MegatronBucketElements).
func (p *prepared) megatronBucketElements() int64 {
	if b := p.req.Parallelism.DPBucketElements; b > 0 {
		return b
	}
	return cluster.MegatronBucketElements(max(p.req.Parallelism.Data, 1))
}
