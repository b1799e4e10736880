package partition

import (
	"math"
	"math/bits"
	"slices"
)

// solver holds what every search needs. Positions are cut indices: the allowed cuts
// 0 = cut[0] < cut[1] < ... < cut[m] = n, so that atom j is layers cut[j] .. cut[j+1]-1
// (a tie group and the layers between its calls form one atom) and a stage is the atoms
// [j, q) for positions j < q. Every position is then a place a stage may start or end.
type solver struct {
	c       Costs
	n, p, m int
	cut     []int
	prefix  []float64 // prefix[q]: Costs.Prefix(cut[q])
	scale   []float64
	k1      []int64 // InFlight(i) - 1
	limit   []int64
	mono    bool // memory never decreases as a range grows (Costs.MemoryMonotone)
	same    bool // every stage has the same speed scale
	work    []float64
	atoms   atomTable
	w, w2   window // w for the probes' forward walks, w2 for backward walks

	// reach[reachAt[i]:reachAt[i+1]] are the ends stage i can reach in the last probe.
	reach   []ival
	reachAt []int
	// lowEnd[i]..highEnd[i]: where stage i may end in the current probe (caps).
	lowEnd, highEnd []int
	// minT[i]: with a transfer bound, the least transfer of an admissible range of stage i
	// met in the last probe (a lower bound on stage i's in any split within it).
	minT    []float64
	cands   []cand
	heap    []cand
	badList []int
	// recvMemo and sendMemo keep transfer times the probes asked for.
	recvMemo, sendMemo memo

	// fitTab[fitClass[i]]: where ranges ending at each position start to fit stage i's
	// memory, for stageFilter (see fitTable); stages of one class share a table.
	fitTab   []fitTable
	fitClass []int

	probes    int  // probes run, for tests and benchmarks
	general   bool // tests: every stage by stageGeneral
	fitTables bool // tests: stageFilter builds its tables at once
}

// ival is the positions lo..hi.
type ival struct{ lo, hi int }

var inf = math.Inf(1)

func newSolver(c Costs) *solver {
	n, p := c.Layers(), c.Stages()
	s := &solver{c: c, n: n, p: p, mono: c.MemoryMonotone()}
	s.cut = append(s.cut, 0)
	for k := 1; k < n; k++ {
		if c.CutAllowed(k) {
			s.cut = append(s.cut, k)
		}
	}
	s.cut = append(s.cut, n)
	s.m = len(s.cut) - 1
	s.prefix = make([]float64, s.m+1)
	for q, k := range s.cut {
		s.prefix[q] = c.Prefix(k)
	}
	s.scale = make([]float64, p)
	s.k1 = make([]int64, p)
	s.limit = make([]int64, p)
	s.same = true
	for i := range p {
		s.scale[i] = c.Scale(i)
		s.k1[i] = int64(max(1, c.InFlight(i)) - 1)
		s.limit[i] = c.LimitBytes(i)
		s.same = s.same && s.scale[i] == s.scale[0]
	}
	class := map[[2]int64]int{}
	s.fitClass = make([]int, p)
	for i := range p {
		key := [2]int64{s.k1[i], s.limit[i]}
		if _, ok := class[key]; !ok {
			class[key] = len(class)
		}
		s.fitClass[i] = class[key]
	}
	s.fitTab = make([]fitTable, len(class))
	for k := range s.fitTab {
		s.fitTab[k].seenLo = s.m // nothing seen: the first sweep sets both ends
	}
	s.w = window{sc: c.NewScanner(), cut: s.cut}
	s.w2 = window{sc: c.NewScanner(), cut: s.cut}
	s.atoms = newAtomTable(s)
	return s
}

// layerWork is the work of the layers of atoms [j, q).
func (s *solver) layerWork(j, q int) float64 { return s.prefix[q] - s.prefix[j] }

// compute is the time of atoms [j, q) on stage i.
func (s *solver) compute(i, j, q int) float64 { return s.layerWork(j, q) * s.scale[i] }

