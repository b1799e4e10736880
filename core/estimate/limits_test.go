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
		{"one layer at the bound", []model.Layer{{ActivationBytes: eib}}, 3, "", 2 * eib},
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
