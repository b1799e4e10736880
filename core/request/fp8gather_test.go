package request

import (
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestFP8FSDPAllGatherNormalize: training.fp8_fsdp_all_gather stays in the normal form
// of a torchtitan-style run (fp8, FSDP2 over 8 replicas, compiled), and is refused,
// naming it, where torchao's FSDP2 float8 all-gather does not run: FSDP over context
// devices alone (torchtitan's dp_shard 1, whatever the CP degree), HSDP with one replica
// a shard group, bf16, a mixture of experts, framework megatron, no fully_shard, fp8 primary weights
// beside it (training.fp8_param_gather: no 16-bit weight for torchao to cast).
func TestFP8FSDPAllGatherNormalize(t *testing.T) {
	base := func() *wire.Request {
		return &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 8192, DType: "fp8", Framework: "compiled"}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", Count: 16, DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 1, Data: 16, Sharding: "fsdp", FullyShard: true, ReduceDType: ReduceFP32},
			Training:    wire.Training{Recompute: "full", FP8FSDPAllGather: true},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 1, MicrobatchSize: 1},
		}
	}
	n, err := Normalize(base())
	if err != nil {
		t.Fatal(err)
	}
	if !n.Training.FP8FSDPAllGather {
		t.Error("the normal form dropped training.fp8_fsdp_all_gather")
	}
	for _, tt := range []struct {
		name, want string
		edit       func(r *wire.Request)
	}{
		{"CP 8 over dp_shard 1", "dp_shard > 1", func(r *wire.Request) {
			r.Cluster.Count = 8
			r.Parallelism.Data, r.Parallelism.Context, r.Parallelism.ContextMethod = 1, 8, "all-gather"
			r.Model.Architecture.Seq = 65536
		}},
		{"HSDP shard group 1", "dp_shard > 1", func(r *wire.Request) {
			r.Parallelism.Sharding, r.Parallelism.ShardGroup = "hsdp", 1
		}},
		{"bf16", "applies to dtype fp8", func(r *wire.Request) { r.Model.Architecture.DType = "bf16" }},
		{"mxfp8", "per-tensor recipe", func(r *wire.Request) {
			r.Model.Architecture.DType, r.Training.FP8Recipe = "", "mxfp8"
			r.Cluster.Device = "b200"
		}},
		{"experts", "dense architectures", func(r *wire.Request) { r.Model.Architecture.Name = "mixtral-8x7b" }},
		{"megatron", "framework \"megatron\"", func(r *wire.Request) { r.Model.Architecture.Framework = "megatron" }},
		{"fp8 primary weights", "fp8_param_gather", func(r *wire.Request) { r.Training.FP8ParamGather = true }},
		{"FSDP1", "fully_shard", func(r *wire.Request) { r.Parallelism.FullyShard, r.Parallelism.ReduceDType = false, "" }},
		{"zero1", "zero3 or hsdp", func(r *wire.Request) {
			r.Parallelism.Sharding, r.Parallelism.FullyShard, r.Parallelism.ReduceDType = "zero1", false, ""
		}},
	} {
		r := base()
		tt.edit(r)
		_, err := Normalize(r)
		if err == nil || !strings.Contains(err.Error(), "training.fp8_fsdp_all_gather: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one on training.fp8_fsdp_all_gather saying %q", tt.name, err, tt.want)
		}
	}
}
