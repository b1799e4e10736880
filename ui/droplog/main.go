// Command droplog removes the `log` import that vugugen (vugu v0.4.0) writes into every
// generated file, with the "var _ log.Logger" line that keeps it used: the generated code
// never logs, and log's package initialization alone links about 60 KB into main.wasm.
// vugugen has no option to leave it out. ui/generate.go runs it after vugugen, in ui/; it
// fails, changing nothing, when a file lacks either line or uses log elsewhere (another
// vugugen's output), rather than write something it has not checked.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// usesLog matches a use of package log: "log." after anything but a name's letters.
var usesLog = regexp.MustCompile(`(^|[^\w.])log\.`)

func main() {
	names, _ := filepath.Glob("*_gen.go")
	out := make([][]byte, len(names))
	for i, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			fail(err)
		}
		b := src
		for _, line := range []string{"import \"log\"\n", "var _ log.Logger\n"} {
			if bytes.Count(b, []byte("\n"+line)) != 1 {
				fail(fmt.Errorf("%s: want one %q line", name, line[:len(line)-1]))
			}
			b = bytes.Replace(b, []byte("\n"+line), []byte("\n"), 1)
		}
		if usesLog.Match(b) {
			fail(fmt.Errorf("%s uses log", name))
		}
		out[i] = b
	}
	for i, name := range names {
		if err := os.WriteFile(name, out[i], 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "droplog:", err)
	os.Exit(1)
}
