package request

import (
	"context"
	"math"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/wire"
	"slices"
	"strings"
	"testing"
)

// shardedRun is a published run with sharded data parallelism or context parallelism,
// planned as a request with the run's own parallelism, batch and precision, with its
// measured tokens per second per GPU.
type shardedRun struct {
	name, source string
	r            *wire.Request
	// tokensPerGPU is the published tokens per second per GPU.
	tokensPerGPU float64
	// tolerance is relative, on the predicted tokens per second per GPU: issue 19's 25%,
	// or where gap says why the case misses it, the bound of that known gap.
	tolerance float64
	gap       string
}

// issueTolerance is issue 19's bound on any one case's error.
const issueTolerance = 0.25

// torchtitanRun is a torchtitan benchmark of Llama 3.1 8B (the meta-llama-3-8b
// architecture: the same shape) on H100s in nodes of 8: FSDP2 (zero3) over data x
// context devices, one pipeline stage, a local batch of b sequences of seq tokens.
// Context parallelism is PyTorch's context_parallel with torchtitan's default rotate
// method, allgather (torchtitan 9dec370, experimental.context_parallel_rotate_method):
// context_method all-gather. The sharding is FSDP2's fully_shard (parallelize_llama.py
// apply_fsdp), whose all-gathers and reduce-scatters are copied out and in
// (fully_shard), and it reduce-scatters the gradients in fp32 (torchtitan's
// MixedPrecisionPolicy: param_dtype bfloat16, reduce_dtype float32, its only choice at
// 9dec370): reduce_dtype fp32.
func torchtitanRun(nodes, data, context, b, seq int, dtype, framework, recompute string) *wire.Request {
	method := ""
	if context > 1 {
		method = "all-gather"
	}
	return &wire.Request{
		Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: seq, DType: dtype, Framework: framework}},
		Cluster: wire.ClusterSpec{Device: "h100-96gb-500w", Count: 8 * nodes, DevicesPerNode: 8,
			LinkInter: "roce-400g"}, // "backend RDMA network with 400 Gb/s per GPU"
		Parallelism: wire.Parallelism{Pipeline: 1, Data: data, Context: context, ContextMethod: method, Sharding: "fsdp", FullyShard: true, ReduceDType: ReduceFP32},
		Training:    wire.Training{Recompute: recompute},
		Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 1, MicrobatchSize: b},
	}
}

// torchtitan4D is Table 6's run of Llama 3.1 405B on 64 hosts: TP 8 in each host
// (sequence parallel, async TP), PP 8 with 1F1B, FSDP over data x context devices
// across hosts, the context group across hosts too (torchtitan's mesh puts tp
// innermost, then cp), a local batch of 8 sequences of seq tokens in 8 microbatches of
// one (the default: one per stage), full activation checkpointing, torch.compile and
// Float8; FSDP keeps each stage's weights gathered and its gradients whole in fp32
// through the step (parallelism.reshard step: torchtitan's apply_fsdp passes
// reshard_after_forward=False with PP, and PyTorch's pipelining stage turns off
// gradient sync and resharding after backward until the last microbatch). Float8's
// FSDP all-gather (training.fp8_fsdp_all_gather) as llama3_405b.toml at 9dec370 sets it
// (enable_fsdp_float8_all_gather and precompute_float8_dynamic_scale_for_fsdp true),
// where Float8Handler turns it on: with dp_shard > 1 (parallel_dims.dp_shard_enabled),
// every row but CP 8's FSDP 1.
func torchtitan4D(data, context, seq int) *wire.Request {
	r := torchtitanRun(64, data, context, 8, seq, "fp8", "compiled", "full")
	r.Model.Architecture = &wire.Architecture{Config: llama405BConfig, Seq: seq, DType: "fp8", Framework: "compiled", CrossEntropy: "loss-parallel"}
	r.Model.Name = "llama-3.1-405b"
	r.Parallelism.Pipeline, r.Parallelism.Tensor, r.Parallelism.SequenceParallel = 8, 8, true
	r.Parallelism.OverlapTensorComm = OverlapAsyncTP
	r.Schedule = wire.Schedule{Name: "1f1b", Microbatches: 8, MicrobatchSize: 1}
	r.Parallelism.Reshard = ReshardStep
	r.Training.FP8FSDPAllGather = data > 1
	return r
}

// torchtitan3D is Table 5's run of Llama 3.1 405B on 64 hosts: torchtitan4D without
// context parallelism (FSDP 8, TP 8, PP 8), sequences of 8,192 tokens, a local batch of
// 32 in torchtitan's default 8 microbatches (pipeline_parallel_microbatches: the
// pipeline degree), of 4; schedule 1f1b or interleaved-pytorch:2 (Interleaved 1F1B
// with torchtitan's default split for a looped schedule, two stages a rank:
// pipelining_utils.py generate_split_points at 9dec370; ordered as PyTorch's
// ScheduleInterleaved1F1B, which torchtitan runs, orders it).
func torchtitan3D(schedule string) *wire.Request {
	r := torchtitan4D(8, 1, 8192)
	r.Schedule = wire.Schedule{Name: schedule, Microbatches: 8, MicrobatchSize: 4}
	return r
}

// torchtitan2D is torchtitan's 2D run of Llama 3.1 70B (Table 4): FSDP over data
// devices x TP 8 inside each host (torchtitan's tensor parallelism shards the norms'
// activations too: sequence parallel), a local batch of b sequences of 8,192 tokens,
// full activation checkpointing, torch.compile and Float8; asyncTP is PyTorch's
// asynchronous tensor parallelism, which overlaps the all-gathers and reduce-scatters
// with the products (parallelism.overlap_tensor_comm).
func torchtitan2D(nodes, b int, asyncTP bool) *wire.Request {
	return torchtitanTP("llama-3.1-70b", nodes, b, "fp8", asyncTP)
}

// torchtitanTP is a torchtitan run of FSDP over the hosts x TP 8 inside each (sequence
// parallel), a local batch of b sequences of 8,192 tokens, torch.compile, full
// activation checkpointing, in dtype bf16 or fp8 (Float8 with tensorwise scales);
// asyncTP adds PyTorch's async TP (parallelism.overlap_tensor_comm async-tp).
func torchtitanTP(name string, nodes, b int, dtype string, asyncTP bool) *wire.Request {
	r := torchtitanRun(nodes, nodes, 1, b, 8192, dtype, "compiled", "full")
	r.Model.Architecture.Name = name
	r.Model.Architecture.CrossEntropy = "loss-parallel"
	r.Parallelism.Tensor, r.Parallelism.SequenceParallel = 8, true
	if asyncTP {
		r.Parallelism.OverlapTensorComm = OverlapAsyncTP
	}
	return r
}

// perOpSAC is r with torchtitan's per-op selective activation checkpointing (recompute
// selective-op), as the 2025-06 async TP benchmark ran its Llama 3.1 8B rows
// (--activation_checkpoint.mode="selective" --activation_checkpoint.selective_ac_option="op"
// in each of their commands, benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md; its
// 70B rows pass mode "full").
func perOpSAC(r *wire.Request) *wire.Request {
	r.Training.Recompute = "selective-op"
	return r
}

// trainyRun is Trainy's run of torchtitan's Llama 3.1 8B recipe on H200 hosts
// (pytorch/torchtitan, benchmarks/llama3_8b_h200_2025-06_torchtitan.md): 8 H200s per
// host on NVLink, 400 Gb/s RDMA per GPU (ConnectX-7), FSDP over every GPU, local batch
// 2 of 8,192 tokens, torch.compile and Float8 (with Float8 all-gathers); the recipe's
// per-op selective activation checkpointing (recompute selective-op). Its loss is
// compiled: torchtitan at e7c0cae compiles F.cross_entropy(pred.flatten(0, 1).float(),
// labels) with the model under training.compile (torchtitan/components/loss.py,
// build_cross_entropy_loss), where 9dec370, Tables 1 to 6, left it eager ("compiling
// loss function causes CUDA errors, turning off for now", train.py). Inductor's
// cross-entropy keeps the 16-bit logits and writes their 16-bit gradient, no fp32
// copy or log-probabilities ("memory-wise it's ~0 for just fwd and ~d_input for
// fw+bw", a torch.compile developer, Dao-AILab/quack#48, October 2025): what
// cross_entropy fused holds and moves (flash-attn's kernel, the same bytes a logit).
// Its command line passes --float8.enable_fsdp_float8_all_gather and
// --float8.precompute_float8_dynamic_scale_for_fsdp (training.fp8_fsdp_all_gather, on
// with FSDP 32 and 64).
func trainyRun(nodes int) *wire.Request {
	r := torchtitanRun(nodes, 8*nodes, 1, 2, 8192, "fp8", "compiled", "selective-op")
	r.Model.Architecture.CrossEntropy = "fused"
	r.Cluster.Device = "h200"
	r.Training.FP8FSDPAllGather = true
	return r
}

// torchtitanNode is torchtitanRun on one host as a cluster document: the benchmark's
// Grand Teton GPUs (96 GB; these runs peaked at 84 GiB), their shards and context groups
// over NVLink.
func torchtitanNode(data, context, b, seq int, dtype, framework, recompute string) *wire.Request {
	r := torchtitanRun(1, data, context, b, seq, dtype, framework, recompute)
	r.Cluster = wire.ClusterSpec{Document: []byte(`{"devices": [{"name": "h100-96gb-500w"}]}`), DataLink: "nvlink4"}
	r.Parallelism.Pipeline = 0
	return r
}

