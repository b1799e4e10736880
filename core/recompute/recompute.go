// Package recompute chooses, for one pipeline stage, which layers (or which parts of a
// layer) recompute their forward pass in the backward pass, activation checkpointing,
// so that the stage fits its memory with the least extra time.
//
// # Model
//
// Every layer l has options (Choices[l]); option 0 is the layer as the model states it,
// keeping every activation its backward pass reads. Another option keeps less
// (Option.ActivationBytes: a recomputed layer keeps its input, the checkpoint, as
// Megatron-LM's per-layer full recomputation and PyTorch's torch.utils.checkpoint around
// one block do; the attention core's recomputation keeps Q, K and V but not the scores)
// and pays its forward again in the backward pass (Option.ExtraTime). A stage holding
// layers [a, b] with option o_l on each layer and k microbatches in flight allocates, as
// core/estimate costs a range of the model whose layers are replaced by their options,
//
//	always + max(M + (k-1) P, optimizer temporaries)
//	P = sum over l of A_l(o_l)
//	M = max(P, max over l of (T_l(o_l) + carry_l + sum over a <= j < l of A_j(o_j)))
//
// with A the activation bytes, T the temporary bytes and carry_l the tensors alive
// across layer l, and computes the layers' time plus sum over l of ExtraTime_l(o_l).
//
// # Method
//
// Exact: a dynamic program along the stage's layers whose states are (P, M, extra time)
// after each layer, keeping only the states that no other state dominates (another with
// no larger P, M and time): the dominance-list method of Nemhauser and Ullmann for the
// knapsack problem ("Discrete dynamic programming and capital allocation", Management
// Science 15(9), 1969), here for a multiple-choice knapsack whose weight has a peak
// term. A state's successors only grow in every coordinate and a stage's memory only
// grows with P and M, so a dominated state never leads to a better choice, and no
// memory is discretised (Rotor, Beaumont et al., "Optimal checkpointing for
// heterogeneous chains: how to train deep neural networks with limited memory", 2019,
// rounds memory to slots). Rotor's model differs: a chain whose checkpoints are
// sequenced, where a recomputed segment keeps one input; here each recomputed layer
// keeps its own input, which is what the frameworks' per-layer checkpointing runs.
//
// A Sweep grows a range one layer at a time from a fixed start, so that every range
// [a, b] of the partitioner's walk costs one step of the program, and answers for any
// stage (its memory left for the passes and its microbatches in flight) by a scan of the
// states: the least extra time that fits. The partitioner (core/partition's
// SolveSweep) makes this the stage's cost, so that the split and each stage's
// recomputation are optimal together.
//
// A step merges, rather than sorts, the successors of the states (kept sorted by time):
// each option adds the same time to every state, so its successors come sorted, and a
// k-way merge feeds the dominance test in order. An option of a layer that another of
// the same layer dominates makes only dominated successors, and is skipped.
//
// An architecture's blocks are alike: the states of a range depend only on its layers'
// options and carries, in order, not on where it starts. With Memoize, a sweep keeps the
// states of every range it has swept in a trie keyed by that sequence of layer classes,
// so that the ranges [a, a+j] of n alike blocks cost n steps over every start a, not
// n^2, and every later probe of the partitioner (the second pass of its program, each
// stage's cost, the choice of the options) reuses them; Best's answers are kept per
// trie node too. Among n alike layers the states are in effect multisets of options
// (an assignment and its permutations have the same P and time, and the least M among
// them dominates the rest), so a range of alike blocks keeps few states: the
// knapsack over counts of each option, not over every assignment.
package recompute

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// The parts an option recomputes (Option.Part).
const (
	// None keeps every activation (option 0).
	None = ""
	// Full recomputes the whole layer from its input.
	Full = wire.RecomputeLayer
	// Attention recomputes the attention core (scores, softmax, dropout and the
	// weighted sum) from Q, K and V: Korthikanti et al. 2022's selective recomputation,
	// Megatron-LM's core_attn module. Any other set of a block's parts is named by its
	// Megatron-LM modules joined by commas ("layernorm,moe_act"; analytic.Modules).
	Attention = wire.RecomputeAttention
)

// Variant is a model costed with some recomputation (Part names it).
type Variant struct {
	Part  string
	Model *model.Model
}

