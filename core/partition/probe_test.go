package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// estimated adapts an Estimator to Costs, as core/plan does.
type estimated struct{ *estimate.Estimator }

func (e estimated) NewScanner() Scanner { return e.Scanner() }

// atomAt returns the first layer of atom j (positions are allowed cuts).
func (e estimated) atomAt(j int) int {
	k := 0
	for l := 1; l < e.Layers(); l++ {
		if e.CutAllowed(l) {
			if k++; k == j {
				return l
			}
		}
	}
	return 0
}

// randomCosts builds a random model and cluster with every feature the estimator has:
// shared keys (of one size each when mono, else of several), tie groups, tensors carried
// across layers, heterogeneous devices and links, microbatches in flight, recomputation.
func randomCosts(rng *rand.Rand, n, p int, mono bool) Costs {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(rng.IntN(50))}}}
	ids := []string{"x"}
	for l := range n {
		L := model.Layer{Name: fmt.Sprint(l), ForwardSeconds: float64(rng.IntN(20)), BackwardSeconds: rng.Float64() * 3,
			ParamBytes: int64(rng.IntN(30)), ActivationBytes: int64(rng.IntN(8)), TemporaryBytes: int64(rng.IntN(10))}
		if rng.IntN(3) == 0 {
			key := fmt.Sprint("k", rng.IntN(3))
			size := int64(5)
			if !mono {
				size = int64(1 + rng.IntN(9))
			}
			L.Shared = map[string]int64{key: size}
		}
		for _, id := range ids[max(0, len(ids)-3):] {
			if rng.IntN(2) == 0 {
				L.InputIDs = append(L.InputIDs, id)
			}
		}
		id := fmt.Sprint("t", l)
		L.Outputs = []model.Tensor{{ID: id, Bytes: int64(rng.IntN(100))}}
		ids = append(ids, id)
		if rng.IntN(10) == 0 {
			L.TieGroup = fmt.Sprint("g", rng.IntN(2))
		}
		m.Layers = append(m.Layers, L)
	}
	c := &cluster.Cluster{}
	// Half the clusters give every device the same memory, so that stages share memory
	// classes (and stageFilter's tables).
	memory := int64(150 + rng.IntN(400))
	same := rng.IntN(2) == 0
	for range p {
		d := cluster.Device{MemoryBytes: int64(150 + rng.IntN(400)), FLOPSPerSecond: []float64{1, 2, 0.5}[rng.IntN(3)]}
		if same {
			d.MemoryBytes = memory
		}
		c.Devices = append(c.Devices, d)
	}
	for range max(1, p-1) {
		c.Links = append(c.Links, cluster.Link{LatencySeconds: rng.Float64(), BytesPerSecond: float64(1 + rng.IntN(20))})
	}
	if rng.IntN(2) == 0 {
		c.Host = &cluster.Link{LatencySeconds: 0.5, BytesPerSecond: 10}
	}
	opt := estimate.Options{InFlight: func(i int) int { return min(p-i, 3) }}
	if !mono && rng.IntN(2) == 0 {
		opt.Recompute = true
	}
	e, err := estimate.New(m, c, opt)
	if err != nil {
		panic(err)
	}
	return estimated{e}
}

// within checks that a split (layer boundaries) is one the probe admits under sp.
func within(c Costs, b []int, sp spec) error {
	e := c.(estimated).Estimator
	if len(b) != e.Stages()+1 || b[0] != 0 || b[len(b)-1] != e.Layers() {
		return fmt.Errorf("boundaries %v", b)
	}
	for i := 0; i+1 < len(b); i++ {
		x, y := b[i], b[i+1]-1
		r := e.Range(i, x, y)
		lo, u := sp.lo, sp.u
		if b := sp.big; b != nil && x <= c.(estimated).atomAt(b.atom) && c.(estimated).atomAt(b.atom) <= y {
			lo, u = b.lo, b.u
		}
		switch {
		case x > y:
			return fmt.Errorf("%v: stage %d empty", b, i)
		case x > 0 && !e.CutAllowed(x):
			return fmt.Errorf("%v: stage %d starts inside a tie group", b, i)
		case !r.Fits():
			return fmt.Errorf("%v: stage %d does not fit", b, i)
		case r.Compute > u || r.Compute < lo:
			return fmt.Errorf("%v: stage %d computes %v", b, i, r.Compute)
		case !sp.tOK(r.Transfer):
			return fmt.Errorf("%v: stage %d transfers %v", b, i, r.Transfer)
		}
	}
	return nil
}

