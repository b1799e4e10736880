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
//	head dim 64, forward:            FA2 282 306 318 321 322 324   cuDNN 335 373 395 408 412 413   FA3 333 392 460 476 496 497
//	head dim 64, forward, causal:    FA2 180 229 262 284 295 299   cuDNN 225 288 334 363 379 388   FA3 197 265 371 420 460 473
//	head dim 64, backward:           FA2 198 238 264 279 287 291   cuDNN 266 348 395 417 432 433   FA3 272 363 422 453 472 474
//	head dim 256, forward:           FA2 275 313 321 323 324 326   cuDNN 470 546 580 581 580 581   FA3 482 635 707 736 746 756
//	head dim 256, forward, causal:   FA2 208 251 278 293 297 298   cuDNN 308 391 450 483 497 509   FA3 286 427 537 612 628 642
//
// (the forward rows: the paper's forward figure, head dims 64, 128 and 256, with and
// without the causal mask, checked against the flash-attention repository's copy of it,
// Dao-AILab/flash-attention assets/flash3_fp16_fwd.png at 0251105, whose panels (a)-(f)
// are 64, 128 and 256 each without and with the mask; the backward figure has head dims
// 64 and 128 only. Panel (e)'s FlashAttention-3 label at 1k lies under the legend: 635
// is the bar's height read against the labelled bars' scale, 3.1 TFLOP/s a pixel, to
// within 10. A head of 64 does half the products per
// exponential of 128's, and runs at 67-94% of its rate; a head of 256 twice, where
// FlashAttention-2 runs 12% slower than at 128 (its tiles shrink to fit the shared
// memory) and FlashAttention-3 up to 17% faster.) Assumptions where
// the paper has no figure: a causal backward pass reaches the non-causal backward's rate
// times the forward's causal/non-causal ratio at the same length, the forward's at the
// layer's own head dimension where it is published (the causal kernels skip the same
// blocks in both passes: cuDNN 9.19's four passes measured on an H200, NVIDIA's
// cudnn-frontend llama3.1 rows below, put the backward's ratio 1-4% under the forward's
// up to 16k and 2% over at 32k, TestCausalBackwardRuleAgainstCuDNN; FlashAttention-2's
// README pairs put the rule 3-11% slow at head dim 128); a head dimension without a figure for a pass takes the
// nearest one's in log2 (256's backward takes 128's; 192, Nemotron-4's head and
// DeepSeek's query-key width, takes 256's forward and 128's backward); sequences beyond 16k take the 16k rate (every curve has
// flattened by 8k), and below 512 the 512 rate. Between the points the rate is
// interpolated linearly in log2 of the length. H200 has H100's compute, and takes
// H100's figures; the 500 W H100 (h100-96gb-500w) takes the same fractions of its own
// lower peak.
//
// Sliding windows on Hopper. NVIDIA's cuDNN frontend benchmark (NVIDIA/cudnn-frontend,
// benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/
// gpt_oss_20260227_034819.csv, February 2026, cuDNN 9.19, an H200) times gpt-oss's
// layout (64 query and 8 key-value heads of 64, batch 2) causal within a sliding window
// of 1,024 keys, FLOPs counted over the window's pairs. In TFLOP/s at 2k, 4k, 8k, 16k
// and 32k:
//
//	H200, head dim 64, window 1024, forward, causal:   310 336 349 355 358
//	H200, head dim 64, window 1024, backward, causal:  264 289 300 303 299
//
// (the table's knots run 512 to 16k: 512 and 1k hold the 2k figure, and 32k, beyond
// the last, is not kept). A sliding layer (window narrower than its sequence) on a
// Hopper GPU takes them (the nearest window measured to gpt-oss's 128 in log2, as on
// Blackwell), where before it took the whole-sequence curves of Shah et al., whose
// causal forward at 4k (363) and derived causal backward (371) price a band of keys
// 8% and 28% faster than cuDNN runs a band of 1,024. Whole-sequence attention keeps
// Shah et al.'s curves (attentionTable.usable). No Hopper figure with gpt-oss's own
// window of 128 is published (the repository's gpt_oss/ rows with window 128 are
// Blackwell's, where a band of 128 runs at a quarter to a third of a band of 1,024);
// the window-1,024 rate is an upper bound for it, so Hopper's sliding layers stay
// priced fast.
//
// Blackwell. NVIDIA's cuDNN frontend publishes its fused attention's training speed
// (NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training, results/
// gb200_918_only_cudnn and gb300_918_only_cudnn, January 2026: cuDNN 9.18, the one of
// the NeMo 25.11 and 26.02 containers' time), BF16, batch 1, counted as Shah et al.
// count (a causal pass at half the FLOPs, the backward at 2.5 times the forward), on a
// GB200 and a GB300, at 2k to 32k tokens: Llama 3.1's layout (64 query and 8 key-value
// heads of 128) with and without the causal mask, and DeepSeek-V3's latent attention
// (128 heads, 192 query-key and 128 value dimensions, deterministic backward) causal.
// In TFLOP/s at 2k, 4k,
// 8k, 16k and 32k:
//
//	GB200, head dim 128, forward:          1232 1569 1675 1746 1756
//	GB200, head dim 128, forward, causal:  1022 1297 1563 1646 1686
//	GB200, head dim 128, backward:         1070 1261 1381 1429 1469
//	GB200, head dim 128, backward, causal:  824 1105 1279 1371 1441
//	GB200, head dim 192, forward, causal:  1053 1324 1501 1698 1792
//	GB200, head dim 192, backward, causal:  859 1083 1217 1298 1311
//	GB300, head dim 128, forward:          1559 1901 1967 2001 2022
//	GB300, head dim 128, forward, causal:  1265 1679 1927 1998 2031
//	GB300, head dim 128, backward:         1151 1352 1498 1557 1552
//	GB300, head dim 128, backward, causal:  900 1198 1391 1494 1552
//	GB300, head dim 192, forward, causal:  1158 1570 1811 1969 2063
//	GB300, head dim 192, backward, causal:  906 1160 1321 1403 1420
//
// and, from the same repository's gpt-oss rows (results/gb200_919_only_cudnn and
// gb300_919_only_cudnn, February 2026, cuDNN 9.19: 64 query and 8 key-value heads of
// 64, causal within a sliding window of 1,024 keys, batch 2), head dim 64:
//
//	GB200, head dim 64, forward, causal:    497  574  609  624  632
//	GB200, head dim 64, backward, causal:   559  617  646  658  660
//	GB300, head dim 64, forward, causal:    581  675  718  738  748
//	GB300, head dim 64, backward, causal:   583  638  668  682  689
//
// taken for attention of head dim 64 over the whole sequence or a wide window
// (gpt-oss's full layers; full causal attention at head dim 64 is not published at
// cuDNN 9.19). A head dim of 64 halves the products per exponential, and the
// exponential units bound the forward pass. The same repository's later gpt-oss rows
// (results/gpt_oss/gb200/gpt_oss_20260424_100011.csv and gb300/..._100022.csv, April
// 2026, cuDNN 9.22: 128 heads of 64, causal within gpt-oss's own sliding window of 128
// keys, batch 2, FLOPs counted over the window's pairs as here) give the sliding layers'
// rate, a quarter of the window-1,024 kernel's: a band of 128 keys leaves most of each
// 128 x 128 tile masked, and a query tile little work between its fixed costs:
//
//	GB200, head dim 64, window 128, forward, causal:   153  161  165  167  104
//	GB200, head dim 64, window 128, backward, causal:  176  182  187  188  186
//	GB300, head dim 64, window 128, forward, causal:   160  167  172  173  108
//	GB300, head dim 64, window 128, backward, causal:  184  191  198  200  199
//
// (the 32k forward as published). A layer takes the curve measured with the window
// nearest its own in log2 (attentionTable.windowOf; whole-sequence attention the widest),
// so cuDNN's rates of 9.22 stand for the older containers' sliding layers too.
//
// Of the 2.5 PFLOP/s dense 16-bit peak both are rated at, that is 33% to 72% on a GB200
// and 36% to 83% on a GB300, rising with the length: not the matrix efficiency. Blackwell doubled the tensor
// cores' rate over Hopper but not the special function units that evaluate the
// softmax's exponentials nor the shared memory's bandwidth, which bound attention's
// forward and backward passes (Zadouri et al. 2026, "FlashAttention-4", arXiv
// 2603.05451); Blackwell Ultra doubles the exponential units' throughput (NVIDIA,
// "Inside NVIDIA Blackwell Ultra", 2025), hence GB300's faster forward. A B200 takes
// the GB200's fractions of its own peak (the same chip at a lower power and clock), a
// B300 the GB300's. The same repository's B200 and GB300 runs of flash-attn 2.7.4
// (artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv and _GB300.csv, causal, 128
// query heads, batch 1) give FlashAttention-2, a kernel written for Ampere:
//
//	B200, head dim 128, forward, causal:   254 343 400 425 436
//	B200, head dim 128, backward, causal:  199 273 318 337 346
//	GB300, head dim 128, forward, causal:  285 392 440 465 475
//	GB300, head dim 128, backward, causal: 247 315 352 369 378
//
// Where only a causal figure is published the non-causal pass takes it (a causal
// kernel skips the masked blocks, so its rate is the lower of the two).
//
// FlashAttention's Triton implementation (FlashTriton: flash_attn/flash_attn_triton.py,
// the kernel LLM Foundry's attn_impl triton runs). FlashAttention-2's own benchmark
// (Dao-AILab/flash-attention README, assets/flash2_a100_fwd_bwd_benchmark.png; Dao 2023,
// Figure 4) times it beside FlashAttention-2 on an A100 80GB SXM4 (312 TFLOP/s dense
// 16-bit peak), forward and backward together, batch x sequence = 16k, hidden 2048,
// counted as above (a causal pass at half the FLOPs). In TFLOP/s at 512, 1k, 2k, 4k, 8k
// and 16k (three FlashAttention-2 labels lie partly under the legend: head dim 64 at
// 1k, 153, and head dim 128 at 512 and 1k, 151 and 173, read with the bars' heights):
//
//	head dim 64:          Triton  90 102  98  98 100 100   FA2 132 153 162 171 175 176
//	head dim 128:         Triton  78  85  90  93  95  95   FA2 151 173 187 196 201 203
//	head dim 64, causal:  Triton  59  75  79  76  79  80   FA2  88 119 140 156 165 171
//	head dim 128, causal: Triton  50  61  68  74  78  80   FA2  99 133 155 173 182 189
//
// FlashAttention-2 on an A100 takes its own bars of this figure, each pass at the
// forward-and-backward rate as the Triton kernel's do: 28% to 65% of the A100's peak,
// where before these figures it ran at the A100 preset's matrix efficiency (0.75, 234
// TFLOP/s), 15% to 166% faster than its authors measured it (TestFlashA100Published).
// The paper's forward-only A100 figure (Dao 2023, Figure 5: up to 73% of the peak) would
// split the pair between the passes; it is not in the repository and is not used, so a
// recomputed forward is priced at the pair's rate, slower than its own.
//
// The Triton kernel runs at 42-68% of FlashAttention-2 (about FlashAttention-1's speed:
// the same figure's FlashAttention bars, 55-83 TFLOP/s causal at head dim 128; LLM
// Foundry's tutorial: "triton is slightly faster than flash", its flash then being
// flash-attn 1.0.9). On an A100 each pass takes the forward-and-backward rate (which
// prices the pair exactly). On Hopper no figure of it is published: each pass takes
// FlashAttention-2's H100 rate (above) times the A100 ratio of Triton to
// FlashAttention-2 at the same length, head dimension and mask. Assumption: both
// kernels issue Ampere's mma.sync instructions on Hopper (FlashAttention-2 has no
// Hopper path; the pre-MLIR Triton compiler LLM Foundry used predates wgmma), so the
// ratio carries over. Cross-check: the same README's H100 figure
// (assets/flash2_h100_fwd_bwd_benchmark.png) gives FlashAttention-1 at 137 TFLOP/s
// causal at head dim 128 and 16k, this rule Triton at 139 (328 x 80/189, with
// FlashAttention-2's published 328). The same H100 figure checks the causal backward's
// assumption above: FlashAttention-2 forward and backward together, causal, head dim
// 128, at 512 to 16k: 163 221 265 294 308 328, where the forward and the derived
// backward give 145 208 254 281 298 303 (3.5 / (1/fwd + 2.5/bwd)): the pair is priced
// 3-11% slow, not fast (8% at 16k); non-causal, 248 294 320 326 335 338 published,
// 235 281 308 325 331 334 priced (TestFlashFwdBwdAgainstREADME); at head dim 64 the
// same figure's pairs (causal 141 192 232 257 273 284, non-causal 215 254 274 288 294
// 296) are priced within 3% either way. FlashAttention-2's
// rates do not explain the long-sequence optimism of issue 19. Its backward accumulates
// dQ in fp32 (csrc/flash_attn/flash_api.cpp, dq_accum) inside the timed kernels; with
// grouped-query attention it computes dK and dV per query head and sums each group's
// after the kernel (at::sum_out of dk_expanded and dv_expanded): memory traffic linear
// in the tokens, not priced, about 1% of an 8k layer's attention (less beyond). A full
// recomputation reruns the forward kernel once more (priced: calc.rerun), the backward
// recomputing the scores within the 2.5x it counts.
//
// Other devices have no published per-kernel figures here: their flash kernels run at
// the matrix efficiency, and so does cuDNN's fused attention on an A100 (no figure of it
// is published). FlashAttention-3 runs on
// Hopper only (it is built on Hopper's wgmma and TMA instructions), so Flash3 is
// refused elsewhere. Eager attention is not looked up: its products are ordinary
// batched GEMMs (at the matrix efficiency) and its softmax, masking and dropout are
// memory-bound kernels at the achievable bandwidth (attention).

