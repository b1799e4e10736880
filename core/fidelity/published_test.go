package fidelity_test

import (
	"testing"

	"pipeplan/core/wire"
)

const gib = 1 << 30

// korthikanti is a model of Korthikanti et al. 2022 ("Reducing Activation Recomputation
// in Large Transformer Models", arXiv 2205.05198), Table 3: tensor parallel 8, sequence
// 2048, vocabulary 51,200, no data parallelism, interleaved schedule with 3 chunks for
// 175B and 530B, on Selene (DGX A100 80 GB, NVSwitch, 8 HDR InfiniBand ports per node).
type korthikanti struct {
	name                   string
	h, heads, layers       int
	p, v, microbatches, mb int
}

var korthikantiModels = []korthikanti{
	{"22B", 6144, 64, 48, 1, 1, 1, 4},
	{"175B", 12288, 96, 96, 8, 3, 64, 1},
	{"530B", 20480, 128, 105, 35, 3, 280, 1},
	{"1T", 25600, 160, 128, 64, 1, 512, 1},
}

// korthikantiStep plans a step of one of their models in one of their settings: tensor
// parallelism alone (Korthikanti's "baseline", recompute none), or sequence parallelism
// with selective recomputation ("present work"); Table 5 compares the latter with full
// recomputation. Megatron-LM of 2022 ran attention unfused (softmax and dropout kept):
// eager attention. precision "" is the default (mixed).
func korthikantiStep(t *testing.T, k korthikanti, recompute string, sp bool, precision string, d int) step {
	t.Helper()
	a := gpt(k.h, k.heads, k.layers)
	a.Seq, a.Attention = 2048, "eager"
	par := wire.Parallelism{Pipeline: k.p, Data: d, Tensor: 8, SequenceParallel: sp}
	return runStep(t, a, par, wire.Training{Recompute: recompute, Precision: precision}, k.mb, k.v, k.microbatches)
}

type result struct {
	name               string
	predicted, measure float64
	tolerance          float64
}

