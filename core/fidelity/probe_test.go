package fidelity_test

import (
	"testing"

	"pipeplan/core/analytic"
)

func TestProbe(t *testing.T) {
	tg := selene(t)
	a := gpt(t, 6144, 64, 48)
	for _, o := range []analytic.Options{
		{Batch: 4, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8},
		{Batch: 4, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, SequenceParallel: true},
		{Batch: 4, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, Recompute: analytic.Full},
		{Batch: 4, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, Recompute: analytic.Selective},
		{Batch: 4, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, Recompute: analytic.Selective, SequenceParallel: true},
	} {
		est, err := analytic.Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		l := est.Layers[1]
		t.Logf("%s fwd %.2f ms bwd %.2f ms (ar %.2f ms) saved %.3f GiB", o, l.FwdSeconds*1e3, l.BwdSeconds*1e3, l.TensorAllReduceSeconds*1e3, float64(l.SavedActivationBytes)/(1<<30)*48)
	}
	for _, c := range []struct {
		h, a, L, p, v, m, b int
	}{{6144, 64, 48, 1, 1, 1, 4}, {12288, 96, 96, 8, 3, 64, 1}, {20480, 128, 105, 35, 3, 280, 1}, {25600, 160, 128, 64, 1, 512, 1}} {
		for _, o := range []analytic.Options{
			{Batch: c.b, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, Recompute: analytic.Full},
			{Batch: c.b, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8, Recompute: analytic.Selective, SequenceParallel: true},
			{Batch: c.b, Seq: 2048, Attention: analytic.Eager, TensorParallel: 8},
		} {
			s := runStep(t, gpt(t, c.h, c.a, c.L), tg, o, c.p, c.v, c.m, 1)
			t.Logf("h=%d %s: step %.2f s, stage0 act %.2f GiB mem %.2f GiB", c.h, o.Recompute, s.seconds, float64(s.stage0Act)/(1<<30), float64(s.stage0Memory)/(1<<30))
		}
	}
}
