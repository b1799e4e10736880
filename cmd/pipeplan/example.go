package main

import (
	"fmt"
	"io"

	"pipeplan/core/examples"
)

func init() {
	register(&command{name: "example", summary: "list the built-in example models, or print one as native JSON", run: runExample})
}

func runExample(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("example", stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pipeplan example [NAME]   (no NAME: list the examples)")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		for _, e := range examples.All() {
			fmt.Fprintf(stdout, "%-12s %s\n%-12s plan with: --device %s --stages %d\n", e.Name, e.Title, "", e.Device, e.Stages)
		}
		return nil
	case 1:
		e, err := examples.Lookup(fs.Arg(0))
		if err != nil {
			return err
		}
		_, err = stdout.Write(e.ModelJSON())
		return err
	}
	return fmt.Errorf("unexpected argument %q: give one example name", fs.Arg(1))
}