// bruteReach computes the reachable sets of a probe from the definitions: every range
// [j, q) of atoms checked by the estimator's Range, no caps, no sweeps. Sets are
// clipped to where the later stages keep an atom each, as the probe's are, and then to the
// ends from which the rest can be covered (the probe's caps only drop ends that cannot).
func bruteReach(s *solver, sp spec) (used, reached [][]bool) {
	e := s.c.(estimated).Estimator
	ok := func(i, j, q int) bool {
		a, b := s.cut[j], s.cut[q]-1
		r := e.Range(i, a, b)
		lo, u := sp.bounds(j, q)
		return r.Fits() && r.Compute >= lo && r.Compute <= u && sp.tOK(r.Transfer)
	}
	fw := make([][]bool, s.p+1)
	for i := range fw {
		fw[i] = make([]bool, s.m+1)
	}
	fw[0][0] = true // fw[i+1][q]: stages 0..i can end at q
	for i := range s.p {
		for j := 0; j <= s.m; j++ {
			if !fw[i][j] {
				continue
			}
			for q := j + 1; q <= s.m; q++ {
				if ok(i, j, q) {
					fw[i+1][q] = true
				}
			}
		}
	}
	bw := make([][]bool, s.p+1) // bw[i][q]: stages i.. can cover [q, m)
	for i := range bw {
		bw[i] = make([]bool, s.m+1)
	}
	bw[s.p][s.m] = true
	for i := s.p - 1; i >= 0; i-- {
		for q := 0; q <= s.m; q++ {
			for e := q + 1; e <= s.m; e++ {
				if bw[i+1][e] && ok(i, q, e) {
					bw[i][q] = true
					break
				}
			}
		}
	}
	used = make([][]bool, s.p)
	for i := range s.p {
		used[i] = make([]bool, s.m+1)
		for q := range used[i] {
			used[i][q] = fw[i+1][q] && bw[i+1][q]
		}
	}
	return used, fw[1:]
}

// TestProbeAgainstBrute checks, on small instances, that every probe path reaches every
// end that some split within the bounds uses, and only ends that stages so far can reach.
func TestProbeAgainstBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for k := range 3000 {
		n := 2 + rng.IntN(14)
		p := 1 + rng.IntN(min(n, 5))
		mono := rng.IntN(3) > 0
		c := randomCosts(rng, n, p, mono)
		s := newSolver(c)
		if s.m < p {
			continue
		}
		best, _ := s.minCompute(inf, false, s.lowerBound(), inf, measured{})
		if math.IsInf(best.maxC, 1) {
			continue
		}
		sp := spec{u: best.maxC * (0.9 + rng.Float64()*rng.Float64()), t: inf}
		if rng.IntN(2) == 0 {
			sp.lo = best.minC * (0.5 + rng.Float64())
		}
		switch rng.IntN(3) {
		case 0:
			sp.t = best.maxT * (0.7 + rng.Float64())
		case 1:
			b := &band{atom: rng.IntN(s.m), u: sp.u * (1 + rng.Float64())}
			b.lo = sp.lo * rng.Float64()
			b.relaxed = max(sp.u, b.u-s.atoms.work[b.atom]*s.scale[0]) * 2
			sp.big = b
		}
		want, reached := bruteReach(s, sp)
		feasible := want[p-1][s.m]
		for mode := range 3 { // the specialised paths, with stageFilter's memory tables, and stageGeneral
			general := mode == 2
			s.general, s.fitTables = general, mode == 1
			ok, _ := s.probe(sp)
			if ok != feasible {
				t.Fatalf("instance %d (general %v) %+v: probe %v, brute force %v", k, general, sp, ok, feasible)
			}
			if !ok {
				continue
			}
			for i := range p {
				for q := 0; q <= s.m; q++ {
					in := false
					for _, iv := range s.reach[s.reachAt[i]:s.reachAt[i+1]] {
						in = in || iv.lo <= q && q <= iv.hi
					}
					if in && !reached[i][q] {
						t.Fatalf("instance %d (general %v) %+v: stage %d cannot end at %d, the probe says it can\nprobe %v", k, general, sp, i, q, s.reach)
					}
					if want[i][q] && !in {
						t.Fatalf("instance %d (general %v, n=%d p=%d m=%d) %+v big %+v: stage %d misses end %d\nprobe %v", k, general, n, p, s.m, sp, sp.big, i, q, s.reach)
					}
				}
			}
			s.witness(sp, nil)
		}
	}
}