// FP8 attention (Options.FP8Attention). The same repository publishes cuDNN's fp8
// fused attention beside its 16-bit one, counted the same way: per-tensor-scaled fp8
// ("fp8", Transformer Engine's delayed and current scaling recipes) and MXFP8 ("mxfp8",
// its MXFP8 recipe: MXFP8BlockScaling with fp8_dpa, which Transformer Engine runs
// through cuDNN from cuDNN 9.21: its test_fp8_dpa_forward_backward's MXFP8 case; an
// assumption that Megatron-Core's fp8_dot_product_attention under the mxfp8 recipe
// takes this path rather than per-tensor fp8). On a GB200 and a GB300 (results/llama3.1/gb200/
// llama3.1_20260424_100750.csv, gb300/..._100757.csv, results/dsv3/gb200/
// dsv3_20260424_101009.csv and gb300/..._101002.csv, April 2026, cuDNN 9.22, batch 2,
// non-deterministic backward): Llama 3.1's layout (64 query and 8 key-value heads of
// 128) and DeepSeek-V3's latent attention (128 heads, 192 query-key and 128 value
// dimensions), in TFLOP/s at 2k, 4k, 8k, 16k and 32k:
//
//	GB200, fp8,   head dim 128, forward:          1881 2093 2241 2263 2223
//	GB200, fp8,   head dim 128, forward, causal:  1420 1805 2047 2154 2197
//	GB200, fp8,   head dim 128, backward:         1214 1577 1772 1836 1825
//	GB200, fp8,   head dim 128, backward, causal:  831 1178 1454 1632 1687
//	GB200, mxfp8, head dim 128, forward:          1754 1944 2080 2103 2070
//	GB200, mxfp8, head dim 128, forward, causal:  1330 1685 1902 1999 2046
//	GB200, mxfp8, head dim 128, backward:         1069 1344 1495 1554 1480
//	GB200, mxfp8, head dim 128, backward, causal:  745 1054 1287 1436 1425
//	GB200, fp8,   head dim 192, forward:          2175 2518 2582 2590 2340
//	GB200, fp8,   head dim 192, forward, causal:  1659 2095 2397 2486 2447
//	GB200, fp8,   head dim 192, backward:         1807 2071 2122 1989 1932
//	GB200, fp8,   head dim 192, backward, causal: 1312 1692 1959 1968 1857
//	GB200, mxfp8, head dim 192, forward:          2018 2316 2408 2492 2162
//	GB200, mxfp8, head dim 192, forward, causal:  1535 1925 2219 2355 2329
//	GB200, mxfp8, head dim 192, backward:         1504 1675 1680 1638 1561
//	GB200, mxfp8, head dim 192, backward, causal: 1047 1364 1494 1552 1532
//	GB300, fp8,   head dim 128, forward:          2728 2988 3160 3182 3050
//	GB300, fp8,   head dim 128, forward, causal:  1954 2532 2897 3054 3108
//	GB300, fp8,   head dim 128, backward:         1390 1839 2111 2177 2178
//	GB300, fp8,   head dim 128, backward, causal:  944 1396 1781 2035 2128
//	GB300, mxfp8, head dim 128, forward:          2443 2693 2870 2889 2814
//	GB300, mxfp8, head dim 128, forward, causal:  1751 2272 2570 2727 2785
//	GB300, mxfp8, head dim 128, backward:         1164 1469 1636 1689 1654
//	GB300, mxfp8, head dim 128, backward, causal:  811 1143 1404 1563 1590
//	GB300, fp8,   head dim 192, forward:          3058 3304 3400 3438 3362
//	GB300, fp8,   head dim 192, forward, causal:  2290 2788 3128 3305 3364
//	GB300, fp8,   head dim 192, backward:         2099 2406 2509 2579 2466
//	GB300, fp8,   head dim 192, backward, causal: 1511 1982 2310 2459 2406
//	GB300, mxfp8, head dim 192, forward:          2758 3015 3108 3117 3063
//	GB300, mxfp8, head dim 192, forward, causal:  2069 2517 2829 2998 2959
//	GB300, mxfp8, head dim 192, backward:         1665 1921 2027 2007 1948
//	GB300, mxfp8, head dim 192, backward, causal: 1158 1522 1780 1844 1863
//
// (the June 2026 runs at cuDNN 9.24, results/dsv3/gb300/dsv3_20260613_103447.csv, are
// within a few percent: MXFP8 causal at 4k, 2538 forward and 1550 backward). The
// forward gains a third or more over 16 bits; the causal backward at 4k little or
// nothing (GB300 MXFP8 1143 against 16-bit 1248 in the same run). On Hopper, an H200
// (results/h200_919_only_cudnn/llama3.1_20260227_034703.csv, February 2026, cuDNN
// 9.19, batch 1, Llama 3.1's layout; per-tensor fp8 only, Hopper has no MXFP8):
//
//	H200, fp8, head dim 128, forward:          870  973 1023 1055 1062
//	H200, fp8, head dim 128, forward, causal:  698  854  964 1010 1042
//	H200, fp8, head dim 128, backward:         531  602  636  659  674
//	H200, fp8, head dim 128, backward, causal: 393  471  430  374  370
//
// taken as fractions of the H100's 16-bit peak (the H200 has its compute) by the H100,
// the H200 and the 500 W H100. A B200 and a B300 take the GB200's and the GB300's
// fractions, as for 16 bits. fp8 rates hold only where cuDNN publishes them: head
// dimensions 128 and 192 (192 on Blackwell only), attention over the whole sequence
// (or causally all before); a layer of another head dimension or with a sliding
// window runs at cuDNN's 16-bit rates (the same repository's fp8 runs of gpt-oss's
// window-128 layers, head dim 64, publish a backward of 7 to 89 TFLOP/s falling with
// the length, a kernel that does not skip the band's masked tiles; whether
// Transformer Engine sends such layers to it is not established, so it is not used).
// The quantization around the kernel (Q, K and V to fp8, the output's gradient) is
// not priced apart: the figures are the kernel's.

