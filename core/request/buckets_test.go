package request

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// TestMegatronBucketElements: Megatron-Core's default bucket, max(40M, 1M x dp)
// elements (distributed_data_parallel.py, core_v0.15.0 to core_v0.18.0).
func TestMegatronBucketElements(t *testing.T) {
	for _, tt := range []struct {
		dp   int
		want int64
	}{{1, 40_000_000}, {8, 40_000_000}, {40, 40_000_000}, {64, 64_000_000}, {512, 512_000_000}} {
		if got := cluster.MegatronBucketElements(tt.dp); got != tt.want {
			t.Errorf("dp %d: %d elements, want %d", tt.dp, got, tt.want)
		}
	}
}

// TestBucketedExposedSeconds: under Megatron-Core's buckets the bucket whose gradients
// are ready last is reduced after the backward, and the bucket the next forward needs
// first is gathered before it: a collective c beside computation C, its unhidden
// bucket L, adds max(c - C, share x c + (1 - share) x L). Closed forms.
func TestBucketedExposedSeconds(t *testing.T) {
	on := cluster.Framework{OverlapGradReduce: true, OverlapParamGather: true, MegatronBuckets: true}
	share := cluster.CollectiveSMShare(148)
	for _, tt := range []struct {
		name                                  string
		fw                                    cluster.Framework
		reduce, gather, last, first, bwd, fwd float64
		times                                 int
		want                                  float64
	}{
		{"no unhidden bucket: DataParallelExposedSeconds", on, 0.010, 0.020, 0, 0, 0.100, 0.050, 1, share * 0.030},
		{"last reduce bucket after the backward", on, 0.010, 0, 0.002, 0, 0.100, 0.050, 1, share*0.008 + 0.002},
		{"first gather bucket before the forward", on, 0, 0.020, 0, 0.005, 0.100, 0.050, 1, share*0.015 + 0.005},
		{"both", on, 0.256, 0.256, 0.001, 0.001, 0.500, 0.250, 1, 2*share*0.255 + 0.002},
		{"reduction longer than the backward", on, 0.150, 0, 0.010, 0, 0.100, 0.050, 1, 0.050},
		{"a bucket is no more than its collective", on, 0.010, 0.010, 0.050, 0.050, 0.100, 0.050, 1, 0.020},
		{"not overlapped: all of it", cluster.Framework{MegatronBuckets: true}, 0.010, 0.020, 0.002, 0.005, 0.100, 0.050, 1, 0.030},
		{"per microbatch (zero2)", on, 0.010, 0, 0.002, 0, 0.100, 0.050, 4, 4 * (share*0.008 + 0.002)},
	} {
		got := DataParallelBucketedExposedSeconds(tt.fw, tt.reduce, tt.gather, tt.last, tt.first, tt.bwd, tt.fwd, tt.times, share)
		if !near(got, tt.want) {
			t.Errorf("%s: %v s, want %v s", tt.name, got, tt.want)
		}
		if lower := DataParallelExposedSeconds(tt.fw, tt.reduce, tt.gather, tt.bwd, tt.fwd, tt.times, share); lower > got*(1+1e-12) {
			t.Errorf("%s: %v s below DataParallelExposedSeconds' %v s (the search's bound)", tt.name, got, lower)
		}
	}
}

