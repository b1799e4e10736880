package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// TestZeROPaperWorkedExample: the ZeRO paper's worked example (Rajbhandari et al. 2020,
// Figure 1): a 7.5B-parameter model with mixed-precision Adam on 64 devices holds 120 GB
// of model state without sharding, 31.4 GB per device under ZeRO-1 (4 Psi + 12 Psi/N),
// 16.6 GB under ZeRO-2 (2 Psi + 14 Psi/N) and 1.9 GB under ZeRO-3 (16 Psi/N).
func TestZeROPaperWorkedExample(t *testing.T) {
	const psi, n = 7.5e9, 64
	for _, c := range []struct {
		s    Sharding
		want float64 // GB, the paper's rounding
	}{{NoSharding, 120}, {ZeRO1, 31.4}, {ZeRO2, 16.6}, {ZeRO3, 1.9}} {
		o := Options{DataParallel: n, Sharding: c.s}.withDefaults()
		p := o.devicePerParam()
		got := psi * (p.weight + p.grad + p.master + p.states) / 1e9
		if math.Abs(got-c.want) > 0.05 {
			t.Errorf("%s: %.3f GB per device, the paper says %.1f", c.s, got, c.want)
		}
	}
}

// TestContextParallelActivations: with context parallelism over c devices, each keeps
// 1/c of every activation of a block (flash attention: no s^2 tensor), does 1/c of its
// FLOPs (the causal attention load-balanced), and its model state is unchanged.
func TestContextParallelActivations(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	one := block(estimate(t, a, Options{Batch: 1, Seq: 8192}))
	for _, c := range []int{2, 4, 8} {
		for _, m := range []ContextMethod{Ring, AllToAll, Hierarchical, AllGather} {
			inner := 0
			if m == Hierarchical {
				inner = c / 2
				if c == 2 {
					continue // the hierarchical split needs c >= 4
				}
			}
			l := block(estimate(t, a, Options{Batch: 1, Seq: 8192, Context: c, ContextMethod: m, ContextInner: inner}))
			if l.SavedActivationBytes*int64(c) != one.SavedActivationBytes {
				t.Errorf("c=%d %s: %d bytes saved, want 1/c of %d", c, m, l.SavedActivationBytes, one.SavedActivationBytes)
			}
			if math.Abs(l.FwdFLOPs*float64(c)-one.FwdFLOPs) > 1e-9*one.FwdFLOPs {
				t.Errorf("c=%d %s: %g forward FLOPs, want 1/c of %g", c, m, l.FwdFLOPs, one.FwdFLOPs)
			}
			if l.Params != one.Params || l.OptimizerBytes != one.OptimizerBytes {
				t.Errorf("c=%d %s: state changed", c, m)
			}
		}
	}
}

// TestContextParallelCommunication checks the exchanges' closed forms per attention
// layer (one block of Llama-3-8B, b = 1, s = 8192, bf16, c = 4):
//
//   - ring: c - 1 steps forward passing the device's K and V (2 x e x b x s/c x kv
//     bytes), c - 1 backward passing K, V and their gradients (twice that); where the
//     link is too slow for the attention to hide a step, each step costs its transfer
//     less 1/c of the attention, so between two bandwidths B1 and B2 the time changes
//     by (c - 1) x 3 x kvBytes x (1/B1 - 1/B2);
//   - all-to-all (Ulysses): Q, K, V and the output, e x b x s/c x (2q + 2kv) bytes per
//     device, all-to-all over c forward and again backward, not overlapped.
func TestContextParallelCommunication(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const c, s = 4, 8192
	kvBytes := 2.0 * 1 * s / c * 2 * float64(a.KVDim())
	ctx := func(m ContextMethod, l cluster.Link) float64 {
		tg := target(t, "a100-80gb")
		tg.TensorLink = l
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: s, Context: c, ContextMethod: m})
		if err != nil {
			t.Fatal(err)
		}
		return block(r).ContextSeconds
	}
	slow1 := cluster.Link{BytesPerSecond: 1e8, LatencySeconds: 1e-3}
	slow2 := cluster.Link{BytesPerSecond: 2e8, LatencySeconds: 1e-3}
	got := ctx(Ring, slow1) - ctx(Ring, slow2)
	want := (c - 1) * 3 * kvBytes * (1/1e8 - 1/2e8)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("ring: %v s between the bandwidths, want %v", got, want)
	}
	fast := cluster.Link{BytesPerSecond: 1e15}
	if g := ctx(Ring, fast); g != 0 {
		t.Errorf("ring over a fast link: %v s exposed, want 0 (hidden behind the attention)", g)
	}
	a2a := 2 * 1 * s / c * float64(2*a.QDim()+2*a.KVDim())
	if g, w := ctx(AllToAll, slow1), 2*cluster.AllToAllSeconds(slow1, a2a, c); math.Abs(g-w) > 1e-12*w {
		t.Errorf("all-to-all: %v s, want %v", g, w)
	}
}

