// Package examples holds the built-in example inputs that the command line and the
// browser app share: native-JSON model profiles, each with the device preset and stage
// count it is meant to be planned on. The files are embedded, so the examples work
// offline and in WebAssembly. It holds the documents as bytes and loads nothing
// (core/load reads them), so that the page lists and sends the examples without linking
// the planner.
package examples

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed gpt2-medium.json
var gpt2MediumJSON []byte

// Example is a built-in model and the homogeneous cluster it is planned on by default.
type Example struct {
	// Name is the example's identifier ("gpt2-medium").
	Name string
	// Title is a one-line description for people.
	Title string
	// Device is the cluster.FromPreset device name the example is meant for.
	Device string
	// Stages is the default number of pipeline stages.
	Stages int

	data []byte // native JSON; never modified
}

// All returns the built-in examples, the default first.
func All() []Example {
	return []Example{{
		Name:   "gpt2-medium",
		Title:  "GPT-2 medium (24 blocks), training, microbatch 8 x 1024 tokens, fp16 + Adam, A100 profile",
		Device: "a100-80gb",
		Stages: 4,
		data:   gpt2MediumJSON,
	}}
}

// Default returns the example the app shows first.
func Default() Example { return All()[0] }

// Names lists the examples' names in the order of All.
func Names() []string {
	var names []string
	for _, e := range All() {
		names = append(names, e.Name)
	}
	return names
}

// Lookup returns the example of that name (case-insensitive).
func Lookup(name string) (Example, error) {
	for _, e := range All() {
		if strings.EqualFold(e.Name, name) {
			return e, nil
		}
	}
	return Example{}, fmt.Errorf("unknown example %q; known examples: %s", name, strings.Join(Names(), ", "))
}

// ModelJSON returns a copy of the example's model in native JSON.
func (e Example) ModelJSON() []byte { return append([]byte(nil), e.data...) }
