package partition

import (
	"math"
	"slices"
	"sort"
)

// spec bounds a probe: every stage's compute within [lo, u] and its transfer at most t
// (below t when strict); when big is set, a stage that holds big's atom has big's bounds
// on compute instead.
type spec struct {
	u, lo, t float64
	strict   bool
	big      *band
	budget   *budget // bounds each stage's end too (narrow)
}

// band bounds the compute of the stage that holds one atom.
type band struct {
	atom  int
	lo, u float64
	// relaxed bounds the compute of every stage, less big's atom's when it holds it, from
	// above: a condition that subranges keep, for the greedies of caps.
	relaxed float64
}

// bounds returns the bounds on compute of a stage [j, q).
func (sp *spec) bounds(j, q int) (lo, u float64) {
	if b := sp.big; b != nil && j <= b.atom && b.atom < q {
		return b.lo, b.u
	}
	return sp.lo, sp.u
}

// beyond reports, for a walk that grows a range to the left, that compute c of stage i's
// range [j, q) (less big's atom's) exceeds what any stage allows: no larger range is
// admissible.
func (s *solver) beyond(sp *spec, i, j, q int, c float64) bool {
	if b := sp.big; b != nil {
		if j <= b.atom && b.atom < q {
			c -= s.atoms.work[b.atom] * s.scale[i]
		}
		return c > b.relaxed
	}
	return c > sp.u
}

func (sp spec) tOK(v float64) bool {
	if sp.strict {
		return v < sp.t
	}
	return v <= sp.t
}

// events are where a probe's answer could change: up is the least stage compute above u
// that a comparison met, down the greatest below lo, and tr the least transfer above t (at
// least t when strict). The probe's comparisons, hence its answer, stay the same for every
// u' in [u, up), lo' in (down, lo] and t' in [t, tr): the searches jump to them.
type events struct{ up, down, tr float64 }

// cand is the ends lo..hi that one start reaches, with its receive time r.
type cand struct {
	lo, hi int
	r      float64
}

// probe decides whether some split keeps every stage within sp, by reachability: R_i,
// the positions where stage i can end in a split of the atoms before it, is the union
// over j in R_{i-1} of the ends of the ranges [j, q) admissible on stage i. The sets are
// kept as sorted lists of intervals (s.reach), and a witness can be read back from them.
func (s *solver) probe(sp spec) (bool, events) {
	s.probes++
	ev := events{up: inf, down: math.Inf(-1), tr: inf}
	s.reach, s.reachAt = s.reach[:0], s.reachAt[:0]
	if len(s.minT) < s.p {
		s.minT = make([]float64, s.p)
	}
	for i := range s.minT {
		s.minT[i] = inf
	}
	if !s.caps(sp, &ev) {
		return false, ev
	}
	prev := []ival{{0, 0}}
	fast := s.mono && math.IsInf(sp.t, 1) && !s.general
	for i := range s.p {
		start := len(s.reach)
		s.reachAt = append(s.reachAt, start)
		switch {
		case fast && sp.big != nil:
			s.stageBig(i, prev, sp, &ev)
		case fast:
			s.stageFast(i, prev, sp, &ev)
		case s.mono && sp.lo <= 0 && !s.general && sp.big == nil:
			s.stageFilter(i, prev, sp, &ev)
		default:
			s.stageGeneral(i, prev, sp, &ev)
		}
		if len(s.reach) == start {
			return false, ev
		}
		prev = s.reach[start:]
	}
	s.reachAt = append(s.reachAt, len(s.reach))
	return true, ev
}

// add appends the ends lo..hi to the set being built (which starts at s.reach[start]),
// merging with its last interval; additions come in nondecreasing order of lo.
func (s *solver) add(start, lo, hi int) {
	if k := len(s.reach) - 1; k >= start && lo <= s.reach[k].hi+1 {
		s.reach[k].hi = max(s.reach[k].hi, hi)
		return
	}
	s.reach = append(s.reach, ival{lo, hi})
}

// ends returns the first and last positions where stage i may end in the current probe.
func (s *solver) ends(i int) (qmin, qmax int) {
	return s.lowEnd[i], s.highEnd[i]
}

