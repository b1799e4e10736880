package cluster_test

import (
	"fmt"

	"pipeplan/core/cluster"
)

// ZeRO-3 over 8 devices gathers each layer's weights and reduce-scatters its gradients;
// together the two move what one all-reduce moves (NCCL's ring: (n-1)/n each, 2(n-1)/n
// for the all-reduce), with half its latency steps each.
func ExampleRingAllGatherSeconds() {
	nv, _ := cluster.LookupLink("nvlink4") // NCCL's 370.8 GB/s, 3 µs
	layer := 436e6                         // a Llama-3-8B block's bf16 weights, bytes
	ag := cluster.RingAllGatherSeconds(nv.Link, layer, 8)
	rs := cluster.RingReduceScatterSeconds(nv.Link, layer, 8)
	ar := cluster.RingAllReduceSeconds(nv.Link, layer, 8)
	fmt.Printf("all-gather %.3f ms, reduce-scatter %.3f ms, all-reduce %.3f ms\n", ag*1e3, rs*1e3, ar*1e3)
	// Output: all-gather 1.050 ms, reduce-scatter 1.050 ms, all-reduce 2.100 ms
}

// An FSDP layer's 4 ms of gathers beside its 20 ms backward on an H100: NCCL's 24 CTAs
// take 24 of 132 SMs for those 4 ms, so the backward takes 20 + 4 x 24/132 ms.
func ExampleOverlappedSeconds() {
	share := cluster.CollectiveSMShare(132)
	fmt.Printf("%.3f ms\n", 1e3*cluster.OverlappedSeconds(0.020, 0.004, share))
	// Output: 20.727 ms
}
