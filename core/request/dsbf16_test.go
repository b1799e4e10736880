package request

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestDeepSpeedBF16Request: precision deepspeed-bf16 (DeepSpeed's BF16 optimizer) over
// d = 8 replicas with zero1 holds 2 + 4 + 12/8 bytes a parameter of weights, fp32
// gradients and sharded state, and 2 more of 16-bit gradients in their own part,
// grad_copy_bytes: half of each stage's grads_bytes (a tied embedding matrix's
// included, at both ends of GPT-2's pipeline). DeepSpeed reduces the fp32 gradients
// (get_grads_for_reduction), not the 16-bit ones, as mixed-fp32-grads' ZeRO-1 does,
// but with an all-reduce where ZeRO-1 reduce-scatters (pipe/engine.py,
// _bf16_reduce_grads: buffered_allreduce_fallback), cast to bf16 for it (engine.py,
// allreduce_bucket, communication_data_type: bf16 under ZeRO stage 0, which the BF16
// optimizer runs at): the all-reduce of precision mixed's 16-bit gradients, unsharded,
// to the second; and the same all-gather of the updated weights after; each
// microbatch's backward pass adds its 16-bit gradients to the fp32 ones
// (update_hp_grads), so the step is longer.
func TestDeepSpeedBF16Request(t *testing.T) {
	for _, name := range []string{"meta-llama-3-8b", "gpt2"} {
		req := func(precision, sharding string) *wire.Request {
			r := llamaRequest(4, 8, 1)
			r.Model.Architecture.Name = name
			if name == "gpt2" {
				r.Model.Architecture.Seq = 1024
			}
			r.Parallelism.Sharding = sharding
			r.Training.Precision = precision
			// DeepSpeed's buckets (5e8 elements) for all three, so the all-reduces
			// compared pay NCCL's latency as often.
			r.Model.Architecture.Framework = "deepspeed"
			return r
		}
		ds, ref, half := run(t, req("deepspeed-bf16", "zero1")), run(t, req("mixed-fp32-grads", "zero1")), run(t, req("mixed", ""))
		if ds.Plan == nil || ref.Plan == nil {
			t.Fatalf("%s: no plan: %v %v", name, ds.Diagnostics, ref.Diagnostics)
		}
		var state, copies int64
		for i, s := range ds.Plan.Stages {
			m := s.Memory
			state += m.WeightsBytes + m.GradsBytes + m.OptimizerBytes
			copies += m.GradCopyBytes
			if m.GradCopyBytes == 0 || 2*m.GradCopyBytes != m.GradsBytes {
				t.Errorf("%s stage %d: 16-bit gradient copies %d bytes, want half the fp32 gradients %d", name, i, m.GradCopyBytes, m.GradsBytes)
			}
			if m.Total() != s.MemoryBytes {
				t.Errorf("%s stage %d: memory parts add up to %d, memory_bytes %d", name, i, m.Total(), s.MemoryBytes)
			}
		}
		var refState int64
		for _, s := range ref.Plan.Stages {
			refState += s.Memory.WeightsBytes + s.Memory.GradsBytes + s.Memory.OptimizerBytes
			if s.Memory.GradCopyBytes != 0 {
				t.Errorf("%s: mixed-fp32-grads keeps %d bytes of 16-bit gradients, want none", name, s.Memory.GradCopyBytes)
			}
		}
		// Weights 2, gradients 4, state 12/8: 7.5 bytes a parameter; copies 2.
		if want := float64(state) * 2 / 7.5; state != refState || math.Abs(float64(copies)-want) > 1e-6*want {
			t.Errorf("%s: state %d bytes (mixed-fp32-grads %d), copies %d, want the same state and 2/7.5 of it in copies", name, state, refState, copies)
		}
		d, r, h := ds.Devices[0], ref.Devices[0], half.Devices[0]
		if d.GradBytes != r.GradBytes || 2*h.GradBytes != d.GradBytes || d.ReduceScatterSeconds != 0 || h.AllReduceSeconds <= 0 || d.AllReduceSeconds != h.AllReduceSeconds ||
			d.AllGatherSeconds != r.AllGatherSeconds || !(ds.Step.StepSeconds > ref.Step.StepSeconds) {
			t.Errorf("%s: reduces %d bytes in an all-reduce of %v s (reduce-scatter %v s) + %v s, step %v s; mixed-fp32-grads %d in a reduce-scatter of %v + %v s, step %v s; mixed unsharded %d bytes in an all-reduce of %v s: want mixed-fp32-grads' bytes kept, mixed's all-reduce of half of them, the same gather and a longer step", name,
				d.GradBytes, d.AllReduceSeconds, d.ReduceScatterSeconds, d.AllGatherSeconds, ds.Step.StepSeconds, r.GradBytes, r.ReduceScatterSeconds, r.AllGatherSeconds, ref.Step.StepSeconds, h.GradBytes, h.AllReduceSeconds)
		}
	}
}

// TestDeepSpeedBF16Refused: deepspeed-bf16 is refused, naming training.precision, with
// ZeRO-2 or ZeRO-3 (DeepSpeed's BF16 optimizer shards the optimizer state only), with
// fp16 (it is the bf16 optimizer), and for inference.
func TestDeepSpeedBF16Refused(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*wire.Request)
		want string
	}{
		{"zero2", func(r *wire.Request) { r.Parallelism.Sharding = "zero2" }, "needs sharding none or zero1, got zero2"},
		{"zero3", func(r *wire.Request) { r.Parallelism.Sharding = "zero3" }, "needs sharding none or zero1, got zero3"},
		{"fp16", func(r *wire.Request) { r.Model.Architecture.DType = "fp16" }, "needs dtype bf16, got fp16"},
		{"inference", func(r *wire.Request) { r.Training.Mode = wire.ModeInference }, "applies to training"},
	} {
		r := llamaRequest(4, 8, 1)
		r.Training.Precision = "deepspeed-bf16"
		c.set(r)
		_, err := Run(context.Background(), r)
		fe, ok := model.AsFieldErrors(err)
		found := false
		for _, e := range fe {
			found = found || e.Path == "training.precision" && strings.Contains(e.Reason, c.want)
		}
		if !ok || !found {
			t.Errorf("%s: error %v, want training.precision: %s", c.name, err, c.want)
		}
	}
}

