package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestEstimateJSON checks the keys promised for --json and a few values from closed forms.
func TestEstimateJSON(t *testing.T) {
	code, out, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Layers []map[string]any `json:"layers"`
		Total  map[string]any   `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Layers) != 15 { // embedding, 12 blocks, final norm, head
		t.Fatalf("%d layers, want 15", len(v.Layers))
	}
	for _, k := range []string{"name", "kind", "params", "param_bytes", "fwd_flops", "fwd_seconds", "bwd_seconds", "saved_activation_bytes", "output_bytes"} {
		if _, ok := v.Layers[1][k]; !ok {
			t.Errorf("layers[1] lacks %q", k)
		}
	}
	for _, k := range []string{"weights_bytes", "grads_bytes", "optimizer_bytes", "activation_bytes", "peak_bytes", "step_seconds"} {
		if _, ok := v.Total[k]; !ok {
			t.Errorf("total lacks %q", k)
		}
	}
	// A GPT-2 block at b=2, s=128 with flash attention keeps Korthikanti's 34*s*b*h +
	// 4*a*s*b bytes where the GELU is one kernel keeping its input; HuggingFace's gelu_new
	// run eagerly (the default framework) keeps 10 bytes per MLP element, not 4:
	// 6*s*b*4h more.
	if got, want := v.Layers[1]["saved_activation_bytes"], float64((34+24)*128*2*768+4*12*128*2); got != want {
		t.Errorf("block saved %v, want %v", got, want)
	}
	code, out, errs = runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--framework", "cuda-graphs", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if got, want := v.Layers[1]["saved_activation_bytes"], float64(34*128*2*768+4*12*128*2); got != want {
		t.Errorf("Megatron-style: block saved %v, want %v", got, want)
	}
	if got, want := v.Total["weights_bytes"], float64(2*124439808); got != want {
		t.Errorf("weights_bytes %v, want %v", got, want)
	}
}

func TestEstimateTable(t *testing.T) {
	code, out, errs := runCLI("estimate", "--hf-config", "gpt2-xl", "--device", "a100-80gb", "--batch", "8", "--seq", "1024")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"block.0 .. block.47 (x48)", "parameters   1.56B", "peak memory", "fits", "tied embedding"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestEstimateFile: --hf-config takes a file path too; the model is named after it.
func TestEstimateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.json")
	cfg := `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("estimate", "--hf-config", path, "--device", "h100-sxm", "--seq", "16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"model": "tiny"`) {
		t.Errorf("output does not name the model tiny:\n%.300s", out)
	}
}

func TestEstimateErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--device", "a100-80gb"}, "--hf-config: a config.json file or bundled name is required"},
		{[]string{"--hf-config", "gpt2"}, "--device: a device preset is required"},
		{[]string{"--hf-config", "gpt2", "--device", "v100"}, `--device: unknown device "v100"`},
		{[]string{"--hf-config", "gpt-5", "--device", "h200"}, `no file "gpt-5" and no bundled config of that name; bundled: bert-base-uncased`},
		{[]string{"--hf-config", "missing/config.json", "--device", "h200"}, "--hf-config: open missing/config.json"},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--batch", "0"}, "--batch: must be >= 1, got 0"},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--seq", "4096"}, "--seq: must be at most 1024"},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--dp", "0"}, "--dp: must be >= 1, got 0"},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--optimizer", "lamb"}, `--optimizer: must be adamw, adam or sgd, got "lamb"`},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--matmul-efficiency", "2"}, "--matmul-efficiency: must be in (0, 1], got 2"},
		{[]string{"--hf-config", "gpt2", "--device", "h200", "--kernel-us", "-3"}, "--kernel-us: must be >= 0, got -3"},
	}
	for _, tt := range tests {
		code, _, errs := runCLI(append([]string{"estimate"}, tt.args...)...)
		if code != exitBad || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}

