package export

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	"pipeplan/core/request"
)

// TestFromRequestGraphSplit: a graph split whose stages are not contiguous in the layer
// order cannot be written as ranges of layers, and FromRequest says so; one that is
// contiguous (a chain's) exports as any plan, and its costed alternatives are ranges.
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
		want    error
	}{
		{"resnet50", 8, ErrNotContiguous},
		{"vgg16", 4, nil},
	} {
		r, err := request.Decode([]byte(`{"model":{"document":` + doc(tc.model) + `},"cluster":{"device":"a100-80gb","count":` + strconv.Itoa(tc.devices) + `},"training":{"mode":"inference"},"partition":"graph"}`))
		if err != nil {
			t.Fatal(err)
		}
		in, _, err := FromRequest(context.Background(), r)
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: error %v, want %v", tc.model, err, tc.want)
		}
		if err != nil {
			continue
		}
		if _, err := in.Coster.Cost(in.Boundaries, in.Schedule); err != nil {
			t.Errorf("%s: costing the plan's own split: %v", tc.model, err)
		}
	}
}
