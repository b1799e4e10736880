package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

func toySpace(rng *rand.Rand, global bool) Space {
	s := Space{
		MaxDevices:        []int{4, 8, 12, 16}[rng.IntN(4)],
		Pipelines:         []int{1, 2, 3, 4},
		Tensors:           []int{1, 2, 4},
		Schedules:         []string{"gpipe", "1f1b", "interleaved:2", "zb-h1"},
		Recomputes:        []string{"none", "selective", "full"},
		ZeROs:             []int{0, 1},
		MemoryProportions: []float64{0.5, 1},
		MaxMicrobatchSize: 1 + rng.IntN(24),
	}
	if global {
		s.GlobalBatch = []int{16, 24, 48, 64}[rng.IntN(4)]
	} else {
		s.MicrobatchesPerStage = []int{1, 2, 4}
	}
	return s
}

func newToy(rng *rand.Rand) *toy {
	return &toy{
		layers: 24, work: 1e-3 * (1 + rng.Float64()), overhead: 2e-3 * rng.Float64(),
		static: 40e9 * (0.5 + rng.Float64()), act: 0.2e9 * (0.5 + rng.Float64()), limit: 16e9,
		gradBytes: 10e9, bandwidth: 10e9 * (0.2 + rng.Float64()), tpEff: 0.8 + 0.2*rng.Float64(),
	}
}

// TestSameAsExhaustive: on random small grids the search finds the best and the Pareto
// front that planning every candidate finds, planning fewer; its bounds hold.
func TestSameAsExhaustive(t *testing.T) {
	var searched, all int
	for seed := range uint64(40) {
		for _, global := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 1))
			s := toySpace(rng, global)
			ev := newToy(rng)
			// Every other seed, selective recomputation keeps what none keeps (as with
			// flash attention): their candidates are twins.
			ev.twins = seed%2 == 1
			// And in half of the seeds, CannotFit rules out what needs a tenth more than
			// the memory, unplanned.
			ev.fitter = seed%4 >= 2
			ev.refine = seed%3 == 1
			ex, err := Run(context.Background(), s, ev, Options{Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			ev2 := *ev
			got, err := Run(context.Background(), s, &ev2, Options{})
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("seed %d global %v", seed, global)
			if cs, err := s.Candidates(); err != nil || len(cs) != ex.Stats.Candidates {
				t.Errorf("%s: Candidates lists %d (%v), the search counts %d", name, len(cs), err, ex.Stats.Candidates)
			}
			if (ex.Best == nil) != (got.Best == nil) {
				t.Fatalf("%s: best %v, exhaustive %v", name, got.Best, ex.Best)
			}
			if ex.Best != nil && (ex.Best.Candidate != got.Best.Candidate || ex.Best.SamplesPerSecond != got.Best.SamplesPerSecond) {
				t.Errorf("%s: best %s (%.6g/s), exhaustive %s (%.6g/s)", name, got.Best.Candidate, got.Best.SamplesPerSecond, ex.Best.Candidate, ex.Best.SamplesPerSecond)
			}
			if len(ex.Pareto) != len(got.Pareto) {
				t.Errorf("%s: %d Pareto points, exhaustive %d", name, len(got.Pareto), len(ex.Pareto))
			} else {
				for i := range ex.Pareto {
					if ex.Pareto[i].Candidate != got.Pareto[i].Candidate {
						t.Errorf("%s: Pareto[%d] %s, exhaustive %s", name, i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
					}
				}
			}
			st := got.Stats
			if st.BoundViolations != 0 || ex.Stats.BoundViolations != 0 {
				t.Errorf("%s: %d bound violations", name, st.BoundViolations)
			}
			if st.Evaluated+st.PrunedByBound+st.KnownInfeasible+st.Twins+st.CannotFit != st.Candidates || st.Candidates != ex.Stats.Evaluated {
				t.Errorf("%s: %d evaluated + %d pruned + %d known infeasible + %d twins + %d cannot fit != %d candidates (exhaustive %d)",
					name, st.Evaluated, st.PrunedByBound, st.KnownInfeasible, st.Twins, st.CannotFit, st.Candidates, ex.Stats.Evaluated)
			}
			if st.Evaluated != len(got.Evaluated) {
				t.Errorf("%s: %d evaluated, %d listed", name, st.Evaluated, len(got.Evaluated))
			}
			for _, o := range got.Evaluated {
				if !ev.reasonOK(o) {
					t.Errorf("%s: %s infeasible without a reason", name, o.Candidate)
				}
			}
			if ev.fitter && st.CannotFit == 0 {
				t.Errorf("%s: CannotFit ruled nothing out", name)
			}
			if ev.twins && st.Twins == 0 {
				t.Errorf("%s: selective and none are twins, the search planned both", name)
			}
			searched += st.Evaluated
			all += ex.Stats.Evaluated
		}
	}
	t.Logf("search planned %d of %d candidates (%.1f%%)", searched, all, 100*float64(searched)/float64(all))
	if searched*3 > all {
		t.Errorf("search planned %d of %d candidates: pruning does not work", searched, all)
	}
}

