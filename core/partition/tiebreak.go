package partition

import (
	"math"
	"sort"
)

// score orders splits that tie on the objective: the lower total of stage times first,
// then the lower sum of squares of (stage time - ref), which orders splits of equal total
// as their variance does; each within a relative 1e-12, so that rounding does not decide
// (stage times are differences of prefix sums, rounded differently for every split, so
// totals that are equal in exact arithmetic differ in their last bits).
type score struct{ total, squares float64 }

func (x score) better(y score) bool {
	if !near(x.total, y.total) {
		return x.total < y.total
	}
	return x.squares < y.squares && !near(x.squares, y.squares)
}

// tieDP returns, among the splits within sp, one with the best score, a stage's time being
// its compute plus, withTransfer, its transfer. ref, near a typical stage time, keeps a
// large common part of the stage times (host transfers on every stage) from swamping the
// differences between squares. It is the DP over the reachable sets of a
// probe within sp: best[i][q] is the best score of stages 0..i ending at q, over the starts
// j in R_{i-1} whose range [j, q) is admissible, found by walking j down from q as the
// witness does. The sets are narrow near an optimum, so the DP's table (their total size)
// is small; it only grows with the number of splits that tie on the objective.
func (s *solver) tieDP(sp spec, withTransfer bool, ref float64) []int {
	sq := func(t float64) float64 { return (t - ref) * (t - ref) }
	if ok, _ := s.probe(sp); !ok {
		panic("partition: the optimal box admits no split")
	}
	stageTime := func(i, j, q int, c float64) float64 {
		if withTransfer {
			return c + s.transfer(i, j, q)
		}
		return c
	}
	// Points of every R_i, in order, with their best score and the start it came from.
	var pos, from []int32
	var val []score
	at := make([]int, s.p+1)
	for i := range s.p {
		at[i] = len(pos)
		for _, iv := range s.reach[s.reachAt[i]:s.reachAt[i+1]] {
			for q := iv.lo; q <= iv.hi; q++ {
				pos = append(pos, int32(q))
			}
		}
	}
	at[s.p] = len(pos)
	val = make([]score, len(pos))
	from = make([]int32, len(pos))
	for k := range val {
		val[k], from[k] = score{inf, inf}, -1
	}
	for k := at[0]; k < at[1]; k++ {
		q := int(pos[k])
		t := stageTime(0, 0, q, s.compute(0, 0, q))
		val[k] = score{t, sq(t)}
	}
	w := &s.w2
	bounded := !math.IsInf(sp.t, 1)
	for i := 1; i < s.p; i++ {
		prev := pos[at[i-1]:at[i]]
		pval := val[at[i-1]:at[i]]
		offer := func(k, x int, c float64, best *score, arg *int32) {
			j, q := int(prev[x]), int(pos[k])
			t := c // the stage's time
			if bounded || withTransfer {
				tr := s.transfer(i, j, q)
				if bounded && !sp.tOK(tr) {
					return
				}
				if withTransfer {
					t += tr
				}
			}
			if v := (score{pval[x].total + t, pval[x].squares + sq(t)}); *arg < 0 || v.better(*best) {
				*best, *arg = v, int32(j)
			}
		}
		if s.mono {
			s.monoStage(i, sp, prev, pos[at[i]:at[i+1]], func(k, x int, c float64) {
				offer(at[i]+k, x, c, &val[at[i]+k], &from[at[i]+k])
			})
			continue
		}
		for k := at[i]; k < at[i+1]; k++ {
			q := int(pos[k])
			val[k], from[k] = score{inf, inf}, -1
			pk := sort.Search(len(prev), func(x int) bool { return int(prev[x]) >= q }) - 1
			w.reset(q - 1)
			for j := q - 1; j >= i && pk >= 0; j-- {
				if j < q-1 {
					w.extendLeft()
				}
				c := s.compute(i, j, q)
				if s.beyond(&sp, i, j, q, c) || s.hopeless(w, i) {
					break
				}
				if int(prev[pk]) > j {
					pk--
				}
				if lo, u := sp.bounds(j, q); pk < 0 || int(prev[pk]) != j || c < lo || c > u || !s.fits(w, i) {
					continue
				}
				offer(k, pk, c, &val[k], &from[k])
			}
		}
	}
	w.q = 0
	bounds := make([]int, s.p+1)
	bounds[s.p] = s.m
	for i, k := s.p-1, at[s.p]-1; i > 0; i-- {
		j := int(from[k])
		bounds[i] = j
		prev := pos[at[i-1]:at[i]]
		k = at[i-1] + sort.Search(len(prev), func(x int) bool { return int(prev[x]) >= j })
	}
	for i := range bounds {
		bounds[i] = s.cut[bounds[i]]
	}
	return bounds
}