// Option is one way to run a layer in training.
type Option struct {
	// Part names what it recomputes (None, Full, Attention).
	Part string `json:"part"`
	// ActivationBytes and TemporaryBytes replace the layer's for one microbatch.
	ActivationBytes int64 `json:"activation_bytes"`
	TemporaryBytes  int64 `json:"temporary_bytes"`
	// ExtraTime is what the option adds to the layer's backward pass, in the model's
	// unit (seconds or cycles), on device 0.
	ExtraTime float64 `json:"extra_time"`
	// Covers names the parts of the options of the layer left out because this one
	// dominates them (Undominated): a global mode of such a part may take this option.
	Covers []string `json:"covers,omitempty"`
}

// Choices holds every layer's options; Choices[l][0] is layer l as the model states it.
type Choices [][]Option

// ForProfile returns the options of a measured profile in training: a layer may be
// recomputed whole, keeping its inputs (the tensors its inputs name; a Graphcore
// profile's recv_bytes when it names none) and running its forward again in the
// backward pass. A layer whose inputs are unknown, or no smaller than what it keeps,
// has option 0 only.
func ForProfile(m *model.Model) Choices {
	bytes := map[string]int64{}
	for _, t := range m.Inputs {
		bytes[t.ID] = t.Bytes
	}
	c := make(Choices, len(m.Layers))
	for l := range m.Layers {
		ly := &m.Layers[l]
		c[l] = []Option{{ActivationBytes: ly.ActivationBytes, TemporaryBytes: ly.TemporaryBytes}}
		in, known := int64(0), false
		for _, id := range ly.InputIDs {
			if b, ok := bytes[id]; ok {
				in, known = in+b, true
			}
		}
		if !known && ly.RecvBytes != nil {
			in, known = *ly.RecvBytes, true
		}
		if known && in < ly.ActivationBytes && m.Forward(l) >= 0 {
			c[l] = append(c[l], Option{Part: Full, ActivationBytes: in, TemporaryBytes: ly.TemporaryBytes, ExtraTime: m.Forward(l)})
		}
		for _, t := range ly.Outputs {
			bytes[t.ID] = t.Bytes
		}
	}
	return c
}

// FromVariants returns the options of a model costed several ways: base as it is
// planned (nothing recomputed), and the same model costed with each variant's
// recomputation (selective recomputation of some parts of every block, or full), any of
// whose models may be nil. Each variant layer's differences from none, the model costed
// with nothing recomputed before anything was added to its layers (ZeRO's gathered
// weights), are added to base's layer. An option that saves nothing is left out, and so
// is one that another option of the layer dominates (no more activation, temporary
// bytes and extra time, and less of one, or the same and listed earlier): no stage's
// best choice needs it, as a stage's memory and time only grow with those.
func FromVariants(base, none *model.Model, variants []Variant) (Choices, error) {
	n := len(base.Layers)
	for _, v := range variants {
		if v.Model != nil && len(v.Model.Layers) != n {
			return nil, fmt.Errorf("recompute: variant %s has %d layers, the model %d", v.Part, len(v.Model.Layers), n)
		}
	}
	if none != nil && len(none.Layers) != n {
		return nil, fmt.Errorf("recompute: the variant without recomputation has %d layers, the model %d", len(none.Layers), n)
	}
	c := make(Choices, n)
	for l := range base.Layers {
		b := &base.Layers[l]
		os := []Option{{ActivationBytes: b.ActivationBytes, TemporaryBytes: b.TemporaryBytes}}
		for _, v := range variants {
			if v.Model == nil || none == nil {
				continue
			}
			x, z := &v.Model.Layers[l], &none.Layers[l]
			o := Option{Part: v.Part,
				ActivationBytes: max(0, b.ActivationBytes+x.ActivationBytes-z.ActivationBytes),
				TemporaryBytes:  max(0, b.TemporaryBytes+x.TemporaryBytes-z.TemporaryBytes),
				ExtraTime:       max(0, (v.Model.Forward(l)+v.Model.Backward(l))-(none.Forward(l)+none.Backward(l))),
			}
			if o.ActivationBytes >= b.ActivationBytes {
				continue // keeps no less: never worth its time
			}
			os = append(os, o)
		}
		c[l] = Undominated(os)
	}
	return c, nil
}

