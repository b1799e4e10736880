package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"pipeplan/core/cluster"
)

// TestREADMEFrameworkModes: the README's CLI summary lists every framework mode
// --framework takes (cluster.FrameworkNames) and names --train-metrics, so that a new
// mode or flag reaches the help a person reads first.
func TestREADMEFrameworkModes(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(data)), " ")
	m := regexp.MustCompile("`--framework` \\(([^)]*)\\)").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("the README names no --framework modes")
	}
	listed := map[string]bool{}
	for _, f := range strings.Split(m[1], ",") {
		listed[strings.TrimSpace(f)] = true
	}
	for _, name := range cluster.FrameworkNames() {
		if !listed[name] {
			t.Errorf("the README's --framework (%s) leaves out %s", m[1], name)
		}
	}
	if !strings.Contains(text, "`--train-metrics`") {
		t.Error("the README does not name --train-metrics")
	}
}
