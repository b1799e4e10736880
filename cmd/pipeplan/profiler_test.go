package main

import (
	"bytes"
	"strings"
	"testing"

	"pipeplan/core/profiler"
)

func TestProfilerCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"profiler"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("profiler: exit %d, %s", code, stderr.String())
	}
	if stdout.String() != profiler.Script || !strings.HasPrefix(stdout.String(), "#!/usr/bin/env python3\n") {
		t.Error("profiler does not print the embedded script")
	}
	stdout.Reset()
	if code := run([]string{"profiler", "-h"}, &stdout, &stderr); code != exitOK || !strings.Contains(stderr.String(), "python3 pipeplan_profile.py --model mymodel:build") {
		t.Errorf("profiler -h: exit %d, %s", code, stderr.String())
	}
	if code := run([]string{"profiler", "extra"}, &stdout, &stderr); code != exitBad {
		t.Errorf("profiler extra: exit %d, want %d", code, exitBad)
	}
}
