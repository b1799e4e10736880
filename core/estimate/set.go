package estimate

import "pipeplan/core/model"

// SetCoster costs stages that are sets of layers rather than ranges: the convex stages of
// a split of the model's tensor graph (core/dagsplit). A stage holding the layers of set
// after the layers of an ideal before (every producer of a tensor a member reads is a
// member or a model input) costs exactly what Range says of the range those layers form
// in a layer order that puts before's layers first, then set's (ascending), then the
// rest: a topological order, in which the split's stages are contiguous. So a stage
// receives every tensor that crosses the cut before it (produced before it, read by it or
// by a later stage: a tensor a later stage reads passes through), keeps it alive as a
// range does, and sends every tensor that crosses the cut after it. The optimizer's
// temporaries (Options.OptimizerTempBytes) are summed over the set's maximal runs of
// consecutive layers, which is their value when, as the request's, they add up over
// layers.
//
// Layers that state their own RecvBytes or SendBytes, and clusters that charge the host
// on every stage, are costed by ranges only (Graphable says why).
type SetCoster struct {
	e       *Estimator
	tensors []setTensor
	preds   [][]int
	hostIn  int64
	hostOut int64
	// scratch
	pos   []int32 // position of each layer in the set, or -1
	carry []int64
	stamp []int32 // per shared key: the call that last counted it
	call  int32
}

type setTensor struct {
	producer  int // -1: a model input
	bytes     int64
	consumers []int // distinct, ascending
}

// NewSetCoster prepares a SetCoster: O(n + tensors).
func (e *Estimator) NewSetCoster() *SetCoster {
	s := &SetCoster{e: e, preds: make([][]int, e.n), pos: make([]int32, e.n), stamp: make([]int32, len(e.keys))}
	index := make(map[string]int, len(e.m.Inputs)+e.n)
	for _, t := range e.m.Inputs {
		index[t.ID] = len(s.tensors)
		s.tensors = append(s.tensors, setTensor{producer: -1, bytes: t.Bytes})
		s.hostIn += t.Bytes
	}
	for l, layer := range e.m.Layers {
		for _, id := range layer.InputIDs {
			k, ok := index[id]
			if !ok {
				continue // Validate refuses it
			}
			t := &s.tensors[k]
			if c := t.consumers; len(c) == 0 || c[len(c)-1] != l {
				t.consumers = append(t.consumers, l)
				if q := t.producer; q >= 0 && (len(s.preds[l]) == 0 || s.preds[l][len(s.preds[l])-1] != q) {
					s.preds[l] = appendSorted(s.preds[l], q)
				}
			}
		}
		if len(layer.InputIDs) == 0 && l > 0 {
			// A layer that names no input reads, as far as the profile says, what runs
			// before it: the layer order is its only dependency.
			s.preds[l] = []int{l - 1}
		}
		for _, t := range layer.Outputs {
			index[t.ID] = len(s.tensors)
			s.tensors = append(s.tensors, setTensor{producer: l, bytes: t.Bytes})
		}
	}
	for _, t := range s.tensors {
		if t.producer >= 0 && len(t.consumers) == 0 {
			s.hostOut += t.bytes
		}
	}
	for l := range s.pos {
		s.pos[l] = -1
	}
	return s
}

func appendSorted(xs []int, x int) []int {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	xs = append(xs, x)
	for k := len(xs) - 1; k > 0 && xs[k] < xs[k-1]; k-- {
		xs[k], xs[k-1] = xs[k-1], xs[k]
	}
	return xs
}

// Preds lists the layers whose outputs layer l reads, ascending; a layer that names no
// input (l > 0) depends on the layer before it.
func (s *SetCoster) Preds(l int) []int { return s.preds[l] }

// Work is layer l's compute at speed scale 1, as a set's is summed: forward, plus
// backward in training.
func (s *SetCoster) Work(l int) float64 {
	t := s.e.m.Forward(l)
	if !s.e.opt.Inference {
		t += s.e.m.Backward(l)
	}
	return t
}

// Graphable says why the model and cluster cannot be split as a graph ("" when they can):
// a layer's stated RecvBytes or SendBytes describe the cut before or after it in the
// layer order, and a cluster that charges the host on every stage (HostEveryStage)
// exchanges with neighbours in that order.
func (s *SetCoster) Graphable() string {
	if s.e.c.HostEveryStage {
		return "the cluster charges host transfers on every stage (host_every_stage), which only ranges of the layer order express"
	}
	for _, l := range s.e.m.Layers {
		if l.RecvBytes != nil || l.SendBytes != nil {
			return "layer " + l.Name + " states its recv_bytes or send_bytes, which describe cuts of the layer order"
		}
	}
	return ""
}