// caps bounds, for a probe within sp, where each stage may end so that the later stages
// can still cover the rest; s.lowEnd and s.highEnd. They only relax the problem: a greedy
// from the last stage backwards makes each stage as long as compute within u and memory's
// lower bound allow (a stage may stay empty), and no split's later stages cover more; a
// second makes each as short as compute at least lo allows, and none covers less. It
// reports false when no stage can end anywhere.
func (s *solver) caps(sp spec, ev *events) bool {
	if cap(s.lowEnd) < s.p {
		s.lowEnd, s.highEnd = make([]int, s.p), make([]int, s.p)
	}
	s.lowEnd, s.highEnd = s.lowEnd[:s.p], s.highEnd[:s.p]
	s.lowEnd[s.p-1], s.highEnd[s.p-1] = s.m, s.m
	long, short := s.m, s.m
	lo := sp.lo
	if sp.big != nil {
		lo = min(lo, sp.big.lo)
	}
	for k := s.p - 1; k >= 1; k-- {
		if long > 0 {
			long = s.longest(k, long, sp, ev)
		}
		if lo > 0 {
			// The last start whose range to short reaches lo.
			j := sort.Search(short, func(j int) bool { return s.compute(k, j, short) < lo }) - 1
			if j+1 < short {
				ev.down = max(ev.down, s.compute(k, j+1, short))
			}
			short = j
		} else {
			short--
		}
		s.lowEnd[k-1], s.highEnd[k-1] = max(long, k), min(short, s.qmax(k-1))
		if b := sp.budget; b != nil {
			lo, hi := b.ends(s, k-1)
			s.lowEnd[k-1], s.highEnd[k-1] = max(s.lowEnd[k-1], lo), min(s.highEnd[k-1], hi)
		}
		if s.lowEnd[k-1] > s.highEnd[k-1] {
			return false
		}
	}
	if !math.IsInf(sp.t, 1) {
		return s.transferCaps(sp, ev)
	}
	return true
}

// transferCaps narrows the caps with the transfer bound, which compute's greedies do not
// see: a stage k that starts at j and ends at q transfers recv(k, j) + send(k, q). From
// the last stage backwards, stage k's start is the last position j within the caps, below
// where stage k may end, whose receive time fits beside the least send time of an end
// above it: a walk down from the top of the caps that stops at the first position that
// fits, keeping the least send time of the positions it passed. Each stage's walk starts
// below where the last one stopped, so together they descend the positions at most once
// (about one walk over the layers), and cost about one step a stage when they cut nothing.
// Where transfers grow steadily along the model, the last stages' transfers bound every
// stage's end far more tightly than compute does, which the probe's forward sweeps cannot
// see. (No walk from the first stage forwards is needed: the sweeps are one, and exact.)
// Like the others, these caps only relax the problem: each step asks for less than any
// split within sp has. It reports false when no stage can end anywhere, and records the
// transfers it rejected in ev.tr.
func (s *solver) transferCaps(sp spec, ev *events) bool {
	tb := sp.t
	if sp.strict {
		tb = math.Nextafter(tb, math.Inf(-1))
	}
	lowEnd, highEnd := s.lowEnd, s.highEnd
	for k := s.p - 1; k >= 1; k-- {
		// Stage k ends in [lowEnd[k], hi] and starts at a j in [lowEnd[k-1], highEnd[k-1]],
		// j < its end; least is the least send time of the ends in (j, hi].
		hi := highEnd[k]
		j := min(highEnd[k-1], hi-1)
		least := inf
		for q := hi; q > j && q >= lowEnd[k]; q-- {
			least = min(least, s.send(k, q))
		}
		for ; j >= lowEnd[k-1]; j-- {
			v := s.recv(k, j) + least
			if v <= tb {
				break
			}
			ev.tr = min(ev.tr, v)
			if j >= lowEnd[k] {
				least = min(least, s.send(k, j))
			}
		}
		if j < lowEnd[k-1] {
			return false
		}
		highEnd[k-1] = j
	}
	return true
}

