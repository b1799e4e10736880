package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/export"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// exportCase is a planning request and the formats exported from its result.
type exportCase struct {
	name    string
	request func() *wire.Request
	formats []wire.Format
	// exact lists the formats expected to express the plan exactly.
	exact []wire.Format
	// family names the module naming the case uses ("" for a profile: layer names).
	family string
}

var all = []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Megatron, wire.Graphcore, wire.JSON}

// notGraphcore are the formats that can write a tensor-parallel plan: Graphcore places
// whole layers on IPUs.
var notGraphcore = []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Megatron, wire.JSON}

var cases = []exportCase{{
	// The real case: Llama-2-7B on 16 A100s, 4 stages x 2 replicas x 2-way tensor
	// parallel, 1F1B.
	name: "llama-2-7b-1f1b",
	request: archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: "1f1b",
		m: 16, batch: 1, seq: 4096, dp: 2, tp: 2}.request,
	// DeepSpeed's PipelineEngine blocks on the transfers this plan prices beside compute.
	formats: notGraphcore, exact: []wire.Format{wire.PyTorch, wire.Megatron, wire.JSON},
	family: "llama",
}, {
	// Tensor and sequence parallel under interleaving: 4-way tensor parallel inside 8-GPU
	// H100 nodes, 4 stages of 2 chunks. DeepSpeed gets the best 1F1B split.
	name: "llama-2-7b-tp4-sp-interleaved",
	request: func() *wire.Request {
		r := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: 4, sched: "interleaved:2",
			m: 8, batch: 1, seq: 4096, tp: 4, sp: true}.request()
		r.Cluster.DevicesPerNode = 8
		return r
	},
	formats: notGraphcore, exact: []wire.Format{wire.PyTorch, wire.Megatron, wire.JSON},
	family: "llama",
}, {
	// Interleaved: PyTorch and Megatron-LM run it; DeepSpeed and Graphcore get the best
	// one-stage-per-device split.
	name: "llama-2-7b-interleaved",
	request: archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: "interleaved:2",
		m: 16, batch: 1, seq: 4096}.request,
	formats: all, exact: []wire.Format{wire.PyTorch, wire.Megatron, wire.JSON},
	family: "llama",
}, {
	// A mixture of experts: Mixtral 8x7B on 16 H100s in nodes of 8, 4 stages x 4
	// replicas, 4-way expert parallel (each device holds 2 of a layer's 8 experts), its
	// all-to-alls overlapped. Megatron-LM states the expert parallel sizes.
	name: "mixtral-8x7b-ep4",
	request: func() *wire.Request {
		r := archCase{arch: "mixtral-8x7b-v0.1", device: "h100-sxm", devices: 4, sched: "1f1b",
			m: 8, batch: 1, seq: 2048, dp: 4}.request()
		r.Cluster.DevicesPerNode = 8
		r.Parallelism.Expert, r.Parallelism.ExpertOverlap = 4, true
		return r
	},
	// PyTorch and DeepSpeed say what they leave undone (TestExpertNotes).
	formats: []wire.Format{wire.Megatron, wire.JSON}, exact: []wire.Format{wire.Megatron, wire.JSON},
	family: "llama",
}, {
	// FP8 with current scaling, fp32 gradients and fp8 weights only, on H100s:
	// Megatron-LM runs it (--fp8-recipe tensorwise, --fp8-param-gather, --bf16's fp32
	// main_grad buffers); DeepSpeed and PyTorch have no fp8 recipe to set, Graphcore's
	// IPUs no fp8 or bf16.
	name: "llama-2-7b-fp8-current",
	request: func() *wire.Request {
		r := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: 4, sched: "1f1b",
			m: 8, batch: 1, seq: 4096, dp: 2}.request()
		r.Training.FP8Recipe, r.Training.FP8ParamGather, r.Training.Precision = "current", true, "mixed-fp32-grads"
		return r
	},
	formats: all, exact: []wire.Format{wire.Megatron, wire.JSON},
	family: "llama",
}, {
	// A hand-made split with a cut inside block 8 and one between the final norm and the
	// head, under ZB-H1: Megatron-LM moves both cuts.
	name: "gpt2-medium-sublayer-manual",
	request: func() *wire.Request {
		r := archCase{arch: "gpt2-medium", device: "h100-sxm", devices: 4, sched: "zb-h1",
			m: 8, batch: 4, seq: 1024, split: analytic.Sublayers, recompute: analytic.Selective}.request()
		// 0 embedding, 1+2i block.i.attention, 2+2i block.i.mlp, 49 final_norm, 50 lm_head.
		r.Boundaries = []int{0, 18, 36, 50, 51}
		return r
	},
	formats: all, exact: []wire.Format{wire.JSON},
	family: "gpt2",
}, {
	// A profile (the bundled GPT-2 medium example): layer names are the module names. Two
	// replicas of the pipeline, without tensor parallelism.
	name: "example-profile-gpipe",
	request: func() *wire.Request {
		r := exampleRequest(4, "gpipe", 8)
		r.Training.Recompute = "full"
		r.Parallelism.Data = 2
		return r
	},
	formats: []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Graphcore, wire.JSON},
	// PyTorch's checkpoint wrappers keep each module's input, not only the stage's.
	exact: []wire.Format{wire.JSON},
}, {
	name: "example-profile-inference",
	request: func() *wire.Request {
		r := exampleRequest(2, "inference", 4)
		r.Training.Mode = wire.ModeInference
		return r
	},
	formats: []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Graphcore},
	// DeepSpeed's InferenceSchedule blocks on the transfers this plan prices beside
	// compute (a profile's plan is never priced blocking).
	exact: []wire.Format{wire.PyTorch, wire.Graphcore},
}, {
	// A graph split (partition graph): two towers listed alternately in the model's
	// order, split into convex stages that are not contiguous in it. PyTorch builds the
	// stages by hand and lists the tensors crossing the cut, DeepSpeed's layer list
	// follows the plan's order, Graphcore gives every layer its stage (under its own
	// schedule, priced by planning the graph split under it); Megatron-LM refuses
	// (TestFromRequestGraphSplit).
	name:    "two-towers-graph",
	request: func() *wire.Request { return twoTowers(nil, nil, 2, "1f1b", 4) },
	formats: []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Graphcore, wire.JSON},
	// DeepSpeed's PipelineEngine blocks on the transfers this plan prices beside compute.
	exact: []wire.Format{wire.PyTorch, wire.JSON},
}, {
	// The same graph split with recompute auto on a tight memory: the stem recomputes,
	// named in the plan's stage as the model numbers it; PyTorch's RECOMPUTE wraps it.
	name:    "two-towers-graph-auto",
	request: twoTowersRecompute,
	formats: []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.JSON},
	exact:   []wire.Format{wire.PyTorch, wire.JSON},
}}

var extensions = map[wire.Format]string{
	wire.PyTorch: "pytorch.py", wire.DeepSpeed: "deepspeed.py", wire.Megatron: "megatron.sh",
	wire.Graphcore: "graphcore.py", wire.JSON: "plan.json",
}

// made is one export of one case.
type made struct {
	c   exportCase
	in  *export.Input
	req *wire.Request // the normalized request
	res *wire.Result  // its result, as FromRequest planned it
	ex  *wire.Export
}

// madeAll caches the exports: every test reads them, and each plans several requests.
var (
	madeOnce sync.Once
	madeAll  []made
	madeErr  error
)

// makeAll exports every case in its formats, once per test binary.
func makeAll(t *testing.T) []made {
	t.Helper()
	madeOnce.Do(func() {
		for _, c := range cases {
			r := c.request()
			in, res, err := export.FromRequest(context.Background(), r)
			if err != nil {
				madeErr = fmt.Errorf("%s: %w", c.name, err)
				return
			}
			n, err := request.Normalize(r)
			if err != nil {
				madeErr = fmt.Errorf("%s: %w", c.name, err)
				return
			}
			for _, f := range c.formats {
				ex, err := export.Make(in, f)
				if err != nil {
					madeErr = fmt.Errorf("%s %s: %w", c.name, f, err)
					return
				}
				madeAll = append(madeAll, made{c, in, n, res, ex})
			}
		}
	})
	if madeErr != nil {
		t.Fatal(madeErr)
	}
	return madeAll
}

