package export

import (
	"fmt"
	"strings"
)

// The precision a plan was priced with (Input.DType, Precision, FP8Recipe,
// FP8ParamGather), in each framework's terms. Sources for the flags:
//   - Megatron-LM, megatron/training/arguments.py: --bf16, --fp16 (fp32 without either);
//     with --bf16 it sets accumulate_allreduce_grads_in_fp32 ("bfloat16 requires gradient
//     accumulation and all-reduce to be done in fp32"): 4-byte main_grad buffers, which
//     pipeplan prices as precision mixed-fp32-grads, unless --grad-reduce-in-bf16; with
//     --fp16 the gradients stay 16-bit unless --accumulate-allreduce-grads-in-fp32.
//     Transformer Engine's fp8: --fp8-format {e4m3,hybrid}, --fp8-recipe
//     {delayed,tensorwise,blockwise,mxfp8}, --fp8-amax-history-len (default 1, where
//     Transformer Engine's DelayedScaling, which pipeplan prices, keeps 1,024),
//     --fp8-amax-compute-algo (default most_recent, Transformer Engine's max),
//     --fp8-param-gather. Its mixed-precision optimizer always keeps fp32 master weights.
//   - DeepSpeed's config: "bf16": {"enabled": true}, "fp16": {"enabled": true}; its
//     BF16_Optimizer accumulates gradients in fp32 unless "data_types":
//     {"grad_accum_dtype": "bf16"} (DeepSpeed pull request 4713), which
//     deepspeed/runtime/engine.py's _do_optimizer_sanity_check allows with pipeline
//     parallelism; it refuses fp16 weights with fp32 accumulation ("unsupported mix of
//     model dtype and gradient accumulation type"). DeepSpeed has no fp8
//     recipe of its own: fp8 runs inside Transformer Engine's layers.
//   - PyTorch: torch.autocast for amp; parameters in a dtype (module.to) otherwise;
//     torch.optim keeps no fp32 master copy of 16-bit parameters.
//   - Graphcore IPUs (Mk2) compute in fp16 and fp32, not bf16 or fp8.

// fp8Names are Megatron-LM's --fp8-recipe names for pipeplan's recipes (Transformer
// Engine's Float8CurrentScaling is Megatron-LM's tensorwise).
var fp8Names = map[string]string{"delayed": "delayed", "current": "tensorwise", "blockwise": "blockwise", "mxfp8": "mxfp8"}

// teRecipes are Transformer Engine's recipe classes (transformer_engine.common.recipe)
// for pipeplan's recipes.
var teRecipes = map[string]string{"delayed": "DelayedScaling", "current": "Float8CurrentScaling", "blockwise": "Float8BlockScaling", "mxfp8": "MXFP8BlockScaling"}

// training reports whether the plan trains (a precision is set for training only).
func (in *Input) training() bool { return in.Precision != "" }

// half is the 16-bit type the plan's passes run in: bf16 for bf16 and fp8 (the layers
// outside the fp8 products), fp16 for fp16, "" for fp32 or none stated.
func (in *Input) half() string {
	switch in.DType {
	case "bf16", "fp8":
		return "bf16"
	case "fp16":
		return "fp16"
	}
	return ""
}

// precisionText states the planned precision for a header.
func (in *Input) precisionText() string {
	if in.DType == "" {
		return ""
	}
	s := in.DType
	if in.DType == "fp8" {
		s = fmt.Sprintf("fp8 (%s scaling) products, bf16 elsewhere", in.FP8Recipe)
	}
	switch in.Precision {
	case "mixed":
		s += "; mixed: 16-bit weights and gradients, fp32 master weights and optimizer state"
	case "mixed-fp32-grads":
		s += "; mixed-fp32-grads: 16-bit weights, fp32 gradients, master weights and optimizer state"
	case "deepspeed-bf16":
		s += "; deepspeed-bf16: 16-bit weights, fp32 gradients with the 16-bit ones kept until the next backward, fp32 master weights and optimizer state (DeepSpeed's BF16 optimizer)"
	case "amp":
		s += "; amp: fp32 parameters, gradients and optimizer state, passes under autocast"
	case "pure":
		h := in.half()
		if h == "" {
			h = "fp32"
		}
		s += "; pure: weights, gradients and optimizer state in " + h
	}
	if in.FP8ParamGather {
		s += "; fp8 weights kept in fp8 only"
	}
	if in.FP8FSDPAllGather {
		s += "; FSDP all-gathers the fp8 layers' weights in fp8 (torchao)"
	}
	return s
}

