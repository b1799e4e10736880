package cluster

import (
	"fmt"
	"math"

	"pipeplan/core/model"
)

// Topology is a cluster of identical nodes: DevicesPerNode devices in each node, joined to
// each other by Intra (NVLink, NVSwitch, Infinity Fabric), and nodes joined by Inter (an
// InfiniBand or RoCE network). Inter is one device's own network interface: the nodes are
// taken to be rail-optimised with one NIC per device, as DGX A100 and DGX H100 are (8
// ConnectX NICs for 8 GPUs), so transfers of different devices do not share bandwidth,
// and a ring with k members in each node it crosses runs on k NICs at once (RingInter).
//
// A topology is where a run with pipeline, data and tensor parallelism is placed (Place):
// which link each stage-to-stage transfer and each data-parallel all-reduce crosses.
type Topology struct {
	Nodes          int  `json:"nodes"`
	DevicesPerNode int  `json:"devices_per_node"`
	Intra          Link `json:"intra"`
	Inter          Link `json:"inter"`
	// IntraMeshBytesPerSecond is set where Intra is a full mesh (LinkPreset's
	// MeshBytesPerSecond): what a collective's rings get from one of its links, so that
	// a collective of k devices in a node runs on k-1 of them (IntraRing); 0 for a
	// switched fabric.
	IntraMeshBytesPerSecond float64 `json:"intra_mesh_bytes_per_second,omitempty"`
	// NICPCIeBytesPerSecond is the PCIe link between a device and its NIC as NCCL prices
	// it (NCCLPCIeBytesPerSecond; the device preset's NICPCIeBytesPerSecond), 0 when
	// unknown: a ring channel across nodes runs at the narrower of it and Inter
	// (RingInter).
	NICPCIeBytesPerSecond float64 `json:"nic_pcie_bytes_per_second,omitempty"`
}

// NCCLPCIeBytesPerSecond is the bandwidth NCCL gives a PCIe link of lanes lanes at
// gtPerSecond GT/s a lane: src/graph/topo.cc (NVIDIA/nccl v2.25.1-1 and v2.28.3-1)
// reads the link's speed into kvDictPciGen's figure in units of 100 Mb/s a lane (15,
// 30, 60, 120, 240, 480 for 2.5, 5, 8, 16, 32, 64 GT/s: 7.5 x GT/s) and connects the
// nodes at width x speed / 80.0 GB/s. PCIe Gen4 x16 is 24 GB/s, Gen5 x16 48, Gen6 x16
// 96.
func NCCLPCIeBytesPerSecond(gtPerSecond float64, lanes int) float64 {
	return float64(lanes) * gtPerSecond * 7.5 / 80 * 1e9
}

// pcieGen4x16NCCL and pcieGen5x16NCCL are NCCL's rates of the x16 links (16 GT/s and
// 32 GT/s) between an HGX board's GPUs and its NICs: 24 and 48 GB/s; pcieGen6x16NCCL
// (64 GT/s) is the GB300 compute tray's link between a Blackwell Ultra GPU and its
// ConnectX-8: 96 GB/s.
var (
	pcieGen4x16NCCL = NCCLPCIeBytesPerSecond(16, 16)
	pcieGen5x16NCCL = NCCLPCIeBytesPerSecond(32, 16)
	pcieGen6x16NCCL = NCCLPCIeBytesPerSecond(64, 16)
)

// IntraRing is the link a collective among k devices of one node runs on. On a switched
// fabric (NVSwitch) it is Intra: every device reaches the switch on all its links,
// whatever the group. On a full mesh (IntraMeshBytesPerSecond, AMD Infinity Fabric: a
// link to every other device of the node) a ring of k members runs its channels over
// the k-1 links each member has to the others, as RCCL lays its rings over a GPU's
// links (cluster's rcclXGMILinkBytesPerSecond: totalBw is the sum of a GPU's links):
// (k-1) x IntraMeshBytesPerSecond. Intra, one pair's link, stays what a transfer between
// two devices (a pipeline stage's send) runs on. A group of whole nodes (a tensor x
// context group, or a context group alone, over several) has at most DevicesPerNode of
// its members in a node, and so at most DevicesPerNode-1 links a member.
func (tp Topology) IntraRing(k int) Link {
	if tp.DevicesPerNode > 0 {
		k = min(k, tp.DevicesPerNode)
	}
	return MeshRing(tp.Intra, tp.IntraMeshBytesPerSecond, k)
}

