package evaluate

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestMemoryBoundRecomputeExact: on a grid where memory binds (Llama-2-7B with 4,096
// tokens on up to 4 H100s, half of each device's memory) and recomputation is searched,
// the search finds the best and the Pareto front that planning every candidate finds.
// What a stage holds depends on recomputation (full recomputation keeps only the stage
// inputs), so candidates that differ in it must not share what fits (MemoryKey): were
// they to, a size that does not fit without recomputation would be taken as not fitting
// with it, and the search would miss the fastest configurations, which recompute to fit
// larger microbatches.
func TestMemoryBoundRecomputeExact(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, Tensor: 1, ZeRO: &zero, Schedule: "1f1b", MemoryProportions: []float64{0.5},
		MicrobatchesPerStage: []int{2}, MaxMicrobatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Recomputes, []string{"none", "selective", "full"}) {
		t.Fatalf("recomputation searched over %v", s.Recomputes)
	}
	got, ex := prunedAndExhaustive(t, s, ev)
	if ex.Best == nil {
		t.Fatal("nothing fits")
	}
	// The grid is memory-bound, and recomputation decides what fits: the best recomputes,
	// at a microbatch size that does not fit without it.
	fits := map[string]bool{}
	for _, o := range ex.Evaluated {
		fits[o.Candidate.String()] = o.Feasible
	}
	without := ex.Best.Candidate
	without.Recompute = "none"
	if ex.Best.Recompute == "none" || fits[without.String()] {
		t.Fatalf("the exhaustive best %s does not need recomputation to fit: the grid does not test the memory key", ex.Best.Candidate)
	}
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
		t.Errorf("best %v, exhaustive %s (%.6g/s)", got.Best, ex.Best.Candidate, ex.Best.SamplesPerSecond)
	}
	if len(got.Pareto) != len(ex.Pareto) {
		t.Fatalf("Pareto front of %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
	}
	for i := range ex.Pareto {
		if got.Pareto[i].Candidate != ex.Pareto[i].Candidate {
			t.Errorf("Pareto point %d: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
		}
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	t.Logf("best %s: %.2f samples/s; planned %d of %d", got.Best.Candidate, got.Best.SamplesPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated)
}

// TestMemoryBoundAutoExact: recompute auto in the same memory-bound grid as
// TestMemoryBoundRecomputeExact. Its candidates are bounded in memory by each layer's
// leanest options (autoMemory): every auto candidate CannotFit rules out is one the
// planner finds no split for, the bound rules some out, and the search finds the best
// and the Pareto front that planning every candidate finds.
func TestMemoryBoundAutoExact(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, Tensor: 1, ZeRO: &zero, Schedule: "1f1b", MemoryProportions: []float64{0.25, 0.5},
		MicrobatchesPerStage: []int{2}, MaxMicrobatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	s.Recomputes = append(s.Recomputes, "auto")
	got, ex := prunedAndExhaustive(t, s, ev)
	if ex.Best == nil {
		t.Fatal("nothing fits")
	}
	autos, ruledOut, infeasible := 0, 0, 0
	for _, o := range ex.Evaluated {
		if o.Candidate.Recompute != "auto" {
			continue
		}
		autos++
		cannot := ev.CannotFit(o.Candidate)
		if cannot && o.Feasible {
			t.Errorf("%s: CannotFit, but it fits: %v", o.Candidate, o.Boundaries)
		}
		if !o.Feasible {
			infeasible++
			if cannot {
				ruledOut++
			}
		}
	}
	if autos == 0 || ruledOut == 0 {
		t.Fatalf("%d auto candidates, %d do not fit, %d ruled out: the bound is not tested", autos, infeasible, ruledOut)
	}
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
		t.Errorf("best %v, exhaustive %s (%.6g/s)", got.Best, ex.Best.Candidate, ex.Best.SamplesPerSecond)
	}
	if len(got.Pareto) != len(ex.Pareto) {
		t.Fatalf("Pareto front of %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
	}
	for i := range ex.Pareto {
		if got.Pareto[i].Candidate != ex.Pareto[i].Candidate {
			t.Errorf("Pareto point %d: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
		}
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	t.Logf("best %s: %.2f samples/s; planned %d of %d; %d auto candidates, %d do not fit, CannotFit rules out %d", got.Best.Candidate, got.Best.SamplesPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated, autos, infeasible, ruledOut)
}

// TestMemoryBoundAutoInterleavedExact: recompute auto under an interleaved schedule
// (Llama-3.2-1B with 4,096 tokens on up to 4 H100s, a quarter of each device's memory),
// whose chunks share their device's memory: the grid holds such candidates (core/plan
// plans them), every one CannotFit rules out fits no split, and the search finds the
// best and the Pareto front that planning every candidate finds.
func TestMemoryBoundAutoInterleavedExact(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, Tensor: 1, ZeRO: &zero, Schedule: "interleaved:2",
		MemoryProportions: []float64{0.25}, MicrobatchesPerStage: []int{2}, MaxMicrobatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	s.Recomputes = append(s.Recomputes, "auto")
	got, ex := prunedAndExhaustive(t, s, ev)
	if ex.Best == nil {
		t.Fatal("nothing fits")
	}
	autos, fit := 0, 0
	for _, o := range ex.Evaluated {
		if o.Candidate.Recompute != "auto" || o.Candidate.Pipeline < 2 {
			continue
		}
		autos++
		if o.Feasible {
			fit++
		}
		if ev.CannotFit(o.Candidate) && o.Feasible {
			t.Errorf("%s: CannotFit, but it fits: %v", o.Candidate, o.Boundaries)
		}
	}
	if autos == 0 || fit == 0 {
		t.Fatalf("%d interleaved auto candidates, %d fit: the grid does not test them", autos, fit)
	}
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
		t.Errorf("best %v, exhaustive %s (%.6g/s)", got.Best, ex.Best.Candidate, ex.Best.SamplesPerSecond)
	}
	if len(got.Pareto) != len(ex.Pareto) {
		t.Fatalf("Pareto front of %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
	}
	for i := range ex.Pareto {
		if got.Pareto[i].Candidate != ex.Pareto[i].Candidate {
			t.Errorf("Pareto point %d: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
		}
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	t.Logf("best %s: %.2f samples/s; planned %d of %d; %d interleaved auto candidates, %d fit", got.Best.Candidate, got.Best.SamplesPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated, autos, fit)
}

// TestMemoryKeyPipelineStageBuffers: under a framework that runs PyTorch's pipelining
// (eager: cluster.Framework.PipelineStageBuffers) a stage holds two boundary tensors
// per microbatch of the step, so 1F1B candidates of 4 stages with 8 and 16 microbatches
// (4 in flight on the first stage either way) need different memory and must not share
// what fits; under megatron, whose stages hold no such buffers, they share a key. A run
// of each shows the difference: the 16-microbatch step leaves less headroom.
func TestMemoryKeyPipelineStageBuffers(t *testing.T) {
	for _, k := range []struct {
		framework string
		differ    bool
	}{{"eager", true}, {"megatron", false}} {
		base := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096, Framework: k.framework}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		}
		ev, err := New(base)
		if err != nil {
			t.Fatal(err)
		}
		c := search.Candidate{Config: search.Config{Pipeline: 4, Data: 1, Tensor: 1, Schedule: "1f1b", Recompute: "full", Microbatches: 8}, MicrobatchSize: 1}
		d := c
		d.Microbatches = 16
		if got := ev.MemoryKey(c) != ev.MemoryKey(d); got != k.differ {
			t.Errorf("%s: 8 and 16 microbatches have different memory keys: %v, want %v", k.framework, got, k.differ)
		}
		headroom := func(c search.Candidate) int64 {
			t.Helper()
			o, err := ev.Evaluate(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Feasible {
				t.Fatalf("%s: %s does not fit", k.framework, c)
			}
			return o.HeadroomBytes
		}
		if grew := headroom(d) < headroom(c); grew != k.differ {
			t.Errorf("%s: 16 microbatches hold more memory than 8: %v, want %v", k.framework, grew, k.differ)
		}
	}
}

// TestMemoryKeyIsSprintf: MemoryKey, written by strconv, is the string
// fmt.Sprintf("%d/%d/%s/%d/%s/%d/%d/%d/%s/%d/%g/%t", ...) made of the same parts, for
// every candidate of Llama-3-8B's space over 16 H100s (64 sequences a step) and for each with context
// parallelism, an interleaved schedule, another memory proportion and HSDP's shard group.
func TestMemoryKeyIsSprintf(t *testing.T) {
	ev, s := llama(t, "meta-llama-3-8b", 16, 64)
	cs, err := s.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	want := func(c search.Candidate) string {
		sc, _ := schedule.Parse(c.Schedule)
		inFlight := c.Microbatches
		switch {
		case ev.train && ev.framework.PipelineStageBuffers && c.Pipeline >= 2:
		case sc.Kind == schedule.OneFOneB || sc.Kind == schedule.ZBH1:
			inFlight = min(c.Microbatches, c.Pipeline)
		case sc.Kind == schedule.Interleaved && c.Recompute != request.RecomputeAuto && c.Pipeline > 0 && c.Microbatches%c.Pipeline == 0:
			inFlight = min(c.Microbatches, 3*c.Pipeline)
		}
		z := 0
		if c.ZeRO >= 1 {
			z = shardDegree(c.Config)
		}
		return fmt.Sprintf("%d/%d/%s/%d/%s/%d/%d/%d/%s/%d/%g/%t", c.Tensor, c.Pipeline, sc, inFlight, c.Recompute, c.ZeRO, z, c.Context, ev.methodOf(c.Config), c.Expert, c.MemoryProportion, c.ShardGroup > 0)
	}
	n := 0
	for i, c := range cs {
		variants := []search.Candidate{c}
		if i%7 == 0 {
			v := c
			v.Context, v.MemoryProportion, v.Schedule, v.ZeRO, v.ShardGroup, v.Expert = 2, 0.875, "interleaved:2", 3, 2, 4
			variants = append(variants, v)
			v.MemoryProportion, v.Context = 1e-7, 1
			variants = append(variants, v)
		}
		for _, v := range variants {
			if got, w := ev.MemoryKey(v), want(v); got != w {
				t.Fatalf("%s: MemoryKey %q, Sprintf %q", v, got, w)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("compared %d keys", n)
	}
	t.Logf("%d keys", n)
}
