package export_test

import (
	"context"
	"encoding/json"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// archCase is an architecture planned on devices of a preset under a schedule.
type archCase struct {
	arch      string
	device    string
	devices   int
	sched     string
	m         int
	batch     int
	seq       int
	split     analytic.Split
	recompute analytic.Recompute
	tp, dp    int
	sp        bool
}

func (c archCase) request() *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: c.arch, Seq: c.seq, Split: string(c.split)}},
		Cluster:     wire.ClusterSpec{Device: c.device},
		Parallelism: wire.Parallelism{Pipeline: c.devices, Data: c.dp, Tensor: c.tp, SequenceParallel: c.sp},
		Training:    wire.Training{Recompute: string(c.recompute)},
		Schedule:    wire.Schedule{Name: c.sched, Microbatches: c.m, MicrobatchSize: c.batch},
	}
}

// input plans the case and returns the export input.
func (c archCase) input(t *testing.T) *export.Input {
	t.Helper()
	return fromRequest(t, c.request())
}

// fromRequest plans a request and returns the export input.
func fromRequest(t *testing.T, r *wire.Request) *export.Input {
	t.Helper()
	in, _, err := export.FromRequest(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// exampleRequest is the bundled GPT-2 medium profile on A100s.
func exampleRequest(devices int, sched string, m int) *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Example: "gpt2-medium"},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb"},
		Parallelism: wire.Parallelism{Pipeline: devices},
		Schedule:    wire.Schedule{Name: sched, Microbatches: m},
	}
}

// twoTowersNames are twoTowers's layer names and tensor ids by default.
var (
	twoTowersNames = []string{"stem", "tower_a.0", "tower_b.0", "tower_a.1", "tower_b.1", "head"}
	twoTowersIDs   = []string{"x", "s", "a0", "b0", "a1", "b1", "y"}
)

// twoTowers is a small model whose graph branches: a stem, two towers of two layers each
// listed alternately (a, b, a, b) in the model's order, and a head reading both towers
// and the model's input. Its best split on two devices (stem and tower b, 5 ms of
// forward each side) is convex but not contiguous in the model's order; the best
// contiguous split costs 6 ms. names and ids (nil: the defaults) name the layers and the
// tensors (x the input, s the stem's output, then a0, b0, a1, b1, and y the head's).
func twoTowers(names, ids []string, devices int, sched string, m int) *wire.Request {
	if names == nil {
		names = twoTowersNames
	}
	if ids == nil {
		ids = twoTowersIDs
	}
	type tensor struct {
		ID    string `json:"id"`
		Bytes int64  `json:"bytes"`
	}
	type layer struct {
		Name            string   `json:"name"`
		ForwardSeconds  float64  `json:"forward_seconds"`
		BackwardSeconds float64  `json:"backward_seconds"`
		ParamBytes      int64    `json:"param_bytes"`
		ActivationBytes int64    `json:"activation_bytes"`
		Inputs          []string `json:"inputs"`
		Outputs         []tensor `json:"outputs"`
	}
	x, s, a0, b0, a1, b1, y := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	ms := []float64{1, 2, 3, 2, 1, 1} // forward milliseconds; backward twice that
	ins := [][]string{{x}, {s}, {s}, {a0}, {b0}, {a1, b1, x}}
	outs := []string{s, a0, b0, a1, b1, y}
	doc := struct {
		Name   string   `json:"name"`
		Inputs []tensor `json:"inputs"`
		Layers []layer  `json:"layers"`
	}{Name: "two-towers", Inputs: []tensor{{x, 1 << 20}}}
	for l := range names {
		out := tensor{outs[l], 1 << 20}
		if l == len(names)-1 {
			out.Bytes = 1 << 10
		}
		doc.Layers = append(doc.Layers, layer{Name: names[l], ForwardSeconds: ms[l] / 1e3, BackwardSeconds: 2 * ms[l] / 1e3,
			ParamBytes: 1 << 20, ActivationBytes: 1 << 20, Inputs: ins[l], Outputs: []tensor{out}})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return &wire.Request{
		Model:       wire.ModelSpec{Document: b},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb"},
		Parallelism: wire.Parallelism{Pipeline: devices},
		Schedule:    wire.Schedule{Name: sched, Microbatches: m},
		Partition:   wire.PartitionGraph,
	}
}

// twoTowersRecompute is twoTowers in training with recompute auto, each layer keeping
// 8 MiB for its backward pass (eight times what it reads), on a memory proportion that
// leaves room for the stem's activations on one stage only: the stem recomputes.
func twoTowersRecompute() *wire.Request {
	r := twoTowers(nil, nil, 2, "1f1b", 4)
	var doc map[string]any
	if err := json.Unmarshal(r.Model.Document, &doc); err != nil {
		panic(err)
	}
	for _, l := range doc["layers"].([]any) {
		l.(map[string]any)["activation_bytes"] = 8 << 20
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	r.Model.Document = b
	r.Training.Recompute = "auto"
	r.MemoryProportion = 0.0005
	return r
}