// MeshRing is the link a collective among k devices runs on where l joins them: l
// itself, or on a full mesh whose links give mesh bytes per second each to a
// collective's rings (LinkPreset.MeshBytesPerSecond), l's latency at k-1 links' rate
// (Topology.IntraRing). l for one device or no mesh.
func MeshRing(l Link, mesh float64, k int) Link {
	if mesh > 0 && k > 1 {
		l.BytesPerSecond = float64(k-1) * mesh
	}
	return l
}

// Devices is the number of devices in the topology.
func (t Topology) Devices() int { return t.Nodes * t.DevicesPerNode }

// MaxTopologyDevices bounds Nodes * DevicesPerNode.
const MaxTopologyDevices = 1 << 20

// Validate checks the topology; errors name the field. Links are latency-bandwidth links
// (a topology has no device clock to count Graphcore-style idle cycles in).
func (t Topology) Validate() error {
	var es model.Errors
	if t.Nodes < 1 {
		es.Add("nodes", "must be >= 1, got %d", t.Nodes)
	}
	if t.DevicesPerNode < 1 {
		es.Add("devices_per_node", "must be >= 1, got %d", t.DevicesPerNode)
	}
	if len(es) == 0 && int64(t.Nodes)*int64(t.DevicesPerNode) > MaxTopologyDevices {
		es.Add("nodes", "nodes x devices_per_node must be at most %d, got %d x %d", MaxTopologyDevices, t.Nodes, t.DevicesPerNode)
	}
	for _, l := range []struct {
		name string
		l    Link
	}{{"intra", t.Intra}, {"inter", t.Inter}} {
		l.l.validate(&es, l.name)
		if l.l.CyclesStyle() {
			es.Add(l.name, "must be given as latency_seconds and bytes_per_second")
		}
	}
	if m := t.IntraMeshBytesPerSecond; !(m >= 0) || math.IsInf(m, 0) {
		es.Add("intra_mesh_bytes_per_second", "must be a finite number >= 0, got %g", m)
	}
	if m := t.NICPCIeBytesPerSecond; !(m >= 0) || math.IsInf(m, 0) {
		es.Add("nic_pcie_bytes_per_second", "must be a finite number >= 0, got %g", m)
	}
	return es.Err()
}

// Order is how ranks are numbered over the three kinds of parallelism: the kind named
// first varies fastest, so its groups are made of neighbouring devices. Tensor
// parallelism is always innermost: its all-reduces, four per transformer block and
// microbatch, are on the critical path and stay inside a node.
type Order string

// The placements.
const (
	// TDP numbers tensor, then data, then pipeline (Megatron-LM's default order, pipeline
	// outermost): data-parallel rings are as local as they can be, and stage boundaries
	// cross nodes first.
	TDP Order = "tdp"
	// TPD numbers tensor, then pipeline, then data: a pipeline stays in a node as long as
	// it can, and data-parallel rings cross nodes first.
	TPD Order = "tpd"
)

// Orders lists the placements Choose compares, preferred first on equal cost.
var Orders = []Order{TDP, TPD}

// Placement is where a run of Pipeline stages x Data replicas x Tensor-parallel groups
// sits on a topology, and the link each kind of communication crosses.
type Placement struct {
	Order    Order `json:"order"`
	Pipeline int   `json:"pipeline"`
	Data     int   `json:"data"`
	Tensor   int   `json:"tensor"`
	// Context is the context-parallel degree c, whose groups sit in a node beside the
	// tensor-parallel group (placed as one group of Tensor x Context devices); 0 for none.
	Context int `json:"context,omitempty"`
	// Nodes is the number of nodes the run occupies (ranks fill nodes in order).
	Nodes int `json:"nodes"`
	// StageLinks[i] is the link between stage i and i+1 (Pipeline-1 entries): the
	// device's path to the network (NICLink) when the transfer crosses nodes in any
	// replica, Intra otherwise. StageCrossesNodes says which.
	StageLinks        []Link `json:"stage_links"`
	StageCrossesNodes []bool `json:"stage_crosses_nodes"`
	// DataLink is the slowest link a data-parallel ring crosses (zero for one replica):
	// across nodes, the network at as many NICs as the ring has members in a node
	// (DataMembersPerNode); DataCrossesNodes says whether some ring crosses nodes.
	DataLink         Link `json:"data_link"`
	DataCrossesNodes bool `json:"data_crosses_nodes"`
	// DataMembersPerNode is, when a data-parallel ring crosses nodes, the fewest of its
	// members in one node (over every ring): DataLink is Inter at that many NICs
	// (Topology.RingInter).
	DataMembersPerNode int `json:"-"`
	// TensorLink is the link of the tensor-parallel all-reduces (Intra; zero for t = 1).
	TensorLink Link `json:"tensor_link"`
}

