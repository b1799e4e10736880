package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestCrossEntropyDefaultSameID: model.architecture.cross_entropy spelled out as the
// framework mode's own kernel (unfused for eager and compiled, fused-inplace for
// cuda-graphs and megatron) means the request that leaves it out: the same canonical
// form and id. Another kernel has another id.
func TestCrossEntropyDefaultSameID(t *testing.T) {
	for _, c := range []struct{ framework, own, other string }{
		{"eager", "unfused", "fused"},
		{"compiled", "unfused", "vocab-parallel"},
		{"cuda-graphs", "fused-inplace", "unfused"},
		{"megatron", "fused-inplace", "vocab-parallel"},
	} {
		id := func(ce string) string {
			r := llamaRequest(2, 1, 1)
			r.Model.Architecture.Framework = c.framework
			r.Model.Architecture.CrossEntropy = ce
			s, err := ID(r)
			if err != nil {
				t.Fatalf("%s %q: %v", c.framework, ce, err)
			}
			return s
		}
		if a, b := id(""), id(c.own); a != b {
			t.Errorf("%s: cross_entropy %s (the mode's own) has id %s, left out %s", c.framework, c.own, b, a)
		}
		if a, b := id(""), id(c.other); a == b {
			t.Errorf("%s: cross_entropy %s has the id of the mode's own", c.framework, c.other)
		}
	}
}

// TestCrossEntropyInferenceRefused: inference computes no loss, so a loss kernel is
// refused naming model.architecture.cross_entropy rather than ignored.
func TestCrossEntropyInferenceRefused(t *testing.T) {
	for _, ce := range []string{"unfused", "fused", "fused-inplace", "vocab-parallel"} {
		r := llamaRequest(2, 1, 1)
		r.Training.Mode, r.Schedule.Name = wire.ModeInference, "inference"
		r.Model.Architecture.CrossEntropy = ce
		_, err := Run(context.Background(), r)
		fes, _ := model.AsFieldErrors(err)
		found := false
		for _, e := range fes {
			found = found || e.Path == "model.architecture.cross_entropy" && strings.Contains(e.Reason, "inference")
		}
		if !found {
			t.Errorf("%s for inference: error %v, want model.architecture.cross_entropy refused", ce, err)
		}
	}
}

// TestTensorOverlapMethodSameID: parallelism.overlap_tensor_comm naming the framework
// mode's own method (async-tp for compiled, userbuffers for the others) means "on": the
// same id. The other method has another id.
func TestTensorOverlapMethodSameID(t *testing.T) {
	for _, c := range []struct{ framework, own, other string }{
		{"compiled", OverlapAsyncTP, OverlapUserbuffers},
		{"eager", OverlapUserbuffers, ""},
		{"cuda-graphs", OverlapUserbuffers, ""},
		{"megatron", OverlapUserbuffers, ""},
	} {
		id := func(v string) string {
			r := llamaRequest(2, 1, 2)
			r.Model.Architecture.Framework = c.framework
			r.Parallelism.SequenceParallel = true
			r.Parallelism.OverlapTensorComm = v
			s, err := ID(r)
			if err != nil {
				t.Fatalf("%s %q: %v", c.framework, v, err)
			}
			return s
		}
		on := id(OverlapOn)
		if got := id(c.own); got != on {
			t.Errorf("%s: overlap_tensor_comm %s (the mode's own) has id %s, on %s", c.framework, c.own, got, on)
		}
		if c.other != "" && id(c.other) == on {
			t.Errorf("%s: overlap_tensor_comm %s has the id of on", c.framework, c.other)
		}
	}
}

// TestPricedOverlapsInference: inference is priced with no overlap (no gradients to
// reduce or weights to gather after an update, and the tensor-parallel overlap is
// priced in training only: build.go), so PricedOverlaps, which the exports state as
// priced, says none whatever the framework's defaults say (eager's and compiled's
// data-parallel overlaps are on; the fields themselves are refused for inference).
func TestPricedOverlapsInference(t *testing.T) {
	for _, fw := range []string{"eager", "compiled", "megatron"} {
		r := llamaRequest(2, 2, 2)
		r.Training.Mode, r.Schedule.Name = wire.ModeInference, "inference"
		r.Model.Architecture.Framework = fw
		n, err := Normalize(r)
		if err != nil {
			t.Fatal(err)
		}
		if o := PricedOverlaps(n); o != (Overlaps{}) {
			t.Errorf("%s inference: priced overlaps %+v, want none", fw, o)
		}
	}
}

