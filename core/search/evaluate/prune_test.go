package evaluate

import (
	"context"
	"math"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// pruneCases are real architectures on small clusters of H100s with every schedule the
// search tries (interleaved included) and a free microbatch size: a dense model whose
// memory binds at 8,192 tokens, a mixture of experts (expert parallelism searched) and a
// long sequence (context parallelism in every form searched).
var pruneCases = []struct {
	name       string
	arch       string
	seq        int
	devices    int
	perNode    int
	maxSize    int
	proportion float64
}{
	{"dense", "meta-llama-3-8b", 8192, 8, 8, 4, 0},
	{"dense-half-memory", "llama-2-7b", 4096, 4, 4, 8, 0.5},
	{"moe", "qwen3-30b-a3b", 4096, 8, 8, 2, 0},
	{"long-context", "llama-3.2-1b", 32768, 4, 4, 2, 0},
}

// pruneSpace is a case's grid, cut to what planning every candidate takes a few seconds
// for: ZeRO-1 (and none where there is one replica), microbatches of one and two per stage.
func pruneSpace(t *testing.T, arch string, seq, devices, perNode, maxSize int, proportion float64) (*Evaluator, search.Space) {
	t.Helper()
	ev, err := New(&wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: arch, Seq: seq}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: perNode},
	})
	if err != nil {
		t.Fatal(err)
	}
	k := wire.SearchKnobs{MaxDevices: devices, MicrobatchesPerStage: []int{1, 2}, MaxMicrobatchSize: maxSize}
	if proportion > 0 {
		k.MemoryProportions = []float64{proportion}
	}
	s, err := ev.Space(k)
	if err != nil {
		t.Fatal(err)
	}
	s.ZeROs, s.ShardGroups = []int{0, 1}, nil
	return ev, s
}