// cudnnFP8 and cudnnMXFP8 key the fp8 curves of cuDNN's fused attention (per-tensor
// scaled fp8, and MXFP8) in the tables; Options.FP8Attention selects them
// (attentionRates), they are not values of Options.Attention.
const (
	cudnnFP8   Attention = "cudnn-fp8"
	cudnnMXFP8 Attention = "cudnn-mxfp8"
)

// fp8AttentionKernel is the fp8 attention kernel a recipe runs: MXFP8 under mxfp8,
// per-tensor fp8 otherwise.
func fp8AttentionKernel(r FP8Recipe) Attention {
	if r == MXFP8 {
		return cudnnMXFP8
	}
	return cudnnFP8
}

// attentionPass names a benchmarked pass: the forward and the backward, with or
// without a causal mask.
type attentionPass int

const (
	attnForward attentionPass = iota
	attnForwardCausal
	attnBackward
	attnBackwardCausal
)

type attentionKey struct {
	kernel  Attention
	headDim int
	pass    attentionPass
	// window is the sliding window of keys the curve was measured with; 0: none (each
	// query attends to the whole sequence, or causally to all before it).
	window int
}

// attentionTable is one device's published fused attention speeds: TFLOP/s at the
// sequence lengths seqKnots, by kernel, head dimension and pass, measured on a device
// whose dense 16-bit peak is peak FLOP/s.
type attentionTable struct {
	peak     float64
	seqKnots []float64
	curves   map[attentionKey][]float64
}

