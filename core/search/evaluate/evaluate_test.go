package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// graphcoreProfile is a ModelInfo profile (Graphcore's auto-pipeline tool's format) of 12 layers measured at
// microbatch size 1 for inference: cycles, code that does not grow with the batch
// (vertexCode), and temporaries and outputs that do.
func graphcoreProfile() json.RawMessage {
	var names, infos []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("%q", fmt.Sprint(i)))
		infos = append(infos, fmt.Sprintf(`{"cycle": {"forward": %d, "backward": 0}, "memory": {"shared": {}, "exclusive": {"vertexCode": %d},
			"inputs": %d, "outputs": %d, "maxTemporary": %d, "curCarryOver": 0, "curActivation": 0}}`,
			20000*(1+i%3), 60<<20, 1<<20, 1<<20, (6+i%4)<<20))
	}
	return json.RawMessage(fmt.Sprintf(`{"layerName": [%s], "layerType": [%s], "layerInfo": [%s]}`,
		strings.Join(names, ","), strings.Join(names, ","), strings.Join(infos, ",")))
}

// TestGraphcoreExampleGrid runs Graphcore's auto-pipeline tool's example grid: devices 1, 2, 4, memory proportion 0.3,
// 0.6 and 1, batch 1..127 (binary-searched), for inference of a Graphcore profile on
// GC200 IPUs, the profile scaled with the batch (ScaleProfile). The search finds the
// best that planning all 1143 candidates finds, planning fewer: times scale linearly with
// the batch, so throughput is nearly flat in it and bounds separate little.
func TestGraphcoreExampleGrid(t *testing.T) {
	base := &wire.Request{
		Model:    wire.ModelSpec{Document: graphcoreProfile(), Name: "seed000"},
		Cluster:  wire.ClusterSpec{Device: "gc200"},
		Training: wire.Training{Mode: wire.ModeInference},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, Replicas: 1, Microbatches: 4, MaxMicrobatchSize: 127, MemoryProportions: []float64{0.3, 0.6, 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines = []int{1, 2, 4}
	got, ex := prunedAndExhaustive(t, s, ev)
	if ex.Stats.Evaluated != 3*3*127 || got.Best == nil {
		t.Fatalf("exhaustive planned %d, best %v", ex.Stats.Evaluated, got.Best)
	}
	if got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
		t.Errorf("best %s (%.6g/s), exhaustive %s (%.6g/s)", got.Best.Candidate, got.Best.SamplesPerSecond, ex.Best.Candidate, ex.Best.SamplesPerSecond)
	}
	if len(got.Pareto) != len(ex.Pareto) {
		t.Errorf("Pareto %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
	}
	if got.Stats.BoundViolations != 0 || ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	if got.Stats.Evaluated*3 > ex.Stats.Evaluated {
		t.Errorf("best %s after %d plans", got.Best.Candidate, got.Stats.Evaluated)
	}
	// Throughput is nearly flat in the batch: the best is the candidate with the most
	// headroom within search.NearTie of the fastest, by brute force over every candidate.
	fastest := 0.0
	for _, o := range ex.Evaluated {
		if o.Feasible {
			fastest = max(fastest, o.SamplesPerSecond)
		}
	}
	for _, o := range ex.Evaluated {
		if o.Feasible && o.SamplesPerSecond >= fastest*(1-search.NearTie) && o.HeadroomBytes > got.Best.HeadroomBytes {
			t.Errorf("%s is within 1%% of the fastest with %d bytes of headroom, more than the best's %d", o.Candidate, o.HeadroomBytes, got.Best.HeadroomBytes)
		}
	}
	if got.Best.SamplesPerSecond < fastest*(1-search.NearTie) {
		t.Errorf("best %s: %v samples/s, more than 1%% below the fastest %v", got.Best.Candidate, got.Best.SamplesPerSecond, fastest)
	}
	t.Logf("best %s: %.1f samples/s; planned %d of %d", got.Best.Candidate, got.Best.SamplesPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated)
	for _, o := range ex.Evaluated {
		if !o.Feasible && o.Reason == "" {
			t.Fatalf("%s infeasible without a reason", o.Candidate)
		}
	}
	replan(t, ev, got.Best)
}

// replan plans the best's request alone: the same throughput.
// prunedAndExhaustive runs the search over s twice, pruned as users run it and
// exhaustively (every candidate planned), for tests that hold the first to the second.
func prunedAndExhaustive(t *testing.T, s search.Space, ev *Evaluator) (got, ex *search.Report) {
	t.Helper()
	got, err := search.Run(context.Background(), s, ev, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, err = search.Run(context.Background(), s, ev, search.Options{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	return got, ex
}

func replan(t *testing.T, ev *Evaluator, best *search.Outcome) {
	t.Helper()
	q, err := ev.Request(best.Candidate)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	q, err = request.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	res, err := request.Run(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Feasible || res.Step.SamplesPerSecond != best.SamplesPerSecond {
		t.Errorf("the best's request alone: %v samples/s, the search said %v", res.Step.SamplesPerSecond, best.SamplesPerSecond)
	}
}

// TestLlamaSmall: a small grid of Llama-3.2-1B on 8 H100s in one node: the search finds
// exhaustive's best, its request replans to the same throughput, and no bound is broken.
func TestLlamaSmall(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 32, MaxMicrobatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipelines = []int{1, 2, 4}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	if len(got.Pareto) != len(ex.Pareto) {
		t.Errorf("Pareto %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
	}
	t.Logf("best %s: %.0f tokens/s, MFU %.1f%%; planned %d of %d", got.Best.Candidate, got.Best.TokensPerSecond, 100*got.Best.MFU, got.Stats.Evaluated, ex.Stats.Evaluated)
	replan(t, ev, got.Best)
}

// TestFreeLinksScaleLinearly: with free transfers the data-parallel all-reduce costs
// nothing, and d replicas run d times the samples per second.
func TestFreeLinksScaleLinearly(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", FreeTransfers: true},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	c := search.Candidate{Config: search.Config{Pipeline: 2, Data: 1, Tensor: 1, Schedule: "1f1b", Recompute: "none", MemoryProportion: 1, Microbatches: 8}, MicrobatchSize: 2}
	one, err := ev.Evaluate(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{2, 4, 8} {
		c.Data = d
		o, err := ev.Evaluate(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if r := o.SamplesPerSecond / one.SamplesPerSecond; math.Abs(r-float64(d)) > 1e-9*float64(d) {
			t.Errorf("d=%d: %.12g times the throughput of one replica", d, r)
		}
	}
}

// TestTwinSelective: with flash attention (the default) selective recomputation keeps
// what none keeps, so Twin names the candidate without recomputation, and both plan to
// the same outcome; with eager attention it drops the attention scores: no twin.
func TestTwinSelective(t *testing.T) {
	for _, attention := range []string{"", "eager"} {
		base := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048, Attention: attention}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
		}
		ev, err := New(base)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []search.Candidate{
			{Config: search.Config{Pipeline: 2, Data: 2, Tensor: 2, Schedule: "1f1b", Recompute: "selective", ZeRO: 1, MemoryProportion: 1, Microbatches: 8}, MicrobatchSize: 4},
			{Config: search.Config{Pipeline: 4, Data: 1, Tensor: 1, Schedule: "interleaved:2", Recompute: "selective", MemoryProportion: 0.5, Microbatches: 8}, MicrobatchSize: 16},
		} {
			twin, ok := ev.Twin(c)
			if ok != (attention == "") {
				t.Fatalf("attention %q, %s: twin %v", attention, c, ok)
			}
			if !ok {
				continue
			}
			want := c
			want.Recompute = "none"
			if twin != want {
				t.Fatalf("%s: twin %s", c, twin)
			}
			a, err := ev.Evaluate(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ev.Evaluate(context.Background(), twin)
			if err != nil {
				t.Fatal(err)
			}
			if a.Feasible != b.Feasible || a.SamplesPerSecond != b.SamplesPerSecond || !reflect.DeepEqual(a.Boundaries, b.Boundaries) || a.HeadroomBytes != b.HeadroomBytes {
				t.Errorf("%s: %+v, its twin %+v", c, a, b)
			}
		}
		if _, ok := ev.Twin(search.Candidate{Config: search.Config{Pipeline: 2, Data: 1, Tensor: 1, Schedule: "1f1b", Recompute: "full", MemoryProportion: 1, Microbatches: 8}, MicrobatchSize: 1}); ok {
			t.Error("full recomputation has a twin")
		}
	}
}

// TestCannotFitIsNecessary: on grids with tight memory, every candidate CannotFit rules
// out is one the planner finds no split for (its lower bound on memory never exceeds
// what a plan needs), and it rules out most that do not fit; Refine is at most Bound and
// at least the planned throughput.
func TestCannotFitIsNecessary(t *testing.T) {
	for _, base := range []*wire.Request{
		{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4}},
		// Tied embeddings (shared bytes), dropout, eager attention on a smaller device.
		{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "gpt2-medium", Seq: 1024, Attention: "eager"}},
			Cluster: wire.ClusterSpec{Device: "a100-40gb", DevicesPerNode: 4}},
	} {
		cannotFitIsNecessary(t, base)
	}
}

func cannotFitIsNecessary(t *testing.T, base *wire.Request) {
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 64, MaxMicrobatchSize: 32, MemoryProportions: []float64{0.08, 0.15, 0.3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	// The global modes: auto's bound is TestMemoryBoundAutoExact's (its plans are slower,
	// and every candidate here is planned).
	s.Recomputes = slices.DeleteFunc(s.Recomputes, func(rc string) bool { return rc == "auto" })
	cs, err := s.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	var ruledOut, infeasible, n, refined int
	for _, c := range cs {
		n++
		o, err := ev.Evaluate(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		cannot := ev.CannotFit(c)
		if cannot && o.Feasible {
			t.Fatalf("%s: CannotFit, but it fits: %v", c, o.Boundaries)
		}
		u, err := ev.Bound(c)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ev.Refine(c)
		if err != nil {
			t.Fatal(err)
		}
		if v > u || (o.Feasible && o.SamplesPerSecond > v*(1+1e-9)) {
			t.Fatalf("%s: %v samples/s, bound %v, refined %v", c, o.SamplesPerSecond, u, v)
		}
		if o.Feasible && v < u {
			refined++
		}
		if !o.Feasible {
			infeasible++
			if cannot {
				ruledOut++
			}
		}
	}
	t.Logf("%s: %d candidates, %d do not fit, CannotFit rules out %d; Refine is below Bound for %d that fit", base.Model.Architecture.Name, n, infeasible, ruledOut, refined)
	if infeasible == 0 || ruledOut*2 < infeasible {
		t.Errorf("CannotFit rules out %d of the %d that do not fit", ruledOut, infeasible)
	}
}

// TestLongContextSearch: a long-sequence grid (Llama-3.2-1B, s = 32,768, on 8 H100s in
// one node) searches context parallelism (c = 1, 2, 4, 8 by default) and every ZeRO
// stage beside p, d and t: the search finds exhaustive's best and Pareto front, no bound
// is broken, CannotFit rules out only candidates that do not fit, and the best's request
// replans to the same throughput.
func TestLongContextSearch(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 32768}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2, MemoryProportions: []float64{0.3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Contexts, []int{1, 2, 4, 8}) || !reflect.DeepEqual(s.ZeROs, []int{0, 1, 2, 3}) {
		t.Fatalf("contexts %v, ZeRO stages %v", s.Contexts, s.ZeROs)
	}
	s.Pipelines = []int{1, 2}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 || len(got.Pareto) != len(ex.Pareto) {
		t.Errorf("bound violations %d, %d; Pareto %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations, len(got.Pareto), len(ex.Pareto))
	}
	contexts := map[int]bool{}
	for _, o := range ex.Evaluated {
		if o.Feasible {
			contexts[max(1, o.Context)] = true
		}
		if o.Feasible && ev.CannotFit(o.Candidate) {
			t.Errorf("%s: CannotFit, but it fits", o.Candidate)
		}
	}
	if len(contexts) < 2 {
		t.Errorf("feasible candidates only at context %v", contexts)
	}
	t.Logf("best %s: %.0f tokens/s, MFU %.1f%%; planned %d of %d", got.Best.Candidate, got.Best.TokensPerSecond, 100*got.Best.MFU, got.Stats.Evaluated, ex.Stats.Evaluated)
	replan(t, ev, got.Best)
}

// TestMoESearch: the search covers expert parallelism for a mixture of experts
// (Qwen1.5-MoE-A2.7B on two nodes of 8 H100s), with the all-to-alls exposed, and
// overlapped through DeepEP: it finds exhaustive's best with no bound broken, its
// request replans to the same throughput, and the best splits the experts.
func TestMoESearch(t *testing.T) {
	for _, par := range []wire.Parallelism{{}, {ExpertOverlap: true, ExpertDispatcher: "deepep"}} {
		moeSearch(t, &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "qwen1.5-moe-a2.7b", Seq: 4096}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: par,
		})
	}
}

func moeSearch(t *testing.T, base *wire.Request) {
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 16, GlobalBatch: 64, MaxMicrobatchSize: 4, Schedule: "1f1b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 3, 4, 5, 6, 10, 12, 15}; !slices.Equal(s.Experts, want) {
		t.Errorf("experts %v, want the divisors of 60 up to 16: %v", s.Experts, want)
	}
	s.Pipelines, s.Tensors, s.Recomputes = []int{1, 2, 4}, []int{1, 2}, []string{"none", "full"}
	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
		t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
	}
	if got.Best.Expert < 2 {
		t.Errorf("best %s does not split the experts", got.Best.Candidate)
	}
	t.Logf("best %s: %.0f tokens/s, MFU %.1f%%; planned %d of %d", got.Best.Candidate, got.Best.TokensPerSecond, 100*got.Best.MFU, got.Stats.Evaluated, ex.Stats.Evaluated)
	replan(t, ev, got.Best)
	q, err := ev.Request(got.Best.Candidate)
	if err != nil {
		t.Fatal(err)
	}
	if q.Parallelism.Expert != got.Best.Expert || q.Parallelism.ExpertDispatcher != base.Parallelism.ExpertDispatcher ||
		q.Parallelism.ExpertOverlap != (base.Parallelism.ExpertOverlap && got.Best.Recompute != "full") {
		t.Errorf("the best's request has %+v; the candidate %s, the base %+v", q.Parallelism, got.Best.Candidate, base.Parallelism)
	}
}

func TestCannotFitIsNecessaryMoE(t *testing.T) {
	cannotFitIsNecessary(t, &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "qwen1.5-moe-a2.7b", Seq: 2048}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 4},
	})
}

