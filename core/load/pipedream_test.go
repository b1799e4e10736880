package load_test

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// profile is a PipeDream graph.txt read independently of package load, with times in
// whole microseconds (the files give milliseconds to three decimals) so that the
// reference below computes exactly.
type profile struct {
	ids          []string // in file order
	timeUs       map[string]int64
	act, param   map[string]int64
	succs, preds map[string][]string
	edges        [][2]string
}

var (
	nodeLine = regexp.MustCompile(`^(\S+) -- .* -- forward_compute_time=([0-9.]+), backward_compute_time=([0-9.]+), activation_size=([^,]+), parameter_size=([0-9.]+)$`)
	edgeLine = regexp.MustCompile(`^\t(\S+) -- (\S+)$`)
)

func readProfile(t testing.TB, path string) *profile {
	t.Helper()
	pr := &profile{timeUs: map[string]int64{}, act: map[string]int64{}, param: map[string]int64{},
		succs: map[string][]string{}, preds: map[string][]string{}}
	num := func(s string) int64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			t.Fatal(err)
		}
		return int64(math.Round(f))
	}
	for _, line := range strings.Split(strings.TrimRight(string(readFile(t, path)), "\n"), "\n") {
		if m := nodeLine.FindStringSubmatch(line); m != nil {
			id := m[1]
			pr.ids = append(pr.ids, id)
			ms := func(s string) int64 { f, _ := strconv.ParseFloat(s, 64); return int64(math.Round(f * 1000)) }
			pr.timeUs[id] = ms(m[2]) + ms(m[3])
			for _, a := range strings.Split(strings.Trim(m[4], "[]"), ";") {
				pr.act[id] += num(a)
			}
			pr.param[id] = num(m[5])
		} else if m := edgeLine.FindStringSubmatch(line); m != nil {
			pr.edges = append(pr.edges, [2]string{m[1], m[2]})
			pr.succs[m[1]] = append(pr.succs[m[1]], m[2])
			pr.preds[m[2]] = append(pr.preds[m[2]], m[1])
		} else {
			t.Fatalf("%s: unreadable line %q", path, line)
		}
	}
	return pr
}

// chainRef costs contiguous ranges of a profile's nodes in a given order, naively, by the
// rules docs/formats.md gives for imported PipeDream profiles in training with one
// microbatch in flight: time = forward + backward; memory = parameters + the peak over the
// range's layers l of (bytes of tensors alive across l + activations of the range's layers
// before l), at least the range's activations, where a node's output is alive strictly between it and its last consumer,
// and a source node's input strictly before the source.
type chainRef struct {
	n      int
	timeUs []int64
	mem    [][]int64 // mem[a][b] for a <= b
}

func newChainRef(pr *profile, order []string) *chainRef {
	n := len(order)
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	r := &chainRef{n: n, timeUs: make([]int64, n), mem: make([][]int64, n)}
	carried := func(l int) int64 { // bytes alive across layer l, not used by it
		var sum int64
		for _, id := range order {
			first, last := pos[id], -1
			for _, s := range pr.succs[id] {
				last = max(last, pos[s])
			}
			if len(pr.preds[id]) == 0 && first > l { // its model input, read at first
				sum += pr.act[id]
			}
			if first < l && l < last {
				sum += pr.act[id]
			}
		}
		return sum
	}
	carry := make([]int64, n)
	for l, id := range order {
		r.timeUs[l] = pr.timeUs[id]
		carry[l] = carried(l)
	}
	for a := range n {
		r.mem[a] = make([]int64, n)
		for b := a; b < n; b++ {
			var params, peak, acts int64
			for l := a; l <= b; l++ {
				params += pr.param[order[l]]
				peak = max(peak, carry[l]+acts)
				acts += pr.act[order[l]]
			}
			r.mem[a][b] = params + max(peak, acts) // all its activations where its forward ends
		}
	}
	return r
}

func (r *chainRef) stageUs(a, b int) int64 {
	var s int64
	for l := a; l <= b; l++ {
		s += r.timeUs[l]
	}
	return s
}