// rank is the global rank of tensor rank 0 of (replica dp, stage pp).
func rank(o Order, p, d, t, dp, pp int) int {
	if o == TPD {
		return t * (pp + p*dp)
	}
	return t * (dp + d*pp)
}

// Place lays p stages x d replicas x t-way tensor-parallel groups on the topology in the
// given order. Every tensor-parallel group stays inside one node, so t must divide the
// devices per node, or (a stage's group of tensor x context devices, whose context
// groups span nodes) be whole nodes; p*d*t must not exceed the devices. Errors name the
// parallel degree.
func (tp Topology) Place(p, d, t int, o Order) (*Placement, error) {
	if err := tp.Validate(); err != nil {
		return nil, err
	}
	var es model.Errors
	for _, f := range []struct {
		name string
		v    int
	}{{"pipeline", p}, {"data", d}, {"tensor", t}} {
		if f.v < 1 {
			es.Add(f.name, "must be >= 1, got %d", f.v)
		}
	}
	if o != TDP && o != TPD {
		es.Add("order", "must be %s or %s, got %q", TDP, TPD, o)
	}
	if err := es.Err(); err != nil {
		return nil, err
	}
	K := tp.DevicesPerNode
	if K%t != 0 && t%K != 0 {
		return nil, &model.FieldError{Path: "tensor", Reason: fmt.Sprintf("must divide the %d devices per node, or be whole nodes (a tensor-parallel group stays inside a node), got %d", K, t)}
	}
	if n := int64(p) * int64(d) * int64(t); n > int64(tp.Devices()) {
		return nil, &model.FieldError{Path: "pipeline", Reason: fmt.Sprintf("%d stages x %d replicas x %d-way tensor parallelism need %d devices, more than the %d of %d nodes x %d", p, d, t, n, tp.Devices(), tp.Nodes, K)}
	}
	pl := &Placement{Order: o, Pipeline: p, Data: d, Tensor: t, Nodes: (p*d*t + K - 1) / K,
		StageLinks: make([]Link, max(0, p-1)), StageCrossesNodes: make([]bool, max(0, p-1))}
	node := func(r int) int { return r / K }
	for i := 0; i+1 < p; i++ {
		for dp := range d {
			if node(rank(o, p, d, t, dp, i)) != node(rank(o, p, d, t, dp, i+1)) {
				pl.StageCrossesNodes[i] = true
				break
			}
		}
		pl.StageLinks[i] = tp.Intra
		if pl.StageCrossesNodes[i] {
			pl.StageLinks[i] = tp.NICLink()
		}
	}
	if d > 1 {
		// A ring's members have increasing ranks: it stays in a node when its first and
		// last member do.
		for pp := range p {
			if node(rank(o, p, d, t, 0, pp)) != node(rank(o, p, d, t, d-1, pp)) {
				pl.DataCrossesNodes = true
				break
			}
		}
		pl.DataLink = tp.IntraRing(d)
		if pl.DataCrossesNodes {
			pl.DataMembersPerNode = minMembersPerNode(node, d, func(dp, pp int) int { return rank(o, p, d, t, dp, pp) }, p)
			pl.DataLink = tp.RingInter(pl.DataMembersPerNode)
		}
	}
	if t > 1 {
		pl.TensorLink = tp.IntraRing(t)
	}
	return pl, nil
}

// minMembersPerNode is the fewest members that a data-parallel ring (one per stage: its
// d replicas' ranks given by rank) has in any one node it touches, over all the rings.
func minMembersPerNode(node func(int) int, d int, rank func(dp, pp int) int, p int) int {
	least := d
	for pp := range p {
		count := map[int]int{}
		for dp := range d {
			count[node(rank(dp, pp))]++
		}
		for _, n := range count {
			least = min(least, n)
		}
	}
	return least
}

