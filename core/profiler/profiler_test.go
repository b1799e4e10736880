package profiler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/profiler"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// torchPython is Debian's interpreter, the one python3-torch installs torch for (the
// python3 first on PATH may be another).
const torchPython = "/usr/bin/python3"

// needPython skips where no process can be started (js/wasm).
func needPython(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no subprocesses under WebAssembly")
	}
}

// needTorch returns the interpreter that has torch, or skips (fails under CI, where
// .ci/run installs python3-torch).
func needTorch(t *testing.T) string {
	t.Helper()
	needPython(t)
	err := exec.Command(torchPython, "-c", "import torch").Run()
	if err == nil {
		return torchPython
	}
	msg := fmt.Sprintf("%s cannot import torch (%v): apt-get install -y python3-torch", torchPython, err)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func TestScriptCompiles(t *testing.T) {
	needPython(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, profiler.FileName)
	if err := os.WriteFile(path, []byte(profiler.Script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
}

// profiles runs the embedded script once per argument list in one interpreter (importing
// torch once) in a directory holding testdata/tinynets.py, and returns each profile's JSON.
func profiles(t *testing.T, argvs ...[]string) [][]byte {
	t.Helper()
	py := needTorch(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, profiler.FileName), []byte(profiler.Script), 0o644); err != nil {
		t.Fatal(err)
	}
	nets, err := os.ReadFile("testdata/tinynets.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tinynets.py"), nets, 0o644); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for i := range argvs {
		out := filepath.Join(dir, fmt.Sprintf("profile%d.json", i))
		argvs[i] = append(argvs[i], "-o", out)
		outs = append(outs, out)
	}
	argsJSON, _ := json.Marshal(argvs)
	driver := "import json, sys, torch\ntorch.set_num_threads(1)\nimport pipeplan_profile as p\nfor a in json.loads(sys.argv[1]):\n    p.main(a)\n"
	cmd := exec.Command(py, "-c", driver, string(argsJSON))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("profiler: %v\n%s", err, stderr.String())
	}
	t.Logf("profiler's messages:\n%s", stderr.String())
	var docs [][]byte
	for _, out := range outs {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, data)
	}
	return docs
}