// megatronPrecision is Megatron-LM's arguments for the planned precision, one per line
// with its comment, and why the run differs from what was priced ("" when it does not).
func megatronPrecision(in *Input) (args []string, why string) {
	h := in.half()
	switch h {
	case "bf16":
		args = append(args, "--bf16")
	case "fp16":
		args = append(args, "--fp16")
	default:
		if in.DType == "fp32" {
			args = append(args, "# fp32: neither --bf16 nor --fp16 (Megatron-LM's default)")
		}
	}
	if in.DType == "fp8" {
		args = append(args, "--fp8-format hybrid  # e4m3 forward, e5m2 gradients (Transformer Engine's default)")
		args = append(args, "--fp8-recipe "+fp8Names[in.FP8Recipe])
		if in.FP8Recipe == "delayed" {
			args = append(args, "--fp8-amax-history-len 1024  # as priced (Transformer Engine's DelayedScaling; Megatron-LM's default is 1)",
				"--fp8-amax-compute-algo max  # Transformer Engine's default (Megatron-LM's is most_recent)")
			if in.FP8AmaxTPOnly {
				args = append(args, "--tp-only-amax-red  # amax reduced over the tensor-parallel group only, as priced")
			} else {
				args = append(args, "# amax reduced over the tensor-, data- and context-parallel ranks, as priced (Megatron-LM's default; --tp-only-amax-red for the tensor-parallel group only)")
			}
		}
		if in.FP8ParamGather {
			args = append(args, "--fp8-param-gather  # fp8 weights without their 16-bit copy")
		}
		if in.FP8Attention {
			args = append(args, "--fp8-dot-product-attention  # the attention core in fp8 (cuDNN), as priced")
		}
		if in.FP8FSDPAllGather {
			why = torchaoGatherWhy("Megatron-LM")
		}
	}
	if !in.training() || h == "" {
		return args, why
	}
	switch in.Precision {
	case "mixed":
		if h == "bf16" {
			args = append(args, "--grad-reduce-in-bf16  # 16-bit gradients, as priced (--bf16 alone keeps fp32 main_grad buffers)")
		}
	case "mixed-fp32-grads":
		if h == "bf16" {
			args = append(args, "# gradients accumulated and all-reduced in fp32 main_grad buffers: --bf16's default")
		} else {
			args = append(args, "--accumulate-allreduce-grads-in-fp32  # fp32 main_grad buffers, as priced")
		}
	case "deepspeed-bf16":
		args = append(args, "# gradients accumulated and all-reduced in fp32 main_grad buffers: --bf16's default")
		why = andWhy(why, "Megatron-LM accumulates gradients into its fp32 main_grad buffers and keeps no 16-bit gradients until the next backward, where pipeplan priced deepspeed-bf16 (DeepSpeed's BF16 optimizer, 2 bytes a parameter more): the run holds less memory than priced; plan with precision mixed-fp32-grads to price what Megatron-LM runs")
	case "pure":
		why = andWhy(why, fmt.Sprintf("Megatron-LM's optimizer keeps fp32 master weights and optimizer state beside %s weights, where pipeplan priced pure %s (none): the run holds more memory than priced; plan with precision mixed (or mixed-fp32-grads for --bf16's fp32 gradients) to price what Megatron-LM runs", h, in.DType))
	case "amp":
		why = andWhy(why, fmt.Sprintf("Megatron-LM has no autocast: with --%s it keeps %s weights with fp32 master copies, where pipeplan priced amp (fp32 parameters, passes cast under torch.autocast); plan with precision mixed or mixed-fp32-grads to price what Megatron-LM runs", h, h))
	}
	return args, why
}

