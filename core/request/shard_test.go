package request

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// TestShardingAliases: parallelism.zero 1 (the former field) is sharding zero1, fsdp is
// zero3, and the defaults (sharding none, context 1) are left out of the canonical
// encoding, so that requests written before these fields keep their ids.
func TestShardingAliases(t *testing.T) {
	id := func(r *wire.Request) string {
		t.Helper()
		s, err := ID(r)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := llamaRequest(4, 2, 1)
	old.Parallelism.ZeRO = 1
	now := llamaRequest(4, 2, 1)
	now.Parallelism.Sharding = "zero1"
	if id(old) != id(now) {
		t.Error("zero 1 and sharding zero1 have different ids")
	}
	n, err := Normalize(old)
	if err != nil || n.Parallelism.Sharding != "zero1" || n.Parallelism.ZeRO != 0 {
		t.Errorf("zero 1 normalizes to %+v (%v), want sharding zero1", n.Parallelism, err)
	}
	c, _ := Canonical(now)
	if !strings.Contains(string(c), `"zero":1`) || strings.Contains(string(c), "sharding") {
		t.Errorf("zero1's canonical encoding is not the former one: %s", c)
	}
	plain := llamaRequest(4, 2, 1)
	c, _ = Canonical(plain)
	for _, k := range []string{"sharding", "context", "prefetch", "shard_group"} {
		if strings.Contains(string(c), k) {
			t.Errorf("the canonical encoding of a request without sharding or context holds %q: %s", k, c)
		}
	}
	explicit := llamaRequest(4, 2, 1)
	explicit.Parallelism.Sharding, explicit.Parallelism.Context = "none", 1
	if id(plain) != id(explicit) {
		t.Error("sharding none and context 1 change the id")
	}
	fsdp, zero3 := llamaRequest(4, 2, 1), llamaRequest(4, 2, 1)
	fsdp.Parallelism.Sharding, zero3.Parallelism.Sharding = "fsdp", "zero3"
	zero3.Parallelism.Prefetch = PrefetchNextLayer
	if id(fsdp) != id(zero3) {
		t.Error("fsdp and zero3 (prefetch next-layer, the default) have different ids")
	}
}

// TestShardingMemory: the model state of a replica's devices (the stages' weights,
// gradients and optimizer state summed) per parameter, mixed-precision AdamW, over
// d = 8: 16 without sharding, 4 + 12/d with ZeRO-1, 2 + 14/d with ZeRO-2, 16/d with
// ZeRO-3 (Rajbhandari et al. 2020, section 5; ../shared/REFERENCES.md, 1(c)), and
// 16/d + 6 with ZeRO-3 holding its state through the step (parallelism.reshard step,
// the default on these 4 pipeline stages: DefaultReshard).
func TestShardingMemory(t *testing.T) {
	for _, c := range []struct {
		sharding string
		perParam float64
		reshard  string
	}{{"none", 16, ""}, {"zero1", 4 + 12.0/8, ""}, {"zero2", 2 + 14.0/8, ""}, {"zero3", 16.0 / 8, "layer"}, {"fsdp", 16.0 / 8, "layer"},
		// reshard step: the whole 16-bit weights and fp32 gradients beside the shards;
		// the default with pipeline stages.
		{"zero3", 16.0/8 + 2 + 4, "step"}, {"zero3", 16.0/8 + 2 + 4, ""}, {"fsdp", 16.0/8 + 2 + 4, ""}} {
		r := llamaRequest(4, 8, 1)
		r.Parallelism.Sharding, r.Parallelism.Reshard = c.sharding, c.reshard
		res := run(t, r)
		if res.Plan == nil {
			t.Fatalf("%s: no plan: %v", c.sharding, res.Diagnostics)
		}
		var state int64
		for _, s := range res.Plan.Stages {
			state += s.Memory.WeightsBytes + s.Memory.GradsBytes + s.Memory.OptimizerBytes
		}
		want := c.perParam * float64(res.Model.Params)
		if math.Abs(float64(state)-want) > 1e-6*want {
			t.Errorf("%s: %d bytes of state, want %.0f (%g per parameter)", c.sharding, state, want, c.perParam)
		}
	}
}

// TestShardingCommunication checks each sharding's data-parallel communication against
// NCCL's ring formulas over the link (d = 8 replicas over NVLink, 8 microbatches):
// without sharding an all-reduce of the gradients, one a DDP bucket; zero1 a reduce-scatter of the
// gradients and an all-gather of the weights (bf16: each half the all-reduce); zero2
// the reduce-scatter once per microbatch; zero3 nothing per step, but each layer's
// forward gains its all-gather (without prefetch) and its backward the all-gather and
// the reduce-scatter beside it, max(RS, B + share x RS) - B, where the reduce-scatter's
// NCCL CTAs take share of the SMs.
func TestShardingCommunication(t *testing.T) {
	link, _ := cluster.LookupLink("nvlink4")
	base := func(sharding string) *wire.Result {
		r := llamaRequest(4, 8, 1)
		r.Parallelism.Sharding = sharding
		r.Layers = true
		if sharding == "zero3" {
			r.Parallelism.Prefetch = PrefetchNone
		}
		n, err := Normalize(r)
		if err != nil {
			t.Fatal(err)
		}
		if n.Cluster.Link != link.Name {
			t.Fatalf("the data-parallel link is %s, the test expects %s", n.Cluster.Link, link.Name)
		}
		return run(t, r)
	}
	grads := func(res *wire.Result) float64 { return float64(res.Devices[0].GradBytes) }
	none := base("none")
	// Without sharding, eager PyTorch's DDP all-reduces in buckets of 25 MiB after a
	// first of 1 MiB, each paying the ring's latency, 2 x 7 steps of the link's.
	buckets := cluster.BucketCount(int64(grads(none)), cluster.DDPFirstBucketBytes, cluster.DDPBucketBytes)
	if g, w := none.Devices[0].AllReduceSeconds, cluster.RingAllReduceSeconds(link.Link, grads(none), 8)+float64(buckets-1)*14*link.LatencySeconds; !near(g, w) || buckets < 2 {
		t.Errorf("none: all-reduce %v s, want %v (%d buckets)", g, w, buckets)
	}
	z1 := base("zero1")
	d0 := z1.Devices[0]
	if g, w := d0.ReduceScatterSeconds, cluster.RingReduceScatterSeconds(link.Link, grads(z1), 8); !near(g, w) || d0.AllReduceSeconds != 0 {
		t.Errorf("zero1: reduce-scatter %v s, want %v (all-reduce %v)", g, w, d0.AllReduceSeconds)
	}
	if g, w := d0.AllGatherSeconds, cluster.RingAllGatherSeconds(link.Link, float64(d0.WeightBytes), 8); !near(g, w) || d0.WeightBytes != d0.GradBytes {
		t.Errorf("zero1: all-gather %v s, want %v (weights %d, gradients %d: both bf16)", g, w, d0.WeightBytes, d0.GradBytes)
	}
	z2 := base("zero2")
	if g, w := z2.Devices[0].ReduceScatterSeconds, 8*cluster.RingReduceScatterSeconds(link.Link, grads(z2), 8); !near(g, w) {
		t.Errorf("zero2: reduce-scatter %v s, want 8 microbatches' %v", g, w)
	}
	z3 := base("zero3")
	if st := z3.Step; st.DataParallelAllReduceSeconds+st.DataParallelReduceScatterSeconds+st.DataParallelAllGatherSeconds != 0 {
		t.Errorf("zero3: step communication %+v, want none (it is in the layers)", st)
	}
	lc, lz := none.Model.LayerCosts, z3.Model.LayerCosts
	dev, err := cluster.LookupDevice(llamaRequest(4, 8, 1).Cluster.Device)
	if err != nil {
		t.Fatal(err)
	}
	share := float64(cluster.CollectiveCTAs) / float64(dev.Perf.Multiprocessors)
	if share <= 0 || share >= 1 {
		t.Fatalf("the test expects an NVIDIA device with a multiprocessor count, got %q", dev.Name)
	}
	for i := range lc.ForwardSeconds {
		w := float64(lc.ParamBytes[i]) / 2 // bf16 weights and gradients
		ag := cluster.RingAllGatherSeconds(link.Link, w, 8)
		rs := cluster.RingReduceScatterSeconds(link.Link, w, 8)
		if g := lz.ForwardSeconds[i] - lc.ForwardSeconds[i]; !near(g, ag) {
			t.Errorf("zero3 layer %d: forward +%v s, want the all-gather %v", i, g, ag)
		}
		b := lc.BackwardSeconds[i] // the reduce-scatter's CTAs slow the backward beside it
		if g, want := lz.BackwardSeconds[i]-b, ag+max(rs, b+share*rs)-b; !near(g, want) {
			t.Errorf("zero3 layer %d: backward +%v s, want %v", i, g, want)
		}
	}
}

// TestHSDP: 16 replicas on nodes of 8: the default shard group is a node's 8 replicas,
// sharded over NVLink, and each device all-reduces its 1/8 of the gradients with its
// twin in the other group over InfiniBand (one NIC, at NCCL's PCIe rate to it).
func TestHSDP(t *testing.T) {
	r := llamaRequest(2, 16, 1)
	r.Cluster.DevicesPerNode = 8
	r.Parallelism.Sharding = "hsdp"
	n, err := Normalize(r)
	if err != nil {
		t.Fatal(err)
	}
	if n.Parallelism.ShardGroup != 8 || n.Parallelism.Prefetch != PrefetchNextLayer {
		t.Errorf("defaults: %+v", n.Parallelism)
	}
	res := run(t, r)
	ib, _ := cluster.LookupLink("ib-ndr")
	ib.Link.BytesPerSecond = 48e9 // the NIC reached over PCIe Gen5 x16 at NCCL's 48 GB/s (Topology.RingInter)
	for _, d := range res.Devices {
		shard := float64((d.GradBytes + 7) / 8)
		if w := cluster.RingAllReduceSeconds(ib.Link, shard, 2); !near(d.AllReduceSeconds, w) {
			t.Errorf("device %d: all-reduce across groups %v s, want %v", d.Device, d.AllReduceSeconds, w)
		}
	}
}

// TestContextParallelRequest: context parallelism over c devices uses p x d x t x c
// devices, plans the same samples, tokens and model FLOPs per step, and divides a
// block's activations by c.
func TestContextParallelRequest(t *testing.T) {
	req := func(c int) *wire.Request {
		r := llamaRequest(2, 1, 2)
		r.Model.Architecture.Seq = 16384
		r.Parallelism.Context = c
		r.Cluster.DevicesPerNode = 8
		r.Layers = true
		return r
	}
	one, four := run(t, req(1)), run(t, req(4))
	if four.Step.Devices != 16 || one.Step.Devices != 4 {
		t.Errorf("devices %d and %d, want 4 and 16", one.Step.Devices, four.Step.Devices)
	}
	if four.Step.TokensPerStep != one.Step.TokensPerStep || math.Abs(four.Step.ModelFLOPsPerStep/one.Step.ModelFLOPsPerStep-1) > 1e-9 {
		t.Errorf("tokens %d, %d; model FLOPs %g, %g: want the same", one.Step.TokensPerStep, four.Step.TokensPerStep, one.Step.ModelFLOPsPerStep, four.Step.ModelFLOPsPerStep)
	}
	if a, b := one.Model.LayerCosts.ActivationBytes[1], four.Model.LayerCosts.ActivationBytes[1]; 4*b != a {
		t.Errorf("a block keeps %d bytes at c=4, want 1/4 of %d", b, a)
	}
	n, _ := Normalize(req(4))
	if n.Parallelism.ContextMethod != "ring" {
		t.Errorf("context method %q, want ring", n.Parallelism.ContextMethod)
	}
}

// TestShardingAndContextRefused: invalid combinations are refused at the field's path
// with the reason.
func TestShardingAndContextRefused(t *testing.T) {
	for _, c := range []struct {
		edit         func(*wire.Request)
		path, reason string
	}{
		{func(r *wire.Request) { r.Parallelism.Sharding = "zero4" }, "parallelism.sharding", "must be one of none, zero1, zero2, zero3, fsdp, hsdp"},
		{func(r *wire.Request) { r.Parallelism.Data, r.Parallelism.Sharding = 1, "zero3" }, "parallelism.sharding", "needs parallelism.data (or parallelism.context) >= 2"},
		{func(r *wire.Request) { r.Parallelism.ZeRO, r.Parallelism.Sharding = 1, "zero3" }, "parallelism.zero", "give sharding alone"},
		{func(r *wire.Request) { r.Parallelism.ZeRO = 3 }, "parallelism.zero", "give parallelism.sharding"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.Prefetch = "zero1", "none" }, "parallelism.prefetch", "goes with sharding zero3 or hsdp"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.Prefetch = "zero3", "all" }, "parallelism.prefetch", "must be next-layer or none"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.Reshard = "zero2", "step" }, "parallelism.reshard", "goes with sharding zero3 or hsdp"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.Reshard = "zero3", "never" }, "parallelism.reshard", "must be layer or step"},
		{func(r *wire.Request) {
			r.Model = wire.ModelSpec{Example: "gpt2-medium"}
			r.Parallelism.Sharding, r.Parallelism.Reshard = "zero3", "step"
		}, "parallelism.reshard", "step needs model.architecture"},
		{func(r *wire.Request) { r.Parallelism.Sharding = "hsdp" }, "parallelism.shard_group", "give the replicas in a shard group"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.ShardGroup = "hsdp", 3 }, "parallelism.shard_group", "must divide parallelism.data (4)"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.ShardGroup = "hsdp", 4 }, "parallelism.shard_group", "use sharding zero3"},
		{func(r *wire.Request) { r.Parallelism.Sharding, r.Parallelism.ShardGroup = "zero3", 2 }, "parallelism.shard_group", "goes with sharding hsdp"},
		{func(r *wire.Request) {
			r.Parallelism.Sharding = "zero2"
			r.Training.Mode, r.Schedule.Name = "inference", "inference"
		}, "parallelism.sharding", "inference"},
		{func(r *wire.Request) { r.Parallelism.Context = 3 }, "parallelism.context", "must divide the sequence (4096 tokens)"},
		{func(r *wire.Request) { r.Model.Architecture.Seq, r.Parallelism.Context = 4000, 32 }, "parallelism.context", "2 x 32 must divide the sequence (4000 tokens)"},
		{func(r *wire.Request) { r.Parallelism.Context, r.Parallelism.ContextMethod = 16, "all-to-all" }, "parallelism.context", "num_kv_heads"},
		{func(r *wire.Request) { r.Parallelism.ContextMethod = "ring" }, "parallelism.context_method", "goes with parallelism.context >= 2"},
		{func(r *wire.Request) { r.Parallelism.Context, r.Parallelism.ContextMethod = 2, "star" }, "parallelism.context_method", "must be ring, all-to-all, hierarchical or all-gather"},
		{func(r *wire.Request) { r.Parallelism.Context = -1 }, "parallelism.context", "must be between 1 and"},
		{func(r *wire.Request) {
			r.Parallelism.Context, r.Parallelism.Tensor = 3, 4
			r.Cluster.DevicesPerNode = 8
		}, "parallelism.context", "(3 x 4) must divide cluster.devices_per_node (8), or be whole nodes"},
		{func(r *wire.Request) {
			r.Model = wire.ModelSpec{Example: "gpt2-medium"}
			r.Parallelism.Context = 2
		}, "parallelism.context", "a measured profile's cannot be split"},
	} {
		r := llamaRequest(2, 4, 1)
		c.edit(r)
		_, err := Run(context.Background(), r)
		if !hasFieldError(err, c.path, c.reason) {
			t.Errorf("%s: error %v, want one at %s saying %q", c.path, err, c.path, c.reason)
		}
	}
}
