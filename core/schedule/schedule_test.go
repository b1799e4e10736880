package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// uniform is a pipeline of equal stages: forward f, input-gradient b and weight-gradient
// w seconds (the backward is b + w), one activation byte per microbatch, free transfers.
func uniform(stages int, f, b, w float64) *Pipeline {
	p := &Pipeline{}
	for range stages {
		p.Stages = append(p.Stages, Stage{ForwardSeconds: f, BackwardSeconds: b + w, WeightGradSeconds: w, ActivationBytes: 1})
	}
	return p
}

func mustSimulate(t *testing.T, p *Pipeline, c Config) *Result {
	t.Helper()
	r, err := Simulate(p, c)
	if err != nil {
		t.Fatalf("%s m=%d: %v", c, c.Microbatches, err)
	}
	return r
}

// idle is the devices' total idle time: devices * makespan - busy, exact for integer times.
func idle(r *Result) float64 {
	busy := 0.0
	for _, b := range r.BusySeconds {
		busy += b
	}
	return float64(r.Devices)*r.MakespanSeconds - busy
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// GPipe and 1F1B with equal stage times F, B and free transfers take (m + p - 1)(F + B)
// and idle (p - 1)/(m + p - 1) of the time (GPipe paper; Narayanan et al. 2021).
func TestGPipeAnd1F1BClosedForm(t *testing.T) {
	for _, k := range []Kind{GPipe, OneFOneB} {
		for _, p := range []int{1, 2, 3, 4, 8} {
			for _, m := range []int{1, 2, 3, 4, 8, 16} {
				for _, fb := range [][2]float64{{1, 2}, {2, 3}, {5, 5}} {
					f, b := fb[0], fb[1]
					r := mustSimulate(t, uniform(p, f, b, 0), Config{Kind: k, Microbatches: m})
					want := float64(m+p-1) * (f + b)
					if r.MakespanSeconds != want {
						t.Errorf("%s p=%d m=%d F=%v B=%v: makespan %v, want (m+p-1)(F+B) = %v", k, p, m, f, b, r.MakespanSeconds, want)
					}
					if got, want := idle(r), float64(p*(p-1))*(f+b); got != want {
						t.Errorf("%s p=%d m=%d: idle %v device-seconds, want p(p-1)(F+B) = %v", k, p, m, got, want)
					}
					if want := float64(p-1) / float64(m+p-1); !near(r.BubbleFraction, want) {
						t.Errorf("%s p=%d m=%d: bubble %v, want (p-1)/(m+p-1) = %v", k, p, m, r.BubbleFraction, want)
					}
					if want := float64(m) / want; !near(r.Throughput, want) {
						t.Errorf("%s p=%d m=%d: throughput %v, want %v", k, p, m, r.Throughput, want)
					}
				}
			}
		}
	}
}

// In flight on stage i: m for GPipe, min(p - i, m) for 1F1B and ZB-H1 (whose B frees the
// activations), min(2(p-1-i) + 1, m) on the IPU (a stash FIFO of depth backward_stage -
// forward_stage = 2(p-1-i), plus the microbatch at work), 1 in inference.
func TestInFlightClosedForm(t *testing.T) {
	forms := map[Kind]func(p, m, i int) int{
		GPipe:     func(p, m, i int) int { return m },
		OneFOneB:  func(p, m, i int) int { return min(p-i, m) },
		ZBH1:      func(p, m, i int) int { return min(p-i, m) },
		IPU:       func(p, m, i int) int { return min(2*(p-1-i)+1, m) },
		Inference: func(p, m, i int) int { return 1 },
	}
	for _, k := range []Kind{GPipe, OneFOneB, ZBH1, IPU, Inference} {
		for _, p := range []int{1, 2, 4, 7} {
			for _, m := range []int{1, 2, 3, 5, 8, 13} {
				want := make([]int, p)
				for i := range want {
					want[i] = forms[k](p, m, i)
				}
				c := Config{Kind: k, Microbatches: m}
				got, err := InFlight(c, p)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("InFlight(%s, p=%d, m=%d) = %v, want %v", k, p, m, got, want)
				}
				r := mustSimulate(t, uniform(p, 1, 2, 1), c)
				if !reflect.DeepEqual(r.MaxInFlight, want) {
					t.Errorf("Simulate(%s, p=%d, m=%d).MaxInFlight = %v, want %v", k, p, m, r.MaxInFlight, want)
				}
				// One byte per microbatch and nothing else: the peak is the count.
				if k != Inference {
					for d, b := range r.PeakMemoryBytes {
						if b != int64(want[d]) {
							t.Errorf("%s p=%d m=%d: device %d peak %d bytes, want %d", k, p, m, d, b, want[d])
						}
					}
				}
			}
		}
	}
}

