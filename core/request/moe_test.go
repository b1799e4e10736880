package request

import (
	"context"
	"pipeplan/core/cluster"

	"pipeplan/core/wire"
	"strings"
	"testing"
)

// moeRequest is Mixtral 8x7B, sequences of 2048, on nodes of 8 H100s: p stages x d
// replicas x t-way tensor parallelism, expert parallelism ep, ZeRO-1.
func moeRequest(p, d, t, ep int) *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "mixtral-8x7b", Seq: 2048}},
		Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		Parallelism: wire.Parallelism{Pipeline: p, Data: d, Tensor: t, SequenceParallel: t > 1, Expert: ep, ZeRO: 1},
		Schedule:    wire.Schedule{Microbatches: 4 * p},
	}
}

// TestExpertParallelErrors: the layouts Megatron refuses are refused by field path, with
// the reason.
func TestExpertParallelErrors(t *testing.T) {
	for _, tt := range []struct {
		edit func(*wire.Request)
		want string
	}{
		{func(r *wire.Request) { r.Parallelism.Expert = 3; r.Parallelism.Data = 3 }, "parallelism.expert: must divide the model's 8 experts, got 3"},
		{func(r *wire.Request) { r.Parallelism.Expert = 8; r.Parallelism.Data = 2 },
			"parallelism.expert: expert x expert tensor parallelism (8 x 2) must divide data x context x tensor parallelism (2 x 1 x 2)"},
		{func(r *wire.Request) { r.Parallelism.SequenceParallel = false },
			"parallelism.sequence_parallel: is needed with tensor_parallel 2 and expert parallelism"},
		{func(r *wire.Request) { r.Parallelism.Expert = 1; r.Parallelism.ExpertOverlap = true },
			"parallelism.expert_overlap: hides the expert-parallel all-to-alls: it needs parallelism.expert >= 2"},
		{func(r *wire.Request) { r.Parallelism.ExpertOverlap = true; r.Training.Recompute = "full" },
			"parallelism.expert_overlap: does not go with full recomputation"},
		{func(r *wire.Request) { r.Model.Architecture.ExpertImbalance = 0.5 }, "model.architecture.expert_imbalance: must be between 1 (balanced)"},
		{func(r *wire.Request) { r.Model.Architecture.CapacityFactor = -1 }, "model.architecture.capacity_factor: must be 0 (dropless)"},
		{func(r *wire.Request) { r.Parallelism.ExpertTensor = 3; r.Parallelism.Data = 6 }, "parallelism.expert_tensor: must divide an expert's width (14336), got 3"},
		{func(r *wire.Request) { r.Model.Architecture.Name = "meta-llama-3-8b" }, "parallelism.expert: splits the experts of a mixture-of-experts architecture; the model has none"},
		{func(r *wire.Request) { r.Parallelism.Expert = -1 }, "parallelism.expert: must be between 1 and"},
		{func(r *wire.Request) {
			r.Model.Architecture.Attention = "cudnn"
			r.Model.Architecture.FP8Attention = true
		},
			"model.architecture.fp8_attention: applies to dtype fp8"},
		{func(r *wire.Request) { r.Training.FP8Recipe = "current"; r.Model.Architecture.FP8Attention = true },
			"model.architecture.fp8_attention: needs attention cudnn"},
		{func(r *wire.Request) { r.Training.FP8Recipe = "current"; r.Model.Architecture.ExpertFusedMLP = true },
			"model.architecture.expert_fused_mlp: needs dtype fp8 with fp8_recipe mxfp8"},
		{func(r *wire.Request) {
			r.Model.Architecture.ExpertFusedMLP = true
			r.Training.FP8Recipe = "mxfp8"
			r.Cluster.Device = "mi355x"
		},
			"model.architecture.expert_fused_mlp: cuDNN's fused grouped GEMMs run on Blackwell GPUs"},
	} {
		r := moeRequest(2, 4, 2, 4)
		tt.edit(r)
		_, err := Run(context.Background(), r)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v, want %q", err, tt.want)
		}
	}
}