// monoStage calls offer(k, x, c) for each end ends[k] of stage i and each start prev[x]
// whose range is admissible within sp (c its compute), when memory never decreases as a
// range grows: then the starts that fit memory are A(q)..q-1, A never decreasing, which
// one window finds as q grows, and those within the bounds on compute an interval that
// binary searches find. The starts are offered from the last down.
func (s *solver) monoStage(i int, sp spec, prev, ends []int32, offer func(k, x int, c float64)) {
	if len(prev) == 0 || len(ends) == 0 {
		return
	}
	w := &s.w2
	first, last := int(prev[0]), int(ends[len(ends)-1])
	base, stash, floor := s.c.MemoryUpper(s.cut[first], s.cut[last]-1)
	free := s.fitsParts(i, base, stash, floor)
	fit := s.fitCovering(i, first, last) // the probes' memory table, if one covers the ends
	a, set := first, false               // A(q), and whether the window holds [a, q)
	// try offers the starts of prev in [jlo, jhi] whose compute to q lies in [lo, u].
	try := func(k, q, jlo, jhi int, lo, u float64) {
		jlo = max(jlo, a)
		if jlo > jhi {
			return
		}
		// Compute falls as the start rises.
		ja := jlo + sort.Search(jhi-jlo+1, func(d int) bool { return s.compute(i, jlo+d, q) <= u })
		jb := jlo + sort.Search(jhi-jlo+1, func(d int) bool { return s.compute(i, jlo+d, q) < lo }) - 1
		if ja > jb {
			return
		}
		x := sort.Search(len(prev), func(x int) bool { return int(prev[x]) > jb }) - 1
		for ; x >= 0 && int(prev[x]) >= ja; x-- {
			offer(k, x, s.compute(i, int(prev[x]), q))
		}
	}
	for k, q32 := range ends {
		q := int(q32)
		switch {
		case free:
		case fit != nil:
			a = max(a, fit.from(q))
		default:
			a, set = s.fitFrom(w, i, a, q, set)
		}
		if b := sp.big; b != nil && b.atom < q {
			try(k, q, b.atom+1, q-1, sp.lo, sp.u)
			try(k, q, 0, b.atom, b.lo, b.u)
		} else {
			try(k, q, 0, q-1, sp.lo, sp.u)
		}
	}
	w.q = 0
}

// budget is what the tie-break's narrowing knows: on identical devices every split has
// the same total w, its score is the sum of squared deviations of its stage times from
// mu = w/p, and no split scoring above v can win.
type budget struct {
	mu, v, w float64
	atom     int     // the largest atom
	g        float64 // its time
}

// rest is the least sum of squared deviations of n stages of total r, one of them at
// least g: an even share, or the one at g and the others sharing the rest evenly.
func (b *budget) rest(r, n, g float64) float64 {
	mu := b.mu
	switch {
	case r < g || n <= 0:
		if n <= 0 && r == 0 {
			return 0
		}
		return inf
	case g <= r/n:
		return n * (r/n - mu) * (r/n - mu)
	case n == 1:
		return (r - mu) * (r - mu)
	}
	d := (r-g)/(n-1) - mu
	return (g-mu)*(g-mu) + (n-1)*d*d
}

// interval returns lo <= hi such that every x in [0, b.w] with f(x) <= b.v lies between
// them, for f convex: a ternary search for f's least value, then bisections towards the
// ends of the sublevel set, keeping the side outside it; widened by a relative 1e-9
// against rounding.
func (b *budget) interval(f func(x float64) float64) (lo, hi float64) {
	v, w := b.v, b.w
	x, y := 0.0, w
	for range 200 {
		m1, m2 := x+(y-x)/3, y-(y-x)/3
		if f(m1) <= f(m2) {
			y = m2
		} else {
			x = m1
		}
	}
	t := x + (y-x)/2
	if f(t) > v {
		return 0, w // cannot happen (the split the budget comes from is within): keep all
	}
	edge := func(in, out float64) float64 { // f(in) <= v < f(out): a point beyond the edge
		for {
			m := in + (out-in)/2
			if m == in || m == out {
				return out
			}
			if f(m) <= v {
				in = m
			} else {
				out = m
			}
		}
	}
	lo, hi = 0, w
	if f(0) > v {
		lo = edge(t, 0)
	}
	if f(w) > v {
		hi = edge(t, w)
	}
	return lo * (1 - 1e-9), hi*(1+1e-9) + 1e-300
}

