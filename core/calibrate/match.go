package calibrate

import (
	"fmt"
	"strconv"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/model"
)

// Group is a run of the profile's layers measured against a run of the estimate's
// layers: their times are compared summed. Indices are half-open: [ProfileFirst,
// ProfileEnd) of the profile, [EstimateFirst, EstimateEnd) of the estimate.
type Group struct {
	ProfileFirst, ProfileEnd   int
	EstimateFirst, EstimateEnd int
	// Name labels the group in residuals: the profile's layer name, or a range.
	Name string
}

// Match maps a profile's layers to the estimate's, unambiguously, or says where they
// differ, naming the first mismatch.
//
//   - The same count: one for one, in order (a profile measured with the analytic layers).
//   - Otherwise by transformer block: a layer whose dotted name has a number component
//     ("model.layers.3.mlp", "h.3", "block.3.attention") belongs to that block. The
//     profile's blocks must be the estimate's (numbered from 0 or 1), each a contiguous
//     run of layers in order; the estimate's layers of a block are matched one for one
//     with the profile's when they are as many (a profile split by sublayers against
//     --split sublayer), else summed against them (a block measured in parts: attention
//     and MLP, or norms and dropouts apart). Layers before the first block (embedding,
//     position embedding, dropout) are summed against the estimate's layers before its
//     first block, those after the last block (final norm, head, loss) against the
//     estimate's after; a side the profile leaves out is not fitted.
func Match(est *analytic.Result, m *model.Model) ([]Group, error) {
	n, k := len(m.Layers), len(est.Layers)
	if n == k {
		gs := make([]Group, n)
		for i := range gs {
			gs[i] = Group{i, i + 1, i, i + 1, m.Layers[i].Name}
		}
		return gs, nil
	}
	eb, err := blocksOf(layerNames(est), "the estimate")
	if err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i, l := range m.Layers {
		names[i] = l.Name
	}
	pb, err := blocksOf(names, "the profile")
	if err != nil {
		return nil, err
	}
	if len(pb.runs) == 0 {
		return nil, &model.FieldError{Path: "layers", Reason: fmt.Sprintf(
			"the profile has %d layers, the architecture %d (%s, ..., %s), and no layer name numbers a transformer block (as in \"layers.3\" or \"h.3.mlp\"): measure the same layers, or name each block's layers by its number",
			n, k, est.Layers[0].Name, est.Layers[k-1].Name)}
	}
	if len(pb.runs) != len(eb.runs) {
		first := pb.runs[0]
		return nil, &model.FieldError{Path: fmt.Sprintf("layers[%d].name", first.start), Reason: fmt.Sprintf(
			"the profile numbers %d transformer blocks (%q to %q), the architecture has %d", len(pb.runs), names[first.start], names[pb.runs[len(pb.runs)-1].start], len(eb.runs))}
	}
	var gs []Group
	if pb.before > 0 && eb.before > 0 {
		gs = append(gs, Group{0, pb.before, 0, eb.before, span(names, 0, pb.before)})
	}
	for b := range pb.runs {
		p, e := pb.runs[b], eb.runs[b]
		if p.end-p.start == e.end-e.start {
			for j := 0; j < p.end-p.start; j++ {
				gs = append(gs, Group{p.start + j, p.start + j + 1, e.start + j, e.start + j + 1, names[p.start+j]})
			}
			continue
		}
		gs = append(gs, Group{p.start, p.end, e.start, e.end, span(names, p.start, p.end)})
	}
	if pe, ee := pb.runs[len(pb.runs)-1].end, eb.runs[len(eb.runs)-1].end; pe < n && ee < k {
		gs = append(gs, Group{pe, n, ee, k, span(names, pe, n)})
	}
	return gs, nil
}

func layerNames(est *analytic.Result) []string {
	names := make([]string, len(est.Layers))
	for i, l := range est.Layers {
		names[i] = l.Name
	}
	return names
}

func span(names []string, a, b int) string {
	if b-a == 1 {
		return names[a]
	}
	return names[a] + " .. " + names[b-1]
}

type run struct{ start, end int }

// blocks is a sequence of layers seen as: before layers, then runs of one block each.
type blocks struct {
	before int
	runs   []run
}

// blocksOf finds the block runs of named layers: the numbers must rise by one from 0 or
// 1, each block's layers contiguous, and no unnumbered layer between two blocks.
func blocksOf(names []string, who string) (blocks, error) {
	var bs blocks
	last := -1 // the block of the previous numbered layer
	ended := false
	for i, name := range names {
		num, ok := blockNumber(name)
		if !ok {
			if len(bs.runs) == 0 {
				bs.before = i + 1
			} else {
				ended = true
			}
			continue
		}
		field := fmt.Sprintf("layers[%d].name", i)
		switch {
		case ended:
			return bs, &model.FieldError{Path: field, Reason: fmt.Sprintf(
				"%s: %q is in block %d, after %q, which names no block: layers between blocks cannot be matched", who, name, num, names[i-1])}
		case len(bs.runs) == 0 && num != 0 && num != 1:
			return bs, &model.FieldError{Path: field, Reason: fmt.Sprintf("%s: the first block is %d (%q): blocks are numbered from 0 or 1", who, num, name)}
		case len(bs.runs) > 0 && num == last:
			bs.runs[len(bs.runs)-1].end = i + 1
			continue
		case len(bs.runs) > 0 && num != last+1:
			return bs, &model.FieldError{Path: field, Reason: fmt.Sprintf(
				"%s: %q is in block %d, after block %d: blocks must follow each other in order, each in one run of layers", who, name, num, last)}
		}
		bs.runs = append(bs.runs, run{i, i + 1})
		last = num
	}
	return bs, nil
}

// blockNumber is the first all-digit component of a dotted (or slashed, underscored)
// layer name: "model.layers.3.mlp" is block 3.
func blockNumber(name string) (int, bool) {
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '/' || r == '_' || r == ' ' || r == ':' }) {
		if n, err := strconv.Atoi(part); err == nil && n >= 0 && part[0] != '+' {
			return n, true
		}
	}
	return 0, false
}
