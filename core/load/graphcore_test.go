package load_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// graphcoreOptions are the plan options of Graphcore's auto-pipeline tool: its objective and its
// memoryProportion of 0.85.
var graphcoreOptions = plan.Options{Objective: partition.MaxComputePlusTransfer}

func init() { graphcoreOptions.Estimate.MemoryProportion = 0.85 }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGraphcoreToolCases plans the eight partition cases of Graphcore's auto-pipeline tool's own test
// suite (testdata/graphcore, written in the tool's formats) and checks that each answer is
// one the tool accepts, and that its objective is the optimum of an independent brute
// force over every split under the tool's cost rules (refGraphcore).
func TestGraphcoreToolCases(t *testing.T) {
	cases := []struct {
		model, cluster string
		accepted       [][]int
	}{
		{"even_split_2", "cluster_2ipu", [][]int{{0, 3, 6}}},
		{"shared_parameter_2", "cluster_2ipu", [][]int{{0, 2, 6}}},
		{"memory_2", "cluster_2ipu", [][]int{{0, 1, 6}}},
		{"transfer_2", "cluster_2ipu", [][]int{{0, 2, 6}}},
		{"even_split_4", "cluster_4ipu", [][]int{{0, 4, 8, 12, 16}}},
		{"shared_parameter_4", "cluster_4ipu", [][]int{{0, 2, 9, 12, 16}}},
		{"memory_4", "cluster_4ipu", [][]int{{0, 1, 2, 7, 16}, {0, 1, 3, 7, 16}, {0, 1, 4, 7, 16}, {0, 1, 5, 7, 16}, {0, 1, 6, 7, 16}}},
		{"transfer_4", "cluster_4ipu", [][]int{{0, 2, 5, 8, 16}}},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			mdata := readFile(t, "testdata/graphcore/"+tc.model+".json")
			cdata := readFile(t, "testdata/graphcore/"+tc.cluster+".json")
			m, f, err := load.Model(mdata)
			if err != nil || f != load.Graphcore {
				t.Fatalf("load.Model: format %q, error %v", f, err)
			}
			c, err := load.Cluster(cdata)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Make(m, c, graphcoreOptions)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(tc.accepted, func(b []int) bool { return slices.Equal(b, p.Boundaries) }) {
				t.Errorf("boundaries %v, want one of %v", p.Boundaries, tc.accepted)
			}
			best, optimal := refGraphcore(t, mdata, cdata, 0.85)
			if p.Bottleneck != float64(best) {
				t.Errorf("bottleneck %v, reference optimum %d", p.Bottleneck, best)
			}
			if !slices.ContainsFunc(optimal, func(b []int) bool { return slices.Equal(b, p.Boundaries) }) {
				t.Errorf("boundaries %v are not optimal under the tool's rules; optimal: %v", p.Boundaries, optimal)
			}
		})
	}
}

