package estimate

import (
	"math/bits"

	"pipeplan/core/model"
)

// Scanner is a window [First, Last] of layers whose memory it keeps up to date as either
// end moves by one layer, in O(1) plus O(shared keys of the layer that enters or leaves).
// It is how the partitioner visits ranges; one Scanner is reused for many walks.
//
// A range needs Base + (in flight - 1) * Stash bytes on a stage (Memory), with Base the
// always-alive part and the peak of one microbatch, and Stash what each further
// microbatch in flight keeps. Lower gives parts that bound those of the window and of
// every window containing it from below.
type Scanner struct {
	e    *Estimator
	a, b int

	sharedBytes int64 // sum over distinct keys of the size at their first layer in [a, b]
	sharedMin   int64 // sum over distinct keys of their smallest size anywhere
	gen         int32
	stamp       []int32 // stamp[key] == gen: count and cur are valid
	count       []int32 // layers of [a, b] that hold the key
	cur         []int64 // the key's size at its first layer in [a, b]
}

// Scanner returns a new scanner for the estimator.
func (e *Estimator) Scanner() *Scanner {
	k := len(e.keys)
	return &Scanner{e: e, stamp: make([]int32, k), count: make([]int32, k), cur: make([]int64, k)}
}

// Reset makes the window the one layer [a, a].
func (s *Scanner) Reset(a int) {
	s.a, s.b = a, a
	s.sharedBytes, s.sharedMin = 0, 0
	s.gen++
	if s.gen == 0 { // wrapped: clear the stamps
		clear(s.stamp)
		s.gen = 1
	}
	s.addRight(a)
}

// First and Last are the window's layers.
func (s *Scanner) First() int { return s.a }
func (s *Scanner) Last() int  { return s.b }

// ExtendLeft adds the layer before the window; the caller keeps First() > 0.
func (s *Scanner) ExtendLeft() {
	s.a--
	e := s.e
	for _, en := range e.entries[e.entryAt[s.a]:e.entryAt[s.a+1]] {
		if s.stamp[en.key] != s.gen || s.count[en.key] == 0 {
			s.enter(en.key, en.size)
			continue
		}
		// Seen later in the window: its first layer is now this one.
		s.count[en.key]++
		s.sharedBytes += en.size - s.cur[en.key]
		s.cur[en.key] = en.size
	}
}

// ExtendRight adds the layer after the window; the caller keeps Last() < n-1.
func (s *Scanner) ExtendRight() {
	s.b++
	s.addRight(s.b)
}

func (s *Scanner) addRight(l int) {
	e := s.e
	for _, en := range e.entries[e.entryAt[l]:e.entryAt[l+1]] {
		if s.stamp[en.key] != s.gen || s.count[en.key] == 0 {
			s.enter(en.key, en.size)
			continue
		}
		s.count[en.key]++ // a key seen earlier keeps its first size
	}
}

func (s *Scanner) enter(key int32, size int64) {
	s.stamp[key], s.count[key], s.cur[key] = s.gen, 1, size
	s.sharedBytes += size
	s.sharedMin += s.e.keyMin[key]
}

func (s *Scanner) leave(key int32) {
	s.sharedBytes -= s.cur[key]
	s.sharedMin -= s.e.keyMin[key]
}

// ShrinkLeft drops the window's first layer; the caller keeps First() < Last().
func (s *Scanner) ShrinkLeft() {
	e := s.e
	for k := e.entryAt[s.a]; k < e.entryAt[s.a+1]; k++ {
		en := &e.entries[k]
		if s.count[en.key]--; s.count[en.key] == 0 {
			s.leave(en.key)
			continue
		}
		// Still in the window: its first layer is its next one, which is in it.
		next := e.entries[en.next].size
		s.sharedBytes += next - s.cur[en.key]
		s.cur[en.key] = next
	}
	s.a++
}

// ShrinkRight drops the window's last layer; the caller keeps First() < Last().
func (s *Scanner) ShrinkRight() {
	e := s.e
	for _, en := range e.entries[e.entryAt[s.b]:e.entryAt[s.b+1]] {
		// The last layer holds the key's first size only if no earlier layer holds it.
		if s.count[en.key]--; s.count[en.key] == 0 {
			s.leave(en.key)
		}
	}
	s.b--
}