// recv and send are the two parts of the transfer of a stage [j, q) on stage i. Probes
// ask for the same ones again and again, so they are kept (see memo).
func (s *solver) recv(i, j int) float64 {
	if v := s.recvMemo.v; v != nil {
		if k := j - s.recvMemo.lo[i]; k >= 0 && k < len(v[i]) {
			if x := v[i][k]; x == x {
				return x
			}
		}
	}
	return s.recvMemo.put(s, i, j, s.c.Recv(i, s.cut[j]))
}

func (s *solver) send(i, q int) float64 {
	if v := s.sendMemo.v; v != nil {
		if k := q - s.sendMemo.lo[i]; k >= 0 && k < len(v[i]) {
			if x := v[i][k]; x == x {
				return x
			}
		}
	}
	return s.sendMemo.put(s, i, q, s.c.Send(i, s.cut[q]-1))
}

// memo keeps each stage's transfer times by position, over the positions the probes ask
// for (a window per stage, grown as needed), up to a budget of entries in all: beyond it
// times are worked out each time. It is a cache, not a table of stages x layers: probes
// near an optimum ask for narrow windows.
type memo struct {
	lo   []int
	v    [][]float64 // v[i][q-lo[i]]; NaN: not yet known
	size int
}

const memoBudget = 1 << 21

// put keeps x as stage i's time at position q, growing the stage's window to take it
// when the budget allows, and returns x.
func (c *memo) put(s *solver, i, q int, x float64) float64 {
	if c.v == nil {
		c.lo, c.v = make([]int, s.p), make([][]float64, s.p)
	}
	v, lo := c.v[i], c.lo[i]
	if q < lo || q >= lo+len(v) {
		// Grow the window to take q, with room to spare on that side.
		nlo, nhi := lo, lo+len(v)
		if len(v) == 0 {
			lo, nlo, nhi = q, max(0, q-32), min(s.m+1, q+32)
		}
		if q < nlo {
			nlo = max(0, q-max(64, len(v)))
		}
		if q >= nhi {
			nhi = min(s.m+1, q+1+max(64, len(v)))
		}
		if c.size+(nhi-nlo)-len(v) > memoBudget {
			return x
		}
		nv := make([]float64, nhi-nlo)
		for k := range nv {
			nv[k] = math.NaN()
		}
		copy(nv[lo-nlo:], v)
		c.size += len(nv) - len(v)
		c.v[i], c.lo[i] = nv, nlo
		v, lo = nv, nlo
	}
	v[q-lo] = x
	return x
}

// at returns stage i's window of kept times and its first position (nil when none):
// v[q-lo] is the time at position q, NaN when not yet known. For loops that look times
// up inline; a put may move the window, so they take it again after one.
func (c *memo) at(i int) (v []float64, lo int) {
	if c.v == nil {
		return nil, 0
	}
	return c.v[i], c.lo[i]
}

// transfer is the transfer time of atoms [j, q) on stage i.
func (s *solver) transfer(i, j, q int) float64 { return s.recv(i, j) + s.send(i, q) }

// qmax is the last position stage i may end at: every later stage keeps an atom.
func (s *solver) qmax(i int) int { return s.m - (s.p - 1 - i) }

// fitsParts reports whether a range of memory parts base, stash and floor fits stage i.
func (s *solver) fitsParts(i int, base, stash, floor int64) bool {
	if floor > s.limit[i] {
		return false
	}
	return base+s.k1[i]*stash <= s.limit[i]
}

// window is a Scanner moved by whole atoms: it holds the atoms [j, q), j < q.
type window struct {
	sc   Scanner
	cut  []int
	j, q int // q == 0: not set
}

func (w *window) reset(j int) {
	w.sc.Reset(w.cut[j])
	for l := w.cut[j] + 1; l < w.cut[j+1]; l++ {
		w.sc.ExtendRight()
	}
	w.j, w.q = j, j+1
}

func (w *window) extendRight() {
	for l := w.cut[w.q]; l < w.cut[w.q+1]; l++ {
		w.sc.ExtendRight()
	}
	w.q++
}