// Undominated returns os (option 0 first, always kept) without the options another
// dominates: one with no more activation bytes, temporary bytes and extra time, and less
// of one, or all the same and earlier in os. Each option left out is named in the Covers
// of a kept option that dominates it.
func Undominated(os []Option) []Option {
	dominates := func(j, i int) bool {
		x, o := os[j], os[i]
		le := x.ActivationBytes <= o.ActivationBytes && x.TemporaryBytes <= o.TemporaryBytes && x.ExtraTime <= o.ExtraTime
		eq := x.ActivationBytes == o.ActivationBytes && x.TemporaryBytes == o.TemporaryBytes && x.ExtraTime == o.ExtraTime
		return j != i && le && (!eq || j < i)
	}
	kept := make([]bool, len(os))
	kept[0] = true
	for i := 1; i < len(os); i++ {
		kept[i] = true
		for j := range os {
			if dominates(j, i) {
				kept[i] = false
				break
			}
		}
	}
	out := make([]Option, 0, len(os))
	at := make([]int, len(os)) // index in out of each kept option
	for i, o := range os {
		if kept[i] {
			at[i] = len(out)
			out = append(out, o)
		}
	}
	// Dominance is a strict order (ties broken by position), so every option left out
	// has a kept option dominating it: the first such, by position, covers it.
	for i := 1; i < len(os); i++ {
		if kept[i] {
			continue
		}
		for j := range os {
			if kept[j] && j != 0 && dominates(j, i) {
				out[at[j]].Covers = append(out[at[j]].Covers, os[i].Part)
				break
			}
		}
	}
	return out
}

// Apply returns a copy of m whose layers run the chosen options (choice[l] indexes
// c[l]; a nil choice or a short one leaves the rest at option 0): activation and
// temporary bytes replaced, the extra time added to the backward pass (rounded up to
// whole cycles for a model in cycles).
func Apply(m *model.Model, c Choices, choice []int) *model.Model {
	out := *m
	out.Layers = append([]model.Layer(nil), m.Layers...)
	for l, k := range choice {
		if k <= 0 || l >= len(out.Layers) || k >= len(c[l]) {
			continue
		}
		o, ly := c[l][k], &out.Layers[l]
		ly.ActivationBytes, ly.TemporaryBytes = o.ActivationBytes, o.TemporaryBytes
		if m.Unit() == model.Cycles {
			ly.BackwardCycles += int64(o.ExtraTime + 0.5)
		} else {
			ly.BackwardSeconds += o.ExtraTime
		}
	}
	return &out
}

// state is one non-dominated choice of options for the layers swept so far: P, M and
// the extra time, and the node recording its choice (-1: the empty range).
type state struct {
	p, m int64
	t    float64
	node int32
}

// node records one layer's option of a state and its predecessor (-1: none).
type node struct {
	parent int32
	option int32
}

// trieNode holds the states of one sequence of layer classes swept from a range's start
// (Sweep.Memoize).
type trieNode struct {
	states []state
	// full: made with no filter from full states, so that any Extend may reuse it (a
	// filtered list serves only filtered Extends).
	full bool
	// version counts the times the node's list was replaced.
	version int32
}

// memoCap bounds the states the memo of a sweep holds (about 40 bytes each): past it,
// ranges are swept as without a memo.
const memoCap = 1 << 20

// Sweep runs the dynamic program over the layers [a, b] of one model as b grows.
type Sweep struct {
	c     Choices
	carry func(l int) int64
	a, b  int

	// class[l] is layer l's class: layers of one class have equal options and carry
	// (and label, Memoize); useful[k] are the options of class k that no other option of
	// the layer dominates, the only ones whose successors can be kept.
	class  []int32
	useful [][]int32
	label  func(l int) string

	// states are the range's, sorted by extra time: a memo node's (read-only) or buf[in].
	states []state
	buf    [2][]state
	in     int // the buffer states is in; -1 when a memo node's
	nodes  []node
	stairs []stair
	heads  []head
	// The memo (Memoize): trie[0] is the empty range, child maps a node and the next
	// layer's class to its node, cur is the range's node (-1: not memoised); the nodes
	// below kept belong to memoised states, the rest to the range's own.
	memo       bool
	trie       []trieNode
	child      map[uint64]int32
	cur        int32
	kept       int
	memoStates int
	answers    map[answerKey]answer

	maxStates int
	// made counts the states every Extend made; budget, when > 0, the most it may make
	// (Exceeded then says so, and Extend keeps none).
	made, budget int64
}

