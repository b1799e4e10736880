package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// plainDP is the straightforward O(p n^2) dynamic program over the estimator's costs,
// for checking the partitioner on instances too large for the brute force: for each
// stage and end, every start, walking a scanner leftwards.
type plainDP struct {
	e    *estimate.Estimator
	n, p int
	sc   *estimate.Scanner
}

func newPlainDP(e *estimate.Estimator) plainDP {
	return plainDP{e: e, n: e.Layers(), p: e.Stages(), sc: e.Scanner()}
}

// walk calls visit(a, compute, transfer) for the admissible ranges [a, b] of stage i,
// a falling from b, with compute at most cb and transfer within tb (below it when
// strict), until visit returns false or no longer range can be admissible.
func (d plainDP) walk(i, b int, cb, tb float64, strict bool, visit func(a int, c, t float64) bool) {
	if b+1 < d.n && !d.e.CutAllowed(b+1) {
		return
	}
	lowest := i // every earlier stage keeps a layer
	if i == 0 {
		lowest = 0
	}
	d.sc.Reset(b)
	for a := b; a >= lowest; a-- {
		if a < b {
			d.sc.ExtendLeft()
		}
		c := d.e.Compute(i, a, b)
		if c > cb || d.sc.Hopeless(i) {
			return
		}
		if i == 0 && a > 0 || a > 0 && !d.e.CutAllowed(a) || !d.sc.Fits(i) {
			continue
		}
		t := d.e.Transfer(i, a, b)
		if strict && t >= tb || !strict && t > tb {
			continue
		}
		if !visit(a, c, t) {
			return
		}
	}
}

// minMax returns the least largest stage compute (transfer when ofTransfer) among splits
// whose stages compute within cb and transfer within tb.
func (d plainDP) minMax(ofTransfer bool, cb, tb float64, strict bool) float64 {
	prev := make([]float64, d.n)
	for i := range d.p {
		cur := make([]float64, d.n)
		for b := range d.n {
			cur[b] = math.Inf(1)
			d.walk(i, b, cb, tb, strict, func(a int, c, t float64) bool {
				v := c
				if ofTransfer {
					v = t
				}
				before := 0.0
				if i > 0 {
					before = prev[a-1]
				}
				cur[b] = min(cur[b], max(v, before))
				return ofTransfer || c < cur[b] // compute only grows to the left
			})
		}
		prev = cur
	}
	return prev[d.n-1]
}

// tie returns, among splits within the bounds, one with the least (total, sum of squares
// of stage time - ref), each within a relative 1e-12: the documented tie-break.
func (d plainDP) tie(cb, tb float64, withTransfer bool, ref float64) []int {
	type pair struct{ total, squares float64 }
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b)) }
	less := func(x, y pair) bool {
		if !near(x.total, y.total) {
			return x.total < y.total
		}
		return x.squares < y.squares && !near(x.squares, y.squares)
	}
	best := make([][]pair, d.p)
	from := make([][]int, d.p)
	for i := range d.p {
		best[i], from[i] = make([]pair, d.n), make([]int, d.n)
		for b := range d.n {
			best[i][b], from[i][b] = pair{math.Inf(1), math.Inf(1)}, -1
			d.walk(i, b, cb, tb, false, func(a int, c, t float64) bool {
				st := c
				if withTransfer {
					st += t
				}
				p := pair{st, (st - ref) * (st - ref)}
				if i > 0 {
					q := best[i-1][a-1]
					if math.IsInf(q.total, 1) {
						return true
					}
					p = pair{q.total + p.total, q.squares + p.squares}
				}
				if from[i][b] < 0 || less(p, best[i][b]) {
					best[i][b], from[i][b] = p, a
				}
				return true
			})
		}
	}
	bounds := make([]int, d.p+1)
	bounds[d.p] = d.n
	for i, b := d.p-1, d.n-1; i > 0; i-- {
		bounds[i] = from[i][b]
		b = bounds[i] - 1
	}
	return bounds
}

