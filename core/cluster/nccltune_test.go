package cluster

import (
	"fmt"
	"math"
	"testing"
)

// TestNCCLLatencySeconds checks the latency table of NCCL's tuning model (tuning.cc at
// v2.27.3-1, lines 329-378) in closed form, in µs.
func TestNCCLLatencySeconds(t *testing.T) {
	nv := func(ranks, nodes int) NCCLComm { return NCCLComm{Ranks: ranks, Nodes: nodes, Intra: NCCLNVLink} }
	for _, tt := range []struct {
		name   string
		c      NCCLComm
		f      NCCLFunc
		a      NCCLAlgo
		p      NCCLProto
		wantUs float64
		ok     bool
	}{
		{"one rank", nv(1, 1), NCCLAllReduce, NCCLRing, NCCLSimple, 0, false},
		// One node of 8 on NVSwitch: 7 steps (14 for the all-reduce) at hwLat NVLink.
		{"8 GPUs, all-gather, Ring Simple", nv(8, 1), NCCLAllGather, NCCLRing, NCCLSimple, 8.4 + 7*3.4, true},
		{"8 GPUs, all-reduce, Ring Simple", nv(8, 1), NCCLAllReduce, NCCLRing, NCCLSimple, 8.4 + 14*3.4, true},
		{"8 GPUs, all-reduce, Ring LL", nv(8, 1), NCCLAllReduce, NCCLRing, NCCLLL, 6.6 + 14*0.6, true},
		{"8 GPUs over PCI, reduce-scatter, Ring LL128", NCCLComm{Ranks: 8, Nodes: 1, Intra: NCCLPCI}, NCCLReduceScatter, NCCLRing, NCCLLL128, 14 + 7*2.5, true},
		// 8 nodes of 8: 63 steps, 7 across the network; inside a node each step takes at
		// least the 1 µs post overhead (3 µs for Simple).
		{"64 GPUs, reduce-scatter, Ring Simple", nv(64, 8), NCCLReduceScatter, NCCLRing, NCCLSimple, 8.4 + 56*3.4 + 7*14, true},
		{"64 GPUs, reduce-scatter, Ring LL128", nv(64, 8), NCCLReduceScatter, NCCLRing, NCCLLL128, 14 + 56*1.9 + 7*4.0, true},
		{"64 GPUs, reduce-scatter, Ring LL", nv(64, 8), NCCLReduceScatter, NCCLRing, NCCLLL, 6.6 + 56*1.0 + 7*2.7, true},
		{"64 GPUs, all-reduce, Ring Simple", nv(64, 8), NCCLAllReduce, NCCLRing, NCCLSimple, 8.4 + 112*3.4 + 14*14, true},
		// A tree's latency grows with log2 of the nodes: 2 x (7 NVLink hops + 3 network).
		{"64 GPUs, all-reduce, Tree LL", nv(64, 8), NCCLAllReduce, NCCLTree, NCCLLL, 6.8 + 2*(7*0.6+3*5.0), true},
		{"64 GPUs, all-reduce, Tree Simple", nv(64, 8), NCCLAllReduce, NCCLTree, NCCLSimple, 8.4 + 2*(7*4.0+3*14), true},
		{"64 GPUs, reduce-scatter, Tree", nv(64, 8), NCCLReduceScatter, NCCLTree, NCCLSimple, 0, false},
		// One GPU a node: every step crosses the network at the Tree's network latency.
		{"32 nodes of one, reduce-scatter, Ring Simple", nv(32, 32), NCCLReduceScatter, NCCLRing, NCCLSimple, 8.4 + 31*14, true},
		{"32 nodes of one, reduce-scatter, Ring LL128", nv(32, 32), NCCLReduceScatter, NCCLRing, NCCLLL128, 14 + 31*8.5, true},
		{"32 nodes of one, all-reduce, Ring LL", nv(32, 32), NCCLAllReduce, NCCLRing, NCCLLL, 6.6 + 62*5.0, true},
		// PAT: 8 + log2(32) x 14/3.5 + 32 x 2.8, one GPU a node only.
		{"32 nodes of one, all-gather, PAT", nv(32, 32), NCCLAllGather, NCCLPAT, NCCLSimple, 8 + 5*4 + 32*2.8, true},
		{"64 GPUs, all-gather, PAT", nv(64, 8), NCCLAllGather, NCCLPAT, NCCLSimple, 0, false},
		// 3 GPUs on 2 nodes: NCCL's ppn is 1.5 (a float), so neither PAT (nNodes ==
		// nRanks only) nor the Tree's network latency of one GPU a node: 1 step inside at
		// the 1 µs overhead, 1 across at the Ring's 2.7.
		{"3 GPUs on 2 nodes, all-gather, PAT", nv(3, 2), NCCLAllGather, NCCLPAT, NCCLSimple, 0, false},
		{"3 GPUs on 2 nodes, all-gather, Ring LL", nv(3, 2), NCCLAllGather, NCCLRing, NCCLLL, 6.6 + 1*1.0 + 1*2.7, true},
		{"32 nodes of one, all-reduce, PAT", nv(32, 32), NCCLAllReduce, NCCLPAT, NCCLSimple, 0, false},
		{"8 GPUs, all-reduce, NVLS", nv(8, 1), NCCLAllReduce, NCCLNVLS, NCCLSimple, 25, true},
		{"8 GPUs, all-reduce, NVLS LL", nv(8, 1), NCCLAllReduce, NCCLNVLS, NCCLLL, 0, false},
		{"4 nodes of 8, all-reduce, NVLS Tree", nv(32, 4), NCCLAllReduce, NCCLNVLSTree, NCCLSimple, 25 + 2*2*14, true},
	} {
		got, ok := NCCLLatencySeconds(tt.c, tt.f, tt.a, tt.p)
		if ok != tt.ok || math.Abs(got-tt.wantUs*1e-6) > 1e-12 {
			t.Errorf("%s: %.2f µs %v, want %.2f %v", tt.name, got*1e6, ok, tt.wantUs, tt.ok)
		}
	}
}

