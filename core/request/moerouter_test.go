package request

import (
	"testing"

	"pipeplan/core/wire"
)

// TestMoERouterAndBucketApplies: MoEAuxLossApplies, MoEForceLoadBalancingApplies and
// DPBucketBytesApplies, read on Normalize's normal form, are true exactly where
// Normalize takes training.moe_aux_loss, training.moe_force_load_balancing and
// parallelism.dp_bucket_bytes: a mixture under Megatron-Core's router (megatron,
// cuda-graphs, deepspeed, none), the loss in training only, the bucket size in training.
func TestMoERouterAndBucketApplies(t *testing.T) {
	req := func(name, framework, mode string) *wire.Request {
		return &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "b200", Count: 8},
			Model:    wire.ModelSpec{Architecture: &wire.Architecture{Name: name, Framework: framework}},
			Training: wire.Training{Mode: mode}}
	}
	const moe, dense = "mixtral-8x7b-v0.1", "llama-3.2-1b"
	for _, c := range []struct {
		name               string
		r                  *wire.Request
		aux, force, bucket bool
	}{
		{"a mixture under megatron", req(moe, "megatron", ""), true, true, true},
		{"a mixture under cuda-graphs", req(moe, "cuda-graphs", ""), true, true, true},
		{"a mixture under deepspeed", req(moe, "deepspeed", ""), true, true, true},
		{"a mixture under none", req(moe, "none", ""), true, true, true},
		{"a mixture under eager (HuggingFace's router)", req(moe, "eager", ""), false, false, true},
		{"a mixture under compiled", req(moe, "compiled", ""), false, false, true},
		{"a mixture, the default framework", req(moe, "", ""), false, false, true},
		{"a mixture's inference under megatron", req(moe, "megatron", "inference"), false, true, false},
		{"a dense model under megatron", req(dense, "megatron", ""), false, false, true},
		{"a profile", &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 4},
			Model: wire.ModelSpec{Example: "gpt2-medium"}}, false, false, true},
	} {
		n, err := Normalize(c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := MoEAuxLossApplies(n); got != c.aux {
			t.Errorf("%s: moe_aux_loss applies %v, want %v", c.name, got, c.aux)
		}
		if got := MoEForceLoadBalancingApplies(n); got != c.force {
			t.Errorf("%s: moe_force_load_balancing applies %v, want %v", c.name, got, c.force)
		}
		if got := DPBucketBytesApplies(n); got != c.bucket {
			t.Errorf("%s: dp_bucket_bytes applies %v, want %v", c.name, got, c.bucket)
		}
		for _, f := range []struct {
			field string
			set   func(r *wire.Request)
			want  bool
		}{
			{"training.moe_aux_loss", func(r *wire.Request) { r.Training.MoEAuxLoss = "seq_aux_loss" }, c.aux},
			{"training.moe_force_load_balancing", func(r *wire.Request) { r.Training.MoEForceLoadBalancing = true }, c.force},
			{"parallelism.dp_bucket_bytes", func(r *wire.Request) { r.Parallelism.DPBucketBytes = 40 << 20 }, c.bucket},
		} {
			r := *c.r
			if r.Model.Architecture != nil {
				ar := *r.Model.Architecture
				r.Model.Architecture = &ar
			}
			f.set(&r)
			if err := Validate(&r); (err == nil) != f.want {
				t.Errorf("%s with %s: Normalize says %v, want taken %v", c.name, f.field, err, f.want)
			}
		}
	}
}

// TestMegatronBucketFieldsApply: CheckForNaNInGradApplies and DPBucketElementsApplies,
// read on Normalize's normal form, are true exactly where Normalize takes
// training.check_for_nan_in_grad and parallelism.dp_bucket_elements: training an
// architecture under a framework with Megatron-Core's buckets (megatron, cuda-graphs),
// the bucket size only without parallelism.dp_bucket_bytes.
func TestMegatronBucketFieldsApply(t *testing.T) {
	req := func(framework, mode string, bytes int64) *wire.Request {
		return &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Framework: framework}},
			Parallelism: wire.Parallelism{DPBucketBytes: bytes}, Training: wire.Training{Mode: mode}}
	}
	for _, c := range []struct {
		name          string
		r             *wire.Request
		nan, elements bool
	}{
		{"megatron", req("megatron", "", 0), true, true},
		{"cuda-graphs", req("cuda-graphs", "", 0), true, true},
		{"megatron with dp_bucket_bytes", req("megatron", "", 40<<20), true, false},
		{"deepspeed", req("deepspeed", "", 0), false, false},
		{"eager", req("eager", "", 0), false, false},
		{"compiled", req("compiled", "", 0), false, false},
		{"the default framework", req("", "", 0), false, false},
		{"megatron's inference", req("megatron", "inference", 0), false, false},
		{"a profile", &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 4},
			Model: wire.ModelSpec{Example: "gpt2-medium"}}, false, false},
	} {
		n, err := Normalize(c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := CheckForNaNInGradApplies(n); got != c.nan {
			t.Errorf("%s: check_for_nan_in_grad applies %v, want %v", c.name, got, c.nan)
		}
		if got := DPBucketElementsApplies(n); got != c.elements {
			t.Errorf("%s: dp_bucket_elements applies %v, want %v", c.name, got, c.elements)
		}
		for _, f := range []struct {
			field string
			set   func(r *wire.Request)
			want  bool
		}{
			{"training.check_for_nan_in_grad", func(r *wire.Request) { r.Training.CheckForNaNInGrad = true }, c.nan},
			{"parallelism.dp_bucket_elements", func(r *wire.Request) { r.Parallelism.DPBucketElements = 1 << 20 }, c.elements},
		} {
			r := *c.r
			if r.Model.Architecture != nil {
				ar := *r.Model.Architecture
				r.Model.Architecture = &ar
			}
			f.set(&r)
			if err := Validate(&r); (err == nil) != f.want {
				t.Errorf("%s with %s: Normalize says %v, want taken %v", c.name, f.field, err, f.want)
			}
		}
	}
}