func TestGolden(t *testing.T) {
	written := map[string]bool{}
	for _, m := range makeAll(t) {
		path := filepath.Join("testdata", "golden", m.c.name+"."+extensions[m.ex.Format])
		written[filepath.Base(path)] = true
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(m.ex.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./core/export -update writes it)", err)
		}
		if m.ex.Text != string(want) {
			t.Errorf("%s differs from its golden file (go test ./core/export -update rewrites it):\n%s", path, m.ex.Text)
		}
	}
	// A golden file no case writes any more is stale: a reader would take it for an export.
	files, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if written[f.Name()] {
			continue
		}
		path := filepath.Join("testdata", "golden", f.Name())
		if *update {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: no case writes it (go test ./core/export -update removes it)", path)
	}
}

// TestExactness checks which exports are exact, and that an inexact one says why, what it
// expresses instead and what that costs.
func TestExactness(t *testing.T) {
	for _, m := range makeAll(t) {
		name := m.c.name + " " + string(m.ex.Format)
		want := slices.Contains(m.c.exact, m.ex.Format)
		if m.ex.Exact != want {
			t.Errorf("%s: exact %v, want %v (notes %v)", name, m.ex.Exact, want, m.ex.Notes)
		}
		if p := m.ex.Planned; p == nil {
			t.Errorf("%s: the plan is not priced", name)
		} else if st := m.res.Step; p.StepSeconds != st.StepSeconds || p.SamplesPerSecond != st.SamplesPerSecond || p.Fits != m.res.Feasible {
			// The price is the request's whole step (pipeline, optimizer, all-reduces, the
			// tensor-parallel all-reduces inside every stage), not another costing.
			t.Errorf("%s: priced %+v; the request's result states %v s, %v samples/s, fits %v", name, *p, st.StepSeconds, st.SamplesPerSecond, m.res.Feasible)
		}
		if m.ex.Exact {
			if !slices.Equal(m.ex.Boundaries, m.in.Boundaries) || m.ex.Expressed != nil {
				t.Errorf("%s: exact, but expresses %v (priced %v), planned %v", name, m.ex.Boundaries, m.ex.Expressed, m.in.Boundaries)
			}
			continue
		}
		var codes []string
		for _, n := range m.ex.Notes {
			codes = append(codes, n.Code)
		}
		// Another precision, sharding or training loop is not what pipeplan priced: what
		// the export expresses then has no price.
		otherRun := slices.Contains(codes, wire.NotePrecision) || slices.Contains(codes, wire.NoteParallelism) || slices.Contains(codes, wire.NoteRecompute) || slices.Contains(codes, wire.NoteTrainingLoop)
		if otherRun {
			if m.ex.Expressed != nil {
				t.Errorf("%s: runs another precision or sharding than priced, yet prices what it expresses as %+v", name, *m.ex.Expressed)
			}
		} else if m.ex.Expressed == nil || !slices.Equal(m.ex.Expressed.Boundaries, m.ex.Boundaries) || m.ex.Expressed.Schedule != m.ex.Schedule {
			t.Errorf("%s: not exact, and what it expresses (%v under %s) is priced as %+v", name, m.ex.Boundaries, m.ex.Schedule, m.ex.Expressed)
		}
		if !otherRun && !slices.Contains(codes, wire.NoteSchedule) && !slices.Contains(codes, wire.NoteSplit) {
			t.Errorf("%s: not exact, and no note says why: %v", name, codes)
		}
		if !strings.Contains(m.ex.Text, "NOT EXACT: this runs "+m.ex.Schedule) {
			t.Errorf("%s: the text does not say it is not exact", name)
		}
	}
}

