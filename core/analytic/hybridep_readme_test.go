package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestHybridEPNetworkAgainstREADME holds the flex dispatcher's network pricing beside
// the one published measurement of HybridEP across H100 nodes: the hybrid-ep README's
// H100 table (deepseek-ai/DeepEP, hybrid-ep branch, docs/README_Hybrid-EP.md since
// #494, 2025-11-18: 4,096 tokens, hidden 7,168, top-8 of 128 experts drawn uniformly,
// 8 local experts, 16 ranks on two nodes of 8), whose "IB bandwidth" counts each
// token once for every distinct node its experts are on, its own node among them
// (tests/utils.py, count_rdma_send_from_routing_map: "we do not set the local node map
// to zeros"): 4,096 x 2(1 - 2^-8) x 7,168 x 2 bytes a call. At the table's fastest
// 16-rank figures (8 SMs; Torch API BF16 dispatch 57.74 GB/s, combine 56.96; the
// kernels alone 76.80 and 68.00) a dispatch and a combine take 4.08 ms (3.24 ms the
// kernels), where the planner prices them, the network at the ib-ndr preset's 50 GB/s
// line rate, at 2.44 ms: through the Torch API HybridEP carries some 27 to 29 GB/s
// of payload on that NIC (38 GB/s its dispatch kernel alone). The note in
// TestBridgeMoEPublishedRuns ((3) of the x86 rows' inter-node traffic) says why that
// figure is not adopted; this test says the gap is still there.
func TestHybridEPNetworkAgainstREADME(t *testing.T) {
	a := *bundled(t, "deepseek-v3")
	a.NumExperts, a.RouteGroups, a.GroupsPerToken = 128, 0, 0 // the README's uniform top-8 of 128
	const tokens, hidden, k = 4096, 7168, 8
	if a.HiddenSize != hidden || a.ExpertsPerToken != k {
		t.Fatalf("deepseek-v3: hidden %d, top-%d; the README's shape is %d, top-%d", a.HiddenSize, a.ExpertsPerToken, hidden, k)
	}
	nv, err := cluster.LookupLink("nvswitch3")
	if err != nil {
		t.Fatal(err)
	}
	ib, err := cluster.LookupLink("ib-ndr")
	if err != nil {
		t.Fatal(err)
	}
	tg := target(t, "h100-sxm")
	tg.ExpertLink, tg.ExpertInterLink, tg.ExpertPerNode = nv.Link, ib.Link, 8
	o := Options{Batch: 1, Seq: tokens, TensorParallel: 1, DataParallel: 16, ExpertParallel: 16, ExpertTensorParallel: 1, Dispatcher: DispatchHybridEP, ExpertImbalance: 1}
	sh := newShape(&a, o)
	priced := sh.dispatchSeconds(tg, tokens)

	// The planner, closed form: the network side sets each call's time (8 remote
	// peers' latency and each token's 2(1 - 2^-8) x 1/2 remote node), the dispatch
	// carrying the fp32 probability row over the node's 64 experts besides.
	remote := 2 * (1 - math.Pow(0.5, k)) / 2
	side := func(row float64) float64 { return 8*ib.Link.LatencySeconds + row*tokens*remote/ib.Link.BytesPerSecond }
	if want := side(2*hidden+4*64) + side(2*hidden); math.Abs(priced-want) > 1e-12 {
		t.Fatalf("priced %v s a dispatch and combine, want the network side's %v s", priced, want)
	}

	counted := tokens * 2 * (1 - math.Pow(0.5, k)) * hidden * 2
	torchAPI := counted/57.74e9 + counted/56.96e9
	kernels := counted/76.80e9 + counted/68.00e9
	t.Logf("HybridEP on 16 H100s, one dispatch and one combine: priced %.2f ms, README %.2f ms (Torch API), %.2f ms (kernels alone)", 1e3*priced, 1e3*torchAPI, 1e3*kernels)
	if math.Abs(torchAPI-4.08e-3) > 0.005e-3 || math.Abs(kernels-3.24e-3) > 0.005e-3 {
		t.Errorf("README times %v and %v s, want 4.08 and 3.24 ms", torchAPI, kernels)
	}
	if priced >= kernels {
		t.Errorf("priced %.2f ms, no faster than the README's kernels alone (%.2f ms): the known gap is closed; update the note", 1e3*priced, 1e3*kernels)
	}
}
