package analytic

import (
	"math"
	"testing"
)

// TestSeparateProjections checks the query, key and value projections as torchtitan's
// Llama runs them (separateProjections): three products of the same input, each
// reading it whole. At the 2025-06 async TP benchmark's Llama 3.1 8B shard (local
// batch 12 of 8,192 tokens, TP 8 with sequence parallelism, so each device's products
// take all T = 98,304 tokens of the gathered input; q = 512 and kv = 128 columns) the
// key and value products are bound by that read on the Grand Teton H100 (2.4 TB/s at
// the preset's 80%): e (T h + h kv + T kv) bytes take longer than their 2 T h kv FLOPs
// at 70% of 912 TFLOP/s. The FLOPs, the outputs torchtitan's per-op policy keeps and
// what it reruns are those of the one qkv op that stood for them; the Megatron-style
// modes (linear_qkv) keep one product.
func TestSeparateProjections(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const b, s, tp = 12, 8192, 8
	const e, T, h = 2.0, float64(b * s), 4096.0
	q, kv := 4096.0/tp, 1024.0/tp
	o := Options{Batch: b, Seq: s, TensorParallel: tp, SequenceParallel: true, Recompute: SelectiveOp}.withDefaults()
	tg := frameworkTarget(t, "h100-96gb-500w", "compiled")
	rf := newRoofline(tg, BF16, "")

	one := newShape(a, o)
	three := newShape(a, o)
	three.pytorchCode = true
	pOne, pThree := one.attention(false), three.attention(false)
	if len(pThree.ops) != len(pOne.ops)+2 {
		t.Fatalf("separate projections: %d operations, want qkv's %d + 2", len(pThree.ops), len(pOne.ops))
	}
	var fused op
	for _, x := range pOne.ops {
		if x.name == "qkv" {
			fused = x
		}
	}
	var flops, outBytes, seconds float64
	for i, want := range []struct {
		name  string
		width float64
	}{{"query", q}, {"key", kv}, {"value", kv}} {
		x := pThree.ops[1+i]
		if x.name != want.name || x.gemm.m != T || x.gemm.k != h || x.gemm.n != want.width || !x.gathers {
			t.Fatalf("operation %d: %s %v x %v x %v (gathers %v), want %s %v x %v x %v gathering", 1+i, x.name, x.gemm.m, x.gemm.k, x.gemm.n, x.gathers, want.name, T, h, want.width)
		}
		if got, w := x.fwd.bytes, e*(T*h+h*want.width+T*want.width); got != w {
			t.Errorf("%s reads and writes %g bytes, want e (T h + h n + T n) = %g", x.name, got, w)
		}
		flops += x.fwd.flops
		outBytes += x.outBytes
		seconds += rf.opSeconds(x, false)
		if want.name == "key" {
			read := x.fwd.bytes / (2.4e12 * 0.8)
			if compute := x.fwd.flops / (912e12 * 0.7); !(read > 2*compute) {
				t.Errorf("key: its read %.3f ms is not above twice its FLOPs' %.3f ms", 1e3*read, 1e3*compute)
			}
			if got, w := rf.opSeconds(x, false), tg.Perf.KernelSeconds+read; math.Abs(got-w) > 1e-12 {
				t.Errorf("key: forward %.6f ms, want launch + read = %.6f ms", 1e3*got, 1e3*w)
			}
		}
	}
	if flops != fused.fwd.flops || outBytes != fused.outBytes {
		t.Errorf("three products: %g FLOPs and %g output bytes, want qkv's %g and %g", flops, outBytes, fused.fwd.flops, fused.outBytes)
	}
	if fusedSec := rf.opSeconds(fused, false); !(seconds > fusedSec) {
		t.Errorf("three products' forward %.3f ms, not above one qkv product's %.3f ms", 1e3*seconds, 1e3*fusedSec)
	}
	// The per-op policy counts the same products: query kept, key rerun, value kept.
	shareOne, savedOne := (&calc{sh: one, o: o}).sacPolicy([]piece{pOne})
	shareThree, savedThree := (&calc{sh: three, o: o}).sacPolicy([]piece{pThree})
	if savedOne != savedThree {
		t.Errorf("policy keeps %g bytes of three products, %g of one", savedThree, savedOne)
	}
	if got := shareThree[0][1:4]; got[0] != 1 || got[1] != 0 || got[2] != 1 {
		t.Errorf("policy shares of query, key, value %v, want [1 0 1]", got)
	}
	if got, w := shareOne[0][1], (q+kv)/(q+2*kv); math.Abs(got-w) > 1e-15 {
		t.Errorf("policy share of qkv %v, want %v", got, w)
	}

	// The modes: the model's own code in eager and compiled PyTorch, linear_qkv in the
	// Megatron-style ones.
	ref, err := Estimate(a, tg, o)
	if err != nil {
		t.Fatal(err)
	}
	for fw, want := range map[string]bool{"eager": true, "compiled": true, "cuda-graphs": false, "megatron": false, "deepspeed": false} {
		r, err := Estimate(a, frameworkTarget(t, "h100-96gb-500w", fw), o)
		if err != nil {
			t.Fatal(err)
		}
		l := block(r)
		if got := l.FwdFLOPs; got != block(ref).FwdFLOPs {
			t.Errorf("%s: block forward FLOPs %g, compiled's %g", fw, got, block(ref).FwdFLOPs)
		}
		if got := pytorchCode(frameworkTarget(t, "h100-96gb-500w", fw).Framework); got != want {
			t.Errorf("%s: separate projections %v, want %v", fw, got, want)
		}
	}
}