// TestDefaultGlobalBatch: with no batch knob the search fixes the global batch, so that
// every candidate's throughput is of the same samples per step: the base request's
// (as core normalizes it: 4 microbatches per pipeline device), else 4 per device at
// hand; microbatches (or microbatches_per_stage) let it vary, as before.
func TestDefaultGlobalBatch(t *testing.T) {
	arch := wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b"}}
	for _, tc := range []struct {
		name  string
		base  *wire.Request
		knobs wire.SearchKnobs
		want  int
		rule  string
	}{
		{"the base's samples per step", &wire.Request{Model: arch, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8}, Schedule: wire.Schedule{MicrobatchSize: 2}},
			wire.SearchKnobs{MaxDevices: 8}, 2 * 4 * 8, "the planned request's samples per step"},
		{"the base's replicas", &wire.Request{Model: arch, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8}, Parallelism: wire.Parallelism{Data: 4}},
			wire.SearchKnobs{MaxDevices: 8}, 4 * 2 * 4, "the planned request's samples per step"},
		{"4 per device without a count", &wire.Request{Model: arch, Cluster: wire.ClusterSpec{Device: "h100-sxm"}},
			wire.SearchKnobs{MaxDevices: 16}, 64, "4 samples per device at hand"},
		{"given", &wire.Request{Model: arch, Cluster: wire.ClusterSpec{Device: "h100-sxm"}},
			wire.SearchKnobs{MaxDevices: 16, GlobalBatch: 32}, 32, "given"},
		{"free with microbatches", &wire.Request{Model: arch, Cluster: wire.ClusterSpec{Device: "h100-sxm"}},
			wire.SearchKnobs{MaxDevices: 16, MicrobatchesPerStage: []int{2}}, 0, ""},
	} {
		ev, err := New(tc.base)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s, err := ev.Space(tc.knobs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.GlobalBatch != tc.want || !strings.HasPrefix(s.GlobalBatchRule, tc.rule) {
			t.Errorf("%s: global batch %d (%q), want %d (%q...)", tc.name, s.GlobalBatch, s.GlobalBatchRule, tc.want, tc.rule)
		}
	}
}