// TestMegatronLastBucketPlanned: a plan in a Megatron-style mode prices it so. GPT-2
// medium (token and position embeddings, 50,257 x 1,024 + 1,024 x 1,024: 52.5M
// elements, more than the 40M-element bucket at dp 4) on four H100s with the distributed optimizer: the
// embedding's bucket, the last its backward makes ready and the first its forward
// needs, is its share of the reduce-scatter and of the all-gather, exposed whole; the
// rest hides (NCCL's SM share). At dp 64 the bucket is 64M elements, larger than the
// embedding. Eager PyTorch (no Megatron-Core buckets) hides all but the share. Each
// bucket is a collective of its own, paying the ring's latency; buckets close at
// parameters' ends.
func TestMegatronLastBucketPlanned(t *testing.T) {
	for _, tt := range []struct {
		framework string
		dp        int
		bucketed  bool
	}{{"megatron", 4, true}, {"cuda-graphs", 4, true}, {"megatron", 64, true}, {"eager", 4, false}} {
		req := fmt.Sprintf(`{"model":{"architecture":{"name":"gpt2-medium","seq":1024,"framework":%q}},"cluster":{"device":"h100-sxm","count":%d},
			"parallelism":{"data":%d,"sharding":"zero1","overlap_grad_reduce":"on","overlap_param_gather":"on"},"schedule":{"microbatches":4}}`, tt.framework, tt.dp, tt.dp)
		r := decode(t, req)
		res, err := Run(context.Background(), r)
		if err != nil || res.Step == nil {
			t.Fatalf("%s dp %d: %v", tt.framework, tt.dp, err)
		}
		est, err := Estimate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		var params int64
		for _, l := range est.Layers {
			params += l.Params
		}
		emb := est.Layers[0].Params
		if est.Layers[0].Kind != "embedding" || emb != 50257*1024+1024*1024 {
			t.Fatalf("layer 0 is %s of %d parameters, want gpt2-medium's embedding", est.Layers[0].Kind, emb)
		}
		// Each collective is its bytes' time plus one ring latency a bucket, (dp-1) x
		// nvlink4's 3 µs (no topology: the link's own latency); the last bucket is its
		// share of the bytes' time and one latency.
		f, buckets := 0.0, int64(1)
		lat := float64(tt.dp-1) * 3e-6
		if tt.bucketed {
			bucket := cluster.MegatronBucketElements(tt.dp)
			f = float64(max(emb, bucket)) / float64(params)
			// Closed at parameters' ends (cluster.MegatronBucketSizes), the distributed
			// optimizer's padding over dp.
			var tensors []int64
			for _, l := range est.Layers {
				for _, x := range l.MegatronParams {
					tensors = append(tensors, x.Elements)
				}
			}
			buckets = int64(len(cluster.MegatronBucketSizes(tensors, bucket, tt.dp, true)))
		}
		share := cluster.CollectiveSMShare(132)
		st := res.Step
		rs, ag := st.DataParallelReduceScatterSeconds, st.DataParallelAllGatherSeconds
		last := 0.0
		if tt.bucketed {
			last = f*(rs+ag-2*float64(buckets)*lat) + 2*lat
		}
		want := share*(rs+ag-last) + last
		if rs <= 0 || ag <= 0 || !near(st.DataParallelExposedSeconds, want) {
			t.Errorf("%s dp %d: exposed %v s of %v + %v s, want %v s (last bucket %.3f of the gradients)", tt.framework, tt.dp, st.DataParallelExposedSeconds, rs, ag, want, f)
		}
	}
}

// TestDPBucketBytesPriced: parallelism.dp_bucket_bytes cuts a device's gradients into
// buckets of that many bytes, one reduce-scatter and one all-gather each, and each takes
// the time NCCL's tuner gives a collective of its bytes. Llama 3 8B on 4 stages x 16
// replicas x TP 8, nodes of 8 H100s: every data-parallel ring has one member a node, at
// one NIC (ib-ndr, 50 GB/s, reached over PCIe Gen5 x16 at NCCL's 48: Topology.RingInter), and for a bucket of about 16 MiB NCCL's model picks the
// LL128 ring: 14 µs + 15 network steps of 8.5 (the Tree's network latency, one GPU a
// node), its bytes at 0.92 of the Simple ring's rate (cluster.NCCLTune, tested in
// closed form), where the Simple ring would take 8.4 + 15 x 14 µs.
func TestDPBucketBytesPriced(t *testing.T) {
	base := llamaRequest(4, 16, 8)
	base.Cluster.DevicesPerNode = 8
	base.Parallelism.Sharding = "zero1"
	base.Parallelism.SequenceParallel = true
	one := run(t, base)
	bucketed := *base
	bucketed.Parallelism.DPBucketBytes = 16 << 20
	got := run(t, &bucketed)
	c := cluster.NCCLComm{Ranks: 16, Nodes: 16, Intra: cluster.NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: 48e9}
	if ch := cluster.NCCLTune(c, cluster.NCCLReduceScatter, 16<<20); ch.Algo != cluster.NCCLRing || ch.Proto != cluster.NCCLLL128 || !near(ch.LatencySeconds, 1e-6*(14+15*8.5)) {
		t.Fatalf("a 16 MiB bucket: %+v, want the LL128 ring at 141.5 µs", ch)
	}
	for i, d := range got.Devices {
		o := one.Devices[i]
		buckets := cluster.BucketCount(d.GradBytes, 0, 16<<20)
		if buckets < 10 || d.GradBytes != o.GradBytes {
			t.Fatalf("device %d: %d buckets of %d bytes", i, buckets, d.GradBytes)
		}
		// The left-out request's eager ZeRO-1 is one collective each way.
		rs := float64(buckets) * cluster.NCCLTune(c, cluster.NCCLReduceScatter, float64(d.GradBytes)/float64(buckets)).Seconds
		if !near(d.ReduceScatterSeconds, rs) || !near(o.ReduceScatterSeconds, cluster.NCCLTune(c, cluster.NCCLReduceScatter, float64(d.GradBytes)).Seconds) {
			t.Errorf("device %d: reduce-scatter %v s, want %v (%d buckets); one: %v", i, d.ReduceScatterSeconds, rs, buckets, o.ReduceScatterSeconds)
		}
		ag := float64(buckets) * cluster.NCCLTune(c, cluster.NCCLAllGather, float64(d.WeightBytes)/float64(buckets)).Seconds
		if !near(d.AllGatherSeconds, ag) {
			t.Errorf("device %d: all-gather %v s, want %v (%d buckets)", i, d.AllGatherSeconds, ag, buckets)
		}
	}
	if got.Step.StepSeconds <= one.Step.StepSeconds {
		t.Errorf("bucketed step %v s, not above one collective's %v s", got.Step.StepSeconds, one.Step.StepSeconds)
	}
}

