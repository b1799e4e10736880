package fidelity_test

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// gpt is a Megatron GPT of Korthikanti et al. 2022, Table 3: learned positions, tied
// embeddings, dropout, vocabulary 51,200, sequence 2048.
func gpt(t *testing.T, h, heads, layers int) *arch.Arch {
	t.Helper()
	cfg := fmt.Sprintf(`{"model_type": "gpt2", "n_embd": %d, "n_head": %d, "n_layer": %d, "n_positions": 2048, "vocab_size": 51200}`, h, heads, layers)
	a, err := arch.Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	a.Name = fmt.Sprintf("gpt h=%d L=%d", h, layers)
	return a
}

// megatron is Megatron-LM as Korthikanti et al. 2022 ran it: eager PyTorch with fused
// kernels and the fused Adam, the data-parallel all-reduce after the backward ("we do
// not use any overlapping of gradient all-reduces with back-propagation", section 6.3).
func megatron() cluster.Framework {
	f, _ := cluster.LookupFramework(cluster.Eager)
	f.Name = "megatron-lm"
	f.OverlapGradReduce = false
	f.ReturnsLogits = false
	f.OptimizerTempBytesPerParam = 0
	f.OptimizerTensorSeconds = 1e-6
	return f
}

// selene is a DGX A100 80 GB node of Selene: NVSwitch inside (tensor parallelism), one
// 200 Gb/s HDR InfiniBand port per GPU between nodes (pipeline and data parallelism).
func selene(t *testing.T) analytic.Target {
	t.Helper()
	tg, err := analytic.PresetTarget("a100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	ib, _ := cluster.LookupLink("ib-hdr")
	nvs, _ := cluster.LookupLink("nvswitch2")
	tg.Link, tg.TensorLink, tg.Framework = ib.Link, nvs.Link, megatron()
	return tg
}

// step is a whole training step planned and simulated: the pipeline's makespan, the
// data-parallel all-reduce after it (ring over d replicas), the tied embedding's
// all-reduce and the optimizer update, as core/request's Run counts them.
type step struct {
	est          *analytic.Result
	pl           *plan.Plan
	seconds      float64
	stage0Act    int64 // activations the first stage keeps (all in-flight microbatches)
	stage0Memory int64 // the first stage's device memory at the step's peak (plan.Stage.MemoryBytes)
}

func runStep(t *testing.T, a *arch.Arch, tg analytic.Target, o analytic.Options, p, v, m, d int) step {
	t.Helper()
	o.DataParallel = d
	est, err := analytic.Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	dev := tg.Device
	dev.MemoryBytesPerSecond = tg.Perf.MemoryBytesPerSecond
	c := cluster.Homogeneous(dev, p, tg.Link, nil)
	cfg := schedule.Config{Kind: schedule.OneFOneB, Microbatches: m}
	if v > 1 {
		cfg = schedule.Config{Kind: schedule.Interleaved, Chunks: v, Microbatches: m}
	}
	// The framework's memory as core/request counts it: fixed memory and the allocator's
	// reserve in every stage, the optimizer's temporaries in its peak.
	opt := plan.Options{Schedule: &plan.ScheduleOptions{Config: cfg, MicrobatchSize: o.Batch},
		Estimate: estimate.Options{FixedBytes: tg.Framework.FixedBytes, AllocatorReserve: tg.Framework.AllocatorReserve,
			OptimizerTempBytes: est.OptimizerTempBytes}}
	// Megatron splits the blocks evenly (embedding with the first, head with the last).
	layers := a.NumLayers
	stages := p * max(v, 1)
	bounds := []int{0}
	for i := 1; i < stages; i++ {
		bounds = append(bounds, 1+i*layers/stages)
	}
	bounds = append(bounds, len(est.Layers))
	pl, err := plan.Evaluate(est.Model(), c, opt, bounds)
	if err != nil {
		t.Fatal(err)
	}
	s := step{est: est, pl: pl, seconds: pl.Schedule.MakespanSeconds}
	// Per device: optimizer (memory pass over its stages' state) and its all-reduce.
	var opt2, ar float64
	for dv := 0; dv < p; dv++ {
		var touched, grads, tensors float64
		for i, st := range pl.Stages {
			if i%p != dv {
				continue
			}
			touched += float64(st.ParamBytes) + 2*float64(st.OptimizerBytes) + float64(st.SharedBytes)
			for l := st.FirstLayer; l <= st.LastLayer; l++ {
				grads += float64(est.Layers[l].GradBytes)
				tensors += float64(est.Layers[l].ParamTensors)
			}
		}
		o := max(touched/(dev.MemoryBytesPerSecond*tg.Perf.MemoryEfficiency), tensors*tg.Framework.OptimizerTensorSeconds)
		opt2 = max(opt2, o)
		if d > 1 {
			k := float64(d)
			ar = max(ar, 2*(k-1)/k*grads/tg.Link.BytesPerSecond+2*(k-1)*tg.Link.LatencySeconds)
		}
	}
	s.seconds += opt2 + ar
	if p > 1 {
		s.seconds += est.Total.TiedAllReduceSeconds
	}
	for i, st := range pl.Stages {
		if i%p == 0 { // the first device's stages (chunks)
			s.stage0Act += st.ActivationBytes + st.StashBytes
		}
	}
	s.stage0Memory = pl.Stages[0].MemoryBytes
	return s
}

// relErr is (predicted - measured) / measured.
func relErr(pred, meas float64) float64 { return (pred - meas) / meas }

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		s[i] = math.Abs(s[i])
	}
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
