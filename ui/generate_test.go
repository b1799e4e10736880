package ui

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestGeneratedCodeImportsNoLog: the committed *_gen.go went through ui/droplog after
// vugugen (ui/generate.go): none imports log, whose initialization alone costs main.wasm
// about 60 KB.
func TestGeneratedCodeImportsNoLog(t *testing.T) {
	names, err := filepath.Glob("*_gen.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("no generated files: %v", err)
	}
	for _, name := range names {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "log" {
				t.Errorf("%s imports log: regenerate with go generate ./ui (build.sh generate)", name)
			}
		}
	}
}
