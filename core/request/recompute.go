package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/recompute"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// RecomputeAuto is training.recompute's per-layer recomputation: each stage recomputes
// the layers (for an architecture, each block's attention core or the whole block) that
// let it fit its memory with the least extra time, chosen with the split (core/recompute,
// plan.Options.Recompute).
const RecomputeAuto = "auto"

// archRecompute is what an architecture is costed with: nothing recomputed under auto
// (its per-layer options are costed beside, recomputeChoices).
func archRecompute(r string) analytic.Recompute {
	if r == RecomputeAuto {
		return analytic.NoRecompute
	}
	return analytic.Recompute(r)
}

// recomputeChoices are the layers' options under recompute auto, nil otherwise: a
// profile's layers recompute whole, keeping their inputs (recompute.ForProfile); an
// architecture's blocks recompute their attention core (selective) or the whole block
// (full), as the analytic estimate costs each (recompute.FromVariants). A variant the
// estimate refuses (full recomputation with overlapped expert communication) is not
// offered.
func (p *prepared) recomputeChoices() recompute.Choices {
	if p.req.Training.Recompute != RecomputeAuto || !p.train() || p.model == nil {
		return nil
	}
	if p.arch == nil {
		return recompute.ForProfile(p.model)
	}
	variant := func(r analytic.Recompute) *model.Model {
		k := p.estKey
		k.opts.Recompute = r
		_, m, err := p.cache.estimate(k, p.arch, p.target, k.opts)
		if err != nil {
			return nil
		}
		return m
	}
	c, err := recompute.FromVariants(p.model, variant(analytic.NoRecompute), variant(analytic.Selective), variant(analytic.Full))
	if err != nil {
		return recompute.ForProfile(p.model)
	}
	return c
}

// recomputeAuto refuses recompute auto where per-layer recomputation is not planned:
// it minimises the slowest stage's compute over ranges of the layer order, each stage
// on a device of its own.
func (p *prepared) recomputeAuto(es *model.Errors) {
	r := p.req
	if r.Training.Recompute != RecomputeAuto {
		return
	}
	switch {
	case r.Objective != partition.MaxCompute.String():
		es.Add("training.recompute", "auto minimises the slowest stage's compute: it needs objective compute, got %q", r.Objective)
	case r.Partition == wire.PartitionGraph:
		es.Add("training.recompute", "auto splits ranges of the layer order: it does not go with partition graph")
	case p.sched.Kind == schedule.Interleaved && p.sched.Chunks > 1:
		es.Add("training.recompute", "auto chooses per stage, and an interleaved schedule's chunks share their device's memory: use 1f1b, gpipe or zb-h1")
	}
}
