package estimate_test

import (
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// TestTransferHostEveryStage checks stage transfers with and without the cluster's
// HostEveryStage against hand computation. Links move one byte per cycle (1 GBps at a
// 2^30 Hz clock); device i receives with idle cycles recvIdle[i] and sends with sendIdle[i].
// The stage starting at layer a receives recv[a] bytes and the stage ending at b sends
// send[b]; layer 0's recv and the last layer's send are the host transfers.
func TestTransferHostEveryStage(t *testing.T) {
	recv := []int64{1000, 200, 300, 400}
	send := []int64{10, 20, 30, 4000}
	recvIdle := []int64{1, 2, 3}
	sendIdle := []int64{10, 20, 30}
	m := &model.Model{TimeUnit: model.Cycles}
	for i := range recv {
		m.Layers = append(m.Layers, model.Layer{Name: "l", ForwardCycles: 1, RecvBytes: &recv[i], SendBytes: &send[i]})
	}
	build := func(p int, every bool) *estimate.Estimator {
		c := &cluster.Cluster{HostEveryStage: every}
		for i := range p {
			c.Devices = append(c.Devices, cluster.Device{MemoryBytes: 1 << 30, ClockHz: 1 << 30,
				Recv: &cluster.Link{GBps: 1, IdleCycles: recvIdle[i]},
				Send: &cluster.Link{GBps: 1, IdleCycles: sendIdle[i]}})
		}
		e, err := estimate.New(m, c, estimate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	hostIn := recvIdle[0] + recv[0]  // device 0 receives layer 0's input: 1001
	hostOut := sendIdle[2] + send[3] // device 2 sends the last layer's output: 4030
	cases := []struct {
		p, stage, a, b int
		every          bool
		want           int64
	}{
		// Host transfers on the first and last stages only.
		{3, 0, 0, 0, false, hostIn + sendIdle[0] + send[0]},
		{3, 1, 1, 2, false, recvIdle[1] + recv[1] + sendIdle[1] + send[2]},
		{3, 2, 3, 3, false, recvIdle[2] + recv[3] + hostOut},
		// Graphcore's auto-pipeline tool: both host transfers in every stage's time.
		{3, 0, 0, 0, true, sendIdle[0] + send[0] + hostIn + hostOut},
		{3, 1, 1, 2, true, recvIdle[1] + recv[1] + sendIdle[1] + send[2] + hostIn + hostOut},
		{3, 2, 3, 3, true, recvIdle[2] + recv[3] + hostIn + hostOut},
		// One stage: the two host transfers, counted once, either way.
		{1, 0, 0, 3, false, hostIn + sendIdle[0] + send[3]},
		{1, 0, 0, 3, true, hostIn + sendIdle[0] + send[3]},
	}
	for _, tc := range cases {
		if got := build(tc.p, tc.every).Transfer(tc.stage, tc.a, tc.b); got != float64(tc.want) {
			t.Errorf("p=%d every=%v: Transfer(%d, %d, %d) = %v, want %d", tc.p, tc.every, tc.stage, tc.a, tc.b, got, tc.want)
		}
	}
}