// RingInter is the link of a data-parallel ring that crosses nodes with at least k of
// its members in each node it touches. NCCL lays a ring's channels on different NICs
// (one ring per channel, each entering and leaving a node once, on the NIC nearest the
// devices it passes: "NCCL tests: performance" measures the bus bandwidth of such
// rings), so with one NIC per device (rail-optimised nodes) the k members of a node
// drive k NICs at once and the ring's bus bandwidth is k times one NIC's, up to the
// link inside the node: a DGX A100's eight 200 Gb/s HDR NICs carry a multi-node
// all-reduce at about 185 GB/s of bus bandwidth, not 25 (NVIDIA's DGX SuperPOD
// reference architecture and nccl-tests' published runs). Latency is one message's, as
// before.
//
// Each NIC's channel runs at the narrower of the NIC and the PCIe link that reaches it
// (NICPCIeBytesPerSecond, where known): NCCL's ring search (src/graph/search.cc,
// v2.28.3-1: getMaxBw from the GPU to the NET nodes is the path's bw, the narrowest
// link on it; topo.cc prices a 400 Gb/s NIC at 400,000 / 8,000 = 50 GB/s and the PCIe
// Gen5 x16 link to it at 48) sets each channel's bwInter to 48 GB/s, and tuning.cc's
// Simple ring busBw is nChannels x bwInter: 8 x 48 = 384 GB/s on eight 400 Gb/s NICs of
// an HGX B200 or H100 board, not 8 x 50; a DGX A100's eight HDR NICs at min(24, 25).
func (tp Topology) RingInter(k int) Link {
	l := tp.NICLink()
	if k > 1 && l.BytesPerSecond > 0 {
		l.BytesPerSecond = min(float64(k)*l.BytesPerSecond, max(tp.IntraRing(k).BytesPerSecond, l.BytesPerSecond))
	}
	return l
}

// NICLink is one device's path to the network: Inter at the narrower of the NIC and the
// PCIe link that reaches it (NICPCIeBytesPerSecond, where known). NCCL prices that path
// at its narrowest link (src/graph/paths.cc at v2.28.3-1: a path's bw is the minimum of
// its links' bw; topo.cc: PCIe Gen5 x16 48 GB/s under a 400 Gb/s NIC's 50), and every
// transfer across nodes takes it: a ring's channel (search.cc's getMaxBw, RingInter) and
// a send or receive alike, whose net transport (transport/net.cc, ncclTopoGetNetDev
// without a graph) takes the GPU's local NIC from ncclTopoGetLocalNet (topo.cc), the NIC
// of the best path from the GPU, over the same PCIe link. A pipeline stage's send to a
// stage on another node (Place's StageLinks) runs on it.
func (tp Topology) NICLink() Link {
	l := tp.Inter
	if nic := tp.NICPCIeBytesPerSecond; nic > 0 && l.BytesPerSecond > nic {
		l.BytesPerSecond = nic
	}
	return l
}

// Traffic is what a run communicates per training step, per device: the bytes of
// gradients each device all-reduces with its data-parallel peers, and the bytes each
// stage sends to the next (activations forward; the same bytes come back as gradients).
type Traffic struct {
	GradientBytes float64
	StageBytes    float64
}

// Cost is a placement's communication time per step for the traffic: the data-parallel
// ring all-reduce over DataLink plus the slowest stage boundary's transfers. Transfers of
// different devices run at once (one NIC per device), so the boundaries do not add up.
func (pl *Placement) Cost(tr Traffic) float64 {
	c := RingAllReduceSeconds(pl.DataLink, tr.GradientBytes, pl.Data)
	var stage float64
	for _, l := range pl.StageLinks {
		if tr.StageBytes > 0 {
			stage = max(stage, l.Seconds(int64(tr.StageBytes), 0))
		}
	}
	return c + stage
}

// Choose places the run in each of Orders and returns the placement of least Cost for the
// traffic; on equal cost the first in Orders (TDP, Megatron-LM's order). With pipeline
// and data parallelism both spanning nodes, it decides which of the two gets the fast
// links: usually the data-parallel all-reduce (gradients of a whole stage, every step)
// outweighs the stage transfers (one activation per microbatch), and TDP wins; a small
// model with long sequences and many microbatches may go the other way.
func (tp Topology) Choose(p, d, t int, tr Traffic) (*Placement, error) {
	return tp.ChooseAmong(Orders, p, d, t, tr)
}

