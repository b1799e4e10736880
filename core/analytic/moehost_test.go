package analytic

import (
	"math"
	"testing"

	"pipeplan/core/cluster"
)

// TestMoEHostSync: a dropless mixture (no capacity factor) synchronizes with the host
// before its experts, which then run eagerly (moeHostSeconds). Without a host side, or
// with a capacity factor (fixed shapes, the same load of 1 here), the passes are the
// longer of device and host time; dropless under CUDA graphs they grow by no more than
// the eager host time of all the layer's kernels: for a small microbatch (host-bound
// after the sync), not for a large one whose experts' device time covers the launches.
func TestMoEHostSync(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	eager, err := cluster.LookupFramework(cluster.Eager)
	if err != nil {
		t.Fatal(err)
	}
	var grown []float64
	for _, seq := range []int{256, 4096} {
		o := Options{Batch: 1, Seq: seq, DataParallel: 8, ExpertParallel: 8}
		capped := o
		capped.CapacityFactor = 1
		for _, fw := range []string{cluster.NoFramework, cluster.CUDAGraphs} {
			tg := frameworkTarget(t, "h100-sxm", fw)
			d, err := Estimate(a, tg, o)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Estimate(a, tg, capped)
			if err != nil {
				t.Fatal(err)
			}
			ld, lc := moeBlock(t, d), moeBlock(t, c)
			if lc.FwdSeconds != max(lc.FwdDeviceSeconds, lc.FwdHostSeconds) || lc.BwdSeconds != max(lc.BwdDeviceSeconds, lc.BwdHostSeconds) {
				t.Errorf("seq %d, %s, capacity factor: passes %v, %v s, want the longer of device and host", seq, fw, lc.FwdSeconds, lc.BwdSeconds)
			}
			if ld.FwdDeviceSeconds != lc.FwdDeviceSeconds || ld.FwdKernels != lc.FwdKernels {
				t.Fatalf("seq %d, %s: dropless and capped at load 1 differ on the device: %v, %v s", seq, fw, ld.FwdDeviceSeconds, lc.FwdDeviceSeconds)
			}
			grow := ld.FwdSeconds + ld.BwdSeconds - lc.FwdSeconds - lc.BwdSeconds
			if fw == cluster.NoFramework {
				if math.Abs(grow) > 1e-15 { // sums of the same terms in another order
					t.Errorf("seq %d, no framework: dropless adds %v s, want 0", seq, grow)
				}
				continue
			}
			bound := (ld.FwdKernels + ld.BwdKernels) * eager.HostKernelSeconds
			if !(grow >= -1e-15 && grow <= bound) || (seq == 256 && grow <= 0) { // -1e-15: summation order
				t.Errorf("seq %d, %s: dropless adds %v s, want in [0, %v] (above 0 for 256 tokens, host-bound)", seq, fw, grow, bound)
			}
			if ld.FwdHostSeconds <= lc.FwdHostSeconds {
				t.Errorf("seq %d, %s: dropless host time %v s, want above the graphed %v s", seq, fw, ld.FwdHostSeconds, lc.FwdHostSeconds)
			}
			grown = append(grown, grow/(ld.FwdDeviceSeconds+ld.BwdDeviceSeconds))
		}
	}
	if len(grown) != 2 || !(grown[0] > grown[1]) {
		t.Errorf("the sync's share of the passes at 256 and 4096 tokens: %v; want it larger for the smaller microbatch", grown)
	}
}