// TestReadBack reads every export's split back from its text, by the framework's rules
// as the test implements them, and checks it is the split the export states.
func TestReadBack(t *testing.T) {
	for _, m := range makeAll(t) {
		name := m.c.name + " " + string(m.ex.Format)
		var got []int
		var err error
		switch m.ex.Format {
		case wire.PyTorch:
			if m.in.LayerOrder != nil { // a graph split: no split points, stages by hand
				got, err = readStageModules(m.ex.Text)
				break
			}
			got, err = readPyTorch(m.ex.Text, m.in.LayerNames, m.c.family)
		case wire.DeepSpeed:
			got, err = readList(m.ex.Text, `(?m)^PARTS = \[([0-9, ]+)\]$`)
		case wire.Megatron:
			got, err = readMegatron(m.ex.Text, m.in.LayerNames)
		case wire.Graphcore:
			got, err = readGraphcore(m.ex.Text, m.in.LayerNames)
		case wire.JSON:
			var d *export.Document
			if d, err = export.ReadDocument([]byte(m.ex.Text)); err == nil {
				got = d.Boundaries
				for i, s := range d.Stages {
					if s.FirstLayer != got[i] || s.LastLayer != got[i+1]-1 || s.Device != i%d.Parallelism.Pipeline {
						t.Errorf("%s: stage %+v does not match boundaries %v", name, s, got)
					}
					if lo := d.Plan.LayerOrder; lo != nil && (s.FirstName != d.Model.Layers[lo[s.FirstLayer]] || s.LastName != d.Model.Layers[lo[s.LastLayer]]) {
						t.Errorf("%s: stage %d from %q to %q; in the plan's layer order, %q to %q", name, i, s.FirstName, s.LastName, d.Model.Layers[lo[s.FirstLayer]], d.Model.Layers[lo[s.LastLayer]])
					}
				}
			}
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := checkSizes(m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !slices.Equal(got, m.ex.Boundaries) {
			t.Errorf("%s: the text splits at %v, the export states %v", name, got, m.ex.Boundaries)
		}
	}
}

// checkSizes reads the pipeline, data and tensor parallel sizes (and sequence
// parallelism) an export's text states, and checks they are the request's: the header of
// every snippet, Megatron-LM's arguments, the PyTorch and DeepSpeed constants, the plan
// document's parallelism.
func checkSizes(m made) error {
	par := m.req.Parallelism
	sched, _ := schedule.Parse(m.ex.Schedule)
	p := sched.Devices(len(m.ex.Boundaries) - 1)
	d, tp := par.Data, par.Tensor
	mbs, mb := m.req.Schedule.MicrobatchSize, m.req.Schedule.Microbatches
	one := func(pattern string) (int, error) {
		v, err := readList(m.ex.Text, pattern)
		if err != nil {
			return 0, err
		}
		return v[0], nil
	}
	type want struct {
		pattern string
		v       int
	}
	var wants []want
	switch m.ex.Format {
	case wire.JSON:
		doc, err := export.ReadDocument([]byte(m.ex.Text))
		if err != nil {
			return err
		}
		if g := doc.Parallelism; g.Pipeline != p || g.Data != d || g.Tensor != tp || g.ZeRO != par.ZeRO {
			return fmt.Errorf("the document states %+v, the request pipeline %d, data %d, tensor %d", g, p, d, tp)
		}
		return nil
	case wire.Megatron:
		wants = []want{{`--tensor-model-parallel-size (\d+)`, tp}, {`--pipeline-model-parallel-size (\d+)`, p},
			{`# Launch on (\d+) GPUs`, p * d * tp}, {`--global-batch-size (\d+)`, mbs * mb * d}, {`--micro-batch-size (\d+)`, mbs}}
		if sp := strings.Contains(m.ex.Text, "\n  --sequence-parallel\n"); sp != par.SequenceParallel {
			return fmt.Errorf("--sequence-parallel %v, the request's sequence_parallel %v", sp, par.SequenceParallel)
		}
		if par.Expert > 0 {
			wants = append(wants, want{`--expert-model-parallel-size (\d+)`, par.Expert}, want{`--expert-tensor-parallel-size (\d+)`, par.ExpertTensor})
		} else if strings.Contains(m.ex.Text, "--expert-") {
			return fmt.Errorf("a model without experts states expert parallelism")
		}
		if ov := strings.Contains(m.ex.Text, "--overlap-moe-expert-parallel-comm"); ov != par.ExpertOverlap {
			return fmt.Errorf("--overlap-moe-expert-parallel-comm %v, the request's expert_overlap %v", ov, par.ExpertOverlap)
		}
	case wire.PyTorch:
		wants = []want{{`(?m)^NUM_RANKS = (\d+)`, p}, {`(?m)^DATA_PARALLEL = (\d+)`, d}, {`(?m)^TENSOR_PARALLEL = (\d+)`, tp}}
		if sp := strings.Contains(m.ex.Text, "\nSEQUENCE_PARALLEL = True"); sp != par.SequenceParallel {
			return fmt.Errorf("SEQUENCE_PARALLEL %v, the request's sequence_parallel %v", sp, par.SequenceParallel)
		}
	case wire.DeepSpeed:
		wants = []want{{`(?m)^NUM_STAGES = (\d+)`, len(m.ex.Boundaries) - 1}, {`(?m)^DATA_PARALLEL = (\d+)`, d},
			{`(?m)^TENSOR_PARALLEL = (\d+)`, tp}, {`"train_batch_size": (\d+)`, mbs * mb * d}}
	}
	sp := ""
	if par.SequenceParallel {
		sp = " with sequence parallelism"
	}
	if h := fmt.Sprintf("data parallel %d, tensor parallel %d%s\n", d, tp, sp); !strings.Contains(m.ex.Text, h) {
		return fmt.Errorf("the header does not state %q", h)
	}
	for _, w := range wants {
		v, err := one(w.pattern)
		if err != nil {
			return err
		}
		if v != w.v {
			return fmt.Errorf("%s states %d, the request %d", w.pattern, v, w.v)
		}
	}
	return nil
}

// moduleLayer maps a module path back to a layer name, by the HuggingFace naming of a
// family, written here independently of the package.
func moduleLayer(family, mod string) string {
	var n int
	switch family {
	case "llama":
		switch {
		case mod == "model.embed_tokens":
			return "embedding"
		case mod == "model.norm":
			return "final_norm"
		case mod == "lm_head":
			return "lm_head"
		}
		if _, err := fmt.Sscanf(mod, "model.layers.%d", &n); err == nil {
			switch {
			case strings.HasSuffix(mod, ".input_layernorm"):
				return fmt.Sprintf("block.%d.attention", n)
			case strings.HasSuffix(mod, ".post_attention_layernorm"):
				return fmt.Sprintf("block.%d.mlp", n)
			}
			return fmt.Sprintf("block.%d", n)
		}
	case "gpt2":
		switch {
		case mod == "transformer.wte":
			return "embedding"
		case mod == "transformer.ln_f":
			return "final_norm"
		case mod == "lm_head":
			return "lm_head"
		}
		if _, err := fmt.Sscanf(mod, "transformer.h.%d", &n); err == nil {
			switch {
			case strings.HasSuffix(mod, ".ln_1"):
				return fmt.Sprintf("block.%d.attention", n)
			case strings.HasSuffix(mod, ".ln_2"):
				return fmt.Sprintf("block.%d.mlp", n)
			}
			return fmt.Sprintf("block.%d", n)
		}
	case "":
		return mod
	}
	return "?" + mod
}

// readStageModules reads the boundaries from STAGE_MODULES's stages of one module per
// layer (a profile's): each line "    [...]," is a stage.
func readStageModules(text string) ([]int, error) {
	_, body, ok := strings.Cut(text, "\nSTAGE_MODULES = [\n")
	if !ok {
		return nil, fmt.Errorf("no STAGE_MODULES")
	}
	body, _, _ = strings.Cut(body, "\n]\n")
	b := []int{0}
	for _, line := range strings.Split(body, "\n") {
		n := len(regexp.MustCompile(`"(?:[^"\\]|\\.)*"`).FindAllString(line, -1))
		b = append(b, b[len(b)-1]+n)
	}
	return b, nil
}

// readPyTorch reads SPLIT_SPEC: each key starts a stage.
func readPyTorch(text string, layers []string, family string) ([]int, error) {
	keys := regexp.MustCompile(`(?m)^    "([^"]+)": SplitPoint\.BEGINNING,`).FindAllStringSubmatch(text, -1)
	b := []int{0}
	for _, k := range keys {
		i := slices.Index(layers, moduleLayer(family, k[1]))
		if i < 0 {
			return nil, fmt.Errorf("split point %q names no layer", k[1])
		}
		b = append(b, i)
	}
	return append(b, len(layers)), nil
}

func readList(text, pattern string) ([]int, error) {
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("no match for %s", pattern)
	}
	var out []int
	for _, f := range strings.Split(m[1], ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseLayout reads a --pipeline-model-parallel-layout string as Megatron-Core's
// PipelineParallelLayerLayout.parse_str_to_list does: commas are cosmetic, (...)*n and
// x*n repeat, '|' separates stages.
func parseLayout(s string) []string {
	s = strings.ReplaceAll(s, ",", "")
	s = regexp.MustCompile(`\(([^)]+)\)\*(\d+)`).ReplaceAllStringFunc(s, func(m string) string {
		sub := regexp.MustCompile(`\(([^)]+)\)\*(\d+)`).FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return strings.Repeat(sub[1], n)
	})
	s = regexp.MustCompile(`(.)\*(\d+)`).ReplaceAllStringFunc(s, func(m string) string {
		sub := regexp.MustCompile(`(.)\*(\d+)`).FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return strings.Repeat(sub[1], n)
	})
	return strings.Split(s, "|")
}

// readMegatron maps the layout's stages onto pipeplan's layers: E the embedding, t one
// transformer block (one layer, or its attention and MLP), L the final norm and the head.
// It also checks the older arguments the export offers for the same split.
func readMegatron(text string, layers []string) ([]int, error) {
	m := regexp.MustCompile(`--pipeline-model-parallel-layout "([^"]*)"`).FindStringSubmatch(text)
	if m == nil {
		return nil, errors.New("no layout")
	}
	stages := parseLayout(m[1])
	b := []int{0}
	l := 0
	var blocks []int
	for _, st := range stages {
		nb := 0
		for _, c := range st {
			switch c {
			case 'E':
				if layers[l] != "embedding" {
					return nil, fmt.Errorf("E at layer %s", layers[l])
				}
				l++
			case 't':
				if !strings.HasPrefix(layers[l], "block.") {
					return nil, fmt.Errorf("t at layer %s", layers[l])
				}
				blk := strings.TrimSuffix(layers[l], ".attention")
				l++
				if l < len(layers) && layers[l] == blk+".mlp" {
					l++
				}
				nb++
			case 'L':
				if layers[l] == "final_norm" {
					l++
				}
				if layers[l] != "lm_head" && layers[l] != "mlm_head" {
					return nil, fmt.Errorf("L at layer %s", layers[l])
				}
				l++
			default:
				return nil, fmt.Errorf("layer type %q", c)
			}
		}
		b = append(b, l)
		blocks = append(blocks, nb)
	}
	if l != len(layers) {
		return nil, fmt.Errorf("the layout covers %d of %d layers", l, len(layers))
	}
	pp, err := readList(text, `--pipeline-model-parallel-size (\d+)`)
	if err != nil || len(stages)%pp[0] != 0 {
		return nil, fmt.Errorf("%d stages on pipeline size %v", len(stages), pp)
	}
	total := 0
	for _, n := range blocks {
		total += n
	}
	if nl, _ := readList(text, `--num-layers (\d+)`); len(nl) != 1 || nl[0] != total {
		return nil, fmt.Errorf("--num-layers %v, the layout has %d", nl, total)
	}
	// The older arguments, when offered, must give the same block counts.
	if fl := regexp.MustCompile(`--decoder-first-pipeline-num-layers (\d+) --decoder-last-pipeline-num-layers (\d+)`).FindStringSubmatch(text); fl != nil {
		first, _ := strconv.Atoi(fl[1])
		last, _ := strconv.Atoi(fl[2])
		p := len(blocks)
		want := []int{first}
		for i := 1; i+1 < p; i++ {
			want = append(want, (total-first-last)/(p-2))
		}
		want = append(want, last)
		if !slices.Equal(want, blocks) {
			return nil, fmt.Errorf("first/last arguments give %v, the layout %v", want, blocks)
		}
	}
	if k := regexp.MustCompile(`--num-layers-per-virtual-pipeline-stage (\d+)`).FindStringSubmatch(text); k != nil {
		n, _ := strconv.Atoi(k[1])
		for _, x := range blocks {
			if x != n {
				return nil, fmt.Errorf("%d layers per virtual stage, the layout %v", n, blocks)
			}
		}
	}
	return b, nil
}

// readGraphcore reads STAGE_OF: the stage of each layer by name.
func readGraphcore(text string, layers []string) ([]int, error) {
	stageOf := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^    "([^"]+)": (\d+),$`).FindAllStringSubmatch(text, -1) {
		stageOf[m[1]], _ = strconv.Atoi(m[2])
	}
	return boundariesOf(layers, func(l int) (int, bool) { s, ok := stageOf[layers[l]]; return s, ok })
}

