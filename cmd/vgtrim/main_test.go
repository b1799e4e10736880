package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestTrim trims vugugen's output for testdata/demo.vugu (demo_gen.go.in) and compares
// it with the reviewed result (demo_gen.go.golden): the nodes built by the helpers, the
// white space kept between inline elements (the lead's strong and span, the row's label,
// input and button, the spans around a vg-if, before a component) and dropped next to
// blocks, at the edges of block containers, inside select, ul and svg, and across a
// vg-template's iterations in a grid. Trimming again changes nothing.
func TestTrim(t *testing.T) {
	in, err := os.ReadFile("testdata/demo_gen.go.in")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/demo_gen.go.golden")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Trim(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("Trim(demo_gen.go.in) differs from demo_gen.go.golden at line %d:\n got %s\nwant %s", i+1, g[i], w[i])
			}
		}
		t.Fatalf("Trim(demo_gen.go.in) has %d lines, demo_gen.go.golden %d", len(g), len(w))
	}
	again, err := Trim(got)
	if err != nil || !bytes.Equal(again, got) {
		t.Errorf("trimming twice: %v, changed %v", err, !bytes.Equal(again, got))
	}
	for _, gone := range []string{`import "log"`, "var _ log.Logger", "vjson.Marshal", "DOMEventHandlerSpec{", "'fix' unused imports"} {
		if strings.Contains(string(got), gone) {
			t.Errorf("the trimmed file still holds %q", gone)
		}
	}
}

// TestTrimRefuses: code that vugugen v0.4.0 does not write is an error, not a guess.
func TestTrimRefuses(t *testing.T) {
	in, err := os.ReadFile("testdata/demo_gen.go.in")
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []struct{ old, new string }{
		{"if c.Show {", "if c.Show {\n} else if c.Name == \"\" {"},
		{"vgparent.AppendChild(vgn)\n", "vgparent.AppendChild(vgn)\n\t\tsomething()\n"},
	} {
		src := strings.Replace(string(in), edit.old, edit.new, 1)
		if _, err := Trim([]byte(src)); err == nil {
			t.Errorf("Trim accepted %q", edit.new)
		}
	}
}
