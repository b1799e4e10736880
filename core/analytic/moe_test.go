package analytic

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// moeBlock returns the first mixture-of-experts block of an estimate.
func moeBlock(t *testing.T, r *Result) Layer {
	t.Helper()
	for _, l := range r.Layers {
		if l.Kind == "block" && l.ExpertParams > 0 {
			return l
		}
	}
	t.Fatal("no mixture-of-experts block")
	return Layer{}
}

// TestMoEFLOPsFollowActiveExperts: a mixture block's forward FLOPs are the attention's,
// the router's 2*T*h*E and the k routed experts' 6*h*f per token (plus the shared
// experts' 6*h*fs), whatever the expert parallelism; the busiest device's expert FLOPs
// scale with its load (the imbalance, capped by a capacity factor).
func TestMoEFLOPsFollowActiveExperts(t *testing.T) {
	const b, s = 1, 4096
	T := float64(b * s)
	for _, tt := range []struct {
		name       string
		eps        []int
		attention  func(T float64) float64
		h, f, fs   float64
		experts, k float64
	}{
		{"mixtral-8x7b", []int{1, 2, 4, 8}, func(T float64) float64 {
			const h, q, kv = 4096, 4096, 1024
			return 2*T*h*(q+2*kv) + 2*T*q*h + 4*T*T*q/2 // projections and causal flash
		}, 4096, 14336, 0, 8, 2},
		{"deepseek-v3", []int{1, 8, 32, 64}, func(T float64) float64 {
			const h, H, qr, kvr, rope, nope, v = 7168, 128, 1536, 512, 64, 128, 128
			proj := h*qr + qr*H*(nope+rope) + h*(kvr+rope) + kvr*H*(nope+v) + H*v*h
			return 2*T*float64(proj) + 2*T*T*H*(nope+rope+v)/2
		}, 7168, 2048, 2048, 256, 8},
	} {
		a := bundled(t, tt.name)
		for _, ep := range tt.eps {
			for _, load := range []struct{ imbalance, capacity, factor float64 }{{0, 0, 1}, {1.5, 0, 1.5}, {1.5, 1.25, 1.25}, {1.2, 2, 1.2}} {
				o := Options{Batch: b, Seq: s, ExpertParallel: ep, DataParallel: 64, ExpertImbalance: load.imbalance, CapacityFactor: load.capacity}
				r, err := Estimate(a, target(t, "h100-sxm"), o)
				if err != nil {
					t.Fatal(err)
				}
				balanced, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: b, Seq: s, ExpertParallel: ep, DataParallel: 64})
				if err != nil {
					t.Fatal(err)
				}
				// The load is the busiest device's time, not model FLOPs.
				if got, want := r.Total.ModelFwdFLOPs, balanced.Total.FwdFLOPs; math.Abs(got-want) > 1e-9*want {
					t.Errorf("%s ep=%d load %v: model FLOPs %.6g, balanced routing's %.6g", tt.name, ep, load, got, want)
				}
				bl := moeBlock(t, r)
				want := tt.attention(T) + 2*T*tt.h*tt.experts + 6*tt.h*tt.f*T*tt.k*load.factor + 6*tt.h*tt.fs*T
				if math.Abs(bl.FwdFLOPs-want) > 1e-9*want {
					t.Errorf("%s ep=%d load %v: forward FLOPs %.6g, want %.6g", tt.name, ep, load, bl.FwdFLOPs, want)
				}
			}
		}
	}
}

// TestExpertParamsDividedByEP: a mixture block holds E/EP routed experts (each split
// over the expert tensor group), the router, the norm and the shared experts (split
// over the tensor group); routed experts' optimizer state is sharded with ZeRO-1 over
// the expert-data-parallel group d*t/(EP*ETP), the rest over d.
func TestExpertParamsDividedByEP(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	const h, f, E = 7168, 2048, 256
	expert := int64(3 * h * f)
	for _, tt := range []struct{ d, tp, ep, etp int }{{64, 1, 64, 1}, {32, 2, 8, 1}, {16, 8, 16, 8}, {8, 1, 1, 1}} {
		o := Options{Batch: 1, Seq: 1024, DataParallel: tt.d, TensorParallel: tt.tp, SequenceParallel: tt.tp > 1,
			ExpertParallel: tt.ep, ExpertTensorParallel: tt.etp, Sharding: ZeRO1}
		r, err := Estimate(a, target(t, "h100-sxm"), o)
		if err != nil {
			t.Fatal(err)
		}
		bl := moeBlock(t, r)
		wantExperts := int64(E/tt.ep) * expert / int64(tt.etp)
		if bl.ExpertParams != wantExperts {
			t.Errorf("%+v: expert params %d, want %d", tt, bl.ExpertParams, wantExperts)
		}
		attn := a.AttentionParams() - mlaSharded(a) + mlaSharded(a)/int64(tt.tp)
		wantBlock := attn + h + (h*E + E) + wantExperts + expert/int64(tt.tp)
		if bl.Params != wantBlock {
			t.Errorf("%+v: block params %d, want %d", tt, bl.Params, wantBlock)
		}
		edp := tt.d * tt.tp / (tt.ep * tt.etp)
		if got := o.ExpertDataParallel(); got != edp {
			t.Errorf("%+v: expert data parallel %d, want %d", tt, got, edp)
		}
		// Mixed precision with Adam: 12 bytes of state and master weights per parameter.
		want := ceil(float64(bl.Params-bl.ExpertParams)*12/float64(tt.d) + float64(bl.ExpertParams)*12/float64(edp))
		if bl.OptimizerBytes != want {
			t.Errorf("%+v: optimizer bytes %d, want %d", tt, bl.OptimizerBytes, want)
		}
	}
}

