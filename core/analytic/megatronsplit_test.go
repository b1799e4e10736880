package analytic

import (
	"strings"
	"testing"
)

// TestMegatronQKVSplit: between linear_qkv and the attention kernel Megatron-Core
// copies Q (query.reshape over g > 1 groups of n/g > 1 heads), Transformer Engine makes
// V contiguous after the rotary embedding (get_qkv_layout), and backward SplitAlongDim
// concatenates dQ, dK and dV (shape.megatronQKVSplit), each kernel reading and writing
// its tensor once. Llama 3 8B (32 query heads, 8 groups, head width 128, rotary) at
// microbatch 1 of 4,096 tokens in bf16: TP 1 copies Q and V, 2*2*4096*(4096 + 1024)
// bytes in two kernels, and concatenates 2*2*4096*(4096 + 2*1024); TP 2 the half; TP 8
// leaves one group a device (the reshape a view): V alone. Llama 2 7B (multi-head,
// rotary): V (4,096 wide) and the cat. GPT-2 (multi-head, learned positions) keeps the
// interleaved views: nothing; with Megatron-Core's unfused attention (attention eager)
// no layout copies, the cat always. Nothing for latent attention, or outside
// Megatron-Core's modes.
func TestMegatronQKVSplit(t *testing.T) {
	const T = 4096.0
	for _, c := range []struct {
		name         string
		model        string
		tp           int
		megatron     bool
		want         bool
		fwdB, bwdB   float64
		fwdKs, bwdKs float64
	}{
		{"llama3 8B TP1", "meta-llama-3-8b", 1, true, true, 2 * 2 * T * (4096 + 1024), 2 * 2 * T * (4096 + 2*1024), 2, 1},
		{"llama3 8B TP2", "meta-llama-3-8b", 2, true, true, 2 * 2 * T * (2048 + 512), 2 * 2 * T * (2048 + 2*512), 2, 1},
		{"llama3 8B TP8: one group a device", "meta-llama-3-8b", 8, true, true, 2 * 2 * T * 128, 2 * 2 * T * (512 + 2*128), 1, 1},
		{"llama2 7B: multi-head, rotary", "llama-2-7b", 1, true, true, 2 * 2 * T * 4096, 2 * 2 * T * 3 * 4096, 1, 1},
		{"gpt2: multi-head, learned positions", "gpt2", 1, true, false, 0, 0, 0, 0},
		{"gpt2, unfused attention: the cat alone", "gpt2", 1, true, true, 0, 2 * 2 * T * 3 * 768, 0, 1},
		{"llama3 8B TP1, unfused attention: Q and the cat", "meta-llama-3-8b", 1, true, true, 2 * 2 * T * 4096, 2 * 2 * T * (4096 + 2*1024), 1, 1},
		{"deepseek-v3: latent", "deepseek-v3", 1, true, false, 0, 0, 0, 0},
		{"llama3 8B, not Megatron-Core", "meta-llama-3-8b", 1, false, false, 0, 0, 0, 0},
	} {
		a := bundled(t, c.model)
		seq := 4096
		if c.model == "gpt2" {
			seq = 1024
		}
		attn := CuDNN
		if strings.Contains(c.name, "unfused") {
			attn = Eager
		}
		o := Options{Batch: 4096 / seq, Seq: seq, Attention: attn, TensorParallel: c.tp}.withDefaults()
		sh := newShape(a, o)
		sh.megatronCore = c.megatron
		got, ok := sh.megatronQKVSplit()
		if ok != c.want {
			t.Errorf("%s: priced %v, want %v", c.name, ok, c.want)
			continue
		}
		if got.fwd.bytes != c.fwdB || got.bwd.bytes != c.bwdB || got.fwd.kernels != c.fwdKs || got.bwd.kernels != c.bwdKs || got.fwd.flops != 0 {
			t.Errorf("%s: %+v, want %v and %v bytes, %v and %v kernels", c.name, got, c.fwdB, c.bwdB, c.fwdKs, c.bwdKs)
		}
		if c.model == "deepseek-v3" {
			continue
		}
		found := false
		for _, x := range sh.attention(false).ops {
			if x.name == "qkv split" {
				found = true
			}
		}
		if found != c.want {
			t.Errorf("%s: the attention piece holds the split %v, want %v", c.name, found, c.want)
		}
	}
}

// TestFusedNormNotRecomputed: with recompute_modules layernorm, Megatron-Core reruns
// only the norms its Transformer Engine spec keeps as modules of their own
// (transformer_layer.py: recompute_input_layernorm and recompute_pre_mlp_layernorm are
// set only for a norm that is not IdentityOp): a mixture's pre-MLP norm, not the input
// norm fused into linear_qkv nor a dense block's pre-MLP norm fused into linear_fc1
// (shape.fusedBlockNorm). Where it is fused the norm is not marked for the module and
// the piece saves and reruns what it does without the module; outside Megatron-Core
// both norms are rerun and their outputs (e*T*h each) dropped.
func TestFusedNormNotRecomputed(t *testing.T) {
	const T, h = 4096.0, 4096.0
	for _, megatron := range []bool{true, false} {
		a := bundled(t, "meta-llama-3-8b")
		plain := Options{Batch: 1, Seq: 4096, Attention: CuDNN, Recompute: Selective}.withDefaults()
		mods := plain
		mods.RecomputeModules = ModLayerNorm
		pieces := func(o Options) []piece {
			sh := newShape(a, o)
			sh.megatronCore = megatron
			return []piece{sh.attention(false), sh.mlp()}
		}
		without, with := pieces(plain), pieces(mods)
		for i, name := range []string{"attention", "mlp"} {
			dropped := without[i].saved - with[i].saved
			want := 2 * T * h // the norm's output, in bf16
			if megatron {
				want = 0
			}
			if dropped != want {
				t.Errorf("megatron %v, %s: layernorm drops %v bytes, want %v", megatron, name, dropped, want)
			}
			rerun := 0
			for _, x := range with[i].ops {
				if x.module == ModLayerNorm {
					rerun++
				}
			}
			if wantRerun := map[bool]int{true: 0, false: 1}[megatron]; rerun != wantRerun {
				t.Errorf("megatron %v, %s: %d norms marked for the layernorm module, want %d", megatron, name, rerun, wantRerun)
			}
		}
	}
	// A mixture's pre-MLP norm is a TENorm of its own: rerun in Megatron-Core too.
	a := bundled(t, "qwen3-30b-a3b")
	o := Options{Batch: 1, Seq: 4096, Attention: CuDNN, Recompute: Selective, RecomputeModules: ModLayerNorm, DataParallel: 8, ExpertParallel: 8}.withDefaults()
	sh := newShape(a, o)
	sh.megatronCore = true
	rerun := 0
	for _, x := range sh.moe(&calc{sh: sh, target: target(t, "h100-sxm"), o: o}).ops {
		if x.module == ModLayerNorm {
			rerun++
		}
	}
	if rerun != 1 {
		t.Errorf("qwen3 30B-A3B's mixture: %d norms marked for the layernorm module, want 1", rerun)
	}
}