// TestSortChunks: with EP > 1 and several experts per device, Megatron-Core's
// all-to-all dispatcher regroups the received rows by local expert and back: 4*e*h
// bytes per routed row in the forward pass (twice a read and a write), not with the flex
// dispatcher's backends (DeepEP, HybridEP: MoEFlexTokenDispatcher has no
// sort_chunks_by_idxs) nor with one expert per device.
func TestSortChunks(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	const s, k, h = 4096, 8, 2048
	for _, tt := range []struct {
		ep   int
		disp Dispatcher
		want float64
	}{
		{8, DispatchAllToAll, 4 * 2 * h * s * k},
		{8, DispatchDeepEP, 0},
		{8, DispatchDeepEPFP8, 0},
		{8, DispatchHybridEP, 0},
		{128, DispatchAllToAll, 0},
	} {
		o := Options{Batch: 1, Seq: s, DataParallel: tt.ep, ExpertParallel: tt.ep, Dispatcher: tt.disp}
		o = o.withDefaults()
		sh := newShape(a, o)
		tg := target(t, "h100-sxm")
		var got float64
		for _, op := range sh.moe(&calc{sh: sh, target: tg, o: o}).ops {
			if op.name == "sort chunks" {
				got += op.fwd.bytes
			}
		}
		if math.Abs(got-tt.want) > 1e-6*tt.want+1e-9 {
			t.Errorf("EP %d, %s: sort chunks move %v bytes, want %v", tt.ep, tt.disp, got, tt.want)
		}
	}
}