// InFlight counts the rules' orders without building the graph: it must agree with the
// simulation, which builds it, for every schedule (interleaved and the lockstep ones too).
func TestInFlightMatchesSimulation(t *testing.T) {
	type tc struct {
		c      Config
		stages int
	}
	var cases []tc
	for _, m := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
		for _, p := range []int{1, 2, 3, 4, 5, 8} {
			for _, k := range []Kind{GPipe, OneFOneB, ZBH1, IPU, Inference} {
				cases = append(cases, tc{Config{Kind: k, Microbatches: m}, p})
			}
			for _, v := range []int{2, 3} {
				if m%p == 0 {
					cases = append(cases, tc{Config{Kind: Interleaved, Chunks: v, Microbatches: m}, p * v},
						tc{Config{Kind: Interleaved, Chunks: v, Microbatches: m, PyTorchOrder: true}, p * v})
				}
			}
		}
		cases = append(cases, tc{Config{Kind: Overlap, Microbatches: m}, 2})
	}
	for _, x := range cases {
		if x.c.Validate(x.stages) != nil {
			continue
		}
		got, err := InFlight(x.c, x.stages)
		if err != nil {
			t.Fatal(err)
		}
		r := mustSimulate(t, uniform(x.stages, 1, 2, 1), x.c)
		if !reflect.DeepEqual(got, r.MaxInFlight) {
			t.Errorf("InFlight(%s, %d stages, m=%d) = %v, simulation %v", x.c, x.stages, x.c.Microbatches, got, r.MaxInFlight)
		}
	}
}

// SimulateStep is Simulate less the timeline.
func TestSimulateStepIsSimulateWithoutTimeline(t *testing.T) {
	for _, c := range []Config{{Kind: GPipe, Microbatches: 5}, {Kind: OneFOneB, Microbatches: 8}, {Kind: ZBH1, Microbatches: 6},
		{Kind: Interleaved, Chunks: 2, Microbatches: 4}, {Kind: IPU, Microbatches: 7}, {Kind: Inference, Microbatches: 3},
		{Kind: OneFOneB, Microbatches: 8, Recompute: true}} {
		stages := 4
		if c.Kind == Interleaved {
			stages = 8
		}
		p := uniform(stages, 1, 2, 0.5)
		p.TransferSeconds = make([]float64, stages-1)
		for i := range p.TransferSeconds {
			p.TransferSeconds[i] = 0.1 * float64(i+1)
		}
		// Memory of every kind, so that both count the device's peak alike: static and
		// activation bytes, the optimizer's temporaries (large on stage 0, where they are
		// the peak), the framework's fixed memory and the allocator's reserve.
		for i := range p.Stages {
			p.Stages[i].StaticBytes = int64(1000 * (i + 1))
			p.Stages[i].ActivationBytes = int64(300 + 10*i)
			p.Stages[i].InputBytes = 50
			p.Stages[i].OptimizerTempBytes = int64(100 * i)
		}
		p.Stages[0].OptimizerTempBytes = 1 << 20
		p.FixedBytes, p.AllocatorReserve = 1<<30, 0.02
		want := mustSimulate(t, p, c)
		want.Events, want.InFlight = nil, nil
		got, err := SimulateStep(p, c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: SimulateStep %+v, Simulate %+v", c, got, want)
		}
	}
}

// Megatron-LM's interleaved schedule with v chunks of forward f and backward b per chunk
// takes (vm + p - 1)(f + b): its bubble, (p - 1)(f + b) = (p - 1)(F + B)/v for the
// device's whole forward F = vf and backward B = vb, is (p - 1)/(v m) of the ideal m(F + B)
// (Narayanan et al. 2021, section 2.2.2). PyTorch's ScheduleInterleaved1F1B
// (interleaved-pytorch) takes the same time, m = p included, where its shorter warm-up
// leaves device d min(pv + p - 1 - 2d, mv) microbatch-chunks in flight instead of all mv.
func TestInterleavedClosedForm(t *testing.T) {
	for _, p := range []int{2, 3, 4, 8} {
		for _, v := range []int{2, 3, 4} {
			for _, m := range []int{p, 2 * p, 4 * p} {
				for _, fb := range [][2]float64{{1, 2}, {3, 4}} {
					for _, pytorch := range []bool{false, true} {
						f, b := fb[0], fb[1]
						c := Config{Kind: Interleaved, Chunks: v, Microbatches: m, PyTorchOrder: pytorch}
						interleavedClosedForm(t, mustSimulate(t, uniform(p*v, f, b, 0), c), c, p, f, b)
					}
				}
			}
		}
	}
}

