package plan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
)

// sharedInstance is a random interleaved instance: n layers with integer times and
// random weights, activations and working memory, on p devices of one memory size with
// v chunks each; some with a framework's fixed memory and an allocator's reserve.
func sharedInstance(rng *rand.Rand) (*model.Model, *cluster.Cluster, Options) {
	p, v := 2+rng.IntN(2), 2+rng.IntN(2)
	n := p*v + rng.IntN(4)
	m := &model.Model{Name: "random"}
	for l := 0; l < n; l++ {
		m.Layers = append(m.Layers, model.Layer{Name: fmt.Sprintf("l%d", l),
			ForwardSeconds: float64(1 + rng.IntN(9)), BackwardSeconds: float64(rng.IntN(12)),
			ParamBytes: int64(rng.IntN(40)), OptimizerBytes: int64(rng.IntN(20)),
			ActivationBytes: int64(rng.IntN(12)), TemporaryBytes: int64(rng.IntN(10))})
	}
	c := devices(p, int64(60+rng.IntN(300)))
	opt := with(schedule.Config{Kind: schedule.Interleaved, Chunks: v, Microbatches: p * (1 + rng.IntN(3))})
	if rng.IntN(3) == 0 {
		opt.Estimate.FixedBytes = int64(rng.IntN(12))
		opt.Estimate.AllocatorReserve = 0.125 * float64(rng.IntN(3))
	}
	return m, c, opt
}

// recomputing makes a sharedInstance recompute: each layer passes the next a tensor of
// 1 to 6 bytes (from seed), which is what a chunk keeps of each microbatch in flight.
func recomputing(m *model.Model, opt *Options, seed int) {
	opt.Estimate.Recompute = true
	for l := range m.Layers {
		m.Layers[l].Outputs = []model.Tensor{{ID: fmt.Sprintf("t%d", l), Bytes: int64(1 + (seed+7*l)%6)}}
		if l > 0 {
			m.Layers[l].InputIDs = []string{fmt.Sprintf("t%d", l-1)}
		}
	}
}

// splits calls f with every split of n layers into s non-empty contiguous stages.
func splits(n, s int, f func([]int)) {
	b := make([]int, s+1)
	b[s] = n
	var rec func(i int)
	rec = func(i int) {
		if i == s {
			f(b)
			return
		}
		for k := b[i-1] + 1; k <= n-(s-i); k++ {
			b[i] = k
			rec(i + 1)
		}
	}
	rec(1)
}

