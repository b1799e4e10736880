package request

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/wire"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// requestDoc is the request format's documentation, which these tests keep honest.
const requestDoc = "../../docs/request.md"

// jsonBlocks returns the ```json blocks of the section of markdown under the heading
// line heading, up to the next heading of the same or a higher level.
func jsonBlocks(t *testing.T, markdown []byte, heading string) []string {
	t.Helper()
	level := strings.Index(heading, " ")
	var blocks []string
	var block *strings.Builder
	in := false
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && line == "```":
			blocks = append(blocks, block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case line == heading:
			in = true
		case in && strings.HasPrefix(line, "#") && strings.Index(line, " ") <= level:
			in = false
		case in && line == "```json":
			block = new(strings.Builder)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("%s: no ```json block under %q", requestDoc, heading)
	}
	return blocks
}

func readDoc(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(requestDoc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDocExample runs the documented example request and checks the documented
// (abridged) result against what Run returns: every value the documentation shows must
// be the result's.
func TestDocExample(t *testing.T) {
	doc := readDoc(t)
	in := jsonBlocks(t, doc, "## Example request")[0]
	r := decode(t, in)
	res := run(t, r)
	if !res.Feasible {
		t.Fatalf("the documented example has no plan: %+v", res.Diagnostics)
	}
	// The example spells out the golden request's defaults: the same request.
	golden, err := os.ReadFile("testdata/gpt2-4xa100.json")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := ID(decode(t, string(golden))); id != res.ID {
		t.Errorf("the documented example's id %s is not the golden request's %s", res.ID, id)
	}

	var shown, got any
	if err := json.Unmarshal([]byte(jsonBlocks(t, doc, "## Example result")[0]), &shown); err != nil {
		t.Fatalf("the documented result is not JSON: %v", err)
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, diff := range abridges(shown, got, "") {
		t.Errorf("docs/request.md's example result: %s", diff)
	}
}

// abridges lists where shown is not an abridgement of got: every key of a shown object
// must be in got's with an abridging value, a shown array must be a prefix of got's, and
// other values must be equal.
func abridges(shown, got any, path string) []string {
	switch s := shown.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an object, the result has %v", path, got)}
		}
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			v := s[k]
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the result", path, k))
				continue
			}
			diffs = append(diffs, abridges(v, gv, path+"."+k)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(s) {
			return []string{fmt.Sprintf("%s: %d elements, the result has %v", path, len(s), got)}
		}
		var diffs []string
		for i := range s {
			diffs = append(diffs, abridges(s[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return diffs
	}
	if !reflect.DeepEqual(shown, got) {
		return []string{fmt.Sprintf("%s: %v, the result has %v", path, shown, got)}
	}
	return nil
}

// TestDocRequests: every request the documentation shows decodes, normalizes and plans.
func TestDocRequests(t *testing.T) {
	for i, in := range jsonBlocks(t, readDoc(t), "## More requests") {
		r, err := Decode([]byte(in))
		if err != nil {
			t.Errorf("request %d: %v", i, err)
			continue
		}
		if res, err := Run(t.Context(), r); err != nil || !res.Feasible {
			t.Errorf("request %d: %v, %+v", i, err, res)
		}
	}
}

// TestDocDefaults: every default Normalize's doc comment lists (a request field
// followed by a colon, as "training.recompute: none", or "parallelism.shard_group with
// hsdp:") is a field of the request and is listed in the documentation's defaults
// ("`training.recompute`:").
func TestDocDefaults(t *testing.T) {
	doc := strings.Join(strings.Fields(string(readDoc(t))), " ")
	fields := requestFields()
	var comment string
	for _, f := range parseGo(t, ".") {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Normalize" && fn.Recv == nil && fn.Doc != nil {
				comment = strings.Join(strings.Fields(fn.Doc.Text()), " ")
			}
		}
	}
	var listed []string
	for _, m := range regexp.MustCompile(`([a-z][a-z_]*(?:\.[a-z_]+)*)(?: with [a-z0-9]+)?:`).FindAllStringSubmatch(comment, -1) {
		if fields[m[1]] && !slices.Contains(listed, m[1]) {
			listed = append(listed, m[1])
		}
	}
	if len(listed) < 20 || listed[0] != "version" {
		t.Fatalf("Normalize's doc comment lists the defaults of %v: the parse is broken", listed)
	}
	for _, field := range listed {
		if !regexp.MustCompile("`" + regexp.QuoteMeta(field) + "`( with `[a-z0-9]+`)?:").MatchString(doc) {
			t.Errorf("docs/request.md lists no default for %s, which Normalize's doc comment gives", field)
		}
	}
}

// requestFields returns the JSON paths of the request's fields ("schedule.name").
func requestFields() map[string]bool {
	fields := map[string]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[prefix+name] = true
			if ft := f.Type; ft.Kind() == reflect.Struct || (ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct) {
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeOf(wire.Request{}), "")
	return fields
}

// parseGo parses the non-test Go files of a directory, with comments.
func parseGo(t *testing.T, dir string) []*ast.File {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	return files
}

// TestDocCodes: every diagnostic code is documented: the string constants named Code*
// anywhere in core (the result's codes), and those of the const block of "The codes of
// a Reason" (core/plan's no-fit reasons).
func TestDocCodes(t *testing.T) {
	doc := string(readDoc(t))
	codes := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, f := range parseGo(t, path) {
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				block := g.Doc != nil && strings.HasPrefix(g.Doc.Text(), "The codes of a Reason")
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) || !(block || strings.HasPrefix(name.Name, "Code")) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							codes[strings.Trim(lit.Value, `"`)] = path + ": " + name.Name
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, known := range []string{wire.CodeStageOverMemory, wire.CodeGraphcoreMemoryRule, "no_split_fits", "too_few_layers"} {
		if _, ok := codes[known]; !ok {
			t.Fatalf("the scan of core found no constant for the code %s: it is broken (found %v)", known, codes)
		}
	}
	for code, where := range codes {
		if !strings.Contains(doc, "| `"+code+"` |") {
			t.Errorf("docs/request.md does not document the code %s (%s)", code, where)
		}
	}
	if !strings.Contains(doc, PlannerVersion) {
		t.Errorf("docs/request.md does not show the planner version %s", PlannerVersion)
	}
}

// TestDocPresetLists: the request format's rows for cluster.device and cluster.link list
// exactly core's device and link presets, so a preset added to core is documented (the
// link list had fallen seven behind: efa-v3, gaudi3-roce, neuronlink-v3, tpu-dcn-50g,
// tpu-ici-v5p, tpu-ici-v6e and xgmi4 were accepted but not listed).
func TestDocPresetLists(t *testing.T) {
	doc := string(readDoc(t))
	code := regexp.MustCompile("`([^`]+)`")
	for _, tt := range []struct {
		row  string
		want []string
	}{
		{"| `cluster.device` |", cluster.DeviceNames()},
		{"| `cluster.link` |", wire.LinkPresets()},
	} {
		i := strings.Index(doc, tt.row)
		if i < 0 {
			t.Fatalf("%s: no row %q", requestDoc, tt.row)
		}
		line := doc[i+len(tt.row):]
		line = line[:strings.IndexByte(line, '\n')]
		var got []string
		for _, m := range code.FindAllStringSubmatch(line, -1) {
			if m[1] != "device" {
				got = append(got, m[1])
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s row %s lists %q, core has %q", requestDoc, tt.row, got, tt.want)
		}
	}
}

// TestDocModelLists: the request format's model.architecture name row lists exactly the
// bundled configs (core/arch's BundledNames, in any order), and the README's --hf-config
// sentence names every model_type core/arch reads (ModelTypes), so a model added to core
// (as gemma, nemotron and their configs were) is documented in both.
func TestDocModelLists(t *testing.T) {
	doc := string(readDoc(t))
	const row = "| `name` | a bundled config:"
	i := strings.Index(doc, row)
	if i < 0 {
		t.Fatalf("%s: no row %q", requestDoc, row)
	}
	line := doc[i+len(row):]
	line = line[:strings.IndexByte(line, '\n')]
	var got []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
		if m[1] != "pipeplan estimate" {
			got = append(got, m[1])
		}
	}
	slices.Sort(got)
	if want := arch.BundledNames(); !slices.Equal(got, want) {
		t.Errorf("%s name row lists %q, core/arch bundles %q", requestDoc, got, want)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	j := strings.Index(s, "a HuggingFace `config.json` of model type")
	if j < 0 {
		t.Fatal("README.md: no --hf-config sentence naming the model types")
	}
	s = s[j:]
	s = s[:strings.Index(s, ", or a bundled one")]
	words := regexp.MustCompile(`[a-z0-9_]+`).FindAllString(s, -1)
	for _, mt := range arch.ModelTypes() {
		if !slices.Contains(words, mt) {
			t.Errorf("README.md's --hf-config sentence does not name model type %s", mt)
		}
	}
}
