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
	three.separateQKV = true
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
		if got := separateQKV(frameworkTarget(t, "h100-96gb-500w", fw).Framework); got != want {
			t.Errorf("%s: separate projections %v, want %v", fw, got, want)
		}
	}
}
