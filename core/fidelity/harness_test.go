package fidelity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// gpt is a Megatron GPT of Korthikanti et al. 2022, Table 3: learned positions, tied
// embeddings, dropout, vocabulary 51,200, sequence 2048, as a HuggingFace config.json.
func gpt(h, heads, layers int) wire.Architecture {
	cfg := fmt.Sprintf(`{"model_type": "gpt2", "n_embd": %d, "n_head": %d, "n_layer": %d, "n_positions": 2048, "vocab_size": 51200}`, h, heads, layers)
	return wire.Architecture{Config: json.RawMessage(cfg)}
}

// megatron is Megatron-LM as Korthikanti et al. 2022 ran it, in the request's terms:
// eager PyTorch's host time per kernel and per layer (model.architecture's
// host_kernel_seconds and host_layer_seconds, the eager preset's figures) with what the
// cuda-graphs framework mode models of Megatron-LM: the fused in-place Adam, the
// data-parallel all-reduce after the backward ("we do not use any overlapping of
// gradient all-reduces with back-propagation", section 6.3), the loss without the
// logits held to the step's end; and its fused SwiGLU (for gated MLPs). An
// architecture that names its framework keeps it.
func megatron(t *testing.T, a *wire.Architecture) {
	t.Helper()
	eager, err := cluster.LookupFramework(cluster.Eager)
	if err != nil {
		t.Fatal(err)
	}
	if a.Framework == "" {
		a.Framework = cluster.CUDAGraphs
	}
	// The eager preset's host time per operator is per HuggingFace operator
	// (cluster.Framework.EagerOps); Megatron-LM's modules launch the analytic model's
	// kernels, about two framework operators each: 15 us, the preset's figure per kernel
	// before it counted HuggingFace's operators.
	kernel := 15e-6
	a.HostKernelSeconds, a.HostLayerSeconds = &kernel, &eager.HostLayerSeconds
}

// step is a whole training step as request.Run plans and simulates it: the pipeline's
// makespan, the data-parallel all-reduce, the tied embedding's all-reduce and the
// optimizer update.
type step struct {
	res          *wire.Result
	seconds      float64
	stage0Act    int64 // activations the first device keeps (all in-flight microbatches of its stages)
	stage0Memory int64 // the first stage's device memory at the step's peak (plan.Stage.MemoryBytes)
}

// runStep plans a step of the architecture on Selene through the request, the doorway
// every front end uses: DGX A100 80 GB nodes, NVSwitch inside (tensor parallelism), one
// 200 Gb/s HDR InfiniBand port per GPU between nodes (pipeline and data parallelism),
// Megatron-LM (megatron), p pipeline devices with v chunks each (1F1B, or interleaved
// for v > 1), m microbatches of the training's microbatch size, d replicas, split as
// Megatron splits the blocks: evenly, the embedding with the first, the head with the
// last.
func runStep(t *testing.T, a wire.Architecture, par wire.Parallelism, tr wire.Training, mb, v, m int) step {
	t.Helper()
	megatron(t, &a)
	r := &wire.Request{
		Model:       wire.ModelSpec{Architecture: &a},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb", DevicesPerNode: 8, LinkIntra: "nvswitch2", LinkInter: "ib-hdr"},
		Parallelism: par,
		Training:    tr,
		Schedule:    wire.Schedule{Name: "1f1b", Microbatches: m, MicrobatchSize: mb},
		Layers:      true,
	}
	if v > 1 {
		r.Schedule.Name = fmt.Sprintf("interleaved:%d", v)
	}
	est, err := request.Estimate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	n, blocks := len(est.Layers), 0
	for _, l := range est.Layers {
		if l.Kind == "block" {
			blocks++
		}
	}
	if est.Layers[0].Kind != "embedding" || blocks == 0 {
		t.Fatalf("layers %s, %s, ...: want the embedding, then the blocks", est.Layers[0].Kind, est.Layers[1].Kind)
	}
	stages := par.Pipeline * max(v, 1)
	r.Boundaries = []int{0}
	for i := 1; i < stages; i++ {
		r.Boundaries = append(r.Boundaries, 1+i*blocks/stages)
	}
	r.Boundaries = append(r.Boundaries, n)
	res, err := request.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil || res.Step == nil {
		t.Fatalf("no step: %+v", res.Diagnostics)
	}
	s := step{res: res, seconds: res.Step.StepSeconds, stage0Memory: res.Plan.Stages[0].MemoryBytes}
	for i, st := range res.Plan.Stages {
		if i%par.Pipeline == 0 { // the first device's stages (chunks)
			s.stage0Act += st.ActivationBytes + st.StashBytes
		}
	}
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