// shrinkRight drops the last atom; the window keeps at least one.
func (w *window) shrinkRight() {
	for l := w.cut[w.q] - 1; l >= w.cut[w.q-1]; l-- {
		w.sc.ShrinkRight()
	}
	w.q--
}

// shrinkLeft drops the first atom; the window keeps at least one.
func (w *window) shrinkLeft() {
	for l := w.cut[w.j]; l < w.cut[w.j+1]; l++ {
		w.sc.ShrinkLeft()
	}
	w.j++
}

func (w *window) extendLeft() {
	for l := w.cut[w.j] - 1; l >= w.cut[w.j-1]; l-- {
		w.sc.ExtendLeft()
	}
	w.j--
}

// startAt makes the window [j, q') for some q' > j, keeping as much of it as it can.
func (w *window) startAt(j int) {
	switch {
	case w.q == 0 || j < w.j || j >= w.q:
		w.reset(j)
	default:
		for w.j < j {
			w.shrinkLeft()
		}
	}
}

func (s *solver) fits(w *window, i int) bool {
	base, stash, floor := w.sc.Memory()
	return s.fitsParts(i, base, stash, floor)
}

func (s *solver) hopeless(w *window, i int) bool {
	base, stash, floor := w.sc.Lower()
	return !s.fitsParts(i, base, stash, floor)
}

// fitTable is, for the stages of one memory class (the same limit and microbatches in
// flight) and the positions q in (lo, hi], the least start a >= lo such that the atoms
// [a, q) fit their memory (q when none does): start[q-lo]. Memory does not depend on
// the probe's bounds, and when it never decreases as a range grows
// (Costs.MemoryMonotone) the starts that fit an end are exactly those from it on, so a
// probe's sweep finds them by a lookup instead of moving the memory window. A class's
// table is built over the positions its stages' sweeps have used, once the sweeps have
// moved the window over twice their width (ski rental: the build costs about one sweep
// of that width), and is at most maxFitTable positions long.
type fitTable struct {
	lo, hi int
	start  []int32
	seenLo int // the positions the class's sweeps used: (seenLo, seenHi]
	seenHi int
	swept  int // positions the class's sweeps walked with the window
}

// from is the least start that fits with the end q, which the table covers.
func (t *fitTable) from(q int) int { return int(t.start[q-t.lo]) }

const maxFitTable = 1 << 16

// fitStarts returns the table of stage i's class when it covers the ends (first, qmax],
// building it when it is due; or nil: the sweep walks the memory window.
func (s *solver) fitStarts(i, first, qmax int) *fitTable {
	if t := s.fitCovering(i, first, qmax); t != nil {
		return t
	}
	t := &s.fitTab[s.fitClass[i]]
	t.seenLo, t.seenHi = min(t.seenLo, first), max(t.seenHi, qmax)
	lo, hi := t.seenLo, t.seenHi
	if t.swept < 2*(hi-lo) && !s.fitTables || hi-lo > maxFitTable {
		t.swept += qmax - first
		return nil
	}
	t.swept = 0
	// Sweeps move right, stage after stage: a table that starts early enough grows to the
	// right, its walk resumed at its last end; otherwise it is built anew.
	if t.start != nil && t.lo <= lo { // the entries up to t.hi stand
		lo = t.lo
		t.start = slices.Grow(t.start[:t.hi-lo+1], hi-t.hi)[:hi-lo+1]
	} else {
		t.start = slices.Grow(t.start[:0], hi-lo+1)[:hi-lo+1]
		t.start[0], t.hi = int32(lo), lo
	}
	from := t.hi
	t.lo, t.hi = lo, hi
	w := &s.w
	a, set := t.from(from), false
	for q := from + 1; q <= hi; q++ {
		a, set = s.fitFrom(w, i, a, q, set)
		t.start[q-lo] = int32(a)
	}
	w.q = 0
	return t
}

