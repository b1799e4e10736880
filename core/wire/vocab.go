// Package wire is the planning request and its result as data: the request's types and
// their JSON (docs/request.md), Decode, which reads a request strictly, and
// ModelFromFile, which puts a model file into a request; a result's plan, simulated
// schedule and placement (Plan, ScheduleResult, Placement); a search's query, progress
// and answer (SearchQuery, SearchProgress, SearchAnswer); a calibration (Calibration);
// the exports' types (docs/export.md); and the request's vocabulary, the values each
// enumerated field takes (precisions, schedules, sharding and recomputation modes, ...),
// the device, link and architecture presets, and its caps, for every front end to list
// rather than keep a copy (core/request's tests check each list against what the
// planner accepts). It holds no planning and has no type aliases: core/request
// normalizes and runs a request and converts the planner's types to these, core/search
// runs a search, core/export writes an export.
//
// A program that only builds requests and reads results, as the browser page does
// (main.wasm, whose planner runs in a Web Worker), imports this package instead of
// core/request, so that it links none of the planner: not the estimator, the
// partitioner or the simulator, nor crypto/sha256, which core/request's content ids
// need. It imports core/model (field errors) and nothing of the planner (wasm's
// TestPageLinksNoPlanner holds it and the page to that).
package wire

// MaxDevices bounds a cluster's devices and every parallel degree of a request (4,096):
// cluster.count, cluster.devices_per_node and parallelism.pipeline, data, tensor,
// context and expert (core/cluster.MaxStages).
const MaxDevices = 1 << 12

// Each list below gives the values a request's field accepts, core's default first where
// the field has one default (the zero value, "", also means the default).

// DTypes lists model.architecture.dtype: the element type of the passes.
func DTypes() []string { return []string{"bf16", "fp16", "fp32", "fp8"} }

// FP8Recipes lists model.architecture.fp8_recipe: how fp8 tensors are scaled.
func FP8Recipes() []string { return []string{"delayed", "current", "blockwise", "mxfp8"} }

// Attentions lists model.architecture.attention: the attention kernel.
func Attentions() []string {
	return []string{"flash", "flash3", "cudnn", "flash-triton", "flash1", "eager"}
}

// CrossEntropies lists model.architecture.cross_entropy: the loss kernel
// (cluster.CrossEntropyKinds).
func CrossEntropies() []string {
	return []string{"unfused", "fused", "fused-inplace", "vocab-parallel", "loss-parallel"}
}

// Frameworks lists model.architecture.framework: how the model runs (core/cluster's
// framework modes). Left out, core's default is eager on GPUs and none elsewhere.
func Frameworks() []string {
	return []string{"eager", "compiled", "cuda-graphs", "megatron", "deepspeed", "none"}
}

// RecomputeModules lists training.recompute_modules: the parts of a block selective
// recomputation reruns, in Megatron-LM's --recompute-modules names and order.
func RecomputeModules() []string {
	return []string{"core_attn", "mlp", "moe_act", "layernorm", "mla_up_proj", "moe", "shared_experts"}
}

// Splits lists model.architecture.split: what one layer of an architecture is.
func Splits() []string { return []string{"block", "sublayer"} }

// Ties lists model.architecture.tie: where a tied embedding lives.
func Ties() []string { return []string{"copy", "stage"} }

// Modes lists training.mode.
func Modes() []string { return []string{"training", "inference"} }

// Precisions lists training.precision: which copies of the weights, gradients and
// optimizer state are kept in which precision.
func Precisions() []string {
	return []string{"mixed", "mixed-fp32-grads", "amp", "pure", "deepspeed-bf16"}
}

// Optimizers lists training.optimizer.
func Optimizers() []string { return []string{"adamw", "adam", "sgd"} }

// RecomputeModes lists training.recompute: which activations the backward rebuilds
// ("selective-op": torchtitan's per-op selective checkpointing; "auto": the planner
// chooses per layer).
func RecomputeModes() []string { return []string{"none", "selective", "selective-op", "full", "auto"} }