// check reports every case's error and fails a case beyond its tolerance; the median
// over the cases must meet the target unless advisory (a target the cases at hand cannot
// yet meet, reported rather than enforced).
func check(t *testing.T, what string, target float64, rs []result, advisory ...bool) {
	t.Helper()
	var errs []float64
	for _, r := range rs {
		e := relErr(r.predicted, r.measure)
		errs = append(errs, e)
		t.Logf("%-52s predicted %10.4g  published %10.4g  error %+6.1f%%", r.name, r.predicted, r.measure, 100*e)
		if !(abs(e) <= r.tolerance) {
			t.Errorf("%s: predicted %.4g, published %.4g: error %+.1f%% beyond %.0f%%", r.name, r.predicted, r.measure, 100*e, 100*r.tolerance)
		}
	}
	m := median(errs)
	t.Logf("%s: median |error| %.1f%% over %d cases (target %.0f%%)", what, 100*m, len(rs), 100*target)
	if m > target && len(advisory) == 0 {
		t.Errorf("%s: median |error| %.1f%% beyond the target %.0f%%", what, 100*m, 100*target)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestActivationMemory: the first pipeline device's activation memory against
// Korthikanti et al. 2022, Table 2's formulas as their Figure 1 evaluates them per GPU
// (GiB): sbhL(10 + 24/t + 5as/(ht)) with tensor parallelism, 34sbhL/t with sequence
// parallelism and selective recomputation, times 1 + (p-1)/(pv) when interleaved. The
// paper's Figure 7 measures these settings at the formula's proportions. Here the
// planner's own figure: every in-flight microbatch of every chunk on device 0 (embedding
// and head included). Target: median within 5%.
func TestActivationMemory(t *testing.T) {
	published := map[string][2]float64{ // GiB: TP only, SP + selective (Figure 1)
		"22B": {59.25, 9.56}, "175B": {66.84, 12.35}, "530B": {114.02, 23.08}, "1T": {131.25, 26.56},
	}
	var rs []result
	for _, k := range korthikantiModels {
		for i, setting := range []struct {
			recompute string
			sp        bool
		}{{"none", false}, {"selective", true}} {
			s := korthikantiStep(t, k, setting.recompute, setting.sp, "", 1)
			name := k.name + " activations, TP only (GiB)"
			if i == 1 {
				name = k.name + " activations, SP + selective (GiB)"
			}
			rs = append(rs, result{name, float64(s.stage0Act) / gib, published[k.name][i], 0.05})
		}
	}
	check(t, "activation memory", 0.05, rs)
}

// TestModelStateMemory: the first pipeline device's weights, gradients and optimizer
// state against Korthikanti et al. 2022, Figure 1 ("parameters and optimizer state",
// GiB per GPU, for the four models of Table 3 at their tensor and pipeline sizes, no data
// parallelism). The paper accounts Megatron-LM's 18 bytes per parameter: 16-bit weights,
// fp32 gradients (main_grad) and fp32 master weights and Adam moments, precision
// mixed-fp32-grads here, and spreads the model evenly over the GPUs: compared here with
// the mean over the pipeline devices (the first, which holds the embedding too, holds up
// to 11% more). A figure the paper computes rather than measures; Calculon, counting 16
// bytes (mixed), reports underestimating these by 8.5% on average. Target: median
// within 5%.
func TestModelStateMemory(t *testing.T) {
	published := map[string]float64{"22B": 45.56, "175B": 45.56, "530B": 31.64, "1T": 32.96}
	var rs []result
	for _, k := range korthikantiModels {
		s := korthikantiStep(t, k, "selective", true, "mixed-fp32-grads", 1)
		var state int64
		for _, st := range s.res.Plan.Stages {
			state += st.Memory.WeightsBytes + st.Memory.GradsBytes + st.Memory.OptimizerBytes + st.Memory.OtherBytes
		}
		mean := float64(state) / float64(k.p) / gib
		rs = append(rs, result{k.name + " weights, gradients, optimizer, mean per GPU (GiB)", mean, published[k.name], 0.05})
	}
	check(t, "model state memory", 0.05, rs)
}

// TestBlockTime: one transformer layer of the 22B model (microbatch 4, t = 8) on an
// A100 80 GB, forward and backward, against Korthikanti et al. 2022, Table 4 (ms,
// measured). Target: median within 15%.
func TestBlockTime(t *testing.T) {
	cases := []struct {
		name      string
		recompute string
		sp        bool
		fwd, bwd  float64
	}{
		{"baseline no recompute", "none", false, 7.7, 11.9},
		{"sequence parallelism", "none", true, 7.2, 11.8},
		{"baseline with (full) recompute", "full", false, 7.7, 19.5},
		{"selective recompute", "selective", false, 7.7, 13.2},
		{"selective + sequence", "selective", true, 7.2, 13.1},
	}
	var rs []result
	for _, c := range cases {
		s := korthikantiStep(t, korthikantiModels[0], c.recompute, c.sp, "", 1)
		lc := s.res.Model.LayerCosts
		fwd, bwd := lc.ForwardSeconds[1], lc.BackwardSeconds[1]
		rs = append(rs,
			result{"22B layer forward (ms), " + c.name, fwd * 1e3, c.fwd, 0.15},
			result{"22B layer backward (ms), " + c.name, bwd * 1e3, c.bwd, 0.15},
			result{"22B layer combined (ms), " + c.name, (fwd + bwd) * 1e3, c.fwd + c.bwd, 0.15})
	}
	check(t, "block time", 0.15, rs)
}

// TestStepTime: whole training steps planned (Megatron's even split) and simulated
// against Korthikanti et al. 2022, Table 5 (seconds per iteration, measured), and the
// 530B model with 8-way data parallelism (2240 GPUs, section 6.3: 39.15 s, the gradient
// all-reduce not overlapped). Target: median within 20%.
func TestStepTime(t *testing.T) {
	published := map[string][2]float64{ // full recompute, SP + selective
		"22B": {1.42, 1.10}, "175B": {18.13, 13.75}, "530B": {49.05, 37.83}, "1T": {94.42, 71.49},
	}
	var rs []result
	for _, k := range korthikantiModels {
		full := korthikantiStep(t, k, "full", false, "", 1)
		present := korthikantiStep(t, k, "selective", true, "", 1)
		rs = append(rs,
			result{k.name + " step (s), full recompute", full.seconds, published[k.name][0], 0.20},
			result{k.name + " step (s), SP + selective", present.seconds, published[k.name][1], 0.20})
		if k.name == "530B" {
			dp := korthikantiStep(t, k, "selective", true, "", 8)
			rs = append(rs, result{"530B step (s), SP + selective, 8-way data parallel", dp.seconds, 39.15, 0.20})
		}
	}
	check(t, "step time", 0.20, rs)
}

// TestStepPeakMemory: the device memory of a whole step, the first pipeline stage's
// allocated peak plus the caching allocator's reserve and the framework's fixed memory,
// against measurements.
//
// Llama 2 7B, bf16, microbatch 2, global batch 2048, 8-way data and 2-way pipeline
// parallelism on A100s: 69.1 GB measured on rank 0 (NVIDIA/Megatron-LM pull request
// #482, its table of peak memory). The request does not state the sequence length or
// the optimizer; assumed: Llama 2's 4096 tokens, flash attention, and Megatron's
// distributed optimizer (ZeRO-1; without it the step would not fit in 80 GB), with
// Megatron's fp32 gradient buffers (main_grad: precision mixed-fp32-grads, 4 bytes per
// parameter where mixed counts 2), planned as Megatron-LM runs: framework megatron
// (Megatron-Core launched without CUDA graphs, the all-reduce after the backward),
// 62.6 GB, -9.4%. Framework eager was planned here before for its unfused SwiGLU (the
// SiLU's output kept for the backward: 68.5 GB, -0.9%), but eager now runs PyTorch's
// pipelining, whose stages hold two boundary tensors per microbatch
// (cluster.PipelineStageBufferBytes: 16 GiB at this step's 128 microbatches of 2 x
// 4,096 tokens), which Megatron-LM's schedule, receiving into a new tensor per transfer,
// does not.
func TestStepPeakMemory(t *testing.T) {
	a := wire.Architecture{Name: "llama-2-7b", Seq: 4096, Framework: "megatron"}
	par := wire.Parallelism{Pipeline: 2, Data: 8, Sharding: "zero1", OverlapGradReduce: "off"}
	s := runStep(t, a, par, wire.Training{Precision: "mixed-fp32-grads"}, 2, 1, 128)
	// The stage's memory is the device's at the step's peak: the allocated peak, the
	// caching allocator's reserve and the framework's fixed memory.
	check(t, "whole-step peak memory", 0.10, []result{
		{"Llama-2-7B DP8 PP2 MBS2, rank 0 peak (GB)", float64(s.stage0Memory) / 1e9, 69.1, 0.10},
	})
}
