package request

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"pipeplan/core/wire"
	"slices"
	"strings"
	"testing"
)

// toolProfile is a Graphcore ModelInfo and IPUClusterInfo as Graphcore's auto-pipeline
// tool reads them, decoded by the test itself (not by core/load).
type toolProfile struct {
	LayerName []string `json:"layerName"`
	LayerType []string `json:"layerType"`
	LayerInfo []struct {
		Cycle  struct{ Forward, Backward int64 } `json:"cycle"`
		Memory struct {
			Shared, Exclusive                                          map[string]int64
			Inputs, Outputs, MaxTemporary, CurCarryOver, CurActivation int64
		} `json:"memory"`
	} `json:"layerInfo"`
}

type toolCluster struct {
	Clock, Memory float64
	Connection    []struct{ RecvGBps, RecvIdleCycle, SendGBps, SendIdleCycle float64 }
}

// toolInf is the tool's INF: the cost of a range that may not be a stage.
const toolInf = math.MaxInt64 / 4

// toolPartition is Graphcore's auto-pipeline tool's partition, restated from the tool's
// description (its README: "How to find a pipeline?", the memory and "variable in the
// same stage" constraints, "Considering data transfer time", "How to estimate"):
//
//   - cost[a, b] is the range's forward cycles, or INF when its memory exceeds memory x
//     memoryProportion MiB or a layer in it has a call (a repeated layer name) outside it;
//   - memory[a, b] is the always-alive part (each shared key once, the first size met;
//     every exclusive entry) plus the not-always-alive peak: the most, over the layers l
//     of the range, of maxTemporary + curCarryOver + the curActivation of a..l-1 (at
//     least the range's curActivation, where pipeplan departs from the tool: one
//     microbatch holds all of it where its forward ends, model.WorkingPeakBytes). The
//     README names the temporaries and the carried tensors; its profiles' curActivation
//     adds, layer by layer, what one microbatch keeps (docs/formats.md): one
//     microbatch's, whatever the pipeline schedule;
//   - transfer_cost[i, a, b] is what IPU i receives (from the previous IPU unless i = 0)
//     and sends (to the next unless last), plus the two host transfers every IPU waits
//     for, each idle + bytes / (GBps x 2^30 / clock) cycles, truncated;
//   - for every max_transfer_cycle among the transfer costs, the DP
//     partition_cost[ipu][end] = min over last_end of max(partition_cost[ipu-1][last_end],
//     cost of the next range, INF if its transfer exceeds the bound), and the answer is
//     the least DP optimum + max_transfer_cycle.
//
// It returns that least objective (-1 when every split costs INF) and the tool's cost of
// a given split (-1 when a stage of it costs INF), to check a plan against.
func toolPartition(t *testing.T, modelJSON, clusterJSON []byte, proportion float64) (best int64, costOf func(bounds []int) int64) {
	t.Helper()
	var mi toolProfile
	var ci toolCluster
	if err := json.Unmarshal(modelJSON, &mi); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(clusterJSON, &ci); err != nil {
		t.Fatal(err)
	}
	n, p := len(mi.LayerInfo), len(ci.Connection)
	limit := int64(ci.Memory * (1 << 20) * proportion)
	linkCycles := func(gbps, idle float64, bytes int64) int64 {
		return int64(idle + float64(bytes)/(gbps*(1<<30)/ci.Clock))
	}
	host := linkCycles(ci.Connection[0].RecvGBps, ci.Connection[0].RecvIdleCycle, mi.LayerInfo[0].Memory.Inputs) +
		linkCycles(ci.Connection[p-1].SendGBps, ci.Connection[p-1].SendIdleCycle, mi.LayerInfo[n-1].Memory.Outputs)
	// transfer[i][a][b], cost[a][b] for layers a..b inclusive.
	transfer := make([][][]int64, p)
	for i := range p {
		transfer[i] = make([][]int64, n)
		c := ci.Connection[i]
		for a := range n {
			transfer[i][a] = make([]int64, n)
			for b := a; b < n; b++ {
				tr := host
				if i > 0 {
					tr += linkCycles(c.RecvGBps, c.RecvIdleCycle, mi.LayerInfo[a].Memory.Inputs)
				}
				if i < p-1 {
					tr += linkCycles(c.SendGBps, c.SendIdleCycle, mi.LayerInfo[b].Memory.Outputs)
				}
				transfer[i][a][b] = tr
			}
		}
	}
	cost := make([][]int64, n)
	for a := range n {
		cost[a] = make([]int64, n)
		for b := a; b < n; b++ {
			cost[a][b] = toolInf
			inside := true
			for l := a; l <= b; l++ {
				for k, name := range mi.LayerName {
					if name == mi.LayerName[l] && (k < a || k > b) {
						inside = false
					}
				}
			}
			seen := map[string]bool{}
			var alive, peak, act, cycles int64
			for l := a; l <= b; l++ {
				m := mi.LayerInfo[l].Memory
				for k, v := range m.Shared {
					if !seen[k] {
						seen[k] = true
						alive += v
					}
				}
				for _, v := range m.Exclusive {
					alive += v
				}
				peak = max(peak, m.MaxTemporary+m.CurCarryOver+act)
				act += m.CurActivation
				cycles += mi.LayerInfo[l].Cycle.Forward
			}
			peak = max(peak, act) // pipeplan's one departure (docs/formats.md)
			if inside && alive+peak <= limit {
				cost[a][b] = cycles
			}
		}
	}
	var bounds []int64
	for i := range transfer {
		for a := range transfer[i] {
			bounds = append(bounds, transfer[i][a][a:]...)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	best = -1
	for _, bound := range bounds {
		// dp[end]: the least max cost of layers 0..end on the IPUs so far.
		dp := make([]int64, n)
		for end := range n {
			dp[end] = toolInf
			if transfer[0][0][end] <= bound {
				dp[end] = cost[0][end]
			}
		}
		for ipu := 1; ipu < p; ipu++ {
			next := make([]int64, n)
			for end := range n {
				next[end] = toolInf
				for last := 0; last < end; last++ {
					c := cost[last+1][end]
					if transfer[ipu][last+1][end] > bound {
						c = toolInf
					}
					next[end] = min(next[end], max(dp[last], c))
				}
			}
			dp = next
		}
		if dp[n-1] < toolInf && (best < 0 || dp[n-1]+bound < best) {
			best = dp[n-1] + bound
		}
	}
	costOf = func(b []int) int64 {
		if len(b) != p+1 || b[0] != 0 || b[p] != n {
			return -1
		}
		var maxC, maxT int64
		for i := range p {
			if b[i] >= b[i+1] || cost[b[i]][b[i+1]-1] >= toolInf {
				return -1
			}
			maxC = max(maxC, cost[b[i]][b[i+1]-1])
			maxT = max(maxT, transfer[i][b[i]][b[i+1]-1])
		}
		return maxC + maxT
	}
	return best, costOf
}

// randomToolProfile returns a random ModelInfo and IPUClusterInfo in the tool's JSON:
// shared and exclusive memory, temporaries, carry-over and activations large enough that
// memory binds in some cases, repeated layer names, per-IPU links.
func randomToolProfile(rng *rand.Rand) (modelJSON, clusterJSON []byte) {
	n := 2 + rng.IntN(7)
	p := 1 + rng.IntN(min(n, 4))
	const mib = 1 << 20
	names, types := make([]string, n), make([]string, n)
	infos := make([]any, n)
	for i := range n {
		names[i] = fmt.Sprint("layer", i)
		if rng.IntN(5) == 0 && i > 0 {
			names[i] = names[rng.IntN(i)]
		}
		types[i] = fmt.Sprint("Dense_", rng.IntN(3))
		shared := map[string]int64{}
		if rng.IntN(2) == 0 {
			shared["vertexCode_"+types[i]] = rng.Int64N(150 * mib)
		}
		infos[i] = map[string]any{
			"cycle": map[string]int64{"forward": rng.Int64N(100000), "backward": 0},
			"memory": map[string]any{
				"shared":        shared,
				"exclusive":     map[string]int64{"parameter": rng.Int64N(120 * mib), "controlCode": rng.Int64N(10 * mib)},
				"inputs":        rng.Int64N(1 << 24),
				"outputs":       rng.Int64N(1 << 24),
				"maxTemporary":  rng.Int64N(100 * mib),
				"curCarryOver":  rng.Int64N(40 * mib),
				"curActivation": rng.Int64N(100 * mib),
			},
		}
	}
	gbps := []float64{1, 7, 70, 2.5}
	conns := make([]any, p)
	for i := range conns {
		conns[i] = map[string]any{
			"recvGBps": gbps[rng.IntN(len(gbps))], "recvIdleCycle": rng.IntN(60000),
			"sendGBps": gbps[rng.IntN(len(gbps))], "sendIdleCycle": rng.IntN(60000),
		}
	}
	mj, _ := json.Marshal(map[string]any{"layerName": names, "layerType": types, "layerInfo": infos})
	cj, _ := json.Marshal(map[string]any{"clock": 1.85e9, "memory": 894, "connection": conns})
	return mj, cj
}

// TestGraphcoreToolRandom plans random Graphcore profiles through the doorway with only
// the settings docs/formats.md names (objective compute+transfer, memory proportion
// 0.85; the schedule and the mode left to their defaults: 1f1b training), and checks the
// plan against Graphcore's auto-pipeline tool (toolPartition): the same optimum, a split
// the tool admits with that cost, and no plan where the tool has none. The tool counts
// one microbatch's activations, so the planner must not charge the schedule's stash:
// the result says so in a note.
func TestGraphcoreToolRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 7))
	infeasible, stashBinds := 0, 0
	const trials = 300
	for trial := range trials {
		mj, cj := randomToolProfile(rng)
		r := decode(t, fmt.Sprintf(`{"model": {"document": %s}, "cluster": {"document": %s},
			"objective": "compute+transfer", "memory_proportion": 0.85}`, mj, cj))
		res := run(t, r)
		best, costOf := toolPartition(t, mj, cj, 0.85)
		if best < 0 {
			infeasible++
			if res.Feasible {
				t.Fatalf("trial %d: plan %v, but the tool admits no split\n%s\n%s", trial, res.Plan.Boundaries, mj, cj)
			}
			continue
		}
		if !res.Feasible || res.Plan == nil {
			t.Fatalf("trial %d: no plan (%+v); the tool's optimum is %d\n%s\n%s", trial, res.Diagnostics, best, mj, cj)
		}
		if got := costOf(res.Plan.Boundaries); got != best || res.Plan.Bottleneck() != float64(best) {
			t.Fatalf("trial %d: plan %v with objective %v costs %d under the tool's rules; the tool's optimum is %d\n%s\n%s",
				trial, res.Plan.Boundaries, res.Plan.Bottleneck(), got, best, mj, cj)
		}
		if false {
		}
		// The cases where the schedule's stash would change the answer: a stage the tool
		// admits holds more than one microbatch in flight and would not fit with their
		// activations. The generator must make them common enough to matter.
		for i, s := range res.Plan.Stages {
			if k := res.Schedule.MaxInFlight[i]; k > 1 && s.MemoryBytes+int64(k-1)*s.ActivationBytes > s.LimitBytes {
				stashBinds++
				break
			}
		}
	}
	if infeasible == 0 || infeasible > trials/2 {
		t.Errorf("%d of %d random cases infeasible: memory should bind sometimes, not mostly", infeasible, trials)
	}
	if stashBinds < trials/20 {
		t.Errorf("only %d of %d plans would not fit with the schedule's stash: the test would not see it charged", stashBinds, trials)
	}
}

// The note of the tool's memory rule is given where the rule changes what a stage holds:
// in training, with activations (or recomputation's stashed inputs); not for the tool's
// own test profiles, which keep none, nor in inference.
func TestGraphcoreMemoryRuleNote(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../load/testdata/graphcore/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mj, cj := read("transfer_4.json"), read("cluster_4ipu.json")
	withActs := strings.Replace(mj, `"curActivation": 0`, `"curActivation": 1024`, 1)
	if withActs == mj {
		t.Fatal("transfer_4.json has no curActivation to set")
	}
	for _, tc := range []struct {
		name, model, extra string
		note               bool
	}{
		{"no activations", mj, "", false},
		{"no activations, full recomputation", mj, `, "training": {"recompute": "full"}`, true},
		{"activations", withActs, "", true},
		{"activations, inference", withActs, `, "training": {"mode": "inference"}`, false},
	} {
		res := run(t, decode(t, `{"model": {"document": `+tc.model+`}, "cluster": {"document": `+cj+`}`+tc.extra+`}`))
		if got := diagnostic(res, wire.CodeGraphcoreMemoryRule) != nil; got != tc.note {
			t.Errorf("%s: note %v, want %v", tc.name, got, tc.note)
		}
	}
}
