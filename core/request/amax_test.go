package request

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// TestAmaxReductionGroup: Megatron-Core's amax reduction group is tensor x context x
// data consecutive ranks (tensor alone with tp_only_amax_red), one node while it fits
// in one, else ceil(ranks / per node) nodes.
func TestAmaxReductionGroup(t *testing.T) {
	for _, tt := range []struct {
		tensor, context, data, perNode int
		tpOnly                         bool
		ranks, nodes                   int
	}{
		{4, 0, 16, 8, false, 64, 8},
		{4, 1, 16, 8, true, 4, 1},
		{8, 2, 4, 8, false, 64, 8},
		{2, 1, 4, 8, false, 8, 1},
		{1, 1, 1, 8, false, 1, 1},
		{4, 1, 16, 0, false, 64, 1},
		{8, 1, 3, 16, false, 24, 2},
	} {
		r, n := AmaxReductionGroup(tt.tensor, tt.context, tt.data, tt.perNode, tt.tpOnly)
		if r != tt.ranks || n != tt.nodes {
			t.Errorf("%+v: %d ranks on %d nodes, want %d on %d", tt, r, n, tt.ranks, tt.nodes)
		}
	}
	if f, b := DelayedAmaxReductionsPerChunk(true); f != 1 || b != 1 {
		t.Errorf("training: %d forward and %d backward reductions a chunk, want 1 and 1", f, b)
	}
	if f, b := DelayedAmaxReductionsPerChunk(false); f != 0 || b != 0 {
		t.Errorf("inference: %d forward and %d backward reductions a chunk, want none", f, b)
	}
}

// TestDelayedAmaxReductionsPriced: on the MLPerf v3.0 GPT-3 175B run (TP 4, PP 8, 12
// chunks a device, DP 16, 8 devices a node), the blocks of the model together carry
// pipeline x chunks reductions of each pass, each NCCL's small all-reduce over the
// group: 96 x SmallAllReduceSeconds(64, 8) over the TP x DP group, 96 x
// SmallAllReduceSeconds(4, 1) with fp8_amax_tp_only; the other layers carry none.
func TestDelayedAmaxReductionsPriced(t *testing.T) {
	run := mlperfV30Run(t)
	sums := func(tpOnly bool) (fwd, bwd, other float64) {
		r := run.request()
		r.Training.FP8AmaxTPOnly = tpOnly
		p, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range p.model.Layers {
			if pipelineBoundaryKind(p.est.Layers[i].Kind) {
				fwd += l.ForwardSeconds
				bwd += l.BackwardSeconds
			} else {
				other += l.ForwardSeconds + l.BackwardSeconds
			}
		}
		return fwd, bwd, other
	}
	f0, b0, o0 := sums(true)
	f1, b1, o1 := sums(false)
	chunks := float64(run.pp * run.vp)
	want := chunks * (cluster.SmallAllReduceSeconds(64, 8) - cluster.SmallAllReduceSeconds(4, 1))
	if want <= 0 {
		t.Fatalf("the 64-rank group's reduction is not dearer than the 4-rank one's: %v", want)
	}
	for _, tt := range []struct {
		pass      string
		got, want float64
	}{{"forward", f1 - f0, want}, {"backward", b1 - b0, want}, {"other layers", o1 - o0, 0}} {
		if math.Abs(tt.got-tt.want) > 1e-9 {
			t.Errorf("%s: the blocks' seconds grow %v, want %v", tt.pass, tt.got, tt.want)
		}
	}
}

// TestFP8AmaxTPOnlyRefused: training.fp8_amax_tp_only names the group of delayed
// scaling's amax-history all-reduce, so it is refused, naming the field, where no such
// reduction runs: a bf16 run, fp8 under the current or mxfp8 recipe, inference. The
// MLPerf v3.0 run it is priced on (fp8, delayed) takes it.
func TestFP8AmaxTPOnlyRefused(t *testing.T) {
	run := mlperfV30Run(t)
	ok := run.request()
	ok.Training.FP8AmaxTPOnly = true
	if _, err := prepare(ok); err != nil {
		t.Fatalf("fp8 delayed: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(r *wire.Request)
	}{
		{"bf16", func(r *wire.Request) {
			r.Model.Architecture.DType, r.Training.FP8Recipe, r.Training.FP8ParamGather = "bf16", "", false
		}},
		{"current", func(r *wire.Request) { r.Training.FP8Recipe = "current" }},
		{"inference", func(r *wire.Request) {
			r.Training = wire.Training{Mode: wire.ModeInference, FP8Recipe: r.Training.FP8Recipe}
			r.Schedule = wire.Schedule{Name: "inference", Microbatches: r.Schedule.Microbatches, MicrobatchSize: r.Schedule.MicrobatchSize}
			r.Parallelism.OverlapGradReduce, r.Parallelism.OverlapParamGather, r.Parallelism.OverlapTensorComm, r.Parallelism.TPCommOverlapConfig = "", "", "", ""
			r.Parallelism.Sharding, r.Parallelism.ZeRO = "", 0
		}},
	} {
		r := run.request()
		c.edit(r)
		r.Training.FP8AmaxTPOnly = true
		_, err := prepare(r)
		if err == nil || !strings.Contains(err.Error(), "training.fp8_amax_tp_only: ") {
			t.Errorf("%s: %v, want a refusal of training.fp8_amax_tp_only", c.name, err)
		}
	}
}

// TestFP8AmaxTPOnlyApplies: the field applies to an architecture's training in fp8 under
// the delayed recipe (the default fp8 recipe on an H100, and fp8 the default dtype where
// a recipe is named), and to nothing else; Normalize takes the field exactly where it
// applies to the request's normal form.
func TestFP8AmaxTPOnlyApplies(t *testing.T) {
	arch := func(dtype, recipe string) *wire.Request {
		return &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", DType: dtype, Framework: "megatron"}},
			Parallelism: wire.Parallelism{Tensor: 2}, Training: wire.Training{FP8Recipe: recipe}}
	}
	for _, c := range []struct {
		name string
		r    *wire.Request
		want bool
	}{
		{"fp8, the default recipe", arch("fp8", ""), true},
		{"fp8 delayed", arch("fp8", "delayed"), true},
		{"delayed, the dtype left to its default", arch("", "delayed"), true},
		{"fp8 current", arch("fp8", "current"), false},
		{"fp8 blockwise", arch("fp8", "blockwise"), false},
		{"bf16", arch("bf16", ""), false},
		{"the default dtype", arch("", ""), false},
		{"fp8 inference", func() *wire.Request {
			r := arch("fp8", "")
			r.Schedule.Name = "inference"
			return r
		}(), false},
		{"a profile", &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 4},
			Model: wire.ModelSpec{Example: "gpt2-medium"}}, false},
	} {
		n, err := Normalize(c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := FP8AmaxTPOnlyApplies(n); got != c.want {
			t.Errorf("%s: applies %v, want %v", c.name, got, c.want)
		}
		c.r.Training.FP8AmaxTPOnly = true
		if err := Validate(c.r); (err == nil) != c.want {
			t.Errorf("%s with fp8_amax_tp_only: Normalize says %v, want taken %v", c.name, err, c.want)
		}
	}
}

// mlperfV30Run is MLPerf v3.0's 512-GPU GPT-3 175B row, the delayed-fp8 run the amax
// reduction is priced and refused on.
func mlperfV30Run(t *testing.T) mlperfRun {
	t.Helper()
	for _, c := range mlperfRuns {
		if c.round == "v3.0" && c.gpus == 512 {
			return c
		}
	}
	t.Fatal("no v3.0 512-GPU row")
	return mlperfRun{}
}
