package request

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"pipeplan/core/wire"
)

// BenchmarkRecomputeAuto times one plan with per-layer recomputation (training.recompute
// auto) of an architecture whose blocks choose among Megatron-LM's recompute modules:
// Llama-3.1-70B (4 options a block) on 2 and 32 stages of H100s, ZeRO-3 over the
// replicas, and DeepSeek-V3 (9 options a block: its MLA, MoE and norm parts) on 2 and 16
// stages of GB200s, candidates of the search's grids (core/search/evaluate's
// BenchmarkSearchLlama31_70B and BenchmarkSearchDeepSeekV3) where memory binds. Before
// the sweep merged, skipped dominated options and memoised alike blocks (issue 22):
// Llama-3.1-70B on 2 stages took 1.1 s, and DeepSeek-V3 on 2 stages gave up after 27 s
// at the planner's bound of 20 million states.
func BenchmarkRecomputeAuto(b *testing.B) {
	for _, c := range []struct {
		name, arch, device string
		seq, node          int
		p, d, t, e, m, mb  int
		sharding, schedule string
	}{
		{"llama-3.1-70b/p2", "llama-3.1-70b", "h100-sxm", 8192, 8, 2, 128, 2, 0, 4, 2, "zero3", "1f1b"},
		{"llama-3.1-70b/p32", "llama-3.1-70b", "h100-sxm", 8192, 8, 32, 16, 1, 0, 32, 2, "zero3", "zb-h1"},
		{"deepseek-v3/p2", "deepseek-v3", "gb200", 4096, 72, 2, 512, 1, 16, 1, 8, "zero2", "zb-h1"},
		{"deepseek-v3/p16", "deepseek-v3", "gb200", 4096, 72, 16, 64, 1, 2, 4, 16, "zero2", "zb-h1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := &wire.Request{
				Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: c.arch, Seq: c.seq}},
				Cluster: wire.ClusterSpec{Device: c.device, DevicesPerNode: c.node, Count: c.p * c.d * c.t},
				Parallelism: wire.Parallelism{Pipeline: c.p, Data: c.d, Tensor: c.t, Expert: c.e, Sharding: c.sharding,
					SequenceParallel: c.t > 1},
				Schedule: wire.Schedule{Name: c.schedule, Microbatches: c.m, MicrobatchSize: c.mb},
				Training: wire.Training{Recompute: RecomputeAuto},
			}
			js, err := json.Marshal(r)
			if err != nil {
				b.Fatal(err)
			}
			var recomputed int
			for b.Loop() {
				var req wire.Request
				if err := json.Unmarshal(js, &req); err != nil {
					b.Fatal(err)
				}
				res, err := Run(context.Background(), &req)
				if err != nil {
					b.Fatal(err)
				}
				if !res.Feasible {
					b.Fatal(fmt.Sprint("nothing fits: ", res.Diagnostics))
				}
				recomputed = 0
				for _, s := range res.Plan.Stages {
					if s.Recompute != nil {
						recomputed += len(s.Recompute.Layers)
					}
				}
			}
			b.ReportMetric(float64(recomputed), "recomputed_layers")
		})
	}
}
