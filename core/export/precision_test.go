package export

import (
	"strings"
	"testing"
)

// TestPrecisionFlags: the planned precision (a request's model.architecture.dtype,
// training.precision, fp8_recipe and fp8_param_gather) as each framework states it, and
// whether the framework runs it as priced. Sources: Megatron-LM's
// megatron/training/arguments.py (--bf16 sets accumulate_allreduce_grads_in_fp32 unless
// --grad-reduce-in-bf16; --fp8-recipe tensorwise is Transformer Engine's current
// scaling), DeepSpeed's config ("bf16"/"fp16" blocks; BF16_Optimizer accumulates in fp32
// unless data_types.grad_accum_dtype is bf16, DeepSpeed pull request 4713).
func TestPrecisionFlags(t *testing.T) {
	for _, c := range []struct {
		dtype, precision, recipe string
		gather                   bool
		megatron                 string // the arguments, comments dropped, joined by spaces
		megatronExact            bool
		deepspeed                string // the config's entries, comments dropped
		deepspeedExact           bool
		pytorch                  string // PARAM_DTYPE and AUTOCAST_DTYPE lines' values
		pytorchExact             bool
		graphcoreExact           bool
	}{
		{"bf16", "mixed", "", false, "--bf16 --grad-reduce-in-bf16", true, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "bf16"},`, true, "torch.bfloat16", true, false},
		{"bf16", "mixed-fp32-grads", "", false, "--bf16", true, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "fp32"},`, true, "torch.bfloat16", true, false},
		{"bf16", "deepspeed-bf16", "", false, "--bf16", false, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "fp32"},`, true, "torch.bfloat16", true, false},
		{"fp16", "mixed", "", false, "--fp16", true, `"fp16": {"enabled": True},`, true, "torch.float16", true, true},
		{"fp16", "mixed-fp32-grads", "", false, "--fp16 --accumulate-allreduce-grads-in-fp32", true, `"fp16": {"enabled": True},`, false, "torch.float16", true, true},
		{"fp32", "pure", "", false, "", true, "", true, "torch.float32", true, true},
		{"bf16", "pure", "", false, "--bf16", false, `"bf16": {"enabled": True},`, false, "torch.bfloat16", true, false},
		{"bf16", "amp", "", false, "--bf16", false, `"bf16": {"enabled": True},`, false, "torch.float32 torch.bfloat16", true, false},
		{"fp8", "mixed", "delayed", false, "--bf16 --fp8-format hybrid --fp8-recipe delayed --fp8-amax-history-len 1024 --fp8-amax-compute-algo max --grad-reduce-in-bf16", true, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "bf16"},`, false, "torch.bfloat16", false, false},
		{"fp8", "mixed-fp32-grads", "current", true, "--bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather", true, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "fp32"},`, false, "torch.bfloat16", false, false},
		{"fp8", "mixed-fp32-grads", "blockwise", false, "--bf16 --fp8-format hybrid --fp8-recipe blockwise", true, `"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "fp32"},`, false, "torch.bfloat16", false, false},
		{"fp8", "", "mxfp8", false, "--bf16 --fp8-format hybrid --fp8-recipe mxfp8", true, `"bf16": {"enabled": True},`, false, "torch.bfloat16", false, false},
		{"bf16", "", "", false, "--bf16", true, `"bf16": {"enabled": True},`, true, "torch.bfloat16", true, false}, // inference
		{"", "", "", false, "", true, "", true, "", true, true}, // a profile: no precision stated
	} {
		name := c.dtype + "/" + c.precision + "/" + c.recipe
		in := &Input{DType: c.dtype, Precision: c.precision, FP8Recipe: c.recipe, FP8ParamGather: c.gather}
		args, why := megatronPrecision(in)
		if got := uncommented(args, "#"); got != c.megatron || (why == "") != c.megatronExact {
			t.Errorf("%s: megatron %q (why %q), want %q exact %v", name, got, why, c.megatron, c.megatronExact)
		}
		entries, why := deepspeedPrecision(in)
		if got := uncommented(entries, "#"); got != c.deepspeed || (why == "") != c.deepspeedExact {
			t.Errorf("%s: deepspeed %q (why %q), want %q exact %v", name, got, why, c.deepspeed, c.deepspeedExact)
		}
		lines, why := pytorchPrecision(in)
		var dtypes []string
		for _, l := range lines {
			if k, v, ok := strings.Cut(l, " = "); ok && strings.HasSuffix(k, "_DTYPE") {
				dtypes = append(dtypes, strings.Fields(v)[0])
			}
		}
		if got := strings.Join(dtypes, " "); got != c.pytorch || (why == "") != c.pytorchExact {
			t.Errorf("%s: pytorch %q (why %q), want %q exact %v", name, got, why, c.pytorch, c.pytorchExact)
		}
		if why := graphcorePrecision(in); (why == "") != c.graphcoreExact {
			t.Errorf("%s: graphcore why %q, want exact %v", name, why, c.graphcoreExact)
		}
	}
}