func TestPlanHFConfig(t *testing.T) {
	code, out, errs := runCLI("plan", "--hf-config", "gpt2-xl", "--device", "a100-80gb", "--stages", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Plan struct {
			Boundaries []int `json:"boundaries"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	// 51 layers (embedding, 48 blocks, final norm, head) in four stages of about 12 blocks.
	if len(p.Boundaries) != 5 || p.Boundaries[4] != 51 {
		t.Errorf("boundaries %v, want 4 stages over 51 layers", p.Boundaries)
	}
	// Llama-2-70B with Adam in mixed precision needs 16 bytes per parameter (1.00 TiB);
	// eight A100s hold 8 x (80 GiB - 1 GiB of framework) / 1.02 (the allocator's reserve)
	// = 619.61 GiB for it: no plan, and the reason says so.
	code, _, errs = runCLI("plan", "--hf-config", "llama-2-70b", "--device", "a100-80gb", "--stages", "8")
	if code != exitNoPlan || !strings.Contains(errs, "and the 8 devices hold 619.61 GiB together beside the framework's memory") {
		t.Errorf("llama-2-70b on 8 x a100-80gb: exit %d, %s", code, errs)
	}
	// Sharding the optimizer state over 8 data-parallel replicas, and recomputing each
	// block (1F1B holds up to 8 microbatches on stage 0), makes it fit.
	code, _, errs = runCLI("plan", "--hf-config", "llama-2-70b", "--device", "a100-80gb", "--stages", "8", "--dp", "8", "--zero1", "--recompute", "full")
	if code != 0 {
		t.Errorf("llama-2-70b with ZeRO-1 over 8: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI("plan", "--hf-config", "gpt2", "--model", "m.json", "--device", "a100-80gb", "--stages", "2")
	if code != exitBad || !strings.Contains(errs, "--model, --example and --hf-config: give one of them") {
		t.Errorf("--model with --hf-config: exit %d, %s", code, errs)
	}
	// Tied embeddings held in one stage cannot be split.
	code, _, errs = runCLI("plan", "--hf-config", "gpt2", "--tie", "stage", "--device", "a100-80gb", "--stages", "2")
	if code != exitNoPlan || !strings.Contains(errs, "tie groups") {
		t.Errorf("--tie stage on 2 stages: exit %d, %s", code, errs)
	}
}

// TestPlanHFConfigCluster: with --cluster, the layers are costed on the first device,
// which must be named after a preset.
func TestPlanHFConfigCluster(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"devices":[{"name":"h100-sxm","memory_bytes":85899345920},{"name":"h100-sxm","memory_bytes":85899345920}],"links":[{"latency_seconds":3e-6,"bytes_per_second":450e9}]}`), 0o644)
	os.WriteFile(bad, []byte(`{"devices":[{"memory_bytes":85899345920}]}`), 0o644)
	if code, _, errs := runCLI("plan", "--hf-config", "gpt2", "--cluster", good); code != 0 {
		t.Errorf("good cluster: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI("plan", "--hf-config", "gpt2", "--cluster", bad); code != exitBad || !strings.Contains(errs, "devices[0].name: must name a device preset") {
		t.Errorf("unnamed cluster device: exit %d, %s", code, errs)
	}
}

func TestDevices(t *testing.T) {
	code, out, errs := runCLI("devices", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v devicesJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range v.Devices {
		names = append(names, d.Name)
	}
	if got, want := strings.Join(names, " "), "a100-40gb a100-80gb b200 b300 bow gaudi3 gb200 gb300 gc200 h100-96gb-500w h100-sxm h200 mi300x mi325x mi355x tpu-v4 tpu-v5e tpu-v5p tpu-v6e trainium2"; got != want {
		t.Errorf("devices %s, want %s", got, want)
	}
	if len(v.Links) < 9 {
		t.Errorf("%d links, want at least the nine presets", len(v.Links))
	}
	code, out, _ = runCLI("devices")
	if code != 0 || !strings.Contains(out, "gc200") || !strings.Contains(out, "894 MiB") || !strings.Contains(out, "alpha µs") {
		t.Errorf("devices table: exit %d\n%s", code, out)
	}
}

// TestTensorParallelFlags: --tp splits each block over N devices (Korthikanti's
// activations, in the Megatron-style mode whose fused GELU they assume), --sp adds sequence parallelism; a degree that does not divide the heads is
// refused naming the flag; plan takes --tp too.
func TestTensorParallelFlags(t *testing.T) {
	saved := func(args ...string) float64 {
		t.Helper()
		code, out, errs := runCLI(append([]string{"estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--attention", "eager", "--framework", "cuda-graphs", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var v struct {
			Layers []map[string]any `json:"layers"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.Layers[1]["saved_activation_bytes"].(float64)
	}
	const sbh, as2b = 128 * 2 * 768, 5 * 12 * 128 * 128 * 2
	if got, want := saved("--tp", "4"), float64(10*sbh+24*sbh/4+as2b/4); got != want {
		t.Errorf("--tp 4: block saves %v, want %v", got, want)
	}
	if got, want := saved("--tp", "4", "--sp"), float64((34*sbh+as2b)/4); got != want {
		t.Errorf("--tp 4 --sp: block saves %v, want %v", got, want)
	}
	code, _, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--tp", "5")
	if code != exitBad || !strings.Contains(errs, "--tp: must divide the model's num_heads (12), got 5") {
		t.Errorf("--tp 5: exit %d, %s", code, errs)
	}
	code, out, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--tp", "4")
	if code != 0 || !strings.Contains(out, "on each of 4 tensor-parallel devices") || !strings.Contains(out, "tokens/s on all 4 devices") {
		t.Errorf("--tp 4 table: exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = runCLI("plan", "--hf-config", "gpt2", "--device", "a100-80gb", "--stages", "2", "--tp", "2", "--json")
	if code != 0 || !strings.Contains(out, `"boundaries"`) {
		t.Errorf("plan --tp 2: exit %d %s", code, errs)
	}
}

// TestEstimateStepIsOneStagePlan: estimate's step line is a one-stage, one-microbatch
// plan's, to the printed digit, its data-parallel communication and what of it hides
// included, and the JSON's tokens per second the plan's, the whole job's, for each
// sharding mode (issue 19 item 6: one notion of each quantity).
func TestEstimateStepIsOneStagePlan(t *testing.T) {
	dp := func(sharding string, more ...string) []string {
		return append([]string{"--hf-config", "gpt2-medium", "--device", "a100-80gb", "--seq", "1024", "--dp", "4", "--sharding", sharding}, more...)
	}
	for _, args := range [][]string{
		{"--hf-config", "llama-3.2-1b", "--device", "h100-sxm"},
		{"--hf-config", "gpt2", "--device", "a100-80gb", "--seq", "512"},
		dp("none"),
		dp("none", "--framework", "megatron"),
		dp("zero1"),
		dp("zero2"),
		dp("zero3"),
		dp("zero3", "--prefetch", "none"),
		dp("hsdp", "--shard-group", "2"),
	} {
		code, est, errs := runCLI(append([]string{"estimate"}, args...)...)
		if code != 0 {
			t.Fatalf("estimate %v: exit %d: %s", args, code, errs)
		}
		code, pl, errs := runCLI(append([]string{"plan", "--stages", "1", "--microbatches", "1"}, args...)...)
		if code != 0 {
			t.Fatalf("plan %v: exit %d: %s", args, code, errs)
		}
		var step string
		for _, l := range strings.Split(pl, "\n") {
			if rest, ok := strings.CutPrefix(l, "step "); ok {
				step = rest
			}
		}
		if step == "" || !strings.Contains(est, "step time    "+step+"\n") {
			t.Errorf("%v: plan's step %q is not estimate's:\n%s", args, step, est)
		}
		// The throughput is the whole job's in both (every replica's tokens).
		var e struct {
			Total struct {
				TokensPerSecond float64 `json:"tokens_per_second"`
			} `json:"total"`
		}
		var r struct {
			Step struct {
				TokensPerSecond float64 `json:"tokens_per_second"`
			} `json:"step"`
		}
		_, ej, _ := runCLI(append([]string{"estimate", "--json"}, args...)...)
		_, pj, _ := runCLI(append([]string{"plan", "--stages", "1", "--microbatches", "1", "--json"}, args...)...)
		if json.Unmarshal([]byte(ej), &e) != nil || json.Unmarshal([]byte(pj), &r) != nil || e.Total.TokensPerSecond <= 0 ||
			e.Total.TokensPerSecond != r.Step.TokensPerSecond {
			t.Errorf("%v: the estimate's %v tokens/s, the plan's %v", args, e.Total.TokensPerSecond, r.Step.TokensPerSecond)
		}
	}
}

// TestCrossEntropyFlag: --cross-entropy names the loss kernel: GPT-2's head at 2 x 128
// tokens (T = 256, V = 50,257, bf16) keeps the fp32 log-probabilities (4*T*V) in eager
// PyTorch's default, the 16-bit logits and the rows' log-sum-exps (2*T*V + 4*T) with
// flash-attn's fused kernel, the fp32 softmax (4*T*V) with Megatron-LM's vocab-parallel
// one; a kernel it does not know is refused naming the flag.
func TestCrossEntropyFlag(t *testing.T) {
	head := func(args ...string) float64 {
		t.Helper()
		code, out, errs := runCLI(append([]string{"estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var v struct {
			Layers []map[string]any `json:"layers"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.Layers[len(v.Layers)-1]["saved_activation_bytes"].(float64)
	}
	const T, V = 256, 50257
	if got, want := head()-head("--cross-entropy", "fused"), float64(4*T*V-(2*T*V+4*T)); got != want {
		t.Errorf("--cross-entropy fused keeps %v bytes fewer in the head than the default, want %v", got, want)
	}
	if got, want := head("--cross-entropy", "unfused"), head(); got != want {
		t.Errorf("--cross-entropy unfused keeps %v bytes in the head, the eager default %v", got, want)
	}
	// Megatron-LM's unfused loss keeps the fp32 softmax, as many bytes as the fp32
	// log-probabilities (its time differs: core/analytic's TestVocabParallelCrossEntropyTime).
	if got, want := head("--cross-entropy", "vocab-parallel"), head(); got != want {
		t.Errorf("--cross-entropy vocab-parallel keeps %v bytes in the head, want the fp32 softmax's %v", got, want)
	}
	code, _, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--cross-entropy", "apex")
	if code != exitBad || !strings.Contains(errs, "--cross-entropy") || !strings.Contains(errs, "fused-inplace") {
		t.Errorf("--cross-entropy apex: exit %d, %q: want a usage error naming the flag and the kernels", code, errs)
	}
}

// TestDeepSpeedBF16Flag: --precision deepspeed-bf16 (DeepSpeed's BF16 optimizer) adds
// the 16-bit gradients, 2 bytes a parameter, apart from the fp32 gradients, and prints
// them; with --sharding zero2 it is a usage error naming the flag.
func TestDeepSpeedBF16Flag(t *testing.T) {
	total := func(precision string) map[string]any {
		t.Helper()
		code, out, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--batch", "2", "--seq", "128", "--json", "--precision", precision)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var v struct {
			Total map[string]any `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.Total
	}
	ds, ref := total("deepspeed-bf16"), total("mixed-fp32-grads")
	copies, _ := ds["grad_copy_bytes"].(float64)
	if want := ds["weights_bytes"].(float64); copies != want || ds["grads_bytes"] != ref["grads_bytes"] || ds["peak_bytes"].(float64) != ref["peak_bytes"].(float64)+want {
		t.Errorf("deepspeed-bf16: 16-bit gradient copies %v bytes (want the bf16 weights' %v), gradients %v (mixed-fp32-grads %v), peak %v (mixed-fp32-grads %v + the copies)",
			copies, want, ds["grads_bytes"], ref["grads_bytes"], ds["peak_bytes"], ref["peak_bytes"])
	}
	code, out, errs := runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--precision", "deepspeed-bf16")
	if code != 0 || !strings.Contains(out, "16-bit gradient copies") {
		t.Errorf("exit %d (%s): the state line does not print the 16-bit gradient copies:\n%s", code, errs, out)
	}
	code, _, errs = runCLI("estimate", "--hf-config", "gpt2", "--device", "a100-80gb", "--precision", "deepspeed-bf16", "--dp", "4", "--sharding", "zero2")
	if code != exitBad || !strings.Contains(errs, "--precision") || !strings.Contains(errs, "zero1") {
		t.Errorf("deepspeed-bf16 with zero2: exit %d, %q: want a usage error naming --precision", code, errs)
	}
}
