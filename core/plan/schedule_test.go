package plan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

const mib = 1 << 20

// chain is n equal layers (forward 1 s, backward 2 s), each with the given parameter and
// activation bytes, passing a tensor of tensorBytes to the next.
func chain(n int, paramBytes, actBytes, tensorBytes int64) *model.Model {
	m := &model.Model{Name: "chain"}
	for i := 0; i < n; i++ {
		l := model.Layer{Name: fmt.Sprintf("l%d", i), ForwardSeconds: 1, BackwardSeconds: 2,
			ParamBytes: paramBytes, ActivationBytes: actBytes}
		if tensorBytes > 0 {
			l.Outputs = []model.Tensor{{ID: fmt.Sprintf("t%d", i), Bytes: tensorBytes}}
			if i > 0 {
				l.InputIDs = []string{fmt.Sprintf("t%d", i-1)}
			}
		}
		m.Layers = append(m.Layers, l)
	}
	return m
}

func devices(p int, memoryBytes int64) *cluster.Cluster {
	return cluster.Homogeneous(cluster.Device{Name: "d", MemoryBytes: memoryBytes}, p, cluster.Link{}, nil)
}

func with(c schedule.Config) Options { return Options{Schedule: &ScheduleOptions{Config: c}} }

// Activations dominate: 12 layers of 1 MiB parameters and 1 MiB activations on 4 devices
// of 12 MiB. A range of k layers with f microbatches in flight needs k MiB of parameters,
// the peak of one microbatch (model.WorkingPeakBytes: all its activations, k MiB, alive
// where its forward ends; the layers state no temporaries) and the activations of the
// f - 1 others, (f - 1)k MiB: (f + 1)k MiB. Blind to the schedule (f = 1) a stage may
// hold 6 layers, so the best split is 3 + 3 + 3 + 3. Under 1F1B with 8 microbatches stage
// i holds f = 4 - i: at most 2, 3, 4, 6 layers, so the best split has a bottleneck of 4
// layers (12 s) and gives the first stage 2. The blind split, run under 1F1B, needs
// 3 + 3 * 4 = 15 MiB on device 0. GPipe keeps all 8 microbatches: 9k MiB, one layer per
// stage, which fits no split of 12.
func TestScheduleAwarePlanFitsWhereBlindRunsOutOfMemory(t *testing.T) {
	m := chain(12, mib, mib, 0)
	c := devices(4, 12*mib)
	oneF := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 8})

	blind, err := Make(m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 6, 9, 12}; !reflect.DeepEqual(blind.Boundaries, want) {
		t.Fatalf("blind boundaries %v, want %v", blind.Boundaries, want)
	}
	if blind.Schedule != nil {
		t.Errorf("a plan without a schedule carries one: %+v", blind.Schedule)
	}

	aware, err := Make(m, c, oneF)
	if err != nil {
		t.Fatal(err)
	}
	if aware.Boundaries[1] != 2 || aware.Bottleneck != 12 {
		t.Errorf("1f1b-aware plan: boundaries %v, bottleneck %v; want the first stage to hold 2 layers and a bottleneck of 12 s", aware.Boundaries, aware.Bottleneck)
	}
	if got := aware.Boundaries[1] - aware.Boundaries[0]; got >= blind.Boundaries[1] {
		t.Errorf("1f1b gives the first stage %d layers, the blind plan %d: want fewer", got, blind.Boundaries[1])
	}
	s := aware.Schedule
	if s == nil {
		t.Fatal("the schedule-aware plan carries no schedule")
	}
	for i, st := range aware.Stages {
		if s.PeakMemoryBytes[i] > st.LimitBytes || s.PeakMemoryBytes[i] != st.MemoryBytes {
			t.Errorf("stage %d: simulated peak %d, planned %d, limit %d: want the planned memory, within the limit", i, s.PeakMemoryBytes[i], st.MemoryBytes, st.LimitBytes)
		}
	}
	if len(s.Advice) != 0 {
		t.Errorf("advice for a plan that fits with 8 microbatches on 4 stages: %q", s.Advice)
	}

	r, err := Simulate(m, c, blind.Boundaries, oneF)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{15 * mib, 12 * mib, 9 * mib, 6 * mib}; !reflect.DeepEqual(r.PeakMemoryBytes, want) {
		t.Errorf("blind split under 1f1b: peaks %v, want %v", r.PeakMemoryBytes, want)
	}
	if r.PeakMemoryBytes[0] <= c.Devices[0].MemoryBytes {
		t.Errorf("blind split under 1f1b fits device 0 (%d bytes)", r.PeakMemoryBytes[0])
	}
	wantAdvice := "device 0 needs 15 MiB at its peak under 1f1b, more than its 12 MiB: use recomputation, more stages or devices with more memory"
	if len(r.Advice) != 1 || r.Advice[0] != wantAdvice {
		t.Errorf("advice %q, want %q", r.Advice, wantAdvice)
	}

	_, err = Make(m, c, with(schedule.Config{Kind: schedule.GPipe, Microbatches: 8}))
	if !errors.Is(err, ErrNoFit) {
		t.Errorf("gpipe with 8 microbatches: %v, want ErrNoFit", err)
	}
}