// TestSequenceCopies checks the copies PyTorch's functional collectives make around a
// sequence-sharded sublayer (sequenceCopies): the cat after each all-gather and before
// each reduce-scatter on the sequence dimension, 2 e T h bytes each (the whole gathered
// activation read and written), in closed form at the 2025-06 benchmark's 8B shard, and
// against the figure torchtitan#437 gives for them: the two cats of a 70B MLP at 8k
// tokens and batch 1, TP 8, on an H100, "about 0.18 ms".
func TestSequenceCopies(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const b, s, tp = 12, 8192, 8
	const e, T, h = 2.0, float64(b * s), 4096.0
	act := e * T * h
	tg := frameworkTarget(t, "h100-96gb-500w", "compiled")
	for _, c := range []struct {
		name                   string
		recompute              Recompute
		async                  bool
		fwd, bwd               float64 // bytes, in e T h
		fwdKernels, bwdKernels float64
	}{
		{"vanilla, per-op policy", SelectiveOp, false, 4, 6, 2, 3},
		{"vanilla, full recomputation", Full, false, 4, 8, 2, 4},
		{"vanilla, none", NoRecompute, false, 4, 4, 2, 2},
		// async TP fuses every cat but the summed input gradient's reduce-scatter's;
		// the weight gradients copy the gathered input and output gradient it returns.
		{"async TP, per-op policy", SelectiveOp, true, 0, 6, 0, 3},
		{"async TP, full recomputation", Full, true, 0, 6, 0, 3},
		{"async TP, none", NoRecompute, true, 0, 6, 0, 3},
	} {
		o := Options{Batch: b, Seq: s, TensorParallel: tp, SequenceParallel: true, Recompute: c.recompute, TensorCommAsync: c.async, TensorCommOverlap: c.async}.withDefaults()
		sh := newShape(a, o)
		sh.pytorchCode = true
		calc := &calc{sh: sh, o: o, rf: newRoofline(tg, BF16, "")}
		for _, p := range []piece{sh.attention(false), sh.mlp()} {
			share, _ := calc.sacPolicy([]piece{p})
			cp, ok := calc.sequenceCopies(p, share)
			if !ok && c.fwd+c.bwd > 0 {
				t.Fatalf("%s: no copies", c.name)
			}
			if cp.fwd.bytes != c.fwd*act || cp.bwd.bytes != c.bwd*act || cp.fwd.kernels != c.fwdKernels || cp.bwd.kernels != c.bwdKernels {
				t.Errorf("%s: forward %g bytes in %g kernels, backward %g in %g; want %g e T h in %g, %g e T h in %g",
					c.name, cp.fwd.bytes, cp.fwd.kernels, cp.bwd.bytes, cp.bwd.kernels, c.fwd, c.fwdKernels, c.bwd, c.bwdKernels)
			}
		}
	}
	// Without sequence parallelism, in a Megatron-style mode or without tensor
	// parallelism: none.
	for _, c := range []struct {
		name      string
		tp        int
		sp, torch bool
	}{{"no sequence parallelism", 8, false, true}, {"linear_qkv mode", 8, true, false}, {"one device", 1, false, true}} {
		o := Options{Batch: b, Seq: s, TensorParallel: c.tp, SequenceParallel: c.sp}.withDefaults()
		sh := newShape(a, o)
		sh.pytorchCode = c.torch
		if _, ok := (&calc{sh: sh, o: o}).sequenceCopies(sh.mlp(), nil); ok {
			t.Errorf("%s: copies priced", c.name)
		}
	}

	// torchtitan#437: Llama 3 70B's MLP, b = 1, s = 8,192, TP 8, H100 SXM: its forward's
	// all-gather and reduce-scatter cats, 2 x 2 e s h bytes at the achievable bandwidth.
	a70 := bundled(t, "llama-3.1-70b")
	o := Options{Batch: 1, Seq: 8192, TensorParallel: 8, SequenceParallel: true}.withDefaults()
	sh := newShape(a70, o)
	sh.pytorchCode = true
	h100 := frameworkTarget(t, "h100-sxm", "compiled")
	cp, _ := (&calc{sh: sh, o: o, rf: newRoofline(h100, BF16, "")}).sequenceCopies(sh.mlp(), nil)
	got := newRoofline(h100, BF16, "").opSeconds(cp, false)
	if want := 2*h100.Perf.KernelSeconds + 4*2*8192*8192/(3.35e12*0.8); math.Abs(got-want) > 1e-12 {
		t.Errorf("70B MLP cats: %.4f ms, want %.4f ms", 1e3*got, 1e3*want)
	}
	if math.Abs(got/0.18e-3-1) > 0.20 {
		t.Errorf("70B MLP cats: %.3f ms, torchtitan#437 measured about 0.18 ms", 1e3*got)
	}
}
