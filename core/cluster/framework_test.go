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
