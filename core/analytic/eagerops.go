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
	arch.MPT:  mptBlock,
}

// mptBlock is what LLM Foundry's MPTBlock dispatches (llmfoundry/models/layers/
// blocks.py, attention.py, ffn.py and norm.py at v0.4.0, the code of the benchmark
// tables), read from the source, not measured (count_ops.py transcribes HuggingFace's
// blocks only), with GPT-2's measured counts as the yardstick where the two share an
// operation. Attention half, forward: LPLayerNorm's three casts (x, weight, bias; a no-op
// .to where the dtype is already 16 bits, still a call) and F.layer_norm, Wqkv's
// F.linear, qkv.split, the kernel functions' rearrange of q, k and v into heads and of
// the output back, out_proj's F.linear, the residual dropout's F.dropout (p = 0: no
// kernel) and the add: 13 (GPT-2: 19, its Conv1D a view, an addmm and a view each and
// its heads split and merged by views, permutes and a contiguous). Backward: GPT-2's 37
// less its head split's and merge's nine operators, plus the four rearranges' views: 32.
// MLP half: norm_2 (4), up_proj, F.gelu (exact, one operator), down_proj, dropout and
// add: 9 forward; backward GPT-2's 44 less gelu_new's eight-operator backward (about 14
// operators: its muls, pow's and tanh's backward and the accumulations of x) plus
// gelu_backward: 31. The core is the kernel each attn_impl runs: flash and triton one
// autograd Function (sdpaCore's figures), torch (scaled_multihead_dot_product_attention:
// scores, scale, causal mask, softmax, dropout, weighted sum) as GPT-2's eager core.
var mptBlock = eagerBlock{attention: hostOps{13, 32}, core: hostOps{12, 29}, mlp: hostOps{9, 31}}

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

// eagerActivation is the unfused traffic of the MLP's activation in eager PyTorch:
// GPT-2's gelu_new (eagerTraffic), Nemotron's relu2 (reluSquared), and nothing for any
// other activation, which runs as one ATen kernel (torch's exact GELU, nn.GELU, as LLM
// Foundry's MPT and GPT-2 with activation_function "gelu" run it: the analytic model's
// one fused kernel).
func (sh *shape) eagerActivation() eagerKernels {
	switch {
	case sh.a.Family == arch.Nemotron && sh.a.Activation == "relu2":
		return reluSquared
	case sh.a.Family != arch.GPT2 || sh.a.Activation != "gelu_new":
		return eagerKernels{}
	}
	return eagerTraffic[arch.GPT2].activation
}

// eagerRotary is the unfused traffic of the rotary embedding in eager PyTorch, per
// element of Q and K: Llama's (eagerTraffic); and for Nemotron, read from the code, not
// measured: transformers' models/nemotron/modeling_nemotron.py, apply_rotary_pos_emb,
// slices q[..., :rot_dim] and q[..., rot_dim:] (views, no kernel), turns the first part
// as Llama does (q*cos + rotate_half(q)*sin: Llama's traffic over the partial_rotary_factor
// share of the elements, its kernels unchanged) and joins the parts again with
// torch.cat, for q and for k: two more kernels, each reading and writing every element
// (4 bytes an element in 16 bits). Without Nemotron's cat the partial embedding would be
// priced as one fused kernel, which eager PyTorch does not run.
func (sh *shape) eagerRotary() eagerKernels {
	llama := eagerTraffic[arch.Llama].rotary
	if sh.a.Family != arch.Nemotron {
		return eagerTraffic[sh.a.Family].rotary
	}
	r := sh.a.RotaryFraction
	if r == 0 {
		r = 1
	}
	return eagerKernels{r*llama.bytesPerElement + 2*2, llama.kernels + 2}
}