// TestSharedBudgetAgainstBruteForce: under an interleaved schedule a device's chunks
// share its memory. Every split of small random instances is simulated
// (schedule.Simulate, as a plan's step is), whose peak per device (the chunks' static
// memory, what their microbatches in flight keep at the device's moment of most, one
// chunk's working memory at a time, the allocator's reserve and the framework's fixed
// memory once) is the definition; the planner's total for each device of every split
// (devicesOf.totals) must be exactly that peak, never under it. The planner must
//
//   - return a split exactly when some split fits every device,
//   - never return one that exceeds a device's simulated peak, and say so through its
//     chunks' limits (a chunk fits its limit exactly when its device fits; the device's
//     planned memory, limit less a chunk's headroom, is the simulated peak),
//   - return the least bottleneck among the splits that fit (found by the relaxation,
//     each chunk may fill its device, or else by the exact search; both are counted).
//
// Every fourth instance recomputes (each chunk keeps its input for each microbatch in
// flight). It also counts the instances that the former rules refused although a split
// fits: each chunk within 1/v of its device, and each device holding its chunks' peaks
// summed (every chunk's working memory at once), which refused Megatron-Bridge's
// Qwen3-30B-A3B run on 16 H100s with 24 chunks a device; and those with a split whose
// simulated peak the former device total undercounted by charging each chunk an equal
// share of its device's microbatches in flight (estimate.Options.InFlight), which is
// wrong where a device's chunks hold unequal activations. (Before the device's moments
// were counted, 423 of the 429 instances then planned were planned under their
// simulation, by up to 47%: 241 of them by the equal shares alone, by up to 40%, the
// rest by reading a chunk's working peak differently from the simulation.)
func TestSharedBudgetAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	var fits, relaxed, searched, formerRefused, summedRefused, sharesUnder int
	for it := 0; it < 600; it++ {
		m, c, opt := sharedInstance(rng)
		if it%4 == 3 {
			recomputing(m, &opt, it)
		}
		name := fmt.Sprintf("instance %d (%d layers, %d devices x %d chunks, recompute %v)", it, len(m.Layers), len(c.Devices), opt.Schedule.Chunks, opt.Estimate.Recompute)
		// The estimator of the chunks, as solve builds it.
		so := *opt.Schedule
		o := opt
		o.Schedule = &so
		sc, err := scheduled(c, &o)
		if err != nil {
			t.Fatal(err)
		}
		e, err := estimate.New(m, sc, o.Estimate)
		if err != nil {
			t.Fatal(err)
		}
		d, err := newDevicesOf(e, c, o)
		if err != nil {
			t.Fatal(err)
		}
		p, S := len(c.Devices), len(sc.Devices)
		limit := c.Devices[0].MemoryLimitBytes(1)
		deviceMemory := func(total int64) int64 { // by definition
			return e.DeviceBytes(total) - o.Estimate.FixedBytes + so.deviceFixedBytes
		}
		// The simulated peak of every device, which the planner's totals must equal.
		simulated := func(b []int) []int64 {
			r, err := simulate(e, m, c, sc, b, o)
			if err != nil {
				t.Fatalf("%s: simulating %v: %v", name, b, err)
			}
			for dev, total := range d.totals(b) {
				if got, want := deviceMemory(total), r.PeakMemoryBytes[dev]; got != want {
					t.Errorf("%s: split %v, device %d: the planner counts %d bytes, the simulation %d", name, b, dev, got, want)
				}
			}
			return r.PeakMemoryBytes
		}
		fitsDevices := func(b []int) bool {
			for _, peak := range simulated(b) {
				if peak > limit {
					return false
				}
			}
			return true
		}
		// The former device totals: the chunks' allocated peaks summed (summed), and
		// each chunk's equal share of its device's microbatches in flight
		// (r.InFlight, estimate.Options.InFlight) kept with one chunk's working memory
		// at a time, as the simulation reads a chunk (shares).
		former := func(b []int) (summed, shares []int64) {
			summed, shares = make([]int64, p), make([]int64, p)
			static, held, opt := make([]int64, p), make([]int64, p), make([]int64, p)
			work := make([]int64, p)
			for d := range work {
				work[d] = math.MinInt64 / 4
			}
			for j := 0; j < S; j++ {
				r, d := e.Range(j, b[j], b[j+1]-1), j%p
				static[d] += r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes
				peak := r.PeakBytes
				if peak == 0 {
					peak = r.ActivationBytes
				}
				unit := r.ActivationBytes
				if o.Estimate.Recompute {
					unit = r.RecvBytes
				}
				held[d] += int64(r.InFlight) * unit
				work[d] = max(work[d], peak-unit)
				opt[d] += r.OptimizerTempBytes
				summed[d] += r.MemoryBytes - r.ReservedBytes - r.FrameworkBytes
			}
			for d := range shares {
				shares[d] = static[d] + max(held[d]+work[d], opt[d])
			}
			return summed, shares
		}
		summedFits := func(b []int) bool {
			summed, _ := former(b)
			for _, tot := range summed {
				if deviceMemory(tot) > limit {
					return false
				}
			}
			return true
		}
		bottleneck := func(b []int) float64 {
			var w float64
			for j := 0; j < S; j++ {
				w = max(w, e.Compute(j, b[j], b[j+1]-1))
			}
			return w
		}
		best, found, formerFits, sumFits := 0.0, false, false, false
		v := int64(S / p)
		under := false
		splits(len(m.Layers), S, func(b []int) {
			_, shares := former(b)
			for dev, peak := range simulated(b) {
				under = under || deviceMemory(shares[dev]) < peak
			}
			if !fitsDevices(b) {
				return
			}
			sumFits = sumFits || summedFits(b)
			if w := bottleneck(b); !found || w < best {
				best, found = w, true
			}
			former := true // each chunk within 1/v of the device
			for j := 0; j < S; j++ {
				r := e.Range(j, b[j], b[j+1]-1)
				former = former && r.MemoryBytes <= limit/v
			}
			formerFits = formerFits || former
		})
		if under {
			sharesUnder++
		}
		pl, err := Make(m, c, opt)
		var nf *NoFitError
		switch {
		case !found:
			if !errors.As(err, &nf) {
				t.Errorf("%s: no split fits its devices, but the planner gave %v, %v", name, pl, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: a split fits (bottleneck %v), but the planner: %v", name, best, err)
			continue
		}
		fits++
		if !formerFits {
			formerRefused++
		}
		if !sumFits {
			summedRefused++
		}
		if !fitsDevices(pl.Boundaries) {
			t.Errorf("%s: the planned split %v exceeds a device's memory", name, pl.Boundaries)
		}
		for j, s := range pl.Stages {
			if s.MemoryBytes > s.LimitBytes {
				t.Errorf("%s: chunk %d over its limit (%d > %d) although its device fits", name, j, s.MemoryBytes, s.LimitBytes)
			}
			dev := j % p
			if planned, sim := limit-(s.LimitBytes-s.MemoryBytes), pl.Schedule.PeakMemoryBytes[dev]; planned != sim {
				t.Errorf("%s: chunk %d: device %d planned at %d bytes, simulated at %d", name, j, dev, planned, sim)
			}
		}
		if got := bottleneck(pl.Boundaries); got != best {
			t.Errorf("%s: bottleneck %v, but the least among the splits that fit is %v", name, got, best)
		}
		// Did the relaxation alone give the split?
		budget := make([]int64, S)
		for j := range budget {
			budget[j] = d.avail[j%p]
		}
		if r, err := partition.Solve(budgetCosts{Costs{e}, budget}, o.Objective); err == nil && fitsDevices(r.Boundaries) {
			relaxed++
		} else {
			searched++
		}
	}
	t.Logf("%d instances fit: %d planned by the relaxation, %d by the exact search; %d were refused by the former 1/v rule, %d by the chunks' peaks summed; %d had splits whose simulated peak the equal shares of in-flight microbatches undercounted",
		fits, relaxed, searched, formerRefused, summedRefused, sharesUnder)
	if formerRefused == 0 || summedRefused == 0 || relaxed == 0 || searched == 0 || sharesUnder == 0 {
		t.Error("the instances do not exercise the shared budget")
	}
}

// TestPeakInFlight: PeakInFlight's counts are one moment of each device's most, adding
// up to the device's most (schedule.DeviceInFlight), so that what a device's chunks hold
// then never exceeds what the plan counts for the device (devicesOf), whatever their
// activations. The shares a chunk alone is charged (InFlight) add up to the same, but
// may exceed every moment where the chunks' activations differ: 8 devices with 3
// chunks each, device 0's shares are 11, 12 and 8 microbatches, and with activations 0,
// 1 and 1 bytes per microbatch they hold 20 bytes, where the device holds at most 16
// (15, 8 and 8 microbatches at its first moment).
func TestPeakInFlight(t *testing.T) {
	for _, tc := range []struct{ p, v, m int }{{2, 2, 4}, {4, 2, 8}, {4, 3, 16}, {8, 3, 24}, {3, 4, 9}} {
		cfg := schedule.Config{Kind: schedule.Interleaved, Chunks: tc.v, Microbatches: tc.m}
		S := tc.p * tc.v
		peak, err := PeakInFlight(cfg, S, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		moments, err := schedule.DevicePeaks(cfg, S, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		most, err := schedule.DeviceInFlight(cfg, S, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		for d := range tc.p {
			var at []int
			sum := 0
			for k := range tc.v {
				at = append(at, peak[d+k*tc.p])
				sum += peak[d+k*tc.p]
			}
			if sum != most[d] || !slices.ContainsFunc(moments[d], func(u []int) bool { return slices.Equal(u, at) }) {
				t.Errorf("p=%d v=%d m=%d device %d: %v (sum %d), not one of its moments %v adding up to %d", tc.p, tc.v, tc.m, d, at, sum, moments[d], most[d])
			}
		}
	}
	cfg := schedule.Config{Kind: schedule.Interleaved, Chunks: 3, Microbatches: 24}
	shares, err := InFlight(cfg, 24, 8)
	if err != nil {
		t.Fatal(err)
	}
	moments, err := schedule.DevicePeaks(cfg, 24, 8)
	if err != nil {
		t.Fatal(err)
	}
	unit := []int{0, 1, 1}
	held := func(counts []int) (s int) {
		for k, n := range counts {
			s += n * unit[k]
		}
		return s
	}
	most := 0
	for _, u := range moments[0] {
		most = max(most, held(u))
	}
	if got := held([]int{shares[0], shares[8], shares[16]}); got != 20 || most != 16 {
		t.Errorf("device 0's shares %v hold %d bytes, its moments %v at most %d; want 20 and 16", []int{shares[0], shares[8], shares[16]}, got, moments[0], most)
	}
}
