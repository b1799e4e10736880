package cluster

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMegatronFramework: the megatron mode is the cuda-graphs mode (Megatron-style
// fusions, fused Adam, Megatron-LM's overlap defaults, memory) with eager PyTorch's host
// time per kernel and per layer, counted over the analytic model's kernels rather than
// HuggingFace's operators, and Megatron-Core's gradient buffer (MainGradBuffer), which
// cuda-graphs, standing for torch.compile's reduce-overhead too, does not assume.
func TestMegatronFramework(t *testing.T) {
	m, err := LookupFramework(Megatron)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := LookupFramework(CUDAGraphs)
	e, _ := LookupFramework(Eager)
	if m.HostKernelSeconds != e.HostKernelSeconds || m.HostLayerSeconds != e.HostLayerSeconds || m.EagerOps {
		t.Errorf("megatron host %g s per kernel, %g per layer, eager ops %v: want eager's %g and %g over the kernels",
			m.HostKernelSeconds, m.HostLayerSeconds, m.EagerOps, e.HostKernelSeconds, e.HostLayerSeconds)
	}
	if h := m.HostSeconds(100, 1); h != 100*e.HostKernelSeconds+e.HostLayerSeconds {
		t.Errorf("100 kernels over a layer: %g s", h)
	}
	if !m.MainGradBuffer || g.MainGradBuffer {
		t.Errorf("main_grad buffer: megatron %v, cuda-graphs %v; want true, false", m.MainGradBuffer, g.MainGradBuffer)
	}
	// Everything else is cuda-graphs'.
	m.Name, m.HostKernelSeconds, m.HostLayerSeconds, m.Note, m.MainGradBuffer = g.Name, g.HostKernelSeconds, g.HostLayerSeconds, g.Note, g.MainGradBuffer
	if m != g {
		t.Errorf("megatron, host figures aside:\n%+v\nwant cuda-graphs':\n%+v", m, g)
	}
	if err := m.Validate("framework"); err != nil {
		t.Error(err)
	}
}

// TestDeepSpeedFramework: the deepspeed mode (Megatron-DeepSpeed on DeepSpeed's
// PipelineEngine) launches every kernel as megatron does (eager PyTorch's host time per
// kernel and layer, over the analytic model's kernels), updates with a fused in-place
// Adam, reduces the gradients after the backward pass (its TrainSchedule's last step)
// and gathers nothing during the forward, computes Megatron-LM's vocab-parallel loss,
// keeps no Megatron-Core gradient buffer and leaves a gated MLP's activation unfused;
// it alone blocks on its pipeline transfers.
func TestDeepSpeedFramework(t *testing.T) {
	d, err := LookupFramework(DeepSpeed)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := LookupFramework(Megatron)
	if d.HostKernelSeconds != m.HostKernelSeconds || d.HostLayerSeconds != m.HostLayerSeconds || d.EagerOps || d.OptimizerTensorSeconds != m.OptimizerTensorSeconds || d.OptimizerTempBytesPerParam != 0 || d.ForeachOptimizer {
		t.Errorf("deepspeed host and optimizer figures %+v: want megatron's", d)
	}
	if d.OverlapGradReduce || d.OverlapParamGather || d.OverlapTensorComm || d.MainGradBuffer || d.FusedActivation || d.ReturnsLogits {
		t.Errorf("deepspeed %+v: want no overlap, no main_grad buffer, no fused activation, no logits kept", d)
	}
	if d.CrossEntropy() != CrossEntropyVocabParallel {
		t.Errorf("deepspeed loss %s, want %s", d.CrossEntropy(), CrossEntropyVocabParallel)
	}
	if !d.BlockingPipelineTransfers {
		t.Error("deepspeed: pipeline transfers not blocking")
	}
	for _, name := range FrameworkNames() {
		if f, _ := LookupFramework(name); name != DeepSpeed && f.BlockingPipelineTransfers {
			t.Errorf("%s: pipeline transfers blocking; only deepspeed's are", name)
		}
	}
	if err := d.Validate("framework"); err != nil {
		t.Error(err)
	}
}

// TestFrameworkContextBytes: every mode's fixed memory is the 1 GiB figure of a lazily
// loaded CUDA context (500 MiB of it the context), but deepspeed's, whose 2022 stack
// loaded every kernel when the context started: BigScience's 1,573 MiB in place of the
// 500, 2,097 MiB.
func TestFrameworkContextBytes(t *testing.T) {
	const mib = 1 << 20
	for _, name := range []string{Eager, Compiled, CUDAGraphs, Megatron, DeepSpeed} {
		fw, err := LookupFramework(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := int64(1024 * mib)
		if name == DeepSpeed {
			want = 2097 * mib
		}
		if fw.FixedBytes != want {
			t.Errorf("%s: fixed memory %d MiB, want %d", name, fw.FixedBytes/mib, want/mib)
		}
	}
}

// TestDeepSpeedPipelineReserve: the deepspeed mode's allocator reserve on two or more
// stages is the median of max reserved over max allocated, less 1, of the 63 ranks
// BigScience's Megatron-DeepSpeed pipeline logged after its first iteration
// (bigscience-workshop/bigscience, experiments/gpt2-meg-ds-3d/
// meg_ds_3d_gpt2_perf_n16-ds-on.out: "[Rank r] (after 1 iterations) memory (MB) | ... |
// max allocated: a | ... | max reserved: b"; rank 38's line is missing from the log),
// rounded to three places, and the last stage's (ranks 60-63, one microbatch in flight)
// is the log's least; on one stage, and for every other mode, the reserve is the 2% of
// Megatron-style runs of 2024.
func TestDeepSpeedPipelineReserve(t *testing.T) {
	logged := []struct {
		rank                          int
		maxAllocatedMB, maxReservedMB float64
	}{
		{0, 19961.072265625, 22892}, {1, 19961.072265625, 23288}, {2, 19961.072265625, 23204},
		{3, 19961.072265625, 23270}, {4, 17461.94775390625, 20018}, {5, 17461.94775390625, 20002},
		{6, 17461.94775390625, 20002}, {7, 17461.94775390625, 20002}, {8, 17189.947265625, 19794},
		{9, 17189.947265625, 19824}, {10, 17189.947265625, 19760}, {11, 17189.947265625, 19744},
		{12, 16917.94677734375, 19504}, {13, 16917.94677734375, 19456}, {14, 16917.94677734375, 19424},
		{15, 16917.94677734375, 19536}, {16, 16645.9462890625, 19200}, {17, 16645.9462890625, 19216},
		{18, 16645.9462890625, 19218}, {19, 16645.9462890625, 19200}, {20, 16373.94580078125, 18962},
		{21, 16373.94580078125, 18882}, {22, 16373.94580078125, 18882}, {23, 16373.94580078125, 18912},
		{24, 16101.9453125, 19040}, {25, 16101.9453125, 18640}, {26, 16101.9453125, 19024},
		{27, 16101.9453125, 18640}, {28, 15829.94482421875, 18368}, {29, 15829.94482421875, 18384},
		{30, 15829.94482421875, 18384}, {31, 15829.94482421875, 18384}, {32, 15557.9443359375, 18606},
		{33, 15557.9443359375, 18654}, {34, 15557.9443359375, 18622}, {35, 15557.9443359375, 18654},
		{36, 15446.84716796875, 18494}, {37, 15446.84716796875, 18304}, {39, 15446.84716796875, 18304},
		{40, 15446.84716796875, 18480}, {41, 15446.84716796875, 18064}, {42, 15446.84716796875, 18304},
		{43, 15446.84716796875, 18224}, {44, 15446.84716796875, 17934}, {45, 15446.84716796875, 18302},
		{46, 15446.84716796875, 18222}, {47, 15446.84716796875, 18302}, {48, 15446.84716796875, 17710},
		{49, 15446.84716796875, 17710}, {50, 15446.84716796875, 17710}, {51, 15446.84716796875, 17710},
		{52, 15446.84716796875, 17182}, {53, 15446.84716796875, 17182}, {54, 15446.84716796875, 17182},
		{55, 15446.84716796875, 17182}, {56, 15446.84716796875, 17182}, {57, 15446.84716796875, 16926},
		{58, 15446.84716796875, 17182}, {59, 15446.84716796875, 17182}, {60, 18175.37841796875, 19286},
		{61, 18175.37841796875, 19286}, {62, 18175.37841796875, 19286}, {63, 18175.37841796875, 19286},
	}
	var rs []float64
	least := 1.0
	for _, l := range logged {
		r := l.maxReservedMB/l.maxAllocatedMB - 1
		rs = append(rs, r)
		if l.rank >= 60 {
			least = min(least, r)
		}
	}
	slices.Sort(rs)
	if median := rs[len(rs)/2]; len(rs) != 63 || math.Round(1000*median)/1000 != deepSpeedPipelineReserve {
		t.Errorf("%d ranks, median reserve %.4f: want 63 and deepSpeedPipelineReserve %.3f", len(rs), median, deepSpeedPipelineReserve)
	}
	if lo, hi := rs[0], rs[len(rs)-1]; math.Abs(lo-0.061) > 0.001 || math.Abs(hi-0.199) > 0.001 || lo != least {
		t.Errorf("reserve from %.4f (the last stage's least %.4f) to %.4f, want 6.1%% on the last stage to 19.9%% as the doc comment says", lo, least, hi)
	}
	for _, name := range []string{Eager, Compiled, CUDAGraphs, Megatron, DeepSpeed} {
		fw, err := LookupFramework(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, stages := range []int{0, 1, 2, 12} {
			want := allocatorReserve
			if name == DeepSpeed && stages >= 2 {
				want = deepSpeedPipelineReserve
			}
			if got := fw.Reserve(stages); got != want {
				t.Errorf("%s on %d stages: allocator reserve %g, want %g", name, stages, got, want)
			}
		}
		if fw.LeastReserve() != allocatorReserve {
			t.Errorf("%s: least reserve %g, want %g", name, fw.LeastReserve(), allocatorReserve)
		}
	}
	if err := (Framework{PipelineAllocatorReserve: 1.5}).Validate("framework"); err == nil || !strings.Contains(err.Error(), "framework.pipeline_allocator_reserve") {
		t.Errorf("a pipeline reserve of 1.5: %v, want an error naming framework.pipeline_allocator_reserve", err)
	}
}
