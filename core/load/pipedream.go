package load

// PipeDream's graph.txt profiles (msr-fiddle/pipedream, profiler/*/profiles/<model>/graph.txt):
//
//	node12 -- Conv2d(128, 256, ...) -- forward_compute_time=10.814, backward_compute_time=18.335, activation_size=411041792.000, parameter_size=1180672.000
//		node11 -- node12
//
// A node line is a layer: its id, a description, its forward and backward times in
// milliseconds, the bytes of its output activation (a bracketed list "[a; b]" for a node
// with several outputs, summed, as PipeDream itself does) and of its parameters; an
// optional trailing " -- stage_id=N" is ignored. A line that starts with a tab (or a
// space) is an edge "src -- dst": data flows from src to dst. docs/formats.md says how
// the graph becomes a sequence of layers.

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/model"
)

// maxMillis bounds a layer time (about 30 years) so that sums of times stay finite.
const maxMillis = 1e15

// maxEdges bounds the edge lines of a graph (16 per node at model.MaxLayers nodes).
const maxEdges = 1 << 20

// inputSuffix names the model input a source node consumes: "node1" reads "node1:input".
const inputSuffix = ":input"

// pdNode is one node line and its edges.
type pdNode struct {
	id, desc     string
	line         int
	fwdMs, bwdMs float64
	act, param   int64
	preds, succs []int // indices into the node list, in edge order, without repeats

	sortKey    naturalKey
	position   int  // index in the topological order
	placed     bool // placed in the order by Kahn's algorithm
	unfinished int  // predecessors not yet placed
}

// pipeDreamModel parses a graph.txt and orders its nodes topologically into layers.
func pipeDreamModel(data []byte) (*model.Model, error) {
	nodes, err := parsePipeDream(string(data))
	if err != nil {
		return nil, err
	}
	order, err := topoOrder(nodes)
	if err != nil {
		return nil, err
	}
	return pipeDreamLayers(nodes, order), nil
}

// parsePipeDream reads the node and edge lines; errors name the line.
func parsePipeDream(text string) ([]*pdNode, error) {
	var (
		es    model.Errors
		nodes []*pdNode
		index = map[string]int{}
		edges [][2]string
		lines []int // line of each edge
	)
	ln := 0
	for line := range strings.Lines(text) {
		ln++
		if len(es) >= maxErrors {
			return nil, es
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		where := fmt.Sprintf("line %d", ln)
		if line[0] == '\t' || line[0] == ' ' {
			parts := strings.Split(strings.TrimSpace(line), " -- ")
			if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
				es.Add(where, "an edge line (indented) must be \"src -- dst\", got %q", clip(line))
				continue
			}
			if len(edges) == maxEdges {
				es.Add(where, "the graph has more than %d edges", maxEdges)
				return nil, es
			}
			edges = append(edges, [2]string{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])})
			lines = append(lines, ln)
			continue
		}
		nd := parseNodeLine(&es, where, line)
		if nd == nil {
			continue
		}
		nd.line = ln
		if prev, dup := index[nd.id]; dup {
			es.Add(where, "node %q is already defined on line %d", nd.id, nodes[prev].line)
			continue
		}
		if len(nodes) == model.MaxLayers {
			es.Add(where, "the graph has more than %d nodes (model.MaxLayers)", model.MaxLayers)
			return nil, es
		}
		index[nd.id] = len(nodes)
		nodes = append(nodes, nd)
	}
	if len(es) == 0 && len(nodes) == 0 {
		es.Add("", "no node lines: a PipeDream graph.txt has lines \"node1 -- Desc -- forward_compute_time=..., backward_compute_time=..., activation_size=..., parameter_size=...\"")
	}
	seen := map[[2]int]bool{}
	for k, e := range edges {
		if len(es) >= maxErrors {
			break
		}
		src, okSrc := index[e[0]]
		dst, okDst := index[e[1]]
		for _, end := range []struct {
			id string
			ok bool
		}{{e[0], okSrc}, {e[1], okDst}} {
			if !end.ok {
				es.Add(fmt.Sprintf("line %d", lines[k]), "edge names node %q, which no node line defines", end.id)
			}
		}
		if !okSrc || !okDst || seen[[2]int{src, dst}] {
			continue
		}
		seen[[2]int{src, dst}] = true
		nodes[src].succs = append(nodes[src].succs, dst)
		nodes[dst].preds = append(nodes[dst].preds, src)
	}
	for _, nd := range nodes {
		if len(nd.preds) > 0 {
			continue
		}
		if other, clash := index[nd.id+inputSuffix]; clash {
			es.Add(fmt.Sprintf("line %d", nodes[other].line), "node id %q is also the name of the model input that source node %q reads: rename it", nodes[other].id, nd.id)
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	return nodes, nil
}

// parseNodeLine reads "id -- description -- key=value, ..." with an optional
// " -- stage_id=N" at the end.
func parseNodeLine(es *model.Errors, where, line string) *pdNode {
	tokens := strings.Split(line, " -- ")
	if len(tokens) >= 4 && strings.HasPrefix(strings.TrimSpace(tokens[len(tokens)-1]), "stage_id=") {
		tokens = tokens[:len(tokens)-1]
	}
	if len(tokens) < 3 {
		es.Add(where, "a node line must be \"id -- description -- forward_compute_time=MS, backward_compute_time=MS, activation_size=BYTES, parameter_size=BYTES\", got %q", clip(line))
		return nil
	}
	nd := &pdNode{
		id:   strings.TrimSpace(tokens[0]),
		desc: strings.TrimSpace(strings.Join(tokens[1:len(tokens)-1], " -- ")),
	}
	if nd.id == "" {
		es.Add(where, "the node id (before the first \" -- \") must not be empty")
		return nil
	}
	before := len(*es)
	got := map[string]bool{}
	for _, field := range strings.Split(tokens[len(tokens)-1], ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(field), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			es.Add(where, "expected key=value, got %q", clip(field))
			continue
		}
		if got[key] {
			es.Add(where, "%s is given twice", key)
			continue
		}
		got[key] = true
		at := where + ": " + key
		switch key {
		case "forward_compute_time":
			nd.fwdMs = millis(es, at, value)
		case "backward_compute_time":
			nd.bwdMs = millis(es, at, value)
		case "activation_size":
			nd.act = byteList(es, at, value)
		case "parameter_size":
			nd.param = byteCount(es, at, value)
		default:
			es.Add(where, "unknown field %q; expected forward_compute_time, backward_compute_time, activation_size, parameter_size", key)
		}
	}
	for _, key := range []string{"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"} {
		if !got[key] {
			es.Add(where, "%s is missing", key)
		}
	}
	if len(*es) > before {
		return nil
	}
	return nd
}