// head is one option's next successor in Extend's merge: of the state at index i.
type head struct {
	i    int
	p, m int64
	t    float64
}

// SetBudget bounds the states the sweep makes over its life (0: none), so that a model
// whose choices have very many trade-offs fails in bounded time; Exceeded reports that
// the bound was reached.
func (s *Sweep) SetBudget(states int64) { s.budget = states }

// Made is the number of states the sweep has made over its life.
func (s *Sweep) Made() int64 { return s.made }

// Exceeded reports whether the budget was reached (the sweep's answers since are not
// to be used).
func (s *Sweep) Exceeded() bool { return s.budget > 0 && s.made > s.budget }

// stair is a point (P, M) of the staircase of kept states: P ascending, M descending.
type stair struct{ p, m int64 }

// NewSweep returns a sweep over the options c; carry(l) is the bytes of earlier tensors
// alive across layer l (core/estimate's Estimator.CarryBytes).
func NewSweep(c Choices, carry func(l int) int64) *Sweep {
	s := &Sweep{c: c, carry: carry, in: -1, cur: -1}
	s.classify()
	return s
}

// Memoize makes the sweep keep the states of every range it sweeps, by the sequence of
// its layers' classes from the range's start, so that a range whose layers are alike,
// layer by layer, to those of a range swept before (the blocks of an architecture, from
// any start) costs no work: a layer's class is its options, its carry and label(l)
// (nil: ""). Extend's keep must then depend only on the range's labels (and may grow
// stricter with time: a list kept under a laxer filter holds every state a stricter
// one would, and more). Memory is bounded (memoCap states); past it, ranges are swept
// as without a memo, and so they are where the layers fall in more classes than half
// their number.
func (s *Sweep) Memoize(label func(l int) string) {
	s.label = label
	s.classify()
	// Where most layers are unlike (a measured profile), few ranges share their states:
	// the memo would only hold every list swept.
	if s.memo = 2*len(s.useful) <= len(s.c); !s.memo {
		return
	}
	s.trie = []trieNode{{states: []state{{node: -1}}, full: true}}
	s.child = map[uint64]int32{}
	s.answers = map[answerKey]answer{}
	s.nodes, s.kept, s.memoStates = s.nodes[:0], 0, 1
	s.cur, s.in = -1, -1
	s.states = nil
}

// classify numbers the layers' classes and finds each class's useful options.
func (s *Sweep) classify() {
	ids := map[string]int32{}
	s.class = make([]int32, len(s.c))
	s.useful = s.useful[:0]
	var key []byte
	for l, os := range s.c {
		if l > 0 && s.alike(l-1, l) {
			s.class[l] = s.class[l-1] // a block like the one before: the common case
			continue
		}
		key = strconv.AppendInt(key[:0], s.carry(l), 36)
		if s.label != nil {
			lb := s.label(l)
			key = strconv.AppendInt(append(key, '|'), int64(len(lb)), 36)
			key = append(append(key, '|'), lb...)
		}
		for _, o := range os {
			key = strconv.AppendQuote(append(key, '|'), o.Part)
			key = strconv.AppendInt(append(key, '|'), o.ActivationBytes, 36)
			key = strconv.AppendInt(append(key, '|'), o.TemporaryBytes, 36)
			key = strconv.AppendUint(append(key, '|'), math.Float64bits(o.ExtraTime), 36)
		}
		id, ok := ids[string(key)]
		if !ok {
			id = int32(len(s.useful))
			ids[string(key)] = id
			s.useful = append(s.useful, usefulOptions(os))
		}
		s.class[l] = id
	}
}

// alike reports whether layers j and l have the same class, compared directly.
func (s *Sweep) alike(j, l int) bool {
	if s.carry(j) != s.carry(l) || len(s.c[j]) != len(s.c[l]) || s.label != nil && s.label(j) != s.label(l) {
		return false
	}
	for i, o := range s.c[j] {
		x := s.c[l][i]
		if o.Part != x.Part || o.ActivationBytes != x.ActivationBytes || o.TemporaryBytes != x.TemporaryBytes || math.Float64bits(o.ExtraTime) != math.Float64bits(x.ExtraTime) {
			return false
		}
	}
	return true
}

