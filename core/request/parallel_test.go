package request

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

func llamaRequest(p, d, t int) *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 4096}},
		Cluster:     wire.ClusterSpec{Device: "h100-sxm"},
		Parallelism: wire.Parallelism{Pipeline: p, Data: d, Tensor: t},
		Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 8},
	}
}

// TestTensorOneChangesNothing: parallelism.tensor 1 is the default, with the same id and
// the same result as leaving it out.
func TestTensorOneChangesNothing(t *testing.T) {
	a, b := run(t, llamaRequest(4, 2, 0)), run(t, llamaRequest(4, 2, 1))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("tensor 1 changes the result")
	}
}

// TestTensorParallel: t-way tensor parallelism uses p x d x t devices, and the model's
// FLOPs per step, hence MFU's numerator, do not depend on t.
func TestTensorParallel(t *testing.T) {
	one := run(t, llamaRequest(4, 1, 1))
	four := run(t, llamaRequest(4, 1, 4))
	if !one.Feasible || !four.Feasible || four.Step.Devices != 16 {
		t.Fatalf("t=4: feasible %v, %d devices", four.Feasible, four.Step.Devices)
	}
	if r := four.Step.ModelFLOPsPerStep / one.Step.ModelFLOPsPerStep; math.Abs(r-1) > 0.01 {
		t.Errorf("model FLOPs per step at t=4 are %.4f of t=1's", r)
	}
	if four.Step.StepSeconds >= one.Step.StepSeconds {
		t.Errorf("t=4 step %v s, not faster than t=1's %v s", four.Step.StepSeconds, one.Step.StepSeconds)
	}
}

// TestNodes: on nodes of 8 with InfiniBand between them, Megatron's placement keeps the
// replicas' all-reduce in a node and sends stage transfers across; the step's all-reduce
// is the ring over NVSwitch. ZeRO-1 (Megatron-LM's distributed optimizer) reduce-scatters
// the gradients and all-gathers the weights: in bf16 both halves of the all-reduce.
func TestNodes(t *testing.T) {
	r := llamaRequest(2, 8, 1)
	r.Cluster.DevicesPerNode = 8
	r.Parallelism.ZeRO = 1
	res := run(t, r)
	pl := res.Placement
	if pl == nil || pl.Order != string(cluster.TDP) || pl.DataCrossesNodes || !reflect.DeepEqual(pl.StageCrossesNodes, []bool{true}) {
		t.Fatalf("placement %+v", pl)
	}
	n, _ := Normalize(r)
	if n.Cluster.LinkIntra != "nvlink4" || n.Cluster.LinkInter != "ib-ndr" || n.Cluster.Count != 16 {
		t.Errorf("defaults: %+v", n.Cluster)
	}
	nv, _ := cluster.LookupLink("nvlink4")
	var grads int64
	for _, d := range res.Devices {
		grads = max(grads, d.GradBytes)
	}
	st := res.Step
	// On nodes of NVSwitch and InfiniBand, a collective's time is NCCL's own model
	// (cluster.NCCLTune): for a whole model's gradients the Simple ring, 8.4 µs and 7
	// NVLink steps of 3.4 beside the bytes, one collective each way (eager PyTorch's
	// ZeRO-1 is not bucketed).
	bw := nv.Link
	bw.LatencySeconds = 0
	c := cluster.NCCLComm{Ranks: 8, Nodes: 1, Intra: cluster.NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: bw.BytesPerSecond}
	if ch := cluster.NCCLTune(c, cluster.NCCLReduceScatter, float64(grads)); ch.Algo != cluster.NCCLRing || ch.Proto != cluster.NCCLSimple {
		t.Fatalf("the gradients' reduce-scatter: %+v, want the Simple ring", ch)
	}
	lat, _ := cluster.NCCLLatencySeconds(c, cluster.NCCLReduceScatter, cluster.NCCLRing, cluster.NCCLSimple)
	if want := 1e-6 * (8.4 + 7*3.4); math.Abs(lat-want) > 1e-12 {
		t.Fatalf("latency %v, want %v", lat, want)
	}
	if want := cluster.RingReduceScatterSeconds(bw, float64(grads), 8) + lat; math.Abs(st.DataParallelReduceScatterSeconds-want) > 1e-12 {
		t.Errorf("reduce-scatter %v s, want %v (ring of 8 over NVLink)", st.DataParallelReduceScatterSeconds, want)
	}
	if want := cluster.RingAllReduceSeconds(bw, float64(grads), 8) + 2*lat; math.Abs(st.DataParallelReduceScatterSeconds+st.DataParallelAllGatherSeconds-want) > 1e-12 || st.DataParallelAllReduceSeconds != 0 {
		t.Errorf("reduce-scatter + all-gather %v s, want %v (the all-reduce's bytes over a ring of 8 over NVLink); all-reduce %v",
			st.DataParallelReduceScatterSeconds+st.DataParallelAllGatherSeconds, want, st.DataParallelAllReduceSeconds)
	}
	// The boundary crosses nodes: InfiniBand NDR at NCCL's PCIe Gen5 x16 rate to the
	// NIC, 48 GB/s under its 50 (cluster.Topology.NICLink).
	ib, _ := cluster.LookupLink("ib-ndr")
	ib.Link.BytesPerSecond = cluster.NCCLPCIeBytesPerSecond(32, 16)
	if res.Plan.Stages[0].TransferSeconds <= 0 || !reflect.DeepEqual(pl.StageLinks, []wire.Link{wire.Link(ib.Link)}) {
		t.Errorf("stage links %+v, want InfiniBand at 48 GB/s", pl.StageLinks)
	}
}

func TestParallelErrors(t *testing.T) {
	for _, tt := range []struct {
		edit func(*wire.Request)
		want string
	}{
		{func(r *wire.Request) { r.Parallelism.Tensor = 3 }, "parallelism.tensor: must divide the model's num_heads (32), got 3"},
		{func(r *wire.Request) { r.Parallelism.Tensor = 3; r.Cluster.DevicesPerNode = 8 }, "parallelism.tensor: must divide cluster.devices_per_node (8)"},
		{func(r *wire.Request) { r.Parallelism.SequenceParallel = true }, "parallelism.sequence_parallel: splits along the sequence"},
		{func(r *wire.Request) { r.Cluster.LinkInter = "ib-hdr" }, "cluster.link_inter: goes with cluster.devices_per_node"},
		{func(r *wire.Request) { r.Cluster.DevicesPerNode = 8; r.Cluster.LinkInter = "ib-9000" }, `cluster.link_inter: unknown link "ib-9000"`},
		{func(r *wire.Request) { r.Cluster.DevicesPerNode = 8; r.Cluster.Link = "pcie4" }, "cluster.link: goes without cluster.devices_per_node"},
		{func(r *wire.Request) { r.Cluster.Count = 8; r.Parallelism.Tensor = 4 }, "cluster.count: 8 devices cannot hold 4 pipeline stages times 1 replicas times 4-way"},
		{func(r *wire.Request) {
			r.Model = wire.ModelSpec{Example: "gpt2-medium"}
			r.Parallelism.Tensor = 2
		}, "parallelism.tensor: splits an architecture's blocks"},
	} {
		r := llamaRequest(4, 1, 1)
		tt.edit(r)
		_, err := Run(context.Background(), r)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v, want %q", err, tt.want)
		}
	}
}
