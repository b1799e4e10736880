package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// hostileGraph plans twoTowers with every layer name and tensor id carrying name (a
// graph split, whose exports write the layers in the plan's order and the ids of the
// tensors crossing each cut); nil when the model refuses the name.
func hostileGraph(t *testing.T, name string) *export.Input {
	t.Helper()
	names := make([]string, len(twoTowersNames))
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", name, i)
	}
	ids := make([]string, len(twoTowersIDs))
	for i := range ids {
		ids[i] = fmt.Sprintf("%st%d", name, i)
	}
	r := twoTowers(names, ids, 2, "1f1b", 4)
	r.Model.Name = name
	in, _, err := export.FromRequest(context.Background(), r)
	if err != nil {
		t.Fatalf("name %q: %v", name, err)
	}
	if in.LayerOrder == nil {
		t.Fatalf("name %q: the split is contiguous; the test wants a graph split", name)
	}
	return in
}

// TestHostileGraphNames: a graph split's exports of layers and tensors named to break out
// of their literals and comments (hostileNames) compile (py_compile), import against the
// frameworks' stand-ins without running a name, define what the plain name's exports
// define, read every layer name and tensor id back byte for byte (as JSON carried them),
// keep as many lines of code as the plain name's, and Megatron-LM's refusal quotes no name.
func TestHostileGraphNames(t *testing.T) {
	py := python(t)
	helper, err := filepath.Abs(filepath.Join("testdata", "hostile.py"))
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		Format string `json:"format"`
		Path   string `json:"path"`
		name   string
		in     *export.Input
	}
	dir := t.TempDir()
	var jobs []job
	var paths []string
	plainText := map[wire.Format]string{}
	for i, name := range append([]string{"plain"}, hostileNames...) {
		in := hostileGraph(t, name)
		for _, f := range wire.Formats {
			ex, err := export.Make(in, f)
			if f == wire.Megatron {
				if !errors.Is(err, export.ErrNotContiguous) || (name != "plain" && strings.Contains(err.Error(), name)) {
					t.Errorf("name %q: Megatron-LM's export error %v, want ErrNotContiguous quoting no name", name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("name %q, %s: %v", name, f, err)
			}
			if name == "plain" {
				plainText[f] = ex.Text
			} else if ex.Language != "json" {
				if !utf8.ValidString(ex.Text) || strings.ContainsAny(ex.Text, "\r\x00") {
					t.Errorf("name %q, %s: the export is not UTF-8 text without CR and NUL", name, f)
				}
				if g, w := codeLines(ex.Text), codeLines(plainText[f]); g != w {
					t.Errorf("name %q, %s: %d lines of code, the plain name's %d", name, f, g, w)
				}
			}
			path := filepath.Join(dir, fmt.Sprintf("g%d_%s", i, ex.Filename))
			if err := os.WriteFile(path, []byte(ex.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			switch ex.Language {
			case "python":
				jobs = append(jobs, job{Format: string(f), Path: path, name: name, in: in})
				paths = append(paths, path)
			case "json":
				doc, err := export.ReadDocument([]byte(ex.Text))
				if err != nil {
					t.Errorf("name %q: the plan document does not read back: %v", name, err)
				} else if doc.Plan == nil || !slices.Equal(doc.Plan.LayerOrder, in.LayerOrder) || !slices.Equal(doc.Model.Layers, modelOrder(in)) {
					t.Errorf("name %q: the plan document's layers %q, its plan's layer order %v", name, doc.Model.Layers, doc.Plan)
				}
			}
		}
	}
	if out, err := exec.Command(py, append([]string{"-m", "py_compile"}, paths...)...).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	manifest, _ := json.Marshal(jobs)
	mf := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(mf, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, helper, mf)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostile.py: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		t.Fatalf("a name ran as code: it created %s", marker)
	}
	var results []struct {
		Error   string   `json:"error"`
		Defines []string `json:"defines"`
		Names   []string `json:"names"`
		Modules []string `json:"modules"`
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(jobs) {
		t.Fatalf("hostile.py answered %d exports, want %d", len(results), len(jobs))
	}
	plain := map[string][]string{}
	for i, r := range results {
		j := jobs[i]
		what := fmt.Sprintf("name %q, %s", j.name, j.Format)
		if r.Error != "" {
			t.Errorf("%s: the export does not import: %s", what, r.Error)
			continue
		}
		if j.name == "plain" {
			plain[j.Format] = r.Defines
		} else if !slices.Equal(r.Defines, plain[j.Format]) {
			t.Errorf("%s: the export defines %v, the plain name's %v", what, r.Defines, plain[j.Format])
		}
		want := j.in.LayerNames
		if j.Format == "pytorch" { // the tensors crossing the cuts; STAGE_MODULES the layers
			want = nil
			for _, cut := range j.in.CutTensors {
				for _, ct := range cut {
					want = append(want, ct.ID)
				}
			}
			if got := unhex(t, r.Modules); !slices.Equal(got, j.in.LayerNames) {
				t.Errorf("%s: STAGE_MODULES reads back %q, want %q", what, got, j.in.LayerNames)
			}
		}
		if got := unhex(t, r.Names); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: the names read back %q, want %q", what, got, want)
		}
	}
}

// modelOrder is a graph split's LayerNames in the model's order.
func modelOrder(in *export.Input) []string {
	out := make([]string, len(in.LayerNames))
	for k, l := range in.LayerOrder {
		out[l] = in.LayerNames[k]
	}
	return out
}

// TestGraphRecomputeExport: a graph split with recompute auto exports, in PyTorch's
// RECOMPUTE, every layer the plan's stages recompute, by name and on its stage, though
// the stages' layers are numbered by the model and the export's by the plan's order.
func TestGraphRecomputeExport(t *testing.T) {
	in, res, err := export.FromRequest(context.Background(), twoTowersRecompute())
	if err != nil {
		t.Fatal(err)
	}
	if in.LayerOrder == nil {
		t.Fatal("the split is contiguous; the test wants a graph split")
	}
	ex, err := export.Make(in, wire.PyTorch)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(ex.Text, "\nRECOMPUTE = {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var want []string
	for i, s := range res.Plan.Stages {
		for _, l := range s.Recompute.Layers {
			want = append(want, fmt.Sprintf("    %q: %q,  # stage %d", l.Name, l.Part, i))
		}
	}
	if got := strings.Split(body, "\n"); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("RECOMPUTE holds %q, the plan recomputes %q", got, want)
	}
}