// best is the plain O(p n^2) dynamic program for the least bottleneck (max stage time)
// over splits into p stages that fit limit bytes each, then, under that bottleneck, the
// least sum of squared stage times (the partitioner's tie rule; the total is the same for
// every split), and how many splits reach both. It returns the bottleneck (-1: none fits),
// the sum of squares, one optimal split and the number of optimal splits.
func (r *chainRef) best(p int, limit int64) (bottleneck, squares int64, split []int, count int) {
	n, inf := r.n, int64(math.MaxInt64)
	fits := func(a, b int) bool { return r.mem[a][b] <= limit }
	// bn[i][b]: least bottleneck of layers [0, b] on stages 0..i.
	bn := make([][]int64, p)
	for i := range p {
		bn[i] = make([]int64, n)
		for b := range n {
			bn[i][b] = inf
			if i == 0 {
				if fits(0, b) {
					bn[0][b] = r.stageUs(0, b)
				}
				continue
			}
			for a := i; a <= b; a++ {
				if bn[i-1][a-1] < inf && fits(a, b) {
					bn[i][b] = min(bn[i][b], max(bn[i-1][a-1], r.stageUs(a, b)))
				}
			}
		}
	}
	bottleneck = bn[p-1][n-1]
	if bottleneck == inf {
		return -1, 0, nil, 0
	}
	ok := func(a, b int) bool { return fits(a, b) && r.stageUs(a, b) <= bottleneck }
	sq := make([][]int64, p)
	cnt := make([][]int, p)
	from := make([][]int, p)
	for i := range p {
		sq[i], cnt[i], from[i] = make([]int64, n), make([]int, n), make([]int, n)
		for b := range n {
			sq[i][b] = inf
			if i == 0 {
				if ok(0, b) {
					s := r.stageUs(0, b)
					sq[0][b], cnt[0][b] = s*s, 1
				}
				continue
			}
			for a := i; a <= b; a++ {
				if sq[i-1][a-1] == inf || !ok(a, b) {
					continue
				}
				s := r.stageUs(a, b)
				switch v := sq[i-1][a-1] + s*s; {
				case v < sq[i][b]:
					sq[i][b], cnt[i][b], from[i][b] = v, cnt[i-1][a-1], a
				case v == sq[i][b]:
					cnt[i][b] += cnt[i-1][a-1]
				}
			}
		}
	}
	split = make([]int, p+1)
	split[p] = n
	for i, b := p-1, n-1; i > 0; i-- {
		split[i] = from[i][b]
		b = split[i] - 1
	}
	return bottleneck, sq[p-1][n-1], split, cnt[p-1][n-1]
}

// splitCost is the bottleneck and sum of squares of a given split under the reference.
func (r *chainRef) splitCost(split []int) (bottleneck, squares int64) {
	for i := 0; i+1 < len(split); i++ {
		s := r.stageUs(split[i], split[i+1]-1)
		bottleneck = max(bottleneck, s)
		squares += s * s
	}
	return bottleneck, squares
}

func layerNames(m *model.Model) []string {
	names := make([]string, len(m.Layers))
	for i, l := range m.Layers {
		names[i] = l.Name
	}
	return names
}