// TestMoEHostSyncBackward: Megatron-Core's dispatchers read the device in the forward
// pass only (the all-to-all's split sizes, DeepEP's handle, HybridEP's
// num_permuted_tokens and the grouped GEMM's m_splits are the forward's, saved for the
// backward: moeHostSeconds), so without recomputation the backward pass is the longer
// of its device and host time, its routed experts' kernels at the eager host cost
// (the host time grows over the capped mixture's by exactly the forward's per-kernel
// difference times the experts' backward kernels); when the mixture's forward is rerun
// in the backward (full recomputation, or the selective "moe" module) the rerun
// synchronizes again and the backward splits there: above the longer of the two.
func TestMoEHostSyncBackward(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b")
	tg := frameworkTarget(t, "h100-sxm", cluster.CUDAGraphs)
	eager, err := cluster.LookupFramework(cluster.Eager)
	if err != nil {
		t.Fatal(err)
	}
	perKernel := max(tg.Framework.HostKernelSeconds, eager.ScaleHost(tg.Perf.HostScale()).HostKernelSeconds)
	for _, tt := range []struct {
		name  string
		o     Options
		split bool
	}{
		{"no recomputation", Options{Batch: 1, Seq: 256, DataParallel: 8, ExpertParallel: 8}, false},
		{"selective moe_act", Options{Batch: 1, Seq: 256, DataParallel: 8, ExpertParallel: 8, Recompute: Selective, RecomputeModules: ModMoEAct}, false},
		{"selective moe", Options{Batch: 1, Seq: 256, DataParallel: 8, ExpertParallel: 8, Recompute: Selective, RecomputeModules: ModMoE}, true},
		{"full", Options{Batch: 1, Seq: 256, DataParallel: 8, ExpertParallel: 8, Recompute: Full}, true},
	} {
		capped := tt.o
		capped.CapacityFactor = 1
		d, err := Estimate(a, tg, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Estimate(a, tg, capped)
		if err != nil {
			t.Fatal(err)
		}
		ld, lc := moeBlock(t, d), moeBlock(t, c)
		longer := max(ld.BwdDeviceSeconds, ld.BwdHostSeconds)
		if !tt.split {
			if ld.BwdSeconds != longer {
				t.Errorf("%s: backward %v s, want the longer of device %v and host %v s (no synchronization)", tt.name, ld.BwdSeconds, ld.BwdDeviceSeconds, ld.BwdHostSeconds)
			}
			// The forward's eager experts give the per-kernel difference's count; the
			// backward's count is the routed experts' backward kernels, a whole number.
			extra := (ld.BwdHostSeconds - lc.BwdHostSeconds) / (perKernel - tg.Framework.HostKernelSeconds)
			if !(extra >= 1) || math.Abs(extra-math.Round(extra)) > 1e-6 || extra > ld.BwdKernels {
				t.Errorf("%s: backward host time grows by %v eager kernels' difference, want a whole number in [1, %v]", tt.name, extra, ld.BwdKernels)
			}
			continue
		}
		if !(ld.BwdSeconds > longer) {
			t.Errorf("%s: backward %v s, want above the longer of device %v and host %v s (the rerun forward synchronizes)", tt.name, ld.BwdSeconds, ld.BwdDeviceSeconds, ld.BwdHostSeconds)
		}
	}
}

// TestHybridEPPermutePreprocessing: HybridEP's forward launches its permute
// preprocessing (a cooperative block-scan kernel) and one small launch beside its
// metadata kernel (DeepEP 34152ae2: permute_preprocessing and pad_tokens_per_expert;
// 017a5202: permute_processing and a zeroed counter): two forward launches a mixture
// layer, 5 bytes per received row and local expert (n*D rows, D = EP(1-(1-1/EP)^k)),
// nothing backward; none with the other dispatchers or one expert-parallel member.
func TestHybridEPPermutePreprocessing(t *testing.T) {
	a := bundled(t, "qwen3-30b-a3b") // 128 experts, top 8, 48 mixture layers
	const s, ep, k, E = 4096, 16.0, 8.0, 128.0
	tg := target(t, "h100-sxm")
	layers := func(r *Result) (fwd, bwd float64) {
		for _, l := range r.Layers {
			fwd, bwd = fwd+l.FwdKernels, bwd+l.BwdKernels
		}
		return
	}
	for _, tt := range []struct {
		disp Dispatcher
		ep   int
		want bool
	}{
		{DispatchHybridEP, 16, true},
		{DispatchHybridEP, 1, false},
		{DispatchDeepEP, 16, false},
		{DispatchAllToAll, 16, false},
	} {
		o := Options{Batch: 1, Seq: s, DataParallel: 16, ExpertParallel: tt.ep, Dispatcher: tt.disp}
		sh := newShape(a, o.withDefaults())
		var got []op
		for _, x := range sh.moe(&calc{sh: sh, target: tg, o: o.withDefaults()}).ops {
			if x.name == "hybridep permute preprocessing" {
				got = append(got, x)
			}
		}
		if len(got) != map[bool]int{true: 1, false: 0}[tt.want] {
			t.Fatalf("%s EP %d: %d permute preprocessing ops, want %v", tt.disp, tt.ep, len(got), tt.want)
		}
		if !tt.want {
			continue
		}
		rows := s * ep * (1 - math.Pow(1-1/ep, k))
		if want := (work{0, 5 * rows * E / ep, 2}); math.Abs(got[0].fwd.bytes-want.bytes) > 1e-6*want.bytes || got[0].fwd.kernels != 2 || got[0].bwd != (work{}) {
			t.Errorf("%s: %+v / %+v, want %+v forward, nothing backward", tt.disp, got[0].fwd, got[0].bwd, want)
		}
	}
	// Against DeepEP (the same flex dispatcher without HybridEP's gather and
	// preprocessing): the whole model's forward launches differ by HybridEP's 1 + 1 + 2
	// (routing-map gather, metadata kernel, permute preprocessing) a mixture layer.
	var fwd, bwd [2]float64
	for i, d := range []Dispatcher{DispatchDeepEP, DispatchHybridEP} {
		r, err := Estimate(a, tg, Options{Batch: 1, Seq: s, DataParallel: 16, ExpertParallel: 16, Dispatcher: d})
		if err != nil {
			t.Fatal(err)
		}
		fwd[i], bwd[i] = layers(r)
	}
	if d := fwd[1] - fwd[0]; d != 4*48 {
		t.Errorf("HybridEP launches %v forward kernels more than DeepEP, want %v (gather, metadata, permute preprocessing x 2, 48 layers)", d, 4*48)
	}
	if bwd[1] != bwd[0] {
		t.Errorf("HybridEP's backward launches %v, DeepEP's %v: want the same (the handle replayed)", bwd[1], bwd[0])
	}
}
