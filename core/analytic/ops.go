package analytic

import "pipeplan/core/cluster"

// work is what one kind of kernel does: FLOPs of matrix products, bytes moved to and from
// device memory, and how many kernel launches (n identical kernels are one work with n
// times the FLOPs, bytes and launches).
type work struct {
	flops, bytes, kernels float64
}

func (w work) times(n float64) work { return work{w.flops * n, w.bytes * n, w.kernels * n} }

// op is one operation of a layer, forward and backward.
type op struct {
	name     string
	fwd, bwd work
	// core marks the attention core (scores, softmax, dropout, weighted sum), which
	// selective recomputation reruns in the backward pass.
	core bool
	// fp8 marks a linear layer's product that runs at the fp8 peak (dtype fp8).
	fp8 bool
	// module is the output-discarding recomputation module that reruns it in the
	// backward pass (layernorm, moe_act, shared_experts, mla_up_proj; Modules), if any.
	module Modules
	// fwdEff and bwdEff, when above 0, are the fractions of the device's dense 16-bit
	// peak that its products reach in each pass (a fused attention kernel's published
	// rate, attentionEfficiency) in place of the matrix efficiency.
	fwdEff, bwdEff float64
	// gemm is the product's shape (zero for no product): the roofline slows a small
	// one by its waves and its reduction length (gemmShape.fraction).
	gemm gemmShape
	// fwdQuant and bwdQuant are the bytes of the fp8 quantization kernels before the
	// product in each pass (shape.linear): memory-bound kernels of their own, whose
	// time adds to the product's (their launches are in fwd and bwd.kernels).
	fwdQuant, bwdQuant float64
	// quantKernels is the launches of one of its quantizations (the recipe's
	// recipeFigures.quantKernels; in fwd and bwd.kernels once per quantization).
	quantKernels float64
	// swizzleKernels is the launches of its weight's scale swizzle in each pass that
	// reads the weight (recipeFigures.swizzleKernels; in fwd and bwd.kernels).
	swizzleKernels float64
	// gathers marks a dense sublayer's projection that reads tensor parallelism's
	// all-gathered input (sequence parallel), scatters one whose output is
	// reduce-scattered: the products PyTorch's async tensor parallelism fuses with
	// those collectives (calc.asyncChunks).
	gathers, scatters bool
	// gatherShare is, for async TP's copies (asyncCopies), the part of the forward's
	// work that is the all-gather's own-shard copy, which torchtitan's per-op policy
	// runs again with the gather it does not save (sacCommRerun); the partial sums
	// before the reduce-scatter, whose output it saves, are not rerun.
	gatherShare float64
	// outBytes is the bytes of its output on one device, for the operations torchtitan's
	// per-op selective checkpointing may save (a linear layer's product, a fused
	// attention kernel's output and softmax statistics; SelectiveOp); 0 for the others.
	outBytes float64
	// parts are the output widths of the separate products a linear op stands for
	// (Llama's query, key and value projections, three aten.mm calls in torchtitan's
	// model); nil for one product.
	parts []float64
}

// gathering and scattering mark o as a projection after tensor parallelism's all-gather
// and before its reduce-scatter (op.gathers, op.scatters).
func gathering(o op) op  { o.gathers = true; return o }
func scattering(o op) op { o.scatters = true; return o }

// pass is the operation's work in one pass (the backward's, or the forward's, which
// recomputation reruns too) and its own efficiency there (0: the matrix efficiency).
func (o op) pass(bwd bool) (work, float64) {
	if bwd {
		return o.bwd, o.bwdEff
	}
	return o.fwd, o.fwdEff
}

func (o op) times(n float64) op {
	o.fwd, o.bwd = o.fwd.times(n), o.bwd.times(n)
	o.fwdQuant, o.bwdQuant = o.fwdQuant*n, o.bwdQuant*n
	o.swizzleKernels *= n
	return o
}

// roofline times kernels on one device: each kernel takes the longer of its FLOPs at the
// matrix peak times an efficiency and its bytes at the memory bandwidth times an
// efficiency (Williams, Waterman and Patterson 2009), plus a fixed launch cost.
//
// With dtype fp8 the blocks' linear layers' products run at the fp8 peak times the fp8
// efficiency and the recipe's rate (fp8FLOPSPerSecond); the attention core stays in 16
// bits, as Transformer Engine's fp8 recipes do.
type roofline struct {
	flopsPerSecond, fp8FLOPSPerSecond, bytesPerSecond, kernelSeconds float64
	matmulEfficiency, memoryEfficiency                               float64
	// sms is the device's multiprocessor count (cluster.Perf.Multiprocessors; 0: no
	// shape model), k0 a tile's fixed cost in steps of its K loop: gemmTileOverheadK
	// in 16 bits, twice that for fp8 products (twice the steps in the same time).
	sms, k0 float64
}