// TestDPBucketBytesErrors: the field's bounds, training only, and only where the
// data-parallel collectives are priced a bucket at a time (not zero3 or hsdp, whose
// gathers and reduce-scatters are priced a layer at a time and would ignore it).
func TestDPBucketBytesErrors(t *testing.T) {
	for _, tt := range []struct {
		bytes    int64
		mode     string
		sharding string
		want     string
	}{
		{-1, "", "", "parallelism.dp_bucket_bytes: must be between 0 and"},
		{wire.MaxDPBucketBytes + 1, "", "", "parallelism.dp_bucket_bytes: must be between 0 and"},
		{1 << 20, "inference", "", "parallelism.dp_bucket_bytes: applies to training"},
		{1 << 20, "", "zero3", "parallelism.dp_bucket_bytes: is priced with sharding none, zero1 or zero2"},
		{1 << 20, "", "zero2", ""},
	} {
		r := llamaRequest(2, 2, 1)
		r.Parallelism.DPBucketBytes = tt.bytes
		r.Parallelism.Sharding = tt.sharding
		r.Training.Mode = tt.mode
		_, err := Run(context.Background(), r)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%d %q %q: %v, want %q", tt.bytes, tt.mode, tt.sharding, err, tt.want)
		}
	}
}

// TestContextDataRingNICs: the gradients' reduction runs over the replicas and their
// context groups alike (Megatron-Core's distributed optimizer over
// get_data_parallel_group(with_context_parallel=True)), so where that ring crosses nodes
// it has context x the placement's replicas of a node there, each on its own NIC
// (cluster.Topology.RingInter), as the latency's node count already took it. Llama 3
// 8B at CP 2 x DP 8 on two nodes of 8 H100s: four replicas a node, eight ring members,
// so eight NICs of InfiniBand NDR (50 GB/s), capped at NCCL's NVLink rate 370.8 GB/s,
// where four replicas' NICs gave 200.
func TestContextDataRingNICs(t *testing.T) {
	r := llamaRequest(1, 8, 1)
	r.Parallelism.Context = 2
	r.Parallelism.Sharding = "zero1"
	r.Cluster.DevicesPerNode = 8
	r.Model.Architecture.Seq = 8192
	res := run(t, r)
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if !p.placement.DataCrossesNodes || p.placement.DataMembersPerNode != 4 {
		t.Fatalf("placement: crosses %v, %d replicas a node; want 4 a node across 2 nodes", p.placement.DataCrossesNodes, p.placement.DataMembersPerNode)
	}
	link, n, _, _, _ := p.shardLinks()
	if want := min(8*50e9, cluster.NVLinkCollectiveBytesPerSecond(4, 18)); n != 16 || link.BytesPerSecond != want {
		t.Fatalf("ring of %d at %v B/s, want 16 at %v", n, link.BytesPerSecond, want)
	}
	ds := res.Devices[0]
	c := cluster.NCCLComm{Ranks: 16, Nodes: 2, Intra: cluster.NCCLNVLink, ComputeCapability: 90, BusBytesPerSecond: link.BytesPerSecond}
	if want := cluster.NCCLTune(c, cluster.NCCLReduceScatter, float64(ds.GradBytes)).Seconds; !near(ds.ReduceScatterSeconds, want) {
		t.Errorf("reduce-scatter %v s, want %v", ds.ReduceScatterSeconds, want)
	}
}