// TestHierarchicalContextCommunication checks the hierarchical split's closed forms
// (Megatron-LM's a2a+p2p) per attention layer of Llama-3-8B, b = 1, s = 8192, bf16,
// c = 8 as g = 2 devices all-to-all (over the tensor link) times c/g = 4 on a ring
// (over the context link):
//
//   - the all-to-all moves Q, K, V and the output, e x b x s/c x (2q + 2kv) bytes per
//     device, over g, once forward and once backward, not overlapped;
//   - the ring passes the device's keys and values (the all-to-all gave it g times the
//     tokens and 1/g of the heads: 2 x e x b x s/c x kv bytes) in c/g - 1 steps forward
//     and c/g - 1 steps of twice that backward, so between two context-link
//     bandwidths B1 and B2 the time changes by (c/g - 1) x 3 x kvBytes x (1/B1 - 1/B2),
//     and over a fast link the ring hides behind the attention: the all-to-all is all.
func TestHierarchicalContextCommunication(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const c, g, s = 8, 2, 8192
	intra := cluster.Link{BytesPerSecond: 1e11, LatencySeconds: 1e-5}
	ctx := func(l cluster.Link) float64 {
		tg := target(t, "a100-80gb")
		tg.TensorLink, tg.ContextLink = intra, l
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: s, Context: c, ContextMethod: Hierarchical, ContextInner: g})
		if err != nil {
			t.Fatal(err)
		}
		return block(r).ContextSeconds
	}
	a2a := 2 * cluster.AllToAllSeconds(intra, 2*1*s/c*float64(2*a.QDim()+2*a.KVDim()), g)
	if got := ctx(cluster.Link{BytesPerSecond: 1e15}); math.Abs(got-a2a) > 1e-12*a2a {
		t.Errorf("fast ring: %v s, want the all-to-alls' %v", got, a2a)
	}
	kvBytes := 2.0 * 1 * s / c * 2 * float64(a.KVDim())
	slow1 := cluster.Link{BytesPerSecond: 1e8, LatencySeconds: 1e-3}
	slow2 := cluster.Link{BytesPerSecond: 2e8, LatencySeconds: 1e-3}
	got := ctx(slow1) - ctx(slow2)
	want := (c/g - 1) * 3 * kvBytes * (1/1e8 - 1/2e8)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("ring of the groups: %v s between the bandwidths, want %v", got, want)
	}
	// Against the flat ring over the same slow link: c - 1 steps instead of c/g - 1.
	tg := target(t, "a100-80gb")
	tg.TensorLink, tg.ContextLink = intra, slow1
	flat, err := Estimate(a, tg, Options{Batch: 1, Seq: s, Context: c})
	if err != nil {
		t.Fatal(err)
	}
	if h := ctx(slow1); !(h < block(flat).ContextSeconds) {
		t.Errorf("hierarchical %v s over a slow network, flat ring %v s: want the hierarchical split cheaper", h, block(flat).ContextSeconds)
	}
}