// uncommented joins lines without their comments ("  # ..." and comment lines).
func uncommented(lines []string, c string) string {
	var out []string
	for _, l := range lines {
		if i := strings.Index(l, c); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

// TestPrecisionAmaxGroup: Megatron-LM reduces delayed scaling's amax history over the
// tensor-, data- and context-parallel ranks unless --tp-only-amax-red (Megatron-Core's
// tp_only_amax_red), which the export passes when the plan was priced with
// training.fp8_amax_tp_only.
func TestPrecisionAmaxGroup(t *testing.T) {
	for _, tpOnly := range []bool{false, true} {
		in := &Input{DType: "fp8", Precision: "mixed", FP8Recipe: "delayed", FP8AmaxTPOnly: tpOnly}
		args, _ := megatronPrecision(in)
		if got := strings.Contains(uncommented(args, "#"), "--tp-only-amax-red"); got != tpOnly {
			t.Errorf("fp8_amax_tp_only %v: --tp-only-amax-red passed %v: %q", tpOnly, got, args)
		}
	}
}

// TestFP8FSDPAllGatherExport: a plan priced with training.fp8_fsdp_all_gather states
// torchao's config in the PyTorch export (Float8LinearConfig(enable_fsdp_float8_all_gather
// =True) before fully_shard, precompute_float8_dynamic_scale_for_fsdp after each step), in
// every header, and says why Megatron-LM's and DeepSpeed's runs differ (no such gather),
// beside any other reason (Megatron-LM's master weights under precision pure).
func TestFP8FSDPAllGatherExport(t *testing.T) {
	in := &Input{DType: "fp8", Precision: "mixed", FP8Recipe: "current", FP8FSDPAllGather: true}
	lines, _ := pytorchPrecision(in)
	text := strings.Join(lines, "\n")
	for _, want := range []string{"Float8LinearConfig(enable_fsdp_float8_all_gather=True)", "precompute_float8_dynamic_scale_for_fsdp(stage)", `fqn != "output"`} {
		if !strings.Contains(text, want) {
			t.Errorf("PyTorch export lacks %q:\n%s", want, text)
		}
	}
	if s := in.precisionText(); !strings.Contains(s, "all-gathers the fp8 layers' weights in fp8") {
		t.Errorf("header %q does not state the fp8 all-gather", s)
	}
	if _, why := megatronPrecision(in); !strings.Contains(why, "training.fp8_fsdp_all_gather") {
		t.Errorf("Megatron-LM: why %q, want the fp8 all-gather it does not run", why)
	}
	if _, why := deepspeedPrecision(in); !strings.Contains(why, "training.fp8_fsdp_all_gather") {
		t.Errorf("DeepSpeed: why %q, want the fp8 all-gather it does not run", why)
	}
	// A second reason (precision pure: Megatron-LM keeps master weights) is added to it.
	pure := *in
	pure.Precision = "pure"
	if _, why := megatronPrecision(&pure); !strings.Contains(why, "training.fp8_fsdp_all_gather") || !strings.Contains(why, "priced pure") {
		t.Errorf("Megatron-LM, pure: why %q, want both the fp8 all-gather and the master weights", why)
	}
	in.FP8FSDPAllGather = false
	lines, _ = pytorchPrecision(in)
	if strings.Contains(strings.Join(lines, "\n"), "enable_fsdp_float8_all_gather") {
		t.Error("the PyTorch export states the fp8 all-gather without it")
	}
}
