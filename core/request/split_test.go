package request

import (
	"context"
	"os"
	"pipeplan/core/wire"
	"slices"
	"testing"
)

// pipeDream returns a PipeDream profile from core/load's fixtures as a JSON string.
func pipeDream(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../load/testdata/pipedream/" + name + ".graph.txt")
	if err != nil {
		t.Fatal(err)
	}
	return quote(string(b))
}

// TestPartitionGraph plans ResNet-50's PipeDream profile on 8 devices with partition "graph": the
// stages are convex parts of the graph that are not contiguous in the layer order, the
// plan says so (layer_order and each stage's layers), and what the request adds to the
// plan per stage (gradients to all-reduce, the schedule's memory) follows the stage's
// own layers.
func TestPartitionGraph(t *testing.T) {
	base := `{"model":{"document":` + pipeDream(t, "resnet50") + `},"cluster":{"device":"a100-80gb","count":8},"training":{"mode":"inference"}`
	ranges := runJSON(t, base+`}`)
	graph := runJSON(t, base+`,"partition":"graph"}`)
	p := graph.Plan
	if p.Partition != "graph" || p.LayerOrder == nil || p.GraphFallback != nil {
		t.Fatalf("partition %q, layer order %v, fallback %+v: want a graph split in an order of its own", p.Partition, p.LayerOrder, p.GraphFallback)
	}
	if !(p.Bottleneck() < ranges.Plan.Bottleneck()) {
		t.Errorf("graph split's bottleneck %v, the contiguous split's %v: the graph's should be lower", p.Bottleneck(), ranges.Plan.Bottleneck())
	}
	n := len(p.LayerOrder)
	seen := make([]bool, n)
	for i, s := range p.Stages {
		want := p.LayerOrder[p.Boundaries[i]:p.Boundaries[i+1]]
		if !slices.Equal(s.Layers, want) || !slices.IsSorted(s.Layers) {
			t.Errorf("stage %d: layers %v, want %v, ascending", i, s.Layers, want)
		}
		for _, l := range s.Layers {
			if seen[l] {
				t.Errorf("layer %d in two stages", l)
			}
			seen[l] = true
		}
		if peak := graph.Schedule.PeakMemoryBytes[i]; s.MemoryBytes != peak {
			t.Errorf("stage %d: memory_bytes %d, the schedule's peak on its device %d", i, s.MemoryBytes, peak)
		}
	}
	if slices.Contains(seen, false) {
		t.Errorf("some layer is in no stage")
	}

	// In training, every device all-reduces the gradients of its own stage's layers:
	// PipeDream's weights are fp32, their gradients as many bytes.
	train := runJSON(t, `{"model":{"document":`+pipeDream(t, "resnet50")+`},"cluster":{"device":"a100-80gb","count":8},"partition":"graph","parallelism":{"data":2}}`)
	if train.Plan.Partition != "graph" {
		t.Fatalf("training: partition %q", train.Plan.Partition)
	}
	for i, s := range train.Plan.Stages {
		if want := s.ParamBytes / 2; train.Devices[i].GradBytes != want {
			t.Errorf("training, device %d: grad_bytes %d, want its stage's %d", i, train.Devices[i].GradBytes, want)
		}
	}
}

// TestSplitField: "layers" is the default and keeps a request's id; anything else but
// "graph" is refused, and so is "graph" with boundaries; a graph with too many ideals is
// split as ranges, with a warning saying why.
func TestSplitField(t *testing.T) {
	base := `{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":2}`
	a, err := ID(decode(t, base+`}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ID(decode(t, base+`,"partition":"layers"}`))
	if err != nil || a != b {
		t.Errorf("ids %s and %s (%v): partition \"layers\" should be the default", a, b, err)
	}
	for _, tc := range []struct{ extra, reason string }{
		{`,"partition":"tree"}`, `must be "layers" or "graph"`},
		{`,"partition":"graph","boundaries":[0,20,41]}`, "leave one out"},
	} {
		_, err := Run(context.Background(), decode(t, base+tc.extra))
		if !hasFieldError(err, "partition", tc.reason) {
			t.Errorf("%s: error %v, want one at split saying %q", tc.extra, err, tc.reason)
		}
	}
	res := runJSON(t, `{"model":{"document":`+pipeDream(t, "gnmt")+`},"cluster":{"device":"a100-80gb","count":4},"partition":"graph"}`)
	d := diagnostic(res, wire.CodeGraphPartitionFallback)
	if d == nil || d.Severity != wire.Warning || res.Plan.GraphFallback == nil || res.Plan.GraphFallback.Code != "too_many_ideals" || res.Plan.LayerOrder != nil {
		t.Errorf("gnmt: diagnostic %+v, fallback %+v: want a too_many_ideals warning and ranges", d, res.Plan.GraphFallback)
	}
}