// Memory returns the window's parts: a stage holding k microbatches in flight allocates
// max(base + (k - 1) * stash, floor) at its peak: the passes' peak, or the optimizer
// step's (the always-alive memory and the step's temporaries), whichever is larger. Its
// device needs that with the allocator's reserve and the framework's fixed memory
// (MemoryBytes; Estimator.AllocatableBytes is the inverse).
func (s *Scanner) Memory() (base, stash, floor int64) {
	e := s.e
	a, b := s.a, s.b
	always := e.static[b+1] - e.static[a] + s.sharedBytes
	base = always + model.WorkingPeakBytes(e.peak.max(a, b)-e.act[a], e.act[b+1]-e.act[a])
	floor = always + e.optimizerTemp(a, b)
	if e.opt.Recompute {
		return base, e.recvBytes[a], floor
	}
	return base, e.act[b+1] - e.act[a], floor
}

// Lower returns parts that bound Memory's from below, for the window and for every window
// containing it: they never decrease as the window grows. (Memory itself may decrease: a
// shared item's first size may shrink, and a stage's input may be smaller under
// recomputation.)
func (s *Scanner) Lower() (base, stash, floor int64) {
	e := s.e
	a, b := s.a, s.b
	always := e.static[b+1] - e.static[a] + s.sharedMin
	// The working peak's both parts grow with the window.
	base = always + model.WorkingPeakBytes(e.peak.max(a, b)-e.act[a], e.act[b+1]-e.act[a])
	floor = always + e.optimizerTemp(a, b) // the temporaries grow with the range's parameters
	if e.opt.Recompute {
		return base, 0, floor
	}
	return base, e.act[b+1] - e.act[a], floor
}

// Always returns the window's always-alive memory (parameters, optimizer state,
// exclusive and shared items, each shared key once) and the optimizer step's
// temporaries for its parameters: Memory's parts without the passes' peak and stash.
func (s *Scanner) Always() (always, optimizerTemp int64) {
	e := s.e
	return e.static[s.b+1] - e.static[s.a] + s.sharedBytes, e.optimizerTemp(s.a, s.b)
}

// StaticBytes is the always-alive memory of layers [a, b] without shared items: a lower
// bound of Scanner.Always's that never decreases as the range grows.
func (e *Estimator) StaticBytes(a, b int) int64 { return e.static[b+1] - e.static[a] }

// MemoryBytes is the device memory the window needs on stage i.
func (s *Scanner) MemoryBytes(i int) int64 {
	base, stash, floor := s.Memory()
	return s.e.device(max(base+(s.e.inFlight[i]-1)*stash, floor))
}

// Fits reports whether the window fits stage i's memory.
func (s *Scanner) Fits(i int) bool { return s.MemoryBytes(i) <= s.e.limit[i] }

// Hopeless reports that neither the window nor any window containing it fits stage i.
func (s *Scanner) Hopeless(i int) bool {
	base, stash, floor := s.Lower()
	return s.e.device(max(base+(s.e.inFlight[i]-1)*stash, floor)) > s.e.limit[i]
}

// maxTable answers max(v[a..b]) in O(1) and a scan of at most maxBlock values: the
// maxima of each value's block up to it and from it, and a sparse table over the blocks'
// maxima (Bender and Farach-Colton's block decomposition). O(n) memory.
type maxTable struct {
	v, pre, suf []int64
	sparse      [][]int64 // sparse[k][j]: max of blocks j .. j+2^k-1
}

const maxBlock = 16

func newMaxTable(v []int64) maxTable {
	n := len(v)
	t := maxTable{v: v, pre: make([]int64, n), suf: make([]int64, n)}
	blocks := (n + maxBlock - 1) / maxBlock
	level := make([]int64, blocks)
	for j := range blocks {
		lo, hi := j*maxBlock, min(n, (j+1)*maxBlock)
		m := v[lo]
		for i := lo; i < hi; i++ {
			m = max(m, v[i])
			t.pre[i] = m
		}
		m = v[hi-1]
		for i := hi - 1; i >= lo; i-- {
			m = max(m, v[i])
			t.suf[i] = m
		}
		level[j] = m
	}
	t.sparse = append(t.sparse, level)
	for w := 1; 2*w <= blocks; w *= 2 {
		prev := t.sparse[len(t.sparse)-1]
		next := make([]int64, blocks-2*w+1)
		for j := range next {
			next[j] = max(prev[j], prev[j+w])
		}
		t.sparse = append(t.sparse, next)
	}
	return t
}

func (t *maxTable) max(a, b int) int64 {
	ba, bb := a/maxBlock, b/maxBlock
	if ba == bb {
		m := t.v[a]
		for _, x := range t.v[a+1 : b+1] {
			m = max(m, x)
		}
		return m
	}
	m := max(t.suf[a], t.pre[b])
	if lo, hi := ba+1, bb-1; lo <= hi {
		k := bits.Len(uint(hi-lo+1)) - 1
		m = max(m, t.sparse[k][lo], t.sparse[k][hi-(1<<k)+1])
	}
	return m
}