// TestDeepSpeedBF16UnshardedAllReduce: DeepSpeed's BF16 optimizer casts its fp32
// gradients to bf16 for the all-reduce whether or not its state is sharded (the
// engine's allreduce_bucket at ZeRO stage 0, analytic.Precision.CommunicatedGradBytes),
// so with sharding none its all-reduce is precision mixed's all-reduce of the 16-bit
// gradients to the second, as with zero1, on one bucket or on parallelism.
// dp_bucket_bytes' buckets (counted in the bytes as reduced: 1 MiB of bf16 gradients a
// bucket, not of fp32, which would cut twice as many).
func TestDeepSpeedBF16UnshardedAllReduce(t *testing.T) {
	for _, bucket := range []int64{0, 1 << 20} {
		req := func(precision string) *wire.Request {
			r := llamaRequest(2, 8, 1)
			r.Model.Architecture.Name, r.Model.Architecture.Seq = "gpt2", 1024
			r.Model.Architecture.Framework = "deepspeed"
			r.Parallelism.DPBucketBytes = bucket
			r.Training.Precision = precision
			return r
		}
		ds, half := run(t, req("deepspeed-bf16")), run(t, req("mixed"))
		for i := range ds.Devices {
			d, h := ds.Devices[i], half.Devices[i]
			if d.GradBytes != 2*h.GradBytes || h.AllReduceSeconds <= 0 || d.AllReduceSeconds != h.AllReduceSeconds {
				t.Errorf("bucket %d, device %d: deepspeed-bf16 holds %d bytes of gradients and all-reduces them in %v s; mixed %d bytes in %v s: want twice mixed's bytes, moved in its time",
					bucket, i, d.GradBytes, d.AllReduceSeconds, h.GradBytes, h.AllReduceSeconds)
			}
		}
	}
}
