package request

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// moreRun is a published dense pre-training run from a source independent of the other
// tables of this package (issue 19.7: as many independent sources as can be found),
// planned as a request with the run's own model, parallelism, batch and schedule. The
// published figure is a step time, measured or derived from the source's own
// throughput with the source's own FLOP count (each table's comment says which).
type moreRun struct {
	name, source string
	r            *wire.Request
	// seconds is the published step time, or the one the source's TFLOP/s per GPU
	// gives with its FLOP count.
	seconds float64
	// gap, when set, names the known gap that lets the run miss issue 19's 25% (by at
	// most as much again: TestMorePublishedRuns).
	gap string
	// memGB, when set, is the device memory the source published for the run (GB, 1e9
	// bytes): compared with the plan's most loaded stage.
	memGB float64
}

// gpt2Config is a GPT-style decoder as a gpt2 config.json: LayerNorm, a GELU MLP of
// 4h, learned positions; tied says whether the output layer shares the embedding,
// dropout whether it has dropout (GPT-2's 0.1; without, every dropout probability 0),
// and exactGELU whether the MLP runs the exact GELU (nn.GELU, one kernel) rather than
// GPT-2's gelu_new (its tanh form, eight operators in eager PyTorch). The matrix
// products, and so the FLOPs, are the same either way.
func gpt2Config(h, heads, layers, positions, vocab int, tied, dropout, exactGELU bool) []byte {
	p := ""
	if !dropout {
		p = `, "attn_pdrop": 0, "resid_pdrop": 0, "embd_pdrop": 0`
	}
	if exactGELU {
		p += `, "activation_function": "gelu"`
	}
	return []byte(fmt.Sprintf(`{"model_type": "gpt2", "n_embd": %d, "n_head": %d, "n_layer": %d, "n_positions": %d, "vocab_size": %d, "tie_word_embeddings": %t%s}`,
		h, heads, layers, positions, vocab, tied, p))
}

// megatronStepFLOPs is the FLOP count Megatron-LM divides by the step time to report
// TFLOP/s per GPU (megatron/training/training.py, num_floating_point_operations, as of
// Megatron-Core r0.8.0, for multi-head attention and a 4h MLP):
// 12 B s L h^2 (6 + s/h + V/(2 L h)) = 72 B s L h^2 (1 + s/6h + V/12Lh) (Narayanan et
// al. 2021's model FLOPs, the whole s^2 score matrix counted).
func megatronStepFLOPs(batch, seq, layers, h, vocab int) float64 {
	b, s, l, hh, v := float64(batch), float64(seq), float64(layers), float64(h), float64(vocab)
	return 72 * b * s * l * hh * hh * (1 + s/(6*hh) + v/(12*l*hh))
}