// TestHierarchicalAllToAllSeconds: the closed form of cluster.HierarchicalAllToAllSeconds.
func TestHierarchicalAllToAllSeconds(t *testing.T) {
	nv := cluster.Link{LatencySeconds: 2e-6, BytesPerSecond: 450e9}
	ib := cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 50e9}
	const n = 64e6
	for _, tt := range []struct {
		members, perNode int
		want             float64
	}{
		{1, 8, 0},
		{8, 8, 7*2e-6 + 7.0/8*n/450e9},
		{8, 0, 7*2e-6 + 7.0/8*n/450e9},
		{64, 8, max(7*2e-6+7.0/64*n/450e9, 56*5e-6+56.0/64*n/50e9)},
		{16, 1, 15*5e-6 + 15.0/16*n/50e9},
	} {
		if got := cluster.HierarchicalAllToAllSeconds(nv, ib, n, tt.members, tt.perNode); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%d members, %d per node: %v s, want %v", tt.members, tt.perNode, got, tt.want)
		}
	}
}

// TestExpertComm: each mixture layer runs a dispatch and a combine all-to-all of the
// busiest device's e*h*n*k*L bytes in each pass (again for the rerun forward of full
// recomputation), over the expert links, with the probabilities' all-to-all and the
// forward's gather of the tokens per expert (alltoallMetadataSeconds); with expert
// tensor parallelism the received rows are gathered and scattered too. The difference from free links is exactly that.
// The expert group's NVLink, the network and the tensor link as given (the NVLink
// presets already state NCCL's rate, cluster.NVLinkCollectiveBytesPerSecond).
func TestExpertComm(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	const b, s, h, k = 1, 4096, 7168, 8
	nv := cluster.Link{LatencySeconds: 3e-6, BytesPerSecond: 400e9}
	nvp := nv
	ib := cluster.Link{LatencySeconds: 6e-6, BytesPerSecond: 45e9}
	for _, tt := range []struct {
		ep, perNode, tp, etp int
		load, passes         float64
		rc                   Recompute
	}{
		{8, 8, 1, 1, 1, 4, NoRecompute},
		{64, 8, 1, 1, 1.3, 4, NoRecompute},
		{32, 8, 1, 1, 1, 6, Full},
		{16, 4, 2, 2, 1, 4, NoRecompute},
		{16, 4, 2, 1, 1, 4, NoRecompute},
	} {
		tg := target(t, "h100-sxm")
		tg.TensorLink, tg.ExpertLink, tg.ExpertInterLink, tg.ExpertPerNode = nv, nv, ib, tt.perNode
		o := Options{Batch: b, Seq: s, DataParallel: 64, TensorParallel: tt.tp, SequenceParallel: tt.tp > 1,
			ExpertParallel: tt.ep, ExpertTensorParallel: tt.etp, ExpertImbalance: tt.load, Recompute: tt.rc}
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(b*s) / float64(tt.tp)
		a2a := cluster.HierarchicalAllToAllSeconds(nvp, ib, 2*h*n*k*tt.load, tt.ep, tt.perNode)
		gather := cluster.RingAllReduceSeconds(nv, 2*h*float64(tt.etp)*float64(b*s)/float64(tt.tp)*k*tt.load, tt.etp)
		// Megatron-Core's all-to-all dispatcher also sends the routing probabilities (an
		// fp32 a routed row) in an all-to-all of their own in each pass, and gathers the
		// tokens per expert (E int64s a rank over the EP x expert-TP group, Megatron-Core's
		// tp_ep_group) in each forward.
		probs := cluster.HierarchicalAllToAllSeconds(nvp, ib, 4*n*k*tt.load, tt.ep, tt.perNode)
		l, group := nvp, tt.ep*tt.etp
		if tt.perNode < tt.ep {
			l = ib
		}
		counts := cluster.RingAllGatherSeconds(l, 8*float64(a.NumExperts)*float64(group), group)
		want := tt.passes/2*(2*a2a+probs) + tt.passes/2*gather + (tt.passes/2-1)*counts
		bl := moeBlock(t, r)
		if math.Abs(bl.ExpertCommSeconds-want) > 1e-12 || bl.ExpertExposedSeconds != bl.ExpertCommSeconds {
			t.Errorf("%+v: expert communication %v s (exposed %v), want %v", tt, bl.ExpertCommSeconds, bl.ExpertExposedSeconds, want)
		}
		free := tg
		free.ExpertLink, free.ExpertInterLink = cluster.Link{BytesPerSecond: 1e300}, cluster.Link{BytesPerSecond: 1e300}
		free.TensorLink = cluster.Link{BytesPerSecond: 1e300}
		rf, err := Estimate(a, free, o)
		if err != nil {
			t.Fatal(err)
		}
		bf := moeBlock(t, rf)
		tpComm := bl.TensorAllReduceSeconds - bf.TensorAllReduceSeconds
		if d := bl.FwdSeconds + bl.BwdSeconds - bf.FwdSeconds - bf.BwdSeconds - tpComm; math.Abs(d-want) > 1e-9 {
			t.Errorf("%+v: the passes grow by %v s, want %v", tt, d, want)
		}
	}
}