// longest returns the first start of the longest range ending at position e that stage k
// might hold: compute within u (less big's atom's within big's relaxed bound), memory's
// lower bound within the limit; e if none.
func (s *solver) longest(k, e int, sp spec, ev *events) int {
	j := sort.Search(e, func(j int) bool { return !s.beyond(&sp, k, j, e, s.compute(k, j, e)) })
	if j > 0 {
		ev.up = min(ev.up, s.compute(k, j-1, e))
	}
	if j == e {
		return e
	}
	if base, stash, floor := s.c.MemoryUpper(s.cut[j], s.cut[e]-1); s.fitsParts(k, base, stash, floor) {
		return j
	}
	if t := s.fitCovering(k, j, e); t != nil {
		// The probes' table (memory never decreases as a range grows): the starts from
		// its entry on fit, and no earlier one does, nor within any longer range.
		return max(j, t.from(e))
	}
	w := &s.w2
	w.reset(e - 1)
	if s.hopeless(w, k) {
		w.q = 0
		return e
	}
	for w.j > j {
		w.extendLeft()
		if s.hopeless(w, k) {
			w.q = 0
			return w.j + 1
		}
	}
	w.q = 0
	return j
}

// stageGeneral builds R_i from S = R_{i-1} start by start. For a start j the ranges
// admissible on compute and memory end at j+1 .. E(j): memory, like compute, never
// decreases as a range grows to the right. E is found by moving one window's two ends,
// at a cost of the distance they move; a lower bound on compute sets the first end L(j).
// A transfer bound keeps, among the starts whose ranges reach an end, the one that
// receives fastest (a heap), and admits the end if its send time fits beside it.
func (s *solver) stageGeneral(i int, S []ival, sp spec, ev *events) {
	qmin, qmax := s.ends(i)
	start := len(s.reach)
	tfin := !math.IsInf(sp.t, 1)
	cands := s.cands[:0]
	lq := 0
	// Starts whose ranges cannot reach qmin within u are of no use.
	jmin := 0
	if qmin > 1 {
		jmin = sort.Search(qmin, func(j int) bool { return !s.beyond(&sp, i, j, qmin, s.compute(i, j, qmin)) })
		if jmin > 0 && sp.big == nil {
			ev.up = min(ev.up, s.compute(i, jmin-1, qmin))
		}
	}
	var after []cand // with big: the ends past its atom, which come after all others
scan:
	for _, iv := range S {
		for j := max(iv.lo, jmin); j <= iv.hi && j < qmax; j++ {
			var r float64
			if tfin {
				if r = s.recv(i, j); !sp.tOK(r) {
					ev.tr = min(ev.tr, r)
					continue
				}
			}
			if b := sp.big; b != nil && j <= b.atom {
				// Ends up to the atom have the usual bounds, ends past it big's.
				if q := min(qmax, b.atom); j < q {
					if lo, e := s.lowerEnd(i, j, qmin, q, sp.lo, ev), s.extent(i, j, q, sp.u, ev); lo <= e {
						cands = append(cands, cand{lo, e, r})
					}
				}
				if e := s.extent(i, j, qmax, b.u, ev); e > b.atom {
					if lo := s.lowerEnd(i, j, max(qmin, b.atom+1), qmax, b.lo, ev); lo <= e {
						after = append(after, cand{lo, e, r})
					}
				}
				continue
			}
			lo := max(j+1, qmin)
			if sp.lo > 0 {
				lq = max(lq, j+1)
				for lq <= qmax && s.compute(i, j, lq) < sp.lo {
					lq++
				}
				if lq-1 >= j+1 {
					ev.down = max(ev.down, s.compute(i, j, lq-1))
				}
				if lq > qmax {
					if sp.big == nil {
						break scan // later starts reach the lower bound later still
					}
					continue
				}
				lo = max(lo, lq)
			}
			if e := s.extent(i, j, qmax, sp.u, ev); e >= lo {
				cands = append(cands, cand{lo, e, r})
			}
		}
	}
	if len(after) > 0 { // the ends from starts past the atom may come before them
		cands = append(cands, after...)
		sort.SliceStable(cands, func(x, y int) bool { return cands[x].lo < cands[y].lo })
	}
	s.cands = cands
	if !tfin {
		for _, c := range cands {
			s.add(start, c.lo, c.hi)
		}
		return
	}
	h := s.heap[:0]
	k, q := 0, 0
	for {
		if len(h) == 0 {
			if k == len(cands) {
				break
			}
			q = max(q, cands[k].lo)
		}
		for k < len(cands) && cands[k].lo <= q {
			h = heapPush(h, cands[k])
			k++
		}
		for len(h) > 0 && h[0].hi < q {
			h = heapPop(h)
		}
		if len(h) == 0 {
			continue
		}
		if v := h[0].r + s.send(i, q); sp.tOK(v) {
			s.add(start, q, q)
			s.minT[i] = min(s.minT[i], v)
		} else {
			ev.tr = min(ev.tr, v)
		}
		q++
	}
	s.heap = h
}