// hopperPeak is the dense 16-bit peak of the H100 80GB SXM5 the figures were measured
// on (NVIDIA H100 datasheet).
const hopperPeak = 989e12

// hopperAttention holds Shah et al. 2024's figures (TFLOP/s), listed above.
var hopperAttention = attentionTable{peak: hopperPeak, seqKnots: []float64{512, 1024, 2048, 4096, 8192, 16384},
	curves: map[attentionKey][]float64{
		{Flash, 128, attnForward, 0}:          {309, 350, 362, 368, 370, 370},
		{Flash, 128, attnForwardCausal, 0}:    {191, 260, 298, 319, 333, 335},
		{Flash, 128, attnBackward, 0}:         {214, 260, 291, 310, 318, 322},
		{Flash, 64, attnForward, 0}:           {282, 306, 318, 321, 322, 324},
		{Flash, 64, attnForwardCausal, 0}:     {180, 229, 262, 284, 295, 299},
		{Flash, 64, attnBackward, 0}:          {198, 238, 264, 279, 287, 291},
		{CuDNN, 128, attnForward, 0}:          {497, 574, 617, 609, 600, 595},
		{CuDNN, 128, attnForwardCausal, 0}:    {315, 410, 484, 518, 529, 539},
		{CuDNN, 128, attnBackward, 0}:         {305, 408, 465, 499, 518, 516},
		{CuDNN, 64, attnForward, 0}:           {335, 373, 395, 408, 412, 413},
		{CuDNN, 64, attnForwardCausal, 0}:     {225, 288, 334, 363, 379, 388},
		{CuDNN, 64, attnBackward, 0}:          {266, 348, 395, 417, 432, 433},
		{CuDNN, 64, attnForwardCausal, 1024}:  {310, 310, 310, 336, 349, 355},
		{CuDNN, 64, attnBackwardCausal, 1024}: {264, 264, 264, 289, 300, 303},
		{Flash3, 128, attnForward, 0}:         {467, 565, 625, 638, 646, 648},
		{Flash3, 128, attnForwardCausal, 0}:   {292, 423, 521, 579, 602, 616},
		{Flash3, 128, attnBackward, 0}:        {316, 424, 501, 542, 559, 561},
		{Flash3, 64, attnForward, 0}:          {333, 392, 460, 476, 496, 497},
		{Flash3, 64, attnForwardCausal, 0}:    {197, 265, 371, 420, 460, 473},
		{Flash3, 64, attnBackward, 0}:         {272, 363, 422, 453, 472, 474},
		{Flash, 256, attnForward, 0}:          {275, 313, 321, 323, 324, 326},
		{Flash, 256, attnForwardCausal, 0}:    {208, 251, 278, 293, 297, 298},
		{CuDNN, 256, attnForward, 0}:          {470, 546, 580, 581, 580, 581},
		{CuDNN, 256, attnForwardCausal, 0}:    {308, 391, 450, 483, 497, 509},
		{Flash3, 256, attnForward, 0}:         {482, 635, 707, 736, 746, 756},
		{Flash3, 256, attnForwardCausal, 0}:   {286, 427, 537, 612, 628, 642},
	}}

// amperePeak is the dense 16-bit peak of the A100 (NVIDIA A100 datasheet).
const amperePeak = 312e12

// ampereKnots are the lengths of FlashAttention-2's benchmark figures.
var ampereKnots = []float64{512, 1024, 2048, 4096, 8192, 16384}

// a100FwdBwd holds FlashAttention-2's A100 figure (listed above): forward and backward
// together, TFLOP/s, by kernel, head dimension and causal mask.
var a100FwdBwd = map[struct {
	kernel  Attention
	headDim int
	causal  bool
}][]float64{
	{Flash, 64, false}:        {132, 153, 162, 171, 175, 176},
	{Flash, 128, false}:       {151, 173, 187, 196, 201, 203},
	{Flash, 64, true}:         {88, 119, 140, 156, 165, 171},
	{Flash, 128, true}:        {99, 133, 155, 173, 182, 189},
	{FlashTriton, 64, false}:  {90, 102, 98, 98, 100, 100},
	{FlashTriton, 128, false}: {78, 85, 90, 93, 95, 95},
	{FlashTriton, 64, true}:   {59, 75, 79, 76, 79, 80},
	{FlashTriton, 128, true}:  {50, 61, 68, 74, 78, 80},
	{Flash1, 64, false}:       {91, 92, 104, 108, 110, 110},
	{Flash1, 128, false}:      {76, 72, 76, 80, 82, 83},
	{Flash1, 64, true}:        {58, 70, 77, 87, 92, 97},
	{Flash1, 128, true}:       {55, 62, 69, 76, 80, 83},
}

// h100FwdBwd holds FlashAttention-2's H100 figure (Dao-AILab/flash-attention README,
// assets/flash2_h100_fwd_bwd_benchmark.png, committed 2023-07-17: H100 80GB SXM5,
// forward and backward together, batch x sequence = 16k, hidden 2048, TFLOP/s at 512,
// 1k, 2k, 4k, 8k and 16k), FlashAttention (version 1) beside FlashAttention-2:
//
//	head dim 64:          FA1 157 159 161 161 166 168   FA2 215 254 274 288 294 296
//	head dim 128:         FA1 127 127 128 131 137 139   FA2 248 294 320 326 335 338
//	head dim 64, causal:  FA1 104 123 136 138 149 156   FA2 141 192 232 257 273 284
//	head dim 128, causal: FA1  98 109 108 126 135 137   FA2 163 221 265 294 308 328
//
// On an A100 FlashAttention-1 runs each pass at the A100 figure's FlashAttention bars
// (a100FwdBwd), as the Triton kernel does; on Hopper each pass takes
// FlashAttention-2's H100 rate for it times this figure's FlashAttention-1 over
// FlashAttention-2 at the same length, head dimension and mask (0.41 to 0.73), so its
// forward-and-backward rate is the published one wherever FlashAttention-2's priced
// pair is (TestFlashFwdBwdAgainstREADME). The figure's FlashAttention is the last 1.x
// release of its day (1.0.9); MLPerf v3.0's GPT-3 pinned flash_attn 1.0.5, the same
// kernel generation (an assumption: no figure of 1.0.5 itself is published).
var h100FwdBwd = map[struct {
	kernel  Attention
	headDim int
	causal  bool
}][]float64{
	{Flash, 64, false}:   {215, 254, 274, 288, 294, 296},
	{Flash, 128, false}:  {248, 294, 320, 326, 335, 338},
	{Flash, 64, true}:    {141, 192, 232, 257, 273, 284},
	{Flash, 128, true}:   {163, 221, 265, 294, 308, 328},
	{Flash1, 64, false}:  {157, 159, 161, 161, 166, 168},
	{Flash1, 128, false}: {127, 127, 128, 131, 137, 139},
	{Flash1, 64, true}:   {104, 123, 136, 138, 149, 156},
	{Flash1, 128, true}:  {98, 109, 108, 126, 135, 137},
}