// TestExpertOverlap: with the dispatch overlapped (combined 1F1B), the measured share
// h = 0.3655 of the forward pass's all-to-alls hides behind the layer's backward
// computation and of the backward's behind its forward, slowing it by the SMs they
// hold (f: the alltoall dispatcher's NCCL CTAs, 24 of an H100's 132 SMs; DeepEP's 20
// of them): exposed =
// max(fwd comm - bwd compute, (1 - h + f h) fwd comm) + the same for the backward. A
// slow link leaves all but the compute exposed; a fast one 1 - h + f h of the
// communication.
func TestExpertOverlap(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	for _, c := range []struct {
		dispatcher Dispatcher
		bw, f      float64
	}{
		{DispatchAllToAll, 400e9, 24.0 / 132}, {DispatchAllToAll, 2e9, 24.0 / 132}, {DispatchAllToAll, 0.2e9, 24.0 / 132},
		{DispatchDeepEP, 400e9, 20.0 / 132},
		{DispatchDeepEPFP8, 400e9, 20.0 / 132},
	} {
		bw, f := c.bw, c.f
		tg := target(t, "h100-sxm")
		tg.ExpertLink = cluster.Link{LatencySeconds: 1e-6, BytesPerSecond: bw}
		o := Options{Batch: 1, Seq: 4096, DataParallel: 64, ExpertParallel: 64, Dispatcher: c.dispatcher}
		plain, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.ExpertOverlap = true
		over, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		p, q := moeBlock(t, plain), moeBlock(t, over)
		half := p.ExpertCommSeconds / 2
		fwdCompute, bwdCompute := p.FwdDeviceSeconds-half, p.BwdDeviceSeconds-half
		const h = 0.3655
		left := 1 - h + f*h
		want := max(half-bwdCompute, left*half) + max(half-fwdCompute, left*half)
		if bw == 400e9 && math.Abs(want-left*p.ExpertCommSeconds) > 1e-12 {
			t.Errorf("link %g B/s: the communication does not hide (exposed %v of %v): the case tests nothing", bw, want, p.ExpertCommSeconds)
		}
		if math.Abs(q.ExpertExposedSeconds-want) > 1e-12 || q.ExpertCommSeconds != p.ExpertCommSeconds {
			t.Errorf("%s, link %g B/s: exposed %v s of %v, want %v", c.dispatcher, bw, q.ExpertExposedSeconds, q.ExpertCommSeconds, want)
		}
		if d := (p.FwdDeviceSeconds + p.BwdDeviceSeconds) - (q.FwdDeviceSeconds + q.BwdDeviceSeconds); math.Abs(d-(p.ExpertCommSeconds-want)) > 1e-12 {
			t.Errorf("link %g B/s: overlap saves %v s, want %v", bw, d, p.ExpertCommSeconds-want)
		}
	}
}

// TestMoEActivations: what a mixture block keeps for its backward pass follows the
// tokens its device computes: 2e*n*h for the norm's and router's inputs, 4*n*E for the
// router's fp32 probabilities, 2*e*h*ETP*A for the experts' gathered inputs and
// outputs, 4*e*f*A for their SwiGLU tensors and 4*e*T*fs/t for the shared experts'.
// Megatron-style (cuda-graphs: the weighted fused activation and the memory-efficient
// permutation) keeps the experts' inputs, 4 bytes of probability per routed row instead
// of their outputs, and 3*e*f*A for the fused SwiGLU's input and the down projection's.
func TestMoEActivations(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	const b, s, h, f, E, k, e = 2, 4096, 7168, 2048, 256, 8, 2
	megatron := target(t, "h100-sxm")
	fw, err := cluster.LookupFramework(cluster.CUDAGraphs)
	if err != nil {
		t.Fatal(err)
	}
	megatron.Framework = fw
	for _, tt := range []struct {
		tp, etp, ep int
		load        float64
		megatron    bool
	}{{1, 1, 8, 1, false}, {1, 1, 64, 1.5, false}, {4, 1, 32, 1, false}, {2, 2, 16, 1.2, false},
		{1, 1, 8, 1, true}, {2, 2, 16, 1.2, true}} {
		o := Options{Batch: b, Seq: s, DataParallel: 64, TensorParallel: tt.tp, SequenceParallel: tt.tp > 1,
			ExpertParallel: tt.ep, ExpertTensorParallel: tt.etp, ExpertImbalance: tt.load, Split: Sublayers}
		tg := target(t, "h100-sxm")
		if tt.megatron {
			tg = megatron
		}
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		var mlp Layer
		for _, l := range r.Layers {
			if l.Kind == "mlp" && l.ExpertParams > 0 {
				mlp = l
				break
			}
		}
		T := float64(b * s)
		n := T / float64(tt.tp)
		A := T / float64(tt.tp) * k * tt.load
		want := 2*e*n*h + 4*n*E + 2*e*h*float64(tt.etp)*A + 4*e*f*A + 4*e*T*f/float64(tt.tp)
		if tt.megatron {
			g := float64(tt.etp) * A
			want = 2*e*n*h + 4*n*E + e*h*g + 4*g + 3*e*f*A + 4*e*T*f/float64(tt.tp)
		}
		if got := float64(mlp.SavedActivationBytes); got != math.Floor(want) {
			t.Errorf("%+v: saved %v bytes, want %v", tt, got, want)
		}
	}
}

// TestMoEOptionErrors: the layouts Megatron refuses are refused, naming the option.
func TestMoEOptionErrors(t *testing.T) {
	ds, llama := bundled(t, "deepseek-v3"), bundled(t, "meta-llama-3-8b")
	for _, tt := range []struct {
		arch string
		o    Options
		want string
	}{
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 48, ExpertParallel: 48}, "expert_parallel: must divide the model's 256 experts, got 48"},
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 4, ExpertParallel: 8}, "expert_parallel: expert x expert tensor parallelism (8 x 1) must divide data x context x tensor parallelism (4 x 1 x 1)"},
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 8, TensorParallel: 2, ExpertParallel: 8}, "sequence_parallel: is needed with tensor_parallel 2 and expert parallelism"},
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 8, ExpertParallel: 8, ExpertOverlap: true, Recompute: Full}, "expert_overlap: does not go with full recomputation"},
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 8, ExpertParallel: 8, ExpertOverlap: true, Optimizer: None}, "expert_overlap: pairs a forward with a backward pass"},
		{"deepseek", Options{Batch: 1, Seq: 128, ExpertImbalance: 0.5}, "expert_imbalance: must be between 1 (balanced)"},
		{"deepseek", Options{Batch: 1, Seq: 128, CapacityFactor: -1}, "capacity_factor: must be 0 (dropless)"},
		{"deepseek", Options{Batch: 1, Seq: 128, DataParallel: 8, ExpertTensorParallel: 3}, "expert_parallel: expert x expert tensor parallelism (1 x 3) must divide data x context x tensor parallelism (8 x 1 x 1)"},
		{"deepseek", Options{Batch: 1, Seq: 128, Attention: Eager}, "attention: latent attention"},
		{"llama", Options{Batch: 1, Seq: 128, DataParallel: 8, ExpertParallel: 8}, "expert_parallel: splits a mixture of experts: llama has none"},
	} {
		a := ds
		if tt.arch == "llama" {
			a = llama
		}
		_, err := Estimate(a, target(t, "h100-sxm"), tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.want)
		}
	}
}

