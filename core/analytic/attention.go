package analytic

import (
	"fmt"
	"math"
	"strings"

	"pipeplan/core/model"
)

// Attention kernels' published speeds.
//
// A fused attention kernel does not run at the rate of a large GEMM: its two products
// per tile (QK^T and PV) sit between an online softmax's exponentials, rescaling and
// reductions, which the tensor cores do not do, and a short sequence gives each tile
// little work to amortise them. How much of the peak it reaches depends on the kernel,
// the pass, the head dimension, the causal mask and the sequence length, so the
// estimator takes the kernel's measured rate from its authors' benchmarks instead of
// the matrix efficiency of the linear layers.
//
// Source: Shah et al. 2024, "FlashAttention-3: Fast and Accurate Attention with
// Asynchrony and Low-precision" (arXiv 2407.08608), section 4.1, the BF16 attention
// speed figures on an H100 80GB SXM5 (989 TFLOP/s dense 16-bit peak): FlashAttention-2
// (Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism and Work
// Partitioning", arXiv 2307.08691), cuDNN's fused attention and FlashAttention-3, batch
// x sequence = 16k tokens, 2048 hidden, sequence 512 to 16k. The paper counts a
// forward pass as 4 s^2 d FLOPs per head (halved with a causal mask) and a backward
// pass as 2.5 times that, as the estimator does (attention), so its TFLOP/s divide
// directly. The figures, in TFLOP/s at 512, 1k, 2k, 4k, 8k and 16k tokens:
//
//	head dim 128, forward:           FA2 309 350 362 368 370 370   cuDNN 497 574 617 609 600 595   FA3 467 565 625 638 646 648
//	head dim 128, forward, causal:   FA2 191 260 298 319 333 335   cuDNN 315 410 484 518 529 539   FA3 292 423 521 579 602 616
//	head dim 128, backward:          FA2 214 260 291 310 318 322   cuDNN 305 408 465 499 518 516   FA3 316 424 501 542 559 561
//	head dim 64, backward:           FA2 198 238 264 279 287 291   cuDNN 266 348 395 417 432 433   FA3 272 363 422 453 472 474
//
// Assumptions where the paper has no figure: a causal backward pass reaches the
// non-causal backward's rate times the forward's causal/non-causal ratio at the same
// length (the causal kernels skip the same blocks in both passes); a head dimension
// without a figure for a pass takes the nearest one's (head dim 64's forward, and 256's
// backward, take 128's); sequences beyond 16k take the 16k rate (every curve has
// flattened by 8k), and below 512 the 512 rate. Between the points the rate is
// interpolated linearly in log2 of the length. H200 has H100's compute, and takes
// H100's figures; the 500 W H100 (h100-96gb-500w) takes the same fractions of its own
// lower peak.
//
// Other devices have no published per-kernel figures here: their flash kernels run at
// the matrix efficiency (FlashAttention-2's paper reports 50-73% of the A100's peak
// in the forward pass, close to the A100 preset's 0.75). FlashAttention-3 runs on
// Hopper only (it is built on Hopper's wgmma and TMA instructions), so Flash3 is
// refused elsewhere. Eager attention is not looked up: its products are ordinary
// batched GEMMs (at the matrix efficiency) and its softmax, masking and dropout are
// memory-bound kernels at the achievable bandwidth (attention).
var attentionSeqKnots = [...]float64{512, 1024, 2048, 4096, 8192, 16384}

// attentionCurve is a kernel's TFLOP/s at attentionSeqKnots.
type attentionCurve [len(attentionSeqKnots)]float64

// attentionPass names a benchmarked pass: the forward with or without a causal mask,
// and the (non-causal) backward.
type attentionPass int

const (
	attnForward attentionPass = iota
	attnForwardCausal
	attnBackward
)

type attentionKey struct {
	kernel  Attention
	headDim int
	pass    attentionPass
}

// hopperPeak is the dense 16-bit peak of the H100 80GB SXM5 the figures were measured
// on (NVIDIA H100 datasheet).
const hopperPeak = 989e12

// hopperAttention holds Shah et al. 2024's figures (TFLOP/s), listed above.
var hopperAttention = map[attentionKey]attentionCurve{
	{Flash, 128, attnForward}:        {309, 350, 362, 368, 370, 370},
	{Flash, 128, attnForwardCausal}:  {191, 260, 298, 319, 333, 335},
	{Flash, 128, attnBackward}:       {214, 260, 291, 310, 318, 322},
	{Flash, 64, attnBackward}:        {198, 238, 264, 279, 287, 291},
	{CuDNN, 128, attnForward}:        {497, 574, 617, 609, 600, 595},
	{CuDNN, 128, attnForwardCausal}:  {315, 410, 484, 518, 529, 539},
	{CuDNN, 128, attnBackward}:       {305, 408, 465, 499, 518, 516},
	{CuDNN, 64, attnBackward}:        {266, 348, 395, 417, 432, 433},
	{Flash3, 128, attnForward}:       {467, 565, 625, 638, 646, 648},
	{Flash3, 128, attnForwardCausal}: {292, 423, 521, 579, 602, 616},
	{Flash3, 128, attnBackward}:      {316, 424, 501, 542, 559, 561},
	{Flash3, 64, attnBackward}:       {272, 363, 422, 453, 472, 474},
}

