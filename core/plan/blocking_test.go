package plan

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/schedule"
)

// TestBlockingTransfers: DeepSpeed's PipelineEngine sends and receives in the stages'
// own streams (ScheduleOptions.BlockingTransfers), so each transfer occupies both stages
// it joins. One microbatch through S stages of one layer each (forward 1 s, backward
// 2 s) over links of T s a transfer runs the forward passes and then the backward
// passes in a chain: with transfers beside compute each boundary adds T each way,
// S(F+B) + 2T(S-1); blocking, each transfer is in both stages' passes, S(F+B) + 4T(S-1).
// With many microbatches the step is what the pipeline of the stage times the rule sets
// (a middle stage's microbatch takes F + B + 4T) takes with free transfers
// (schedule.SimulateStep), longer than with the transfers beside compute.
func TestBlockingTransfers(t *testing.T) {
	const S, T = 4, 0.25
	m := chain(S, 0, 0, 1<<20)
	c := cluster.Homogeneous(cluster.Device{Name: "d", MemoryBytes: 1 << 40}, S, cluster.Link{BytesPerSecond: (1 << 20) / T}, nil)
	bounds := []int{0, 1, 2, 3, 4}
	step := func(cfg schedule.Config, blocking bool) float64 {
		t.Helper()
		r, err := Simulate(m, c, bounds, Options{Schedule: &ScheduleOptions{Config: cfg, BlockingTransfers: blocking}})
		if err != nil {
			t.Fatal(err)
		}
		return r.MakespanSeconds
	}
	one := schedule.Config{Kind: schedule.OneFOneB, Microbatches: 1}
	for _, c := range []struct {
		blocking bool
		want     float64
	}{{false, S*3 + 2*T*(S-1)}, {true, S*3 + 4*T*(S-1)}} {
		if got := step(one, c.blocking); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("one microbatch, blocking %v: %v s, want %v s", c.blocking, got, c.want)
		}
	}
	many := schedule.Config{Kind: schedule.OneFOneB, Microbatches: 16}
	pl := &schedule.Pipeline{}
	for s := 0; s < S; s++ {
		st := schedule.Stage{ForwardSeconds: 1, BackwardSeconds: 2, WeightGradSeconds: 1}
		if s > 0 {
			st.ForwardSeconds += 2 * T
		}
		if s < S-1 {
			st.BackwardSeconds += 2 * T
		}
		pl.Stages = append(pl.Stages, st)
	}
	ref, err := schedule.SimulateStep(pl, many)
	if err != nil {
		t.Fatal(err)
	}
	free := step(many, false)
	if got := step(many, true); math.Abs(got-ref.MakespanSeconds) > 1e-9 || !(got > free) {
		t.Errorf("16 microbatches: blocking %v s, the stages' times with the transfers in them %v s, transfers beside compute %v s: want the second, longer than the third",
			got, ref.MakespanSeconds, free)
	}
	// Inference (DeepSpeed's InferenceSchedule) sends each activation once, forward: a
	// transfer is in the forward pass of both stages it joins. One microbatch takes
	// SF + T(S-1) beside compute, SF + 2T(S-1) blocking; many take what the stages'
	// forward times with the transfers in them take with free transfers.
	infOne := schedule.Config{Kind: schedule.Inference, Microbatches: 1}
	for _, c := range []struct {
		blocking bool
		want     float64
	}{{false, S + T*(S-1)}, {true, S + 2*T*(S-1)}} {
		if got := step(infOne, c.blocking); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("inference, one microbatch, blocking %v: %v s, want %v s", c.blocking, got, c.want)
		}
	}
	inf := schedule.Config{Kind: schedule.Inference, Microbatches: 16}
	ipl := &schedule.Pipeline{}
	for s := 0; s < S; s++ {
		st := schedule.Stage{ForwardSeconds: 1}
		if s > 0 {
			st.ForwardSeconds += T
		}
		if s < S-1 {
			st.ForwardSeconds += T
		}
		ipl.Stages = append(ipl.Stages, st)
	}
	iref, err := schedule.SimulateStep(ipl, inf)
	if err != nil {
		t.Fatal(err)
	}
	ifree := step(inf, false)
	if got := step(inf, true); math.Abs(got-iref.MakespanSeconds) > 1e-9 || !(got > ifree) {
		t.Errorf("inference, 16 microbatches: blocking %v s, the stages' forward times with the transfers in them %v s, transfers beside compute %v s: want the second, longer than the third",
			got, iref.MakespanSeconds, ifree)
	}
}

// TestPartitionedBoundary: with DeepSpeed's partitioned pipeline tensors
// (ScheduleOptions.PartitionedBoundary), each boundary adds its sender's slicing to the
// sender's forward pass, its gathers to the receiver's forward pass and the sender's
// backward pass, given the bytes the transfer sends. One microbatch runs every pass in
// a chain, so S stages of one layer (forward 1 s, backward 2 s, transfers T blocking)
// take S(F+B) + 4T(S-1) + (S-1)(a + b + c); in inference the forward passes alone,
// SF + 2T(S-1) + (S-1)(a + b) (the function returns no backward work there). The
// function is asked about the bytes each boundary sends (chain's 1 MiB).
func TestPartitionedBoundary(t *testing.T) {
	const S, T = 4, 0.25
	const a, b, c = 0.01, 0.03, 0.05
	m := chain(S, 0, 0, 1<<20)
	cl := cluster.Homogeneous(cluster.Device{Name: "d", MemoryBytes: 1 << 40}, S, cluster.Link{BytesPerSecond: (1 << 20) / T}, nil)
	for _, k := range []struct {
		cfg  schedule.Config
		back float64
		want float64
	}{
		{schedule.Config{Kind: schedule.OneFOneB, Microbatches: 1}, c, S*3 + 4*T*(S-1) + (S-1)*(a+b+c)},
		{schedule.Config{Kind: schedule.Inference, Microbatches: 1}, 0, S + 2*T*(S-1) + (S-1)*(a+b)},
	} {
		var asked []int64
		so := &ScheduleOptions{Config: k.cfg, BlockingTransfers: true, PartitionedBoundary: func(n int64) cluster.PartitionedBoundary {
			asked = append(asked, n)
			return cluster.PartitionedBoundary{SenderForward: a, ReceiverForward: b, SenderBackward: k.back}
		}}
		r, err := Simulate(m, cl, []int{0, 1, 2, 3, 4}, Options{Schedule: so})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.MakespanSeconds-k.want) > 1e-12 {
			t.Errorf("%v: %v s, want %v s", k.cfg.Kind, r.MakespanSeconds, k.want)
		}
		if len(asked) == 0 || asked[0] != 1<<20 {
			t.Errorf("%v: asked about %v bytes, want 1 MiB a boundary", k.cfg.Kind, asked)
		}
	}
}