// megatronH100 is a row of the Megatron-LM README's weak-scaling table ("Training speed
// and scalability", NVIDIA/Megatron-LM README.md and images/model_table.png, added
// 2024-07-15; the figures' legend names Megatron-Core r0.8.0): GPT models, vocabulary 131,072, sequence
// 4,096, on up to 6,144 H100s, with data-parallel (--overlap-grad-reduce,
// --overlap-param-gather), tensor-parallel (--tp-comm-overlap) and pipeline
// communication overlapped; the throughput "measured for end-to-end training". The
// parameter counts the table names (1.7B for h 2,048 and 24 layers; 177B for GPT-3's
// shape) are those of untied input and output embeddings.
//
// Assumed where the README does not say (a user who asked for the launch scripts,
// NVIDIA/Megatron-LM#1571, has no answer): bf16 (the MFU column is the TFLOP/s over the
// H100's dense bf16 989), Megatron-Core with Transformer Engine launched without CUDA
// graphs (the megatron framework mode), Transformer Engine's cuDNN fused attention,
// sequence parallelism with tensor parallelism, the distributed optimizer (which
// --overlap-param-gather needs) with fp32 gradient buffers, microbatches of one
// sequence, 1F1B (the table gives no virtual pipeline size), learned positions (a few
// million parameters either way), and DGX H100 nodes of 8 with the h100-sxm preset's
// InfiniBand NDR. The loss is Megatron-LM's unfused vocab-parallel cross-entropy
// (cross_entropy vocab-parallel): r0.8.0 fuses it only when asked
// (--cross-entropy-loss-fusion; cross_entropy_loss_fusion defaults to False in
// megatron/core/model_parallel_config.py at tag core_r0.8.0), and the README names the
// flags it set, the overlaps alone. Over the 131,072 words of the 1.7B model's
// unsharded head that is 8.5 ms of a 113 ms microbatch (52 bytes a logit against the
// fused kernel's 10).
//
// The two smallest models (hidden 2,048 and 4,096) run slower than predicted (on main
// 1771df0 +18.5% and +10.4%, optimistic: the table's step is the longer), where 16B
// errs -0.2% and the larger ones within 6% but for 32B's -23.1%: the work outside the
// blocks' products weighs most there. Counted: the unfused loss and Megatron-Core's
// gradient buffer (cluster.Framework.MainGradBuffer: the embedding's gradient added to
// it each microbatch, the buffer zeroed each step), which took them from +38.5% and
// +28.3%. Not counted, for want of a source that prices them on an H100: the attention's
// dropout (Megatron-LM's --attention-dropout defaults to 0.1; the cuDNN rates of Shah
// et al. 2024 are without it), and the data-parallel buckets whose reduction cannot
// start before the backward pass ends (the embedding's, the last) or whose gather must
// end before the forward pass starts (the same bucket). The README's launch
// configuration is not published (NVIDIA/Megatron-LM#1571 has no answer).
//
// Priced since: each of Megatron-Core's buckets (max(40M, 1M x 48) elements, 80-108
// a device each way) as NCCL's tuner prices a collective of its bytes
// (cluster.NCCLTune at NCCL 2.27): at TP 8 every data-parallel ring has one GPU on
// each of 48 nodes, and a bucket of 191 MB of fp32 gradients takes the Simple ring,
// 666 µs of latency beside 3.7 ms of bytes at one NIC; the weak-scaling median +1.2% ->
// -1.5%, GPT 32B TP8 DP48 -16.3% -> -23.7%. What keeps that row pessimistic is not
// the latency: its reduce-scatter's bytes alone (15.9 GB of fp32 gradients, which
// r0.8.0 forces for bf16: megatron/training/arguments.py, "bfloat16 requires gradient
// accumulation and all-reduce to be done in fp32"; 310 ms over one NIC) outlast the
// last microbatch's backward (about 130 ms) by more than the 0.18 s by which the
// table's step beats the planned pipeline; NCCL's PAT (2.23, September 2024, after
// r0.8.0) would not be picked for buckets of that size either.
//
// Read again at tag core_r0.8.0 (baf94af3) for the 32B row (-23.1%: 1.160 s planned,
// 0.892 s published; the pipeline 790 ms, 319 ms of data-parallel traffic exposed):
//   - The fp32 reduction is r0.8.0's: megatron/training/arguments.py sets
//     accumulate_allreduce_grads_in_fp32 for every bf16 run (lines 299-308, no flag
//     turns it off), and training.py hands it to DistributedDataParallelConfig as
//     grad_reduce_in_fp32 (lines 446-452); a bf16 reduction (precision mixed) would
//     plan -10.4%, not a setting r0.8.0 could run.
//   - One NIC a ring is the node's share, not NCCL's choice: at TP 8 the node's eight
//     GPUs are eight data-parallel groups of one GPU a node, whose reduce-scatters and
//     all-gathers run at once (their tensor-parallel collectives keep them in step),
//     so the node's eight NICs carry eight rings' bytes whichever NIC each channel
//     takes (PXN or not): 50 GB/s a ring. At TP 4 (16B) a group has two GPUs a node
//     and two NICs, the 274 ms against 32B's 560 ms for the same 4.0B weights a GPU.
//   - What overlap hides: forward_backward_no_pipelining runs every microbatch but the
//     last under no_sync (pipeline_parallel/schedules.py lines 437-455), and the DDP
//     hook marks a bucket ready only on the last microbatch (is_last_microbatch,
//     distributed/distributed_data_parallel.py no_sync), so the reduce-scatters hide
//     behind one microbatch's backward (about 130 ms of 4); the distributed optimizer's
//     zero_grad_buffer launches the first bucket's all-gather and each forward pre-hook
//     the next only once it waits on the one before (optimizer/distrib_optimizer.py
//     lines 1331-1337 and 1466-1475: one in flight), so the gathers hide behind the
//     first forward at best. As planned.
//
// What the row's launch would have to differ in is not published (NVIDIA/Megatron-LM#1571,
// whose asker's 70B at the table's sizes ran out of memory). Not a source, only the
// scale of it: two microbatches of two sequences would plan -5.2%, one of four +4.8%
// (the reduce-scatters behind a longer last backward); the README names no microbatch
// size, so the rows keep one.
func megatronH100(name string, heads, h, layers, tp, pp, dp, batch int, tflopsPerGPU float64, gap string) moreRun {
	const seq, vocab = 4096, 131072
	sp, tpOverlap := false, ""
	if tp > 1 {
		sp, tpOverlap = true, OverlapOn
	}
	r := &wire.Request{
		Model: wire.ModelSpec{Architecture: &wire.Architecture{Config: gpt2Config(h, heads, layers, seq, vocab, false, true, false), Seq: seq,
			Framework: "megatron", Attention: "cudnn", CrossEntropy: "vocab-parallel"}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
		Parallelism: wire.Parallelism{Pipeline: pp, Data: dp, Tensor: tp, SequenceParallel: sp, Sharding: "zero1",
			OverlapGradReduce: OverlapOn, OverlapParamGather: OverlapOn, OverlapTensorComm: tpOverlap},
		Training: wire.Training{Precision: "mixed-fp32-grads"},
		Schedule: wire.Schedule{Name: "1f1b", Microbatches: batch / dp, MicrobatchSize: 1},
	}
	gpus := tp * pp * dp
	return moreRun{
		name:    fmt.Sprintf("Megatron-LM GPT %s, TP%d PP%d DP%d, batch %d, %d H100s", name, tp, pp, dp, batch, gpus),
		source:  "Megatron-LM README (Megatron-Core r0.8.0), weak scaling",
		r:       r,
		seconds: megatronStepFLOPs(batch, seq, layers, h, vocab) / (tflopsPerGPU * 1e12 * float64(gpus)),
		gap:     gap,
	}
}

// korthikantiRun is a row of Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", arXiv 2205.05198), Table 5: seconds per
// iteration measured on Selene (DGX A100 80 GB, NVSwitch, eight HDR InfiniBand ports
// per node) with Table 3's configurations: tensor parallelism 8, sequence 2,048,
// vocabulary 51,200, the interleaved schedule with three chunks for 175B and 530B, no
// data parallelism (Table 5; Table 5's figures as calculon-ai/calculon's
// calculon/llm/validation.py transcribes them) or eight-way (the abstract's 530B runs
// on 2,240 GPUs). Full recomputation against sequence parallelism with selective
// recomputation. Planned as publishedRuns plans Narayanan et al.'s rows: Megatron-LM
// of 2022's unfused attention (eager), its fused kernels (cuda-graphs), the
// all-reduce after the backward (section 6.3: "we do not use any overlapping of
// gradient all-reduces"), tied embeddings, and Megatron-LM of 2022's unfused loss
// (cross_entropy vocab-parallel: megatron/model/gpt_model.py then called
// mpu.vocab_parallel_cross_entropy on output.float(), fp16_lm_cross_entropy off by
// default; megatron/mpu/cross_entropy.py the same kernels as Megatron-Core r0.8.0's).
func korthikantiRun(name string, h, heads, layers, p, v, dp, m, mb int, selective bool, seconds float64) moreRun {
	recompute, setting := "full", "full recompute"
	if selective {
		recompute, setting = "selective", "SP + selective"
	}
	sched := "1f1b"
	if v > 1 {
		sched = fmt.Sprintf("interleaved:%d", v)
	}
	return moreRun{
		name:   fmt.Sprintf("Korthikanti %s, TP8 PP%d DP%d, %s", name, p, dp, setting),
		source: "Korthikanti et al. 2022, Table 5 and abstract",
		r: &wire.Request{
			Model: wire.ModelSpec{Architecture: &wire.Architecture{Config: gpt2Config(h, heads, layers, 2048, 51200, true, true, false), Seq: 2048, Attention: "eager", Framework: "cuda-graphs",
				CrossEntropy: "vocab-parallel"}},
			Cluster:     wire.ClusterSpec{Device: "a100-80gb", DevicesPerNode: 8, LinkIntra: "nvswitch2", LinkInter: "ib-hdr"},
			Parallelism: wire.Parallelism{Pipeline: p, Data: dp, Tensor: 8, SequenceParallel: selective},
			Training:    wire.Training{Recompute: recompute},
			Schedule:    wire.Schedule{Name: sched, Microbatches: m, MicrobatchSize: mb},
		},
		seconds: seconds,
	}
}

// mptRun is a row of MosaicML's LLM Foundry benchmark tables (mosaicml/llm-foundry,
// scripts/train/benchmarking/README.md, "MPT Training Benchmarks"): measured on the
// MosaicML platform with Composer and PyTorch FSDP; the H100 tables and the A100 80 GB
// one as pull request #838 (January 2024) left them, the A100 40 GB one as the
// repository's first commit of the file (May 2023: PyTorch 1.13.1, Triton flash
// attention; sweep.sh). Each row gives its model (d_model, heads and layers of
// scripts/train/yamls/pretrain/mpt-*.yaml, planned as model_type mpt (mptConfig): a GPT
// decoder with a 4h MLP of nn.GELU, biases (no_bias false: the table's NumParams count
// them, arch.TestParamsMPTLLMFoundry), no dropout, learned positions, tied embeddings,
// vocabulary 50,368: NumParams grow with the sequence by seq x d_model), sharding
// (FULL_SHARD: fsdp; SHARD_GRAD_OP: zero2), microbatch size, gradient accumulation,
// activation checkpointing (full recomputation) and tokens per second per GPU.
//
// The loss is flash-attn's fused cross-entropy (cross_entropy fused): MPT's loss_fn
// defaults to fused_crossentropy, flash_attn.losses.cross_entropy.CrossEntropyLoss
// (ignore_index=-100), in both eras (llmfoundry/models/mosaic_gpt/mosaic_gpt.py at the
// May 2023 commit, llmfoundry/models/mpt/modeling_mpt.py at #838; the pretrain yamls set
// no loss_fn), on the 16-bit logits autocast leaves the tied unembedding's product in,
// with flash-attn's default inplace_backward=False (the gradient a new tensor).
//
// The training loop is Composer's, and its two training metrics are planned
// (training.train_metrics 2): ComposerMPTCausalLM (MosaicGPT in May 2023) registers
// LanguageCrossEntropy and LanguagePerplexity as training metrics (use_train_metrics
// defaults to true), which Composer's Trainer updates on every microbatch's logits after
// its backward pass (a cross-entropy in fp32 under autocast each) and synchronises
// across every GPU after every batch (composer/trainer/trainer.py at v0.17.2,
// _eval_train_metrics and _compute_and_log_metrics; torchmetrics' gather_all_tensors).
// The throughput is Composer's SpeedMonitor's (collect_results.py takes the log's last
// throughput/samples_per_sec; the yamls' window_size 10 over submit_benchmarks.py's
// max_duration 30ba): samples over the wall clock of the last nine batches, each batch
// timed from the end of the one before, so the metrics' synchronisation, the callbacks
// and the data loader are inside it; evaluation is not (eval_interval 0, and the
// Trainer pauses its clock for it) and nothing is checkpointed (no save_folder).
//
// The large-scale H100 table's columns, checked against sweep.py and
// submit_benchmarks.py at #838: bf16 autocast (precision amp_bf16: sweep.py's
// --fsdp_config_mixed_precision PURE is parsed but never passed to mod_parameters, whose
// default, DEFAULT, is the table's MP Mode), SHARD_GRAD_OP for 1B and 3B and
// FULL_SHARD for the rest, activation checkpointing for 13B, 30B and 70B only, no
// activation CPU offload, limit_all_gathers, forward_prefetch and backward_prefetch
// BACKWARD_PRE, microbatches of 12, 8, 6, 16, 8 and 8 with no accumulation (the global
// batch is GPUs x microbatch), sequence 2,048, no torch.compile (the yamls set no
// compile_config), torch 2.1.0, Composer 0.17 and flash-attn 2.4.2 (setup.py's pins and
// its gpu-flash2 extra at #838). The cluster is not named; Databricks trained DBRX on
// its H100s "connected by 3.2Tbps Infiniband" (the DBRX announcement, March 2024), the
// h100-sxm preset's eight NDR NICs a node.
//
// Assumed: eager PyTorch (Composer runs the model's modules eagerly; the eager mode's
// per-operator host time and unfused operators: MPT's own, analytic.mptBlock and
// mptTraffic, read from LLM Foundry's source, not measured; the 16-bit residual stream
// of Composer's FSDP, which gathers the parameters in bf16 under mixed_precision DEFAULT
// and PURE), and the attention kernel each
// row ran: FlashAttention's Triton kernel (attention flash-triton, analytic.FlashTriton)
// for every table but the large-scale H100 one (sweep.sh passes no --attn_impl, and
// submit_benchmarks.py's default is triton), and in that one (sweep.py of #838)
// FlashAttention-2 (flash-attn 2.4.2) for 1B, 3B, 7B and 70B, triton for 13B and 30B.
// So planned, the rows' growth with the length is right (TestMPTSequenceSweep). Until
// the eager mode priced torch's exact GELU as GPT-2's eight-operator gelu_new (36 bytes an
// element of the MLP's inner width, not 4) every row erred slow, -5% to -26%, most for
// the smallest models; planned as GPT-2 or as MPT (its own counts) they now move by 2
// points at most, the A100 tables centred, the H100 rows fast, most the rows that ran
// FlashAttention-2 at scale (see moreRuns). Also assumed: mixed precision with fp32
// master weights (amp_bf16; "PURE" bf16 FSDP keeps its
// sharded fp32 parameters as well), the data-parallel gradient reduction overlapped as
// FSDP overlaps it, nodes of 8 with the H100 preset's InfiniBand NDR and, for the A100
// tables ("1600 Gbps node-node interconnect (RoCE)"), ib-hdr's 200 Gb/s per GPU.
func mptRun(table, model string, seq, gpus int, device string, mbs, accum int, sharding string, ckpt bool, tokensPerGPU float64, gap string) moreRun {
	shapes := map[string][3]int{ // d_model, heads, layers
		"125m": {768, 12, 12}, "350m": {1024, 16, 24}, "760m": {1536, 12, 24}, "1b": {2048, 16, 24}, "3b": {2560, 20, 32},
		"7b": {4096, 32, 32}, "13b": {5120, 40, 40}, "30b": {7168, 56, 48}, "70b": {8192, 64, 80},
	}
	sh := shapes[model]
	recompute, link, ck := "none", "", ""
	if ckpt {
		recompute, ck = "full", ", checkpointing"
	}
	if device != "h100-sxm" {
		link = "ib-hdr"
	}
	shard := map[string]string{"FULL_SHARD": "fsdp", "SHARD_GRAD_OP": "zero2"}[sharding]
	// The kernel that ran: the large-scale H100 table's sweep.py (#838) passes flash for
	// 1B, 3B, 7B and 70B and triton for 13B and 30B; every other table came from sweep.sh,
	// which passes none, and submit_benchmarks.py's default is triton.
	// The tables' MP Mode: Composer's FSDP mixed precision DEFAULT (amp_bf16) gathers the
	// parameters in bf16 and reduce-scatters the gradients in fp32 (reduce_dtype fp32:
	// precision mixed-fp32-grads, whose gradients move in fp32); PURE (bf16: the A100
	// 40 GB table and the A100 80 GB table's 70B rows) reduces them in bf16 (mixed).
	precision := "mixed-fp32-grads"
	if table == mptA100x40 || (table == mptA100x80 && model == "70b") {
		precision = "mixed"
	}
	attention := "flash-triton"
	if table == mptH100 && gpus >= 128 && (model == "1b" || model == "3b" || model == "7b" || model == "70b") {
		attention = "flash"
	}
	return moreRun{
		name:   fmt.Sprintf("MPT-%s, s=%d, %d %s, %s, mbs %d x %d%s", model, seq, gpus, device, sharding, mbs, accum, ck),
		source: "LLM Foundry MPT benchmarks, " + table,
		r: &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Config: mptConfig(sh[0], sh[1], sh[2], seq, attention), Seq: seq, Attention: attention, Framework: "eager", CrossEntropy: "fused"}},
			Cluster: wire.ClusterSpec{Device: device, Count: gpus, DevicesPerNode: 8, LinkInter: link},
			Parallelism: wire.Parallelism{Pipeline: 1, Data: gpus, Sharding: shard,
				OverlapGradReduce: OverlapOn, OverlapParamGather: OverlapOn},
			Training: wire.Training{Recompute: recompute, Precision: precision, TrainMetrics: 2},
			Schedule: wire.Schedule{Name: "1f1b", Microbatches: accum, MicrobatchSize: mbs},
		},
		seconds: float64(mbs*accum*seq) / tokensPerGPU,
		gap:     gap,
	}
}