// reluSquared is HuggingFace's relu2 in eager PyTorch, read from the code, not measured:
// ReLUSquaredActivation (transformers/activations.py) runs nn.functional.relu, then
// torch.square on its output, two kernels each reading and writing every element in 16
// bits: 8 bytes an element where one fused kernel moves 4. Megatron-Core's squared_relu
// (megatron/core/activations.py) is decorated @jit_fuser, torch.compile from PyTorch 2.2
// on (megatron/core/jit.py): one generated kernel, the analytic model's count. Either
// way one tensor as wide as the MLP is kept for the backward pass beside the second
// projection's input (relu's output, which both relu's and square's backward read; or
// the compiled kernel's input), as for any ungated activation.
var reluSquared = eagerKernels{8, 2}

// eagerMem is mem for an operation that eager PyTorch runs unfused (k, from
// eagerTraffic) over n elements, when the framework runs HuggingFace's code eagerly in
// 16 bits; otherwise mem(name, fused, kernels).
func (sh *shape) eagerMem(name string, k eagerKernels, n, fused, kernels float64) op {
	if !sh.eagerCode || k.kernels == 0 || sh.e != 2 {
		return mem(name, fused, kernels)
	}
	return mem(name, k.bytesPerElement*n, k.kernels)
}

// perToken is memory traffic per token, linear in the widths that shape it: bytes per
// token = hidden*h + mlp*f + kv*(key or value heads' width).
type perToken struct{ hidden, mlp, kv float64 }

// trafficCounts is what the memory-bound kernels of one HuggingFace transformer block
// move in a training forward and backward pass in eager PyTorch on a GPU: bytes per
// token (fwd, bwd) and kernel launches per block (fwdKernels, bwdKernels), without
// torch.autocast's casts of the weights (shape.autocast prices them per parameter).
// dropout is what each of the block's two residual dropouts moves per element of the
// hidden width in each pass (native_dropout reads the input and writes the output and a
// 1-byte mask, its backward reads the gradient and the mask and writes the input's
// gradient: 5 bytes in 16 bits), one kernel each: part of the counts, taken out again
// for a configuration without dropout (with p = 0 PyTorch runs no kernel).
type trafficCounts struct {
	fwd, bwd               perToken
	fwdKernels, bwdKernels float64
	dropout                float64
}

// eagerBlockTraffic holds, per architecture family and for AMP (true: fp32 parameters
// under torch.autocast to bf16, the HuggingFace Trainer's bf16=True) or plain 16-bit
// training (false), the traffic tools/measure/traffic.py counted on an H100 SXM
// (PyTorch 2.11, transformers 5.17, the sdpa attention): every ATen operator of the
// real modeling code's forward and backward under a TorchDispatchMode, below autograd
// and autocast, at six sizes per family, with the blocks' traffic solved from the
// differences (core/analytic/testdata/eager_traffic.json; TestEagerTrafficMatchesCounts
// solves it again). The autocast casts of the weights (6 bytes and one kernel per matrix
// weight or bias each way) are taken out: they are per parameter, not per token. Dropout
// is as each family's configurations have it (GPT-2 and BERT 0.1, Llama none). Under
// AMP the residual stream, the norms and (GPT-2) gelu_new run in fp32: GPT-2's MLP moves
// 76 bytes per element forward where 16 bits move 36, the count the CPU transcription of
// tools/opcount also gives (eagerTraffic). The scripts give the query heads the hidden
// width, so the hidden term holds the queries' work too; for Llama (rotary embedding and
// copies alike on queries and keys) the key-value term's rate per element is taken for
// the queries, so that tensor parallelism divides it (blockTraffic).
var eagerBlockTraffic = map[arch.Family]map[bool]trafficCounts{
	arch.GPT2: {
		true:  {fwd: perToken{58.047, 76.0, 0}, bwd: perToken{104.072, 120.002, 0}, fwdKernels: 18, bwdKernels: 30, dropout: 5},
		false: {fwd: perToken{30.039, 36.0, 0}, bwd: perToken{56.057, 58.002, 0}, fwdKernels: 14, bwdKernels: 22, dropout: 5},
	},
	arch.Llama: {
		true:  {fwd: perToken{142.602, 10.0, 36.0}, bwd: perToken{352.656, 18.0, 58.0}, fwdKernels: 33, bwdKernels: 65},
		false: {fwd: perToken{104.348, 10.0, 20.0}, bwd: perToken{254.398, 18.0, 32.0}, fwdKernels: 30, bwdKernels: 56},
	},
	arch.BERT: {
		true:  {fwd: perToken{70.047, 4.0, 0}, bwd: perToken{128.072, 8.002, 0}, fwdKernels: 11, bwdKernels: 21, dropout: 5},
		false: {fwd: perToken{30.039, 4.0, 0}, bwd: perToken{56.057, 8.002, 0}, fwdKernels: 7, bwdKernels: 15, dropout: 5},
	},
	arch.MPT: mptTraffic,
}

