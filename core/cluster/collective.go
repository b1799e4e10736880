package cluster

import "strings"

// Collectives other than the all-reduce, in the same alpha-beta form (Colossal-AUTO's
// T = alpha + beta x n; Patarasuk and Yuan 2009 for the ring). NCCL's performance notes
// ("NCCL tests: performance", the bus bandwidth) give the bytes each rank moves per byte
// of the operation's size n: 2(k-1)/k for a ring all-reduce, (k-1)/k for an all-gather
// or a reduce-scatter of n bytes in all (n/k per rank before the gather or after the
// scatter). An all-to-all sends (k-1)/k of each rank's n bytes, k-1 messages.

// RingAllGatherSeconds is the time of a ring all-gather among members devices over link
// l whose result is n bytes on every device (each holds n/members before it):
// (k-1)/k * n / bandwidth + (k-1) * latency. 0 for one member or nothing to gather.
func RingAllGatherSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// RingReduceScatterSeconds is the time of a ring reduce-scatter among members devices
// over link l of n bytes on every device (each ends with its reduced n/members):
// (k-1)/k * n / bandwidth + (k-1) * latency, half of RingAllReduceSeconds. 0 for one
// member or nothing to reduce.
func RingReduceScatterSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// AllToAllSeconds is the time of an all-to-all among members devices over link l in
// which each device holds n bytes and keeps 1/members of them: (k-1)/k * n / bandwidth
// + (k-1) * latency (pairwise exchange, one message to each peer). 0 for one member.
func AllToAllSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// PointToPointSeconds is the time to send n bytes to one peer over link l:
// latency + n / bandwidth. 0 for nothing to send.
func PointToPointSeconds(l Link, n float64) float64 {
	if n <= 0 {
		return 0
	}
	t := l.LatencySeconds
	if l.BytesPerSecond > 0 {
		t += n / l.BytesPerSecond
	}
	return t
}

// CollectiveCTAs is the number of thread blocks (CTAs) an NCCL ring collective runs on,
// each holding one streaming multiprocessor for the collective's whole duration: an NCCL
// channel is one CTA, and "NCCL CTAs won't share an SM with compute kernels" (NVIDIA's
// NCCL maintainers, NVIDIA/nccl#689, as quoted in NVIDIA/nccl#1656). Nsight Systems
// showed ncclAllGather launching 24 blocks on an H100 of 132 SMs beside a GEMM, an
// all-gather issued as PyTorch FSDP prefetches (NVIDIA Developer Forums, "Compute-
// Communication Overlap Causes Severe GEMM Performance Degradation because of Tail
// Effect"). The H100's figure is taken for every NVIDIA GPU; not fitted to any
// run it is tested on. It is taken for every ring collective a data-parallel group
// overlaps with compute (the all-reduce of PyTorch DDP's buckets and of Megatron-LM's
// --overlap-grad-reduce, the reduce-scatter and all-gather of ZeRO-1 and 2 and of
// --overlap-param-gather, ZeRO-3's per-layer gathers): NCCL runs all of a
// communicator's collectives on the channels it sets up, one CTA each, their number
// bounded by NCCL_MIN_CTAS and NCCL_MAX_CTAS (NCCL_MIN_NCHANNELS and
// NCCL_MAX_NCHANNELS before NCCL 2.17; at most 32 by default, NCCL's environment
// variables documentation), all of them for messages of a gradient bucket's size,
// whichever the collective.
const CollectiveCTAs = 24

// CollectiveSMShare is the fraction of a device of sms streaming multiprocessors that an
// NCCL ring collective holds while it runs (CollectiveCTAs of them, at most all); 0 where
// the count is unknown (sms 0: devices other than NVIDIA's presets, whose collectives are
// not priced as taking compute units).
func CollectiveSMShare(sms int) float64 {
	if sms <= 0 {
		return 0
	}
	return min(1, float64(CollectiveCTAs)/float64(sms))
}

// OverlappedSeconds is the time of compute seconds of computation run beside a
// collective of comm seconds that holds share of the device's multiprocessors while it
// runs: the computation goes at 1 - share of its speed until the collective ends, then
// at full speed, so the pair takes max(comm, compute + share x comm) (exact when the
// computation's rate is proportional to its multiprocessors). With share 0 it is
// max(comm, compute): a collective hidden behind the computation adds nothing.
func OverlappedSeconds(compute, comm, share float64) float64 {
	if comm <= 0 {
		return compute
	}
	return max(comm, compute+share*comm)
}

// OverlapSlowdownSeconds is, of what a collective of comm seconds adds to compute
// seconds of computation beside it (OverlappedSeconds less compute), the part that is
// the computation slowed: share x the time the two run together, which is the
// collective's whole time when the computation outlasts it, and compute / (1 - share)
// when the collective runs on after the computation ends. The rest, comm - compute /
// (1 - share) when positive, is the collective running alone: communication exposed.
// So a collective hidden behind the computation adds share x comm, all of it slowdown.
// 0 without communication, computation or share; comm when share is 1 (the computation
// waits for the collective).
func OverlapSlowdownSeconds(compute, comm, share float64) float64 {
	if comm <= 0 || compute <= 0 || share <= 0 {
		return 0
	}
	if share >= 1 {
		return comm
	}
	return share * min(comm, compute/(1-share))
}

