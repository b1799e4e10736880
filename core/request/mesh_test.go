package request

import (
	"testing"

	"pipeplan/core/cluster"
)

// TestMeshDataRing: a request on eight MI355Xs in a node (cluster.devices_per_node 8, the
// preset's xgmi4) places its data-parallel ring on the mesh's seven links at RCCL's 48
// GB/s a link (cluster.Topology.IntraRing), 336 GB/s, where a stage's send keeps the one
// link's 76.8 GB/s (so too without nodes, on the device's cluster.link, and with
// context parallelism the ring of replicas and context groups); its reduce-scatter is the ring formula at that rate (RCCL's links
// are outside NCCL's tuning model, cluster.NCCLLinkHop). The same
// request on H100s keeps NVSwitch's rate for both.
func TestMeshDataRing(t *testing.T) {
	r := llamaRequest(2, 4, 1)
	r.Cluster.Device, r.Cluster.DevicesPerNode = "mi355x", 8
	r.Parallelism.Sharding = "zero1"
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.topo.IntraMeshBytesPerSecond != 48e9 {
		t.Fatalf("xgmi4's mesh rate %g, want RCCL's 48e9", p.topo.IntraMeshBytesPerSecond)
	}
	if d, s := p.placement.DataLink.BytesPerSecond, p.placement.StageLinks[0].BytesPerSecond; d != 3*48e9 || s != 76.8e9 {
		t.Errorf("PP 2 x DP 4 on MI355Xs: data ring %g B/s, stage link %g; want 3 x 48e9 and 76.8e9", d, s)
	}
	res := run(t, r)
	ds := res.Devices[0]
	mesh := cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 3 * 48e9}
	if want := cluster.RingReduceScatterSeconds(mesh, float64(ds.GradBytes), 4); !near(ds.ReduceScatterSeconds, want) {
		t.Errorf("reduce-scatter %v s, want %v", ds.ReduceScatterSeconds, want)
	}
	// Without nodes the device's cluster.link joins all eight: the same rings.
	r.Cluster.DevicesPerNode = 0
	if p, err = prepare(r); err != nil {
		t.Fatal(err)
	}
	if link, n, _, _, _ := p.shardLinks(); n != 4 || link.BytesPerSecond != 3*48e9 || p.cluster.Links[0].BytesPerSecond != 76.8e9 {
		t.Errorf("cluster.link xgmi4: ring of %d at %g B/s, stage link %g; want 4 at 3 x 48e9 and 76.8e9", n, link.BytesPerSecond, p.cluster.Links[0].BytesPerSecond)
	}
	// With context parallelism the reduction's ring holds the replicas' context groups:
	// DP 4 x CP 2, eight members, seven links.
	cp := llamaRequest(1, 4, 1)
	cp.Cluster.Device, cp.Cluster.DevicesPerNode = "mi355x", 8
	cp.Parallelism.Sharding, cp.Parallelism.Context = "zero1", 2
	if p, err = prepare(cp); err != nil {
		t.Fatal(err)
	}
	if link, n, _, _, _ := p.shardLinks(); n != 8 || link.BytesPerSecond != 7*48e9 {
		t.Errorf("DP 4 x CP 2: ring of %d at %g B/s, want 8 at 7 x 48e9", n, link.BytesPerSecond)
	}
	// One replica's context group over two nodes (CP 16): eight members a node, so a
	// node's seven links, not fifteen.
	cp16 := llamaRequest(1, 1, 1)
	cp16.Cluster.Device, cp16.Cluster.DevicesPerNode = "mi355x", 8
	cp16.Parallelism.Sharding, cp16.Parallelism.Context = "zero1", 16
	if p, err = prepare(cp16); err != nil {
		t.Fatal(err)
	}
	if link, n, _, _, _ := p.shardLinks(); n != 16 || link.BytesPerSecond != 7*48e9 {
		t.Errorf("CP 16 over two nodes: ring of %d at %g B/s, want 16 at a node's 7 x 48e9", n, link.BytesPerSecond)
	}
	r.Cluster.DevicesPerNode = 8
	r.Cluster.Device = "h100-sxm"
	if p, err = prepare(r); err != nil {
		t.Fatal(err)
	}
	if d, s := p.placement.DataLink, p.placement.StageLinks[0]; d != p.topo.Intra || s != p.topo.Intra {
		t.Errorf("H100s: data %+v, stage %+v; want NVSwitch's %+v for both", d, s, p.topo.Intra)
	}
}

