package partition

// segment is an interval of transfer bounds [tlo, thi) over which F, the least largest
// stage compute with every stage's transfer within the bound, is split.maxC; split is a
// split with that compute and largest transfer tlo.
type segment struct {
	tlo, thi float64
	split    measured
}

func (g segment) sum() float64 { return g.split.maxC + g.tlo }

// frontier returns the splits, one per optimal box, whose largest compute plus largest
// transfer is least (within a relative 1e-12). c0 is a split with the least bottleneck.
//
// It evaluates F(T) only where the optimum can be. The evaluated bounds cover segments of
// the T axis, sorted; in a gap [a, b) between two, F lies between its neighbours' values,
// so no split there beats F(b) + a. The gap with the least such bound is split at its
// middle, until none can beat the best sum found.
func (s *solver) frontier(c0 measured) []measured {
	segs := []segment{{tlo: c0.maxT, thi: inf, split: c0}}
	if low := s.minTransfer(inf); low.maxT < c0.maxT {
		f, dT := s.minCompute(low.maxT, false, c0.maxC, low.maxC, low)
		segs = append([]segment{{tlo: f.maxT, thi: min(dT, c0.maxT), split: f}}, segs...)
	}
	for {
		best := inf
		for _, g := range segs {
			best = min(best, g.sum())
		}
		k, lb := -1, inf
		for x := 0; x+1 < len(segs); x++ {
			if a, b := segs[x].thi, segs[x+1].tlo; a < b && segs[x+1].split.maxC+a < lb {
				k, lb = x, segs[x+1].split.maxC+a
			}
		}
		if k < 0 || lb > best && !near(lb, best) {
			break
		}
		a, b := segs[k].thi, segs[k+1].tlo
		t := between(a, b)
		f, dT := s.minCompute(t, false, segs[k+1].split.maxC, segs[k].split.maxC, segs[k].split)
		thi := min(dT, b)
		switch {
		case f.maxC == segs[k].split.maxC:
			segs[k].thi = max(segs[k].thi, thi)
		case f.maxC == segs[k+1].split.maxC:
			segs[k+1].tlo, segs[k+1].split = f.maxT, f
		default:
			segs = append(segs[:k+1], append([]segment{{tlo: f.maxT, thi: thi, split: f}}, segs[k+1:]...)...)
		}
	}
	best := inf
	for _, g := range segs {
		best = min(best, g.sum())
	}
	var boxes []measured
	for _, g := range segs {
		if near(g.sum(), best) {
			boxes = append(boxes, g.split)
		}
	}
	return boxes
}
