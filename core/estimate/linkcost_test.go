package estimate

import (
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// TestLinkCostMatchesLinkTime checks that the per-stage constants Recv and Send use give
// linkTime's result to the bit, for both kinds of link, both units, and devices whose
// clocks differ from device 0's.
func TestLinkCostMatchesLinkTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range 2000 {
		m := &model.Model{Layers: []model.Layer{{Name: "l"}}}
		if k%2 == 0 {
			m.TimeUnit = model.Cycles
		}
		clocks := []float64{1e9, 1.33e9, 1 << 30, 2.5e9, 0}
		c := &cluster.Cluster{}
		for range 3 {
			c.Devices = append(c.Devices, cluster.Device{ClockHz: clocks[rng.IntN(4)]})
		}
		var l cluster.Link
		switch rng.IntN(3) {
		case 0:
			l = cluster.Link{GBps: []float64{0, 0.5, 1, 16}[rng.IntN(4)], IdleCycles: int64(rng.IntN(5000))}
		case 1:
			l = cluster.Link{LatencySeconds: rng.Float64() * 1e-5, BytesPerSecond: []float64{0, 1, 25e9, 1e3}[rng.IntN(4)]}
		default:
			l = cluster.Link{LatencySeconds: 1e300, BytesPerSecond: 1e-300} // saturating cycles
		}
		e := &Estimator{m: m, c: c}
		for i := range c.Devices {
			lc := e.newLinkCost(&l, i)
			for _, n := range []int64{0, 1, 1000, 1 << 20, rng.Int64N(1 << 40), math.MaxInt64 / 4} {
				if got, want := lc.time(n), e.linkTime(&l, n, i); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("link %+v, device %d (clock %v), %d bytes, unit %q: %v, linkTime %v", l, i, c.Devices[i].ClockHz, n, m.Unit(), got, want)
				}
			}
		}
		if lc := e.newLinkCost(nil, 0); lc.time(5) != 0 {
			t.Fatal("no link takes time")
		}
	}
}