// OneMicrobatch plans as Graphcore's auto-pipeline tool counts memory, one microbatch's
// activations on every stage: on the fixture above the split under 1F1B is then the
// blind one (3 + 3 + 3 + 3), each stage planned with one microbatch in flight and no
// stash, while the simulated step keeps 1F1B's in-flight microbatches and says that
// device 0 then needs 15 MiB.
func TestOneMicrobatchPlansAsBlind(t *testing.T) {
	m := chain(12, mib, mib, 0)
	c := devices(4, 12*mib)
	opt := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 8})
	opt.Schedule.OneMicrobatch = true
	p, err := Make(m, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 6, 9, 12}; !reflect.DeepEqual(p.Boundaries, want) {
		t.Errorf("boundaries %v, want the blind plan's %v", p.Boundaries, want)
	}
	for i, st := range p.Stages {
		if st.InFlight != 1 || st.StashBytes != 0 || st.MemoryBytes > st.LimitBytes {
			t.Errorf("stage %d: %d in flight, stash %d, memory %d of %d: want one microbatch, no stash, within the limit", i, st.InFlight, st.StashBytes, st.MemoryBytes, st.LimitBytes)
		}
	}
	if got, want := p.Schedule.MaxInFlight, []int{4, 3, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("simulated in flight %v, want 1f1b's %v", got, want)
	}
	if got := p.Schedule.PeakMemoryBytes[0]; got != 15*mib || len(p.Schedule.Advice) == 0 {
		t.Errorf("simulated peak of device 0 %d, advice %q: want 15 MiB and advice", got, p.Schedule.Advice)
	}
}

// The simulator's peak per device and the estimator's memory per stage are computed
// independently (memory changes sorted in time; prefix sums and in-flight counts), and
// agree exactly for every schedule with one stage per device.
func TestSimulatedPeakMatchesPlannedMemory(t *testing.T) {
	m := chain(10, 3*mib, 2*mib, mib/2)
	m.Layers[4].TemporaryBytes = 5 * mib
	c := devices(3, 1<<40)
	for _, k := range []schedule.Kind{schedule.GPipe, schedule.OneFOneB, schedule.ZBH1, schedule.IPU, schedule.Inference} {
		for _, re := range []bool{false, true} {
			if k == schedule.Inference && re {
				continue
			}
			p, err := Make(m, c, with(schedule.Config{Kind: k, Microbatches: 5, Recompute: re}))
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range p.Stages {
				if got := p.Schedule.PeakMemoryBytes[i]; got != st.MemoryBytes {
					t.Errorf("%s recompute=%v stage %d: simulated peak %d, planned %d", k, re, i, got, st.MemoryBytes)
				}
				if got := p.Schedule.MaxInFlight[i]; got != st.InFlight {
					t.Errorf("%s stage %d: simulated in flight %d, planned %d", k, i, got, st.InFlight)
				}
			}
		}
	}
}

