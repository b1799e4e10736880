package cluster

import "math"

// NCCL's tuning model: for a collective of nBytes NCCL prices every enabled algorithm
// and protocol as latency + nBytes / bandwidth and runs the fastest (NVIDIA/nccl at tag
// v2.27.3-1: src/graph/tuning.cc, ncclTopoTuneModel lines 226-381 build the latency and
// bandwidth tables, ncclTopoGetAlgoTime lines 554-571 the time; src/enqueue.cc,
// updateCollCostTable and topoGetAlgoInfo, take the fastest). The model here is that
// table for the all-reduce, reduce-scatter and all-gather with its bandwidth taken
// relative to the Simple ring's: the caller gives the ring's bus bandwidth (the rate the
// planner's ring formulas use, NCCL's nChannels x bwIntra or bwInter of its ring graph)
// and NCCL's own factors give the others' (LL and LL128 fractions, the tree's, PAT's).
// Left out: CollNet (needs a SHARP network plugin); the per-channel caps that need the
// channel count (perChMaxRingLL128Bw, perChMaxTreeBw, perChMaxTreeLL128Bw, lines
// 172-189, tens of GB/s a channel, above the rates here at NCCL's usual 16-32
// channels), the tree pattern's 0.85 (NCCL_TOPO_PATTERN_TREE; the balanced tree of
// NVSwitch nodes with a NIC a GPU pair is taken). The host's CPU (NCCLComm.AMDHost)
// picks getNetOverhead's network post overhead (1 µs on an Intel or Arm host, 2 µs on
// an AMD x86 one) and, across nodes, llMaxBws's row (Intel/Arm 0, AMD 1).

// NCCLFunc is a collective NCCL's model prices.
type NCCLFunc int

// The collectives of NCCL's model priced here.
const (
	NCCLAllReduce NCCLFunc = iota
	NCCLReduceScatter
	NCCLAllGather
)

// NCCLAlgo is one of NCCL's algorithms (src/include/device.h's NCCL_ALGO_*).
type NCCLAlgo int

// NCCL's algorithms, CollNet's left out.
const (
	NCCLRing NCCLAlgo = iota
	NCCLTree
	NCCLNVLS
	NCCLNVLSTree
	NCCLPAT
)

// NCCLProto is one of NCCL's protocols: LL (8-byte stores of 4 bytes of data and a
// flag), LL128 (128-byte lines of 120 bytes of data) and Simple.
type NCCLProto int

// NCCL's protocols.
const (
	NCCLLL NCCLProto = iota
	NCCLLL128
	NCCLSimple
)

// String names the algorithm as NCCL_ALGO spells it.
func (a NCCLAlgo) String() string {
	return [...]string{"Ring", "Tree", "NVLS", "NVLSTree", "PAT"}[a]
}

// String names the protocol as NCCL_PROTO spells it.
func (p NCCLProto) String() string { return [...]string{"LL", "LL128", "Simple"}[p] }