// TestMTPLayer: DeepSeek-V3's multi-token prediction module is a layer after the last
// block in training (none in inference), holding its MTP parameters; the model counts
// them.
func TestMTPLayer(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	r, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: 1, Seq: 1024})
	if err != nil {
		t.Fatal(err)
	}
	n := len(r.Layers)
	if l := r.Layers[n-3]; l.Kind != "mtp" || l.Name != "mtp.0" || l.Params != a.MTPParams() {
		t.Errorf("layer %d: %s %s with %d params, want mtp.0 with %d", n-3, l.Kind, l.Name, l.Params, a.MTPParams())
	}
	if r.Total.Params != a.Params()+a.MTPParams() || r.Total.DeviceParams != r.Total.Params {
		t.Errorf("params %d (device %d), want %d", r.Total.Params, r.Total.DeviceParams, a.Params()+a.MTPParams())
	}
	inf, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: 1, Seq: 1024, Optimizer: None})
	if err != nil {
		t.Fatal(err)
	}
	if len(inf.Layers) != n-1 || inf.Total.Params != a.Params() {
		t.Errorf("inference: %d layers, %d params; want %d and %d", len(inf.Layers), inf.Total.Params, n-1, a.Params())
	}
}

// TestDeepEPDispatch: with DeepEP a token crosses the network once per remote node
// among the L = min(N, G * ceil(N / groups)) nodes its routing may reach (k experts on
// L*(1-(1-1/L)^k) distinct ones, (N-1)/N remote) and NVLink once per other device of a
// node (k*(P-1)/P copies); each side pays a latency per peer and the slower sets the
// time, NVLink at the rate the target states (the presets carry NCCL's,
// cluster.NVLinkCollectiveBytesPerSecond). Megatron-Core's
// DeepEP (deepep) moves 16 bits both ways whatever the dtype;
// deepep-fp8 dispatches fp8 with dtype fp8 (h + 4*h/128 bytes), the combine 16 bits.
func TestDeepEPDispatch(t *testing.T) {
	a := bundled(t, "deepseek-v3") // 8 route groups, 4 per token
	const T, h, k = 4096.0, 7168.0, 8.0
	nv := cluster.Link{LatencySeconds: 3e-6, BytesPerSecond: 150e9}
	ib := cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 50e9}
	for _, tt := range []struct {
		ep, perNode int
		dtype       DType
		nodes       float64 // N
		reach       float64 // L
	}{
		{64, 8, FP8, 8, 4},
		{64, 8, BF16, 8, 4},
		{32, 4, BF16, 8, 4},
		{128, 8, FP8, 16, 8},
		{8, 8, BF16, 1, 1},
	} {
		tg := target(t, "h100-sxm")
		tg.ExpertLink, tg.ExpertInterLink, tg.ExpertPerNode = nv, ib, tt.perNode
		P, N, L := float64(tt.perNode), tt.nodes, tt.reach
		remote := L * (1 - math.Pow(1-1/L, k)) * (N - 1) / N
		local := k * (P - 1) / P
		pass := func(bytes float64) float64 {
			var ti, te float64
			if P > 1 {
				ti = (P-1)*3e-6 + bytes*T*local/150e9
			}
			if N > 1 {
				te = (float64(tt.ep)-P)*5e-6 + bytes*T*remote/50e9
			}
			return max(ti, te)
		}
		for _, d := range []Dispatcher{DispatchDeepEP, DispatchDeepEPFP8} {
			o := Options{Batch: 1, Seq: int(T), DType: tt.dtype, DataParallel: tt.ep, ExpertParallel: tt.ep, Dispatcher: d}
			r, err := Estimate(a, tg, o)
			if err != nil {
				t.Fatal(err)
			}
			dispatch := 2 * h
			if tt.dtype == FP8 && d == DispatchDeepEPFP8 {
				dispatch = h + 4*h/128
			}
			want := 2 * (pass(dispatch) + pass(2*h)) // forward and backward
			if got := moeBlock(t, r).ExpertCommSeconds; math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v %s: %v s, want %v", tt, d, got, want)
			}
		}
	}
}

