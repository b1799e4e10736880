package analytic

import (
	"errors"
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/model"
)

// TestUserbuffersTunedConfigs: a tuned config's per-GEMM settings replace
// initialize_ub's defaults on TP 4. Megatron-Bridge's
// userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192: the attention's output projection
// is a pipeline of 4 splits (3 more launches) on all but 24 multiprocessors, the MLP's
// fc2 on all but 16, and the gathering projections' bulk backward overlaps, without
// set_sm_margin, leave both their products every multiprocessor (margin 0).
// userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192: both scattering projections'
// forward are ring exchanges of t = 4 products (3 more launches) on all but 1.
// te-default (and "") keep the defaults: 16 everywhere.
func TestUserbuffersTunedConfigs(t *testing.T) {
	lin := func(name string) op { return matmul(name, 2, 1, 8192, 8192, 2048) }
	attn := piece{ops: []op{gathering(lin("qkv")), lin("core"), scattering(lin("output projection"))}}
	mlp := piece{ops: []op{gathering(lin("fc1")), scattering(lin("fc2"))}}
	type want struct{ dgrad, wgrad, fprop, fwdKernels float64 }
	for _, c := range []struct {
		config    string
		attn, mlp want
	}{
		{"userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192", want{0, 0, 24, 1 + 3}, want{0, 0, 16, 1 + 3}},
		{"userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192", want{0, 0, 1, 1 + 3}, want{0, 0, 1, 1 + 3}},
		// The bulk margins differ per slot only where set_sm_margin is on: the h16384
		// configs' qkv_wgrad has num_sm 24, fc1_wgrad 2, both without it.
		{"userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192", want{0, 0, 24, 1 + 3}, want{0, 0, 8, 1 + 3}},
		{TEDefaultUserbuffers, want{16, 16, 16, 1 + 3}, want{16, 16, 16, 1 + 3}},
		{"", want{16, 16, 16, 1 + 3}, want{16, 16, 16, 1 + 3}},
	} {
		calc := &calc{sh: &shape{tp: 4}, o: Options{TensorCommOverlap: true, TensorCommConfig: c.config}}
		for _, pc := range []struct {
			p    piece
			want want
		}{{attn, c.attn}, {mlp, c.mlp}} {
			got := calc.userbuffersChunks(pc.p)
			g, s := got.ops[0], got.ops[len(got.ops)-1]
			if g.gemm.bwdMarginSMs != pc.want.dgrad || g.gemm.wgradMarginSMs != pc.want.wgrad ||
				s.gemm.fwdMarginSMs != pc.want.fprop || s.fwd.kernels != pc.want.fwdKernels {
				t.Errorf("%q, %s: input and weight gradient margins %g and %g, forward margin %g and %g launches; want %+v", c.config, s.name,
					g.gemm.bwdMarginSMs, g.gemm.wgradMarginSMs, s.gemm.fwdMarginSMs, s.fwd.kernels, pc.want)
			}
			if g.fwd.kernels != 1+3 || s.bwd.kernels != 2+3 {
				t.Errorf("%q, %s: the ring exchanges' launches %g and %g, want 4 and 5", c.config, s.name, g.fwd.kernels, s.bwd.kernels)
			}
		}
	}
	// On TP 8 a ring exchange is 8 products, a pipeline its num_splits whatever t.
	calc := &calc{sh: &shape{tp: 8}, o: Options{TensorCommOverlap: true, TensorCommConfig: "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192"}}
	if k := calc.userbuffersChunks(mlp).ops[1].fwd.kernels; k != 8 {
		t.Errorf("ring exchange on TP 8: %g launches, want 8", k)
	}
	calc.o.TensorCommConfig = "userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192"
	if k := calc.userbuffersChunks(mlp).ops[1].fwd.kernels; k != 4 {
		t.Errorf("pipeline on TP 8: %g launches, want 4", k)
	}
}

