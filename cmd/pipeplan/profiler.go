package main

import (
	"fmt"
	"io"

	"pipeplan/core/profiler"
)

func init() {
	register(&command{name: "profiler", summary: "print the PyTorch profiler script that measures a model into a profile", run: runProfiler})
}

func runProfiler(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profiler", stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: pipeplan profiler > "+profiler.FileName)
		fmt.Fprintln(w, "Prints the Python script that profiles a PyTorch model's layers on your device. Then:")
		fmt.Fprintln(w, "  python3 "+profiler.FileName+" --model mymodel:build --device cuda -o profile.json")
		fmt.Fprintln(w, "  pipeplan plan --model profile.json --device NAME --stages N")
		fmt.Fprintln(w, "(python3 "+profiler.FileName+" --help lists its options; --demo profiles a small built-in model.)")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, profiler.Script)
	return err
}