// TestAllGatherContextCommunication checks PyTorch's context parallelism's exchanges
// (AllGather) per attention layer of Llama-3-8B, b = 1, s = 8192, bf16, c = 4, in
// closed form. Each device holds n = e x b x s/c x 2q bytes of keys and values (the
// query heads' width: the flash call takes as many as Q's); a pass all-gathers the c
// devices' n, and the backward pass gathers them again and sends the keys' and values'
// fp32 gradients, 2n bytes, to the next device after each of the c steps:
//
//   - under torch.compile (cluster.Framework.TracedCommWaits) nothing is hidden: the
//     forward and backward passes add 2 x gather + c x send;
//   - otherwise over a fast link everything hides behind the attention but the last
//     send, which waits for the last step: the layer adds one send;
//   - and over slow links, where every exchange outlasts the attention that hides it,
//     the hidden parts cancel between two bandwidths B1 and B2:
//     (2(c-1)n + 2cn) x (1/B1 - 1/B2).
func TestAllGatherContextCommunication(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const c, s = 4, 8192
	n := 2.0 * 1 * s / c * 2 * float64(a.QDim())
	ctx := func(fw string, l cluster.Link) float64 {
		tg := target(t, "a100-80gb")
		tg.TensorLink = l
		f, err := cluster.LookupFramework(fw)
		if err != nil {
			t.Fatal(err)
		}
		tg.Framework = f
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: s, Context: c, ContextMethod: AllGather})
		if err != nil {
			t.Fatal(err)
		}
		return block(r).ContextSeconds
	}
	slow1 := cluster.Link{BytesPerSecond: 1e8, LatencySeconds: 1e-3}
	slow2 := cluster.Link{BytesPerSecond: 2e8, LatencySeconds: 1e-3}
	gather, send := cluster.RingAllGatherSeconds(slow1, c*n, c), cluster.PointToPointSeconds(slow1, 2*n)
	if got, want := ctx(cluster.Compiled, slow1), 2*gather+c*send; math.Abs(got-want) > 1e-12*want {
		t.Errorf("compiled: %v s, want 2 gathers and %d sends, %v", got, c, want)
	}
	fast := cluster.Link{BytesPerSecond: 1e15}
	if got, want := ctx(cluster.Eager, fast), cluster.PointToPointSeconds(fast, 2*n); math.Abs(got-want) > 1e-12*want {
		t.Errorf("eager over a fast link: %v s, want the last send's %v", got, want)
	}
	got := ctx(cluster.Eager, slow1) - ctx(cluster.Eager, slow2)
	want := (2*(c-1)*n + 2*c*n) * (1/1e8 - 1/2e8)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("eager: %v s between the bandwidths, want %v", got, want)
	}
	if r := ctx(cluster.Eager, slow1); !(r < ctx(cluster.Compiled, slow1)) {
		t.Errorf("eager %v s, compiled %v s: want eager's overlap cheaper", r, ctx(cluster.Compiled, slow1))
	}
}

// TestAllGatherAttentionSteps: under PyTorch's context parallelism (AllGather) a causal
// model's attention core runs one causal step and c - 1 steps without a mask, each 1/c
// of the work, so its rate is c / (1/causal + (c-1)/unmasked) at FlashAttention-2's
// published H100 rates for a device's s/c tokens (Ring: the causal rate); its fp32
// merges move (20 + 10(c-1)) bytes forward and (30 + 46c) backward per element of the
// attention output (contextMerges); and beyond the ring's, it holds during the core the
// other devices' keys and values, (c-1) x e x t x 2q bytes, with the fp32 output
// forward (4tq) and fp32 dQ, dK, dV and the dK and dV sent and received backward
// (12tq + 16tq).
func TestAllGatherAttentionSteps(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	const c, s = 4, 65536
	steps := func(m ContextMethod) piece {
		o := Options{Batch: 1, Seq: s, Context: c, ContextMethod: m, Attention: Flash}.withDefaults()
		sh := newShape(a, o)
		p := sh.attention(false)
		sh.attentionRates("h100-sxm", &p, false)
		return p
	}
	rate := func(causal, bwd bool) float64 {
		r, ok := attentionEfficiencyIn("h100-sxm", Flash, 128, s/c, 0, causal, bwd)
		if !ok {
			t.Fatal("no FlashAttention-2 rate")
		}
		return r
	}
	for _, m := range []ContextMethod{Ring, AllGather} {
		var core *op
		var merges *op
		p := steps(m)
		for i := range p.ops {
			switch {
			case p.ops[i].core:
				core = &p.ops[i]
			case p.ops[i].name == "context merges":
				merges = &p.ops[i]
			}
		}
		if core == nil {
			t.Fatalf("%s: no attention core", m)
		}
		for _, bwd := range []bool{false, true} {
			want := rate(true, bwd)
			if m == AllGather {
				want = c / (1/rate(true, bwd) + (c-1)/rate(false, bwd))
			}
			if _, got := core.pass(bwd); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s backward %v: rate %v, want %v", m, bwd, got, want)
			}
		}
		if m == Ring {
			if merges != nil {
				t.Errorf("ring: fp32 merges priced")
			}
			continue
		}
		ring := steps(Ring)
		tq := 1.0 * s / c * float64(a.QDim())
		gathered := (c - 1) * 2 * 2 * tq
		if got, want := p.fwdExtra-ring.fwdExtra, gathered+4*tq; got != want {
			t.Errorf("forward transients: %v bytes beyond the ring's, want %v", got, want)
		}
		if got, want := p.bwdExtra-ring.bwdExtra, gathered+12*tq+16*tq; got != want {
			t.Errorf("backward transients: %v bytes beyond the ring's, want %v", got, want)
		}
		if merges == nil {
			t.Fatal("all-gather: no merges")
		}
		elems := 1.0 * s / c * float64(a.QDim())
		if merges.fwd.bytes != (20+10*(c-1))*elems || merges.bwd.bytes != (30+46*c)*elems {
			t.Errorf("merges: %v and %v bytes, want %v and %v", merges.fwd.bytes, merges.bwd.bytes, (20+10*(c-1))*elems, (30+46*c)*elems)
		}
	}
}

