package estimate_test

import (
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// TestTransferCyclesInDevice0Cycles checks that, in a cycles model on devices with
// different clocks, transfers are stated in device 0's cycles like compute: a 1 µs link
// is 1000 cycles at device 0's 1 GHz whichever device uses it, and a link of 8 idle
// cycles (truncated per term in the device's own cycles) on a 4 GHz device is 2.
func TestTransferCyclesInDevice0Cycles(t *testing.T) {
	m := &model.Model{TimeUnit: model.Cycles}
	for range 4 {
		m.Layers = append(m.Layers, model.Layer{Name: "l", ForwardCycles: 1000})
	}
	us := &cluster.Link{LatencySeconds: 1e-6}
	c := &cluster.Cluster{Devices: []cluster.Device{
		{MemoryBytes: 1, ClockHz: 1e9, Send: us},
		{MemoryBytes: 1, ClockHz: 2e9, Recv: us, Send: us},
		{MemoryBytes: 1, ClockHz: 0.5e9, Recv: us, Send: &cluster.Link{IdleCycles: 3}},
		{MemoryBytes: 1, ClockHz: 4e9, Recv: &cluster.Link{IdleCycles: 8}},
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := estimate.New(m, c, estimate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ compute, transfer float64 }{
		{1000, 1000},       // sends 1 µs
		{500, 1000 + 1000}, // 2000 of its cycles each way
		{2000, 1000 + 6},   // receives 500 of its cycles; sends 3 idle cycles, 6 of device 0's
		{250, 2},           // receives 8 idle cycles at 4 GHz
	} {
		if got := e.Compute(i, i, i); got != want.compute {
			t.Errorf("stage %d compute %v, want %v device-0 cycles", i, got, want.compute)
		}
		if got := e.Transfer(i, i, i); got != want.transfer {
			t.Errorf("stage %d transfer %v, want %v device-0 cycles", i, got, want.transfer)
		}
	}

	// Without device 0's clock, device 1's cycles have no common unit with the plan's.
	c = &cluster.Cluster{Devices: []cluster.Device{{MemoryBytes: 1}, {MemoryBytes: 1, ClockHz: 2e9, Recv: us}}}
	_, err = estimate.New(m, c, estimate.Options{})
	want := "devices[0].clock_hz: is needed to express device 1's transfer cycles in device 0's cycles, the unit of the plan"
	if _, ok := model.AsFieldErrors(err); !ok || err.Error() != want {
		t.Errorf("New = %v, want %q", err, want)
	}
}