// TestPipeDreamVGG16Plans splits the real VGG16 profile 2, 4 and 8 ways, with memory to
// spare and with memory that binds, and checks the plan against chainRef's dynamic
// program: the same bottleneck, an optimal split (the same one when it is the only one),
// and every stage's memory as the reference computes it.
func TestPipeDreamVGG16Plans(t *testing.T) {
	pr := readProfile(t, "testdata/pipedream/vgg16.graph.txt")
	m, f, err := load.Model(readFile(t, "testdata/pipedream/vgg16.graph.txt"))
	if err != nil || f != load.PipeDream {
		t.Fatalf("format %q, error %v", f, err)
	}
	// VGG16's node ids count along the network: the order is node1 .. node41.
	var want []string
	for i := 1; i <= 41; i++ {
		want = append(want, "node"+strconv.Itoa(i))
	}
	if got := layerNames(m); !slices.Equal(got, want) {
		t.Fatalf("layer order %v, want node1 .. node41", got)
	}
	ref := newChainRef(pr, want)
	const roomy = 1 << 50
	cases := []struct {
		stages int
		limit  int64
	}{
		{2, roomy}, {4, roomy}, {8, roomy},
		{2, 0}, {4, 0}, {8, 0}, // 0: the binding limit chosen below
	}
	for _, tc := range cases {
		limit := tc.limit
		if limit == 0 {
			var ok bool
			if limit, ok = bindingLimit(ref, tc.stages); !ok {
				// 8 stages: below the largest stage of the unlimited optimum no
				// split fits at all, so no limit binds without refusing every split.
				if tc.stages != 8 {
					t.Errorf("%d stages: no limit binds", tc.stages)
				}
				continue
			}
		}
		bn, sq, split, count := ref.best(tc.stages, limit)
		t.Logf("%d stages, limit %d: reference bottleneck %d us, split %v (%d optimal)", tc.stages, limit, bn, split, count)
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: limit}, tc.stages, cluster.Link{}, nil)
		p, err := plan.Make(m, c, plan.Options{})
		if err != nil {
			t.Fatalf("%d stages, limit %d: %v", tc.stages, limit, err)
		}
		if gotBn, gotSq := ref.splitCost(p.Boundaries); gotBn != bn || gotSq != sq {
			t.Errorf("%d stages, limit %d: plan %v costs (%d us, %d us^2), reference optimum (%d, %d) at %v",
				tc.stages, limit, p.Boundaries, gotBn, gotSq, bn, sq, split)
		}
		if count == 1 && !slices.Equal(p.Boundaries, split) {
			t.Errorf("%d stages: plan %v, the only optimal split is %v", tc.stages, p.Boundaries, split)
		}
		// The bottleneck in seconds, to float rounding of the estimator's prefix sums.
		if d := math.Abs(p.Bottleneck*1e6 - float64(bn)); d > 1e-6 {
			t.Errorf("%d stages: bottleneck %v s, reference %d us", tc.stages, p.Bottleneck, bn)
		}
		for i, s := range p.Stages {
			if want := ref.mem[s.FirstLayer][s.LastLayer]; s.MemoryBytes != want || s.MemoryBytes > limit {
				t.Errorf("%d stages: stage %d memory %d, reference %d, limit %d", tc.stages, i, s.MemoryBytes, want, limit)
			}
		}
	}
}

// bindingLimit returns a memory limit under which no split reaching the unlimited
// bottleneck fits, but some split still does: starting from no limit, it repeatedly sets
// the limit one byte below the largest stage memory of the reference's optimal split.
// ok is false where no such limit exists (every split fits no smaller limit first).
func bindingLimit(ref *chainRef, stages int) (limit int64, ok bool) {
	unlimited, _, _, _ := ref.best(stages, math.MaxInt64)
	limit = math.MaxInt64
	for {
		bn, _, split, _ := ref.best(stages, limit)
		switch {
		case bn < 0:
			return 0, false
		case bn > unlimited:
			return limit, true
		}
		var need int64
		for i := range stages {
			need = max(need, ref.mem[split[i]][split[i+1]-1])
		}
		limit = need - 1
	}
}

// TestPipeDreamDAGs imports the ResNet-50 and GNMT profiles, whose graphs branch, and
// checks that every edge of the file runs forwards in the layer order and that the bytes
// crossing each cut are those of the tensors produced before it and consumed after it.
func TestPipeDreamDAGs(t *testing.T) {
	cases := []struct {
		name string
		cuts map[int]int64 // hand-checked cuts: layer index a stage starts at -> bytes
	}{
		// resnet50: cut 1 passes the input node's output (128 x 3 x 224 x 224 floats);
		// cut 13 falls inside the first residual block, before the downsample convolution
		// node14, which still needs node5's output (102760448) while node13's output
		// (411041792) waits for the Add node16.
		{"resnet50", map[int]int64{1: 77070336, 13: 102760448 + 411041792}},
		// gnmt: cut 20 (before node21) crosses node19's encoder output (6291456) to the
		// attention node23, and empty tensors from the inputs node2, node3 and node20;
		// cut 28 (before node29) crosses node26 (131072, to three later Concats) and
		// node28 (6160384).
		{"gnmt", map[int]int64{20: 6291456, 28: 131072 + 6160384}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := "testdata/pipedream/" + tc.name + ".graph.txt"
			pr := readProfile(t, path)
			m, _, err := load.Model(readFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			order := layerNames(m)
			if got, want := slices.Sorted(slices.Values(order)), slices.Sorted(slices.Values(pr.ids)); !slices.Equal(got, want) {
				t.Fatalf("layers %v are not the profile's nodes %v", got, want)
			}
			pos := map[string]int{}
			for i, id := range order {
				pos[id] = i
			}
			for _, e := range pr.edges {
				if pos[e[0]] >= pos[e[1]] {
					t.Errorf("edge %s -> %s runs backwards: positions %d, %d", e[0], e[1], pos[e[0]], pos[e[1]])
				}
			}
			c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 50}, 2, cluster.Link{}, nil)
			e, err := estimate.New(m, c, estimate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := len(order)
			for k := 1; k < n; k++ {
				var want int64
				for _, id := range order {
					last := -1
					for _, s := range pr.succs[id] {
						last = max(last, pos[s])
					}
					if pos[id] < k && k <= last || len(pr.preds[id]) == 0 && pos[id] >= k {
						want += pr.act[id]
					}
				}
				if hand, ok := tc.cuts[k]; ok && hand != want {
					t.Errorf("cut %d: independent count %d, hand count %d", k, want, hand)
				}
				recv, send := e.Range(1, k, n-1).RecvBytes, e.Range(0, 0, k-1).SendBytes
				if recv != want || send != want {
					t.Errorf("cut %d (before %s): stage 1 receives %d, stage 0 sends %d, want %d", k, order[k], recv, send, want)
				}
			}
		})
	}
}

