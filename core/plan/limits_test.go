package plan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// Inputs at the edges of the numeric ranges: each used to give a wrapped memory, a NaN or
// an infinite cost, or a wrong "no plan fits"; now each plans or is refused by field.

// Two layers of 1 EiB activations under GPipe with 16 microbatches: each field is within
// model.Validate's 2^60, but the stash (15 x 1 EiB) overflowed int64 and the stage "fit"
// 80 GiB with negative memory. The model's byte total is refused instead.
func TestMakeRefusesStashBeyondInt64(t *testing.T) {
	m := &model.Model{Layers: []model.Layer{
		{Name: "a", ForwardSeconds: 1, BackwardSeconds: 1, ActivationBytes: 1 << 60},
		{Name: "b", ForwardSeconds: 1, BackwardSeconds: 1, ActivationBytes: 1 << 60},
	}}
	p, err := Make(m, devices(2, 80<<30), with(schedule.Config{Kind: schedule.GPipe, Microbatches: 16}))
	if err == nil {
		t.Fatalf("16 microbatches of 1 EiB activations fit 80 GiB: stage memory %d bytes", p.Stages[0].MemoryBytes)
	}
	if _, ok := model.AsFieldErrors(err); !ok || errors.Is(err, ErrNoFit) || !strings.HasPrefix(err.Error(), "layers: byte counts add up to more than") {
		t.Errorf("Make = %v, want the field error on the layers' byte total", err)
	}
}

// Device memory: 1 EiB (cluster.MaxMemoryBytes) plans; math.MaxInt64 bytes, which
// MemoryLimitBytes turned into float64 2^63 and back into MinInt64 (nothing fit), is refused.
func TestMakeDeviceMemoryBound(t *testing.T) {
	m := chain(2, 10, 0, 0)
	if _, err := Make(m, devices(2, cluster.MaxMemoryBytes), Options{}); err != nil {
		t.Errorf("two devices of 1 EiB cannot hold 10-byte layers: %v", err)
	}
	_, err := Make(m, devices(2, math.MaxInt64), Options{})
	if _, ok := model.AsFieldErrors(err); !ok || !strings.HasPrefix(err.Error(), "devices[0].memory_bytes: must be at most 2^60 bytes") {
		t.Errorf("Make with 8 EiB devices = %v, want a field error on devices[0].memory_bytes", err)
	}
}

// Eight devices of 1 EiB hold 2^63 bytes together, past int64: Explain's total used to
// wrap negative and blame "parameters alone" for 18 bytes. The middle device holds 1
// byte, so a stage on it cannot hold a 2-byte layer and nothing fits.
func TestExplainSumsHugeDevices(t *testing.T) {
	m := &model.Model{Layers: layers(2, 2, 2, 2, 2, 2, 2, 2, 2)}
	c := devices(9, cluster.MaxMemoryBytes)
	c.Devices[4].MemoryBytes = 1
	_, err := Make(m, c, Options{})
	want := "every layer fits a device alone, but every split of 9 layers into 9 stages puts more on some stage"
	if !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), want) {
		t.Errorf("Make = %v, want ErrNoFit saying %q", err, want)
	}
}

// A Graphcore-style link was checked against device 0's clock only, but the estimator
// converts it with the clock of the device using it: device 1, without a clock, got a NaN
// transfer (0/0), which JSON cannot encode. The cluster is refused, naming both.
func TestMakeRefusesLinkWithoutItsDevicesClock(t *testing.T) {
	c := &cluster.Cluster{
		Devices: []cluster.Device{{MemoryBytes: 1 << 30, ClockHz: 1e9}, {MemoryBytes: 1 << 30}},
		Links:   []cluster.Link{{GBps: 1}},
	}
	_, err := Make(chain(4, 1, 0, 1<<20), c, Options{})
	want := "links[0]: is given in gbps/idle_cycles, which needs devices[1].clock_hz: device 1 receives over it"
	if _, ok := model.AsFieldErrors(err); !ok || err.Error() != want {
		t.Errorf("Make = %v, want the field error %q", err, want)
	}
}

// Finite layer times summing past math.MaxFloat64 made compute +Inf - +Inf = NaN, and Make
// answered "no plan fits" blaming memory. The times are refused by field instead.
func TestMakeRefusesTimesSummingToInf(t *testing.T) {
	m := chain(4, 1, 0, 0)
	m.Layers[0].ForwardSeconds, m.Layers[1].ForwardSeconds = 1e308, 1e308
	_, err := Make(m, devices(3, 1<<30), Options{})
	if _, ok := model.AsFieldErrors(err); !ok || !strings.HasPrefix(err.Error(), "layers: times add up to +Inf seconds") {
		t.Errorf("Make = %v, want a field error on the layers' times", err)
	}
}

// More stages than layers is refused before the estimator runs: its work grows with
// layers times stages (65,536 stages for 26 layers took 14.7 s to refuse). The model here
// would also fail the estimator's byte-total check, so the answer shows which came first.
func TestMakeRefusesMoreStagesThanLayersFirst(t *testing.T) {
	m := &model.Model{Layers: []model.Layer{
		{Name: "a", ForwardSeconds: 1, ActivationBytes: 1 << 60},
		{Name: "b", ForwardSeconds: 1, ActivationBytes: 1 << 60},
	}}
	for _, opt := range []Options{{}, with(schedule.Config{Kind: schedule.GPipe, Microbatches: 16})} {
		_, err := Make(m, devices(3, 80<<30), opt)
		want := "no plan fits: the model has 2 layers but the cluster has 3 stages, and every stage needs at least one layer: use at most 2 stages"
		if !errors.Is(err, ErrNoFit) || err.Error() != want {
			t.Errorf("Make = %v, want %q", err, want)
		}
	}
}