// TestUserbuffersMargin: a bulk overlap with set_sm_margin false gives its GEMM the full
// SM count (margin 0, whatever its num_sm); with it the GEMM runs on sm_count -
// num_sm. The backward fraction is then the harmonic mean of the input gradient's on
// sms - bwdMarginSMs and the weight gradient's on sms - wgradMarginSMs (each
// marginFraction: the share of the SMs it has times its waves).
func TestUserbuffersMargin(t *testing.T) {
	for _, c := range []struct {
		g    UserbuffersGEMM
		want float64
	}{
		{ubBulk(24), 0},
		{UserbuffersGEMM{Method: UBBulk, NumSM: 16, SetSMMargin: true}, 16},
		{ubPipeline(24), 24},
		{ubRing, 1},
		{UserbuffersGEMM{Method: UBRingExchange, NumSM: 1}, 0},
	} {
		if got := c.g.MarginSMs(); got != c.want {
			t.Errorf("%+v: margin %g, want %g", c.g, got, c.want)
		}
	}
	const sms, k0 = 132, 0
	g := gemmShape{groups: 1, m: 8192, k: 8192, n: 2048, bwdMarginSMs: 16, wgradMarginSMs: 0}
	dgrad := productFraction(1, 8192, 2048, 8192, sms-16, k0) * (sms - 16) / sms
	wgrad := productFraction(1, 8192, 8192, 2048, sms, k0)
	if got, want := g.fraction(true, sms, k0), 2/(1/dgrad+1/wgrad); math.Abs(got-want) > 1e-12 {
		t.Errorf("backward fraction %g, want %g", got, want)
	}
	full := gemmShape{groups: 1, m: 8192, k: 8192, n: 2048}
	if a, b := (gemmShape{groups: 1, m: 8192, k: 8192, n: 2048, wgradMarginSMs: 0, bwdMarginSMs: 0}).fraction(true, sms, k0), full.fraction(true, sms, k0); a != b {
		t.Errorf("no margins: %g, want %g", a, b)
	}
}

// TestUserbuffersConfigRefusals: checkUserbuffersConfig takes a tuned config on the
// shape it was tuned for (an h100 config on the h100-sxm and h200, a b200 config on the
// gb300; a bf16 config on an fp8 run, as NeMo 2.1's GPT-3 175B recipe ran it) and
// refuses, naming tensor_comm_config, an unknown name, a run without the userbuffers
// overlap, another hidden size or device family, and an fp8 config without fp8. A
// config at another tensor degree is taken (the name's shape never reaches Transformer
// Engine; Megatron-Bridge's GB300 405B recipes run a tp4 config at TP 2).
func TestUserbuffersConfigRefusals(t *testing.T) {
	a := &arch.Arch{HiddenSize: 8192}
	ok := Options{TensorParallel: 4, TensorCommOverlap: true, DType: FP8, TensorCommConfig: "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192"}
	for _, c := range []struct {
		name   string
		device string
		hidden int
		edit   func(*Options)
		refuse string // "" when taken
	}{
		{"as tuned", "h100-sxm", 8192, func(*Options) {}, ""},
		{"h200", "h200", 8192, func(*Options) {}, ""},
		{"bf16 config on fp8", "h100-sxm", 8192, func(o *Options) { o.TensorCommConfig = "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192" }, ""},
		{"b200 config on gb300", "gb300", 8192, func(o *Options) {
			o.TensorParallel, o.TensorCommConfig = 2, "userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192"
		}, ""},
		{"te-default anywhere", "a100-80gb", 4096, func(o *Options) { o.TensorCommConfig = TEDefaultUserbuffers }, ""},
		{"unknown", "h100-sxm", 8192, func(o *Options) { o.TensorCommConfig = "userbuffers_fp8_h100" }, "must be te-default or one of"},
		{"no overlap", "h100-sxm", 8192, func(o *Options) { o.TensorCommOverlap = false }, "not priced with it"},
		{"async TP", "h100-sxm", 8192, func(o *Options) { o.TensorCommAsync = true }, "not priced with it"},
		{"hidden", "h100-sxm", 4096, func(*Options) {}, "hidden size 8192, the model's is 4096"},
		// Megatron-Bridge's GB300 Llama 3.1 405B recipes run TP 2 with a tp4 config:
		// the per-GEMM settings reach initialize_ub, the name's shape does not.
		{"tensor degree", "h100-sxm", 8192, func(o *Options) { o.TensorParallel = 8 }, ""},
		{"tp4 config at TP 2, as Bridge's GB300 405B ran", "gb300", 16384, func(o *Options) {
			o.TensorParallel, o.TensorCommConfig = 2, "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192"
		}, ""},
		{"device", "b200", 8192, func(*Options) {}, "device h100, the run's is b200"},
		{"unknown device", "mi300x", 8192, func(*Options) {}, "device h100, the run's is mi300x"},
		{"fp8 config on bf16", "h100-sxm", 8192, func(o *Options) { o.DType = BF16 }, "fp8 products, the run's dtype is bf16"},
	} {
		o := ok
		c.edit(&o)
		a.HiddenSize = c.hidden
		err := checkUserbuffersConfig(c.device, a, o)
		var fe *model.FieldError
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refuse != "" && (!errors.As(err, &fe) || fe.Path != "tensor_comm_config" || !strings.Contains(fe.Reason, c.refuse)):
			t.Errorf("%s: got %v, want a tensor_comm_config error saying %q", c.name, err, c.refuse)
		}
	}
	if err := (Options{TensorCommConfig: "nope"}).Validate(); err == nil || !strings.Contains(err.Error(), "tensor_comm_config") {
		t.Errorf("Validate took an unknown config: %v", err)
	}
}