// ShardingModes lists parallelism.sharding: what data-parallel replicas shard ("fsdp"
// is read as "zero3").
func ShardingModes() []string { return []string{"none", "zero1", "zero2", "zero3", "hsdp"} }

// ShardingFields lists the parallelism fields (their JSON names) that go with a
// sharding mode (parallelism.sharding, "fsdp" read as "zero3"; "" is none), as core's
// checks (core/request's parallelism) accept them: zero3 and hsdp, which gather
// weights layer by layer, take prefetch, reshard, reduce_dtype and fully_shard (the last
// two with an architecture in training), hsdp its shard_group too; the other modes none
// of them, nor does a mode core does not know. A front end that changes the sharding
// keeps what the new mode lists and clears the rest.
func ShardingFields(sharding string) []string {
	switch sharding {
	case "zero3", "fsdp":
		return []string{"prefetch", "reshard", "reduce_dtype", "fully_shard"}
	case "hsdp":
		return []string{"prefetch", "reshard", "reduce_dtype", "fully_shard", "shard_group"}
	}
	return nil
}

// ContextMethods lists parallelism.context_method: how context parallelism exchanges
// keys and values.
func ContextMethods() []string { return []string{"ring", "all-to-all", "hierarchical", "all-gather"} }

// ExpertDispatchers lists parallelism.expert_dispatcher: how a mixture of experts moves
// tokens to their experts and back.
func ExpertDispatchers() []string { return []string{"alltoall", "deepep", "deepep-fp8", "hybridep"} }

// PrefetchModes lists parallelism.prefetch (zero3 and hsdp): whether a layer's weights
// are gathered while the layer before it computes.
func PrefetchModes() []string { return []string{"next-layer", "none"} }

// ReduceDTypes lists parallelism.reduce_dtype (zero3 and hsdp) besides its empty
// default (the gradients' own type).
func ReduceDTypes() []string { return []string{"fp32"} }

// ReshardModes lists parallelism.reshard (zero3 and hsdp): whether a layer's gathered
// weights and whole gradients are freed layer by layer or held through the step.
func ReshardModes() []string { return []string{"layer", "step"} }

// OverlapModes lists parallelism.overlap_grad_reduce and overlap_param_gather; left
// out, each is the framework's default.
func OverlapModes() []string { return []string{"on", "off"} }

// TensorOverlapModes lists parallelism.overlap_tensor_comm: on (the framework mode's
// method: async-tp for compiled, userbuffers otherwise), off, or a method named:
// userbuffers (Transformer Engine) or async-tp (PyTorch's, compiled only). Left out,
// the framework's default (off).
func TensorOverlapModes() []string { return []string{"on", "off", "userbuffers", "async-tp"} }

// TPCommOverlapConfigs lists parallelism.tp_comm_overlap_config: te-default
// (Transformer Engine's initialize_ub defaults), then the published tuned userbuffers
// configs by the names Megatron-Bridge's comm_overlap.py and NeMo-Framework-Launcher's
// tp_overlap configs give them (core/analytic's table, UserbuffersConfigNames). Each
// tuned config is of one hidden size, tensor degree and device family; core refuses it
// elsewhere, naming the field.
func TPCommOverlapConfigs() []string {
	return []string{"te-default",
		"userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192", "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192",
		"userbuffers_bf16_b200_h8192_tp2_mbs1_seqlen8192", "userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192",
		"userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192", "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192",
		"userbuffers_bf16_b200_h16384_tp4_cp2_mbs1_seqlen8192", "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192",
		"userbuffers_bf16_h100_h6144_tp2_mbs2_seqlen2048", "userbuffers_fp8_h100_h6144_tp2_mbs2_seqlen2048",
		"userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048", "userbuffers_fp8_h100_h12288_tp4_mbs1_seqlen2048",
		"userbuffers_bf16_b200_h12288_tp4_mbs1_seqlen2048", "userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048",
		"userbuffers_bf16_b200_h6144_tp2_mbs1_seqlen4096", "userbuffers_bf16_b200_h18432_tp8_mbs1_seqlen4096",
		"userbuffers_fp8_b200_h18432_tp8_mbs1_seqlen4096",
		"ub_cfg_h100_h12288_tp4_mbs1_seqlen2048", "ub_cfg_h100_h6144_tp2_mbs2_seqlen2048", "ub_cfg_h100_h8192_tp4_mbs1_seqlen4096",
	}
}