func halfRing(l Link, n float64, members int) float64 {
	if members <= 1 || n <= 0 {
		return 0
	}
	k := float64(members)
	t := (k - 1) * l.LatencySeconds
	if l.BytesPerSecond > 0 {
		t += (k - 1) / k * n / l.BytesPerSecond
	}
	return t
}

// NCCL's latency model for messages of a few bytes, where it picks the LL protocol
// (NVIDIA/nccl, src/graph/tuning.cc at commit b6475625, the commit
// TestRingLatencyAgainstNCCLTuningModel reads for the Simple protocol). A ring: base
// latency 6.6 µs (baseLat, Ring LL) plus, per step, 0.6 µs over NVLink (hwLat[NVLINK],
// Ring LL) or, for the nodes-1 steps that leave a node, 2.7 µs over the network
// (hwLat[NET], Ring LL); in a ring that crosses nodes every step takes at least the
// network's post overhead, 1 µs on an Intel host (getNetOverhead; 2 µs on AMD, not
// taken). A tree: 6.8 µs (baseLat, Tree LL) plus 2 x ((ranks per node - 1) x 0.6 µs +
// log2(nodes) x 5.0 µs), log2 rounded down (hwLat Tree LL, NVLink and NET; log2i).
const (
	llRingBaseSeconds   = 6.6e-6
	llRingNVLinkSeconds = 0.6e-6
	llRingNetSeconds    = 2.7e-6
	llNetOverSeconds    = 1.0e-6
	llTreeBaseSeconds   = 6.8e-6
	llTreeNVLinkSeconds = 0.6e-6
	llTreeNetSeconds    = 5.0e-6
)

// SmallAllGatherSeconds is the time of a ring all-gather of a few bytes per rank among
// ranks devices on nodes nodes (NVLink inside a node, one network hop between nodes):
// NCCL's LL latency, 6.6 µs + (ranks - nodes) x 0.6 µs (1 µs when the ring crosses
// nodes) + (nodes - 1) x 2.7 µs. 0 for one rank.
func SmallAllGatherSeconds(ranks, nodes int) float64 {
	if ranks <= 1 {
		return 0
	}
	nodes = max(1, min(nodes, ranks))
	intra := llRingNVLinkSeconds
	if nodes > 1 {
		intra = max(intra, llNetOverSeconds)
	}
	return llRingBaseSeconds + float64(ranks-nodes)*intra + float64(nodes-1)*llRingNetSeconds
}

// SmallAllReduceSeconds is the time of a tree all-reduce of a few bytes among ranks
// devices on nodes nodes (a barrier: torch.distributed.barrier all-reduces one
// element): NCCL's LL tree latency, 6.8 µs + 2 x ((ranks/nodes - 1) x 0.6 µs +
// floor(log2(nodes)) x 5.0 µs). 0 for one rank.
func SmallAllReduceSeconds(ranks, nodes int) float64 {
	if ranks <= 1 {
		return 0
	}
	nodes = max(1, min(nodes, ranks))
	depth := 0
	for n := nodes; n > 1; n >>= 1 {
		depth++
	}
	return llTreeBaseSeconds + 2*(float64(ranks/nodes-1)*llTreeNVLinkSeconds+float64(depth)*llTreeNetSeconds)
}

// NVLinkPayloadShare is the fraction of an NVLink's line rate that GPU-to-GPU copies
// over it carry as data: "450GB/s is the line rate. With the protocol overhead (~20%)
// NCCL can get an effective NVLink bandwidth of 370GB/s, which you can observe as
// 'BusBw' when running non-allreduce operations" (NCCL's maintainer Sylvain Jeaugey,
// NVIDIA/nccl-tests#212, 2024-05-06, on 8 H100s; only the all-reduce goes beyond it,
// through NVLink SHARP, which an all-to-all cannot use). DeepEP's README states the
// same ceiling for its own NVLink kernels on the H800, whose NVLink 4 carries 200 GB/s
// a direction: "H800 (~160 GB/s NVLink maximum bandwidth)", 0.8 of it, its intranode
// dispatch and combine at 153 and 158 GB/s of received bytes (deepseek-ai/DeepEP
// README, "Normal kernels with NVLink and RDMA forwarding", EP 8). The overhead is the
// link's (packet headers and flow control on every transfer), so it is taken for every
// NVLink generation and for every dispatcher's kernels; not fitted to any run.
const NVLinkPayloadShare = 370.0 / 450.0