// mptConfig is an MPT config.json as LLM Foundry's scripts/train/yamls/pretrain/mpt-*.yaml
// and submit_benchmarks.py build it: MPTConfig's defaults (biases, learned positions of
// max_seq_len rows, tied embeddings, no dropout, vocabulary 50,368), the run's length,
// low_precision_layernorm and the attention kernel the row ran (flash-triton: triton).
func mptConfig(d, heads, layers, seq int, attention string) []byte {
	impl := map[string]string{"flash-triton": "triton", "flash": "flash", "eager": "torch"}[attention]
	return []byte(fmt.Sprintf(`{"model_type": "mpt", "d_model": %d, "n_heads": %d, "n_layers": %d, "expansion_ratio": 4, "max_seq_len": %d, "vocab_size": 50368, "norm_type": "low_precision_layernorm", "attn_config": {"attn_impl": %q}}`,
		d, heads, layers, seq, impl))
}

// The LLM Foundry tables.
const (
	mptH100    = "H100 (2024-01)"
	mptA100x80 = "A100 80GB (2024-01)"
	mptA100x40 = "A100 40GB (2023-05)"
)

// The large-scale H100 rows that ran FlashAttention-2 (attn_impl flash, flash-attn
// 2.4.2: 1B, 3B and 7B) err fast by 16.0% to 19.4% (70B, checkpointed, +8.3% and
// +12.7%), where the 8-GPU rows that ran the Triton kernel at 2,048 tokens err +7% to
// +9%: measured, 7B at 128 GPUs (10,475 tokens/s a GPU) is no faster than at 8 with
// Triton (10,643), where the plan prices it 8% faster. Priced
// now: the slowdown from 128 to 512 GPUs (step x1.08 to x1.11), by Composer's
// training-metric synchronisation (TestMPTGPUCountSlowdown), and the flash path's own
// unpadding and padding around the kernel (analytic's mptFlashPadding: flash-attn's
// bert_padding, 40 bytes an element of the hidden width a layer). Until they were,
// these rows erred +26% to +31% (a known gap, beyond 25%). Not priced: the six host
// synchronisations a layer of the unpadding (nonzero and .item() for each of q, k and
// v), and whatever else keeps FlashAttention-2 from gaining over Triton here.
//
// The 8-GPU H100 sequence sweep's longest rows err slow: MPT-7B at 32,768 tokens
// -20.9%, MPT-13B at 32,768 -18.9%, MPT-1B at 16,384 -14.0% (on main 1771df0), where
// the same models at 2,048 to 8,192 tokens err +8% to -10%. Read for them (round 32):
//   - The kernel: the table came with #543 (b2a43a14, October 2023), whose sweep.sh
//     passes no --attn_impl (submit_benchmarks.py's default triton, image
//     mosaicml/pytorch:2.1.0_cu121) and whose setup.py installs triton-pre-mlir from
//     vchiley/triton's triton_pre_mlir_sm90 branch; attention.py's triton path imports
//     llmfoundry/models/layers/flash_attn_triton.py, Tri Dao's flash_attn_triton.py
//     copied at HazyResearch eff9fe6b, whose docstring says its forward is faster than
//     the CUDA kernel of the day (FlashAttention-1) and its backward slower, "overall
//     ... slightly slower". Priced with FlashAttention-1's H100 rates (attention
//     flash1) the three rows plan -21.7%, -19.7% and -14.9%; with FlashAttention-2's
//     +41.0%, +39.4% and +46.9%: the measured step lies between, as the sweep's growth
//     does (TestMPTSequenceSweep). Not FlashAttention-2, which sweep.sh never named.
//   - Where the gap sits: on the A100, whose Triton rates are a published figure's,
//     the sweep's priced growth from the shortest to the longest length is within 8%
//     of the measured (1B 2,048 to 32,768 +8%, 7B 4,096 to 32,768 +7%); on the H100,
//     whose Triton rate is derived (FlashAttention-2's H100 rate times the A100
//     figure's Triton-to-FlashAttention-2 ratio, analytic.FlashTriton), it is 12% to
//     25% too steep. So the H100's Triton rate at long lengths, an assumption, is where
//     the pessimism lies; the measured 7B row, if the rest of its step is right,
//     needs the pair near 195 TFLOP/s where the rule gives 139 at 16k (an estimate
//     from the row, not a rate to price). No H100 figure of the pre-MLIR kernel was
//     found, and the A100 figure's Triton bars may not be this kernel either
//     (Dao-AILab/flash-attention#390: asked whether the README's Triton is the
//     FlashAttention-1 Triton code, the maintainer points to OpenAI's Triton
//     repository's performance data). Left unpriced.
//   - Not the cause: activation checkpointing's rerun (the 1B row runs without it
//     and errs -14%; Composer's checkpoint_wrapper reruns the block's forward once,
//     as priced) nor FSDP's prefetch (each row's per-layer gathers and reduce-scatters
//     plan wholly hidden; the only cost priced is NCCL's SMs, 46 ms of the 7B row's
//     50 s).