// Cycles convert with the clock: 1000-cycle forwards and 2000-cycle backwards at 1 kHz
// are 1 s and 2 s, so 2 layers per stage give 1F1B (m + p - 1)(F + B) = 5 * 6 s.
func TestScheduleInCycles(t *testing.T) {
	m := &model.Model{TimeUnit: model.Cycles}
	for i := 0; i < 4; i++ {
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprint(i), ForwardCycles: 1000, BackwardCycles: 2000})
	}
	c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 30, ClockHz: 1000}, 2, cluster.Link{}, nil)
	opt := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})
	opt.Schedule.MicrobatchSize = 6
	p, err := Make(m, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Schedule.MakespanSeconds != 30 || p.Schedule.Throughput != 24.0/30 {
		t.Errorf("makespan %v s, throughput %v; want 30 s and 24 samples / 30 s", p.Schedule.MakespanSeconds, p.Schedule.Throughput)
	}
	c.Devices[0].ClockHz, c.Devices[1].ClockHz = 0, 0
	if _, err := Make(m, c, opt); err == nil || !strings.Contains(err.Error(), "devices[0].clock_hz") {
		t.Errorf("cycles without a clock: %v", err)
	}
}

// Transfers: latency 0.5 s plus 1000 bytes at 1000 B/s per boundary; GPipe takes
// (m + p - 1)(F + B) + 2(p - 1)T = 4 * 6 + 2 * 1.5 s.
func TestScheduleTransfers(t *testing.T) {
	m := chain(4, 0, 0, 1000)
	c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 30}, 2, cluster.Link{LatencySeconds: 0.5, BytesPerSecond: 1000}, nil)
	p, err := Make(m, c, with(schedule.Config{Kind: schedule.GPipe, Microbatches: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if want := 27.0; p.Schedule.MakespanSeconds != want {
		t.Errorf("makespan %v, want %v", p.Schedule.MakespanSeconds, want)
	}
}

// Host transfers are part of the simulated step: with an input of 1000 bytes and an output
// of 500 bytes over a host link of 1000 B/s (no latency), the first stage's forward takes
// 1 s longer and the last's 0.5 s. GPipe with m = 3 on two stages of F = 2 s, B = 4 s:
// stage 0 forwards end at 9 s, stage 1's last at 11.5 s, then three backwards on each.
// With HostEveryStage (Graphcore) every stage waits for both: F = 3.5 s on both stages.
func TestScheduleHostTransfers(t *testing.T) {
	m := chain(4, 0, 0, 0)
	m.Inputs = []model.Tensor{{ID: "x", Bytes: 1000}}
	m.Layers[0].InputIDs = []string{"x"}
	m.Layers[3].Outputs = []model.Tensor{{ID: "y", Bytes: 500}}
	host := &cluster.Link{BytesPerSecond: 1000}
	for _, tc := range []struct {
		every bool
		want  float64
	}{
		// F0 = 3 s, F1 = 2.5 s, B = 4 s: the slower stage 0 paces the forwards.
		{false, 3 + 3 + 3 + 2.5 + 4*3 + 4},
		// Both stages F = 3.5 s.
		{true, (3 + 2 - 1) * (3.5 + 4)},
	} {
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 30}, 2, cluster.Link{}, host)
		c.HostEveryStage = tc.every
		p, err := Make(m, c, with(schedule.Config{Kind: schedule.GPipe, Microbatches: 3}))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Schedule.MakespanSeconds; got != tc.want {
			t.Errorf("host every stage %v: makespan %v s, want %v", tc.every, got, tc.want)
		}
	}
}

