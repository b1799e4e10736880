package export_test

import (
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/export"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// archCase is an architecture planned on devices of a preset under a schedule.
type archCase struct {
	name      string
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
}

// input plans the case and returns the export input.
func (c archCase) input(t *testing.T) *export.Input {
	t.Helper()
	a, err := arch.Bundled(c.arch)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := analytic.PresetTarget(c.device)
	if err != nil {
		t.Fatal(err)
	}
	rec := c.recompute
	if rec == "" {
		rec = analytic.NoRecompute
	}
	r, err := analytic.Estimate(a, tg, analytic.Options{Batch: c.batch, Seq: c.seq, Split: c.split, Recompute: rec})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Model()
	cl, err := cluster.FromPreset(c.device, c.devices)
	if err != nil {
		t.Fatal(err)
	}
	return planInput(t, m, cl, c.sched, c.m, c.batch, a, c.seq, string(rec), c.tp, c.dp)
}

// planInput plans m on cl under the named schedule and returns the export input.
func planInput(t *testing.T, m *model.Model, cl *cluster.Cluster, sched string, microbatches, batch int, a *arch.Arch, seq int, recompute string, tp, dp int) *export.Input {
	t.Helper()
	cfg, err := schedule.Parse(sched)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Microbatches = microbatches
	opt := plan.Options{Schedule: &plan.ScheduleOptions{Config: cfg, MicrobatchSize: batch}}
	p, err := plan.Make(m, cl, opt)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(m.Layers))
	for i, l := range m.Layers {
		names[i] = l.Name
	}
	return &export.Input{
		Model: m.Name, LayerNames: names, Arch: a, Seq: seq,
		Boundaries: p.Boundaries, Schedule: cfg, MicrobatchSize: batch,
		Data: dp, Tensor: tp, Recompute: recompute, Plan: p,
		Coster: &export.PlanCoster{Model: m, Cluster: cl, Options: opt},
	}
}
