package request

import (
	"context"
	"testing"

	"pipeplan/core/wire"
)

// TestInterleavedPyTorchOrder: a request names PyTorch's interleaved order
// (interleaved-pytorch:V) and gets it: with as many microbatches as devices, the last
// device holds (v-1)p + 1 microbatch-chunks instead of Megatron-LM's all pv, so its
// simulated peak is lower, on the same split; with more microbatches the orders, and so
// the results' schedules, are the same.
func TestInterleavedPyTorchOrder(t *testing.T) {
	plan := func(name string, m int) *wire.Result {
		t.Helper()
		r := decode(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4}}`)
		r.Schedule = wire.Schedule{Name: name, Microbatches: m}
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatalf("%s m=%d: %v", name, m, err)
		}
		if res.Schedule == nil {
			t.Fatalf("%s m=%d: no schedule", name, m)
		}
		return res
	}
	mega, torch := plan("interleaved:2", 4), plan("interleaved-pytorch:2", 4)
	last := len(mega.Schedule.PeakMemoryBytes) - 1
	if !(torch.Schedule.PeakMemoryBytes[last] < mega.Schedule.PeakMemoryBytes[last]) {
		t.Errorf("m = p: last device's peak %d bytes in PyTorch's order, %d in Megatron-LM's: want less", torch.Schedule.PeakMemoryBytes[last], mega.Schedule.PeakMemoryBytes[last])
	}
	if torch.Schedule.PeakMemoryBytes[0] != mega.Schedule.PeakMemoryBytes[0] {
		t.Errorf("m = p: first device's peak %d bytes in PyTorch's order, %d in Megatron-LM's: both run every forward first there", torch.Schedule.PeakMemoryBytes[0], mega.Schedule.PeakMemoryBytes[0])
	}
	mega, torch = plan("interleaved:2", 8), plan("interleaved-pytorch:2", 8)
	if torch.Schedule.MakespanSeconds != mega.Schedule.MakespanSeconds || torch.Schedule.PeakMemoryBytes[last] != mega.Schedule.PeakMemoryBytes[last] {
		t.Errorf("m = 2p: PyTorch's order %v s, %d bytes; Megatron-LM's %v s, %d bytes: want the same", torch.Schedule.MakespanSeconds, torch.Schedule.PeakMemoryBytes[last], mega.Schedule.MakespanSeconds, mega.Schedule.PeakMemoryBytes[last])
	}
}
