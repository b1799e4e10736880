package request

import (
	"context"
	"testing"

	"pipeplan/core/model"
)

// TestNewFieldsOddInputs: the fields and values added for Megatron-Core, async TP,
// DeepSpeed's BF16 optimizer, fp8 attention, the fused expert MLP and the loss kernels
// (model.architecture.cross_entropy, framework, attention, fp8_attention,
// expert_fused_mlp; parallelism.overlap_tensor_comm; training.precision), crossed with
// each other, fp8 recipes, inference, ZeRO-1 and expert parallelism on four devices, a
// dense model and two mixtures: no panic; a refusal is field errors, each naming its
// field; a plan's memory parts add up to each stage's memory; the normalized request
// has the request's id.
func TestNewFieldsOddInputs(t *testing.T) {
	ces := []string{"", "unfused", "fused", "fused-inplace", "vocab-parallel", "FUSED", " fused", "x"}
	fws := []string{"", "eager", "compiled", "cuda-graphs", "megatron", "none", "Megatron"}
	ots := []string{"", "on", "off", "userbuffers", "async-tp", "Async-TP"}
	precs := []string{"", "deepspeed-bf16", "mixed-fp32-grads"}
	attns := []string{"", "flash-triton", "cudnn", "eager", "flash3", "flash1"}
	planned := 0
	for _, name := range []string{"gpt2", "mixtral-8x7b-v0.1", "qwen3-30b-a3b"} {
		for _, dev := range []string{"h100-sxm", "b200", "tpu-v5p", "mi300x"} {
			for i := 0; i < 200; i++ {
				r := llamaRequest(2, 2, 2)
				a := r.Model.Architecture
				a.Name = name
				a.Seq = 1024
				r.Cluster.Device = dev
				a.CrossEntropy = ces[(i)%len(ces)]
				a.Framework = fws[(i/3)%len(fws)]
				r.Parallelism.OverlapTensorComm = ots[(i/7)%len(ots)]
				r.Training.Precision = precs[(i/11)%len(precs)]
				a.Attention = attns[(i/13)%len(attns)]
				a.FP8Attention = i%5 == 0
				a.ExpertFusedMLP = i%9 == 0
				if i%4 == 0 {
					r.Training.FP8Recipe = []string{"delayed", "mxfp8", "current"}[i%3]
				}
				r.Parallelism.SequenceParallel = i%2 == 0
				if i%17 == 0 {
					r.Training.Mode, r.Schedule.Name = "inference", "inference"
				}
				if i%6 == 0 {
					r.Parallelism.Sharding = "zero1"
				}
				if name != "gpt2" {
					r.Parallelism.Expert = 2
					r.Parallelism.SequenceParallel = true
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("panic on %+v %+v %+v: %v", *a, r.Parallelism, r.Training, p)
						}
					}()
					res, err := Run(context.Background(), r)
					if err != nil {
						fes, isFE := model.AsFieldErrors(err)
						if !isFE {
							t.Errorf("not a field error: %v", err)
						}
						for _, e := range fes {
							if e.Path == "" {
								t.Errorf("no path: %v", e)
							}
						}
						return
					}
					planned++
					if res.Plan != nil {
						for _, s := range res.Plan.Stages {
							if s.Memory.Total() != s.MemoryBytes || s.Memory.GradsBytes < 0 || s.Memory.GradCopyBytes < 0 {
								t.Errorf("memory parts: %+v vs %d", s.Memory, s.MemoryBytes)
							}
						}
					}
					// Round trip: the normalized request plans the same and has the same id.
					nr, err := Normalize(r)
					if err != nil {
						t.Errorf("normalize: %v", err)
						return
					}
					id1, _ := ID(r)
					id2, err := ID(nr)
					if err != nil || id1 != id2 {
						t.Errorf("normalized request's id %s (%v), the request's %s: %+v", id2, err, id1, *nr.Model.Architecture)
					}
				}()
			}
		}
	}
	if planned < 100 {
		t.Errorf("%d of the combinations planned, want 100 or more: the table tries too little", planned)
	}
}
