package main

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

// TestEveryCommandStarts runs every command with -h: each must build its flags and print
// them, so a command whose flags collide (two definitions of one name panic in package
// flag) fails here rather than in front of a user.
func TestEveryCommandStarts(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("pipeplan %s -h panics: %v", name, r)
				}
			}()
			var stdout, stderr bytes.Buffer
			if code := run([]string{name, "-h"}, &stdout, &stderr); code != exitOK {
				t.Errorf("pipeplan %s -h: exit %d\n%s", name, code, stderr.String())
			}
			if !strings.Contains(stdout.String()+stderr.String(), name) {
				t.Errorf("pipeplan %s -h prints no usage:\n%s%s", name, stdout.String(), stderr.String())
			}
		})
	}
}
