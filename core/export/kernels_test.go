package export_test

import (
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// TestMegatronWritesPricedKernels: the Megatron-LM export states the attention and
// loss kernels the plan was priced with: fp8 attention (model.architecture.fp8_attention)
// as --fp8-dot-product-attention, Transformer Engine's fused loss (cross_entropy
// fused-inplace, the cuda-graphs and megatron modes' default) as
// --cross-entropy-loss-fusion; Megatron-LM's own unfused vocab-parallel loss is its
// default (no flag), and a loss Megatron-LM cannot run (HuggingFace's unfused, flash-attn's
// fused) is said so. The DeepSpeed and PyTorch exports, which set no fp8, say to run the
// fp8 attention in Transformer Engine (fp8_dpa).
func TestMegatronWritesPricedKernels(t *testing.T) {
	for _, c := range []struct {
		framework, ce string
		fp8Attention  bool
		fusion        bool   // --cross-entropy-loss-fusion written
		said          string // in the text, about the loss
	}{
		{"megatron", "", true, true, ""},
		{"cuda-graphs", "", false, true, ""},
		{"megatron", "vocab-parallel", false, false, "vocab-parallel"},
		{"eager", "", false, false, "unfused"},
		{"eager", "fused", false, false, "flash-attn"},
		{"compiled", "loss-parallel", false, false, "loss_parallel"},
	} {
		r := &wire.Request{
			Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 2048, Framework: c.framework,
				CrossEntropy: c.ce, Attention: "cudnn", FP8Attention: c.fp8Attention}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 2, Data: 2, Tensor: 2, SequenceParallel: true},
			Training:    wire.Training{FP8Recipe: "delayed"},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 4, MicrobatchSize: 1},
		}
		ex, err := export.Make(fromRequest(t, r), wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		name := c.framework + " " + c.ce
		if got := strings.Contains(ex.Text, "--fp8-dot-product-attention"); got != c.fp8Attention {
			t.Errorf("%s: --fp8-dot-product-attention written %v, want %v", name, got, c.fp8Attention)
		}
		if got := strings.Contains(ex.Text, "\n  --cross-entropy-loss-fusion"); got != c.fusion {
			t.Errorf("%s: --cross-entropy-loss-fusion written %v, want %v", name, got, c.fusion)
		}
		if c.said != "" && !strings.Contains(ex.Text, c.said) {
			t.Errorf("%s: the export does not say the loss priced (%q):\n%s", name, c.said, ex.Text)
		}
		for _, f := range []wire.Format{wire.DeepSpeed, wire.PyTorch} {
			o, err := export.Make(fromRequest(t, r), f)
			if err != nil {
				t.Fatal(err)
			}
			said := false
			for _, n := range o.Notes {
				said = said || strings.Contains(n.Message, "fp8_dpa=True")
			}
			if said != c.fp8Attention {
				t.Errorf("%s, %s export: says to run fp8 attention (fp8_dpa=True) %v, want %v", name, f, said, c.fp8Attention)
			}
		}
	}
}

// TestExportsSayUnrunTensorOverlap: a plan priced with a tensor-parallel overlap its
// framework does not run says so: PyTorch's DTensor runs no Transformer Engine
// userbuffers (it runs async TP, which its export turns on), DeepSpeed's tensor-parallel
// layers neither. Without the overlap no such note.
func TestExportsSayUnrunTensorOverlap(t *testing.T) {
	for _, c := range []struct {
		framework, overlap string
		pytorch, deepspeed bool
	}{
		{"eager", "userbuffers", true, true},
		{"megatron", "on", true, true},
		{"compiled", "async-tp", false, true},
		{"eager", "", false, false},
	} {
		r := &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 2048, Framework: c.framework}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 2, Data: 2, Tensor: 2, SequenceParallel: true, OverlapTensorComm: c.overlap},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 4, MicrobatchSize: 1},
		}
		for _, f := range []struct {
			format wire.Format
			want   bool
		}{{wire.PyTorch, c.pytorch}, {wire.DeepSpeed, c.deepspeed}} {
			o, err := export.Make(fromRequest(t, r), f.format)
			if err != nil {
				t.Fatal(err)
			}
			said := false
			for _, n := range o.Notes {
				said = said || n.Code == wire.NoteParallelism && strings.Contains(n.Message, "tensor-parallel overlap")
			}
			if said != f.want {
				t.Errorf("%s, overlap %q, %s export: says the priced tensor overlap does not run: %v, want %v", c.framework, c.overlap, f.format, said, f.want)
			}
		}
	}
}
