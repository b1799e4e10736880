package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestTERingTraffic checks teRingTraffic against Transformer Engine's
// AttnFuncWithCPAndKVP2P (v1.10, v1.11, v1.13) walked by hand for a ring of two, in units of
// the device's query-wide tensor Q and its keys and values together P:
//
//   - rank 0, forward: K and V concatenated (2P), step 1's queries' second half made
//     contiguous (Q), the output zeroed (Q), step 0's output merged whole (3Q) and step
//     1's into the second half (1.5Q): 6.5Q + 2P, in 9 kernels with the statistics'
//     clone, cast to double, merge and cast back;
//   - rank 1, forward: 2P, step 1's received block's first half made contiguous (P),
//     Q zeroed, both outputs merged whole (6Q): 7Q + 3P, 9 kernels;
//   - rank 0, backward: the saved K and V copied into the buffer passed on (2P); step 0
//     (the received block) on the queries' second halves: Q's, the output's and its
//     gradient's halves made contiguous (3Q), dQ's second half copied (Q), dK and dV
//     concatenated (2P) and copied into the buffer (2P); step 1 (its own block): dQ's
//     first half copied and second added (2.5Q), dK and dV concatenated (2P), their
//     first half added and second copied (2.5P): 6.5Q + 10.5P in 13 kernels with the
//     statistics' half made contiguous;
//   - rank 1, backward: 2P; step 0 on the block's first half (P), dQ copied (2Q), the
//     half's dK and dV concatenated (P) and copied in (P); step 1: dQ added (3Q), dK and
//     dV concatenated (2P) and added (3P): 5Q + 10P in 9 kernels.
//
// And, for every ring size, the last rank's forward in closed form: it takes every
// received block by its first half, so (3c + 1)Q + (c + 1)P in 3c + 3 kernels; the
// first rank's, (2.5c + 1.5)Q + 2P.
func TestTERingTraffic(t *testing.T) {
	for _, c := range []struct {
		r        int
		fwd, bwd ringTraffic
	}{
		{0, ringTraffic{6.5, 2, 9}, ringTraffic{6.5, 10.5, 13}},
		{1, ringTraffic{7, 3, 9}, ringTraffic{5, 10, 9}},
	} {
		f, b := teRingTraffic(2, c.r)
		if f != c.fwd || b != c.bwd {
			t.Errorf("c=2 rank %d: forward %+v backward %+v, want %+v and %+v", c.r, f, b, c.fwd, c.bwd)
		}
	}
	for _, c := range []int{2, 4, 8} {
		cf := float64(c)
		last, _ := teRingTraffic(c, c-1)
		if want := (ringTraffic{3*cf + 1, cf + 1, 3*cf + 3}); last != want {
			t.Errorf("c=%d last rank forward %+v, want %+v", c, last, want)
		}
		first, _ := teRingTraffic(c, 0)
		if want := (ringTraffic{2.5*cf + 1.5, 2, 3*cf + 3}); first != want {
			t.Errorf("c=%d first rank forward %+v, want %+v", c, first, want)
		}
	}
}

// TestTERingCopiesInBlock: a Megatron-Core block with ring context parallelism carries
// the busiest rank's copies in each pass (c = 2, Llama-3-8B on a device with 32 query
// and 8 key-value heads of 128, s = 8192 over 2: Q = 2 x 4096 x 4096 bytes, P = 2 x 4096
// x 2048: forward rank 1's 7Q + 3P, backward rank 0's 6.5Q + 10.5P); eager PyTorch's
// ring (torch's own) and context parallelism through Transformer Engine's fp8 attention
// carry none. The attention kernels take Transformer Engine's step split: one causal
// call on 1/c of the work at the rate of s/c tokens and c - 1 unmasked calls at s/(2c)'s,
// so each pass runs at c over the sum of the calls' inverse rates.
func TestTERingCopiesInBlock(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const c, s = 2, 8192
	Q, P := 2.0*s/c*4096, 2.0*s/c*2*1024
	for _, c := range []struct {
		fw   string
		fp8  bool
		want bool
	}{{cluster.Megatron, false, true}, {cluster.CUDAGraphs, false, true}, {cluster.Eager, false, false}, {cluster.Megatron, true, false}} {
		o := Options{Batch: 1, Seq: s, Context: 2, Attention: CuDNN}
		if c.fp8 {
			o.DType, o.FP8Recipe, o.FP8Attention = FP8, Delayed, true
		}
		o = o.withDefaults()
		sh := newShape(a, o)
		sh.teContext = c.fw == cluster.Megatron || c.fw == cluster.CUDAGraphs
		p := sh.attention(false)
		var got *op
		for i := range p.ops {
			if p.ops[i].name == "context ring copies" {
				got = &p.ops[i]
			}
		}
		if (got != nil) != c.want {
			t.Errorf("%s fp8 %v: ring copies %v, want %v", c.fw, c.fp8, got != nil, c.want)
			continue
		}
		if got == nil {
			continue
		}
		if f, b := got.fwd, got.bwd; f.bytes != 7*Q+3*P || f.kernels != 9 || b.bytes != 6.5*Q+10.5*P || b.kernels != 13 || f.flops+b.flops != 0 {
			t.Errorf("%s: forward %+v backward %+v, want %g bytes in 9 kernels and %g in 13", c.fw, f, b, 7*Q+3*P, 6.5*Q+10.5*P)
		}
	}

	// The kernels' rates: the cuDNN figures on an H100 at head dim 128.
	o := Options{Batch: 1, Seq: s, Context: c, Attention: CuDNN}.withDefaults()
	sh := newShape(a, o)
	sh.teContext = true
	p := sh.attention(false)
	sh.attentionRates("h100-sxm", &p, false)
	causalF, _ := attentionEfficiency("h100-sxm", CuDNN, 128, s/c, true, false)
	causalB, _ := attentionEfficiency("h100-sxm", CuDNN, 128, s/c, true, true)
	plainF, _ := attentionEfficiency("h100-sxm", CuDNN, 128, s/c/2, false, false)
	plainB, _ := attentionEfficiency("h100-sxm", CuDNN, 128, s/c/2, false, true)
	wantF, wantB := c/(1/causalF+(c-1)/plainF), c/(1/causalB+(c-1)/plainB)
	for _, x := range p.ops {
		if !x.core {
			continue
		}
		if math.Abs(x.fwdEff-wantF) > 1e-12 || math.Abs(x.bwdEff-wantB) > 1e-12 {
			t.Errorf("ring attention at %.4f forward, %.4f backward: want %.4f and %.4f", x.fwdEff, x.bwdEff, wantF, wantB)
		}
		// cuDNN at 4k causal 518 and at 2k unmasked 617 TFLOP/s (Shah et al. 2024):
		// 563 together, of the H100's 989.
		if math.Abs(x.fwdEff*989-2/(1/518.0+1/617.0)) > 0.5 {
			t.Errorf("forward %.1f TFLOP/s, want %.1f", x.fwdEff*989, 2/(1/518.0+1/617.0))
		}
	}
	sh.teContext = false
	q := sh.attention(false)
	sh.attentionRates("h100-sxm", &q, false)
	for _, x := range q.ops {
		if x.core && math.Abs(x.fwdEff-causalF) > 1e-12 {
			t.Errorf("another framework's ring: %.4f forward, want the causal %.4f", x.fwdEff, causalF)
		}
	}
}
