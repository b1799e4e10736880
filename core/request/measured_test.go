package request

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// measuredStep is one training step that tools/measure/steps.py timed on one GPU
// (testdata/measured_h100_steps.json on an H100 SXM, the figures the eager preset's
// host time was fitted to; testdata/measured_h200_steps.json on an H200, another
// machine, which nothing was fitted to): a HuggingFace model from a bundled
// configuration with random weights, eager PyTorch 2.11 and transformers 5.17, the sdpa
// attention, AdamW (torch's default foreach implementation), under AMP (fp32
// parameters, torch.autocast to bf16) or in bf16; the median of ten steps after three
// warm-ups, and the peak of allocated memory (torch.cuda.max_memory_allocated).
type measuredStep struct {
	Config         string  `json:"config"`
	Seq            int     `json:"seq"`
	MicrobatchSize int     `json:"microbatch_size"`
	Precision      string  `json:"precision"`
	StepSeconds    float64 `json:"step_seconds"`
	PeakAllocated  float64 `json:"peak_allocated_bytes"`
	Error          string  `json:"error"`
	// device is the preset of the GPU it ran on (not in the file).
	device string
}

// request is the planning request of the measured step: one device of its preset, the model's
// bundled architecture with cuDNN's fused attention and the default framework (eager), one
// microbatch per step. cuDNN is what sdpa ran: PyTorch puts its cuDNN backend first on an
// sm90 or sm100 device with a new enough cuDNN (aten/src/ATen/native/transformers/cuda/
// sdp_utils.cpp, check_prefer_cudnn_attention; pytorch/pytorch#162073, "Enable cuDNN
// SDPA by default for SM 9.0, SM 10.0", for 2.9; the cuDNN that 2.11's CUDA 13 wheels
// bundle passes the gate, huggingface/transformers#48163), and the files' own attention
// timings agree: 409 and 496 TFLOP/s causal forward at 1k and 2k tokens, head dim 128,
// on the H100, cuDNN's published 410 and 484 (Shah et al. 2024), not FlashAttention-2's
// 260 and 298. Planned with flash, as until now, the device-bound steps erred 1 to 2.5
// points slower (30 steps -2.5% signed, now -0.6%); the host-bound ones do not move.
func (m measuredStep) request() *wire.Request {
	precision := "amp"
	if m.Precision == "bf16" {
		precision = "pure"
	}
	return &wire.Request{
		Model:    wire.ModelSpec{Architecture: &wire.Architecture{Name: strings.TrimSuffix(m.Config, ".json"), Seq: m.Seq, DType: "bf16", Attention: "cudnn"}},
		Cluster:  wire.ClusterSpec{Device: m.device, Count: 1},
		Training: wire.Training{Mode: "training", Optimizer: "adamw", Precision: precision},
		Schedule: wire.Schedule{Microbatches: 1, MicrobatchSize: m.MicrobatchSize},
	}
}

func (m measuredStep) name() string {
	return m.device + " " + strings.TrimSuffix(m.Config, ".json") + " " + m.Precision + " b" + itoa(m.MicrobatchSize) + " s" + itoa(m.Seq)
}

// measuredSteps reads the measured steps of both GPUs.
func measuredSteps(t *testing.T) []measuredStep {
	t.Helper()
	var out []measuredStep
	for _, f := range []struct{ file, gpu, device string }{
		{"testdata/measured_h100_steps.json", "H100", "h100-sxm"},
		{"testdata/measured_h200_steps.json", "H200", "h200"},
	} {
		raw, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			GPU   string         `json:"gpu"`
			Steps []measuredStep `json:"steps"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.GPU, f.gpu) || len(doc.Steps) < 10 {
			t.Fatalf("%s: %d steps on %q, want an %s's", f.file, len(doc.Steps), doc.GPU, f.gpu)
		}
		for _, s := range doc.Steps {
			s.device = f.device
			out = append(out, s)
		}
	}
	return out
}

// TestMeasuredSteps plans each measured step through Run and holds the prediction to
// issue 19's bounds: every step time within 25% (the host-bound steps of one sequence
// vary by up to a quarter between runs of the same machine), the median |error| within
// 10% and the signed median within 5%; memory never more than 5% under the measured
// peak (a plan that says "fits" must fit) nor more than 20% over it.
func TestMeasuredSteps(t *testing.T) {
	var errs []float64
	for _, m := range measuredSteps(t) {
		if m.Error != "" {
			t.Errorf("%s: the measurement failed: %s", m.name(), m.Error)
			continue
		}
		res, err := Run(context.Background(), m.request())
		if err != nil {
			t.Fatalf("%s: %v", m.name(), err)
		}
		if !res.Feasible {
			t.Errorf("%s: ran in %.1f GiB, planned as not fitting", m.name(), m.PeakAllocated/(1<<30))
			continue
		}
		e := m.StepSeconds/res.Step.StepSeconds - 1 // throughput error: positive is optimistic
		errs = append(errs, e)
		st := res.Plan.Stages[0]
		allocated := float64(st.MemoryBytes - st.FrameworkBytes - st.ReservedBytes)
		me := allocated/m.PeakAllocated - 1
		t.Logf("%-28s step %6.1f ms, predicted %6.1f ms (%+5.1f%%); peak %5.1f GiB, predicted %5.1f GiB (%+5.1f%%)",
			m.name(), 1e3*m.StepSeconds, 1e3*res.Step.StepSeconds, 100*e, m.PeakAllocated/(1<<30), allocated/(1<<30), 100*me)
		if math.Abs(e) > issueTolerance {
			t.Errorf("%s: throughput error %+.1f%%, beyond 25%%", m.name(), 100*e)
		}
		if me < -0.05 || me > 0.20 {
			t.Errorf("%s: memory error %+.1f%%, outside -5%% to +20%%", m.name(), 100*me)
		}
	}
	signed, abs := medians(errs)
	t.Logf("%d steps: median |error| %.1f%%, signed median %+.1f%%", len(errs), 100*abs, 100*signed)
	if abs > 0.10 || math.Abs(signed) > 0.05 {
		t.Errorf("median |error| %.1f%%, signed median %+.1f%%: beyond 10%% and 5%%", 100*abs, 100*signed)
	}
}
