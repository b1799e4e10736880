package search

import (
	"math"
	"slices"
)

// NearTie is the relative throughput within which two feasible outcomes count as tied
// for the best: the search's Best is, among the outcomes within NearTie (1%) of the
// fastest, the one with the most memory headroom (Outcome.HeadroomBytes), then the
// fastest, then fewer devices, then the grid's order. A 0.1% gain is within what the
// planner's estimates can tell apart; 25 GiB of free memory is room for a longer
// sequence, a larger microbatch or the estimate's error. The search prunes against
// (1 - NearTie) times the best it has found, so that the rule is exact for the grid.
const NearTie = 0.01

// tieFloor is the throughput a candidate must reach to be in a near-tie with best.
func tieFloor(best float64) float64 { return best * (1 - NearTie) }

// pickBest returns the best of the outcomes by the near-tie rule (NearTie), nil when
// none is feasible.
func pickBest(os []Outcome) *Outcome {
	fastest := -1.0
	for i := range os {
		if os[i].Feasible {
			fastest = max(fastest, os[i].SamplesPerSecond)
		}
	}
	if fastest < 0 {
		return nil
	}
	floor := tieFloor(fastest)
	var best *Outcome
	for i := range os {
		o := &os[i]
		if !o.Feasible || o.SamplesPerSecond < floor {
			continue
		}
		if best == nil || o.HeadroomBytes > best.HeadroomBytes || (o.HeadroomBytes == best.HeadroomBytes && better(o, best)) {
			best = o
		}
	}
	b := *best
	return &b
}

// Alike says whether two outcomes are the same run for whoever reads the results: both
// feasible, on the same devices, stages, replicas, tensor, context and expert degrees,
// schedule, microbatches and microbatch size, with throughput equal to a relative 1e-9,
// so that the knobs they differ in (ZeRO, recomputation, memory proportion) changed no
// time. Of alike outcomes Rows keeps the one with the most headroom (the others are no
// faster and hold more memory: ZeRO-0 beside ZeRO-1 at the same speed).
func Alike(a, b *Outcome) bool {
	ca, cb := a.Candidate, b.Candidate
	ca.ZeRO, cb.ZeRO = 0, 0
	ca.Recompute, cb.Recompute = "", ""
	ca.MemoryProportion, cb.MemoryProportion = 0, 0
	if ca != cb || !a.Feasible || !b.Feasible {
		return false
	}
	return math.Abs(a.SamplesPerSecond-b.SamplesPerSecond) <= 1e-9*math.Max(a.SamplesPerSecond, b.SamplesPerSecond)
}

// rows are the feasible outcomes, the best first (Report.Best), then fastest first
// (ties as Report.Best's), with alike outcomes (Alike) collapsed into one row: the one
// with the most headroom (then the first in that order), which lists the others'
// candidates in its Alike.
func rows(os []Outcome, best *Outcome) []Outcome {
	var fs []Outcome
	for _, o := range os {
		if o.Feasible {
			o.Alike = nil
			fs = append(fs, o)
		}
	}
	slices.SortStableFunc(fs, func(a, b Outcome) int {
		switch {
		case best != nil && a.Candidate == best.Candidate && b.Candidate != best.Candidate:
			return -1
		case best != nil && b.Candidate == best.Candidate && a.Candidate != best.Candidate:
			return 1
		case better(&a, &b):
			return -1
		case better(&b, &a):
			return 1
		}
		return 0
	})
	out := []Outcome{}
	for _, o := range fs {
		// Alike outcomes have the same throughput, so they sit together in the order:
		// look at the best (row 0) and back over the last rows.
		at := -1
		for i := len(out) - 1; i >= max(0, len(out)-64); i-- {
			if Alike(&out[i], &o) {
				at = i
				break
			}
		}
		if at < 0 && len(out) > 0 && Alike(&out[0], &o) {
			at = 0
		}
		switch {
		case at < 0:
			out = append(out, o)
		case o.HeadroomBytes > out[at].HeadroomBytes:
			alike := append(out[at].Alike, out[at].Candidate)
			out[at], out[at].Alike = o, alike
		default:
			out[at].Alike = append(out[at].Alike, o.Candidate)
		}
	}
	return out
}
