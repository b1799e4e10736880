package cluster

import "testing"

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
