package wasm_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
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

// planner lists the packages that plan (or hash, as core/request's content ids do): the
// page's program (main.wasm) must link none of them; its planner runs in a Web Worker
// (wasm/planner).
var planner = []string{
	"pipeplan/core/analytic", "pipeplan/core/calibrate", "pipeplan/core/dagsplit",
	"pipeplan/core/estimate", "pipeplan/core/export", "pipeplan/core/partition",
	"pipeplan/core/plan", "pipeplan/core/request", "pipeplan/core/schedule",
	"pipeplan/core/search", "pipeplan/core/search/requests", "crypto/sha256",
}

// pageDebt lists the planner packages main.wasm still reaches, and through what: the
// page's search panel reads core/search's Query and Answer. Each goes when its types move
// into core/wire; the test fails when one is no longer reached, so that the list only
// shrinks.
var pageDebt = map[string]string{
	"pipeplan/core/schedule": "through core/search",
	"pipeplan/core/search":   "ui's search panel reads search.Query, Knobs and Answer",
}

// TestPageLinksNoPlanner lists what the page's program (wasm/app, built for js/wasm)
// imports, directly or not, and fails if a planner package appears beyond the ones
// pageDebt names, or if one pageDebt names is no longer reached. core/wire, the request's
// and result's types, is held to the same list.
func TestPageLinksNoPlanner(t *testing.T) {
	js := []string{"GOOS=js", "GOARCH=wasm"}
	for _, pkg := range []string{"./wasm/app", "./core/wire"} {
		deps := map[string]bool{}
		for _, d := range goList(t, js, "-deps", pkg) {
			deps[d] = true
		}
		if !deps["pipeplan/core/model"] {
			t.Fatalf("go list -deps %s: %d packages, without core/model", pkg, len(deps))
		}
		for _, p := range planner {
			if !deps[p] {
				continue
			}
			if _, owed := pageDebt[p]; !owed {
				t.Errorf("%s imports %s, a planner package", pkg, p)
			}
		}
		if pkg != "./wasm/app" {
			continue
		}
		for p, why := range pageDebt {
			if !deps[p] {
				t.Errorf("%s no longer reaches %s (%s): strike it from pageDebt", pkg, p, why)
			}
		}
	}
}