// TestHybridEPDispatch: HybridEP routes as DeepEP (TestDeepEPDispatch's closed form) and
// moves 16 bits both ways whatever the dtype (Megatron-Core's HybridEP path refuses fp8
// dispatch), as Megatron-Core's DeepEP does: its communication is deepep's in any
// dtype (plus its routing map's all-gather, routingMapGatherSeconds, and in each pass
// one transfer whose token copies carry a row of 4*E/EP*P probability bytes,
// hybridEPProbRowBytes), and deepep-fp8's with the dispatch at 2h bytes a token
// instead of h + 4h/128.
func TestHybridEPDispatch(t *testing.T) {
	a := bundled(t, "deepseek-v3")
	const T, h, k = 4096.0, 7168.0, 8.0
	nv := cluster.Link{LatencySeconds: 3e-6, BytesPerSecond: 150e9}
	ib := cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 50e9}
	for _, tt := range []struct {
		ep, perNode int
		dtype       DType
		P, N, L     float64 // ranks a node, nodes, nodes a token may reach
	}{
		{64, 8, FP8, 8, 8, 4}, {64, 8, BF16, 8, 8, 4}, {8, 8, FP8, 8, 1, 1}, {32, 72, FP8, 32, 1, 1},
	} {
		tg := target(t, "h100-sxm")
		tg.ExpertLink, tg.ExpertInterLink, tg.ExpertPerNode = nv, ib, tt.perNode
		remote := tt.L * (1 - math.Pow(1-1/tt.L, k)) * (tt.N - 1) / tt.N
		local := k * (tt.P - 1) / tt.P
		pass := func(bytes float64) float64 {
			var ti, te float64
			if tt.P > 1 {
				ti = (tt.P-1)*3e-6 + bytes*T*local/150e9
			}
			if tt.N > 1 {
				te = (float64(tt.ep)-tt.P)*5e-6 + bytes*T*remote/50e9
			}
			return max(ti, te)
		}
		// The probabilities' row: 4 bytes for each of the node's E/EP*P experts, with the
		// forward's dispatch and the backward's combine.
		row := 4 * float64(a.NumExperts) / float64(tt.ep) * tt.P
		probs := 2 * (pass(2*h+row) - pass(2*h))
		comm := func(d Dispatcher, dt DType) float64 {
			r, err := Estimate(a, tg, Options{Batch: 1, Seq: int(T), DType: dt, DataParallel: tt.ep, ExpertParallel: tt.ep, Dispatcher: d})
			if err != nil {
				t.Fatal(err)
			}
			return moeBlock(t, r).ExpertCommSeconds
		}
		// DeepEP in bf16 moves 2h bytes a token both ways: HybridEP's bytes in any dtype,
		// and Megatron-Core's DeepEP's. HybridEP adds, in the forward pass, its ring
		// all-gather of the boolean routing map (T x E bytes a rank, T*EP*E gathered)
		// among the EP members, over the network when they span nodes:
		// (EP-1)/EP * T*EP*E / bandwidth + (EP-1) * latency.
		want := comm(DispatchDeepEP, BF16)
		l, m := nv, float64(tt.ep) // NVLink as stated
		if tt.perNode < tt.ep {
			l = ib
		}
		gather := (m-1)/m*T*m*float64(a.NumExperts)/l.BytesPerSecond + (m-1)*l.LatencySeconds
		if got := comm(DispatchHybridEP, tt.dtype); math.Abs(got-want-gather-probs) > 1e-12 || !(probs > 0) {
			t.Errorf("%+v: HybridEP %v s, want DeepEP's 16-bit %v s, the routing map's gather %v s and the probabilities' rows %v s", tt, got, want, gather, probs)
		}
		if got := comm(DispatchDeepEP, tt.dtype); math.Abs(got-want) > 1e-12 {
			t.Errorf("%+v: Megatron-Core's DeepEP %v s, want its 16-bit %v s", tt, got, want)
		}
		// Its metadata preprocessing: one forward launch reading the gathered map, the
		// gather's own launch (calc.expertCollectives), and its permute preprocessing's
		// two (shape.hybridEPPermutePreprocessing).
		block := func(d Dispatcher) Layer {
			r, err := Estimate(a, tg, Options{Batch: 1, Seq: int(T), DType: BF16, DataParallel: tt.ep, ExpertParallel: tt.ep, Dispatcher: d})
			if err != nil {
				t.Fatal(err)
			}
			return moeBlock(t, r)
		}
		hy, de := block(DispatchHybridEP), block(DispatchDeepEP)
		if hy.FwdKernels-de.FwdKernels != 4 || hy.BwdKernels != de.BwdKernels {
			t.Errorf("%+v: HybridEP launches %v/%v, DeepEP %v/%v: want four more forward", tt, hy.FwdKernels, hy.BwdKernels, de.FwdKernels, de.BwdKernels)
		}
		if tt.dtype == FP8 && !(comm(DispatchDeepEPFP8, FP8) < want) {
			t.Errorf("%+v: DeepEP's fp8 dispatch is not below HybridEP's 16 bits", tt)
		}
	}
}

// TestLocalAttention: gpt-oss alternates sliding-window layers (128 tokens: s*w - w^2/2
// query-key pairs per head once s > w) with full ones (s^2/2), the first sliding;
// Llama 4 attends within chunks of 8,192 (c^2/2 per chunk) but in every fourth layer.
// The attention core's forward FLOPs are 4*b*heads*d per pair, with any fused kernel
// (flash, flash3, cudnn); eager attention materialises every score, masked.
func TestLocalAttention(t *testing.T) {
	for _, tt := range []struct {
		name         string
		seq          int
		heads, d     float64
		local, whole float64 // pairs of a local and of a global layer
		first        []bool  // LocalLayer of the first layers
	}{
		{"gpt-oss-20b", 4096, 64, 64, 4096*128 - 128*128/2, 4096 * 4096 / 2, []bool{true, false, true, false}},
		{"llama-4-scout", 20000, 40, 128, 2*8192*8192/2 + 3616*3616/2, 20000 * 20000 / 2, []bool{true, true, true, false, true}},
	} {
		a := bundled(t, tt.name)
		for i, want := range tt.first {
			if a.LocalLayer(i) != want {
				t.Errorf("%s: LocalLayer(%d) = %v", tt.name, i, !want)
			}
		}
		flash := func(attention Attention, block int) float64 {
			r, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: 1, Seq: tt.seq, Split: Sublayers, Attention: attention, Optimizer: None})
			if err != nil {
				t.Fatal(err)
			}
			l := r.Layers[1+2*block] // the embedding, then attention and MLP per block
			free, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: 1, Seq: 1, Split: Sublayers, Attention: attention, Optimizer: None})
			if err != nil {
				t.Fatal(err)
			}
			// The projections' FLOPs grow with the tokens: take them off.
			return l.FwdFLOPs - free.Layers[1+2*block].FwdFLOPs*float64(tt.seq) + 4*tt.heads*tt.d/2*float64(tt.seq)
		}
		for block, local := range tt.first {
			pairs := tt.whole
			if local {
				pairs = tt.local
			}
			want := 4 * tt.heads * tt.d * pairs
			// Every fused kernel skips the tiles outside the window or chunk.
			for _, k := range []Attention{Flash, Flash3, CuDNN} {
				if got := flash(k, block); math.Abs(got-want) > 1e-6*want {
					t.Errorf("%s block %d, %s: attention core %.6g FLOPs, want %.6g", tt.name, block, k, got, want)
				}
			}
		}
	}
}

