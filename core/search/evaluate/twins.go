package evaluate

import (
	"pipeplan/core/analytic"
	"pipeplan/core/search"
)

// Twin: a candidate with selective recomputation is the twin of the same candidate
// without recomputation when the architecture's analytic estimates of the two are equal
// in every layer and in total (as with flash attention, which keeps no attention scores
// for selective recomputation to drop: core/analytic gives both the same costs).
//
// Proof that their outcomes are equal: for an architecture, training.recompute reaches
// the planner only through the analytic options (core/request's prepare: the schedule's
// and the estimator's stage recomputation is for full recomputation of profiles), and
// Run reads the estimate only through its model (est.Model(), from est.Layers and the
// estimate's input), its layers and totals, and its options' types, which recomputation
// does not set. The data-parallel and ZeRO options the candidate adds to those compared
// here change each layer's state shares, and under ZeRO-3 its gathered working memory
// and its gathers' exposed time, from its parameters and its (equal) times alone, in the
// same way with either recomputation. So the two requests plan the same model on the same cluster with the
// same schedule: the same split, step and throughput. None comes first in the grid's
// order (search.Space lists none before selective), as Twins asks.
func (r *Evaluator) Twin(c search.Candidate) (search.Candidate, bool) {
	if !r.MayHaveTwins(c.Config) {
		return c, false
	}
	if !r.sameAt(c.Tensor, c.Expert, c.MicrobatchSize, c.Recompute) {
		return c, false
	}
	c.Recompute = string(analytic.NoRecompute)
	return c, true
}

// TwinSizes is Twin for every size of a configuration at once (search.TwinSizes): the
// twins are the configuration without recomputation.
func (r *Evaluator) TwinSizes(g search.Config, sizes []int, has []bool) (search.Config, bool) {
	if !r.MayHaveTwins(g) {
		return g, false
	}
	found := false
	known := r.twins[[2]int{g.Tensor, g.Expert}]
	for k, b := range sizes {
		if b >= 0 && b < len(known) && known[b] != 0 {
			has[k] = known[b] > 0
		} else {
			has[k] = r.sameAt(g.Tensor, g.Expert, b, g.Recompute)
			known = r.twins[[2]int{g.Tensor, g.Expert}]
		}
		found = found || has[k]
	}
	g.Recompute = string(analytic.NoRecompute)
	return g, found
}

// sameAt reports whether the estimates with recomputation rc (selective:
// MayHaveTwins) and without are the same (sameEstimate) for tensor degree t, expert
// degree e and microbatch size b, cached by (t, e) and b.
func (r *Evaluator) sameAt(t, e, b int, rc string) bool {
	k := [2]int{t, e}
	known := r.twins[k]
	if b >= 0 && b < len(known) && known[b] != 0 {
		return known[b] > 0
	}
	same := false
	// The estimates alone: the terms (and models) are built only for what is bounded.
	if none, err := r.estimateOf(t, b, string(analytic.NoRecompute), 1, "", e); err == nil {
		if sel, err := r.estimateOf(t, b, rc, 1, "", e); err == nil {
			same = sameEstimate(sel, none)
		}
	}
	if b >= 0 && b <= maxTwinSize {
		if b >= len(known) {
			known = append(known, make([]int8, b+1-len(known))...)
			r.twins[k] = known
		}
		known[b] = -1
		if same {
			known[b] = 1
		}
	}
	return same
}

// maxTwinSize bounds the microbatch sizes sameAt caches.
const maxTwinSize = 1 << 16

// MayHaveTwins: only candidates with selective recomputation of an architecture in
// training, without context parallelism (Twin compares estimates with none), may have
// twins (Twin).
func (r *Evaluator) MayHaveTwins(g search.Config) bool {
	return g.Recompute == string(analytic.Selective) && r.arch != nil && r.train && g.Context <= 1
}

// sameEstimate reports whether two analytic estimates of options that differ in
// recomputation alone cost every layer alike: the same layers and totals. Their models
// are then equal too (but for the name, which states the options): Result.Model builds
// a model from the layers and from what the other options decide (bytes per parameter,
// the optimizer's share, the input, tensor and sequence parallelism).
func sameEstimate(a, b *analytic.Result) bool {
	return analytic.SameLayers(a.Layers, b.Layers) && a.Total == b.Total
}