// bloomRun is a BLOOM-style run of BigScience's Megatron-DeepSpeed on Jean Zay (Le Scao
// et al. 2022, "BLOOM", arXiv 2211.05100, section 3.4): 48 nodes of 8 A100 80 GB (384
// GPUs), sequence 2,048, vocabulary padded to 250,880, tied embeddings, bf16,
// --checkpoint-activations (full recomputation), DeepSpeed's BF16 optimizer ("it
// implements its own zero stage 1 equivalent": zero1; "written to accumulate gradients
// in fp32 ... 4bytes x params and it's not sharded": precision deepspeed-bf16, which
// also keeps the bf16 gradients until the next backward pass: bf16_optimizer.py and
// pipe/engine.py as microsoft/DeepSpeed#1801 merged them, 2022-04-19,
// update_hp_grads(clear_lp_grads=False)), the 1F1B pipeline, with the
// hidden size, heads, layers, data, tensor and pipeline sizes, microbatch and global
// batch of the run, on DeepSpeed's PipelineEngine (the deepspeed framework mode: its
// blocking sends and receives, Megatron-DeepSpeed's vocab-parallel loss, kernels
// launched from Python; with deepspeed-bf16, update_hp_grads after every microbatch's
// backward and the fp32 gradients all-reduced, in bf16: tr11-176B-ml.slurm's DeepSpeed
// config runs ZeRO stage 0 and sets no communication_data_type, which then is bf16,
// analytic.Precision.CommunicatedGradBytes; priced in fp32 until this round, the rows
// erred 1.4 points less, the TP 8 PP 6 ones 3 points). Assumed: a gpt2 config (BLOOM's ALiBi
// and embedding LayerNorm change no matrix product; its learned-position table here is
// 29M parameters of 176B), Megatron-DeepSpeed of 2022's unfused attention (eager
// attention), NVSwitch inside a node (Jean Zay's HPE
// nodes carry the HGX A100 board), and between nodes opa-nccl: Omni-Path at the rate
// NCCL reached on these very nodes in BigScience's own all-reduce benchmark (5.07 GB/s
// of bus bandwidth, 40% of the 100 Gb/s line rate: NCCL's InfiniBand-verbs transport
// over the hfi1 adapters, no GPUDirect RDMA), one interface a device at that rate, the
// most the measurement allows a device's own ring (cluster's opa-nccl preset). With
// ib-edr's 100 Gb/s line rate these rows erred +7% to +17% at TP 4 and at TP 8 with
// microbatches of 4 (median +11.0%, the log's row +11.8%), and the more so the more
// parameters a device holds: the topology benchmarks of 2022-02-25 at TP 8 (2,048
// sequences, h 14,336, 72 layers) erred +7% at DP 4 PP 12 (1.9B parameters a device,
// microbatches of 4), +11% at DP 8 PP 6, +15% at DP 12 PP 4 and +31-34% at DP 24 PP 2
// (11.3B), whatever the microbatch at DP 24: a per-step cost growing with the fp32
// gradients each replica all-reduces, which the measured network gives (it adds 13.4 s
// to the plan at DP 24 PP 2, 4.3 s to the log's row: its data-parallel all-reduce and
// all-gather from 1.4 s to 3.5 s, the tied all-reduce and the transfers the rest). Those
// earlier benchmarks are not rows here (their optimizer and split are not the
// production run's), nor are the single-node ones (below).
//
// The planner errs fast on all of them: +3% to +8% at TP 4 and +10% to +13% at TP 8
// with microbatches of 4 (+13% to +22% before the deepspeed mode and deepspeed-bf16's
// per-microbatch accumulation and fp32 all-reduce were priced: update_hp_grads is 5-7%
// of these steps, the blocking transfers about 1%, the all-reduce's second half under
// 1%; +7% to +17% with the network's line rate), as it errs on MT-NLG's DeepSpeed runs
// (publishedRuns: +29% to +34%) and not on Megatron-LM's own (Narayanan et al.'s and
// Korthikanti et al.'s rows: within 10%). What is left grows with the tensor-parallel
// size: over the 2022-02-25/26 benchmarks (h 12,288 to 14,336, 72 to 96 layers, GBS
// 2,016 or 2,048, planned as these rows), TP 1 (PP 48) errs -14%, TP 2 -11% to -2%,
// TP 4 -6% to +9%, TP 8 +3% to +18%; and at TP 8 alone halving the microbatch from 4
// to 2 costs 8% to 16% of the step in each of the nine pairs measured from 2022-02-21
// to 02-28 (h
// 14,336 at PP 12, PP 6 and PP 4, h 13,824 at PP 12 and PP 6, h 12,288, the 177B and
// 182B shapes), where at TP 4 it never costs anything (102.03 s against 102.27 s;
// 110.48 and 113.54 s against 111.89 s; 103.82 s against 113.21 s): about 13-16 ms a
// transformer layer and microbatch at TP 8, not at TP 4, not proportional to the
// microbatch's bytes or FLOPs, and present without the pipeline (BigScience's
// single-node TP 8 runs, TestBloomSingleNodeControl: +10% to +23%, though there 6-12 ms
// a layer and microbatch of 2 and 3 ms at microbatches of 1, so not a constant a layer
// and microbatch either). Ruled out, with
// DeepSpeed at 3401d25 (2022-02-28) and BigScience's flags:
//   - the host: BigScience ran with CUDA_LAUNCH_BLOCKING=1 (tr11-176B-ml.slurm, against a
//     hang), which serializes the host's launch time with the device's; they measured
//     it at 0-6% (chronicles-prequel.md, 200B on 80 and 160 GPUs: 91.04 against 97.20
//     and 84.59 against 84.44 TFLOP/s), and the plan's host time is 1.3 ms of a
//     block's 58-200 ms (17 and 64 kernels at 15 us);
//   - the pipeline engine's schedule: TrainSchedule (pipe/schedule.py) orders each
//     stage's passes as 1F1B and, before each pass, exchanges with one neighbour only
//     (RecvActivation and SendGrad with the stage before it ahead of a forward pass,
//     SendActivation and RecvGrad with the stage after it ahead of a backward pass), as
//     Megatron-LM's send_backward_recv_forward and send_forward_recv_backward do: no
//     lockstep beyond the blocking transfers, which are priced; its step count makes
//     the ThroughputTimer's synchronize unreachable (it advances in
//     DeepSpeedEngine.step, which the pipeline engine never calls); the partitioned
//     activation's PartitionedTensor.from_meta calls meta.tolist() on a device tensor,
//     a host synchronization a microbatch and pass, whose cost is the next kernel's
//     launch (microseconds), not a layer's 13 ms;
//   - activation checkpointing: BigScience passes --deepspeed-activation-checkpointing
//     without --partition-activations, --contigious-checkpointing, --checkpoint-in-cpu
//     or --synchronize-each-layer and its DeepSpeed config has no activation_checkpointing
//     section, so CheckpointFunction (activation_checkpointing/checkpointing.py) neither
//     synchronizes nor moves anything: it saves the RNG states (host copies of the seed
//     and offset) and reruns the layer, as Megatron-LM's does;
//   - the network's bandwidth: the data-parallel reduction and the pipeline's
//     transfers are per step and per stage boundary, where what is left is per layer;
//   - the pipeline's partitioned tensors (DeepSpeed's PipelineEngine slices each
//     boundary's activation and gradient over the tensor group and gathers them back,
//     three PartitionedTensor.full() a boundary and microbatch): priced now
//     (cluster.DeepSpeedPartitionedBoundary), 0.1 to 0.6 points of these rows, per
//     boundary, not per layer; no attention mask crosses (Megatron-DeepSpeed keeps it
//     in args.attn_mask);
//   - autograd's gradient accumulation in .grad, which the deepspeed mode now prices
//     for 16-bit gradients (MT-NLG's rows): the BF16 optimizer clears every .grad
//     before each backward pass (pipe/engine.py calls clear_lp_grads, DeepSpeed#1801)
//     and accumulates in fp32 (update_hp_grads, priced), so nothing more here;
//   - Jean Zay's NCCL and node: BigScience's all-reduce benchmark on four of these
//     nodes in the tr11-176B-ml environment (bigscience's
//     experiments/bandwidth/all_reduce_bench-a100-n4.txt, 2022-01-28) ran NCCL
//     2.10.3+cuda11.3 in its Parallel launch mode and joined every neighbour of its
//     rings inside a node "via P2P/IPC/read", which NCCL 2.10.3 takes only over an
//     NVLink path between two SM80 GPUs (src/graph/paths.cc, ncclTopoCheckP2p: "Enable
//     P2P Read for Ampere/NVLink only"): the tensor ring runs over NVLink between every
//     pair (GPU 3 to 4 too, so not two four-GPU boards joined over PCIe), not PCIe or
//     host memory (SHM), as the nvswitch2 link assumes. NCCL 2.10.3 reads no
//     CUDA_LAUNCH_BLOCKING (init.cc, enqueue.cc: the launch mode comes from
//     NCCL_LAUNCH_MODE alone), and BigScience's own A/B at TP 8 (chronicles-prequel.md,
//     200B at TP 8 PP 10 on 160 GPUs: 84.59 against 84.44 and 90.29 against 90.25
//     TFLOP/s with and without it) leaves the residual in the asynchronous runs too;
//   - the all-reduces of the tensor group's duplicated parameters: Megatron-DeepSpeed's
//     --sync-tp-duplicated-parameters (megatron/model/fused_layer_norm.py and
//     megatron/mpu/layers.py: each LayerNorm's weight and bias and each
//     RowParallelLinear's bias all-reduced in every forward, twelve a layer and
//     microbatch with recomputation) entered tr11-176B-ml.slurm as
//     --layernorm-tp-auto-sync on 2022-07-05 (bigscience 95f8a8b), after the benchmarks
//     and the log's iteration, and each moves h elements (24-28 KB, tens of
//     microseconds): not these rows, and not 13-16 ms;
//   - the tensor-parallel all-reduce's precision and stream: megatron/mpu/mappings.py's
//     _reduce all-reduces the activation as it is (bf16: DeepSpeed's engine casts the
//     module), synchronously on PyTorch's NCCL stream, as Megatron-LM's rows do.
//
// Nor is the residual a fixed cost a call at every microbatch size. The earlier
// topology benchmarks at TP 8 (chronicles-prequel.md, "48 node contenders", 2022-02-21:
// h 14,336, 72 layers, 64 heads, GBS 2,048; an earlier DeepSpeed branch than these rows',
// so not rows here), planned with this builder, err +13.8%, +15.8%, +8.0% and +8.6% at
// PP 12 DP 4 with microbatches of 1, 2, 4 and 8 (143.31, 134.02, 123.69 and 129.26 s)
// and +18.7%, +20.9% and +13.2% at PP 6 DP 8 with 1, 2 and 4 (139.82, 131.02 and
// 121.48 s): a residual a layer and slot of 5.4, 11.1, 10.7 and 22.2 ms, and 6.8, 13.8
// and 16.7 ms. From microbatches of 1 to 2 it doubles with the bytes (a fixed share of
// the layer's work, as a slower all-reduce would give: six a layer and microbatch at
// about 70 GB/s of bus bandwidth rather than the 240 priced); from 2 to 4 it does not.
// Neither a cost a call nor a cost a byte fits all four sizes.
//
// Not ruled out: the tensor-parallel all-reduces at TP 8 (six a layer and microbatch
// with full recomputation, 0.7-0.9 ms each as priced at 240 GB/s; a fixed cost of ~2 ms
// each at TP 8 would give the residual). No TP 8 all-reduce on Jean Zay is published,
// but nccl-tests on an HPE Apollo 6500 of eight NVLink-joined A100 80GB (the model of
// Jean Zay's A100 nodes) reached a bus bandwidth of ~200 GB/s (NVIDIA/nccl-tests#149,
// 2023, NCCL 2.18): at that rate the all-reduces add 1.8 ms a layer and microbatch of 2
// at TP 8 and 1.5 ms at TP 4, an eighth of the residual and not TP 8's alone, so the
// bandwidth of eight GPUs on such a node does not give it either; a per-call cost of
// the NCCL BigScience ran, which would, has no published figure. Against the plan (not
// the published steps alone) the microbatch pairs size it at both degrees: the plan
// runs microbatches of 2 faster than of 4 by their smaller fill and drain, so what
// halving the microbatch costs beyond the plan, over the 64 more slots of a stage's
// layers, is 7.7 and 7.4 ms a layer and microbatch at TP 4 (h 14,336 and 13,312, PP
// 12: 2.95 and 3.31 s) and 16.4 ms at TP 8 (h 12,288, PP 6: 17.8 s), and MT-NLG's
// slots leave 12-15 ms a layer at TP 8 with microbatches of 1 (publishedRuns): the same
// size at half or twice the bytes, so a cost a call, not a byte, and 2.2 times larger
// at TP 8 than at TP 4. A cost a layer the same at any degree (a kernel's launch, the
// host's time) would be 1.0 times; the all-reduces' bytes a device, 2(t-1)/t, 1.17
// times; the ring's steps, 2(t-1), 2.33 times: about 0.4 ms a step (t-1) of each of
// the six all-reduces a layer and microbatch, where NCCL's own model of a ring step over
// NVLink is 0.47 to 3.4 us (src/graph/tuning.cc, hwLat, LL to Simple), a hundred times
// less. Nothing in DeepSpeed's or Megatron-DeepSpeed's source found gives a cost a call
// of that size; Megatron-LM's own runs of the same shapes at TP 8 (Narayanan et al.'s
// and Korthikanti et al.'s rows) do not show it.
func bloomRun(source string, h, heads, layers, dp, tp, pp, mbs, gbs int, seconds, memGB float64, gap string) moreRun {
	// The split is DeepSpeed's, not the planner's optimum: --pp-partition-method
	// 'type:transformer|embedding' (chronicles-prequel.md, "Rebalancing layers": "giving
	// each embedding layer its own slot on par with transformer layers") counts the
	// embedding, the L blocks and the tied output embedding as L + 2 items of weight 1,
	// which PipelineModule's partition_balanced gives (L + 2) / PP to each stage (every
	// row's L + 2 is a multiple of PP). In the planner's layers (embedding, blocks,
	// final norm, lm_head) stage k starts at k(L + 2)/PP and the last holds the final
	// norm and the head. Where the planner would move a block off the head's stage
	// (four of the rows), the run did not.
	bounds := make([]int, pp+1)
	for k := 1; k < pp; k++ {
		bounds[k] = k * (layers + 2) / pp
	}
	bounds[pp] = layers + 3
	return moreRun{
		name:   fmt.Sprintf("BLOOM h=%d a=%d L=%d, TP%d PP%d DP%d, mbs %d, %d A100s, %s", h, heads, layers, tp, pp, dp, mbs, dp*tp*pp, map[string]string{bloomLog: "training log", bloomPrequel: "benchmark"}[source]),
		source: source,
		r: &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Config: gpt2Config(h, heads, layers, 2048, 250880, true, true, false), Seq: 2048, Attention: "eager", Framework: "deepspeed"}},
			Cluster:     wire.ClusterSpec{Device: "a100-80gb", DevicesPerNode: 8, LinkIntra: "nvswitch2", LinkInter: "opa-nccl"},
			Parallelism: wire.Parallelism{Pipeline: pp, Data: dp, Tensor: tp, Sharding: "zero1"},
			Training:    wire.Training{Recompute: "full", Precision: "deepspeed-bf16"},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: gbs / dp / mbs, MicrobatchSize: mbs},
			Boundaries:  bounds,
		},
		seconds: seconds,
		gap:     gap,
		memGB:   memGB,
	}
}