// stageFilter builds R_i when memory never decreases as a range grows, every stage's
// transfer is bounded and compute is not bounded from below. The admissible starts for an
// end q are then the positions from A(q) to q-1, and A never decreases as q grows: one
// window's two ends sweep the stage once, and a monotone deque keeps, among the reachable
// starts in the window, the one that receives fastest. An end is reached when that start's
// receive time and the end's send time fit the bound together. When Costs.MemoryUpper
// shows that the longest range in play fits, memory is not looked at.
func (s *solver) stageFilter(i int, S []ival, sp spec, ev *events) {
	qmin, qmax := s.ends(i)
	start := len(s.reach)
	reach := s.reach
	first, last := S[0].lo, min(S[len(S)-1].hi, qmax-1)
	if first > last {
		return
	}
	w := &s.w
	free := false
	if base, stash, floor := s.c.MemoryUpper(s.cut[first], s.cut[qmax]-1); s.fitsParts(i, base, stash, floor) {
		free = true
	}
	var fit *fitTable // when set, memory is looked up there instead of walked
	if !free {
		fit = s.fitStarts(i, first, qmax)
	}
	walk := !free && fit == nil
	// The loop below runs over nearly every position of the stage: the bound is one
	// comparison (v <= tb is v < t when strict), and the kept times are looked up inline.
	tb := sp.t
	if sp.strict {
		tb = math.Nextafter(tb, math.Inf(-1))
	}
	u, sc, prefix := sp.u, s.scale[i], s.prefix
	tr, minT := ev.tr, s.minT[i]
	sv, slo := s.sendMemo.at(i)
	rv, rlo := s.recvMemo.at(i)
	dq := s.heap[:0] // the deque: increasing positions, increasing receive times
	head := 0
	k, next := 0, first // next start of S to enter the deque
	a := first          // A(q), and the window's first atom
	set := false        // the window holds [a, q)
	for q := max(qmin, first+1); q <= qmax; q++ {
		if fit != nil {
			// Starts below the table's cannot fit at any compute bound: skipped without
			// an event.
			a = max(a, fit.from(q))
		}
		if walk {
			switch {
			case !set:
				w.reset(a)
				for w.q < q {
					w.extendRight()
				}
				set = true
			default:
				w.extendRight()
			}
		}
		for a < q {
			c := (prefix[q] - prefix[a]) * sc
			if c <= u && (!walk || s.fits(w, i)) {
				break
			}
			if c > u && c < ev.up { // not min: a call under WebAssembly, once a position
				ev.up = c
			}
			if a++; a < q && walk {
				w.shrinkLeft()
			}
		}
		for next <= q-1 && next <= last {
			if next >= a {
				var r float64
				if x := next - rlo; x >= 0 && x < len(rv) && rv[x] == rv[x] {
					r = rv[x]
				} else {
					r = s.recv(i, next)
					rv, rlo = s.recvMemo.at(i)
				}
				if r <= tb {
					for len(dq) > head && dq[len(dq)-1].r >= r {
						dq = dq[:len(dq)-1]
					}
					dq = append(dq, cand{lo: next, r: r})
				} else if r < tr {
					tr = r
				}
			}
			if next++; next > S[k].hi {
				if k++; k == len(S) {
					next = qmax + 1
				} else {
					next = S[k].lo
				}
			}
		}
		for head < len(dq) && dq[head].lo < a {
			head++
		}
		if head == len(dq) {
			if next > last {
				break // no start is left
			}
			// The starts still to come are from next on: no end up to next is reached.
			a, q, set = max(a, next), max(q, next), false
			continue
		}
		var v float64
		if x := q - slo; x >= 0 && x < len(sv) && sv[x] == sv[x] {
			v = sv[x]
		} else {
			v = s.send(i, q)
			sv, slo = s.sendMemo.at(i)
		}
		if v += dq[head].r; v <= tb {
			// s.add(start, q, q), on a local slice (a field through s is a load and a
			// store per position under WebAssembly)
			if k := len(reach) - 1; k >= start && q <= reach[k].hi+1 {
				reach[k].hi = max(reach[k].hi, q)
			} else {
				reach = append(reach, ival{q, q})
			}
			if v < minT {
				minT = v
			}
		} else if v < tr {
			tr = v
		}
	}
	s.reach = reach
	ev.tr, s.minT[i] = tr, minT
	s.heap = dq
	w.q = 0
}