// baseLat and hwLat of tuning.cc at v2.27.3-1 (lines 134-156), in seconds, for the
// Tree and Ring algorithms by protocol (LL, LL128, Simple); NVLS's and NVLS Tree's base
// is 0 and their hardware latencies Simple only.
var (
	ncclBaseLat = [2][3]float64{{6.8e-6, 14.0e-6, 8.4e-6}, {6.6e-6, 14.0e-6, 8.4e-6}}
	// [hop][algorithm: Tree, Ring][protocol]
	ncclHWLat = [3][2][3]float64{
		{{0.6e-6, 1.25e-6, 4.0e-6}, {0.6e-6, 1.9e-6, 3.4e-6}}, // NVLink
		{{1.0e-6, 1.9e-6, 4.0e-6}, {1.0e-6, 2.5e-6, 5.7e-6}},  // PCI
		{{5.0e-6, 8.5e-6, 14e-6}, {2.7e-6, 4.0e-6, 14.0e-6}},  // network
	}
	// NVLS's and NVLS Tree's Simple latencies: 25 µs over NVLink (both), 18 and 14 µs
	// over the network.
	ncclNVLSIntraLat, ncclNVLSNetLat, ncclNVLSTreeNetLat = 25e-6, 18e-6, 14e-6
	// llMaxBws (lines 165-170), bytes per second, by [GPU generation on one node or,
	// across nodes, the host: Intel/Arm 0, AMD 1][nodes: 1, 2, more].
	ncclLLMaxBw = [4][3]float64{
		{39.0e9, 39.0e9, 20.4e9},
		{87.7e9, 22.5e9, 19.0e9},
		{141.0e9, 45.0e9, 35.0e9},
		{2 * 141.0e9, 2 * 45.0e9, 2 * 35.0e9},
	}
	// treeCorrectionFactor (lines 548-552) by protocol and log2(nBytes/64), 64 B to 256 MB.
	ncclTreeCorrection = [3][23]float64{
		{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
		{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
		{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
	}
)

// NCCLComm is a communicator as NCCL's tuning model sees it.
type NCCLComm struct {
	// Ranks and Nodes: the devices and the nodes they span (Ranks/Nodes a node).
	Ranks, Nodes int
	// Intra is the hop between a node's devices: NVLink (NVLink or NVSwitch) or PCI.
	Intra NCCLHop
	// ComputeCapability is the devices' SM version (70, 80, 90, 100), which picks the
	// LL ceiling on one node and enables LL128 (NVLink inside, SM70 and up, line 386).
	ComputeCapability int
	// BusBytesPerSecond is the Simple ring's bus bandwidth (nChannels x the ring
	// graph's bwIntra on up to two nodes, bwInter beyond, lines 266 and 276): the rate
	// the ring's (ranks-1)/ranks x bytes, 2(ranks-1)/ranks for an all-reduce, run at.
	// The tree's graph is taken at the same rate.
	BusBytesPerSecond float64
	// AMDHost: the nodes' CPUs are AMD x86 (NCCL's cpuVendor NCCL_TOPO_CPU_VENDOR_AMD):
	// getNetOverhead's 2 µs a ring step across nodes (1 µs on Intel and Arm hosts), and
	// llMaxBws's AMD row across nodes (ncclTopoTuneModel: index1 = nNodes == 1 ?
	// compCapIndex : cpuVendor == AMD ? 1 : 0). NCCLAMDHost gives a device preset's.
	AMDHost bool
	// NVLSBusBytesPerSecond is NVLink SHARP's bus bandwidth (nChannels x bwIntra of the
	// NVLS graph) where NCCL runs it: NVSwitch of SM90 and later with
	// NCCL_NVLS_ENABLE not 0; 0 for none. Across nodes NVLS Tree runs instead (NVLS
	// itself needs CollNet there, lines 399-407).
	NVLSBusBytesPerSecond float64
}

// NCCLChoice is the algorithm and protocol NCCL's model picks for a collective, its
// latency term as the table holds it (NCCLLatencySeconds: before ncclTopoGetAlgoTime's
// ring plateau, which Seconds includes) and its whole time (seconds).
type NCCLChoice struct {
	Algo                    NCCLAlgo
	Proto                   NCCLProto
	LatencySeconds, Seconds float64
}

// log2i is NCCL's log2i: floor(log2(n)), 0 for n < 2.
func log2i(n int) int {
	d := 0
	for ; n > 1; n >>= 1 {
		d++
	}
	return d
}

// NCCLLatencySeconds is the latency term of NCCL's model (tuning.cc lines 329-378) for
// function f by algorithm a and protocol p on c, before ncclTopoGetAlgoTime's ring
// plateau; ok is false where NCCL does not run that pair (NVLS and NVLS Tree are Simple
// only and all-reduce only here; PAT is Simple, reduce-scatter and all-gather, one GPU
// a node; Tree is all-reduce only):
//
//   - Ring: baseLat + (nsteps - netSteps) x max(hwLat intra, net overhead) + netSteps x
//     hwLat net, nsteps = ranks-1 (2(ranks-1) for the all-reduce) and netSteps = nodes-1
//     (2(nodes-1)), the net overhead 1 µs a step (3 µs for Simple) once it crosses
//     nodes, hwLat net the Tree's where a node holds one GPU (lines 331-332);
//   - Tree: baseLat + 2 x ((ranks/nodes - 1) x hwLat intra + log2i(nodes) x hwLat net);
//   - NVLS: 25 µs (+ 18 µs across nodes); NVLS Tree: 25 µs + 2 log2i(nodes) x 14 µs;
//   - PAT: 8 µs + log2i(nodes) x 14 µs / 3.5 + ranks x 2.8 µs.
func NCCLLatencySeconds(c NCCLComm, f NCCLFunc, a NCCLAlgo, p NCCLProto) (float64, bool) {
	if c.Ranks < 2 {
		return 0, false
	}
	nodes := max(1, min(c.Nodes, c.Ranks))
	ppn := c.Ranks / nodes
	intra := c.Intra
	if intra != NCCLPCI {
		intra = NCCLNVLink
	}
	ar := f == NCCLAllReduce
	switch a {
	case NCCLRing:
		lat := ncclHWLat[intra][1][p]
		net := ncclHWLat[NCCLNet][1][p]
		if c.Ranks == nodes { // NCCL's float ppn == 1: one GPU a node, not 3 on 2
			net = ncclHWLat[NCCLNet][0][p]
		}
		steps, netSteps := c.Ranks-1, nodes-1
		if ar {
			steps, netSteps = 2*steps, 2*netSteps
		}
		if nodes > 1 {
			over := llNetOverSeconds
			if c.AMDHost {
				over = ncclAMDNetOverSeconds
			}
			if p == NCCLSimple {
				over *= 3
			}
			lat = max(lat, over)
		}
		return ncclBaseLat[1][p] + float64(steps-netSteps)*lat + float64(netSteps)*net, true
	case NCCLTree:
		if !ar {
			return 0, false
		}
		net := ncclHWLat[NCCLNet][0][p]
		return ncclBaseLat[0][p] + 2*(float64(ppn-1)*ncclHWLat[intra][0][p]+float64(log2i(nodes))*net), true
	case NCCLNVLS:
		if !ar || p != NCCLSimple || intra != NCCLNVLink {
			return 0, false
		}
		if nodes > 1 {
			return ncclNVLSIntraLat + ncclNVLSNetLat, true
		}
		return ncclNVLSIntraLat, true
	case NCCLNVLSTree:
		if !ar || p != NCCLSimple || intra != NCCLNVLink {
			return 0, false
		}
		return ncclNVLSIntraLat + 2*float64(log2i(nodes))*ncclNVLSTreeNetLat, true
	case NCCLPAT:
		if ar || p != NCCLSimple || c.Ranks != nodes { // ncclPatEnable: nNodes == nRanks
			return 0, false
		}
		return 8e-6 + float64(log2i(nodes))*ncclHWLat[NCCLNet][0][NCCLSimple]/3.5 + float64(c.Ranks)*2.8e-6, true
	}
	return 0, false
}

// NCCLAlgoBytesPerSecond is the algorithm bandwidth NCCL's model gives function f by
// algorithm a and protocol p on c (tuning.cc lines 266-327, and ncclTopoGetAlgoTime's
// tree correction for a message of nBytes, line 562), the rate nBytes (the whole
// buffer: the all-reduce's, or ranks x a rank's share for the reduce-scatter and the
// all-gather, enqueue.cc's ncclFuncMaxSendRecvCount) goes at. From the bus bandwidth B
// (the Simple ring's, c.BusBytesPerSecond):
//
//   - Ring: Simple B, LL128 0.92 B, LL min(llMaxBw, B/2); x ranks/nsteps;
//   - Tree (all-reduce): 0.92 B, then LL128 x 120/128 (7/9 on one node), LL
//     min(x/3.8, llMaxBw); x 1/2, x the tree correction of nBytes;
//   - NVLS: the NVLS bus bandwidth x 5/6; NVLS Tree: min(NVLS, B, or B/2 beyond two
//     nodes) x 5/6;
//   - PAT: 0.75 B (no conversion: nBytes at the bus rate).
//
// 0 where NCCL does not run the pair (NCCLLatencySeconds), LL128 where NCCL leaves it
// off by default (PCI inside a node, SM below 70), NVLS without its bandwidth.
func NCCLAlgoBytesPerSecond(c NCCLComm, f NCCLFunc, a NCCLAlgo, p NCCLProto, nBytes float64) float64 {
	if _, ok := NCCLLatencySeconds(c, f, a, p); !ok || c.BusBytesPerSecond <= 0 {
		return 0
	}
	if p == NCCLLL128 && (c.Intra != NCCLNVLink || c.ComputeCapability < 70) {
		return 0
	}
	nodes := max(1, min(c.Nodes, c.Ranks))
	gen := 0
	switch cc := c.ComputeCapability; {
	case cc >= 100:
		gen = 3
	case cc >= 90:
		gen = 2
	case cc >= 80:
		gen = 1
	}
	if nodes > 1 {
		gen = 0 // across nodes the host's row: Intel or Arm 0, AMD 1
		if c.AMDHost {
			gen = 1
		}
	}
	llMax := ncclLLMaxBw[gen][min(nodes, 3)-1]
	b := c.BusBytesPerSecond
	switch a {
	case NCCLRing:
		switch p {
		case NCCLLL:
			b = min(llMax, b*.5)
		case NCCLLL128:
			b *= 0.92
		}
		steps := float64(c.Ranks - 1)
		if f == NCCLAllReduce {
			steps *= 2
		}
		return b * float64(c.Ranks) / steps
	case NCCLTree:
		b *= .92
		switch p {
		case NCCLLL:
			b = min(b/3.8, llMax)
		case NCCLLL128:
			if nodes == 1 {
				b *= 7.0 / 9.0
			} else {
				b *= 120.0 / 128.0
			}
		}
		b *= .5
		if log := log2i(int(nBytes) >> 6); nBytes >= 64 && log < 23 {
			b *= ncclTreeCorrection[p][log]
		}
		return b
	case NCCLNVLS:
		return c.NVLSBusBytesPerSecond * 5 / 6
	case NCCLNVLSTree:
		if c.NVLSBusBytesPerSecond <= 0 {
			return 0
		}
		inter := b
		if nodes > 2 {
			inter /= 2
		}
		return min(c.NVLSBusBytesPerSecond, inter) * 5 / 6
	case NCCLPAT:
		return .75 * b
	}
	return 0
}

// NCCLAlgoSeconds is NCCL's time for function f of nBytes by algorithm a and protocol p
// (ncclTopoGetAlgoTime, one operation): latency + nBytes / bandwidth, the Simple ring's
// all-reduce latency x 1.4 across nodes once nBytes/(channels x ranks) >= 64 B (its
// "plateau effect", line 565; the channels taken at NCCL's 32, MAXCHANNELS), x 1.9 on
// devices below SM80 ("lat *= comm->minCompCap < 80 ? 1.9 : 1.4"; an unknown
// ComputeCapability, 0, is taken as SM80 or later), and ok false where the pair does
// not run.
func NCCLAlgoSeconds(c NCCLComm, f NCCLFunc, a NCCLAlgo, p NCCLProto, nBytes float64) (seconds float64, ok bool) {
	lat, ok := NCCLLatencySeconds(c, f, a, p)
	if !ok {
		return 0, false
	}
	bw := NCCLAlgoBytesPerSecond(c, f, a, p, nBytes)
	if bw <= 0 {
		return 0, false
	}
	if a == NCCLRing && p == NCCLSimple && f == NCCLAllReduce && c.Nodes > 1 && nBytes/float64(32*c.Ranks) >= 64 {
		if c.ComputeCapability > 0 && c.ComputeCapability < 80 {
			lat *= 1.9
		} else {
			lat *= 1.4
		}
	}
	return lat + max(0, nBytes)/bw, true
}

// NCCLTune is the algorithm and protocol NCCL's model runs function f of nBytes with on
// c, the fastest of those it enables (topoGetAlgoInfo: the least time, ties to the first
// in NCCL's order, algorithm then protocol), its latency term and its time. For one
// rank or no bytes, nothing.
func NCCLTune(c NCCLComm, f NCCLFunc, nBytes float64) NCCLChoice {
	best := NCCLChoice{Algo: NCCLRing, Proto: NCCLSimple}
	if c.Ranks < 2 || nBytes <= 0 {
		return best
	}
	best.Seconds = math.Inf(1)
	// NCCL's order: Tree, Ring, CollNet Direct, CollNet Chain, NVLS, NVLS Tree, PAT.
	for _, a := range []NCCLAlgo{NCCLTree, NCCLRing, NCCLNVLS, NCCLNVLSTree, NCCLPAT} {
		if a == NCCLNVLS && c.Nodes > 1 || a == NCCLNVLSTree && c.Nodes < 2 {
			continue
		}
		for _, p := range []NCCLProto{NCCLLL, NCCLLL128, NCCLSimple} {
			t, ok := NCCLAlgoSeconds(c, f, a, p, nBytes)
			if ok && t < best.Seconds {
				lat, _ := NCCLLatencySeconds(c, f, a, p)
				best = NCCLChoice{Algo: a, Proto: p, LatencySeconds: lat, Seconds: t}
			}
		}
	}
	if math.IsInf(best.Seconds, 1) {
		return NCCLChoice{Algo: NCCLRing, Proto: NCCLSimple}
	}
	return best
}

// NCCLCompCapOfLink is the SM version of the devices an NVLink or NVSwitch preset
// joins (nvlink2/nvswitch1 Volta 70, nvlink3/nvswitch2 Ampere 80, nvlink4/nvswitch3
// Hopper 90, nvlink5/nvswitch4 Blackwell 100), 0 for any other link.
func NCCLCompCapOfLink(name string) int {
	switch name {
	case "nvlink2", "nvswitch1":
		return 70
	case "nvlink3", "nvswitch2":
		return 80
	case "nvlink4", "nvswitch3":
		return 90
	case "nvlink5", "nvswitch4":
		return 100
	}
	return 0
}

// ncclAMDNetOverSeconds is getNetOverhead's network post overhead on an AMD x86 host
// (tuning.cc at v2.27.3-1: 2.0 µs where cpuVendor is NCCL_TOPO_CPU_VENDOR_AMD, 1.0 on
// Intel and other hosts, llNetOverSeconds).
const ncclAMDNetOverSeconds = 2.0e-6

// NCCLAMDHost reports whether a device preset's usual node has AMD x86 CPUs, which
// NCCL's tuning model prices apart (NCCLComm.AMDHost): the A100s' (NVIDIA's DGX A100
// datasheet: two AMD EPYC 7742, the nodes of Selene, where Megatron-LM's A100 runs were
// measured). An A100 node with Intel CPUs (AWS's p4d) is priced as an AMD one: no
// request field names the host. DGX H100, H200, B200 and B300 nodes
// have Intel Xeon CPUs (their datasheets) and GB200 and GB300 Grace (Arm): NCCL's Intel
// constants, as for any other preset.
func NCCLAMDHost(device string) bool {
	switch device {
	case "a100-40gb", "a100-80gb":
		return true
	}
	return false
}
