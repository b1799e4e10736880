package export_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/recompute"
	"pipeplan/core/wire"
)

// autoInput is Llama-2-7B with eager attention on 4 A100-40GB under 1F1B, planned with
// per-layer recomputation: the stages recompute different numbers of whole blocks and
// attention cores.
func autoInput(t *testing.T) *export.Input {
	t.Helper()
	return fromRequest(t, &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096, Attention: "eager"}},
		Cluster:     wire.ClusterSpec{Device: "a100-40gb"},
		Parallelism: wire.Parallelism{Pipeline: 4},
		Training:    wire.Training{Recompute: "auto"},
		Schedule:    wire.Schedule{Microbatches: 16, MicrobatchSize: 2},
	})
}

func hasNote(ex *wire.Export, code string) bool {
	for _, n := range ex.Notes {
		if n.Code == code {
			return true
		}
	}
	return false
}

// TestRecomputeAutoExports: each framework recomputes at least what the plan does, and
// says so where that is more: Megatron-LM the largest per-stage count of blocks with
// the block method, DeepSpeed every layer, PyTorch exactly the modules recomputed whole
// (RECOMPUTE, one entry per recomputed layer) with a note for the attention cores.
func TestRecomputeAutoExports(t *testing.T) {
	in := autoInput(t)
	most, recomputed := 0, 0
	for _, s := range in.Plan.Stages {
		most = max(most, len(s.Recompute.Layers))
		recomputed += len(s.Recompute.Layers)
	}
	if most == 0 {
		t.Fatal("the plan recomputes nothing: the exports are not tested")
	}
	mg, err := export.Make(in, wire.Megatron)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("--recompute-granularity full --recompute-method block --recompute-num-layers %d ", most); !strings.Contains(mg.Text, want) {
		t.Errorf("megatron: no %q in\n%s", want, mg.Text)
	}
	if !hasNote(mg, wire.NoteRecompute) || mg.Exact {
		t.Errorf("megatron: exact %v, notes %v: want a recompute_not_expressible note", mg.Exact, mg.Notes)
	}
	ds, err := export.Make(in, wire.DeepSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ds.Text, `"activation_checkpoint_interval", 1`) || !hasNote(ds, wire.NoteRecompute) {
		t.Errorf("deepspeed: want interval 1 and a note, notes %v", ds.Notes)
	}
	pt, err := export.Make(in, wire.PyTorch)
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^    "model\.layers\.(\d+)": "(full|[a-z_,]+)",  # stage (\d+)$`).FindAllStringSubmatch(pt.Text, -1)
	if len(entries) != recomputed {
		t.Errorf("pytorch: %d RECOMPUTE entries, the plan recomputes %d layers", len(entries), recomputed)
	}
	k := 0
	for i, s := range in.Plan.Stages {
		for _, l := range s.Recompute.Layers {
			want := []string{"", fmt.Sprint(l.Layer - 1), l.Part, fmt.Sprint(i)} // block.N is layer N+1
			if k < len(entries) && fmt.Sprint(entries[k][1:]) != fmt.Sprint(want[1:]) {
				t.Errorf("pytorch: entry %v, want %v", entries[k][1:], want[1:])
			}
			k++
		}
	}
	if !strings.Contains(pt.Text, "model = apply_recompute(model)") || !hasNote(pt, wire.NoteRecompute) {
		t.Errorf("pytorch: build does not apply the recomputation, or no note for the attention cores: %v", pt.Notes)
	}
}