// TestMegatronBucketsAtParameters: Megatron-Core closes a bucket at a parameter's end
// (cluster.MegatronBucketSizes), so the bucket count follows Llama 3.1 8B's parameters,
// not its elements over the bucket size. Its 32 blocks hold six tensors each as
// Megatron-Core with Transformer Engine registers them (linear_qkv's layer_norm_weight
// and weight, linear_proj's weight, linear_fc1's layer_norm_weight and weight,
// linear_fc2's weight), beside the embedding, the final norm and the output layer: 195.
//   - bucket_size 64 (Cisco's MLPerf v5.1 custom.yaml default): a bucket each, 195.
//   - 768,000,000 (NVIDIA's config_common_8b.sh) with fp8 primary weights: the 128 linear
//     weights are a buffer of their own, 218,103,808 elements a block (4,096 x 6,144 +
//     4,096 x 4,096 + 2 x 14,336 x 4,096 + 14,336 x 4,096), walked from the last block's
//     linear_fc2: the first bucket closes at the fourth block's linear_fc1 (3 x
//     218,103,808 + 58,720,256 + 117,440,512 = 830,472,192), each next one four blocks
//     later (872,415,232), 41,943,040 left over: 9; the rest (the output layer and the
//     embedding, 525,336,576 each, and 65 norms) reach 768M at the embedding's end, 1:
//     10 buckets, where the elements over the bucket (8.03B / 768M) would make 11.
//   - Megatron-Core's default at DP 64, 64,000,000, without fp8 weights: one buffer.
func TestMegatronBucketsAtParameters(t *testing.T) {
	const block = 4096*6144 + 4096*4096 + 2*14336*4096 + 14336*4096
	for _, tt := range []struct {
		name   string
		bucket int64
		fp8    bool
		want   int64
	}{
		{"bucket_size 64", 64, true, 195},
		{"bucket_size 64, bf16 weights", 64, false, 195},
		{"bucket_size 768M, fp8 weights", 768_000_000, true, 10},
	} {
		r := llamaRequest(1, 64, 1)
		r.Model.Architecture.Seq, r.Model.Architecture.Framework = 8192, "megatron"
		r.Cluster.DevicesPerNode = 8
		r.Parallelism.Sharding, r.Parallelism.OverlapGradReduce, r.Parallelism.OverlapParamGather = "zero1", OverlapOn, OverlapOn
		r.Parallelism.DPBucketElements = tt.bucket
		r.Training.FP8Recipe, r.Training.FP8ParamGather = "delayed", tt.fp8
		res := run(t, r)
		p, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, l := range p.est.Layers {
			var sum int64
			for _, x := range l.MegatronParams {
				sum += x.Elements
			}
			if sum != l.Params-l.ExpertParams {
				t.Errorf("%s: layer %s lists %d elements, holds %d", tt.name, l.Name, sum, l.Params)
			}
			n += len(l.MegatronParams)
			if l.Kind == "block" {
				var products int64
				for _, x := range l.MegatronParams {
					if x.Product {
						products += x.Elements
					}
				}
				if products != block {
					t.Errorf("%s: a block's linear weights %d elements, want %d", tt.name, products, block)
				}
			}
		}
		if n != 195 {
			t.Errorf("%s: %d parameter tensors, want 195", tt.name, n)
		}
		dense, _ := p.dataParallelBuckets(res.Plan, 0, 1, res.Devices[0].GradBytes, 0, 1)
		if dense != tt.want {
			t.Errorf("%s: %d buckets, want %d", tt.name, dense, tt.want)
		}
	}
}