// deepspeedPrecision is DeepSpeed's config entries for the planned precision (Python
// dict entries with their comments), and why the run differs from what was priced.
func deepspeedPrecision(in *Input) (entries []string, why string) {
	h := in.half()
	switch h {
	case "bf16":
		entries = append(entries, `"bf16": {"enabled": True},`)
	case "fp16":
		entries = append(entries, `"fp16": {"enabled": True},`)
	default:
		if in.DType == "fp32" {
			entries = append(entries, `# fp32: neither "bf16" nor "fp16" enabled`)
		}
	}
	if in.DType == "fp8" {
		why = fmt.Sprintf("DeepSpeed has no fp8 recipe of its own: the config runs bf16, and pipeplan priced fp8 products with %s scaling; build the layers with Transformer Engine (transformer_engine.pytorch.Linear under fp8_autocast(fp8_recipe=%s())) to run what was priced", in.FP8Recipe, teRecipes[in.FP8Recipe]) + fp8AttentionText(in)
		if in.FP8FSDPAllGather {
			why += "; and " + torchaoGatherWhy("DeepSpeed")
		}
	}
	if !in.training() || h == "" {
		return entries, why
	}
	also := func(s string) {
		if why == "" {
			why = s
		} else {
			why += "; and " + s
		}
	}
	switch in.Precision {
	case "mixed":
		if h == "bf16" {
			entries = append(entries, `"data_types": {"grad_accum_dtype": "bf16"},  # 16-bit gradients, as priced (BF16_Optimizer's default is fp32)`)
		}
	case "mixed-fp32-grads":
		if h == "bf16" {
			entries = append(entries, `"data_types": {"grad_accum_dtype": "fp32"},  # fp32 gradient accumulation, as priced`)
		} else {
			also("DeepSpeed accumulates fp16 weights' gradients in fp16 (it refuses grad_accum_dtype fp32 with fp16), where pipeplan priced fp32 gradients (mixed-fp32-grads): the run holds less memory than priced")
		}
	case "deepspeed-bf16":
		entries = append(entries, `"data_types": {"grad_accum_dtype": "fp32"},  # BF16_Optimizer: fp32 gradients, the bf16 ones kept until the next backward, as priced`)
	case "pure":
		also(fmt.Sprintf("DeepSpeed's %s optimizer keeps fp32 master weights and optimizer state, where pipeplan priced pure %s (none): the run holds more memory than priced", h, h))
	case "amp":
		also(fmt.Sprintf("DeepSpeed's %s mode keeps %s weights with fp32 master copies, where pipeplan priced amp (fp32 parameters, passes under torch.autocast)", h, h))
	}
	return entries, why
}

// andWhy joins a second reason the run differs from the plan to the first (either may
// be empty).
func andWhy(why, more string) string {
	if why == "" {
		return more
	}
	return why + "; and " + more
}

// torchaoGatherWhy says that framework runs no torchao FSDP2 float8 all-gather, which the
// plan priced (training.fp8_fsdp_all_gather).
func torchaoGatherWhy(framework string) string {
	return framework + " has no torchao FSDP2 float8 all-gather: pipeplan priced the fp8 layers' weights all-gathered and held gathered in fp8 (training.fp8_fsdp_all_gather), where the run gathers them in 16 bits: its all-gathers move, and its gathered weights hold, twice the bytes priced"
}

// torchDTypes are torch's names for the element types.
var torchDTypes = map[string]string{"bf16": "torch.bfloat16", "fp16": "torch.float16", "fp32": "torch.float32"}

