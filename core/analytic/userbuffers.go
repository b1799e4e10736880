package analytic

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/arch"
	"pipeplan/core/model"
)

// TEDefaultUserbuffers names Transformer Engine's initialize_ub defaults
// (Options.TensorCommConfig's default): the userbuffers overlap as
// calc.userbuffersChunks prices it when no tuned config is named.
const TEDefaultUserbuffers = "te-default"

// UserbuffersMethod is a Transformer Engine userbuffers overlap method (the "method" of
// one GEMM's entry in initialize_ub's ub_cfgs).
type UserbuffersMethod string

// The methods of a userbuffers overlap.
const (
	// UBBulk: one product beside a bulk all-gather or reduce-scatter whose kernel holds
	// NumSM multiprocessors (CommOverlap with comm_type bulk).
	UBBulk UserbuffersMethod = "bulk"
	// UBPipeline: the product split into NumSplits products of m/NumSplits rows, each
	// chunk's reduce-scatter on NumSM multiprocessors beside the next chunk's product.
	UBPipeline UserbuffersMethod = "pipeline"
	// UBRingExchange: CommOverlapP2P's ring exchange, t products of m/t rows, the
	// transfers on the copy engine (num_sm 1).
	UBRingExchange UserbuffersMethod = "ring_exchange"
)

// UserbuffersGEMM is one GEMM's userbuffers settings, as Megatron-Bridge's
// comm_overlap.py dataclasses (BulkOverlapCfg, PipelineOverlapCfg,
// RingExchangeOverlapCfg) hand them to initialize_ub.
type UserbuffersGEMM struct {
	Method UserbuffersMethod
	// NumSM is the communication kernel's multiprocessors (num_sm).
	NumSM int
	// CGASize is the communication kernel's cluster size (cga_size; not priced).
	CGASize int
	// NumSplits is a pipeline's chunks (num_splits; 0 for the other methods).
	NumSplits int
	// SetSMMargin: the GEMM runs on sm_count - NumSM multiprocessors
	// (CommOverlapCore's _math_sms); without it the GEMM is launched for all of them.
	SetSMMargin bool
	// AtomicGEMM: one atomic GEMM signalling the chunks (atomic_gemm; false in every
	// config of the table, not priced).
	AtomicGEMM bool
}

// MarginSMs is the multiprocessors the GEMM leaves to the communication kernel for its
// whole time: NumSM with set_sm_margin, else 0 (the GEMM launched for every
// multiprocessor; the kernel's NumSM beside it while the collective runs are
// calc.bulkContention's).
func (g UserbuffersGEMM) MarginSMs() float64 {
	if !g.SetSMMargin {
		return 0
	}
	return float64(g.NumSM)
}

// UserbuffersConfig is a transformer layer's userbuffers config: what it was tuned
// for (the name's device, hidden size, tensor- and context-parallel degrees,
// microbatch, sequence and precision) and the settings of the six GEMMs a config may
// choose. The other four (qkv_fprop, proj_dgrad, fc1_fprop, fc2_dgrad) are ring
// exchanges without a margin in every config of the table (RingExchangeOverlapCfg
// (aggregate=False)), as in initialize_ub's defaults.
type UserbuffersConfig struct {
	Name string
	// Device is the GPU the name gives: "h100" or "b200".
	Device                     string
	Hidden, TP, CP, Microbatch int
	Seq                        int
	FP8                        bool
	QKVDgrad, QKVWgrad         UserbuffersGEMM
	FC1Dgrad, FC1Wgrad         UserbuffersGEMM
	ProjFprop, FC2Fprop        UserbuffersGEMM
}

// ubBulk is BulkOverlapCfg(num_sm=n, cga_size=2, set_sm_margin=False).
func ubBulk(n int) UserbuffersGEMM {
	return UserbuffersGEMM{Method: UBBulk, NumSM: n, CGASize: 2}
}

// ubPipeline is PipelineOverlapCfg(num_sm=n, cga_size=2, num_splits=4,
// set_sm_margin=True).
func ubPipeline(n int) UserbuffersGEMM {
	return UserbuffersGEMM{Method: UBPipeline, NumSM: n, CGASize: 2, NumSplits: 4, SetSMMargin: true}
}

// ubRing is RingExchangeOverlapCfg(num_sm=1, set_sm_margin=True).
var ubRing = UserbuffersGEMM{Method: UBRingExchange, NumSM: 1, CGASize: 1, SetSMMargin: true}