// shardedRuns are torchtitan's benchmarks of December 2024 (pytorch/torchtitan,
// benchmarks/llama3_h100_202412_torchtitan.md; Liang et al. 2024, "TorchTitan"), on
// Grand Teton hosts: 8 H100s (96 GB HBM2e, 500 W) per host joined by NVLink, 400 Gb/s
// RDMA per GPU between hosts: the h100-96gb-500w preset (its peak "between SXM and
// NVL", the benchmark's footnote; with the 80 GB, 700 W h100-sxm preset every row erred
// 15% to 33% fast). Tables 1 and 3 ran torchtitan's per-op selective activation
// checkpointing (llama3_8b.toml: mode 'selective', selective_ac_option 'op'), planned
// as such (recompute selective-op: every other matrix product's output and the
// attention's kept, the rest rerun). Planned as full recomputation, as before that
// mode, their memory fell 34% to 46% below the published figures and their throughput
// within -3% to +3%; with the policy that ran, memory is within 5% and throughput
// +10% to +20%: the full forward rerun had hidden that these rows are priced fast.
// FSDP2's own work around its collectives (parallelism.fully_shard: the copy-out of
// every all-gather and copy-in of every reduce-scatter, on the compute stream) and
// torchtitan's fp32 reduce-scatters (reduce_dtype fp32) took them to +8% to +17%.
// What remains is in the blocks' compute (about 9 ms a block and step of 70 at
// b=2, s=8192 under torch.compile), not in FSDP's communication, which the compute
// hides. Ruled out from the source at 9dec370: the per-op policy's mm counter (its
// meta dict is made anew by context_fn at every checkpointed call, so the same three
// of the block's seven products, wk, wo and w3, rerun every step, as priced); Float8
// under that policy (torchao's Float8Tensor reaches the checkpoint's dispatch mode as
// aten.mm before its own _scaled_mm, so it is counted the same); the loss (the 16-bit
// logits upcast by .float() before F.cross_entropy, priced as unfused); the optimizer
// (AdamW foreach, optimizer.fused off by default, priced). The error is larger where
// the blocks are more compute-bound (compile and Float8 +12% to +17%, eager +8% and
// +11%), as a power-capped clock would make it (the hosts
// ran at 500 W; the preset's 912 TFLOP/s is the benchmark's "between SXM and NVL"),
// but no published figure of an H100's matrix rate at 500 W was found to price that.
// Float8 rows run dtype fp8 (the linear layers' products at the fp8 peak).
//
// The attention core runs at FlashAttention-2's published rate on an H100 (core/analytic,
// attention.go): torchtitan's SDPA of December 2024 ran PyTorch's flash backend
// (FlashAttention-2; cuDNN's was opt-in), and its context parallelism supported the
// flash and memory-efficient backends only. Priced at the linear layers' GEMM
// efficiency instead, the long-sequence rows erred 131% to 264% fast. FlashAttention-2's
// own H100 figure of the forward and backward together (Dao-AILab/flash-attention README)
// is 3% to 11% faster than the planner prices the pair (analytic
// TestFlashFwdBwdAgainstREADME; 8% at 16k tokens, causal, head dim 128), so Table 2's
// +19% (CP 1, 32k) and +12% (CP 2) are not FlashAttention-2's rates: the kernel's
// published speed is, if anything, underused. torchtitan's Llama of December 2024
// (torchtitan/models/llama/model.py) repeats the 8 key-value heads to 32 (repeat_kv)
// before SDPA, so the kernel runs plain multi-head attention, its dK and dV summed over
// the copies by autograd: memory traffic linear in the tokens, not priced beside a fused
// kernel, under 1% of a 32k layer's attention. The full recomputation reruns the
// attention's forward once more, and is priced so (analytic, calc.rerun).
//
// Checked again for CP 1's +17.8% (one causal call of 32k tokens): the Hopper table's
// FlashAttention-2 rows read again from the figure itself (Dao-AILab/flash-attention
// assets/flash3_fp16_fwd.png, as entered); the README's H100 pairs at head dim 64 are
// priced within 3% (TestFlashFwdBwdAgainstREADME), so neither head dimension's published
// FlashAttention-2 is faster than priced. PyTorch's own SDPA benchmark on an H100
// (pytorch/pytorch#128888, June 2024: fp16, causal, 4k, batch 1, 16 heads of 128) timed the
// flash backend at 334 us forward and 963 us backward, 206 and 178 TFLOP/s, 0.64x and
// 0.66x Shah et al.'s FlashAttention-2 at 4k; but cuDNN in the same run sits as far below
// Shah et al.'s cuDNN (0.73x, 0.57x), so that shortfall is the small launch (512 thread
// blocks), not PyTorch's build of FlashAttention-2, and the CP 1 row's calls have 8,192.
// The repository's own H100 attention timings (tools/measure/steps.py, torch 2.11) leave
// SDPA's backend unpinned (647 TFLOP/s causal forward at 16k, above any FlashAttention-2
// figure), so they say nothing of FlashAttention-2. A lead left for a later round, not
// priced (one shape, the forward only): on the nightly of these runs (2.6.0.dev20241204,
// pytorch/pytorch#142132) tritonbench timed SDPA's default backend, flash, at 329 TFLOP/s
// forward on (1, 24, 4608, 128), where cuDNN 9.1 and FlashAttention-3 ran 631 and 632;
// read as unmasked (the mask is not stated: masked, cuDNN would be 1.2x its published
// rate), FlashAttention-3 and cuDNN are 0.98x and 1.05x Shah et al.'s figures and
// PyTorch's build of FlashAttention-2 0.89x theirs; if its backward fell as far, the
// CP 1 row's attention, over half its step, would be priced ~11% fast: some 6 of its
// 17.8 points.
//
// Eager rows: torchtitan's eager RMSNorm (an fp32 upcast and six more operators) and
// rotary embedding (complex products) run unfused as HuggingFace's do, and are priced at
// the traffic counted for those (core/analytic eagerTraffic); torch.compile fuses them.
//
// Known gaps, each case's gap says which; the cases without one are held to 25%.
var shardedRuns = []shardedRun{
	{"Llama 3.1 8B, FSDP 8, b=2 s=8192, eager", "torchtitan 2024-12, Table 1",
		torchtitanRun(1, 8, 1, 2, 8192, "bf16", "eager", "selective-op"), 5762, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8, b=2 s=8192, torch.compile", "torchtitan 2024-12, Table 1",
		torchtitanRun(1, 8, 1, 2, 8192, "bf16", "compiled", "selective-op"), 6667, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8, b=2 s=8192, compile + Float8", "torchtitan 2024-12, Table 1",
		torchtitanRun(1, 8, 1, 2, 8192, "fp8", "compiled", "selective-op"), 8532, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 128, b=2 s=8192, eager", "torchtitan 2024-12, Table 3",
		torchtitanRun(16, 128, 1, 2, 8192, "bf16", "eager", "selective-op"), 5605, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 128, b=2 s=8192, torch.compile", "torchtitan 2024-12, Table 3",
		torchtitanRun(16, 128, 1, 2, 8192, "bf16", "compiled", "selective-op"), 6514, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 128, b=2 s=8192, compile + Float8", "torchtitan 2024-12, Table 3",
		torchtitanRun(16, 128, 1, 2, 8192, "fp8", "compiled", "selective-op"), 8380, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8 CP 1, s=32768, compile + Float8", "torchtitan 2024-12, Table 2",
		torchtitanNode(8, 1, 1, 32768, "fp8", "compiled", "full"), 3890, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 4 CP 2, s=65536, compile + Float8", "torchtitan 2024-12, Table 2",
		torchtitanNode(4, 2, 1, 65536, "fp8", "compiled", "full"), 2540, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 2 CP 4, s=131072, compile + Float8", "torchtitan 2024-12, Table 2",
		torchtitanNode(2, 4, 1, 131072, "fp8", "compiled", "full"), 1071, 0.65, gapRing},
	{"Llama 3.1 8B, FSDP 1 CP 8, s=262144, compile + Float8", "torchtitan 2024-12, Table 2",
		torchtitanNode(1, 8, 1, 262144, "fp8", "compiled", "full"), 548, 0.65, gapRing},
	// Table 6: Llama 3.1 405B, 4D, the context group over 400 Gb/s RDMA between hosts,
	// where PyTorch's exchanges weigh: priced as the ring's (overlapped step by step),
	// these rows erred +37%, +37% and +60% at CP 2, 4 and 8.
	{"Llama 3.1 405B, FSDP 8 CP 1 TP 8 PP 8, s=32768, 4D", "torchtitan 2024-12, Table 6",
		torchtitan4D(8, 1, 32768), 76, issueTolerance, ""},
	{"Llama 3.1 405B, FSDP 4 CP 2 TP 8 PP 8, s=65536, 4D", "torchtitan 2024-12, Table 6",
		torchtitan4D(4, 2, 65536), 47, issueTolerance, ""},
	{"Llama 3.1 405B, FSDP 2 CP 4 TP 8 PP 8, s=131072, 4D", "torchtitan 2024-12, Table 6",
		torchtitan4D(2, 4, 131072), 31, issueTolerance, ""},
	{"Llama 3.1 405B, FSDP 1 CP 8 TP 8 PP 8, s=262144, 4D", "torchtitan 2024-12, Table 6",
		torchtitan4D(1, 8, 262144), 16, issueTolerance, ""},
	{"Llama 3.1 405B, FSDP 8 TP 8 PP 8, b=32 s=8192, 1F1B", "torchtitan 2024-12, Table 5",
		torchtitan3D("1f1b"), 100, issueTolerance, ""},
	{"Llama 3.1 405B, FSDP 8 TP 8 PP 8, b=32 s=8192, Interleaved 1F1B", "torchtitan 2024-12, Table 5",
		torchtitan3D("interleaved-pytorch:2"), 128, issueTolerance, ""},
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16 s=8192, compile + Float8", "torchtitan 2024-12, Table 4",
		torchtitan2D(32, 16, false), 829, issueTolerance, ""},
	// PyTorch's async TP of December 2024: +14.2% where the row before is +6.0%. The
	// overlap is priced from what torch.compile's micro-pipeline pass fuses, how it
	// decomposes the products and what the fused operators copy and sum on the compute
	// stream (async-tp, analytic.Options.TensorCommAsync, analytic's asyncCopies),
	// checked against the later runs below, not fitted to this row: the December
	// version sped the run up by 5.7% (829 to 876), where the pricing predicts 17.6%
	// (13.9% before vanilla TP's cats were priced, 17.7% before the fused operators'
	// copies and partial sums were), and the same
	// configuration by 16.4% in June 2025 (TestPublishedAsyncTPSpeedups). Ruled out as
	// the December shortfall: Float8 products left unfused (the all-gather -> _scaled_mm
	// and _scaled_mm -> reduce-scatter patterns landed in July-August 2024,
	// pytorch#131833 and #131984, before the run's torch 1963fc8 of 2024-12-23; the
	// rowwise-scale fixes of 2025, pytorch#147794 and #149247, concern rowwise scales
	// only) and the two-stream chunk scheduling (pytorch#137850, October 2024, in
	// both versions).
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16 s=8192, + AsyncTP", "torchtitan 2024-12, Table 4",
		torchtitan2D(32, 16, true), 876, issueTolerance, ""},
	// PyTorch's async TP against vanilla TP, each pair measured in one benchmark: the
	// runs of pytorch/pytorch#149990 (March 2025: Llama 3 70B on 128 H100s, FSDP 16,
	// TP 8, full activation checkpointing; torch.compile assumed, as async TP needs it,
	// and the local batch of torchtitan's llama3_70b.toml, 8, as the issue does not say
	// it: at 16 every prediction moves by under 1%), and torchtitan's async TP benchmark
	// (benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md, June 2025, the Grand Teton
	// hosts above: Llama 3.1 70B as Table 4 ran it, full activation checkpointing; Llama
	// 3.1 8B on 64 H100s with per-op selective checkpointing, planned as such: perOpSAC).
	// Float8 is tensorwise; the rowwise rows are left out (a rowwise recipe is not
	// priced, and its vanilla TP baseline was a known slowdown, torchtitan#1207).
	{"Llama 3 70B, FSDP 16 TP 8, b=8, bf16", "pytorch#149990 (2025-03)", torchtitanTP("llama-3.1-70b", 16, 8, "bf16", false), 598, issueTolerance, ""},
	{"Llama 3 70B, FSDP 16 TP 8, b=8, bf16 + async TP", "pytorch#149990 (2025-03)", torchtitanTP("llama-3.1-70b", 16, 8, "bf16", true), 673, issueTolerance, ""},
	{"Llama 3 70B, FSDP 16 TP 8, b=8, Float8", "pytorch#149990 (2025-03)", torchtitanTP("llama-3.1-70b", 16, 8, "fp8", false), 820, issueTolerance, ""},
	{"Llama 3 70B, FSDP 16 TP 8, b=8, Float8 + async TP", "pytorch#149990 (2025-03)", torchtitanTP("llama-3.1-70b", 16, 8, "fp8", true), 950, issueTolerance, ""},
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16, bf16", "torchtitan async TP 2025-06", torchtitanTP("llama-3.1-70b", 32, 16, "bf16", false), 597.3, issueTolerance, ""},
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16, bf16 + async TP", "torchtitan async TP 2025-06", torchtitanTP("llama-3.1-70b", 32, 16, "bf16", true), 652.4, issueTolerance, ""},
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16, Float8", "torchtitan async TP 2025-06", torchtitanTP("llama-3.1-70b", 32, 16, "fp8", false), 809.8, issueTolerance, ""},
	{"Llama 3.1 70B, FSDP 32 TP 8, b=16, Float8 + async TP", "torchtitan async TP 2025-06", torchtitanTP("llama-3.1-70b", 32, 16, "fp8", true), 942.4, issueTolerance, ""},
	// The 8B rows at TP 8 ran per-op selective checkpointing (perOpSAC); planned as full
	// recomputation, as they were until core priced the policy with tensor parallelism,
	// they erred +1..+10%: the rerun forward they were charged cancelled an optimism that,
	// planned as run, was +19% to +28% (bf16 + async TP beyond 25%), where Tables 1 and
	// 3's 8B rows under the same policy without tensor parallelism err +8% to +16%.
	// Found: torchtitan's query, key and value projections are three products of the
	// gathered input (analytic's separateProjections), and at this shard's 98,304 tokens
	// the 128-wide key and value products are bound by reading it (+25.0, +28.4, +18.6,
	// +24.9% to +20.3, +23.8, +13.9, +19.8%); and vanilla TP's sequence-dimension
	// collectives each copy the whole gathered activation (the functional collectives'
	// cat, torchtitan#437; analytic's sequenceCopies), which async TP's fused operators
	// take over but for the summed input gradients' reduce-scatters, their sequence-first
	// gathered outputs copied for the weight gradients at b > 1 (to +7.8, +14.8, +3.4,
	// +11.6%; the 70B rows +15.5, +16.5, +4.9, +2.1% to +5.9, +10.9, -4.0, -3.0%). What
	// is left is async TP's: its rows err 7 to 8 points above their vanilla rows'
	// (TestPublishedAsyncTPSpeedups). Priced before and so ruled out as the whole
	// cause: what the policy keeps and reruns under TP (the reduce-scatters' outputs
	// kept, the all-gathers rerun, analytic.TestSelectiveOpTensorParallel); the policy's
	// "every second mm" count (wk, wo and w3 rerun, whether Q, K and V are one op or
	// three); async TP's fused operators under the policy (Inductor's micro-pipeline pass
	// runs post-grad on the partitioned forward and backward graphs, after the policy
	// tagged aten.mm and the functional collectives: the rerun gather is fused into the
	// rerun key and up products, as priced). Not checked: whether torch.compile's
	// partitioner saves some of the policy's PREFER_RECOMPUTE operations or recomputes
	// more; the amax all-reduces of Float8's tensorwise scales in the rerun; the
	// 128-wide products' backward (their input gradient reduces over 128, priced at
	// gemmTileOverheadK's 21% of the large-product rate, their 4,096 x 128 weight
	// gradient at 32 tiles' 24% of the SMs: extrapolated, the measured shapes reduce over
	// 768 and more, and cuBLAS may split the weight gradient's reduction instead).
	// Async TP's rows err 7 to 8 points above their vanilla rows' (+14.8 and +11.6%
	// against +7.8 and +3.4%): what async TP costs beyond its priced copies, chunked
	// products and exposed reduce-scatters is not found.
	{"Llama 3.1 8B, FSDP 8 TP 8, b=12, bf16", "torchtitan async TP 2025-06", perOpSAC(torchtitanTP("meta-llama-3-8b", 8, 12, "bf16", false)), 4378, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8 TP 8, b=12, bf16 + async TP", "torchtitan async TP 2025-06", perOpSAC(torchtitanTP("meta-llama-3-8b", 8, 12, "bf16", true)), 4809.4, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8 TP 8, b=12, Float8", "torchtitan async TP 2025-06", perOpSAC(torchtitanTP("meta-llama-3-8b", 8, 12, "fp8", false)), 5078.1, issueTolerance, ""},
	{"Llama 3.1 8B, FSDP 8 TP 8, b=12, Float8 + async TP", "torchtitan async TP 2025-06", perOpSAC(torchtitanTP("meta-llama-3-8b", 8, 12, "fp8", true)), 5570.1, issueTolerance, ""},
	{"Llama 3.1 8B, 32 H200, FSDP 32, b=2 s=8192, compile + Float8", "torchtitan 2025-06 (Trainy, H200)",
		trainyRun(4), 10938, issueTolerance, ""},
	{"Llama 3.1 8B, 64 H200, FSDP 64, b=2 s=8192, compile + Float8", "torchtitan 2025-06 (Trainy, H200)",
		trainyRun(8), 10753, issueTolerance, ""},
}