// TestBoundViolations: a bound below the truth is noticed and counted.
func TestBoundViolations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	ev := newToy(rng)
	ev.violations = true
	r, err := Run(context.Background(), toySpace(rng, false), ev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.BoundViolations == 0 {
		t.Error("a bound at half the truth went unnoticed")
	}
}

// TestProgressAndCancel: progress rises to the total; cancelling stops the search with
// the context's error and what it found so far.
func TestProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	s := toySpace(rng, false)
	s.MaxDevices = 16
	var ps []wire.SearchProgress
	yields := 0
	r, err := Run(context.Background(), s, newToy(rng), Options{Progress: func(p wire.SearchProgress) { ps = append(ps, p) }, Yield: func() { yields++ }})
	if err != nil {
		t.Fatal(err)
	}
	last := ps[len(ps)-1]
	if last.Done != last.Total || last.Total != r.Stats.Candidates || last.Best == nil || last.Best.SearchCandidate != wireCandidate(r.Best.Candidate) {
		t.Errorf("last progress %+v, want done = total = %d and the best", last, r.Stats.Candidates)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Done < ps[i-1].Done {
			t.Fatalf("progress went back: %d then %d", ps[i-1].Done, ps[i].Done)
		}
	}
	if yields < r.Stats.Evaluated {
		t.Errorf("%d yields for %d planned candidates: the host gets no turn after some", yields, r.Stats.Evaluated)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ev := newToy(rand.New(rand.NewPCG(5, 1)))
	ev.cancelAt, ev.cancel = 5, cancel
	r, err = Run(ctx, s, ev, Options{})
	if !errors.Is(err, context.Canceled) || r == nil || r.Stats.Evaluated != 5 {
		t.Errorf("cancelled: err %v, report %v", err, r)
	}
}

func TestSpaceErrors(t *testing.T) {
	for _, tt := range []struct {
		s    Space
		want string
	}{
		{Space{}, "max_devices: must be between 1 and 65536, got 0"},
		{Space{MaxDevices: 8, Pipelines: []int{1}, Tensors: []int{1}, Schedules: []string{"overlap"}, Recomputes: []string{"none"}, ZeROs: []int{0}, MemoryProportions: []float64{1}, MicrobatchesPerStage: []int{4}, MaxMicrobatchSize: 4},
			`schedules[0]: the search tries gpipe, 1f1b, interleaved:V, zb-h1, ipu and inference, got "overlap"`},
		{Space{MaxDevices: 8, Pipelines: []int{1}, Tensors: []int{1}, Schedules: []string{"1f1b"}, Recomputes: []string{"none"}, ZeROs: []int{4}, MemoryProportions: []float64{1}, GlobalBatch: 8, Microbatches: []int{2}, MaxMicrobatchSize: 4},
			"zeros[0]: must be 0, 1, 2 or 3"},
		{Space{MaxDevices: 8, Pipelines: []int{1}, Tensors: []int{1}, Schedules: []string{"1f1b"}, Recomputes: []string{"none"}, ZeROs: []int{0}, MemoryProportions: []float64{1}, GlobalBatch: 8, Microbatches: []int{2}, MaxMicrobatchSize: 4},
			"global_batch: fixes the microbatches"},
	} {
		_, err := Run(context.Background(), tt.s, &toy{}, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.s, err, tt.want)
		}
	}
}

// TestGroups: the grid skips what cannot run and keeps the canonical order.
func TestGroups(t *testing.T) {
	s := Space{MaxDevices: 4, Pipelines: []int{1, 2}, Tensors: []int{1, 2}, Schedules: []string{"1f1b", "interleaved:2"},
		Recomputes: []string{"none"}, ZeROs: []int{0, 1}, MemoryProportions: []float64{1}, GlobalBatch: 8, MaxMicrobatchSize: 8}
	gs, err := s.groups()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gs {
		got = append(got, fmt.Sprintf("t%d p%d d%d %s z%d", g.Tensor, g.Pipeline, g.Data, g.Schedule, g.ZeRO))
	}
	want := []string{
		"t1 p1 d1 1f1b z0", "t1 p1 d2 1f1b z0", "t1 p1 d2 1f1b z1", "t1 p1 d4 1f1b z0", "t1 p1 d4 1f1b z1",
		"t1 p2 d1 1f1b z0", "t1 p2 d1 interleaved:2 z0", "t1 p2 d2 1f1b z0", "t1 p2 d2 1f1b z1", "t1 p2 d2 interleaved:2 z0", "t1 p2 d2 interleaved:2 z1",
		"t2 p1 d1 1f1b z0", "t2 p1 d2 1f1b z0", "t2 p1 d2 1f1b z1", "t2 p2 d1 1f1b z0", "t2 p2 d1 interleaved:2 z0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups\n%q\nwant\n%q", got, want)
	}
	// Global batch 8 over 2 replicas: 4 per replica, sizes 1, 2, 4; interleaved on 2
	// stages needs even microbatches: sizes 1 and 2.
	if sz := s.sizes(2); !reflect.DeepEqual(sz, []int{1, 2, 4}) {
		t.Errorf("sizes %v", sz)
	}
	if _, ok := s.candidate(gs[9], 4); ok {
		t.Error("interleaved:2 with 1 microbatch on 2 stages accepted")
	}
}
