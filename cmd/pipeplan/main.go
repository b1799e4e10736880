// Command pipeplan plans pipeline-parallel execution from the command line: it reads a
// model and a cluster, finds the optimal split into stages and prints it as a table or
// JSON. It is a thin front end over pipeplan/core.
//
// Exit status: 0 with a plan, 1 when no plan fits (the reason on stderr), 2 on bad input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"pipeplan/core/model"
)

// command is one subcommand. Each lives in its own file and registers itself in init.
type command struct {
	name    string
	summary string
	// run parses args and does the work, writing results to stdout.
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// Exit codes.
const (
	exitOK     = 0
	exitNoPlan = 1
	exitBad    = 2
)

// noPlanError marks a failure where the input was fine but no plan fits (exit 1).
type noPlanError struct{ err error }

func (e noPlanError) Error() string { return e.err.Error() }
func (e noPlanError) Unwrap() error { return e.err }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return exitBad
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pipeplan: unknown command %s\n", model.Clip(strconv.Quote(args[0])))
		usage(stderr)
		return exitBad
	}
	err := c.run(args[1:], stdout, stderr)
	var np noPlanError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &np):
		fmt.Fprintf(stderr, "pipeplan %s: %s\n", c.name, clipLines(err.Error()))
		return exitNoPlan
	default:
		fmt.Fprintf(stderr, "pipeplan %s: %s\n", c.name, clipLines(err.Error()))
		return exitBad
	}
}

// clipLines clips each line of an error message (model.Clip): a message that quotes a
// flag's value or a file's name of 100,000 characters does not echo it whole.
func clipLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if len(l) > 2*model.MaxMessageBytes {
			lines[i] = model.Clip(l)
		}
	}
	return strings.Join(lines, "\n")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pipeplan COMMAND [flags]   (pipeplan COMMAND -h for its flags)")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pipeplan "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags and rejects stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags go before values: --model FILE)", strings.Join(fs.Args(), " "))
	}
	return nil
}
