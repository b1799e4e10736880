package analytic

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// trafficRow is one row of testdata/eager_traffic.json (tools/measure/traffic.py).
type trafficRow struct {
	Family    string  `json:"family"`
	Precision string  `json:"precision"`
	Hidden    float64 `json:"hidden"`
	MLP       float64 `json:"mlp"`
	KVHeads   float64 `json:"kv_heads"`
	Heads     float64 `json:"heads"`
	Vocab     float64 `json:"vocab"`
	Layers    float64 `json:"layers"`
	Tokens    float64 `json:"tokens"`
	FwdBytes  float64 `json:"fwd_bytes"`
	BwdBytes  float64 `json:"bwd_bytes"`
	FwdKerns  float64 `json:"fwd_kernels"`
	BwdKerns  float64 `json:"bwd_kernels"`
}

// castTensors is the weight and bias tensors torch.autocast casts in one block, one
// kernel each in each pass.
func (r trafficRow) castTensors() float64 {
	switch r.Family {
	case "gpt2":
		return 8 // c_attn, attention c_proj, c_fc, MLP c_proj: weight and bias each
	case "llama":
		return 7 // q, k, v, o, gate, up, down
	}
	return 12 // query, key, value, attention output, intermediate, output: weight and bias each
}

// castParams is the matrix weights (and their biases) torch.autocast casts in a model
// of the script's configuration: the blocks' projections and the output layers'.
func (r trafficRow) castParams() float64 {
	h, m, v, L := r.Hidden, r.MLP, r.Vocab, r.Layers
	kv := r.KVHeads * h / r.Heads
	var block, out float64
	switch r.Family {
	case "gpt2":
		block = 4*h*h + 4*h + 2*h*m + m + h
		out = v * h
	case "llama":
		block = 2*h*h + 2*h*kv + 3*h*m
		out = v * h
	case "bert":
		block = 4*h*h + 4*h + 2*h*m + m + h
		out = v*h + h*h + h + v
	}
	return L*block + out
}

// TestEagerTrafficMatchesCounts solves each family's per-token block traffic from the
// counts tools/measure/traffic.py took on an H100 (six sizes: the differences in layers,
// MLP width and key-value width isolate the terms) and checks eagerBlockTraffic holds
// them, so the table cannot drift from its measurement.
func TestEagerTrafficMatchesCounts(t *testing.T) {
	raw, err := os.ReadFile("testdata/eager_traffic.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []trafficRow `json:"rows"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	find := func(fam, prec string, h, m, kv, L float64) trafficRow {
		for _, r := range doc.Rows {
			if r.Family == fam && r.Precision == prec && r.Hidden == h && r.MLP == m && r.KVHeads == kv && r.Vocab == 4096 && r.Layers == L {
				return r
			}
		}
		t.Fatalf("no row %s %s h=%v mlp=%v kv=%v layers=%v", fam, prec, h, m, kv, L)
		return trafficRow{}
	}
	families := map[string]arch.Family{"gpt2": arch.GPT2, "llama": arch.Llama, "bert": arch.BERT}
	for name, fam := range families {
		for _, prec := range []string{"amp", "bf16"} {
			bytes := func(r trafficRow, bwd bool) float64 {
				b := r.FwdBytes
				if bwd {
					b = r.BwdBytes
				}
				if prec == "amp" {
					b -= 6 * r.castParams() // per parameter, priced by shape.autocast
				}
				return b
			}
			solve := func(bwd bool) perToken {
				one, three := find(name, prec, 512, 2048, 8, 1), find(name, prec, 512, 2048, 8, 3)
				T := three.Tokens
				block := (bytes(three, bwd) - bytes(one, bwd)) / 2 / T
				mlp := (bytes(three, bwd) - bytes(find(name, prec, 512, 1024, 8, 3), bwd)) / (3 * T * 1024)
				kv := 0.0
				if fam == arch.Llama {
					kv = (bytes(three, bwd) - bytes(find(name, prec, 512, 2048, 2, 3), bwd)) / (3 * T * 384)
				}
				return perToken{(block - 2048*mlp - 512*kv) / 512, mlp, kv}
			}
			want := eagerBlockTraffic[fam][prec == "amp"]
			for _, c := range []struct {
				pass      string
				got, want perToken
			}{{"forward", solve(false), want.fwd}, {"backward", solve(true), want.bwd}} {
				if math.Abs(c.got.hidden-c.want.hidden) > 0.01 || math.Abs(c.got.mlp-c.want.mlp) > 0.01 || math.Abs(c.got.kv-c.want.kv) > 0.01 {
					t.Errorf("%s %s %s: counted %+v bytes per token, table %+v", name, prec, c.pass, c.got, c.want)
				}
			}
			one, three := find(name, prec, 512, 2048, 8, 1), find(name, prec, 512, 2048, 8, 3)
			casts := 0.0
			if prec == "amp" {
				casts = three.castTensors()
			}
			if k := (three.FwdKerns-one.FwdKerns)/2 - casts; k != want.fwdKernels {
				t.Errorf("%s %s: %v forward kernels per block counted, table %v", name, prec, k, want.fwdKernels)
			}
			if k := (three.BwdKerns-one.BwdKerns)/2 - casts; k != want.bwdKernels {
				t.Errorf("%s %s: %v backward kernels per block counted, table %v", name, prec, k, want.bwdKernels)
			}
		}
	}
	// The CPU transcription of GPT-2's MLP (tools/opcount, eagerTraffic) agrees with the
	// real code's count in 16 bits: 36 bytes per element forward.
	if got, want := eagerBlockTraffic[arch.GPT2][false].fwd.mlp, eagerTraffic[arch.GPT2].activation.bytesPerElement; got != want {
		t.Errorf("GPT-2's MLP: %v bytes per element counted on the GPU, %v on the CPU", got, want)
	}
}