// ExpertOrders lists the placements of a run with expert parallelism: TDP alone.
// Megatron-Core numbers a mixture's ranks tp-cp-ep-dp-pp (parallel_state.py's
// initialize_model_parallel default and megatron/training/initialize.py at core_v0.15.0;
// Megatron-Bridge's src/megatron/bridge/training/initialize.py, v0.2.2 to v0.6.0): the
// expert group is the data-parallel ranks next to the tensor group and the pipeline is
// outermost, which is TDP, the order the expert all-to-alls are priced in (a node holds
// devices_per_node / expert_tensor of the group's members). Its one other order,
// use_tp_pp_dp_mapping, is set by Megatron-Bridge's performance scripts for LoRA
// fine-tuning alone (scripts/performance/utils/overrides.py, v0.4.2 to v0.6.0). TPD
// would put a replica's stages in a node and spread each expert group over nodes.
var ExpertOrders = []Order{TDP}

// ChooseAmong is Choose over the given orders, the first preferred on equal cost.
func (tp Topology) ChooseAmong(orders []Order, p, d, t int, tr Traffic) (*Placement, error) {
	var best *Placement
	var bestCost float64
	for _, o := range orders {
		pl, err := tp.Place(p, d, t, o)
		if err != nil {
			return nil, err
		}
		if c := pl.Cost(tr); best == nil || c < bestCost {
			best, bestCost = pl, c
		}
	}
	return best, nil
}

// StageCluster returns the cluster the pipeline of one replica runs on: Pipeline copies of
// the device (one per stage; a stage's tensor-parallel group counts as one device)
// joined by StageLinks; no host link.
func (pl *Placement) StageCluster(dev Device) *Cluster {
	c := &Cluster{Devices: make([]Device, pl.Pipeline)}
	for i := range c.Devices {
		c.Devices[i] = dev
	}
	if len(pl.StageLinks) > 0 {
		c.Links = append([]Link(nil), pl.StageLinks...)
		if allSame(c.Links) {
			c.Links = c.Links[:1]
		}
	}
	return c
}

func allSame(ls []Link) bool {
	for _, l := range ls[1:] {
		if l != ls[0] {
			return false
		}
	}
	return true
}

// RingAllReduceSeconds is the time of a ring all-reduce of n bytes among members devices
// over link l: 2(k-1)/k * n / bandwidth + 2(k-1) * latency (Patarasuk and Yuan 2009; the
// alpha-beta form of Colossal-AUTO). 0 for one member or nothing to reduce.
func RingAllReduceSeconds(l Link, n float64, members int) float64 {
	if members <= 1 || n <= 0 {
		return 0
	}
	k := float64(members)
	t := 2 * (k - 1) * l.LatencySeconds
	if l.BytesPerSecond > 0 {
		t += 2 * (k - 1) / k * n / l.BytesPerSecond
	}
	return t
}

// PresetTopology returns nodes x perNode devices joined inside a node by the link preset
// intra and across nodes by the link preset inter (LookupLink).
func PresetTopology(nodes, perNode int, intra, inter string) (Topology, error) {
	li, err := LookupLink(intra)
	if err != nil {
		return Topology{}, &model.FieldError{Path: "intra", Reason: err.Error()}
	}
	le, err := LookupLink(inter)
	if err != nil {
		return Topology{}, &model.FieldError{Path: "inter", Reason: err.Error()}
	}
	t := Topology{Nodes: nodes, DevicesPerNode: perNode, Intra: li.Link, Inter: le.Link, IntraMeshBytesPerSecond: li.MeshBytesPerSecond}
	return t, t.Validate()
}

// HierarchicalAllToAllSeconds is the time of an all-to-all among members devices in which each
// sends n bytes in all, an equal share to every member (its own share stays): the
// members sit perNode to a node (0 or more than members: all in one node), the shares
// for peers in the node cross intra and the rest inter, at once (NVLink and the network
// interface are separate paths), each peer costing one latency on its link (a pairwise
// exchange: Thakur, Rabenseifner and Gropp 2005). So (p-1)/m of n crosses intra and
// (m-p)/m of n crosses inter, for m members and p per node; the time is the slower of
// the two. 0 for one member or nothing to send.
func HierarchicalAllToAllSeconds(intra, inter Link, n float64, members, perNode int) float64 {
	if members <= 1 || n <= 0 {
		return 0
	}
	if perNode <= 0 || perNode > members {
		perNode = members
	}
	m, p := float64(members), float64(perNode)
	side := func(l Link, peers float64) float64 {
		if peers <= 0 {
			return 0
		}
		t := peers * l.LatencySeconds
		if l.BytesPerSecond > 0 {
			t += peers / m * n / l.BytesPerSecond
		}
		return t
	}
	return max(side(intra, p-1), side(inter, m-p))
}