// NCCL's own figure for what one NVLink carries as collective payload, per direction,
// by GPU generation (NVIDIA/nccl, src/graph/topo.h, as NCCL 2.27 (quoted in NVIDIA/nccl#1807)
// and 2.29 have it: SM70_NVLINK_BW 20.0, SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6,
// SM100_NVLINK_BW 40.1 GB/s; ncclTopoNVLinkBw picks it by compute capability and the
// topology joins two GPUs, or a GPU and an NVSwitch, at it times the NVLinks between
// them). NCCL plans its rings, trees and all-to-alls on these figures, not on the
// wire's 25 or 50 GB/s a link, and nccl-tests reach them: 18 x 20.6 = 370.8 GB/s is the
// 370 GB/s of bus bandwidth NCCL's maintainer states for every collective on 8 H100s
// but the NVLink SHARP all-reduce (NVIDIA/nccl-tests#212); 12 x 20.0 = 240 GB/s the A100's,
// where nccl-tests' users measure ~208-230 GB/s of all-reduce bus bandwidth on 8 A100
// SXM4 (nccl-tests#178 208 GB/s; nccl-tests#149 ~200 GB/s on an HPE Apollo 6500; the
// A100 has no NVLink SHARP, so its all-reduce runs on the same rings); 18 x 40.1 =
// 721.8 GB/s the B200's, the maxBw NCCL 2.27 logs on 8 B200s (NVIDIA/nccl#1807).
const (
	ncclNVLinkSM70BytesPerSecond  = 20.0e9 // V100, NVLink 2
	ncclNVLinkSM80BytesPerSecond  = 20.0e9 // A100, NVLink 3
	ncclNVLinkSM90BytesPerSecond  = 20.6e9 // H100, H200, NVLink 4
	ncclNVLinkSM100BytesPerSecond = 40.1e9 // B200, B300, GB200, GB300, NVLink 5
)

// NVLinkCollectiveBytesPerSecond is the bandwidth NCCL's collectives get from links
// NVLinks of NVLink generation gen (2 for the V100, 3 the A100, 4 the H100 and H200, 5
// Blackwell) a GPU has to its peers or to its NVSwitches: links times NCCL's figure a
// link (ncclNVLink*BytesPerSecond, NCCL's src/graph/topo.h). About 0.8 of the line
// rate in every generation (20/25, 20.6/25, 40.1/50), the protocol overhead NCCL's
// maintainer names (NVLinkPayloadShare). 0 for an unknown generation.
//
// The all-reduce is priced on the same rings. NCCL 2.17 and later run it through NVLink
// SHARP by default on NVSwitch systems from the H100 on ("allreduce uses NVLink SHARP by
// default ... a peak busBw of ~480GB/s (algbw ~275GB/s)" on 8 H100s, for large sizes,
// nccl-tests#212), but NeMo's and Megatron-Bridge's performance scripts turn it off
// (PERF_ENV_VARS: "NCCL_NVLS_ENABLE": "0", "Disable NVLink SHARP to save memory"), and
// the A100 has none; for runs that leave NCCL's default on H100 or Blackwell NVSwitch
// (torchtitan, plain PyTorch) an all-reduce inside a node is priced below what it gets.
func NVLinkCollectiveBytesPerSecond(gen, links int) float64 {
	var perLink float64
	switch gen {
	case 2:
		perLink = ncclNVLinkSM70BytesPerSecond
	case 3:
		perLink = ncclNVLinkSM80BytesPerSecond
	case 4:
		perLink = ncclNVLinkSM90BytesPerSecond
	case 5:
		perLink = ncclNVLinkSM100BytesPerSecond
	}
	return float64(links) * perLink
}

// NCCLHop is the kind of hop a ring step makes in NCCL's tuning model (hwLat's first
// index): over NVLink or NVSwitch, over PCI, or over the network.
type NCCLHop int

// The hops of NCCL's tuning model.
const (
	NCCLNVLink NCCLHop = iota
	NCCLPCI
	NCCLNet
)

// NCCLLinkHop is the hop NCCL's tuning model prices for a step over the link preset
// named name: NVLink for the nvlink and nvswitch presets, PCI for pcie, the network for
// InfiniBand, RoCE and Omni-Path under NCCL (ib-, roce-, opa-nccl). ok is false for
// every other link (TPU ICI, Infinity Fabric, NeuronLink, EFA, IPU-Link, Gaudi's RoCE:
// fabrics NCCL's model does not describe), whose rings keep their link's latency.
func NCCLLinkHop(name string) (hop NCCLHop, ok bool) {
	switch {
	case strings.HasPrefix(name, "nvlink"), strings.HasPrefix(name, "nvswitch"):
		return NCCLNVLink, true
	case strings.HasPrefix(name, "pcie"):
		return NCCLPCI, true
	case strings.HasPrefix(name, "ib-"), strings.HasPrefix(name, "roce-"), name == "opa-nccl":
		return NCCLNet, true
	}
	return 0, false
}