// bloomMemory: the topology benchmarks' memory ("Mem = max memory used by the first
// (last) nodes with the word embedding matrix", read from nvidia-smi: "pdsh ...
// nvidia-smi") is compared with the plan's most loaded stage on the run's own split
// (bloomRun), as is the single-node control's (TestBloomSingleNodeControl). The plan's
// figure is what nvidia-smi shows: the stage's allocated peak, the caching allocator's
// reserve beyond it and the framework's fixed memory. Priced, each from a source:
//   - DeepSpeed's BF16 optimizer frees the 16-bit gradients only at the start of the
//     next backward pass (precision deepspeed-bf16: 2 bytes a parameter of the stage
//     beside the fp32 ones); with mixed-fp32-grads these rows were 19-29% below;
//   - the CUDA context of their stack, which BigScience measured apart
//     (chronicles-prequel.md: "40GB A100 takes 1573MiB for cuda kernels", PyTorch 1.11
//     with CUDA 11.5, before lazy module loading): the deepspeed mode's fixed memory
//     holds it (2,097 MiB with workspaces and NCCL's buffers), from 12-19% below
//     (median -15.6%) to 11-17% (-13.9%);
//   - the caching allocator's reserve on a pipeline's stages as BigScience logged it on
//     Megatron-DeepSpeed's PipelineEngine (cluster's deepSpeedPipelineReserve: max
//     reserved over max allocated, 15.3% at the median of 63 ranks of TP 4 PP 16, where
//     the 2% of the modes comes from Megatron-style runs of 2024): from 11-17% below
//     (median -13.9%) to 7% below to 0.5% above (median -3.1%). The row above, 72.4 GB
//     against "72", is within the figure's rounding to whole GB. The single-node control
//     (one stage, one microbatch in flight) keeps the 2%, reading 4-5% below; the log's
//     own stage of one microbatch in flight reserved 6.1%, its reserve growing with the
//     microbatches a stage holds (10-11% at 2 and 3, 15% at 4, 15-20% from 5), which
//     the rule keeps only as one stage or several. The form is the modes' (a fraction
//     of the allocated peak), not one the log establishes: within it the reserve is
//     1,111 to 3,327 MB (the log's MB, 2^20 bytes), following the microbatches in
//     flight rather than the allocated peak (15,447 to 19,961 MB); BLOOM's stages
//     allocate three times as much, so were the reserve a constant of that size these
//     rows would stay 8-14% below.
// Held to issue 19's 10% either way (memoryTolerance). Not priced: NCCL's buffers
// beyond the fixed figure's share. Megatron-DeepSpeed opens a communicator for the
// tensor, data, model-parallel and embedding groups, and torch.distributed's send and
// recv one more for each pair of neighbouring stages, each with buffers per channel and
// peer (NCCL_BUFFSIZE's 4 MiB for the simple protocol, beside LL and LL128's), whose
// channels NCCL's topology search picks ("The memory usage is linearly tied to the
// number of channels", a maintainer, NVIDIA/nccl#986): not known from the request. The
// figures are compared as written, in GB; were they nvidia-smi's MiB over 1,024 (the
// same document's "max is 77GB" for an 80 GB A100, 79.3 GiB usable, reads that way),
// they would be 7% larger. Ruled out as further parts: the pipeline engine's buffers
// (deepspeed/runtime/pipe/engine.py of 2022-02-28: with tensor parallelism
// is_pipe_partitioned keeps each buffered microbatch's stage output as its 1/TP part,
// 12 of them on the first stage of PP 12 about 0.35 GB; a received input is cloned,
// then all-gathered into the tensor the first checkpointed layer keeps, not held beside
// it); DeepSpeed's activation checkpointing's partitioned or contiguous buffers
// (tr11-176B-ml.slurm passes --deepspeed-activation-checkpointing without
// --partition-activations or --contigious-checkpointing); the BF16 optimizer's other
// tensors (bf16_optimizer.py of 2022-04-19: the flat 16-bit parameters the model's point
// into, views of the fp32 gradients, the fp32 partition and its Adam state, all
// planned); the data-parallel all-reduce's buckets (engine.py's _bf16_reduce_grads
// hands buffered_allreduce_fallback the optimizer's flat fp32 gradients, one tensor a
// parameter group, each above its 5e8-element bucket and so flattened without a copy).