// fitFrom moves window w to end at q and returns the least start from a on whose range
// to q fits stage i's memory (q when none does), for ends q that only grow: set says
// whether w holds that range for the previous end, and is returned for the next.
func (s *solver) fitFrom(w *window, i, a, q int, set bool) (int, bool) {
	if !set {
		w.reset(a)
	}
	for w.q < q {
		w.extendRight()
	}
	set = true
	for a < q && !s.fits(w, i) {
		if a++; a < q {
			w.shrinkLeft()
		} else {
			set = false
		}
	}
	return a, set
}

// fitCovering returns the table of stage i's class if it covers the ends (first, qmax].
func (s *solver) fitCovering(i, first, qmax int) *fitTable {
	if t := &s.fitTab[s.fitClass[i]]; t.start != nil && t.lo <= first && qmax <= t.hi {
		return t
	}
	return nil
}

// atomTable answers, for a stage and a compute bound, which atoms of a range cannot form a
// stage alone: a segment tree over blocks of atoms keeps the largest work, base and stash
// below each node, so that whole blocks whose maxima pass are skipped. Only for memory
// that never decreases as a range grows, where an atom that cannot form a stage alone
// cannot be part of one.
type atomTable struct {
	work               []float64
	base, stash, floor []int64
	leaves             int
	tw                 []float64
	tb, ts, tf         []int64
}

const atomBlock = 16

func newAtomTable(s *solver) atomTable {
	m := s.m
	t := atomTable{work: make([]float64, m)}
	for j := range m {
		t.work[j] = s.layerWork(j, j+1)
	}
	if !s.mono {
		return t
	}
	t.base, t.stash, t.floor = make([]int64, m), make([]int64, m), make([]int64, m)
	for j := range m {
		s.w.reset(j)
		t.base[j], t.stash[j], t.floor[j] = s.w.sc.Memory()
	}
	s.w.q = 0
	blocks := (m + atomBlock - 1) / atomBlock
	t.leaves = 1 << bits.Len(uint(max(blocks-1, 0)))
	t.tw = make([]float64, 2*t.leaves)
	t.tb = make([]int64, 2*t.leaves)
	t.ts = make([]int64, 2*t.leaves)
	t.tf = make([]int64, 2*t.leaves)
	for j := range m {
		k := t.leaves + j/atomBlock
		t.tw[k], t.tb[k], t.ts[k] = max(t.tw[k], t.work[j]), max(t.tb[k], t.base[j]), max(t.ts[k], t.stash[j])
		t.tf[k] = max(t.tf[k], t.floor[j])
	}
	for k := t.leaves - 1; k >= 1; k-- {
		t.tw[k] = max(t.tw[2*k], t.tw[2*k+1])
		t.tb[k] = max(t.tb[2*k], t.tb[2*k+1])
		t.ts[k] = max(t.ts[2*k], t.ts[2*k+1])
		t.tf[k] = max(t.tf[2*k], t.tf[2*k+1])
	}
	return t
}

// bad calls f, in increasing order, for each atom j in [x, y] that cannot form a stage
// alone on stage i under compute bound u, and records the compute of those that fail on
// compute alone in ev.
func (s *solver) bad(i, x, y int, u float64, ev *events, f func(j int)) {
	if x > y {
		return
	}
	t := &s.atoms
	sc, k1, limit := s.scale[i], s.k1[i], s.limit[i]
	var walk func(k, lo, hi int)
	walk = func(k, lo, hi int) { // node k covers blocks [lo, hi]
		if hi*atomBlock+atomBlock-1 < x || lo*atomBlock > y {
			return
		}
		if t.tw[k]*sc <= u && t.tb[k]+k1*t.ts[k] <= limit && t.tf[k] <= limit {
			return
		}
		if lo < hi {
			mid := (lo + hi) / 2
			walk(2*k, lo, mid)
			walk(2*k+1, mid+1, hi)
			return
		}
		for j := max(x, lo*atomBlock); j <= min(y, lo*atomBlock+atomBlock-1); j++ {
			c := t.work[j] * sc
			if c > u {
				ev.up = min(ev.up, c)
				f(j)
			} else if t.base[j]+k1*t.stash[j] > limit || t.floor[j] > limit {
				f(j)
			}
		}
	}
	walk(1, 0, t.leaves-1)
}