func TestPipeDreamImport(t *testing.T) {
	// Lines out of order, a diamond b -> {c, d} -> e, a list-valued activation, a
	// stage_id, Windows line ends, a repeated edge and two sources.
	src := "e -- Add -- forward_compute_time=1.000, backward_compute_time=0.500, activation_size=8.000, parameter_size=0.000\r\n" +
		"\tc -- e\r\n" +
		"d -- Linear(a -- b) -- forward_compute_time=2.000, backward_compute_time=1.000, activation_size=[4.0; 2.0], parameter_size=100.000 -- stage_id=1\n" +
		"b -- Input -- forward_compute_time=0.250, backward_compute_time=0.000, activation_size=16.000, parameter_size=0.000\n" +
		"c -- ReLU -- forward_compute_time=0.125, backward_compute_time=0.125, activation_size=16.000, parameter_size=0.000\n" +
		"z -- hidden -- forward_compute_time=0.000, backward_compute_time=0.000, activation_size=3.000, parameter_size=0.000\n" +
		"\tb -- c\n\tb -- d\n\td -- e\n\tb -- d\n\tz -- d\n"
	m, f, err := load.Model([]byte(src))
	if err != nil || f != load.PipeDream {
		t.Fatalf("format %q, error %v", f, err)
	}
	want := &model.Model{TimeUnit: model.Seconds,
		Inputs: []model.Tensor{{ID: "b:input", Bytes: 16}, {ID: "z:input", Bytes: 3}},
		Layers: []model.Layer{
			{Name: "b", Kind: "Input", ForwardSeconds: 0.00025, ActivationBytes: 16,
				Outputs: []model.Tensor{{ID: "b", Bytes: 16}}, InputIDs: []string{"b:input"}},
			{Name: "c", Kind: "ReLU", ForwardSeconds: 0.000125, BackwardSeconds: 0.000125, ActivationBytes: 16,
				Outputs: []model.Tensor{{ID: "c", Bytes: 16}}, InputIDs: []string{"b"}},
			{Name: "z", Kind: "hidden", ActivationBytes: 3,
				Outputs: []model.Tensor{{ID: "z", Bytes: 3}}, InputIDs: []string{"z:input"}},
			{Name: "d", Kind: "Linear(a -- b)", ForwardSeconds: 0.002, BackwardSeconds: 0.001, ParamBytes: 100, ActivationBytes: 6,
				Outputs: []model.Tensor{{ID: "d", Bytes: 6}}, InputIDs: []string{"b", "z"}},
			{Name: "e", Kind: "Add", ForwardSeconds: 0.001, BackwardSeconds: 0.0005, ActivationBytes: 8,
				Outputs: []model.Tensor{{ID: "e", Bytes: 8}}, InputIDs: []string{"c", "d"}},
		}}
	if !reflect.DeepEqual(m, want) {
		got, _ := json.MarshalIndent(m, "", " ")
		exp, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("got  %s\nwant %s", got, exp)
	}
}