// flash1Ratio is the H100 figure's FlashAttention-1 rate over FlashAttention-2's, knot by
// knot.
func flash1Ratio(headDim int, causal bool) []float64 {
	type key = struct {
		kernel  Attention
		headDim int
		causal  bool
	}
	a, b := h100FwdBwd[key{Flash1, headDim, causal}], h100FwdBwd[key{Flash, headDim, causal}]
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	return r
}

// ampereAttention holds the A100 figures of the Triton kernel and of FlashAttention-2,
// the forward-and-backward rate for each pass.
var ampereAttention = attentionTable{peak: amperePeak, seqKnots: ampereKnots, curves: map[attentionKey][]float64{}}

// tritonRatio is the A100 figure's Triton rate over FlashAttention-2's, knot by knot.
func tritonRatio(headDim int, causal bool) []float64 {
	t := a100FwdBwd[struct {
		kernel  Attention
		headDim int
		causal  bool
	}{FlashTriton, headDim, causal}]
	f := a100FwdBwd[struct {
		kernel  Attention
		headDim int
		causal  bool
	}{Flash, headDim, causal}]
	r := make([]float64, len(t))
	for i := range t {
		r[i] = t[i] / f[i]
	}
	return r
}

// times multiplies two curves knot by knot.
func times(a, b []float64) []float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] * b[i]
	}
	return r
}

func init() {
	for _, d := range []int{64, 128} {
		for _, causal := range []bool{false, true} {
			c := a100FwdBwd[struct {
				kernel  Attention
				headDim int
				causal  bool
			}{FlashTriton, d, causal}]
			fwd, bwd := attnForward, attnBackward
			if causal {
				fwd, bwd = attnForwardCausal, attnBackwardCausal
			}
			fa := a100FwdBwd[struct {
				kernel  Attention
				headDim int
				causal  bool
			}{Flash, d, causal}]
			f1 := a100FwdBwd[struct {
				kernel  Attention
				headDim int
				causal  bool
			}{Flash1, d, causal}]
			for _, p := range []attentionPass{fwd, bwd} {
				ampereAttention.curves[attentionKey{FlashTriton, d, p, 0}] = c
				ampereAttention.curves[attentionKey{Flash, d, p, 0}] = fa
				ampereAttention.curves[attentionKey{Flash1, d, p, 0}] = f1
			}
		}
		// Hopper: FlashAttention-2's passes times the A100 ratio; the causal backward
		// follows from these by the rule for FlashAttention-2's (attentionEfficiencyIn).
		h := hopperAttention.curves
		h[attentionKey{FlashTriton, d, attnForward, 0}] = times(h[attentionKey{Flash, d, attnForward, 0}], tritonRatio(d, false))
		h[attentionKey{FlashTriton, d, attnForwardCausal, 0}] = times(h[attentionKey{Flash, d, attnForwardCausal, 0}], tritonRatio(d, true))
		h[attentionKey{FlashTriton, d, attnBackward, 0}] = times(h[attentionKey{Flash, d, attnBackward, 0}], tritonRatio(d, false))
		h[attentionKey{Flash1, d, attnForward, 0}] = times(h[attentionKey{Flash, d, attnForward, 0}], flash1Ratio(d, false))
		h[attentionKey{Flash1, d, attnForwardCausal, 0}] = times(h[attentionKey{Flash, d, attnForwardCausal, 0}], flash1Ratio(d, true))
		h[attentionKey{Flash1, d, attnBackward, 0}] = times(h[attentionKey{Flash, d, attnBackward, 0}], flash1Ratio(d, false))
	}
}

// blackwellPeak is the dense 16-bit peak of the GB200 and the GB300 (NVIDIA's GB200
// NVL72 and GB300 NVL72 datasheets: 180 PFLOP/s over 72 GPUs).
const blackwellPeak = 2.5e15

// blackwellKnots are the lengths of NVIDIA's cuDNN frontend benchmarks.
var blackwellKnots = []float64{2048, 4096, 8192, 16384, 32768}

// blackwellAttention holds the GB200's figures and the B200's FlashAttention-2 (listed
// above), the latter rescaled to the GB200's peak (measured on a B200, 2.25 PFLOP/s).
var blackwellAttention = attentionTable{peak: blackwellPeak, seqKnots: blackwellKnots,
	curves: map[attentionKey][]float64{
		{CuDNN, 128, attnForward, 0}:          {1232, 1569, 1675, 1746, 1756},
		{CuDNN, 128, attnForwardCausal, 0}:    {1022, 1297, 1563, 1646, 1686},
		{CuDNN, 128, attnBackward, 0}:         {1070, 1261, 1381, 1429, 1469},
		{CuDNN, 128, attnBackwardCausal, 0}:   {824, 1105, 1279, 1371, 1441},
		{CuDNN, 192, attnForwardCausal, 0}:    {1053, 1324, 1501, 1698, 1792},
		{CuDNN, 192, attnBackwardCausal, 0}:   {859, 1083, 1217, 1298, 1311},
		{CuDNN, 64, attnForwardCausal, 1024}:  {497, 574, 609, 624, 632},
		{CuDNN, 64, attnBackwardCausal, 1024}: {559, 617, 646, 658, 660},
		{CuDNN, 64, attnForwardCausal, 128}:   {153, 161, 165, 167, 104},
		{CuDNN, 64, attnBackwardCausal, 128}:  {176, 182, 187, 188, 186},
		{Flash, 128, attnForwardCausal, 0}:    scaled(blackwellPeak/2.25e15, 254, 343, 400, 425, 436),
		{Flash, 128, attnBackwardCausal, 0}:   scaled(blackwellPeak/2.25e15, 199, 273, 318, 337, 346),

		{cudnnFP8, 128, attnForward, 0}:          {1881, 2093, 2241, 2263, 2223},
		{cudnnFP8, 128, attnForwardCausal, 0}:    {1420, 1805, 2047, 2154, 2197},
		{cudnnFP8, 128, attnBackward, 0}:         {1214, 1577, 1772, 1836, 1825},
		{cudnnFP8, 128, attnBackwardCausal, 0}:   {831, 1178, 1454, 1632, 1687},
		{cudnnMXFP8, 128, attnForward, 0}:        {1754, 1944, 2080, 2103, 2070},
		{cudnnMXFP8, 128, attnForwardCausal, 0}:  {1330, 1685, 1902, 1999, 2046},
		{cudnnMXFP8, 128, attnBackward, 0}:       {1069, 1344, 1495, 1554, 1480},
		{cudnnMXFP8, 128, attnBackwardCausal, 0}: {745, 1054, 1287, 1436, 1425},
		{cudnnFP8, 192, attnForward, 0}:          {2175, 2518, 2582, 2590, 2340},
		{cudnnFP8, 192, attnForwardCausal, 0}:    {1659, 2095, 2397, 2486, 2447},
		{cudnnFP8, 192, attnBackward, 0}:         {1807, 2071, 2122, 1989, 1932},
		{cudnnFP8, 192, attnBackwardCausal, 0}:   {1312, 1692, 1959, 1968, 1857},
		{cudnnMXFP8, 192, attnForward, 0}:        {2018, 2316, 2408, 2492, 2162},
		{cudnnMXFP8, 192, attnForwardCausal, 0}:  {1535, 1925, 2219, 2355, 2329},
		{cudnnMXFP8, 192, attnBackward, 0}:       {1504, 1675, 1680, 1638, 1561},
		{cudnnMXFP8, 192, attnBackwardCausal, 0}: {1047, 1364, 1494, 1552, 1532},
	}}