// usefulOptions are the indices of the options that no other dominates (no more
// activation, temporary bytes and extra time, and less of one, or all the same and
// earlier): the successors of a dominated option are dominated by those of the option
// dominating it, from the same state.
func usefulOptions(os []Option) []int32 {
	var out []int32
	for i, o := range os {
		dominated := false
		for j, x := range os {
			le := x.ActivationBytes <= o.ActivationBytes && x.TemporaryBytes <= o.TemporaryBytes && x.ExtraTime <= o.ExtraTime
			eq := x.ActivationBytes == o.ActivationBytes && x.TemporaryBytes == o.TemporaryBytes && x.ExtraTime == o.ExtraTime
			if j != i && le && (!eq || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, int32(i))
		}
	}
	return out
}

// Reset starts a range at layer a with no layer in it yet; Extend adds layer a first.
func (s *Sweep) Reset(a int) {
	s.a, s.b = a, a-1
	s.nodes = s.nodes[:s.kept]
	if s.memo {
		s.cur, s.in, s.states = 0, -1, s.trie[0].states
		return
	}
	s.in = 0
	s.buf[0] = append(s.buf[0][:0], state{node: -1})
	s.states = s.buf[0]
}

// First and Last are the range's layers (Last < First before the first Extend).
func (s *Sweep) First() int { return s.a }
func (s *Sweep) Last() int  { return s.b }

// States is the number of states kept: the work of the next Extend and of a query.
func (s *Sweep) States() int { return len(s.states) }

// MaxStates is the most states any step of the sweep has kept since it was made.
func (s *Sweep) MaxStates() int { return s.maxStates }

// Extend adds the layer after the range, keeping only the states for which keep (nil:
// every state) reports true given their P, M and extra time: a caller drops those no
// stage can use, as M, P and the time only grow (a state whose memory fits no stage, or
// whose time exceeds what any range needs). It reports whether any state is left.
func (s *Sweep) Extend(keep func(p, m int64, t float64) bool) bool {
	s.b++
	l := s.b
	cls := s.class[l]
	var key uint64
	if s.cur >= 0 {
		key = uint64(s.cur)<<32 | uint64(uint32(cls))
		if ch, ok := s.child[key]; ok && (keep != nil || s.trie[ch].full) {
			s.cur, s.states = ch, s.trie[ch].states
			return len(s.states) > 0
		}
	}
	out := 0
	if s.in == 0 {
		out = 1
	}
	s.buf[out] = s.merge(s.buf[out][:0], l, s.useful[cls], keep)
	if s.Exceeded() {
		s.states, s.cur = nil, -1
		return false
	}
	s.maxStates = max(s.maxStates, len(s.buf[out]))
	if s.cur >= 0 && s.memoStates+len(s.buf[out]) <= memoCap {
		n := trieNode{states: slices.Clone(s.buf[out]), full: keep == nil && s.trie[s.cur].full}
		ch, ok := s.child[key]
		if ok {
			// A full list where a filtered one was: Best's answers, state indices of
			// the list replaced, are keyed by the old version.
			n.version = s.trie[ch].version + 1
			s.trie[ch] = n
		} else {
			ch = int32(len(s.trie))
			s.trie = append(s.trie, n)
			s.child[key] = ch
		}
		s.memoStates += len(n.states)
		s.kept = len(s.nodes)
		s.cur, s.in, s.states = ch, -1, n.states
		return len(s.states) > 0
	}
	s.cur, s.in, s.states = -1, out, s.buf[out]
	return len(s.states) > 0
}

