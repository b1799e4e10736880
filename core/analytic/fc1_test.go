package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestFC1Shape: a gated MLP's linear_fc1 (oneFC1) is one product m x k by k x 2f, where
// gate and up apart are two of m x k by k x f. In time at the large-product rate: the
// one product 2F / fraction(2f), the two 2 F / fraction(f) (F a half's FLOPs), each
// fraction productFraction's (forward; backward the harmonic mean of the input gradient,
// reducing over the product's width, and the weight gradient, reducing over m), on an
// H100's 132 SMs. Where f fills whole waves and reduces past gemmReferenceK (Llama 3
// 8B's 14,336) the two agree within 1%: the gain is the launches. At an expert's width
// (Qwen3 30B-A3B, f = 768, 256 rows) the one product's backward is faster: its input
// gradient reduces over 1,536, not 768 (kappa(k) = k / (k + 550)).
func TestFC1Shape(t *testing.T) {
	const sms, k0 = 132, gemmTileOverheadK
	frac := func(bwd bool, m, k, n float64) float64 {
		if !bwd {
			return productFraction(1, m, k, n, sms, k0)
		}
		dgrad, wgrad := productFraction(1, m, n, k, sms, k0), productFraction(1, k, m, n, sms, k0)
		return 2 / (1/dgrad + 1/wgrad)
	}
	a := bundled(t, "meta-llama-3-8b")
	sh := newShape(a, Options{Batch: 1, Seq: 512}.withDefaults())
	for _, c := range []struct {
		name      string
		m, k, f   float64
		within    float64 // |one/two - 1| at most, both passes (0: not checked)
		fasterBwd bool
	}{
		{"Llama 3 8B", 8192, 4096, 14336, 0.01, false},
		{"Qwen3 30B-A3B expert", 256, 2048, 768, 0, true},
	} {
		fc1 := sh.oneFC1("fc1", c.m, c.k, c.f)
		if fc1.gemm.m != c.m || fc1.gemm.k != c.k || fc1.gemm.n != 2*c.f || fc1.fwd.kernels != 1 || fc1.bwd.kernels != 2 {
			t.Fatalf("%s: fc1 %+v, %v/%v launches; want one %v x %v by %v x %v product, 1 and 2 launches", c.name, fc1.gemm, fc1.fwd.kernels, fc1.bwd.kernels, c.m, c.k, c.k, 2*c.f)
		}
		for _, bwd := range []bool{false, true} {
			got, want := fc1.gemm.fraction(bwd, sms, k0), frac(bwd, c.m, c.k, 2*c.f)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("%s bwd %v: fraction %v, want %v", c.name, bwd, got, want)
			}
			one := 2 / want                           // 2F at the 2f-wide product's rate
			two := 2 * (1 / frac(bwd, c.m, c.k, c.f)) // two of F at the f-wide one's
			if c.within > 0 && math.Abs(one/two-1) > c.within {
				t.Errorf("%s bwd %v: one product %v, two %v (in F at the large rate): want within %v", c.name, bwd, one, two, c.within)
			}
			if bwd && c.fasterBwd && one >= two {
				t.Errorf("%s: the 2f-wide backward (%v) is not faster than two f-wide (%v)", c.name, one, two)
			}
		}
	}
}

// TestFC1Launches: a gated MLP's products launched per layer and pass in 16 bits follow
// the code each framework mode runs: gate and up apart in HuggingFace's and torchtitan's
// code (eager, compiled) and on the device alone (none), one linear_fc1 in Megatron-Core
// and Megatron-DeepSpeed (megatron, cuda-graphs, deepspeed: FusedFC1); each product one
// launch forward and two backward. The dense MLP: 3 products or 2. A mixture's routed
// experts, per local expert (one GEMM an expert in Transformer Engine's GroupedLinear),
// and its shared expert: the same.
func TestFC1Launches(t *testing.T) {
	for _, c := range []struct {
		framework string
		fused     bool
	}{
		{cluster.Eager, false}, {cluster.Compiled, false}, {cluster.NoFramework, false},
		{cluster.Megatron, true}, {cluster.CUDAGraphs, true}, {cluster.DeepSpeed, true},
	} {
		fw, err := cluster.LookupFramework(c.framework)
		if err != nil {
			t.Fatal(err)
		}
		if fw.FusedFC1 != c.fused {
			t.Errorf("%s: FusedFC1 %v, want %v", c.framework, fw.FusedFC1, c.fused)
		}
		want := 3.0 // gate, up, down
		if c.fused {
			want = 2 // linear_fc1, linear_fc2
		}
		products := func(p piece, per float64) (fwd, bwd float64) {
			for _, o := range p.ops {
				if o.gemm.m > 0 && o.name != "router" && o.name != "shared expert gate" {
					fwd += o.fwd.kernels / per
					bwd += o.bwd.kernels / per
				}
			}
			return
		}
		dense := newShape(bundled(t, "meta-llama-3-8b"), Options{Batch: 1, Seq: 512}.withDefaults())
		dense.fusedFC1, dense.fusedAct = fw.FusedFC1, fw.FusedActivation
		if f, b := products(dense.mlp(), 1); f != want || b != 2*want {
			t.Errorf("%s dense MLP: %v products forward, %v backward; want %v and %v", c.framework, f, b, want, 2*want)
		}
		a := bundled(t, "qwen3-30b-a3b")
		o := Options{Batch: 1, Seq: 512, DataParallel: 8, ExpertParallel: 8}.withDefaults()
		moe := newShape(a, o)
		moe.fusedFC1, moe.fusedAct = fw.FusedFC1, fw.FusedActivation
		local := float64(a.NumExperts) / 8
		if f, b := products(moe.moe(&calc{sh: moe, target: target(t, "h100-sxm"), o: o}), local); f != want || b != 2*want {
			t.Errorf("%s routed experts: %v products forward, %v backward an expert; want %v and %v", c.framework, f, b, want, 2*want)
		}
	}
}