// TestExpertParallelDefaults: a mixture's expert parallelism defaults to 1 and its expert
// tensor parallelism to the tensor degree; a dense model's stay unset, so its canonical
// request does not change.
func TestExpertParallelDefaults(t *testing.T) {
	n, err := Normalize(moeRequest(2, 4, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n.Parallelism.Expert != 1 || n.Parallelism.ExpertTensor != 2 {
		t.Errorf("mixture: expert %d, expert_tensor %d; want 1 and 2", n.Parallelism.Expert, n.Parallelism.ExpertTensor)
	}
	d := llamaRequest(4, 1, 1)
	d.Parallelism.Expert = 1
	n, err = Normalize(d)
	if err != nil {
		t.Fatal(err)
	}
	if n.Parallelism.Expert != 0 || n.Parallelism.ExpertTensor != 0 {
		t.Errorf("dense: expert %d, expert_tensor %d; want both unset", n.Parallelism.Expert, n.Parallelism.ExpertTensor)
	}
}

// TestExpertGradientReduce: with ZeRO-1 a device's dense gradients are reduce-scattered
// over the d replicas and its routed experts' over the expert-data-parallel group
// d x t / (ep x etp) (expert tensor parallelism defaults to t), each a ring: the dense
// over the data link, the experts over theirs (expertShardLink, which
// TestExpertGradientReduceNICs checks): (k-1)/k * n / B + (k-1) * alpha.
func TestExpertGradientReduce(t *testing.T) {
	for _, tt := range []struct{ p, d, t, ep int }{{4, 8, 1, 8}, {4, 8, 1, 2}, {2, 16, 2, 4}, {8, 4, 1, 1}} {
		r := moeRequest(tt.p, tt.d, tt.t, tt.ep)
		res := run(t, r)
		if !res.Feasible {
			t.Fatalf("%+v: infeasible: %v", tt, res.Diagnostics)
		}
		p, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		edp := tt.d * tt.t / (tt.ep * tt.t)
		for i, ds := range res.Devices {
			var expert int64
			for _, s := range ds.Stages {
				st := res.Plan.Stages[s]
				for l := st.FirstLayer; l <= st.LastLayer; l++ {
					_, g := p.est.ExpertFullBytes(l)
					expert += g
				}
			}
			if expert == 0 {
				t.Fatalf("%+v: device %d holds no expert gradients", tt, i)
			}
			// One reduce-scatter a ring (eager PyTorch's ZeRO-1 is not bucketed), each as
			// NCCL's tuner prices it on the ring's nodes at the ring's link rate
			// (cluster.NCCLTune is tested in closed form).
			l, el := secondsLink(p.dataLink, 0), secondsLink(p.expertShardLink(p.dataLink, edp), 0)
			want := cluster.NCCLTune(p.ncclComm(p.dataRing(tt.d, false), l), cluster.NCCLReduceScatter, float64(ds.GradBytes-expert)).Seconds +
				cluster.NCCLTune(p.ncclComm(p.dataRing(edp, true), el), cluster.NCCLReduceScatter, float64(expert)).Seconds
			if !p.dataRing(tt.d, false).nccl {
				t.Fatalf("%+v: the data-parallel ring is not NCCL's", tt)
			}
			if diff := ds.ReduceScatterSeconds - want; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("%+v: device %d reduce-scatter %v s, want %v", tt, i, ds.ReduceScatterSeconds, want)
			}
		}
	}
}

// TestExpertParallelPlans: expert parallelism spreads the experts: Mixtral 8x7B on 2
// stages x 8 replicas does not fit 80 GB H100s with every device holding all the experts
// of its stage, and fits with EP 8, each device holding one.
func TestExpertParallelPlans(t *testing.T) {
	none := run(t, moeRequest(2, 8, 1, 1))
	ep := run(t, moeRequest(2, 8, 1, 8))
	if none.Feasible || !ep.Feasible {
		t.Fatalf("EP 1 feasible %v, EP 8 feasible %v (%v); want only EP 8", none.Feasible, ep.Feasible, ep.Diagnostics)
	}
}

// TestExpertGradientReduceNICs: the routed experts' data-parallel ring has one member in
// every EP block of consecutive ranks (Megatron-Core's tp-cp-ep-dp-pp order), so where the
// data-parallel ring crosses nodes with d of its members in each node, the expert ring
// has d / ep of them there and runs on that many NICs (one NIC per device, InfiniBand
// NDR's 50 GB/s on nodes of 8 H100s), not on the d NICs of the whole ring: 8-way
// expert parallelism in 8-GPU nodes reduces the experts' gradients at one NIC's speed.
func TestExpertGradientReduceNICs(t *testing.T) {
	const nic = 48e9 // ib-ndr's 50 GB/s port per H100, reached at NCCL's PCIe Gen5 x16 48 (Topology.RingInter)
	for _, tt := range []struct {
		d, ep int
		nics  float64 // NICs the expert ring runs on in each node
	}{{16, 8, 1}, {16, 4, 2}, {32, 8, 1}, {32, 16, 1}} {
		r := moeRequest(1, tt.d, 1, tt.ep)
		r.Model.Architecture.Name = "qwen3-30b-a3b"
		res := run(t, r)
		if !res.Feasible {
			t.Fatalf("%+v: infeasible: %v", tt, res.Diagnostics)
		}
		p, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		// 8 NICs' 400 GB/s, at most what NCCL's collectives get from the node's NVLink
		// (cluster.Topology.RingInter; nvswitch3: 370.8 GB/s).
		if ring := min(8*nic, cluster.NVLinkCollectiveBytesPerSecond(4, 18)); !p.placement.DataCrossesNodes || p.dataLink.BytesPerSecond != ring {
			t.Fatalf("%+v: the data-parallel ring should cross nodes on 8 NICs, got %v at %v B/s", tt, p.placement.DataCrossesNodes, p.dataLink.BytesPerSecond)
		}
		ds := res.Devices[0]
		var expert, expertW int64
		for l := range p.est.Layers {
			w, g := p.est.ExpertFullBytes(l)
			expert, expertW = expert+g, expertW+w
		}
		// The bytes at the rings' NICs, and each collective's latency NCCL's Simple ring's,
		// which its tuner picks for a whole model's gradients (cluster.NCCLTune): the
		// dense ring's d members 8 a node, the experts' d/ep members max(1, 8/ep) a node.
		el := cluster.Link{BytesPerSecond: tt.nics * nic}
		dl := *p.dataLink
		dl.LatencySeconds = 0
		emembers := tt.d / tt.ep
		ringLat := func(ranks, nodes int) float64 {
			l, _ := cluster.NCCLLatencySeconds(cluster.NCCLComm{Ranks: ranks, Nodes: nodes, Intra: cluster.NCCLNVLink}, cluster.NCCLReduceScatter, cluster.NCCLRing, cluster.NCCLSimple)
			return l
		}
		dlat, elat := ringLat(tt.d, tt.d/8), ringLat(emembers, emembers/max(1, 8/tt.ep))
		want := cluster.RingReduceScatterSeconds(dl, float64(ds.GradBytes-expert), tt.d) + dlat +
			cluster.RingReduceScatterSeconds(el, float64(expert), emembers) + elat
		if diff := ds.ReduceScatterSeconds - want; diff > 1e-12 || diff < -1e-12 {
			t.Errorf("%+v: reduce-scatter %v s, want %v (the experts' ring on %v NICs)", tt, ds.ReduceScatterSeconds, want, tt.nics)
		}
		wantAG := cluster.RingAllGatherSeconds(dl, float64(ds.WeightBytes-expertW), tt.d) + dlat +
			cluster.RingAllGatherSeconds(el, float64(expertW), emembers) + elat
		if diff := ds.AllGatherSeconds - wantAG; diff > 1e-12 || diff < -1e-12 {
			t.Errorf("%+v: all-gather %v s, want %v (the experts' ring on %v NICs)", tt, ds.AllGatherSeconds, wantAG, tt.nics)
		}
	}
}