// merge appends to dst the states of the range extended by layer l that no other
// dominates, sorted by time (then P, M, and the order in which they are made: by
// predecessor, then option). Each option's successors of the range's states, sorted by
// time, are sorted by time too (adding a constant keeps the order), so the lists are
// merged rather than sorted; a state is kept when no kept one has P and M no larger,
// which the staircase of kept (P, M) answers by one binary search.
func (s *Sweep) merge(dst []state, l int, useful []int32, keep func(p, m int64, t float64) bool) []state {
	src, os, carry := s.states, s.c[l], s.carry(l)
	hs := s.heads[:0]
	for range useful {
		hs = append(hs, head{i: -1})
	}
	s.heads = hs
	// next moves option k's head to its next successor that keep keeps (i = len(src):
	// none left).
	next := func(k int) {
		o := &os[useful[k]]
		h := &hs[k]
		for h.i++; h.i < len(src); h.i++ {
			st := &src[h.i]
			// The working peak as core/estimate and the schedule's simulation charge it
			// (model.WorkingPeakBytes): at least the activations kept. It grows with
			// st.p and st.m, so the successors keep their order.
			h.p, h.t = st.p+o.ActivationBytes, st.t+o.ExtraTime
			h.m = model.WorkingPeakBytes(max(st.m, o.TemporaryBytes+carry+st.p), h.p)
			if keep == nil || keep(h.p, h.m, h.t) {
				s.made++
				return
			}
		}
	}
	for k := range hs {
		next(k)
	}
	s.stairs = s.stairs[:0]
	for {
		best := -1
		for k := range hs {
			h := &hs[k]
			if h.i >= len(src) {
				continue
			}
			if best < 0 {
				best = k
				continue
			}
			b := &hs[best]
			if h.t < b.t || h.t == b.t && (h.p < b.p || h.p == b.p && (h.m < b.m || h.m == b.m && h.i < b.i)) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		h := &hs[best]
		// The kept point with the largest P <= h.p has the least M among those.
		lo, hi := 0, len(s.stairs)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if s.stairs[mid].p <= h.p {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		i := lo
		if i == 0 || s.stairs[i-1].m > h.m {
			s.nodes = append(s.nodes, node{parent: src[h.i].node, option: useful[best]})
			dst = append(dst, state{p: h.p, m: h.m, t: h.t, node: int32(len(s.nodes) - 1)})
			// Insert (p, m) at i, dropping the points at or after it that it now dominates.
			j := i
			for j < len(s.stairs) && s.stairs[j].m >= h.m {
				j++
			}
			s.stairs = slices.Replace(s.stairs, i, j, stair{h.p, h.m})
		}
		next(best)
	}
	return dst
}

// Best returns the least extra time of the range on a stage with k microbatches in
// flight whose passes may use budget bytes (its allocatable memory less the range's
// always-alive memory), the state's index for Choice, and whether any state fits.
// Among states of equal time the one with the least memory wins.
func (s *Sweep) Best(budget int64, k int) (extra float64, at int, ok bool) {
	k1 := int64(max(1, k) - 1)
	if s.cur >= 0 {
		// A memoised range is asked again with the same budgets (the same stage from
		// another start, another probe of the partitioner).
		key := answerKey{s.cur, s.trie[s.cur].version, k1, budget}
		if a, hit := s.answers[key]; hit {
			return a.extra, a.at, a.at >= 0
		}
		extra, at, ok = s.best(budget, k1)
		s.answers[key] = answer{extra, at}
		return extra, at, ok
	}
	return s.best(budget, k1)
}

// answer is a memoised Best: at -1 where no state fits.
type answer struct {
	extra float64
	at    int
}

// answerKey is a trie node's list and a query of Best: in flight - 1, budget.
type answerKey struct {
	node, version int32
	k1, budget    int64
}

// best is Best over the range's states, k1 = in flight - 1.
func (s *Sweep) best(budget, k1 int64) (extra float64, at int, ok bool) {
	at = -1
	var mem int64
	for i := range s.states {
		st := &s.states[i]
		if at >= 0 && st.t > extra {
			break // sorted by time
		}
		if v := st.m + k1*st.p; v <= budget && (at < 0 || v < mem) {
			extra, at, mem = st.t, i, v
		}
	}
	return extra, at, at >= 0
}

// Least returns the state needing the least memory with k in flight (for a range that
// fits with no choice: a given split's stage over its limit shows what it needs at best).
func (s *Sweep) Least(k int) int {
	k1 := int64(max(1, k) - 1)
	at := -1
	var mem int64
	for i := range s.states {
		if v := s.states[i].m + k1*s.states[i].p; at < 0 || v < mem {
			at, mem = i, v
		}
	}
	return at
}

// StateAt returns state at's extra time, P and M (from Best or Least).
func (s *Sweep) StateAt(at int) (extra float64, p, m int64) {
	st := &s.states[at]
	return st.t, st.p, st.m
}

// Choice returns the options of state at (from Best or Least) for the layers
// [First, Last]: choice[l - First] indexes Choices[l].
func (s *Sweep) Choice(at int) []int {
	out := make([]int, s.b-s.a+1)
	for nd, i := s.states[at].node, len(out)-1; nd >= 0 && i >= 0; nd, i = s.nodes[nd].parent, i-1 {
		out[i] = int(s.nodes[nd].option)
	}
	return out
}