// Stages costs the stage holding the layers of set (ascending) after the layers marked
// in before, on every stage: out[i] for stage i (len(out) == Stages()). O(|set| + the
// model's tensors).
func (s *SetCoster) Stages(before []bool, set []int, out []Range) {
	e := s.e
	k := len(set)
	for x, l := range set {
		s.pos[l] = int32(x)
	}
	defer func() {
		for _, l := range set {
			s.pos[l] = -1
		}
	}()
	all := len(set) // layers in before ∪ set
	for l := range e.n {
		if before[l] {
			all++
		}
	}
	isFirst, isFull := all == len(set), all == e.n

	if cap(s.carry) < k+1 {
		s.carry = make([]int64, k+1)
	}
	carry := s.carry[:k+1]
	clear(carry)
	var recv, send int64
	for _, t := range s.tensors {
		if len(t.consumers) == 0 {
			continue
		}
		var from int // the first position it is carried across
		switch {
		case t.producer < 0 || before[t.producer]:
			from = 0
		case s.pos[t.producer] >= 0:
			from = int(s.pos[t.producer]) + 1
		default:
			continue // produced after the stage
		}
		last, outI, outJ := -1, false, false
		for _, c := range t.consumers {
			switch {
			case s.pos[c] >= 0:
				last, outI = max(last, int(s.pos[c])), true
			case !before[c]:
				outI, outJ = true, true
			}
		}
		if outJ {
			last = k // read after the stage: carried to its end
		}
		if from == 0 && outI {
			recv += t.bytes // produced before the cut before the stage, read after it
		}
		if outJ {
			send += t.bytes // crosses the cut after the stage
		}
		if last > from {
			carry[from] += t.bytes
			carry[last] -= t.bytes
		}
	}
	if isFirst {
		recv = s.hostIn
	}
	if isFull {
		send = s.hostOut
	}

	s.call++
	if s.call == 0 { // wrapped: clear the stamps
		clear(s.stamp)
		s.call = 1
	}
	var time float64
	var shared, peak, act, run, temp int64
	for x, l := range set {
		layer := &e.m.Layers[l]
		time += s.Work(l)
		for _, en := range e.entries[e.entryAt[l]:e.entryAt[l+1]] {
			if s.stamp[en.key] != s.call {
				s.stamp[en.key] = s.call
				shared += en.size
			}
		}
		run += carry[x]
		peak = max(peak, layer.TemporaryBytes+layer.CarryOverBytes+run+act)
		if !e.opt.Inference {
			act += layer.ActivationBytes
		}
		if e.opt.OptimizerTempBytes != nil && !e.opt.Inference && (x+1 == k || set[x+1] != l+1) {
			first := x
			for first > 0 && set[first-1] == set[first]-1 {
				first--
			}
			temp = min(temp+max(0, e.opt.OptimizerTempBytes(set[first], l)), maxOptimizerTemp)
		}
	}
	var param, opt, excl int64
	for _, l := range set {
		layer := &e.m.Layers[l]
		param += layer.ParamBytes
		opt += layer.OptimizerBytes
		excl += layer.ExclusiveBytes
	}
	for i := range out {
		r := Range{Stage: i, InFlight: int(e.inFlight[i]), LimitBytes: e.limit[i]}
		if k > 0 {
			r.First, r.Last = set[0], set[k-1]
		}
		r.Compute = time * e.scale[i]
		r.RecvBytes, r.SendBytes = recv, send
		r.Transfer = e.recvCost[i].time(recv) + e.sendCost[i].time(send)
		r.ParamBytes, r.OptimizerBytes, r.ExclusiveBytes, r.SharedBytes = param, opt, excl, shared
		r.PeakBytes, r.ActivationBytes = model.WorkingPeakBytes(peak, act), act
		if e.opt.Recompute {
			r.StashBytes = (e.inFlight[i] - 1) * recv
		} else {
			r.StashBytes = (e.inFlight[i] - 1) * act
		}
		r.OptimizerTempBytes = temp
		alloc := r.ParamBytes + r.OptimizerBytes + r.ExclusiveBytes + r.SharedBytes + max(r.PeakBytes+r.StashBytes, r.OptimizerTempBytes)
		r.ReservedBytes = e.reserve(alloc)
		r.FrameworkBytes = e.opt.FixedBytes
		r.MemoryBytes = e.device(alloc)
		out[i] = r
	}
}

// CarryBytes writes into out (grown to len(set)) what the last call of Stages found
// alive across each of set's layers besides its own temporaries and what the stage's
// earlier layers keep: the earlier tensors it carries (received before the stage, or
// made by an earlier member, and read at or after that layer or after the stage) and the
// layer's CarryOverBytes, as Estimator.CarryBytes says of a layer of a range. set must
// be the set Stages was last called with. O(len(set)).
func (s *SetCoster) CarryBytes(set []int, out []int64) []int64 {
	out = out[:0]
	var run int64
	for x, l := range set {
		run += s.carry[x]
		out = append(out, s.e.m.Layers[l].CarryOverBytes+run)
	}
	return out
}
