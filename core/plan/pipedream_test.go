package plan_test

import (
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/plan"
)

// pdGraph is a PipeDream graph.txt as PipeDream's optimizer reads it
// (msr-fiddle/pipedream, optimizer/optimizer_graph_hierarchical.py and graph.py), with
// times in whole microseconds so that the reference below is exact.
type pdGraph struct {
	ids   []string
	us    map[string]int64 // forward + backward
	desc  map[string]string
	succs map[string][]string // direct, in file order, without repeats
	preds map[string][]string
	// transitive closures, memoized
	anc, desc2 map[string]map[string]bool
}

var (
	pdNode = regexp.MustCompile(`^(\S+) -- (.*) -- forward_compute_time=([0-9.]+), backward_compute_time=([0-9.]+), activation_size=[^,]+, parameter_size=[0-9.]+$`)
	pdEdge = regexp.MustCompile(`^\t(\S+) -- (\S+)$`)
)

func readPipeDream(t testing.TB, path string) *pdGraph {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := &pdGraph{us: map[string]int64{}, desc: map[string]string{}, succs: map[string][]string{}, preds: map[string][]string{}}
	us := func(s string) int64 { f, _ := strconv.ParseFloat(s, 64); return int64(math.Round(f * 1000)) }
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if m := pdNode.FindStringSubmatch(line); m != nil {
			g.ids = append(g.ids, m[1])
			g.desc[m[1]] = m[2]
			g.us[m[1]] = us(m[3]) + us(m[4])
		} else if m := pdEdge.FindStringSubmatch(line); m != nil {
			if !slices.Contains(g.succs[m[1]], m[2]) {
				g.succs[m[1]] = append(g.succs[m[1]], m[2])
				g.preds[m[2]] = append(g.preds[m[2]], m[1])
			}
		} else {
			t.Fatalf("%s: unreadable line %q", path, line)
		}
	}
	return g
}

// prune does what PipeDream's optimizer does before partitioning: source nodes that are
// Inputs leave the graph (the input always goes to the first stage), and so do sinks that
// are __getitem__ nodes.
func (g *pdGraph) prune() {
	drop := map[string]bool{}
	for _, id := range g.ids {
		if len(g.preds[id]) == 0 && strings.HasPrefix(g.desc[id], "Input") {
			drop[id] = true
		}
	}
	for _, id := range g.ids {
		if len(g.succs[id]) == 0 && strings.HasPrefix(g.desc[id], "__getitem__") {
			drop[id] = true
		}
	}
	var ids []string
	for _, id := range g.ids {
		if !drop[id] {
			ids = append(ids, id)
		}
	}
	g.ids = ids
	for _, id := range ids {
		g.succs[id] = slices.DeleteFunc(slices.Clone(g.succs[id]), func(s string) bool { return drop[s] })
		g.preds[id] = slices.DeleteFunc(slices.Clone(g.preds[id]), func(s string) bool { return drop[s] })
	}
	g.anc, g.desc2 = map[string]map[string]bool{}, map[string]map[string]bool{}
}

// ancestors and descendants are graph.py's predecessors and successors: transitive,
// without the node itself.
func (g *pdGraph) ancestors(id string) map[string]bool {
	if a, ok := g.anc[id]; ok {
		return a
	}
	a := map[string]bool{}
	for _, p := range g.preds[id] {
		a[p] = true
		for q := range g.ancestors(p) {
			a[q] = true
		}
	}
	g.anc[id] = a
	return a
}

func (g *pdGraph) descendants(id string) map[string]bool {
	if d, ok := g.desc2[id]; ok {
		return d
	}
	d := map[string]bool{}
	for _, s := range g.succs[id] {
		d[s] = true
		for q := range g.descendants(s) {
			d[q] = true
		}
	}
	g.desc2[id] = d
	return d
}

func key(xs []string) string {
	ys := slices.Clone(xs)
	sort.Strings(ys)
	return strings.Join(ys, ",")
}