// gapBloomTP8: at TP 8 with microbatches of 2 the benchmarks ran 21-29% slower than
// predicted (27-34% with the network at its line rate, 37-45% before the deepspeed
// mode), where the same shapes at TP 4 (or TP 8 with microbatches of 4) err +3% to +13%:
// halving the microbatch at TP 8 cost 15% of the step (139.72 s against 120.96 s for h
// 12,288, PP 6), where the planner predicts it 1% slower (update_hp_grads runs once a
// microbatch). The residual is the ~16 ms a layer and microbatch that halving the
// microbatch costs beyond the plan at TP 8, ~7.5 ms at TP 4 (bloomRun: what was ruled
// out, and what the two sizes leave); the row at h 12,288 PP 6, with
// 17 layers a stage, is the one still beyond 25%.
const gapBloomTP8 = "Megatron-DeepSpeed at TP 8 with microbatches of 2: a residual of ~16 ms a layer and microbatch at TP 8 (~7.5 at TP 4), a cost a call growing as the tensor ring's steps, not found in DeepSpeed's source (the host, the pipeline schedule, activation checkpointing, the pipeline's partitioned tensors, an eight-GPU node's measured all-reduce bandwidth, NCCL 2.10.3's NVLink rings on Jean Zay and the duplicated parameters' all-reduces ruled out)"

// The BLOOM sources.
const (
	bloomLog     = "BigScience BLOOM 176B training log (tr11-176B-ml)"
	bloomPrequel = "BigScience BLOOM topology benchmarks (2022-02-28)"
)

