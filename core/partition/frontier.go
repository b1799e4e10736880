package partition

import "math"

func (m measured) sum() float64 { return m.maxC + m.maxT }

// box is a compute and a transfer bound whose splits all have the least sum; lbTotal
// bounds their total of stage times from below (0: unknown). A deferred box stands for
// the tied boxes of a flat stretch's gap not yet swept (see frontier): lbTotal bounds the
// total of every split in the gap whose sum ties the best, and the gap is swept for its
// boxes only when the tie-break reaches that bound.
type box struct {
	maxC, maxT, lbTotal float64
	deferred            *gap
}

// gap is an interval [a, b) of transfer bounds not yet evaluated. F, the least largest stage
// compute among splits whose every transfer is within the bound, only decreases as the
// bound grows, so on the gap F lies between fb (F at b, or a better lower bound) and the
// compute of left, a split whose largest transfer is below a (none: +Inf).
type gap struct {
	a, b float64
	fb   float64
	left measured
	sweep
}

// sweep is a flat stretch's sweep state, carried from gap to gap as the sweep clears
// bounds from the left: whether the gap's ties are left to a deferred box (then only
// splits strictly better than the best are sought), and the galloping: run is the width
// the consecutive failing probes cleared, fails how many they were, and patience how
// many the next galloping probe waits for.
type sweep struct {
	deferred        bool
	run             float64
	fails, patience int
}

// lb bounds the sum of every split whose largest transfer lies in the gap from below.
func (g gap) lb() float64 { return g.fb + g.a }

// frontier returns the optimal boxes, with the least sum (max compute + max transfer)
// itself; the boxes are those within a relative 1e-12 of it, some of them deferred. c0 is
// a split with the least bottleneck.
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
//
// A gap whose left neighbour ties the best sum is a flat stretch, swept from its left end
// (see sweepFlat) for splits strictly better than the best; its ties are deferred.
func (s *solver) frontier(c0 measured) ([]box, float64) {
	type found struct {
		m       measured
		lbTotal float64
	}
	all := []found{{m: c0}}
	var deferred []box
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
		if g.deferred && g.lb() >= strictly(best) {
			continue // only strictly better splits are sought here, and none can be
		}
		if g.deferred || !math.IsInf(g.left.maxC, 1) && near(g.left.sum(), best) {
			if !g.deferred {
				// A flat stretch: the gap's ties are deferred, under a bound on their total
				// from one probe over the whole gap. If it fails, nothing in the gap ties
				// or beats the best.
				sp := spec{u: tolerant(best) - g.a, t: g.b, strict: true}
				if ok, _ := s.probe(sp); !ok {
					continue
				}
				d := g
				deferred = append(deferred, box{lbTotal: s.lbTotal(), deferred: &d})
				g.sweep = sweep{deferred: true, patience: 2}
			}
			f, next, ok := s.sweepFlat(g, strictly(best))
			if ok {
				all = append(all, found{m: f, lbTotal: f.lbTotal})
				best = min(best, f.sum())
			}
			if next.a < g.b {
				gaps = append(gaps, next)
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
		f, dT := s.evalF(t, g.fb, tolerant(best)-g.a, g.left)
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
			boxes = append(boxes, box{maxC: f.m.maxC, maxT: f.m.maxT, lbTotal: f.lbTotal})
		}
	}
	return append(boxes, deferred...), best
}

// strictly returns the largest sum sought as strictly better than v: every sum below v
// and not within a relative 1e-12 of it is at most this.
func strictly(v float64) float64 { return v - 0.5e-12*math.Abs(v) }

// sweepFlat takes one step of a flat stretch's sweep over the gap g for splits whose sum
// is at most sum: one probe asks whether any split computes within sum - a with every
// transfer within a. If not, no bound from a to the least transfer the probe rejected
// holds such a split (a larger bound leaves less room for compute), and the gap loses
// them; if so, F(a) is found from the probe's split and returned (ok), and the gap loses
// [a, T_r) as in frontier. It returns the rest of the gap. The frontier sweeps its
// deferred gaps for splits strictly better than the best, expand for ties.
//
// Galloping (exponential search, as in Bentley and Yao's unbounded search): after
// patience consecutive failing probes, the next asks for transfers within a + run
// instead (run: the width they cleared), which, when it fails, clears at least as much
// again; when it passes it is wasted, and the next galloping probe waits twice as long,
// so that a stretch whose every bound ties costs few wasted probes.
func (s *solver) sweepFlat(g gap, sum float64) (f measured, next gap, ok bool) {
	next = g
	t := g.a
	gallop := g.fails >= g.patience && g.run > 0
	if gallop {
		t = min(g.a+g.run, math.Nextafter(g.b, math.Inf(-1)))
	}
	sp := spec{u: sum - g.a, t: t}
	pass, ev := s.probe(sp)
	switch {
	case !pass:
		next.a = max(ev.tr, math.Nextafter(t, inf))
		next.run += next.a - g.a
		next.fails++
		return measured{}, next, false
	case gallop:
		next.run, next.fails, next.patience = 0, 0, 2*g.patience
		return measured{}, next, false
	}
	w := s.measure(s.witness(sp, s.evenPick()))
	w.lbTotal = s.lbTotal()
	f, dT := s.minCompute(g.a, false, g.fb, w.maxC, w)
	next.a, next.left = dT, f
	next.run, next.fails = 0, 0
	return f, next, true
}

// expand sweeps the gap of a deferred box for its ties with the best sum (nothing in it
// is strictly better), by sweepFlat.
func (s *solver) expand(g gap, best float64) []box {
	var boxes []box
	g.sweep = sweep{patience: 2}
	for g.a < g.b {
		f, next, ok := s.sweepFlat(g, tolerant(best))
		if ok && near(f.sum(), best) {
			boxes = append(boxes, box{maxC: f.maxC, maxT: f.maxT, lbTotal: f.lbTotal})
		}
		g = next
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