// pytorchPrecision is the Python lines that state the planned precision, and why the
// run differs from what was priced.
func pytorchPrecision(in *Input) (lines []string, why string) {
	if in.DType == "" {
		return nil, ""
	}
	h := in.half()
	if h == "" {
		return []string{"PARAM_DTYPE = torch.float32  # fp32 throughout"}, ""
	}
	t := torchDTypes[h]
	if in.DType == "fp8" {
		why = fmt.Sprintf("the export sets no fp8: pipeplan priced the blocks' linear layers in fp8 with %s scaling; run them in Transformer Engine's layers under fp8_autocast(fp8_recipe=%s()) (torchao.float8.convert_to_float8_training's tensorwise recipe is current scaling only)", in.FP8Recipe, teRecipes[in.FP8Recipe]) + fp8AttentionText(in)
	}
	if in.DType == "fp8" && in.FP8FSDPAllGather {
		// torchao/float8 (eab345c, 0afa4c1): Float8LinearConfig, convert_to_float8_training
		// and precompute_float8_dynamic_scale_for_fsdp, as torchtitan's Float8Handler
		// calls them (module_filter_fn leaving the output projection out).
		lines = append(lines,
			"# FSDP2 all-gathers the fp8 layers' weights in fp8, as priced (torchao): before fully_shard,",
			"# torchao.float8.convert_to_float8_training(stage, config=Float8LinearConfig(enable_fsdp_float8_all_gather=True),",
			"#     module_filter_fn=lambda mod, fqn: fqn != \"output\"), and after each optimizer step",
			"# torchao.float8.precompute_float8_dynamic_scale_for_fsdp(stage) (one all-reduce of the weights' amaxes)")
	}
	if !in.training() || in.Precision == "pure" {
		return append(lines, fmt.Sprintf("PARAM_DTYPE = %s  # model.to(PARAM_DTYPE): weights%s in %s", t, map[bool]string{true: ", gradients and optimizer state", false: ""}[in.training()], h)), why
	}
	if in.Precision == "amp" {
		return append(lines, "PARAM_DTYPE = torch.float32  # parameters, gradients and optimizer state",
			fmt.Sprintf("AUTOCAST_DTYPE = %s  # run each microbatch under torch.autocast(device_type, dtype=AUTOCAST_DTYPE)", t)), why
	}
	// Mixed: the export builds the stages, not the optimizer; it says what the optimizer
	// must keep, and is exact in what it sets up.
	return append(lines, fmt.Sprintf("PARAM_DTYPE = %s  # model.to(PARAM_DTYPE) for the passes; precision %s was priced:", t, in.Precision),
		fmt.Sprintf("# the optimizer must step fp32 master copies of the weights (torch.optim keeps none of %s\n# parameters), with %s gradients", h, map[bool]string{true: "fp32", false: "16-bit"}[in.Precision == "mixed-fp32-grads" || in.Precision == "deepspeed-bf16"])), why
}

// fp8AttentionText adds to the fp8 notes of the exports that set no fp8 how to run the
// attention core in fp8 where the plan was priced so ("" otherwise).
func fp8AttentionText(in *Input) string {
	if !in.FP8Attention {
		return ""
	}
	return fmt.Sprintf("; the attention core was priced in fp8 too: run it in Transformer Engine's DotProductAttention with the recipe's fp8_dpa=True (%s(fp8_dpa=True))", teRecipes[in.FP8Recipe])
}

// megatronLoss is Megatron-LM's argument for the loss kernel the plan was priced with
// (Input.CrossEntropy), a comment where Megatron-LM has no such kernel; "" when none
// was priced.
func megatronLoss(in *Input) string {
	switch in.CrossEntropy {
	case "fused-inplace":
		return "--cross-entropy-loss-fusion  # the fused loss, its gradient over the logits, as priced"
	case "vocab-parallel":
		return "# the loss: Megatron-LM's unfused vocab-parallel cross-entropy (its default), as priced"
	case "unfused":
		return "# the loss: pipeplan priced PyTorch's unfused F.cross_entropy on fp32 logits (HuggingFace's); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)"
	case "fused":
		return "# the loss: pipeplan priced flash-attn's fused cross-entropy (a new 16-bit gradient); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)"
	case "loss-parallel":
		return "# the loss: pipeplan priced PyTorch's loss_parallel (torchtitan's, on fp32 logits); Megatron-LM runs its vocab-parallel cross-entropy (--cross-entropy-loss-fusion fuses it)"
	}
	return ""
}

// graphcorePrecision is why a Graphcore run differs from the planned precision.
func graphcorePrecision(in *Input) string {
	switch in.DType {
	case "bf16", "fp8":
		return fmt.Sprintf("Graphcore's IPUs compute in fp16 or fp32, not %s: plan with model.architecture.dtype fp16 to price what the IPUs run", in.DType)
	}
	return ""
}

// precisionComment is a header line stating the planned precision, "" when none is.
func precisionComment(in *Input) string {
	if t := in.precisionText(); t != "" {
		return "precision priced: " + strings.TrimSpace(t)
	}
	return ""
}