// TestDeepSpeedBF16FP32Refused: deepspeed-bf16 with dtype fp32 is refused by the reason
// that holds for it (it needs bf16), not by the other 16-bit precisions' advice to use
// bf16 or fp16 (fp16 is refused too).
func TestDeepSpeedBF16FP32Refused(t *testing.T) {
	r := llamaRequest(2, 1, 1)
	r.Model.Architecture.DType = "fp32"
	r.Training.Precision = "deepspeed-bf16"
	_, err := Run(context.Background(), r)
	fes, _ := model.AsFieldErrors(err)
	if len(fes) != 1 || fes[0].Path != "training.precision" || !strings.Contains(fes[0].Reason, "needs dtype bf16, got fp32") {
		t.Errorf("deepspeed-bf16 with fp32: error %v, want one training.precision error: needs dtype bf16, got fp32", err)
	}
}

// TestOverlapsInferenceRefused: inference has no gradients to reduce or weights to
// gather after an update, and is priced without the tensor-parallel overlap, so each
// parallelism.overlap_* field is refused naming it rather than ignored.
func TestOverlapsInferenceRefused(t *testing.T) {
	for _, c := range []struct {
		field string
		set   func(*wire.Parallelism)
	}{
		{"parallelism.overlap_grad_reduce", func(p *wire.Parallelism) { p.OverlapGradReduce = OverlapOn }},
		{"parallelism.overlap_param_gather", func(p *wire.Parallelism) { p.OverlapParamGather = OverlapOff }},
		{"parallelism.overlap_tensor_comm", func(p *wire.Parallelism) { p.OverlapTensorComm = OverlapUserbuffers }},
	} {
		r := llamaRequest(2, 2, 2)
		r.Training.Mode, r.Schedule.Name = wire.ModeInference, "inference"
		r.Parallelism.SequenceParallel = true
		c.set(&r.Parallelism)
		_, err := Run(context.Background(), r)
		fes, _ := model.AsFieldErrors(err)
		if len(fes) != 1 || fes[0].Path != c.field || !strings.Contains(fes[0].Reason, "inference") {
			t.Errorf("%s for inference: error %v, want one on the field, saying why", c.field, err)
		}
	}
}

// TestOverlapDefaultsSameID: an overlap field stating its framework mode's default
// (eager and compiled overlap the data-parallel reduction and gather, cuda-graphs and
// megatron do not; no mode overlaps tensor parallelism's communication by default) has
// the id of the request that leaves it out; the other value has another.
func TestOverlapDefaultsSameID(t *testing.T) {
	for _, fw := range []string{"eager", "compiled", "cuda-graphs", "megatron"} {
		on := fw == "eager" || fw == "compiled"
		for _, field := range []string{"grad", "param", "tensor"} {
			id := func(v string) string {
				r := llamaRequest(2, 2, 2)
				r.Model.Architecture.Framework = fw
				r.Parallelism.SequenceParallel = true
				switch field {
				case "grad":
					r.Parallelism.OverlapGradReduce = v
				case "param":
					r.Parallelism.Sharding, r.Parallelism.OverlapParamGather = "zero1", v
				default:
					r.Parallelism.OverlapTensorComm = v
				}
				s, err := ID(r)
				if err != nil {
					t.Fatalf("%s %s %q: %v", fw, field, v, err)
				}
				return s
			}
			def, other := OverlapOff, OverlapOn
			if on && field != "tensor" {
				def, other = OverlapOn, OverlapOff
			}
			if id(def) != id("") {
				t.Errorf("%s: %s overlap %s (the default) has another id than left out", fw, field, def)
			}
			if id(other) == id("") {
				t.Errorf("%s: %s overlap %s has the default's id", fw, field, other)
			}
		}
	}
}
