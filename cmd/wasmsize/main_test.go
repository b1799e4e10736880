package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestPackage(t *testing.T) {
	for name, want := range map[string]string{
		"encoding_json.__decodeState_.object":         "encoding_json",
		"runtime.mallocgc":                            "runtime",
		"github.com_vugu_vugu.__VGNode_.SetInnerHTML": "github.com_vugu_vugu",
		"pipeplan_core_cluster.map.init.2":            "pipeplan_core_cluster",
		"type_.eq.pipeplan_core_plan.Stage":           "type_",
		"wasm_export_run":                             "wasm_export_run",
	} {
		if got := Package(name); got != want {
			t.Errorf("Package(%q) = %q, want %q", name, got, want)
		}
	}
}

// A small program built for js/wasm parses: its sections add up to the file, and main
// and runtime have code.
func TestParseGoWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm program")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(hello()) }\n\n//go:noinline\nfunc hello() string { return \"hello\" }\n"), 0o644)
	out := filepath.Join(dir, "x.wasm")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	total := 8
	for _, s := range m.Sections {
		total += s.Total
	}
	if total != len(data) {
		t.Errorf("the sections add up to %d bytes, the file has %d", total, len(data))
	}
	found := false
	for _, f := range m.Funcs {
		found = found || f.Name == "main.hello"
	}
	if !found {
		t.Error("no function main.hello")
	}
	var buf bytes.Buffer
	if err := report(&buf, data, 5, "main."); err != nil || !strings.Contains(buf.String(), "runtime") || !strings.Contains(buf.String(), "main.hello") {
		t.Errorf("report: %v\n%s", err, buf.String())
	}
}
