package request

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/wire"
)

// mlperfRun is one MLPerf Training submission of an LLM pre-training benchmark (issue
// 19.7 names MLCommons' MLPerf Training results as a source), planned as a request
// with the submission's own configuration and compared on its step time.
//
// The step time is read from the submission's result logs (the MLLOG lines the
// mlperf_logging package writes), the median over the submission's result files (3
// for GPT-3 175B and Llama 3.1 405B, 10 for Llama 3.1 8B) of each file's median step:
//   - GPT-3 175B, round 3.0: NeMo's callback logs each step's train_step_timing in a
//     tracked_stats line (one block covers the whole run, evaluations included); the
//     file's median over all steps but the first two.
//   - GPT-3 175B (rounds 3.1 to 4.1): NeMo's MLPerf callback logs block_start and
//     block_stop around each training block between two evaluations, with
//     epoch_count, the tokens the block trains (a whole number of global batches of
//     2,048-token sequences); a step is the block's seconds (time_ms of block_stop less
//     block_start's) over its steps (epoch_count / (global_batch_size x 2,048)). The
//     evaluation runs between block_stop and the next block_start, so it is excluded;
//     the first block is left out (it follows the warm-up at the loaded checkpoint's
//     step, though its step time proved the same).
//   - Llama 3.1 405B and 8B (rounds 5.0 and 5.1): the logs carry each step's time in a
//     tracked_stats line (value.train_step_time, seconds, the Lightning callback's
//     timer around one optimizer step); the file's median over all steps but the
//     first two. AMD's implementation logs none: its blocks carry samples_count, and a
//     step is a block's seconds over its global batches (mlperfBlockStepSeconds).
//
// Each row is held to issue 19's 25% (TestMLPerfPublishedRuns), a row with a named
// gap to twice that. A row cites the repository and commit the logs and the configuration were read at,
// the configuration file (its TP, PP, virtual pipeline, micro-batch, DGXNNODES and
// the global batch the log's global_batch_size confirms: MINIBS is the batch of one
// data-parallel replica) and the results directory, both in MLCommons' repository of
// its round (mlcommons/training_results_<round>), read at: v3.0
// 63e326c400f5d8bb8c6070a9ab08332d4931152e, v3.1 at
// d06288b2bd675a9d88e0e6181f5bb5626b71ec19, v4.0 at
// 6fe954378efe4a1a1bd665550b18ff8f26018def, v4.1 at
// b87b9e396f771345d4ef122ba33456304f15228d, v5.0 at
// 0fdc28f013256aea84fa36fdaf1e0fa46094b18c, v5.1 at
// 441d65f4445cd59687466533fd9f55399136e7a4 (mlperfCommits).
type mlperfRun struct {
	name   string
	round  string // "v3.1", "v4.0", ...: the source is the round and benchmark
	config string // the configuration file, in the round's repository
	log    string // the results directory (result_0.txt ...)
	model  string // a key of fp8Models
	device string
	gpus   int
	tp, pp int
	vp     int // virtual pipeline stages a device (1: 1F1B)
	mbs    int
	gbs    int
	cp     int // context parallelism (0: none)
	// recipe is the fp8 recipe: delayed (FP8_RECIPE delayed, the default) or current
	// (FP8_RECIPE tensorwise: Transformer Engine's Float8CurrentScaling).
	recipe string
	// framework is the request's framework mode: cuda-graphs where the configuration
	// captures each layer (LAYER_CUDA_GRAPH=1) or the whole step (FULL_CUDA_GRAPH) in
	// CUDA graphs, megatron (Megatron-Core launched eagerly) otherwise.
	framework string
	// fp8Params: FP8_PARAMS=True (fp8 primary weights: fp8_param_gather).
	fp8Params bool
	// dpSerial: the data-parallel reduce-scatter and all-gather are not overlapped
	// (Megatron-Core's DistributedDataParallelConfig defaults, overlap_grad_reduce and
	// overlap_param_gather False, where the implementation sets neither); otherwise
	// both overlapped, as NVIDIA's implementations set them.
	dpSerial bool
	// seconds is the step time derived from the logs (see mlperfRun).
	seconds float64
	// gap, when set, names the known gap that lets the run miss issue 19's 25%.
	gap string
}

// amaxTPOnly reports whether the run reduces delayed scaling's amax history over the
// tensor-parallel group alone (training.fp8_amax_tp_only): v3.1's config_common.sh sets
// NVTE_DP_AMAX_REDUCE_INTERVAL=0 ("AMAX is reduced only in TP domain", Transformer
// Engine 1.x; with NVTE_ASYNC_AMAX_REDUCTION=1, asynchronous, which the request cannot
// say: its TP-group reduction of 4 ranks in a node stays priced as blocking) and
// v4.1's custom.yaml sets tp_only_amax_red True (the v3.0 note below). v3.0 sets
// neither (the TP x DP group); v4.0, v5.0 and v5.1 were not read for it and keep
// Megatron-Core's default (the TP x DP x CP group).
func (c mlperfRun) amaxTPOnly() bool { return c.round == "v3.1" || c.round == "v4.1" }

// tpCommOverlap reports whether the run's tensor-parallel collectives ran in Transformer
// Engine's userbuffers overlap, as every implementation's TP_COMM_OVERLAP=True asks.
// Cisco's v5.1 Llama 3.1 8B implementation is the exception: NeMo 2 turns the overlap on
// only in its MegatronCommOverlapCallback (nemo/lightning/pytorch/callbacks/
// megatron_comm_overlap.py at v2.4.0, the NEMO_REVISION its Dockerfile builds: setup
// applies tp_comm_overlap to the model's config and _init_te_userbuffers initializes
// the buffers), and Cisco's pretrain.py appends that callback in a line it commented
// out (Cisco/benchmarks/llama31_8b/implementations/nemo/pretrain.py line 632,
// "# trainer.callbacks.append(get_overlap_callback(cfg))"; NVIDIA's own v5.1
// pretrain.py appends it), so the model kept Megatron-Core's default tp_comm_overlap
// False (megatron/core/model_parallel_config.py at core_v0.13.1, line 160) and neither
// the tuned conf/tp_overlap/h100tp2mbs1.yaml nor TP_COMM_OVERLAP took effect: its TP 2
// run's all-gathers and reduce-scatters ran through NCCL, unhidden.
func (c mlperfRun) tpCommOverlap() bool { return !strings.HasPrefix(c.config, "Cisco/") }

// attention is the run's attention kernel: v3.0's GPT-3 ran FlashAttention-1
// (analytic.Flash1): its requirements.txt pins flash_attn==1.0.5 and its Dockerfile
// builds Transformer Engine release_v0.8, whose DotProductAttention takes flash-attn's
// flash_attn_unpadded_func for causal 16-bit attention on devices of compute
// capability 8.0 and up (transformer_engine/pytorch/transformer.py, lines 461-465 and
// 552-558; NVTE_FLASH_ATTN unset), NeMo 23.04 building GPT-3's layers from Transformer
// Engine (megatron_gpt_config.yaml: transformer_engine True). v3.1 installs
// flash-attn 2.0.8, and later rounds run Transformer Engine's own kernels: the
// planner's default for their devices (teAttention).
func (c mlperfRun) attention() string {
	if c.round == "v3.0" {
		return "flash1"
	}
	return teAttention(c.device)
}

// mlperfCommits are the commits of MLCommons' results repositories
// (mlcommons/training_results_<round>) the rows were read at.
var mlperfCommits = map[string]string{
	"v3.0": "63e326c400f5d8bb8c6070a9ab08332d4931152e",
	"v3.1": "d06288b2bd675a9d88e0e6181f5bb5626b71ec19",
	"v4.0": "6fe954378efe4a1a1bd665550b18ff8f26018def",
	"v4.1": "b87b9e396f771345d4ef122ba33456304f15228d",
	"v5.0": "0fdc28f013256aea84fa36fdaf1e0fa46094b18c",
	"v5.1": "441d65f4445cd59687466533fd9f55399136e7a4",
}

// Cisco's TP 2 run, a known gap until it came within 25% (and again since the fp8
// primary weights' all-gather is priced in fp8: gapCiscoTP2):
// Cisco's Llama 3.1 8B run at TP 2 on 128 H100s (NGC PyTorch 25.01 with NeMo 2.4.0,
// Megatron-Core 0.13.1 and Transformer Engine 2.5) errs +24.9% where the same submitter's
// TP 1 run on 64 errs +7.5%: its logged step is 125 ms longer than half the TP 1 step, and
// its configuration differs from the TP 1 one in TENSOR_MODEL_PARALLEL and DGXNNODES only.
// Planned as it ran: no tensor-parallel overlap (tpCommOverlap: the callback that applies
// TP_COMM_OVERLAP and the tuned h100tp2mbs1.yaml is commented out), its collectives
// unhidden (0.75 ms a block; +35.2% -> +34.8%). Priced in both runs: custom.yaml's
// bucket_size default of 64 elements (BUCKET_SIZE unset; the BUCKET_CAP_MB the
// configurations set is read by nothing), so Megatron-Core's _ParamAndGradBuffer
// (param_and_grad_buffer.py at core_v0.13.1) closes a bucket at every parameter
// (parallelism.dp_bucket_elements 64, cluster.MegatronBucketSizes): 195 buckets, each a
// reduce-scatter and an all-gather of its own over 64 ranks at NCCL's tuned latency (on
// main at 49684d9 TP 2 +32.8% -> +30.0%, TP 1 +11.6% -> +10.9%); and pretrain.py's
// DistributedDataParallelConfig check_for_nan_in_grad True (NVIDIA's False:
// training.check_for_nan_in_grad, gradNaNCheckSeconds): start_grad_sync's check_grads
// reads each bucket's gradient norm back to the host twice
// (rerun_state_machine.validate_result with reruns disabled: torch.isnan, then
// torch.isinf), 390 synchronizations a step, each the host's next operator with the device
// idle, and the norms' read of the gradients (TP 2 +30.0% -> +25.7%, TP 1 +10.9% -> +8.3%:
// 13 and 15 ms a step). Not priced: the 128 bucket groups partition_buckets makes with fp8
// parameters coalesce their buckets' collectives (_coalescing_manager), priced as 195
// collectives each way; the host's lead lost beyond one operator after each
// synchronization (the backward's next kernels launch as the device frees, priced at one
// operator). Both priced costs are nearly the same at TP 1 and TP 2 against half the
// compute at TP 2, so what remains of the TP 2 step over half the TP 1 step (~95 ms) is
// not found; the row came within 25% (+31.9% -> +24.9% on main at 544cff2) and its known
// gap was removed.

