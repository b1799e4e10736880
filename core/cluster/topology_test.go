package cluster

import (
	"math"
	"strings"
	"testing"
)

func h100Nodes(t *testing.T, nodes int) Topology {
	t.Helper()
	tp, err := PresetTopology(nodes, 8, "nvswitch3", "ib-ndr")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestPlace checks which links stage boundaries and data-parallel rings cross, against
// rank maps worked out by hand, on 4 nodes of 8 devices.
func TestPlace(t *testing.T) {
	tp := h100Nodes(t, 4)
	tests := []struct {
		p, d, tt int
		o        Order
		stages   string // per boundary: i (intra) or x (crosses nodes)
		data     string // "", i or x
		nodes    int
	}{
		// Megatron order: ranks t + t*(dp + d*pp).
		{4, 8, 1, TDP, "xxx", "i", 4},     // a node per stage, rings inside nodes
		{4, 2, 4, TDP, "xxx", "i", 4},     // t*d = 8: one stage per node
		{8, 2, 2, TDP, "ixixixi", "i", 4}, // t*d = 4: two stages per node
		{2, 16, 1, TDP, "x", "x", 4},      // rings of 16 span two nodes
		{4, 1, 8, TDP, "xxx", "", 4},
		{8, 1, 1, TDP, "iiiiiii", "", 1},
		{1, 32, 1, TDP, "", "x", 4},
		{1, 8, 1, TDP, "", "i", 1},
		// Pipeline before data: ranks t*(pp + p*dp).
		{4, 8, 1, TPD, "iii", "x", 4},
		{2, 16, 1, TPD, "i", "x", 4},
		{16, 2, 1, TPD, "iiiiiiixiiiiiii", "x", 4},
		// Ranks 2*(pp + 4*dp): replica 0 on ranks 0..7 (node 0), replica 1 on 8..15
		// (node 1); a ring pairs rank 2pp with 8+2pp, across nodes.
		{4, 2, 2, TPD, "iii", "x", 2},
	}
	for _, tt := range tests {
		pl, err := tp.Place(tt.p, tt.d, tt.tt, tt.o)
		if err != nil {
			t.Fatalf("%d x %d x %d %s: %v", tt.p, tt.d, tt.tt, tt.o, err)
		}
		var stages strings.Builder
		for i, x := range pl.StageCrossesNodes {
			c, want := "i", tp.Intra
			if x {
				c, want = "x", tp.Inter
			}
			stages.WriteString(c)
			if pl.StageLinks[i] != want {
				t.Errorf("%+v: stage link %d = %+v, want %+v", tt, i, pl.StageLinks[i], want)
			}
		}
		data := ""
		switch {
		case tt.d > 1 && pl.DataCrossesNodes:
			data = "x"
		case tt.d > 1:
			data = "i"
		}
		if stages.String() != tt.stages || data != tt.data || pl.Nodes != tt.nodes {
			t.Errorf("p=%d d=%d t=%d %s: stages %q data %q nodes %d, want %q %q %d",
				tt.p, tt.d, tt.tt, tt.o, stages.String(), data, pl.Nodes, tt.stages, tt.data, tt.nodes)
		}
		if (tt.tt > 1) != (pl.TensorLink == tp.Intra) {
			t.Errorf("%+v: tensor link %+v", tt, pl.TensorLink)
		}
	}
}

func TestPlaceErrors(t *testing.T) {
	tp := h100Nodes(t, 2)
	for _, tt := range []struct {
		p, d, t int
		o       Order
		want    string
	}{
		{1, 1, 3, TDP, "tensor: must divide the 8 devices per node"},
		{1, 1, 12, TDP, "tensor: must divide the 8 devices per node, or be whole nodes"},
		{4, 2, 4, TDP, "pipeline: 4 stages x 2 replicas x 4-way tensor parallelism need 32 devices, more than the 16"},
		{0, 1, 1, TDP, "pipeline: must be >= 1"},
		{1, 1, 1, "dpt", "order: must be tdp or tpd"},
	} {
		_, err := tp.Place(tt.p, tt.d, tt.t, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Place(%d, %d, %d, %s) = %v, want %q", tt.p, tt.d, tt.t, tt.o, err, tt.want)
		}
	}
	// A stage's group of tensor x context devices may fill whole nodes.
	if pl, err := tp.Place(1, 1, 16, TDP); err != nil || pl.Nodes != 2 {
		t.Errorf("Place(1, 1, 16, tdp) = %+v, %v: want 2 whole nodes", pl, err)
	}
	if _, err := PresetTopology(2, 8, "nvlink9", "ib-ndr"); err == nil || !strings.HasPrefix(err.Error(), "intra: unknown link") {
		t.Errorf("unknown intra link: %v", err)
	}
	if _, err := PresetTopology(0, 8, "nvlink4", "ib-ndr"); err == nil || !strings.HasPrefix(err.Error(), "nodes: must be >= 1") {
		t.Errorf("no nodes: %v", err)
	}
}

// TestChoose: with gradients far heavier than activations the data-parallel rings get
// the node's fast links (Megatron's order); with the opposite traffic the pipeline does.
func TestChoose(t *testing.T) {
	tp := h100Nodes(t, 2)
	pl, err := tp.Choose(2, 8, 1, Traffic{GradientBytes: 8e9, StageBytes: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Order != TDP || pl.DataCrossesNodes || !pl.StageCrossesNodes[0] {
		t.Errorf("heavy gradients: %+v, want TDP with rings in nodes", pl)
	}
	pl, _ = tp.Choose(2, 8, 1, Traffic{GradientBytes: 1e8, StageBytes: 8e9})
	if pl.Order != TPD || !pl.DataCrossesNodes || pl.StageCrossesNodes[0] {
		t.Errorf("heavy activations: %+v, want TPD with stages in nodes", pl)
	}
	// Equal placements: the first order wins.
	pl, _ = tp.Choose(1, 1, 8, Traffic{GradientBytes: 1, StageBytes: 1})
	if pl.Order != TDP {
		t.Errorf("one group: order %s, want tdp", pl.Order)
	}
}

// TestChooseExpertOrders: a run with expert parallelism is placed in Megatron-Core's
// tp-cp-ep-dp-pp order (ExpertOrders), whatever the traffic. The heavy-activation
// traffic that puts a replica's 8 stages in one node (TPD, stage transfers on NVLink,
// the data-parallel rings one member a node, one NIC) is placed TDP among ExpertOrders:
// each node holds 8 consecutive data-parallel ranks of one stage (the expert group),
// every stage boundary crosses the network, and the rings have 8 members a node, at 8
// NICs (RingInter: 8 x 50 GB/s on ib-ndr, capped at the node's 370.8 GB/s).
func TestChooseExpertOrders(t *testing.T) {
	tp := h100Nodes(t, 32)
	heavy := Traffic{GradientBytes: 1e8, StageBytes: 8e11}
	pl, err := tp.ChooseAmong(Orders, 8, 32, 1, heavy)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Order != TPD || pl.StageCrossesNodes[0] || pl.DataLink != tp.RingInter(1) {
		t.Errorf("dense run: %s, stage crosses %v, data link %+v: want tpd, stages in a node, one NIC", pl.Order, pl.StageCrossesNodes[0], pl.DataLink)
	}
	pl, err = tp.ChooseAmong(ExpertOrders, 8, 32, 1, heavy)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Order != TDP || len(pl.StageLinks) != 7 {
		t.Fatalf("expert run: %+v, want tdp with 7 stage links", pl)
	}
	for i, l := range pl.StageLinks {
		if !pl.StageCrossesNodes[i] || l != tp.Inter {
			t.Errorf("expert run: boundary %d crosses nodes %v over %+v, want the network %+v", i, pl.StageCrossesNodes[i], l, tp.Inter)
		}
	}
	if want := (Link{LatencySeconds: tp.Inter.LatencySeconds, BytesPerSecond: min(8*tp.Inter.BytesPerSecond, tp.Intra.BytesPerSecond)}); pl.DataLink != want || pl.DataMembersPerNode != 8 {
		t.Errorf("expert run: data link %+v, %d members a node, want %+v and 8", pl.DataLink, pl.DataMembersPerNode, want)
	}
	if len(ExpertOrders) != 1 || ExpertOrders[0] != TDP {
		t.Errorf("ExpertOrders %v, want [tdp]", ExpertOrders)
	}
}

func TestRingAllReduce(t *testing.T) {
	l := Link{LatencySeconds: 1e-5, BytesPerSecond: 1e10}
	// 2(k-1)/k * n / B + 2(k-1) alpha.
	if got, want := RingAllReduceSeconds(l, 1e9, 4), 1.5*1e9/1e10+6e-5; math.Abs(got-want) > 1e-15 {
		t.Errorf("ring of 4: %v, want %v", got, want)
	}
	if RingAllReduceSeconds(l, 1e9, 1) != 0 || RingAllReduceSeconds(l, 0, 8) != 0 {
		t.Error("one member or no bytes: want 0")
	}
}

func TestPlacementPipeline(t *testing.T) {
	tp := h100Nodes(t, 4)
	d, _ := LookupDevice("h100-sxm")
	pl, _ := tp.Place(8, 2, 2, TDP)
	c := pl.StageCluster(d.Device)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Devices) != 8 || len(c.Links) != 7 || c.Links[0] != tp.Intra || c.Links[1] != tp.Inter {
		t.Errorf("cluster %+v", c)
	}
	pl, _ = tp.Place(4, 8, 1, TDP)
	if c := pl.StageCluster(d.Device); len(c.Links) != 1 || c.Links[0] != tp.Inter {
		t.Errorf("all boundaries across nodes: links %+v, want one inter link", c.Links)
	}
	pl, _ = tp.Place(1, 8, 1, TDP)
	if c := pl.StageCluster(d.Device); len(c.Devices) != 1 || len(c.Links) != 0 || c.Validate() != nil {
		t.Errorf("one stage: %+v", c)
	}
}

// TestRingInter checks the data-parallel ring's link across nodes against rank maps
// worked out by hand: the fewest members a ring has in one node, times one NIC's
// bandwidth (NCCL lays the ring's channels on that many NICs), at most NVLink's.
func TestRingInter(t *testing.T) {
	h100 := h100Nodes(t, 4)
	a100, err := PresetTopology(4, 8, "nvswitch2", "ib-hdr")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tp       Topology
		p, d, tt int
		o        Order
		members  int     // fewest members of a ring in one node
		bps      float64 // the ring's bandwidth
	}{
		{h100, 1, 32, 1, TDP, 8, 370.8e9}, // 8 NICs of 50 GB/s per node, at most NCCL's NVLink
		{h100, 2, 16, 1, TDP, 8, 370.8e9}, // each stage's ring: 8 + 8
		{h100, 1, 16, 2, TDP, 4, 200e9},   // t = 2: 4 members a node
		{h100, 1, 4, 8, TDP, 1, 50e9},     // t = 8: one member a node, one NIC
		{h100, 1, 12, 2, TDP, 4, 200e9},   // ranks 0..23: 4, 4 and 4 in nodes 0, 1, 2
		{h100, 1, 6, 4, TDP, 2, 100e9},    // ranks 0..23 at stride 4: 2 a node
		{h100, 4, 8, 1, TPD, 2, 100e9},    // ranks pp + 4dp: 2 of each ring a node
		{a100, 1, 32, 1, TDP, 8, 200e9},   // DGX A100: 8 HDR NICs, under NCCL's NVLink 240
		{h100, 1, 10, 1, TDP, 2, 100e9},   // ranks 0..9: 8 in node 0, 2 in node 1
		{a100, 16, 2, 1, TPD, 1, 25e9},    // rings of two, a node apart
		{h100, 1, 20, 1, TDP, 4, 200e9},   // 8, 8 and 4
	}
	for _, tt := range tests {
		pl, err := tt.tp.Place(tt.p, tt.d, tt.tt, tt.o)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if !pl.DataCrossesNodes || pl.DataMembersPerNode != tt.members || pl.DataLink.BytesPerSecond != tt.bps {
			t.Errorf("p=%d d=%d t=%d %s: crosses %v, %d members a node at %g B/s, want %d at %g",
				tt.p, tt.d, tt.tt, tt.o, pl.DataCrossesNodes, pl.DataMembersPerNode, pl.DataLink.BytesPerSecond, tt.members, tt.bps)
		}
		if pl.DataLink.LatencySeconds != tt.tp.Inter.LatencySeconds {
			t.Errorf("%+v: latency %g, want one message's %g", tt, pl.DataLink.LatencySeconds, tt.tp.Inter.LatencySeconds)
		}
	}
	// Inside a node nothing changes.
	if pl, _ := h100.Place(1, 8, 1, TDP); pl.DataCrossesNodes || pl.DataLink != h100.Intra {
		t.Errorf("a ring inside a node: %+v", pl.DataLink)
	}
}

// TestIntraRingMesh: on a full mesh (AMD Infinity Fabric, xgmi and xgmi4) a collective
// of k devices of a node runs on the k-1 links each has to the others, at RCCL's 48 GB/s
// a link (rcclXGMILinkBytesPerSecond, rccl topo.h's GFX94X/GFX95X_XGMI_WIDTH), while a
// transfer between two devices (a stage's send) keeps the one link's rate; on a switched
// fabric (NVSwitch) every group gets the link's rate. Closed forms: eight MI355Xs' data
// ring 7 x 48 = 336 GB/s, a tensor group of 2 48 GB/s, PP 2 x DP 4 rings of 4 at 144
// GB/s beside stage links of 76.8; across nodes with 8 members a node the ring's NICs
// (8 x 50 GB/s) capped at the mesh's 336, not the one link's 76.8.
func TestIntraRingMesh(t *testing.T) {
	mi355x, err := PresetTopology(2, 8, "xgmi4", "roce-400g")
	if err != nil {
		t.Fatal(err)
	}
	if mi355x.IntraMeshBytesPerSecond != 48e9 || mi355x.Intra.BytesPerSecond != 76.8e9 {
		t.Fatalf("xgmi4 topology: mesh %g, intra %g", mi355x.IntraMeshBytesPerSecond, mi355x.Intra.BytesPerSecond)
	}
	for _, c := range []struct {
		k    int
		want float64
	}{{8, 336e9}, {4, 144e9}, {2, 48e9}, {1, 76.8e9}} {
		if got := mi355x.IntraRing(c.k); got.BytesPerSecond != c.want || got.LatencySeconds != mi355x.Intra.LatencySeconds {
			t.Errorf("xgmi4, %d devices: %+v, want %g B/s", c.k, got, c.want)
		}
	}
	pl, err := mi355x.Place(1, 8, 1, TDP)
	if err != nil || pl.DataCrossesNodes || pl.DataLink.BytesPerSecond != 336e9 {
		t.Errorf("DP 8 in a node of MI355Xs: %+v, %v; want 336 GB/s", pl, err)
	}
	pl, err = mi355x.Place(2, 4, 1, TDP)
	if err != nil || pl.DataLink.BytesPerSecond != 144e9 || pl.StageLinks[0].BytesPerSecond != 76.8e9 {
		t.Errorf("PP 2 x DP 4: data %g, stage %g; want 144e9 and 76.8e9 (%v)", pl.DataLink.BytesPerSecond, pl.StageLinks[0].BytesPerSecond, err)
	}
	pl, err = mi355x.Place(1, 4, 2, TDP)
	if err != nil || pl.TensorLink.BytesPerSecond != 48e9 {
		t.Errorf("TP 2: tensor link %g, want 48e9 (%v)", pl.TensorLink.BytesPerSecond, err)
	}
	pl, err = mi355x.Place(1, 16, 1, TDP)
	if err != nil || !pl.DataCrossesNodes || pl.DataLink.BytesPerSecond != 336e9 {
		t.Errorf("DP 16 over two nodes: %g B/s, want the mesh's 336e9 (%v)", pl.DataLink.BytesPerSecond, err)
	}
	// A group of whole nodes (tensor x context 16 over two) has eight members a node:
	// its ring's in-node rate is a node's seven links, not fifteen.
	if got := mi355x.IntraRing(16).BytesPerSecond; got != 336e9 {
		t.Errorf("xgmi4, 16 devices over two nodes: %g, want a node's 336e9", got)
	}
	pl, err = mi355x.Place(1, 1, 16, TDP)
	if err != nil || pl.TensorLink.BytesPerSecond != 336e9 {
		t.Errorf("a group of 16 over two nodes: tensor link %g, want 336e9 (%v)", pl.TensorLink.BytesPerSecond, err)
	}
	mi300x, _ := PresetTopology(1, 8, "xgmi", "roce-400g")
	if got := mi300x.IntraRing(8).BytesPerSecond; got != 336e9 {
		t.Errorf("xgmi, 8 devices: %g, want 336e9", got)
	}
	h100 := h100Nodes(t, 1)
	if got := h100.IntraRing(2); got != h100.Intra {
		t.Errorf("NVSwitch, 2 devices: %+v, want Intra %+v", got, h100.Intra)
	}
}

// TestTopologyValidateMesh: a full mesh's rate a link is a finite number >= 0, named by
// its field.
func TestTopologyValidateMesh(t *testing.T) {
	tp := h100Nodes(t, 1)
	for _, m := range []float64{-1, math.NaN(), math.Inf(1)} {
		tp.IntraMeshBytesPerSecond = m
		if err := tp.Validate(); err == nil || !strings.Contains(err.Error(), "intra_mesh_bytes_per_second") {
			t.Errorf("mesh %g: %v, want an error naming intra_mesh_bytes_per_second", m, err)
		}
	}
	tp.IntraMeshBytesPerSecond = 48e9
	if err := tp.Validate(); err != nil {
		t.Errorf("mesh 48e9: %v", err)
	}
	for _, m := range []float64{-1, math.NaN(), math.Inf(1)} {
		tp.NICPCIeBytesPerSecond = m
		if err := tp.Validate(); err == nil || !strings.Contains(err.Error(), "nic_pcie_bytes_per_second") {
			t.Errorf("NIC PCIe %g: %v, want an error naming nic_pcie_bytes_per_second", m, err)
		}
	}
}

// TestRingInterNICPCIe checks each ring channel across nodes at the narrower of the NIC
// and NCCL's PCIe rate to it, in closed form: NCCL's topo.cc prices PCIe at width x
// speed / 80 (speed 120 and 240 a lane for Gen4 and Gen5), so an HGX H100 or B200
// board's eight 400 Gb/s NICs carry 8 x min(48, 50) = 384 GB/s of bus bandwidth (capped
// at NCCL's NVLink rate, 370.8 on H100), a DGX A100's eight HDR NICs 8 x min(24, 25) =
// 192, one member a node one channel's 48 or 24; an 800 Gb/s NIC at Gen6 x16 96.
func TestRingInterNICPCIe(t *testing.T) {
	for _, tt := range []struct {
		gt    float64
		lanes int
		want  float64
	}{{16, 16, 24e9}, {32, 16, 48e9}, {64, 16, 96e9}, {32, 8, 24e9}} {
		if got := NCCLPCIeBytesPerSecond(tt.gt, tt.lanes); math.Abs(got-tt.want) > 1 {
			t.Errorf("NCCLPCIeBytesPerSecond(%g, %d) = %g, want %g", tt.gt, tt.lanes, got, tt.want)
		}
	}
	topo := func(device, intra, inter string) Topology {
		t.Helper()
		tp, err := PresetTopology(2, 8, intra, inter)
		if err != nil {
			t.Fatal(err)
		}
		d, err := LookupDevice(device)
		if err != nil {
			t.Fatal(err)
		}
		tp.NICPCIeBytesPerSecond = d.NICPCIeBytesPerSecond
		return tp
	}
	b200 := topo("b200", "nvlink5", "ib-ndr")
	h100 := topo("h100-sxm", "nvswitch3", "ib-ndr")
	a100 := topo("a100-80gb", "nvswitch2", "ib-hdr")
	b200XDR := topo("b200", "nvlink5", "ib-xdr") // a faster NIC than the PCIe link
	unknown := b200
	unknown.NICPCIeBytesPerSecond = 0
	for _, tt := range []struct {
		name string
		tp   Topology
		k    int
		want float64
	}{
		{"B200 8 NICs", b200, 8, 8 * 48e9},
		{"B200 1 NIC", b200, 1, 48e9},
		{"B200 4 NICs", b200, 4, 4 * 48e9},
		{"H100 8 NICs, NVLink's 370.8 below 384", h100, 8, 370.8e9},
		{"H100 2 NICs", h100, 2, 2 * 48e9},
		{"A100 8 HDR NICs", a100, 8, 8 * 24e9},
		{"A100 1 HDR NIC", a100, 1, 24e9},
		{"B200 8 XDR NICs on Gen5", b200XDR, 8, 8 * 48e9},
		{"no PCIe rate known", unknown, 8, 8 * 50e9},
	} {
		if got := tt.tp.RingInter(tt.k).BytesPerSecond; math.Abs(got-tt.want) > 1 {
			t.Errorf("%s: RingInter(%d) = %g B/s, want %g", tt.name, tt.k, got, tt.want)
		}
	}
}

// TestStageLinkNICPCIe checks a pipeline stage's send across nodes at the device's path
// to the network (NICLink), in closed form: NCCL's send over the net transport takes the
// GPU's local NIC through the same PCIe link as a ring's channel, so on an HGX B200 or
// H100 board with 400 Gb/s NICs it runs at min(48, 50) = 48 GB/s, on a DGX A100's HDR
// NIC at min(24, 25) = 24, a NIC faster than its Gen5 link at 48, a GB300's 800 Gb/s
// ConnectX-8 on its Gen6 x16 link at min(96, 100) = 96, with no PCIe rate known at the
// NIC's 50; the latency is the NIC's, and a boundary inside a node keeps NVLink.
func TestStageLinkNICPCIe(t *testing.T) {
	for _, tt := range []struct {
		device, intra, inter string
		want                 float64
	}{
		{"b200", "nvlink5", "ib-ndr", 48e9},
		{"h100-sxm", "nvswitch3", "ib-ndr", 48e9},
		{"a100-80gb", "nvswitch2", "ib-hdr", 24e9},
		{"b200", "nvlink5", "ib-xdr", 48e9},
		{"gb300", "nvswitch4", "ib-xdr", 96e9},
		{"", "nvlink5", "ib-ndr", 50e9},
	} {
		tp, err := PresetTopology(2, 8, tt.intra, tt.inter)
		if err != nil {
			t.Fatal(err)
		}
		if tt.device != "" {
			d, err := LookupDevice(tt.device)
			if err != nil {
				t.Fatal(err)
			}
			tp.NICPCIeBytesPerSecond = d.NICPCIeBytesPerSecond
		}
		if got := tp.NICLink(); math.Abs(got.BytesPerSecond-tt.want) > 1 || got.LatencySeconds != tp.Inter.LatencySeconds {
			t.Errorf("%s on %s: NICLink = %+v, want %g B/s at %g s", tt.device, tt.inter, got, tt.want, tp.Inter.LatencySeconds)
		}
		// Four stages of four devices on two nodes of 8: the boundary between stages 1
		// and 2 crosses nodes, the others stay in a node.
		pl, err := tp.Place(4, 1, 4, TDP)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range pl.StageLinks {
			want := tp.Intra
			if i == 1 {
				want = Link{LatencySeconds: tp.Inter.LatencySeconds, BytesPerSecond: tt.want}
			}
			if pl.StageCrossesNodes[i] != (i == 1) || math.Abs(l.BytesPerSecond-want.BytesPerSecond) > 1 || l.LatencySeconds != want.LatencySeconds {
				t.Errorf("%s on %s: stage link %d = %+v (crosses %v), want %+v", tt.device, tt.inter, i, l, pl.StageCrossesNodes[i], want)
			}
		}
	}
}