// loadProfile loads a profile as pipeplan's loader reads files, and checks the fields
// that say what it was measured on.
func loadProfile(t *testing.T, data []byte, wantMicrobatch int) *model.Model {
	t.Helper()
	m, f, err := load.Model(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if f != load.Native {
		t.Errorf("format %q, want native", f)
	}
	if m.MicrobatchSize != wantMicrobatch {
		t.Errorf("microbatch_size = %d, want %d", m.MicrobatchSize, wantMicrobatch)
	}
	// A CPU is no preset: the profile states the FLOP/s a matrix product reached.
	if mo := m.MeasuredOn; mo == nil || mo.Name != "cpu" || !(mo.FLOPSPerSecond > 1e6) {
		t.Errorf("measured_on = %+v, want cpu with its FLOP/s", mo)
	}
	return m
}

// The MLP of testdata/tinynets.py.
var (
	widths = []int64{32, 256, 384, 128, 512, 64, 320, 96, 32}
	batch  = int64(16)
)

func TestProfileMLPAndTied(t *testing.T) {
	docs := profiles(t,
		[]string{"--model", "tinynets:mlp", "--warmup", "2", "--repeats", "5", "--name", "mlp"},
		[]string{"--model", "tinynets:tied", "--warmup", "1", "--repeats", "2"},
		[]string{"--model", "tinynets:masked", "--warmup", "1", "--repeats", "2"})
	t.Run("mlp", func(t *testing.T) {
		m := loadProfile(t, docs[0], int(batch))
		checkMLP(t, m)
		checkRequest(t, docs[0], m)
	})
	t.Run("tied", func(t *testing.T) {
		m := loadProfile(t, docs[1], 2)
		checkTied(t, m)
		if m.TokensPerSample != 8 {
			t.Errorf("tokens_per_sample = %d, want 8 (token ids of 2 x 8)", m.TokensPerSample)
		}
	})
	t.Run("masked", func(t *testing.T) { checkMasked(t, loadProfile(t, docs[2], 2)) })
}

func checkMLP(t *testing.T, m *model.Model) {
	if m.Name != "mlp" || len(m.Layers) != len(widths)-1 {
		t.Fatalf("model %q with %d layers, want mlp with %d", m.Name, len(m.Layers), len(widths)-1)
	}
	if len(m.Inputs) != 1 || m.Inputs[0].Bytes != 4*batch*widths[0] {
		t.Errorf("inputs %+v, want one of %d bytes", m.Inputs, 4*batch*widths[0])
	}
	prev := m.Inputs[0].ID
	for i, l := range m.Layers {
		in, out := widths[i], widths[i+1]
		weights := 4 * (in*out + out)
		want := model.Layer{
			Name: fmt.Sprint(i), ParamBytes: 2 * weights, OptimizerBytes: 2 * weights,
			// Linear keeps its input, ReLU its output.
			ActivationBytes: 4 * batch * (in + out),
			InputIDs:        []string{prev},
			Outputs:         []model.Tensor{{ID: fmt.Sprintf("%d.out", i), Bytes: 4 * batch * out}},
		}
		got := l
		got.Kind, got.ForwardSeconds, got.BackwardSeconds = "", 0, 0
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("layer %d:\n got %+v\nwant %+v", i, got, want)
		}
		if !(l.ForwardSeconds > 0 && l.BackwardSeconds > 0) {
			t.Errorf("layer %d: times %v, %v, want both > 0", i, l.ForwardSeconds, l.BackwardSeconds)
		}
		if !strings.HasPrefix(l.Kind, "Sequential(") {
			t.Errorf("layer %d: kind %q", i, l.Kind)
		}
		prev = want.Outputs[0].ID
	}
	// Planned, the profile splits where an independent DP over its times does.
	for _, stages := range []int{2, 3, 4} {
		c, err := cluster.FromPreset("a100-80gb", stages)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Make(m, c, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		times := make([]float64, len(m.Layers))
		for i, l := range m.Layers {
			times[i] = l.ForwardSeconds + l.BackwardSeconds
		}
		best, bounds, unique := minMaxSplit(times, stages)
		if math.Abs(p.Bottleneck-best) > 1e-9*best {
			t.Errorf("%d stages: bottleneck %v, the DP's %v", stages, p.Bottleneck, best)
		}
		if unique && !slices.Equal(p.Boundaries, bounds) {
			t.Errorf("%d stages: boundaries %v, the DP's %v", stages, p.Boundaries, bounds)
		}
		t.Logf("%d stages: %v (the DP's optimum is unique: %v)", stages, p.Boundaries, unique)
	}
}

// checkRequest plans the profile file through a planning request, as the command line and
// the page do: the times are rescaled from the CPU to the cluster's device, which keeps the
// independent DP's split.
func checkRequest(t *testing.T, doc []byte, m *model.Model) {
	r := &wire.Request{
		Model:       wire.ModelSpec{Document: doc},
		Cluster:     wire.ClusterSpec{Device: "a100-80gb", Count: 3},
		Parallelism: wire.Parallelism{Pipeline: 3},
		Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 12},
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Feasible || res.Model.MicrobatchSize != int(batch) {
		t.Fatalf("request: feasible %v, microbatch size %d, diagnostics %+v", res.Feasible, res.Model.MicrobatchSize, res.Diagnostics)
	}
	times := make([]float64, len(m.Layers))
	for i, l := range m.Layers {
		times[i] = l.ForwardSeconds + l.BackwardSeconds
	}
	if _, bounds, unique := minMaxSplit(times, 3); unique && !slices.Equal(res.Plan.Boundaries, bounds) {
		t.Errorf("request: boundaries %v, the DP's %v", res.Plan.Boundaries, bounds)
	}
	scaled := false
	for _, d := range res.Diagnostics {
		scaled = scaled || d.Code == wire.CodeTimesScaled
	}
	if !scaled {
		t.Errorf("request: no note that the CPU's times were scaled: %+v", res.Diagnostics)
	}
}

// minMaxSplit is the textbook DP for splitting times into p contiguous non-empty parts
// with the least largest sum, written independently of core/partition: it returns the
// optimum, a split reaching it, and whether that split is the only one within a relative
// 1e-9 of it.
func minMaxSplit(times []float64, p int) (float64, []int, bool) {
	n := len(times)
	sum := func(a, b int) float64 { // layers a..b-1
		s := 0.0
		for _, x := range times[a:b] {
			s += x
		}
		return s
	}
	// best[k][j]: least largest part splitting layers 0..j-1 into k parts.
	best := make([][]float64, p+1)
	for k := range best {
		best[k] = make([]float64, n+1)
		for j := range best[k] {
			best[k][j] = math.Inf(1)
		}
	}
	best[0][0] = 0
	for k := 1; k <= p; k++ {
		for j := k; j <= n; j++ {
			for a := k - 1; a < j; a++ {
				best[k][j] = min(best[k][j], max(best[k-1][a], sum(a, j)))
			}
		}
	}
	opt := best[p][n]
	// Enumerate the splits within tolerance of the optimum.
	var found [][]int
	var walk func(k, j int, tail []int)
	walk = func(k, j int, tail []int) {
		if k == 0 {
			if j == 0 {
				found = append(found, append([]int{0}, tail...))
			}
			return
		}
		for a := k - 1; a < j; a++ {
			if sum(a, j) <= opt*(1+1e-9) && best[k-1][a] <= opt*(1+1e-9) {
				walk(k-1, a, append([]int{j}, tail...))
			}
		}
	}
	walk(p, n, nil)
	return opt, found[0], len(found) == 1
}

func checkTied(t *testing.T, m *model.Model) {
	var names []string
	for _, l := range m.Layers {
		names = append(names, l.Name)
	}
	if want := []string{"embed", "block", "block", "head"}; !slices.Equal(names, want) {
		t.Fatalf("layers %v, want %v", names, want)
	}
	embed, b1, b2, head := m.Layers[0], m.Layers[1], m.Layers[2], m.Layers[3]
	const vocab, d = 50, 16
	tied := int64(4 * vocab * d * 4) // weights, gradients and two Adam moments
	if embed.Shared["param:embed.weight"] != tied || head.Shared["param:embed.weight"] != tied {
		t.Errorf("shared: embed %v, head %v, want param:embed.weight = %d in both", embed.Shared, head.Shared, tied)
	}
	if embed.ParamBytes != 0 || head.ParamBytes != 0 {
		t.Errorf("param_bytes: embed %d, head %d, want 0 (the matrix is shared)", embed.ParamBytes, head.ParamBytes)
	}
	if b1.TieGroup != "block" || b2.TieGroup != "block" {
		t.Errorf("tie groups %q, %q, want block for both calls", b1.TieGroup, b2.TieGroup)
	}
	if w := int64(2 * 4 * (d*d + d)); b1.ParamBytes != w || b2.ParamBytes != 0 {
		t.Errorf("block param_bytes %d then %d, want %d then 0", b1.ParamBytes, b2.ParamBytes, w)
	}
	if !slices.Equal(b2.InputIDs, []string{"block.out"}) || b2.Outputs[0].ID != "block#1.out" {
		t.Errorf("second call reads %v and writes %v", b2.InputIDs, b2.Outputs)
	}
	if !slices.Equal(head.InputIDs, []string{"block#1.out"}) {
		t.Errorf("head reads %v", head.InputIDs)
	}
}

// checkMasked: a keyword argument that is a model input (the mask) is read by every block
// and so carried across stages; a block's input computed in the parent's forward (the
// residual sum) counts as the previous block's output; a module that never runs is left
// out.
func checkMasked(t *testing.T, m *model.Model) {
	var names []string
	for _, l := range m.Layers {
		names = append(names, l.Name)
	}
	if want := []string{"embed", "blocks.0", "blocks.1", "blocks.2", "head"}; !slices.Equal(names, want) {
		t.Fatalf("layers %v, want %v", names, want)
	}
	if len(m.Inputs) != 2 || m.Inputs[1].ID != "input1" || m.Inputs[1].Bytes != 4*2*6 {
		t.Errorf("model inputs %+v, want the tokens and the 48-byte mask", m.Inputs)
	}
	want := [][]string{{"input0"}, {"embed.out", "input1"}, {"input1", "blocks.0.out"}, {"input1", "blocks.1.out"}, {"blocks.2.out"}}
	for i, l := range m.Layers {
		if !slices.Equal(l.InputIDs, want[i]) {
			t.Errorf("%s reads %v, want %v", l.Name, l.InputIDs, want[i])
		}
	}
}
