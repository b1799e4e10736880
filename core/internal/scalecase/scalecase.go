// Package scalecase builds the synthetic inputs of issue 8's scale measurements
// ("Exact at any scale"), for the benchmarks of core/plan and core/request and for the
// files the command line is timed on: a transformer-like native profile of any length,
// a cluster that its memory binds on, and a Graphcore profile with its IPU cluster.
package scalecase

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Model is a transformer-like profile of n layers: blocks of varying cost, shared
// code per layer kind, activations and a residual stream carried between layers.
func Model(n int) *model.Model {
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

// Cluster gives p devices with memory for about 1.6 times an even share of the
// model, so memory binds without making the problem infeasible.
func Cluster(m *model.Model, p int) *cluster.Cluster {
	var total int64
	for _, l := range m.Layers {
		total += l.ParamBytes + l.OptimizerBytes + 4*l.ActivationBytes
	}
	d := cluster.Device{MemoryBytes: total / int64(p) * 16 / 10, FLOPSPerSecond: 1e15}
	return cluster.Homogeneous(d, p, cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 25e9}, &cluster.Link{LatencySeconds: 1e-5, BytesPerSecond: 12e9})
}

// Graphcore returns a Graphcore ModelInfo of n layers and an
// IPUClusterInfo of p IPUs of 894 MiB: cycles, code shared by the layers of a type,
// exclusive memory, transfers in and out, temporaries, carry-over, and a tie group (a
// name called three times in a row) every 50 layers.
func Graphcore(n, p int) (modelJSON, clusterJSON []byte) {
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
	var conns []any
	for range p {
		conns = append(conns, map[string]any{
			"recvGBps": 8 + rng.IntN(8), "recvIdleCycle": 1000 + rng.IntN(4000),
			"sendGBps": 8 + rng.IntN(8), "sendIdleCycle": 1000 + rng.IntN(4000),
		})
	}
	mj, _ := json.Marshal(map[string]any{"layerName": names, "layerType": kinds, "layerInfo": infos})
	cj, _ := json.Marshal(map[string]any{"clock": 1330000000, "memory": 894, "connection": conns})
	return mj, cj
}