// moreRuns are the published runs of the sources below, each with its assumptions.
var moreRuns = []moreRun{
	megatronH100("1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8, ""),
	megatronH100("7.1B", 32, 4096, 30, 2, 1, 48, 192, 465.9, ""),
	megatronH100("16B", 48, 6144, 32, 4, 1, 48, 192, 489.1, ""),
	megatronH100("32B", 56, 7168, 48, 8, 1, 48, 192, 459.6, ""),
	megatronH100("70B", 64, 8192, 84, 8, 2, 48, 384, 419.7, ""),
	megatronH100("119B", 80, 10240, 92, 8, 4, 48, 768, 420.5, ""),
	megatronH100("177B", 96, 12288, 96, 8, 6, 48, 1152, 432.8, ""),
	megatronH100("314B", 128, 16384, 96, 8, 8, 48, 1536, 474.4, ""),
	megatronH100("462B", 144, 18432, 112, 8, 16, 48, 3072, 459.9, ""),

	korthikantiRun("22B", 6144, 64, 48, 1, 1, 1, 1, 4, false, 1.42),
	korthikantiRun("22B", 6144, 64, 48, 1, 1, 1, 1, 4, true, 1.10),
	korthikantiRun("175B", 12288, 96, 96, 8, 3, 1, 64, 1, false, 18.13),
	korthikantiRun("175B", 12288, 96, 96, 8, 3, 1, 64, 1, true, 13.75),
	korthikantiRun("530B", 20480, 128, 105, 35, 3, 1, 280, 1, false, 49.05),
	korthikantiRun("530B", 20480, 128, 105, 35, 3, 1, 280, 1, true, 37.83),
	// The abstract's 530B runs on 2,240 GPUs (eight replicas of 280 microbatches, as the
	// step times of section 6.3): MFU 54.2% with sequence parallelism and selective
	// recomputation, 42.1% with full recomputation, of the A100's 312 TFLOP/s, counted
	// with Narayanan et al.'s model FLOPs: 39.1 s and 50.4 s.
	korthikantiRun("530B", 20480, 128, 105, 35, 3, 8, 280, 1, false, megatronStepFLOPs(2240, 2048, 105, 20480, 51200)/(2240*312e12*0.421)),
	korthikantiRun("530B", 20480, 128, 105, 35, 3, 8, 280, 1, true, megatronStepFLOPs(2240, 2048, 105, 20480, 51200)/(2240*312e12*0.542)),
	korthikantiRun("1T", 25600, 160, 128, 64, 1, 1, 512, 1, false, 94.42),
	korthikantiRun("1T", 25600, 160, 128, 64, 1, 1, 512, 1, true, 71.49),

	// LLM Foundry's tables: each model at the large-scale table's 128 GPUs (and 512 for
	// the largest and 7B), the 8-GPU sequence sweep at 512 to 32,768 tokens, the A100
	// 80 GB rows and the A100 40 GB rows at 128 GPUs (8 for the smallest models). The
	// small models with large microbatches and no checkpointing fit only with the
	// recipe's loss kernel (mptRun): eager PyTorch's fp32 cross-entropy would hold 14
	// bytes a token and word of the 50,368 (MPT-760M's 24 x 2,048 tokens on an H100:
	// 33 GiB of working memory for the head, 98 GiB in all against 80 GB).
	mptRun(mptH100, "70b", 2048, 512, "h100-sxm", 8, 1, "FULL_SHARD", true, 1007, ""),
	mptRun(mptH100, "70b", 2048, 128, "h100-sxm", 8, 1, "FULL_SHARD", true, 1058, ""),
	mptRun(mptH100, "30b", 2048, 128, "h100-sxm", 8, 1, "FULL_SHARD", true, 2199, ""),
	mptRun(mptH100, "13b", 2048, 128, "h100-sxm", 16, 1, "FULL_SHARD", true, 5080, ""),
	mptRun(mptH100, "7b", 2048, 512, "h100-sxm", 6, 1, "FULL_SHARD", false, 9670, ""),
	mptRun(mptH100, "7b", 2048, 128, "h100-sxm", 6, 1, "FULL_SHARD", false, 10475, ""),
	mptRun(mptH100, "3b", 2048, 128, "h100-sxm", 8, 1, "SHARD_GRAD_OP", false, 23422, ""),
	mptRun(mptH100, "1b", 2048, 128, "h100-sxm", 12, 1, "SHARD_GRAD_OP", false, 44123, ""),
	mptRun(mptH100, "7b", 2048, 8, "h100-sxm", 6, 1, "FULL_SHARD", false, 10643, ""),
	mptRun(mptH100, "7b", 8192, 8, "h100-sxm", 8, 2, "FULL_SHARD", true, 6935, ""),
	mptRun(mptH100, "7b", 32768, 8, "h100-sxm", 2, 2, "FULL_SHARD", true, 3318, ""),
	mptRun(mptH100, "13b", 4096, 8, "h100-sxm", 10, 3, "FULL_SHARD", true, 4717, ""),
	mptRun(mptH100, "13b", 32768, 8, "h100-sxm", 1, 3, "FULL_SHARD", true, 1976, ""),
	mptRun(mptH100, "3b", 512, 8, "h100-sxm", 40, 6, "FULL_SHARD", false, 27965, ""),
	mptRun(mptH100, "1b", 4096, 8, "h100-sxm", 7, 4, "FULL_SHARD", false, 38535, ""),
	mptRun(mptH100, "1b", 16384, 8, "h100-sxm", 2, 4, "FULL_SHARD", false, 19649, ""),
	mptRun(mptH100, "3b", 8192, 8, "h100-sxm", 3, 6, "FULL_SHARD", false, 16578, ""),
	mptRun(mptH100, "760m", 2048, 8, "h100-sxm", 24, 2, "FULL_SHARD", false, 63147, ""),
	mptRun(mptA100x80, "70b", 2048, 64, "a100-80gb", 8, 4, "FULL_SHARD", true, 410, ""),
	mptRun(mptA100x80, "30b", 2048, 8, "a100-80gb", 3, 21, "FULL_SHARD", true, 916, ""),
	mptRun(mptA100x80, "13b", 2048, 8, "a100-80gb", 2, 3, "FULL_SHARD", false, 2262, ""),
	mptRun(mptA100x80, "7b", 2048, 8, "a100-80gb", 6, 2, "FULL_SHARD", false, 4641, ""),
	mptRun(mptA100x80, "1b", 2048, 8, "a100-80gb", 14, 4, "FULL_SHARD", false, 20513, ""),
	mptRun(mptA100x40, "70b", 2048, 128, "a100-40gb", 4, 1, "FULL_SHARD", true, 376, ""),
	mptRun(mptA100x40, "13b", 2048, 128, "a100-40gb", 16, 1, "FULL_SHARD", true, 1972, ""),
	mptRun(mptA100x40, "7b", 2048, 128, "a100-40gb", 18, 1, "FULL_SHARD", true, 3623, ""),
	mptRun(mptA100x40, "3b", 2048, 128, "a100-40gb", 6, 1, "FULL_SHARD", false, 9538, ""),
	mptRun(mptA100x40, "1b", 2048, 128, "a100-40gb", 10, 1, "FULL_SHARD", false, 18647, ""),
	mptRun(mptA100x40, "350m", 2048, 8, "a100-40gb", 16, 4, "FULL_SHARD", false, 55995, ""),
	mptRun(mptA100x40, "125m", 2048, 8, "a100-40gb", 26, 3, "FULL_SHARD", false, 136334, ""),

	// BLOOM 176B's production run: the training log of iteration 12,695, the first days
	// at the full batch (bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles.md:
	// "elapsed time per iteration (s): 105.22 | ... global batch size: 2048 | ...
	// TFLOPs: 149.02"), with the launch script's configuration
	// (train/tr11-176B-ml/tr11-176B-ml.slurm): TP 4, PP 12, DP 8, microbatches of 2,
	// 112 heads.
	bloomRun(bloomLog, 14336, 112, 70, 8, 4, 12, 2, 2048, 105.22, 0, ""),
	// The topology benchmarks of 2022-02-28 (train/tr11-176B-ml/chronicles-prequel.md,
	// "Rebalancing layers": the BF16 optimizer and the partition method of the
	// production run; second-iteration snapshots, which "can fluctuate a bit"), the
	// rows of 64 heads and of the production model's 112.
	bloomRun(bloomPrequel, 14336, 64, 70, 4, 8, 12, 2, 2048, 121.63, 40, ""),
	bloomRun(bloomPrequel, 14336, 64, 70, 8, 4, 12, 2, 2048, 102.03, 59, ""),
	bloomRun(bloomPrequel, 14336, 112, 70, 8, 4, 12, 2, 2048, 104.50, 59, ""),
	bloomRun(bloomPrequel, 14336, 64, 70, 8, 4, 12, 4, 2048, 102.27, 73, ""),
	bloomRun(bloomPrequel, 13312, 64, 82, 4, 8, 12, 4, 2048, 111.79, 52, ""),
	bloomRun(bloomPrequel, 13312, 64, 82, 8, 4, 12, 2, 2048, 104.45, 63, ""),
	bloomRun(bloomPrequel, 13312, 64, 82, 8, 4, 12, 4, 2048, 104.82, 74, ""),
	bloomRun(bloomPrequel, 12288, 64, 106, 8, 4, 12, 2, 2048, 116.54, 67, ""),
	bloomRun(bloomPrequel, 12288, 64, 100, 8, 8, 6, 2, 2048, 139.72, 61, gapBloomTP8),
	bloomRun(bloomPrequel, 12288, 64, 100, 8, 8, 6, 4, 2048, 120.96, 72, ""),
}

// TestMorePublishedRuns plans each run of moreRuns exactly as it ran: each must plan as
// feasible (each ran), and its throughput error (published step time over predicted,
// minus 1) stay within issue 19's 25%, or, for a run whose gap names why not, beyond 25%
// and within twice that (a gap that closes must be removed). Where the source published
// the device memory, the plan's most loaded stage is compared with it. Every error is
// logged, with the median and signed median per source.
func TestMorePublishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 6,144 devices")
	}
	by := map[string][]float64{}
	var all, mem []float64
	for _, c := range append(append([]moreRun(nil), moreRuns...), independentRuns...) { // and published_indep_test.go's
		res, err := Run(context.Background(), c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but planned as not fitting: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		e := c.seconds/res.Step.StepSeconds - 1
		by[c.source] = append(by[c.source], e)
		all = append(all, e)
		t.Logf("%-60s predicted %8.2f s, published %8.2f s: throughput error %+5.1f%% (MFU %.1f%%, bubble %.2f; %s; %s)",
			c.name, res.Step.StepSeconds, c.seconds, 100*e, 100*res.Step.MFU, res.Step.BubbleFraction, res.Step.Breakdown, c.source)
		if c.memGB > 0 {
			var peak int64
			var pm wire.Memory
			for _, st := range res.Plan.Stages {
				if st.MemoryBytes > peak {
					peak, pm = st.MemoryBytes, st.Memory
				}
			}
			// The reserve is the deepspeed mode's share of a pipeline stage's allocated
			// peak (bloomMemory).
			fw, _ := cluster.LookupFramework(cluster.DeepSpeed)
			if alloc, want := peak-pm.FrameworkBytes-pm.ReservedBytes, fw.Reserve(c.r.Parallelism.Pipeline); pm.ReservedBytes != int64(math.Ceil(float64(alloc)*want)) {
				t.Errorf("%s: reserve %d bytes of an allocated peak of %d, want %g of it", c.name, pm.ReservedBytes, alloc, want)
			}
			me := float64(peak)/1e9/c.memGB - 1
			mem = append(mem, me)
			t.Logf("    memory: the most loaded stage %.1f GB, published %.0f GB: %+.1f%%", float64(peak)/1e9, c.memGB, 100*me)
			if math.Abs(me) > memoryTolerance { // bloomMemory
				t.Errorf("%s: the most loaded stage %.1f GB, published %.0f GB: %+.1f%%, beyond issue 19's %.0f%%", c.name, float64(peak)/1e9, c.memGB, 100*me, 100*memoryTolerance)
			}
		}
		switch {
		case c.gap != "" && math.Abs(e) <= issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% within 25%%: its known gap (%s) is gone, remove it", c.name, 100*e, c.gap)
		case c.gap != "" && math.Abs(e) > 2*issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% beyond twice 25%%, more than its known gap (%s)", c.name, 100*e, c.gap)
		case c.gap != "":
			t.Logf("    known gap: %s", c.gap)
		case math.Abs(e) > issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% beyond 25%% (%s)", c.name, 100*e, c.source)
		}
	}
	logGroups(t, by)
	s, a := medians(all)
	t.Logf("all: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(all), 100*a, 100*s)
	s, a = medians(mem)
	t.Logf("memory: %d runs with a published figure, median |error| %.1f%%, signed median %+.1f%% (issue 19's target: within 10%%)", len(mem), 100*a, 100*s)
}

// TestBloomSingleNodeControl plans BigScience's single-node runs of the BLOOM shape
// (chronicles-prequel.md, "Max possible TFLOPs check for NHIDDEN=14336", 2022-02-21: h
// 14,336, 64 heads, 6 or 10 layers, the vocabulary of 250,880, TP 8 on one node of 8
// A100s, no pipeline and no data parallelism, 512 sequences a step: the table's header
// says GBS=512 and its TFLOP/s, 143.48, 157.02 and 142.59, are those of 512 sequences
// in 130.43, 119.19 and 205.52 s), as bloomRun plans the production rows but unsharded
// (ZeRO needs replicas). With no stage transfer, no data-parallel reduction and no
// network, these runs still err fast, +10% to +23% (the same configuration measured
// twice, 9% apart): the DeepSpeed-era residual at TP 8 (gapBloomTP8) is in the layers
// and the loss, not in the pipeline engine's transfers or the inter-node network. Each
// is held within issue 19's 25%. The table's memory (54, 54 and 80 GB, nvidia-smi's as
// the pipelined rows') is held within issue 19's 10%: the plan reads 4-5% below, where
// the pipelined rows, with the pipeline engine's reserve, 7% below to 0.5% above
// (bloomMemory).
func TestBloomSingleNodeControl(t *testing.T) {
	if testing.Short() {
		t.Skip("plans the published runs")
	}
	for _, c := range []struct {
		layers, mbs    int
		seconds, memGB float64
	}{
		{6, 2, 130.43, 54},
		{6, 2, 119.19, 54},
		{10, 1, 205.52, 80},
	} {
		run := bloomRun(bloomPrequel, 14336, 64, c.layers, 1, 8, 1, c.mbs, 512, c.seconds, c.memGB, "")
		run.r.Parallelism.Sharding = ""
		res, err := Run(context.Background(), run.r)
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s: ran, but planned as not fitting: %v", run.name, res.Diagnostics)
			continue
		}
		e := c.seconds/res.Step.StepSeconds - 1
		t.Logf("%-60s predicted %7.2f s, published %7.2f s: throughput error %+5.1f%% (%s)", run.name, res.Step.StepSeconds, c.seconds, 100*e, res.Step.Breakdown)
		if math.Abs(e) > issueTolerance {
			t.Errorf("%s: throughput error %+.1f%% beyond 25%%", run.name, 100*e)
		}
		// The table's memory, nvidia-smi's as the pipelined rows' (bloomMemory): the
		// 10-layer run's "80GB" is the whole device, which the caching allocator filled
		// (it frees its cache and retries before it fails an allocation), so that row
		// is an upper bound the plan must fit under, not a figure to match.
		me := float64(res.Plan.Stages[0].MemoryBytes)/1e9/run.memGB - 1
		t.Logf("    memory: %.1f GB planned, published %.0f GB: %+.1f%%", float64(res.Plan.Stages[0].MemoryBytes)/1e9, run.memGB, 100*me)
		if me > memoryTolerance || me < -memoryTolerance {
			t.Errorf("%s: memory %.1f GB planned, published %.0f GB: %+.1f%%, beyond issue 19's %.0f%%", run.name, float64(res.Plan.Stages[0].MemoryBytes)/1e9, run.memGB, 100*me, 100*memoryTolerance)
		}
	}
}