func TestPipeDreamOrderNatural(t *testing.T) {
	// Independent chains: the ready node with the least natural id goes first, so node2
	// precedes node10 although "node10" < "node2" as strings.
	var b strings.Builder
	for _, id := range []string{"node10", "node2", "node1", "x", "node01"} {
		b.WriteString(id + " -- L -- forward_compute_time=1, backward_compute_time=0, activation_size=0, parameter_size=0\n")
	}
	m, _, err := load.Model([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := layerNames(m), []string{"node01", "node1", "node2", "node10", "x"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestPipeDreamErrors(t *testing.T) {
	const ok = " -- L -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=3.0, parameter_size=4.0\n"
	cases := []struct{ name, src, want string }{
		{"cycle", "a" + ok + "b" + ok + "c" + ok + "\ta -- b\n\tb -- c\n\tc -- b\n",
			`the graph has a cycle: "b" -> "c" -> "b"`},
		{"self loop", "a" + ok + "\ta -- a\n", `the graph has a cycle: "a" -> "a"`},
		{"unknown node", "a" + ok + "\ta -- b\n", `line 2: edge names node "b", which no node line defines`},
		{"duplicate", "a" + ok + "a" + ok, `line 2: node "a" is already defined on line 1`},
		{"negative", "a -- L -- forward_compute_time=-1, backward_compute_time=2.0, activation_size=3.0, parameter_size=4.0\n",
			"line 1: forward_compute_time: must be >= 0, got -1"},
		{"nan", "a -- L -- forward_compute_time=NaN, backward_compute_time=2.0, activation_size=3.0, parameter_size=4.0\n",
			`line 1: forward_compute_time: must be a finite number, got "NaN"`},
		{"missing", "a -- L -- forward_compute_time=1, backward_compute_time=2.0, activation_size=3.0\n",
			"line 1: parameter_size is missing"},
		{"unknown field", "a -- L -- forward_compute_time=1, backward_compute_time=2.0, activation_size=3.0, parameter_size=1, flops=3\n",
			`line 1: unknown field "flops"`},
		{"bad list", "a -- L -- forward_compute_time=1, backward_compute_time=2.0, activation_size=[3.0; x], parameter_size=1\n",
			`line 1: activation_size[1]: must be a number, got "x"`},
		{"too big", "a -- L -- forward_compute_time=1, backward_compute_time=2.0, activation_size=1e30, parameter_size=1\n",
			"line 1: activation_size: must be at most 2^60 bytes, got 1e30"},
		{"short node line", "a -- forward_compute_time=1\n", "line 1: a node line must be"},
		{"bad edge", "a" + ok + "\ta -- b -- c\n", "line 2: an edge line (indented) must be \"src -- dst\""},
		{"input name clash", "a" + ok + "a:input" + ok,
			`line 2: node id "a:input" is also the name of the model input that source node "a" reads`},
		{"no nodes", "\ta -- b -- c -- d\n", "line 1: an edge line"},
		{"not a model", "hello", "unrecognised model format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := load.Model([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Sizes must be whole numbers of bytes (read exactly, never rounded).
func TestPipeDreamHostile(t *testing.T) {
	node := func(act, param string) string {
		return "a -- L -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=" + act + ", parameter_size=" + param + "\n"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"fractional bytes", node("12.5", "1"), "line 1: activation_size: must be a whole number of bytes, got 12.5"},
		{"fractional list item", node("[4.0; 0.25]", "1"), "line 1: activation_size[1]: must be a whole number of bytes, got 0.25"},
		{"fractional parameters", node("1", "3.000001"), "line 1: parameter_size: must be a whole number of bytes, got 3.000001"},
		{"hex float", node("0x10p0", "1"), `line 1: activation_size: must be a decimal number of bytes, got "0x10p0"`},
		{"infinity", node("inf", "1"), `line 1: activation_size: must be a finite number, got "inf"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := load.Model([]byte(tc.src))
			if m != nil {
				t.Errorf("accepted %+v", m.Layers)
			}
			wantError(t, err, tc.want)
		})
	}
	// Sizes as PipeDream prints them, and in exponent form, are whole and read exactly.
	m, _, err := load.Model([]byte(node("[1e11; 411041792.000]", "1152921504606846975.000")))
	if err != nil || m.Layers[0].ActivationBytes != 1e11+411041792 || m.Layers[0].ParamBytes != 1<<60-1 {
		t.Errorf("whole sizes: %+v, %v", m, err)
	}
}
