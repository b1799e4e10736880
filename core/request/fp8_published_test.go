package request

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
)

// fp8Run is a published fp8 pre-training run of a dense Llama 3 model, planned as a
// request with the run's own parallelism, batch and schedule, and compared on tokens per
// second per GPU.
type fp8Run struct {
	name, source string
	model        string // llama3-8b, llama3-70b, llama3.1-405b
	device       string
	recipe       string // delayed, current, blockwise, mxfp8
	gpus         int
	gbs, mbs     int
	tp, pp, vp   int
	tokensPerGPU float64 // published tokens per second per GPU
}

// The NVIDIA Megatron-Bridge performance summary (NVIDIA-NeMo/Megatron-Bridge,
// docs/performance-summary.md and docs/performance-summary-archive.md; the NeMo
// containers 25.09, 25.11 and 26.02): pre-training on DGX systems, sequence 8,192,
// Megatron-Core with Transformer Engine, the distributed optimizer; FP8-CS is current
// scaling, FP8-MX MXFP8. Only the runs without context parallelism and without FSDP are
// here (those are planned elsewhere).
var fp8Runs = []fp8Run{
	{"Llama3 8B, 8 GB300, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb300", "current", 8, 128, 2, 1, 1, 1, 37556},
	{"Llama3 8B, 8 GB300, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb300", "mxfp8", 8, 128, 2, 1, 1, 1, 36108},
	{"Llama3 8B, 8 GB200, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb200", "current", 8, 128, 2, 1, 1, 1, 31508},
	{"Llama3 8B, 8 GB200, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "gb200", "mxfp8", 8, 128, 2, 1, 1, 1, 29789},
	{"Llama3 8B, 8 B200, FP8-CS, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "b200", "current", 8, 128, 2, 1, 1, 1, 30624},
	{"Llama3 8B, 8 B200, FP8-MX, DP8", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-8b", "b200", "mxfp8", 8, 128, 2, 1, 1, 1, 29521},
	{"Llama3 70B, 64 H100, FP8-CS, TP4 PP8 VP5", "Megatron-Bridge perf summary, NeMo 25.11", "llama3-70b", "h100-sxm", "current", 64, 128, 1, 4, 8, 5, 1602},
	{"Llama3 70B, 64 H100, FP8-CS, TP4 PP8 VP5", "Megatron-Bridge perf summary, NeMo 25.09", "llama3-70b", "h100-sxm", "current", 64, 128, 1, 4, 8, 5, 1619},
	{"Llama3 70B, 64 H100, FP8, TP4 PP8 VP5, GBS 256", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "h100-sxm", "current", 64, 256, 1, 4, 8, 5, 1621},
	{"Llama3 70B, 64 GB200, MXFP8, TP2 PP4 VP5", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "gb200", "mxfp8", 64, 256, 1, 2, 4, 5, 3613},
	{"Llama3 70B, 64 GB300, MXFP8, TP1 PP4 VP5", "Megatron-Bridge perf summary, NeMo 26.02", "llama3-70b", "gb300", "mxfp8", 64, 256, 1, 1, 4, 5, 4596},
	{"Llama3.1 405B, 256 GB200, FP8-CS, TP4 PP16 VP4", "Megatron-Bridge perf summary, NeMo 25.11", "llama3.1-405b", "gb200", "current", 256, 1536, 1, 4, 16, 4, 813},
	{"Llama3.1 405B, 256 GB200, FP8, TP4 PP16 VP4", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb200", "current", 256, 1536, 1, 4, 16, 4, 793},
	{"Llama3.1 405B, 256 GB200, MXFP8, TP4 PP16 VP8", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb200", "mxfp8", 256, 1536, 1, 4, 16, 8, 786},
	{"Llama3.1 405B, 256 GB300, FP8, TP4 PP8 VP4", "Megatron-Bridge perf summary, NeMo 26.02", "llama3.1-405b", "gb300", "current", 256, 1536, 1, 4, 8, 4, 988},
}

// llama31405b is Llama 3.1 405B's config.json (meta-llama/Llama-3.1-405B), with the
// positions Megatron-Bridge's runs use.
const llama31405b = `{"model_type": "llama", "hidden_act": "silu", "hidden_size": 16384, "intermediate_size": 53248,
 "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
 "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "tie_word_embeddings": false}`

func (c fp8Run) request() *Request {
	a := &Architecture{Seq: 8192, Framework: "cuda-graphs"}
	switch c.model {
	case "llama3-8b":
		a.Name = "meta-llama-3-8b"
	case "llama3-70b":
		a.Name = "llama-3.1-70b"
	default:
		a.Config = []byte(llama31405b)
	}
	perNode := 8
	if strings.HasPrefix(c.device, "gb") {
		perNode = 72
	}
	dp := c.gpus / (c.tp * c.pp)
	sched := "1f1b"
	if c.vp > 1 {
		sched = fmt.Sprintf("interleaved:%d", c.vp)
	}
	return &Request{
		Model:       ModelSpec{Architecture: a},
		Cluster:     ClusterSpec{Device: c.device, DevicesPerNode: perNode},
		Parallelism: Parallelism{Pipeline: c.pp, Data: dp, Tensor: c.tp, ZeRO: 1, SequenceParallel: c.tp > 1},
		Training:    Training{Precision: "mixed-fp32-grads", FP8Recipe: c.recipe, FP8ParamGather: true},
		Schedule:    Schedule{Name: sched, Microbatches: c.gbs / dp / c.mbs, MicrobatchSize: c.mbs},
	}
}

// TestFP8PublishedRuns plans each published fp8 run exactly as it ran (Megatron-style:
// CUDA graphs framework, fp32 gradient buffers, the distributed optimizer, sequence
// parallelism with tensor parallelism, fp8 primary weights as Megatron-Bridge's fp8
// recipes set them) and compares tokens per second per GPU. Every run must plan as
// feasible (each ran); every error is logged, per source and per recipe, with the median
// and signed median; the signed median over all must be within 10% (issue 19.1: fp8 was
// about a third optimistic), no run beyond 30%.
//
// Assumptions: the first and last blocks that Megatron-Bridge's current-scaling recipe
// keeps in bf16 run in fp8 here; GB200 and GB300 share their datasheet rates, while
// NVIDIA's tables show GB300 20-27% faster (Blackwell Ultra's faster attention exponent
// and power), so GB200 runs err fast and GB300 runs slow.
func TestFP8PublishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 256 devices")
	}
	var all []float64
	by := map[string][]float64{}
	for _, c := range fp8Runs {
		res, err := Run(context.Background(), c.request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Feasible {
			t.Errorf("%s (%s): ran, but planned as not fitting: %v", c.name, c.source, res.Diagnostics)
			continue
		}
		got := float64(c.gbs) * 8192 / res.Step.StepSeconds / float64(c.gpus)
		e := (got - c.tokensPerGPU) / c.tokensPerGPU
		all = append(all, e)
		by["source: "+c.source] = append(by["source: "+c.source], e)
		by["recipe: "+c.recipe] = append(by["recipe: "+c.recipe], e)
		by["device: "+c.device] = append(by["device: "+c.device], e)
		t.Logf("%-48s predicted %7.0f tokens/s/GPU, published %6.0f: error %+5.1f%% (%s)", c.name, got, c.tokensPerGPU, 100*e, c.source)
		if math.Abs(e) > 0.30 {
			t.Errorf("%s: predicted %.0f tokens/s/GPU, published %.0f (%s): error %+.1f%% beyond 30%%", c.name, got, c.tokensPerGPU, c.source, 100*e)
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		signed, abs := medians(by[k])
		t.Logf("%-52s %2d runs: median |error| %4.1f%%, signed median %+5.1f%%", k, len(by[k]), 100*abs, 100*signed)
	}
	signed, abs := medians(all)
	t.Logf("all: %d runs, median |error| %.1f%%, signed median %+.1f%%", len(all), 100*abs, 100*signed)
	if len(all) != len(fp8Runs) || math.Abs(signed) > 0.10 {
		t.Errorf("signed median %+.1f%% over %d of %d runs: want within 10%% over all", 100*signed, len(all), len(fp8Runs))
	}
}

// medians returns the median of errs and of their absolute values (the mean of the two
// middle ones for an even count).
func medians(errs []float64) (signed, abs float64) {
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		n := len(v)
		if n == 0 {
			return 0
		}
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	return med(errs), med(a)
}
