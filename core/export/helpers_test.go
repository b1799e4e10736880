package export_test

import (
	"context"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// archCase is an architecture planned on devices of a preset under a schedule.
type archCase struct {
	arch      string
	device    string
	devices   int
	sched     string
	m         int
	batch     int
	seq       int
	split     analytic.Split
	recompute analytic.Recompute
	tp, dp    int
	sp        bool
}

func (c archCase) request() *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: c.arch, Seq: c.seq, Split: string(c.split)}},
		Cluster:     wire.ClusterSpec{Device: c.device},
		Parallelism: wire.Parallelism{Pipeline: c.devices, Data: c.dp, Tensor: c.tp, SequenceParallel: c.sp},
		Training:    wire.Training{Recompute: string(c.recompute)},
		Schedule:    wire.Schedule{Name: c.sched, Microbatches: c.m, MicrobatchSize: c.batch},
	}
}

// input plans the case and returns the export input.
func (c archCase) input(t *testing.T) *export.Input {
	t.Helper()
	return fromRequest(t, c.request())
}

// fromRequest plans a request and returns the export input.
func fromRequest(t *testing.T, r *wire.Request) *export.Input {
	t.Helper()
	in, _, err := export.FromRequest(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// exampleRequest is the bundled GPT-2 medium profile on A100s.
func exampleRequest(devices int, sched string, m int) *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Example: "gpt2-medium"},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb"},
		Parallelism: wire.Parallelism{Pipeline: devices},
		Schedule:    wire.Schedule{Name: sched, Microbatches: m},
	}
}