// TestRecomputeAutoMegatronExact: a plan whose every stage recomputes its first N blocks
// whole is what Megatron-LM's block method runs: exact, no note; one that recomputes
// nothing adds no argument.
func TestRecomputeAutoMegatronExact(t *testing.T) {
	for _, n := range []int{0, 2} {
		in := autoInput(t)
		for i := range in.Plan.Stages {
			s := &in.Plan.Stages[i]
			r := &wire.StageRecompute{}
			first := s.FirstLayer
			if i == 0 {
				first++ // the embedding
			}
			for l := first; l < first+n; l++ {
				r.Layers = append(r.Layers, wire.RecomputedLayer{Layer: l, Name: in.LayerNames[l], Part: recompute.Full})
			}
			s.Recompute = r
		}
		in.Coster = nil
		mg, err := export.Make(in, wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		if hasNote(mg, wire.NoteRecompute) {
			t.Errorf("n=%d: a recompute note: %v", n, mg.Notes)
		}
		has := strings.Contains(mg.Text, fmt.Sprintf("--recompute-method block --recompute-num-layers %d ", n))
		if has != (n > 0) || n == 0 && strings.Contains(mg.Text, "--recompute-granularity") {
			t.Errorf("n=%d: recompute arguments wrong in\n%s", n, mg.Text)
		}
	}
}

// TestRecomputeModulesExports: selective recomputation of named parts is Megatron-LM's
// --recompute-granularity selective --recompute-modules, exactly; PyTorch's checkpoint
// wrappers cannot reach them and say so; a module name outside Megatron-LM's list is
// refused at its field.
func TestRecomputeModulesExports(t *testing.T) {
	in := fromRequest(t, &wire.Request{
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096}},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb"},
		Parallelism: wire.Parallelism{Pipeline: 4},
		Training:    wire.Training{Recompute: "selective", RecomputeModules: []string{"mlp", "layernorm"}},
		Schedule:    wire.Schedule{Microbatches: 16, MicrobatchSize: 1},
	})
	mg, err := export.Make(in, wire.Megatron)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mg.Text, "  --recompute-granularity selective --recompute-modules mlp layernorm\n") || hasNote(mg, wire.NoteRecompute) {
		t.Errorf("megatron: want the modules, exactly, notes %v, in\n%s", mg.Notes, mg.Text)
	}
	pt, err := export.Make(in, wire.PyTorch)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(pt, wire.NoteRecompute) || pt.Exact {
		t.Errorf("pytorch: exact %v, notes %v: want a recompute_not_expressible note", pt.Exact, pt.Notes)
	}
	in.RecomputeModules = []string{"mlp", "core_attn; rm -rf /"}
	if _, err := export.Make(in, wire.Megatron); err == nil || !strings.Contains(err.Error(), "recompute_modules[1]") {
		t.Errorf("a hostile module name: error %v, want one at recompute_modules[1]", err)
	}
}

// TestRecomputeAutoModulesMegatron: a plan of recompute auto whose every block
// recomputes the same parts is Megatron-LM's selective recomputation of those modules,
// exactly; one whose blocks differ recomputes their union everywhere, with a note.
func TestRecomputeAutoModulesMegatron(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		in := autoInput(t)
		for i := range in.Plan.Stages {
			s := &in.Plan.Stages[i]
			r := &wire.StageRecompute{}
			for l := s.FirstLayer; l <= s.LastLayer; l++ {
				if !strings.HasPrefix(in.LayerNames[l], "block.") {
					continue
				}
				part := "core_attn,layernorm"
				if mixed && l%2 == 0 {
					part = "mlp"
				}
				r.Layers = append(r.Layers, wire.RecomputedLayer{Layer: l, Name: in.LayerNames[l], Part: part})
			}
			s.Recompute = r
		}
		in.Coster = nil
		mg, err := export.Make(in, wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		want := "--recompute-granularity selective --recompute-modules core_attn layernorm  #"
		if mixed {
			want = "--recompute-granularity selective --recompute-modules core_attn mlp layernorm  #"
		}
		if !strings.Contains(mg.Text, want) || hasNote(mg, wire.NoteRecompute) != mixed {
			t.Errorf("mixed %v: want %q and a note only when mixed, notes %v, in\n%s", mixed, want, mg.Notes, mg.Text)
		}
	}
}