// extent returns E(j): the last end q <= qmax such that [j, q) is admissible on stage i
// (compute at most u, memory fits), or j if none is, using window s.w.
func (s *solver) extent(i, j, qmax int, u float64, ev *events) int {
	w := &s.w
	w.startAt(j)
	for w.q > qmax {
		w.shrinkRight()
	}
	for !s.admits(w, i, u, ev) {
		if w.q == j+1 {
			return j
		}
		w.shrinkRight()
	}
	for w.q < qmax {
		w.extendRight()
		if !s.admits(w, i, u, ev) {
			return w.q - 1
		}
	}
	return w.q
}

// admits reports whether the window's range is admissible on stage i under compute bound u.
func (s *solver) admits(w *window, i int, u float64, ev *events) bool {
	if c := s.compute(i, w.j, w.q); c > u {
		ev.up = min(ev.up, c)
		return false
	}
	return s.fits(w, i)
}

// stageFast builds R_i from S when memory never decreases as a range grows and there is
// no transfer bound: then a range is admissible whenever a range containing it is, so
// E(j) never decreases with j (past atoms that cannot form a stage alone, "bad", which no
// admissible range contains) and L(j) neither. The union over the starts of an interval
// [x, y] of S of [L(j), E(j)] is then found run by run: from a run's coverage cov, the
// starts with L(j) <= cov+1 extend it to E of the last of them, found by binary search;
// when E no longer grows the run ends. Without a lower bound one step covers the
// interval, so a probe costs about a walk over the layers plus O(log n) per stage.
func (s *solver) stageFast(i int, S []ival, sp spec, ev *events) {
	qmin, qmax := s.ends(i)
	start := len(s.reach)
	for _, iv := range S {
		x, y := iv.lo, min(iv.hi, qmax-1)
		if x > y {
			continue
		}
		bad := s.badList[:0]
		s.bad(i, x, y, sp.u, ev, func(j int) { bad = append(bad, j) })
		if b := sp.big; b != nil && x <= b.atom && b.atom <= y { // no range here holds it
			if k := sort.SearchInts(bad, b.atom); k == len(bad) || bad[k] != b.atom {
				bad = slices.Insert(bad, k, b.atom)
			}
		}
		s.badList = bad
		// upTo is the last end a range from j may have: with big, not past its atom.
		upTo := func(j int) int {
			if b := sp.big; b != nil && j <= b.atom {
				return min(qmax, b.atom)
			}
			return qmax
		}
		isBad := func(j int) bool {
			k := sort.SearchInts(bad, j)
			return k < len(bad) && bad[k] == j
		}
		goodAfter := func(j int) int { // first good start >= j, or y+1
			for j <= y && isBad(j) {
				j++
			}
			return j
		}
		goodBefore := func(j, floor int) int { // last good start in (floor, j], or floor
			for j > floor && isBad(j) {
				j--
			}
			return j
		}
		if sp.lo <= 0 {
			// L(j) = j+1: the ends are x+1 .. y+1 less those after a bad atom, then
			// y+2 .. E(y) when y is good.
			q := max(x+1, qmin)
			for _, b := range bad {
				if b+1 >= q {
					if b >= q {
						s.add(start, q, min(b, qmax))
					}
					q = b + 2
				}
			}
			last := y + 1
			if !isBad(y) {
				last = max(last, s.reachEnd(i, y, upTo(y), sp.u, ev))
			}
			if q <= min(last, qmax) {
				s.add(start, q, min(last, qmax))
			}
			continue
		}
		for j := goodAfter(x); j <= y; {
			lo := s.lowerEnd(i, j, qmin, qmax, sp.lo, ev)
			if lo > qmax {
				break // later starts reach the lower bound later still
			}
			cov := s.reachEnd(i, j, upTo(j), sp.u, ev)
			cur, last := j, j
			for cov < qmax {
				J := s.lastStart(i, cur, y, cov+1, sp.lo, ev)
				last = max(last, J)
				if J = goodBefore(J, cur); J <= cur {
					break
				}
				e := s.reachEnd(i, J, upTo(J), sp.u, ev)
				cur = J
				if e <= cov {
					break
				}
				cov = e
			}
			if lo <= cov {
				s.add(start, lo, cov)
			}
			if cov >= qmax {
				return // every later start's ends lie in [lo, qmax]
			}
			j = goodAfter(max(last, cur) + 1)
		}
	}
}