// hopper reports whether a device preset is a Hopper GPU, whose fused attention
// kernels Shah et al. 2024 measured.
func hopper(device string) bool {
	switch strings.ToLower(device) {
	case "h100-sxm", "h200", "h100-96gb-500w":
		return true
	}
	return false
}

// attentionEfficiency is the fraction of the device's dense 16-bit peak that a fused
// attention kernel reaches in one pass (bwd: the backward), for a head dimension, the
// keys each kernel call attends over (seq) and the causal mask; ok is false where no
// figures are published for the device (or the kernel is eager), and the products
// then run at the matrix efficiency.
func attentionEfficiency(device string, k Attention, headDim, seq float64, causal, bwd bool) (eff float64, ok bool) {
	if k == Eager || !hopper(device) {
		return 0, false
	}
	rate := func(p attentionPass) float64 { return attentionRate(k, headDim, seq, p) }
	var r float64
	switch {
	case !bwd && causal:
		r = rate(attnForwardCausal)
	case !bwd:
		r = rate(attnForward)
	case causal:
		r = rate(attnBackward) * rate(attnForwardCausal) / rate(attnForward)
	default:
		r = rate(attnBackward)
	}
	return r * 1e12 / hopperPeak, true
}

// attentionRate is the kernel's TFLOP/s in a benchmarked pass, from the figures of the
// nearest head dimension that has them, interpolated in log2 of the sequence length and
// held flat beyond the measured lengths.
func attentionRate(k Attention, headDim, seq float64, p attentionPass) float64 {
	best, dist := attentionCurve{}, math.Inf(1)
	for _, d := range []int{128, 64, 256} { // ties go to 128, the most measured
		c, found := hopperAttention[attentionKey{k, d, p}]
		if !found {
			continue
		}
		if dd := math.Abs(math.Log2(headDim) - math.Log2(float64(d))); dd < dist {
			best, dist = c, dd
		}
	}
	n := len(attentionSeqKnots)
	switch {
	case seq <= attentionSeqKnots[0]:
		return best[0]
	case seq >= attentionSeqKnots[n-1]:
		return best[n-1]
	}
	for i := 1; i < n; i++ {
		if seq <= attentionSeqKnots[i] {
			lo, hi := attentionSeqKnots[i-1], attentionSeqKnots[i]
			f := (math.Log2(seq) - math.Log2(lo)) / (math.Log2(hi) - math.Log2(lo))
			return best[i-1] + f*(best[i]-best[i-1])
		}
	}
	return best[n-1]
}

// checkAttentionKernel refuses a kernel the device cannot run: FlashAttention-3 needs
// a Hopper GPU.
func checkAttentionKernel(device string, k Attention) error {
	if k == Flash3 && !hopper(device) {
		return &model.FieldError{Path: "attention", Reason: fmt.Sprintf(
			"flash3 (FlashAttention-3) runs on Hopper GPUs only (h100-sxm, h100-96gb-500w, h200), not %s: use flash or cudnn", device)}
	}
	return nil
}

// attentionRates sets the fused attention kernels' efficiencies (op.fwdEff, bwdEff) of
// a piece's attention core on the target: each kernel call attends over the whole
// sequence, or with ring context parallelism over one device's block per step (the
// hierarchical split: one all-to-all group's block).
func (sh *shape) attentionRates(device string, p *piece) {
	if sh.o.Attention == Eager || sh.o.DType == FP32 {
		return // eager: GEMMs and memory-bound kernels; fp32: no fused 16-bit kernel figures
	}
	seq := sh.skv
	if sh.cp > 1 && sh.o.ContextMethod == Ring {
		seq = sh.s
	}
	if sh.cp > 1 && sh.o.ContextMethod == Hierarchical {
		seq = sh.s * float64(sh.o.ContextInner) // one ring step's block: g devices' tokens
	}
	causal := sh.a.Causal()
	fwd, ok := attentionEfficiency(device, sh.o.Attention, sh.d, seq, causal, false)
	if !ok {
		return
	}
	bwd, _ := attentionEfficiency(device, sh.o.Attention, sh.d, seq, causal, true)
	for i := range p.ops {
		if p.ops[i].core {
			p.ops[i].fwdEff, p.ops[i].bwdEff = fwd, bwd
		}
	}
}
