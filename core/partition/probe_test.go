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
	for range p {
		c.Devices = append(c.Devices, cluster.Device{MemoryBytes: int64(150 + rng.IntN(400)), FLOPSPerSecond: []float64{1, 2, 0.5}[rng.IntN(3)]})
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
		switch {
		case x > y:
			return fmt.Errorf("%v: stage %d empty", b, i)
		case x > 0 && !e.CutAllowed(x):
			return fmt.Errorf("%v: stage %d starts inside a tie group", b, i)
		case !r.Fits():
			return fmt.Errorf("%v: stage %d does not fit", b, i)
		case r.Compute > sp.u || r.Compute < sp.lo:
			return fmt.Errorf("%v: stage %d computes %v", b, i, r.Compute)
		case !sp.tOK(r.Transfer):
			return fmt.Errorf("%v: stage %d transfers %v", b, i, r.Transfer)
		}
	}
	return nil
}

// TestProbePathsAgree runs every probe both ways, by the specialised paths (stageFast,
// stageFilter) and by stageGeneral, and requires the same reachable sets; and checks the
// events: moving a bound anywhere short of its event leaves the sets as they are.
func TestProbePathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	reach := func(s *solver, sp spec) (bool, [][]ival, events) {
		ok, ev := s.probe(sp)
		var sets [][]ival
		for i := 0; i+1 < len(s.reachAt); i++ {
			sets = append(sets, slices.Clone(s.reach[s.reachAt[i]:s.reachAt[i+1]]))
		}
		return ok, sets, ev
	}
	same := func(a, b [][]ival) bool {
		return slices.EqualFunc(a, b, func(x, y []ival) bool { return slices.Equal(x, y) })
	}
	checked := map[string]int{}
	for k := range 1500 {
		n := 2 + rng.IntN(40)
		p := 1 + rng.IntN(min(n, 8))
		mono := rng.IntN(3) > 0
		c := randomCosts(rng, n, p, mono)
		s, g := newSolver(c), newSolver(c)
		g.general = true
		if s.m < p {
			continue
		}
		best, _ := s.minCompute(inf, false, s.lowerBound(), inf, measured{})
		if math.IsInf(best.maxC, 1) {
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
			}
			ok1, r1, ev := reach(s, sp)
			ok2, r2, _ := reach(g, sp)
			if ok1 != ok2 || ok1 && !same(r1, r2) {
				t.Fatalf("instance %d (n=%d p=%d mono=%v) %+v: fast %v %v, general %v %v", k, n, p, mono, sp, ok1, r1, ok2, r2)
			}
			checked[fmt.Sprint(ok1, sp.lo > 0, !math.IsInf(sp.t, 1), mono)]++
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