func newRoofline(t Target, dt DType, recipe FP8Recipe) roofline {
	peak := t.Device.FLOPSPerSecond
	if dt == FP32 {
		peak = t.Perf.FP32FLOPSPerSecond
	}
	r := roofline{
		flopsPerSecond:   peak * t.Perf.MatmulEfficiency,
		bytesPerSecond:   t.Perf.MemoryBytesPerSecond * t.Perf.MemoryEfficiency,
		kernelSeconds:    t.Perf.KernelSeconds,
		matmulEfficiency: t.Perf.MatmulEfficiency, memoryEfficiency: t.Perf.MemoryEfficiency,
		sms: float64(t.Perf.Multiprocessors), k0: gemmTileOverheadK,
	}
	r.fp8FLOPSPerSecond = r.flopsPerSecond
	if dt == FP8 {
		// fp8 products at their own measured fraction of the fp8 peak
		// (cluster.Perf.FP8MatmulEfficiency), times the recipe's rate.
		r.fp8FLOPSPerSecond = t.Perf.FP8FLOPSPerSecond * t.Perf.FP8Efficiency() * recipe.figures().gemmRate
	}
	return r
}

func (r roofline) seconds(w work) float64 {
	return w.kernels*r.kernelSeconds + max(w.flops/r.flopsPerSecond, w.bytes/r.bytesPerSecond)
}

// flopsRate is the FLOP/s of an operation's products in one pass (bwd: the backward's):
// the device's peak times the pass's own efficiency for a fused attention kernel (or a
// measured product rate), else the fp8 rate for an fp8 linear layer and the matrix
// peak times the matrix efficiency for others, each times its shape's fraction
// (gemmShape.fraction: small products lose waves and short reductions).
func (r roofline) flopsRate(o op, bwd bool) float64 {
	_, eff := o.pass(bwd)
	switch {
	case eff > 0:
		return r.flopsPerSecond / r.matmulEfficiency * eff
	case o.fp8:
		return r.fp8FLOPSPerSecond * o.gemm.fraction(bwd, r.sms, 2*r.k0)
	}
	return r.flopsPerSecond * o.gemm.fraction(bwd, r.sms, r.k0)
}

// addTerms adds one pass of an operation (bwd: its backward) to the pass's terms, at
// the full peak and bandwidth: its FLOPs if it is compute-bound at the target's
// efficiencies, else its bytes. A fused attention kernel's FLOPs count at the matrix
// peak scaled so that MatmulSeconds / matrix efficiency is its time at its own rate.
func (r roofline) addTerms(t *Terms, o op, bwd bool) {
	w, _ := o.pass(bwd)
	rate := r.flopsRate(o, bwd)
	t.Kernels += w.kernels
	if w.flops/rate >= w.bytes/r.bytesPerSecond {
		t.MatmulSeconds += w.flops / rate * r.matmulEfficiency
	} else {
		t.MemorySeconds += w.bytes / (r.bytesPerSecond / r.memoryEfficiency)
	}
	q := o.fwdQuant
	if bwd {
		q = o.bwdQuant
	}
	t.MemorySeconds += q / (r.bytesPerSecond / r.memoryEfficiency)
}

// opSeconds times one pass of an operation (bwd: its backward; the forward's again when
// recomputed): its launches plus the longer of its products at their rate (flopsRate)
// and its bytes at the achievable bandwidth, plus its fp8 quantization's bytes at that
// bandwidth.
func (r roofline) opSeconds(o op, bwd bool) float64 {
	w, _ := o.pass(bwd)
	q := o.fwdQuant
	if bwd {
		q = o.bwdQuant
	}
	return w.kernels*r.kernelSeconds + max(w.flops/r.flopsRate(o, bwd), w.bytes/r.bytesPerSecond) + q/r.bytesPerSecond
}

// Element-wise backward kernels read the gradient and the saved input and write the input's
// gradient: about 1.5 times the forward's traffic (read one, write one).
const memBackward = 1.5

// matmul is a (batched) product of an m x k and a k x n matrix. Its backward pass is two
// products of the same size (the gradients of both operands).
func matmul(name string, e, batch, m, k, n float64) op {
	f := 2 * batch * m * k * n
	b := e * batch * (m*k + k*n + m*n)
	return op{name: name, fwd: work{f, b, 1}, bwd: work{2 * f, 2 * b, 2}, gemm: gemmShape{groups: batch, m: m, k: k, n: n}}
}

// mem is a memory-bound operation moving bytes in kernels launches.
func mem(name string, bytes, kernels float64) op {
	return op{name: name, fwd: work{0, bytes, kernels}, bwd: work{0, memBackward * bytes, kernels}}
}

// linkSeconds is the time of a two-device all-reduce of n bytes (a ring moves 2(p-1)/p * n
// = n bytes each way for p = 2).
func linkSeconds(l cluster.Link, n float64) float64 {
	if n <= 0 {
		return 0
	}
	return l.Seconds(int64(n), 0)
}
