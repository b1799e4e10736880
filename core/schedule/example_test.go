package schedule_test

import (
	"fmt"

	"pipeplan/core/schedule"
)

// Four equal stages under 1F1B: forward 1 s and backward 2 s per microbatch, 1 GiB of
// activations per microbatch, free transfers.
func ExampleSimulate() {
	st := schedule.Stage{ForwardSeconds: 1, BackwardSeconds: 2, StaticBytes: 4 << 30, ActivationBytes: 1 << 30}
	p := &schedule.Pipeline{Stages: []schedule.Stage{st, st, st, st}, MicrobatchSize: 8}
	r, err := schedule.Simulate(p, schedule.Config{Kind: schedule.OneFOneB, Microbatches: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("step %v s, bubble %.0f%%, %.2f samples/s\n", r.MakespanSeconds, 100*r.BubbleFraction, r.Throughput)
	fmt.Println("in flight:", r.MaxInFlight)
	fmt.Println("peak GiB:", r.PeakMemoryBytes[0]>>30, r.PeakMemoryBytes[3]>>30)
	for _, a := range r.Advice {
		fmt.Println(a)
	}
	// Output:
	// step 21 s, bubble 43%, 1.52 samples/s
	// in flight: [4 3 2 1]
	// peak GiB: 8 5
	// 4 microbatches on 4 stages: the bubble wastes 43% of the step; use at least 8
}

// The microbatches each stage holds under Graphcore's pipelining (popxl's pipelining guide): the stash
// FIFO of depth backward_stage - forward_stage, plus the microbatch at work.
func ExampleInFlight() {
	n, err := schedule.InFlight(schedule.Config{Kind: schedule.IPU, Microbatches: 16}, 4)
	fmt.Println(n, err)
	// Output: [7 5 3 1] <nil>
}

// Each device's microbatches in flight per chunk at the moments it may hold the most:
// under Megatron-LM's interleaved 1F1B on 2 devices with 2 chunks each, device 0 holds
// 3 microbatches of its first chunk and 2 of its second at one moment, 4 and 1 at
// another. With unequal activations per chunk, which moment is the peak depends on them.
func ExampleDevicePeaks() {
	peaks, err := schedule.DevicePeaks(schedule.Config{Kind: schedule.Interleaved, Chunks: 2, Microbatches: 4}, 4, 2)
	if err != nil {
		panic(err)
	}
	for d, moments := range peaks {
		fmt.Println("device", d, moments)
	}
	// Output:
	// device 0 [[3 2] [4 1]]
	// device 1 [[2 1] [3 0]]
}