// TestDPBucketElementsErrors: the field's bounds, training only, not beside
// dp_bucket_bytes, and only where Megatron-Core's buckets run.
func TestDPBucketElementsErrors(t *testing.T) {
	for _, tt := range []struct {
		elements, bytes int64
		mode, framework string
		want            string
	}{
		{-1, 0, "", "megatron", "parallelism.dp_bucket_elements: must be between 0 and"},
		{wire.MaxDPBucketBytes + 1, 0, "", "megatron", "parallelism.dp_bucket_elements: must be between 0 and"},
		{64, 0, "inference", "megatron", "parallelism.dp_bucket_elements: applies to training"},
		{64, 1 << 20, "", "megatron", "parallelism.dp_bucket_elements: sets Megatron-Core's bucket_size"},
		{64, 0, "", "eager", "parallelism.dp_bucket_elements: is Megatron-Core's bucket_size, which framework \"eager\""},
		{64, 0, "", "megatron", ""},
		{64, 0, "", "cuda-graphs", ""},
	} {
		r := llamaRequest(1, 8, 1)
		r.Model.Architecture.Framework = tt.framework
		r.Parallelism.DPBucketElements, r.Parallelism.DPBucketBytes = tt.elements, tt.bytes
		if tt.mode != "" {
			r.Training.Mode = tt.mode
		}
		_, err := Run(context.Background(), r)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%d elements in %s: %v", tt.elements, tt.framework, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%d elements, %d bytes, %s %s: %v, want %q", tt.elements, tt.bytes, tt.mode, tt.framework, err, tt.want)
		}
	}
}

// TestBucketedTakesBytes: bucketed prices a collective from its bytes. Off NCCL's
// model, the ring formulas' bytes term (2(k-1)/k x bytes / rate for an all-reduce,
// (k-1)/k for a reduce-scatter or all-gather) plus the link's latency a step for each
// bucket, and the last bucket fraction x the bytes term plus one latency; on it, each
// bucket NCCL's tuned time for its share of the bytes, the last bucket the tuned time of
// fraction x the bytes. No bytes, one member or no buckets cost nothing.
func TestBucketedTakesBytes(t *testing.T) {
	p := &prepared{req: &wire.Request{Cluster: wire.ClusterSpec{Device: "h100-sxm", LinkIntra: "nvlink4"}}}
	l := cluster.Link{BytesPerSecond: 1e11, LatencySeconds: 1e-6}
	const bytes, buckets, fraction = 1e9, 4, 0.25
	plain := dpRing{members: 8, nodes: 1}
	nccl := dpRing{members: 16, nodes: 2, nccl: true, intra: cluster.NCCLNVLink}
	for _, tt := range []struct {
		name       string
		r          dpRing
		f          cluster.NCCLFunc
		bytes      float64
		buckets    int64
		want, last float64
	}{
		{"all-reduce, ring formula", plain, cluster.NCCLAllReduce, bytes, buckets, 2*7.0/8*bytes/1e11 + buckets*14e-6, fraction*2*7.0/8*bytes/1e11 + 14e-6},
		{"reduce-scatter, ring formula", plain, cluster.NCCLReduceScatter, bytes, buckets, 7.0/8*bytes/1e11 + buckets*7e-6, fraction*7.0/8*bytes/1e11 + 7e-6},
		{"all-gather, ring formula", plain, cluster.NCCLAllGather, bytes, 1, 7.0/8*bytes/1e11 + 7e-6, fraction*7.0/8*bytes/1e11 + 7e-6},
		{"all-reduce, NCCL", nccl, cluster.NCCLAllReduce, bytes, buckets,
			buckets * cluster.NCCLTune(p.ncclComm(nccl, l), cluster.NCCLAllReduce, bytes/buckets).Seconds,
			cluster.NCCLTune(p.ncclComm(nccl, l), cluster.NCCLAllReduce, fraction*bytes).Seconds},
		{"reduce-scatter, NCCL", nccl, cluster.NCCLReduceScatter, bytes, buckets,
			buckets * cluster.NCCLTune(p.ncclComm(nccl, l), cluster.NCCLReduceScatter, bytes/buckets).Seconds,
			cluster.NCCLTune(p.ncclComm(nccl, l), cluster.NCCLReduceScatter, fraction*bytes).Seconds},
		{"no bytes", nccl, cluster.NCCLAllReduce, 0, buckets, 0, 0},
		{"one member", dpRing{members: 1, nodes: 1}, cluster.NCCLAllReduce, bytes, buckets, 0, 0},
		{"no buckets", plain, cluster.NCCLAllReduce, bytes, 0, 0, 0},
	} {
		got, last := p.bucketed(tt.r, tt.f, tt.bytes, l, tt.buckets, fraction)
		if !nearlyEqual(got, tt.want) || !nearlyEqual(last, min(tt.want, tt.last)) {
			t.Errorf("%s: %v s, last bucket %v s; want %v, %v", tt.name, got, last, tt.want, min(tt.want, tt.last))
		}
		if _, last := p.bucketed(tt.r, tt.f, tt.bytes, l, tt.buckets, 0); last != 0 {
			t.Errorf("%s: fraction 0 gives a last bucket of %v s", tt.name, last)
		}
	}
}

func nearlyEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