// interleavedClosedForm checks one simulation of TestInterleavedClosedForm, and
// DeviceInFlight, which counts the orders without simulating, against the same peaks.
func interleavedClosedForm(t *testing.T, r *Result, c Config, p int, f, b float64) {
	t.Helper()
	v, m := c.Chunks, c.Microbatches
	if want := float64(v*m+p-1) * (f + b); r.MakespanSeconds != want {
		t.Errorf("%s p=%d m=%d: makespan %v, want (vm+p-1)(f+b) = %v", c, p, m, r.MakespanSeconds, want)
	}
	ideal := float64(m*v) * (f + b)
	bubble := r.MakespanSeconds - ideal
	if bubble*float64(v*m) != float64(p-1)*ideal {
		t.Errorf("%s p=%d m=%d: bubble %v of ideal %v, want (p-1)/(vm) of it", c, p, m, bubble, ideal)
	}
	counted, err := DeviceInFlight(c, p*v, p)
	if err != nil {
		t.Fatal(err)
	}
	// Microbatch-chunks in flight on device d: the warm-up forwards plus the one at
	// work, or, in Megatron-LM's order, all m*v when m = p (all warm-up).
	for d := 0; d < p; d++ {
		want := min(2*(p-d-1)+(v-1)*p+1, m*v)
		if m == p && !c.PyTorchOrder {
			want = m * v
		}
		if got := r.PeakMemoryBytes[d]; got != int64(want) {
			t.Errorf("%s p=%d m=%d: device %d holds %d microbatch-chunks, want %d", c, p, m, d, got, want)
		}
		if counted[d] != want {
			t.Errorf("%s p=%d m=%d: DeviceInFlight gives device %d %d microbatch-chunks, want %d", c, p, m, d, counted[d], want)
		}
	}
}

// ZB-H1 (Qi et al. 2023, section 2.1): with the backward split into B (input gradient)
// and W (weight gradient), the bubble shrinks from 1F1B's (p-1)(F+B+W) to (p-1)(F+B-W),
// with T_F = T_B = T_W a third of it. The derivation (the last stage's p-1 delayed W passes
// trail its last B, and device 0 overlaps p-1 of its W passes with the gradients travelling
// back) needs W <= min(F, B) and m >= p. Whatever the times, the bubble is at least
// (p-1)F (the last stage starts that late) and (p-1)B (device 0 waits that long for its
// first gradient after its p forwards, with no W yet to fill the wait).
func TestZBH1ClosedForm(t *testing.T) {
	for _, p := range []int{2, 3, 4, 8} {
		for _, m := range []int{p, 2 * p, 3*p + 1} {
			for _, fbw := range [][3]float64{{1, 1, 1}, {2, 3, 1}, {3, 2, 2}, {4, 4, 3}, {5, 3, 0}, {2, 1, 2}, {1, 3, 2}, {1, 1, 3}} {
				f, b, w := fbw[0], fbw[1], fbw[2]
				r := mustSimulate(t, uniform(p, f, b, w), Config{Kind: ZBH1, Microbatches: m})
				ideal := float64(m) * (f + b + w)
				bubble := r.MakespanSeconds - ideal
				if want := float64(p-1) * (f + b - w); w <= min(f, b) && bubble != want {
					t.Errorf("p=%d m=%d F,B,W=%v,%v,%v: bubble %v, want (p-1)(F+B-W) = %v", p, m, f, b, w, bubble, want)
				}
				if low := float64(p-1) * max(f, b); bubble < low {
					t.Errorf("p=%d m=%d F,B,W=%v,%v,%v: bubble %v below (p-1)max(F,B) = %v", p, m, f, b, w, bubble, low)
				}
				if f == b && b == w {
					one := mustSimulate(t, uniform(p, f, b, w), Config{Kind: OneFOneB, Microbatches: m})
					if 3*bubble != one.MakespanSeconds-ideal {
						t.Errorf("p=%d m=%d: zb-h1 bubble %v is not a third of 1f1b's %v", p, m, bubble, one.MakespanSeconds-ideal)
					}
				}
			}
		}
	}
}

// The IPU's lockstep pipeline (popxl's pipelining guide) with equal stages: p-1 ramp-up cycles of one
// forward, m cycles of a forward and a backward, p-1 ramp-down cycles of one backward:
// (m + p - 1)(F + B). Inference: (m + p - 1) F.
func TestIPUAndInferenceClosedForm(t *testing.T) {
	for _, p := range []int{1, 2, 4, 6} {
		for _, m := range []int{1, 3, 8, 12} {
			f, b := 2.0, 3.0
			r := mustSimulate(t, uniform(p, f, b, 0), Config{Kind: IPU, Microbatches: m})
			if want := float64(m+p-1) * (f + b); r.MakespanSeconds != want {
				t.Errorf("ipu p=%d m=%d: makespan %v, want %v", p, m, r.MakespanSeconds, want)
			}
			if r.Events[0][0].Step != 0 || r.Events[p-1][len(r.Events[p-1])-1].Step != m+p-2 {
				t.Errorf("ipu p=%d m=%d: device %d's last operation runs in cycle %d, want %d", p, m, p-1, r.Events[p-1][len(r.Events[p-1])-1].Step, m+p-2)
			}
			r = mustSimulate(t, uniform(p, f, b, 0), Config{Kind: Inference, Microbatches: m})
			if want := float64(m+p-1) * f; r.MakespanSeconds != want {
				t.Errorf("inference p=%d m=%d: makespan %v, want %v", p, m, r.MakespanSeconds, want)
			}
		}
	}
}