// hopperFP8Attention holds the H200's fp8 figures (listed above), at the H100's peak.
var hopperFP8Attention = attentionTable{peak: hopperPeak, seqKnots: blackwellKnots,
	curves: map[attentionKey][]float64{
		{cudnnFP8, 128, attnForward, 0}:        {870, 973, 1023, 1055, 1062},
		{cudnnFP8, 128, attnForwardCausal, 0}:  {698, 854, 964, 1010, 1042},
		{cudnnFP8, 128, attnBackward, 0}:       {531, 602, 636, 659, 674},
		{cudnnFP8, 128, attnBackwardCausal, 0}: {393, 471, 430, 374, 370},
	}}

// blackwellUltraAttention holds the GB300's figures (listed above).
var blackwellUltraAttention = attentionTable{peak: blackwellPeak, seqKnots: blackwellKnots,
	curves: map[attentionKey][]float64{
		{CuDNN, 128, attnForward, 0}:          {1559, 1901, 1967, 2001, 2022},
		{CuDNN, 128, attnForwardCausal, 0}:    {1265, 1679, 1927, 1998, 2031},
		{CuDNN, 128, attnBackward, 0}:         {1151, 1352, 1498, 1557, 1552},
		{CuDNN, 128, attnBackwardCausal, 0}:   {900, 1198, 1391, 1494, 1552},
		{CuDNN, 192, attnForwardCausal, 0}:    {1158, 1570, 1811, 1969, 2063},
		{CuDNN, 192, attnBackwardCausal, 0}:   {906, 1160, 1321, 1403, 1420},
		{CuDNN, 64, attnForwardCausal, 1024}:  {581, 675, 718, 738, 748},
		{CuDNN, 64, attnBackwardCausal, 1024}: {583, 638, 668, 682, 689},
		{CuDNN, 64, attnForwardCausal, 128}:   {160, 167, 172, 173, 108},
		{CuDNN, 64, attnBackwardCausal, 128}:  {184, 191, 198, 200, 199},
		{Flash, 128, attnForwardCausal, 0}:    {285, 392, 440, 465, 475},
		{Flash, 128, attnBackwardCausal, 0}:   {247, 315, 352, 369, 378},

		{cudnnFP8, 128, attnForward, 0}:          {2728, 2988, 3160, 3182, 3050},
		{cudnnFP8, 128, attnForwardCausal, 0}:    {1954, 2532, 2897, 3054, 3108},
		{cudnnFP8, 128, attnBackward, 0}:         {1390, 1839, 2111, 2177, 2178},
		{cudnnFP8, 128, attnBackwardCausal, 0}:   {944, 1396, 1781, 2035, 2128},
		{cudnnMXFP8, 128, attnForward, 0}:        {2443, 2693, 2870, 2889, 2814},
		{cudnnMXFP8, 128, attnForwardCausal, 0}:  {1751, 2272, 2570, 2727, 2785},
		{cudnnMXFP8, 128, attnBackward, 0}:       {1164, 1469, 1636, 1689, 1654},
		{cudnnMXFP8, 128, attnBackwardCausal, 0}: {811, 1143, 1404, 1563, 1590},
		{cudnnFP8, 192, attnForward, 0}:          {3058, 3304, 3400, 3438, 3362},
		{cudnnFP8, 192, attnForwardCausal, 0}:    {2290, 2788, 3128, 3305, 3364},
		{cudnnFP8, 192, attnBackward, 0}:         {2099, 2406, 2509, 2579, 2466},
		{cudnnFP8, 192, attnBackwardCausal, 0}:   {1511, 1982, 2310, 2459, 2406},
		{cudnnMXFP8, 192, attnForward, 0}:        {2758, 3015, 3108, 3117, 3063},
		{cudnnMXFP8, 192, attnForwardCausal, 0}:  {2069, 2517, 2829, 2998, 2959},
		{cudnnMXFP8, 192, attnBackward, 0}:       {1665, 1921, 2027, 2007, 1948},
		{cudnnMXFP8, 192, attnBackwardCausal, 0}: {1158, 1522, 1780, 1844, 1863},
	}}

