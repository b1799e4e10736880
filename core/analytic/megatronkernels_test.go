package analytic

import (
	"math"
	"testing"
)

// TestTENormBackwardFinalize: under Megatron-Core (the main_grad buffer's framework)
// each norm's backward pass is Transformer Engine's two launches, the main kernel and
// the finalize kernel that reduces dgamma across CTAs (rmsnorm_bwd_semi_cuda_kernel.cu),
// so Qwen3's block norm launches 1 kernel forward and 2 backward, its query and key
// norms 2 and 4; elsewhere one a norm each way, as before.
func TestTENormBackwardFinalize(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	for _, megatron := range []bool{false, true} {
		sh := newShape(a, Options{Batch: 1, Seq: 4096, Attention: CuDNN}.withDefaults())
		sh.mainGrads = megatron
		want := map[string][2]float64{"attention norm": {1, 1}, "qk norm": {2, 2}}
		if megatron {
			want = map[string][2]float64{"attention norm": {1, 2}, "qk norm": {2, 4}}
		}
		seen := 0
		for _, o := range sh.attention(false).ops {
			if w, ok := want[o.name]; ok {
				seen++
				if o.fwd.kernels != w[0] || o.bwd.kernels != w[1] {
					t.Errorf("megatron %v, %s: %v forward and %v backward launches, want %v and %v", megatron, o.name, o.fwd.kernels, o.bwd.kernels, w[0], w[1])
				}
			}
		}
		if f := sh.finalNorm().ops[0]; f.bwd.kernels != want["attention norm"][1] {
			t.Errorf("megatron %v: the final norm's backward launches %v kernels, want %v", megatron, f.bwd.kernels, want["attention norm"][1])
		}
		if seen != 2 {
			t.Errorf("megatron %v: %d of the two norms found", megatron, seen)
		}
	}
}

// TestMainGradAdds: Megatron-Core's backward hook adds each gradient its linear layers
// do not accumulate into main_grad themselves, one kernel per parameter tensor and
// microbatch, reading the 16-bit gradient and the fp32 buffer and writing the buffer
// (2*4 + 2 bytes an element with fp32 gradients). Qwen3 30B-A3B (RMSNorm, per-head
// query and key norms of width 128, no biases, 128 experts, h = 2048): its attention
// has 3 such tensors (h + 2*128 elements), its mixture 2 (the norm and the router's
// 128 x h weight). GPT-OSS 120B (biases everywhere, sinks, 128 experts over EP 64: 2
// local, each with a 2*2880-wide gated fc1 bias and an h-wide fc2 bias, h = 2880, 64
// query heads of 64 and 8 key-value heads): attention 4 (norm, linear_qkv's bias,
// the output projection's bias, the sinks), mixture 1 + 2 + 2*2 = 7. None without the
// buffer.
func TestMainGradAdds(t *testing.T) {
	const g = 2*4 + 2
	for _, c := range []struct {
		model             string
		ep                int
		attnN, moeN       float64
		attnElem, moeElem float64
	}{
		{"qwen3-30b-a3b", 16, 3, 2, 2048 + 2*128, 2048 + 128*2048},
		{"gpt-oss-120b", 64, 4, 7, 2880 + (64*64 + 2*8*64) + 2880 + 64, 2880 + (128*2880 + 128) + 2*(2*2880+2880)},
	} {
		a := bundled(t, c.model)
		for _, megatron := range []bool{false, true} {
			o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, Precision: MixedFP32Grads, DataParallel: c.ep, ExpertParallel: c.ep, Dispatcher: DispatchAllToAll}.withDefaults()
			sh := newShape(a, o)
			sh.mainGrads = megatron
			find := func(p piece) (n, bytes float64) {
				for _, op := range p.ops {
					if op.name == "main_grad adds" {
						if op.fwd.kernels != 0 || op.fwd.bytes != 0 {
							t.Errorf("%s: the adds run in the forward pass", c.model)
						}
						n, bytes = n+op.bwd.kernels, bytes+op.bwd.bytes
					}
				}
				return n, bytes
			}
			an, ab := find(sh.attention(false))
			mn, mb := find(sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o}))
			wantAN, wantAB, wantMN, wantMB := c.attnN, g*c.attnElem, c.moeN, g*c.moeElem
			if !megatron {
				wantAN, wantAB, wantMN, wantMB = 0, 0, 0, 0
			}
			if an != wantAN || math.Abs(ab-wantAB) > 1e-9*wantAB || mn != wantMN || math.Abs(mb-wantMB) > 1e-9*wantMB {
				t.Errorf("%s, megatron %v: attention %v adds of %v bytes, mixture %v of %v; want %v of %v, %v of %v", c.model, megatron, an, ab, mn, mb, wantAN, wantAB, wantMN, wantMB)
			}
		}
	}
}