// gapCiscoTP2 is Cisco's TP 2 Llama 3.1 8B run's gap (above: what was priced and ruled
// out before it came within 25%).
const gapCiscoTP2 = "Cisco's Llama 3.1 8B run at TP 2 on 128 H100s errs beyond 25% where the same submitter's TP 1 run on 64 errs +8%: " +
	"its logged step is ~95 ms longer than half the TP 1 step, and its configuration differs from the TP 1 one in " +
	"TENSOR_MODEL_PARALLEL and DGXNNODES only. It came within 25% (+24.9% on main at 0408ed6) until its fp8 primary weights' " +
	"all-gather was priced in fp8 (FP8_PARAMS: Megatron-Core's torch.uint8 param buffer, analytic.Result.ParamGatherBytes; " +
	"the 195 per-parameter buckets' all-gathers at 1 byte an element of the products' weights, not 2): +26.3% (TP 1 +7.5% -> +8.3%). " +
	"Priced and ruled out: the tensor-parallel overlap it did not run (tpCommOverlap), custom.yaml's 64-element buckets, " +
	"check_for_nan_in_grad's host synchronizations. Not priced: the 128 bucket groups' coalesced collectives " +
	"(_coalescing_manager), the host's lead lost beyond one operator after each synchronization. Ruled out in round 32: the " +
	"step's work outside the microbatches (pretrain.py's clip_grad 1.0: the gradient norm, its all-reduce and .item(); the " +
	"distributed optimizer's update and fp8 weight refresh) is no larger a rank at TP 2 than at TP 1 (the shard over DP 64 " +
	"halves), while the TP 2 step logs 101 ms beyond its plan and the TP 1 step 55 ms. The University of Florida gap's max_ctas " +
	"lead is not readable here: config_common.sh (both rows') sets NCCL_CFG_PATH to /workspace/llm/conf/nccl/" +
	"custom_communicator_cta.yaml and custom.yaml passes it as nccl_communicator_config_path, but the submission's conf/ holds " +
	"custom.yaml and tp_overlap/ only (its Dockerfile copies the implementation to /workspace/llm), so no max_ctas is stated; " +
	"NCCL_MIN_NCHANNELS=4 is under the eight channels NCCL's ring search gives an H100 node's eight 400 Gb/s NICs (48 GB/s " +
	"a channel, doubled to 16 CTAs by connect.cc: the same lines at v2.25.1-1, PyTorch 25.01's, as at v2.28.3-1, gapUF8BDP128), and a CTA's rate under a cap has no source either."

// gapUF8BDP128 is the University of Florida's 256-GPU Llama 3.1 8B run's gap.
const gapUF8BDP128 = "The University of Florida's Llama 3.1 8B run on 256 B200s (CP 2, DP 128) logs 0.221 s a step where its 32-, " +
	"64- and 128-GPU runs of the same global batch per replica log 0.189-0.193 s (+15%), and the plan grows 2% (0.168 -> 0.172 s): " +
	"+28.3%, its siblings +14-15% (+28.8% before NCCL's 48 GB/s PCIe Gen5 link to each NIC was priced, Topology.RingInter; +25.8% and +11-12% before the fp8 primary weights' all-gather was priced in fp8, 1 byte an " +
	"element of the products' weights: analytic.Result.ParamGatherBytes). Until this round its data-parallel buckets were priced as Megatron-Core's default, " +
	"max(40M, 1M x dp) elements cut by the elements (201 buckets; +14.1% on main at 544cff2, its siblings -0.8..+8.4%); priced " +
	"as its configuration runs them (custom.yaml's bucket_size 134,217,728, BUCKET_SIZE unset in the b200_nemo " +
	"config_common_8b.sh, closed at parameters' ends: cluster.MegatronBucketSizes, 35 buckets) fewer NCCL latencies are paid. " +
	"Not found: what grows the logged step by 30 ms from 16 to 32 nodes (the plan's exposed data-parallel time grows with the " +
	"ring's nodes, NCCL's model over 32 nodes included, by 7 ms). Ruled out at training_results_v5.1 441d65f: a different " +
	"configuration (config_DGXB200_32x8x1xtp1pp1cp2_8b.sh differs from the 16-node file in DGXNNODES alone, run_32n.sub from " +
	"run_16n.sub in the node count and DATADIR: the 32-node run alone reads its data from /red/rc-rse/mlperf/training, the " +
	"others from ./llama3-1-8b, which the planner does not price); a different system (hpg.dgxb200x8.n16 and .n32 JSONs the " +
	"same but the node count: NCCL 2.28.3, CUDA 13.0.1, the driver); a slowdown over the run (each block of result_1.txt " +
	"0.220-0.223 s from the first, the tracked train_step_time and the blocks' seconds a step within 0.5%, as at 4 to 16 nodes). " +
	"Per-step work outside the CUDA graph (gradient-norm clipping's norm, all-reduce and .item(), priced since round 33: gradClipSeconds; current scaling's " +
	"master-weight amax, amax all-reduce and cast; the host's loops over 128 fp8 parameters) ruled out as its cause: under " +
	"0.3 ms of device work at 64 ranks and the same at every node count (the 8B note; TestMLPerf8BResidualGrowsWithNodes). " +
	"A lead, not priced: conf/nccl/custom_communicator_cta.yaml (NCCL_CFG_PATH) gives the dp_cp communicator max_ctas 8; " +
	"at a CTA's rate below a NIC's 50 GB/s the 32-node ring (108 ms planned beside a 149 ms " +
	"backward and forward; 126 ms with the all-gather in 16 bits) would outlast its window where the 16-node one (88 ms; 107) would not, the pattern the logs show " +
	"(4 to 16 nodes 0.189-0.193 s, 32 nodes 0.221 s). NCCL 2.28.3 (the systems' JSON) read at v2.28.3-1 for what eight CTAs reach: " +
	"the ring search's rate a channel is 48 GB/s (topo.cc prices a PCIe Gen5 x16 link width x 240 / 80 = 48 GB/s and the " +
	"400 Gb/s NIC 400,000 / 8,000 = 50, so search.cc's getMaxBw to the NIC is 48 and sm100SpeedArrayInter's first 96 is skipped; " +
	"sm90SpeedArrayInter starts at 48 for the H100s), one channel a NIC, eight channels; ncclTopoDupChannels leaves them (it returns " +
	"for ccMin > 80 with bwIntra 48 < 50 and nChannels 8 > 4: the 24 GB/s a channel read here before was wrong); connect.cc " +
	"copies them to 16 CTAs (\"Use 4 compute channels per search channel to reach peak BW\": SM90 and up, nNodes > 1, " +
	"bwIntra 48 > 45, nChannels 8 < 16) and max_ctas 8 cuts comm->nChannels back to the search's eight, one CTA a search channel. " +
	"tuning.cc prices busBw = graphs[ring]->nChannels x bwInter, the graph's eight x 48 = 384 GB/s capped or not (comm->nChannels " +
	"is not in it): NCCL's own model does not see the cap, and what one CTA moves alone on a 48 GB/s channel is in no line of the " +
	"source (connect.cc's comment gives no figure) nor in a maintainer's statement found (nccl#438: two channels a NIC make its " +
	"use \"closer to peak\", no rate; uccl-project/uccl#205: on eight H100 nodes NCCL_MIN/MAX_NCHANNELS=8 \"significantly reduced\" a " +
	"350 GB/s bus bandwidth, no figure). So the cap stays unpriced: its rate would be fitted to these rows."

// source is the row's source for the validation summary: the round and benchmark.
func (c mlperfRun) source() string {
	bench := map[string]string{"gpt3-175b": "GPT-3 175B", "llama3.1-405b": "Llama 3.1 405B", "llama3-8b": "Llama 3.1 8B"}[c.model]
	return "MLPerf Training " + c.round + ", " + bench
}

// request is the run as a planning request. GPT-3 175B in NeMo's MLPerf
// implementation (conf/custom.yaml of each round: mcore_gpt, transformer_engine, 96
// layers of hidden 12,288 and 96 heads, a GELU MLP of 4h, layernorm1p, no dropout,
// sequence 2,048, learned positions, a SentencePiece vocabulary of 50,257 padded, the
// embeddings shared): the fp8 table's gpt3-175b. Every round's configuration sets
// sequence parallelism (SEQ_PARALLEL defaults True), Transformer Engine's userbuffers
// overlap of the tensor-parallel collectives (TP_COMM_OVERLAP=True), overlap_p2p_comm
// of the interleaved schedule, no activation recomputation (ACT_CKPT_GRANULARITY
// null), fp8 through Transformer Engine's delayed-scaling HYBRID recipe
// (config_fp8.sh: FP8_HYBRID, amax history 1,024, max), and NeMo's
// distributed_fused_adam (Apex's DistributedFusedAdam, the optimizer state sharded
// over the replicas) with overlap_grad_sync and overlap_param_sync and grad_sync_dtype
// bf16: gradients reduced in 16 bits, precision mixed.
func (c mlperfRun) request() *wire.Request {
	a := fp8Models[c.model]
	a.Seq, a.Framework, a.Attention = c.seq(), c.framework, c.attention()
	cp := max(1, c.cp)
	dp := c.gpus / (c.tp * c.pp * cp)
	sched := "1f1b"
	if c.vp > 1 {
		sched = fmt.Sprintf("interleaved:%d", c.vp)
	}
	recipe := c.recipe
	if recipe == "" {
		recipe = "delayed"
	}
	dpOverlap := OverlapOn
	if c.dpSerial {
		dpOverlap = OverlapOff
	}
	perNode := 8
	if strings.HasPrefix(c.device, "gb") {
		perNode = 72 // a GB200 NVL72 rack's NVLink domain, as fp8Run plans GB200
	}
	tpOverlap := "" // TP_COMM_OVERLAP with one tensor-parallel rank overlaps nothing
	if c.tp > 1 {
		tpOverlap = OverlapOff
		if c.tpCommOverlap() {
			tpOverlap = OverlapOn
		}
	}
	return &wire.Request{
		Model:   wire.ModelSpec{Architecture: &a},
		Cluster: wire.ClusterSpec{Device: c.device, DevicesPerNode: perNode},
		Parallelism: wire.Parallelism{Pipeline: c.pp, Data: dp, Tensor: c.tp, Context: c.cp, Sharding: "zero1", SequenceParallel: c.tp > 1,
			OverlapGradReduce: dpOverlap, OverlapParamGather: dpOverlap, OverlapTensorComm: tpOverlap, TPCommOverlapConfig: c.ubConfig(),
			DPBucketElements: c.bucketElements()},
		Training: wire.Training{Precision: "mixed", FP8Recipe: recipe, FP8ParamGather: c.fp8Params, FP8AmaxTPOnly: c.amaxTPOnly(),
			CheckForNaNInGrad: c.checkForNaNInGrad()},
		Schedule:   wire.Schedule{Name: sched, Microbatches: c.gbs / dp / c.mbs, MicrobatchSize: c.mbs},
		Boundaries: c.layout(),
	}
}