// MaxExpertImbalance bounds model.architecture.expert_imbalance (at least 1, balanced
// routing) and capacity_factor (0, dropless, or above 0): a device that gets all of an
// expert-parallel group's tokens gets EP times the mean.
const MaxExpertImbalance = 1 << 12

// ScheduleKinds lists the pipeline schedules by kind; interleaved is written with its
// chunks per device ("interleaved:2").
func ScheduleKinds() []string {
	return []string{"gpipe", "1f1b", "interleaved", "zb-h1", "ipu", "overlap", "inference"}
}

// Schedules lists schedule.name values a picker offers: every kind, interleaved with 2
// and 4 chunks per device (any count from 2 is accepted), in Megatron-LM's order and in
// PyTorch's (torch.distributed.pipelining's ScheduleInterleaved1F1B, interleaved-pytorch).
func Schedules() []string {
	return []string{"gpipe", "1f1b", "interleaved:2", "interleaved:4", "interleaved-pytorch:2", "interleaved-pytorch:4", "zb-h1", "ipu", "overlap", "inference"}
}

// Objectives lists objective: what the split minimises.
func Objectives() []string { return []string{"compute", "compute+transfer"} }

// Partitions lists partition: contiguous layer ranges, or convex parts of the graph.
func Partitions() []string { return []string{"layers", "graph"} }

// SearchedSchedules lists the schedules a training search tries when its query names none.
// interleaved-pytorch:V is tried only when named (a query that knows PyTorch runs the
// plan): its orders are interleaved:V's for more microbatches than devices, and with as
// many it holds fewer microbatches in the same step time on equal stages (core/schedule's
// closed forms; unequal stages and transfers move it a little either way).
func SearchedSchedules() []string { return []string{"1f1b", "gpipe", "interleaved:2", "zb-h1"} }

// SearchSchedules lists the schedules a search's schedule knob may fix: Schedules but
// overlap, which core/search refuses (its grid tries gpipe, 1f1b, interleaved:V,
// interleaved-pytorch:V, zb-h1, ipu and inference).
func SearchSchedules() []string {
	var out []string
	for _, s := range Schedules() {
		if s != "overlap" {
			out = append(out, s)
		}
	}
	return out
}

// SearchZeROStages names the values of a search's zero knob by their sharding: the i-th
// is ZeRO stage i (HSDP is zero3 with the shard_group knob).
func SearchZeROStages() []string { return []string{"none", "zero1", "zero2", "zero3"} }

// SearchedRecomputes lists the recomputation modes a training search tries when its query
// names none: an architecture's, or (architecture false) a profile's, which has no
// selective recomputation. Per-layer recomputation ("auto") is searched when named: a
// plan of it now takes milliseconds on Llama-3.1-70B (core/request's
// BenchmarkRecomputeAuto), but the search still plans about 2,000 auto candidates that
// its bounds (with the least recomputation each stage's memory forces, core/search/
// evaluate's Refine) cannot rule out, each dearer than a fixed mode's plan (it also
// plans the global modes it must beat), and some of DeepSeek-V3's take seconds (2
// stages of 9 options a block): with auto in this list, Llama-3.1-70B's search
// (BenchmarkSearchLlama31_70B) took 14 s of CPU against 3.9 s (25 s before that bound;
// interleaved candidates take auto too), and DeepSeek-V3's did not end in 150 s (issue
// 22).
func SearchedRecomputes(architecture bool) []string {
	if architecture {
		return []string{"none", "selective", "full"}
	}
	return []string{"none", "full"}
}