// TestGroupedPruningExact: the search's pruning (the sizes probed only from the first
// that may win, interleaved candidates ruled out by their devices' shared memory, the
// framework's share of memory, the memory shared between interleaved microbatch counts
// of the same in-flight counts, twins asked once per configuration) prunes nothing that
// planning every candidate keeps: on each case, the same best and the same Pareto front
// as exhaustive enumeration, no bound broken, and every candidate counted once in the
// stats (planned, pruned by its bound, known not to fit, ruled out by memory, or a
// twin).
func TestGroupedPruningExact(t *testing.T) {
	for _, tc := range pruneCases {
		t.Run(tc.name, func(t *testing.T) {
			ev, s := pruneSpace(t, tc.arch, tc.seq, tc.devices, tc.perNode, tc.maxSize, tc.proportion)
			got, ex := prunedAndExhaustive(t, s, ev)
			if ex.Best == nil {
				t.Fatal("nothing fits")
			}
			if got.Best == nil || got.Best.Candidate != ex.Best.Candidate || got.Best.SamplesPerSecond != ex.Best.SamplesPerSecond {
				t.Errorf("best %v, exhaustive %s (%.6g/s)", got.Best, ex.Best.Candidate, ex.Best.SamplesPerSecond)
			}
			if len(got.Pareto) != len(ex.Pareto) {
				t.Fatalf("Pareto front of %d points, exhaustive %d", len(got.Pareto), len(ex.Pareto))
			}
			for i := range ex.Pareto {
				if got.Pareto[i].Candidate != ex.Pareto[i].Candidate || got.Pareto[i].SamplesPerSecond != ex.Pareto[i].SamplesPerSecond {
					t.Errorf("Pareto point %d: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
				}
			}
			if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 {
				t.Errorf("bound violations: %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations)
			}
			// Every candidate is counted once: planned, or settled without a plan.
			st := got.Stats
			if n := st.Evaluated + st.PrunedByBound + st.KnownInfeasible + st.CannotFit + st.Twins; n != st.Candidates || st.Candidates != ex.Stats.Candidates {
				t.Errorf("%d candidates (exhaustive %d), %d settled: %+v", st.Candidates, ex.Stats.Candidates, n, st)
			}
			if got.Stats.Evaluated >= ex.Stats.Evaluated {
				t.Errorf("planned %d of %d: nothing pruned", got.Stats.Evaluated, ex.Stats.Evaluated)
			}
			t.Logf("best %s: %.2f samples/s; planned %d of %d (%d ruled out by memory, %d twins)", got.Best.Candidate, got.Best.SamplesPerSecond,
				got.Stats.Evaluated, ex.Stats.Evaluated, got.Stats.CannotFit, got.Stats.Twins)
		})
	}
}

// TestSharedCannotFitSound: every interleaved candidate that CannotFit rules out by its
// devices' shared memory (sharedCannotFit) is one core plans no split for, on
// Llama-3-8B with 8,192 tokens (where one microbatch of two sequences overfills the
// first devices) and a mixture of experts; and the device bound rules out candidates
// that each chunk's own bound (cover) lets through, so that it is tested at all.
func TestSharedCannotFitSound(t *testing.T) {
	shared := 0
	for _, tc := range []struct {
		arch string
		seq  int
	}{{"meta-llama-3-8b", 8192}, {"qwen3-30b-a3b", 4096}} {
		ev, err := New(&wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: tc.arch, Seq: tc.seq}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{2, 4, 8} {
			for _, k := range []int{1, 2, 4} {
				for _, z := range []int{0, 1} {
					for b := 1; b <= 3; b++ {
						c := search.Candidate{Config: search.Config{Pipeline: p, Data: 8 / p, Tensor: 1, Schedule: "interleaved:2", Recompute: "none",
							ZeRO: z, MemoryProportion: 1, Microbatches: k * p}, MicrobatchSize: b}
						if z == 1 && c.Data < 2 {
							continue
						}
						if !ev.CannotFit(c) {
							continue
						}
						o, err := ev.Evaluate(context.Background(), c)
						if err != nil {
							t.Fatal(err)
						}
						if o.Feasible {
							t.Errorf("%s %s: ruled out, but core plans it (%.4g samples/s)", tc.arch, c, o.SamplesPerSecond)
						}
						sc, _ := schedule.Parse(c.Schedule)
						limit, _ := ev.stageCeiling(sc, 1)
						x, err := ev.termsOf(c.Tensor, c.MicrobatchSize, c.Recompute, c.Context, "", c.Expert)
						if err != nil {
							t.Fatal(err)
						}
						if ev.cover(c, x, sc, limit, math.Inf(1)) {
							shared++ // each chunk fits alone: the devices' bound ruled it out
						}
					}
				}
			}
		}
	}
	if shared == 0 {
		t.Error("no candidate ruled out by the devices' shared memory alone")
	}
	t.Logf("%d candidates ruled out by the devices' shared memory alone", shared)
}

// TestTwinSizesAgree: TwinSizes answers, size by size, what Twin answers, on a model
// whose selective recomputation changes nothing (flash attention: Llama-3-8B) and on
// configurations without twins.
func TestTwinSizesAgree(t *testing.T) {
	ev, s := llama(t, "meta-llama-3-8b", 16, 0)
	sizes := []int{1, 2, 3, 8, 64}
	has := make([]bool, len(sizes))
	n := 0
	for _, rc := range s.Recomputes {
		for _, tt := range s.Tensors {
			g := search.Config{Pipeline: 2, Data: 2, Tensor: tt, Schedule: "1f1b", Recompute: rc, MemoryProportion: 1, Microbatches: 4}
			clear(has)
			twin, ok := ev.TwinSizes(g, sizes, has)
			for k, b := range sizes {
				want, wok := ev.Twin(search.Candidate{Config: g, MicrobatchSize: b})
				if has[k] != wok || (wok && (!ok || want.Config != twin)) {
					t.Errorf("%s b%d: TwinSizes %v %v, Twin %v %v", rc, b, has[k], twin, wok, want.Config)
				}
				if wok {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Error("no twins: the test checks nothing")
	}
}

// TestAllocatable: allocatable is at least the largest allocated peak a whose device
// memory a + ceil(a x reserve) + fixed fits the limit (core/estimate's) on one stage or
// on a pipeline (the framework's Reserve of each), found here by bisection, and within
// two bytes of it.
func TestAllocatable(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		fw    cluster.Framework
	}{
		{80 << 30, cluster.Framework{}},
		{80 << 30, cluster.Framework{FixedBytes: 1 << 30, AllocatorReserve: 0.02}},
		{141e9, cluster.Framework{FixedBytes: 3 << 30, AllocatorReserve: 0.1}},
		{1 << 20, cluster.Framework{FixedBytes: 1 << 21, AllocatorReserve: 0.02}},
		{12345678901, cluster.Framework{AllocatorReserve: 1}},
		{80e9, cluster.Framework{FixedBytes: 2097 << 20, AllocatorReserve: 0.02, PipelineAllocatorReserve: 0.153}},
		{141e9, cluster.Framework{FixedBytes: 3 << 30, AllocatorReserve: 0.1, PipelineAllocatorReserve: 0.05}},
	} {
		fits := func(a int64) bool {
			for _, stages := range []int{1, 2, 8} {
				if a+int64(math.Ceil(float64(a)*tc.fw.Reserve(stages)))+tc.fw.FixedBytes <= tc.limit {
					return true
				}
			}
			return false
		}
		largest := int64(-1)
		for lo, hi := int64(0), tc.limit; lo <= hi; {
			mid := lo + (hi-lo)/2
			if fits(mid) {
				largest, lo = mid, mid+1
			} else {
				hi = mid - 1
			}
		}
		got := allocatable(tc.limit, tc.fw)
		if got < largest || got > max(0, largest)+2 {
			t.Errorf("limit %d, %+v: allocatable %d, the largest that fits %d", tc.limit, tc.fw, got, largest)
		}
	}
}