// optimum returns the reference's optimal split under obj: the least bottleneck, or the
// frontier of (largest compute, largest transfer) walked point by point, as the seed's
// tool's enumeration would find it, then the tie-break over every optimal box.
func (d plainDP) optimum(obj partition.Objective) ([]int, bool) {
	inf := math.Inf(1)
	c0 := d.minMax(false, inf, inf, false)
	if math.IsInf(c0, 1) {
		return nil, false
	}
	tol := func(v float64) float64 { return v + 1e-12*math.Abs(v) }
	if obj == partition.MaxCompute {
		return d.tie(tol(c0), inf, false, tol(c0)/2), true
	}
	type box struct{ c, t float64 }
	var boxes []box
	best := inf
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b)) }
	for c := c0; !math.IsInf(c, 1) && (c <= best || near(c, best)); {
		t := d.minMax(true, c, inf, false)
		switch sum := c + t; {
		case near(sum, best):
			boxes = append(boxes, box{c, t})
			best = min(best, sum)
		case sum < best:
			best, boxes = sum, []box{{c, t}}
		}
		c = d.minMax(false, inf, t, true) // the next point: strictly less transfer
	}
	var chosen []int
	var cs score
	for _, b := range boxes {
		split := d.tie(tol(b.c), tol(b.t), true, tol(b.c)/2+tol(b.t))
		sc := d.score(split, obj)
		if chosen == nil || sc.less(cs) {
			chosen, cs = split, sc
		}
	}
	return chosen, true
}

// score is the documented order's key of a split under the estimator's costs.
func (d plainDP) score(bounds []int, obj partition.Objective) score {
	var sc score
	var maxC, maxT float64
	times := make([]float64, d.p)
	for i := range d.p {
		a, b := bounds[i], bounds[i+1]-1
		c, t := d.e.Compute(i, a, b), d.e.Transfer(i, a, b)
		maxC, maxT = max(maxC, c), max(maxT, t)
		times[i] = c
		if obj == partition.MaxComputePlusTransfer {
			times[i] += t
		}
		sc.total += times[i]
	}
	for _, t := range times {
		dev := t - sc.total/float64(d.p)
		sc.variance += dev * dev / float64(d.p)
	}
	sc.objective = maxC
	if obj == partition.MaxComputePlusTransfer {
		sc.objective += maxT
	}
	return sc
}

// largeInstance builds a model of n layers and p devices with the features of
// randomInstance at scale: integer times (so that splits tie exactly and the tie-break
// decides), memory that binds, shared items, tensors carried across layers, tie groups,
// heterogeneous devices and links, microbatches in flight and recomputation.
func largeInstance(rng *rand.Rand, n, p int) (*model.Model, *cluster.Cluster, estimate.Options) {
	m := &model.Model{Inputs: []model.Tensor{{ID: "x", Bytes: int64(rng.IntN(100))}}}
	ids := []string{"x"}
	var total int64
	sizes := map[string]int64{}
	vary := rng.IntN(2) == 0
	for l := range n {
		L := model.Layer{Name: fmt.Sprint(l), ForwardSeconds: float64(1 + rng.IntN(20)), BackwardSeconds: float64(rng.IntN(20)),
			ParamBytes: int64(rng.IntN(40)), OptimizerBytes: int64(rng.IntN(10)), ActivationBytes: int64(rng.IntN(8)),
			TemporaryBytes: int64(rng.IntN(30))}
		if rng.IntN(4) == 0 {
			k := fmt.Sprint("code", rng.IntN(4))
			if _, ok := sizes[k]; !ok || vary {
				sizes[k] = int64(1 + rng.IntN(20))
			}
			L.Shared = map[string]int64{k: sizes[k]}
		}
		for _, id := range ids[max(0, len(ids)-4):] {
			if rng.IntN(3) == 0 || id == ids[len(ids)-1] {
				L.InputIDs = append(L.InputIDs, id)
			}
		}
		id := fmt.Sprint("t", l)
		L.Outputs = []model.Tensor{{ID: id, Bytes: int64(rng.IntN(64))}}
		ids = append(ids, id)
		if rng.IntN(40) == 0 {
			L.TieGroup = fmt.Sprint("g", l/20)
		}
		total += L.ParamBytes + L.OptimizerBytes + 4*L.ActivationBytes + 20
		m.Layers = append(m.Layers, L)
	}
	c := &cluster.Cluster{}
	for range p {
		d := cluster.Device{MemoryBytes: total / int64(p) * int64(12+rng.IntN(10)) / 10, FLOPSPerSecond: 1}
		if rng.IntN(3) == 0 {
			d.FLOPSPerSecond = []float64{0.5, 2, 4}[rng.IntN(3)]
		}
		c.Devices = append(c.Devices, d)
	}
	c.Links = []cluster.Link{{LatencySeconds: float64(rng.IntN(3)), BytesPerSecond: []float64{1, 2, 4, 16}[rng.IntN(4)]}}
	if rng.IntN(2) == 0 {
		c.Host = &cluster.Link{LatencySeconds: 1, BytesPerSecond: 8}
	}
	opt := estimate.Options{InFlight: func(i int) int { return min(p-i, 4) }, Recompute: rng.IntN(4) == 0}
	if rng.IntN(2) == 0 {
		// The framework's memory: the optimizer step's temporaries (as large as the
		// range's parameters), fixed memory and the allocator's reserve.
		params := make([]int64, n+1)
		for l, L := range m.Layers {
			params[l+1] = params[l] + L.ParamBytes
		}
		opt.OptimizerTempBytes = func(a, b int) int64 { return params[b+1] - params[a] }
		opt.FixedBytes = int64(rng.IntN(20))
		opt.AllocatorReserve = []float64{0, 0.05, 0.125}[rng.IntN(3)]
	}
	return m, c, opt
}