// TestGraphcoreRandomAgainstTool compares load + plan.Make with the brute-force
// reference on random small ModelInfo/IPUClusterInfo pairs that exercise every term the
// tool uses: shared and exclusive memory, temporaries, carry-over and activations, the
// memory limit, repeated layer names, per-IPU links with idle cycles and truncation, and
// the host terms that every stage's transfer includes.
func TestGraphcoreRandomAgainstTool(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	infeasible := 0
	for trial := range 400 {
		mdata, cdata := randomGraphcore(rng)
		m, _, err := load.Model(mdata)
		if err != nil {
			t.Fatalf("trial %d: %v\n%s", trial, err, mdata)
		}
		c, err := load.Cluster(cdata)
		if err != nil {
			t.Fatalf("trial %d: %v\n%s", trial, err, cdata)
		}
		best, optimal := refGraphcore(t, mdata, cdata, 0.85)
		p, err := plan.Make(m, c, graphcoreOptions)
		if best < 0 {
			infeasible++
			if err == nil {
				t.Fatalf("trial %d: plan %v, but no split is feasible under the tool's rules\n%s\n%s", trial, p.Boundaries, mdata, cdata)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v; the reference finds %v with objective %d\n%s\n%s", trial, err, optimal, best, mdata, cdata)
		}
		if p.Bottleneck != float64(best) || !slices.ContainsFunc(optimal, func(b []int) bool { return slices.Equal(b, p.Boundaries) }) {
			t.Fatalf("trial %d: plan %v with objective %v; the reference finds %v with objective %d\n%s\n%s",
				trial, p.Boundaries, p.Bottleneck, optimal, best, mdata, cdata)
		}
	}
	if infeasible == 0 || infeasible > 200 {
		t.Errorf("%d of 400 random cases infeasible: the generator should make memory bind sometimes, not mostly", infeasible)
	}
}

// randomGraphcore returns a random ModelInfo and IPUClusterInfo in the tool's JSON.
func randomGraphcore(rng *rand.Rand) (modelJSON, clusterJSON []byte) {
	n := 2 + rng.IntN(6)
	p := 1 + rng.IntN(min(n, 4))
	const mib = 1 << 20
	names, types := make([]string, n), make([]string, n)
	infos := make([]any, n)
	for i := range n {
		names[i] = fmt.Sprint("L", i)
		if rng.IntN(4) == 0 && i > 0 { // call an earlier layer again
			names[i] = names[rng.IntN(i)]
		}
		types[i] = fmt.Sprint("T", rng.IntN(3))
		shared := map[string]int64{}
		if rng.IntN(2) == 0 {
			shared["vertexCode_"+types[i]] = rng.Int64N(200 * mib)
		}
		infos[i] = map[string]any{
			"cycle": map[string]int64{"forward": rng.Int64N(100000), "backward": 0},
			"memory": map[string]any{
				"shared":        shared,
				"exclusive":     map[string]int64{"parameter": rng.Int64N(150 * mib), "controlCode": rng.Int64N(10 * mib)},
				"inputs":        rng.Int64N(1 << 24),
				"outputs":       rng.Int64N(1 << 24),
				"maxTemporary":  rng.Int64N(100 * mib),
				"curCarryOver":  rng.Int64N(50 * mib),
				"curActivation": rng.Int64N(80 * mib),
			},
		}
	}
	clocks := []float64{1 << 30, 1.33e9, 1.85e9}
	gbps := []float64{1, 7, 70, 2.5}
	conns := make([]any, p)
	for i := range conns {
		conns[i] = map[string]any{
			"recvGBps": gbps[rng.IntN(len(gbps))], "recvIdleCycle": rng.IntN(60000),
			"sendGBps": gbps[rng.IntN(len(gbps))], "sendIdleCycle": rng.IntN(60000),
		}
	}
	mj, _ := json.Marshal(map[string]any{"layerName": names, "layerType": types, "layerInfo": infos})
	cj, _ := json.Marshal(map[string]any{"clock": clocks[rng.IntN(len(clocks))], "memory": 894, "connection": conns})
	return mj, cj
}

// refGraphcore is Graphcore's auto-pipeline tool restated naively: every split into contiguous stages is
// tried; a stage is admissible when every layer name in it has all its calls in it and its
// memory (shared items once, exclusive items summed, and the running peak of temporary +
// carry-over + activations accumulated in the range, at least the range's activations,
// where pipeplan departs from the tool) fits memory * proportion MiB; its
// transfer is the receive from the previous IPU (unless first) and the send to the next
// (unless last), plus the two host terms, each term truncated to whole cycles. It returns
// the least max compute + max transfer and every split reaching it, or -1 when none is
// admissible.
func refGraphcore(t testing.TB, modelJSON, clusterJSON []byte, proportion float64) (int64, [][]int) {
	t.Helper()
	var mi struct {
		LayerName []string
		LayerInfo []struct {
			Cycle  struct{ Forward int64 }
			Memory struct {
				Shared, Exclusive                                          map[string]int64
				Inputs, Outputs, MaxTemporary, CurCarryOver, CurActivation int64
			}
		}
	}
	var ci struct {
		Clock, Memory float64
		Connection    []struct{ RecvGBps, RecvIdleCycle, SendGBps, SendIdleCycle float64 }
	}
	if err := json.Unmarshal(modelJSON, &mi); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(clusterJSON, &ci); err != nil {
		t.Fatal(err)
	}
	n, p := len(mi.LayerInfo), len(ci.Connection)
	limit := int64(ci.Memory * proportion * (1 << 20))
	recv := func(ipu, layer int) int64 {
		c := ci.Connection[ipu]
		return int64(c.RecvIdleCycle + float64(mi.LayerInfo[layer].Memory.Inputs)/(c.RecvGBps*(1<<30)/ci.Clock))
	}
	send := func(ipu, layer int) int64 {
		c := ci.Connection[ipu]
		return int64(c.SendIdleCycle + float64(mi.LayerInfo[layer].Memory.Outputs)/(c.SendGBps*(1<<30)/ci.Clock))
	}
	admissible := func(a, b int) bool { // layers [a, b)
		for l := a; l < b; l++ {
			for k, name := range mi.LayerName {
				if name == mi.LayerName[l] && (k < a || k >= b) {
					return false
				}
			}
		}
		shared := map[string]bool{}
		var total, peak, act int64
		for l := a; l < b; l++ {
			m := mi.LayerInfo[l].Memory
			for k, v := range m.Shared {
				if !shared[k] {
					shared[k] = true
					total += v
				}
			}
			for _, v := range m.Exclusive {
				total += v
			}
			peak = max(peak, m.MaxTemporary+m.CurCarryOver+act)
			act += m.CurActivation
		}
		// pipeplan's one departure from the tool: a microbatch holds all its
		// activations where its forward ends, so the peak is at least those
		// (model.WorkingPeakBytes), which the tool's running peak may miss.
		peak = max(peak, act)
		return total+peak <= limit
	}
	best := int64(-1)
	var optimal [][]int
	bounds := make([]int, p+1)
	bounds[p] = n
	var try func(stage int)
	try = func(stage int) {
		if stage == p-1 {
			var maxC, maxT int64
			for i := range p {
				a, b := bounds[i], bounds[i+1]
				if !admissible(a, b) {
					return
				}
				var c int64
				for l := a; l < b; l++ {
					c += mi.LayerInfo[l].Cycle.Forward
				}
				tr := recv(0, 0) + send(p-1, n-1)
				if i > 0 {
					tr += recv(i, a)
				}
				if i < p-1 {
					tr += send(i, b-1)
				}
				maxC, maxT = max(maxC, c), max(maxT, tr)
			}
			switch obj := maxC + maxT; {
			case best < 0 || obj < best:
				best, optimal = obj, [][]int{slices.Clone(bounds)}
			case obj == best:
				optimal = append(optimal, slices.Clone(bounds))
			}
			return
		}
		for b := bounds[stage] + 1; b <= n-(p-1-stage); b++ {
			bounds[stage+1] = b
			try(stage + 1)
		}
	}
	try(0)
	return best, optimal
}

// TestGraphcoreModelMapping checks every field of a ModelInfo entry lands where
// docs/formats.md says.
func TestGraphcoreModelMapping(t *testing.T) {
	const src = `{
	  "layerName": ["embed", "enc", "enc", "head"],
	  "layerType": ["Embedding", "Dense_64", "Dense_64", "Dense_10"],
	  "layerInfo": [
	    {"cycle": {"forward": 100, "backward": 7},
	     "memory": {"shared": {"vertexCode_1": 11, "internalExchangeCode_1": 12},
	                "exclusive": {"vertexInstanceState": 5, "controlCode": 6, "parameter": 7},
	                "inputs": 1000, "outputs": 2000, "maxTemporary": 30, "curCarryOver": 40, "curActivation": 50}},
	    {"cycle": {"forward": 200, "backward": 0},
	     "memory": {"shared": {}, "exclusive": {}, "inputs": 0, "outputs": 0,
	                "maxTemporary": 0, "curCarryOver": 0, "curActivation": 0}},
	    {"cycle": {"forward": 2.0e2, "backward": 0},
	     "memory": {"shared": {"vertexCode_2": 9}, "exclusive": {"parameter": 1}, "inputs": 3, "outputs": 4,
	                "maxTemporary": 5, "curCarryOver": 6, "curActivation": 7}},
	    {"cycle": {"forward": 1}, "memory": {}}
	  ]
	}`
	m, f, err := load.Model([]byte(src))
	if err != nil || f != load.Graphcore {
		t.Fatalf("format %q, error %v", f, err)
	}
	i64 := func(v int64) *int64 { return &v }
	want := &model.Model{TimeUnit: model.Cycles, Layers: []model.Layer{
		{Name: "embed", Kind: "Embedding", ForwardCycles: 100, BackwardCycles: 7,
			Shared:         map[string]int64{"vertexCode_1": 11, "internalExchangeCode_1": 12},
			ExclusiveBytes: 18, RecvBytes: i64(1000), SendBytes: i64(2000),
			TemporaryBytes: 30, CarryOverBytes: 40, ActivationBytes: 50},
		{Name: "enc", Kind: "Dense_64", ForwardCycles: 200, RecvBytes: i64(0), SendBytes: i64(0), TieGroup: "enc"},
		{Name: "enc", Kind: "Dense_64", ForwardCycles: 200, Shared: map[string]int64{"vertexCode_2": 9},
			ExclusiveBytes: 1, RecvBytes: i64(3), SendBytes: i64(4),
			TemporaryBytes: 5, CarryOverBytes: 6, ActivationBytes: 7, TieGroup: "enc"},
		{Name: "head", Kind: "Dense_10", ForwardCycles: 1, RecvBytes: i64(0), SendBytes: i64(0)},
	}}
	if !reflect.DeepEqual(m, want) {
		got, _ := json.Marshal(m)
		exp, _ := json.Marshal(want)
		t.Errorf("got  %s\nwant %s", got, exp)
	}
}

func TestGraphcoreClusterMapping(t *testing.T) {
	const src = `{"clock": 1850000000, "memory": 894, "connection": [
	  {"recvGBps": 7, "recvIdleCycle": 50000, "sendGBps": 70, "sendIdleCycle": 3000},
	  {"recvGBps": 70, "recvIdleCycle": 3000, "sendGBps": 7.5, "sendIdleCycle": 50000}]}`
	if f := load.DetectCluster([]byte(src)); f != load.Graphcore {
		t.Errorf("DetectCluster = %q", f)
	}
	c, err := load.Cluster([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &cluster.Cluster{Name: "2 IPUs", HostEveryStage: true, Devices: []cluster.Device{
		{Name: "ipu0", MemoryBytes: 894 << 20, ClockHz: 1.85e9,
			Recv: &cluster.Link{GBps: 7, IdleCycles: 50000}, Send: &cluster.Link{GBps: 70, IdleCycles: 3000}},
		{Name: "ipu1", MemoryBytes: 894 << 20, ClockHz: 1.85e9,
			Recv: &cluster.Link{GBps: 70, IdleCycles: 3000}, Send: &cluster.Link{GBps: 7.5, IdleCycles: 50000}},
	}}
	if !reflect.DeepEqual(c, want) {
		got, _ := json.Marshal(c)
		exp, _ := json.Marshal(want)
		t.Errorf("got  %s\nwant %s", got, exp)
	}
	// 1 MiB over a 7 GBps receive link at 1.85 GHz: 50000 + 2^20 / (7 * 2^30 / 1.85e9)
	// = 50000 + 1.85e9 / 7168 = 50000 + 258091.07... cycles, truncated.
	if got := c.Devices[0].Recv.Cycles(1<<20, c.Devices[0].ClockHz); got != 308091 {
		t.Errorf("receive cycles = %d, want 308091", got)
	}
}

func TestGraphcoreErrors(t *testing.T) {
	layer := func(memory string) string {
		return `{"cycle": {"forward": 1, "backward": 0}, "memory": ` + memory + `}`
	}
	ok := layer(`{"inputs": 0}`)
	cases := []struct{ name, src, want string }{
		{"negative cycles", `{"layerName": ["a", "b"], "layerInfo": [` + ok + `, {"cycle": {"forward": -1}}]}`,
			"layerInfo[1].cycle.forward: must be >= 0, got -1"},
		{"fractional bytes", `{"layerName": ["a"], "layerInfo": [` + layer(`{"maxTemporary": 1.5}`) + `]}`,
			"layerInfo[0].memory.maxTemporary: must be a whole number, got 1.5"},
		{"string number", `{"layerName": ["a"], "layerInfo": [` + layer(`{"outputs": "12"}`) + `]}`,
			"layerInfo[0].memory.outputs: must be a number, got a string"},
		{"huge", `{"layerName": ["a"], "layerInfo": [` + layer(`{"inputs": 1e300}`) + `]}`,
			"layerInfo[0].memory.inputs: must be at most 1152921504606846976, got 1e300"},
		{"shared key", `{"layerName": ["a"], "layerInfo": [` + layer(`{"shared": {"vc_1": -3}}`) + `]}`,
			`layerInfo[0].memory.shared["vc_1"]: must be >= 0, got -3`},
		{"typo", `{"layerName": ["a"], "layerInfo": [` + layer(`{"maxTemp": 1}`) + `]}`,
			`layerInfo[0].memory: unknown field "maxTemp"`},
		{"lengths", `{"layerName": ["a", "b"], "layerInfo": [` + ok + `]}`,
			"layerName: has 2 entries but layerInfo has 1"},
		{"missing names", `{"layerInfo": [` + ok + `]}`, "layerName: is missing"},
		{"empty", `{"layerName": [], "layerInfo": []}`, "layerInfo: must hold at least one layer"},
		{"name type", `{"layerName": [3], "layerInfo": [` + ok + `]}`, "layerName[0]: must be a string, got a number"},
		{"layer type", `{"layerName": ["a"], "layerInfo": [[]]}`, "layerInfo[0]: must be a JSON object, got an array"},
		{"syntax", `{"layerName": ["a"], "layerInfo": [}`, "JSON syntax error at line 1, column 36"},
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

func TestGraphcoreClusterErrors(t *testing.T) {
	conn := `{"recvGBps": 1, "recvIdleCycle": 0, "sendGBps": 1, "sendIdleCycle": 0}`
	cases := []struct{ name, src, want string }{
		{"zero bandwidth", `{"clock": 1e9, "memory": 894, "connection": [` + conn + `, {"recvGBps": 0}]}`,
			"connection[1].recvGBps: must be > 0, got 0"},
		{"missing bandwidth", `{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1}]}`,
			"connection[0].sendGBps: is missing"},
		{"negative idle", `{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1, "sendGBps": 1, "sendIdleCycle": -5}]}`,
			"connection[0].sendIdleCycle: must be >= 0, got -5"},
		{"no clock", `{"memory": 894, "connection": [` + conn + `]}`, "clock: is missing"},
		{"memory", `{"clock": 1e9, "memory": -1, "connection": [` + conn + `]}`, "memory: must be > 0, got -1"},
		{"no IPUs", `{"clock": 1e9, "memory": 894, "connection": []}`, "connection: must hold one entry per IPU, got none"},
		{"typo", `{"clock": 1e9, "memory": 894, "conection": [` + conn + `]}`, `unknown field "conection"; expected one of clock, memory, connection`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load.Cluster([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestGraphcoreMemoryLimit checks the tool's limit, memory * memoryProportion MiB
// truncated, through the loaded cluster: 894 * 0.85 MiB = 796812902.4 bytes.
func TestGraphcoreMemoryLimit(t *testing.T) {
	c, err := load.Cluster(readFile(t, "testdata/graphcore/cluster_2ipu.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Devices[1].MemoryLimitBytes(0.85), int64(math.Floor(894*0.85*(1<<20))); got != want || want != 796812902 {
		t.Errorf("limit %d, want %d = 796812902", got, want)
	}
}
