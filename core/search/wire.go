package search

import "pipeplan/core/wire"

// The search's candidates and outcomes as data (core/wire's types, the JSON of an
// answer and of progress).

func wireCandidate(c Candidate) wire.SearchCandidate {
	return wire.SearchCandidate{SearchConfig: wire.SearchConfig(c.Config), MicrobatchSize: c.MicrobatchSize}
}

func wireOutcome(o *Outcome) wire.SearchOutcome {
	w := wire.SearchOutcome{SearchCandidate: wireCandidate(o.Candidate), Devices: o.Devices, Feasible: o.Feasible,
		SamplesPerSecond: o.SamplesPerSecond, TokensPerSecond: o.TokensPerSecond, StepSeconds: o.StepSeconds,
		BubbleFraction: o.BubbleFraction, MFU: o.MFU, HeadroomBytes: o.HeadroomBytes, HeadroomFraction: o.HeadroomFraction,
		Boundaries: o.Boundaries, Reason: o.Reason, Bound: o.Bound}
	if o.Alike != nil {
		w.Alike = make([]wire.SearchCandidate, len(o.Alike))
		for i, c := range o.Alike {
			w.Alike[i] = wireCandidate(c)
		}
	}
	return w
}

// wireOutcomes converts a list (nil stays nil).
func wireOutcomes(os []Outcome) []wire.SearchOutcome {
	if os == nil {
		return nil
	}
	out := make([]wire.SearchOutcome, len(os))
	for i := range os {
		out[i] = wireOutcome(&os[i])
	}
	return out
}

// wireBest is a copy of the best outcome as data, or nil.
func wireBest(o *Outcome) *wire.SearchOutcome {
	if o == nil {
		return nil
	}
	w := wireOutcome(o)
	return &w
}
