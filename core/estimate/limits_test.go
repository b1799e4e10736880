package estimate_test

import (
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
)

// TestNewBoundsByteTotal checks that New refuses models whose byte counts, each within
// model.Validate's 2^60, add up (times the microbatches in flight + 1) past 2^62, where a
// stage's memory could wrap around int64; at the bound itself memory is exact.
func TestNewBoundsByteTotal(t *testing.T) {
	const eib = 1 << 60
	tests := []struct {
		name     string
		layers   []model.Layer
		inFlight int
		want     string // error text; "" for none
		memory   int64  // stage 0's memory when the whole model is one stage
	}{
		{"one layer at the bound", []model.Layer{{ActivationBytes: eib}}, 3, "", 3 * eib}, // 3 in flight, one of them at its working peak: its activations
		{"one layer past the bound", []model.Layer{{ActivationBytes: eib}}, 4,
			"layers: byte counts add up to more than 819.2 PiB, which 4 microbatches in flight could multiply beyond 4 EiB: check the units", 0},
		{"stash of 16 microbatches", []model.Layer{{ActivationBytes: eib}, {ActivationBytes: eib}}, 16,
			"layers: byte counts add up to more than 240.94 PiB, which 16 microbatches in flight", 0},
		{"parameters alone", []model.Layer{{ParamBytes: eib}, {ParamBytes: eib}, {OptimizerBytes: eib}}, 1,
			"layers: byte counts add up to more than 2 EiB: check the units", 0},
		{"tensors and shared items count", []model.Layer{
			{Outputs: []model.Tensor{{ID: "t", Bytes: eib}}, Shared: map[string]int64{"w": eib}},
			{InputIDs: []string{"t"}, TemporaryBytes: 1}}, 1,
			"layers: byte counts add up to more than 2 EiB", 0},
		{"just under with tensors", []model.Layer{
			{Outputs: []model.Tensor{{ID: "t", Bytes: eib}}, Shared: map[string]int64{"w": eib - 1}},
			{InputIDs: []string{"t"}, TemporaryBytes: 1}}, 1, "", eib}, // shared eib-1 + peak 1
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &model.Model{Layers: tt.layers}
			for i := range m.Layers {
				m.Layers[i].Name, m.Layers[i].ForwardSeconds = "l", 1
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			c := &cluster.Cluster{Devices: []cluster.Device{{MemoryBytes: 1 << 30}}}
			e, err := estimate.New(m, c, estimate.Options{InFlight: func(int) int { return tt.inFlight }})
			if tt.want != "" {
				if _, ok := model.AsFieldErrors(err); !ok || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("New = %v, want a field error %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Range(0, 0, len(m.Layers)-1).MemoryBytes; got != tt.memory {
				t.Errorf("memory %d, want %d", got, tt.memory)
			}
		})
	}
}

// TestNewRefusesNonFiniteCosts checks that finite but extreme inputs, which used to give
// infinite or NaN compute and transfer times, are refused with a field error naming the
// field; times just within the bound (1e100) are costed exactly.
func TestNewRefusesNonFiniteCosts(t *testing.T) {
	tensor := func(bytes int64) []model.Layer {
		return []model.Layer{
			{Name: "a", ForwardSeconds: 1, Outputs: []model.Tensor{{ID: "t", Bytes: bytes}}},
			{Name: "b", ForwardSeconds: 1, InputIDs: []string{"t"}, Outputs: []model.Tensor{{ID: "y", Bytes: 1}}},
		}
	}
	two := func(d0, d1 cluster.Device, links ...cluster.Link) *cluster.Cluster {
		d0.MemoryBytes, d1.MemoryBytes = 1<<30, 1<<30
		return &cluster.Cluster{Devices: []cluster.Device{d0, d1}, Links: links}
	}
	tests := []struct {
		name    string
		layers  []model.Layer
		c       *cluster.Cluster
		want    string // the error; "" for none
		compute float64
	}{
		{"times summing to +Inf", []model.Layer{{ForwardSeconds: 1e308}, {ForwardSeconds: 1e308}}, two(cluster.Device{}, cluster.Device{}),
			"layers: times add up to +Inf seconds, more than 1e+100: check the units", 0},
		{"times past the bound", []model.Layer{{ForwardSeconds: 1e100}, {BackwardSeconds: 1e99}}, two(cluster.Device{}, cluster.Device{}),
			"layers: times add up to 1.1e+100 seconds, more than 1e+100: check the units", 0},
		{"times at the bound", []model.Layer{{ForwardSeconds: 5e99}, {ForwardSeconds: 5e99}}, two(cluster.Device{}, cluster.Device{}), "", 1e100},
		{"speed ratio overflowing", []model.Layer{{ForwardSeconds: 1}, {ForwardSeconds: 1}},
			two(cluster.Device{FLOPSPerSecond: 1e300}, cluster.Device{FLOPSPerSecond: 1e-300}),
			"devices[1].flops_per_second: makes device 1 +Inf times as slow as device 0, which must be a finite ratio > 0: check the units", 0},
		{"speed ratio underflowing", []model.Layer{{ForwardSeconds: 1}, {ForwardSeconds: 1}},
			two(cluster.Device{ClockHz: 1e-300}, cluster.Device{ClockHz: 1e300}),
			"devices[1].clock_hz: makes device 1 0 times as slow as device 0, which must be a finite ratio > 0", 0},
		{"slow device past the bound", []model.Layer{{ForwardSeconds: 1e90}, {ForwardSeconds: 1e90}},
			two(cluster.Device{FLOPSPerSecond: 1e12}, cluster.Device{FLOPSPerSecond: 1}),
			"devices[1].flops_per_second: makes device 1 1e+12 times as slow as device 0: the model's layers would take it 2e+102 seconds, more than 1e+100", 0},
		{"tiny bandwidth", tensor(1 << 40), two(cluster.Device{}, cluster.Device{}, cluster.Link{BytesPerSecond: 1e-300}),
			"links[0]: takes +Inf seconds to move 1099511627776 bytes for device 0, more than 1e+100: check its bandwidth and the units", 0},
		{"tiny host bandwidth, host every stage", tensor(1), &cluster.Cluster{
			Devices: []cluster.Device{{MemoryBytes: 1}, {MemoryBytes: 1}},
			Host:    &cluster.Link{BytesPerSecond: 1e-300}, HostEveryStage: true},
			"host: takes 1e+300 seconds to move 1 bytes for device 1", 0}, // y, the model's output
		{"own link latency past the bound", tensor(1), &cluster.Cluster{
			Devices: []cluster.Device{{MemoryBytes: 1}, {MemoryBytes: 1, Recv: &cluster.Link{LatencySeconds: 1e101}}}},
			"devices[1].recv: takes 1e+101 seconds to move 0 bytes for device 1", 0},
		{"latency at the bound", tensor(1), &cluster.Cluster{
			Devices: []cluster.Device{{MemoryBytes: 1}, {MemoryBytes: 1, Recv: &cluster.Link{LatencySeconds: 1e100}}}},
			"", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &model.Model{Layers: tt.layers}
			for i := range m.Layers {
				m.Layers[i].Name = "l"
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := tt.c.Validate(); err != nil {
				t.Fatal(err)
			}
			e, err := estimate.New(m, tt.c, estimate.Options{})
			if tt.want != "" {
				if _, ok := model.AsFieldErrors(err); !ok || !strings.HasPrefix(err.Error(), tt.want) {
					t.Fatalf("New = %v, want a field error %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Compute(0, 0, 1); got != tt.compute {
				t.Errorf("compute %v, want %v", got, tt.compute)
			}
		})
	}
}