// TestNCCLAlgoBytesPerSecond checks the bandwidth table relative to the Simple ring's
// bus bandwidth B (tuning.cc lines 266-327): LL128 0.92 B, LL min(llMaxBw, B/2), the
// tree's 0.92 B halved and corrected by size, PAT's 0.75 B unconverted.
func TestNCCLAlgoBytesPerSecond(t *testing.T) {
	const b = 100e9
	c := NCCLComm{Ranks: 64, Nodes: 8, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: b}
	one := NCCLComm{Ranks: 16, Nodes: 16, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: b}
	node := NCCLComm{Ranks: 8, Nodes: 1, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: b, NVLSBusBytesPerSecond: 480e9}
	for _, tt := range []struct {
		name  string
		c     NCCLComm
		f     NCCLFunc
		a     NCCLAlgo
		p     NCCLProto
		bytes float64
		want  float64
	}{
		{"ring simple reduce-scatter", c, NCCLReduceScatter, NCCLRing, NCCLSimple, 1 << 30, b * 64 / 63},
		{"ring simple all-reduce", c, NCCLAllReduce, NCCLRing, NCCLSimple, 1 << 30, b * 64 / 126},
		{"ring LL128 all-gather", c, NCCLAllGather, NCCLRing, NCCLLL128, 1 << 30, 0.92 * b * 64 / 63},
		// Across more than two nodes of an Intel or Arm host, LL's ceiling is 20.4 GB/s.
		{"ring LL reduce-scatter", c, NCCLReduceScatter, NCCLRing, NCCLLL, 1 << 30, 20.4e9 * 64 / 63},
		// On one Hopper node: min(141, 50) GB/s.
		{"ring LL one node", node, NCCLAllReduce, NCCLRing, NCCLLL, 1 << 30, 0.5 * b * 8 / 14},
		// 256 MiB: log2(2^28 / 64) = 22, the Simple correction 0.9.
		{"tree simple all-reduce 256 MiB", c, NCCLAllReduce, NCCLTree, NCCLSimple, 1 << 28, 0.92 * b * 0.5 * 0.9},
		// 1 MiB: log2(2^20 / 64) = 14, the LL128 correction 0.6; x 120/128 across nodes.
		{"tree LL128 all-reduce 1 MiB", c, NCCLAllReduce, NCCLTree, NCCLLL128, 1 << 20, 0.92 * b * 120 / 128 * 0.5 * 0.6},
		{"PAT all-gather", one, NCCLAllGather, NCCLPAT, NCCLSimple, 1 << 30, 0.75 * b},
		{"NVLS all-reduce", node, NCCLAllReduce, NCCLNVLS, NCCLSimple, 1 << 30, 480e9 * 5 / 6},
		{"NVLS off", c, NCCLAllReduce, NCCLNVLSTree, NCCLSimple, 1 << 30, 0},
		{"LL128 over PCI", NCCLComm{Ranks: 8, Nodes: 1, Intra: NCCLPCI, ComputeCapability: 80, BusBytesPerSecond: b}, NCCLAllReduce, NCCLRing, NCCLLL128, 1 << 30, 0},
		{"tree reduce-scatter", c, NCCLReduceScatter, NCCLTree, NCCLSimple, 1 << 30, 0},
	} {
		if got := NCCLAlgoBytesPerSecond(tt.c, tt.f, tt.a, tt.p, tt.bytes); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("%s: %.4g B/s, want %.4g", tt.name, got, tt.want)
		}
	}
}

