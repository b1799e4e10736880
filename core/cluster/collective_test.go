package cluster

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The collectives' closed forms (NCCL's bus bandwidth: all-reduce 2(k-1)/k, all-gather
// and reduce-scatter (k-1)/k of the size per rank): a link of 1e9 B/s and 1 µs latency.
func TestCollectivesClosedForm(t *testing.T) {
	l := Link{BytesPerSecond: 1e9, LatencySeconds: 1e-6}
	n := 8e9 // 8 GB
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"all-reduce k=8", RingAllReduceSeconds(l, n, 8), 2*7.0/8*8 + 14e-6},
		{"all-gather k=8", RingAllGatherSeconds(l, n, 8), 7.0/8*8 + 7e-6},
		{"reduce-scatter k=8", RingReduceScatterSeconds(l, n, 8), 7.0/8*8 + 7e-6},
		{"all-to-all k=4", AllToAllSeconds(l, n, 4), 3.0/4*8 + 3e-6},
		{"p2p", PointToPointSeconds(l, n), 8 + 1e-6},
		{"reduce-scatter + all-gather = all-reduce", RingReduceScatterSeconds(l, n, 16) + RingAllGatherSeconds(l, n, 16), RingAllReduceSeconds(l, n, 16)},
		{"one member", RingAllGatherSeconds(l, n, 1), 0},
		{"nothing", PointToPointSeconds(l, 0), 0},
	} {
		if math.Abs(c.got-c.want) > 1e-12*max(1, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestCollectiveSMShare: 24 CTAs of an H100's 132 SMs and an A100's 108; all of a
// device with fewer SMs than CTAs; nothing where the count is unknown.
func TestCollectiveSMShare(t *testing.T) {
	for _, c := range []struct {
		sms  int
		want float64
	}{{132, 24.0 / 132}, {108, 24.0 / 108}, {148, 24.0 / 148}, {16, 1}, {0, 0}, {-3, 0}} {
		if g := CollectiveSMShare(c.sms); math.Abs(g-c.want) > 1e-15 {
			t.Errorf("CollectiveSMShare(%d) = %v, want %v", c.sms, g, c.want)
		}
	}
}

// TestOverlappedSeconds checks the closed form against a brute-force simulation: the
// computation advances at 1 - share of its rate while the collective runs, then at
// full rate; the pair ends when both are done.
func TestOverlappedSeconds(t *testing.T) {
	simulate := func(compute, comm, share float64) float64 {
		const dt = 1e-6
		done, now := 0.0, 0.0
		for done < compute-1e-12 || now < comm-1e-12 {
			rate := 1.0
			if now < comm {
				rate = 1 - share
			}
			done += rate * dt
			now += dt
		}
		return now
	}
	for _, c := range []struct{ compute, comm, share float64 }{
		{0.010, 0.002, 24.0 / 132}, // hidden: the compute slows by share x comm
		{0.002, 0.010, 24.0 / 132}, // exposed: the collective sets the time
		{0.010, 0.009, 0.5},        // hidden at share 0, exposed once slowed
		{0.010, 0.004, 0},          // no contention: max(compute, comm)
		{0.010, 0, 0.5},            // no collective
		{0, 0.003, 0.2},            // no compute
	} {
		g, w := OverlappedSeconds(c.compute, c.comm, c.share), simulate(c.compute, c.comm, c.share)
		if math.Abs(g-w) > 3e-6 {
			t.Errorf("OverlappedSeconds(%v, %v, %v) = %v, simulated %v", c.compute, c.comm, c.share, g, w)
		}
	}
}

// TestOverlapSlowdownSeconds splits what a collective adds to the computation beside it
// by a brute-force simulation (as TestOverlappedSeconds's): the slowdown is share x the
// time both run, the rest the time the collective runs alone after the computation.
// The two add up to OverlappedSeconds less the computation.
func TestOverlapSlowdownSeconds(t *testing.T) {
	simulate := func(compute, comm, share float64) (together, alone float64) {
		const dt = 1e-6
		done, now := 0.0, 0.0
		for done < compute-1e-12 || now < comm-1e-12 {
			switch {
			case now < comm && done < compute-1e-12:
				done += (1 - share) * dt
				together += dt
			case now < comm:
				alone += dt
			default:
				done += dt
			}
			now += dt
		}
		return together, alone
	}
	for _, c := range []struct{ compute, comm, share float64 }{
		{0.010, 0.002, 24.0 / 132}, // hidden: all of it slowdown, share x comm
		{0.002, 0.010, 24.0 / 132}, // exposed: the collective outlasts the slowed compute
		{0.010, 0.009, 0.5},        // hidden at share 0, partly exposed once slowed
		{0.010, 0.004, 0},          // no contention: no slowdown
		{0.010, 0, 0.5},            // no collective
		{0, 0.003, 0.2},            // no compute: all exposed
	} {
		together, alone := simulate(c.compute, c.comm, c.share)
		slow := OverlapSlowdownSeconds(c.compute, c.comm, c.share)
		if want := c.share * together; math.Abs(slow-want) > 3e-6 {
			t.Errorf("OverlapSlowdownSeconds(%v, %v, %v) = %v, simulated %v", c.compute, c.comm, c.share, slow, want)
		}
		added := OverlappedSeconds(c.compute, c.comm, c.share) - c.compute
		if math.Abs(added-slow-alone) > 3e-6 {
			t.Errorf("(%v, %v, %v): adds %v s, %v s of it slowdown, and the collective runs alone %v s (simulated)", c.compute, c.comm, c.share, added, slow, alone)
		}
	}
}

// TestRingLatencyAgainstNCCLTuningModel compares the latency term of a ring all-gather
// across nodes of 8 GPUs on NVSwitch with one InfiniBand NDR NIC each, (k-1) x ib-ndr's
// latency, with NCCL's own model of it (NVIDIA/nccl, src/graph/tuning.cc at commit
// b6475625, ring and Simple protocol: baseLat 8.4 µs, plus per step 3.4 µs over NVLink,
// hwLat[NVLINK], and 14 µs over the network, hwLat[NET], for the nodes-1 steps that cross
// one): 2 nodes 70 µs (planner 75), 16 nodes 599 µs (635), 64 nodes 2,413 µs (2,555). The
// planner charges every step the network's latency and stays within 10% above NCCL's.
// (That is on Intel hosts, whose network post overhead, 1 µs x 3 for Simple, is below
// NVLink's 3.4 µs; on AMD hosts NCCL takes 2 µs x 3 = 6 µs a step, above the planner's 5.)
func TestRingLatencyAgainstNCCLTuningModel(t *testing.T) {
	tp, err := PresetTopology(64, 8, "nvswitch3", "ib-ndr")
	if err != nil {
		t.Fatal(err)
	}
	ring := tp.RingInter(8)
	for _, nodes := range []int{2, 16, 64} {
		k := 8 * nodes
		nccl := 1e-6 * (8.4 + 3.4*float64(k-1-(nodes-1)) + 14*float64(nodes-1))
		got := RingAllGatherSeconds(ring, 1, k) - float64(k-1)/float64(k)/ring.BytesPerSecond // the latency term alone
		if r := got / nccl; r < 1 || r > 1.1 {
			t.Errorf("%d nodes of 8: ring all-gather latency %.1f µs, NCCL's model %.1f µs (x%.3f, want 1 to 1.1)", nodes, 1e6*got, 1e6*nccl, r)
		}
	}
}

// TestSmallCollectivesNCCLLL: the LL protocol's latencies, NCCL's tuning model by hand
// (tuning.cc at b6475625): a ring all-gather on 8 ranks of one node, 6.6 + 7 x 0.6 =
// 10.8 µs; on 512 ranks of 64 nodes, 6.6 + 448 x 1.0 + 63 x 2.7 = 624.7 µs (the
// intra-node steps at the 1 µs network overhead); a tree all-reduce on 512 of 64, 6.8 +
// 2 x (7 x 0.6 + 6 x 5.0) = 75.2 µs, on 8 of one node 6.8 + 2 x 4.2 = 15.2 µs; one
// rank nothing.
func TestSmallCollectivesNCCLLL(t *testing.T) {
	for _, c := range []struct {
		name        string
		got, wantUs float64
	}{
		{"all-gather 8/1", SmallAllGatherSeconds(8, 1), 10.8},
		{"all-gather 512/64", SmallAllGatherSeconds(512, 64), 624.7},
		{"all-gather 128/16", SmallAllGatherSeconds(128, 16), 6.6 + 112 + 15*2.7},
		{"all-reduce 512/64", SmallAllReduceSeconds(512, 64), 75.2},
		{"all-reduce 8/1", SmallAllReduceSeconds(8, 1), 15.2},
		{"all-reduce 24/3 (log2 rounded down)", SmallAllReduceSeconds(24, 3), 6.8 + 2*(7*0.6+1*5.0)},
		{"all-gather 1", SmallAllGatherSeconds(1, 1), 0},
		{"all-reduce 1", SmallAllReduceSeconds(1, 1), 0},
	} {
		if math.Abs(c.got*1e6-c.wantUs) > 1e-6 {
			t.Errorf("%s: %.4f µs, want %.4f", c.name, c.got*1e6, c.wantUs)
		}
	}
}

// TestNVLinkPayloadShare: the payload share of an NVLink's line rate, 370 of 450
// (nccl-tests#212), puts the H800's 200 GB/s at about DeepEP's README's "~160 GB/s
// NVLink maximum bandwidth".
func TestNVLinkPayloadShare(t *testing.T) {
	if h800 := 200e9 * NVLinkPayloadShare; math.Abs(h800-160e9) > 0.05*160e9 {
		t.Errorf("the H800's 200 GB/s carries %v B/s, want DeepEP's ~160 GB/s within 5%%", h800)
	}
}

// TestNVLinkCollectiveBytesPerSecond: NCCL's figure a link (src/graph/topo.h) times the
// NVLinks a GPU has, per generation, and the presets built on it: 8 H100s' collectives at
// 370.8 GB/s (NCCL's maintainer: 370 GB/s busbw, nccl-tests#212), the A100's 240 GB/s
// (at or above the 200-230 GB/s nccl-tests' users measure), the B200's 721.8 GB/s (the
// maxBw NCCL logs, nccl#1807); each about NVLinkPayloadShare of the wire's rate, whose
// line rate every preset's note keeps; a ring all-gather of 1 GiB among 8 H100s then
// takes 7/8 x 2^30 / 370.8e9 s + 7 x 3.5 µs.
func TestNVLinkCollectiveBytesPerSecond(t *testing.T) {
	for _, tt := range []struct {
		preset     string
		gen, links int
		want, line float64
	}{
		{"nvlink2", 2, 6, 120e9, 150e9},
		{"nvswitch1", 2, 6, 120e9, 150e9},
		{"nvlink3", 3, 12, 240e9, 300e9},
		{"nvswitch2", 3, 12, 240e9, 300e9},
		{"nvlink4", 4, 18, 370.8e9, 450e9},
		{"nvswitch3", 4, 18, 370.8e9, 450e9},
		{"nvlink5", 5, 18, 721.8e9, 900e9},
		{"nvswitch4", 5, 18, 721.8e9, 900e9},
	} {
		got := NVLinkCollectiveBytesPerSecond(tt.gen, tt.links)
		if math.Abs(got-tt.want) > 1 {
			t.Errorf("NVLink %d x %d: %v B/s, want %v", tt.gen, tt.links, got, tt.want)
		}
		if share := got / tt.line; math.Abs(share-NVLinkPayloadShare) > 0.025 {
			t.Errorf("NVLink %d: %.3f of the line rate, not about NVLinkPayloadShare %.3f", tt.gen, share, NVLinkPayloadShare)
		}
		p, err := LookupLink(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		if p.BytesPerSecond != got {
			t.Errorf("%s: %v B/s, want NCCL's %v", tt.preset, p.BytesPerSecond, got)
		}
		if !strings.Contains(p.Note, fmt.Sprintf("%g GB/s per direction on the wire", tt.line/1e9)) {
			t.Errorf("%s: note %q does not keep the line rate %g GB/s", tt.preset, p.Note, tt.line/1e9)
		}
	}
	if got := NVLinkCollectiveBytesPerSecond(9, 18); got != 0 {
		t.Errorf("unknown generation: %v B/s, want 0", got)
	}
	h100, _ := LookupLink("nvswitch3")
	want := 7.0/8*(1<<30)/370.8e9 + 7*3.5e-6
	if got := RingAllGatherSeconds(h100.Link, 1<<30, 8); math.Abs(got-want) > 1e-12 {
		t.Errorf("1 GiB all-gather on 8 H100s: %v s, want %v", got, want)
	}
}

func TestNCCLLinkHop(t *testing.T) {
	for name, want := range map[string]NCCLHop{"nvswitch3": NCCLNVLink, "nvlink4": NCCLNVLink, "pcie5": NCCLPCI, "ib-ndr": NCCLNet, "roce-400g": NCCLNet, "opa-nccl": NCCLNet} {
		if got, ok := NCCLLinkHop(name); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", name, got, ok, want)
		}
		if _, err := LookupLink(name); err != nil {
			t.Errorf("%s: not a preset: %v", name, err)
		}
	}
	for _, name := range []string{"tpu-ici", "xgmi", "efa-v3", "gaudi3-roce", "ipu-link", "neuronlink-v3"} {
		if _, ok := NCCLLinkHop(name); ok {
			t.Errorf("%s: priced by NCCL's model", name)
		}
	}
}

func TestBucketCount(t *testing.T) {
	for _, tt := range []struct{ total, first, bucket, want int64 }{
		{0, 0, 10, 0},
		{5, 0, 0, 1},
		{10, 0, 10, 1},
		{11, 0, 10, 2},
		{1, 1, 25, 1},
		{26, 1, 25, 2},
		{27, 1, 25, 3},
		// A 7B model's 14 GB of bf16 gradients in DDP's buckets: a first of 1 MiB, then
		// ceil((14e9 - 2^20) / 25 MiB) = 535, 536 in all.
		{14e9, DDPFirstBucketBytes, DDPBucketBytes, 536},
	} {
		if got := BucketCount(tt.total, tt.first, tt.bucket); got != tt.want {
			t.Errorf("BucketCount(%d, %d, %d) = %d, want %d", tt.total, tt.first, tt.bucket, got, tt.want)
		}
	}
}