// A transfer of T per boundary delays GPipe by T on each of the p-1 boundaries, forward
// and back: (m + p - 1)(F + B) + 2(p - 1)T.
func TestGPipeTransfers(t *testing.T) {
	for _, p := range []int{2, 3, 5} {
		for _, m := range []int{1, 4, 9} {
			pl := uniform(p, 2, 3, 0)
			for range p - 1 {
				pl.TransferSeconds = append(pl.TransferSeconds, 1)
			}
			r := mustSimulate(t, pl, Config{Kind: GPipe, Microbatches: m})
			if want := float64(m+p-1)*5 + float64(2*(p-1)); r.MakespanSeconds != want {
				t.Errorf("p=%d m=%d: makespan %v, want %v", p, m, r.MakespanSeconds, want)
			}
		}
	}
}

// jax_tpu_embedding's SparseCore pipelining's table for n = 5: which batch each phase of each step runs ("-" none,
// "fake" a dummy input), and the SparseCore's backward before its forward.
func TestOverlapTable(t *testing.T) {
	const n = 5
	want := [][3]string{ // SC fwd, TC fwd/bwd, SC bwd
		{"0", "-", "-"},
		{"1", "0", "-"},
		{"2", "1", "0"},
		{"3", "2", "1"},
		{"4", "3", "2"},
		{"fake", "4", "3"},
		{"fake", "-", "4"},
	}
	// SparseCore forward 1 s, backward 2 s; TensorCore forward 1 s, backward 3 s.
	pl := &Pipeline{Stages: []Stage{{ForwardSeconds: 1, BackwardSeconds: 2}, {ForwardSeconds: 1, BackwardSeconds: 3}}}
	r := mustSimulate(t, pl, Config{Kind: Overlap, Microbatches: n})
	got := make([][3]string, n+2)
	for i := range got {
		got[i] = [3]string{"-", "-", "-"}
	}
	name := func(mb int) string {
		if mb < 0 {
			return "fake"
		}
		return fmt.Sprint(mb)
	}
	for d, evs := range r.Events {
		for k, e := range evs {
			switch {
			case d == 0 && e.Kind == Forward:
				got[e.Step][0] = name(e.Microbatch)
				if k > 0 && evs[k-1].Step == e.Step && evs[k-1].Kind != Backward {
					t.Errorf("step %d: the SparseCore forward follows %s, not the backward", e.Step, evs[k-1].Kind)
				}
			case d == 1 && e.Kind == Forward:
				got[e.Step][1] = name(e.Microbatch)
			case d == 0 && e.Kind == Backward:
				got[e.Step][2] = name(e.Microbatch)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("table:\n got  %v\n want %v", got, want)
	}
	// Steps take 1 (SC fwd), max(1, 4), then max(2+1, 4) for steps 2..n, then 2+1 (the
	// SparseCore computes its dummy forward too).
	if want := 1.0 + 4 + 4*(n-1) + 3; r.MakespanSeconds != want {
		t.Errorf("makespan %v, want %v", r.MakespanSeconds, want)
	}
	if want := []int{2, 1}; !reflect.DeepEqual(r.MaxInFlight, want) {
		t.Errorf("in flight %v, want %v", r.MaxInFlight, want)
	}
}

// Memory, hand-computed: static 100, one microbatch keeps 10 of a 15-byte working peak,
// its input is 2 bytes. GPipe, 2 stages, 4 microbatches: 100 + 15 + 3 * 10; under
// recomputation only inputs are kept: 100 + 15 + 3 * 2. ZB-H1 keeping 3 bytes from B to
// W: device 0 runs its W at once (peak 2 * 10); device 1 delays W by one microbatch, so
// one W is pending while a forward runs (10 + 3).
func TestPeakMemory(t *testing.T) {
	st := Stage{ForwardSeconds: 1, BackwardSeconds: 2, WeightGradSeconds: 1, StaticBytes: 100, ActivationBytes: 10, PeakBytes: 15, InputBytes: 2}
	pl := &Pipeline{Stages: []Stage{st, st}}
	cases := []struct {
		c    Config
		want []int64
	}{
		{Config{Kind: GPipe, Microbatches: 4}, []int64{145, 145}},
		{Config{Kind: GPipe, Microbatches: 4, Recompute: true}, []int64{121, 121}},
		{Config{Kind: OneFOneB, Microbatches: 4}, []int64{125, 115}},
		{Config{Kind: Inference, Microbatches: 4}, []int64{115, 115}},
	}
	for _, c := range cases {
		if got := mustSimulate(t, pl, c.c).PeakMemoryBytes; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s recompute=%v: peak %v, want %v", c.c, c.c.Recompute, got, c.want)
		}
	}
	zb := &Pipeline{Stages: []Stage{
		{ForwardSeconds: 1, BackwardSeconds: 2, WeightGradSeconds: 1, ActivationBytes: 10, WeightGradBytes: 3},
		{ForwardSeconds: 1, BackwardSeconds: 2, WeightGradSeconds: 1, ActivationBytes: 10, WeightGradBytes: 3},
	}}
	if got, want := mustSimulate(t, zb, Config{Kind: ZBH1, Microbatches: 4}).PeakMemoryBytes, []int64{20, 13}; !reflect.DeepEqual(got, want) {
		t.Errorf("zb-h1: peak %v, want %v", got, want)
	}
	// Recomputation runs the forward again before each backward: 1F1B's makespan grows
	// to (m + p - 1)(2F + B).
	r := mustSimulate(t, pl, Config{Kind: OneFOneB, Microbatches: 4, Recompute: true})
	if want := 5.0 * (2 + 2); r.MakespanSeconds != want {
		t.Errorf("1f1b with recomputation: makespan %v, want %v", r.MakespanSeconds, want)
	}
}

func TestInFlightOverTime(t *testing.T) {
	// GPipe, 2 stages, 2 microbatches, F = 1, B = 2: stage 1 runs F0 [1,2], F1 [2,3],
	// B0 [3,5], B1 [5,7].
	r := mustSimulate(t, uniform(2, 1, 2, 0), Config{Kind: GPipe, Microbatches: 2})
	want := []Sample{{1, 1}, {2, 2}, {5, 1}, {7, 0}}
	if !reflect.DeepEqual(r.InFlight[1], want) {
		t.Errorf("stage 1 in flight %v, want %v", r.InFlight[1], want)
	}
	wantEv := []Event{
		{Stage: 1, Kind: Forward, Microbatch: 0, Step: -1, StartSeconds: 1, EndSeconds: 2},
		{Stage: 1, Kind: Forward, Microbatch: 1, Step: -1, StartSeconds: 2, EndSeconds: 3},
		{Stage: 1, Kind: Backward, Microbatch: 0, Step: -1, StartSeconds: 3, EndSeconds: 5},
		{Stage: 1, Kind: Backward, Microbatch: 1, Step: -1, StartSeconds: 5, EndSeconds: 7},
	}
	if !reflect.DeepEqual(r.Events[1], wantEv) {
		t.Errorf("device 1 events %+v, want %+v", r.Events[1], wantEv)
	}
}

func TestAdvice(t *testing.T) {
	cases := []struct {
		c    Config
		p    int
		want string // a line of advice; "" for none
	}{
		{Config{Kind: OneFOneB, Microbatches: 8}, 8, "8 microbatches on 8 stages: the bubble wastes 47% of the step; use at least 16"},
		{Config{Kind: OneFOneB, Microbatches: 16}, 8, ""},
		{Config{Kind: IPU, Microbatches: 4}, 2, "4 microbatches on 3 pipeline stages (forward and backward stages of 2 devices): the bubble wastes 20% of the step; use at least 6"},
		{Config{Kind: GPipe, Microbatches: 32}, 4, "1f1b has the same bubble as gpipe and holds at most 4 microbatches in flight on a stage instead of 32"},
		{Config{Kind: OneFOneB, Microbatches: 1}, 1, ""},
	}
	for _, c := range cases {
		r := mustSimulate(t, uniform(c.p, 1, 1, 1), c.c)
		got := strings.Join(r.Advice, "\n")
		if got != c.want {
			t.Errorf("%s p=%d m=%d: advice %q, want %q", c.c, c.p, c.c.Microbatches, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Config
		err  string
	}{
		{"gpipe", Config{Kind: GPipe}, ""},
		{"1F1B", Config{Kind: OneFOneB}, ""},
		{"interleaved:3", Config{Kind: Interleaved, Chunks: 3}, ""},
		{"interleaved-pytorch:2", Config{Kind: Interleaved, Chunks: 2, PyTorchOrder: true}, ""},
		{"zb-h1", Config{Kind: ZBH1}, ""},
		{"ipu", Config{Kind: IPU}, ""},
		{"overlap", Config{Kind: Overlap}, ""},
		{"inference", Config{Kind: Inference}, ""},
		{"interleaved", Config{}, "needs its chunks"},
		{"interleaved-pytorch", Config{}, "interleaved-pytorch needs its chunks per device, as interleaved-pytorch:2"},
		{"interleaved-pytorch:1", Config{}, "integer >= 2"},
		{"interleaved:1", Config{}, "integer >= 2"},
		{"interleaved:x", Config{}, "integer >= 2"},
		{"1f1b:2", Config{}, "only interleaved"},
		{"pipedream", Config{}, "unknown schedule"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Parse(%q) error %v, want one containing %q", c.in, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		case c.err == "" && got.String() != strings.ToLower(c.in):
			t.Errorf("Parse(%q).String() = %q", c.in, got.String())
		}
	}
}

func TestBadInput(t *testing.T) {
	good := func() *Pipeline { return uniform(4, 1, 1, 1) }
	cases := []struct {
		name string
		p    *Pipeline
		c    Config
		want string
	}{
		{"no microbatches", good(), Config{Kind: GPipe}, "microbatches: must be >= 1"},
		{"interleaved m", good(), Config{Kind: Interleaved, Chunks: 2, Microbatches: 3}, "microbatches: interleaved needs a multiple of the 2 devices"},
		{"interleaved stages", uniform(3, 1, 1, 1), Config{Kind: Interleaved, Chunks: 2, Microbatches: 4}, "stages: interleaved:2 needs a multiple of 2 stages"},
		{"overlap stages", good(), Config{Kind: Overlap, Microbatches: 4}, "stages: overlap runs on exactly 2 stages"},
		{"chunks elsewhere", good(), Config{Kind: OneFOneB, Chunks: 2, Microbatches: 4}, "chunks: only interleaved"},
		{"pytorch order elsewhere", good(), Config{Kind: OneFOneB, Microbatches: 4, PyTorchOrder: true}, "pytorch_order: only interleaved"},
		{"pytorch interleaved m", good(), Config{Kind: Interleaved, Chunks: 2, Microbatches: 3, PyTorchOrder: true}, "microbatches: interleaved needs a multiple of the 2 devices"},
		{"unknown", good(), Config{Kind: "pipedream", Microbatches: 4}, "schedule: unknown schedule"},
		{"huge", good(), Config{Kind: GPipe, Microbatches: 1 << 30}, "more than the simulator takes"},
		{"negative time", &Pipeline{Stages: []Stage{{ForwardSeconds: -1}}}, Config{Kind: GPipe, Microbatches: 1}, "stages[0].forward_seconds: must be >= 0"},
		{"nan time", &Pipeline{Stages: []Stage{{BackwardSeconds: math.NaN()}}}, Config{Kind: GPipe, Microbatches: 1}, "stages[0].backward_seconds"},
		{"w > b", &Pipeline{Stages: []Stage{{BackwardSeconds: 1, WeightGradSeconds: 2}}}, Config{Kind: ZBH1, Microbatches: 1}, "stages[0].weight_grad_seconds: must be <= backward_seconds"},
		{"bytes", &Pipeline{Stages: []Stage{{ActivationBytes: -1}}}, Config{Kind: GPipe, Microbatches: 1}, "stages[0].activation_bytes: must be >= 0"},
		{"transfers", &Pipeline{Stages: make([]Stage, 3), TransferSeconds: []float64{1}}, Config{Kind: GPipe, Microbatches: 1}, "transfer_seconds: must hold one time per boundary (2)"},
		{"no stages", &Pipeline{}, Config{Kind: GPipe, Microbatches: 1}, "stages: must hold at least one stage"},
	}
	for _, c := range cases {
		_, err := Simulate(c.p, c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func BenchmarkSimulate1F1B(b *testing.B) {
	pl := uniform(16, 1, 2, 0)
	c := Config{Kind: OneFOneB, Microbatches: 256}
	for b.Loop() {
		if _, err := Simulate(pl, c); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzSimulate checks that any configuration either fails validation or simulates
// without a deadlock, with every operation's dependencies met and devices never running
// two operations at once.
func FuzzSimulate(f *testing.F) {
	f.Add(uint8(0), uint8(4), uint8(8), uint8(2), uint8(1), uint8(2), uint8(1), uint8(0))
	f.Add(uint8(2), uint8(3), uint8(6), uint8(3), uint8(2), uint8(5), uint8(3), uint8(1))
	f.Add(uint8(5), uint8(2), uint8(5), uint8(0), uint8(1), uint8(3), uint8(0), uint8(2))
	f.Add(uint8(4), uint8(5), uint8(1), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, kind, p, m, v, fw, bw, ww, tr uint8) {
		c := Config{Kind: Kinds[int(kind)%len(Kinds)], Microbatches: int(m % 40), Chunks: int(v % 5), Recompute: kind&8 != 0}
		stages := int(p%9) * max(1, c.Chunks)
		if c.Kind != Interleaved {
			stages, c.Chunks = int(p%9), 0
		}
		pl := uniform(stages, float64(fw%7), float64(bw%7), float64(min(ww%7, bw%7)))
		for i := 0; i+1 < stages; i++ {
			pl.TransferSeconds = append(pl.TransferSeconds, float64((int(tr)+i)%3))
		}
		r, err := Simulate(pl, c)
		if err != nil {
			return
		}
		for d, evs := range r.Events {
			for k, e := range evs {
				if e.EndSeconds < e.StartSeconds || (k > 0 && e.StartSeconds < evs[k-1].EndSeconds) {
					t.Fatalf("%s: device %d overlaps or runs backwards at %+v", c, d, e)
				}
				if e.EndSeconds > r.MakespanSeconds {
					t.Fatalf("%s: event %+v ends after the makespan %v", c, e, r.MakespanSeconds)
				}
			}
		}
		want, err := InFlight(c, stages)
		if err != nil || !reflect.DeepEqual(want, r.MaxInFlight) {
			t.Fatalf("%s: InFlight %v (%v), simulated %v", c, want, err, r.MaxInFlight)
		}
	})
}

// Megatron-LM's interleaved 1F1B holds p*v + p - 1 - 2i microbatch-chunks on device i at
// its peak (warm-up 2(p-i-1) + (v-1)p, then one more forward): Korthikanti et al.'s
// (1 + (p-1)/(pv)) p microbatches on the first device; less than the chunks' own peaks.
func TestDeviceInFlightInterleaved(t *testing.T) {
	for _, c := range []struct{ p, v, m int }{{8, 3, 64}, {4, 2, 8}, {35, 3, 280}} {
		cfg := Config{Kind: Interleaved, Chunks: c.v, Microbatches: c.m}
		got, err := DeviceInFlight(cfg, c.p*c.v, c.p)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _ := InFlight(cfg, c.p*c.v)
		for i := range c.p {
			if want := c.p*c.v + c.p - 1 - 2*i; got[i] != want {
				t.Errorf("p=%d v=%d: device %d holds %d, want %d", c.p, c.v, i, got[i], want)
			}
			sum := 0
			for k := range c.v {
				sum += chunks[k*c.p+i]
			}
			if sum < got[i] {
				t.Errorf("p=%d v=%d device %d: chunks' peaks sum to %d < %d", c.p, c.v, i, sum, got[i])
			}
		}
	}
}

// SimulateStep's direct simulation (no graph) gives, bit for bit, what the graph's
// topological pass gives, on random pipelines: uneven stages, transfers, memory, ZB-H1's
// weight gradients, recomputation, every schedule it runs.
func TestSimulateDirectIsGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for n := range 600 {
		var c Config
		switch n % 6 {
		case 0:
			c.Kind = GPipe
		case 1:
			c.Kind = OneFOneB
		case 2:
			c.Kind = ZBH1
		case 3:
			c.Kind = Interleaved
			c.Chunks = 2 + rng.IntN(3)
			c.PyTorchOrder = rng.IntN(2) == 0
		case 4:
			c.Kind = Inference
		default:
			c.Kind = OneFOneB
		}
		p := 1 + rng.IntN(7)
		stages := p * max(1, c.Chunks)
		c.Microbatches = 1 + rng.IntN(20)
		if c.Kind == Interleaved {
			c.Microbatches = p * (1 + rng.IntN(5))
		}
		c.Recompute = c.Training() && rng.IntN(3) == 0
		pl := &Pipeline{MicrobatchSize: rng.IntN(4)}
		for range stages {
			f, b := rng.Float64(), 2*rng.Float64()
			if rng.IntN(8) == 0 {
				f = 0
			}
			pl.Stages = append(pl.Stages, Stage{ForwardSeconds: f, BackwardSeconds: b, WeightGradSeconds: b * rng.Float64(),
				StaticBytes: rng.Int64N(1e9), ActivationBytes: rng.Int64N(1e8), InputBytes: rng.Int64N(1e6),
				PeakBytes: rng.Int64N(2e8), WeightGradBytes: rng.Int64N(1e6)})
		}
		if rng.IntN(2) == 0 {
			for range stages - 1 {
				pl.TransferSeconds = append(pl.TransferSeconds, 0.3*rng.Float64())
			}
		}
		if rng.IntN(2) == 0 {
			for range p {
				pl.LimitBytes = append(pl.LimitBytes, rng.Int64N(2e9))
			}
		}
		want, err := simulate(pl, c, false, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SimulateStep(pl, c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s p=%d m=%d: direct %+v, graph %+v", c, p, c.Microbatches, got, want)
		}
	}
}

// TestInterleavedInFlightSteady: InFlight, DeviceInFlight and DevicePeaks count an
// interleaved schedule's operations for at most 3p microbatches (steadyInterleaved), and
// DevicePeaks records a device's counts in its first pv steps after the warm-up only;
// counting every microbatch and recording every moment gives the same, for p up to 6
// devices, 2 to 4 chunks and m up to 12p, in Megatron-LM's order and in PyTorch's.
func TestInterleavedInFlightSteady(t *testing.T) {
	for p := 1; p <= 6; p++ {
		for v := 2; v <= 4; v++ {
			for m := p; m <= 24*p; m += p {
				// Megatron-LM's order, then (m > 12p) PyTorch's for m - 12p.
				cfg := Config{Kind: Interleaved, Chunks: v, Microbatches: m}
				if m > 12*p {
					cfg = Config{Kind: Interleaved, Chunks: v, Microbatches: m - 12*p, PyTorchOrder: true}
				}
				m := cfg.Microbatches
				S := p * v
				chunks, err := InFlight(cfg, S)
				if err != nil {
					t.Fatal(err)
				}
				devices, err := DeviceInFlight(cfg, S, p)
				if err != nil {
					t.Fatal(err)
				}
				if want := inFlightCounted(cfg, S); !slices.Equal(chunks, want) {
					t.Errorf("p=%d v=%d m=%d: InFlight %v, counting every microbatch %v", p, v, m, chunks, want)
				}
				if want := deviceInFlightCounted(cfg, S, p); !slices.Equal(devices, want) {
					t.Errorf("p=%d v=%d m=%d: DeviceInFlight %v, counting every microbatch %v", p, v, m, devices, want)
				}
				peaks, err := DevicePeaks(cfg, S, p)
				if err != nil {
					t.Fatal(err)
				}
				if want := devicePeaksRecorded(cfg, S, p, false); !reflect.DeepEqual(peaks, want) {
					t.Errorf("p=%d v=%d m=%d: DevicePeaks %v, counting every microbatch and recording every moment %v", p, v, m, peaks, want)
				}
			}
		}
	}
}

// TestDevicePeaksAgainstSimulation: a device's most held memory is the largest over its
// DevicePeaks vectors of the counts times each stage's bytes per microbatch, for any
// bytes: the simulation's peak (static and working memory 0, so that the peak is what
// the microbatches in flight hold) with random activation bytes per stage, which the
// equal-chunks counts (DeviceInFlight spread evenly) miss when chunks differ. With one
// byte per microbatch on every stage, the largest sum of a vector is DeviceInFlight, and
// a stage's largest count in them is its InFlight. No vector is dominated by another.
func TestDevicePeaksAgainstSimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	type tc struct {
		c      Config
		stages int
	}
	var cases []tc
	for p := 1; p <= 5; p++ {
		for _, m := range []int{1, 2, 3, 4, 6, 8} {
			for _, k := range []Kind{GPipe, OneFOneB, ZBH1} {
				cases = append(cases, tc{Config{Kind: k, Microbatches: m}, p})
			}
			for v := 2; v <= 4; v++ {
				cases = append(cases, tc{Config{Kind: Interleaved, Chunks: v, Microbatches: m * p}, p * v},
					tc{Config{Kind: Interleaved, Chunks: v, Microbatches: m * p, PyTorchOrder: true}, p * v})
			}
		}
	}
	uneven := 0
	for _, x := range cases {
		if x.c.Validate(x.stages) != nil {
			continue
		}
		p := x.c.Devices(x.stages)
		peaks, err := DevicePeaks(x.c, x.stages, p)
		if err != nil {
			t.Fatal(err)
		}
		total, err := DeviceInFlight(x.c, x.stages, p)
		if err != nil {
			t.Fatal(err)
		}
		own, err := InFlight(x.c, x.stages)
		if err != nil {
			t.Fatal(err)
		}
		for st := range own {
			most := 0
			for _, u := range peaks[st%p] {
				most = max(most, u[st/p])
			}
			if most != own[st] {
				t.Errorf("%s on %d stages: stage %d's largest count at its device's moments is %d, InFlight %d", x.c, x.stages, st, most, own[st])
			}
		}
		for d, vs := range peaks {
			most := 0
			for a, u := range vs {
				s := 0
				for _, c := range u {
					s += c
				}
				most = max(most, s)
				for b, w := range vs {
					if a != b {
						dominated := true
						for i := range u {
							dominated = dominated && w[i] >= u[i]
						}
						if dominated {
							t.Errorf("%s on %d stages: device %d's vector %v is dominated by %v", x.c, x.stages, d, u, w)
						}
					}
				}
			}
			if most != total[d] {
				t.Errorf("%s on %d stages: device %d's vectors sum to at most %d, DeviceInFlight %d", x.c, x.stages, d, most, total[d])
			}
		}
		for range 5 {
			pl := uniform(x.stages, 1+float64(rng.IntN(3)), 2, 0)
			for i := range pl.Stages {
				pl.Stages[i].ActivationBytes = int64(1 + rng.IntN(1000))
			}
			r := mustSimulate(t, pl, x.c)
			for d, vs := range peaks {
				var want, even int64
				for _, u := range vs {
					var s int64
					for k, c := range u {
						s += int64(c) * pl.Stages[d+k*p].ActivationBytes
					}
					want = max(want, s)
				}
				v := x.stages / p
				for k := 0; k < v; k++ {
					even += int64(total[d]) * pl.Stages[d+k*p].ActivationBytes / int64(v)
				}
				if r.PeakMemoryBytes[d] != want {
					t.Errorf("%s on %d stages, device %d: simulated peak %d bytes, DevicePeaks %d (%v)", x.c, x.stages, d, r.PeakMemoryBytes[d], want, vs)
				}
				if even < want {
					uneven++
				}
			}
		}
	}
	if uneven == 0 {
		t.Error("no device held more than equal counts over its chunks: the cases do not test uneven chunks")
	}
}

// DevicePeaks refuses stages that do not fall evenly on the devices, and a schedule
// Validate refuses, by field.
func TestDevicePeaksErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg             Config
		stages, devices int
		want            string
	}{
		{Config{Kind: Interleaved, Chunks: 2, Microbatches: 4}, 8, 3, "devices: must divide the 8 stages evenly, got 3"},
		{Config{Kind: OneFOneB, Microbatches: 4}, 4, 0, "devices: must divide the 4 stages evenly, got 0"},
		{Config{Kind: Interleaved, Chunks: 2, Microbatches: 3}, 8, 4, "microbatches: interleaved needs a multiple of the 4 devices"},
	} {
		if _, err := DevicePeaks(tc.cfg, tc.stages, tc.devices); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DevicePeaks(%s, %d stages, %d devices): %v, want %q", tc.cfg, tc.stages, tc.devices, err, tc.want)
		}
	}
}