// The known gaps of torchtitan's rows.
const (
	// gapRing: +47.8% and +56.1%, where CP 1 and 2 err +17.8% and +8.4% (main at
	// 0530dab; the figures below were measured when the rows erred +49% and +58%,
	// +19% and +10%). What PyTorch's
	// experimental context parallelism did in this benchmark, read from the versions it
	// names (pytorch/pytorch 1963fc8 of 2024-12-23,
	// torch/distributed/tensor/experimental/_attention.py; torchtitan 9dec370), is
	// priced (context_method all-gather, analytic.AllGather): the c steps on a device's
	// s/c tokens, load-balanced, one causal and c-1 without a mask (at FlashAttention-2's
	// faster unmasked rate: -3.6%, -6.2%, -7.7% of the steps at CP 2, 4 and 8); K and V,
	// 32 heads after repeat_kv, all-gathered once a pass and again in the backward, their
	// fp32 gradients sent on after every step, each exchange waited at once under
	// torch.compile (torchtitan compiles each block whole, so the ring is traced:
	// +2.3%, +3.2%, +3.7% over NVLink); the fp32 merges and accumulations (+3.5%, +3.4%,
	// +3.4%). Net +2%, 0% and -1% on these rows, which the source thus does not explain
	// (nor FlashAttention-2's rates, priced 8% below its published H100 figure at 16k,
	// TestFlashFwdBwdAgainstREADME; nor repeat_kv's copies, under 1%; nor the
	// recomputation, priced; nor NCCL's one-peer sends, which run on twice an NVLink
	// peer's links in channels whatever the group's size: NCCL 2.21.5, graph/paths.cc
	// ncclTopoGetNchannels, enqueue.cc scheduleP2pTasksToPlan). The rows decompose
	// instead as a cost that comes with the group's size: with the planner's price of
	// everything but the attention core held (2.63 s a step; Tables 1 and 3's rows err -3%
	// to +3%), the core measured 1.30x its ring price at CP 1 (one causal block), and each
	// further step 1.01x at CP 2 but 1.66x at CP 4 and 1.65x at CP 8, though CP 2, 4 and 8
	// run steps of the same shapes and pass about the same bytes a step. One thing below
	// the source does change between 2 and 4 devices: NCCL enables NVLink SHARP only in
	// communicators of more than 2 GPUs (2.21.5, transport/nvls.cc, ncclNvlsInit), so
	// CP 4's and 8's all-gathers may run another algorithm than CP 2's; no published
	// figure times that here. (Table 6's 405B rows, whose context groups cross hosts, do
	// not grow so: +6.4%, +14.7%, +10.5% at CP 1, 2 and 4; and a group of one GPU a host
	// never runs NVLink SHARP, an optimisation among a host's GPUs, coreweave/
	// reference-architecture#74, so they are no evidence against it.)
	//
	// Also ruled out, each read from its source:
	//  - the figure: torchtitan 9dec370's train.py counts labels.numel() before
	//    context_parallel shards them and divides by non_data_parallel_size (the CP
	//    degree here), so TPS/GPU is a device's shard of tokens a second, as planned;
	//  - another kernel: under CP torchtitan 9dec370 (utils.get_train_context) pins
	//    sdpa_kernel([FLASH_ATTENTION, EFFICIENT_ATTENTION]), flash's checks pass at these
	//    shapes (head dim 128, bf16, no mask, 32 heads after repeat_kv), and the handler
	//    calls aten._scaled_dot_product_flash_attention itself: no memory-efficient steps;
	//  - the steps' shapes: _ContextParallelOptions.enable_load_balance is on by default
	//    and rank r holds chunks r and 2c-1-r, so each further step is half a block, Q
	//    against K's first half (source rank below r) or Q's second half against K
	//    (above): the same two shapes at every c >= 2, no step skipped, equal work a
	//    rank. CP 2's one further step already runs both (rank 0 one, rank 1 the other),
	//    so a difference between them is inside its 1.01x;
	//  - synchronization: the backward's dK/dV permute (permute_tensor, all_to_all_single)
	//    posts zero-byte sends and receives to every rank (torch/csrc/cuda/nccl.cpp,
	//    _nccl_should_send_recv is true for NCCL > 2.13), a whole-group barrier a step,
	//    but with equal work a rank it costs microseconds, and CP 2 has it too;
	//  - a compile bug at more than 2 ranks: PyTorch's CP test skipped compiled causal
	//    ring attention on more than 2 ranks in mid-2024 ("after we move wait_tensor to
	//    use with_effect"): a dead-code-eliminated wait, a desync (pytorch#132155), kept
	//    from elimination since August 2024 (pytorch#132341); the test of the version
	//    with set_rotate_method, which this build's torchtitan calls, runs that case;
	//  - a slow transfer: with CP 1's excess (1.35 s a step) taken off every row, CP 2,
	//    4 and 8 measure -0.2, 8.8 and 20.5 s a step beyond the price; 20.5/8.8 = 2.34,
	//    (8-1)/(4-1) = 2.33: the cost goes with the further steps or the gathered bytes
	//    (both c-1), not with the dK/dV sends (c: 2.0), 2.9 s a further step, 91 ms a
	//    layer. As transfer, a step's 512 MiB gathered in each of three passes would
	//    move at 18 GB/s (or with its 1 GiB of fp32 dK/dV, all at 29 GB/s), where an H100
	//    host all-gathers at ~300-350 GB/s, NVLink SHARP's algorithm included
	//    (NVIDIA/nccl#1506): no choice of NCCL algorithm comes near;
	//  - the ring code itself: Table 6's 405B rows run the same build and the same
	//    compiled CP code on steps of the same kind (16 heads a device). Planned with
	//    every further step's kernels at 1/1.65 of their rates, its CP 4 row errs -8.9%,
	//    23 points below its CP 1 row (+14.5%), where it measures within a point of it
	//    (+13.9%); the 8B CP 2 row would err -10.3%. What is left is particular to the
	//    one-host 8B runs at CP 4 and 8 (the context group on NVLink beside FSDP over the
	//    same 8 GPUs), and not found.
	//
	// Checked later, each read at torchtitan 9dec370 (and torch's _attention.py as
	// the ring code above), none of which changes between CP 2 and CP 4:
	//  - FSDP's mesh: apply_fsdp shards over dp_shard_cp, which parallel_dims.py
	//    flattens from dp_shard x cp: the same 8 GPUs at every row of the table, its
	//    reduce-scatters in fp32 (mixed_precision_reduce: float32, its only choice), as
	//    planned (FSDP over data x context devices): the same bytes at every c;
	//  - the loss and the buffers: train.py passes context_parallel cp_buffers
	//    [input_ids, labels, model.freqs_cis] on sequence dims [1, 1, 0], so each rank
	//    embeds, projects and takes loss_fn over its own s/c tokens (the output layer
	//    never sees the full sequence) with its shard of the rotary table;
	//  - the attention calls: a pass makes c calls of
	//    aten._scaled_dot_product_flash_attention, the first is_causal, the rest
	//    is_causal False with no attn_mask (so no masked, memory-efficient or math
	//    kernel), each on a slice of the one all-gathered buffer (_AllGatherRotater's
	//    next_buffer): no call over the full keys and values, no custom mask;
	//  - torch.compile: apply_compile compiles each TransformerBlock with
	//    fullgraph=True, so a graph break around the CP dispatch would raise rather
	//    than run the attention eager; the torch.cat of K and V that each further step
	//    makes, which the all-gather rotater ignores after its first call, is dead code
	//    in the traced graph;
	//  - Float8: tensorwise dynamic scales, each linear layer's input a plain local
	//    tensor under CP (context_parallel wraps only SDPA's q, k and v as DTensors),
	//    so torchao's tensor_to_amax scales each rank's shard with no all-reduce
	//    (reduce_amax off); Float8's FSDP all-gather needs dp_shard > 1 (Float8Handler:
	//    parallel_dims.dp_shard_enabled), so CP 8 (FSDP 1) gathers 16-bit weights, a
	//    layer at a time without PP, hidden behind 32,768 tokens of a layer;
	//  - memory pressure: NCCL's NVLink SHARP buffers, set up in communicators of more
	//    than 2 GPUs (2.25 GiB at 8 GPUs with 4 MiB buffers, the NCCL log in
	//    vllm-project/vllm#9699), sit outside the caching allocator, and CP 4 and 8
	//    add one such communicator; but the allocator's reserved peak is 84 GiB at
	//    every row on 95 GiB devices (torchtitan's docs/performance.md, pytorch/
	//    torchtitan#800), so even two such communicators leave it GiBs short of the
	//    device: no allocator retries.
	//
	// Checked in a third round, each lead against _attention.py as above (the ring
	// code of context_parallel's allgather rotate method), with what it would have to
	// cost: 91 ms a layer for every further step, (c-1) x 91 = 637 ms a layer at CP 8,
	// where a layer's n = 32,768 tokens x 32 heads x 128 = 134M output elements:
	//  - the merges: _SDPAMerger._merge_one rescales the fp32 output by sigmoid and
	//    logsigmoid of the two logsumexps after every further step, and on the steps
	//    that touch only Q's second half (i > rank) _partial_update rebuilds the whole
	//    fp32 output and logsumexp by torch.cat; the backward adds each step's 16-bit
	//    dQ, dK, dV into fp32 accumulators (_partial_update again on half-block steps)
	//    and torch.cat's dK and dV into the buffer passed on. Priced (contextMerges) at
	//    10 bytes an element a further step each forward (two with the rerun) and 46 a
	//    step backward: 8.9 GB, 3.7 ms a layer a further step at the 2.4 TB/s of these
	//    HBM2e devices. Had torch.compile fused none of it (about five times the bytes:
	//    each of sub, sigmoid, mul, sub and the cat reading and writing fp32), 18 ms,
	//    a fifth of the 91 ms;
	//  - the rotate method: torchtitan 9dec370's experimental.context_parallel_
	//    rotate_method defaults to allgather (config_manager.py), one all-gather of
	//    every rank's K and V a pass, waited at step 1 (next_buffer), so hidden at
	//    most behind step 0's call; priced exposed under torch.compile: 3.5 GiB a
	//    pass at CP 8, 10 ms at NCCL's 370.8 GB/s, 30 ms a layer in three passes;
	//  - the load balancer's calls: each further step makes one flash call, not two
	//    (all of Q against K's first half, or Q's second half against all of K,
	//    is_causal False), and step 0 one causal call on the device's own s/c tokens:
	//    16,384 x 32,768 or 32,768 x 16,384 at 32 heads, thousands of 128-row tiles
	//    in many waves, the same at every c >= 2 (priced: one causal call, c - 1
	//    unmasked at their own rate, analytic attentionRates);
	//  - the backward: _templated_ring_attention_backward calls
	//    aten._scaled_dot_product_flash_attention_backward once a step (c calls) on
	//    the merged output and logsumexp (their second halves on half-block steps); it
	//    reruns no forward; the only rerun is full activation checkpointing's, priced
	//    (calc.rerun). dK and dV go on in fp32 after every step (c sends of 1 GiB,
	//    ft_c.permute_tensor), each exposed under torch.compile as priced, 2.9 ms each
	//    at NCCL's NVLink rate, 23 ms a layer at CP 8;
	//  - synchronisation: the forward waits once a pass (the gather); the backward
	//    waits once a step for the dK/dV permute (all_to_all_single, its zero-byte
	//    syncs to the other c - 2 ranks, NCCL 2.21.5's enqueue.cc: "Zero size
	//    send/recv are syncs"), after the next step's flash call in program order;
	//    NCCL's planner gives the one real transfer p2pnChannelsPerPeer channels at
	//    every group size (scheduleP2pTasksToPlan: only nChannelsMin, for small
	//    transfers, is cut as nRanks grows); no torch.cuda synchronisation or stream
	//    wait besides the functional collectives' wait_tensor.
	// So what these five leads could add beyond their price is some 15 ms a layer at
	// CP 8 (the merges left unfused), against the 637 ms missing. Written from the
	// measured rows alone, a step per token of A + B c, plus Y (c - 1) above two
	// devices: CP 1 and 2 give A and B, then CP 4 and CP 8 each give Y, 0.889 and
	// 0.874 x 1e-4 s a token (2.9 s a further step), 2% apart: a cost a further step
	// that appears only above two devices in a host. Above two local ranks NCCL sets
	// up NVLink SHARP on the context group's communicator, and the permute posts
	// syncs to ranks other than its neighbours: neither is timed by a published
	// figure here, so neither is priced.
	//
	// Checked in a fourth round, four further leads, none of which is priced or
	// changes between CP 2 and CP 4:
	//  - torch.compile around the CP dispatch: at 9dec370 parallelize_llama.py wraps
	//    each block in ptd_checkpoint_wrapper (full AC, preserve_rng_state False) and
	//    then compiles the wrapped block with fullgraph=True (apply_ac, then
	//    apply_compile). So a graph break at the monkey-patched
	//    F.scaled_dot_product_attention (DTensor.from_local, then DTensor's dispatch to
	//    _sdpa_handler) would raise an error. It would not leave the norms, the rotary
	//    embedding or SwiGLU running eager: the blocks run CP 1's fusions, the ring traced
	//    into them. With every operation of the checkpointed block tagged for
	//    recomputation, the partitioner saves only the block's input. Saving the
	//    gathered K and V instead (c x 512 MiB a layer at the 8B's shard) would take
	//    4 GiB a layer at CP 8, where every row published 84 GiB. The one failure of
	//    CP with compile in that build was a hang at CP 32 (pytorch/torchtitan#772,
	//    January 2025), and it was compile time. AOTAutograd's min-cut partitioner
	//    pushed duplicates into the heap of find_first_unfusible, a heuristic whose
	//    answer (the first unfusible node's order) duplicates do not change.
	//    pytorch#145082 ("partitioner: avoid inserting duplicates into heap") skips
	//    them, so the graphs that run are the same;
	//  - Float8: nothing in Float8Handler (torchtitan/float8.py at 9dec370) reads the CP
	//    degree. Its FSDP float8 all-gather is on only with dp_shard > 1. Table 2 does
	//    not say whether its runs set it (llama3_8b.toml leaves Float8 off, the command
	//    lines are not published). Had they set it, it would run at CP 1, 2 and 4 and
	//    not at CP 8, where CP 4 and 8 err alike. The linear layers' tensorwise scales
	//    are each rank's own, as read above;
	//  - the SDPA backend and its rate: get_train_context pins FLASH and EFFICIENT
	//    (utils.py, with "TODO (xilunwu): support cuDNN backend"), and flash's checks
	//    set no sequence length, so every step runs FlashAttention-2. A device holds
	//    s/c = 32,768 tokens at every row, so every c >= 2 runs the same two half-block
	//    shapes: no rate that depends on length or chunk separates CP 4 from CP 2.
	//    PyTorch's _flash_attention_backward makes grad_out and out contiguous on
	//    every call (aten/src/ATen/native/transformers/cuda/attention_backward.cu,
	//    "CUDA code assumes that dout is contiguous"). After a half-block step the
	//    merged output leaves _partial_update's torch.cat in (b, h, s, d) order, so a
	//    backward step may copy both. That is at most 1 GiB read and written, 0.45 ms a
	//    step at 2.4 TB/s, 3.6 ms a layer at CP 8;
	//  - what the ring keeps: autograd sees one aten op (the flash forward, dispatched
	//    through _sdpa_handler) and saves its local q, k, v and its merged output and
	//    logsumexp. The per-step outputs and logsumexps live inside the handler, and
	//    under full AC the block keeps only its input. context_parallel cuts
	//    input_ids, labels and freqs_cis once a step and keeps a clone of freqs_cis to
	//    restore (128 MiB at 262,144 tokens). Table 2's memory agrees: 83.1 GiB planned
	//    at every CP degree against 83.9 to 84.5 published (-1.0 to -1.7%);
	//  - the SMs the backward's dK/dV permute holds beside the flash calls: NCCL
	//    2.21.5 puts every send and receive, the zero-byte syncs included, as work
	//    elements on channels from one space of p2pnChannels
	//    (enqueue.cc scheduleP2pTasksToPlan and addP2pToPlan, whose channel is
	//    ncclChannelCompute(peer, chunk % p2pnChannelsPerPeer)), one CTA a channel.
	//    So the kernel runs at most p2pnChannels CTAs at any c, and the one real
	//    transfer already takes p2pnChannelsPerPeer of them at CP 2. What the other
	//    peers' syncs add is how long those CTAs wait, not how many SMs they take,
	//    and with equal work a rank the wait is short (as above).
	// Some 4 ms a layer at CP 8 (the contiguous copies), against the 637 ms missing.
	gapRing = "PyTorch's experimental ring attention's steps at ~1.65x their price at CP 4 and 8 (1.0x at CP 2), which its source does not explain"
	// Table 6's CP 8 row, held to issue 19's 25% since its context group's exchanges
	// across hosts take the device's NIC path (cluster.Topology.NICLink: NCCL's PCIe
	// Gen5 x16 48 GB/s under the 400 Gb/s NIC's 50): +25.0% -> +23.9%, CP 2 and 4
	// +17.0 -> +16.4% and +12.3 -> +11.5%. That closes no cause: the residual this
	// note records, 17 points beyond the CP 1 row, stays unexplained. It was a known
	// gap (gap4DCP8) at +25.1%, 18.7 points beyond its CP 1 row (+6.4%)
	// where CP 2 and 4 stay within 8.3 points of it (+14.7%, +10.5%; main at
	// 0530dab). The table gives 16 TPS/GPU, two figures: a run between 15.5 and 16.5
	// reads so, and against the planned 20.01 the error lies anywhere from +21.3% to
	// +29.1%, so the row's 0.1 points beyond issue 19's 25% are within the figure's
	// rounding (CP 4's 31 spans 3.6 points, CP 1's 76 1.4); the 18.7 points beyond
	// CP 1 are not. The ring code it runs is gapRing's, whose third-round reading
	// (merges, rotate method, calls, backward, synchronisation) finds nothing more to
	// price at one GPU a host either. Its context group of 8 hosts all-gathers
	// 7 hosts' keys and values over the network in every pass (priced: PyTorch's
	// exchanges make its step 26% longer than the ring's would be). Ruled out: NCCL
	// 2.21.5's cut of the channels a network peer's sends get as the group grows
	// (graph/paths.cc, ncclTopoGetNchannels: two a NIC, halved while 2 x nRanks exceeds
	// 4 x p2pnChannels), which does slow one-peer sends (NVIDIA/nccl#1272: 24% at 32 ranks,
	// restored by NCCL_NCHANNELS_PER_NET_PEER=4); for 8 ranks one a host the ring's
	// channels doubled (graph/connect.cc, ncclTopoPostset) give p2pnChannels of at least 4,
	// and 2 x 8 does not exceed 16: two channels a peer at CP 8 as at CP 4 (the cut would
	// come at CP 16). Also ruled out, at torchtitan 9dec370: Float8's FSDP all-gather,
	// which torchtitan's llama3_405b.toml enables but Float8Handler turns on only with
	// dp_shard > 1 (parallel_dims.dp_shard_enabled), so that CP 8 (FSDP 1) alone
	// gathers its stage's weights in 16 bits and casts them to fp8 in every microbatch:
	// about 6.4 billion weights a device, some 6 GB more over the network once a step
	// (reshard step) and under 1 TB of cast traffic a step, together under 1 s of the
	// measured 256 s. (Its memory: at CP 8 alone the stage's gathered weights are held
	// in 16 bits rather than 8, about 6 GiB more, most of memGap4D's growth at CP 8,
	// 7.8 GiB published where 1.3 is planned; priced now, training.fp8_fsdp_all_gather
	// on the rows with dp_shard > 1, the 8-bit gathers put CP 1 to 4 5.9 GiB further
	// below theirs.) With them priced, CP 1 to 4 gather half the bytes and run 0.1 to 1.3
	// points faster (+6.4/+16.6/+12.2% -> +7.7/+17.0/+12.3%), so CP 8 is now 17 points
	// beyond CP 1.
	// FSDP's group is dp_shard x cp, 8 devices across hosts at every row, as planned.
	//
	// Memory, read in a fourth round (memGap4D's CP 4 -10.7% and CP 8 -17.7%), found
	// particular to the CP degree only in that Float8 toggle. The plan holds a stage's
	// gathered weights in 16 bits at every row: 16 layers x 398.5M weights a device
	// (Llama 3.1 405B's 3,187.6M a layer over TP 8), 11.9 GiB, with its bf16 shard
	// beside them (13.4 GiB). FSDP2's float8 all-gather holds them in fp8 where it ran
	// (llama3_405b.toml sets enable_fsdp_float8_all_gather and
	// precompute_float8_dynamic_scale_for_fsdp; Float8Handler gates them on
	// dp_shard_enabled): CP 1, 2 and 4, 5.6 to 5.9 GiB less, not CP 8. Priced so,
	// the four rows would plan about 63.1, 63.1, 63.3 and 69.9 GiB against 75.3,
	// 75.9, 77.1 and 84.9: -16%, -17%, -18%, -18% (the first stage, 15 layers and the
	// embedding, becomes the most loaded). So the growth with CP is the toggle's, and
	// what is left is a shortfall common to the 405B pipeline rows (memGap4D; Table 5's
	// 1F1B row, also FSDP 8 with fp8 gathers, would go from -16.8% to about -23%). Now
	// priced (training.fp8_fsdp_all_gather, torchao's fsdp_pre_all_gather and
	// fsdp_post_all_gather at eab345c): 63.0, 63.0, 63.2 and 69.9 GiB planned, -16.4%,
	// -17.0%, -18.0%, -17.7%, and the 1F1B row -23.7%, as predicted: CP 1 and 2 leave
	// the 10% target for memGap4D, which the toggle no longer explains at any CP degree.
	// Megatron's fp8_param_gather drops the 16-bit shard and is another rule. What the ring's backward holds, counted from
	// _templated_ring_attention_backward, is no gap either: the allgather rotater's c
	// shards of K and V at the query width (2c tensors of Q's 16-bit size), fp32 dQ
	// (2), the fp32 dK and dV cat and their permuted copy in flight (8),
	// FlashAttention-2's fp32 dQ accumulator (2) and its 16-bit outputs (3), at most
	// (2c + 15) such tensors. The plan holds about (2c + 13) (analytic's AllGather
	// bwdExtra beside the flash core's), 0.25 GiB apart at the 405B's shard (32,768
	// tokens x 16 heads of 128) at every c.
)