// TestNCCLTune checks the choice NCCL's model makes, and its time in closed form:
// LL for a few bytes, LL128 for medium messages across nodes, the Simple ring for a
// whole model's gradients, a tree for small all-reduces across many nodes, PAT for
// medium all-gathers on one GPU a node.
func TestNCCLTune(t *testing.T) {
	const b = 100e9
	c := NCCLComm{Ranks: 64, Nodes: 8, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: b}
	node := NCCLComm{Ranks: 8, Nodes: 1, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: 370.8e9}
	rail := NCCLComm{Ranks: 16, Nodes: 16, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: 50e9}
	v100 := c
	v100.ComputeCapability = 70
	for _, tt := range []struct {
		name   string
		c      NCCLComm
		f      NCCLFunc
		bytes  float64
		algo   NCCLAlgo
		proto  NCCLProto
		wantUs float64
	}{
		// 8 bytes on 8 GPUs: Ring LL's 6.6 + 14 x 0.6 = 15.0 µs beats Tree LL's 15.2; LL
		// at Hopper's one-node ceiling of 141 GB/s (below half the ring's 370.8).
		{"8 B all-reduce, one node", node, NCCLAllReduce, 8, NCCLRing, NCCLLL, 15.0 + 8/(141e9*8/14)*1e6},
		// 8 bytes on 8 nodes: Tree LL 45.2 µs against Ring LL 6.6 + 112 + 14 x 2.7 = 156.4.
		{"8 B all-reduce, 8 nodes", c, NCCLAllReduce, 8, NCCLTree, NCCLLL, 45.2 + 8/(min(0.92*b/3.8, 20.4e9)*0.5)*1e6},
		// 80 MB reduce-scatter on 8 nodes: LL128's 148.4 µs + 80e6/(0.92 x 100e9 x 64/63)
		// = 922.5 against Simple's 296.8 + 787.5 = 1084.3.
		{"80 MB reduce-scatter, 8 nodes", c, NCCLReduceScatter, 80e6, NCCLRing, NCCLLL128, 148.4 + 80e6/(0.92*b*64/63)*1e6},
		// 8 GB: the Simple ring, 296.8 µs + 78.75 ms.
		{"8 GB reduce-scatter, 8 nodes", c, NCCLReduceScatter, 8e9, NCCLRing, NCCLSimple, 296.8 + 8e9/(b*64/63)*1e6},
		// 8 GB all-reduce across nodes: the ring's latency x 1.4 (the plateau).
		{"8 GB all-reduce, 8 nodes", c, NCCLAllReduce, 8e9, NCCLRing, NCCLSimple, 1.4*(8.4+112*3.4+14*14) + 8e9/(b*64/126)*1e6},
		// On Volta (below SM80) the plateau is 1.9 (ncclTopoGetAlgoTime, v2.27.3-1).
		{"8 GB all-reduce, 8 nodes of V100s", v100, NCCLAllReduce, 8e9, NCCLRing, NCCLSimple, 1.9*(8.4+112*3.4+14*14) + 8e9/(b*64/126)*1e6},
		// 1 MB all-gather, one GPU a node: PAT's 8 + 4 x 4 + 16 x 2.8 = 68.8 µs + 1e6 /
		// 37.5e9 = 95.5 against Ring LL's 6.6 + 15 x 5.0 + 1e6/(20.4e9 x 16/15) = 127.5.
		{"1 MB all-gather, 16 nodes of one", rail, NCCLAllGather, 1e6, NCCLPAT, NCCLSimple, 68.8 + 1e6/(0.75*50e9)*1e6},
	} {
		got := NCCLTune(tt.c, tt.f, tt.bytes)
		if got.Algo != tt.algo || got.Proto != tt.proto || math.Abs(got.Seconds-tt.wantUs*1e-6) > 1e-11 {
			t.Errorf("%s: %v/%v %.3f µs, want %v/%v %.3f", tt.name, got.Algo, got.Proto, got.Seconds*1e6, tt.algo, tt.proto, tt.wantUs)
		}
		// The choice is the fastest of every pair NCCL runs (a brute-force oracle).
		for _, a := range []NCCLAlgo{NCCLRing, NCCLTree, NCCLNVLS, NCCLNVLSTree, NCCLPAT} {
			for _, p := range []NCCLProto{NCCLLL, NCCLLL128, NCCLSimple} {
				if s, ok := NCCLAlgoSeconds(tt.c, tt.f, a, p, tt.bytes); ok && s < got.Seconds-1e-15 {
					t.Errorf("%s: %v/%v takes %.3f µs, less than the choice's %.3f", tt.name, a, p, s*1e6, got.Seconds*1e6)
				}
			}
		}
	}
	if got := NCCLTune(NCCLComm{Ranks: 1, Nodes: 1, BusBytesPerSecond: b}, NCCLAllReduce, 1e9); got.Seconds != 0 {
		t.Errorf("one rank: %v s", got.Seconds)
	}
}