// bucketElements is the Megatron-Core bucket_size (parallelism.dp_bucket_elements) the
// v5.1 Llama 3.1 8B NeMo implementations pass to DistributedDataParallelConfig
// (pretrain.py: bucket_size=config.model.optim.bucket_size, custom.yaml's
// ${oc.env:BUCKET_SIZE,<default>}), or 0 (Megatron-Core's default) elsewhere:
//   - Cisco: custom.yaml's default 64, BUCKET_SIZE unset (its configurations export
//     BUCKET_CAP_MB=125, which nothing reads): a bucket a parameter.
//   - Dell and Oracle: their config_common_8b.sh exports BUCKET_SIZE=768000000.
//   - the University of Florida (b200_nemo's files, assumed as for its other settings)
//     and Verda: their config_common_8b.sh sets none, so custom.yaml's default
//     134,217,728.
//   - AMD's and GigaComputing's implementation (src/train.py) sets neither overlap, so
//     Megatron-Core buckets nothing (dpSerial).
func (c mlperfRun) bucketElements() int64 {
	if c.model != "llama3-8b" || c.dpSerial {
		return 0
	}
	switch {
	case strings.HasPrefix(c.config, "Cisco/"):
		return 64
	case strings.HasPrefix(c.config, "Dell/"), strings.HasPrefix(c.config, "Oracle/"):
		return 768_000_000
	}
	return 134_217_728
}

// checkForNaNInGrad is the DistributedDataParallelConfig check_for_nan_in_grad of the
// v5.1 Llama 3.1 8B NeMo implementations' pretrain.py: True in Cisco's, False in
// NVIDIA's (Dell's, Oracle's, the University of Florida's and Verda's copies); AMD's
// src/train.py reads CHECK_FOR_NAN_IN_GRAD, default 0. Not set by the other rows
// (Megatron-Core's default, False).
func (c mlperfRun) checkForNaNInGrad() bool {
	return c.model == "llama3-8b" && strings.HasPrefix(c.config, "Cisco/")
}

// ubConfig is the published userbuffers config (parallelism.tp_comm_overlap_config)
// whose priced settings are those of the tp_overlap yaml the submission ran
// (ub_tp_comm_overlap_cfg: conf/tp_overlap/<GPU_ARCH>100tp<TP>mbs<MBS>.yaml, or v3.0's
// TP_CONFIG_FILE), or "" (initialize_ub's defaults) where none is or the yaml is not
// known. Priced are each GEMM's method, a pipeline's num_sm and num_splits and the
// margins (analytic.UserbuffersConfig); a bulk overlap without set_sm_margin (every
// yaml's) holds its num_sm only while its collective runs, and its num_sm is the one
// difference left where a row names a config that is not the yaml's own:
//   - v3.0 GPT-3 (h100tp4pp8mbs1_tp_comm_overlap_cfg.yaml): bulk qkv_dgrad 4, qkv_wgrad
//     8, fc1_dgrad 2, fc1_wgrad 4, proj_fprop a pipeline of 24 and fc2_fprop of 20 (4
//     splits, margins), ring exchanges elsewhere: NeMo-Framework-Launcher's
//     ub_cfg_h100_h12288_tp4_mbs1_seqlen2048 (24.07) setting for setting.
//   - v3.1 GPT-3 (conf/tp_overlap/h100tp4pp8mbs1.yaml): the same but fc2_fprop's
//     pipeline of 4 multiprocessors, not 20: planned as the launcher's config, whose
//     methods are the yaml's (16 multiprocessors more taken from fc2's products).
//   - v4.0 and v4.1 GPT-3 on H100 (h100tp4mbs1.yaml, h100tp4mbs2.yaml): bulk overlaps
//     of 2 to 4, proj_fprop a pipeline of 24 (4 splits, margin), fc2_fprop a ring
//     exchange with a margin: Megatron-Bridge's
//     userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048 in every priced setting.
//   - Llama 3.1 405B on H100 (h100tp8mbs1.yaml): bulk 4, 8, 2, 4, every fprop a ring
//     exchange: Megatron-Bridge's userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192
//     (bulk 2, 24, 2, 2, rings) in every priced setting.
//   - Not expressed, left at the defaults: v4.1's B200 GPT-3 run (its configuration
//     sets no GPU_ARCH, so custom.yaml's default h selected h100tp4mbs2.yaml, an H100
//     config the request refuses on a B200); the v5.0 GB200 runs (GPU_ARCH is set in
//     the config_common_blackwell.sh the repository lacks, and Carina's directory has
//     no conf/tp_overlap: its optional config then falls back to the defaults); the
//     University of Florida's B200 405B runs (GPU_ARCH not in the files it holds);
//     Cisco's TP 2 run (its overlap never ran: tpCommOverlap).
func (c mlperfRun) ubConfig() string {
	switch {
	case c.model == "gpt3-175b" && c.device == "h100-sxm" && (c.round == "v3.0" || c.round == "v3.1"):
		return "ub_cfg_h100_h12288_tp4_mbs1_seqlen2048"
	case c.model == "gpt3-175b" && c.device == "h100-sxm":
		return "userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048"
	case c.model == "llama3.1-405b" && c.device == "h100-sxm":
		return "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192"
	}
	return ""
}

// seq is the benchmark's sequence: 2,048 for GPT-3, 8,192 for Llama 3.1.
func (c mlperfRun) seq() int {
	if c.model == "gpt3-175b" {
		return 2048
	}
	return 8192
}

// layout is the split of the blocks into model chunks that Megatron-Core builds
// (get_num_layers_to_build, megatron/core/transformer/transformer_block.py), as
// boundaries over the planned layers (the embedding, the blocks, the final norm and
// the head); nil with one chunk. GPT-3 175B's configurations set neither
// account_for_embedding_in_pipeline_split nor account_for_loss_in_pipeline_split: 96
// blocks evenly (megatronEvenLayout). Llama 3.1 405B's set both (ASYM_PP_EMBED and
// ASYM_PP_LOSS, custom.yaml's account_for_*): the 126 blocks and the embedding and the
// loss counted as a layer each, 128/(PP x VP) a chunk, the first chunk's the
// embedding and one block fewer, the last's one block fewer and the head.
func (c mlperfRun) layout() []int {
	chunks := c.pp * max(1, c.vp)
	if chunks == 1 {
		return nil
	}
	switch c.model {
	case "gpt3-175b":
		return megatronEvenLayout(96, chunks)
	case "llama3.1-405b":
		const slots = 126 + 2
		b := make([]int, 0, chunks+1)
		for i := 0; i < chunks; i++ {
			b = append(b, i*slots/chunks)
		}
		return append(b, slots+1)
	}
	return nil
}

