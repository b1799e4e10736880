package request

import (
	"context"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/plan"
)

// TestStageMemoryOneNotion: for an architecture, a stage's memory is everything its
// device holds at the step's peak (the model's tensors, the optimizer's temporaries when
// they outgrow the passes, the allocator's reserve, the framework's fixed memory), the
// limit is the device's memory (the framework's memory replaces the preset's 95%), the
// per-stage and the per-device tables agree, and the breakdown adds up exactly.
func TestStageMemoryOneNotion(t *testing.T) {
	h100, _ := cluster.LookupDevice("h100-sxm")
	fw, _ := cluster.LookupFramework(cluster.Eager)
	for _, tc := range []struct {
		name, req string
		phase     string // the peak's phase of stage 0
	}{
		{"passes", `{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048}}, "cluster": {"device": "h100-sxm", "count": 4},
			"schedule": {"microbatch_size": 4}}`, plan.PhasePasses},
		{"optimizer", `{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 128}}, "cluster": {"device": "h100-sxm", "count": 2}}`, plan.PhaseOptimizer},
		{"tied gpt2, data parallel, zero", `{"model": {"architecture": {"name": "gpt2-xl", "seq": 1024}}, "cluster": {"device": "h100-sxm", "count": 8},
			"parallelism": {"data": 2, "zero": 1}, "training": {"precision": "mixed-fp32-grads"}}`, ""},
		{"compiled, amp, recompute", `{"model": {"architecture": {"name": "llama-2-7b", "seq": 4096, "framework": "compiled"}}, "cluster": {"device": "h100-sxm", "count": 4},
			"training": {"precision": "amp", "recompute": "full"}}`, ""},
	} {
		res := runJSON(t, tc.req)
		pl, sr := res.Plan, res.Schedule
		for i, s := range pl.Stages {
			if s.LimitBytes != h100.MemoryBytes {
				t.Errorf("%s: stage %d limit %d, want the device's memory %d", tc.name, i, s.LimitBytes, h100.MemoryBytes)
			}
			if s.MemoryBytes != sr.PeakMemoryBytes[i] || s.LimitBytes != sr.LimitBytes[i] {
				t.Errorf("%s: stage %d needs %d of %d, the schedule's device %d peaks at %d of %d", tc.name, i, s.MemoryBytes, s.LimitBytes, i, sr.PeakMemoryBytes[i], sr.LimitBytes[i])
			}
			m := s.Memory
			if m.Total() != s.MemoryBytes {
				t.Errorf("%s: stage %d memory %d, breakdown %+v adds up to %d", tc.name, i, s.MemoryBytes, m, m.Total())
			}
			if m.FrameworkBytes != fw.FixedBytes || s.FrameworkBytes != fw.FixedBytes {
				t.Errorf("%s: stage %d framework %d bytes, want %d", tc.name, i, m.FrameworkBytes, fw.FixedBytes)
			}
			if m.OtherBytes != 0 {
				t.Errorf("%s: stage %d has %d bytes the breakdown does not place", tc.name, i, m.OtherBytes)
			}
			alloc := s.MemoryBytes - s.FrameworkBytes - s.ReservedBytes
			if want := (alloc*2 + 99) / 100; s.ReservedBytes != want {
				t.Errorf("%s: stage %d reserve %d, want 2%% of the allocated %d: %d", tc.name, i, s.ReservedBytes, alloc, want)
			}
		}
		if tc.phase != "" && pl.Stages[0].Memory.Phase != tc.phase {
			t.Errorf("%s: stage 0 peaks in the %s phase, want %s: %+v", tc.name, pl.Stages[0].Memory.Phase, tc.phase, pl.Stages[0])
		}
	}
}

// TestOneStageIsTheEstimate: one stage running one microbatch needs exactly what the
// estimate says the device holds at the step's peak.
func TestOneStageIsTheEstimate(t *testing.T) {
	for _, req := range []string{
		`{"model": {"architecture": {"name": "gpt2", "seq": 1024}}, "cluster": {"device": "a100-80gb", "count": 1}, "schedule": {"microbatches": 1, "microbatch_size": 8}}`,
		`{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 256}}, "cluster": {"device": "h100-sxm", "count": 1}, "schedule": {"microbatches": 1}}`,
		`{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 256}}, "cluster": {"device": "h100-sxm", "count": 1}, "training": {"mode": "inference"}}`,
	} {
		r := decode(t, req)
		res := runJSON(t, req)
		est, err := Estimate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Plan.Stages[0].MemoryBytes, est.Total.PeakDeviceBytes; got != want {
			t.Errorf("%s: one stage needs %d bytes, the estimate's device peak is %d", req, got, want)
		}
	}
}

// TestUsableFraction: measured profiles and TPUs keep the presets' 95% (their runtime's
// memory is not costed), and a fraction a cluster document states is kept.
func TestUsableFraction(t *testing.T) {
	a100, _ := cluster.LookupDevice("a100-80gb")
	want95 := int64(float64(a100.MemoryBytes) * 0.95)
	res := runJSON(t, `{"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 2}}`)
	if got := res.Plan.Stages[0].LimitBytes; got != want95 || res.Plan.Stages[0].FrameworkBytes != 0 {
		t.Errorf("a profile on a preset: limit %d (framework %d), want the preset's 95%%: %d", got, res.Plan.Stages[0].FrameworkBytes, want95)
	}
	doc := `{"devices": [{"name": "a100-80gb", "usable_fraction": 0.9}, {"name": "a100-80gb"}], "links": [{"latency_seconds": 3e-6, "bytes_per_second": 3e11}]}`
	res = runJSON(t, `{"model": {"architecture": {"name": "gpt2", "seq": 1024}}, "cluster": {"document": `+doc+`}}`)
	if got, want := res.Plan.Stages[0].LimitBytes, int64(float64(a100.MemoryBytes)*0.9); got != want {
		t.Errorf("a stated usable_fraction: limit %d, want %d", got, want)
	}
	if got := res.Plan.Stages[1].LimitBytes; got != a100.MemoryBytes {
		t.Errorf("a preset device of a document: limit %d, want all of its %d bytes (the framework is counted)", got, a100.MemoryBytes)
	}
}
