package request

import (
	"context"
	"math"
	"pipeplan/core/wire"
	"slices"
	"testing"
)

// publishedMoE is a mixture-of-experts pre-training run whose throughput was published,
// planned as a request with the run's own model, parallelism, batch, precision and
// schedule.
type publishedMoE struct {
	name, source string
	req          *wire.Request
	// tokensPerGPUSecond is the published throughput per device.
	tokensPerGPUSecond float64
	tolerance          float64 // relative, on the predicted throughput
	// gap, when set, names why the case is known to miss its tolerance: it is reported
	// and held to twice the tolerance, and fails once it comes within (so that the gap is
	// removed).
	gap string
}

// DeepSeek trains with its own framework, HAI-LLM, with fused kernels (DeepSeek-V2 paper,
// section 3.1.3; DeepSeek-V3 report, section 3.1): its runs are planned in the
// Megatron-style mode (cuda-graphs), not eager PyTorch, the default for a request that
// names no framework.
//
// H800 nodes as DeepSeek describes them (DeepSeek-V3 Technical Report, sections 3.1 and
// 3.2.2): 8 GPUs per node on NVLink (160 GB/s; nvswitch1, NCCL's 120 GB/s on the
// DGX-2's six V100 links, cluster.NVLinkCollectiveBytesPerSecond, is the nearest
// preset), one 400 Gb/s InfiniBand interface per GPU (50 GB/s, ib-ndr). An H800 computes
// as an H100 SXM (989 TFLOP/s bf16, 1,979 fp8): the h100-sxm preset.
func deepseekCluster() wire.ClusterSpec {
	return wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8, LinkIntra: "nvswitch1", LinkInter: "ib-ndr"}
}

var publishedMoERuns = []publishedMoE{
	{
		// 2,048 H800s: 16-way pipeline (DualPipe, which overlaps the expert all-to-alls of
		// one microbatch with another's computation), 64-way expert parallelism across 8
		// nodes, ZeRO-1 data parallelism (128 replicas), no tensor parallelism; FP8
		// training (section 3.3); sequences of 4,096, batch 15,360 (section 4.2); all-to-all kernels
		// that cross InfiniBand once per node with fp8 dispatch (DeepEP). Throughput: 180K
		// H800 GPU hours per trillion tokens (Table 1: 2,664K GPU hours pre-training 14.8T
		// tokens), 1,543 tokens/s per GPU. Microbatches of one sequence (the report does
		// not give the size); DualPipe is planned as zb-h1 with the overlap.
		// Memory binds the split: zb-h1 keeps p - i microbatches in flight on stage i, so
		// the first stages take fewer blocks and the pipeline idles over 0.4 of the step;
		// DeepSeek keeps less per layer (it recomputes RMSNorm and the MLA up-projections
		// and caches the SwiGLU inputs in FP8, sections 3.2.3 and 3.3.2) and DualPipe
		// balances memory across devices (Table 2), neither of which pipeplan expresses.
		// The Megatron-style mode keeps a probability per routed row instead of the
		// experts' outputs (Megatron-Core's memory-efficient permutation; whether
		// DeepSeek's framework does is not published): with that the split balances
		// better (bubble 0.30) and the prediction went from -11% to +10%.
		name:   "DeepSeek-V3, PP16 EP64 DP128, FP8, 2048 H800",
		source: "DeepSeek-V3 Technical Report (arXiv 2412.19437), sections 3.1-3.3, 4.2 and Table 1",
		req: &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "deepseek-v3", Seq: 4096, DType: "fp8", Framework: "cuda-graphs"}},
			Cluster:     deepseekCluster(),
			Parallelism: wire.Parallelism{Pipeline: 16, Data: 128, Expert: 64, ZeRO: 1, ExpertOverlap: true, ExpertDispatcher: "deepep-fp8"},
			Schedule:    wire.Schedule{Name: "zb-h1", Microbatches: 15360 / 128, MicrobatchSize: 1},
		},
		tokensPerGPUSecond: 1e12 / (180e3 * 3600),
		tolerance:          0.25,
	},
	{
		// H800s: 16-way zero-bubble pipeline, 8-way expert parallelism inside a node,
		// ZeRO-1 data parallelism (section 3.1.3); bf16; sequences of 4,096, batch 9,216
		// (section 3.1.2); 172.8K GPU hours per trillion tokens (section 3.2.3, training
		// costs), 1,608 tokens/s per GPU.
		// The paper does not give the number of GPUs: 64 replicas (1,024 GPUs) here,
		// which sets the microbatches per replica (144) and the data-parallel ring.
		name:   "DeepSeek-V2, PP16 EP8 DP64, BF16, 1024 H800",
		source: "DeepSeek-V2 paper (arXiv 2405.04434), sections 3.1.2, 3.1.3 and 3.2.3",
		req: &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "deepseek-v2", Seq: 4096, Framework: "cuda-graphs"}},
			Cluster:     deepseekCluster(),
			Parallelism: wire.Parallelism{Pipeline: 16, Data: 64, Expert: 8, ZeRO: 1},
			Schedule:    wire.Schedule{Name: "zb-h1", Microbatches: 9216 / 64, MicrobatchSize: 1},
		},
		tokensPerGPUSecond: 1e12 / (172.8e3 * 3600),
		tolerance:          0.25,
	},
}

// TestPublishedMoERuns plans each published mixture-of-experts run as it ran: it must
// fit (a configuration that ran is never refused as out of memory) and its predicted
// throughput must be within the run's tolerance; every error, and the median and signed
// median over the runs, are logged.
func TestPublishedMoERuns(t *testing.T) {
	var errs, abs []float64
	for _, c := range publishedMoERuns {
		res, err := Run(context.Background(), c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): refused: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		got := res.Step.TokensPerSecond / float64(res.Step.Devices)
		e := (got - c.tokensPerGPUSecond) / c.tokensPerGPUSecond
		errs, abs = append(errs, e), append(abs, math.Abs(e))
		t.Logf("%-46s predicted %6.0f tokens/s/GPU, published %6.0f: error %+5.1f%% (step %.1f s, MFU %.1f%%, bubble %.2f, pipeline %.1f s, dp %.2f s, opt %.2f s; %s)",
			c.name, got, c.tokensPerGPUSecond, 100*e, res.Step.StepSeconds, 100*res.Step.MFU, res.Step.BubbleFraction, res.Step.PipelineSeconds, res.Step.DataParallelExposedSeconds, res.Step.OptimizerSeconds, c.source)
		switch {
		case c.gap != "" && math.Abs(e) <= c.tolerance:
			t.Errorf("%s: error %+.1f%% is within %.0f%% now: remove its gap (%s)", c.name, 100*e, 100*c.tolerance, c.gap)
		case c.gap != "" && math.Abs(e) > 2*c.tolerance:
			t.Errorf("%s: error %+.1f%% is beyond twice the %.0f%% tolerance, more than its known gap explains", c.name, 100*e, 100*c.tolerance)
		case c.gap != "":
			t.Logf("%s: a known gap, error %+.1f%%: %s", c.name, 100*e, c.gap)
		case math.Abs(e) > c.tolerance:
			t.Errorf("%s: predicted %.0f tokens/s per GPU, published %.0f (%s): error %+.1f%% beyond %.0f%%",
				c.name, got, c.tokensPerGPUSecond, c.source, 100*e, 100*c.tolerance)
		}
	}
	t.Logf("%d runs: median |error| %.1f%%, signed median %+.1f%%", len(errs), 100*medianOf(abs), 100*medianOf(errs))
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
