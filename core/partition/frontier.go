package partition

import "math"

var debugGap func(g gap, best float64, probes int)

func (m measured) sum() float64 { return m.maxC + m.maxT }

// box is a compute and a transfer bound whose splits all have the least sum; lbTotal
// bounds their total of stage times from below (0: unknown).
type box struct {
	maxC, maxT, lbTotal float64
}

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
// It evaluates F(T) only where the optimum can be, never searching compute beyond what
// could still win. A gap [a, b) whose lower bound exceeds the best sum found is dropped.
// Otherwise one probe asks whether any split computes within best - a with every transfer
// below b: every split of the gap that could win does, so if none does the gap is dropped.
// Otherwise F is evaluated at the gap's middle T, up to best - T: either it is found, with
// a split of largest transfer T_w <= T, and the gap loses [T_w, T_r) (T_r the least
// transfer the search's failed probes rejected: F is the same up to it); or F exceeds
// best - T, so T cannot win, the gap loses [T, T_r) and learns that F exceeds best - T
// below T.
func (s *solver) frontier(c0 measured) []box {
	type found struct {
		m       measured
		lbTotal float64
	}
	all := []found{{m: c0}}
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
		if debugGap != nil {
			debugGap(g, best, s.probes)
		}
		if !math.IsInf(g.left.maxC, 1) && near(g.left.sum(), best) {
			// A flat stretch: the split just left ties the best sum, so the bounds right of
			// it are swept from a, one probe each: is there a split computing within
			// best - a with every transfer within a? If not, no bound from a to the least
			// transfer the probe rejected can win or tie (a larger bound leaves less room
			// for compute); if so, F(a) is found from the probe's split, as below.
			sp := spec{u: tolerant(best) - g.a, t: g.a}
			ok, ev := s.probe(sp)
			if !ok {
				if ev.tr < g.b {
					gaps = append(gaps, gap{a: ev.tr, b: g.b, fb: g.fb, left: g.left})
				}
				continue
			}
			w := s.measure(s.witness(sp, s.evenPick()))
			w.lbTotal = s.lbTotal()
			f, dT := s.minCompute(g.a, false, g.fb, w.maxC, w)
			all = append(all, found{m: f, lbTotal: f.lbTotal})
			best = min(best, f.sum())
			if dT < g.b {
				gaps = append(gaps, gap{a: dT, b: g.b, fb: g.fb, left: f})
			}
			continue
		}
		sp := spec{u: tolerant(best) - g.a, t: g.b, strict: true}
		if ok, _ := s.probe(sp); !ok {
			continue
		}
		// F is evaluated at the largest transfer of the split the probe found (within the
		// gap, or at its start): a real transfer, so that each evaluation covers at least
		// one bound the enumeration would try.
		t := min(max(s.measure(s.witness(sp, s.evenPick())).maxT, g.a), between(g.a, g.b))
		f, dT := s.evalF(t, g.fb, tolerant(best)-t, g.left)
		if math.IsInf(f.maxC, 1) { // F(t) > best - t
			if g.a < t {
				gaps = append(gaps, gap{a: g.a, b: t, fb: max(g.fb, f.maxT), left: g.left})
			}
			if dT < g.b {
				gaps = append(gaps, gap{a: dT, b: g.b, fb: g.fb, left: g.left})
			}
			continue
		}
		all = append(all, found{m: f, lbTotal: f.lbTotal})
		best = min(best, f.sum())
		if g.a < f.maxT {
			gaps = append(gaps, gap{a: g.a, b: f.maxT, fb: f.maxC, left: g.left})
		}
		if dT < g.b {
			gaps = append(gaps, gap{a: dT, b: g.b, fb: g.fb, left: f})
		}
	}
	var boxes []box
	for _, f := range all {
		if near(f.m.sum(), best) {
			boxes = append(boxes, box{f.m.maxC, f.m.maxT, f.lbTotal})
		}
	}
	return boxes
}

// lbTotal bounds from below the total of stage times (compute + transfer) of every split
// within the last probe: the model's work on the fastest device, plus each stage's least
// transfer among the admissible ranges the probe met.
func (s *solver) lbTotal() float64 {
	fast := inf
	for _, sc := range s.scale {
		fast = min(fast, sc)
	}
	lb := s.layerWork(0, s.m) * fast
	for _, t := range s.minT[:s.p] {
		if math.IsInf(t, 1) {
			return 0 // the probe had no transfer bound: nothing known
		}
		lb += t
	}
	return lb * (1 - 1e-9) // against rounding
}

// evalF is F(t) with a split that has it, and the least transfer a failed probe rejected.
// lo bounds F(t) from below; left, when its compute is finite, is a split within t that
// bounds it from above. When F(t) exceeds limit the search stops: the split returned then
// has compute +Inf and, as maxT, a lower bound on F(t) above limit.
func (s *solver) evalF(t, lo, limit float64, left measured) (measured, float64) {
	if left.maxC > limit {
		sp := spec{u: limit, t: t}
		ok, ev := s.probe(sp)
		if !ok {
			return measured{maxC: inf, maxT: max(lo, ev.up)}, ev.tr
		}
		left = s.measure(s.witness(sp, s.evenPick()))
		left.lbTotal = s.lbTotal()
	}
	return s.minCompute(t, false, lo, left.maxC, left)
}
