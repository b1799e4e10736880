package request

import (
	"context"
	"testing"
)

// TestInterleavedDeviceMemoryIsSimulated: with many chunks a device, what the planner
// counts against a device (its memory limit less a chunk's headroom, LimitBytes -
// MemoryBytes, which every chunk of the device shares) is what the schedule's
// simulation counts at the device's peak: the chunks' static memory and microbatches in
// flight, and one chunk's working memory, not every chunk's at once. Megatron-Bridge's
// Qwen3-30B-A3B on 16 H100s with 24 chunks a device (NeMo 25.11), whose working memory
// summed over the chunks was 12.6 GB too many on device 0 (79.45 GB planned against
// 66.88 GB simulated).
func TestInterleavedDeviceMemoryIsSimulated(t *testing.T) {
	var run *bridgeMoERun
	for i := range bridgeMoERuns {
		if bridgeMoERuns[i].name == "Qwen3 30B-A3B, 16 H100, FP8-CS, PP2 VP24 EP8" {
			run = &bridgeMoERuns[i]
		}
	}
	if run == nil {
		t.Fatal("the run is gone from bridgeMoERuns")
	}
	res, err := Run(context.Background(), run.request(t))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Feasible || res.Plan == nil || res.Schedule == nil {
		t.Fatalf("not planned: %s", res.FirstError().Message)
	}
	p := len(res.Schedule.PeakMemoryBytes)
	if len(res.Plan.Stages) != 24*p {
		t.Fatalf("%d chunks on %d devices, want 24 a device", len(res.Plan.Stages), p)
	}
	for j, s := range res.Plan.Stages {
		d := j % p
		planned := res.Schedule.LimitBytes[d] - (s.LimitBytes - s.MemoryBytes)
		if sim := res.Schedule.PeakMemoryBytes[d]; planned != sim {
			t.Errorf("chunk %d: device %d planned at %d bytes, simulated at %d", j, d, planned, sim)
		}
	}
}