// TestSelectiveOpExports: a plan of torchtitan's per-op selective checkpointing
// (training.recompute selective-op) exports in every format. PyTorch wraps each
// transformer block (or, split by sublayer, each attention and MLP sublayer; never the
// embedding, final norm or head, which torchtitan leaves unwrapped and pipeplan prices
// unrecomputed) in a checkpoint wrapper under torchtitan's policy, exactly, and the
// Python compiles; Megatron-LM, DeepSpeed and Graphcore have no per-op policy: a recompute
// note says so and the export is not exact.
func TestSelectiveOpExports(t *testing.T) {
	for _, tc := range []struct {
		split   string
		wrapped int // modules apply_recompute wraps: Llama-2-7B's 32 blocks, or their 64 sublayers
	}{{"", 32}, {"sublayer", 64}} {
		in := fromRequest(t, &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 4096, Split: tc.split}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm"},
			Parallelism: wire.Parallelism{Pipeline: 4},
			Training:    wire.Training{Recompute: "selective-op"},
			Schedule:    wire.Schedule{Microbatches: 16, MicrobatchSize: 1},
		})
		pt, err := export.Make(in, wire.PyTorch)
		if err != nil {
			t.Fatalf("split %q: pytorch: %v", tc.split, err)
		}
		wrapped := strings.Count(pt.Text, `: "selective-op",  # stage`)
		for _, want := range []string{
			"create_selective_checkpoint_contexts(policy)",
			"save = {aten.mm.default, aten.max.default}",
			`"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention"`,
			"meta[key] % 2 == 0",
			"context_fn=_selective_op_context",
			"model = apply_recompute(model)",
		} {
			if !strings.Contains(pt.Text, want) {
				t.Errorf("split %q: pytorch lacks %q", tc.split, want)
			}
		}
		if wrapped != tc.wrapped || strings.Contains(pt.Text, `"model.embed_tokens": "selective-op"`) || strings.Contains(pt.Text, `"lm_head": "selective-op"`) {
			t.Errorf("split %q: pytorch wraps %d modules, want the %d transformer layers only, in\n%s", tc.split, wrapped, tc.wrapped, pt.Text)
		}
		if !pt.Exact || hasNote(pt, wire.NoteRecompute) {
			t.Errorf("split %q: pytorch exact %v, notes %v: want exact, no recompute note", tc.split, pt.Exact, pt.Notes)
		}
		compilePython(t, pt.Text)
		for _, f := range []wire.Format{wire.Megatron, wire.DeepSpeed, wire.Graphcore} {
			ex, err := export.Make(in, f)
			if err != nil {
				t.Fatalf("split %q: %s: %v", tc.split, f, err)
			}
			var perOp bool
			for _, n := range ex.Notes {
				perOp = perOp || n.Code == wire.NoteRecompute && strings.Contains(n.Message, "no per-op policy")
			}
			if ex.Exact || !perOp {
				t.Errorf("split %q: %s exact %v, notes %v: want not exact, with a recompute note that it has no per-op policy", tc.split, f, ex.Exact, ex.Notes)
			}
		}
	}
}

// compilePython compiles a Python export with py_compile (skipped without python3).
func compilePython(t *testing.T, text string) {
	t.Helper()
	py := python(t)
	path := filepath.Join(t.TempDir(), "export.py")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
		t.Errorf("py_compile: %v\n%s", err, out)
	}
}

// TestGraphcoreRecompute: Graphcore's pipelining recomputes whole stages (allow_recompute
// with set_pipelining_options' recomputation_mode), and the export sets none, so a plan
// that recomputes anything (selective, selective-op, full, or auto where a stage
// recomputes) exports not exact with a recompute_not_expressible note, and one that
// recomputes nothing has no such note.
func TestGraphcoreRecompute(t *testing.T) {
	plan := func(rc string) *export.Input {
		return fromRequest(t, &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 2048}},
			Cluster:     wire.ClusterSpec{Device: "a100-80gb"},
			Parallelism: wire.Parallelism{Pipeline: 4},
			Training:    wire.Training{Recompute: rc},
			Schedule:    wire.Schedule{Name: "gpipe", Microbatches: 16, MicrobatchSize: 1},
		})
	}
	tests := []struct {
		name       string
		in         *export.Input
		recomputes bool
	}{
		{"none", plan("none"), false},
		{"selective", plan("selective"), true},
		{"selective-op", plan("selective-op"), true},
		{"full", plan("full"), true},
		{"auto, stages recomputing", autoInput(t), true},
	}
	for _, tc := range tests {
		gc, err := export.Make(tc.in, wire.Graphcore)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if noted := hasNote(gc, wire.NoteRecompute); noted != tc.recomputes || tc.recomputes && gc.Exact {
			t.Errorf("recompute %s: exact %v, recompute note %v: want a note and not exact exactly when the plan recomputes (%v); notes %v", tc.name, gc.Exact, noted, tc.recomputes, gc.Notes)
		}
	}
}