// TestMPTSequenceSweep: LLM Foundry's 8-GPU sequence sweeps ran attn_impl triton
// (sweep.sh passes no --attn_impl; submit_benchmarks.py's default is triton; llm-foundry
// v0.3.0's flash_attn_triton.py), FlashAttention's Triton kernel, not FlashAttention-2.
// From one length to a longer one at the same model, the measured time per token grows
// by the attention's share alone. Priced with the Triton kernel's published rates
// (analytic.FlashTriton) the growth is steeper than measured, +7% to +26% (most on the
// H100 and at 32k), and priced with flash (FlashAttention-2's rates on the H100, the
// matrix efficiency on the A100) shallower, -15% to -39%: the measured growth lies between
// the two, which is what this test holds. On the A100, whose Triton rates are published
// (analytic.FlashTriton), the Triton-priced growth is within 10% of the measured (+7%,
// +8%), which the test also holds; on the H100, whose Triton rate is derived from
// FlashAttention-2's by the A100 ratio, it is 12% to 25% too steep, the long rows'
// pessimism (the note on that sweep's longest rows, before bloomRun). (Before the eager
// mode priced torch's exact GELU as one kernel, the length-independent part of the step
// was overpriced, which flattened every priced growth and made the Triton kernel's look
// right within 10%.) Rows: H100
// 80GB BF16 and A100 80GB BF16 tables (README at #543 and #838),
// the same model's shortest and longest lengths that plan.
func TestMPTSequenceSweep(t *testing.T) {
	type row struct {
		model           string
		seq, mbs, accum int
		ckpt            bool
		tokensPerGPU    float64
	}
	sweeps := []struct {
		device, table string
		short, long   row
	}{
		{"h100-sxm", mptH100, row{"1b", 2048, 14, 1, false, 45455}, row{"1b", 32768, 1, 4, false, 12025}},
		{"h100-sxm", mptH100, row{"1b", 4096, 7, 4, false, 38535}, row{"1b", 16384, 2, 4, false, 19649}},
		{"h100-sxm", mptH100, row{"3b", 512, 40, 6, false, 27965}, row{"3b", 8192, 3, 6, false, 16578}},
		{"h100-sxm", mptH100, row{"7b", 8192, 8, 2, true, 6935}, row{"7b", 32768, 2, 2, true, 3318}},
		{"h100-sxm", mptH100, row{"13b", 4096, 10, 3, true, 4717}, row{"13b", 32768, 1, 3, true, 1976}},
		{"a100-80gb", mptA100x80, row{"1b", 2048, 14, 4, false, 20513}, row{"1b", 32768, 1, 4, false, 6275}},
		{"a100-80gb", mptA100x80, row{"7b", 4096, 16, 2, true, 3684}, row{"7b", 32768, 2, 2, true, 1672}},
	}
	perToken := func(device, table string, r row, attention string) float64 {
		c := mptRun(table, r.model, r.seq, 8, device, r.mbs, r.accum, "FULL_SHARD", r.ckpt, r.tokensPerGPU, "")
		c.r.Model.Architecture.Attention = attention
		res, err := Run(context.Background(), c.r)
		if err != nil || !res.Feasible {
			t.Fatalf("%s with %s: %v %v", c.name, attention, err, res.Diagnostics)
		}
		return res.Step.StepSeconds / float64(r.mbs*r.accum*r.seq)
	}
	for _, s := range sweeps {
		measured := s.short.tokensPerGPU / s.long.tokensPerGPU
		growth := func(attention string) float64 {
			return perToken(s.device, s.table, s.long, attention) / perToken(s.device, s.table, s.short, attention)
		}
		triton, fa2 := growth("flash-triton"), growth("flash")
		t.Logf("MPT-%s on %s, %d to %d tokens: time per token x%.2f measured, x%.2f priced with the Triton kernel (%+.0f%%), x%.2f with flash (%+.0f%%)",
			s.short.model, s.device, s.short.seq, s.long.seq, measured, triton, 100*(triton/measured-1), fa2, 100*(fa2/measured-1))
		if !(fa2 < measured && measured < triton) {
			t.Errorf("MPT-%s on %s, %d to %d tokens: time per token grows x%.2f measured, not between x%.2f (flash) and x%.2f (the Triton kernel)", s.short.model, s.device, s.short.seq, s.long.seq, measured, fa2, triton)
		}
		// On the A100 the Triton kernel's rates are a published figure's (FlashAttention-2's
		// README), not derived: there the priced growth holds to the measured within 10%.
		if s.device == "a100-80gb" && math.Abs(triton/measured-1) > 0.10 {
			t.Errorf("MPT-%s on %s, %d to %d tokens: time per token grows x%.2f measured, x%.2f priced with the Triton kernel's published A100 rates: beyond 10%%", s.short.model, s.device, s.short.seq, s.long.seq, measured, triton)
		}
	}
}