// augment is graph.py's augment_antichain: the antichain with every predecessor of a
// member that has an edge to a node outside that member's predecessors.
func (g *pdGraph) augment(antichain []string) []string {
	extra := map[string]bool{}
	for _, a := range antichain {
		anc := g.ancestors(a)
		for p := range anc {
			for _, out := range g.succs[p] {
				if !anc[out] && out != a {
					extra[p] = true
				}
			}
		}
	}
	var out []string
	for p := range extra {
		out = append(out, p)
	}
	sort.Strings(out)
	return append(out, antichain...)
}

// deaugment is graph.py's deaugment_augmented_antichain: the members none of whose
// successors is a member.
func (g *pdGraph) deaugment(aug []string) []string {
	var out []string
	for _, a := range aug {
		keep := !slices.Contains(out, a)
		for _, b := range aug {
			if g.descendants(a)[b] {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// next is graph.py's next_antichains.
func (g *pdGraph) next(antichain []string) [][]string {
	in := map[string]bool{}
	for _, a := range antichain {
		in[a] = true
	}
	aug := g.augment(antichain)
	augSet := map[string]bool{}
	for _, a := range aug {
		augSet[a] = true
	}
	var out [][]string
	for _, a := range aug {
		for _, nx := range g.succs[a] {
			if in[nx] {
				continue
			}
			ok := true
			for d := range g.descendants(nx) {
				ok = ok && !augSet[d]
			}
			if !ok {
				continue
			}
			repl := slices.Clone(aug)
			for k := range repl {
				if repl[k] == a {
					repl[k] = nx
				}
			}
			out = append(out, g.deaugment(repl))
		}
	}
	return out
}

// pipeDreamOptimum runs PipeDream's optimizer for a straight pipeline of p stages (one
// device each), memory unconstrained, transfers not counted: the antichain DAG from the
// first source (graph.py's antichain_dag), each state standing for the ideal its
// antichain generates, and the dynamic program of optimizer_graph_hierarchical.py's
// compute_partitioning, A[j][m] = min over states k preceding j (transitively) of
// max(A[k][m-1], time(ideal_j) - time(ideal_k)). It returns the least bottleneck in
// microseconds (-1: no split) and the number of states.
func pipeDreamOptimum(g *pdGraph, p int) (int64, int) {
	var sources []string
	for _, id := range g.ids {
		if len(g.preds[id]) == 0 {
			sources = append(sources, id)
		}
	}
	start := []string{sources[0]}
	index := map[string]int{key(start): 0}
	states := [][]string{start}
	edges := map[int][]int{} // state -> next states
	queue := [][]string{start}
	expanded := map[string]bool{}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if expanded[key(a)] {
			continue
		}
		expanded[key(a)] = true
		for _, nx := range g.next(a) {
			k := key(nx)
			if _, ok := index[k]; !ok {
				index[k] = len(states)
				states = append(states, nx)
			}
			edges[index[key(a)]] = append(edges[index[key(a)]], index[k])
			queue = append(queue, nx)
		}
	}
	// Each state's ideal and its time; states in an order where every edge runs forward
	// (by ideal size: an edge adds a node).
	S := len(states)
	ideal := make([]map[string]bool, S)
	time := make([]int64, S)
	for s, a := range states {
		ideal[s] = map[string]bool{}
		for _, x := range g.augment(a) {
			ideal[s][x] = true
			for q := range g.ancestors(x) {
				ideal[s][q] = true
			}
		}
		for x := range ideal[s] {
			time[s] += g.us[x]
		}
	}
	order := make([]int, S)
	for s := range order {
		order[s] = s
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ideal[order[a]]) < len(ideal[order[b]]) })
	// Transitive predecessors in the antichain DAG.
	predsOf := make([]map[int]bool, S)
	for _, s := range order {
		if predsOf[s] == nil {
			predsOf[s] = map[int]bool{}
		}
		for _, t := range edges[s] {
			if predsOf[t] == nil {
				predsOf[t] = map[int]bool{}
			}
			predsOf[t][s] = true
			for q := range predsOf[s] {
				predsOf[t][q] = true
			}
		}
	}
	const none = int64(-1)
	A := make([][]int64, S)
	for s := range A {
		A[s] = make([]int64, p)
		for m := range p {
			A[s][m] = none
		}
		A[s][0] = time[s]
	}
	for m := 1; m < p; m++ {
		for _, j := range order {
			for k := range predsOf[j] {
				if A[k][m-1] == none {
					continue
				}
				if v := max(A[k][m-1], time[j]-time[k]); A[j][m] == none || v < A[j][m] {
					A[j][m] = v
				}
			}
		}
	}
	last := -1
	for s := range S {
		if len(ideal[s]) == len(g.ids) {
			last = s
		}
	}
	if last < 0 {
		return none, S
	}
	return A[last][p-1], S
}

// TestGraphSplitMatchesPipeDream compares the graph split with PipeDream's optimizer on
// PipeDream's own profiles: on the same costs (PipeDream's: its Input nodes cost
// nothing), with memory to spare and free links, the graph split's bottleneck is at most
// PipeDream's everywhere: PipeDream's states are ideals, and dagsplit runs over all of
// them. On ResNet-50 at 8 and 16 stages it is strictly better than the contiguous split
// of one layer order, as PipeDream's is. GNMT has more ideals than the default bound and
// falls back to the contiguous split, which equals PipeDream's there.
func TestGraphSplitMatchesPipeDream(t *testing.T) {
	for _, name := range []string{"alexnet", "vgg16", "resnet50", "gnmt"} {
		path := "../load/testdata/pipedream/" + name + ".graph.txt"
		g := readPipeDream(t, path)
		us := maps(g)
		g.prune()
		data, _ := os.ReadFile(path)
		m, _, err := load.Model(data)
		if err != nil {
			t.Fatal(err)
		}
		for l := range m.Layers {
			layer := &m.Layers[l]
			if len(layer.InputIDs) == 1 && strings.HasSuffix(layer.InputIDs[0], ":input") && strings.HasPrefix(layer.Kind, "Input") {
				layer.ForwardSeconds, layer.BackwardSeconds = 0, 0
				us[layer.Name] = 0
			}
		}
		for _, p := range []int{2, 4, 8, 16} {
			want, states := pipeDreamOptimum(g, p)
			c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 50}, p, cluster.Link{}, nil)
			costUs := func(pl *plan.Plan) int64 {
				var most int64
				for i := range pl.Stages {
					var sum int64
					for _, l := range pl.StageLayers(i) {
						sum += us[m.Layers[l].Name]
					}
					most = max(most, sum)
				}
				return most
			}
			ranges, err := plan.Make(m, c, plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			graph, err := plan.Make(m, c, plan.Options{Graph: true})
			if err != nil {
				t.Fatal(err)
			}
			got, chain := costUs(graph), costUs(ranges)
			t.Logf("%-8s p=%2d: PipeDream %6d us (%d states), ranges %6d us, graph %6d us (%+.2f%% vs PipeDream), split %q %v",
				name, p, want, states, chain, got, 100*float64(got-want)/float64(want), graph.Partition, graph.GraphFallback)
			if want >= 0 && got > want {
				t.Errorf("%s, %d stages: graph split's bottleneck %d us, PipeDream's optimizer %d us", name, p, got, want)
			}
			if got > chain {
				t.Errorf("%s, %d stages: graph split's bottleneck %d us, the contiguous split's %d us", name, p, got, chain)
			}
			// ResNet-50 at 8 and 16 stages: PipeDream's optimum (56684 and 29642 us) is
			// 3.0% and 0.16% below the best contiguous split of the Kahn order (58447 and
			// 29688 us); the graph split must reach it, with stages not contiguous there.
			if name == "resnet50" && p >= 8 && !(got == want && got < chain && graph.LayerOrder != nil) {
				t.Errorf("resnet50, %d stages: graph split %d us (own order %v), contiguous %d us, PipeDream %d us", p, got, graph.LayerOrder != nil, chain, want)
			}
		}
	}
}

// maps returns each node's time in microseconds, before pruning.
func maps(g *pdGraph) map[string]int64 {
	out := map[string]int64{}
	for k, v := range g.us {
		out[k] = v
	}
	return out
}
