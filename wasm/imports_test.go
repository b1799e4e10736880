package wasm_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goList runs `go list` from the module's root with the given environment additions and
// arguments, and returns its output's lines.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the module's imports: %v", err)
	}
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// testOnly lists the imports of wasm/ that packages outside it may make in their tests
// only: package ui's tests plan with wasm/planner/ops in process, as the page's planner
// worker does (ui's code reaches the planner only through the Planner function it is
// given).
var testOnly = map[string]bool{
	"pipeplan/ui -> pipeplan/wasm/planner/ops": true,
}

// importsUpward returns "importer -> imported" for every import of a package outside
// pipeplan/wasm of one in it. Each line of lines is a package's path, then its imports,
// then "|" and its tests' imports; a test import listed in testOnly is allowed.
func importsUpward(lines []string) []string {
	var bad []string
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 || inWasm(f[0]) {
			continue
		}
		inTests := false
		for _, imp := range f[1:] {
			if imp == "|" {
				inTests = true
				continue
			}
			edge := f[0] + " -> " + imp
			if inWasm(imp) && !(inTests && testOnly[edge]) {
				bad = append(bad, edge)
			}
		}
	}
	return bad
}

func inWasm(path string) bool {
	path = strings.TrimSuffix(path, "_test")
	return path == "pipeplan/wasm" || strings.HasPrefix(path, "pipeplan/wasm/")
}

// TestNothingImportsWasm checks that no package outside wasm/ imports one under it (in
// its code or its tests, for every platform and build tag the module uses): the
// programs there are the top of the import graph.
func TestNothingImportsWasm(t *testing.T) {
	const format = `{{.ImportPath}}{{range .Imports}} {{.}}{{end}} |{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`
	builds := []struct {
		name string
		env  []string
		tags string
	}{
		{"native", nil, "browser,wrangler"},
		{"js/wasm", []string{"GOOS=js", "GOARCH=wasm"}, "browser,wrangler"},
	}
	for _, b := range builds {
		lines := goList(t, b.env, "-e", "-tags", b.tags, "-f", format, "./...")
		if len(lines) < 10 {
			t.Fatalf("%s: go list found %d packages, expected the whole module", b.name, len(lines))
		}
		if bad := importsUpward(lines); len(bad) > 0 {
			t.Errorf("%s: packages outside wasm/ import wasm/:\n%s", b.name, strings.Join(bad, "\n"))
		}
	}
}

// TestImportsUpward checks the check on a made-up listing.
func TestImportsUpward(t *testing.T) {
	lines := []string{
		"pipeplan/wasm/app pipeplan/ui pipeplan/wasm/planner/ops |",
		"pipeplan/ui pipeplan/core/request | pipeplan/wasm/planner/ops",
		"pipeplan/ui pipeplan/wasm/planner/ops |",
		"pipeplan/share | pipeplan/share pipeplan/wasm/worker",
		"pipeplan/cmd/pipeplan pipeplan/wasm/worker |",
		"pipeplan/wasmish pipeplan/wasmish/x |",
	}
	got := strings.Join(importsUpward(lines), "; ")
	want := "pipeplan/ui -> pipeplan/wasm/planner/ops; pipeplan/share -> pipeplan/wasm/worker; pipeplan/cmd/pipeplan -> pipeplan/wasm/worker"
	if got != want {
		t.Errorf("importsUpward = %q, want %q", got, want)
	}
}

// pageAllowed are the only packages of pipeplan/core the page's program (main.wasm) may
// link, each with why it is no planner; every other core package (the planner: plan,
// schedule, partition, estimate, analytic, search, request, recompute, arch, cluster,
// load, export, calibrate, ...) runs in the planner's Web Worker (wasm/planner), and a
// core package added later is forbidden until it is listed here.
var pageAllowed = map[string]string{
	"pipeplan/core/wire":              "the request's and the result's types and the request's vocabulary",
	"pipeplan/core/model":             "the model's types and the field errors core/wire's decoding returns; no planning",
	"pipeplan/core/internal/jsonscan": "the JSON scanner core/wire's strict decoding reads keys with",
	"pipeplan/core/units":             "writes numbers for people (bytes, seconds, rates)",
	"pipeplan/core/examples":          "the built-in examples' names and documents (pipeplan.exampleModel); no loading",
	"pipeplan/core/profiler":          "the PyTorch profiler script's text, for pipeplan.profiler",
}

// pageForbidden lists other packages the page's program must not link: core/request's
// content ids hash with crypto/sha256, which the page never needs.
var pageForbidden = []string{"crypto/sha256"}

// TestPageLinksNoPlanner lists what the page's program (wasm/app, built for js/wasm)
// imports, directly or not, and fails if it links a package of pipeplan/core that
// pageAllowed does not name, or one of pageForbidden. core/wire, the request's and
// result's types, is held to the same rule.
func TestPageLinksNoPlanner(t *testing.T) {
	core := goList(t, nil, "./core/...")
	if !slices.Contains(core, "pipeplan/core/plan") || !slices.Contains(core, "pipeplan/core/schedule") {
		t.Fatalf("go list ./core/... lists %d packages, without core/plan or core/schedule: %q", len(core), core)
	}
	for p := range pageAllowed {
		if !slices.Contains(core, p) {
			t.Errorf("pageAllowed names %s, which is no package of core/", p)
		}
	}
	js := []string{"GOOS=js", "GOARCH=wasm"}
	for _, pkg := range []string{"./wasm/app", "./core/wire"} {
		deps := goList(t, js, "-deps", pkg)
		if !slices.Contains(deps, "pipeplan/core/wire") {
			t.Fatalf("go list -deps %s: %d packages, without core/wire", pkg, len(deps))
		}
		for _, d := range deps {
			if planner := strings.HasPrefix(d, "pipeplan/core/") && pageAllowed[d] == ""; planner || slices.Contains(pageForbidden, d) {
				t.Errorf("%s links %s, a planner package", pkg, d)
			}
		}
	}
}