// threeSolvers returns solvers for c by the specialised paths, by stageGeneral, and with
// stageFilter's memory tables built at once; and the least bottleneck, or false when the
// instance has no split into p stages.
func threeSolvers(c Costs, p int) (s, general, tables *solver, best measured, ok bool) {
	s, general, tables = newSolver(c), newSolver(c), newSolver(c)
	general.general, tables.fitTables = true, true
	if s.m < p {
		return s, general, tables, best, false
	}
	best, _ = s.minCompute(inf, false, s.lowerBound(), inf, measured{})
	return s, general, tables, best, !math.IsInf(best.maxC, 1)
}

// probeSets runs a probe and returns its answer, a copy of each stage's reachable set,
// and its events.
func probeSets(s *solver, sp spec) (bool, [][]ival, events) {
	ok, ev := s.probe(sp)
	var sets [][]ival
	for i := 0; i+1 < len(s.reachAt); i++ {
		sets = append(sets, slices.Clone(s.reach[s.reachAt[i]:s.reachAt[i+1]]))
	}
	return ok, sets, ev
}

// sameSets reports whether two probes reached the same sets.
func sameSets(a, b [][]ival) bool {
	return slices.EqualFunc(a, b, func(x, y []ival) bool { return slices.Equal(x, y) })
}

// TestProbePathsAgree runs every probe both ways, by the specialised paths (stageFast,
// stageFilter) and by stageGeneral, and requires the same reachable sets; and checks the
// events: moving a bound anywhere short of its event leaves the sets as they are.
func TestProbePathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	reach, same := probeSets, sameSets
	checked := map[string]int{}
	for k := range 1500 {
		n := 2 + rng.IntN(40)
		p := 1 + rng.IntN(min(n, 8))
		mono := rng.IntN(3) > 0
		c := randomCosts(rng, n, p, mono)
		s, g, f, best, ok := threeSolvers(c, p)
		if !ok {
			continue
		}
		for range 6 {
			// Bounds around the optimum, where the searches probe.
			sp := spec{u: best.maxC * (0.9 + rng.Float64()*rng.Float64()), t: inf}
			if rng.IntN(2) == 0 {
				sp.lo = best.minC * (0.5 + rng.Float64())
			}
			if rng.IntN(2) == 0 {
				sp.t = best.maxT * (0.7 + rng.Float64())
				sp.strict = rng.IntN(3) == 0
			} else if rng.IntN(2) == 0 {
				// An atom with bounds of its own, as narrow gives the largest.
				b := &band{atom: rng.IntN(s.m), u: sp.u * (1 + rng.Float64())}
				b.lo = sp.lo * rng.Float64()
				b.relaxed = max(sp.u, b.u-s.atoms.work[b.atom]*s.scale[0]) * 2
				sp.big = b
			}
			ok1, r1, ev := reach(s, sp)
			ok2, r2, _ := reach(g, sp)
			if ok1 != ok2 || ok1 && !same(r1, r2) {
				t.Fatalf("instance %d (n=%d p=%d mono=%v) %+v: fast %v %v, general %v %v", k, n, p, mono, sp, ok1, r1, ok2, r2)
			}
			if ok3, r3, _ := reach(f, sp); ok3 != ok2 || ok3 && !same(r3, r2) {
				t.Fatalf("instance %d (n=%d p=%d mono=%v) %+v: with memory tables %v %v, general %v %v", k, n, p, mono, sp, ok3, r3, ok2, r2)
			}
			checked[fmt.Sprint(ok1, sp.lo > 0, !math.IsInf(sp.t, 1), mono, sp.big != nil)]++
			if ok1 {
				for _, pick := range []func(i, j, q int, c float64) (bool, bool){nil, s.evenPick()} {
					s.probe(sp)
					if err := within(c, s.witness(sp, pick), sp); err != nil {
						t.Fatalf("instance %d %+v: witness: %v", k, sp, err)
					}
				}
			}
			// Events: the same answer anywhere short of them.
			moved := []spec{sp, sp, sp}
			moved[0].u = between(sp.u, ev.up)
			if ev.down > math.Inf(-1) && sp.lo > 0 {
				moved[1].lo = math.Nextafter(ev.down, inf)
			}
			moved[2].t = between(sp.t, ev.tr)
			for x, m := range moved {
				if math.IsInf(m.u, 1) && !math.IsInf(sp.u, 1) || math.IsNaN(m.u) || math.IsNaN(m.t) {
					continue
				}
				ok3, r3, _ := reach(g, m)
				if ok3 != ok1 || ok1 && !same(r1, r3) {
					t.Fatalf("instance %d %+v (events %+v): moving bound %d to %+v changes the answer: %v %v, then %v %v", k, sp, ev, x, m, ok1, r1, ok3, r3)
				}
			}
		}
	}
	t.Logf("probes checked (feasible, lo, t, mono): %v", checked)
}
