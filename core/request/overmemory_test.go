package request

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// TestOverMemoryNamesTheDevice: a given split whose chunks overfill their device under an
// interleaved schedule is refused with the device's total against its capacity (a
// chunk's own limit is its memory plus the device's headroom, negative here, which the
// message must not show as what the device holds); a one-chunk-a-device plan keeps the
// stage's figures.
func TestOverMemoryNamesTheDevice(t *testing.T) {
	for _, c := range []struct {
		name, schedule string
		boundaries     []int
		want           string
	}{
		{"interleaved", "interleaved:2", []int{0, 1, 2, 3, 19}, "is one of device 1's 2 model chunks, which together need"},
		{"one chunk a device", "1f1b", []int{0, 2, 19}, "needs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &wire.Request{
				Model:            wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 4096}},
				Cluster:          wire.ClusterSpec{Device: "h100-sxm"},
				Parallelism:      wire.Parallelism{Pipeline: 2},
				Schedule:         wire.Schedule{Name: c.schedule, Microbatches: 8},
				MemoryProportion: 0.1,
				Boundaries:       c.boundaries,
			}
			res, err := Run(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Feasible {
				t.Fatal("planned as fitting at a tenth of the memory")
			}
			for _, d := range res.Diagnostics {
				if d.Code != wire.CodeStageOverMemory {
					continue
				}
				if !strings.Contains(d.Message, c.want) || strings.Contains(d.Message, "holds -") {
					t.Errorf("message %q, want it to say %q and no negative capacity", d.Message, c.want)
				}
				if d.CapacityBytes <= 0 || d.BytesNeeded <= d.CapacityBytes {
					t.Errorf("needs %d bytes of %d: want a positive capacity exceeded", d.BytesNeeded, d.CapacityBytes)
				}
				return
			}
			t.Fatalf("no %s diagnostic: %+v", wire.CodeStageOverMemory, res.Diagnostics)
		})
	}
}
