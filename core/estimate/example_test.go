package estimate_test

import (
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// A four-layer model whose tensors skip layers: the input x is used again by the last
// layer and t0 by layer 2, so both are carried across the layers in between.
func Example() {
	m := &model.Model{
		TimeUnit: model.Cycles,
		Inputs:   []model.Tensor{{ID: "x", Bytes: 6}},
		Layers: []model.Layer{
			{Name: "l0", ForwardCycles: 10, TemporaryBytes: 5, ActivationBytes: 2, InputIDs: []string{"x"}, Outputs: []model.Tensor{{ID: "t0", Bytes: 3}}},
			{Name: "l1", ForwardCycles: 20, TemporaryBytes: 1, ActivationBytes: 4, InputIDs: []string{"t0"}, Outputs: []model.Tensor{{ID: "t1", Bytes: 7}}},
			{Name: "l2", ForwardCycles: 30, TemporaryBytes: 2, ActivationBytes: 1, InputIDs: []string{"t1", "t0"}, Outputs: []model.Tensor{{ID: "t2", Bytes: 5}}},
			{Name: "l3", ForwardCycles: 40, TemporaryBytes: 9, InputIDs: []string{"t2", "x"}},
		},
	}
	// Two IPU-like devices joined by a link that moves one byte per cycle.
	c := cluster.Homogeneous(cluster.Device{MemoryBytes: 100, ClockHz: 1 << 30}, 2, cluster.Link{GBps: 1}, nil)
	e, err := estimate.New(m, c, estimate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []estimate.Range{e.Range(0, 0, 1), e.Range(1, 2, 3), e.Range(1, 1, 3)} {
		fmt.Printf("stage %d [%d,%d]: compute %v cycles, transfer %v cycles (recv %d B, send %d B), peak %d B\n",
			r.Stage, r.First, r.Last, r.Compute, r.Transfer, r.RecvBytes, r.SendBytes, r.PeakBytes)
	}
	// Output:
	// stage 0 [0,1]: compute 30 cycles, transfer 16 cycles (recv 6 B, send 16 B), peak 12 B
	// stage 1 [2,3]: compute 70 cycles, transfer 16 cycles (recv 16 B, send 0 B), peak 10 B
	// stage 1 [1,3]: compute 90 cycles, transfer 9 cycles (recv 9 B, send 0 B), peak 14 B
}