// clip shortens a quoted piece of input for an error message.
func clip(s string) string {
	const most = 80
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}

func parseFinite(es *model.Errors, at, s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		es.Add(at, "must be a number, got %q", clip(s))
	case math.IsNaN(f) || math.IsInf(f, 0):
		es.Add(at, "must be a finite number, got %q", clip(s))
	case f < 0:
		es.Add(at, "must be >= 0, got %s", s)
	default:
		return f, true
	}
	return 0, false
}

// millis reads a time in milliseconds.
func millis(es *model.Errors, at, s string) float64 {
	f, ok := parseFinite(es, at, s)
	if ok && f > maxMillis {
		es.Add(at, "must be at most %g ms, got %s", float64(maxMillis), s)
		return 0
	}
	return f
}

// byteCount reads a whole number of bytes. PipeDream prints sizes as floats
// ("411041792.000"); they are read exactly (parseWhole), and one with a fractional part
// is refused rather than rounded.
func byteCount(es *model.Errors, at, s string) int64 {
	if _, ok := parseFinite(es, at, s); !ok {
		return 0
	}
	v, kind := parseWhole(s)
	switch {
	case kind == notNumber:
		es.Add(at, "must be a decimal number of bytes, got %q", clip(s))
	case kind == fraction:
		es.Add(at, "must be a whole number of bytes, got %s", s)
	case kind == tooLarge || v > maxBytes:
		es.Add(at, "must be at most 2^60 bytes, got %s", s)
	default:
		return v
	}
	return 0
}

// byteList reads a byte count or a bracketed list "[a; b; c]" of them, summed.
func byteList(es *model.Errors, at, s string) int64 {
	inner, isList := strings.CutPrefix(s, "[")
	if !isList {
		return byteCount(es, at, s)
	}
	inner, closed := strings.CutSuffix(inner, "]")
	if !closed {
		es.Add(at, "a list of sizes must end with ']', got %q", clip(s))
		return 0
	}
	if strings.TrimSpace(inner) == "" {
		return 0
	}
	var sum int64
	for k, item := range strings.Split(inner, ";") {
		sum += byteCount(es, fmt.Sprintf("%s[%d]", at, k), strings.TrimSpace(item))
		if sum > maxBytes {
			es.Add(at, "sums to more than 2^60 bytes")
			return 0
		}
	}
	return sum
}