// boundariesOf turns a stage per layer into boundaries, checking the stages run 0, 1, ...
func boundariesOf(layers []string, stage func(l int) (int, bool)) ([]int, error) {
	b := []int{0}
	for l := range layers {
		s, ok := stage(l)
		if !ok {
			return nil, fmt.Errorf("layer %s has no stage", layers[l])
		}
		switch s {
		case len(b) - 1:
		case len(b):
			b = append(b, l)
		default:
			return nil, fmt.Errorf("layer %d (%s) is on stage %d after stage %d", l, layers[l], s, len(b)-1)
		}
	}
	return append(b, len(layers)), nil
}

// python returns a python3, or skips (fails under CI).
func python(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no subprocesses under WebAssembly")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	return py
}

// TestSnippetsCompile compiles every Python export with py_compile and checks the shell
// export's syntax with bash -n.
func TestSnippetsCompile(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var pys []string
	for i, m := range makeAll(t) {
		path := filepath.Join(dir, fmt.Sprintf("s%d_%s", i, m.ex.Filename))
		if err := os.WriteFile(path, []byte(m.ex.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		switch m.ex.Language {
		case "python":
			pys = append(pys, path)
		case "shell":
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s %s: bash -n: %v\n%s", m.c.name, m.ex.Format, err, out)
			}
		}
	}
	if out, err := exec.Command(py, append([]string{"-m", "py_compile"}, pys...)...).CombinedOutput(); err != nil {
		t.Errorf("py_compile: %v\n%s", err, out)
	}
}

// TestSnippetsRun runs the Python exports against stand-ins for the frameworks
// (testdata/readback.py) and checks the split each makes on every rank.
func TestSnippetsRun(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	type job struct {
		Format string   `json:"format"`
		Path   string   `json:"path"`
		Layers []string `json:"layers"`
		Ranks  int      `json:"ranks"` // pipeline ranks
		World  int      `json:"world"` // all ranks: pipeline x data x tensor
	}
	var jobs []job
	var runs []made
	for i, m := range makeAll(t) {
		if m.ex.Language != "python" {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.py", i))
		if err := os.WriteFile(path, []byte(m.ex.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		ranks := len(m.ex.Boundaries) - 1
		if m.ex.Format == wire.PyTorch {
			s, _ := schedule.Parse(m.ex.Schedule)
			ranks = s.Devices(ranks)
		}
		world := ranks * max(m.in.Data, 1) * max(m.in.Tensor, 1)
		jobs = append(jobs, job{string(m.ex.Format), path, m.in.LayerNames, ranks, world})
		runs = append(runs, m)
	}
	manifest, _ := json.Marshal(jobs)
	mf := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(mf, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/readback.py", mf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("readback.py: %v\n%s", err, stderr.String())
	}
	var results []struct {
		SplitSpec    map[string]string `json:"split_spec"`
		Schedule     string            `json:"schedule"`
		Microbatches int               `json:"n_microbatches"`
		HasLoss      bool              `json:"has_loss"`
		Ranks        [][]int           `json:"ranks"`
		StageModules [][]string        `json:"stage_modules"`
		Parts        []int             `json:"parts"`
		LayerNames   []string          `json:"layer_names"`
		Config       map[string]int    `json:"config"`
		Stages       []int             `json:"stages"`
		Options      map[string]any    `json:"options"`
		CutTensors   [][]any           `json:"cut_tensors"`
		Forward      []int             `json:"forward"`
		Backward     []int             `json:"backward"`
		// Sizes are the snippet's pipeline, data and tensor sizes; Topology DeepSpeed's
		// axes; Mesh PyTorch's device mesh.
		Sizes    []int          `json:"sizes"`
		Topology map[string]int `json:"topology"`
		Mesh     *struct {
			Shape []int    `json:"shape"`
			Names []string `json:"names"`
		} `json:"mesh"`
		// DTypes: a PyTorch snippet's PARAM_DTYPE and AUTOCAST_DTYPE, as torch names;
		// Precision: a DeepSpeed config's "bf16", "fp16" and "data_types" entries.
		DTypes    map[string]string `json:"dtypes"`
		Precision map[string]any    `json:"precision"`
		// Tensor: every rank of a tensor-parallel PyTorch snippet.
		Tensor []struct {
			Rank       int   `json:"rank"`
			PP         int   `json:"pp"`
			Stages     []int `json:"stages"`
			PPGroup    []int `json:"pp_group"`
			TPGroup    []int `json:"tp_group"`
			ShardedTP  bool  `json:"sharded_on_tp"`
			StagedOnPP bool  `json:"staged_on_pp"`
		} `json:"tensor"`
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		m := runs[i]
		name := m.c.name + " " + string(m.ex.Format)
		b := m.ex.Boundaries
		s, _ := schedule.Parse(m.ex.Schedule)
		s.Microbatches = m.in.Schedule.Microbatches
		p := s.Devices(len(b) - 1)
		d, tp := max(m.in.Data, 1), max(m.in.Tensor, 1)
		if m.ex.Format != wire.Graphcore {
			wantSizes := []int{p, d, tp}
			if m.ex.Format == wire.DeepSpeed {
				wantSizes[0] = len(b) - 1
			}
			if !slices.Equal(r.Sizes, wantSizes) {
				t.Errorf("%s: the snippet states pipeline, data, tensor %v; the plan %v", name, r.Sizes, wantSizes)
			}
		}
		switch m.ex.Format {
		case wire.PyTorch:
			checkMesh(t, name, r.Mesh, p, d, tp)
			for _, x := range r.Tensor {
				if !x.ShardedTP || !x.StagedOnPP || len(x.PPGroup) != p || len(x.TPGroup) != tp ||
					x.TPGroup[tp-1]-x.TPGroup[0] != tp-1 || !slices.Contains(x.TPGroup, x.Rank) || !slices.Contains(x.PPGroup, x.Rank) {
					t.Errorf("%s: rank %d: sharded on tp %v, staged on pp %v, pipeline group %v, tensor group %v",
						name, x.Rank, x.ShardedTP, x.StagedOnPP, x.PPGroup, x.TPGroup)
				}
				for _, st := range x.Stages {
					if st%p != x.PP {
						t.Errorf("%s: rank %d (pipeline rank %d) runs stage %d", name, x.Rank, x.PP, st)
					}
				}
			}
			if tp > 1 && len(r.Tensor) != p*d*tp {
				t.Errorf("%s: %d ranks built tensor-parallel stages, want %d", name, len(r.Tensor), p*d*tp)
			}
			if len(r.StageModules) != len(b)-1 {
				t.Errorf("%s: %d stages of modules, want %d", name, len(r.StageModules), len(b)-1)
			}
			for k, mods := range r.StageModules {
				if got := moduleLayer(m.c.family, mods[0]); k+1 < len(b) && got != m.in.LayerNames[b[k]] {
					t.Errorf("%s: stage %d's modules start at %s (%s), want layer %s", name, k, mods[0], got, m.in.LayerNames[b[k]])
				}
			}
			if m.in.LayerOrder != nil {
				// A graph split: no split points; the tensors of every cut, as planned.
				var want [][]any
				for _, cut := range m.in.CutTensors {
					row := []any{}
					for _, ct := range cut {
						row = append(row, []any{ct.ID, float64(ct.Bytes)})
					}
					want = append(want, row)
				}
				if got, w := fmt.Sprint(r.CutTensors), fmt.Sprint(want); len(r.SplitSpec) != 0 || got != w || len(m.in.CutTensors) != len(b)-2 {
					t.Errorf("%s: split points %v, cut tensors %s; want none, %s", name, r.SplitSpec, got, w)
				}
			} else {
				for k, mods := range r.StageModules[1:] {
					if r.SplitSpec[mods[0]] != "BEGINNING" {
						t.Errorf("%s: stage %d starts at %s, which split_spec %v does not split before", name, k+1, mods[0], r.SplitSpec)
					}
				}
				if len(r.SplitSpec) != len(b)-2 {
					t.Errorf("%s: %d split points for %d stages", name, len(r.SplitSpec), len(b)-1)
				}
			}
			for rank, stages := range r.Ranks {
				for _, st := range stages {
					if st%p != rank {
						t.Errorf("%s: rank %d runs stage %d; pipeplan runs it on device %d", name, rank, st, st%p)
					}
				}
			}
			if want := torchPrecision(m.in); !maps.Equal(r.DTypes, want) {
				t.Errorf("%s: the snippet's dtypes %v, want %v (dtype %q, precision %q)", name, r.DTypes, want, m.in.DType, m.in.Precision)
			}
			if r.Microbatches != s.Microbatches || r.HasLoss != s.Training() {
				t.Errorf("%s: %d microbatches, loss %v; want %d, %v", name, r.Microbatches, r.HasLoss, s.Microbatches, s.Training())
			}
		case wire.DeepSpeed:
			if got, want := fmt.Sprint(r.Precision), deepspeedPrecision(m.in); got != want {
				t.Errorf("%s: the config's precision %s, want %s (dtype %q, precision %q)", name, got, want, m.in.DType, m.in.Precision)
			}
			if !slices.Equal(r.Parts, b) || !slices.Equal(r.LayerNames, m.in.LayerNames) {
				t.Errorf("%s: parts %v over %d layer names, want %v", name, r.Parts, len(r.LayerNames), b)
			}
			if len(r.Ranks) != (len(b)-1)*d*tp {
				t.Errorf("%s: %d ranks built the module, want %d", name, len(r.Ranks), (len(b)-1)*d*tp)
			}
			for rank, pb := range r.Ranks {
				stage := rank / (d * tp) // the pipe axis is the outermost
				if pb[0] != stage || pb[1] != b[stage] || pb[2] != b[stage+1] {
					t.Errorf("%s: rank %d is stage %d and builds layers [%d, %d); want stage %d, [%d, %d)", name, rank, pb[0], pb[1], pb[2], stage, b[stage], b[stage+1])
				}
			}
			want := map[string]int{"pipe": len(b) - 1, "data": d}
			if tp > 1 {
				want["model"] = tp
			}
			if !maps.Equal(r.Topology, want) {
				t.Errorf("%s: topology %v, want %v", name, r.Topology, want)
			}
			if r.Config["gradient_accumulation_steps"] != s.Microbatches {
				t.Errorf("%s: config %v", name, r.Config)
			}
		case wire.Graphcore:
			got, err := boundariesOf(m.in.LayerNames, func(l int) (int, bool) { return r.Stages[l], true })
			if err != nil || !slices.Equal(got, b) {
				t.Errorf("%s: Keras stages %v give %v (%v), want %v", name, r.Stages, got, err, b)
			}
			for l := range m.in.LayerNames {
				d := r.Stages[l] % p
				if r.Forward[l] != d || r.Backward[l] != 2*p-2-d {
					t.Errorf("%s: layer %d on IPU %d runs forward in stage %d, backward in %d", name, l, d, r.Forward[l], r.Backward[l])
				}
			}
			if int(r.Options["gradient_accumulation_steps_per_replica"].(float64)) != s.Microbatches {
				t.Errorf("%s: options %v", name, r.Options)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	in := fromRequest(t, exampleRequest(4, "1f1b", 8))
	if _, err := export.Make(in, wire.Megatron); err == nil || !strings.Contains(err.Error(), "needs a transformer architecture") {
		t.Errorf("megatron of a profile: %v", err)
	}
	if _, err := export.Make(in, "tensorflow"); err == nil || !strings.Contains(err.Error(), `unknown export format "tensorflow"`) {
		t.Errorf("unknown format: %v", err)
	}
	bad := *in
	bad.Boundaries = []int{0, 5, 5, 20, 26}
	_, err := export.Make(&bad, wire.PyTorch)
	if fes, ok := model.AsFieldErrors(err); !ok || fes[0].Path != "boundaries[2]" {
		t.Errorf("bad boundaries: %v", err)
	}
	// Without a Coster, an interleaved plan has no one-stage-per-device split to offer
	// DeepSpeed.
	il := archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: "interleaved:2", m: 16, batch: 1, seq: 4096}.input(t)
	il.Coster = nil
	if _, err := export.Make(il, wire.DeepSpeed); err == nil || !strings.Contains(err.Error(), "no split to offer") {
		t.Errorf("interleaved to deepspeed without a coster: %v", err)
	}
	if ex, err := export.Make(il, wire.Megatron); err != nil || !ex.Exact || ex.Planned != nil {
		t.Errorf("interleaved to megatron without a coster: %v, %+v", err, ex)
	}
	// Graphcore places whole layers on IPUs: a tensor-parallel plan is refused, not
	// written without its tensor parallelism.
	tp := archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: "1f1b", m: 16, batch: 1, seq: 4096, tp: 2}.input(t)
	if _, err := export.Make(tp, wire.Graphcore); err == nil || !strings.Contains(err.Error(), "tensor parallelism") {
		t.Errorf("tensor-parallel plan to graphcore: %v", err)
	}
	// Precision names become flags: names the request does not know are refused.
	// Each fp8 flag is named by its own field.
	for _, c := range []struct {
		dtype, precision, recipe, path string
		paramGather, fsdpGather        bool
	}{
		{"bf16; rm -rf /", "mixed", "", "dtype", false, false}, {"bf16", "mixed\n--fp16", "", "precision", false, false},
		{"fp8", "mixed", "tensorwise", "fp8_recipe", false, false}, {"bf16", "mixed", "current", "fp8_recipe", false, false},
		{"bf16", "mixed", "", "fp8_param_gather", true, false}, {"bf16", "mixed", "", "fp8_fsdp_all_gather", false, true},
		{"fp8", "mixed", "current", "fp8_fsdp_all_gather", true, true},
	} {
		bad := *tp
		bad.DType, bad.Precision, bad.FP8Recipe = c.dtype, c.precision, c.recipe
		bad.FP8ParamGather, bad.FP8FSDPAllGather = c.paramGather, c.fsdpGather
		_, err := export.Make(&bad, wire.Megatron)
		if fes, ok := model.AsFieldErrors(err); !ok || fes[0].Path != c.path {
			t.Errorf("dtype %q, precision %q, recipe %q: %v, want an error at %s", c.dtype, c.precision, c.recipe, err, c.path)
		}
	}
	// Sequence parallelism needs tensor parallelism, as the request says.
	sp := *tp
	sp.Tensor, sp.SequenceParallel = 1, true
	_, err = export.Make(&sp, wire.Megatron)
	if fes, ok := model.AsFieldErrors(err); !ok || fes[0].Path != "sequence_parallel" {
		t.Errorf("sequence parallel without tensor parallel: %v", err)
	}
}

// TestFromRequestParallelism: the export's parallelism is the normalized request's, and
// the plan it prices is costed with it.
func TestFromRequestParallelism(t *testing.T) {
	base := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: 2, sched: "1f1b", m: 8, batch: 1, seq: 2048}
	one := base.input(t)
	base.tp, base.sp, base.dp = 2, true, 2
	in := base.input(t)
	if in.Tensor != 2 || !in.SequenceParallel || in.Data != 2 || one.Tensor != 1 || one.SequenceParallel || one.Data != 1 {
		t.Fatalf("tensor %d, sequence parallel %v, data %d; without: %d, %v, %d", in.Tensor, in.SequenceParallel, in.Data, one.Tensor, one.SequenceParallel, one.Data)
	}
	// Half of every block on each of 2 devices: the stage takes less time and memory.
	if a, b := in.Plan.Stages[0], one.Plan.Stages[0]; !(a.ComputeSeconds < b.ComputeSeconds) || !(a.MemoryBytes < b.MemoryBytes) {
		t.Errorf("stage 0 with tensor parallel 2: %v s, %d bytes; without: %v s, %d bytes", a.ComputeSeconds, a.MemoryBytes, b.ComputeSeconds, b.MemoryBytes)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range wire.Formats {
		if g, err := export.ParseFormat(" " + strings.ToUpper(string(f))); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, g, err)
		}
	}
}

// The plan document embeds the planner's plan when it has one.
func TestDocumentEmbedsPlan(t *testing.T) {
	in := fromRequest(t, cases[0].request())
	ex, err := export.Make(in, wire.JSON)
	if err != nil {
		t.Fatal(err)
	}
	d, err := export.ReadDocument([]byte(ex.Text))
	if err != nil {
		t.Fatal(err)
	}
	if d.Plan == nil || !slices.Equal(d.Plan.Boundaries, in.Boundaries) || d.Cost == nil || d.Schedule.Name != "1f1b" ||
		d.Parallelism != (export.DocParallelism{Pipeline: 4, Data: 2, Tensor: 2}) || d.Model.Modules[1] != "model.layers.0" {
		t.Errorf("document: %+v", d)
	}
	for _, bad := range []string{`{"format": "x", "version": 1}`, `{"format": "pipeplan.plan", "version": 2}`, `{"format": "pipeplan.plan", "version": 1, "extra": 1}`} {
		if _, err := export.ReadDocument([]byte(bad)); err == nil {
			t.Errorf("ReadDocument(%s) accepted it", bad)
		}
	}
}

// checkMesh checks a PyTorch snippet's device mesh: ("pp", "dp", "tp") without the
// dimensions of size 1, and none when both are 1.
func checkMesh(t *testing.T, name string, mesh *struct {
	Shape []int    `json:"shape"`
	Names []string `json:"names"`
}, p, d, tp int) {
	t.Helper()
	if d*tp == 1 {
		if mesh != nil {
			t.Errorf("%s: a device mesh %v without data or tensor parallelism", name, *mesh)
		}
		return
	}
	shape, names := []int{p}, []string{"pp"}
	if d > 1 {
		shape, names = append(shape, d), append(names, "dp")
	}
	if tp > 1 {
		shape, names = append(shape, tp), append(names, "tp")
	}
	if mesh == nil || !slices.Equal(mesh.Shape, shape) || !slices.Equal(mesh.Names, names) {
		t.Errorf("%s: device mesh %+v, want %v %v", name, mesh, names, shape)
	}
}

// TestExpertNotes: PyTorch and DeepSpeed do not set up expert parallelism: their exports
// of a plan with it are not exact and say so.
func TestExpertNotes(t *testing.T) {
	r := archCase{arch: "mixtral-8x7b-v0.1", device: "h100-sxm", devices: 4, sched: "1f1b", m: 8, batch: 1, seq: 2048, dp: 4}.request()
	r.Cluster.DevicesPerNode = 8
	r.Parallelism.Expert = 4
	in := fromRequest(t, r)
	for _, f := range []wire.Format{wire.PyTorch, wire.DeepSpeed} {
		ex, err := export.Make(in, f)
		if err != nil {
			t.Fatal(err)
		}
		var said bool
		for _, n := range ex.Notes {
			said = said || (n.Code == wire.NoteParallelism && strings.Contains(n.Message, "expert parallelism"))
		}
		if ex.Exact || !said {
			t.Errorf("%s: exact %v, notes %v; want not exact, saying expert parallelism is not set up", f, ex.Exact, ex.Notes)
		}
	}
}

// torchPrecision is the dtypes a PyTorch export's snippet must state for the planned
// precision: the 16-bit type of the passes (bf16 for fp8's other layers), fp32 parameters
// with an autocast type for amp, nothing for a profile.
func torchPrecision(in *export.Input) map[string]string {
	half := map[string]string{"bf16": "bfloat16", "fp8": "bfloat16", "fp16": "float16", "fp32": "float32"}[in.DType]
	switch {
	case in.DType == "":
		return map[string]string{}
	case in.Precision == "amp":
		return map[string]string{"PARAM_DTYPE": "float32", "AUTOCAST_DTYPE": half}
	}
	return map[string]string{"PARAM_DTYPE": half}
}

// deepspeedPrecision is the precision entries a DeepSpeed config must hold, as
// fmt.Sprint writes the decoded JSON: the 16-bit type enabled, and for bf16 training the
// gradient accumulation type priced (BF16_Optimizer accumulates in fp32 by default).
func deepspeedPrecision(in *export.Input) string {
	want := map[string]any{}
	switch in.DType {
	case "bf16", "fp8":
		want["bf16"] = map[string]any{"enabled": true}
		switch in.Precision {
		case "mixed":
			want["data_types"] = map[string]any{"grad_accum_dtype": "bf16"}
		case "mixed-fp32-grads", "deepspeed-bf16":
			want["data_types"] = map[string]any{"grad_accum_dtype": "fp32"}
		}
	case "fp16":
		want["fp16"] = map[string]any{"enabled": true}
	}
	return fmt.Sprint(want)
}

// TestPyTorchGlobalRecompute: the PyTorch export carries global recomputation. Under
// full every layer's module is wrapped in a checkpoint wrapper (RECOMPUTE names each
// "full" and build applies it); a profile's full keeps only each stage's input, which
// per-module wrappers do not, and under selective a wrapper cannot reach the attention
// core alone (nothing is wrapped, a comment says so): both are not exact and a recompute
// note says why. Without recomputation nothing is wrapped.
func TestPyTorchGlobalRecompute(t *testing.T) {
	seen := map[string]int{}
	for _, m := range makeAll(t) {
		if m.ex.Format != wire.PyTorch || m.in.Recompute == "auto" {
			continue
		}
		name := m.c.name
		rec := m.in.Recompute
		seen[rec]++
		full := strings.Count(m.ex.Text, `: "full",  # stage`)
		att := strings.Count(m.ex.Text, `: "attention",  # stage`)
		applied := strings.Contains(m.ex.Text, "model = apply_recompute(model)") || strings.Contains(m.ex.Text, "RECOMPUTE = {")
		var noted bool
		for _, n := range m.ex.Notes {
			noted = noted || n.Code == wire.NoteRecompute
		}
		n := len(m.in.LayerNames)
		switch rec {
		case "full":
			if full != n || att != 0 || !applied {
				t.Errorf("%s: full wraps %d modules (attention %d, applied %v), want all %d", name, full, att, applied, n)
			}
			if profile := m.c.family == ""; profile && (m.ex.Exact || !noted) {
				t.Errorf("%s: a profile's full (whole stages) exports exact %v, noted %v: want not exact, with a note", name, m.ex.Exact, noted)
			}
		case "selective":
			if applied || full+att > 0 || m.ex.Exact || !noted || !strings.Contains(m.ex.Text, "# Selective recomputation as planned (each block's attention core) is not expressed") {
				t.Errorf("%s: selective wraps %d modules (attention %d, applied %v), exact %v, noted %v: want none, not exact, a note and a comment", name, full, att, applied, m.ex.Exact, noted)
			}
		default:
			if applied || full+att > 0 || noted {
				t.Errorf("%s: recompute %q, yet the export recomputes (%d full, %d attention)", name, rec, full, att)
			}
		}
	}
	if seen["full"] == 0 || seen["selective"] == 0 || seen["none"] == 0 {
		t.Fatalf("cases by recomputation %v: want none, selective and full", seen)
	}
}

// TestPyTorchAutoWholeStage: where recompute auto recomputes a profile's stage whole from
// its input (VGG-16 on tight memory), the PyTorch export wraps the stage's modules and says that
// the wrappers keep each module's input, more than planned: not exact.
func TestPyTorchAutoWholeStage(t *testing.T) {
	// PipeDream's VGG-16 (core/load's copy of ../shared/data/pipedream's) on 40 GB A100s.
	text, err := os.ReadFile("../load/testdata/pipedream/vgg16.graph.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, prop := range []float64{0.1, 0.15, 0.2, 0.3} {
		r := exampleRequest(4, "1f1b", 16)
		r.Model = wire.ModelSpec{Document: doc}
		r.Cluster.Device = "a100-40gb"
		r.Training.Recompute, r.MemoryProportion = "auto", prop
		in, res, err := export.FromRequest(context.Background(), r)
		if err != nil || !res.Feasible {
			continue
		}
		var whole []int
		for i, s := range res.Plan.Stages {
			if s.Recompute != nil && s.Recompute.WholeStage {
				whole = append(whole, i)
			}
		}
		if len(whole) == 0 {
			continue
		}
		ex, err := export.Make(in, wire.PyTorch)
		if err != nil {
			t.Fatal(err)
		}
		noted := false
		for _, n := range ex.Notes {
			noted = noted || n.Code == wire.NoteRecompute && strings.Contains(n.Message, "keep each module's input")
		}
		if ex.Exact || !noted || !strings.Contains(ex.Text, "model = apply_recompute(model)") {
			t.Fatalf("proportion %g, whole stages %v: exact %v, noted %v, notes %v", prop, whole, ex.Exact, noted, ex.Notes)
		}
		t.Logf("proportion %g: stages %v recompute whole", prop, whole)
		return
	}
	t.Fatal("no memory proportion makes auto recompute a whole stage: the test tests nothing")
}

// TestMegatronDispatcherFlags: the Megatron-LM export names the request's token
// dispatcher: nothing for alltoall (Megatron-Core's default), the flex dispatcher with
// DeepEP (--moe-enable-deepep) for deepep, the flex dispatcher with its HybridEP backend
// (--moe-flex-dispatcher-backend hybridep) for hybridep, and deepep-fp8 as deepep with a
// comment saying Megatron-Core dispatches 16 bits.
func TestMegatronDispatcherFlags(t *testing.T) {
	for _, tt := range []struct {
		dispatcher, want, not string
	}{
		{"alltoall", "", "--moe-token-dispatcher-type"},
		{"deepep", "--moe-token-dispatcher-type flex --moe-enable-deepep", "hybridep"},
		{"hybridep", "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep", "--moe-enable-deepep"},
		{"deepep-fp8", "--moe-token-dispatcher-type flex --moe-enable-deepep  # priced with fp8 dispatch, which Megatron-Core does not run", "hybridep"},
	} {
		r := archCase{arch: "mixtral-8x7b-v0.1", device: "h100-sxm", devices: 4, sched: "1f1b", m: 8, batch: 1, seq: 2048, dp: 4}.request()
		r.Cluster.DevicesPerNode = 8
		r.Parallelism.Expert = 4
		r.Parallelism.ExpertDispatcher = tt.dispatcher
		ex, err := export.Make(fromRequest(t, r), wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ex.Text, tt.want) || strings.Contains(ex.Text, tt.not) {
			t.Errorf("%s: want %q and no %q in:\n%s", tt.dispatcher, tt.want, tt.not, ex.Text)
		}
	}
}

// TestMegatronAuxLossFlags: the Megatron-LM export runs the request's load-balancing
// loss (training.moe_aux_loss) as Megatron-LM's --moe-router-load-balancing-type with a
// coefficient above 0 (its default, 0, computes none) and the fused router the plan
// priced; nothing without one; another export notes that its loop does not run it.
func TestMegatronAuxLossFlags(t *testing.T) {
	for _, tt := range []struct {
		loss string
		want []string
	}{
		{"", nil},
		{"aux_loss", []string{"--moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3", "--moe-router-fusion"}},
		{"seq_aux_loss", []string{"--moe-router-load-balancing-type seq_aux_loss --moe-aux-loss-coeff 1e-4", "--moe-router-fusion"}},
	} {
		r := archCase{arch: "mixtral-8x7b-v0.1", device: "h100-sxm", devices: 4, sched: "1f1b", m: 8, batch: 1, seq: 2048, dp: 4}.request()
		r.Cluster.DevicesPerNode = 8
		r.Parallelism.Expert = 4
		r.Model.Architecture.Framework = "megatron"
		r.Training.MoEAuxLoss = tt.loss
		in := fromRequest(t, r)
		ex, err := export.Make(in, wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(ex.Text, w) {
				t.Errorf("%q: want %q in:\n%s", tt.loss, w, ex.Text)
			}
		}
		if tt.loss == "" && strings.Contains(ex.Text, "--moe-router-load-balancing-type") {
			t.Errorf("no loss: the export names one:\n%s", ex.Text)
		}
		pt, err := export.Make(in, wire.PyTorch)
		if err != nil {
			t.Fatal(err)
		}
		noted := false
		for _, n := range pt.Notes {
			noted = noted || n.Code == wire.NoteTrainingLoop && strings.Contains(n.Message, "moe_aux_loss")
		}
		if noted != (tt.loss != "") {
			t.Errorf("%q: the PyTorch export notes the loss %v, want %v: %+v", tt.loss, noted, tt.loss != "", pt.Notes)
		}
	}
}

// TestInterleavedOrders: PyTorch's ScheduleInterleaved1F1B and Megatron-LM's interleaved
// 1F1B order a device's operations alike except with as many microbatches as ranks,
// where Megatron-LM runs every forward first and PyTorch warms up (v-1)p + 2(p-1-rank)
// (core/schedule's interleaved-pytorch:V). Each framework's export of the other's order
// says it is not exact there and runs its own; with more microbatches both are exact.
func TestInterleavedOrders(t *testing.T) {
	cases := []struct {
		sched  string
		m      int
		format wire.Format
		exact  bool
		runs   string
	}{
		{"interleaved-pytorch:2", 4, wire.PyTorch, true, "interleaved-pytorch:2"},
		{"interleaved-pytorch:2", 4, wire.Megatron, false, "interleaved:2"},
		{"interleaved:2", 4, wire.PyTorch, false, "interleaved-pytorch:2"},
		{"interleaved:2", 4, wire.Megatron, true, "interleaved:2"},
		{"interleaved-pytorch:2", 8, wire.PyTorch, true, "interleaved-pytorch:2"},
		{"interleaved-pytorch:2", 8, wire.Megatron, true, "interleaved-pytorch:2"},
		{"interleaved:2", 8, wire.PyTorch, true, "interleaved:2"},
	}
	for _, c := range cases {
		in := archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: c.sched, m: c.m, batch: 1, seq: 4096}.input(t)
		ex, err := export.Make(in, c.format)
		if err != nil {
			t.Fatalf("%s m=%d to %s: %v", c.sched, c.m, c.format, err)
		}
		if ex.Exact != c.exact || ex.Schedule != c.runs {
			t.Errorf("%s m=%d to %s: exact %v running %s, want %v running %s", c.sched, c.m, c.format, ex.Exact, ex.Schedule, c.exact, c.runs)
		}
		if c.format == wire.PyTorch && !strings.Contains(ex.Text, "ScheduleInterleaved1F1B") {
			t.Errorf("%s m=%d to pytorch: no ScheduleInterleaved1F1B", c.sched, c.m)
		}
		if !c.exact {
			// The other order is priced on the plan's own split.
			if ex.Expressed == nil || ex.Planned == nil || !slices.Equal(ex.Expressed.Boundaries, ex.Planned.Boundaries) {
				t.Errorf("%s m=%d to %s: expressed %+v, planned %+v: want the plan's split priced", c.sched, c.m, c.format, ex.Expressed, ex.Planned)
			}
			noted := false
			for _, n := range ex.Notes {
				noted = noted || n.Code == wire.NoteSchedule && strings.Contains(n.Message, "as many microbatches as ranks")
			}
			if !noted {
				t.Errorf("%s m=%d to %s: notes %+v say nothing of the warm-up", c.sched, c.m, c.format, ex.Notes)
			}
		}
	}
}

// TestTrainingLoopNotes: a plan priced with training metrics (training.train_metrics) or
// with framework deepspeed's blocking pipeline transfers says, in every code export that
// does not run them so, what its loop runs instead, and is not exact; the plan JSON
// states the plan as it is, and the DeepSpeed export runs the blocking transfers it was
// priced with, and says, where the plan priced its transfers beside compute on two or
// more stages, that DeepSpeed's engine blocks on them; in inference too (DeepSpeed's
// InferenceSchedule blocks as its TrainSchedule does).
func TestTrainingLoopNotes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		metrics   int
		framework string
		stages    int
		inference bool
		noted     map[wire.Format]bool
	}{
		{"plain", 0, "", 4, false, map[wire.Format]bool{wire.PyTorch: false, wire.DeepSpeed: true, wire.Megatron: false, wire.JSON: false}},
		{"plain one stage", 0, "", 1, false, map[wire.Format]bool{wire.PyTorch: false, wire.DeepSpeed: false, wire.Megatron: false, wire.JSON: false}},
		{"train metrics", 2, "", 4, false, map[wire.Format]bool{wire.PyTorch: true, wire.DeepSpeed: true, wire.Megatron: true, wire.JSON: false}},
		// parallelism.dp_bucket_bytes over two replicas: no export's framework cuts the
		// recipe's buckets on every stage.
		{"dp buckets", 0, "", 4, false, map[wire.Format]bool{wire.PyTorch: true, wire.DeepSpeed: true, wire.Megatron: true, wire.JSON: false}},
		{"deepspeed mode", 0, "deepspeed", 4, false, map[wire.Format]bool{wire.PyTorch: true, wire.DeepSpeed: false, wire.Megatron: true, wire.JSON: false}},
		// DeepSpeed's InferenceSchedule blocks on its transfers as TrainSchedule does.
		{"inference", 0, "", 4, true, map[wire.Format]bool{wire.PyTorch: false, wire.DeepSpeed: true, wire.JSON: false}},
		{"inference deepspeed mode", 0, "deepspeed", 4, true, map[wire.Format]bool{wire.PyTorch: true, wire.DeepSpeed: false, wire.JSON: false}},
	} {
		// one stage holds the model over 4 tensor-parallel devices
		r := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: tt.stages, tp: 4 / tt.stages, sched: "1f1b", m: 8, batch: 1, seq: 2048}.request()
		r.Training.TrainMetrics = tt.metrics
		if tt.name == "dp buckets" {
			r.Parallelism.DPBucketBytes = 50 << 20 // NeMo's distributed_fused_adam bucket_cap_mb 50
			r.Parallelism.Data = 2
		}
		r.Model.Architecture.Framework = tt.framework
		if tt.inference {
			r.Training.Mode, r.Schedule.Name = wire.ModeInference, ""
		}
		in := fromRequest(t, r)
		for f, want := range tt.noted {
			ex, err := export.Make(in, f)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.name, f, err)
			}
			if got := hasNote(ex, wire.NoteTrainingLoop); got != want {
				t.Errorf("%s %s: training-loop note %v, want %v (notes %v)", tt.name, f, got, want, ex.Notes)
			}
			if want && ex.Exact {
				t.Errorf("%s %s: exact, though its loop runs otherwise than priced", tt.name, f)
			}
		}
	}
}

