package evaluate

import (
	"reflect"

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
	k := [3]int{c.Tensor, c.Expert, c.MicrobatchSize}
	same, known := r.twins[k]
	if !known {
		// The estimates alone: the terms (and models) are built only for what is bounded.
		none, err := r.estimateOf(c.Tensor, c.MicrobatchSize, string(analytic.NoRecompute), 1, "", c.Expert)
		if err != nil {
			return c, false
		}
		sel, err := r.estimateOf(c.Tensor, c.MicrobatchSize, c.Recompute, 1, "", c.Expert)
		if err != nil {
			return c, false
		}
		same = sameEstimate(sel, none)
		r.twins[k] = same
	}
	if !same {
		return c, false
	}
	c.Recompute = string(analytic.NoRecompute)
	return c, true
}

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
	return reflect.DeepEqual(a.Layers, b.Layers) && a.Total == b.Total
}