// llama3Run is a pre-training run of Llama 3.1 405B as Dubey et al. 2024 ("The Llama 3
// Herd of Models", section 3.3.2 and Table 4) report it: H100 SXM 80 GB in hosts of 8
// joined by NVLink, 400 Gb/s RoCE between hosts; TP 8 with sequence parallelism inside
// a host, PP 16 with the interleaved schedule, a step of 16M tokens, bf16. One
// transformer layer per model chunk, eight chunks per device (interleaved:8): section
// 3.3.2 removes one layer each from the first and last stages so that "the first model
// chunk on the first stage has only the embedding, and the last model chunk on the last
// stage has only output projection and loss calculation", which leaves a chunk of one
// layer everywhere else (126 = 16 x 8 - 2; with two chunks per device, as this table
// assumed before, the bubble of 16 microbatches on 16 stages wasted 32% of the step and the rows
// erred 22% to 30% slow). Assumed where the paper does not say: microbatches of
// one sequence, the optimizer state sharded over the replicas x context devices once per
// step (zero1: the paper's FSDP shards optimizer state and gradients but keeps the
// weights), the context group of CP 16 laid across hosts, and fused kernels with the
// gradient reduction overlapped (the compiled framework mode: Meta's stack does not run
// HuggingFace's eager code), and full recomputation (the planner fits neither selective
// recomputation nor none in 80 GB with these chunks).
//
// Full recomputation is NOT what the 8K rows ran: a known memory gap
// (TestLlama3AsRunMemoryGap). Section 3.3.2's words, read in round 32 from copies of
// the paper's text in the code index: "We enable TORCH_NCCL_AVOID_RECORD_STREAMS to
// reduce memory usage from asynchronous point-to-point communication. Finally, to
// reduce memory cost, based on detailed memory allocation profiling, we proactively
// deallocate tensors that will not be used for future computation, including the input
// and output tensors of each pipeline stage, that will not be used for future
// computation. With these optimizations, we could pre-train Llama 3 on sequences of 8K
// tokens without activation checkpointing." The same section: the first stage "consumes
// more memory due to the embedding and the warm-up micro-batches"; the schedule makes N,
// "the number of contiguous micro-batches for the same stage's forward or backward",
// tunable (Figure 6's N = 5), between the depth-first N = PP and the breadth-first N = M;
// "Our use of FSDP for Llama 3 shards optimizer states and gradients, but for model
// shards we do not reshard after forward computation" (zero2, not this table's zero1);
// "we use FP32 gradients accumulation during backward computation over multiple
// micro-batches and also reduce-scatter gradients in FP32". Table 4 gives neither N nor V.
// Planned with recompute none (on the h200 preset, to read the peak), the busiest device
// holds 118.2 GiB at DP 64 (84.3 GiB of activations, 16.0 of torch.distributed.pipelining's
// stage buffers, about 18 of state) and 101.8 GiB at DP 128 (76.6, 8.0), against 76.0 GiB
// usable on the H100 preset (zero2 takes 6 GiB off both). The buffers are what the paper's
// deallocation removes; the activations alone still exceed the device: 141-143 one-layer
// chunk-microbatches in flight at DP 64 (PyTorch's ScheduleInterleaved1F1B,
// schedules.py _get_warmup_ops: (V - 1) x microbatches_per_round + 2 (PP - 1 - rank),
// microbatches_per_round = M / max(1, M / PP) = 16 here, as Megatron-Core's
// get_num_warmup_microbatches), all 128 at DP 128 (M V = 128 below that count), at
// 0.60 GiB each, which a hand count of the block's saved bf16 tensors agrees with (in
// units of s h / t bytes, 16 MiB: the norms' inputs and outputs 8, Q 2, the one K/V
// head 0.25, the attention output 2, the SwiGLU's gate and up outputs 13 and their
// product 6.5, the SiLU's output 6.5 if kept: 32-38 units, 0.50-0.60 GiB). Even plain
// 1F1B would hold 16 microbatches of the first stage's 7 layers (15 of the second's 8):
// 56-67 (60-72) GiB. For DP 64 to fit with the buffers freed (about 58 GiB left for activations,
// 97 chunk-microbatches), (V - 1) N + 30 <= 97 would need N <= 9 contiguous
// microbatches, below PP, where the schedule idles between rounds; the paper's bubble
// ratio ((PP - 1) / (V M) in most copies of the text) is the N >= PP one. What Meta's
// schedule held (its N at these rows, whether the first stage's fewer layers were more
// than one, the saved tensors of its block) is not published;
// no rule is added, and no N is assumed to make the rows fit. Planned as run, the rows
// would be priced without the backward's rerun: on the h200 preset, full to none takes
// DP 64 from 138.6 to 186.9 tokens/s a device (x1.35) and DP 128 from 130.0 to 174.4
// (x1.34); the same ratios would turn the H100 rows' -17.1%/-16.3% into about
// +11.8%/+12.3% (optimistic), an estimate, not a plan.
func llama3Run(data, context, seq, microbatches int, recompute string) *wire.Request {
	return &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Config: llama405BConfig, Seq: seq, Framework: "compiled"}, Name: "llama-3.1-405b"},
		Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8, LinkInter: "roce-400g"},
		Parallelism: wire.Parallelism{Pipeline: 16, Data: data, Tensor: 8, SequenceParallel: true, Context: context, Sharding: "zero1"},
		Training:    wire.Training{Recompute: recompute},
		Schedule:    wire.Schedule{Name: "interleaved:8", Microbatches: microbatches, MicrobatchSize: 1},
	}
}