// TestBulkContention: a bulk overlap without set_sm_margin (every tuned config's) costs
// its product num_sm / sms of the collective's time beside it (cluster.OverlappedSeconds
// less max(product, collective)): on the H100's 132 multiprocessors,
// userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192's attention adds (4 + 24) / 132 of
// half an all-reduce (its input gradient's product beside the input's all-gather on 4,
// its weight gradient's beside the reduce-scatter on 24), its MLP (2 + 4) / 132, when
// the products outlast the collectives. initialize_ub's defaults (set_sm_margin on)
// add nothing here: their margin is the products' (gemmShape), and so do async TP and
// a piece without a gathering projection.
func TestBulkContention(t *testing.T) {
	tg := frameworkTarget(t, "h100-sxm", "cuda-graphs")
	rf := newRoofline(tg, BF16, "")
	lin := func(name string) op { return matmul(name, 2, 1, 8192, 8192, 2048) }
	attn := piece{ops: []op{gathering(lin("qkv")), lin("core"), scattering(lin("output projection"))}, bwdAllReduces: 1}
	mlp := piece{ops: []op{gathering(lin("fc1")), scattering(lin("fc2"))}, bwdAllReduces: 1}
	const allReduce = 1e-4 // s: far shorter than the products
	c := &calc{sh: &shape{tp: 4}, rf: rf, allReduce: allReduce,
		o: Options{TensorCommOverlap: true, TensorCommConfig: "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192"}}
	if rf.sms != 132 || rf.opSeconds(lin("qkv"), true)/2 < 2*allReduce {
		t.Fatalf("setup: %g multiprocessors, backward %g s", rf.sms, rf.opSeconds(lin("qkv"), true))
	}
	for _, pc := range []struct {
		p   piece
		sms float64
	}{{attn, 4 + 24}, {mlp, 2 + 4}} {
		if got, want := c.bulkContention(pc.p), pc.sms/132*allReduce/2; math.Abs(got-want) > 1e-15 {
			t.Errorf("%s: %g s, want %g s", pc.p.ops[len(pc.p.ops)-1].name, got, want)
		}
	}
	for _, o := range []Options{
		{TensorCommOverlap: true},
		{TensorCommOverlap: true, TensorCommConfig: TEDefaultUserbuffers},
		{TensorCommOverlap: true, TensorCommAsync: true, TensorCommConfig: "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192"},
	} {
		c.o = o
		if got := c.bulkContention(attn); got != 0 {
			t.Errorf("%+v: %g s, want 0", o, got)
		}
	}
	c.o.TensorCommAsync = false
	if got := c.bulkContention(piece{ops: []op{lin("core")}, bwdAllReduces: 1}); got != 0 {
		t.Errorf("no gathering projection: %g s", got)
	}
}