// TestContextParallelRefused: context parallelism that does not split evenly is refused
// with the reason.
func TestContextParallelRefused(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b") // 32 heads, 8 key/value heads
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Batch: 1, Seq: 8190, Context: 4}, "must divide the sequence"},
		{Options{Batch: 1, Seq: 8196, Context: 4}, "ring attention on a causal model balances the load over 2c chunks of the sequence: 2 x 4 must divide the sequence"},
		{Options{Batch: 1, Seq: 8196, Context: 4, ContextMethod: Ring}, "ring attention on a causal model"},
		// all-gather is no ring: its error names the method it is about.
		{Options{Batch: 1, Seq: 8196, Context: 4, ContextMethod: AllGather}, "context_method all-gather (PyTorch's context_parallel) balances a causal model's load over 2c chunks of the sequence (its load balancing, enable_load_balance): 2 x 4 must divide the sequence"},
		{Options{Batch: 1, Seq: 8192, Context: 16, ContextMethod: AllToAll}, "num_kv_heads"},
		{Options{Batch: 1, Seq: 8192, Context: 4, TensorParallel: 4, ContextMethod: AllToAll}, "num_kv_heads on a device"},
		{Options{Batch: 1, Seq: 8192, Context: 2, ContextMethod: "star"}, "context_method"},
		{Options{Batch: 1, Seq: 8192, Context: 8, ContextMethod: Hierarchical}, "context_inner"},
		{Options{Batch: 1, Seq: 8192, Context: 8, ContextMethod: Hierarchical, ContextInner: 8}, "at least two of them on the ring"},
		{Options{Batch: 1, Seq: 8192, Context: 8, ContextMethod: Hierarchical, ContextInner: 3}, "must divide context_parallel"},
		{Options{Batch: 1, Seq: 8192, Context: 4, ContextMethod: Ring, ContextInner: 2}, "goes with context_method hierarchical"},
		{Options{Batch: 1, Seq: 8192, Context: 32, ContextMethod: Hierarchical, ContextInner: 16}, "num_kv_heads"},
		{Options{Batch: 1, Seq: 8200, Context: 8, ContextMethod: Hierarchical, ContextInner: 2}, "2 x 8 must divide the sequence"},
		{Options{Batch: 1, Seq: 8192, Sharding: ZeRO3, Optimizer: None}, "inference"},
	} {
		_, err := Estimate(a, target(t, "a100-80gb"), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.o, err, c.want)
		}
	}
}

// TestZeRO3GatheredLayer: ZeRO-3 holds a layer's gathered weights (and the next
// layer's, prefetched) and its whole gradients as working memory beside the shards.
func TestZeRO3GatheredLayer(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	plain := block(estimate(t, a, Options{Batch: 1, Seq: 4096}))
	for _, c := range []struct {
		noPrefetch bool
		copies     int64
	}{{false, 2}, {true, 1}} {
		l := block(estimate(t, a, Options{Batch: 1, Seq: 4096, DataParallel: 8, Sharding: ZeRO3, NoPrefetch: c.noPrefetch}))
		if got, want := l.TemporaryBytes-plain.TemporaryBytes, l.Params*(2*c.copies+2); got != want {
			t.Errorf("no_prefetch %v: %d bytes more working memory, want %d (gathered weights x %d + gradients)", c.noPrefetch, got, want, c.copies)
		}
		if l.ParamBytes != plain.ParamBytes/8 || l.GradBytes != plain.GradBytes/8 {
			t.Errorf("shards: weights %d grads %d, want 1/8 of %d, %d", l.ParamBytes, l.GradBytes, plain.ParamBytes, plain.GradBytes)
		}
	}
}