// TestPyTorchContextRotateMethod: the PyTorch export's context-parallel note names the
// rotate method of PyTorch's context_parallel that runs the planned exchange: its
// default, allgather, for context_method all-gather, and alltoall (keys and values
// passed around the ring) for ring.
func TestPyTorchContextRotateMethod(t *testing.T) {
	for _, tt := range []struct{ method, want, not string }{
		{"all-gather", "default rotate method, allgather", `set_rotate_method("alltoall")`},
		{"ring", `set_rotate_method("alltoall")`, "allgather"},
	} {
		r := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: 2, sched: "1f1b", m: 4, batch: 1, seq: 4096}.request()
		r.Parallelism.Context, r.Parallelism.ContextMethod = 2, tt.method
		ex, err := export.Make(fromRequest(t, r), wire.PyTorch)
		if err != nil {
			t.Fatal(err)
		}
		var msg string
		for _, n := range ex.Notes {
			if n.Code == wire.NoteParallelism && strings.Contains(n.Message, "context_parallel") {
				msg = n.Message
			}
		}
		if !strings.Contains(msg, tt.want) || strings.Contains(msg, tt.not) {
			t.Errorf("%s: the context-parallel note %q, want %q and no %q", tt.method, msg, tt.want, tt.not)
		}
	}
}

