package request

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// TestReduceDTypeFP32: with parallelism.reduce_dtype fp32 (PyTorch FSDP2's
// MixedPrecisionPolicy reduce_dtype=torch.float32, as torchtitan runs it) each layer's
// reduce-scatter moves its gradients in fp32, twice the bf16 bytes, and its all-gathers
// are unchanged: in closed form, per layer and microbatch, 2 AG(w) + RS(2g) against
// 2 AG(w) + RS(g), from the estimate's own bytes and NCCL's ring formulas over the
// request's link; the forward, which holds no reduce-scatter, is priced the same.
func TestReduceDTypeFP32(t *testing.T) {
	const base = `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},
		"cluster":{"device":"h100-sxm","count":4,"devices_per_node":4,"link_intra":"ib-hdr"},
		"parallelism":{"data":4,"sharding":"zero3"%s},"schedule":{"microbatches":1}}`
	plain, fp32 := strings.Replace(base, "%s", "", 1), strings.Replace(base, "%s", `,"reduce_dtype":"fp32"`, 1)
	o, err := EstimateOneStage(context.Background(), decode(t, plain))
	if err != nil {
		t.Fatal(err)
	}
	link, err := cluster.LookupLink("ib-hdr")
	if err != nil {
		t.Fatal(err)
	}
	if e := o.Estimate.Opts.GradBytesPerParam(); e != 2 {
		t.Fatalf("bf16 gradients of %v bytes a parameter, want 2", e)
	}
	var want16, want32 float64
	for i := range o.Estimate.Layers {
		w, g := o.Estimate.FullBytes(i)
		ag := cluster.RingAllGatherSeconds(link.Link, float64(w), 4)
		want16 += 2*ag + cluster.RingReduceScatterSeconds(link.Link, float64(g), 4)
		want32 += 2*ag + cluster.RingReduceScatterSeconds(link.Link, 2*float64(g), 4)
	}
	for _, tt := range []struct {
		name, req string
		want      float64
	}{{"bf16 (default)", plain, want16}, {"fp32", fp32, want32}} {
		res, err := Run(context.Background(), decode(t, tt.req))
		if err != nil {
			t.Fatal(err)
		}
		if res.Step == nil {
			t.Fatalf("%s: no step: %v", tt.name, res.Diagnostics)
		}
		if got := res.Step.DataParallelLayerSeconds; !near(got, tt.want) {
			t.Errorf("%s: per-layer collectives %v s, want sum of 2 AG + RS = %v s", tt.name, got, tt.want)
		}
	}
	if !(want32 > want16) {
		t.Fatalf("the fp32 reduce-scatters (%v s) do not outlast the bf16 (%v s): the case tells nothing", want32, want16)
	}
}

// TestReduceDTypeFP32HSDP: under hsdp the all-reduce of each device's gradient shard
// across the groups moves it in the reduce dtype too (FSDP2 all-reduces the
// reduce-scatter's fp32 output): ringAllReduce over the groups of ceil(4/e x G / n), G the
// whole gradients (the tied embedding's once).
func TestReduceDTypeFP32HSDP(t *testing.T) {
	const req = `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},
		"cluster":{"device":"h100-sxm","count":4,"devices_per_node":2,"link_intra":"ib-hdr","link_inter":"ib-edr"},
		"parallelism":{"data":4,"sharding":"hsdp","shard_group":2%s}}`
	across, err := cluster.LookupLink("ib-edr")
	if err != nil {
		t.Fatal(err)
	}
	var grads int64
	for i, dtype := range []string{"", `,"reduce_dtype":"fp32"`} {
		res, err := Run(context.Background(), decode(t, strings.Replace(req, "%s", dtype, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Step == nil {
			t.Fatalf("no step: %v", res.Diagnostics)
		}
		if i == 0 {
			o, err := EstimateOneStage(context.Background(), decode(t, strings.Replace(req, "%s", "", 1)))
			if err != nil {
				t.Fatal(err)
			}
			for l := range o.Estimate.Layers {
				_, g := o.Estimate.FullBytes(l)
				grads += g
			}
			_, tied := o.Estimate.TiedFullBytes() // the tied embedding's, once
			grads += tied
		}
		bytes := float64(grads) * float64(1+i) // fp32: twice the bf16 gradients
		want := ringAllReduce(2, int64(math.Ceil(bytes/2)), &across.Link, 0)
		if got := res.Step.DataParallelAllReduceSeconds; !near(got, want) {
			t.Errorf("reduce_dtype %q: the all-reduce across the groups takes %v s, want %v s", dtype, got, want)
		}
	}
}

// TestReduceDTypeRefused: reduce_dtype goes with zero3 and hsdp in training, on an
// architecture, and is fp32 or empty; fully_shard goes with zero3 and hsdp.
func TestReduceDTypeRefused(t *testing.T) {
	for _, tt := range []struct{ name, req, want string }{
		{"fully_shard with zero2", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"h100-sxm","count":2},
			"parallelism":{"data":2,"sharding":"zero2","fully_shard":true}}`, "parallelism.fully_shard: goes with sharding zero3 or hsdp"},
		{"zero1", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"h100-sxm","count":2},
			"parallelism":{"data":2,"sharding":"zero1","reduce_dtype":"fp32"}}`, "parallelism.reduce_dtype: goes with sharding zero3 or hsdp"},
		{"bf16", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"h100-sxm","count":2},
			"parallelism":{"data":2,"sharding":"zero3","reduce_dtype":"bf16"}}`, `parallelism.reduce_dtype: must be fp32`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), decode(t, tt.req))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ...%s...", err, tt.want)
			}
		})
	}
}

// TestShardingFields: wire.ShardingFields, the list the page keeps on a change of
// sharding, is what core's checks accept, brute force over every sharding mode (and the
// alias fsdp) and every parallelism field that goes with some of them: a training
// request of an architecture with one field set (to a value core takes) is accepted
// exactly where the list names the field, and refused by the field's path elsewhere.
func TestShardingFields(t *testing.T) {
	values := map[string]string{"prefetch": `"none"`, "reshard": `"step"`, "reduce_dtype": `"fp32"`,
		"fully_shard": `true`, "shard_group": `2`}
	for _, mode := range append(wire.ShardingModes(), "fsdp") {
		for field, v := range values {
			t.Run(mode+"/"+field, func(t *testing.T) {
				req := `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"h100-sxm","count":8,"devices_per_node":2},
					"schedule":{"microbatches":4},"parallelism":{"data":4,"sharding":"` + mode + `","` + field + `":` + v + `}}`
				_, err := Normalize(decode(t, req))
				want := slices.Contains(wire.ShardingFields(mode), field)
				switch {
				case want && err != nil:
					t.Errorf("refused where wire.ShardingFields(%q) lists %s: %v", mode, field, err)
				case !want && (err == nil || !strings.Contains(err.Error(), "parallelism."+field)):
					t.Errorf("got %v, want parallelism.%s refused: wire.ShardingFields(%q) = %v", err, field, mode, wire.ShardingFields(mode))
				}
			})
		}
	}
	if got := wire.ShardingFields("zero4"); got != nil {
		t.Errorf("ShardingFields(zero4) = %v, want none", got)
	}
}
