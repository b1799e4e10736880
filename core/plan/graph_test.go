package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// graphEdges derives a model's dependency graph from its definition, independently of
// the estimator: layer l depends on the producer of every tensor it reads, and a layer
// that reads nothing (l > 0) on the layer before it.
func graphEdges(m *model.Model) [][2]int {
	producer := map[string]int{}
	for _, t := range m.Inputs {
		producer[t.ID] = -1
	}
	var edges [][2]int
	for l, layer := range m.Layers {
		if len(layer.InputIDs) == 0 && l > 0 {
			edges = append(edges, [2]int{l - 1, l})
		}
		for _, id := range layer.InputIDs {
			if q := producer[id]; q >= 0 {
				edges = append(edges, [2]int{q, l})
			}
		}
		for _, t := range layer.Outputs {
			producer[t.ID] = l
		}
	}
	return edges
}

// graphBest enumerates every assignment of layers to stages, keeps those whose every
// stage is non-empty, whose edges never run to an earlier stage (so every stage is
// convex) and whose tie groups are whole, and scores each as the split of the model's
// layers reordered stage by stage, with the brute force's reference costing. It returns
// the best score and how many splits it scored.
func graphBest(m *model.Model, c *cluster.Cluster, opt estimate.Options, obj partition.Objective) (best score, feasible bool, splits int) {
	n, p := len(m.Layers), len(c.Devices)
	edges := graphEdges(m)
	stage := make([]int, n)
	var rec func(l int)
	rec = func(l int) {
		if l < n {
			for s := range p {
				stage[l] = s
				rec(l + 1)
			}
			return
		}
		for _, e := range edges {
			if stage[e[0]] > stage[e[1]] {
				return
			}
		}
		group := map[string]int{}
		for l, layer := range m.Layers {
			if g := layer.TieGroup; g != "" {
				if s, ok := group[g]; ok && s != stage[l] {
					return
				}
				group[g] = stage[l]
			}
		}
		var order []int
		bounds := []int{0}
		for s := range p {
			for l := range n {
				if stage[l] == s {
					order = append(order, l)
				}
			}
			if len(order) == bounds[len(bounds)-1] {
				return // an empty stage
			}
			bounds = append(bounds, len(order))
		}
		splits++
		sc, ok := reorderedReference(m, c, opt, order).scoreOf(bounds, obj)
		if ok && (!feasible || sc.less(best)) {
			best, feasible = sc, true
		}
	}
	rec(0)
	return best, feasible, splits
}

// secondOutputs gives some layers a second output tensor, which some later layers read:
// layers with several inputs and outputs, as native profiles may have.
func secondOutputs(rng *rand.Rand, m *model.Model) {
	for l := range m.Layers {
		if rng.IntN(2) == 0 {
			continue
		}
		id := fmt.Sprintf("u%d", l)
		m.Layers[l].Outputs = append(m.Layers[l].Outputs, model.Tensor{ID: id, Bytes: int64(rng.IntN(8))})
		for k := l + 1; k < len(m.Layers); k++ {
			if rng.IntN(3) == 0 {
				m.Layers[k].InputIDs = append(m.Layers[k].InputIDs, id)
			}
		}
	}
}

// isChain reports whether every layer depends on the one before it.
func isChain(m *model.Model) bool {
	next := map[[2]int]bool{}
	for _, e := range graphEdges(m) {
		next[e] = true
	}
	for l := 1; l < len(m.Layers); l++ {
		if !next[[2]int{l - 1, l}] {
			return false
		}
	}
	return true
}

// reorderedReference is the brute force's reference on m's layers in the given order;
// the optimizer temporaries, a sum over layers, are summed over the reordered ones.
func reorderedReference(m *model.Model, c *cluster.Cluster, opt estimate.Options, order []int) reference {
	m2 := *m
	m2.Layers = nil
	for _, l := range order {
		m2.Layers = append(m2.Layers, m.Layers[l])
	}
	if temp := opt.OptimizerTempBytes; temp != nil {
		opt.OptimizerTempBytes = func(a, b int) (sum int64) {
			for k := a; k <= b; k++ {
				sum += temp(order[k], order[k])
			}
			return sum
		}
	}
	if opt.MemoryProportion == 0 {
		opt.MemoryProportion = 1
	}
	return reference{&m2, c, opt}
}

