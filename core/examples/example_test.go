package examples_test

import (
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/examples"
	"pipeplan/core/load"
	"pipeplan/core/plan"
	"pipeplan/core/units"
)

// The default example planned on its default cluster, as the browser app first shows it.
func Example() {
	e := examples.Default()
	m, _, err := load.Model(e.ModelJSON())
	if err != nil {
		panic(err)
	}
	c, err := cluster.FromPreset(e.Device, e.Stages)
	if err != nil {
		panic(err)
	}
	p, err := plan.Make(m, c, plan.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s on %d x %s: boundaries %v, bottleneck %.3f ms\n", e.Name, e.Stages, e.Device, p.Boundaries, p.Bottleneck*1e3)
	for i, s := range p.Stages {
		fmt.Printf("stage %d: %s .. %s, %.3f ms, %s\n", i, s.FirstName, s.LastName, s.Compute*1e3, units.Bytes(s.MemoryBytes))
	}
	// Output:
	// gpt2-medium on 4 x a100-80gb: boundaries [0 8 15 22 26], bottleneck 36.204 ms
	// stage 0: embed .. block.6, 36.204 ms, 8.34 GiB
	// stage 1: block.7 .. block.13, 36.078 ms, 7.55 GiB
	// stage 2: block.14 .. block.20, 36.078 ms, 7.55 GiB
	// stage 3: block.21 .. head, 33.530 ms, 5.57 GiB
}
