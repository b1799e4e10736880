package schedule

import (
	"fmt"
	"pipeplan/core/units"
	"strings"
)

// advise says how to run the pipeline better: more microbatches when the bubble is large
// (popxl's pipelining guide: at least twice the pipeline stages), a schedule that holds fewer microbatches,
// weight-gradient times that ZB-H1 needs.
func advise(p *Pipeline, cfg Config, r *Result) []string {
	var out []string
	depth, m := cfg.Depth(len(p.Stages)), cfg.Microbatches
	if depth > 1 && m < 2*depth && r.BubbleFraction > 0 {
		what := fmt.Sprintf("%d microbatches on %d stages", m, depth)
		switch cfg.Kind {
		case IPU:
			what = fmt.Sprintf("%d microbatches on %d pipeline stages (forward and backward stages of %d devices)", m, depth, r.Devices)
		case Overlap:
			what = fmt.Sprintf("%d batches through 3 phases", m)
		}
		out = append(out, fmt.Sprintf("%s: the bubble wastes %.0f%% of the step; use at least %d", what, 100*r.BubbleFraction, 2*depth))
	}
	for d, limit := range r.LimitBytes {
		if peak := r.PeakMemoryBytes[d]; peak > limit {
			var use []string
			if cfg.Kind == GPipe && cfg.Microbatches > 1 {
				use = append(use, "1f1b (fewer microbatches in flight)")
			}
			if cfg.Training() && !cfg.Recompute {
				use = append(use, "recomputation")
			}
			use = append(use, "more stages or devices with more memory")
			out = append(out, fmt.Sprintf("device %d needs %s at its peak under %s, more than its %s: use %s",
				d, units.Bytes(peak), cfg, units.Bytes(limit), strings.Join(use, ", ")))
		}
	}
	if cfg.Kind == GPipe && r.Devices > 1 && m > r.Devices {
		out = append(out, fmt.Sprintf("1f1b has the same bubble as gpipe and holds at most %d microbatches in flight on a stage instead of %d", r.Devices, m))
	}
	if cfg.Kind == ZBH1 && m > 1 {
		w := 0.0
		for _, s := range p.Stages {
			w += s.WeightGradSeconds
		}
		if w == 0 {
			out = append(out, "zb-h1 without weight-gradient times runs like 1f1b: give each stage's weight_grad_seconds")
		}
	}
	return out
}