// TestMegatronForceBalanceFlag: training.moe_force_load_balancing exports to Megatron-LM
// as --moe-router-force-load-balancing (the router's random logits the plan priced);
// another export's model code routes by its learned router, which a training-loop note
// says; without the field, neither.
func TestMegatronForceBalanceFlag(t *testing.T) {
	for _, force := range []bool{false, true} {
		r := archCase{arch: "mixtral-8x7b-v0.1", device: "h100-sxm", devices: 4, sched: "1f1b", m: 8, batch: 1, seq: 2048, dp: 4}.request()
		r.Cluster.DevicesPerNode = 8
		r.Parallelism.Expert = 4
		r.Model.Architecture.Framework = "megatron"
		r.Training.MoEForceLoadBalancing = force
		in := fromRequest(t, r)
		ex, err := export.Make(in, wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(ex.Text, "--moe-router-force-load-balancing"); got != force {
			t.Errorf("force %v: the Megatron-LM export names the flag %v:\n%s", force, got, ex.Text)
		}
		pt, err := export.Make(in, wire.PyTorch)
		if err != nil {
			t.Fatal(err)
		}
		noted := false
		for _, n := range pt.Notes {
			noted = noted || n.Code == wire.NoteTrainingLoop && strings.Contains(n.Message, "moe_force_load_balancing")
		}
		if noted != force {
			t.Errorf("force %v: the PyTorch export notes forced balancing %v: %+v", force, noted, pt.Notes)
		}
	}
}
