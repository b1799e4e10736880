package partition

import "math"

func (m measured) sum() float64 { return m.maxC + m.maxT }

// gap is an interval [a, b) of transfer bounds not yet evaluated. F, the least largest stage
// compute among splits whose every transfer is within the bound, only decreases as the
// bound grows, so on the gap F lies between fb (F at b, or a better lower bound) and the
// compute of left, a split whose largest transfer is below a (none: +Inf).
type gap struct {
	a, b float64
	fb   float64
	left measured
}

// lb bounds the sum of every split whose largest transfer lies in the gap from below.
func (g gap) lb() float64 { return g.fb + g.a }

// frontier returns the splits, one per optimal box, whose largest compute plus largest
// transfer is least (within a relative 1e-12). c0 is a split with the least bottleneck.
//
// It evaluates F(T) only where the optimum can be: a gap whose lower bound exceeds the
// best sum found is dropped; otherwise F is evaluated at its middle T, which gives a split
// of largest transfer T_w <= T and F(T), and F holds that value on [T_w, T_r), T_r the
// least transfer that the search's failed probes rejected; the gap loses that interval.
func (s *solver) frontier(c0 measured) []measured {
	found := []measured{c0}
	best := c0.sum()
	gaps := []gap{{a: 0, b: c0.maxT, fb: c0.maxC, left: measured{maxC: inf}}}
	for len(gaps) > 0 {
		k := 0
		for x := range gaps {
			if gaps[x].lb() < gaps[k].lb() {
				k = x
			}
		}
		g := gaps[k]
		if lb := g.lb(); lb > best && !near(lb, best) {
			break
		}
		gaps = append(gaps[:k], gaps[k+1:]...)
		t := between(g.a, g.b)
		f, dT := s.evalF(t, g.fb, tolerant(best)-t, g.left)
		if math.IsInf(f.maxC, 1) { // no split has every transfer within t
			if dT < g.b {
				gaps = append(gaps, gap{a: dT, b: g.b, fb: g.fb, left: g.left})
			}
			continue
		}
		found = append(found, f)
		best = min(best, f.sum())
		if g.a < f.maxT {
			gaps = append(gaps, gap{a: g.a, b: f.maxT, fb: f.maxC, left: g.left})
		}
		if dT < g.b {
			gaps = append(gaps, gap{a: dT, b: g.b, fb: g.fb, left: f})
		}
	}
	var boxes []measured
	for _, f := range found {
		if near(f.sum(), best) {
			boxes = append(boxes, f)
		}
	}
	return boxes
}

// evalF is F(t) with a split that has it, and the least transfer a failed probe rejected;
// F(t) = +Inf when no split keeps every transfer within t. lo bounds F(t) from below; left,
// when its compute is finite, is a split within t that bounds it from above; guess, a
// first value to try (the largest compute with which t could still win).
func (s *solver) evalF(t, lo, guess float64, left measured) (measured, float64) {
	dT := inf
	if guess > lo && guess < left.maxC {
		sp := spec{u: guess, t: t}
		ok, ev := s.probe(sp)
		if ok {
			left = s.measure(s.witness(sp, s.evenPick()))
		} else {
			lo, dT = max(ev.up, math.Nextafter(guess, inf)), ev.tr
		}
	}
	f, d := s.minCompute(t, false, lo, left.maxC, left)
	return f, min(dT, d)
}
