package evaluate

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"pipeplan/core/schedule"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestInterleavedFillBound checks Bound's interleaved fill and drain against the
// schedule's simulator on every split (brute force): for layers of uneven work, each
// split of them into p x v contiguous non-empty stages, with and without transfers, the
// interleaved step lasts at least m*W/p + fillOf(p)/p. With even layers the bound rises
// above m*W/p, the bound without it.
func TestInterleavedFillBound(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, tc := range []struct {
		p, v, n int
		even    bool
	}{
		{2, 2, 7, false}, {3, 2, 9, false}, {4, 2, 10, false}, {2, 3, 8, false}, {3, 3, 11, false},
		{4, 2, 8, true}, {3, 2, 10, true},
	} {
		x := &terms{}
		for range tc.n {
			w := 1.0
			if !tc.even {
				w = 0.05 + 3*rng.Float64()
			}
			x.layers = append(x.layers, w)
			x.work += w
		}
		S := tc.p * tc.v
		for _, m := range []int{tc.p, 2 * tc.p, 3 * tc.p} {
			bound := float64(m)*x.work/float64(tc.p) + x.fillOf(tc.p)/float64(tc.p)
			if tc.even && !(bound > float64(m)*x.work/float64(tc.p)) {
				t.Errorf("p=%d: the fill adds nothing to the bound", tc.p)
			}
			cfg := schedule.Config{Kind: schedule.Interleaved, Chunks: tc.v, Microbatches: m}
			splits := 0
			cuts := make([]int, S+1)
			cuts[S] = tc.n
			var walk func(s, first int)
			walk = func(s, first int) {
				if s == S {
					splits++
					for _, transfer := range []float64{0, 0.3} {
						pl := &schedule.Pipeline{}
						for j := range S {
							var w float64
							for l := cuts[j]; l < cuts[j+1]; l++ {
								w += x.layers[l]
							}
							pl.Stages = append(pl.Stages, schedule.Stage{ForwardSeconds: w / 3, BackwardSeconds: 2 * w / 3})
							if transfer > 0 && j+1 < S {
								pl.TransferSeconds = append(pl.TransferSeconds, transfer)
							}
						}
						r, err := schedule.SimulateStep(pl, cfg)
						if err != nil {
							t.Fatalf("p=%d v=%d m=%d %v: %v", tc.p, tc.v, m, cuts, err)
						}
						if r.MakespanSeconds < bound*(1-1e-12) {
							t.Fatalf("p=%d v=%d m=%d split %v transfer %v: makespan %v below the bound %v", tc.p, tc.v, m, cuts, transfer, r.MakespanSeconds, bound)
						}
					}
					return
				}
				// stage s starts at cuts[s] = first; it ends leaving a layer for each later stage
				cuts[s] = first
				for end := first + 1; end <= tc.n-(S-1-s); end++ {
					if s == S-1 && end != tc.n {
						continue
					}
					walk(s+1, end)
				}
			}
			walk(0, 0)
			if splits == 0 {
				t.Fatalf("p=%d v=%d n=%d: no split", tc.p, tc.v, tc.n)
			}
		}
	}
}

