package export_test

import (
	"context"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/export"
	"pipeplan/core/request"
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

func (c archCase) request() *request.Request {
	return &request.Request{
		Model:       request.ModelSpec{Architecture: &request.Architecture{Name: c.arch, Seq: c.seq, Split: string(c.split)}},
		Cluster:     request.ClusterSpec{Device: c.device},
		Parallelism: request.Parallelism{Pipeline: c.devices, Data: c.dp, Tensor: c.tp, SequenceParallel: c.sp},
		Training:    request.Training{Recompute: string(c.recompute)},
		Schedule:    request.Schedule{Name: c.sched, Microbatches: c.m, MicrobatchSize: c.batch},
	}
}

// input plans the case and returns the export input.
func (c archCase) input(t *testing.T) *export.Input {
	t.Helper()
	return fromRequest(t, c.request())
}

// fromRequest plans a request and returns the export input.
func fromRequest(t *testing.T, r *request.Request) *export.Input {
	t.Helper()
	in, _, err := export.FromRequest(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// exampleRequest is the bundled GPT-2 medium profile on A100s.
func exampleRequest(devices int, sched string, m int) *request.Request {
	return &request.Request{
		Model:       request.ModelSpec{Example: "gpt2-medium"},
		Cluster:     request.ClusterSpec{Device: "a100-80gb"},
		Parallelism: request.Parallelism{Pipeline: devices},
		Schedule:    request.Schedule{Name: sched, Microbatches: m},
	}
}