// teDefaultUserbuffers is initialize_ub's get_default_config
// (transformer_engine/pytorch/module/base.py, Transformer Engine 2.x) for the six
// slots: bulk overlaps and pipelines of num_sm 16 with set_sm_margin, pipelines of 4
// splits (userbuffersCommSMs, userbuffersPipelineSplits).
var teDefaultUserbuffers = UserbuffersConfig{
	Name:      TEDefaultUserbuffers,
	QKVDgrad:  UserbuffersGEMM{Method: UBBulk, NumSM: userbuffersCommSMs, SetSMMargin: true},
	QKVWgrad:  UserbuffersGEMM{Method: UBBulk, NumSM: userbuffersCommSMs, SetSMMargin: true},
	FC1Dgrad:  UserbuffersGEMM{Method: UBBulk, NumSM: userbuffersCommSMs, SetSMMargin: true},
	FC1Wgrad:  UserbuffersGEMM{Method: UBBulk, NumSM: userbuffersCommSMs, SetSMMargin: true},
	ProjFprop: UserbuffersGEMM{Method: UBPipeline, NumSM: userbuffersCommSMs, NumSplits: userbuffersPipelineSplits, SetSMMargin: true},
	FC2Fprop:  UserbuffersGEMM{Method: UBPipeline, NumSM: userbuffersCommSMs, NumSplits: userbuffersPipelineSplits, SetSMMargin: true},
}

