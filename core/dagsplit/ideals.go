package dagsplit

import (
	"errors"
	"fmt"
	"sort"
)

// ErrTooManyIdeals is wrapped by the error Solve returns when the graph has more ideals
// than Options.MaxIdeals, or more layers than MaxLayers: the exact method's work grows
// with the square of the ideals, times the layers.
var ErrTooManyIdeals = errors.New("the graph has too many ideals for the exact split")

// set is a bitset over layers.
type set []uint64

func (s set) has(l int) bool { return s[l>>6]&(1<<(uint(l)&63)) != 0 }
func (s set) add(l int)      { s[l>>6] |= 1 << (uint(l) & 63) }

// subset reports whether s is a subset of t.
func (s set) subset(t set) bool {
	for k, w := range s {
		if w&^t[k] != 0 {
			return false
		}
	}
	return true
}

func (s set) key() string {
	b := make([]byte, 8*len(s))
	for k, w := range s {
		for j := range 8 {
			b[8*k+j] = byte(w >> (8 * j))
		}
	}
	return string(b)
}

// ideal is a downset of the graph: every predecessor of a member is a member.
type ideal struct {
	members set
	size    int
}

// graph is the layers' dependencies and tie groups.
type graph struct {
	n     int
	preds [][]int
	group []int   // tie group of each layer, -1 for none
	tied  [][]int // members of each tie group
}

func newGraph(c Costs) (*graph, error) {
	n := c.Layers()
	g := &graph{n: n, preds: make([][]int, n), group: make([]int, n)}
	index := map[int]int{}
	for l := range n {
		for _, q := range c.Preds(l) {
			if q < 0 || q >= l {
				return nil, fmt.Errorf("dagsplit: layer %d depends on layer %d: predecessors must come earlier in the layer order", l, q)
			}
		}
		g.preds[l] = c.Preds(l)
		g.group[l] = -1
		if t := c.TieGroup(l); t >= 0 {
			k, ok := index[t]
			if !ok {
				k = len(g.tied)
				index[t] = k
				g.tied = append(g.tied, nil)
			}
			g.group[l] = k
			g.tied[k] = append(g.tied[k], l)
		}
	}
	return g, nil
}

// chain reports whether every layer depends on the one before it: then the only ideals
// are the n+1 prefixes of the layer order, and a convex split is a contiguous one.
func (g *graph) chain() bool {
	for l := 1; l < g.n; l++ {
		found := false
		for _, q := range g.preds[l] {
			found = found || q == l-1
		}
		if !found {
			return false
		}
	}
	return true
}

// ideals enumerates the graph's ideals that hold every tie group whole or not at all
// (the only ones a split can put between two stages), smallest first. A breadth-first
// search adds one layer at a time (a layer whose predecessors are all in): every ideal is
// reached so from the empty one (remove a maximal member repeatedly), so none is missed.
// It stops with ErrTooManyIdeals once more than limit ideals are found, tie groups or
// not.
func (g *graph) ideals(limit int) ([]ideal, error) {
	words := (g.n + 63) / 64
	empty := ideal{members: make(set, words)}
	all := []ideal{empty}
	seen := map[string]bool{empty.members.key(): true}
	for k := 0; k < len(all); k++ {
		cur := all[k]
		for l := range g.n {
			if cur.members.has(l) {
				continue
			}
			ok := true
			for _, q := range g.preds[l] {
				ok = ok && cur.members.has(q)
			}
			if !ok {
				continue
			}
			next := append(set(nil), cur.members...)
			next.add(l)
			key := next.key()
			if seen[key] {
				continue
			}
			if len(all) == limit {
				return nil, fmt.Errorf("%w: more than %d (Options.MaxIdeals)", ErrTooManyIdeals, limit)
			}
			seen[key] = true
			all = append(all, ideal{members: next, size: cur.size + 1})
		}
	}
	out := all[:0]
	for _, id := range all {
		whole := true
		for _, members := range g.tied {
			in := 0
			for _, l := range members {
				if id.members.has(l) {
					in++
				}
			}
			whole = whole && (in == 0 || in == len(members))
		}
		if whole {
			out = append(out, id)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].size < out[b].size })
	return out, nil
}
