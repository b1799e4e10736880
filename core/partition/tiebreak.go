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
func (s *solver) tieDP(sp spec, withTransfer bool) []int {
	ref := sp.u / 2
	if withTransfer && !math.IsInf(sp.t, 1) {
		ref += sp.t
	}
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
	for k := at[0]; k < at[1]; k++ {
		q := int(pos[k])
		t := stageTime(0, 0, q, s.compute(0, 0, q))
		val[k] = score{t, sq(t)}
	}
	w := &s.w2
	for i := 1; i < s.p; i++ {
		prev := pos[at[i-1]:at[i]]
		for k := at[i]; k < at[i+1]; k++ {
			q := int(pos[k])
			best, arg := score{inf, inf}, int32(-1)
			pk := sort.Search(len(prev), func(x int) bool { return int(prev[x]) >= q }) - 1
			w.reset(q - 1)
			for j := q - 1; j >= i && pk >= 0; j-- {
				if j < q-1 {
					w.extendLeft()
				}
				c := s.compute(i, j, q)
				if c > sp.u || s.hopeless(w, i) {
					break
				}
				if int(prev[pk]) > j {
					pk--
				}
				if pk < 0 || int(prev[pk]) != j || c < sp.lo || !s.fits(w, i) {
					continue
				}
				if withTransfer || !math.IsInf(sp.t, 1) {
					if !sp.tOK(s.transfer(i, j, q)) {
						continue
					}
				}
				p := val[at[i-1]+pk]
				t := stageTime(i, j, q, c)
				if v := (score{p.total + t, p.squares + sq(t)}); arg < 0 || v.better(best) {
					best, arg = v, int32(j)
				}
			}
			val[k], from[k] = best, arg
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
