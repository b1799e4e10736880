package request

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestTPCommOverlapConfig: parallelism.tp_comm_overlap_config te-default is the
// request without it (one id, one step); a tuned config of the run's shape
// (Megatron-Bridge's userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 on Llama 3.1 70B,
// TP 4, H100) prices a shorter step than the defaults (its bulk overlaps leave their
// products every multiprocessor, where the defaults leave 16 to the communication)
// and is recorded by PricedOverlaps; a bad value names the field: unknown, without
// the userbuffers overlap, for inference, for another device or precision; a config
// named for another tensor degree is taken.
func TestTPCommOverlapConfig(t *testing.T) {
	base := func(cfg string) *wire.Request {
		return &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.1-70b", Seq: 8192, Framework: "cuda-graphs"}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 64, DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 8, Tensor: 4, Data: 2, ZeRO: 1, SequenceParallel: true, OverlapTensorComm: OverlapOn,
				TPCommOverlapConfig: cfg},
			Training: wire.Training{Precision: "mixed-fp32-grads", Recompute: "selective"},
			Schedule: wire.Schedule{Name: "interleaved:5", Microbatches: 64, MicrobatchSize: 1},
		}
	}
	step := func(r *wire.Request) float64 {
		t.Helper()
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Feasible {
			t.Fatalf("does not fit: %v", res.Diagnostics)
		}
		return res.Step.StepSeconds
	}
	idOf := func(r *wire.Request) string {
		t.Helper()
		s, err := ID(r)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const tuned = "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192"
	if a, b := idOf(base("")), idOf(base("te-default")); a != b {
		t.Errorf("te-default has id %s, the request without it %s", b, a)
	}
	if idOf(base(tuned)) == idOf(base("")) {
		t.Error("a tuned config has the defaults' id")
	}
	def, tu := step(base("")), step(base(tuned))
	if !(tu < def) {
		t.Errorf("tuned config %g s, defaults %g s: the tuned bulk overlaps leave their products every multiprocessor", tu, def)
	}
	// A tp4 config at TP 8 is taken and priced with its per-GEMM settings, as
	// Megatron-Bridge's GB300 Llama 3.1 405B recipes ran a tp4 config at TP 2 (the
	// name's shape never reaches initialize_ub).
	at8 := func(cfg string) *wire.Request {
		r := base(cfg)
		r.Parallelism.Tensor, r.Parallelism.Pipeline = 8, 4
		return r
	}
	if d8, t8 := step(at8("")), step(at8(tuned)); !(t8 < d8) {
		t.Errorf("tp4 config at TP 8: %g s, defaults %g s: want the tuned config's settings priced", t8, d8)
	}
	n, err := Normalize(base(tuned))
	if err != nil {
		t.Fatal(err)
	}
	if ov := PricedOverlaps(n); ov.TensorCommMethod != OverlapUserbuffers || ov.TensorCommConfig != tuned {
		t.Errorf("PricedOverlaps: %+v", ov)
	}
	for _, c := range []struct {
		name string
		edit func(*wire.Request)
		want string
	}{
		{"unknown", func(r *wire.Request) { r.Parallelism.TPCommOverlapConfig = "userbuffers_h100" }, "must be te-default or one of"},
		{"overlap off", func(r *wire.Request) { r.Parallelism.OverlapTensorComm = OverlapOff }, "not priced with it"},
		{"inference", func(r *wire.Request) {
			r.Training = wire.Training{Mode: wire.ModeInference}
			r.Schedule.Name = "inference"
			r.Parallelism.OverlapTensorComm = ""
		}, "applies to training"},
		{"device", func(r *wire.Request) { r.Cluster.Device = "b200" }, "device h100, the run's is b200"},
		{"fp8 config, bf16 run", func(r *wire.Request) {
			r.Parallelism.TPCommOverlapConfig = "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192"
		}, "fp8 products"},
	} {
		r := base(tuned)
		c.edit(r)
		_, err := Run(context.Background(), r)
		var es model.Errors
		ok := errors.As(err, &es)
		found := false
		for _, e := range es {
			if e.Path == "parallelism.tp_comm_overlap_config" && strings.Contains(e.Reason, c.want) {
				found = true
			}
		}
		if !ok || !found {
			t.Errorf("%s: got %v, want parallelism.tp_comm_overlap_config saying %q", c.name, err, c.want)
		}
	}
}
