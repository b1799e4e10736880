package export

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// TestFromRequestGraphSplit: a graph split whose stages are not contiguous in the layer
// order (ResNet-50's PipeDream profile on 8 devices) exports with its layers in the
// plan's order, every model layer once, each stage a set of the model's layers that no
// edge leaves backwards, and the tensors crossing each cut found from the model's edges;
// Megatron-LM refuses it, saying which stage is scattered. A contiguous one (VGG-16's, a
// chain) exports as any plan, and its costed alternatives are ranges.
func TestFromRequestGraphSplit(t *testing.T) {
	doc := func(name string) string {
		b, err := os.ReadFile("../load/testdata/pipedream/" + name + ".graph.txt")
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Quote(string(b))
	}
	for _, tc := range []struct {
		model   string
		devices int
		graph   bool
	}{
		{"resnet50", 8, true},
		{"vgg16", 4, false},
	} {
		r, err := request.Decode([]byte(`{"model":{"document":` + doc(tc.model) + `},"cluster":{"device":"a100-80gb","count":` + strconv.Itoa(tc.devices) + `},"training":{"mode":"inference"},"partition":"graph"}`))
		if err != nil {
			t.Fatal(err)
		}
		in, _, err := FromRequest(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		if got := in.LayerOrder != nil; got != tc.graph {
			t.Fatalf("%s: layer order %v, want a graph split %v", tc.model, in.LayerOrder, tc.graph)
		}
		if _, err := in.Coster.Cost(in.Boundaries, in.planned()); err != nil {
			t.Errorf("%s: costing the plan's own split: %v", tc.model, err)
		}
		_, err = Make(in, wire.Megatron)
		if tc.graph && (!errors.Is(err, ErrNotContiguous) || !strings.Contains(err.Error(), "holds the model's layers")) {
			t.Errorf("%s: Megatron-LM's export error %v, want ErrNotContiguous naming a scattered stage", tc.model, err)
		}
		if !tc.graph {
			continue
		}
		checkGraphInput(t, tc.model, in, r)
		for _, f := range []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Graphcore, wire.JSON} {
			ex, err := Make(in, f)
			if err != nil {
				t.Errorf("%s %s: %v", tc.model, f, err)
			} else if !slices.Equal(ex.Boundaries, in.Boundaries) {
				t.Errorf("%s %s: expresses %v, planned %v", tc.model, f, ex.Boundaries, in.Boundaries)
			}
		}
	}
}

// checkGraphInput checks a graph split's Input against the model's edges, from the
// definitions: LayerNames are the model's layers in LayerOrder; every stage is convex
// (no layer reads a tensor made on a later stage); CutTensors[k] is exactly the set of
// tensors made on a stage <= k (or model inputs) and read on a stage > k, a model input
// counting only when a stage after the first reads it.
func checkGraphInput(t *testing.T, name string, in *Input, r *wire.Request) {
	t.Helper()
	pr, err := request.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	m := pr.Model()
	stage := map[int]int{}
	for i := 0; i+1 < len(in.Boundaries); i++ {
		for _, l := range in.LayerOrder[in.Boundaries[i]:in.Boundaries[i+1]] {
			stage[l] = i
		}
	}
	for k, l := range in.LayerOrder {
		if in.LayerNames[k] != m.Layers[l].Name {
			t.Fatalf("%s: LayerNames[%d] %q, the model's layer %d is %q", name, k, in.LayerNames[k], l, m.Layers[l].Name)
		}
	}
	if len(stage) != len(m.Layers) {
		t.Fatalf("%s: %d layers in stages, the model has %d", name, len(stage), len(m.Layers))
	}
	maker := map[string]int{}
	for _, x := range m.Inputs {
		maker[x.ID] = -1
	}
	for l, ly := range m.Layers {
		for _, o := range ly.Outputs {
			maker[o.ID] = stage[l]
		}
	}
	for k := 0; k+2 < len(in.Boundaries); k++ {
		want := map[string]bool{}
		for l, ly := range m.Layers {
			for _, id := range ly.InputIDs {
				from, ok := maker[id]
				if !ok {
					continue
				}
				if from > stage[l] {
					t.Errorf("%s: layer %d on stage %d reads %s from stage %d", name, l, stage[l], id, from)
				}
				if from <= k && stage[l] > k {
					want[id] = true
				}
			}
		}
		got := map[string]bool{}
		for _, ct := range in.CutTensors[k] {
			got[ct.ID] = true
		}
		if len(got) != len(in.CutTensors[k]) || len(got) != len(want) {
			t.Errorf("%s: cut %d lists %d tensors (%d distinct), want %d", name, k, len(in.CutTensors[k]), len(got), len(want))
		}
		for id := range want {
			if !got[id] {
				t.Errorf("%s: cut %d does not list %s", name, k, id)
			}
		}
	}
}

// TestGraphPerLayerPositions: a graph split's per-layer recomputation names layers by the
// model's numbers, and perLayer places each at its position in the plan's order
// (LayerNames), on its stage.
func TestGraphPerLayerPositions(t *testing.T) {
	full := func(l int, name string) *wire.StageRecompute {
		return &wire.StageRecompute{Layers: []wire.RecomputedLayer{{Layer: l, Name: name, Part: "full"}}}
	}
	in := &Input{
		LayerNames: []string{"a", "c", "b", "d"}, LayerOrder: []int{0, 2, 1, 3}, Boundaries: []int{0, 2, 4},
		Recompute: "auto",
		Plan:      &wire.Plan{Stages: []wire.Stage{{Recompute: full(2, "c")}, {Recompute: full(1, "b")}}},
	}
	pl, ok := in.perLayer()
	if !ok || pl == nil {
		t.Fatal("no per-layer recomputation")
	}
	if !slices.Equal(pl.full[0], []int{1}) || !slices.Equal(pl.full[1], []int{2}) {
		t.Fatalf("positions %v, want [[1] [2]]", pl.full)
	}
	if got, want := pl.describe(in.LayerNames), "stage 0: whole c; stage 1: whole b"; got != want {
		t.Errorf("described %q, want %q", got, want)
	}
}