func ExampleNCCLTune() {
	// A 16 MiB gradient bucket reduce-scattered over 64 H100s on 8 nodes, the ring
	// at 8 NICs of 50 GB/s.
	c := NCCLComm{Ranks: 64, Nodes: 8, Intra: NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: 400e9}
	ch := NCCLTune(c, NCCLReduceScatter, 16<<20)
	fmt.Printf("%v/%v: latency %.1f µs, %.1f µs in all\n", ch.Algo, ch.Proto, ch.LatencySeconds*1e6, ch.Seconds*1e6)
	// Output: Ring/LL128: latency 148.4 µs, 193.3 µs in all
}

// TestNCCLAMDHost: an AMD x86 host takes getNetOverhead's 2 µs network post overhead
// (Intel and Arm 1 µs; Simple 3x) and, across nodes, llMaxBws's AMD row (tuning.cc at
// v2.27.3-1). 16 A100s on 2 nodes, all-reduce: the ring's 30 steps, 2 across the
// network. Simple: 8.4 + 28 x max(3.4, 3 x o) + 2 x 14 µs, 131.6 (o = 1) and 204.4
// (o = 2); LL: 6.6 + 28 x max(0.6, o) + 2 x 2.7 µs, 40.0 and 68.0. LL's bus rate at a
// 50 GB/s ring: min(llMaxBw, 25 GB/s), 25 (Intel, 39) and 22.5 (AMD) on 2 nodes, 20.4
// and 19.0 beyond; on one node the GPU's row whatever the host (Ampere, 87.7: 25).
func TestNCCLAMDHost(t *testing.T) {
	const b = 50e9
	for _, c := range []struct {
		name             string
		nodes            int
		amd              bool
		simple, ll, llBw float64
	}{
		{"Intel, 2 nodes", 2, false, 131.6e-6, 40.0e-6, 25e9},
		{"AMD, 2 nodes", 2, true, 204.4e-6, 68.0e-6, 22.5e9},
		{"Intel, 4 nodes", 4, false, 0, 0, 20.4e9},
		{"AMD, 4 nodes", 4, true, 0, 0, 19.0e9},
		{"AMD, 1 node", 1, true, 0, 0, 25e9},
	} {
		comm := NCCLComm{Ranks: 8 * c.nodes, Nodes: c.nodes, Intra: NCCLNVLink, ComputeCapability: 80, BusBytesPerSecond: b, AMDHost: c.amd}
		if c.simple > 0 {
			s, _ := NCCLLatencySeconds(comm, NCCLAllReduce, NCCLRing, NCCLSimple)
			l, _ := NCCLLatencySeconds(comm, NCCLAllReduce, NCCLRing, NCCLLL)
			if math.Abs(s-c.simple) > 1e-12 || math.Abs(l-c.ll) > 1e-12 {
				t.Errorf("%s: ring latency Simple %g LL %g, want %g and %g", c.name, s, l, c.simple, c.ll)
			}
		}
		ranks := float64(comm.Ranks)
		bw := NCCLAlgoBytesPerSecond(comm, NCCLAllReduce, NCCLRing, NCCLLL, 1<<20)
		if want := c.llBw * ranks / (2 * (ranks - 1)); math.Abs(bw-want) > 1e-3*want {
			t.Errorf("%s: Ring LL %g B/s, want %g", c.name, bw, want)
		}
	}
	for dev, want := range map[string]bool{"a100-80gb": true, "a100-40gb": true, "h100-sxm": false, "b200": false, "gb200": false} {
		if NCCLAMDHost(dev) != want {
			t.Errorf("NCCLAMDHost(%s) = %v, want %v", dev, !want, want)
		}
	}
}
