package request

import (
	"context"
	"pipeplan/core/wire"
	"strings"
	"testing"
)

// TestOverlapTensorComm: parallelism.overlap_tensor_comm hides tensor parallelism's
// communication behind the products (Megatron-LM's --tp-comm-overlap): the step is
// shorter, it is off by default (here in the Megatron-style mode), it is off in every
// framework mode, it needs sequence parallelism, and a bad value names its field
// (core/analytic's TestTensorCommOverlap checks what a layer hides). Its methods: on is
// Transformer Engine's userbuffers in the Megatron-style mode and PyTorch's async TP
// with torch.compile (core/analytic's TestTensorCommAsync and TestUserbuffersChunks), and
// async-tp is refused without torch.compile.
func TestOverlapTensorComm(t *testing.T) {
	base := func(overlap string, sp bool) *wire.Request {
		return &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096, Framework: "cuda-graphs"}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", Count: 8, DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 2, Tensor: 4, SequenceParallel: sp, OverlapTensorComm: overlap},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 8, MicrobatchSize: 1},
		}
	}
	step := func(r *wire.Request) *wire.Result {
		t.Helper()
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Feasible {
			t.Fatalf("does not fit: %v", res.Diagnostics)
		}
		return res
	}
	def, off, on := step(base("", true)), step(base("off", true)), step(base("on", true))
	if def.Step.StepSeconds != off.Step.StepSeconds {
		t.Errorf("default %g s, off %g s: the default is off", def.Step.StepSeconds, off.Step.StepSeconds)
	}
	saved := off.Step.StepSeconds - on.Step.StepSeconds
	if !(saved > 0) {
		t.Errorf("overlapped %g s, not faster than %g s", on.Step.StepSeconds, off.Step.StepSeconds)
	}
	if ub := step(base(OverlapUserbuffers, true)); ub.Step.StepSeconds != on.Step.StepSeconds {
		t.Errorf("on %g s, userbuffers %g s: on is the Megatron-style mode's Transformer Engine overlap", on.Step.StepSeconds, ub.Step.StepSeconds)
	}
	compiled := func(overlap string) *wire.Request {
		r := base(overlap, true)
		r.Model.Architecture.Framework = "compiled"
		r.Schedule.MicrobatchSize = 4 // products of 16,384 rows, 4,096 a chunk
		return r
	}
	mode := func(framework, overlap string) *wire.Request {
		r := base(overlap, true)
		r.Model.Architecture.Framework = framework
		return r
	}
	cOff, cOn, cAsync, cUB := step(compiled("off")), step(compiled("on")), step(compiled(OverlapAsyncTP)), step(compiled(OverlapUserbuffers))
	if cOn.Step.StepSeconds != cAsync.Step.StepSeconds {
		t.Errorf("compiled: on %g s, async-tp %g s: on is torch.compile's async TP", cOn.Step.StepSeconds, cAsync.Step.StepSeconds)
	}
	// Each hides communication. Which hides more depends on the shapes: async TP
	// leaves Llama's summed input gradients' reduce-scatters exposed and quantizes its
	// chunks' waves, userbuffers' pipelined and bulk overlaps leave their products 16
	// fewer multiprocessors (core/analytic's userbuffersChunks).
	if !(cUB.Step.StepSeconds < cOff.Step.StepSeconds && cAsync.Step.StepSeconds < cOff.Step.StepSeconds) {
		t.Errorf("compiled: userbuffers %g s, async-tp %g s, off %g s: want each faster than off", cUB.Step.StepSeconds, cAsync.Step.StepSeconds, cOff.Step.StepSeconds)
	}
	for _, c := range []struct {
		r    *wire.Request
		want string
	}{
		{base("", true), ""}, {base("on", true), OverlapUserbuffers}, {compiled("on"), OverlapAsyncTP},
		{compiled(OverlapUserbuffers), OverlapUserbuffers}, {compiled("off"), ""}, {mode("megatron", "on"), OverlapUserbuffers},
		{mode("eager", "on"), OverlapUserbuffers},
	} {
		n, err := Normalize(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := PricedOverlaps(n); got.TensorCommMethod != c.want || got.TensorComm != (c.want != "") {
			t.Errorf("%s, overlap %q: priced %+v, want method %q", c.r.Model.Architecture.Framework, c.r.Parallelism.OverlapTensorComm, got, c.want)
		}
	}
	for _, c := range []struct {
		r    *wire.Request
		path string
	}{
		{base("on", false), "parallelism.overlap_tensor_comm"},
		{base("yes", true), "parallelism.overlap_tensor_comm"},
		{base(OverlapAsyncTP, true), "parallelism.overlap_tensor_comm"}, // async TP needs torch.compile
		{mode("eager", OverlapAsyncTP), "parallelism.overlap_tensor_comm"},
		{mode("megatron", OverlapAsyncTP), "parallelism.overlap_tensor_comm"},
		{compiled(OverlapAsyncTP), ""},
	} {
		_, err := Run(context.Background(), c.r)
		if c.path == "" {
			if err != nil {
				t.Errorf("overlap %q: %v", c.r.Parallelism.OverlapTensorComm, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.path) {
			t.Errorf("overlap %q, sequence parallel %v: error %v, want one naming %s", c.r.Parallelism.OverlapTensorComm, c.r.Parallelism.SequenceParallel, err, c.path)
		}
	}
}
