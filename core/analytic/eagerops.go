package analytic

import (
	"math"

	"pipeplan/core/arch"
)

// hostOps is what a piece of a layer makes the host do in eager PyTorch, counted per
// pass: calls from Python into torch in the forward pass (a torch function, a Tensor
// method or an nn.functional call: each pays the interpreter, the argument parser and
// autograd's recording, and dispatches one or more ATen operators), and ATen operators
// the autograd engine runs in the backward pass (from C++, each through the dispatcher
// and, for most, a kernel launch).
type hostOps struct {
	fwd, bwd float64
}

func (h hostOps) plus(o hostOps) hostOps { return hostOps{h.fwd + o.fwd, h.bwd + o.bwd} }

func (h hostOps) times(n float64) hostOps { return hostOps{h.fwd * n, h.bwd * n} }

// eagerBlock is what one HuggingFace transformer block dispatches in eager PyTorch, in
// training, by part: the attention half without its core (norm, projections, rotary
// embedding, repeat_kv, output projection, residual), the attention core as the eager
// implementation runs it (scores, mask, softmax in fp32, dropout, weighted sum), the
// dense MLP half (norm, MLP, residual) and, for a mixture of experts, the MLP half
// without its experts (norm, router, top-k, one-hot mask, residual) and what each
// expert that receives a token adds (its token gather, SwiGLU MLP, weighting and
// index_add_).
type eagerBlock struct {
	attention, core, mlp, moe, expert hostOps
}

// eagerBlocks are the counts of tools/opcount/count_ops.py (its output is
// testdata/eager_ops.json; TestEagerOpsMatchCounts derives these from it): the blocks
// transcribed from HuggingFace transformers' modeling code (LlamaDecoderLayer, and
// MixtralDecoderLayer for mixtures; GPT2Block; BertLayer) run once forward and backward
// in bf16 on the CPU under torch's TorchFunctionMode (the forward's calls from Python)
// and TorchDispatchMode (the backward's ATen operators), PyTorch 1.13. The counts do not
// depend on the device or the sizes. The Llama family's mixtures (Mixtral, Qwen-MoE,
// DeepSeek, gpt-oss) are priced with Mixtral's sparse block: HuggingFace's MoE blocks
// share its loop over the experts hit.
var eagerBlocks = map[arch.Family]eagerBlock{
	arch.Llama: {attention: hostOps{43, 100}, core: hostOps{10, 30}, mlp: hostOps{14, 57},
		moe: hostOps{24, 46}, expert: hostOps{15, 42}},
	arch.GPT2: {attention: hostOps{19, 37}, core: hostOps{12, 29}, mlp: hostOps{17, 44}},
	arch.BERT: {attention: hostOps{13, 69}, core: hostOps{10, 29}, mlp: hostOps{6, 37}},
}

// sdpaCore is the attention core as HuggingFace's sdpa (and flash) implementations run
// it: one torch.nn.functional.scaled_dot_product_attention call, then the output's
// transpose and contiguous (sdpa_attention_forward); its backward runs the fused
// kernel's backward operator and the two views'. Not counted by the script (PyTorch
// 1.13 has no scaled_dot_product_attention): read from the code.
var sdpaCore = hostOps{3, 3}

// eagerAttention is what an attention half dispatches in eager PyTorch under the
// options' attention implementation, and false for an architecture without counts
// (latent attention).
func (sh *shape) eagerAttention() (hostOps, bool) {
	b, ok := eagerBlocks[sh.a.Family]
	if !ok || sh.a.MLA() {
		return hostOps{}, false
	}
	core := sdpaCore
	if sh.o.Attention == Eager {
		core = b.core
	}
	return b.attention.plus(core), true
}

// eagerMLP is what a dense MLP half dispatches in eager PyTorch.
func (sh *shape) eagerMLP() (hostOps, bool) {
	b, ok := eagerBlocks[sh.a.Family]
	return b.mlp, ok
}

// eagerMoE is what a mixture's MLP half dispatches in eager PyTorch: the experts this
// device holds that receive a token (all of them unless the device's routed pairs are
// fewer), and a shared expert as one more.
func (sh *shape) eagerMoE(local, pairs float64) (hostOps, bool) {
	b, ok := eagerBlocks[sh.a.Family]
	if !ok || b.expert == (hostOps{}) {
		return hostOps{}, false
	}
	hit := math.Max(1, math.Min(local, math.Ceil(pairs)))
	if sh.fs > 0 {
		hit++
	}
	return b.moe.plus(b.expert.times(hit)), true
}

// eagerKernels is what an unfused operation costs the device in eager PyTorch: the
// bytes its memory-bound kernels read and write per element of the tensor it
// transforms, in 16 bits, and how many kernels it launches (forward; the backward as
// mem's). From the same run of tools/opcount/count_ops.py (fwd_bytes and fwd_kernels
// of the region, per element).
type eagerKernels struct {
	bytesPerElement, kernels float64
}

// eagerTraffic holds the operations eager PyTorch runs unfused where the analytic
// model counts one fused kernel: LlamaRMSNorm (an upcast to fp32, pow, mean, add,
// rsqrt, multiply, a downcast and the weight's multiply: 36 bytes per element where a
// fused kernel moves 4), Llama's rotary embedding (q*cos + rotate_half(q)*sin and the
// same for k, with rotate_half's slices, negation and concatenation) and GPT-2's
// gelu_new (NewGELUActivation's tanh formula in eight operators). LayerNorm, SiLU and
// exact GELU are single ATen kernels, as the analytic model counts them.
var eagerTraffic = map[arch.Family]struct{ norm, rotary, activation eagerKernels }{
	arch.Llama: {norm: eagerKernels{36.15625, 8}, rotary: eagerKernels{18.333333333333332, 10}},
	arch.GPT2:  {activation: eagerKernels{36, 8}},
}

// eagerMem is mem for an operation that eager PyTorch runs unfused (k, from
// eagerTraffic) over n elements, when the framework runs HuggingFace's code eagerly in
// 16 bits; otherwise mem(name, fused, kernels).
func (sh *shape) eagerMem(name string, k eagerKernels, n, fused, kernels float64) op {
	if !sh.eagerCode || k.kernels == 0 || sh.e != 2 {
		return mem(name, fused, kernels)
	}
	return mem(name, k.bytesPerElement*n, k.kernels)
}
