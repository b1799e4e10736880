package analytic

import (
	"math"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// shape holds the sizes of one microbatch through one architecture, as float64 (every
// value is an integer far below 2^53, so sums and products of a few stay exact).
type shape struct {
	a *arch.Arch
	o Options

	b, s, t float64 // microbatch, sequence on one device (s / c), tokens b*s
	// skv is the keys each query attends to: the whole sequence (s x c).
	skv float64
	// cp is the context-parallel degree c.
	cp         float64
	h, q, kv   float64 // hidden, query heads' and key (or value) heads' width on one device
	heads, d   float64 // query heads on one device, and head width
	f, v       float64 // MLP width (per expert) and vocabulary on one device
	experts, k float64 // experts, and experts per token (0 for dense)
	e          float64 // bytes of one activation element
	// ge is the bytes per element of an fp8 GEMM's input saved for the backward pass: e,
	// or the fp8 recipe's inputBytes (1 and its scales) with dtype fp8. fp8 holds the
	// recipe's figures with dtype fp8, nil otherwise.
	ge    float64
	fp8   *recipeFigures
	drop  bool // dropout in training keeps 1-byte masks
	train bool
	// keepLogits: the training loop holds the 16-bit logits the model returns until the
	// step ends (cluster.Framework.ReturnsLogits).
	keepLogits bool
	// fusedAct: a gated MLP's SiLU and product are one kernel that keeps only the gate
	// and up outputs (cluster.Framework.FusedActivation), the Megatron-style MLP whose
	// gate and up are one linear layer, linear_fc1 (oneFC1).
	fusedAct bool
	// fusedFC1: a gated MLP's gate and up are one linear layer of twice the width, one
	// product a pass (cluster.Framework.FusedFC1; oneFC1).
	fusedFC1 bool
	// fusedCE: the loss reads the 16-bit logits and writes their gradient in place
	// (cluster.Framework.FusedCrossEntropy).
	fusedCE bool
	// ceGradCopy: the fused loss writes the logits' gradient to a new 16-bit tensor
	// rather than over them (cluster.Framework.CrossEntropyGradCopy).
	ceGradCopy bool
	// vocabParallelCE: the loss is Megatron-LM's unfused vocab-parallel cross-entropy
	// (cluster.Framework.CrossEntropyVocabParallel).
	vocabParallelCE bool
	// lossParallelCE: the loss is PyTorch's loss parallelism on fp32 logits
	// (cluster.Framework.CrossEntropyLossParallel).
	lossParallelCE bool
	// mainGrads: gradients accumulate in Megatron-Core's main_grad buffer
	// (cluster.Framework.MainGradBuffer): the embedding's is added to it after each
	// microbatch.
	mainGrads bool
	// pytorchCode: the framework runs the model's own PyTorch code (eager or
	// compiled, pytorchCode), whose separate query, key and value projections are three
	// products (separateProjections), with PyTorch's own tensor parallelism
	// (calc.sequenceCopies); the Megatron-style modes run one, linear_qkv.
	pytorchCode bool
	// megatronCore: the framework runs Megatron-Core's GPT layers from its Transformer
	// Engine spec (megatronCoreSpec): the input norm fused into linear_qkv, a dense
	// block's pre-MLP norm into linear_fc1, and linear_qkv's output split into Q, K and
	// V by get_query_key_value_tensors (megatronQKVSplit).
	megatronCore bool
	// eagerCode: the framework runs HuggingFace's code eagerly (cluster.Framework.
	// EagerOps): the operations it leaves unfused cost their measured traffic
	// (eagerTraffic).
	eagerCode bool
	// teContext: context parallelism runs through Transformer Engine's attention
	// (Megatron-Core's modes, megatron and cuda-graphs): the ring is its
	// AttnFuncWithCPAndKVP2P, whose steps are separate kernel calls (attentionRates)
	// among copies and merges of their own (teRingCopies).
	teContext bool
	// tp is the tensor-parallel degree t: heads, MLP width and vocabulary are divided by
	// it (the vocabulary rounded up, as Megatron-LM pads it). hr is the width of the
	// tensors tensor parallelism leaves whole (norm inputs and outputs, residuals,
	// dropout masks): h, or h/t with sequence parallelism, which splits them along the
	// sequence (the same bytes as dividing the width).
	tp, hr float64
	// fd is a dense block's MLP width on one device (DenseWidth / t); fs a mixture's
	// shared expert's (SharedExpertSize / t).
	fd, fs float64
	// ep and x are the expert-parallel and expert-tensor-parallel degrees; load the
	// routed tokens of the busiest device over the mean (Options.expertLoad).
	ep, x, load float64
}

func newShape(a *arch.Arch, o Options) *shape {
	tp := float64(o.TensorParallel)
	sh := &shape{a: a, o: o,
		b: float64(o.Batch), s: float64(o.Seq) / float64(max(1, o.Context)), skv: float64(o.Seq), cp: float64(max(1, o.Context)),
		h: float64(a.HiddenSize), q: float64(a.QDim()) / tp, kv: float64(a.KVDim()) / tp,
		heads: float64(a.NumHeads) / tp, d: float64(a.HeadDim),
		f: float64(a.IntermediateSize) / tp, v: float64(vocabShard(a, o)),
		experts: float64(a.NumExperts), k: float64(a.ExpertsPerToken),
		e: 2, train: !o.Inference(), tp: tp,
	}
	sh.hr = sh.h
	if o.SequenceParallel {
		sh.hr = sh.h / tp
	}
	sh.t = sh.b * sh.s
	if o.DType == FP32 {
		sh.e = 4
	}
	sh.drop = a.Dropout && sh.train
	sh.fd = float64(a.DenseWidth()) / tp
	sh.fs = float64(a.SharedExpertSize) / tp
	sh.ep, sh.x, sh.load = float64(o.ExpertParallel), float64(o.ExpertTensorParallel), o.expertLoad()
	sh.ge = sh.e
	if o.DType == FP8 {
		f := o.FP8Recipe.figures()
		sh.fp8, sh.ge = &f, f.inputBytes
	}
	return sh
}

// linear is a transformer block's linear layer: the T x k activation times a k x n
// weight. With dtype fp8 it runs at the fp8 rate (op.fp8), and Transformer Engine first
// quantizes its input (forward) and its output's gradient (backward) in both layouts, a
// memory-bound kernel moving the recipe's quantBytes per element; the weight is
// quantized once per step and cached across microbatches (is_first_microbatch), not
// counted per microbatch. The quantization is its own kernels, run before the product
// on the same stream (Transformer Engine's cast-transpose; for current scaling the
// amax, the scale and the cast: recipeFigures.quantKernels, and under sequence
// parallelism an amax all-reduce between them, calc.amaxReductions), so its time adds
// to the product's (op.fwdQuant, bwdQuant) rather than hiding under it: small products,
// such as the experts' of fine-grained mixtures, pay most of it (fp8 Qwen3 30B-A3B ran
// 16% slower than bf16 on the same 16 H100s: 8,826 tokens/s/GPU in NeMo 26.06's
// summary against 10,607 in Megatron-Bridge's expert-parallel overlap benchmark).
func (sh *shape) linear(name string, m, k, n float64) op {
	o := matmul(name, sh.e, 1, m, k, n)
	o.outBytes = sh.e * m * n
	if f := sh.fp8; f != nil {
		o.fp8 = true
		o.quantKernels = f.quantKernels
		o.fwdQuant = f.quantBytes * m * k
		o.fwd.kernels += f.quantKernels
		o.bwdQuant = f.quantBytes * m * n
		o.bwd.kernels += f.quantKernels
		o.swizzleKernels = f.swizzleKernels
		o.fwd.kernels += f.swizzleKernels
		o.bwd.kernels += f.swizzleKernels
	}
	return o
}

// separateProjections is the query, key and value projections of qkv (one linear op
// of q + 2 kv columns standing for them, op.parts) as the model's own PyTorch code
// runs them: three products of the same input, q, kv and kv wide (torchtitan's
// Llama at 820504e, torchtitan/models/llama3/model.py, Attention.forward:
// "xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)", three nn.Linear, three aten.mm;
// HuggingFace's LlamaAttention: q_proj, k_proj, v_proj). Each reads the whole input
// (its own e m k bytes: a narrow product, the key and value projections of a
// tensor-parallel shard, is bound by that read, not by its FLOPs), quantizes its own
// waves and, in the backward pass, reduces its input gradient over its own width
// (gemmShape.fraction). The FLOPs, the saved outputs and the policy's count of
// products (sacPolicy) are qkv's. An fp8 recipe's quantization of the shared input
// stays one (qkv's, on the query), its output gradients' are each projection's share.
func (sh *shape) separateProjections(qkv op, q, kv float64) []op {
	ops := make([]op, 0, 3)
	for i, w := range []float64{q, kv, kv} {
		name := [...]string{"query", "key", "value"}[i]
		o := gathering(sh.linear(name, qkv.gemm.m, qkv.gemm.k, w))
		if o.fp8 {
			o.bwdQuant = qkv.bwdQuant * w / (q + 2*kv)
			if i > 0 {
				o.fwdQuant = 0
				o.fwd.kernels -= o.quantKernels
			}
		}
		ops = append(ops, o)
	}
	return ops
}

// pytorchCode reports whether framework f runs the model's own PyTorch code (eager
// and compiled: HuggingFace's and torchtitan's modules, PyTorch's own tensor
// parallelism), whose query, key and value projections are separate products, not
// Megatron-Core's one linear_qkv and its tensor-parallel layers (cuda-graphs,
// megatron, deepspeed).
func pytorchCode(f cluster.Framework) bool {
	return f.Name == cluster.Eager || f.Name == cluster.Compiled
}

// megatronCoreSpec reports whether framework f runs Megatron-Core's GPT layers built
// from get_gpt_layer_with_transformer_engine_spec (megatron/core/models/gpt/
// gpt_layer_specs.py, core_v0.13.0 to core_v0.18.0): the Megatron-Core modes megatron
// and cuda-graphs. Megatron-DeepSpeed (deepspeed) runs Megatron-LM's legacy model code,
// and eager and compiled the model's own PyTorch code.
func megatronCoreSpec(f cluster.Framework) bool {
	return f.Name == cluster.Megatron || f.Name == cluster.CUDAGraphs
}

// fusedBlockNorm is a block's norm that Megatron-Core's Transformer Engine spec fuses
// into the next linear layer (TELayerNormColumnParallelLinear: the input norm into
// linear_qkv of SelfAttention, a dense block's pre-MLP norm into linear_fc1; the spec
// leaves input_layernorm and pre_mlp_layernorm IdentityOp there). Selective
// recomputation's layernorm module does not rerun such a norm: TransformerLayer sets
// recompute_input_layernorm only when input_layernorm is not IdentityOp, and
// recompute_pre_mlp_layernorm only when pre_mlp_layernorm is not (megatron/core/
// transformer/transformer_layer.py, __init__, core_v0.14.0 to core_v0.18.0), so the
// fused module keeps the norm's output for its weight gradient as without the module.
// Elsewhere (a mixture's pre-MLP TENorm before the router, latent attention's input
// TENorm, and every framework that is not Megatron-Core's) it is blockNorm, rerun by
// the module. fused reports which it is.
func (sh *shape) fusedBlockNorm(name string) (o op, fused bool) {
	if sh.megatronCore {
		return sh.norm(name), true
	}
	return sh.blockNorm(name), false
}

// megatronQKVSplit is what Megatron-Core's SelfAttention moves beyond the analytic
// model's fused kernels between linear_qkv and the attention kernel, and false where it
// moves nothing. get_query_key_value_tensors (megatron/core/transformer/attention.py,
// core_r0.13.0 to core_v0.18.0) views linear_qkv's output as [s, b, g, (n/g + 2) d] for
// g query groups and n query heads on the device and splits its last dimension into
// Q [s, b, g, (n/g) d], K and V [s, b, g, d] (Transformer Engine's SplitAlongDim, or
// torch.split: views); then query.reshape(s, b, -1, d) merges the groups and the heads,
// which a view cannot do when g > 1 and n/g > 1 (the group stride (n/g + 2) d is not
// (n/g) d): a copy of Q, reading and writing it once, one kernel. The rotary embedding
// then writes new Q and K (priced as "rotary"), and Transformer Engine's
// DotProductAttention takes q, k and v only in the layouts get_qkv_layout recognises
// (transformer_engine/pytorch/attention/dot_product_attention/utils.py, v2.5 to v2.12:
// one buffer with q, k and v interleaved, q apart from an interleaved k and v, or
// three with k's and v's strides alike), otherwise it makes each contiguous: V, a view
// whose stride is not the new K's, is copied (one kernel, read and written once); with
// no rotary embedding and Q copied, K and V, still views of the output at offsets
// no layout has, are both. Multi-head attention without a rotary embedding keeps the
// views (the interleaved sbh3d layout) and copies nothing; Megatron-Core's unfused
// attention (attention eager: its own DotProductAttention) takes the views as they are.
// Backward, the copies'
// gradients are views, and SplitAlongDim's backward returns its gradients as one view
// only when they lie at their offsets in one storage (transformer_engine/pytorch/
// utils.py, SplitAlongDim.backward, noop_ok); separate dQ, dK and dV tensors (any copy or
// a rotary embedding made them separate) it concatenates (torch.cat, one kernel reading
// and writing each; torch.split's backward is the same cat). Nothing for latent attention
// (MLASelfAttention has its own), or outside Megatron-Core's modes. Megatron-Core's
// fused_single_qkv_rope (default False; Megatron-Bridge v0.5.0 sets it for gpt-oss 20B
// only) skips the split and the cat, not modelled.
func (sh *shape) megatronQKVSplit() (op, bool) {
	if !sh.megatronCore || sh.a.MLA() || sh.d <= 0 {
		return op{}, false
	}
	e, t, q, kv := sh.e, sh.t, sh.q, sh.kv
	g := kv / sh.d // query groups on the device
	queryCopy := g > 1 && sh.heads > g
	te := sh.o.Attention != Eager // Transformer Engine's DotProductAttention
	var bytes, kernels float64
	if queryCopy {
		bytes, kernels = 2*e*t*q, 1
	}
	switch {
	case te && sh.a.Rotary():
		bytes, kernels = bytes+2*e*t*kv, kernels+1 // V made contiguous
	case te && queryCopy:
		bytes, kernels = bytes+2*e*t*2*kv, kernels+2 // K and V made contiguous
	}
	// The cat: unless Transformer Engine's kernel returns dQ, dK and dV interleaved in
	// one buffer (multi-head attention, no rotary embedding, no copy), as Megatron-Core's
	// unfused attention (attention eager) never does.
	if te && !queryCopy && !sh.a.Rotary() {
		return op{}, false
	}
	return op{name: "qkv split", fwd: work{0, bytes, kernels}, bwd: work{0, 2 * e * t * (q + 2*kv), 1}}, true
}

// linear16 is a linear layer that stays in 16 bits under every fp8 recipe: the router
// and the LM head (Megatron-LM runs them outside Transformer Engine's fp8 layers).
func (sh *shape) linear16(name string, m, k, n float64) op {
	return matmul(name, sh.e, 1, m, k, n)
}

// piece is the cost of one part of a layer (an embedding, an attention part, an MLP, a
// head): its operations and memory for one microbatch. Bytes are float64 integers.
type piece struct {
	ops    []op
	params int64 // parameters it holds, without a tied embedding matrix
	tied   int64 // the tied embedding matrix, when it holds it
	// tensors is the number of parameter tensors it holds (weights and biases as the
	// HuggingFace implementations store them): the optimizer's per-tensor host cost.
	tensors int
	// mcore are its parameter tensors as Megatron-Core registers them (megatronTensors),
	// where the piece lists them; nil: tensors equal shares of params (Layer.MegatronParams).
	mcore []ParamTensor
	// saved is what it keeps from its forward to its backward pass under the options'
	// recomputation (training only).
	saved float64
	// bwdSaved is what is alive for its backward pass once recomputation (if any) has
	// rebuilt it: saved without recomputation.
	bwdSaved float64
	// fwdExtra and bwdExtra are transient tensors beyond saved + output in the forward
	// pass, and beyond bwdSaved + gradients in the backward pass.
	fwdExtra, bwdExtra float64
	// inferExtra is the intermediates alive at once in an inference forward pass.
	inferExtra float64
	// input and output: bytes of what it consumes and produces.
	input, output float64
	// context: the attention core of a context-parallel run, which exchanges
	// contextBytes (ring: the device's keys and values, per step; all-to-all: Q, K, V
	// and the output) in each pass (calc.contextSeconds).
	context      bool
	contextBytes float64
	// ringBytes is, with the hierarchical method, what each ring step passes between
	// the all-to-all groups (the device's keys and values).
	ringBytes float64
	// recomputable: a transformer sublayer, which full recomputation reruns.
	recomputable bool
	// module is the checkpointing module that reruns the whole piece from its input
	// under selective recomputation (mlp, moe; Modules), if any.
	module Modules
	// fwdAllReduces and bwdAllReduces count the tensor-parallel all-reduces of one
	// activation (e*b*s*h bytes) in its forward and backward pass.
	fwdAllReduces, bwdAllReduces float64
	// bwdGradSum: the piece's input feeds several column-parallel projections (Llama's
	// and BERT's separate query, key and value; a gated MLP's gate and up; a mixture's
	// router beside its experts), so the backward pass reduce-scatters the sum of their
	// input gradients, which no one product makes: PyTorch's async tensor parallelism
	// leaves that reduce-scatter unfused (Options.TensorCommAsync).
	bwdGradSum bool
	// expertParams is the part of params that is routed experts (their gradients are
	// all-reduced, and their optimizer state sharded, over the expert-data-parallel
	// group).
	expertParams int64
	// fwdExpertComm and bwdExpertComm are the seconds of a mixture's token dispatch and
	// combine all-to-alls and expert-tensor all-gathers and reduce-scatters in each pass.
	fwdExpertComm, bwdExpertComm float64
	// fwdAuxReduce is the seconds of the router's load-balancing loss's all-reduce of
	// the tokens per expert in the forward pass (shape.auxLossReduceSeconds), exposed
	// and not paired with other work by the expert-parallel overlap.
	fwdAuxReduce float64
	// eagerFrom and eagerTo bound ops[eagerFrom:eagerTo], a dropless mixture's routed
	// experts: launched eagerly after a host synchronization (moeHostSeconds).
	eagerFrom, eagerTo int
	// extraFLOPs is the forward FLOPs its busiest-device load adds to balanced routing
	// ((load - 1) / load of the routed experts'): not model FLOPs.
	extraFLOPs float64
	// fp8Weights is the weight elements of its fp8 products on one device, and
	// fp8GEMMs how many fp8 products hold them (with dtype fp8; 0 otherwise): the
	// recipe keeps fp8 copies of those weights and a scaling state per product.
	fp8Weights, fp8GEMMs float64
	// eager is what its code dispatches in eager PyTorch (eagerops.go) when counted,
	// and eagerCoreFwd the forward calls of its attention core (selective recomputation
	// reruns them); with a framework that counts them (cluster.Framework.EagerOps) they
	// set the host time in place of its kernels.
	eager        hostOps
	eagerCounted bool
	eagerCoreFwd float64
}

// pairs is the query-key pairs one device's flash attention computes per head and
// sequence, for a sequence of S tokens split over c context-parallel devices (S^2/c
// bidirectionally; causally S^2/(2c): the kernels skip the blocks above the diagonal,
// and the load-balanced split gives each device 1/c of the rest): within a sliding
// window of w (gpt-oss) S*w - w^2/2 of them over c once S > w (each query sees at most w
// keys); within chunks of c' (Llama 4) c'^2/2 per whole chunk and r^2/2 for the r tokens
// left, over c. Local attention only where local is true (Arch.LocalLayer) and only for
// a fused kernel (flash, flash3, cudnn: each skips the tiles outside the band, cuDNN's
// through Transformer Engine's window_size (left, 0), its arbitrary-sequence backend's
// sliding window): eager attention materialises the whole score matrix, masked.
func (sh *shape) pairs(local bool) float64 {
	S, c := sh.skv, sh.cp
	if !sh.a.Causal() {
		return S * S / c
	}
	w := float64(sh.a.LocalWindow)
	switch {
	case !local || w == 0 || S <= w:
		return S * S / 2 / c
	case sh.a.LocalChunked:
		n := math.Floor(S / w)
		r := S - n*w
		return (n*w*w/2 + r*r/2) / c
	}
	return (S*w - w*w/2) / c
}

// fp8Bytes is what the fp8 recipe keeps for the piece through the step: fp8 copies of
// its fp8 products' weights and their scaling state (0 without fp8); dropped is the
// 16-bit copy of those weights that fp8 primary weights (Options.FP8ParamGather) do
// without.
//
// With ZeRO-3 or HSDP the weights are gathered layer by layer and cast to fp8 as they are
// used (PyTorch FSDP2 with torchao's float8 all-gather; Megatron-LM's FSDP), so no fp8
// copy of a whole stage's weights is kept: only the scaling state.
func (sh *shape) fp8Bytes(p piece) (kept, dropped float64) {
	if sh.fp8 == nil {
		return 0, 0
	}
	if sh.o.Sharding.Level() == 3 {
		return p.fp8GEMMs * sh.fp8.stateBytes, 0
	}
	kept = p.fp8Weights*sh.fp8.weightBytes + p.fp8GEMMs*sh.fp8.stateBytes
	if sh.o.FP8ParamGather {
		dropped = p.fp8Weights * sh.e
	}
	return kept, dropped
}

// blockNorm is a block's norm before its attention or its MLP (Megatron-LM's
// input_layernorm and pre_mlp_layernorm), which the layernorm module reruns.
func (sh *shape) blockNorm(name string) op { return withModule(sh.norm(name), ModLayerNorm) }

// withModule marks o as rerun by the output-discarding module m.
func withModule(o op, m Modules) op {
	o.module = m
	return o
}

// discard drops bytes from what p saves when selective recomputation names the
// output-discarding module m (and does not rerun p whole): the output is computed in
// the forward pass, then dropped, and rebuilt for the backward pass.
func (sh *shape) discard(p *piece, m Modules, bytes float64) {
	mods := sh.o.modules()
	if mods&m == 0 || (p.module != 0 && mods&p.module != 0) {
		return
	}
	p.saved -= bytes
	p.fwdExtra += bytes
}

// core marks an operation of the attention core. Its products keep no gemmShape: fused
// kernels run at the attention tables' rates (attentionRates), and eager code's
// per-head products (K or N one head's width, 64 to 128) are bound by their bytes,
// outside the range the shape model was fitted on (K of 768 and more).
func core(o op) op {
	o.core = true
	o.gemm = gemmShape{}
	return o
}

// mask is the 1-byte dropout mask of n elements, when dropout is on.
func (sh *shape) mask(n float64) float64 {
	if sh.drop {
		return n
	}
	return 0
}

// residual is the residual add of a sublayer, with its dropout when training with
// dropout: reads two tensors, writes one (and a mask).
func (sh *shape) residual() op {
	kernels := 1.0
	if sh.drop {
		kernels = 2
	}
	return mem("residual", 3*sh.e*sh.t*sh.hr+sh.mask(sh.t*sh.hr), kernels)
}

// contextMerges is the fp32 traffic of PyTorch's context parallelism (AllGather) on a
// device's attention output of n elements, counted from its operations
// (torch/distributed/tensor/experimental/_attention.py), each tensor read and written
// once as if fused, with K and V at the query heads' width (n elements each) and 16-bit
// activations. Forward: the first step's output to fp32 (read 2, write 4 bytes), K and
// V copied into the buffer gathered (read and write 2 each, 8), a merge after each of
// the c - 1 other steps (read the fp32 output and the step's 16-bit one, write fp32:
// 10) and the result back to 16 bits (6): 20 + 10(c-1) bytes an element. Backward:
// dQ, dK and dV zeroed in fp32 (12), after each of the c steps the step's 16-bit
// gradients added into them (10 each, 30) and dK and dV copied into the buffer passed
// on (read and write 4 each, 16), then dQ, dK and dV back to 16 bits (18): 30 + 46c.
func (sh *shape) contextMerges(n float64) op {
	c := sh.cp
	return op{name: "context merges", fwd: work{0, (20 + 10*(c-1)) * n, 2 * c}, bwd: work{0, (30 + 46*c) * n, 4 * c}}
}

// teRingCopies is the memory traffic Transformer Engine's p2p context parallelism adds
// to a causal attention core of 16-bit inputs beside its per-step attention kernels
// (AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention.py, the same at v1.10,
// v1.11 and v1.13: NeMo 24.09 ships 1.10, by NeMo's Software Component Versions; sbhd or
// bshd layouts, load-balanced halves), counted in teRingTraffic from its code for each rank of the ring; a pass takes
// its busiest rank's, since every rank waits on its neighbour's keys and values in each
// pass. Q is the device's query-wide tensor (e*t*q bytes) and P its keys and values
// together (e*t*2*kv), the block each ring step passes on. Transformer Engine 2.x (the
// Megatron-Bridge and MLPerf rows' containers) keeps the same structure (the buffer of K
// and V concatenated, the output zeroed and merged step by step, dQ and dK, dV copied and
// added: dot_product_attention/context_parallel.py at v2.8); its counts are taken as
// 1.x's, not derived again.
func (sh *shape) teRingCopies() op {
	Q, P := sh.e*sh.t*sh.q, sh.e*sh.t*2*sh.kv
	var fwd, bwd work
	for r := 0; r < int(sh.cp); r++ {
		f, b := teRingTraffic(int(sh.cp), r)
		if fb := f.q*Q + f.p*P; fb > fwd.bytes {
			fwd = work{0, fb, f.kernels}
		}
		if bb := b.q*Q + b.p*P; bb > bwd.bytes {
			bwd = work{0, bb, b.kernels}
		}
	}
	return op{name: "context ring copies", fwd: fwd, bwd: bwd}
}

// ringTraffic is a pass's memory traffic in units of the device's query-wide tensor (q)
// and of its keys and values together (p), and the kernels that move it.
type ringTraffic struct{ q, p, kernels float64 }

func (r *ringTraffic) add(q, p float64) { r.q, r.p, r.kernels = r.q+q, r.p+p, r.kernels+1 }

// teRingTraffic counts, from Transformer Engine's AttnFuncWithCPAndKVP2P (v1.10 to
// v1.13, causal, 16-bit, fused attention, sbhd or bshd), what rank r of a ring of c
// moves besides its attention kernels, each tensor read and written once per kernel
// (a copy of x bytes moves 2x, an in-place add 3x), the softmax statistics' few bytes
// (a 1/d of Q's) left out but their kernels counted.
//
// Forward: K and V concatenated into the buffer passed on (torch.cat: 2P); at each
// step i of 1..c-1, for i <= r the received block's first half made contiguous for its
// call (P), else the queries' second half (q[1].contiguous(): Q); the output zeroed
// (torch.zeros_like(q): Q); the statistics cloned to double and, after each step but
// the first, merged (flash_attn_fwd_softmax_lse_correction), and cast back to float;
// then each step's output merged into it (flash_attn_fwd_out_correction: read the
// step's output and read and write the merged one, 3Q for i <= r, half that for the
// steps whose queries were halved).
//
// Backward: the saved K and V copied into the first buffer passed on (2P), the
// statistics' second half made contiguous; at each step, in reverse order (i = c-1 the
// rank's own diagonal block): the inputs' halves made contiguous (K and V's first half,
// P, for c-1-r <= i < c-1; Q's, the output's and its gradient's second halves, 3Q, for
// i < c-1-r); dQ copied or added in (dq.copy_ 2Q, dq.add_ 3Q, on halves half that, as
// the code's branches pick); dK and dV concatenated (torch.cat: P for a half block, 2P
// for a whole one); and that added into or copied over the buffer received (dkv.add_,
// dkv.copy_, likewise).
func teRingTraffic(c, r int) (fwd, bwd ringTraffic) {
	fwd.add(0, 2) // torch.cat of K and V
	for i := 1; i < c; i++ {
		if i <= r {
			fwd.add(0, 1) // kv_inputs[..][0].contiguous()
		} else {
			fwd.add(1, 0) // q[1].contiguous()
		}
	}
	fwd.add(1, 0) // out = torch.zeros_like(q)
	fwd.add(0, 0) // softmax_lse clone
	fwd.add(0, 0) // .to(torch.double)
	for i := 1; i < c; i++ {
		fwd.add(0, 0) // flash_attn_fwd_softmax_lse_correction
	}
	fwd.add(0, 0) // softmax_lse.to(torch.float)
	for i := 0; i < c; i++ {
		if i <= r {
			fwd.add(3, 0) // flash_attn_fwd_out_correction, whole
		} else {
			fwd.add(1.5, 0) // on out[1]
		}
	}

	bwd.add(0, 2) // p2p_comm_buffers[0][0].copy_(kv)
	bwd.add(0, 0) // softmax_lse_[..., 1, :].contiguous()
	for i := 0; i < c; i++ {
		half := i >= c-1-r && i != c-1 // the received block's first half
		switch {
		case i == c-1:
		case half:
			bwd.add(0, 1) // kv[0].contiguous()
		default:
			bwd.add(1, 0) // q[1].contiguous()
			bwd.add(1, 0) // out[1].contiguous()
			bwd.add(1, 0) // dout[1].contiguous()
		}
		switch {
		case i > c-1-r:
			bwd.add(3, 0) // dq.add_(dq_)
		case i == c-1-r && r == c-1:
			bwd.add(2, 0) // dq.copy_(dq_)
		case i == c-1-r:
			bwd.add(1, 0)   // dq[0].copy_(dq_[0])
			bwd.add(1.5, 0) // dq[1].add_(dq_[1])
		case i > 0:
			bwd.add(1.5, 0) // dq[1].add_(dq_)
		default:
			bwd.add(1, 0) // dq[1].copy_(dq_)
		}
		if half {
			bwd.add(0, 1) // torch.cat of dK and dV, half a block
		} else {
			bwd.add(0, 2)
		}
		switch {
		case i == c-1 && r == 0:
			bwd.add(0, 1.5) // dkv[:, 0].add_
			bwd.add(0, 1)   // dkv[:, 1].copy_
		case i == c-1:
			bwd.add(0, 3) // dkv.add_(dkv_)
		case half && i == 0 && r == c-1:
			bwd.add(0, 1) // dkv[:, 0].copy_(dkv_)
		case half:
			bwd.add(0, 1.5) // dkv[:, 0].add_(dkv_)
		case i > 0:
			bwd.add(0, 3) // dkv.add_(dkv_)
		default:
			bwd.add(0, 2) // dkv.copy_(dkv_)
		}
	}
	return fwd, bwd
}

func (sh *shape) norm(name string) op {
	return sh.teNormBackward(sh.eagerMem(name, eagerTraffic[sh.a.Family].norm, sh.t*sh.hr, 2*sh.e*sh.t*sh.hr, 1))
}

// teNormBackward gives a norm's backward pass a second launch per norm kernel where
// Megatron-Core runs it (the framework with its main_grad buffer, mainGrads: its
// norms are Transformer Engine's TENorm and TELayerNormColumnParallelLinear):
// Transformer Engine's RMSNorm and LayerNorm backward launch the main kernel, which
// leaves each CTA's partial dgamma (and dbeta) in a workspace, and then a finalize
// kernel that reduces the partials across CTAs (transformer_engine/common/
// normalization/rmsnorm/rmsnorm_bwd_semi_cuda_kernel.cu, launch_rmsnorm_bwd_tuned_:
// rmsnorm_bwd_tuned_kernel then rmsnorm_bwd_finalize_tuned_kernel; the general
// launcher rmsnorm_bwd_general_kernel then rmsnorm_bwd_finalize_general_kernel;
// layernorm/ln_bwd_semi_cuda_kernel.cu the same; TE 2.x). The finalize kernel reads
// the partials (a few rows of fp32 per multiprocessor), bytes left out.
func (sh *shape) teNormBackward(o op) op {
	if sh.mainGrads && !sh.eagerCode {
		o.bwd.kernels = 2 * o.fwd.kernels
	}
	return o
}

// mainGradAdds is Megatron-Core's backward hook for n parameter tensors of elems
// elements in all whose gradients its layers do not accumulate into the main_grad
// buffer themselves: norms' weights (and biases), biases, the router's weight, sinks.
// After each microbatch's backward pass the hook on each one's AccumulateGrad runs
// param.main_grad.add_(param.grad.data) unless the parameter's grad_added_to_main_grad
// is set, which only the linear layers' weights set (their weight-gradient product
// accumulates into main_grad, gradient_accumulation_fusion): one kernel per tensor,
// reading the gradient and the buffer and writing the buffer
// (megatron/core/distributed/distributed_data_parallel.py, _make_backward_post_hook,
// core_r0.13.0 on; cluster.Framework.MainGradBuffer). None without the buffer, in
// inference, or without gradients.
func (sh *shape) mainGradAdds(n int, elems float64) (op, bool) {
	g := sh.o.perParam().grad
	if !sh.mainGrads || !sh.train || g <= 0 || n <= 0 {
		return op{}, false
	}
	return op{name: "main_grad adds", bwd: work{0, (2*g + sh.e) * elems, float64(n)}}, true
}

// addMainGradAdds appends mainGradAdds(n, elems) to p's operations, where there are any.
func (sh *shape) addMainGradAdds(p *piece, n int, elems float64) {
	if o, ok := sh.mainGradAdds(n, elems); ok {
		p.ops = append(p.ops, o)
	}
}

// attentionHookTensors counts the attention part's parameter tensors that
// mainGradAdds adds, as Megatron-Core holds them, and their elements on one device:
// the norm's, the per-head query and key norms' (QKNorm; MPT's qk_ln over all heads),
// linear_qkv's one bias (Q, K and V are one layer), the output projection's bias and
// the sinks.
func (sh *shape) attentionHookTensors() (int, float64) {
	a := sh.a
	n, x := sh.normTensors(), float64(sh.normTensors())*sh.h
	if a.QKNorm {
		n, x = n+2*sh.normTensors(), x+2*float64(sh.normTensors())*sh.d
	}
	if a.QKLayerNorm {
		n, x = n+2*sh.normTensors(), x+float64(sh.normTensors())*(sh.q+sh.kv)
	}
	if a.QKVBias {
		n, x = n+1, x+sh.q+2*sh.kv
	}
	if a.OutBias {
		n, x = n+1, x+sh.h
	}
	if a.AttentionSinks {
		n, x = n+1, x+sh.heads
	}
	return n, x
}

// mlpHookTensors counts a dense MLP's (or, for local experts, a mixture's experts')
// tensors that mainGradAdds adds: Megatron-Core's linear_fc1 (gate and up in one, when
// gated) and linear_fc2 biases, each expert's own in Transformer Engine's GroupedLinear
// (bias0 ... bias(n-1)), f wide and h wide.
func (sh *shape) mlpHookTensors(experts, f float64) (int, float64) {
	if !sh.a.MLPBias {
		return 0, 0
	}
	fc1 := f
	if sh.a.GatedMLP() {
		fc1 = 2 * f
	}
	return 2 * int(experts), experts * (fc1 + sh.h)
}

// attention is the attention part of a block: norm, QKV projection, rotary embedding
// (Llama), the attention core, output projection, residual (and dropout).
//
// Saved for backward (bytes, e per element, T = b*s tokens), following Korthikanti et al.
// 2022 ("Reducing Activation Recomputation in Large Transformer Models", section 4.1),
// generalised to grouped-query attention: the norm's input (e*T*h), the QKV projection's
// input (e*T*h), Q and K for the scores and V for the weighted sum, the output
// projection's input (e*T*q) and the residual dropout mask (T*h bytes). Eager attention
// also keeps the softmax output (e*b*a*s^2) and, with dropout, its mask (b*a*s^2 bytes)
// and output (e*b*a*s^2); it multiplies by K and V repeated to all query heads, so those
// are q wide. Flash attention keeps Q, K, V unrepeated, and the softmax statistics
// (4*b*a*s bytes, fp32) instead of any s^2 tensor. For GPT (q = kv = h, e = 2, dropout)
// eager gives 13*s*b*h + 5*a*s^2*b: Korthikanti's 11sbh + 5as^2b plus the norm's 2sbh.
//
// With t-way tensor parallelism (Megatron-LM: QKV column-parallel, output projection
// row-parallel) the heads are split: Q, K, V, the output projection's input and every
// s^2 tensor are divided by t, the norm's and QKV's input and the dropout mask are not
// (divided too with sequence parallelism), as in Korthikanti's Table 2. The output
// projection's partial sums are all-reduced in the forward pass, and the gradient of
// the QKV input in the backward pass.
func (sh *shape) attention(local bool) piece {
	a, e, t, h, q, kv, hr := sh.a, sh.e, sh.t, sh.h, sh.q, sh.kv, sh.hr
	p := piece{params: shardParams(a.AttentionParams(), attentionSharded(a), sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: sh.normTensors() + attentionTensors(a), bwdGradSum: !fusedQKV(a)} // GPT-2's c_attn and MPT's Wqkv are one product
	qkv := gathering(sh.linear("qkv", t, h, q+2*kv))
	if !fusedQKV(a) {
		qkv.parts = []float64{q, kv, kv}
	}
	norm, fusedNorm := sh.fusedBlockNorm("attention norm")
	p.ops = append(p.ops, norm)
	if sh.pytorchCode && !fusedQKV(a) {
		p.ops = append(p.ops, sh.separateProjections(qkv, q, kv)...)
	} else {
		p.ops = append(p.ops, qkv)
	}
	if o, ok := sh.megatronQKVSplit(); ok {
		p.ops = append(p.ops, o)
	}
	if a.ClipQKV {
		// MPT's clip_qkv: qkv.clamp(min, max), one kernel over the fused output.
		p.ops = append(p.ops, mem("clip qkv", 2*e*t*(q+2*kv), 1))
	}
	if a.QKLayerNorm {
		// MPT's qk_ln: a LayerNorm over all query heads and one over all key heads, one
		// ATen kernel each.
		p.ops = append(p.ops, mem("qk norm", 2*e*t*(q+kv), 2))
		p.tensors += 2 * sh.normTensors()
	}
	if a.QKNorm {
		// Qwen3's RMSNorm on each query and key head: one fused kernel each, or eager
		// PyTorch's unfused RMSNorm over their width.
		p.ops = append(p.ops, sh.teNormBackward(sh.eagerMem("qk norm", eagerTraffic[arch.Llama].norm, t*(q+kv), 2*e*t*(q+kv), 2)))
	}
	if a.Rotary() {
		// A partial rotary embedding (Nemotron's partial_rotary_factor) moves the whole
		// of Q and K all the same: Transformer Engine's fused kernel writes the turned
		// part and copies the rest (transformer_engine/common/fused_rope/fused_rope.cu:
		// "copy the rest", the dimensions from d2 to d), Megatron-Core's unfused path turns t[..., :rot_dim] and
		// concatenates t_pass (megatron/core/models/common/embeddings/rope_utils.py,
		// _apply_rotary_pos_emb_bshd).
		rotary := sh.eagerMem("rotary", sh.eagerRotary(), t*(q+kv), 2*e*t*(q+kv), 2)
		if a.RotaryScaled && e == 2 {
			// Megatron-Core runs a rotary embedding with an attention factor unfused
			// whatever apply_rope_fusion says ("mscale ... is not supported by TE's fused
			// RoPE. Using unfused implementation.", megatron/core/models/common/
			// embeddings/rope_utils.py, apply_rotary_pos_emb): t*cos + rotate_half(t)*sin
			// in eager operators, as HuggingFace's code does.
			k := sh.eagerRotary()
			rotary = mem("rotary", k.bytesPerElement*t*(q+kv), k.kernels)
		}
		p.ops = append(p.ops, rotary)
	}
	scores := sh.b * sh.heads * sh.s * sh.skv // elements of the score matrix (this device's queries)
	// norm input, QKV input, output projection's input, mask: the two products' inputs
	// at 8 bits with fp8 (ge).
	common := e*t*hr + sh.ge*t*hr + sh.ge*t*q + sh.mask(t*hr)
	var coreSaved float64 // the s^2 terms selective recomputation drops
	if sh.o.Attention == Eager {
		if kv < q {
			p.ops = append(p.ops, mem("repeat kv", e*t*(2*kv+2*q), 2))
		}
		p.ops = append(p.ops, core(matmul("scores", e, sh.b*sh.heads, sh.s, sh.d, sh.skv)), core(mem("softmax", 2*e*scores, 1)))
		if sh.drop {
			p.ops = append(p.ops, core(mem("attention dropout", (2*e+1)*scores, 1)))
		}
		p.ops = append(p.ops, core(matmul("attention x V", e, sh.b*sh.heads, sh.s, sh.skv, sh.d)))
		common += 3 * e * t * q // Q, and K and V repeated to all heads
		coreSaved = e * scores
		if sh.drop {
			coreSaved += scores + e*scores
		}
		// The scores before the softmax live beside its output; the backward pass holds
		// the gradients of both, and of Q, K and V.
		p.fwdExtra = e * scores
		p.bwdExtra = 2*e*scores + e*t*(q+2*kv)
		p.inferExtra = e*t*h + e*t*(q+2*kv) + 2*e*scores
	} else {
		// Causal kernels skip the blocks above the diagonal (local attention more, pairs);
		// under context parallelism the load-balanced split gives each device 1/c of them.
		fa := 4 * sh.b * sh.heads * sh.pairs(local) * sh.d // QK^T and PV
		io := e * t * (2*q + 2*kv)                         // read Q, K, V, write O
		p.ops = append(p.ops, op{name: "flash attention", core: true,
			// FlashAttention-2's backward pass does five products to the forward's two.
			fwd: work{fa, io, 1}, bwd: work{2.5 * fa, 2 * io, 2},
			outBytes: e*t*q + 4*sh.b*sh.heads*sh.s}) // the output and its fp32 softmax statistics
		common += e*t*(q+2*kv) + 4*sh.b*sh.heads*sh.s // Q, K, V, softmax statistics
		p.bwdExtra = e * t * (q + 2*kv)
		p.inferExtra = e*t*h + e*t*(q+2*kv) + e*t*q
	}
	p.ops = append(p.ops, scattering(sh.linear("output projection", t, q, h)), sh.residual())
	if sh.fp8 != nil {
		p.fp8Weights, p.fp8GEMMs = h*(q+2*kv)+q*h, 2
	}
	if sh.cp > 1 {
		p.context = true
		if m := sh.o.ContextMethod; m == AllToAll || m == Hierarchical {
			// Q, K, V in, the output back: each device's share before and after.
			p.contextBytes = e * t * (2*q + 2*kv)
			// Hierarchical: after the all-to-all a device holds g times the tokens
			// and 1/g of the heads, so a ring step passes the same bytes as a flat
			// ring's.
			p.ringBytes = e * t * 2 * kv
		} else if sh.o.ContextMethod == AllGather {
			// K and V at the query heads' width (the flash call takes as many as Q's):
			// this device's share of the all-gather.
			p.contextBytes = e * t * 2 * q
			p.ops = append(p.ops, sh.contextMerges(t*q))
			// Held during the core: the other c - 1 devices' keys and values gathered;
			// forward, the fp32 output merged; backward, fp32 dQ, dK and dV, and the
			// fp32 dK and dV sent and received.
			gathered := (sh.cp - 1) * p.contextBytes
			p.fwdExtra += gathered + 4*t*q
			p.bwdExtra += gathered + 4*t*3*q + 2*4*t*2*q
		} else {
			p.contextBytes = e * t * 2 * kv // this device's K and V, passed c - 1 times
			if sh.teContext && a.Causal() && !sh.o.FP8Attention {
				p.ops = append(p.ops, sh.teRingCopies())
			}
		}
	}
	p.bwdSaved = common + coreSaved
	p.saved = p.bwdSaved
	if sh.o.modules()&ModCoreAttn != 0 {
		p.saved = common
		p.fwdExtra += coreSaved // computed in the forward pass, then dropped
	}
	if !fusedNorm {
		sh.discard(&p, ModLayerNorm, sh.ge*t*hr) // the norm's output, QKV's input
	}
	n, x := sh.attentionHookTensors()
	sh.addMainGradAdds(&p, n, x)
	p.mcore = megatronTensors(p.params, n, x, q+2*kv, q)
	p.eager, p.eagerCounted = sh.eagerAttention()
	if p.eagerCounted && sh.o.Attention == Eager {
		p.eagerCoreFwd = eagerBlocks[a.Family].core.fwd
	}
	return p
}

// dispatchSeconds is the time of one mixture layer's dispatch and combine all-to-alls
// in one pass, for n tokens at the device's input, at the busiest device (its load).
//
// alltoall: each of the n*k routed copies (e bytes per element) crosses to its expert's
// device: cluster.HierarchicalAllToAllSeconds of e*h*n*k*load bytes, twice.
//
// deepep: a token crosses the network once per remote node that holds some of its
// experts, and NVLink once per other device of a node that does. Of N nodes, routing
// limited to G of RouteGroups groups reaches at most L = min(N, G * ceil(N / groups))
// nodes; k experts drawn evenly from L nodes fall on L*(1 - (1 - 1/L)^k) distinct ones
// on average, (N-1)/N of them remote. Inside the nodes each copy whose expert is on
// another device crosses NVLink ((P-1)/P of them, P members per node). Each side pays a
// latency per peer, as cluster.HierarchicalAllToAllSeconds does, and the slower side sets the time.
// Both directions move e bytes an element: Megatron-Core hands DeepEP the 16-bit hidden
// states (DispatchDeepEP).
//
// deepep-fp8: routed as deepep; the dispatch moves fp8 (1 byte and a 4-byte scale per
// 128 elements) when the dtype is fp8, the combine e bytes (DispatchDeepEPFP8).
//
// hybridep: routed as deepep, both directions in e bytes (HybridEP dispatches no fp8:
// DispatchHybridEP), and in each pass one of the two transfers carries beside every
// token copy its row of routing probabilities over the node's experts
// (hybridEPProbRowBytes): the forward's dispatch and the backward's combine of their
// gradients.
func (sh *shape) dispatchSeconds(t Target, n float64) float64 {
	a, h, k, e := sh.a, sh.h, sh.k, sh.e
	members := sh.o.ExpertParallel
	intra, inter := t.expertLinks()
	if !sh.o.Dispatcher.flex() {
		return 2 * cluster.HierarchicalAllToAllSeconds(intra, inter, e*h*n*k*sh.load, members, t.ExpertPerNode)
	}
	perNode := t.ExpertPerNode
	if perNode <= 0 || perNode > members {
		perNode = members
	}
	P := float64(perNode)
	N := math.Ceil(float64(members) / P)
	reach := N
	if a.RouteGroups > 0 && a.GroupsPerToken > 0 {
		reach = min(N, float64(a.GroupsPerToken)*math.Ceil(N/float64(a.RouteGroups)))
	}
	remote := reach * (1 - math.Pow(1-1/reach, k)) * (N - 1) / N // distinct remote nodes per token
	local := k * (P - 1) / P                                     // copies to other devices of a node
	pass := func(bytes float64) float64 {
		side := func(l cluster.Link, peers, copies float64) float64 {
			t := peers * l.LatencySeconds
			if l.BytesPerSecond > 0 {
				t += bytes * n * copies * sh.load / l.BytesPerSecond
			}
			return t
		}
		var ti, te float64
		if P > 1 {
			ti = side(intra, P-1, local)
		}
		if N > 1 {
			te = side(inter, float64(members)-P, remote)
		}
		return max(ti, te)
	}
	dispatch := e * h
	if sh.o.DType == FP8 && sh.o.Dispatcher == DispatchDeepEPFP8 {
		dispatch = h + 4*math.Ceil(h/128)
	}
	if sh.o.Dispatcher == DispatchHybridEP {
		dispatch += sh.hybridEPProbRowBytes(P)
	}
	return pass(dispatch) + pass(e*h)
}

// hybridEPProbRowBytes is what HybridEP's probabilities add to each token copy it
// moves in the forward dispatch and in the backward combine, with P expert-parallel
// ranks a node: a row of fp32 probabilities over every expert of the node, E/EP * P
// floats, not the token's k. HybridEP stages and writes that row with each token
// (deepseek-ai/DeepEP's hybrid-ep code, csrc/hybrid_ep/backend/hybrid_ep_backend.cuh:
// the dispatch kernel's intra_node_prob_buffer[NUM_OF_STAGES][NUM_OF_EXPERTS_PER_RANK *
// NUM_OF_RANKS_PER_NODE], "only used in FW dispatch"; hybrid_ep.cu at commit 017a5202
// sizes every rank's received-probability buffer expert_output_prob at
// max_num_of_tokens_for_experts x num_of_experts_per_rank * num_of_ranks_per_node
// floats, the combine's expert_input_prob alike, and the inter-node staging
// rdma_inter_node_group_prob by the same row). Megatron-Core hands it the probabilities
// in the forward (fused_a2a.py, HybridEPDispatch.forward's dispatch_with_permute with
// probs) and their gradient comes back through combine_with_unpermute with probs in
// the backward (HybridEPDispatch.backward); the forward's combine and the backward's
// dispatch carry none. The all-to-all dispatcher sends one fp32 a routed copy instead
// (alltoallMetadataSeconds); DeepEP its k top-k weights, not counted.
func (sh *shape) hybridEPProbRowBytes(P float64) float64 {
	return 4 * sh.experts / sh.ep * P
}

// alltoallMetadataSeconds is what Megatron-Core's all-to-all dispatcher communicates
// besides the tokens, for n tokens at the device's input (megatron/core/transformer/moe/
// token_dispatcher.py, MoEAlltoAllTokenDispatcher, core_v0.13.0 to core_v0.17.0):
// preprocess gathers every rank's tokens per expert (num_local_tokens_per_expert, E
// int64s) over the tensor-and-expert group (gather_from_sequence_parallel_region over
// tp_ep_group, the expert-tensor x expert-parallel group: its tp is expt_tp, "use
// pg_collection.expt_tp_group as tensor parallel group in this module") in
// the forward pass, and token_dispatch sends the permuted routing probabilities (one
// fp32 a routed row) in an all-to-all of their own beside the tokens'
// (global_probs = all_to_all(...)), whose gradient comes back by the same all-to-all
// in the backward pass. Priced as the tokens' all-to-all is
// (cluster.HierarchicalAllToAllSeconds over the expert links, 4*n*k*load bytes) and as
// a ring all-gather of 8*E bytes a rank (cluster.RingAllGatherSeconds, over the network
// when the group spans nodes): small messages, so mostly their latencies. 0 for the
// flex dispatchers (DeepEP and HybridEP carry the probabilities in their own kernels)
// and without expert parallelism.
func (sh *shape) alltoallMetadataSeconds(t Target, n float64) (fwd, bwd float64) {
	if sh.o.Dispatcher.flex() || sh.ep <= 1 {
		return 0, 0
	}
	members := sh.o.ExpertParallel
	intra, inter := t.expertLinks()
	probs := cluster.HierarchicalAllToAllSeconds(intra, inter, 4*n*sh.k*sh.load, members, t.ExpertPerNode)
	group := members * max(1, int(sh.x)) // tp_ep: expert tensor x expert parallel
	counts := cluster.RingAllGatherSeconds(t.expertRingLink(members), 8*sh.experts*float64(group), group)
	return probs + counts, probs
}

// rowIDMap is the routing map's conversion to destination rows that Transformer
// Engine's fused permute runs before it moves the tokens (moe_utils.py's permute with
// moe_permute_fusion calls moe_permute_with_probs; its make_row_id_map launches three
// Triton passes over the n x E map: a block cumulative sum per expert, the global sum
// and the sparse-to-dense rewrite, transformer_engine/pytorch/triton/permutation.py at
// commit 20deb83e35), in the forward pass only (the backward's unpermute reuses the
// map). Bytes per (token, expert) entry: the boolean map read and an int32 written
// (pass 1), the int32 read and written (pass 2), read and the dense map written
// (pass 3, 2E+1 int32s a token): 1 + 4 + 8 + 4 + 8 = 25. The all-to-all dispatcher
// permutes its n tokens over all E experts before the exchange; DeepEP's path in
// Megatron-Core permutes after it, over the tokens the device received and its local
// experts (MoEFlexTokenDispatcher's _DeepepManager.get_permuted_hidden_states_by_experts):
// n*D tokens by E/EP experts, D = EP*(1 - (1 - 1/EP)^k) the devices a token reaches
// (shape.unpermute).
func (sh *shape) rowIDMap(n float64) op {
	entries := n * sh.experts
	if sh.o.Dispatcher.flex() && sh.ep > 1 {
		entries = n * sh.ep * (1 - math.Pow(1-1/sh.ep, sh.k)) * sh.experts / sh.ep
	}
	return op{name: "permute row map", fwd: work{0, 25 * entries, 3}}
}

// auxLoss is the router's load-balancing loss (Options.MoEAuxLoss) over the n tokens at
// a mixture layer's input, in training, as Megatron-Core computes it with its fused
// router (moe_router_fusion, which Megatron-Bridge's performance scripts set for every
// mixture-of-experts recipe: scripts/performance/configs/qwen/qwen3_llm_pretrain.py,
// deepseek/deepseek_llm_pretrain.py and gpt_oss/gpt_oss_llm_pretrain.py at v0.3.0 and
// v0.3.1). TopKRouter.routing (megatron/core/transformer/moe/router.py, core_v0.15.0
// to core_v0.18.0) then runs, beside the routing itself:
//
//   - compute_routing_scores_for_aux_loss: Transformer Engine's
//     fused_score_for_moe_aux_loss, one kernel each pass (transformer_engine/pytorch/
//     csrc/extensions/router.cpp, v2.9 to v2.16: its forward reads the logits and
//     writes the scores, the routing map and an intermediate; its backward reads the
//     intermediate and the scores' gradient and writes the logits' gradient);
//   - the tokens per expert, routing_map.sum(dim=0): one kernel (all-reduced over the
//     tensor- and context-parallel group when that has more than one member, an NCCL
//     call priced as communication, shape.auxLossReduceSeconds);
//   - switch_load_balancing_loss_func: Transformer Engine's fused_moe_aux_loss, one
//     kernel each pass (its forward reads the scores; its backward writes their
//     gradient); with seq_aux_loss the loss is divided by the microbatch's sequences
//     (one kernel, and one for the division's gradient);
//   - the loss's logging (save_to_aux_losses_tracker, core_v0.15.0 to core_v0.17.0;
//     MoEMetricsTracker.record, core_v0.18.0): the loss divided by its coefficient and
//     added into the layer's slot, two kernels forward;
//   - MoEAuxLossAutoScaler, whose backward makes the loss's gradient,
//     torch.ones_like(aux_loss) * scale: two kernels;
//   - autograd's sum of the two gradients of the router's logits (the top-k's and the
//     loss scores'): one kernel.
//
// Five launches each pass, six with seq_aux_loss; in fp32 scores (4 bytes) and a
// boolean map, n x E elements: forward 4 + 4 + 1 + 4 (the score kernel) + 1 (the sum)
// + 4 (the loss) = 18 bytes an element, backward 4 (the loss's gradient) + 12 (the
// score kernel's) + 12 (the sum) = 28. Nothing without a loss, in inference, or for a
// dense model.
func (sh *shape) auxLoss(n float64) (op, bool) {
	if !sh.train || sh.experts == 0 || sh.o.MoEAuxLoss == "" || sh.o.MoEAuxLoss == AuxLossNone {
		return op{}, false
	}
	kernels := 5.0
	if sh.o.MoEAuxLoss == AuxLossSequence {
		kernels++
	}
	entries := n * sh.experts
	return op{name: "aux loss", fwd: work{0, 18 * entries, kernels}, bwd: work{0, 28 * entries, kernels}}, true
}

// topK is the router's score function and top-k selection over the n tokens at a
// mixture layer's input. Under Megatron-Core's spec (megatron, cuda-graphs) it is
// priced as the fused router runs it (moe_router_fusion, which Megatron-Bridge's
// performance scripts set for every mixture-of-experts recipe, v0.3.0 and v0.3.1; the
// same router shape.auxLoss prices): TopKRouter.routing calls
// topk_routing_with_score_function(..., fused=True) (megatron/core/transformer/moe/
// router.py and moe_utils.py, core_v0.15.0 to core_v0.18.0), Transformer Engine's
// fused_topk_with_score_function, one kernel each pass (transformer_engine/pytorch/
// csrc/extensions/router.cpp, v2.9 to v2.16: nvte_fused_topk_with_score_function_
// forward reads the logits and writes the probabilities, the routing map and the
// score function's output, kept for the backward; ..._backward reads the map, that
// output and the probabilities' gradient and writes the logits' gradient). In fp32 and
// a boolean map, n x E elements: forward 4 + 4 + 1 + 4 = 13 bytes an element, backward
// 1 + 4 + 4 + 4 = 13. Elsewhere (the model's own PyTorch code, Megatron-DeepSpeed's
// legacy layers) the unfused score function, top-k and scatter: three kernels each
// pass, 8 bytes an element forward.
func (sh *shape) topK(n float64) op {
	entries := n * sh.experts
	if sh.megatronCore {
		return op{name: "top-k", fwd: work{0, 13 * entries, 1}, bwd: work{0, 13 * entries, 1}}
	}
	return mem("top-k", 8*entries, 3)
}

// randomLogits is what Megatron-Core's forced load balancing (Options.MoEForceBalance,
// moe_router_force_load_balancing, which Megatron-Bridge's performance scripts set for
// every Qwen3, DeepSeek-V3 and gpt-oss-120b recipe from v0.2.2 to v0.5.1) runs on the n
// tokens at a mixture layer's input: TopKRouter.forward replaces the router's logits
// with apply_random_logits(logits), the autograd function RandomSTE
// (megatron/core/transformer/moe/moe_utils.py and router.py, core_v0.14.0 to
// core_v0.16.0), whose forward is logits.clone().normal_() under the expert-parallel
// RNG tracker's fork (a swap of the generator's state on the host, no kernel): a copy
// and a normal fill, two launches over the n x E fp32 logits (the copy reads and writes
// 4 bytes an element, the fill writes 4: 12 bytes); its backward returns the gradient
// as it is (straight through: nothing launched). The routing that follows is balanced
// in expectation (top-k of independent normal scores picks every expert alike), which
// Options.validate holds the request to (ExpertImbalance 1). In training and inference
// alike (the router's forward runs it either way); nothing without it or for a dense
// model.
func (sh *shape) randomLogits(n float64) (op, bool) {
	if !sh.o.MoEForceBalance || sh.experts == 0 {
		return op{}, false
	}
	return op{name: "random logits", fwd: work{0, 12 * n * sh.experts, 2}}, true
}

// auxLossReduceSeconds is the all-reduce of the tokens per expert that the router's
// load-balancing loss runs in the forward pass when the tensor-and-context-parallel
// group has more than one member: TopKRouter._apply_aux_loss and _apply_seq_aux_loss
// call get_tokens_per_expert_and_token_count(routing_map, reduce_group=tp_cp_group),
// which sums the E int64 counts (routing_map.sum(dim=0)) over the group with
// reduce_from_tensor_model_parallel_region, a no-op on a group of one
// (megatron/core/transformer/moe/router.py and moe_utils.py, core_v0.16.0; the same
// reduction over the same group in core_v0.15.0's aux_loss path). The routing map
// carries no gradient, so the backward pass has none. An NCCL ring all-reduce
// (cluster.RingAllReduceSeconds) of 8*E bytes among the t*c members, over the
// context-parallel link when c > 1 (the group then spans the context group's
// devices), else the tensor-parallel link: a small message, so mostly its latency.
// 0 without a loss (shape.auxLoss) or on a group of one.
func (sh *shape) auxLossReduceSeconds(t Target) float64 {
	members := int(sh.tp * sh.cp)
	if _, ok := sh.auxLoss(1); !ok || members <= 1 {
		return 0
	}
	link := t.tensorLink()
	if sh.cp > 1 {
		link = t.contextLink()
	}
	return cluster.RingAllReduceSeconds(link, 8*sh.experts, members)
}

// routingMapGatherSeconds is the forward pass's all-gather of the routing map that
// HybridEP runs before each dispatch, for n tokens at the device's input: its
// dispatch_with_permute, called without a handle (the forward's dispatch; the
// backward's replays the saved handle), gathers every rank's boolean n x E routing map
// over the expert-parallel group (torch.distributed.all_gather_into_tensor into a
// global map of n*EP x E bytes) for its metadata preprocessing kernel (deepseek-ai/DeepEP,
// deep_ep/hybrid_ep_buffer.py at commit 017a5202, HybridEPBuffer.dispatch_with_permute
// and dispatch; Megatron-Core's flex dispatcher calls it through fused_a2a.py's
// hybrid_ep_dispatch in the forward pass). An NCCL ring all-gather
// (cluster.RingAllGatherSeconds) of n*EP*E bytes among the EP members, over the
// network when the group spans nodes, else over the expert link inside the node. 0 for
// the other dispatchers or without expert parallelism.
func (sh *shape) routingMapGatherSeconds(t Target, n float64) float64 {
	if sh.o.Dispatcher != DispatchHybridEP || sh.ep <= 1 {
		return 0
	}
	return cluster.RingAllGatherSeconds(t.expertRingLink(sh.o.ExpertParallel), n*sh.experts*sh.ep, sh.o.ExpertParallel)
}

// hybridEPPreprocessing is HybridEP's metadata preprocessing kernel in the forward pass
// (HybridEPBuffer.dispatch_with_permute's runtime.metadata_preprocessing, the source
// routingMapGatherSeconds names): one launch that reads the gathered n*EP x E boolean
// routing map and writes the token maps the dispatch and combine kernels follow (not
// counted: a few int32s a token). Nothing backward (the handle is replayed) and nothing
// for the other dispatchers.
func (sh *shape) hybridEPPreprocessing(n float64) (op, bool) {
	if sh.o.Dispatcher != DispatchHybridEP || sh.ep <= 1 {
		return op{}, false
	}
	return op{name: "hybridep preprocessing", fwd: work{0, n * sh.experts * sh.ep, 1}}, true
}

// hybridEPPermutePreprocessing is what HybridEP launches in the forward pass, beside its
// metadata kernel, to turn the rows it will receive into the permute's row map and
// tokens per local expert: a cooperative kernel with two block-scan passes over the
// dispatched tokens' local routing map, and one small launch more. In deepseek-ai/DeepEP
// at commit 34152ae2 (the one Megatron-Bridge's docker/Dockerfile.ci pins,
// DEEPEP_COMMIT, v0.5.0 to v0.6.0): csrc/hybrid_ep/executor/executor.cu
// metadata_preprocess_core's permute_preprocessing (extension/permute.cu,
// cudaLaunchCooperativeKernel of permute_preprocessing_kernel) and
// pad_tokens_per_expert (pad_tokens_per_expert_kernel<<<1, E/EP>>>); at commit
// 017a5202 the same cooperative kernel (permute_processing) and a zeroed counter
// (torch::zeros, a fill launch). Two launches at either commit; the routing map read
// (1 byte an entry) and the int32 row map written (4), over the n*D rows the device
// receives by its E/EP experts, D = EP*(1 - (1 - 1/EP)^k) as shape.rowIDMap counts
// them for the flex dispatcher (which this replaces for HybridEP); the scans'
// workspaces not counted. Before the host's read, so not among the eager experts
// (moeHostSeconds). The host reads: one (the padded tokens per expert, after a
// cudaStreamSynchronize) at 34152ae2, two at 017a5202 (the dispatched count and the
// tokens per expert, .cpu()); one priced. Forward only: the backward replays the
// handle.
func (sh *shape) hybridEPPermutePreprocessing(n float64) op {
	entries := n * sh.ep * (1 - math.Pow(1-1/sh.ep, sh.k)) * sh.experts / sh.ep
	return op{name: "hybridep permute preprocessing", fwd: work{0, 5 * entries, 2}}
}

// mla is DeepSeek's multi-head latent attention (DeepSeek-V2 paper, section 2.1), as
// trained (the up-projections not absorbed): the norm; the query down-projection to
// QLoRARank with its norm and the up-projection to heads x (nope + rope), or one query
// projection without a rank; the joint key-value down-projection to KVLoRARank plus a
// shared rope key, its norm, and the up-projection to heads x (nope + v); rotary
// embedding; the attention core on queries and keys nope + rope wide and values v wide;
// the output projection; the residual. Flash attention only.
//
// With t-way tensor parallelism (Megatron-Core's MLASelfAttention) the up-projections
// and the output projection are split by heads; the down-projections and their norms
// are replicated. Saved for backward: the norm's input and output (the down-projections'
// input), the query latent and its norm's output, the key-value latent (with the rope
// key) and its norm's output, Q, K and V, the softmax statistics, the output projection's
// input and the mask.
func (sh *shape) mla(local bool) piece {
	a, e, t, h, hr := sh.a, sh.e, sh.t, sh.h, sh.hr
	heads := sh.heads
	dqk, dv := float64(a.HeadDim), float64(a.VHeadDim)
	qr, kvr, rope := float64(a.QLoRARank), float64(a.KVLoRARank), float64(a.QKRopeHeadDim)
	q, k, v := heads*dqk, heads*dqk, heads*dv // per device
	p := piece{params: shardParams(a.AttentionParams(), mlaSharded(a), sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: sh.normTensors() + 5, bwdGradSum: true} // the query and key-value down-projections
	p.ops = append(p.ops, sh.blockNorm("attention norm"))
	saved := 2*e*t*hr + e*t*h + sh.mask(t*hr)
	if qr > 0 {
		p.tensors += 2
		p.ops = append(p.ops, gathering(sh.linear("q down", t, h, qr)), mem("q norm", 2*e*t*qr, 1), withModule(sh.linear("q up", t, qr, q), ModMLAUpProj))
		saved += 2 * e * t * qr
	} else {
		p.ops = append(p.ops, gathering(sh.linear("q", t, h, q)))
	}
	p.ops = append(p.ops, gathering(sh.linear("kv down", t, h, kvr+rope)), mem("kv norm", 2*e*t*kvr, 1),
		withModule(sh.linear("kv up", t, kvr, heads*(float64(a.QKNopeHeadDim)+dv)), ModMLAUpProj), withModule(mem("rotary", 2*e*t*(heads+1)*rope, 2), ModMLAUpProj))
	saved += e*t*(kvr+rope) + e*t*kvr
	fa := 2 * sh.b * heads * sh.pairs(local) * (dqk + dv) // QK^T and PV
	io := e * t * (q + k + 2*v)
	p.ops = append(p.ops, op{name: "flash attention", core: true, fwd: work{fa, io, 1}, bwd: work{2.5 * fa, 2 * io, 2}})
	saved += e*t*(q+k+v) + 4*sh.b*heads*sh.s + e*t*v // Q, K, V, statistics, output proj. input
	p.ops = append(p.ops, scattering(sh.linear("output projection", t, v, h)), sh.residual())
	p.saved, p.bwdSaved = saved, saved
	sh.discard(&p, ModLayerNorm, e*t*hr)      // the norm's output, the down-projections' input
	sh.discard(&p, ModMLAUpProj, e*t*(q+k+v)) // Q, K and V after the up-projections and rotary
	if sh.fp8 != nil {
		// The projections run in fp8 (their saved inputs are counted at 16 bits here).
		p.fp8Weights, p.fp8GEMMs = float64(p.params), 4
		if qr > 0 {
			p.fp8GEMMs = 5
		}
	}
	p.bwdExtra = e * t * (q + k + v)
	p.inferExtra = e*t*h + e*t*(q+k+v) + e*t*v
	return p
}

// mlaSharded is the latent attention's parameters tensor parallelism splits: the query
// (up-)projection, the key-value up-projection and the output projection.
func mlaSharded(a *arch.Arch) int64 {
	h, heads := int64(a.HiddenSize), int64(a.NumHeads)
	qIn := int64(a.QLoRARank)
	if qIn == 0 {
		qIn = h
	}
	return qIn*a.QDim() + int64(a.KVLoRARank)*heads*int64(a.QKNopeHeadDim+a.VHeadDim) + a.VDim()*h
}

// mtp is the part of a multi-token prediction module (DeepSeek-V3 Technical Report,
// section 2.2) around its transformer block: the norms of the hidden state and of the
// next tokens' embeddings, their concatenation projected from 2h to h (tensor-parallel
// like a column projection); and after the block the norm and the shared output head's
// logits and loss (mtpHead), whose weights are the main head's.
func (sh *shape) mtpIn() piece {
	a, e, t, h, hr := sh.a, sh.e, sh.t, sh.h, sh.hr
	hh := int64(a.HiddenSize)
	p := piece{params: 2*sh.normParams() + shardParams(2*hh*hh, 2*hh*hh, sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: 2*sh.normTensors() + 1}
	p.ops = append(p.ops, sh.norm("mtp hidden norm"), sh.norm("mtp embedding norm"),
		mem("concat", 4*e*t*hr, 1), sh.linear("mtp projection", t, 2*h, h/sh.tp))
	saved := 4*e*t*hr + 2*e*t*h
	p.saved, p.bwdSaved = saved, saved
	p.inferExtra = 2 * e * t * h
	return p
}

// mlp is the MLP part of a dense block: norm, the MLP (of the dense width), residual.
//
// Saved for backward: the norm's input and the first projection's input (e*T*h each), the
// activation's input and the second projection's input (e*T*f each) for GELU, or for
// SwiGLU the gate and up outputs, the SiLU output and the down projection's input
// (4*e*T*f; 3*e*T*f where the framework fuses the SiLU and the product and keeps no SiLU
// output, cluster.Framework.FusedActivation), and the residual dropout mask (T*h). GPT's MLP (f = 4h, e = 2, dropout) gives
// 21*s*b*h: Korthikanti's 19sbh plus the norm's 2sbh.
//
// With t-way tensor parallelism the MLP's width is split (first projections
// column-parallel, the last row-parallel): the e*T*f tensors are divided by t, the
// norm's and the first projection's input and the mask are not (but are with sequence
// parallelism). One all-reduce forward, one backward.
func (sh *shape) mlp() piece {
	a, e, t, h, f, hr := sh.a, sh.e, sh.t, sh.h, sh.fd, sh.hr
	p := piece{params: shardParams(a.DenseMLPParams(), denseSharded(a), sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, module: ModMLP, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: sh.normTensors() + mlpTensors(a), bwdGradSum: a.GatedMLP()}
	norm, fusedNorm := sh.fusedBlockNorm("mlp norm")
	p.ops = append(p.ops, norm)
	ge := sh.ge                                // a product's saved input: 8 bits with fp8
	common := e*t*hr + ge*t*hr + sh.mask(t*hr) // norm input, first projection's input, mask
	if a.GatedMLP() {
		if sh.fusedFC1 {
			p.ops = append(p.ops, gathering(sh.oneFC1("fc1", t, h, f)))
		} else {
			p.ops = append(p.ops, gathering(sh.linear("gate", t, h, f)), gathering(sh.linear("up", t, h, f)))
		}
		if sh.fusedAct {
			// One kernel reads gate and up and writes their product; its backward
			// recomputes the SiLU from the gate it kept.
			p.ops = append(p.ops, mem("fused silu x up", 3*e*t*f, 1))
			common += 2 * e * t * f
		} else {
			p.ops = append(p.ops, mem("silu", 2*e*t*f, 1), mem("gate x up", 3*e*t*f, 1))
			common += 3 * e * t * f // gate, up and SiLU outputs
		}
		p.ops = append(p.ops, scattering(sh.linear("down", t, f, h)))
		common += ge * t * f // the down projection's input
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = 3*h*f, 3
			if sh.fusedFC1 {
				p.fp8GEMMs = 2 // linear_fc1 and linear_fc2
			}
		}
		p.bwdExtra = 2 * e * t * f
		p.inferExtra = e*t*h + 3*e*t*f
	} else {
		p.ops = append(p.ops, gathering(sh.linear("fc1", t, h, f)), sh.eagerMem("gelu", sh.eagerActivation(), t*f, 2*e*t*f, 1), scattering(sh.linear("fc2", t, f, h)))
		common += e*t*f + ge*t*f // the activation's input; the second projection's input
		if k := sh.geluNewSaved(); k > 0 {
			common = e*t*hr + ge*t*hr + sh.mask(t*hr) + k*t*f
		}
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = 2*h*f, 2
		}
		p.bwdExtra = 2 * e * t * f
		p.inferExtra = e*t*h + 2*e*t*f
	}
	p.ops = append(p.ops, sh.residual())
	p.saved, p.bwdSaved = common, common
	if !fusedNorm {
		sh.discard(&p, ModLayerNorm, ge*t*hr) // the norm's output, the first projections' input
	}
	nb, xb := sh.mlpHookTensors(1, f)
	sh.addMainGradAdds(&p, sh.normTensors()+nb, float64(sh.normTensors())*h+xb)
	fc1 := f
	if a.GatedMLP() {
		fc1 = 2 * f
	}
	p.mcore = megatronTensors(p.params, sh.normTensors()+nb, float64(sh.normTensors())*h+xb, fc1, f)
	p.eager, p.eagerCounted = sh.eagerMLP()
	return p
}

// moe is the MLP part of a mixture-of-experts block: norm, router, the routed experts
// (and the shared ones), residual, with expert parallelism.
//
// Tokens. With T = b*s tokens per microbatch and replica, a device holds n of them at the
// mixture's input: T, or T/t with sequence parallelism. The router picks k of E experts
// per token; the expert-parallel group of EP x ETP devices (Options) holds E/EP experts
// per device, each split ETP ways. Across the devices of a replica's stage the routed
// work is T*k token-expert pairs, so under balanced routing each device computes the
// share A = (T/t)*k*L at full width (L the busiest device's load over the mean,
// Options.expertLoad), that is ETP*A rows (gathered over the expert-tensor group) on its
// E/EP experts of width f/ETP: FLOPs 6*h*f*A forward (three projections), whatever EP and
// ETP are. With EP = 1 and ETP = t, the layout Megatron-LM uses without expert
// parallelism, this is every expert split t ways on the microbatch's T tokens.
//
// Communication. With EP > 1 each device sends its n*k token copies (e*h bytes each) to
// the devices of their experts and gets the outputs back: a dispatch and a combine
// all-to-all in each pass, of e*h*n*k*L bytes at the busiest device, priced by
// cluster.HierarchicalAllToAllSeconds over the target's expert links. With ETP > 1 and tokens not
// already replicated over the group, the ETP*A received rows are all-gathered before
// the experts and reduce-scattered after (a ring all-reduce's cost of e*h*ETP*A bytes
// over the tensor link) in each pass. Tensor parallelism without sequence parallelism
// (tokens replicated over the t devices, EP = 1, ETP = t) all-reduces the output once in
// each pass as a dense MLP does; with sequence parallelism, EP = 1 and ETP = t the
// tokens are all-gathered before routing and reduce-scattered after (the same cost,
// Megatron-Core's allgather dispatcher). Shared experts are tensor-parallel dense MLPs
// on the stage's tokens.
//
// Saved for backward: the norm's and router's input (e*n*h each), the router's fp32
// probabilities (4*n*E), the experts' gathered inputs and their outputs before weighting
// (e*h*ETP*A each), the SwiGLU tensors (4*e*f*A), the shared experts' SwiGLU tensors
// (4*e*T*fs/t) and the dropout mask: the activations follow the tokens each device
// receives.
func (sh *shape) moe(c *calc) piece {
	a, e, T, h, hr := sh.a, sh.e, sh.t, sh.h, sh.hr
	n := T * hr / h                          // tokens at the mixture's input on this device
	local := sh.experts / sh.ep              // experts on this device
	fl := float64(a.IntermediateSize) / sh.x // an expert's width on this device
	A := T / sh.tp * sh.k * sh.load          // routed pairs computed, at full width
	g := sh.x * A                            // rows the local experts run, h wide
	te := g / local                          // rows per local expert
	expert := int64(local) * shardParams(a.ExpertParams(), expertSharded(a), sh.x)
	shared := shardParams(a.SharedExpertParams(), 3*int64(a.HiddenSize)*int64(a.SharedExpertSize), sh.tp)
	p := piece{params: int64(sh.normTensors())*int64(a.HiddenSize) + a.RouterParams() + expert + shared, expertParams: expert,
		input: e * n * h, output: e * n * h, recomputable: true, module: ModMoE, bwdGradSum: true,
		tensors: sh.normTensors() + mlpTensors(a)*int(local) + routerTensors(a) + sharedTensors(a)}
	replicated := sh.tp > 1 && !sh.o.SequenceParallel // tokens whole on every device of a TP group
	gatherFirst := sh.o.SequenceParallel && sh.tp > 1 && sh.ep == 1 && sh.x == sh.tp
	if replicated || gatherFirst {
		p.fwdAllReduces, p.bwdAllReduces = 1, 1
	} else {
		if sh.fs > 0 && sh.tp > 1 {
			p.fwdAllReduces, p.bwdAllReduces = 1, 1 // the shared experts' gather and scatter
		}
		comm := 0.0
		if sh.ep > 1 {
			comm += sh.dispatchSeconds(c.target, n)
		}
		if sh.x > 1 {
			comm += cluster.RingAllReduceSeconds(c.target.tensorLink(), e*h*g, sh.o.ExpertTensorParallel)
		}
		fwdMeta, bwdMeta := sh.alltoallMetadataSeconds(c.target, n)
		p.fwdExpertComm = comm + fwdMeta + sh.routingMapGatherSeconds(c.target, n)
		p.bwdExpertComm = comm + bwdMeta
	}
	p.ops = append(p.ops, sh.blockNorm("mlp norm"),
		sh.linear16("router", n, h, sh.experts))
	if o, ok := sh.randomLogits(n); ok {
		p.ops = append(p.ops, o)
	}
	p.ops = append(p.ops, sh.topK(n))
	if o, ok := sh.auxLoss(n); ok {
		p.ops = append(p.ops, o)
		p.fwdAuxReduce = sh.auxLossReduceSeconds(c.target)
	}
	if o, ok := sh.hybridEPPreprocessing(n); ok {
		p.ops = append(p.ops, o, sh.hybridEPPermutePreprocessing(n))
	}
	// Megatron-style, the permute and the activation run once over all the local
	// experts' rows (perTensor: 1/local of a launch per expert; wholeTensor); eager
	// code (HuggingFace's expert loop) runs them expert by expert.
	perTensor, fused := 1.0, sh.o.ExpertFusedMLP
	if sh.fusedAct || fused {
		perTensor = 1 / local
	}
	act := []op{withModule(mem("silu", 2*e*te*fl, perTensor), ModMoEAct), withModule(mem("gate x up", 3*e*te*fl, perTensor), ModMoEAct)}
	kept := 3.0 // gate, up and SiLU outputs, per routed row of an expert's width
	if sh.fusedAct {
		act, kept = []op{withModule(mem("fused silu x up", 3*e*te*fl, perTensor), ModMoEAct)}, 2
	}
	if a.GLUClamp {
		act = append([]op{withModule(wholeTensor(gluClamp(e, te*fl), 1/perTensor), ModMoEAct)}, act...)
	}
	down := sh.linear("down", te, fl, h)
	fc1 := []op{sh.linear("gate", te, h, fl), sh.linear("up", te, h, fl)}
	if sh.fusedFC1 || sh.fusedAct || fused {
		fc1 = []op{sh.oneFC1("fc1", te, h, fl)} // TEGroupedMLP's grouped linear_fc1
	}
	if fused {
		fc1[0], down, act, kept = fusedExpertMLP(fc1[0], down)
	}
	if sh.fp8 != nil && sh.o.FP8Recipe == Delayed && (sh.fusedAct || fused) {
		for i := range fc1 {
			fc1[i] = groupedCast(fc1[i], local)
		}
		down = groupedCast(down, local)
	}
	if sh.fusedAct || fused {
		for i := range fc1 {
			fc1[i] = groupedSwizzle(fc1[i], local)
		}
		down = groupedSwizzle(down, local)
	}
	perExpert := append(append([]op{mem("gather", 2*e*te*h, perTensor)}, fc1...), act...)
	perExpert = append(perExpert, down)
	if a.MLPBias && sh.fusedAct && !fused {
		// The fused grouped MLP returns before TEGroupedMLP._apply_bias
		// (megatron/core/transformer/moe/experts.py, core_v0.18.0: forward's
		// _with_fused_impl branch); its te.pytorch.ops.GroupedLinear for fc2 takes the
		// bias (_make_fused_ops, bias=linear_fc2.use_bias), which Transformer Engine
		// hands cuDNN's grouped GEMM as its epilogue's bias_tensor (ops/fused/
		// forward_grouped_mlp.py, v2.16): no kernel of its own, as fc1's bias.
		perExpert = append(perExpert, expertOutputBias(e, sh.routedProbBytes(), te*h, local))
	}
	if sh.fusedAct || fused {
		perExpert = append(perExpert, sh.unpermute(te*h, local))
	} else {
		perExpert = append(perExpert, mem("weight and scatter", 3*e*te*h, 2))
	}
	if sh.ep > 1 && local > 1 && !sh.o.Dispatcher.flex() {
		// Megatron-Core's all-to-all dispatcher receives its rows grouped by source device
		// and regroups them by local expert before the experts (sort_chunks_by_idxs), and
		// back before the combine: a read and a write of the g received rows each way
		// (megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher).
		// The flex dispatcher's backends (DeepEP, HybridEP) hand the experts their rows
		// grouped by local expert already (their permute is the gather above): no
		// sort_chunks_by_idxs in MoEFlexTokenDispatcher.
		// Each of the two sorts is Transformer Engine's fused chunk sort (moe_utils.py's
		// sort_chunks_by_idxs with moe_permute_fusion: fused_sort_chunks_by_index, whose
		// forward runs make_chunk_sort_map and sort_chunks_by_map, two Triton kernels, and
		// whose backward replays the map in one; transformer_engine/pytorch/triton/
		// permutation.py at commit 20deb83e35): four launches forward, two backward.
		sort := mem("sort chunks", 4*e*te*h, 4/local)
		sort.bwd.kernels = 2 / local
		perExpert = append(perExpert, sort)
	}
	if (sh.fusedAct || fused) && sh.o.Dispatcher != DispatchHybridEP && sh.ep > 1 {
		// The fused permute's routing map (rowIDMap), once for all the local experts:
		// each expert's share of its bytes and launches.
		perExpert = append(perExpert, sh.rowIDMap(n).times(1/local))
	}
	if sh.o.CapacityFactor == 0 {
		p.eagerFrom, p.eagerTo = len(p.ops), len(p.ops)+len(perExpert)
	}
	for _, o := range perExpert {
		// One grouped product over the local experts (Megatron-Core's TEGroupedMLP,
		// Transformer Engine's GroupedLinear): their tiles share the multiprocessors.
		// Transformer Engine (v2.9 to v2.16) runs it, outside the fused grouped MLP, as
		// one cuBLAS GEMM per expert round-robin on four compute streams
		// (nvte_multi_tensor_gemm's multi_stream_cublas_gemm; CUTLASS's grouped kernel
		// only on Hopper under NVTE_USE_CUTLASS_GROUPED_GEMM), whose concurrent calls
		// fill one another's last waves: priced as pooled tiles, one launch an expert
		// (TestGroupedLinearPerExpertCalls bounds the difference).
		o.gemm.groups *= local
		p.ops = append(p.ops, o.times(local))
		p.extraFLOPs += o.fwd.flops * local * (1 - 1/sh.load)
	}
	// Saved: the norm's and the router's input, the mask, the router's probabilities; per
	// routed row the experts' input (8 bits with fp8) and output before weighting, the
	// activation's tensors and the down projection's input (8 bits with fp8).
	//
	// Megatron-style (the fused activation): Megatron-Core's TEGroupedMLP multiplies each
	// routed row by its probability inside the activation (weighted_bias_swiglu_impl,
	// weighted_bias_quick_geglu_impl) and the combine unpermutes without probabilities
	// ("Memory efficient token permutation", Megatron-LM commit 2659630721, April 2025,
	// in Megatron-Core 0.13; megatron/core/transformer/moe/experts.py and
	// token_dispatcher.py), so the experts' outputs before weighting are not kept for the
	// router's gradient: an fp32 probability per routed row is kept in their place.
	ge := sh.ge
	weighted := e * g * h // the experts' outputs, kept for the probabilities' gradient
	if sh.fusedAct || fused {
		weighted = 4 * g
	}
	if a.GLUClamp && !fused {
		kept += 2 // the clamp's input (its gradient's mask) beside the activation's
	}
	common := 2*e*n*h + sh.mask(n*h) + 4*n*sh.experts + ge*g*h + weighted + (kept*e+ge)*A*float64(a.IntermediateSize)
	if sh.fp8 != nil {
		p.fp8Weights, p.fp8GEMMs = float64(expert), float64(len(fc1)+1)*local
	}
	p.bwdExtra = 2*e*A*float64(a.IntermediateSize) + e*g*h
	p.inferExtra = e*n*h + 2*e*g*h + 3*e*A*float64(a.IntermediateSize)
	if fs := sh.fs; fs > 0 {
		shared := []op{sh.linear("shared gate", T, h, fs), sh.linear("shared up", T, h, fs)}
		if sh.fusedFC1 || sh.fusedAct {
			shared = []op{sh.oneFC1("shared fc1", T, h, fs)} // SharedExpertMLP is Megatron-Core's MLP
		}
		sharedFC1 := float64(len(shared))
		shared = append(shared, mem("shared silu", 2*e*T*fs, 1), mem("shared gate x up", 3*e*T*fs, 1), sh.linear("shared down", T, fs, h))
		if a.SharedExpertGate {
			shared = append(shared, sh.linear("shared expert gate", T, h, 1))
		}
		for _, o := range shared {
			p.ops = append(p.ops, withModule(o, ModSharedExperts))
		}
		common += 4 * e * T * fs
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = p.fp8Weights+3*h*fs, p.fp8GEMMs+sharedFC1+1
		}
		p.bwdExtra += 2 * e * T * fs
		p.inferExtra += 3 * e * T * fs
	}
	p.ops = append(p.ops, sh.residual())
	p.saved, p.bwdSaved = common, common
	sh.discard(&p, ModLayerNorm, e*n*h)                         // the norm's output, the router's input
	sh.discard(&p, ModMoEAct, ge*A*float64(a.IntermediateSize)) // the activation's output, the down projection's input
	if a.GLUClamp && !fused {
		sh.discard(&p, ModMoEAct, 2*e*A*float64(a.IntermediateSize)) // the clamped copy the activation keeps
	}
	sh.discard(&p, ModSharedExperts, 4*e*T*sh.fs) // the shared experts' activations
	// The hook's adds: the norm, the router's weight (and bias), the shared experts'
	// gate (a plain parameter, sharedTensors), the local experts' biases.
	nb, xb := sh.mlpHookTensors(local, fl)
	nb, xb = nb+sh.normTensors()+routerTensors(a), xb+float64(sh.normTensors())*h+float64(a.RouterParams())
	if a.SharedExpertGate && sh.fs > 0 {
		nb, xb = nb+1, xb+h
	}
	sh.addMainGradAdds(&p, nb, xb)
	p.eager, p.eagerCounted = sh.eagerMoE(local, g)
	return p
}

// embedding looks up tokens (and positions, token types) and, for BERT, normalises.
// It keeps the token ids (int64) for the backward pass, which scatters gradients into a
// dense V x h gradient. With tensor parallelism the token matrix is split by vocabulary
// (Megatron-LM's VocabParallelEmbedding): each device looks up its rows, and one
// all-reduce in the forward pass completes the lookup.
func (sh *shape) embedding() piece {
	a, e, t, h, hr := sh.a, sh.e, sh.t, sh.h, sh.hr
	p := piece{params: a.EmbeddingParams() - a.EmbeddingWeightParams(), output: e * t * hr, tensors: 1}
	if a.LearnedPositions() {
		p.tensors++
	}
	if a.Family == arch.BERT {
		p.tensors += 1 + sh.normTensors() // token types, embedding norm
	}
	if sh.tp > 1 {
		p.fwdAllReduces = 1
	}
	p.input = 8 * t
	if a.Family == arch.BERT {
		p.input += 8 * t // token type ids
	}
	gather := mem("token lookup", 2*e*t*h+8*t, 1)
	gather.bwd = work{0, e*sh.v*h + 2*e*t*h + 8*t, 3} // zero and scatter-add into V x h
	if g := sh.o.perParam().grad; sh.mainGrads && sh.train && g > 0 {
		// Megatron-Core's backward hook adds the V x h gradient to the main_grad buffer:
		// it reads both and writes the buffer (cluster.Framework.MainGradBuffer).
		gather.bwd.bytes += (2*g + e) * sh.v * h
		gather.bwd.kernels++
	}
	p.ops = append(p.ops, gather)
	if a.EmbeddingScale {
		// Gemma's hidden_states * normalizer (sqrt(h), a constant): one kernel reading and
		// writing the embedding's output each way, nothing kept (GemmaModel.forward).
		p.ops = append(p.ops, op{name: "embedding scale", fwd: work{0, 2 * e * t * h, 1}, bwd: work{0, 2 * e * t * h, 1}})
	}
	saved := p.input
	if a.LearnedPositions() {
		p.ops = append(p.ops, mem("position lookup", 2*e*t*h, 1), mem("add", 3*e*t*h, 1))
	}
	if a.Family == arch.BERT {
		p.ops = append(p.ops, mem("token type lookup", 2*e*t*h, 1), mem("add", 3*e*t*h, 1), sh.norm("embedding norm"))
		saved += e * t * h
	}
	if sh.drop {
		p.ops = append(p.ops, mem("dropout", (2*e+1)*t*hr, 1))
		saved += t * hr
	}
	p.saved, p.bwdSaved = saved, saved
	p.inferExtra = e * t * h
	return p
}

// finalNorm is the norm after the last block (GPT-2, Llama).
func (sh *shape) finalNorm() piece {
	x := sh.e * sh.t * sh.hr
	p := piece{params: sh.a.FinalNormParams(), ops: []op{sh.norm("final norm")},
		saved: x, bwdSaved: x, input: x, output: x, tensors: sh.normTensors()}
	sh.addMainGradAdds(&p, sh.normTensors(), float64(sh.a.FinalNormParams()))
	return p
}

// head is the LM head with the loss: (BERT's transform,) the vocabulary projection, and
// cross-entropy computed in fp32 as frameworks do (HuggingFace upcasts the logits): the
// 16-bit logits (e*T*V), their fp32 copy (4*T*V) and the fp32 log-probabilities (4*T*V)
// live at once in the forward pass; the log-probabilities stay for the backward pass,
// which holds their gradient and the logits' fp32 gradient beside them (12*T*V at its
// peak), and, where the training loop keeps the model's output (HuggingFace models
// return the logits with the loss), the 16-bit logits too. A fused loss kernel
// (cluster.Framework.FusedCrossEntropy) keeps the 16-bit logits instead, and writes
// their gradient over them or, flash-attn's, to a new 16-bit tensor (e*T*V held in the
// backward pass; CrossEntropyGradCopy). The output is the loss (a 4-byte scalar). In inference the output is the logits.
//
// With tensor parallelism the projection is split by vocabulary (each device computes
// the logits and the cross-entropy terms of its V/t words, Megatron-LM's
// vocab-parallel cross-entropy); its input's gradient is all-reduced in the backward pass.
func (sh *shape) head() piece {
	a, e, t, h, v, hr := sh.a, sh.e, sh.t, sh.h, sh.v, sh.hr
	params := a.HeadParams()
	if !a.TiedEmbeddings {
		params += int64(sh.v)*int64(a.HiddenSize) - a.EmbeddingWeightParams()
	}
	if a.Family == arch.BERT {
		params += int64(sh.v) - int64(a.VocabSize) // the decoder's bias
	}
	p := piece{params: params, input: e * t * hr}
	if !a.TiedEmbeddings {
		p.tensors++
	}
	if a.Family == arch.BERT {
		p.tensors += 3 + sh.normTensors() // transform weight and bias, norm, decoder bias
	}
	if sh.tp > 1 {
		p.bwdAllReduces = 1
	}
	saved := e * t * hr // the projection's input
	if a.Family == arch.BERT {
		p.ops = append(p.ops, sh.linear16("transform", t, h, h), mem("gelu", 2*e*t*h, 1), sh.norm("transform norm"))
		saved += 3 * e * t * h
	}
	p.ops = append(p.ops, sh.linear16("logits", t, h, v))
	if !sh.train {
		p.output = e * t * v
		p.inferExtra = e * t * h
		return p
	}
	if m := sh.trainMetrics(); m.bwd.kernels > 0 {
		p.ops = append(p.ops, m)
	}
	if sh.vocabParallelCE {
		// Megatron-LM's vocab-parallel cross-entropy without its fusion
		// (_VocabParallelCrossEntropy, megatron/core/tensor_parallel/cross_entropy.py at
		// core_r0.8.0), per logit: the forward casts the logits to fp32 (e read, 4
		// written), takes the row's maximum (4 read), subtracts it in place (4 and 4),
		// exponentiates in place (4 and 4), sums the row (4 read) and divides by the sum
		// in place (4 and 4): 38 bytes in 16 bits, six kernels, keeping the fp32 softmax
		// for the backward pass. The backward pass subtracts one at each token's target
		// (one element a token), scales the softmax by the loss's gradient in place (4
		// and 4) and, as the cast's backward, writes the gradient in 16 bits (4 read, e
		// written): 14 bytes, three kernels. The few kernels per token around them (the
		// target's mask, gather and logarithm) move no logits and are not counted. The
		// 16-bit logits live beside their fp32 copy in the forward pass, the 16-bit
		// gradient beside the fp32 one in the backward (and, where the training loop
		// keeps them, the returned logits).
		p.ops = append(p.ops, op{name: "cross entropy (vocab-parallel)",
			fwd: work{0, (e+4)*t*v + 4*t*v + 8*t*v + 8*t*v + 4*t*v + 8*t*v, 6},
			bwd: work{0, 8*t*v + (4+e)*t*v + 8*t, 3}})
		p.output = 4
		saved += 4 * t * v
		p.saved, p.bwdSaved = saved, saved
		p.fwdExtra = e * t * v
		p.bwdExtra = e * t * v
		if sh.keepLogits {
			p.bwdExtra += e * t * v
		}
		return p
	}
	if sh.lossParallelCE {
		// PyTorch's loss parallelism (torch/distributed/tensor/parallel/loss.py,
		// unchanged in what it allocates from its first version, PyTorch 2.3, to 2025),
		// on the fp32 logits torchtitan's loss_fn makes (train.py at 9dec370:
		// cross_entropy(pred.flatten(0, 1).float(), labels)), per logit of the device's
		// V/t words. Forward: the cast (e read, 4 written); _log_softmax's row maximum
		// (4 read), shifted = x - max (4 and 4), exp(shifted) (4 and 4, freed once
		// summed), its row sum (4 read) and result = shifted - log(sum) (4 and 4), kept
		// for the backward pass: six kernels, e + 36 bytes. While exp(shifted) or the
		// result is written, the 16-bit logits, their fp32 copy and shifted are held
		// beside it: e + 12 bytes a logit, the kept 4 among them. Backward:
		// _nll_loss_and_log_softmax_backward writes grad_input = zeros_like(x) (4),
		// exp(x) of the kept result (4 and 4), their sum (8 and 4) and the sum times
		// the loss's gradient (4 and 4); _log_softmax_backward_handler only returns
		// it, and the cast's backward writes it in 16 bits (4 and e): six kernels,
		// e + 36 bytes. At the sum (and again at the product) the kept result, the
		// zeros, exp(x) (the sum) and the new tensor are held at once: 16 bytes a
		// logit, the kept 4 among them, where PyTorch's fused log_softmax_backward
		// holds 12 (the unfused kind below).
		//
		// The loss needs the logits as a vocabulary-sharded DTensor: torchtitan's output
		// layer is ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1))
		// (parallelisms/parallelize_llama.py, apply_tp, at 9dec370), whose input hook
		// all-gathers a sequence-parallel input before the product, so the product keeps
		// the gathered input (e*T*h), not its shard (e*T*h/t; Megatron-LM's
		// sequence-parallel linear keeps the shard and gathers again in the backward).
		if sh.tp > 1 && hr < h {
			saved += e * t * (h - hr)
		}
		p.ops = append(p.ops, op{name: "cross entropy (loss-parallel)",
			fwd: work{0, (e+4)*t*v + 4*t*v + 8*t*v + 8*t*v + 4*t*v + 8*t*v, 6},
			bwd: work{0, 4*t*v + 8*t*v + 12*t*v + 8*t*v + (4+e)*t*v, 6}})
		p.output = 4
		saved += 4 * t * v
		p.saved, p.bwdSaved = saved, saved
		p.fwdExtra = (e + 8) * t * v // 16-bit logits, fp32 copy, shifted
		p.bwdExtra = 12 * t * v      // zeros, exp(x) or the sum, the new tensor
		if sh.keepLogits {
			p.bwdExtra += e * t * v
		}
		return p
	}
	if sh.fusedCE && sh.ceGradCopy {
		// flash-attn's kernel: the forward pass reads the logits twice (each row's
		// maximum, then its log-sum-exp and loss) and keeps them with the log-sum-exps
		// (4 bytes a token); the backward pass reads them again and writes their
		// gradient to a new 16-bit tensor. The logits the model returns are the tensor
		// the loss keeps: nothing more is held for them.
		p.ops = append(p.ops, op{name: "fused cross entropy",
			fwd: work{0, 2*e*t*v + 8*t, 1}, bwd: work{0, 2*e*t*v + 4*t, 1}})
		p.output = 4
		saved += e*t*v + 4*t
		p.saved, p.bwdSaved = saved, saved
		p.bwdExtra = e * t * v // the logits' gradient
		return p
	}
	if sh.fusedCE {
		// One kernel reads the logits twice (the row's maximum and sum, then the loss)
		// and overwrites them with their gradient, kept for the backward pass, which
		// scales it by the loss's gradient in place (a read and a write).
		p.ops = append(p.ops, op{name: "fused cross entropy",
			fwd: work{0, 3*e*t*v + 8*t, 1}, bwd: work{0, 2 * e * t * v, 1}})
		p.output = 4
		saved += e * t * v
		p.saved, p.bwdSaved = saved, saved
		return p
	}
	p.ops = append(p.ops, op{name: "cross entropy",
		fwd: work{0, (e+4)*t*v + 8*t*v + 8*t, 3},
		bwd: work{0, 4*t*v + 12*t*v + (4+e)*t*v, 3}})
	p.output = 4
	saved += 4 * t * v
	p.saved, p.bwdSaved = saved, saved
	p.fwdExtra = (e + 4) * t * v // 16-bit logits and their fp32 copy
	p.bwdExtra = 8 * t * v       // gradients of the log-probabilities and of the logits
	if sh.keepLogits {
		p.bwdExtra += e * t * v // the logits returned with the loss, still referenced
	}
	return p
}

// trainMetrics is the training metrics' work per microbatch (Options.TrainMetrics), and
// an empty op without them. MosaicML Composer's Trainer (composer/trainer/trainer.py,
// v0.17.2: _train_microbatch calls _eval_train_metrics after each microbatch's backward
// pass) updates every training metric with the microbatch's logits under the run's
// precision context; Composer's LanguageCrossEntropy (composer/metrics/nlp.py, and
// LanguagePerplexity, its subclass) sums torch.nn.CrossEntropyLoss over the logits, and
// under torch.autocast cross_entropy runs in fp32 (autocast's float32 list). So each
// metric is the forward pass of the unfused loss (head): the logits cast to fp32 (e
// read, 4 written), log_softmax (4 and 4) and the target's gather (8 bytes a token),
// three kernels, with nothing kept: priced in the backward pass, after which it runs.
// Its fp32 temporaries (8 bytes a logit, beside the logits Composer still holds) live
// after the backward pass, when the microbatch's activations are gone, and are not
// counted in the memory.
func (sh *shape) trainMetrics() op {
	n := float64(sh.o.TrainMetrics)
	if !sh.train || n <= 0 {
		return op{}
	}
	e, t, v := sh.e, sh.t, sh.v
	return op{name: "training metrics", bwd: work{0, n * ((e+4)*t*v + 8*t*v + 8*t), 3 * n}}
}

// autocast adds what PyTorch AMP (precision amp) does to a piece whose products use
// weights matrix weights held in fp32: torch.autocast casts each to 16 bits once per
// forward pass (one kernel per weight tensor, 4 bytes read and 2 written per element),
// and the product saves the 16-bit copy for the backward pass (2 bytes per element kept
// with the activations, until the piece's backward pass); the backward pass casts the
// weights' 16-bit gradients to fp32 (2 read, 4 written). No effect otherwise.
func (sh *shape) autocast(p *piece, weights float64, tensors int) {
	if sh.o.Precision != AMP || !sh.train || weights == 0 {
		return
	}
	n := float64(max(1, tensors))
	p.ops = append(p.ops, op{name: "autocast weights", fwd: work{0, 6 * weights, n}, bwd: work{0, 6 * weights, n}})
	p.saved += sh.e * weights
	p.bwdSaved += sh.e * weights
}

// normTensors is a norm's parameter tensors: RMSNorm's weight, or LayerNorm's weight
// and bias.
func (sh *shape) normTensors() int {
	if sh.a.RMSNorm() || sh.a.NoNormBias {
		return 1
	}
	return 2
}

// normParams is one norm's parameters (RMSNorm's weight, or LayerNorm's weight and
// bias), replicated under tensor parallelism.
func (sh *shape) normParams() int64 { return int64(sh.normTensors()) * int64(sh.a.HiddenSize) }

// fusedQKV reports whether Q, K and V are one matrix: GPT-2's c_attn, MPT's Wqkv.
func fusedQKV(a *arch.Arch) bool { return a.Family == arch.GPT2 || a.Family == arch.MPT }

// attentionTensors counts the projections' weights and biases: GPT-2 and MPT fuse Q, K
// and V into one matrix; the others keep three.
func attentionTensors(a *arch.Arch) int {
	qkv := 3
	if fusedQKV(a) {
		qkv = 1
	}
	n := qkv + 1
	if a.QKVBias {
		n += qkv
	}
	if a.OutBias {
		n++
	}
	return n
}

// mlpTensors counts one MLP's (or one expert's) weights and biases.
func mlpTensors(a *arch.Arch) int {
	n := 2
	if a.GatedMLP() {
		n = 3
	}
	if a.MLPBias {
		n *= 2
	}
	return n
}

// routerTensors counts the router's weight and bias.
func routerTensors(a *arch.Arch) int {
	if a.RouterBias {
		return 2
	}
	return 1
}

// sharedTensors counts the shared experts' projections and gate.
func sharedTensors(a *arch.Arch) int {
	switch {
	case a.SharedExpertSize == 0:
		return 0
	case a.SharedExpertGate:
		return 4
	}
	return 3
}

// vocabShard is the vocabulary rows one device holds: V/t, rounded up (Megatron-LM pads
// the vocabulary to a multiple of t).
func vocabShard(a *arch.Arch, o Options) int64 {
	t := int64(o.TensorParallel)
	return (int64(a.VocabSize) + t - 1) / t
}

// shardParams is what one device of a t-way tensor-parallel group holds of a part with
// total parameters, of which sharded are split (t divides them) and the rest replicated.
func shardParams(total, sharded int64, t float64) int64 {
	if t == 1 {
		return total
	}
	return total - sharded + sharded/int64(t)
}

// attentionSharded is the attention part's parameters that tensor parallelism splits:
// the four projections and the QKV bias (the output bias and the norm are replicated).
func attentionSharded(a *arch.Arch) int64 {
	h, q, kv := int64(a.HiddenSize), a.QDim(), a.KVDim()
	n := h*(q+2*kv) + q*h
	if a.QKVBias {
		n += q + 2*kv
	}
	return n
}

// mlpSharded is what tensor parallelism splits of one MLP of width f: every projection
// and the biases of the column-parallel ones (the last projection's bias is
// replicated).
func mlpSharded(a *arch.Arch, f int64) int64 {
	h := int64(a.HiddenSize)
	var n int64
	if a.GatedMLP() {
		n = 3 * h * f
		if a.MLPBias {
			n += 2 * f
		}
	} else {
		n = 2 * h * f
		if a.MLPBias {
			n += f
		}
	}
	return n
}

// denseSharded is a dense block's MLP part that tensor parallelism splits (the norm is
// replicated).
func denseSharded(a *arch.Arch) int64 { return mlpSharded(a, int64(a.DenseWidth())) }

// expertSharded is one routed expert's part that expert tensor parallelism splits.
func expertSharded(a *arch.Arch) int64 { return mlpSharded(a, int64(a.IntermediateSize)) }

// fusedExpertMLP is one expert's gate, up and down products (shape.linear, fp8) as
// Transformer Engine's fused grouped MLP runs them (Options.ExpertFusedMLP;
// transformer_engine/pytorch/ops/fused: ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8 and its
// backward, on cuDNN frontend's grouped_gemm_swiglu_wrapper_sm100 and
// grouped_gemm_dswiglu_wrapper_sm100). Forward: the first grouped product (gate and up)
// applies the gated activation and the routing probabilities in its epilogue and writes
// the activation's output already quantized to MXFP8 in both layouts (d_tensor,
// d_col_tensor), beside its 16-bit gate and up outputs (c_tensor); the second product
// reads that fp8 output. So no activation kernel, and no quantization of the down
// product's input. Backward: the down product's input-gradient product takes the saved
// gate and up outputs and the probabilities, and writes the gradient of the gate and up
// outputs in MXFP8 in both layouts with the probabilities' gradient (dprob): no
// activation backward kernel and no quantization of the gate and up products' output
// gradients. What stays: the quantization of the first product's input and of the
// down product's output gradient, and the products themselves (at the fp8 rate). The
// first product is gate and up as one grouped linear of twice the expert's width, the
// two weights interleaved 32 rows at a time (Transformer Engine's
// validate_grouped_mlp_dims: fc1.out_features = 2 * fc2.in_features and
// glu_interleave_size 32; Megatron-Bridge's 26.06 recipes set moe_mlp_glu_interleave_size
// 32 with cutedsl_fused_grouped_mlp), so its input is quantized once, not once for
// gate and once for up. The
// tensors kept for the backward pass are the gate and up outputs (16 bits), the down
// product's fp8 input and an fp32 probability per row, as the fused activation keeps
// them (kept 2). A clamped gated activation (gpt-oss's) is the kernel's epilogue too
// (Transformer Engine v2.20.2's release notes: "fused grouped MXFP8 paths for weighted
// SwiGLU and clamped-SwiGLU activation", #3315), so its
// clamp is no kernel of its own either.
//
// fc1 comes as oneFC1 makes it (one quantization of the input, one of the output's
// gradient, 2f wide): the kernel's epilogue takes the gradient's.
func fusedExpertMLP(fc1, down op) (op, op, []op, float64) {
	fc1.bwdQuant, down.fwdQuant = 0, 0
	fc1.bwd.kernels -= fc1.quantKernels
	down.fwd.kernels -= down.quantKernels
	return fc1, down, nil, 2
}

// groupedCast is an expert's product o (shape.linear) whose quantizations run, under
// delayed scaling, as one kernel for all the local experts: Transformer Engine's
// GroupedLinear quantizes its split input and its output's gradient with
// tex.split_quantize, whose multi_tensor_quantize_impl launches one fused
// nvte_multi_cast_transpose for every split when all the quantizers are delayed
// scaling's Float8Quantizer ("Currently only have fused kernel for FP8 delayed
// scaling", pytorch/csrc/extensions/cast.cpp, v2.8 to v2.12). So each expert's share of
// a quantization's launch is 1/local; its bytes stay its own.
func groupedCast(o op, local float64) op {
	if o.fwdQuant > 0 {
		o.fwd.kernels -= 1 - 1/local
	}
	if o.bwdQuant > 0 {
		o.bwd.kernels -= 1 - 1/local
	}
	return o
}

// groupedSwizzle is an expert's product o (shape.linear) whose weight's scale swizzle
// (recipeFigures.swizzleKernels, MXFP8) runs, as in Megatron-Core's TEGroupedMLP, as
// one launch for the weights of all the local experts: Transformer Engine's grouped
// GEMM swizzles its operands with multi_tensor_swizzle_scales_for_gemm
// (pytorch/csrc/extensions/gemm.cpp te_general_grouped_gemm and swizzle.cpp, v2.12 to
// v2.16), whose nvte_multi_tensor_swizzle_scaling_factors packs up to
// kMaxTensorsPerKernel = 64 tensors into a launch (common/swizzle/swizzle.cu), and the
// fused grouped MLP swizzles each grouped weight in one grouped_swizzle_for_gemm. So
// each expert's share is ceil(local/64)/local of a launch a pass.
func groupedSwizzle(o op, local float64) op {
	if o.swizzleKernels <= 0 || local <= 1 {
		return o
	}
	share := math.Ceil(local/swizzleTensorsPerLaunch) / local
	cut := o.swizzleKernels * (1 - share)
	o.fwd.kernels -= cut
	o.bwd.kernels -= cut
	o.swizzleKernels *= share
	return o
}

// swizzleTensorsPerLaunch is Transformer Engine's kMaxTensorsPerKernel for the
// multi-tensor scale swizzle (common/swizzle/swizzle.cu, v2.9 to v2.16: "Args must be
// <4 KB").
const swizzleTensorsPerLaunch = 64

// wholeTensor is o, an operation priced per local expert, as Megatron-Core launches it:
// once over the rows of all the local experts together, so each expert's share is
// 1/local of its launches (its bytes stay the expert's). The dispatcher's permute
// (token_dispatcher.py, permute(hidden_states, routing_map, fused=moe_permute_fusion):
// one gather over every routed row, Transformer Engine's moe_permute) and the
// experts' activation (TEGroupedMLP.forward in megatron/core/transformer/moe/experts.py,
// core_r0.13.0 to core_r0.16.0: bias_act_func(intermediate_parallel, ...) on the
// grouped fc1 output of all the local experts, weighted_bias_swiglu_impl or
// weighted_bias_quick_geglu_impl with its clamp) are each one call per pass, not one
// per expert; only the grouped products (one cuBLAS call per expert) and the
// expert-by-expert output bias are per expert.
func wholeTensor(o op, local float64) op {
	o.fwd.kernels /= local
	o.bwd.kernels /= local
	return o
}

// unpermute is the combine side's regrouping of one local expert's n output elements
// (its rows, h wide) back into tokens, as Megatron-Core runs it in the Megatron-style
// modes: the routing probabilities already multiplied in by the activation (the
// experts' weighted SwiGLU; shape.moe) and the permutation fused (moe_permute_fusion,
// which Megatron-Bridge's Qwen3, DeepSeek and gpt-oss providers set), so unpermute
// passes no probabilities (token_dispatcher.py, core_v0.15.0 on: unpermute(...,
// fused=moe_permute_fusion) without probs) and Transformer Engine's fused moe_unpermute
// reads each row once and writes each token once, summing its rows: one kernel for all
// the local experts. Its backward is the matching permute of the gradient (a token's
// gradient read, each row written). Tokens per row: 1/k with the alltoall dispatcher
// (a device's n*k returned rows into its n tokens); with the flex dispatcher the rows a
// device received are summed per received token before the combine, a token reaching
// D = EP*(1 - (1 - 1/EP)^k) of the EP devices on average (k experts drawn evenly), so
// D/k tokens per row. Elements of e bytes. (The unfused path, probabilities applied
// here, stays "weight and scatter": a multiply and a scatter-add, 3e bytes a row.)
func (sh *shape) unpermute(n, local float64) op {
	perRow := 1 / sh.k
	if sh.o.Dispatcher.flex() && sh.ep > 1 {
		perRow = sh.ep * (1 - math.Pow(1-1/sh.ep, sh.k)) / sh.k
	}
	b := sh.e * n * (1 + perRow)
	return op{name: "unpermute", fwd: work{0, b, 1 / local}, bwd: work{0, b, 1 / local}}
}

// oneFC1 is a gated MLP's gate and up products, each m x k by k x f, as Megatron-Core
// runs them: one column-parallel linear, linear_fc1, of twice the width ("If this is a
// gated linear unit we double the output width", MLP in megatron/core/transformer/mlp.py;
// TEGroupedMLP in megatron/core/transformer/moe/experts.py doubles moe_ffn_hidden_size
// the same way, core_v0.15.0 to core_v0.19.0; Megatron-DeepSpeed's dense_h_to_4h is
// 2 * ffn_hidden_size wide with a GLU), its weight one tensor
// (cluster.Framework.FusedFC1). So one product a pass, m x k by k x 2f forward and its
// two gradients backward: one launch forward and two backward where two products take
// two and four (Transformer Engine's GroupedLinear runs one GEMM an expert for the
// grouped fc1, general_grouped_gemm over its m_splits), waves counted over the 2f-wide
// output and the input gradient reducing over 2f (gemmShape.fraction), the input read
// once. Under an fp8 recipe Transformer Engine quantizes that linear's input once, in
// both layouts, and keeps it for the weight gradient (Linear and GroupedLinear save the
// quantized input; shape.linear), its output's gradient once, 2f wide, and (MXFP8)
// swizzles one weight's scales: one quantization kernel a pass, not one for gate and
// one for up.
func (sh *shape) oneFC1(name string, m, k, f float64) op {
	return sh.linear(name, m, k, 2*f)
}

// gluClamp is gpt-oss's clamp of the gated activation's inputs (GptOssConfig.swiglu_limit)
// over n elements of an expert's width, as Megatron-Core runs it: outside the fused
// activation, in eager PyTorch ahead of it (megatron/core/fusions/fused_bias_geglu.py,
// weighted_bias_quick_geglu_impl: chunk, clamp the gate half, clamp the linear half,
// cat; called by TEGroupedMLP with activation_func_clamp_value, which Megatron-Bridge's
// GPTOSSProvider sets to 7.0). Forward: each clamp reads and writes its half (2e*n
// bytes each), the cat reads both and writes the whole (4e*n), in three kernels.
// Backward: each clamp's gradient reads the gradient and the saved input and writes
// the gradient (3e*n each), and the chunk's gradient concatenates the two (4e*n).
// Elements of e bytes.
func gluClamp(e, n float64) op {
	return op{name: "glu clamp", fwd: work{0, 8 * e * n, 3}, bwd: work{0, 10 * e * n, 3}}
}

// expertOutputBias is the routed experts' second bias over n elements of one expert's
// output rows (h wide), as Megatron-Core adds it: not in the grouped product but after
// it, expert by expert, scaled by each row's routing probability
// (TEGroupedMLP._apply_bias, Megatron-LM commit a329dd6da5 "Enable bias in expert mlp
// [gpt-oss 5/5]", September 2025, unchanged to core_v0.18.0: cat([t + b*p for each
// expert's rows t, bias b and probabilities p]).to(t.dtype)), with activations of e
// bytes and probabilities of p bytes (routedProbBytes). PyTorch's type promotion
// gives b*p, t + b*p and their cat r = max(e, p) bytes an element, and the final
// .to(t.dtype) is a kernel of its own where r is wider than e. Forward: b*p writes r*n
// bytes, t + b*p reads e*n and r*n and writes r*n, the cat reads and writes r*n, the
// cast (r > e) reads r*n and writes e*n: 5r + e bytes an element, and r + e more with
// the cast; two kernels per expert and one in all, and the cast's one. Backward
// (autograd): the cast's gradient back to r bytes (r > e: reads e, writes r); the add's
// gradient to t cast down to t's dtype by the engine (r > e: reads r, writes e, per
// expert); the product's gradients to the bias (a multiply reading and writing r, a
// reduction over the rows reading r) and to the probabilities (the same); and the
// split's gradient concatenating t's gradients (2e): 6r + 2e bytes an element, and
// 2(r + e) more with the casts; four kernels per expert and one in all, and with the
// casts one more per expert (the add's) and one in all. With r = e = 2 (16-bit
// probabilities) that is 12 bytes forward and 16 backward; with fp32 probabilities
// (r = 4, e = 2) 28 and 40.
func expertOutputBias(e, p, n, local float64) op {
	r := max(e, p)
	fwd, bwd := work{0, (5*r + e) * n, 2 + 1/local}, work{0, (6*r + 2*e) * n, 4 + 1/local}
	if r > e {
		fwd.bytes += (r + e) * n
		fwd.kernels += 1 / local
		bwd.bytes += 2 * (r + e) * n
		bwd.kernels += 1 + 1/local
	}
	return op{name: "expert output bias", fwd: fwd, bwd: bwd}
}

// routedProbBytes is the width of the routing probabilities that reach the experts
// (TEGroupedMLP's permuted_probs), in bytes. Megatron-Core's router returns them in the
// logits' dtype (moe_utils.py, topk_routing_with_score_function: softmax in fp32, then
// type_as(logits); router.py gates in the input's dtype unless moe_router_dtype says
// fp32 or fp64, which Megatron-Bridge's GPTOSSProvider leaves unset), and the alltoall
// dispatcher permutes them as they are: the activations' 16 bits. The flex
// dispatcher's backends take fp32 only: _HybridEPManager.dispatch casts them ("HybridEP
// only supports float32 probs, please set --moe-router-dtype=fp32": self.token_probs =
// self.token_probs.float(), megatron/core/transformer/moe/token_dispatcher.py,
// core_v0.16.0 to core_v0.18.0) and _DeepepManager.dispatch alike (core_v0.15.0 on),
// and hand the experts the dispatched fp32 probabilities
// (get_permuted_hidden_states_by_experts returns dispatched_probs): 4 bytes.
func (sh *shape) routedProbBytes() float64 {
	if sh.o.Dispatcher.flex() {
		return 4
	}
	return sh.e
}

// megatronTensors are a block part's parameter tensors as Megatron-Core with Transformer
// Engine registers them, on one device: small (the n tensors that mainGradAdds adds, x
// elements in all: the norm's weight, fused into linear_qkv or linear_fc1 as
// layer_norm_weight, and biases; shown as n equal tensors), then the part's two linear
// weights (linear_qkv and linear_proj, or linear_fc1 and linear_fc2), the rest of its
// params split in the ratio of their output widths first:second (their input widths
// being the hidden size and first's output's, the ratio of their sizes). Registration
// order within the part is norm, then the products, as TE's LayerNormLinear holds them.
func megatronTensors(params int64, n int, x, first, second float64) []ParamTensor {
	var out []ParamTensor
	small := int64(0)
	if n > 0 {
		each := int64(x) / int64(n)
		for i := 0; i < n; i++ {
			out = append(out, ParamTensor{Elements: each})
		}
		small = each * int64(n)
	}
	rest := max(0, params-small)
	if first+second <= 0 {
		return append(out, ParamTensor{Elements: rest, Product: true})
	}
	a := int64(float64(rest) * first / (first + second))
	return append(out, ParamTensor{Elements: a, Product: true}, ParamTensor{Elements: rest - a, Product: true})
}
