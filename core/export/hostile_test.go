package export_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// marker is the file every payload below tries to create in the directory the export
// runs in: if it exists afterwards, a name ran as code.
const marker = "PWNED"

// hostileNames are names a user, a file or a shared link can give a model or its layers,
// each trying to end the string literal or comment it lands in and run code.
var hostileNames = []string{
	// The issue's: a line break ends a comment.
	"x\ntouch " + marker + "\n#",
	"x\nopen('" + marker + "', 'w')\n#",
	"x\r__import__('os').system('touch " + marker + "')\r#",
	"x\r\nopen('" + marker + "', 'w')\r\n#",
	// Ending a Python string literal.
	`x"); open("` + marker + `", "w"); ("`,
	`x\"); open("` + marker + `", "w"); #`,
	`x\`,
	`"""` + "\nopen('" + marker + "', 'w')\n" + `"""`,
	`'''` + "\nopen('" + marker + "', 'w')\n" + `'''`,
	`\N{LATIN SMALL LETTER A}\x41\u0041`,
	// Ending a comment in other languages, and shell expansions.
	"*/ open('" + marker + "', 'w') /*",
	"$(touch " + marker + ")",
	"`touch " + marker + "`",
	"'; touch " + marker + "; '",
	// Line breaks Python or editors may honour, and characters that hide code.
	"x\vopen('" + marker + "', 'w')",
	"x\fopen('" + marker + "', 'w')",
	"x\u2028open('" + marker + "', 'w')\u2029#",
	"x\u0085open('" + marker + "', 'w')",
	"x\u202eopen('" + marker + "', 'w')\u202c",
	"a\x00b",
	"\x1b[2J\x1b[31mred",
	// Not UTF-8, and a PEP 263 coding declaration that would make Python read the rest
	// of the file as UTF-7, where "+AAo-" is a line break.
	"\xff\xfe\xed\xa0\x80",
	"x -*- coding: utf-7 -*-",
	"+AAo-open(+ACI-" + marker + "+ACI-, +ACI-w+ACI-)+AAo-#",
	strings.Repeat("long ", 2000),
}

// hostileInputs makes, for one name, the export inputs every format takes: a profile
// whose model and layers carry the name (layers are module names there), and an
// architecture whose model carries it (Megatron-LM's export). The plans are made once.
func hostileInputs(t *testing.T, name string) (profile, arch *export.Input) {
	t.Helper()
	basesOnce.Do(func() {
		baseProfile = fromRequest(t, exampleRequest(4, "1f1b", 8))
		baseArch = archCase{arch: "llama-2-7b", device: "a100-80gb", devices: 4, sched: "1f1b", m: 8, batch: 1, seq: 4096}.input(t)
	})
	if baseProfile == nil || baseArch == nil {
		t.Fatal("the plans to export could not be made")
	}
	p, a := *baseProfile, *baseArch
	p.Model, a.Model = name, name
	p.LayerNames = make([]string, len(baseProfile.LayerNames))
	for i := range p.LayerNames {
		p.LayerNames[i] = fmt.Sprintf("%s%d", name, i)
	}
	return &p, &a
}

var (
	basesOnce             sync.Once
	baseProfile, baseArch *export.Input
)

// TestHostileNamesDoNotRun writes every export of every hostile name, runs the Python
// ones (importing them against the frameworks' stand-ins) and the shell one (bash), and
// checks that no name ran, that each export defines what the same export of a plain name
// defines, and that every name reads back byte for byte.
func TestHostileNamesDoNotRun(t *testing.T) {
	py := python(t)
	helper, err := filepath.Abs(filepath.Join("testdata", "hostile.py"))
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		Format string `json:"format"`
		Path   string `json:"path"`
		// not sent: what the test expects
		name   string
		layers []string
	}
	dir := t.TempDir()
	var jobs []job
	names := append([]string{"plain"}, hostileNames...)
	for i, name := range names {
		profile, arch := hostileInputs(t, name)
		for _, f := range wire.Formats {
			in := profile
			if f == wire.Megatron {
				in = arch
			}
			ex, err := export.Make(in, f)
			if err != nil {
				t.Fatalf("name %q, %s: %v", name, f, err)
			}
			path := filepath.Join(dir, fmt.Sprintf("n%d_%s", i, ex.Filename))
			if err := os.WriteFile(path, []byte(ex.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			switch ex.Language {
			case "python":
				jobs = append(jobs, job{Format: string(f), Path: path, name: name, layers: in.LayerNames})
			case "shell":
				cmd := exec.Command("bash", path)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("name %q: bash %s: %v\n%s", name, ex.Filename, err, out)
				}
			case "json":
				var doc export.Document
				if err := json.Unmarshal([]byte(ex.Text), &doc); err != nil {
					t.Errorf("name %q: the JSON export does not decode: %v", name, err)
				} else if !sameAfterJSON(doc.Model.Name, name) {
					t.Errorf("name %q: the JSON export names the model %q", name, doc.Model.Name)
				}
			}
		}
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
		Format  string   `json:"format"`
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
	plain := map[string][]string{} // format -> what the plain name's export defines
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
		var want []string
		switch j.Format {
		case "pytorch": // the split points: each later stage's first layer
			for _, s := range stageStarts(t, j.layers) {
				want = append(want, j.layers[s])
			}
			if got := unhex(t, r.Modules); !slices.Equal(got, j.layers) {
				t.Errorf("%s: STAGE_MODULES reads back %q, want %q", what, got, j.layers)
			}
		default: // every layer, in order (they are distinct)
			want = j.layers
		}
		if got := unhex(t, r.Names); !slices.Equal(got, want) {
			t.Errorf("%s: the names read back %q, want %q", what, got, want)
		}
	}
}

// stageStarts are the first layers of the stages after the first, of the profile split
// hostileInputs plans (the split does not depend on the names).
func stageStarts(t *testing.T, layers []string) []int {
	t.Helper()
	in, _ := hostileInputs(t, "plain")
	if len(in.LayerNames) != len(layers) {
		t.Fatalf("the profile has %d layers, the names %d", len(in.LayerNames), len(layers))
	}
	return in.Boundaries[1 : len(in.Boundaries)-1]
}

func unhex(t *testing.T, hs []string) []string {
	t.Helper()
	out := make([]string, len(hs))
	for i, h := range hs {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// sameAfterJSON reports whether got is want as encoding/json carries it: each byte that
// is not UTF-8 becomes U+FFFD.
func sameAfterJSON(got, want string) bool {
	var b strings.Builder
	for i := 0; i < len(want); {
		r, size := utf8.DecodeRuneInString(want[i:])
		b.WriteRune(r)
		i += size
	}
	return got == b.String()
}

// TestEscapedLinesStayLines checks, for every format and hostile name, that a name
// changes no line that is code: the export has as many lines outside comments as the
// same export of a plain name, each comment line holds only characters that stand as
// themselves, and the text is UTF-8 without carriage returns or NUL bytes. Python's
// exports declare their encoding on the first line.
func TestEscapedLinesStayLines(t *testing.T) {
	for _, name := range hostileNames {
		checkLines(t, name, true)
	}
}

// checkLines is TestEscapedLinesStayLines's check for one name; priced says whether the
// exports price what they express (planning again: slow for fuzzing).
func checkLines(t *testing.T, name string, priced bool) {
	t.Helper()
	profile, arch := hostileInputs(t, name)
	plainProfile, plainArch := hostileInputs(t, "plain")
	if !priced {
		for _, in := range []*export.Input{profile, arch, plainProfile, plainArch} {
			in.Coster = nil
		}
	}
	for _, f := range wire.Formats {
		in, base := profile, plainProfile
		if f == wire.Megatron {
			in, base = arch, plainArch
		}
		ex, err := export.Make(in, f)
		if err != nil {
			t.Fatalf("%q %s: %v", name, f, err)
		}
		want, err := export.Make(base, f)
		if err != nil {
			t.Fatal(err)
		}
		if f == wire.JSON {
			if !json.Valid([]byte(ex.Text)) {
				t.Errorf("%q: the JSON export is not JSON", name)
			}
			continue
		}
		if !utf8.ValidString(ex.Text) || strings.ContainsAny(ex.Text, "\r\x00") {
			t.Errorf("%q %s: the export is not UTF-8 text without CR and NUL", name, f)
		}
		if ex.Language == "python" && !strings.HasPrefix(ex.Text, "# -*- coding: utf-8 -*-\n") {
			t.Errorf("%q %s: the export does not declare its encoding first", name, f)
		}
		if g, w := codeLines(ex.Text), codeLines(want.Text); g != w {
			t.Errorf("%q %s: %d lines of code, the plain name's export %d:\n%s", name, f, g, w, ex.Text)
		}
		for _, line := range strings.Split(ex.Text, "\n") {
			if !strings.HasPrefix(strings.TrimLeft(line, " "), "#") {
				continue
			}
			for _, r := range line {
				if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
					t.Errorf("%q %s: a comment holds %U: %q", name, f, r, line)
					break
				}
			}
		}
	}
}

// codeLines counts the lines that are not comments.
func codeLines(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "#") {
			n++
		}
	}
	return n
}

// FuzzExportNames makes every export of fuzzed model and layer names and applies
// TestEscapedLinesStayLines's checks (without pricing the exports: fuzzing wants speed).
func FuzzExportNames(f *testing.F) {
	for _, n := range hostileNames {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 1<<12 {
			return
		}
		checkLines(t, name, false)
	})
}
