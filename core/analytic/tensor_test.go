package analytic

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/plan"
)

// TestTensorParallelOneChangesNothing: t = 1, with or without sequence parallelism, gives
// exactly the estimate and the model of no tensor parallelism.
func TestTensorParallelOneChangesNothing(t *testing.T) {
	for _, name := range []string{"gpt2-xl", "meta-llama-3-8b", "bert-base-uncased", "mixtral-8x7b-v0.1"} {
		a := bundled(t, name)
		for _, o := range []Options{
			{Batch: 2, Seq: 512},
			{Batch: 1, Seq: 512, Attention: Eager, Recompute: Full, Split: Sublayers},
			{Batch: 3, Seq: 256, Recompute: Selective, Attention: Eager, Tie: TieStage},
			{Batch: 1, Seq: 128, Optimizer: None},
		} {
			base := estimate(t, a, o)
			for _, sp := range []bool{false, true} {
				o1 := o
				o1.TensorParallel, o1.SequenceParallel = 1, sp
				r := estimate(t, a, o1)
				if !reflect.DeepEqual(r.Layers, base.Layers) || r.Total != base.Total {
					t.Errorf("%s %+v: t=1 (sp %v) changes the estimate", name, o, sp)
				}
				m, mb := r.Model(), base.Model()
				m.Name = mb.Name
				if !reflect.DeepEqual(m, mb) {
					t.Errorf("%s %+v: t=1 (sp %v) changes the model", name, o, sp)
				}
			}
		}
	}
}

// TestKorthikantiTensorParallel checks a GPT-3 block's saved activations under t-way
// tensor parallelism against Korthikanti et al. 2022, Table 2 (16-bit, dropout, eager
// attention): s*b*h*(10 + 24/t + 5*a*s/(h*t)) without sequence parallelism,
// s*b*h/t*(34 + 5*a*s/h) with it, 34*s*b*h/t with it and selective recomputation, and
// with full recomputation the block input: 2*s*b*h, or 2*s*b*h/t split along the sequence.
func TestKorthikantiTensorParallel(t *testing.T) {
	a := gpt3(t)
	for _, tp := range []int64{1, 2, 4, 8} {
		for _, bs := range []struct{ b, s int }{{1, 2048}, {4, 512}} {
			b, s, h, heads := int64(bs.b), int64(bs.s), int64(12288), int64(96)
			sbh := s * b * h
			tests := []struct {
				sp   bool
				rc   Recompute
				want int64
			}{
				{false, NoRecompute, 10*sbh + 24*sbh/tp + 5*heads*s*s*b/tp},
				{true, NoRecompute, (34*sbh + 5*heads*s*s*b) / tp},
				{false, Selective, 10*sbh + 24*sbh/tp},
				{true, Selective, 34 * sbh / tp},
				{false, Full, 2 * sbh},
				{true, Full, 2 * sbh / tp},
			}
			for _, tt := range tests {
				o := Options{Batch: bs.b, Seq: bs.s, Attention: Eager, Recompute: tt.rc, TensorParallel: int(tp), SequenceParallel: tt.sp}
				if got := block(estimate(t, a, o)).SavedActivationBytes; got != tt.want {
					t.Errorf("t=%d b=%d s=%d sp=%v %s: saved %d, want %d", tp, b, s, tt.sp, tt.rc, got, tt.want)
				}
			}
		}
	}
}

// TestTensorParallelSplit: a block's FLOPs are divided by t exactly; its parameters are
// the replicated part plus 1/t of the rest; the vocabulary is split (rounded up); the
// per-device total adds up.
func TestTensorParallelSplit(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	o := Options{Batch: 1, Seq: 2048}
	one := estimate(t, a, o)
	for _, tp := range []int{2, 4, 8} {
		o.TensorParallel = tp
		r := estimate(t, a, o)
		b1, bt := block(one), block(r)
		if bt.FwdFLOPs*float64(tp) != b1.FwdFLOPs || bt.BwdFLOPs*float64(tp) != b1.BwdFLOPs {
			t.Errorf("t=%d: block FLOPs %v/%v, want 1/%d of %v/%v", tp, bt.FwdFLOPs, bt.BwdFLOPs, tp, b1.FwdFLOPs, b1.BwdFLOPs)
		}
		h, q, kv, f := int64(4096), int64(4096), int64(1024), int64(14336)
		sharded := h*(q+2*kv) + q*h + 3*h*f
		if want := 2*h + sharded/int64(tp); bt.Params != want { // two RMSNorms replicated
			t.Errorf("t=%d: block params %d, want %d", tp, bt.Params, want)
		}
		V := int64(128256)
		vt := (V + int64(tp) - 1) / int64(tp)
		if want := 32*bt.Params + 2*vt*h + h; r.Total.DeviceParams != want {
			t.Errorf("t=%d: device params %d, want %d", tp, r.Total.DeviceParams, want)
		}
		if r.Total.Params != one.Total.Params || one.Total.DeviceParams != one.Total.Params {
			t.Errorf("t=%d: params %d (t=1: %d, device %d)", tp, r.Total.Params, one.Total.Params, one.Total.DeviceParams)
		}
	}
}