// mlperfRuns are the rows. GPT-3 175B (MLPerf's gpt3 benchmark: continued pre-training
// of GPT-3 175B from a checkpoint on C4, sequence 2,048, to a log perplexity):
//   - v3.0, NVIDIA (DGX H100, NeMo 23.04) and NVIDIA_CoreWeave (HGX H100, the same
//     implementation): TP 4, PP 8, VP 12 (config_common.sh's INTERLEAVED_PIPELINE),
//     micro-batches of one, TP_COMM_OVERLAP with the tuned
//     h100tp4pp8mbs1_tp_comm_overlap_cfg.yaml (config_tp_h100.sh), no fp8 parameters,
//     no CUDA graphs, FlashAttention-1 (flash_attn 1.0.5 under Transformer Engine 0.8:
//     mlperfRun.attention), the optimizer as later rounds (megatron_gpt_config.yaml:
//     distributed_fused_adam, overlap_grad_sync, overlap_param_sync, grad_sync_dtype
//     bf16). The 64-node runs' configuration is 64x8x128 (DGXNNODES from the
//     environment, 64 by default). Priced (request's delayedAmaxReductions): v3.0 reduces
//     the fp8 amaxes over the whole data- and tensor-parallel group, blocking, once a
//     forward and once a backward of each model chunk and micro-batch, where v3.1 and
//     v4.1 reduce them inside the tensor-parallel group only (training.fp8_amax_tp_only,
//     mlperfRun.amaxTPOnly), v3.1 asynchronously. v3.0's config_fp8.sh
//     sets FP8_REDUCE_AMAX=True and its config_common.sh neither
//     NVTE_DP_AMAX_REDUCE_INTERVAL nor NVTE_ASYNC_AMAX_REDUCTION (Transformer Engine
//     release_v0.8 in its Dockerfile), and NeMo 23.04's fp8_group is Apex's
//     _AMAX_REDUCTION_GROUP (apex/transformer/parallel_state.py,
//     initialize_model_parallel: tensor_model_parallel_size x data_parallel_size
//     consecutive ranks: one pipeline stage's 4 x DP ranks on DP/2 nodes); Transformer
//     Engine reduces that group's concatenated amaxes with
//     torch.distributed.all_reduce(MAX, async_op=False) (transformer_engine/pytorch/
//     fp8.py, global_amax_reduction). v3.1's config_common.sh sets
//     NVTE_DP_AMAX_REDUCE_INTERVAL=0 ("AMAX is reduced only in TP domain", the same
//     function at TE 1.x) and NVTE_ASYNC_AMAX_REDUCTION=1; v4.1's custom.yaml sets
//     tp_only_amax_red True. At DP 16 and 24, 128 micro-batches of 12 chunks, that is
//     3,072 blocking reductions a step across 8 and 12 nodes, about 0.33 ms each for
//     the 1.0 s by which v3.0's logged step exceeds v3.1's (512 and 768 GPUs). Priced
//     at cluster.SmallAllReduceSeconds (NCCL's LL tree) they add 0.14 s to the 512- and
//     768-GPU steps (10.41 -> 10.55 s) and 0.037 s at 3,584: +16.0..+20.3% ->
//     +14.5..+18.3%, while the TP-only rows (v3.1, v4.1) grow 0.002-0.032 s with their
//     in-node 4-rank group (v3.1's asynchronous reduction priced as blocking: the
//     request cannot say asynchronous; +6.6% -> +6.3% median). The latency explains a
//     seventh of the 1.0 s. Most of the rest is the attention kernel (priced:
//     mlperfRun.attention): v3.0 pins flash_attn 1.0.5, which Transformer Engine 0.8
//     runs for GPT-3's causal attention, where v3.1 installs flash-attn 2.0.8; at
//     FlashAttention-1's published H100 rate (analytic.Flash1: 108 of FlashAttention-2's
//     265 TFLOP/s, causal, head dim 128, 2k) a step's 1,536 chunk micro-batches of
//     attention take 0.79 s more (10.55 -> 11.34 s at 512 and 768 GPUs): +14.5..+18.3%
//     -> +6.5..+10.9%, the median +16.6% -> +8.5% against v3.1's +6.3%. Not priced and
//     the same in both rounds: Transformer Engine's per-module amax_and_scale_update in
//     each forward and backward (release_v0.8 module.py prepare_forward, and v3.1's
//     09ba842, module/base.py lines 599 and 604, alike). Also different in v3.1, and
//     not expressible by a named userbuffers config: NVTE_UB_ATOMIC_GEMM_RS=1 and
//     NVTE_RS_STRIDED_ATOMIC=1 (the pipelined reduce-scatters as atomic GEMMs),
//     NVTE_*_LAYERNORM_SM_MARGIN 8 (v3.0: 4), NCCL_P2P_NET_CHUNKSIZE 2 MiB and the
//     MEGATRON_CORE_*_CGA_GROUPS/MAX_CTAS limits on NCCL's thread blocks. Ruled out:
//     fp8 weights quantized again each micro-batch (NeMo v1.17.0_pt_23.04's
//     ParallelTransformer passes is_first_microbatch to Transformer Engine and sets it
//     once every num_micro_batches forwards of its chunk, transformer.py lines 1410 to
//     1516, caching the fp8 weights a step as later rounds do and as the planner
//     prices); and a slowdown over the run (the tracked train_step_timing of
//     dgxh100_n64's and CoreWeave's n96 and n448 result_0.txt stays within 0.5% from
//     the first fifth of the steps to the last).
//   - v3.1, NVIDIA (NeMo 23.09, NVIDIA/benchmarks/gpt3/implementations/pytorch): TP 4,
//     PP 8, the interleaved schedule at custom.yaml's default of 12 chunks a device
//     (INTERLEAVED_PIPELINE unset: one layer a chunk), micro-batches of one, no fp8
//     parameters (config_common.sh sets no FP8_PARAMS), no CUDA graphs. The 64-node
//     run's global batch of 2,048 is the 96-node configuration's MINIBS 128 with
//     DGXNNODES=64 (the configuration reads DGXNNODES from the environment; the
//     64x8x192 file's 192 would make 3,072).
//   - v3.1, Azure+NVIDIA (ND H100 v5, 1,344 nodes): the same implementation and
//     configuration as NVIDIA's 1,344-node one.
//   - v4.0, NVIDIA (NeMo 24.04, implementations/nemo): fp8 parameters (FP8_PARAMS=True);
//     64 nodes: TP 4, PP 8, VP 4, micro-batches of two, the global batch 2,304 (MINIBS
//     144, the log's global_batch_size); 1,344 and 1,452 nodes: TP 4, PP 6, VP 8,
//     micro-batches of one, 6 a replica, each layer captured in a CUDA graph
//     (LAYER_CUDA_GRAPH=1).
//   - v4.1, NVIDIA (NeMo 24.09): 32 and 64 nodes, TP 4, PP 8, VP 6, micro-batches of
//     two, fp8 parameters; DGX B200 (the 8-node preview submission): TP 4, PP 8, VP 6,
//     micro-batches of two, CUDA graphs. v4.1's 1,452-node H100 entry is v4.0's run
//     (the same logs' step time), left out.
//   - v4.1, Oracle (BM.GPU.H100.8, NVIDIA's v4.1 implementation): 192 nodes MINIBS 64
//     and 384 nodes MINIBS 32, TP 4, PP 8, VP 4, micro-batches of two, fp8 parameters.
//     Assumed: the h100-sxm preset's eight 400 Gb/s NICs a node (Oracle's cluster
//     network is RoCE, with the same bandwidth). The systems' JSON
//     (Oracle/systems/1536xBM.GPU.H100.8.json, 3072x...) states "Ethernet/RDMA ROCE2
//     on switching network" and a PCIe-NIC bandwidth of 500 GB/s, no NIC count, rate
//     or rail layout; config_common.sh's NCCL_IB_HCA names 16 mlx5 devices a node
//     (16 x 200 Gb/s is the preset's 3.2 Tb/s). The two runs' JSONs differ in the node
//     count only and their config files in DGXNNODES and MINIBS only (config_common.sh
//     the same file), so the 3,072-GPU row's +23% against +4% is DP 96 against 48 at
//     16 micro-batches a replica against 32; nothing in the submission names a
//     different network to plan. The logs say where the difference lies: the
//     3,072-GPU run slows as it trains, in each of its three result files, its blocks'
//     steps (mlperfBlockStepSeconds) rising from 2.81-2.83 s over blocks 2 to 5 to
//     3.43-3.49 s over the last five (result_0: 2.808, 2.825, 2.829, 2.877, 2.983,
//     3.078, ..., 3.439), where the 1,536-GPU run's blocks hold 5.217-5.245 s from its
//     second block to its last. Against the plan's 2.70 s its blocks 2 to 5 err
//     +4.6% (the median of the files' medians, 2.827 s), as the 1,536-GPU run errs
//     +4.2%; the row's +23% is the median block of the rise. A slowdown that grows
//     with the time trained is no property of the configuration (the same code and
//     config_common.sh, NCCL 2.22.3 in both logs' SYSJSON lines, the same
//     container), so nothing is priced for it, and the row keeps the median of its
//     blocks as every v3.1 to v4.1 row does. The logs' own per-step timing agrees that
//     the early blocks are not the run's step: NeMo's tracked_stats train_step_timing
//     (present in the v4.1 logs, one a step) rises with the blocks, result_0's median a
//     block 2.73-2.76 s over blocks 1 to 4 to 3.10-3.27 s over the last ten, so the
//     slowdown is inside the timed step, not in the evaluations or the time between
//     blocks; and the blocks' seconds exceed it by 2.4-4.1% early and 6-8% late, where the
//     1,536-GPU run's exceed its flat 5.155 s by 1.3% throughout. Taking the early
//     blocks would be choosing the part of the run that fits; the tracked median over
//     the run (3.054 s, +12% against the plan) is a different rule from the one the
//     other GPT-3 rows use, so it is not taken either.
//
// Llama 3.1 405B (MLPerf's llama31_405b: pre-training from a checkpoint on C4,
// sequence 8,192; Meta's 405B: 126 layers, hidden 16,384, 128 query and 8 key/value
// heads, SwiGLU of 53,248, vocabulary 128,256 untied): NeMo 2's pretrain.py over
// Megatron-Core, micro-batches of one, TP_COMM_OVERLAP, the interleaved schedule with
// overlap_p2p_comm, account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split (layout), the distributed optimizer with
// overlap_grad_reduce and overlap_param_gather and grad_reduce_in_fp32 False
// (pretrain.py's MegatronMixedPrecision: precision mixed), fp8 parameters
// (FP8_PARAMS, FP8_PARAM_GATHER), no activation recomputation, Transformer Engine's
// fp8 at custom.yaml's FP8_RECIPE default, delayed:
//   - v5.0, NVIDIA (Eos, DGX H100, NeMo 25.01): TP 8, PP 8, VP 8, CP 2 on 64 to 1,024
//     nodes, no CUDA graphs (neither LAYER_CUDA_GRAPH nor MCORE_CUDA_GRAPH set).
//   - v5.0, NVIDIA (Tyche) and IBM+CoreWeave+NVIDIA (Carina), GB200 NVL72, NeMo 25.04:
//     TP 4, PP 8, VP 8, CP 2, the full iteration captured in a CUDA graph
//     (config_common_cg.sh: FULL_CUDA_GRAPH). Assumed: the fp8 recipe, since the
//     config_common_blackwell.sh each configuration sources is not in the repository
//     (custom.yaml's default, delayed).
//   - v5.1, the University of Florida (DGX B200, NVIDIA's NeMo 25.09 implementation):
//     32 and 56 nodes, TP 4, PP 8, VP 8, CP 2, MINIBS 144, the step in a CUDA graph
//     (config_common_cg.sh), fp8 current scaling (config_common.sh's FP8_RECIPE
//     tensorwise); the hpg.dgxb200x8 configurations source the config_common*.sh of the
//     b200_nemo directory beside them (assumed: the directory lacks its own).
//   - NVIDIA's v5.1 405B submissions are left out: each submission directory holds both
//     an fp8 and an NVFP4 (_fp4) configuration of the same size, so the log cannot be
//     tied to one, and the planner has no fp4 recipe.
//
// Llama 3.1 8B (MLPerf's llama31_8b, v5.1: pre-training from scratch on C4, sequence
// 8,192; Meta's 8B: the fp8 table's llama3-8b), NeMo 2 over Megatron-Core, the
// distributed optimizer with both overlaps, fp8 parameters, no recomputation:
//   - Cisco (hpf, DGX H100 systems on an Ethernet fabric, NGC PyTorch 25.01): 8 nodes
//     TP 1 and 16 nodes TP 2 (sequence parallelism, TP_COMM_OVERLAP), one sequence a
//     replica, no CUDA graphs (MCORE_CUDA_GRAPH False), fp8 at the delayed default.
//   - Dell (XE9780 with eight B300s; XE9680L and XE9685L with eight B200s), the
//     University of Florida (DGX B200), Oracle (BM.GPU.B200.8) and Verda (DGX B200),
//     NVIDIA's v5.1 NeMo 25.09 implementation: fp8 current scaling (config_common.sh's
//     FP8_RECIPE tensorwise) with the HYBRID format, the whole step in a CUDA graph
//     (config_common_cg.sh: FULL_CUDA_GRAPH, MCORE_CUDA_GRAPH), TP 1, on 1 and 2 nodes
//     micro-batches of two (MINIBS 2: one a step), on 4 to 32 nodes CP 2 with
//     micro-batches of one. The University of Florida's hpg.dgxb200x8 configurations
//     source config_common.sh, config_common_8b.sh and config_common_cg.sh that its
//     directory lacks; its b200_nemo directory's (the same as Oracle's and Verda's)
//     are assumed. Oracle's sets NVTE_DPA_FP8_RECIPE F16 (16-bit attention, as planned).
//     Left out: the runs whose configuration sources config_common_fp4.sh (NVFP4: Dell's
//     1xXE9680L, Lenovo's SR680aV4), and NVIDIA's and the single-node Oracle run (an
//     fp8 and an fp4 configuration of the same size side by side).
//     The step's work outside the graph, read in the code these rows ran (Verda's
//     Dockerfile: NGC PyTorch 25.09, Transformer Engine release_v2.8, Megatron-LM tag
//     25.09-alpha.rc1, NCCL v2.28.3-1) and found small or not timed by any source, so
//     not priced (TestMLPerf8BResidualGrowsWithNodes holds the argument):
//     (a) no mxfp8: FP8_RECIPE is tensorwise (config_common.sh), so neither
//     reuse_grad_buf_for_mxfp8_param_ag's bf16 gather nor the post-gather MXFP8
//     quantization and buffer zeroing run. (b) cuda_graph_scope full_iteration
//     (config_common_cg.sh's FULL_CUDA_GRAPH through custom.yaml) captures
//     forward_backward_func alone (full_cuda_graph.py's FullCudaGraphWrapper); the
//     optimizer step runs eagerly. (c) clip_grad 1.0 (pretrain.py's OptimizerConfig;
//     priced since round 33, gradClipSeconds, moving these rows by under 0.1 point):
//     get_grad_norm_fp32 (clip_grads.py at 25.09-alpha.rc1) runs multi_tensor_l2norm
//     over the shard's fp32 gradients, all-reduces one fp32 and reads it back
//     (total_norm.item(), line 133): at 64 ranks 8.03e9 / 64 x 4 B = 0.50 GB, 65 us at
//     the b200 preset's 7.7 TB/s, plus a one-element all-reduce; the clip's
//     multi_tensor_scale only when the norm exceeds 1. (d) fp8 primary weights under
//     current scaling: _copy_main_params_to_model_params calls quantize_param_shard,
//     TE's _cast_master_weights_to_fp8_current_scaling (release_v2.8): compute_amax of
//     each in-shard fp32 master (4 B an element), one MAX all-reduce of a float per fp8
//     parameter over the data-parallel group, multi_tensor_compute_scale_and_scale_inv,
//     update_quantized (4 B read; the 1-byte write is in the update's priced pass):
//     6.98e9 product weights / 64 x 8 B = 0.87 GB, 113 us. Together under 0.3 ms at
//     64 ranks (under 0.1 ms at 256) against the 23-49 ms the CP 2 rows log beyond
//     their plans. (e) Host: after the norm's .item() the device idles while the host
//     issues the update, and TE's two loops walk all 128 fp8 parameters on every rank
//     (_get_fp8_params_and_shard_fp32_from_fp8 lists each, its master None outside the
//     shard: at v2.8 a slice and two views each, then _reset_caches each); no source
//     times these dispatches, and they are the same work at every node count: the
//     one-node DP 8 row, whose step
//     runs the same code over a larger shard, logs 7 ms beyond its plan where every
//     multi-node B200 row logs 23-49 ms, so what is missing grows with the nodes the
//     data-parallel ring crosses, not with per-step fixed work.
//   - AMD (SMCI355X) and GigaComputing (G893-ZX1-AAX4), eight MI355Xs, AMD's NeMo 2
//     implementation (src/train.py; ROCm 7.0): GBS 32, micro-batches of two (AMD) or
//     four (GigaComputing), TP 1, fp8 HYBRID delayed scaling (amax history 4), fp8
//     parameters, the distributed optimizer with a DistributedDataParallelConfig that
//     sets neither overlap (dpSerial), no CUDA graphs. Their logs' step: a block's
//     seconds over its global batches (block_stop's samples_count less block_start's,
//     over 32), the median of the blocks after the first and of the ten result files.
//     MI350X runs are left out (no preset). Priced with the mi355x preset's GEMM
//     fractions from rocBLAS products measured on ROCm 7.2 (core/cluster's
//     mi355xMatmulEfficiency 0.56 and mi355xFP8Efficiency 0.62; before them the
//     MI300X's 0.45 and late-2024 0.27 left the plan 41-44% slow), the two runs erred
//     -16.0% and -10.8% (on main at 1771df0) with their unhidden data-parallel
//     reduce-scatter and all-gather, 366 ms of the 1.24 s plan, priced at one Infinity
//     Fabric link's 76.8 GB/s. RCCL runs them on rings over all seven links of the
//     platform's full mesh (cluster.Topology.IntraRing: RCCL's topology sums a GPU's
//     links into the totalBw its ring graphs fill, at 48 GB/s a link on gfx942 and
//     gfx95x, rccl topo.h's GFX94X/GFX95X_XGMI_WIDTH; AMD's runtime_tunables.sh sets
//     NCCL_MIN_CTAS=32, channels for every link), 7 x 48 = 336 GB/s: 84 ms, and the
//     rows err +8.7% (AMD) and +15.8% (GigaComputing), optimistic as the B200 rows are.
//     Not priced from an MI355X source: attention (its products run at the bf16 matrix
//     fraction, 0.56, as on every AMD preset; no AITER FAv3 figure on an MI355X was
//     found, and the published MI355X forward figures are lower, not higher:
//     HazyResearch/HipKittens' analysis/attn/fwd/plot.py, B 16, H 16, head dim 128,
//     causal at 8192, CK 834 and Triton 733 TFLOP/s, 0.33 and 0.29 of 2.5 PFLOP/s, AITER
//     on an MI350X 957 of 2.3, 0.42), the memory fraction 0.7 and the 6 us kernel cost
//     (the MI300X's), and the MXFP8 and quantization kernels' rates (Blackwell's). AMD's
//     GEMMs ran through hipBLASLt with kernels tuned for the submission (AMD's
//     "Technical Dive into AMD MLPerf Training v5.1 Submission", GEMM tuning upstreamed
//     to hipBLASLt), where the preset's figures are rocBLAS's at 8192^3. The two
//     submissions differ in the micro-batch (2 and 4; both hosts two EPYC 9575Fs, their
//     systems' JSON) and log 1.043 and 1.100 s: the plan's 0.960 and 0.950 s order them
//     the other way by 1%, so the 5% between them is not in the configuration the plan
//     reads.
var mlperfRuns = []mlperfRun{
	{"GPT-3 175B, 512 H100, TP4 PP8 VP12, GBS 2048", "v3.0", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_64x8x128x4x8_mbs1.sh", "NVIDIA/results/dgxh100_n64_nemo/gpt3", "gpt3-175b", "h100-sxm", 512, 4, 8, 12, 1, 2048, 0, "", "megatron", false, false, 12.074, ""},
	{"GPT-3 175B, 768 H100, TP4 PP8 VP12, GBS 3072", "v3.0", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "NVIDIA/results/dgxh100_n96_nemo/gpt3", "gpt3-175b", "h100-sxm", 768, 4, 8, 12, 1, 3072, 0, "", "megatron", false, false, 12.127, ""},
	{"GPT-3 175B, 768 H100 (CoreWeave), TP4 PP8 VP12, GBS 3072", "v3.0", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n96_ngc23.04_pytorch/gpt3", "gpt3-175b", "h100-sxm", 768, 4, 8, 12, 1, 3072, 0, "", "megatron", false, false, 12.305, ""},
	{"GPT-3 175B, 1536 H100 (CoreWeave), TP4 PP8 VP12, GBS 3072", "v3.0", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_192x8x64x4x8_mbs1.sh", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch/gpt3", "gpt3-175b", "h100-sxm", 1536, 4, 8, 12, 1, 3072, 0, "", "megatron", false, false, 6.340, ""},
	{"GPT-3 175B, 3584 H100 (CoreWeave), TP4 PP8 VP12, GBS 2688", "v3.0", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_448x8x24x4x8_mbs1.sh", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n448_ngc23.04_pytorch/gpt3", "gpt3-175b", "h100-sxm", 3584, 4, 8, 12, 1, 2688, 0, "", "megatron", false, false, 2.6005, ""},
	{"GPT-3 175B, 512 H100, TP4 PP8 VP12, GBS 2048", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "NVIDIA/results/eos_n64_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 512, 4, 8, 12, 1, 2048, 0, "", "megatron", false, false, 11.072, ""},
	{"GPT-3 175B, 768 H100, TP4 PP8 VP12, GBS 3072", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "NVIDIA/results/eos_n96_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 768, 4, 8, 12, 1, 3072, 0, "", "megatron", false, false, 11.093, ""},
	{"GPT-3 175B, 4096 H100, TP4 PP8 VP12, GBS 2048", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_512x8x16x4x8_mbs1.sh", "NVIDIA/results/eos-dfw_n512_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 4096, 4, 8, 12, 1, 2048, 0, "", "megatron", false, false, 1.6276, ""},
	{"GPT-3 175B, 6144 H100, TP4 PP8 VP12, GBS 3072", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_768x8x16x4x8_mbs1.sh", "NVIDIA/results/eos-dfw_n768_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 6144, 4, 8, 12, 1, 3072, 0, "", "megatron", false, false, 1.6361, ""},
	{"GPT-3 175B, 8192 H100, TP4 PP8 VP12, GBS 4096", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1024x8x16x4x8_mbs1.sh", "NVIDIA/results/eos-dfw_n1024_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 8192, 4, 8, 12, 1, 4096, 0, "", "megatron", false, false, 1.6402, ""},
	{"GPT-3 175B, 10240 H100, TP4 PP8 VP12, GBS 2560", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1280x8x8x4x8_mbs1.sh", "NVIDIA/results/eos-dfw_n1280_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 10240, 4, 8, 12, 1, 2560, 0, "", "megatron", false, false, 0.9468, ""},
	{"GPT-3 175B, 10752 H100, TP4 PP8 VP12, GBS 2688", "v3.1", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh", "NVIDIA/results/eos-dfw_n1344_ngc23.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 10752, 4, 8, 12, 1, 2688, 0, "", "megatron", false, false, 0.9518, ""},
	{"GPT-3 175B, 10752 H100 (Azure), TP4 PP8 VP12, GBS 2688", "v3.1", "Azure+NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh", "Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3", "gpt3-175b", "h100-sxm", 10752, 4, 8, 12, 1, 2688, 0, "", "megatron", false, false, 0.9795, ""},
	{"GPT-3 175B, 512 H100, TP4 PP8 VP4, GBS 2304", "v4.0", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_64x8x128x4x8_mbs2.sh", "NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3", "gpt3-175b", "h100-sxm", 512, 4, 8, 4, 2, 2304, 0, "", "megatron", true, false, 10.982, ""},
	{"GPT-3 175B, 10752 H100, TP4 PP6 VP8, GBS 2688", "v4.0", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_1344x8x6x4x6_mbs1_cg.sh", "NVIDIA/results/eos-dfw_n1344_ngc24.04_nemo/gpt3", "gpt3-175b", "h100-sxm", 10752, 4, 6, 8, 1, 2688, 0, "", "cuda-graphs", true, false, 0.9207, ""},
	{"GPT-3 175B, 11616 H100, TP4 PP6 VP8, GBS 2904", "v4.0", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_1452x8x6x4x6_mbs1_cg.sh", "NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo/gpt3", "gpt3-175b", "h100-sxm", 11616, 4, 6, 8, 1, 2904, 0, "", "cuda-graphs", true, false, 0.9214, ""},
	{"GPT-3 175B, 256 H100, TP4 PP8 VP6, GBS 2048", "v4.1", "NVIDIA/benchmarks/gpt3/implementations/eos_n32_ngc24.09_nemo/config_DGXH100_32x8x256x4x8_mbs2.sh", "NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 256, 4, 8, 6, 2, 2048, 0, "", "megatron", true, false, 18.407, ""},
	{"GPT-3 175B, 512 H100, TP4 PP8 VP6, GBS 2048", "v4.1", "NVIDIA/benchmarks/gpt3/implementations/eos_n64_ngc24.09_nemo/config_DGXH100_64x8x128x4x8_mbs2.sh", "NVIDIA/results/eos_n64_ngc24.09_nemo/gpt3", "gpt3-175b", "h100-sxm", 512, 4, 8, 6, 2, 2048, 0, "", "megatron", true, false, 9.540, ""},
	{"GPT-3 175B, 64 B200, TP4 PP8 VP6, GBS 2048", "v4.1", "NVIDIA/benchmarks/gpt3/implementations/b200_n8_preview_nemo/config_DGXB200_8x8x1024x4x8_mbs2_cg.sh", "NVIDIA/results/b200_n8_preview_nemo/gpt3", "gpt3-175b", "b200", 64, 4, 8, 6, 2, 2048, 0, "", "cuda-graphs", true, false, 36.255, ""},
	{"GPT-3 175B, 1536 H100 (Oracle), TP4 PP8 VP4, GBS 3072", "v4.1", "Oracle/benchmarks/gpt3/DGXH100_128x8x64x4x8_mbs2/config_DGXH100_192x8x64x4x8_mbs2.sh", "Oracle/results/1536xBM.GPU.H100.8/gpt3", "gpt3-175b", "h100-sxm", 1536, 4, 8, 4, 2, 3072, 0, "", "megatron", true, false, 5.2367, ""},
	{"GPT-3 175B, 3072 H100 (Oracle), TP4 PP8 VP4, GBS 3072", "v4.1", "Oracle/benchmarks/gpt3/DGXH100_384x8x32x4x8_mbs2/config_DGXH100_384x8x32x4x8_mbs2.sh", "Oracle/results/3072xBM.GPU.H100.8/gpt3", "gpt3-175b", "h100-sxm", 3072, 4, 8, 4, 2, 3072, 0, "", "megatron", true, false, 3.3261, ""},
	{"Llama 3.1 405B, 512 H100, TP8 PP8 CP2 VP8, GBS 1152", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n64_ngc25.01_nemo/config_DGXH100_64x8x288xtp8pp8cp2.sh", "NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/llama31_405b", "llama3.1-405b", "h100-sxm", 512, 8, 8, 8, 1, 1152, 2, "", "megatron", true, false, 55.143, ""},
	{"Llama 3.1 405B, 2048 H100, TP8 PP8 CP2 VP8, GBS 1152", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n256_ngc25.01_nemo/config_DGXH100_256x8x72xtp8pp8cp2.sh", "NVIDIA/results/eos-dfw_n256_ngc25.01_nemo/llama31_405b", "llama3.1-405b", "h100-sxm", 2048, 8, 8, 8, 1, 1152, 2, "", "megatron", true, false, 14.222, ""},
	{"Llama 3.1 405B, 2432 H100, TP8 PP8 CP2 VP8, GBS 1216", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n304_ngc25.01_nemo/config_DGXH100_304x8x64xtp8pp8cp2.sh", "NVIDIA/results/eos-dfw_n304_ngc25.01_nemo/llama31_405b", "llama3.1-405b", "h100-sxm", 2432, 8, 8, 8, 1, 1216, 2, "", "megatron", true, false, 12.712, ""},
	{"Llama 3.1 405B, 2560 H100, TP8 PP8 CP2 VP8, GBS 1120", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n320_ngc25.01_nemo/config_DGXH100_320x8x56xtp8pp8cp2.sh", "NVIDIA/results/eos-dfw_n320_ngc25.01_nemo/llama31_405b", "llama3.1-405b", "h100-sxm", 2560, 8, 8, 8, 1, 1120, 2, "", "megatron", true, false, 11.173, ""},
	{"Llama 3.1 405B, 8192 H100, TP8 PP8 CP2 VP8, GBS 1536", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n1024_ngc25.01_nemo/config_DGXH100_1024x8x24xtp8pp8cp2.sh", "NVIDIA/results/eos-dfw_n1024_ngc25.01_nemo/llama31_405b", "llama3.1-405b", "h100-sxm", 8192, 8, 8, 8, 1, 1536, 2, "", "megatron", true, false, 5.18, ""},
	{"Llama 3.1 405B, 256 GB200, TP4 PP8 CP2 VP8, GBS 448", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/tyche_ngpu256_ngc25.04_nemo/config_GB200_64x4x112xtp4pp8cp2_cg.sh", "NVIDIA/results/tyche_ngpu256_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 256, 4, 8, 8, 1, 448, 2, "", "cuda-graphs", true, false, 19.168, ""},
	{"Llama 3.1 405B, 512 GB200, TP4 PP8 CP2 VP8, GBS 896", "v5.0", "NVIDIA/benchmarks/llama31_405b/implementations/tyche_ngpu512_ngc25.04_nemo/config_GB200_128x4x112xtp4pp8cp2_cg_dplast.sh", "NVIDIA/results/tyche_ngpu512_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 512, 4, 8, 8, 1, 896, 2, "", "cuda-graphs", true, false, 19.432, ""},
	{"Llama 3.1 405B, 512 GB200 (IBM+CoreWeave), TP4 PP8 CP2 VP8, GBS 896", "v5.0", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu512_ngc25.04_nemo/config_GB200_128x4x112xtp4pp8cp2.sh", "IBM+CoreWeave+NVIDIA/results/carina_ngpu512_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 512, 4, 8, 8, 1, 896, 2, "", "cuda-graphs", true, false, 19.278, ""},
	{"Llama 3.1 405B, 1024 GB200 (IBM+CoreWeave), TP4 PP8 CP2 VP8, GBS 768", "v5.0", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu1024_ngc25.04_nemo/config_GB200_256x4x48xtp4pp8cp2.sh", "IBM+CoreWeave+NVIDIA/results/carina_ngpu1024_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 1024, 4, 8, 8, 1, 768, 2, "", "cuda-graphs", true, false, 8.448, ""},
	{"Llama 3.1 405B, 1536 GB200 (IBM+CoreWeave), TP4 PP8 CP2 VP8, GBS 1152", "v5.0", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu1536_ngc25.04_nemo/config_GB200_384x4x48xtp4pp8cp2.sh", "IBM+CoreWeave+NVIDIA/results/carina_ngpu1536_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 1536, 4, 8, 8, 1, 1152, 2, "", "cuda-graphs", true, false, 8.499, ""},
	{"Llama 3.1 405B, 2048 GB200 (IBM+CoreWeave), TP4 PP8 CP2 VP8, GBS 1280", "v5.0", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu2048_ngc25.04_nemo/config_GB200_512x4x40xtp4pp8cp2.sh", "IBM+CoreWeave+NVIDIA/results/carina_ngpu2048_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 2048, 4, 8, 8, 1, 1280, 2, "", "cuda-graphs", true, false, 7.158, ""},
	{"Llama 3.1 405B, 2496 GB200 (IBM+CoreWeave), TP4 PP8 CP2 VP8, GBS 1248", "v5.0", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu2496_ngc25.04_nemo/config_GB200_624x4x32xtp4pp8cp2.sh", "IBM+CoreWeave+NVIDIA/results/carina_ngpu2496_ngc25.04_nemo/llama31_405b", "llama3.1-405b", "gb200", 2496, 4, 8, 8, 1, 1248, 2, "", "cuda-graphs", true, false, 5.823, ""},
	{"Llama 3.1 405B, 256 B200 (University of Florida), TP4 PP8 CP2 VP8, GBS 576", "v5.1", "University-of-Florida/benchmarks/llama31_405b/implementations/hpg.dgxb200x8/config_DGXB200_32x8x144xtp4pp8cp2_cg.sh", "University-of-Florida/results/hpg.dgxb200x8.n32/llama31_405b", "llama3.1-405b", "b200", 256, 4, 8, 8, 1, 576, 2, "current", "cuda-graphs", true, false, 27.646, ""},
	{"Llama 3.1 405B, 448 B200 (University of Florida), TP4 PP8 CP2 VP8, GBS 1008", "v5.1", "University-of-Florida/benchmarks/llama31_405b/implementations/hpg.dgxb200x8/config_DGXB200_56x8x144xtp4pp8cp2_cg.sh", "University-of-Florida/results/hpg.dgxb200x8.n56/llama31_405b", "llama3.1-405b", "b200", 448, 4, 8, 8, 1, 1008, 2, "current", "cuda-graphs", true, false, 27.978, ""},
	{"Llama 3.1 8B, 64 H100 (Cisco), DP64, GBS 64", "v5.1", "Cisco/benchmarks/llama31_8b/implementations/nemo/config_DGXH100_8x8x1xtp1pp1cp1.sh", "Cisco/results/hpf_n8/llama31_8b", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 64, 0, "", "megatron", true, false, 0.7205, ""},
	{"Llama 3.1 8B, 128 H100 (Cisco), TP2 DP64, GBS 64", "v5.1", "Cisco/benchmarks/llama31_8b/implementations/nemo/config_DGXH100_16x8x1xtp2pp1cp1.sh", "Cisco/results/hpf_n16/llama31_8b", "llama3-8b", "h100-sxm", 128, 2, 1, 1, 1, 64, 0, "", "megatron", true, false, 0.4851, gapCiscoTP2},
	{"Llama 3.1 8B, 8 B300 (Dell), DP8, GBS 16", "v5.1", "Dell/benchmarks/llama31_8b/implementations/nemo/config_XE9780x8B300-SXM-270GB_1x8x2xtp1pp1cp1_8b.sh", "Dell/results/1xXE9780x8B300-SXM-270GB/llama31_8b", "llama3-8b", "b300", 8, 1, 1, 1, 2, 16, 0, "current", "cuda-graphs", true, false, 0.5481, ""},
	{"Llama 3.1 8B, 16 B200 (Dell XE9680L), DP16, GBS 32", "v5.1", "Dell/benchmarks/llama31_8b/implementations/nemo/config_2xXE9680Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1_8b.sh", "Dell/results/2xXE9680Lx8B200-SXM-180GB/llama31_8b", "llama3-8b", "b200", 16, 1, 1, 1, 2, 32, 0, "current", "cuda-graphs", true, false, 0.5820, ""},
	{"Llama 3.1 8B, 16 B200 (Dell XE9685L), DP16, GBS 32", "v5.1", "Dell/benchmarks/llama31_8b/implementations/nemo/config_XE9685Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1.sh", "Dell/results/2xXE9685Lx8B200-SXM-180GB/llama31_8b", "llama3-8b", "b200", 16, 1, 1, 1, 2, 32, 0, "current", "cuda-graphs", true, false, 0.5758, ""},
	{"Llama 3.1 8B, 8 B200 (University of Florida), DP8, GBS 16", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_1x8x2xtp1pp1cp1_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n1/llama31_8b", "llama3-8b", "b200", 8, 1, 1, 1, 2, 16, 0, "current", "cuda-graphs", true, false, 0.5441, ""},
	{"Llama 3.1 8B, 16 B200 (University of Florida), DP16, GBS 32", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_2x8x2xtp1pp1cp1_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n2/llama31_8b", "llama3-8b", "b200", 16, 1, 1, 1, 2, 32, 0, "current", "cuda-graphs", true, false, 0.5749, ""},
	{"Llama 3.1 8B, 32 B200 (University of Florida), CP2 DP16, GBS 16", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_4x8x1xtp1pp1cp2_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n4/llama31_8b", "llama3-8b", "b200", 32, 1, 1, 1, 1, 16, 2, "current", "cuda-graphs", true, false, 0.1886, ""},
	{"Llama 3.1 8B, 64 B200 (University of Florida), CP2 DP32, GBS 32", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_8x8x1xtp1pp1cp2_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n8/llama31_8b", "llama3-8b", "b200", 64, 1, 1, 1, 1, 32, 2, "current", "cuda-graphs", true, false, 0.1895, ""},
	{"Llama 3.1 8B, 128 B200 (University of Florida), CP2 DP64, GBS 64", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_16x8x1xtp1pp1cp2_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n16/llama31_8b", "llama3-8b", "b200", 128, 1, 1, 1, 1, 64, 2, "current", "cuda-graphs", true, false, 0.1928, ""},
	{"Llama 3.1 8B, 256 B200 (University of Florida), CP2 DP128, GBS 128", "v5.1", "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_32x8x1xtp1pp1cp2_8b.sh", "University-of-Florida/results/hpg.dgxb200x8.n32/llama31_8b", "llama3-8b", "b200", 256, 1, 1, 1, 1, 128, 2, "current", "cuda-graphs", true, false, 0.2211, gapUF8BDP128},
	{"Llama 3.1 8B, 64 B200 (Oracle), CP2 DP32, GBS 32", "v5.1", "Oracle/benchmarks/llama31_8b/config_DGXB200_8x8x1xtp1pp1cp2_8b.sh", "Oracle/results/8xBM.GPU.B200.8/llama31_8b", "llama3-8b", "b200", 64, 1, 1, 1, 1, 32, 2, "current", "cuda-graphs", true, false, 0.1902, ""},
	{"Llama 3.1 8B, 64 B200 (Verda), CP2 DP32, GBS 32", "v5.1", "Verda/benchmarks/llama31_8b/implementations/b200_8x8_ngc25.09/config_DGXB200_8x8x1xtp1pp1cp2_8b.sh", "Verda/results/b200_8x8_ngc25.09/llama31_8b", "llama3-8b", "b200", 64, 1, 1, 1, 1, 32, 2, "current", "cuda-graphs", true, false, 0.1910, ""},
	{"Llama 3.1 8B, 8 MI355X (AMD), DP8, GBS 32", "v5.1", "AMD/benchmarks/llama31_8b/implementations/MI355X_EPYC_9575F_pytorch_llama3_8b/config_MI355X_1x8x1_8b.sh", "AMD/results/MI355X_EPYC_9575F_pytorch/llama31_8b", "llama3-8b", "mi355x", 8, 1, 1, 1, 2, 32, 0, "", "megatron", true, true, 1.0429, ""},
	{"Llama 3.1 8B, 8 MI355X (GigaComputing), DP8, GBS 32", "v5.1", "GigaComputing/benchmarks/llama31_8b/implementations/MI355X/nemo/config_MI355X_1x8x1_8b.sh", "GigaComputing/results/G893-ZX1-AAX4_pytorch/llama31_8b", "llama3-8b", "mi355x", 8, 1, 1, 1, 4, 32, 0, "", "megatron", true, true, 1.1000, ""},
}

// mlperfMoreRuns are mlperfRuns as the validation summary's moreRun rows.
func mlperfMoreRuns() []moreRun {
	out := make([]moreRun, 0, len(mlperfRuns))
	for _, c := range mlperfRuns {
		out = append(out, moreRun{name: "MLPerf " + c.round + " " + c.name, source: c.source(), r: c.request(), seconds: c.seconds, gap: c.gap})
	}
	return out
}

// TestMLPerfPublishedRuns plans each MLPerf Training submission as it ran and compares
// its step time with the one its logs give: every run must plan as feasible (each
// ran), and within issue 19's 25% unless its row names a known gap (then within twice
// that, and not within 25%: a gap that closed is removed); over the runs without a gap
// the median |error| within 10% and the signed median within 5%.
func TestMLPerfPublishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 11,616 devices")
	}
	by := map[string][]float64{}
	var all, held []float64
	for _, c := range mlperfRuns {
		res, err := Run(context.Background(), c.request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but planned as not fitting: %v", c.name, c.source(), res.Diagnostics)
			continue
		}
		e := c.seconds/res.Step.StepSeconds - 1
		by[c.source()] = append(by[c.source()], e)
		all = append(all, e)
		if c.gap == "" {
			held = append(held, e)
		}
		t.Logf("%-58s predicted %7.3f s, logged %7.3f s: throughput error %+5.1f%% (MFU %.1f%%, bubble %.2f; %s)",
			c.name, res.Step.StepSeconds, c.seconds, 100*e, 100*res.Step.MFU, res.Step.BubbleFraction, c.source())
		switch {
		case c.gap != "" && math.Abs(e) <= issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% within 25%%: its known gap (%s) is gone, remove it", c.name, 100*e, c.gap)
		case c.gap != "" && math.Abs(e) > 2*issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% beyond twice 25%%, more than its known gap (%s)", c.name, 100*e, c.gap)
		case c.gap != "":
			t.Logf("    known gap: %s", c.gap)
		case math.Abs(e) > issueTolerance:
			t.Errorf("%s: throughput error %+.1f%% beyond 25%% (%s)", c.name, 100*e, c.source())
		}
	}
	logGroups(t, by)
	s, a := medians(all)
	t.Logf("all: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(all), 100*a, 100*s)
	// Held to issue 19's targets over the runs without a named gap (4.9%, +4.6% over 47
	// runs when this source was added).
	hs, ha := medians(held)
	t.Logf("without the known gaps: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(held), 100*ha, 100*hs)
	if len(all) != len(mlperfRuns) || ha > 0.10 || math.Abs(hs) > 0.05 {
		t.Errorf("over %d of %d runs, without the known gaps: median |error| %.1f%%, signed median %+.1f%%: beyond 10%% and 5%%", len(held), len(mlperfRuns), 100*ha, 100*hs)
	}
}

// mlperfBlockStepSeconds is the step time of one training block of an MLPerf log: the
// seconds between its block_start and block_stop (time_ms) over the global batches it
// trained, counted as the log counts them: units (GPT-3's epoch_count, tokens; the
// Llama logs' samples_count difference, sequences) over unitsPerStep (the global batch
// in tokens, global_batch_size x 2,048, or in sequences). A count that is not a whole
// number of global batches is refused: the block would not be a whole number of steps.
func mlperfBlockStepSeconds(startMs, stopMs, units, unitsPerStep int64) (float64, error) {
	if units <= 0 || unitsPerStep <= 0 || units%unitsPerStep != 0 || stopMs <= startMs {
		return 0, fmt.Errorf("a block of %d units at %d a step, %d ms to %d ms: not a whole number of steps", units, unitsPerStep, startMs, stopMs)
	}
	return float64(stopMs-startMs) / 1e3 / float64(units/unitsPerStep), nil
}

// TestMLPerfBlockStepSeconds checks the derivation on blocks of the logs: v4.0's
// NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_0.txt, the second block
// (block_start 1715043961195, block_stop 1715044081144, epoch_count 51,904,512 tokens
// at global_batch_size 2,304 of 2,048 tokens: 11 steps of 10.9045 s); v5.1's
// AMD/results/MI355X_EPYC_9575F_pytorch/llama31_8b/result_0.txt, the second block
// (1759966624658 to 1759967026079, samples_count 12,288 to 24,576 at 32: 384 steps of
// 1.0454 s, within 0.1% of the tracked_stats throughput, 30.619 samples a second,
// that closes the block); and a block that is not a whole number of steps.
// TestMLPerf8BResidualGrowsWithNodes holds the argument the Llama 3.1 8B note makes
// against pricing more per-step fixed work for the B200 rows of NVIDIA's v5.1 NeMo
// implementation: the work outside the CUDA graph (the gradient norm and its .item(),
// current scaling's master-weight amax and cast, the host's loops over the fp8
// parameters) is the same at every node count and larger per rank on one node (a
// larger shard), so it cannot be what the multi-node rows miss unless the one-node
// row's residual (logged step less planned step) is at least as large. The test fails
// when it is not, and the argument has to be read again.
func TestMLPerf8BResidualGrowsWithNodes(t *testing.T) {
	oneNode, multi := math.NaN(), math.Inf(1)
	for _, c := range mlperfRuns {
		if c.model != "llama3-8b" || c.device != "b200" || strings.HasPrefix(c.config, "Cisco/") {
			continue
		}
		res, err := Run(context.Background(), c.request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		residual := c.seconds - res.Step.StepSeconds
		t.Logf("%-58s logged %.4f s, planned %.4f s: %+.1f ms", c.name, c.seconds, res.Step.StepSeconds, 1e3*residual)
		if c.gpus <= 8 {
			oneNode = residual
		} else {
			multi = min(multi, residual)
		}
	}
	if math.IsNaN(oneNode) || math.IsInf(multi, 1) {
		t.Fatalf("want a one-node and a multi-node B200 Llama 3.1 8B row, got one-node %v, multi-node %v", oneNode, multi)
	}
	if oneNode >= multi {
		t.Errorf("the one-node row's residual %.1f ms is not below every multi-node row's (least %.1f ms): per-step fixed work is no longer ruled out by node count", 1e3*oneNode, 1e3*multi)
	}
}

func TestMLPerfBlockStepSeconds(t *testing.T) {
	for _, c := range []struct {
		start, stop, units, perStep int64
		want                        float64
		ok                          bool
	}{
		{1715043961195, 1715044081144, 51904512, 2304 * 2048, 119.949 / 11, true},
		{1759966624658, 1759967026079, 24576 - 12288, 32, 401.421 / 384, true},
		{0, 1000, 51904512, 2048 * 2048, 0, false},
	} {
		got, err := mlperfBlockStepSeconds(c.start, c.stop, c.units, c.perStep)
		if (err == nil) != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("block %d..%d, %d units at %d a step: got %v, %v; want %v (ok %t)", c.start, c.stop, c.units, c.perStep, got, err, c.want, c.ok)
		}
	}
	// The AMD block's rate is the throughput its log states within 0.1% (the
	// callback's timer, src/callbacks.py, leaves out the few milliseconds between the
	// block's start and its first step: 30.611 against 30.619 samples a second).
	if s, _ := mlperfBlockStepSeconds(1759966624658, 1759967026079, 12288, 32); math.Abs(32/s/30.61911039028611-1) > 1e-3 {
		t.Errorf("AMD block: %.4f samples a second, the log's tracked_stats says 30.6191", 32/s)
	}
}

// mlperfConfigName matches the size a configuration's file name states, NVIDIA's
// config_<system>_<nodes>x<GPUs a node>x<MINIBS>x... convention.
var mlperfConfigName = regexp.MustCompile(`(\d+)x(\d+)x(\d+)x`)

// mlperfEnvOverrides are the rows whose run set the size from the environment, where
// the configuration reads it so: the log's global_batch_size is the run's.
var mlperfEnvOverrides = map[string]string{
	// config_DGXH100_96x8x128x4x8_mbs1.sh: DGXNNODES="${DGXNNODES:-96}"; 64 nodes x 8 /
	// 32 = 16 replicas of MINIBS 128: the log's 2,048.
	"v3.1 GPT-3 175B, 512 H100, TP4 PP8 VP12, GBS 2048": "DGXNNODES=64",
	// config_DGXH100_64x8x128x4x8_mbs2.sh: MINIBS="${MINIBS:=128}"; the log's 2,304 is
	// 16 replicas of 144.
	"v4.0 GPT-3 175B, 512 H100, TP4 PP8 VP4, GBS 2304": "MINIBS=144",
}

// TestMLPerfRowsMatchConfigs holds each row to its configuration's file name: the
// nodes times the GPUs a node are the row's GPUs, MINIBS times the data-parallel
// replicas its global batch (but where the run overrode them from the environment,
// mlperfEnvOverrides), the global batch a whole number of micro-batches a replica,
// and every round cited has its commit.
func TestMLPerfRowsMatchConfigs(t *testing.T) {
	for _, c := range mlperfRuns {
		if mlperfCommits[c.round] == "" {
			t.Errorf("%s: round %s has no commit", c.name, c.round)
		}
		dp := c.gpus / (c.tp * c.pp * max(1, c.cp))
		if dp*c.tp*c.pp*max(1, c.cp) != c.gpus || c.gbs%(dp*c.mbs) != 0 {
			t.Errorf("%s: %d GPUs over TP %d PP %d CP %d, GBS %d in micro-batches of %d: not whole", c.name, c.gpus, c.tp, c.pp, c.cp, c.gbs, c.mbs)
		}
		m := mlperfConfigName.FindStringSubmatch(c.config[strings.LastIndex(c.config, "/")+1:])
		if m == nil {
			continue // AMD's configurations name the size differently (1x8x1: GBS in the file)
		}
		nodes, perNode, minibs := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
		if why := mlperfEnvOverrides[c.round+" "+c.name]; why != "" {
			t.Logf("%s: %s (%s)", c.name, why, c.config)
			continue
		}
		if nodes*perNode != c.gpus || minibs*dp != c.gbs {
			t.Errorf("%s: %s names %d x %d GPUs and MINIBS %d (GBS %d); the row has %d GPUs and GBS %d", c.name, c.config, nodes, perNode, minibs, minibs*dp, c.gpus, c.gbs)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMLPerfLayout checks the chunks layout builds against Megatron-Core's
// get_num_layers_to_build by hand: Llama 3.1 405B at PP 8 and VP 8 with both
// account_for flags, 128 slots over 64 chunks, two a chunk: the first chunk the
// embedding and block 1, every middle chunk two blocks, the last block 126, the final
// norm and the head (planned layers 0 to 128); GPT-3 175B at PP 8 and VP 12, one block
// a chunk, the first with the embedding and the last with the norm and the head; and
// one chunk, no layout.
func TestMLPerfLayout(t *testing.T) {
	l := mlperfRun{model: "llama3.1-405b", pp: 8, vp: 8}.layout()
	if len(l) != 65 || l[0] != 0 || l[1] != 2 || l[63] != 126 || l[64] != 129 {
		t.Fatalf("405B PP8 VP8: %v", l)
	}
	for i := 1; i < 63; i++ {
		if l[i+1]-l[i] != 2 {
			t.Errorf("405B chunk %d: layers %d..%d, want two blocks", i, l[i], l[i+1])
		}
	}
	g := mlperfRun{model: "gpt3-175b", pp: 8, vp: 12}.layout()
	if len(g) != 97 || g[0] != 0 || g[1] != 2 || g[2] != 3 || g[95] != 96 || g[96] != 99 {
		t.Errorf("GPT-3 PP8 VP12: %v", g)
	}
	if l := (mlperfRun{model: "llama3-8b", pp: 1, vp: 1}).layout(); l != nil {
		t.Errorf("one chunk: %v, want none", l)
	}
}

// TestMLPerfUserbuffersConfigs holds each named config (ubConfig) to the tp_overlap
// yaml the submission ran, in the settings the planner prices: every bulk overlap
// without set_sm_margin, and proj_fprop's and fc2_fprop's method, num_sm, num_splits
// and margin (a ring exchange: one multiprocessor, with a margin). v3.1's yaml runs
// fc2_fprop as a pipeline of 4 multiprocessors where the config it is planned with has
// 20: the one difference, expected here.
func TestMLPerfUserbuffersConfigs(t *testing.T) {
	pipe := func(n int) analytic.UserbuffersGEMM {
		return analytic.UserbuffersGEMM{Method: analytic.UBPipeline, NumSM: n, NumSplits: 4, SetSMMargin: true}
	}
	ring := analytic.UserbuffersGEMM{Method: analytic.UBRingExchange, NumSM: 1, SetSMMargin: true}
	for _, c := range []struct {
		row        mlperfRun
		proj, fc2  analytic.UserbuffersGEMM // the yaml's
		fc2Differs bool
	}{
		{mlperfRun{round: "v3.0", model: "gpt3-175b", device: "h100-sxm"}, pipe(24), pipe(20), false},
		{mlperfRun{round: "v3.1", model: "gpt3-175b", device: "h100-sxm"}, pipe(24), pipe(4), true},
		{mlperfRun{round: "v4.1", model: "gpt3-175b", device: "h100-sxm"}, pipe(24), ring, false},
		{mlperfRun{round: "v5.0", model: "llama3.1-405b", device: "h100-sxm"}, ring, ring, false},
	} {
		name := c.row.ubConfig()
		u, ok := analytic.LookupUserbuffersConfig(name)
		if !ok || name == "" {
			t.Fatalf("%s %s: config %q not found", c.row.round, c.row.model, name)
		}
		for _, g := range []analytic.UserbuffersGEMM{u.QKVDgrad, u.QKVWgrad, u.FC1Dgrad, u.FC1Wgrad} {
			if g.Method != analytic.UBBulk || g.SetSMMargin {
				t.Errorf("%s: a bulk slot %+v, the yaml's are bulk without set_sm_margin", name, g)
			}
		}
		// priced is a slot's method, num_sm, num_splits and margin.
		priced := func(g analytic.UserbuffersGEMM) [4]any {
			return [4]any{g.Method, g.NumSM, g.NumSplits, g.SetSMMargin}
		}
		if priced(u.ProjFprop) != priced(c.proj) {
			t.Errorf("%s: proj_fprop %+v, the yaml's %+v", name, u.ProjFprop, c.proj)
		}
		if same := priced(u.FC2Fprop) == priced(c.fc2); same == c.fc2Differs {
			t.Errorf("%s: fc2_fprop %+v, the yaml's %+v (a difference expected: %t)", name, u.FC2Fprop, c.fc2, c.fc2Differs)
		}
	}
}

// TestMLPerfTensorCommOverlap holds each row's parallelism.overlap_tensor_comm to what
// its implementation ran (mlperfRun.tpCommOverlap): off for Cisco's TP 2 run, whose
// pretrain.py never appends NeMo's MegatronCommOverlapCallback, on for every other row
// with more than one tensor-parallel rank (TP_COMM_OVERLAP=True through the callback or
// NeMo 1's ub_tp_comm_overlap), and left out with one rank, where there is nothing to
// overlap.
func TestMLPerfTensorCommOverlap(t *testing.T) {
	var cisco int
	for _, c := range mlperfRuns {
		want := OverlapOn
		switch {
		case c.tp == 1:
			want = ""
		case strings.HasPrefix(c.config, "Cisco/"):
			want = OverlapOff
			cisco++
		}
		if got := c.request().Parallelism.OverlapTensorComm; got != want {
			t.Errorf("%s %s (%s): overlap_tensor_comm %q, want %q", c.round, c.name, c.config, got, want)
		}
	}
	if cisco != 1 {
		t.Errorf("%d Cisco rows with tensor parallelism, want 1 (the TP 2 run)", cisco)
	}
}