// TestAgainstPlainDP checks Make against the plain DP on instances of hundreds to
// thousands of layers, for both objectives (the compute+transfer ones smaller, as the
// reference walks the whole frontier), on small instances whose sums tie exactly (flat
// frontiers), and on the transfer-dominated family.
func TestAgainstPlainDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	type tc struct {
		name string
		m    *model.Model
		c    *cluster.Cluster
		opt  estimate.Options
		obj  partition.Objective
	}
	var cases []tc
	for k := range 12 {
		n, p := 200+rng.IntN(400), 2+rng.IntN(10)
		if k < 3 {
			n = 2000 + rng.IntN(1500) // thousands of layers
		}
		m, c, opt := largeInstance(rng, n, p)
		cases = append(cases, tc{fmt.Sprintf("compute/n=%d/p=%d", n, p), m, c, opt, partition.MaxCompute})
	}
	for range 8 {
		n, p := 60+rng.IntN(120), 2+rng.IntN(5)
		m, c, opt := largeInstance(rng, n, p)
		cases = append(cases, tc{fmt.Sprintf("compute+transfer/n=%d/p=%d", n, p), m, c, opt, partition.MaxComputePlusTransfer})
	}
	for k := range 150 {
		n, p := 6+rng.IntN(60), 2+rng.IntN(6)
		m, c := flatFamily(rng, n, p, k)
		cases = append(cases, tc{fmt.Sprintf("flat/n=%d/p=%d/k=%d", n, p, k), m, c, estimate.Options{}, partition.MaxComputePlusTransfer})
	}
	for seed := range uint64(6) {
		n, p := 40+int(seed)*15, 3+int(seed)
		m, c := transferDominatedFamily(n, p, seed)
		cases = append(cases, tc{fmt.Sprintf("transfer-dominated/n=%d/p=%d/seed=%d", n, p, seed), m, c, estimate.Options{}, partition.MaxComputePlusTransfer})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e, err := estimate.New(tt.m, tt.c, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			d := newPlainDP(e)
			want, ok := d.optimum(tt.obj)
			got, err := partition.Solve(Costs{e}, tt.obj)
			if !ok {
				if err == nil {
					t.Fatalf("the plain DP finds no split; Solve returned %v", got.Boundaries)
				}
				return
			}
			if err != nil {
				t.Fatalf("Solve: %v; the plain DP finds %v", err, want)
			}
			ws, gs := d.score(want, tt.obj), d.score(got.Boundaries, tt.obj)
			if ws.less(gs) || gs.less(ws) || gs.objective != got.Objective {
				t.Fatalf("Solve %v scores %+v (objective %v); the plain DP's %v scores %+v", got.Boundaries, gs, got.Objective, want, ws)
			}
		})
	}
}

// flatFamily builds small compute+transfer instances whose sums tie exactly and often:
// whole-second compute, outputs of whole kilobytes over 1,000 B/s links (growing along the
// model in two of three kinds), sometimes a host on every stage's path or a faster first
// device. Their frontiers have flat stretches, where the tie-break decides.
func flatFamily(rng *rand.Rand, n, p, k int) (*model.Model, *cluster.Cluster) {
	m := &model.Model{Name: fmt.Sprint("flat-", k)}
	for l := range n {
		L := model.Layer{Name: fmt.Sprint(l), ForwardSeconds: float64(1 + rng.IntN(3)),
			Outputs: []model.Tensor{{ID: fmt.Sprint("t", l), Bytes: int64(1000 * (1 + rng.IntN(1+k%7)) * (1 + l*(k%3)))}}}
		if l > 0 {
			L.InputIDs = []string{fmt.Sprint("t", l-1)}
		}
		m.Layers = append(m.Layers, L)
	}
	c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 40, FLOPSPerSecond: 1}, p, cluster.Link{BytesPerSecond: 1000}, nil)
	if k%4 == 1 {
		c.Host = &cluster.Link{LatencySeconds: 1, BytesPerSecond: 1000}
		m.Inputs = []model.Tensor{{ID: "x", Bytes: 3000}}
		m.Layers[0].InputIDs = []string{"x"}
	}
	if k%5 == 2 {
		c.Devices[0].FLOPSPerSecond = 2
	}
	return m, c
}