// TestExposedBound checks the data-parallel part of Bound against the plans core makes:
// for Llama-3.2-1B (short sequences, whose backward hides less) on H100s over replicas in and across nodes (2 or 4 a node), ZeRO 0 to
// 2, every schedule, few or many microbatches, with the all-reduce overlapping the
// backward (eager PyTorch's DDP) or not (cuda-graphs, Megatron-LM's default),
// exposedBound never exceeds the planned step's exposed data-parallel seconds, and it is
// above 0 for some of each; and so with fp8 primary weights, whose all-gather moves the
// products' weights in fp8 (analytic.Result.ParamGatherBytes), in core and the bound alike.
func TestExposedBound(t *testing.T) {
	for _, tc := range []struct {
		framework string
		perNode   int
		seq       int
		fp8Params bool
	}{{"", 2, 256, false}, {"cuda-graphs", 4, 4096, false}, {"megatron", 4, 4096, true}} {
		tr := wire.Training{}
		if tc.fp8Params {
			tr = wire.Training{FP8Recipe: "delayed", FP8ParamGather: true}
		}
		ev, err := New(&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: tc.seq, Framework: tc.framework}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: tc.perNode}, Training: tr})
		if err != nil {
			t.Fatal(err)
		}
		positive := 0
		for _, p := range []int{1, 2, 4} {
			for _, d := range []int{2, 4, 8} {
				for _, zero := range []int{0, 1, 2} {
					for _, sched := range []string{"1f1b", "interleaved:2", "zb-h1"} {
						for _, m := range []int{p, 8 * p} {
							if p == 1 && sched != "1f1b" {
								continue
							}
							c := search.Candidate{Config: search.Config{Pipeline: p, Data: d, Tensor: 1, Schedule: sched, Recompute: "selective", ZeRO: zero, Microbatches: m},
								MicrobatchSize: 1}
							x, err := ev.termsFor(c)
							if err != nil {
								t.Fatal(err)
							}
							b := ev.exposedBound(c, x)
							v, err := ev.prepare(c)
							if err != nil {
								t.Fatal(err)
							}
							res, err := v.Plan(context.Background())
							if err != nil {
								t.Fatal(err)
							}
							if res.Step == nil || !res.Feasible {
								continue
							}
							if got := res.Step.DataParallelExposedSeconds; b > got*(1+1e-12) {
								t.Errorf("%s %q: exposed data-parallel bound %v s, planned %v s", c, tc.framework, b, got)
							}
							if b > 0 {
								positive++
							}
						}
					}
				}
			}
		}
		if positive == 0 {
			t.Errorf("framework %q, %d a node: the bound is 0 for every candidate", tc.framework, tc.perNode)
		}
		t.Logf("framework %q, %d a node: %d candidates with a positive bound", tc.framework, tc.perNode, positive)
	}
}

// TestZBH1FillBound checks Bound's ZB-H1 fill against the schedule's simulator on every
// split (brute force): layers whose forward takes an uneven share (at least a) of their
// work, split into p contiguous stages, last at least a*W / (1 - (1 - a/m)^p) per step,
// with and without transfers; and the bound is above m*W/p.
func TestZBH1FillBound(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, tc := range []struct{ p, n int }{{2, 6}, {3, 8}, {4, 9}, {5, 9}} {
		x := &terms{forwardShare: 1}
		var fwd []float64
		for range tc.n {
			w := 0.05 + 3*rng.Float64()
			f := w * (0.2 + 0.3*rng.Float64())
			x.layers, fwd = append(x.layers, w), append(fwd, f)
			x.work += w
			x.forwardShare = min(x.forwardShare, f/w)
		}
		for _, m := range []int{1, tc.p, 3 * tc.p} {
			a, mf, pf := x.forwardShare, float64(m), float64(tc.p)
			bound := a * x.work / (1 - math.Pow(1-a/mf, pf))
			if !(bound > mf*x.work/pf) {
				t.Errorf("p=%d m=%d: the fill adds nothing to the bound", tc.p, m)
			}
			cfg := schedule.Config{Kind: schedule.ZBH1, Microbatches: m}
			cuts := make([]int, tc.p+1)
			cuts[tc.p] = tc.n
			var walk func(s, first int)
			walk = func(s, first int) {
				cuts[s] = first
				if s == tc.p-1 {
					for _, transfer := range []float64{0, 0.3} {
						pl := &schedule.Pipeline{}
						for j := range tc.p {
							var w, f float64
							for l := cuts[j]; l < cuts[j+1]; l++ {
								w, f = w+x.layers[l], f+fwd[l]
							}
							pl.Stages = append(pl.Stages, schedule.Stage{ForwardSeconds: f, BackwardSeconds: w - f, WeightGradSeconds: (w - f) / 2})
							if transfer > 0 && j+1 < tc.p {
								pl.TransferSeconds = append(pl.TransferSeconds, transfer)
							}
						}
						r, err := schedule.SimulateStep(pl, cfg)
						if err != nil {
							t.Fatalf("p=%d m=%d %v: %v", tc.p, m, cuts, err)
						}
						if r.MakespanSeconds < bound*(1-1e-12) {
							t.Fatalf("p=%d m=%d split %v transfer %v: makespan %v below the bound %v", tc.p, m, cuts, transfer, r.MakespanSeconds, bound)
						}
					}
					return
				}
				for end := first + 1; end <= tc.n-(tc.p-1-s); end++ {
					walk(s+1, end)
				}
			}
			walk(0, 0)
		}
	}
}