// TestGptOssEagerExpertOps: gpt-oss's clamp of the experts' gated activation
// (arch.GLUClamp) adds, in Megatron-Core's path, a chunk, two clamps and a cat ahead of
// the fused activation: 8e bytes per element of an expert's width and routed row
// forward, 10e backward, and keeps the clamp's input (2e); the experts' second bias,
// added expert by expert after the grouped product, moves 6e bytes per element of the
// hidden width and routed row forward and 8e backward; a YaRN-scaled rotary embedding
// (arch.RotaryScaled) runs as eager PyTorch's operators instead of one fused kernel.
func TestGptOssEagerExpertOps(t *testing.T) {
	a := bundled(t, "gpt-oss-120b")
	if !a.GLUClamp || !a.RotaryScaled || !a.MLPBias {
		t.Fatalf("gpt-oss-120b: clamp %v, scaled rotary %v, expert biases %v: want all", a.GLUClamp, a.RotaryScaled, a.MLPBias)
	}
	const b, s, k, e = 1, 4096, 4, 2
	h, f := float64(a.HiddenSize), float64(a.IntermediateSize)
	q, kv := float64(a.NumHeads*a.HeadDim), float64(a.NumKVHeads*a.HeadDim)
	tg := frameworkTarget(t, "b200", cluster.CUDAGraphs)
	bw := tg.Perf.MemoryBytesPerSecond
	o := Options{Batch: b, Seq: s, DataParallel: 8, ExpertParallel: 8, Split: Sublayers}
	layers := func(a *arch.Arch) (attn, mlp Layer) {
		r, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Layers {
			switch {
			case l.Kind == "attention" && attn.Name == "":
				attn = l
			case l.Kind == "mlp" && l.ExpertParams > 0 && mlp.Name == "":
				mlp = l
			}
		}
		return attn, mlp
	}
	attn, mlp := layers(a)
	A := float64(b*s) * k // routed rows on one device at balanced load
	T := float64(b * s)
	bytes := func(sec float64) float64 { return sec * bw }
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-6*want }

	noClamp := *a
	noClamp.GLUClamp = false
	_, m := layers(&noClamp)
	if got, want := bytes(mlp.FwdTerms.MemorySeconds-m.FwdTerms.MemorySeconds), 8*e*f*A; !near(got, want) {
		t.Errorf("clamp: forward moves %v more bytes, want %v", got, want)
	}
	if got, want := bytes(mlp.BwdTerms.MemorySeconds-m.BwdTerms.MemorySeconds), 10*e*f*A; !near(got, want) {
		t.Errorf("clamp: backward moves %v more bytes, want %v", got, want)
	}
	if got, want := float64(mlp.SavedActivationBytes-m.SavedActivationBytes), 2*e*f*A; !near(got, want) {
		t.Errorf("clamp: keeps %v more bytes, want %v", got, want)
	}

	noRotary := *a
	noRotary.RotaryScaled = false
	at, _ := layers(&noRotary)
	k0 := eagerTraffic[arch.Llama].rotary
	if got, want := bytes(attn.FwdTerms.MemorySeconds-at.FwdTerms.MemorySeconds), (k0.bytesPerElement-2*e)*T*(q+kv); !near(got, want) {
		t.Errorf("scaled rotary: forward moves %v more bytes, want %v (eager operators in place of one fused kernel)", got, want)
	}

	if op := expertOutputBias(e, e, 1, 16); op.fwd.bytes != 6*e || op.bwd.bytes != 8*e || op.fwd.kernels*16 != 2*16+1 {
		t.Errorf("expert output bias per element: %+v", op)
	}
	noBias := *a
	noBias.MLPBias = false
	_, mb := layers(&noBias)
	if got, want := bytes(mlp.FwdTerms.MemorySeconds-mb.FwdTerms.MemorySeconds), 6*e*h*A; !near(got, want) {
		t.Errorf("expert biases: forward moves %v more bytes, want %v", got, want)
	}
	// Under HybridEP the probabilities reach the experts in fp32 (routedProbBytes): the
	// bias's product, sum and cat run in fp32 and a cast brings the output back, 28
	// bytes an element forward and 40 backward (TestExpertOutputBiasProbabilityWidth).
	flex := o
	flex.Dispatcher = DispatchHybridEP
	layersIn := func(a *arch.Arch) Layer {
		r, err := Estimate(a, tg, flex)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Layers {
			if l.Kind == "mlp" && l.ExpertParams > 0 {
				return l
			}
		}
		t.Fatal("no expert layer")
		return Layer{}
	}
	fb, fn := layersIn(a), layersIn(&noBias)
	if got, want := bytes(fb.FwdTerms.MemorySeconds-fn.FwdTerms.MemorySeconds), 28*h*A; !near(got, want) {
		t.Errorf("expert biases under HybridEP: forward moves %v more bytes, want %v", got, want)
	}
	if got, want := bytes(fb.BwdTerms.MemorySeconds-fn.BwdTerms.MemorySeconds), 40*h*A; !near(got, want) {
		t.Errorf("expert biases under HybridEP: backward moves %v more bytes, want %v", got, want)
	}
	eager := frameworkTarget(t, "b200", cluster.Eager)
	r1, err := Estimate(a, eager, o)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Estimate(&noBias, eager, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r1.Layers {
		if r1.Layers[i].Kind == "mlp" && r1.Layers[i].FwdTerms.MemorySeconds != r2.Layers[i].FwdTerms.MemorySeconds {
			t.Fatalf("eager framework: the experts' biases move bytes (%v vs %v s): only Megatron-Core adds them apart", r1.Layers[i].FwdTerms.MemorySeconds, r2.Layers[i].FwdTerms.MemorySeconds)
		}
	}
}