// mptTraffic is what LLM Foundry's MPTBlock (v0.4.0) moves, read from the source, not
// measured: GPT-2's measured counts (above) with the operations MPT runs differently
// replaced, each as bytes per element in and out. In 16 bits the hidden-width operations
// are GPT-2's: two LayerNorms (bf16 in and out), two residual adds and their dropouts,
// the gradient accumulations of the residual stream, and the bias gradients of the fused
// query/key/value projection, the output projection and the down projection, so GPT-2's
// 16-bit hidden term stands, the key and value biases' gradients (2 bytes each per
// element, read once) moved to the key-value term so that grouped-query attention
// shrinks them. The MLP is torch's exact GELU: one kernel that reads and writes 2 bytes an
// element forward (4), and gelu_backward reading the gradient and the input and writing
// the input's gradient (6), plus up_proj's bias gradient (2). Composer's FSDP with
// mixed_precision DEFAULT or PURE gathers the parameters in bf16, so the embedding
// outputs bf16 and the residual stream stays 16-bit: these are the false counts. Under
// torch.autocast with fp32 parameters (precision amp) the embedding outputs fp32 and the
// stream is fp32: LPLayerNorm casts its input to bf16 (6 bytes) and runs LayerNorm in
// bf16 (4) where GPT-2's LayerNorm runs in fp32 (8) and addmm casts its output (6), and
// LayerNorm's backward is the 16-bit one (12.03 bytes, GPT-2's 16-bit count less the
// residual accumulation) where GPT-2's is fp32 (18.04): forward 4 and backward 6 bytes
// less per norm than GPT-2's AMP counts. Kernels: per half forward the norm (and under
// AMP its cast), the dropout and the add, and the GELU; backward per half the norm's two,
// the dropout's, the accumulation (and under AMP two casts), plus the GELU's and the four
// bias gradients. With no_bias, blockTraffic takes the bias gradients out.
var mptTraffic = map[bool]trafficCounts{
	true:  {fwd: perToken{58.047 - 2*4, 4, 0}, bwd: perToken{104.072 - 2*6.006 - 4, 8, 4}, fwdKernels: 9, bwdKernels: 17, dropout: 5},
	false: {fwd: perToken{30.039, 4, 0}, bwd: perToken{56.057 - 4, 8, 4}, fwdKernels: 7, bwdKernels: 13, dropout: 5},
}

// blockTraffic is the counted traffic of a dense block in HuggingFace's eager code on
// this shape, and false where the counts do not apply: another framework, inference
// (the counts are a training step's), activations not in 16 bits, fp8, a mixture's
// block or latent attention. The attention kernel does not matter (the counts leave the
// attention core out). For Llama the queries' share of the hidden term moves to a
// query term at the key-value rate (eagerBlockTraffic), and a configuration without
// dropout drops the two dropouts' bytes and kernels.
func (sh *shape) blockTraffic() (trafficCounts, bool) {
	if !sh.eagerCode || !sh.train || sh.e != 2 || sh.fp8 != nil || sh.a.MLA() {
		return trafficCounts{}, false
	}
	c, ok := eagerBlockTraffic[sh.a.Family][sh.o.Precision == AMP]
	if ok && sh.a.Family == arch.MPT && !sh.a.MLPBias {
		// no_bias: no bias gradients (Wqkv's query part, out_proj's and down_proj's in
		// the hidden term, its key and value parts, up_proj's), one kernel each.
		c.bwd.hidden -= 6
		c.bwd.kv -= 4
		c.bwd.mlp -= 2
		c.bwdKernels -= 4
	}
	if ok && !sh.drop && c.dropout > 0 {
		c.fwd.hidden -= 2 * c.dropout
		c.bwd.hidden -= 2 * c.dropout
		c.fwdKernels -= 2
		c.bwdKernels -= 2
		c.dropout = 0
	}
	return c, ok
}

