package estimate

// Scanner walks the ranges ending at one layer, growing them one layer to the left, and
// keeps their memory up to date in O(1) plus O(shared keys of the added layer) per step.
// It is how the partitioner visits ranges; one Scanner is reused for many walks.
type Scanner struct {
	e     *Estimator
	stage int
	a, b  int

	sharedBytes int64 // sum over distinct keys of the size first seen in [a, b]
	sharedMin   int64 // sum over distinct keys of their smallest size anywhere
	peak        int64 // max peakAt[a..b]
	gen         int32
	stamp       []int32 // stamp[key] == gen: key is in [a, b], with size cur[key]
	cur         []int64
}

// Scanner returns a new scanner for the estimator.
func (e *Estimator) Scanner() *Scanner {
	return &Scanner{e: e, stamp: make([]int32, len(e.keys)), cur: make([]int64, len(e.keys))}
}

// Reset starts a walk at the range [b, b] on stage i.
func (s *Scanner) Reset(i, b int) {
	s.stage, s.a, s.b = i, b+1, b
	s.sharedBytes, s.sharedMin, s.peak = 0, 0, 0
	s.gen++
	if s.gen == 0 { // wrapped: clear the stamps
		clear(s.stamp)
		s.gen = 1
	}
	s.Extend()
}

// First is the first layer of the current range.
func (s *Scanner) First() int { return s.a }

// Extend adds the layer before the current range; the caller keeps First() > 0.
func (s *Scanner) Extend() {
	s.a--
	e := s.e
	for _, ks := range e.shared[s.a] {
		if s.stamp[ks.key] == s.gen {
			// Seen later in the range: its first occurrence is now this layer.
			s.sharedBytes += ks.size - s.cur[ks.key]
		} else {
			s.stamp[ks.key] = s.gen
			s.sharedBytes += ks.size
			s.sharedMin += e.keyMin[ks.key]
		}
		s.cur[ks.key] = ks.size
	}
	s.peak = max(s.peak, e.peakAt[s.a])
}

// ExtendRight adds the layer after the current range; the caller keeps Last() < n-1.
func (s *Scanner) ExtendRight() {
	s.b++
	e := s.e
	for _, ks := range e.shared[s.b] {
		if s.stamp[ks.key] != s.gen { // a key seen earlier keeps its first size
			s.stamp[ks.key] = s.gen
			s.cur[ks.key] = ks.size
			s.sharedBytes += ks.size
			s.sharedMin += e.keyMin[ks.key]
		}
	}
	s.peak = max(s.peak, e.peakAt[s.b])
}

// Last is the last layer of the current range.
func (s *Scanner) Last() int { return s.b }

// MemoryBytes is the memory of the current range on the current stage.
func (s *Scanner) MemoryBytes() int64 {
	e := s.e
	act := e.act[s.b+1] - e.act[s.a]
	passes := s.peak - e.act[s.a] + e.stash(s.stage, s.a, act)
	return e.device(e.static[s.b+1] - e.static[s.a] + s.sharedBytes + max(passes, e.optimizerTemp(s.a, s.b)))
}

// Fits reports whether the current range fits the stage's device.
func (s *Scanner) Fits() bool { return s.MemoryBytes() <= s.e.limit[s.stage] }

// Hopeless reports that neither the current range nor any range growing it (to either
// side) fits: a lower bound on their memory that only grows as the range does already exceeds
// the limit. (Memory itself need not grow: a shared item's first size may shrink, and a
// stage's input may be smaller under recomputation.)
func (s *Scanner) Hopeless() bool {
	e := s.e
	act := e.act[s.b+1] - e.act[s.a]
	passes := s.peak - e.act[s.a]
	if !e.opt.Recompute {
		passes += (e.inFlight[s.stage] - 1) * act
	}
	// The optimizer's temporaries and the device's total (reserve and fixed memory) grow
	// with the allocated memory: a bound of it is a bound of the total.
	lower := e.static[s.b+1] - e.static[s.a] + s.sharedMin + max(passes, e.optimizerTemp(s.a, s.b))
	return e.device(lower) > e.limit[s.stage]
}
