package analytic

import "math"

// Matrix products by shape. A device's matrix efficiency (cluster.Perf.MatmulEfficiency,
// FP8MatmulEfficiency) is what large products reach; a small one reaches less, for two
// reasons that NVIDIA's "Matrix Multiplication Background User's Guide" (Deep Learning
// Performance documentation) names:
//
//   - Wave quantization. A GEMM kernel splits the m x n output into tiles, one per
//     thread block, and runs them in waves of one tile per multiprocessor (SM): a
//     product of 1.2 waves takes as long as one of 2. With T tiles on S multiprocessors
//     the useful fraction is m*n / (ceil(T/S) * S * tile area); the library picks the
//     tile that loses least (gemmTiles). A grouped product (the experts of a
//     mixture, Transformer Engine's GroupedLinear, DeepGEMM's grouped layouts) spreads
//     the tiles of all its groups over the SMs, so its tiles are counted together.
//   - Short reductions. Each tile fills its pipeline and writes its output once
//     whatever the reduction length K: a fixed cost worth gemmTileOverheadK steps of
//     its K loop, so a tile runs at K / (K + K0) of its long-K rate. The presets'
//     efficiencies are those of the large products (K of 4,096 and more), where the
//     measured rates stop rising (a power-limited clock: 636 to 738 TFLOP/s in 16 bits
//     on the H100 for K from 4,096 to 14,336), so a product's rate is scaled by
//     min(1, kappa(K) / kappa(gemmReferenceK)).
//
// A layer's forward product is m x k by k x n; its backward pass runs two of the same
// FLOPs: the input's gradient (m x n by n x k, reducing over n) and the weight's (k x m
// by m x n, reducing over the m tokens: short where an expert gets few tokens).

// gemmTiles are the output tiles (rows x columns) a GEMM library chooses among on
// Hopper and Blackwell: CUTLASS's and cuBLAS's warp-specialized 128 x 128, 128 x 256
// and 256 x 128 (DeepGEMM's "BLOCK_M=128, BLOCK_N=128" example of 112 of 132 SMs
// busy; NVIDIA's user's guide, "Wave quantization"). Adding Hopper's 64-row tiles
// (64 x 128, 64 x 256) fits the measured products worse (the best rms on the H100 in
// 16 bits rises from 0.082 to 0.096, on the H200 in fp8 from 0.027 to 0.028, and the
// short-reduction term stops paying for itself): cuBLAS ran the small products as if
// it had none.
var gemmTiles = [][2]float64{{128, 128}, {128, 256}, {256, 128}}

// gemmTileOverheadK is K0, the fixed cost of a 16-bit tile (pipeline fill and epilogue)
// in steps of its K loop. Fitted to the single products measured with cuBLAS on an H100
// SXM and an H200 (core/request/testdata/measured_h100_steps.json and
// measured_h200_steps.json, "gemm"; tools/measure/steps.py; each fit also takes a
// plateau rate and a fixed time per timed call, the host's launch inside the timed
// window): 400 and 700 fit best in 16 bits, 800 and 1,100 in fp8, whose tiles run
// their K loop twice as fast for the same fixed time; 550 (1,100 in fp8) sits between
// them. TestGEMMShapeModel refits it. DeepGEMM's fp8 kernels, tuned for short K, lose
// less (its README's dense table on an H800, K of 512 to 16,384 at 4,096 rows: K0
// near 450 in fp8). Blackwell's products take the same K0, which OpenXLA's measured
// B200 products bear out (its default GEMM table, sm_100_B200 in 16 bits: products of
// 2,048 and 4,096 rows, 1,024 to 4,096 wide and deep, within 6% of the b200 preset's
// rate at K0 550, 4.0% rms, where 1,100 misses by 9% and no term by 13%;
// TestGEMMShapeModelBlackwell).
const gemmTileOverheadK = 550

// gemmReferenceK is the reduction length of the large products that the presets'
// efficiencies stand for: from 4,096 on the measured rates no longer rise with K.
const gemmReferenceK = 4096

// gemmShape is a (grouped) matrix product: groups products of an m x k matrix by a
// k x n one. The zero value is no product.
type gemmShape struct {
	groups, m, k, n float64
	// fwdChunks and dgradChunks, above 1, run the forward product and the backward's
	// input gradient as that many products of m / chunks rows one after another
	// (PyTorch's async tensor parallelism decomposes the products it fuses with a
	// collective: calc.asyncChunks): each quantizes its own waves.
	fwdChunks, dgradChunks float64
	// fwdMarginSMs, bwdMarginSMs and wgradMarginSMs are the multiprocessors the
	// forward product, the backward's input gradient and its weight gradient leave to
	// a communication kernel running beside them (Transformer Engine's userbuffers with
	// set_sm_margin: calc.userbuffersChunks): they run on sms - margin of them.
	fwdMarginSMs, bwdMarginSMs, wgradMarginSMs float64
}

// waveFraction is the useful fraction of the multiprocessors' time for an m x n
// output in each of groups products, spread in tiles over sms multiprocessors: the
// best of gemmTiles.
func waveFraction(groups, m, n, sms float64) float64 {
	best := 0.0
	for _, t := range gemmTiles {
		tiles := groups * math.Ceil(m/t[0]) * math.Ceil(n/t[1])
		waves := math.Ceil(tiles / sms)
		best = max(best, groups*m*n/(waves*sms*t[0]*t[1]))
	}
	return best
}

// reductionFraction is a tile's rate at reduction length k relative to the reference
// products': kappa(k) / kappa(gemmReferenceK) with kappa(k) = k / (k + k0), at most 1.
func reductionFraction(k, k0 float64) float64 {
	if k0 <= 0 {
		return 1
	}
	return min(1, k/(k+k0)*(gemmReferenceK+k0)/gemmReferenceK)
}

// productFraction is the fraction of the device's large-product rate that one product
// of groups x (m x k by k x n) reaches on sms multiprocessors, with tile overhead k0.
func productFraction(groups, m, k, n, sms, k0 float64) float64 {
	if sms <= 0 || m <= 0 || k <= 0 || n <= 0 {
		return 1
	}
	return waveFraction(max(1, groups), m, n, sms) * reductionFraction(k, k0)
}

// fraction is the shape's fraction of the large-product rate in one pass: the forward
// product, or the backward's two (input gradient reducing over n, weight gradient over
// m, each half the FLOPs: their times add). 1 for no product or no multiprocessor
// count.
func (g gemmShape) fraction(bwd bool, sms, k0 float64) float64 {
	if g.m <= 0 || sms <= 0 {
		return 1
	}
	if !bwd {
		return marginFraction(g.groups, g.m/max(1, g.fwdChunks), g.k, g.n, sms, g.fwdMarginSMs, k0)
	}
	dgrad := marginFraction(g.groups, g.m/max(1, g.dgradChunks), g.n, g.k, sms, g.bwdMarginSMs, k0)
	wgrad := marginFraction(g.groups, g.k, g.m, g.n, sms, g.wgradMarginSMs, k0)
	return 2 / (1/dgrad + 1/wgrad)
}

// marginFraction is productFraction on sms - margin of the device's sms
// multiprocessors, as a fraction of the whole device's large-product rate: the
// product's waves quantized over the SMs it has, times the share of the SMs it has.
// A margin of 0 (or one that leaves no SM) is productFraction.
func marginFraction(groups, m, k, n, sms, margin, k0 float64) float64 {
	if margin <= 0 || margin >= sms {
		return productFraction(groups, m, k, n, sms, k0)
	}
	return productFraction(groups, m, k, n, sms-margin, k0) * (sms - margin) / sms
}
