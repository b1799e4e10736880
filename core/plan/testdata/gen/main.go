// Command gen writes the inputs of the scale measurements in issue 8 ("Exact at any
// scale"): models and clusters large enough to time the planner as a whole process.
//
//	go run ./core/plan/testdata/gen -out DIR
//
// then, for example,
//
//	pipeplan plan --model DIR/bench-100000.json --cluster DIR/cluster-100000-1024.json
//
// The models follow core/plan's benchmarks (bench_test.go): benchModel's transformer-like
// profile, transferDominated's chain, and a Graphcore ModelInfo with memory and transfers.
// Everything is seeded: the same files every run.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

func main() {
	out := flag.String("out", ".", "directory to write into")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	write := func(name string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println(filepath.Join(*out, name))
	}
	for _, np := range [][2]int{{100000, 1024}, {200000, 4000}, {1000000, 256}, {1000000, 1024}} {
		m := benchModel(np[0])
		if np[1] == 1024 || np[0] != 1000000 {
			write(fmt.Sprintf("bench-%d.json", np[0]), m)
		}
		write(fmt.Sprintf("cluster-%d-%d.json", np[0], np[1]), benchCluster(m, np[1]))
	}
	for _, kind := range []string{"zero", "equal", "huge"} {
		write(fmt.Sprintf("%s-100000.json", kind), degenerate(kind, 100000))
	}
	write("transfer-dominated-1000.json", transferDominated(1000))
	write("transfer-dominated-64.json", cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 40}, 64, cluster.Link{BytesPerSecond: 1000}, nil))
	write("graphcore-1000.json", graphcoreModel(1000))
	write("graphcore-64ipu.json", graphcoreCluster(64))
}

// benchModel is core/plan's benchModel: a transformer-like profile of n layers.
func benchModel(n int) *model.Model {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	m := &model.Model{Name: fmt.Sprintf("bench-%d", n), Inputs: []model.Tensor{{ID: "in", Bytes: 1 << 20}}}
	prev := "in"
	for l := 0; l < n; l++ {
		kind := fmt.Sprintf("block%d", l%4)
		id := fmt.Sprintf("t%d", l)
		m.Layers = append(m.Layers, model.Layer{
			Name: fmt.Sprintf("layer%d", l), Kind: kind,
			ForwardSeconds: 1e-3 * (1 + rng.Float64()), BackwardSeconds: 2e-3 * (1 + rng.Float64()),
			ParamBytes: int64(50+rng.IntN(50)) << 20, OptimizerBytes: 100 << 20,
			Shared:          map[string]int64{"code:" + kind: 4 << 20},
			TemporaryBytes:  int64(rng.IntN(64)) << 20,
			ActivationBytes: int64(8+rng.IntN(8)) << 20,
			InputIDs:        []string{prev},
			Outputs:         []model.Tensor{{ID: id, Bytes: int64(1+rng.IntN(4)) << 20}},
		})
		prev = id
	}
	return m
}

// benchCluster is core/plan's benchCluster: p devices with memory for about 1.6 times an
// even share of the model.
func benchCluster(m *model.Model, p int) *cluster.Cluster {
	var total int64
	for _, l := range m.Layers {
		total += l.ParamBytes + l.OptimizerBytes + 4*l.ActivationBytes
	}
	d := cluster.Device{MemoryBytes: total / int64(p) * 16 / 10, FLOPSPerSecond: 1e15}
	return cluster.Homogeneous(d, p, cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 25e9}, &cluster.Link{LatencySeconds: 1e-5, BytesPerSecond: 12e9})
}

// degenerate is benchModel(n) with every time zero, every time equal, or one layer whose
// time exceeds all the others together.
func degenerate(kind string, n int) *model.Model {
	m := benchModel(n)
	m.Name = fmt.Sprintf("%s-%d", kind, n)
	for i := range m.Layers {
		l := &m.Layers[i]
		switch kind {
		case "zero":
			l.ForwardSeconds, l.BackwardSeconds = 0, 0
		case "equal":
			l.ForwardSeconds, l.BackwardSeconds = 1e-3, 2e-3
		case "huge":
			if i == n/3 {
				l.ForwardSeconds *= float64(4 * n)
			}
		}
	}
	return m
}

// transferDominated is core/plan's transferDominated: outputs grow along the model over
// links so slow that transfers dwarf compute.
func transferDominated(n int) *model.Model {
	m := &model.Model{Name: fmt.Sprintf("transfer-dominated-%d", n)}
	for k := 0; k < n; k++ {
		l := model.Layer{Name: fmt.Sprint(k), ForwardSeconds: 1, Outputs: []model.Tensor{{ID: fmt.Sprint("t", k), Bytes: int64(k+1) * 1000}}}
		if k > 0 {
			l.InputIDs = []string{fmt.Sprint("t", k-1)}
		}
		m.Layers = append(m.Layers, l)
	}
	return m
}

// graphcoreModel is a Graphcore ModelInfo (seed 000) of n layers: cycles, code shared by
// the layers of a type, exclusive memory, transfers in and out, temporaries, carry-over,
// and a tie group (a name called three times in a row) every 50 layers.
func graphcoreModel(n int) map[string]any {
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	types := []string{"embedding", "attention", "mlp", "norm", "attention", "mlp", "norm", "head"}
	var names, kinds []string
	var infos []any
	const mib = 1 << 20
	for l := 0; l < n; l++ {
		t := types[l%len(types)]
		name := fmt.Sprintf("%s%d", t, l)
		if l%50 >= 10 && l%50 < 13 {
			name = fmt.Sprintf("tied%d", l/50)
		}
		names, kinds = append(names, name), append(kinds, t)
		infos = append(infos, map[string]any{
			"cycle": map[string]any{"forward": 20000 + rng.IntN(60000), "backward": 0},
			"memory": map[string]any{
				"shared":        map[string]any{"vertexCode:" + t: (2 + len(t)%5) * mib},
				"exclusive":     map[string]any{"vertexState": (20 + rng.IntN(30)) * mib, "controlCode": rng.IntN(2 * mib)},
				"inputs":        (1 + rng.IntN(4)) * mib,
				"outputs":       (1 + rng.IntN(4)) * mib,
				"maxTemporary":  rng.IntN(20 * mib),
				"curCarryOver":  rng.IntN(2 * mib),
				"curActivation": 0,
			},
		})
	}
	return map[string]any{"layerName": names, "layerType": kinds, "layerInfo": infos}
}

// graphcoreCluster is an IPUClusterInfo of p IPUs of 894 MiB at 1.33 GHz.
func graphcoreCluster(p int) map[string]any {
	rng := rand.New(rand.NewPCG(uint64(p), 13))
	var conns []any
	for i := 0; i < p; i++ {
		conns = append(conns, map[string]any{
			"recvGBps": 8 + rng.IntN(8), "recvIdleCycle": 1000 + rng.IntN(4000),
			"sendGBps": 8 + rng.IntN(8), "sendIdleCycle": 1000 + rng.IntN(4000),
		})
	}
	return map[string]any{"clock": 1330000000, "memory": 894, "connection": conns}
}