// countedTraffic replaces a dense block half's memory-bound operations (its norm,
// rotary embedding, activation, residual add and dropout: every operation with no
// matrix product that is not the attention core, eager attention's repetition of the
// key-value heads, or Qwen3's query-key norm, which the counted Llama blocks lack) with the traffic HuggingFace's code makes eager PyTorch move
// (blockTraffic): the hidden-width term split evenly between the halves (each has one
// norm and one residual add, and one dropout where the family has them), the query and
// key-value terms to the attention half, the MLP term to the MLP half. The block's
// total is the count; the split between its halves is this rule's. A GPT-2 whose
// activation is not gelu_new keeps its MLP half's own operations.
func (sh *shape) countedTraffic(p *piece, attention bool) {
	c, ok := sh.blockTraffic()
	if !ok || (!attention && sh.a.Family == arch.GPT2 && sh.a.Activation != "gelu_new") {
		return
	}
	ops := make([]op, 0, len(p.ops)+1)
	for _, o := range p.ops {
		if o.core || o.fwd.flops > 0 || o.name == "repeat kv" || o.name == "qk norm" || o.name == "clip qkv" {
			ops = append(ops, o)
		}
	}
	bytes := func(pt perToken) float64 {
		h := pt.hidden
		if sh.a.Family == arch.Llama {
			h -= pt.kv // the queries' share (counted at q = h), at the key-value rate
		}
		b := h / 2 * sh.hr
		if attention {
			b += pt.kv * sh.kv
			if sh.a.Family == arch.Llama {
				b += pt.kv * sh.q
			}
		} else {
			b += pt.mlp * sh.fd
		}
		return b * sh.t
	}
	p.ops = append(ops, op{name: "eager kernels (counted)",
		fwd: work{0, bytes(c.fwd), c.fwdKernels / 2}, bwd: work{0, bytes(c.bwd), c.bwdKernels / 2}})
}

// unalignedRates are the rates of an output layer's products when the vocabulary's row
// of 16-bit elements is not a multiple of 16 bytes, over the rate of the same products
// with the vocabulary padded to one (forward; the backward's two products together),
// by the row's alignment in bytes: cuBLAS then runs SIMT-era kernels with narrow loads
// (cutlass_75 ... align1, align2) instead of Hopper's. Measured on an H100 SXM
// (tools/measure/kernels.py, core/analytic/testdata/h100_kernels.json): GPT-2's 50,257
// words at 96 to 154 TFLOP/s against 50,304 at 654 to 775; BERT's 30,522 at 245 to 271
// against 30,528 at 667 to 752. An 8-byte alignment (a vocabulary of 4 mod 8) is not
// measured and takes the 4-byte figures. NVIDIA's "Matrix Multiplication Background"
// guide asks for multiples of 8 elements in 16 bits; Megatron-LM pads the vocabulary
// (--make-vocab-size-divisible-by 128) and Inductor pads the products
// (torch._inductor.config.shape_padding), HuggingFace's eager code does neither.
var unalignedRates = map[int]struct{ fwd, bwd float64 }{
	2: {fwd: 0.137, bwd: 0.195},
	4: {fwd: 0.340, bwd: 0.383},
	8: {fwd: 0.340, bwd: 0.383},
}

// rowAlignment is the largest power of two, up to 16, that divides n elements of e
// bytes.
func rowAlignment(n, e float64) int {
	b := int64(n * e)
	a := 1
	for a < 16 && b%int64(2*a) == 0 {
		a *= 2
	}
	return a
}

