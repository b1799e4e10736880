package evaluate

import (
	"testing"

	"pipeplan/core/wire"
)

// TestDeepSpeedPipelineEngineSearch: a search whose base request runs framework
// deepspeed leaves out what DeepSpeed's PipelineEngine cannot run and core refuses
// (request.PipelineEngineRefusal): on two or more stages every candidate is 1F1B with
// ZeRO stage 0 or 1, while one stage keeps the other schedules' and shardings'
// configurations. The search runs to the end (no candidate's refusal stops it) and
// finds exhaustive enumeration's best with no bound broken.
func TestDeepSpeedPipelineEngineSearch(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048, Framework: "deepspeed"}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, GlobalBatch: 8, MaxMicrobatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines, s.ZeROs, s.ShardGroups, s.Recomputes = []int{1, 2, 4}, []int{0, 1, 2, 3}, nil, []string{"none"}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || ex.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations %d, %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	var oneStageZeRO3, piped int
	for _, o := range ex.Evaluated {
		switch {
		case o.Pipeline >= 2 && (o.ZeRO >= 2 || o.Schedule != "1f1b"):
			t.Errorf("%s: planned, though DeepSpeed's PipelineEngine cannot run it", o.Candidate)
		case o.Pipeline >= 2:
			piped++
		case o.ZeRO == 3:
			oneStageZeRO3++
		}
	}
	if piped == 0 || oneStageZeRO3 == 0 {
		t.Errorf("%d pipelined candidates and %d one-stage ZeRO-3 ones planned: the test tests nothing", piped, oneStageZeRO3)
	}
}

// TestDeepSpeedTensorCommSearch: a search whose base request runs framework deepspeed
// with parallelism.overlap_tensor_comm on, which core refuses with tensor parallelism
// (request.TensorCommRefusal: Megatron-DeepSpeed has no userbuffers), leaves out every
// tensor-parallel candidate rather than fail on it, and plans the others.
func TestDeepSpeedTensorCommSearch(t *testing.T) {
	base := &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048, Framework: "deepspeed"}},
		Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		Parallelism: wire.Parallelism{OverlapTensorComm: "on", SequenceParallel: true},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, GlobalBatch: 8, MaxMicrobatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines, s.Tensors, s.ZeROs, s.ShardGroups, s.Recomputes = []int{1, 2}, []int{1, 2}, []int{0}, nil, []string{"none"}
	_, ex := prunedAndExhaustive(t, s, ev)
	if ex.Best == nil {
		t.Fatal("no best")
	}
	planned := 0
	for _, o := range ex.Evaluated {
		if o.Tensor > 1 {
			t.Errorf("%s: planned, though core refuses its tensor-parallel overlap", o.Candidate)
		}
		planned++
	}
	if planned == 0 {
		t.Error("nothing planned: the test tests nothing")
	}
}