// Interleaved plans p*v stages, stage j on device j mod p, sharing its memory; with
// equal chunks of forward f = 2 s and backward b = 4 s, (vm + p - 1)(f + b) = 9 * 6 s.
func TestInterleavedPlan(t *testing.T) {
	m := chain(8, mib, mib, 0)
	c := devices(2, 64*mib)
	opt := with(schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4})
	opt.Schedule.Events = true
	p, err := Make(m, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Schedule
	if want := []int{0, 2, 4, 6, 8}; !reflect.DeepEqual(p.Boundaries, want) {
		t.Errorf("boundaries %v, want %v", p.Boundaries, want)
	}
	if want := []int{0, 1, 0, 1}; !reflect.DeepEqual(s.StageDevices, want) {
		t.Errorf("stage devices %v, want %v", s.StageDevices, want)
	}
	if s.MakespanSeconds != 54 || s.Devices != 2 || len(s.PeakMemoryBytes) != 2 {
		t.Errorf("makespan %v on %d devices with %d peaks, want 54 s on 2", s.MakespanSeconds, s.Devices, len(s.PeakMemoryBytes))
	}
	// Device 0 holds chunks 0 and 2: 2 layers each of 1 MiB static; Megatron's warm-up
	// 2(p-1) + (v-1)p = 4 forwards plus one at work, of 2 MiB each; the one at work at its
	// working peak, which is what it keeps (2 MiB: the layers state no temporaries, and
	// all its activations are alive where its forward ends, model.WorkingPeakBytes).
	want := int64(4*mib + 5*2*mib)
	if s.PeakMemoryBytes[0] != want {
		t.Errorf("device 0 peak %d, want %d", s.PeakMemoryBytes[0], want)
	}
	// Device 0's chunks 0 and 2 share its 64 MiB: each may grow by what the device has
	// left, the 64 MiB less its peak (not less the other chunk's memory: a chunk alone
	// counts its own microbatches at its own peak, and its working memory).
	for _, j := range []int{0, 2} {
		if st := p.Stages[j]; st.LimitBytes-st.MemoryBytes != 64*mib-want {
			t.Errorf("chunk %d: limit %d less memory %d, want the device's 64 MiB less its peak %d", j, st.LimitBytes, st.MemoryBytes, want)
		}
	}
	if n := len(s.Events[0]); n != 2*4*2 {
		t.Errorf("device 0 ran %d operations, want 2 chunks * 4 microbatches * (F, B)", n)
	}
}

// With HostEveryStage every stage's transfer holds both host terms (1 s each here), also
// for the p*v stages of an interleaved plan, whose cluster of stages used to drop the flag.
func TestInterleavedPlanHostEveryStage(t *testing.T) {
	m := chain(4, 1, 0, 8)
	c := devices(2, 1<<30)
	c.Host, c.HostEveryStage = &cluster.Link{LatencySeconds: 1}, true
	for _, opt := range []Options{{}, with(schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 2})} {
		p, err := Make(m, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range p.Stages {
			if s.Transfer != 2 {
				t.Errorf("%d stages: stage %d transfer %v s, want 2 (both host terms)", len(p.Stages), i, s.Transfer)
			}
		}
	}
}

func TestScheduleOptionErrors(t *testing.T) {
	m := chain(6, mib, mib, 0)
	c := devices(3, 1<<30)
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"inference with 1f1b", Options{Estimate: inferenceOnly(), Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4}}}, "schedule: 1f1b is a training schedule"},
		{"fraction", Options{Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.ZBH1, Microbatches: 4}, WeightGradFraction: 2}}, "schedule.weight_grad_fraction"},
		{"interleaved m", with(schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4}), "microbatches: interleaved needs a multiple of the 3 devices"},
		{"overlap", with(schedule.Config{Kind: schedule.Overlap, Microbatches: 4}), "stages: overlap runs on exactly 2 stages"},
		{"microbatches", with(schedule.Config{Kind: schedule.GPipe}), "microbatches: must be >= 1"},
	}
	for _, tc := range cases {
		if _, err := Make(m, c, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	opt := with(schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})
	for _, b := range [][]int{{0, 6}, {0, 3, 3, 6}, {1, 2, 4, 6}, {0, 2, 4, 7}} {
		if _, err := Simulate(m, c, b, opt); err == nil || !strings.Contains(err.Error(), "boundaries") {
			t.Errorf("Simulate with boundaries %v: %v, want an error naming them", b, err)
		}
	}
	if _, err := Simulate(m, c, []int{0, 2, 4, 6}, Options{}); err == nil {
		t.Error("Simulate without a schedule: no error")
	}
}

func inferenceOnly() estimate.Options { return estimate.Options{Inference: true} }