// llama405BConfig is Llama 3.1 405B's config.json (meta-llama/Llama-3.1-405B).
var llama405BConfig = []byte(`{"model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248, "num_attention_heads": 128,
	"num_key_value_heads": 8, "num_hidden_layers": 126, "vocab_size": 128256, "max_position_embeddings": 131072,
	"rope_theta": 500000, "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": false}`)

// llama3Runs are Table 4's rows, with the model FLOP/s per GPU it reports (430, 400 and
// 380 TFLOP/s; 43%, 41% and 38% of the bf16 peak).
var llama3Runs = []struct {
	name         string
	r            *wire.Request
	tflopsPerGPU float64
	tolerance    float64
}{
	{"Llama 3.1 405B, TP8 PP16 DP64, s=8192, 8,192 H100s", llama3Run(64, 1, 8192, 32, "full"), 430, issueTolerance},
	{"Llama 3.1 405B, TP8 PP16 DP128, s=8192, 16,384 H100s", llama3Run(128, 1, 8192, 16, "full"), 400, issueTolerance},
	{"Llama 3.1 405B, TP8 CP16 PP16 DP8, s=131072, 16,384 H100s", llama3Run(8, 16, 131072, 16, "full"), 380, issueTolerance},
}

// TestPublishedLlama3Runs plans Table 4 of Dubey et al. 2024 and compares the model
// FLOP/s per GPU: each run must fit, and the prediction stay within its tolerance.
func TestPublishedLlama3Runs(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of 16,384 devices")
	}
	var es, abs []float64
	for _, c := range llama3Runs {
		res, err := Run(context.Background(), c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s: ran, but the plan does not fit: %v", c.name, res.Diagnostics)
			continue
		}
		st := res.Step
		// The paper's model FLOP/s, counted as MFU formulas count them (Narayanan et al.
		// 2021; Megatron-LM's num_floating_point_operations; torchtitan's
		// num_flop_per_token): 6 per parameter besides the input embedding, and
		// 12 L h s for the attention, the whole s^2 score matrix though the model is
		// causal. The planner's ModelFLOPsPerStep counts the causal half (what the
		// kernels compute); at 131,072 tokens the two differ by 40%, so the comparison
		// is of the tokens per second, in the paper's units.
		a, err := arch.Parse(llama405BConfig)
		if err != nil {
			t.Fatal(err)
		}
		seq := float64(c.r.Model.Architecture.Seq)
		perToken := 6*float64(a.Params()-a.EmbeddingWeightParams()) + 12*float64(a.NumLayers)*float64(a.HiddenSize)*seq
		got := st.TokensPerSecond / float64(st.Devices) * perToken / 1e12
		e := (got - c.tflopsPerGPU) / c.tflopsPerGPU
		es, abs = append(es, e), append(abs, math.Abs(e))
		t.Logf("%-58s predicted %4.0f TFLOP/s per GPU, published %3.0f: error %+5.1f%% (Dubey et al. 2024, Table 4)", c.name, got, c.tflopsPerGPU, 100*e)
		if math.Abs(e) > c.tolerance {
			t.Errorf("%s: predicted %.0f TFLOP/s per GPU, published %.0f: error %+.1f%% beyond %.0f%%", c.name, got, c.tflopsPerGPU, 100*e, 100*c.tolerance)
		}
	}
	t.Logf("Dubey et al. 2024: %d runs expressed, median |error| %.1f%%, signed median %+.1f%%", len(es), 100*median(abs), 100*median(es))
}

