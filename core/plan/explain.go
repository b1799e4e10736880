package plan

import (
	"fmt"
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/units"
)

// Explain says, in words a user can act on, why no split of the model fits the cluster:
// too few layers, tie groups that leave too few cuts, a layer (with the layers tied to it)
// too large for any device, or memory that is short overall.
//
// Those are the only reasons: estimate.New refuses inputs whose compute or transfer times
// would not be finite, and with finite costs the partitioner rules a split out only for a
// range that splits a tie group or does not fit its device's memory.
func Explain(e *estimate.Estimator, m *model.Model, c *cluster.Cluster) string {
	n, p := e.Layers(), e.Stages()
	if n < p {
		return tooManyStages(n, p)
	}
	cuts := 0
	for k := 1; k < n; k++ {
		if e.CutAllowed(k) {
			cuts++
		}
	}
	if cuts < p-1 {
		return fmt.Sprintf("tie groups leave only %d places to cut the model, and %d stages need %d: use at most %d stages", cuts, p, p-1, cuts+1)
	}
	// The smallest admissible range around each layer: itself, grown to whole tie groups.
	for l := 0; l < n; {
		a, b := l, l
		for !e.CutAllowed(b + 1) {
			b++
		}
		lo, hi := 0, p-1 // stages that could hold it
		if a == 0 {
			hi = 0
		}
		if b == n-1 {
			lo = p - 1
		}
		best := -1
		var need int64
		for i := lo; i <= hi; i++ {
			r := e.Range(i, a, b)
			if r.Fits() {
				best = -2
				break
			}
			if best == -1 || r.LimitBytes > e.LimitBytes(best) {
				best, need = i, r.MemoryBytes
			}
		}
		if best >= 0 {
			what := fmt.Sprintf("layer %d (%s) alone needs", a, m.Layers[a].Name)
			if b > a {
				what = fmt.Sprintf("layers %d..%d (%s .. %s, tied: they must share a stage) need", a, b, m.Layers[a].Name, m.Layers[b].Name)
			}
			return fmt.Sprintf("%s %s; device %d (%s) holds %s: use devices with more memory, a larger memory proportion, recomputation or a smaller microbatch",
				what, units.Bytes(need), best, deviceName(c, best), units.Bytes(e.LimitBytes(best)))
		}
		l = b + 1
	}
	var need, hold int64
	for l := 0; l < n; l++ {
		r := e.Range(0, l, l)
		need += r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes
	}
	for i := 0; i < p; i++ {
		hold += min(e.LimitBytes(i), math.MaxInt64-hold) // limits are at most 2^60 each, devices many
	}
	if need > hold {
		return fmt.Sprintf("the layers' parameters, optimizer state and exclusive memory alone need %s, and the %d devices hold %s together: use more stages or devices with more memory", units.Bytes(need), p, units.Bytes(hold))
	}
	return fmt.Sprintf("every layer fits a device alone, but every split of %d layers into %d stages puts more on some stage than its device holds: use more stages, devices with more memory, a larger memory proportion or recomputation", n, p)
}

// tooManyStages explains why n layers fit no split into p > n stages.
func tooManyStages(n, p int) string {
	return fmt.Sprintf("the model has %d layers but the cluster has %d stages, and every stage needs at least one layer: use at most %d stages", n, p, n)
}

func deviceName(c *cluster.Cluster, i int) string {
	if name := c.Devices[i].Name; name != "" {
		return name
	}
	return "unnamed"
}