// TestMeshExpertAndContextLinks: on a full mesh the expert-data-parallel ring runs on its
// own members' links less one (expertShardLink), not the data-parallel ring's, and the
// expert and context exchanges keep one link whatever the tensor degree, with nodes
// (link_intra) or without (cluster.link), where tensorLink's t-1 links would have tied
// them to it. Mixtral 8x7B with DP 8 and EP 4 on eight MI355Xs: data ring 7 x 48 GB/s,
// two-member expert rings 48 GB/s; at TP 2 the tensor ring is 48 GB/s, at TP 4 144,
// the expert and context links 76.8 at both.
func TestMeshExpertAndContextLinks(t *testing.T) {
	r := moeRequest(1, 8, 1, 4)
	r.Cluster.Device = "mi355x"
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	link, n, _, _, _ := p.shardLinks()
	en := p.est.Opts.ExpertDataParallel()
	if n != 8 || en != 2 || link.BytesPerSecond != 7*48e9 {
		t.Fatalf("DP 8 EP 4: data ring of %d at %g B/s, expert ring of %d; want 8 at 7 x 48e9, 2", n, link.BytesPerSecond, en)
	}
	if got := p.expertShardLink(link, en).BytesPerSecond; got != 48e9 {
		t.Errorf("DP 8 EP 4: expert ring of 2 at %g B/s, want one link's 48e9", got)
	}
	for _, perNode := range []int{8, 0} {
		for _, tc := range []struct {
			tensor int
			ring   float64
		}{{2, 48e9}, {4, 144e9}} {
			r := moeRequest(1, 8/tc.tensor, tc.tensor, 2)
			r.Cluster.Device, r.Cluster.DevicesPerNode = "mi355x", perNode
			r.Parallelism.Context = 1
			p, err := prepare(r)
			if err != nil {
				t.Fatal(err)
			}
			if p.target.TensorLink.BytesPerSecond != tc.ring || p.target.ExpertLink.BytesPerSecond != 76.8e9 {
				t.Errorf("%d a node, TP %d: tensor %g, expert %g B/s; want %g and one link's 76.8e9", perNode, tc.tensor, p.target.TensorLink.BytesPerSecond, p.target.ExpertLink.BytesPerSecond, tc.ring)
			}
			c := llamaRequest(1, 1, tc.tensor)
			c.Cluster.Device, c.Cluster.DevicesPerNode = "mi355x", perNode
			c.Parallelism.Context = 8 / tc.tensor
			if p, err = prepare(c); err != nil {
				t.Fatal(err)
			}
			if got := p.target.ContextLink.BytesPerSecond; got != 76.8e9 {
				t.Errorf("%d a node, TP %d CP %d: context link %g B/s, want one link's 76.8e9", perNode, tc.tensor, 8/tc.tensor, got)
			}
			// The placement reports the tensor link priced, the t group's ring.
			if perNode > 0 && p.placement.TensorLink.BytesPerSecond != tc.ring {
				t.Errorf("TP %d CP %d: placement's tensor link %g B/s, want %g", tc.tensor, 8/tc.tensor, p.placement.TensorLink.BytesPerSecond, tc.ring)
			}
		}
	}
}

// TestMeshBeyondPlatform: sixteen MI355Xs without nodes on cluster.link xgmi4 (planned as
// one fabric, with the beyond-scale-up warning) have a mesh of eight at most: the data
// ring of 16 gets a platform's seven links, not fifteen (meshMembers).
func TestMeshBeyondPlatform(t *testing.T) {
	r := llamaRequest(1, 16, 1)
	r.Cluster.Device = "mi355x"
	r.Parallelism.Sharding = "zero1"
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if link, n, _, _, _ := p.shardLinks(); n != 16 || link.BytesPerSecond != 7*48e9 {
		t.Errorf("DP 16 on one xgmi4 fabric: ring of %d at %g B/s, want 16 at 7 x 48e9", n, link.BytesPerSecond)
	}
}