// TestExpertLaunchesPerTensor: Megatron-Core launches the dispatcher's permute and the
// experts' activation once over all the local experts' rows (wholeTensor), and only
// the grouped products (one cuBLAS call per expert) and their fp8 quantizations once
// per expert. So halving the local experts (EP 8 to EP 16 on Qwen3 30B-A3B's 128
// experts, 16 to 8 a device) at the same routed rows removes, in each pass, the
// products' launches of 8 experts and nothing else: 2 each in 16 bits forward
// (linear_fc1, gate and up as one grouped linear 2f wide: oneFC1; and down) and 4
// backward (each product's input and weight gradients), plus two quantizations a pass with fp8 (fc1's
// and fc2's input forward, their output gradients backward; oneFC1), each expert's on
// its own: one launch each with blockwise scaling, four with current scaling
// (quantKernels); delayed scaling casts every expert's rows in one launch (groupedCast),
// so its count does not follow the experts. gpt-oss's clamp (three eager kernels over the whole
// fc1 output) and expert output bias (two kernels per expert forward, four backward,
// and one for the cat) follow the same rule.
func TestExpertLaunchesPerTensor(t *testing.T) {
	tg := frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs)
	for _, c := range []struct {
		model          string
		recipe         FP8Recipe
		wantFwd, wantB float64 // launches per local expert removed, each pass
	}{
		{"qwen3-30b-a3b", "", 2, 4},
		{"qwen3-30b-a3b", Current, 2 + 2*4, 4 + 2*4},
		{"qwen3-30b-a3b", Blockwise, 2 + 2, 4 + 2},
		{"qwen3-30b-a3b", Delayed, 2, 4}, // one fused cast for all the experts (groupedCast)
		{"gpt-oss-120b", "", 2 + 2, 4 + 4},
	} {
		a := bundled(t, c.model)
		block := func(ep int) Layer {
			o := Options{Batch: 1, Seq: 4096, DataParallel: 16, ExpertParallel: ep, FP8Recipe: c.recipe, Split: Sublayers}
			r, err := Estimate(a, tg, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range r.Layers {
				if l.Kind == "mlp" && l.ExpertParams > 0 {
					return l
				}
			}
			t.Fatal("no mixture sublayer")
			return Layer{}
		}
		l8, l16 := block(8), block(16)
		removed := float64(a.NumExperts/8 - a.NumExperts/16)
		if d := l8.FwdKernels - l16.FwdKernels; math.Abs(d-c.wantFwd*removed) > 1e-9 {
			t.Errorf("%s %q: forward %v launches fewer at EP16, want %v x %v", c.model, c.recipe, d, c.wantFwd, removed)
		}
		if d := l8.BwdKernels - l16.BwdKernels; math.Abs(d-c.wantB*removed) > 1e-9 {
			t.Errorf("%s %q: backward %v launches fewer at EP16, want %v x %v", c.model, c.recipe, d, c.wantB, removed)
		}
	}
	// The dispatchers' own launches, each once for all the local experts: the all-to-all
	// dispatcher's two chunk sorts (map and sort forward, the sort backward: 4 and 2)
	// and its metadata collectives (the counts' all-gather and the probabilities'
	// all-to-all forward, that all-to-all backward: 2 and 1, calc.expertCollectives)
	// beyond DeepEP; the fused permute's three row-map passes (forward) against
	// HybridEP's preprocessing kernel, its routing map's all-gather and its permute
	// preprocessing's two launches.
	a := bundled(t, "qwen3-30b-a3b")
	block := func(d Dispatcher) Layer {
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: 4096, DataParallel: 16, ExpertParallel: 8, Dispatcher: d, Split: Sublayers})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Layers {
			if l.Kind == "mlp" && l.ExpertParams > 0 {
				return l
			}
		}
		t.Fatal("no mixture sublayer")
		return Layer{}
	}
	a2a, deep, hybrid := block(DispatchAllToAll), block(DispatchDeepEP), block(DispatchHybridEP)
	if a2a.FwdKernels-deep.FwdKernels != 4+2 || a2a.BwdKernels-deep.BwdKernels != 2+1 {
		t.Errorf("alltoall %v/%v launches, DeepEP %v/%v: want 6 and 3 more (the chunk sorts, the metadata collectives)", a2a.FwdKernels, a2a.BwdKernels, deep.FwdKernels, deep.BwdKernels)
	}
	if hybrid.FwdKernels-deep.FwdKernels != 1+1+2-3 || deep.BwdKernels != hybrid.BwdKernels {
		t.Errorf("DeepEP %v/%v launches, HybridEP %v/%v: want HybridEP 1 more forward (one preprocessing, one gather and two permute preprocessing launches for three row-map passes)", deep.FwdKernels, deep.BwdKernels, hybrid.FwdKernels, hybrid.BwdKernels)
	}
	// Bytes: the row map's 25 a (token, expert) entry once, over the n*D tokens DeepEP
	// delivers (D = EP(1 - (1 - 1/EP)^k) devices a token reaches) and the E/EP local
	// experts, against HybridEP's preprocessing reading the gathered n*EP x E map and
	// its permute preprocessing's 5 bytes an entry over the same n*D x E/EP entries.
	nE := 4096.0 * float64(a.NumExperts)
	D := 8 * (1 - math.Pow(1-1.0/8, float64(a.ExpertsPerToken)))
	if got, want := (deep.FwdTerms.MemorySeconds-hybrid.FwdTerms.MemorySeconds)*tg.Perf.MemoryBytesPerSecond, 25*nE*D/8-8*nE-5*nE*D/8; math.Abs(got-want) > 1e-6*math.Abs(want) {
		t.Errorf("DeepEP moves %v bytes more than HybridEP forward, want %v", got, want)
	}
	if o := (&shape{experts: 128}).rowIDMap(4096); o.fwd.bytes != 25*4096*128 || o.fwd.kernels != 3 || o.bwd != (work{}) {
		t.Errorf("row map of 4096 tokens by 128 experts: %+v, want 25 bytes an entry in 3 forward launches", o)
	}
	if o := wholeTensor(gluClamp(2, 10), 16); o.fwd.kernels != 3.0/16 || o.bwd.kernels != 3.0/16 || o.fwd.bytes != 8*2*10 {
		t.Errorf("clamp over 16 local experts: %+v, want 3/16 of a launch each pass per expert, bytes unchanged", o)
	}
}

