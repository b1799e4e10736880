package partition_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pipeplan/core/partition"
)

// chain is the simplest Costs: layer times on identical devices, per-layer memory against
// one limit, and per-cut transfer times.
type chain struct {
	times    []float64
	memory   []int64
	limit    int64
	cut      []float64 // cut[k]: time to send what crosses the cut before layer k
	stages   int
	noCutsAt map[int]bool
}

func (c chain) Layers() int                   { return len(c.times) }
func (c chain) Stages() int                   { return c.stages }
func (c chain) CutAllowed(k int) bool         { return !c.noCutsAt[k] }
func (c chain) Scale(i int) float64           { return 1 }
func (c chain) InFlight(i int) int            { return 1 }
func (c chain) MemoryMonotone() bool          { return true }
func (c chain) NewScanner() partition.Scanner { return &chainScan{c: c} }
func (c chain) Prefix(k int) float64 {
	var s float64
	for _, t := range c.times[:k] {
		s += t
	}
	return s
}
func (c chain) Recv(i, a int) float64 {
	if c.cut == nil {
		return 0
	}
	return c.cut[a]
}
func (c chain) Send(i, b int) float64 {
	if c.cut == nil {
		return 0
	}
	return c.cut[b+1]
}
func (c chain) LimitBytes(i int) int64 {
	if c.memory == nil {
		return 1
	}
	return c.limit
}
func (c chain) MemoryUpper(a, b int) (base, stash, floor int64) { return c.bytes(a, b), 0, 0 }
func (c chain) bytes(a, b int) int64 {
	var m int64
	if c.memory != nil {
		for _, v := range c.memory[a : b+1] {
			m += v
		}
	}
	return m
}

// chainScan is chain's Scanner: memory is the sum of the window's layers'.
type chainScan struct {
	c    chain
	a, b int
}

func (s *chainScan) Reset(a int)                        { s.a, s.b = a, a }
func (s *chainScan) ExtendLeft()                        { s.a-- }
func (s *chainScan) ExtendRight()                       { s.b++ }
func (s *chainScan) ShrinkLeft()                        { s.a++ }
func (s *chainScan) ShrinkRight()                       { s.b-- }
func (s *chainScan) Memory() (base, stash, floor int64) { return s.c.bytes(s.a, s.b), 0, 0 }
func (s *chainScan) Lower() (base, stash, floor int64)  { return s.Memory() }

func Example() {
	c := chain{times: []float64{4, 2, 1, 2, 3, 1, 2, 2}, stages: 3}
	r, err := partition.Solve(c, partition.MaxCompute)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("boundaries", r.Boundaries, "bottleneck", r.Objective)
	// Output: boundaries [0 2 5 8] bottleneck 6
}

func TestSolve(t *testing.T) {
	ones := []float64{1, 1, 1, 1, 1, 1}
	tests := []struct {
		name string
		c    chain
		obj  partition.Objective
		want []int // nil: infeasible
		objv float64
	}{
		{"even", chain{times: ones, stages: 3}, partition.MaxCompute, []int{0, 2, 4, 6}, 2},
		{"one stage", chain{times: ones, stages: 1}, partition.MaxCompute, []int{0, 6}, 6},
		{"as many stages as layers", chain{times: ones, stages: 6}, partition.MaxCompute, []int{0, 1, 2, 3, 4, 5, 6}, 1},
		{"more stages than layers", chain{times: ones, stages: 7}, partition.MaxCompute, nil, 0},
		// Bottleneck 4 with stage times (4,1,1,4), (4,1,3,2) or (4,2,2,2): equal totals, and
		// the last has the least variance.
		{"variance breaks ties", chain{times: []float64{4, 1, 1, 2, 2}, stages: 4}, partition.MaxCompute, []int{0, 1, 3, 4, 5}, 4},
		{"memory forces a short stage", chain{times: ones, memory: []int64{5, 1, 1, 1, 1, 1}, limit: 6, stages: 2}, partition.MaxCompute, []int{0, 2, 6}, 4},
		{"memory infeasible", chain{times: ones, memory: []int64{7, 1, 1, 1, 1, 1}, limit: 6, stages: 2}, partition.MaxCompute, nil, 0},
		{"tie group", chain{times: []float64{1, 1, 1, 1, 1, 2}, stages: 2, noCutsAt: map[int]bool{2: true, 3: true, 4: true}}, partition.MaxCompute, []int{0, 5, 6}, 5},
		// A costly cut in the middle: compute+transfer prefers the cheap cut at 1.
		{"transfer", chain{times: ones, stages: 2, cut: []float64{0, 0, 9, 9, 9, 9, 0}}, partition.MaxComputePlusTransfer, []int{0, 1, 6}, 5},
		{"transfer ignored", chain{times: ones, stages: 2, cut: []float64{0, 0, 9, 9, 9, 9, 0}}, partition.MaxCompute, []int{0, 3, 6}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := partition.Solve(tt.c, tt.obj)
			if tt.want == nil {
				if !errors.Is(err, partition.ErrInfeasible) {
					t.Fatalf("Solve = %v, %v; want ErrInfeasible", r, err)
				}
				return
			}
			if err != nil || !slices.Equal(r.Boundaries, tt.want) || r.Objective != tt.objv {
				t.Fatalf("Solve = %v (objective %v), %v; want %v (objective %v)", r.Boundaries, r.Objective, err, tt.want, tt.objv)
			}
		})
	}
}