// userbuffersConfigs are the published tuned userbuffers configs of NVIDIA's
// performance recipes, read from Megatron-Bridge's
// src/megatron/bridge/training/comm_overlap.py at v0.2.0 (commit 717c62de; the
// configs are unchanged from the file's first commit, 958fb9b7, to 067f987d of
// 2026), whose recipes pass them as comm_overlap.tp_comm_overlap_cfg
// (scripts/performance: utils/helpers.py's COMM_OVERLAP_CONFIG_MAP in v0.1.0rc4,
// configs/llama3/llama3_llm_pretrain.py and configs/llama31/llama31_llm_pretrain.py
// from v0.2.0). NeMo's nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py
// publishes the same names (NeMo 2.x's recipes pass them as tp_comm_overlap_cfg);
// some of its copies differ (its fp8 h8192_tp4 and h12288_tp4 configs run
// proj_fprop as a pipeline of num_sm 24 where Megatron-Bridge's run a ring exchange),
// and the table is Megatron-Bridge's. The LoRA configs (no weight gradients) are left
// out.
var userbuffersConfigs = []UserbuffersConfig{
	{Name: "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192", Device: "h100", Hidden: 8192, TP: 4, CP: 1, Microbatch: 1, Seq: 8192,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubPipeline(24), FC2Fprop: ubPipeline(16)},
	{Name: "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192", Device: "h100", Hidden: 8192, TP: 4, CP: 1, Microbatch: 1, Seq: 8192, FP8: true,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_b200_h8192_tp2_mbs1_seqlen8192", Device: "b200", Hidden: 8192, TP: 2, CP: 1, Microbatch: 1, Seq: 8192,
		QKVDgrad: ubBulk(16), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubPipeline(32), FC2Fprop: ubPipeline(16)},
	{Name: "userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192", Device: "b200", Hidden: 8192, TP: 2, CP: 1, Microbatch: 1, Seq: 8192, FP8: true,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192", Device: "h100", Hidden: 16384, TP: 8, CP: 2, Microbatch: 1, Seq: 8192,
		QKVDgrad: ubBulk(2), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(2), ProjFprop: ubPipeline(24), FC2Fprop: ubPipeline(8)},
	{Name: "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192", Device: "h100", Hidden: 16384, TP: 8, CP: 2, Microbatch: 1, Seq: 8192, FP8: true,
		QKVDgrad: ubBulk(2), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(2), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_b200_h16384_tp4_cp2_mbs1_seqlen8192", Device: "b200", Hidden: 16384, TP: 4, CP: 2, Microbatch: 1, Seq: 8192,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(24), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(2), ProjFprop: ubPipeline(32), FC2Fprop: ubPipeline(8)},
	{Name: "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192", Device: "b200", Hidden: 16384, TP: 4, CP: 2, Microbatch: 1, Seq: 8192, FP8: true,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(32), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_h100_h6144_tp2_mbs2_seqlen2048", Device: "h100", Hidden: 6144, TP: 2, CP: 1, Microbatch: 2, Seq: 2048,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(4), FC1Wgrad: ubBulk(16), ProjFprop: ubPipeline(16), FC2Fprop: ubPipeline(24)},
	{Name: "userbuffers_fp8_h100_h6144_tp2_mbs2_seqlen2048", Device: "h100", Hidden: 6144, TP: 2, CP: 1, Microbatch: 2, Seq: 2048, FP8: true,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(4), FC1Wgrad: ubBulk(16), ProjFprop: ubPipeline(16), FC2Fprop: ubPipeline(24)},
	{Name: "userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048", Device: "h100", Hidden: 12288, TP: 4, CP: 1, Microbatch: 1, Seq: 2048,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(4), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubPipeline(24), FC2Fprop: ubRing},
	{Name: "userbuffers_fp8_h100_h12288_tp4_mbs1_seqlen2048", Device: "h100", Hidden: 12288, TP: 4, CP: 1, Microbatch: 1, Seq: 2048, FP8: true,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(4), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_b200_h12288_tp4_mbs1_seqlen2048", Device: "b200", Hidden: 12288, TP: 4, CP: 1, Microbatch: 1, Seq: 2048,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048", Device: "b200", Hidden: 12288, TP: 4, CP: 1, Microbatch: 1, Seq: 2048, FP8: true,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_b200_h6144_tp2_mbs1_seqlen4096", Device: "b200", Hidden: 6144, TP: 2, CP: 1, Microbatch: 1, Seq: 4096,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(32), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubRing},
	{Name: "userbuffers_bf16_b200_h18432_tp8_mbs1_seqlen4096", Device: "b200", Hidden: 18432, TP: 8, CP: 1, Microbatch: 1, Seq: 4096,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(32), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubPipeline(24)},
	{Name: "userbuffers_fp8_b200_h18432_tp8_mbs1_seqlen4096", Device: "b200", Hidden: 18432, TP: 8, CP: 1, Microbatch: 1, Seq: 4096, FP8: true,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(32), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(8), ProjFprop: ubRing, FC2Fprop: ubRing},
}

// launcherUserbuffersConfigs are NeMo-Framework-Launcher's tuned userbuffers configs
// (launcher_scripts/conf/training/tp_overlap/<name>.yaml) that its training configs
// name as their defaults' tp_overlap@model.ub_tp_comm_overlap_cfg, under the
// launcher's names, where Megatron-Bridge's table has no config of the same settings:
// ub_cfg_h100_h12288_tp4_mbs1_seqlen2048 as the launcher's 24.07 tag (commit
// 8325688d) holds it, which gpt3/175b.yaml names (from 24.09 the same name holds
// another config: fc2_fprop a ring exchange, Megatron-Bridge's
// userbuffers_fp8_h100_h12288_tp4_mbs1_seqlen2048's), ub_cfg_h100_h6144_tp2_mbs2_seqlen2048
// (gpt3/20b.yaml) and ub_cfg_h100_h8192_tp4_mbs1_seqlen4096 (llama/llama2_70b.yaml), the
// same from 24.07 to the launcher's last commit. Their names give no precision: the
// launcher's configs pass them to bf16 and fp8 runs alike. Their ring exchanges'
// aggregate (1 in some) is not priced.
var launcherUserbuffersConfigs = []UserbuffersConfig{
	{Name: "ub_cfg_h100_h12288_tp4_mbs1_seqlen2048", Device: "h100", Hidden: 12288, TP: 4, CP: 1, Microbatch: 1, Seq: 2048,
		QKVDgrad: ubBulk(4), QKVWgrad: ubBulk(8), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubPipeline(24), FC2Fprop: ubPipeline(20)},
	{Name: "ub_cfg_h100_h6144_tp2_mbs2_seqlen2048", Device: "h100", Hidden: 6144, TP: 2, CP: 1, Microbatch: 2, Seq: 2048,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(4), FC1Wgrad: ubBulk(16), ProjFprop: ubPipeline(16), FC2Fprop: ubPipeline(24)},
	{Name: "ub_cfg_h100_h8192_tp4_mbs1_seqlen4096", Device: "h100", Hidden: 8192, TP: 4, CP: 1, Microbatch: 1, Seq: 4096,
		QKVDgrad: ubBulk(8), QKVWgrad: ubBulk(16), FC1Dgrad: ubBulk(2), FC1Wgrad: ubBulk(4), ProjFprop: ubPipeline(24), FC2Fprop: ubPipeline(16)},
}

// UserbuffersConfigNames lists Options.TensorCommConfig's values: te-default, then the
// published tuned configs' names (userbuffersConfigs, launcherUserbuffersConfigs).
func UserbuffersConfigNames() []string {
	out := []string{TEDefaultUserbuffers}
	for _, c := range slices.Concat(userbuffersConfigs, launcherUserbuffersConfigs) {
		out = append(out, c.Name)
	}
	return out
}

// LookupUserbuffersConfig returns the userbuffers config named name ("" and
// te-default: initialize_ub's defaults).
func LookupUserbuffersConfig(name string) (UserbuffersConfig, bool) {
	if name == "" || name == TEDefaultUserbuffers {
		return teDefaultUserbuffers, true
	}
	for _, c := range slices.Concat(userbuffersConfigs, launcherUserbuffersConfigs) {
		if c.Name == name {
			return c, true
		}
	}
	return UserbuffersConfig{}, false
}

// userbuffersFamily is the config device name ("h100", "b200") whose configs a device
// preset runs: Hopper's h100-sxm, h100-96gb-500w and h200 (132 multiprocessors, the
// H100's) take the h100 configs; the compute-capability-10 Blackwell GPUs b200,
// gb200, b300 and gb300 the b200 configs, as Megatron-Bridge's GB200 and GB300 recipes
// pass them (scripts/performance/configs/llama/llama3_llm_pretrain.py,
// llama31_llm_pretrain.py). Other devices have no tuned config ("").
func userbuffersFamily(device string) string {
	switch strings.ToLower(device) {
	case "h100-sxm", "h100-96gb-500w", "h200":
		return "h100"
	case "b200", "gb200", "b300", "gb300":
		return "b200"
	}
	return ""
}

// checkUserbuffersConfig refuses Options.TensorCommConfig where the run cannot take
// it: an unknown name; a config without the userbuffers overlap it configures
// (TensorCommOverlap without TensorCommAsync); or a tuned config whose shape is not
// the run's: another hidden size or device family (userbuffersFamily), or an fp8
// config (its fp8 communication buffers, fp8_buf) on a run that is not fp8. A bf16
// config on an fp8 run is taken, as NVIDIA's recipes ran it (NeMo 2.1's gpt3_175b
// recipe passes userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048 whatever the
// precision; Megatron-Bridge v0.1.0rc4's COMM_OVERLAP_CONFIG_MAP gives GB200's fp8
// Llama 3 70B the bf16 config). The tensor-parallel degree, the microbatch, the
// sequence and the context-parallel degree a name gives are what it was tuned at, not
// checked: Megatron-Bridge hands initialize_ub the config as a dict of the per-GEMM
// settings alone (comm_overlap.py's setup, asdict of the TransformerLayerTPOverlapCfg),
// with the run's own tp_size and buffer shape ((seq_length x micro_batch_size) /
// context_parallel_size, hidden_size: training/initialize.py's
// _initialize_tp_communicators, v0.2.0 to v0.5.0), so the name's shape never reaches
// Transformer Engine; and its Llama 3.1 405B GB300 recipes run TP 2 with
// userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (scripts/performance/configs/
// llama/llama31_llm_pretrain.py, llama31_405b_pretrain_config_gb300, with
// LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_MX_V2's tensor_model_parallel_size 2, v0.3.0
// to v0.5.0; v0.2.2's configs/llama31 file alike).
func checkUserbuffersConfig(device string, a *arch.Arch, o Options) error {
	if o.TensorCommConfig == "" || o.TensorCommConfig == TEDefaultUserbuffers {
		return nil
	}
	const path = "tensor_comm_config"
	c, ok := LookupUserbuffersConfig(o.TensorCommConfig)
	if !ok {
		return &model.FieldError{Path: path, Reason: fmt.Sprintf("must be %s or one of the published userbuffers configs (%s), got %q",
			TEDefaultUserbuffers, strings.Join(UserbuffersConfigNames()[1:], ", "), o.TensorCommConfig)}
	}
	if !o.TensorCommOverlap || o.TensorCommAsync {
		return &model.FieldError{Path: path, Reason: "configures Transformer Engine's userbuffers overlap: the run is not priced with it (its tensor-parallel overlap is off, or is PyTorch's async TP)"}
	}
	var bad []string
	if a.HiddenSize != c.Hidden {
		bad = append(bad, fmt.Sprintf("hidden size %d, the model's is %d", c.Hidden, a.HiddenSize))
	}
	if fam := userbuffersFamily(device); fam != c.Device {
		bad = append(bad, fmt.Sprintf("device %s, the run's is %s", c.Device, device))
	}
	if c.FP8 && o.DType != FP8 {
		bad = append(bad, fmt.Sprintf("fp8 products, the run's dtype is %s", o.DType))
	}
	if len(bad) > 0 {
		return &model.FieldError{Path: path, Reason: fmt.Sprintf("%s is tuned for %s: use a config of the run's shape or %s", c.Name, strings.Join(bad, "; "), TEDefaultUserbuffers)}
	}
	return nil
}