// stageBig is stageFast for a probe whose big atom has bounds of its own: the ranges
// without the atom by stageFast (which takes the atom as bad and stops ranges before it),
// those with it start by start, as stageGeneral does. Only
// starts whose range to just past the atom is within big's bound can hold it: a few.
func (s *solver) stageBig(i int, S []ival, sp spec, ev *events) {
	start := len(s.reach)
	b := sp.big
	s.stageFast(i, S, sp, ev)
	qmin, qmax := s.ends(i)
	if b.atom >= qmax {
		return
	}
	// The starts at or before the atom whose range just past it is within big's bound.
	jmin := sort.Search(b.atom+1, func(j int) bool { return s.compute(i, j, b.atom+1) <= b.u })
	var extra []ival
	for _, iv := range S {
		for j := max(iv.lo, jmin); j <= min(iv.hi, b.atom); j++ {
			if e := s.extent(i, j, qmax, b.u, ev); e > b.atom {
				if lo := s.lowerEnd(i, j, max(qmin, b.atom+1), qmax, b.lo, ev); lo <= e {
					extra = append(extra, ival{lo, e})
				}
			}
		}
	}
	if len(extra) == 0 {
		return
	}
	all := append(slices.Clone(s.reach[start:]), extra...)
	sort.Slice(all, func(x, y int) bool { return all[x].lo < all[y].lo })
	s.reach = s.reach[:start]
	for _, iv := range all {
		s.add(start, iv.lo, iv.hi)
	}
}

// lowerEnd is L(j): the first end q >= max(j+1, qmin) with compute of [j, q) at least lo
// on stage i, or qmax+1.
func (s *solver) lowerEnd(i, j, qmin, qmax int, lo float64, ev *events) int {
	first := max(j+1, qmin)
	if lo <= 0 {
		return first
	}
	q := first + sort.Search(qmax-first+1, func(k int) bool { return s.compute(i, j, first+k) >= lo })
	if q > first {
		ev.down = max(ev.down, s.compute(i, j, q-1))
	}
	return q
}

// lastStart is the last start j' in [from, to], j' < q, with compute of [j', q) at least
// lo on stage i (so that L(j') <= q), or from-1.
func (s *solver) lastStart(i, from, to, q int, lo float64, ev *events) int {
	to = min(to, q-1)
	if lo <= 0 || to < from {
		return to
	}
	k := sort.Search(to-from+1, func(k int) bool { return s.compute(i, from+k, q) < lo })
	if from+k <= to {
		ev.down = max(ev.down, s.compute(i, from+k, q))
	}
	return from + k - 1
}

