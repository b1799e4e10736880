package analytic

import "pipeplan/core/arch"

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
	// and up outputs (cluster.Framework.FusedActivation).
	fusedAct bool
	// tp is the tensor-parallel degree t: heads, MLP width and vocabulary are divided by
	// it (the vocabulary rounded up, as Megatron-LM pads it). hr is the width of the
	// tensors tensor parallelism leaves whole (norm inputs and outputs, residuals,
	// dropout masks): h, or h/t with sequence parallelism, which splits them along the
	// sequence (the same bytes as dividing the width).
	tp, hr float64
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
// counted per microbatch.
func (sh *shape) linear(name string, m, k, n float64) op {
	o := matmul(name, sh.e, 1, m, k, n)
	if f := sh.fp8; f != nil {
		o.fp8 = true
		o.fwd.bytes += f.quantBytes * m * k
		o.fwd.kernels++
		o.bwd.bytes += f.quantBytes * m * n
		o.bwd.kernels++
	}
	return o
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
	// recomputable: a transformer sublayer, which full recomputation reruns.
	recomputable bool
	// fwdAllReduces and bwdAllReduces count the tensor-parallel all-reduces of one
	// activation (e*b*s*h bytes) in its forward and backward pass.
	fwdAllReduces, bwdAllReduces float64
	// fp8Weights is the weight elements of its fp8 products on one device, and
	// fp8GEMMs how many fp8 products hold them (with dtype fp8; 0 otherwise): the
	// recipe keeps fp8 copies of those weights and a scaling state per product.
	fp8Weights, fp8GEMMs float64
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

// core marks an operation of the attention core.
func core(o op) op {
	o.core = true
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

func (sh *shape) norm(name string) op { return mem(name, 2*sh.e*sh.t*sh.hr, 1) }

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
func (sh *shape) attention() piece {
	a, e, t, h, q, kv, hr := sh.a, sh.e, sh.t, sh.h, sh.q, sh.kv, sh.hr
	p := piece{params: shardParams(a.AttentionParams(), attentionSharded(a), sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: sh.normTensors() + attentionTensors(a)}
	p.ops = append(p.ops, sh.norm("attention norm"), sh.linear("qkv", t, h, q+2*kv))
	if a.Family == arch.Llama {
		p.ops = append(p.ops, mem("rotary", 2*e*t*(q+kv), 2))
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
		fa := 4 * sh.b * sh.heads * sh.s * sh.skv * sh.d // QK^T and PV
		if a.Causal() {
			// Causal kernels skip the blocks above the diagonal; under context
			// parallelism the load-balanced split gives each device 1/c of them.
			fa /= 2
		}
		io := e * t * (2*q + 2*kv) // read Q, K, V, write O
		p.ops = append(p.ops, op{name: "flash attention", core: true,
			// FlashAttention-2's backward pass does five products to the forward's two.
			fwd: work{fa, io, 1}, bwd: work{2.5 * fa, 2 * io, 2}})
		common += e*t*(q+2*kv) + 4*sh.b*sh.heads*sh.s // Q, K, V, softmax statistics
		p.bwdExtra = e * t * (q + 2*kv)
		p.inferExtra = e*t*h + e*t*(q+2*kv) + e*t*q
	}
	p.ops = append(p.ops, sh.linear("output projection", t, q, h), sh.residual())
	if sh.fp8 != nil {
		p.fp8Weights, p.fp8GEMMs = h*(q+2*kv)+q*h, 2
	}
	if sh.cp > 1 {
		p.context = true
		if sh.o.ContextMethod == AllToAll {
			// Q, K, V in, the output back: each device's share before and after.
			p.contextBytes = e * t * (2*q + 2*kv)
		} else {
			p.contextBytes = e * t * 2 * kv // this device's K and V, passed c - 1 times
		}
	}
	p.bwdSaved = common + coreSaved
	p.saved = p.bwdSaved
	if sh.o.Recompute == Selective {
		p.saved = common
		p.fwdExtra += coreSaved // computed in the forward pass, then dropped
	}
	return p
}

// mlp is the MLP part of a block: norm, the MLP (or router and experts), residual.
//
// Saved for backward: the norm's input and the first projection's input (e*T*h each), the
// activation's input and the second projection's input (e*T*f each) for GELU, or for
// SwiGLU the gate and up outputs, the SiLU output and the down projection's input
// (4*e*T*f; 3*e*T*f where the framework fuses the SiLU and the product and keeps no SiLU
// output, cluster.Framework.FusedActivation), and the residual dropout mask (T*h). GPT's MLP (f = 4h, e = 2, dropout) gives
// 21*s*b*h: Korthikanti's 19sbh plus the norm's 2sbh.
//
// A mixture of experts routes each token to k of E experts (assumed evenly): each expert
// runs on T*k/E tokens, so the experts together save k times a SwiGLU's tensors on
// gathered copies of the input, plus the router's fp32 probabilities (4*T*E) and the
// experts' outputs before weighting (e*T*k*h).
//
// With t-way tensor parallelism the MLP's width is split (first projections
// column-parallel, the last row-parallel; each expert likewise): the e*T*f tensors are
// divided by t, the norm's and the first projection's input and the mask are not (but
// are with sequence parallelism). One all-reduce forward, one backward.
func (sh *shape) mlp() piece {
	a, e, t, h, f, hr := sh.a, sh.e, sh.t, sh.h, sh.f, sh.hr
	p := piece{params: shardParams(a.MLPParams(), mlpSharded(a), sh.tp),
		input: e * t * hr, output: e * t * hr, recomputable: true, fwdAllReduces: 1, bwdAllReduces: 1,
		tensors: sh.normTensors() + mlpTensors(a)}
	p.ops = append(p.ops, sh.norm("mlp norm"))
	ge := sh.ge                                // a product's saved input: 8 bits with fp8
	common := e*t*hr + ge*t*hr + sh.mask(t*hr) // norm input, first projection's input, mask
	switch {
	case a.MoE():
		te := t * sh.k / sh.experts // tokens per expert
		p.ops = append(p.ops, sh.linear16("router", t, h, sh.experts), mem("top-k", 4*t*sh.experts*2, 3))
		expert := []op{
			mem("gather", 2*e*te*h, 1),
			sh.linear("gate", te, h, f), sh.linear("up", te, h, f),
			mem("silu", 2*e*te*f, 1), mem("gate x up", 3*e*te*f, 1),
			sh.linear("down", te, f, h),
			mem("weight and scatter", 3*e*te*h, 2),
		}
		for _, o := range expert {
			p.ops = append(p.ops, o.times(sh.experts))
		}
		// Router probabilities; per routed copy: the experts' input, gate and up outputs
		// and SiLU output, the down projection's input, the output before weighting.
		common += 4*t*sh.experts + sh.k*(ge*t*h+3*e*t*f+ge*t*f+e*t*h)
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = 3*h*f*sh.experts, 3*sh.experts
		}
		p.bwdExtra = sh.k * (2*e*t*f + e*t*h)
		p.inferExtra = e*t*h + sh.k*(e*t*h+3*e*t*f+e*t*h)
	case a.GatedMLP():
		p.ops = append(p.ops, sh.linear("gate", t, h, f), sh.linear("up", t, h, f))
		if sh.fusedAct {
			// One kernel reads gate and up and writes their product; its backward
			// recomputes the SiLU from the gate it kept.
			p.ops = append(p.ops, mem("fused silu x up", 3*e*t*f, 1))
			common += 2 * e * t * f
		} else {
			p.ops = append(p.ops, mem("silu", 2*e*t*f, 1), mem("gate x up", 3*e*t*f, 1))
			common += 3 * e * t * f // gate, up and SiLU outputs
		}
		p.ops = append(p.ops, sh.linear("down", t, f, h))
		common += ge * t * f // the down projection's input
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = 3*h*f, 3
		}
		p.bwdExtra = 2 * e * t * f
		p.inferExtra = e*t*h + 3*e*t*f
	default:
		p.ops = append(p.ops, sh.linear("fc1", t, h, f), mem("gelu", 2*e*t*f, 1), sh.linear("fc2", t, f, h))
		common += e*t*f + ge*t*f // the activation's input; the second projection's input
		if sh.fp8 != nil {
			p.fp8Weights, p.fp8GEMMs = 2*h*f, 2
		}
		p.bwdExtra = 2 * e * t * f
		p.inferExtra = e*t*h + 2*e*t*f
	}
	p.ops = append(p.ops, sh.residual())
	p.saved, p.bwdSaved = common, common
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
	p.ops = append(p.ops, gather)
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
	return piece{params: sh.a.FinalNormParams(), ops: []op{sh.norm("final norm")},
		saved: x, bwdSaved: x, input: x, output: x, tensors: sh.normTensors()}
}

// head is the LM head with the loss: (BERT's transform,) the vocabulary projection, and
// cross-entropy computed in fp32 as frameworks do (HuggingFace upcasts the logits): the
// 16-bit logits (e*T*V), their fp32 copy (4*T*V) and the fp32 log-probabilities (4*T*V)
// live at once in the forward pass; the log-probabilities stay for the backward pass,
// which holds their gradient and the logits' fp32 gradient beside them (12*T*V at its
// peak), and, where the training loop keeps the model's output (HuggingFace models
// return the logits with the loss), the 16-bit logits too. The output is the loss (a 4-byte scalar). In inference the output is the logits.
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
	if sh.a.RMSNorm() {
		return 1
	}
	return 2
}

// normParams is one norm's parameters (RMSNorm's weight, or LayerNorm's weight and
// bias), replicated under tensor parallelism.
func (sh *shape) normParams() int64 { return int64(sh.normTensors()) * int64(sh.a.HiddenSize) }

// attentionTensors counts the projections' weights and biases: GPT-2 fuses Q, K and V
// into one matrix (c_attn); the others keep three.
func attentionTensors(a *arch.Arch) int {
	qkv := 3
	if a.Family == arch.GPT2 {
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

// mlpTensors counts the MLP's weights and biases (every expert's, and the router).
func mlpTensors(a *arch.Arch) int {
	n := 2
	if a.GatedMLP() {
		n = 3
	}
	if a.MLPBias {
		n *= 2
	}
	if a.MoE() {
		return n*a.NumExperts + 1
	}
	return n
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

// mlpSharded is the MLP part's parameters that tensor parallelism splits: every
// projection and the biases of the column-parallel ones, in every expert (the last
// projection's bias, the norm and the router are replicated).
func mlpSharded(a *arch.Arch) int64 {
	h, f := int64(a.HiddenSize), int64(a.IntermediateSize)
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
	return n * int64(max(1, a.NumExperts))
}