// topoOrder is Kahn's algorithm taking, among the nodes whose predecessors are all placed,
// the one with the least natural key ("node2" before "node10"). PipeDream numbers nodes in
// the order its profiler met them, so this keeps chains in their natural order. A cycle is
// an error naming its nodes.
func topoOrder(nodes []*pdNode) ([]int, error) {
	ready := &nodeHeap{nodes: nodes}
	for i, nd := range nodes {
		nd.sortKey = makeNaturalKey(nd.id)
		nd.unfinished = len(nd.preds)
		if nd.unfinished == 0 {
			ready.items = append(ready.items, i)
		}
	}
	heap.Init(ready)
	order := make([]int, 0, len(nodes))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		nodes[i].position = len(order)
		nodes[i].placed = true
		order = append(order, i)
		for _, s := range nodes[i].succs {
			if nodes[s].unfinished--; nodes[s].unfinished == 0 {
				heap.Push(ready, s)
			}
		}
	}
	if len(order) < len(nodes) {
		return nil, &model.FieldError{Reason: "the graph has a cycle: " + findCycle(nodes)}
	}
	return order, nil
}

// findCycle returns one cycle among the nodes Kahn's algorithm could not place, as
// "a -> b -> a". Every such node has an unplaced predecessor, so walking backwards along
// unplaced predecessors (the least key first, for a deterministic answer) must repeat.
func findCycle(nodes []*pdNode) string {
	start := -1
	for i, nd := range nodes {
		if !nd.placed && (start < 0 || nd.sortKey.less(nodes[start].sortKey)) {
			start = i
		}
	}
	step := map[int]int{} // node -> its index on the walk
	var walk []int
	for cur := start; ; {
		if k, seen := step[cur]; seen {
			walk = walk[k:]
			break
		}
		step[cur] = len(walk)
		walk = append(walk, cur)
		next := -1
		for _, p := range nodes[cur].preds {
			if !nodes[p].placed && (next < 0 || nodes[p].sortKey.less(nodes[next].sortKey)) {
				next = p
			}
		}
		cur = next
	}
	// The walk followed edges backwards: print it forwards, from its least node, closing
	// the loop.
	slices.Reverse(walk)
	least := 0
	for k := range walk {
		if nodes[walk[k]].sortKey.less(nodes[walk[least]].sortKey) {
			least = k
		}
	}
	walk = append(walk[least:], walk[:least+1]...)
	names := make([]string, len(walk))
	for k, i := range walk {
		names[k] = strconv.Quote(nodes[i].id)
	}
	return strings.Join(names, " -> ")
}

// pipeDreamLayers builds the model: one layer per node in topological order, each
// producing one tensor (its output activation) that its successors consume. A source
// node consumes a model input of its own activation's size: PipeDream's source nodes
// are its Input nodes, which pass the batch through.
func pipeDreamLayers(nodes []*pdNode, order []int) *model.Model {
	m := &model.Model{TimeUnit: model.Seconds, Layers: make([]model.Layer, len(order))}
	for k, i := range order {
		nd := nodes[i]
		l := &m.Layers[k]
		l.Name, l.Kind = nd.id, nd.desc
		l.ForwardSeconds = nd.fwdMs / 1000
		l.BackwardSeconds = nd.bwdMs / 1000
		l.ParamBytes = nd.param
		l.ActivationBytes = nd.act
		l.Outputs = []model.Tensor{{ID: nd.id, Bytes: nd.act}}
		if len(nd.preds) == 0 {
			in := model.Tensor{ID: nd.id + inputSuffix, Bytes: nd.act}
			m.Inputs = append(m.Inputs, in)
			l.InputIDs = []string{in.ID}
			continue
		}
		preds := slices.Clone(nd.preds)
		slices.SortFunc(preds, func(a, b int) int { return nodes[a].position - nodes[b].position })
		for _, p := range preds {
			l.InputIDs = append(l.InputIDs, nodes[p].id)
		}
	}
	return m
}

// naturalKey orders ids by their text before a trailing number, then by that number's
// value, then by the whole id: "node2" < "node10" < "node10a" ... deterministically.
type naturalKey struct {
	prefix, digits, id string
}

func makeNaturalKey(id string) naturalKey {
	end := len(id)
	start := end
	for start > 0 && id[start-1] >= '0' && id[start-1] <= '9' {
		start--
	}
	return naturalKey{prefix: id[:start], digits: strings.TrimLeft(id[start:end], "0"), id: id}
}

func (k naturalKey) less(o naturalKey) bool {
	switch {
	case k.prefix != o.prefix:
		return k.prefix < o.prefix
	case len(k.digits) != len(o.digits):
		return len(k.digits) < len(o.digits)
	case k.digits != o.digits:
		return k.digits < o.digits
	}
	return k.id < o.id
}

// nodeHeap is a min-heap of node indices by natural key.
type nodeHeap struct {
	nodes []*pdNode
	items []int
}

func (h *nodeHeap) Len() int { return len(h.items) }
func (h *nodeHeap) Less(a, b int) bool {
	return h.nodes[h.items[a]].sortKey.less(h.nodes[h.items[b]].sortKey)
}
func (h *nodeHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *nodeHeap) Push(x any)    { h.items = append(h.items, x.(int)) }
func (h *nodeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