// reachEnd is E(j) for a good start: the last end whose compute is within u (a binary
// search), unless memory stops the range earlier. Costs.MemoryUpper decides most cases
// in O(1); otherwise window s.w walks to the end.
func (s *solver) reachEnd(i, j, qmax int, u float64, ev *events) int {
	first := j + 1
	q := first + sort.Search(qmax-first+1, func(k int) bool { return s.compute(i, j, first+k) > u }) - 1
	if q < qmax {
		ev.up = min(ev.up, s.compute(i, j, q+1))
	}
	if q <= j {
		return j
	}
	if base, stash, floor := s.c.MemoryUpper(s.cut[j], s.cut[q]-1); s.fitsParts(i, base, stash, floor) {
		return q
	}
	return s.extent(i, j, q, u, ev)
}

// witness reads a split back from the reachable sets of the last (feasible) probe, from
// the last stage to the first: stage i ends at q, and starts at a j in R_{i-1} such that
// [j, q) is admissible on stage i. Walking j down from q-1 stops as soon as compute exceeds
// u, memory is hopeless or no position of R_{i-1} is left below. pick, when set, chooses
// among the admissible starts: it sees them in decreasing order with their stage's compute
// and says whether to take the start and whether to stop looking; by default the first
// (the shortest stage) is taken. It returns the split's boundaries in layers.
func (s *solver) witness(sp spec, pick func(i, j, q int, c float64) (take, stop bool)) []int {
	bounds := make([]int, s.p+1)
	bounds[s.p] = s.m
	q := s.m
	w := &s.w2
	for i := s.p - 1; i >= 1; i-- {
		prev := s.reach[s.reachAt[i-1]:s.reachAt[i]]
		k := sort.Search(len(prev), func(k int) bool { return prev[k].hi >= q-1 })
		k = min(k, len(prev)-1)
		found := -1
		jmin := max(i, prev[0].lo)
		// With the probes' memory table, the starts that fit are those from its entry on
		// (memory never decreases as a range grows); otherwise a window walks them.
		fit := s.fitCovering(i, jmin, q)
		fitFrom := 0
		if fit != nil {
			fitFrom = fit.from(q)
		} else {
			w.reset(q - 1)
		}
		for j := q - 1; j >= jmin; j-- {
			if j < q-1 && fit == nil {
				w.extendLeft()
			}
			c := s.compute(i, j, q)
			if s.beyond(&sp, i, j, q, c) || (fit != nil && j < fitFrom) || (fit == nil && s.hopeless(w, i)) {
				break
			}
			for k > 0 && prev[k].lo > j {
				k--
			}
			lo, u := sp.bounds(j, q)
			if j < prev[k].lo || j > prev[k].hi || c < lo || c > u || (fit == nil && !s.fits(w, i)) || !sp.tOK(s.transfer(i, j, q)) {
				continue
			}
			take, stop := true, true
			if pick != nil {
				take, stop = pick(i, j, q, c)
			}
			if take {
				found = j
			}
			if stop {
				break
			}
		}
		if found < 0 {
			panic("partition: a reachable end has no admissible start")
		}
		bounds[i] = found
		q = found
	}
	w.q = 0
	for i := range bounds {
		bounds[i] = s.cut[bounds[i]]
	}
	return bounds
}

func heapPush(h []cand, c cand) []cand {
	h = append(h, c)
	for k := len(h) - 1; k > 0; {
		up := (k - 1) / 2
		if h[up].r <= h[k].r {
			break
		}
		h[up], h[k] = h[k], h[up]
		k = up
	}
	return h
}

func heapPop(h []cand) []cand {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		l, r, small := 2*k+1, 2*k+2, k
		if l < len(h) && h[l].r < h[small].r {
			small = l
		}
		if r < len(h) && h[r].r < h[small].r {
			small = r
		}
		if small == k {
			break
		}
		h[small], h[k] = h[k], h[small]
		k = small
	}
	return h
}