// ends bounds where stage i (i < p-1) may end in a split within the budget: stages
// 0..i cover the work P before the end and the others the rest, so the score is at least
// rest(P, i+1) + rest(w-P, p-1-i), the largest atom's stage counted on its side. It
// returns the hull of the positions so allowed, on either side of the atom.
func (b *budget) ends(s *solver, i int) (lo, hi int) {
	n1, n2 := float64(i+1), float64(s.p-1-i)
	sc := s.scale[0]
	lo, hi = s.m+1, -1
	for _, side := range [2]struct{ from, to int }{{1, b.atom}, {b.atom + 1, s.m}} {
		g1, g2 := 0.0, b.g // the atom after the end
		if side.from > b.atom {
			g1, g2 = b.g, 0
		}
		if side.from > side.to {
			continue
		}
		plo, phi := b.interval(func(p float64) float64 { return b.rest(p, n1, g1) + b.rest(b.w-p, n2, g2) })
		// Positions of the side whose prefix lies in [plo, phi].
		q1 := side.from + sort.Search(side.to-side.from+1, func(d int) bool { return s.layerWork(0, side.from+d)*sc >= plo })
		q2 := side.from + sort.Search(side.to-side.from+1, func(d int) bool { return s.layerWork(0, side.from+d)*sc > phi }) - 1
		if q1 <= q2 {
			lo, hi = min(lo, q1), max(hi, q2)
		}
	}
	return lo, hi
}

// narrow returns bounds within sp that every split within sp scoring no worse than the
// split x keeps, when every stage has the same speed: every split then has the same
// total W, and its score is the sum of squared deviations of its stage times from their
// mean mu = W/p, at most V for x. A stage of time t leaves W - t to the other p-1 stages,
// whose squares are at least (p-1)((W-t)/(p-1) - mu)^2 (Jensen), and at least
// (g-mu)^2 + (p-2)((W-t-g)/(p-2) - mu)^2 when one of them holds an atom of time g above
// (W-t)/(p-1). So t lies in an interval around mu: narrow where the score leaves little
// room, as near an optimum. The largest atom gets the interval of the stage that holds
// it; every other stage's rest holds that atom. The same bound on the stages before and
// after an end bounds where each stage may end (budget.ends), which keeps the sets of a
// probe within sp near an even split even when one atom dwarfs the rest (its stage alone
// is the bottleneck, and every other stage could hold almost anything).
func (s *solver) narrow(sp spec, x []int) spec {
	p := float64(s.p)
	if s.p < 2 {
		return sp
	}
	sc := s.scale[0]
	w := s.layerWork(0, s.m) * sc
	mu := w / p
	var v float64
	for i := range s.p {
		t := (s.c.Prefix(x[i+1]) - s.c.Prefix(x[i])) * sc
		v += (t - mu) * (t - mu)
	}
	k := 0
	for j, a := range s.atoms.work {
		if a > s.atoms.work[k] {
			k = j
		}
	}
	g := s.atoms.work[k] * sc
	b := &budget{mu: mu, v: v*(1+1e-9) + 1e-300, w: w, atom: k, g: g}
	lo2, hi2 := b.interval(func(t float64) float64 { return (t-mu)*(t-mu) + b.rest(w-t, p-1, g) })
	lo1, hi1 := b.interval(func(t float64) float64 { return (t-mu)*(t-mu) + b.rest(w-t, p-1, 0) })
	out := sp
	out.lo, out.u = max(sp.lo, lo2), min(sp.u, hi2)
	out.big = &band{atom: k, lo: max(sp.lo, lo1), u: min(sp.u, hi1)}
	out.big.relaxed = max(out.u, out.big.u-g) * (1 + 1e-9)
	out.budget = b
	return out
}