// TestExpertCollectives: the collectives a mixture launches a pass, each an NCCL call
// of its own: the dispatch and combine all-to-alls; with Megatron-Core's all-to-all
// dispatcher the tokens-per-expert all-gather (forward) and the probabilities'
// all-to-all (both passes); with HybridEP the routing map's all-gather (forward);
// nothing more with DeepEP or one expert-parallel member.
func TestExpertCollectives(t *testing.T) {
	for _, tt := range []struct {
		ep       int
		d        Dispatcher
		fwd, bwd float64
	}{
		{1, DispatchAllToAll, 2, 2},
		{8, DispatchAllToAll, 4, 3},
		{8, DispatchHybridEP, 3, 2},
		{8, DispatchDeepEP, 2, 2},
		{64, DispatchDeepEPFP8, 2, 2},
	} {
		c := &calc{o: Options{ExpertParallel: tt.ep, Dispatcher: tt.d}}
		if f, b := c.expertCollectives(); f != tt.fwd || b != tt.bwd {
			t.Errorf("EP %d, %q: %v and %v collectives, want %v and %v", tt.ep, tt.d, f, b, tt.fwd, tt.bwd)
		}
	}
}

// TestExpertLinksAsStated: the expert group's link inside the node is the one the
// target states (the NVLink presets already carry NCCL's rate,
// cluster.NVLinkCollectiveBytesPerSecond), not discounted a second time on an NVIDIA
// GPU; the network falls back to it when none is given, and a stated network keeps
// its rate.
func TestExpertLinksAsStated(t *testing.T) {
	nvl, err := cluster.LookupLink("nvswitch4")
	if err != nil {
		t.Fatal(err)
	}
	nv := nvl.Link
	ib := cluster.Link{LatencySeconds: 5e-6, BytesPerSecond: 50e9}
	gpu := target(t, "b200")
	other := gpu
	other.Perf.Multiprocessors = 0
	for _, tt := range []struct {
		tg                 Target
		inter              cluster.Link
		wantIntra, wantNet float64
	}{
		{gpu, ib, 18 * 40.1e9, 50e9},
		{gpu, cluster.Link{}, 18 * 40.1e9, 18 * 40.1e9},
		{other, ib, 18 * 40.1e9, 50e9},
	} {
		tg := tt.tg
		tg.ExpertLink, tg.ExpertInterLink = nv, tt.inter
		intra, inter := tg.expertLinks()
		if math.Abs(intra.BytesPerSecond-tt.wantIntra) > 1e-3 || math.Abs(inter.BytesPerSecond-tt.wantNet) > 1e-3 || intra.LatencySeconds != nv.LatencySeconds {
			t.Errorf("%d SMs, network %v: links %+v and %+v, want %v and %v B/s", tg.Perf.Multiprocessors, tt.inter.BytesPerSecond, intra, inter, tt.wantIntra, tt.wantNet)
		}
	}
}

// TestExpertOutputBiasProbabilityWidth checks expertOutputBias's closed form against
// the operators of TEGroupedMLP._apply_bias, counted one by one, per element of an
// expert's output rows: b*p writes r; t + b*p reads e and r and writes r; the cat reads
// and writes r; with r > e the .to(t.dtype) reads r and writes e. Backward: the cast's
// gradient (reads e, writes r), the add's gradient to t cast to e (reads r, writes e),
// each product gradient a multiply (reads r, writes r) and a reduction (reads r), the
// split's gradient (reads and writes e). r = max(e, p): 16-bit probabilities (the
// alltoall dispatcher's) and fp32 ones (the flex dispatcher's, routedProbBytes).
func TestExpertOutputBiasProbabilityWidth(t *testing.T) {
	const local = 8.0
	for _, tt := range []struct {
		name                   string
		e, p                   float64
		fwdBytes, bwdBytes     float64
		fwdKernels, bwdKernels float64 // for all the local experts
	}{
		{"16-bit probabilities", 2, 2, 2 + (2 + 2 + 2) + (2 + 2), (2 + 2 + 2) + (2 + 2 + 2) + (2 + 2), 2*local + 1, 4*local + 1},
		{"fp32 probabilities", 2, 4, 4 + (2 + 4 + 4) + (4 + 4) + (4 + 2), (2 + 4) + (4 + 2) + (4 + 4 + 4) + (4 + 4 + 4) + (2 + 2), 2*local + 2, 5*local + 2},
		{"fp32 activations", 4, 4, 4 + (4 + 4 + 4) + (4 + 4), (4 + 4 + 4) + (4 + 4 + 4) + (4 + 4), 2*local + 1, 4*local + 1},
	} {
		o := expertOutputBias(tt.e, tt.p, 1, local)
		if o.fwd.bytes != tt.fwdBytes || o.bwd.bytes != tt.bwdBytes {
			t.Errorf("%s: %v bytes forward and %v backward an element, want %v and %v", tt.name, o.fwd.bytes, o.bwd.bytes, tt.fwdBytes, tt.bwdBytes)
		}
		if got, got2 := o.fwd.kernels*local, o.bwd.kernels*local; math.Abs(got-tt.fwdKernels) > 1e-9 || math.Abs(got2-tt.bwdKernels) > 1e-9 {
			t.Errorf("%s: %v kernels forward and %v backward over %v experts, want %v and %v", tt.name, got, got2, local, tt.fwdKernels, tt.bwdKernels)
		}
	}
	for _, tt := range []struct {
		d    Dispatcher
		want float64
	}{{DispatchAllToAll, 2}, {DispatchHybridEP, 4}, {DispatchDeepEP, 4}} {
		sh := &shape{e: 2, o: Options{Dispatcher: tt.d}}
		if got := sh.routedProbBytes(); got != tt.want {
			t.Errorf("%s: probabilities of %v bytes, want %v", tt.d, got, tt.want)
		}
	}
}