// TestGraphAgainstBruteForce checks the graph split (estimator, SetCoster and dagsplit
// together) against every convex split of small random models, for both objectives: the
// same optimum under the partitioner's order, bit for bit (integer costs), and every
// stage's costs as the reference gives them.
func TestGraphAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	counts := map[string]int{}
	const instances = 4000
	for k := 0; k < instances; k++ {
		m, c, opt := randomInstance(rng)
		if len(m.Layers) > 7 || len(c.Devices) > 4 {
			continue
		}
		if rng.IntN(2) == 0 {
			secondOutputs(rng, m)
			counts["several outputs"]++
		}
		stated := false
		for _, l := range m.Layers {
			stated = stated || l.RecvBytes != nil || l.SendBytes != nil
		}
		for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
			got, err := Make(m, c, Options{Objective: obj, Estimate: opt, Graph: true})
			ident := make([]int, len(m.Layers))
			for l := range ident {
				ident[l] = l
			}
			var want score
			var feasible bool
			if stated {
				// Stated transfers describe cuts of the layer order: ranges of it.
				want, feasible = reorderedReference(m, c, opt, ident).best(obj)
			} else {
				var splits int
				want, feasible, splits = graphBest(m, c, opt, obj)
				chain, _ := reorderedReference(m, c, opt, ident).best(obj)
				if feasible && want.less(chain) {
					counts["graph beats ranges"]++
				}
				if splits > 0 && !isChain(m) {
					counts["branching"]++
				}
			}
			if !feasible {
				if !errors.Is(err, ErrNoFit) {
					t.Fatalf("instance %d (%v): no convex split fits, Make returned %v, %v", k, obj, got, err)
				}
				counts["infeasible"]++
				continue
			}
			if err != nil {
				t.Fatalf("instance %d (%v): reference optimum %+v, Make failed: %v", k, obj, want, err)
			}
			switch {
			case stated && (got.GraphFallback == nil || got.GraphFallback.Code != FallbackStatedTransfers):
				t.Fatalf("instance %d: stated transfers, fallback %+v", k, got.GraphFallback)
			case !stated && (got.GraphFallback != nil || got.Partition != PartitionGraph):
				t.Fatalf("instance %d: split %q, fallback %+v", k, got.Partition, got.GraphFallback)
			}
			order := got.LayerOrder
			if order == nil {
				order = ident
			} else {
				counts["not contiguous"]++
			}
			ref := reorderedReference(m, c, opt, order)
			sc, ok := ref.scoreOf(got.Boundaries, obj)
			if !ok || sc.less(want) || want.less(sc) {
				t.Fatalf("instance %d (%v): order %v boundaries %v score %+v (valid %v); reference optimum %+v", k, obj, order, got.Boundaries, sc, ok, want)
			}
			if got.Bottleneck != sc.objective {
				t.Fatalf("instance %d (%v): plan bottleneck %v, reference %v", k, obj, got.Bottleneck, sc.objective)
			}
			for i, s := range got.Stages {
				r := ref.stage(i, s.FirstLayer, s.LastLayer)
				if s.MemoryBytes != r.memory || s.Compute != r.compute || s.Transfer != r.transfer {
					t.Fatalf("instance %d stage %d: plan says memory %d compute %v transfer %v, reference %d %v %v",
						k, i, s.MemoryBytes, s.Compute, s.Transfer, r.memory, r.compute, r.transfer)
				}
				if want := order[got.Boundaries[i]:got.Boundaries[i+1]]; !slices.Equal(got.StageLayers(i), want) {
					t.Fatalf("instance %d stage %d: layers %v, want %v", k, i, got.StageLayers(i), want)
				}
			}
			counts[fmt.Sprintf("p=%d", len(c.Devices))]++
		}
	}
	// The generator must give branching graphs, splits that beat every contiguous one,
	// both outcomes and every stage count, or the test is weak.
	for key, least := range map[string]int{"several outputs": 300, "branching": 600, "graph beats ranges": 100, "not contiguous": 150,
		"infeasible": 500, "p=1": 100, "p=2": 100, "p=3": 100, "p=4": 100} {
		if counts[key] < least {
			t.Errorf("%s: %d instances, want at least %d", key, counts[key], least)
		}
	}
	t.Logf("outcomes: %v", counts)
}
