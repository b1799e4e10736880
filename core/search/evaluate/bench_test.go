package evaluate

import (
	"context"
	"testing"

	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// llama is the search for an architecture on nodes of 8 H100s joined by InfiniBand NDR.
func llama(tb testing.TB, name string, devices, globalBatch int) (*Evaluator, search.Space) {
	tb.Helper()
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: name, Seq: 8192}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
	}
	ev, err := New(base)
	if err != nil {
		tb.Fatal(err)
	}
	k := wire.SearchKnobs{MaxDevices: devices, GlobalBatch: globalBatch}
	if globalBatch == 0 { // a free batch: microbatches searched (the default fixes it)
		k.MicrobatchesPerStage = []int{1, 2, 4, 8}
	}
	s, err := ev.Space(k)
	if err != nil {
		tb.Fatal(err)
	}
	return ev, s
}

func benchSearch(b *testing.B, name string, devices, globalBatch int) {
	var st wire.SearchStats
	for b.Loop() {
		ev, s := llama(b, name, devices, globalBatch)
		r, err := search.Run(context.Background(), s, ev, search.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st = r.Stats
		if r.Best == nil {
			b.Fatal("nothing fits")
		}
	}
	b.ReportMetric(float64(st.Candidates), "candidates")
	b.ReportMetric(float64(st.Evaluated), "evaluated")
	b.ReportMetric(float64(st.PrunedByBound), "pruned")
	b.ReportMetric(float64(st.KnownInfeasible), "known_infeasible")
	b.ReportMetric(float64(st.CannotFit), "cannot_fit")
	b.ReportMetric(float64(st.Twins), "twins")
	b.ReportMetric(float64(st.BoundViolations), "bound_violations")
}

// BenchmarkSearchLlama3_8B: Llama-3-8B (s = 8192) on up to 64 H100s, 8 per node, every
// knob: stages, replicas, tensor parallelism, schedule, recomputation, ZeRO, microbatches
// and their size. Target: under 1 s natively, under 5 s under WebAssembly.
func BenchmarkSearchLlama3_8B(b *testing.B) { benchSearch(b, "meta-llama-3-8b", 64, 0) }

// BenchmarkSearchLlama3_8BGlobalBatch: the same with the global batch fixed at 512
// sequences (4M tokens).
func BenchmarkSearchLlama3_8BGlobalBatch(b *testing.B) { benchSearch(b, "meta-llama-3-8b", 64, 512) }

// BenchmarkSearchLlama31_70B: Llama-3.1-70B on up to 512 H100s with a global batch of
// 1024 sequences. Target: under 5 s natively.
func BenchmarkSearchLlama31_70B(b *testing.B) { benchSearch(b, "llama-3.1-70b", 512, 1024) }

// BenchmarkSearchProfile: the bundled GPT-2 medium profile (measured on an A100, scaled
// to H100s) on up to 4 H100s, every knob: a profile-driven search, whose candidates each
// plan the profile scaled to their microbatch size.
func BenchmarkSearchProfile(b *testing.B) {
	var st wire.SearchStats
	for b.Loop() {
		ev, err := New(&wire.Request{Model: wire.ModelSpec{Example: "gpt2-medium"}, Cluster: wire.ClusterSpec{Device: "h100-sxm"}})
		if err != nil {
			b.Fatal(err)
		}
		s, err := ev.Space(wire.SearchKnobs{MaxDevices: 4, MaxMicrobatchSize: 32})
		if err != nil {
			b.Fatal(err)
		}
		r, err := search.Run(context.Background(), s, ev, search.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Best == nil {
			b.Fatal("nothing fits")
		}
		st = r.Stats
	}
	b.ReportMetric(float64(st.Evaluated), "evaluated")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(max(1, st.Evaluated)), "ns/evaluation")
}

// BenchmarkSearchDeepSeekV3: DeepSeek-V3 (671B, a mixture of 256 experts; s = 4096) on
// up to 1,024 GB200s in NVL72 domains of 72, with a global batch of 4,096 sequences:
// stages, replicas, tensor and expert parallelism, schedule, recomputation, ZeRO and
// HSDP, microbatches and their size. Target (issue 18): under 10 s natively.
func BenchmarkSearchDeepSeekV3(b *testing.B) {
	var st wire.SearchStats
	for b.Loop() {
		base := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "deepseek-v3", Seq: 4096}},
			Cluster: wire.ClusterSpec{Device: "gb200", DevicesPerNode: 72},
		}
		ev, err := New(base)
		if err != nil {
			b.Fatal(err)
		}
		s, err := ev.Space(wire.SearchKnobs{MaxDevices: 1024, GlobalBatch: 4096})
		if err != nil {
			b.Fatal(err)
		}
		r, err := search.Run(context.Background(), s, ev, search.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Best == nil {
			b.Fatal("nothing fits")
		}
		st = r.Stats
	}
	b.ReportMetric(float64(st.Candidates), "candidates")
	b.ReportMetric(float64(st.Evaluated), "evaluated")
	b.ReportMetric(float64(st.PrunedByBound), "pruned")
	b.ReportMetric(float64(st.CannotFit), "cannot_fit")
	b.ReportMetric(float64(st.BoundViolations), "bound_violations")
}
