package partition

import "math"

// measured are a split's figures: the largest compute and transfer of a stage, and the
// smallest compute.
type measured struct {
	bounds           []int
	maxC, maxT, minC float64
	// lbTotal bounds from below the total of stage times of every split whose compute and
	// transfer are within those of this one (0: unknown): see solver.lbTotal.
	lbTotal float64
}

func (s *solver) measure(bounds []int) measured {
	r := measured{bounds: bounds, minC: inf}
	for i := range s.p {
		a, b := bounds[i], bounds[i+1]-1
		c := (s.c.Prefix(b+1) - s.c.Prefix(a)) * s.scale[i]
		t := s.c.Recv(i, a) + s.c.Send(i, b)
		r.maxC, r.maxT, r.minC = max(r.maxC, c), max(r.maxT, t), min(r.minC, c)
	}
	return r
}

// lowerBound bounds every split's largest stage compute from below: the largest atom on
// the fastest device, and the model's work spread over all devices in proportion to their
// speed (lowered by a relative 1e-9, so that rounding never lifts it above a split's).
func (s *solver) lowerBound() float64 {
	fast, inv := inf, 0.0
	for _, sc := range s.scale {
		fast, inv = min(fast, sc), inv+1/sc
	}
	var atom float64
	for _, w := range s.atoms.work {
		atom = max(atom, w)
	}
	return max(atom*fast, s.layerWork(0, s.m)/inv*(1-1e-9))
}

// guess returns the bound the next probe of a search in [lo, hi) tries: the middle, or,
// below, the value just below hi, which settles the search at once when hi is the answer
// (a probe there fails, rejecting a value of at least hi). The searches try below first
// and after each middle that passes.
func (s *solver) guess(below bool, lo, hi float64) float64 {
	if below {
		return max(lo, math.Nextafter(hi, math.Inf(-1)))
	}
	return between(lo, hi)
}

// between returns a value in [lo, hi) near their middle.
func between(lo, hi float64) float64 {
	u := lo + (hi-lo)/2
	if u >= hi {
		u = math.Nextafter(hi, math.Inf(-1))
	}
	return max(u, lo)
}

// minCompute returns the least largest stage compute among splits whose transfers are
// within t (below t when strict), with a split that has it; or +Inf. This is the parametric
// search over the bottleneck with the probe as its test ("bisection over exact candidate
// sets"): lo rises to the least compute a failed probe rejected (nothing below it can
// pass), hi falls to the largest compute of a passing probe's witness, so both stay
// values of real stages, and the search ends when they meet. lo must bound the answer from
// below; hi, with its split, from above (hi = +Inf: unknown). It also returns the least
// transfer any failed probe rejected: the answer holds for every t' in [t, that).
func (s *solver) minCompute(t float64, strict bool, lo, hi float64, hiSplit measured) (measured, float64) {
	dT := inf
	if math.IsInf(hi, 1) {
		// Gallop up from lo, so that no probe runs with a bound far above the answer
		// (loose bounds leave wide sets to track). No stage computes more than the whole
		// model on the slowest device, so a probe there decides feasibility.
		top := 0.0
		for _, sc := range s.scale {
			top = max(top, s.layerWork(0, s.m)*sc)
		}
		for d := max(lo/1024, top/(1<<50)); ; d *= 16 {
			sp := spec{u: min(lo+d, top), t: t, strict: strict}
			if lo >= top {
				sp.u = inf
			}
			ok, ev := s.probe(sp)
			if ok {
				hiSplit = s.measure(s.witness(sp, s.evenPick()))
				hiSplit.lbTotal = s.lbTotal()
				hi = hiSplit.maxC
				break
			}
			dT = min(dT, ev.tr)
			if sp.u >= top {
				return measured{maxC: inf}, dT
			}
			lo = max(ev.up, math.Nextafter(sp.u, inf))
		}
	}
	for below := true; lo < hi; {
		sp := spec{u: s.guess(below, lo, hi), t: t, strict: strict}
		ok, ev := s.probe(sp)
		if ok {
			hiSplit = s.measure(s.witness(sp, s.evenPick()))
			hiSplit.lbTotal = s.lbTotal()
			hi = hiSplit.maxC
			below = !below
			continue
		}
		below = false
		dT = min(dT, ev.tr)
		lo = max(ev.up, math.Nextafter(sp.u, inf))
	}
	return hiSplit, dT
}