// alignLogits slows the output layer's products to unalignedRates when HuggingFace's
// code runs eagerly (no padding) and the vocabulary on the device is not a multiple of
// 16 bytes in 16 bits. matmulEfficiency is the target's fraction of peak for products.
func (sh *shape) alignLogits(p *piece, matmulEfficiency float64) {
	if !sh.eagerCode || sh.e != 2 {
		return
	}
	r, ok := unalignedRates[rowAlignment(sh.v, sh.e)]
	if !ok {
		return
	}
	for i := range p.ops {
		if p.ops[i].name == "logits" {
			p.ops[i].fwdEff = matmulEfficiency * r.fwd
			p.ops[i].bwdEff = matmulEfficiency * r.bwd
		}
	}
}

// geluNewSaved is the bytes per MLP element that GPT-2's gelu_new and the second
// projection keep for the backward pass when HuggingFace's code runs eagerly in training
// (0 otherwise: one fused activation keeps its input, as the analytic model counts).
// NewGELUActivation computes 0.5*x * (1 + tanh(sqrt(2/pi) * (x + 0.044715*pow(x, 3))))
// in eight operators; autograd keeps pow's input, tanh's output and both factors of
// the last product, and the projection keeps its input: 10 bytes in 16 bits. Under AMP
// torch.autocast runs pow in fp32 (PyTorch's "CUDA ops that can autocast to float32"),
// so its input is an fp32 copy and everything after it fp32 but the factor 0.5*x, and
// the projection keeps a 16-bit cast: 4 + 4 + 2 + 4 + 2 = 16 bytes.
func (sh *shape) geluNewSaved() float64 {
	if !sh.eagerCode || !sh.train || sh.a.Family != arch.GPT2 || sh.a.Activation != "gelu_new" || sh.e != 2 || sh.fp8 != nil {
		return 0
	}
	if sh.o.Precision == AMP {
		return 16
	}
	return 10
}

// mptFlashPadding adds to an attention half what LLM Foundry's MPT runs around
// FlashAttention-2 (attn_impl flash; Options.Attention Flash) when its code runs in
// eager PyTorch: llmfoundry/models/layers/attention.py's flash_attn_fn (at #838, the
// code of the large-scale H100 benchmark table) unpads q, k and v with flash-attn's
// bert_padding.unpad_input before flash_attn_varlen_func and pads the output back with
// pad_input, even when no token is padding (flash_attn/bert_padding.py at v2.4.2). Per
// element, in 16 bits (e bytes): unpad_input's index_first_axis gathers each of q, k and
// v (reads e, writes e; its backward writes a zeroed gradient and scatters into it, 3e),
// and pad_input's index_put_first_axis zeroes the output and puts the values (3e; its
// backward gathers, 2e): forward 2e(q + 2kv) + 3e q, backward 3e(q + 2kv) + 2e q bytes a
// token (40 bytes an element of the hidden width with multi-head attention). Kernels:
// each unpad_input a sum, nonzero, max, the .item() copy, cumsum, pad and the gather
// (7), pad_input two; backward two for each unpad and one for the pad. The two host
// synchronisations of each unpad_input (nonzero's size and .item()) are not priced
// beyond their kernels. Triton's and torch's paths (and every other family) pad
// nothing.
func (sh *shape) mptFlashPadding(p *piece) {
	if !sh.eagerCode || sh.a.Family != arch.MPT || sh.o.Attention != Flash {
		return
	}
	e, t, q, kv := sh.e, sh.t, sh.q, sh.kv
	fwd := work{0, (2*e*(q+2*kv) + 3*e*q) * t, 3*7 + 2}
	bwd := work{0, (3*e*(q+2*kv) + 2*e*q) * t, 3*2 + 1}
	if !sh.train {
		bwd = work{}
	}
	p.ops = append(p.ops, op{name: "unpad and pad (flash-attn bert_padding)", fwd: fwd, bwd: bwd})
}