// scaled multiplies published rates by f (a figure measured on a device of another
// peak, kept as the same fraction of the table's).
func scaled(f float64, v ...float64) []float64 {
	for i := range v {
		v[i] *= f
	}
	return v
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

// attentionTableOf returns the published attention speeds that a device preset takes
// (as fractions of its table's peak), or nil.
func attentionTableOf(device string) *attentionTable {
	return attentionTableFor(device, CuDNN)
}

// attentionTableFor is attentionTableOf for a kernel: Hopper's fp8 figures are a table of
// their own (other lengths than its 16-bit ones).
func attentionTableFor(device string, k Attention) *attentionTable {
	if k == cudnnFP8 && hopper(device) {
		return &hopperFP8Attention
	}
	switch strings.ToLower(device) {
	case "h100-sxm", "h200", "h100-96gb-500w":
		return &hopperAttention
	case "a100-40gb", "a100-80gb":
		return &ampereAttention
	case "b200", "gb200":
		return &blackwellAttention
	case "b300", "gb300":
		return &blackwellUltraAttention
	}
	return nil
}

// attentionEfficiency is the fraction of the device's dense 16-bit peak that a fused
// attention kernel reaches in one pass (bwd: the backward), for a head dimension, the
// keys each kernel call attends over (seq) and the causal mask; ok is false where no
// figures are published for the device and kernel (or the kernel is eager), and the
// products then run at the matrix efficiency. It is attentionEfficiencyIn without a
// sliding window.
func attentionEfficiency(device string, k Attention, headDim, seq float64, causal, bwd bool) (eff float64, ok bool) {
	return attentionEfficiencyIn(device, k, headDim, seq, 0, causal, bwd)
}

// attentionEfficiencyIn is attentionEfficiency for queries that attend within a sliding
// window of keys (0: none).
//
// Figures come from the nearest head dimension (in log2) that has the pass, and of its
// curves the one measured with the nearest window (attentionTable.windowOf). A causal
// backward without its own figure is the backward times the forward's causal/non-causal
// ratio at the same length (Hopper); a non-causal pass whose nearest head dimension has
// only the causal figure takes it (head dim 64 and FlashAttention-2 on Blackwell).
func attentionEfficiencyIn(device string, k Attention, headDim, seq, window float64, causal, bwd bool) (eff float64, ok bool) {
	tab := attentionTableFor(device, k)
	if k == Eager || tab == nil {
		return 0, false
	}
	rate := func(p attentionPass) float64 { return tab.rate(k, headDim, seq, window, p) }
	// plain is a non-causal pass's rate: at the nearest head dimension with either
	// figure of that direction, its non-causal figure, else its causal one.
	plain := func(p, causalPass attentionPass) float64 {
		d := tab.nearest(k, headDim, sliding(seq, window), p, causalPass)
		if r := tab.rateAt(k, d, seq, window, p); r > 0 {
			return r
		}
		return tab.rateAt(k, d, seq, window, causalPass)
	}
	var r float64
	switch {
	case !bwd && causal:
		r = rate(attnForwardCausal)
	case !bwd:
		r = plain(attnForward, attnForwardCausal)
	case causal:
		r = rate(attnBackwardCausal)
		if r == 0 && rate(attnForward) > 0 {
			r = rate(attnBackward) * rate(attnForwardCausal) / rate(attnForward)
		}
	default:
		r = plain(attnBackward, attnBackwardCausal)
	}
	if r == 0 {
		return 0, false
	}
	return r * 1e12 / tab.peak, true
}

// attentionRate is a Hopper kernel's TFLOP/s in a benchmarked pass without a window
// (attentionTable.rate).
func attentionRate(k Attention, headDim, seq float64, p attentionPass) float64 {
	return hopperAttention.rate(k, headDim, seq, 0, p)
}

// has reports whether the table has a curve for the kernel, head dimension and pass,
// with any window.
func (tab *attentionTable) has(k Attention, d int, p attentionPass) bool {
	for key := range tab.curves {
		if key.kernel == k && key.headDim == d && key.pass == p {
			return true
		}
	}
	return false
}

// sliding reports whether queries attending within window keys of a sequence of seq
// see fewer keys than the whole sequence: a sliding window narrower than it.
func sliding(seq, window float64) bool { return window > 0 && window < seq }

// whole reports whether the table has a curve measured without a window for the
// kernel at head dimension d, in any pass.
func (tab *attentionTable) whole(k Attention, d int) bool {
	for key := range tab.curves {
		if key.kernel == k && key.headDim == d && key.window == 0 {
			return true
		}
	}
	return false
}

// usable reports whether a curve may price a layer: a curve measured with a sliding
// window prices sliding layers, and whole-sequence attention only where its head
// dimension has no whole-sequence curve (Blackwell's head dim 64, published with a
// window of 1,024 only). On Hopper the H200's window-1,024 curves price sliding
// layers alone: whole-sequence attention at head dim 64 keeps Shah et al.'s curves.
func (tab *attentionTable) usable(key attentionKey, sliding bool) bool {
	return key.window == 0 || sliding || !tab.whole(key.kernel, key.headDim)
}

// hasFor is has for a layer that does (sliding) or does not attend within a window
// narrower than its sequence: curves it may not take (usable) do not count.
func (tab *attentionTable) hasFor(k Attention, d int, p attentionPass, sliding bool) bool {
	for key := range tab.curves {
		if key.kernel == k && key.headDim == d && key.pass == p && tab.usable(key, sliding) {
			return true
		}
	}
	return false
}

// nearest is the head dimension nearest headDim in log2 (ties to 128, the most
// measured, then the smaller) that has a figure for the kernel in one of the passes
// that a layer attending within a sliding window or not (sliding) may take (usable);
// 0 if none has.
func (tab *attentionTable) nearest(k Attention, headDim float64, sliding bool, passes ...attentionPass) int {
	best, dist := 0, math.Inf(1)
	for _, d := range []int{128, 64, 192, 256} {
		found := false
		for _, p := range passes {
			if tab.hasFor(k, d, p, sliding) {
				found = true
			}
		}
		if !found {
			continue
		}
		if dd := math.Abs(math.Log2(headDim) - math.Log2(float64(d))); dd < dist {
			best, dist = d, dd
		}
	}
	return best
}

// windowOf is the window of the curve a pass takes at head dimension d: of the windows
// measured for it, the one nearest in log2 to the keys each query attends to, min(window,
// seq), where no window (0) attends to seq keys (a whole-sequence curve's window is the
// sequence's); ties go to the wider. A sliding window of 128 keys takes the window-128
// curve, whole-sequence attention a curve without a window or with the widest one. ok is
// false without any curve.
func (tab *attentionTable) windowOf(k Attention, d int, seq, window float64, p attentionPass) (w int, ok bool) {
	keys := func(w float64) float64 {
		if w <= 0 || w > seq {
			return seq
		}
		return w
	}
	want := math.Log2(max(1, keys(window)))
	dist := math.Inf(1)
	sl := sliding(seq, window)
	for key := range tab.curves {
		if key.kernel != k || key.headDim != d || key.pass != p || !tab.usable(key, sl) {
			continue
		}
		dd := math.Abs(math.Log2(max(1, keys(float64(key.window)))) - want)
		if dd < dist || (dd == dist && (key.window == 0 || (w != 0 && key.window > w))) {
			w, dist, ok = key.window, dd, true
		}
	}
	return w, ok
}

// rate is the kernel's TFLOP/s in a pass at the nearest head dimension that has
// figures for it (nearest), for queries attending within window keys (0: none); 0
// without any.
func (tab *attentionTable) rate(k Attention, headDim, seq, window float64, p attentionPass) float64 {
	return tab.rateAt(k, tab.nearest(k, headDim, sliding(seq, window), p), seq, window, p)
}

// rateAt is the kernel's TFLOP/s in a pass at head dimension d, on the curve of the
// nearest window (windowOf), interpolated in log2 of the sequence length and held flat
// beyond the measured lengths; 0 without figures.
func (tab *attentionTable) rateAt(k Attention, d int, seq, window float64, p attentionPass) float64 {
	w, ok := tab.windowOf(k, d, seq, window, p)
	if !ok {
		return 0
	}
	best := tab.curves[attentionKey{k, d, p, w}]
	knots := tab.seqKnots
	n := len(knots)
	switch {
	case seq <= knots[0]:
		return best[0]
	case seq >= knots[n-1]:
		return best[n-1]
	}
	for i := 1; i < n; i++ {
		if seq <= knots[i] {
			lo, hi := knots[i-1], knots[i]
			f := (math.Log2(seq) - math.Log2(lo)) / (math.Log2(hi) - math.Log2(lo))
			return best[i-1] + f*(best[i]-best[i-1])
		}
	}
	return best[n-1]
}

// nvidiaComputeCapability is an NVIDIA GPU preset's compute capability (NVIDIA's CUDA
// GPUs list: A100 8.0, H100 and H200 9.0, B200 and GB200 10.0, B300 and GB300 10.3) as
// NCCL writes it (80, 90, 100, 103); 0 for a device that is no NVIDIA GPU preset (AMD,
// Gaudi, Trainium, TPU, IPU).
func nvidiaComputeCapability(device string) int {
	switch strings.ToLower(device) {
	case "a100-40gb", "a100-80gb":
		return 80
	case "h100-sxm", "h100-96gb-500w", "h200":
		return 90
	case "b200", "gb200":
		return 100
	case "b300", "gb300":
		return 103
	}
	return 0
}

// checkAttentionKernel refuses a kernel the device cannot run: FlashAttention-3 needs
// a Hopper GPU; flash-attn 1.x (flash1) is a CUDA extension built with NVCC for
// NVIDIA GPUs of compute capability 7.5 and up (Dao-AILab/flash-attention's README of
// the 1.x series: "Turing or Ampere GPUs (e.g., A100, RTX 3090, T4, RTX 2080)", later
// Hopper), so no AMD, Gaudi, Trainium, TPU or IPU device runs it. FlashAttention-2
// (flash) needs Ampere or later on NVIDIA GPUs (sm80; its README), which every NVIDIA
// preset is; flash is also the default kernel and stands for each platform's own fused
// attention elsewhere (flash-attn's ROCm build on AMD, Pallas on TPU), so it is not
// refused by device.
func checkAttentionKernel(device string, k Attention) error {
	if k == Flash3 && !hopper(device) {
		return &model.FieldError{Path: "attention", Reason: fmt.Sprintf(
			"flash3 (FlashAttention-3) runs on Hopper GPUs only (h100-sxm, h100-96gb-500w, h200), not %s: use flash or cudnn", device)}
	}
	if cc := nvidiaComputeCapability(device); k == Flash1 && cc < 75 {
		return &model.FieldError{Path: "attention", Reason: fmt.Sprintf(
			"flash1 (flash-attn 1.x) is a CUDA kernel for NVIDIA GPUs of compute capability 7.5 and up (Turing, Ampere, Hopper), not %s: use flash or eager", device)}
	}
	return nil
}

// attentionRates sets the fused attention kernels' efficiencies (op.fwdEff, bwdEff) of
// a piece's attention core on the target: each kernel call attends over the whole
// sequence, or with ring context parallelism over one device's block per step (the
// hierarchical split: one all-to-all group's block). A local layer (Arch.LocalLayer)
// with a sliding window runs at the rate measured nearest its window
// (attentionEfficiencyIn): a narrow band of keys leaves a kernel's tiles of 128 keys
// mostly masked and each query tile little work between its fixed costs, so cuDNN's
// window-128 kernel runs at a third or less of its window-1,024 rate; chunked
// attention (Llama 4) attends to whole chunks and takes the whole-sequence curves.
func (sh *shape) attentionRates(device string, p *piece, local bool) {
	if sh.o.Attention == Eager || sh.o.DType == FP32 {
		return // eager: GEMMs and memory-bound kernels; fp32: no fused 16-bit kernel figures
	}
	seq := sh.skv
	if sh.cp > 1 && (sh.o.ContextMethod == Ring || sh.o.ContextMethod == AllGather) {
		seq = sh.s
	}
	if sh.cp > 1 && sh.o.ContextMethod == Hierarchical {
		seq = sh.s * float64(sh.o.ContextInner) // one ring step's block: g devices' tokens
	}
	window := 0.0
	if local && !sh.a.LocalChunked {
		window = float64(sh.a.LocalWindow)
	}
	causal := sh.a.Causal()
	k := sh.o.Attention
	if sh.o.FP8Attention && window == 0 {
		// cuDNN's fp8 rates where it publishes them for this head dimension, else its
		// 16-bit ones (attention.go, "FP8 attention").
		fk := fp8AttentionKernel(sh.o.FP8Recipe)
		if tab := attentionTableFor(device, fk); tab != nil && tab.has(fk, int(math.Round(sh.d)), attnForward) {
			k = fk
		}
	}
	fwd, ok := attentionEfficiencyIn(device, k, sh.d, seq, window, causal, false)
	if !ok {
		return
	}
	bwd, _ := attentionEfficiencyIn(device, k, sh.d, seq, window, causal, true)
	if causal && window == 0 && sh.cp > 1 && sh.o.ContextMethod == Ring && sh.teContext {
		// Transformer Engine's p2p ring (AttnFuncWithCPAndKVP2P, v1.10 to v1.13) makes
		// one causal call on the device's own two chunks (2 x (s/2)^2 / 2 pairs: 1/c of
		// its work) and c - 1 calls without a mask, each of the s queries on the
		// received block's first half or the queries' second half on the whole block
		// (s x s/2 pairs), whose loop runs over s/2 tokens: those at the unmasked rate
		// of a sequence of s/2.
		nf, okf := attentionEfficiencyIn(device, k, sh.d, seq/2, window, false, false)
		nb, okb := attentionEfficiencyIn(device, k, sh.d, seq/2, window, false, true)
		if okf && okb && nf > 0 && nb > 0 && fwd > 0 && bwd > 0 {
			fwd, bwd = sh.cp/(1/fwd+(sh.cp-1)/nf), sh.cp/(1/bwd+(sh.cp-1)/nb)
		}
	}
	if causal && window == 0 && sh.cp > 1 && sh.o.ContextMethod == AllGather {
		// PyTorch's context parallelism runs 1/c of a device's causal work as one causal
		// call and the rest as c - 1 calls without a mask (AllGather): each at its rate.
		nf, okf := attentionEfficiencyIn(device, k, sh.d, seq, window, false, false)
		nb, okb := attentionEfficiencyIn(device, k, sh.d, seq, window, false, true)
		if okf && okb && nf > 0 && nb > 0 && fwd > 0 && bwd > 0 {
			fwd, bwd = sh.cp/(1/fwd+(sh.cp-1)/nf), sh.cp/(1/bwd+(sh.cp-1)/nb)
		}
	}
	for i := range p.ops {
		if p.ops[i].core {
			p.ops[i].fwdEff, p.ops[i].bwdEff = fwd, bwd
		}
	}
}