// h100Kernels is testdata/h100_kernels.json (tools/measure/kernels.py).
type h100Kernels struct {
	LMHead []map[string]float64 `json:"lm_head"`
	AdamW  []struct {
		Parameters     float64 `json:"parameters"`
		Implementation string  `json:"implementation"`
		Seconds        float64 `json:"seconds"`
	} `json:"adamw"`
}

func loadKernels(t *testing.T) h100Kernels {
	t.Helper()
	raw, err := os.ReadFile("testdata/h100_kernels.json")
	if err != nil {
		t.Fatal(err)
	}
	var k h100Kernels
	if err := json.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestUnalignedRatesMatchMeasured checks unalignedRates against the measured output
// layers: each unaligned vocabulary's products against the same products padded to a
// multiple of 8 words, at the same sizes.
func TestUnalignedRatesMatchMeasured(t *testing.T) {
	k := loadKernels(t)
	rows := map[[2]float64]map[string]float64{}
	for _, r := range k.LMHead {
		rows[[2]float64{r["hidden"], r["vocab"]}] = r
	}
	for _, c := range []struct {
		hidden, vocab, padded float64
	}{{768, 50257, 50304}, {1600, 50257, 50304}, {1024, 30522, 30528}} {
		u, p := rows[[2]float64{c.hidden, c.vocab}], rows[[2]float64{c.hidden, c.padded}]
		if u == nil || p == nil {
			t.Fatalf("no measurement of hidden %v, vocabulary %v or %v", c.hidden, c.vocab, c.padded)
		}
		fwd := p["forward_seconds"] / u["forward_seconds"]
		bwd := (p["input_grad_seconds"] + p["weight_grad_seconds"]) / (u["input_grad_seconds"] + u["weight_grad_seconds"])
		want := unalignedRates[rowAlignment(c.vocab, 2)]
		if math.Abs(fwd-want.fwd) > 0.05 || math.Abs(bwd-want.bwd) > 0.05 {
			t.Errorf("hidden %v, vocabulary %v: measured %.3f forward, %.3f backward of the padded rate; table %+v", c.hidden, c.vocab, fwd, bwd, want)
		}
	}
	for _, c := range []struct {
		n    float64
		want int
	}{{50257, 2}, {30522, 4}, {50260, 8}, {50304, 16}, {128256, 16}} {
		if got := rowAlignment(c.n, 2); got != c.want {
			t.Errorf("rowAlignment(%v words of 2 bytes) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestForeachAdamBytes checks the foreach update's traffic against its count (80 bytes
// per fp32 parameter, 28 fused) and against the measured ratio of the two
// implementations on a billion parameters.
func TestForeachAdamBytes(t *testing.T) {
	for _, c := range []struct {
		name          string
		p             bytesPerParam
		adamW         bool
		bytes, passes float64
	}{
		{"AdamW, fp32", bytesPerParam{weight: 4, grad: 4, states: 8}, true, 80, 8},
		{"Adam, fp32", bytesPerParam{weight: 4, grad: 4, states: 8}, false, 72, 7},
		{"AdamW, bf16", bytesPerParam{weight: 2, grad: 2, states: 4}, true, 40, 8},
		// 16-bit weights and gradients, fp32 master and state: AdamW's accesses, the
		// master's 4 and the moments' and temporary's 14 at 4 bytes, the gradient's 2 at
		// 2, then the copy (the master read, the weight written).
		{"AdamW, mixed", bytesPerParam{weight: 2, grad: 2, master: 4, states: 8}, true, 4*4 + 14*4 + 2*2 + 4 + 2, 9},
	} {
		if b, n := foreachAdam(c.p, c.adamW); b != c.bytes || n != c.passes {
			t.Errorf("foreach %s: %v bytes per parameter in %v passes, want %v in %v", c.name, b, n, c.bytes, c.passes)
		}
	}
	k := loadKernels(t)
	var foreach, fused float64
	for _, r := range k.AdamW {
		if r.Parameters == 1e9 {
			if r.Implementation == "foreach" {
				foreach = r.Seconds
			} else {
				fused = r.Seconds
			}
		}
	}
	if foreach == 0 || fused == 0 {
		t.Fatal("no measurement of AdamW on a billion parameters")
	}
	if got, want := foreach/fused, 80.0/28; math.Abs(got/want-1) > 0.1 {
		t.Errorf("foreach over fused AdamW: measured %.2f, the byte counts give %.2f", got, want)
	}
}

// countedBytes is the forward bytes of the counted eager kernels of the first block
// (its attention and MLP halves, split by sublayer) of a on one h100-sxm in eager
// PyTorch, training.
func countedBytes(t *testing.T, a *arch.Arch, o Options) (attention, mlp float64) {
	t.Helper()
	o.Split = Sublayers
	r, err := Estimate(a, frameworkTarget(t, "h100-sxm", cluster.Eager), o)
	if err != nil {
		t.Fatal(err)
	}
	return r.Layers[1].FwdTerms.MemorySeconds, r.Layers[2].FwdTerms.MemorySeconds
}

// TestCountedTrafficConditions checks where the counted eager traffic applies and how it
// follows the configuration: dropout off takes the two dropouts' 5 bytes per hidden
// element out of each half; eager attention keeps the counted kernels (and adds its
// own); tensor parallelism without sequence parallelism divides Llama's query and
// key-value terms and the MLP's, not the hidden-width term.
func TestCountedTrafficConditions(t *testing.T) {
	base := Options{Batch: 4, Seq: 1024}
	gpt2, _ := arch.Bundled("gpt2")
	noDrop := *gpt2
	noDrop.Dropout = false
	att, ml := countedBytes(t, gpt2, base)
	att0, ml0 := countedBytes(t, &noDrop, base)
	tg := frameworkTarget(t, "h100-sxm", cluster.Eager)
	perHalf := 5 * 4 * 1024 * 768 / (tg.Perf.MemoryBytesPerSecond) // 5 bytes per element at the full bandwidth
	if d := att - att0; math.Abs(d-perHalf) > 1e-12 {
		t.Errorf("GPT-2 attention half without dropout: %g s less memory time, want %g", d, perHalf)
	}
	if d := ml - ml0; math.Abs(d-perHalf) > 1e-12 {
		t.Errorf("GPT-2 MLP half without dropout: %g s less memory time, want %g", d, perHalf)
	}
	eager := base
	eager.Attention = Eager
	if ae, _ := countedBytes(t, gpt2, eager); ae <= att {
		t.Errorf("GPT-2 with eager attention: %g s of memory time, not more than flash's %g", ae, att)
	}
	llama, _ := arch.Bundled("llama-3.2-1b")
	one, _ := countedBytes(t, llama, base)
	tp := base
	tp.TensorParallel = 2
	two, _ := countedBytes(t, llama, tp)
	c := eagerBlockTraffic[arch.Llama][false].fwd
	h, q, kv := float64(llama.HiddenSize), float64(llama.QDim()), float64(llama.KVDim())
	T := 4.0 * 1024
	want := T * (c.hidden - c.kv) / 2 * h // the hidden-width part stays whole
	wantOne := (want + T*c.kv*(q+kv)) / tg.Perf.MemoryBytesPerSecond
	wantTwo := (want + T*c.kv*(q+kv)/2) / tg.Perf.MemoryBytesPerSecond
	// Each half's memory time holds other kernels too (none in the attention half but
	// the counted one and the fused attention's reads): compare the differences.
	if d, w := one-two, wantOne-wantTwo; math.Abs(d-w) > 1e-9 {
		t.Errorf("Llama attention half at tensor parallelism 2: %g s less memory time, want %g (queries and keys and values halved)", d, w)
	}
}