// DevicePreset is a value of cluster.device, a device preset, with its usual links: Link
// inside a node (core's default for cluster.link_intra, and for cluster.link of one
// node) and Network between nodes (cluster.link_inter's default; "" where the preset
// names none).
type DevicePreset struct {
	Name    string `json:"name"`
	Link    string `json:"link"`
	Network string `json:"network,omitempty"`
}

// DevicePresets lists cluster.device's presets, sorted by name (core/cluster holds their
// figures).
func DevicePresets() []DevicePreset {
	return []DevicePreset{
		{"a100-40gb", "nvlink3", "ib-hdr"},
		{"a100-80gb", "nvlink3", "ib-hdr"},
		{"b200", "nvlink5", "ib-ndr"},
		{"b300", "nvlink5", "ib-xdr"},
		{"bow", "ipu-link", ""},
		{"gaudi3", "gaudi3-roce", "gaudi3-roce"},
		{"gb200", "nvswitch4", "ib-ndr"},
		{"gb300", "nvswitch4", "ib-xdr"},
		{"gc200", "ipu-link", ""},
		{"h100-96gb-500w", "nvlink4", "roce-400g"},
		{"h100-sxm", "nvlink4", "ib-ndr"},
		{"h200", "nvlink4", "ib-ndr"},
		{"mi300x", "xgmi", "roce-400g"},
		{"mi325x", "xgmi", "roce-400g"},
		{"mi355x", "xgmi4", "roce-400g"},
		{"tpu-v4", "tpu-ici", ""},
		{"tpu-v5e", "tpu-ici", ""},
		{"tpu-v5p", "tpu-ici-v5p", "tpu-dcn-50g"},
		{"tpu-v6e", "tpu-ici-v6e", ""},
		{"trainium2", "neuronlink-v3", "efa-v3"},
	}
}

// LinkPresets lists the link presets of cluster.link, link_intra and link_inter, sorted.
func LinkPresets() []string {
	return []string{"efa-v3", "gaudi3-roce", "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "ipu-link", "neuronlink-v3",
		"nvlink2", "nvlink3", "nvlink4", "nvlink5", "nvswitch1", "nvswitch2", "nvswitch3", "nvswitch4", "opa-nccl", "pcie4", "pcie5",
		"roce-100g", "roce-200g", "roce-400g", "tpu-dcn-50g", "tpu-ici", "tpu-ici-v5p", "tpu-ici-v6e", "xgmi", "xgmi4"}
}

// Architectures lists the bundled architectures model.architecture.name takes (their
// HuggingFace configs are core/arch's), sorted.
func Architectures() []string {
	return []string{"bert-base-uncased", "bert-large-uncased", "deepseek-v2", "deepseek-v2-lite", "deepseek-v3",
		"gemma-2b", "gemma-7b", "gpt-oss-120b", "gpt-oss-20b", "gpt2", "gpt2-large", "gpt2-medium", "gpt2-xl", "llama-2-70b", "llama-2-7b",
		"llama-3.1-70b", "llama-3.2-1b", "llama-4-maverick-17b-128e", "llama-4-scout-17b-16e", "meta-llama-3-8b",
		"minitron-4b", "mistral-7b-v0.1", "mixtral-8x22b-v0.1", "mixtral-8x7b-v0.1", "nemotron-4-340b",
		"qwen1.5-moe-a2.7b", "qwen2-7b", "qwen3-235b-a22b", "qwen3-30b-a3b"}
}

// MoEAuxLosses lists training.moe_aux_loss: none (the default), aux_loss (per
// microbatch) and seq_aux_loss (per sequence), Megatron-Core's
// moe_router_load_balancing_type values that core prices (analytic.AuxLoss).
func MoEAuxLosses() []string { return []string{"none", "aux_loss", "seq_aux_loss"} }