// TestTensorParallelAllReduce: each block all-reduces its b*s*h activation twice in the
// forward pass and twice in the backward pass (three times with full recomputation, which
// reruns the forward), a ring over the tensor link: 2(t-1)/t * n / B + 2(t-1) * alpha.
func TestTensorParallelAllReduce(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	tg := target(t, "h100-sxm")
	tg.TensorLink = cluster.Link{LatencySeconds: 1e-5, BytesPerSecond: 1e11}
	const b, s, h = 2, 4096, 4096
	n := 2.0 * b * s * h
	for _, tp := range []int{2, 8} {
		ring := 2*float64(tp-1)/float64(tp)*n/1e11 + 2*float64(tp-1)*1e-5
		for _, tt := range []struct {
			rc       Recompute
			fwd, bwd float64
		}{{NoRecompute, 2, 2}, {Selective, 2, 2}, {Full, 2, 4}} {
			o := Options{Batch: b, Seq: s, TensorParallel: tp, Recompute: tt.rc}
			r, err := Estimate(a, tg, o)
			if err != nil {
				t.Fatal(err)
			}
			bl := block(r)
			if want := (tt.fwd + tt.bwd) * ring; math.Abs(bl.TensorAllReduceSeconds-want) > 1e-15 {
				t.Errorf("t=%d %s: all-reduce %v s, want %v", tp, tt.rc, bl.TensorAllReduceSeconds, want)
			}
			// A free link leaves the compute: the difference is the communication.
			free := tg
			free.TensorLink = cluster.Link{BytesPerSecond: 1e300}
			rf, err := Estimate(a, free, o)
			if err != nil {
				t.Fatal(err)
			}
			bf := block(rf)
			if d := bl.FwdSeconds - bf.FwdSeconds; math.Abs(d-tt.fwd*ring) > 1e-12 {
				t.Errorf("t=%d %s: forward grows by %v, want %v", tp, tt.rc, d, tt.fwd*ring)
			}
			if d := bl.BwdSeconds - bf.BwdSeconds; math.Abs(d-tt.bwd*ring) > 1e-12 {
				t.Errorf("t=%d %s: backward grows by %v, want %v", tp, tt.rc, d, tt.bwd*ring)
			}
		}
	}
}

// TestTensorParallelModel: the model plans on one device within the estimate's peak, and
// stage transfers carry each device's 1/t of the activation (scatter-gather).
func TestTensorParallelModel(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b")
	for _, sp := range []bool{false, true} {
		r := estimate(t, a, Options{Batch: 1, Seq: 4096, TensorParallel: 4, SequenceParallel: sp})
		m := r.Model()
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		c := onePreset(t, "b200", 1)
		c.Devices[0].MemoryBytes = 1 << 50
		p, err := plan.Make(m, c, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Stages[0].MemoryBytes; got != r.Total.PeakBytes {
			t.Errorf("sp=%v: one-stage plan needs %d bytes, estimate's peak is %d", sp, got, r.Total.PeakBytes)
		}
		p, err = plan.Make(m, onePreset(t, "h100-sxm", 2), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(2 * 4096 * 4096 / 4); p.Stages[0].SendBytes != want || p.Stages[1].RecvBytes != want {
			t.Errorf("sp=%v: stage transfer %d/%d bytes, want %d", sp, p.Stages[0].SendBytes, p.Stages[1].RecvBytes, want)
		}
	}
}

func TestTensorParallelErrors(t *testing.T) {
	a := bundled(t, "meta-llama-3-8b") // 32 heads, 8 kv heads, MLP 14336
	for _, tt := range []struct {
		tp   int
		want string
	}{
		{16, "tensor_parallel: must divide the model's num_kv_heads (8), got 16"},
		{3, "tensor_parallel: must divide the model's num_heads (32), got 3"},
		{-1, "tensor_parallel: must be between 1 and 1024, got -1"},
	} {
		_, err := Estimate(a, target(t, "h100-sxm"), Options{Batch: 1, Seq: 128, TensorParallel: tt.tp})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("t=%d: %v, want %q", tt.tp, err, tt.want)
		}
	}
}