// TestKeepGatheredHoldsStepState: with KeepGathered (FSDP2 under PyTorch's pipelining)
// a bf16 layer holds, beside the ZeRO-3 shards, its whole 16-bit weights and whole fp32
// gradients through the step (2 + 4 bytes a parameter, KeptGatheredBytesPerParam), and
// its working memory gathers nothing: only its 16-bit gradient (2 bytes a parameter)
// passes through before it is added to the fp32 one. Without sharding it is refused.
func TestKeepGatheredHoldsStepState(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	plain := block(estimate(t, a, Options{Batch: 1, Seq: 4096}))
	layer := block(estimate(t, a, Options{Batch: 1, Seq: 4096, DataParallel: 8, Sharding: ZeRO3}))
	o := Options{Batch: 1, Seq: 4096, DataParallel: 8, ShardGroup: 8, Sharding: ZeRO3, KeepGathered: true, Optimizer: AdamW}
	kept := block(estimate(t, a, o))
	p := kept.Params
	if got, want := kept.ParamBytes-layer.ParamBytes, p*2; got != want {
		t.Errorf("weights: %d bytes more than layer by layer, want %d (whole 16-bit weights)", got, want)
	}
	if got, want := kept.GradBytes-layer.GradBytes, p*4; got != want {
		t.Errorf("gradients: %d bytes more than layer by layer, want %d (whole fp32 gradients)", got, want)
	}
	if got, want := kept.TemporaryBytes-plain.TemporaryBytes, p*2; got != want {
		t.Errorf("working memory: %d bytes beyond the unsharded layer's, want %d (its 16-bit gradient)", got, want)
	}
	if got := o.KeptGatheredBytesPerParam(); got != 6 {
		t.Errorf("KeptGatheredBytesPerParam = %v, want 6 in bf16", got)
	}
	if got := (Options{KeepGathered: true, Sharding: ZeRO2, ShardGroup: 8}).KeptGatheredBytesPerParam(); got != 0 {
		t.Errorf("zero2: KeptGatheredBytesPerParam = %v, want 0 (nothing gathered)", got)
	}
	_, err := Estimate(a, target(t, "a100-80gb"), Options{Batch: 1, Seq: 4096, DataParallel: 8, Sharding: ZeRO1, KeepGathered: true})
	if err == nil || !strings.Contains(err.Error(), "keep_gathered") {
		t.Errorf("keep_gathered with zero1: error %v, want one naming keep_gathered", err)
	}
}

// TestAllGatherAttentionKernels: context_method all-gather is PyTorch's
// context_parallel, which splits only the kernels scaled_dot_product_attention
// dispatches (flash and cuDNN here): an attention that does not call them is refused on
// its field, where it used to be priced as split; the ring takes every kernel.
func TestAllGatherAttentionKernels(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	for _, tc := range []struct {
		attention Attention
		fp8       bool
		method    ContextMethod
		field     string // "" estimates
	}{
		{"", false, AllGather, ""},
		{Flash, false, AllGather, ""},
		{CuDNN, false, AllGather, ""},
		{Eager, false, AllGather, "attention"},
		{Flash3, false, AllGather, "attention"},
		{FlashTriton, false, AllGather, "attention"},
		{CuDNN, true, AllGather, "fp8_attention"},
		{Eager, false, Ring, ""},
		{Flash3, false, Ring, ""},
	} {
		o := Options{Batch: 1, Seq: 8192, Context: 4, ContextMethod: tc.method, Attention: tc.attention, FP8Attention: tc.fp8}
		if tc.fp8 {
			o.DType, o.FP8Recipe = FP8, Delayed
		}
		_, err := Estimate(a, target(t, "h100-sxm"), o)
		fes, _ := model.AsFieldErrors(err)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s %s fp8 %v: %v", tc.method, tc.attention, tc.fp8, err)
		case tc.field != "" && (len(fes) != 1 || fes[0].Path != tc.field || !strings.Contains(fes[0].Reason, "context_parallel")):
			t.Errorf("%s %s fp8 %v: error %v, want one on %s naming PyTorch's context_parallel", tc.method, tc.attention, tc.fp8, err, tc.field)
		}
	}
}
