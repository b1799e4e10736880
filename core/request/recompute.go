package request

import (
	"pipeplan/core/analytic"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
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
// architecture's blocks recompute some of their parts (selective recomputation of each
// set of the modules that apply, autoModules) or the whole block (full), as the
// analytic estimate costs each (recompute.FromVariants). A variant the estimate
// refuses (full recomputation with overlapped expert communication) is not offered.
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
	var vs []recompute.Variant
	for _, s := range p.autoModuleSets() {
		k := p.estKey
		k.opts.Recompute, k.opts.RecomputeModules = analytic.Selective, s
		_, m, err := p.cache.estimate(k, p.arch, p.target, k.opts)
		if err != nil {
			continue
		}
		vs = append(vs, recompute.Variant{Part: s.String(), Model: m})
	}
	vs = append(vs, recompute.Variant{Part: recompute.Full, Model: variant(analytic.Full)})
	c, err := recompute.FromVariants(p.model, variant(analytic.NoRecompute), vs)
	if err != nil {
		return recompute.ForProfile(p.model)
	}
	return c
}

// recomputeFixed are the parts of the global modes auto is compared with
// (plan.Options.RecomputeFixed): for an architecture selective recomputation's (the
// request's modules, or the attention core) and full; nil for a profile, whose global
// full is the whole-stage form (plan.Options.RecomputeStages).
func (p *prepared) recomputeFixed() []string {
	if p.req.Training.Recompute != RecomputeAuto || p.arch == nil {
		return nil
	}
	sel := recompute.Attention
	if p.modules != 0 {
		sel = p.modules.String()
	}
	return []string{sel, recompute.Full}
}

// autoModuleSets are the sets of a block's parts auto may recompute: every nonempty
// subset of the modules training.recompute_modules names (all that change something in
// the model when it names none: analytic.Applicable), but those that name moe with
// moe_act or shared_experts (moe reruns them already).
func (p *prepared) autoModuleSets() []analytic.Modules {
	k := p.estKey
	allowed := analytic.Applicable(p.arch, k.opts)
	if p.modules != 0 {
		allowed &= p.modules
	}
	var bits []analytic.Modules
	for b := analytic.Modules(1); b != 0 && b <= allowed; b <<= 1 {
		if allowed&b != 0 {
			bits = append(bits, b)
		}
	}
	var out []analytic.Modules
	for mask := 1; mask < 1<<len(bits); mask++ {
		var s analytic.Modules
		for i, b := range bits {
			if mask&(1<<i) != 0 {
				s |= b
			}
		}
		if s&analytic.ModMoE != 0 && s&(analytic.ModMoEAct|analytic.ModSharedExperts) != 0 {
			continue
		}
		out = append(out, s)
	}
	return out
}
