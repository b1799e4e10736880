package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"pipeplan/core/export"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

func init() {
	register(&command{name: "export", summary: "plan, and write the plan as PyTorch, DeepSpeed, Megatron-LM or Graphcore code, or plan JSON", run: runExport})
}

// runExport plans the request the flags (or --request) describe and writes it for a
// framework. Tensor and sequence parallelism are the request's (--tp, --sp): the plan is
// costed with them and the export states them.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	var f requestFlags
	f.add(fs, true)
	formats := make([]string, len(wire.Formats))
	for i, x := range wire.Formats {
		formats[i] = string(x)
	}
	format := fs.String("format", "", "what to write: "+strings.Join(formats, ", ")+" (docs/export.md)")
	out := fs.String("o", "", "write the export to this `file` (default: standard output)")
	asJSON := fs.Bool("json", false, "print the export as JSON: its text, split, schedule, prices and notes")
	f.own = []string{"format", "o"}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format == "" {
		return fmt.Errorf("--format: give one of %s", strings.Join(formats, ", "))
	}
	fm, err := export.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	r, err := f.build()
	if err != nil {
		return err
	}
	if f.printRequest {
		n, err := request.Normalize(r)
		if err != nil {
			return f.flagError(err)
		}
		return writeJSON(stdout, n)
	}
	in, _, err := export.FromRequest(context.Background(), r)
	switch {
	case errors.Is(err, export.ErrNoPlan):
		return noPlanError{err}
	case err != nil:
		return f.flagError(err)
	}
	ex, err := export.Make(in, fm)
	if err != nil {
		return err
	}
	var text []byte
	if *asJSON {
		text, err = json.MarshalIndent(ex, "", "  ")
		text = append(text, '\n')
	} else {
		text = []byte(ex.Text)
	}
	if err != nil {
		return err
	}
	if *out != "" {
		err = os.WriteFile(*out, text, 0o644)
	} else {
		_, err = stdout.Write(text)
	}
	if err != nil {
		return err
	}
	if !ex.Exact {
		fmt.Fprintf(stderr, "pipeplan export: %s cannot run the plan exactly: it runs %s, split %v (the notes at the top of the export say why)\n", fm, ex.Schedule, ex.Boundaries)
	}
	return nil
}