// TestPublishedShardedRuns plans each published FSDP and context-parallel run exactly
// as it ran and compares the predicted tokens per second per GPU with the published
// figure, within the run's tolerance; a run that ran must fit. Every error is logged,
// with the median and signed median error per source.
func TestPublishedShardedRuns(t *testing.T) {
	errs := map[string][]float64{}
	var sources []string
	for _, c := range shardedRuns {
		res, err := Run(context.Background(), c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but the plan does not fit: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		got := res.Step.TokensPerSecond / float64(res.Step.Devices)
		e := (got - c.tokensPerGPU) / c.tokensPerGPU
		src := benchmarkOf(c.source)
		if _, ok := errs[src]; !ok {
			sources = append(sources, src)
		}
		errs[src] = append(errs[src], e)
		t.Logf("%-56s predicted %7.0f tokens/s/GPU, published %6.0f: error %+5.1f%% (MFU %.1f%%; %s)", c.name, got, c.tokensPerGPU, 100*e, 100*res.Step.MFU, c.source)
		switch {
		case c.gap == "" && c.tolerance > issueTolerance:
			t.Errorf("%s: tolerance %.0f%% beyond issue 19's %.0f%% without a known gap", c.name, 100*c.tolerance, 100*issueTolerance)
		case c.gap != "" && math.Abs(e) <= issueTolerance:
			t.Errorf("%s: error %+.1f%% now within %.0f%%: the gap (%s) is closed, hold the case to the target", c.name, 100*e, 100*issueTolerance, c.gap)
		case math.Abs(e) > c.tolerance:
			t.Errorf("%s: predicted %.0f tokens/s/GPU, published %.0f (%s): error %+.1f%% beyond %.0f%%", c.name, got, c.tokensPerGPU, c.source, 100*e, 100*c.tolerance)
		case c.gap != "":
			t.Logf("    beyond %.0f%%, a known gap: %s", 100*issueTolerance, c.gap)
		}
	}
	// Table 2's trend: from one row to the next the sequence doubles and the context
	// degree with it.
	var prev, prevGot float64
	for _, c := range shardedRuns {
		if !strings.Contains(c.source, "Table 2") {
			continue
		}
		res, err := Run(context.Background(), c.r)
		if err != nil || !res.Feasible {
			continue // reported above
		}
		got := res.Step.TokensPerSecond / float64(res.Step.Devices)
		if prev > 0 {
			want, ratio := c.tokensPerGPU/prev, got/prevGot
			if ratio > 1.4*want || ratio < want/1.4 { // CP 2 to 4: 1.37 (gapRing)
				t.Errorf("%s: throughput falls to %.2f of the row before, measured %.2f", c.name, ratio, want)
			}
		}
		prev, prevGot = c.tokensPerGPU, got
	}
	for _, src := range sources {
		es := errs[src]
		abs := make([]float64, len(es))
		for i, e := range es {
			abs[i] = math.Abs(e)
		}
		t.Logf("%s: %d runs expressed, median |error| %.1f%%, signed median %+.1f%% (issue 19's targets: 10%%, within 5%%)", src, len(es), 100*median(abs), 100*median(es))
	}
}

// benchmarkOf is the benchmark a shardedRun's source names, without its table or
// notes: "torchtitan 2024-12, Table 4" is torchtitan 2024-12.
func benchmarkOf(source string) string {
	if i := strings.IndexAny(source, ",("); i > 0 {
		return strings.TrimSpace(source[:i])
	}
	return source
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// shardedMemory is a device memory figure a torchtitan benchmark published for one of
// shardedRuns (by name): the run's "Memory(GiB)" column.
type shardedMemory struct {
	gib float64
	// bound is how far from the published figure the plan may fall: issue 19's 10%,
	// or, where gap says why the row misses it, that known gap's bound. Above the
	// published figure, 10% at most (a plan above it would refuse a run that ran,
	// where the device is tight) unless the gap is one of planning too much.
	bound float64
	gap   string
}

// memoryTolerance is issue 19's bound on a published peak's error.
const memoryTolerance = 0.10

// torchtitanMemory are the memory figures of torchtitan's benchmarks: Tables 1 to 6 of
// December 2024 (benchmarks/llama3_h100_202412_torchtitan.md) and Trainy's H200 runs (benchmarks/llama3-8b_h200_202506_trainy-
// whitefiber.md); the async TP benchmark of June 2025 published none. What the figure
// is: torchtitan's DeviceMemoryMonitor (torchtitan/metrics.py at 9dec370; train.py logs
// "memory: {max_reserved_gib}GiB") reads torch.cuda.memory_stats'
// "reserved_bytes.all.peak", the caching allocator's reserved peak since the last log,
// in GiB (2^30 bytes), "the maximum across all GPUs" (the benchmark's footnote 1). So
// each is compared with the plan's most loaded stage less its framework memory
// (MemoryBytes - FrameworkBytes: the allocated peak and the caching allocator's
// reserve, wire.Memory; the CUDA context and workspaces outside the allocator are not
// in the reading), in GiB.
//
// Tables 5's and 6's runs keep their stage's weights gathered and its gradients whole in fp32
// through the step (parallelism.reshard step: FSDP2 under PyTorch's pipelining, as
// torchtitan runs FSDP with PP; analytic.Options.KeepGathered). Planned layer by layer,
// as before that rule, Table 6's fell 55% to 59% below the published figures (33.6 GiB
// of 75.3 at CP 1), and Table 5's 60% (1F1B) and 27% (Interleaved 1F1B). Table 5's
// Interleaved 1F1B row, with as many microbatches as ranks (8), was planned 19% above
// (86.3 GiB) while interleaving was ordered as Megatron-LM does, every forward before the
// first backward, so that the last rank's head chunk kept all 8 microbatches (24.7 GiB
// in flight); ordered as PyTorch's ScheduleInterleaved1F1B, which torchtitan ran
// (interleaved-pytorch:2: a warm-up of (v-1)p + 2(p-1-rank) forwards), it is 5.6% below.
// PyTorch's PipelineStage holds two boundary tensors per microbatch of the step beside
// the kept activations (cluster.PipelineStageBufferBytes: the receive buffers of every
// microbatch's input and output gradient, and the outputs awaiting their backward):
// 16 x 128 MiB, 2 GiB a stage (4 GiB on an interleaved device's two chunks). Priced,
// Table 6's rows went from -11.5, -12.2, -13.3 and -20.1% to -8.8, -9.5, -10.7 and
// -17.7%, Table 5's 1F1B row from -19.3% to -16.8% and its Interleaved 1F1B row from
// -5.6% to +0.1%.
//
// The losses as torchtitan ran them: eager F.cross_entropy on fp32 logits in December
// 2024 (unfused), PyTorch's loss parallelism with TP (loss-parallel: Table 4's rows were
// 25% and 20% below while planned as unfused), and compiled in June 2025 (fused:
// Trainy's rows were 38-39% above while planned as unfused, the "30 GiB more" the same
// policy seemed to keep on H100s in December 2024 being the eager loss's fp32 copies).
var torchtitanMemory = map[string]shardedMemory{
	"Llama 3.1 8B, FSDP 8, b=2 s=8192, eager":                         {82.4, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 8, b=2 s=8192, torch.compile":                 {77.0, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 8, b=2 s=8192, compile + Float8":              {76.8, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 128, b=2 s=8192, eager":                       {67.0, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 128, b=2 s=8192, torch.compile":               {62.0, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 128, b=2 s=8192, compile + Float8":            {61.8, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 8 CP 1, s=32768, compile + Float8":            {83.9, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 4 CP 2, s=65536, compile + Float8":            {84.2, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 2 CP 4, s=131072, compile + Float8":           {84.0, memoryTolerance, ""},
	"Llama 3.1 8B, FSDP 1 CP 8, s=262144, compile + Float8":           {84.5, memoryTolerance, ""},
	"Llama 3.1 405B, FSDP 8 CP 1 TP 8 PP 8, s=32768, 4D":              {75.3, 0.20, memGap4D},
	"Llama 3.1 405B, FSDP 4 CP 2 TP 8 PP 8, s=65536, 4D":              {75.9, 0.20, memGap4D},
	"Llama 3.1 405B, FSDP 2 CP 4 TP 8 PP 8, s=131072, 4D":             {77.1, 0.20, memGap4D},
	"Llama 3.1 405B, FSDP 1 CP 8 TP 8 PP 8, s=262144, 4D":             {84.9, 0.20, memGap4D},
	"Llama 3.1 405B, FSDP 8 TP 8 PP 8, b=32 s=8192, 1F1B":             {82.5, 0.25, memGap4D},
	"Llama 3.1 405B, FSDP 8 TP 8 PP 8, b=32 s=8192, Interleaved 1F1B": {72.7, memoryTolerance, ""},
	"Llama 3.1 70B, FSDP 32 TP 8, b=16 s=8192, compile + Float8":      {71.9, 0.13, memGap2D},
	"Llama 3.1 70B, FSDP 32 TP 8, b=16 s=8192, + AsyncTP":             {67.6, memoryTolerance, ""},
	"Llama 3.1 8B, 32 H200, FSDP 32, b=2 s=8192, compile + Float8":    {47.96, memoryTolerance, ""},
	"Llama 3.1 8B, 64 H200, FSDP 64, b=2 s=8192, compile + Float8":    {46.97, memoryTolerance, ""},
}

// The known gaps of torchtitan's memory figures.
const (
	// memGap2D: Table 4's vanilla TP run, full recomputation, 11% below. Its peak is the
	// loss's backward pass over 80 kept block inputs; the loss is PyTorch's loss
	// parallelism (torchtitan's with TP: cross_entropy loss-parallel), whose backward
	// holds 16 bytes a logit of the device's vocabulary shard (12 as F.cross_entropy's
	// fused kernels were planned before: 25% and 20% below), and whose output layer
	// keeps its all-gathered input (the async TP row now 5.6% below). The published figures differ by 4.3 GiB between vanilla and async TP, both
	// compiled with the same loss and recomputation, and what is left is not published.
	//
	// Read in a later round (torchtitan 9dec370, torch 1963fc8), the two rows allocate
	// the same tensors at the peak, so those 4.3 GiB are no tensor the plan misses:
	// apply_compile compiles each TransformerBlock and nothing else, so the final norm,
	// the output layer and the loss, where the peak is, run eagerly and alike in both;
	// async TP changes only the compiled blocks, whose fused operators allocate the
	// large tensors vanilla TP's collectives do (_fused_all_gather_matmul_impl returns
	// the gathered input in a new tensor, A_flat; _fused_matmul_reduce_scatter_impl
	// writes the t stacked partials into one, stacked_partials), and its symmetric
	// memory is mapped by CUDASymmetricMemoryAllocator with cuMemCreate, outside the
	// caching allocator whose reserved peak the figure is (it neither adds nor saves).
	// What the caching allocator keeps beyond the allocated peak (the segments the
	// blocks' forward pass left, which the loss's 7.8 GiB fp32 tensors cannot reuse),
	// or the runs' own variation, is what differs. A tensor both rows miss would have
	// to be 0.9 to 10.5 GiB at the loss's peak (the vanilla row within 10%, the async
	// TP row not over 10% above). The tensors alive there, counted from the source: the
	// 80 kept block inputs (20 GiB), the final norm's (0.75 GiB: torchtitan's eager
	// RMSNorm, norm_type rmsnorm, torchtitan/models/norms.py, keeps its input's fp32
	// copy x.float() for pow and mul and its 16-bit normalized output for the weight's
	// mul, 6 bytes an element where the plan keeps the 2 of its input: 0.5 GiB more,
	// not priced, no request states which norm a framework runs outside its blocks),
	// the output layer's gathered input (2 GiB), the kept log-softmax result and the
	// fused backward's three fp32 tensors (31.3 GiB: loss.py's
	// _nll_loss_and_log_softmax_backward, (grad_input + torch.exp(x)) * grad_output),
	// the state's shards (3.1 GiB) and the root module's gathered embedding and output
	// weights (0.5 GiB; FSDP2's lazy init keeps the root's gathered after the forward
	// pass, post_forward_mesh_info None): 58 GiB, below the plan's allocated 62.5. What
	// the published 67.6 and 71.9 GiB hold beyond that was found as no tensor; the caching
	// allocator's reserve is the lead, not priced (no measurement of torchtitan's
	// max_active beside its max_reserved was found: torchtitan logs both, metrics.py,
	// and published the reserved one).
	memGap2D = "Table 4's 70B vanilla TP run: 11% above the plan, 4.3 GiB above its async TP row, not explained"
	// memGap4D: Table 6, with the stage's state held through the step and PyTorch's
	// pipeline buffers (cluster.PipelineStageBufferBytes), 9% to 11% below at CP 1 to 4
	// (CP 1 and 2 now within 10%) and 18% at CP 8, where the published figure grows by
	// 7.8 GiB and the plan by 1.3 GiB; Table 5's 1F1B row 17% below. Not priced, and
	// larger in the December 2024 build than in the rule (PyTorch before pytorch#153383
	// kept every stage's m outputs in output_chunks until the next step, and left each
	// input's gradient in its receive buffer until clear_runtime_states): (m - f) more
	// boundaries of each, 0.25 GiB on the most loaded stage (m 8, f 7). Not priced
	// either: the last stage's m model outputs (output_chunks, which every build keeps
	// for the step's return: the 16-bit logits, 1 GiB each at Table 5's 32,768 tokens a
	// microbatch over TP 8's vocabulary shards), m - 1 beyond the one its loss holds:
	// 6.9 GiB would make the 1F1B rows' last stage as loaded as their second (70 GiB),
	// moving no figure, but put the Interleaved 1F1B row's last device (its head chunk's
	// and an eighth stage's) 9% above its published figure, so the rule is not taken
	// without a measurement of the last stage. The Float8 all-gathers
	// (llama3_405b.toml enable_fsdp_float8_all_gather) gather the products' weights in
	// 8 bits, priced now where they ran (training.fp8_fsdp_all_gather), which holds less
	// than the 16-bit weights planned before (below). Ruled out: the
	// loss (priced as torchtitan ran it, loss-parallel; the last stage, which holds it,
	// is not the most loaded); the microbatching (pipeline_parallel_microbatches
	// defaults to the pipeline degree at 9dec370, pipeline_llama.py: 8 of 4 sequences in
	// Table 5, 8 of 1 in Table 6). Table 5's 1F1B row and Table 6's CP 1 row run the
	// same tokens a microbatch (32,768) on the same layout and are planned alike, yet
	// were published 7.2 GiB apart (82.5 and 75.3 GiB): at least that much of the gap is
	// not a function of what the request states (the caching allocator's state, for
	// one: run_llama_train.sh sets expandable_segments, multinode_trainer.slurm, for
	// runs across hosts, does not). How much such a reserve can be is measured on one
	// older pipeline engine only: Megatron-DeepSpeed's ranks reserved 6.1% to 19.9%
	// beyond their allocated peak (median 15.3%, without expandable segments; the
	// deepspeed mode prices it on pipelines, bloomMemory in published_more_test.go),
	// which would cover these rows' 11-18%; but it was measured on another engine
	// (DeepSpeed's, not PyTorch's pipelining, whose stage buffers are kept from step to
	// step), the 8B rows across 16 hosts (Table 3, FSDP 128, no pipeline) are within 5%,
	// and Table 5's Interleaved 1F1B row, on the same layout, is at +0.1%: not priced
	// for torchtitan.
	//
	// Read for Table 5's 1F1B row in a later round (torch 1963fc8's pipelining,
	// torchtitan 9dec370), and not what it misses: the schedule, Schedule1F1B, warms
	// up min(m, p - s) forwards and holds them to its first backward (8 microbatches of
	// 15 layers on stage 0, 7 of 16 on stage 1), as planned; FSDP2 under it
	// (_PipelineStageBase.backward_maybe_with_nosync) turns gradient sync and
	// resharding off for every microbatch and, after the last one's whole backward,
	// calls each layer group's post_backward (run_post_backward), reduce-scattering
	// layer by layer with one or two fp32 reduce-scatter inputs of a layer alive (1.5
	// GiB each) when the stage holds no activations any more: below the planned peak.
	// What the figure is bounds what a rule could add: it is reserved_bytes.all.peak
	// since the last log, and torch.cuda.reset_peak_memory_stats sets that peak to the
	// reserved memory of the moment, which torchtitan's loop never returns (it calls
	// empty_cache once, building its DeviceMemoryMonitor, metrics.py), so the figure is
	// the run's high-water reserve, the first step's included (each block's backward
	// compiled lazily at its first backward, with the in-flight microbatches held),
	// unless a cudaMalloc retry freed the cache (torchtitan warns when
	// num_alloc_retries > 0); not priced, no such measurement of a first step. The plan
	// puts the 1F1B row 4.1 GiB below its Interleaved row (68.7 and 72.7 GiB), the
	// published figures 9.8 GiB above it: an amount added alike to both would have to
	// be 5.6 to 7.2 GiB (a fraction of the planned figure, 8.1% to 9.9%) to bring the
	// 1F1B row within 10% and keep the Interleaved row within 10% above.
	//
	// With Float8's FSDP all-gather priced (training.fp8_fsdp_all_gather, as
	// llama3_405b.toml sets it and Float8Handler turns it on with dp_shard > 1: every row
	// but CP 8's), the stage's gathered weights are held in fp8: 16 layers x 398.5M
	// weights a device, 5.9 GiB less (weights 13.4 -> 7.5 GiB on the most loaded stage),
	// and the gap widens where it ran: CP 1 -8.8% -> -16.4%, CP 2 -9.5% -> -17.0%, CP 4
	// -10.7% -> -18.0%, the 1F1B row -16.8% -> -23.7%, the Interleaved row +0.1% ->
	// -8.3%; CP 8 (FSDP 1, gathered in 16 bits) stays -17.7%. So the CP 8 row's growth
	// over the others was the toggle's (its 16-bit gathered weights, as predicted in
	// gapRing's reading), and what is left is a shortfall of 12 to 20 GiB common to the
	// 405B 1F1B rows, larger at the 1F1B row's 32,768 tokens in 4-sequence microbatches
	// than at Table 6's single sequences of as many tokens; what the uniform rule above
	// would need grows by the same 5.9 GiB. Not explained.
	memGap4D = "Table 5's 1F1B and Table 6's 405B runs: 16-24% above the plan with the fp8 all-gathers priced, not explained"
)

// TestPublishedShardedMemory compares each torchtitan run's published memory (the
// caching allocator's reserved peak, torchtitanMemory) with the plan's most loaded stage
// less its framework memory: never more than 10% above, and within 10% below or the
// bound of the row's known gap (a gap that closes must be removed). Every error is
// logged, with the median and signed median.
func TestPublishedShardedMemory(t *testing.T) {
	var es []float64
	seen := 0
	for _, c := range shardedRuns {
		m, ok := torchtitanMemory[c.name]
		if !ok {
			continue
		}
		seen++
		res, err := Run(context.Background(), c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but the plan does not fit: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		var peak wire.Stage
		for _, st := range res.Plan.Stages {
			if st.MemoryBytes > peak.MemoryBytes {
				peak = st
			}
		}
		mem := peak.Memory
		device, framework := peak.MemoryBytes, mem.FrameworkBytes // one stage a device
		if sc := res.Schedule; sc != nil && len(sc.StageDevices) > sc.Devices {
			// Interleaved: a device's chunks share it; the schedule's simulation gives
			// each device's peak, with the framework memory its chunks share.
			d := slices.Index(sc.PeakMemoryBytes, slices.Max(sc.PeakMemoryBytes))
			device, framework = sc.PeakMemoryBytes[d], 0
			for i, dev := range sc.StageDevices {
				if dev == d {
					framework += res.Plan.Stages[i].Memory.FrameworkBytes
				}
			}
		}
		got := float64(device-framework) / (1 << 30)
		e := got/m.gib - 1
		es = append(es, e)
		gib := func(b int64) float64 { return float64(b) / (1 << 30) }
		t.Logf("%-60s reserved %5.1f GiB, published %5.1f: %+5.1f%% (its most loaded stage: weights %.1f, grads %.1f, optimizer %.1f, activations %.1f, temporary %.1f, reserve %.1f; %s)",
			c.name, got, m.gib, 100*e, gib(mem.WeightsBytes), gib(mem.GradsBytes), gib(mem.OptimizerBytes), gib(mem.ActivationBytes), gib(mem.TemporaryBytes), gib(mem.ReservedBytes), c.source)
		switch {
		case m.gap == "" && m.bound > memoryTolerance:
			t.Errorf("%s: memory bound %.0f%% beyond issue 19's %.0f%% without a known gap", c.name, 100*m.bound, 100*memoryTolerance)
		case e > memoryTolerance && (m.gap == "" || e > m.bound):
			t.Errorf("%s: %.1f GiB planned, %.1f published: %+.1f%%, above by more than %.0f%% (or its gap's bound)", c.name, got, m.gib, 100*e, 100*memoryTolerance)
		case m.gap != "" && math.Abs(e) <= memoryTolerance:
			t.Errorf("%s: %+.1f%% now within %.0f%%: the gap (%s) is closed, hold the row to the target", c.name, 100*e, 100*memoryTolerance, m.gap)
		case e < -m.bound:
			t.Errorf("%s: %.1f GiB planned, %.1f published: %+.1f%%, below by more than %.0f%%", c.name, got, m.gib, 100*e, 100*m.bound)
		case m.gap != "":
			t.Logf("    beyond %.0f%%, a known gap: %s", 100*memoryTolerance, m.gap)
		}
	}
	if seen != len(torchtitanMemory) {
		t.Errorf("%d of torchtitanMemory's %d figures name a run of shardedRuns", seen, len(torchtitanMemory))
	}
	abs := make([]float64, len(es))
	for i, e := range es {
		abs[i] = math.Abs(e)
	}
	t.Logf("torchtitan memory: %d runs with a published figure, median |error| %.1f%%, signed median %+.1f%% (issue 19's target: within 10%%)", len(es), 100*median(abs), 100*median(es))
}

// TestLlama3AsRunMemoryGap plans Table 4's two 8K rows as Dubey et al. 2024 section
// 3.3.2 says they ran, without activation checkpointing (recompute none), and holds the
// known memory gap this leaves: the planner does not fit them on an 80 GB H100, so
// llama3Runs plan them with full recomputation. An infeasible plan has no stages, so
// the same requests are planned on the h200 preset (141 GiB, the same memory rules) to
// read each device's peak, summed over its eight chunks. The test asserts the finding
// that rules out the paper's own remedy as the missing rule: the activations alone (the
// one-layer chunks' microbatches in flight under the interleaved schedule, 128 to 143
// at 0.60 GiB each) exceed the H100's usable memory, so dropping the stage input and
// output buffers that torch.distributed.pipelining keeps (PipelineStageBufferBytes,
// which the paper's "proactively deallocate ... the input and output tensors of each
// pipeline stage" would remove, 8 and 16 GiB a device) cannot make them fit. If the
// rows start to fit on the H100, the gap is closed: plan llama3Runs without
// recomputation.
func TestLlama3AsRunMemoryGap(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of 16,384 devices")
	}
	h100, err := cluster.LookupDevice("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	usable := h100.Device.MemoryLimitBytes(1)
	for _, c := range llama3Runs[:2] {
		r := *c.r
		r.Training.Recompute = "none"
		res, err := Run(context.Background(), &r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Feasible {
			t.Errorf("%s: fits without recomputation on the H100: the known gap is closed, plan llama3Runs as run", c.name)
			continue
		}
		r.Cluster.Device = "h200"
		big, err := Run(context.Background(), &r)
		if err != nil || big.Plan == nil {
			t.Fatalf("%s on the h200 preset: %v %v", c.name, err, big.Diagnostics)
		}
		pp := r.Parallelism.Pipeline
		total, act, bufs := make([]int64, pp), make([]int64, pp), make([]int64, pp)
		for j, st := range big.Plan.Stages {
			total[j%pp] += st.MemoryBytes
			act[j%pp] += st.Memory.ActivationBytes
			bufs[j%pp] += st.Memory.PipelineBufferBytes
		}
		d := 0
		for i := range total {
			if total[i] > total[d] {
				d = i
			}
		}
		gib := func(b int64) float64 { return float64(b) / (1 << 30) }
		t.Logf("%-54s no recomputation: device %d peaks at %.1f GiB (activations %.1f, pipeline stage buffers %.1f), %.1f GiB usable on an H100",
			c.name, d, gib(total[d]), gib(act[d]), gib(bufs[d]), gib(usable))
		if act[d] <= usable {
			t.Errorf("%s: the activations (%.1f GiB) fit the H100's %.1f GiB: the gap is no longer the in-flight activations; revisit llama3Run's note",
				c.name, gib(act[d]), gib(usable))
		}
	}
}
