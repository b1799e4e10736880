package plan

import (
	"math"
	"slices"

	"pipeplan/core/recompute"
)

// maxChunkCombos bounds the combinations of its chunks' choices deviceChoice tries for
// one device (a variable so that tests can make it small).
var maxChunkCombos = 1 << 16

// chunkState is one choice for a chunk of an interleaved split: its extra time (device
// 0's unit), what each of its microbatches in flight keeps between passes and what it
// works with beyond that (devicesOf's chunkMem), and where the choice is (a state of the
// chunk's sweep, or the whole-stage form).
type chunkState struct {
	extra      float64
	unit, work int64
	at         int  // the sweep's state
	whole      bool // the whole-stage form
}

// stateOf is a chunk's choice that keeps unit bytes of each microbatch in flight and
// peaks at peak while it works (a range's or a sweep state's working peak, which
// model.WorkingPeakBytes already bounds by its activations), as devicesOf.chunk reads a
// chunk.
func stateOf(extra float64, unit, peak int64) chunkState {
	return chunkState{extra: extra, unit: unit, work: peak - unit}
}

// deviceChoice chooses, for a given interleaved split (bounds of the p*v chunks), each
// chunk's per-layer recomputation so that every device fits (its chunks' static memory
// and what they hold at each of its moments of most add up, with the largest working
// memory, as devicesOf counts a device) with the
// least slowest chunk on it (then the least total): over every combination of its
// chunks' undominated choices, each device alone, as the devices share nothing. It
// returns each layer's option and the chunks recomputing whole, the slowest chunk's
// compute, and false where some device fits no combination, or where it gave up (too
// many combinations to try, too many trade-offs in a chunk's sweep: ae.chunkGaveUp says
// so, and the plan is then not proven optimal).
func (ae *autoEval) deviceChoice(bounds []int) (choice []int, whole []bool, bottleneck float64, ok bool) {
	e, m, c := ae.e, ae.m, ae.opt.Recompute
	d, err := newDevicesOf(e, ae.c, ae.opt)
	if err != nil {
		ae.chunkGaveUp = true
		return nil, nil, 0, false
	}
	S := len(bounds) - 1
	states := make([][]chunkState, S)
	sweeps := make([]*recompute.Sweep, S)
	static, opt := make([]int64, S), make([]int64, S)
	work := make([]float64, S)
	for j := range S {
		a, b := bounds[j], bounds[j+1]-1
		r := e.Range(j, a, b)
		static[j] = r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes
		opt[j], work[j] = r.OptimizerTempBytes, e.Prefix(b+1)-e.Prefix(a)
		sw := recompute.NewSweep(c, e.CarryBytes)
		sw.SetBudget(MaxRecomputeStates)
		sw.Reset(a)
		for l := a; l <= b; l++ {
			sw.Extend(nil)
		}
		if sw.Exceeded() {
			ae.chunkGaveUp = true
			return nil, nil, 0, false
		}
		sweeps[j] = sw
		for at := range sw.States() {
			t, p, pk := sw.StateAt(at)
			st := stateOf(t, p, pk)
			st.at = at
			states[j] = append(states[j], st)
		}
		if ae.opt.RecomputeStages {
			var fwd float64
			for l := a; l <= b; l++ {
				fwd += m.Forward(l)
			}
			st := stateOf(fwd, e.InputBytes(a), r.PeakBytes)
			st.whole = true
			states[j] = append(states[j], st)
		}
	}
	pick := make([]int, S)
	for dev := range d.p {
		var chunks []int
		for j := dev; j < S; j += d.p {
			chunks = append(chunks, j)
		}
		combos := 1
		for _, j := range chunks {
			combos *= len(states[j])
			if combos == 0 {
				return nil, nil, 0, false // a chunk fits no choice
			}
			if combos > maxChunkCombos {
				ae.chunkGaveUp = true
				return nil, nil, 0, false
			}
		}
		best, bestSum, found := math.Inf(1), math.Inf(1), false
		idx := make([]int, len(chunks))
		moments := d.peaks[dev]
		held := make([]int64, len(moments))
		for range combos {
			var st, op int64
			wk := int64(math.MinInt64 / 4)
			clear(held)
			slow, sum := 0.0, 0.0
			for x, j := range chunks {
				s := states[j][idx[x]]
				st, op = st+static[j], op+opt[j]
				for i, u := range moments {
					held[i] = heldAdd(held[i], u[x], s.unit)
				}
				wk = max(wk, s.work)
				cost := (work[j] + s.extra) * e.Scale(j)
				slow, sum = max(slow, cost), sum+cost
			}
			most := slices.Max(held)
			if st+max(most+wk, op) <= d.avail[dev] && (slow < best || slow == best && sum < bestSum) {
				best, bestSum, found = slow, sum, true
				for x, j := range chunks {
					pick[j] = idx[x]
				}
			}
			for x := range idx { // the next combination
				if idx[x]++; idx[x] < len(states[chunks[x]]) {
					break
				}
				idx[x] = 0
			}
		}
		if !found {
			return nil, nil, 0, false
		}
		bottleneck = max(bottleneck, best)
	}
	choice, whole = make([]int, len(m.Layers)), make([]bool, S)
	for j := range S {
		s := states[j][pick[j]]
		if s.whole {
			whole[j] = true
			continue
		}
		copy(choice[bounds[j]:bounds[j+1]], sweeps[j].Choice(s.at))
	}
	return choice, whole, bottleneck, true
}

// chunkSplits calls f with every split of n layers into S chunks while there are at
// most limit of them, and reports whether it went through them all.
func chunkSplits(n, S, limit int, f func(bounds []int)) bool {
	// C(n-1, S-1) splits: count first.
	count := 1.0
	for i := 1; i < S; i++ {
		count = count * float64(n-S+i) / float64(i)
	}
	if count > float64(limit) {
		return false
	}
	bounds := make([]int, S+1)
	bounds[S] = n
	var rec func(i, a int)
	rec = func(i, a int) {
		if i == S {
			f(slices.Clone(bounds))
			return
		}
		for k := a + 1; k <= n-(S-i); k++ {
			bounds[i] = k
			rec(i+1, k)
		}
	}
	rec(1, 0)
	return true
}

// maxTransfer is the largest transfer of the chunks of the interleaved split bounds (the
// transfer term of the compute+transfer objective, which does not depend on what the
// chunks recompute).
func (ae *autoEval) maxTransfer(bounds []int) float64 {
	var t float64
	for j := range len(bounds) - 1 {
		t = max(t, ae.e.Transfer(j, bounds[j], bounds[j+1]-1))
	}
	return t
}
