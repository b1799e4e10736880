package estimate

import (
	"fmt"
	"math"
	"sort"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/units"
)

// maxTime bounds every compute and transfer time of a range, in the model's unit: far
// beyond any real time (1e100 seconds), and low enough that sums of stage times and of
// their squares (the partitioner's tie-break) stay finite. Finite but extreme inputs (times
// near math.MaxFloat64, speed ratios of 1e300, bandwidths of 1e-300) would otherwise give
// infinite or NaN costs, which no split can be compared by.
const maxTime = 1e100

// checkComputeTimes requires the model's total time to be within maxTime on every device.
// Compute of any range is at most the total times the device's speed scale.
func (e *Estimator) checkComputeTimes() error {
	total, unit := e.time[e.n], e.m.Unit()
	if !(total <= maxTime) { // also NaN and +Inf
		return &model.FieldError{Path: "layers", Reason: fmt.Sprintf("times add up to %.3g %s, more than %g: check the units", total, unit, maxTime)}
	}
	field := e.c.SpeedField()
	for i, s := range e.scale {
		path := func() string { return fmt.Sprintf("devices[%d].%s", i, field) } // written only for an error
		switch {
		case !(s > 0) || math.IsInf(s, 0):
			return &model.FieldError{Path: path(), Reason: fmt.Sprintf("makes device %d %.3g times as slow as device 0, which must be a finite ratio > 0: check the units", i, s)}
		case !(total*s <= maxTime):
			return &model.FieldError{Path: path(), Reason: fmt.Sprintf("makes device %d %.3g times as slow as device 0: the model's layers would take it %.3g %s, more than %g: check the units", i, s, total*s, unit, maxTime)}
		}
	}
	return nil
}

// maxByteTotal bounds the model's byte total times (microbatches in flight + 1): 2^62
// bytes, 4 EiB.
const maxByteTotal = 1 << 62

// checkByteTotal keeps every memory sum the estimator forms within int64. A range's memory
// adds up distinct byte counts of the model (parameters, optimizer state, exclusive,
// shared, temporary, carried and activation bytes, tensors) plus in flight - 1 times its
// activations or input, so it is at most (in flight) times B, the sum of every byte count
// of the model. Requiring B * (most in flight + 1) <= 2^62 leaves every sum, lower bound
// and difference below 2^62. model.Validate bounds each count by 2^60, not their sum.
func (e *Estimator) checkByteTotal() error {
	var most int64 = 1
	for _, k := range e.inFlight {
		most = max(most, k)
	}
	limit := int64(0)
	if most < maxByteTotal {
		limit = maxByteTotal / (most + 1)
	}
	var sum int64
	add := func(v int64) { // saturates just above limit; counts are >= 0 once validated
		if v > 0 {
			sum += min(v, limit+1-sum)
		}
	}
	for _, t := range e.m.Inputs {
		add(t.Bytes)
	}
	for i := range e.m.Layers {
		l := &e.m.Layers[i]
		for _, v := range []int64{l.ParamBytes, l.OptimizerBytes, l.ExclusiveBytes, l.TemporaryBytes, l.ActivationBytes, l.CarryOverBytes} {
			add(v)
		}
		if l.RecvBytes != nil {
			add(*l.RecvBytes)
		}
		if l.SendBytes != nil {
			add(*l.SendBytes)
		}
		for _, v := range l.Shared {
			add(v)
		}
		for _, t := range l.Outputs {
			add(t.Bytes)
		}
	}
	if sum <= limit {
		return nil
	}
	reason := fmt.Sprintf("byte counts add up to more than %s: check the units", units.Bytes(limit))
	if most > 1 {
		reason = fmt.Sprintf("byte counts add up to more than %s, which %d microbatches in flight could multiply beyond 4 EiB: check the units", units.Bytes(limit), most)
	}
	return &model.FieldError{Path: "layers", Reason: reason}
}

// prepareLinks notes each stage's receive and send links and refuses a link that takes
// more than maxTime (or an infinite time) to move some transfer: O(n + p), no table of
// stages x layers. A link's time only grows with the bytes it moves, so a stage's largest
// transfer decides; only when it is too slow are the cuts scanned, in order, for the first
// transfer that is, so that the error names the same one a scan of every cut would.
func (e *Estimator) prepareLinks() error {
	n, p := e.n, e.p
	e.recvLink = make([]*cluster.Link, p)
	e.sendLink = make([]*cluster.Link, p)
	e.recvCost = make([]linkCost, p)
	e.sendCost = make([]linkCost, p)
	for i := range p {
		e.recvLink[i], e.sendLink[i] = e.c.RecvLink(i), e.c.SendLink(i)
		e.recvCost[i], e.sendCost[i] = e.newLinkCost(e.recvLink[i], i), e.newLinkCost(e.sendLink[i], i)
	}
	if n == 0 || p == 0 {
		return nil
	}
	// check reports whether link l of stage i moves bytes within maxTime, and if not
	// returns the field error naming it, field(i) (written only then: this runs for
	// every plan a search costs).
	check := func(l *cluster.Link, field func(int) string, bytes int64, i int) error {
		if t := e.linkTime(l, bytes, i); !(t <= maxTime) { // also NaN and +Inf
			return &model.FieldError{Path: field(i), Reason: fmt.Sprintf("takes %.3g %s to move %d bytes for device %d, more than %g: check its bandwidth and the units",
				t, e.m.Unit(), bytes, i, maxTime)}
		}
		return nil
	}
	if e.c.HostEveryStage {
		if err := check(e.recvLink[0], e.c.RecvLinkField, e.recvBytes[0], 0); err != nil {
			return err
		}
		if err := check(e.sendLink[p-1], e.c.SendLinkField, e.sendBytes[n-1], p-1); err != nil {
			return err
		}
		e.hostTime = e.linkTime(e.recvLink[0], e.recvBytes[0], 0) + e.linkTime(e.sendLink[p-1], e.sendBytes[n-1], p-1)
	}
	var maxRecv, maxSend int64
	for l := range n {
		maxRecv, maxSend = max(maxRecv, e.recvBytes[l]), max(maxSend, e.sendBytes[l])
	}
	for i := range p {
		recvField, sendField := e.c.RecvLinkField, e.c.SendLinkField
		// The bytes stage i may receive and send: what any cut moves, or only the model's
		// input and output at the ends of the pipeline.
		in, out := maxRecv, maxSend
		recvAll, sendAll := true, true
		switch {
		case e.c.HostEveryStage:
			// Exchanges with neighbour stages only; the host terms are checked above.
			recvAll, sendAll = i > 0, i < p-1
		default:
			if i == 0 {
				in, recvAll = e.recvBytes[0], false
			}
			if i == p-1 {
				out, sendAll = e.sendBytes[n-1], false
			}
		}
		recvOK := !recvAll && e.c.HostEveryStage || check(e.recvLink[i], recvField, in, i) == nil
		sendOK := !sendAll && e.c.HostEveryStage || check(e.sendLink[i], sendField, out, i) == nil
		if recvOK && sendOK {
			continue
		}
		for l := range n {
			switch {
			case recvAll:
				if err := check(e.recvLink[i], recvField, e.recvBytes[l], i); err != nil {
					return err
				}
			case !recvOK:
				return check(e.recvLink[i], recvField, in, i)
			}
			switch {
			case sendAll:
				if err := check(e.sendLink[i], sendField, e.sendBytes[l], i); err != nil {
					return err
				}
			case !sendOK:
				return check(e.sendLink[i], sendField, out, i)
			}
		}
	}
	return nil
}

func (e *Estimator) hasLink(i int) bool {
	l1, l2 := e.c.RecvLink(i), e.c.SendLink(i)
	return (l1 != nil && !l1.CyclesStyle()) || (l2 != nil && !l2.CyclesStyle())
}

func (e *Estimator) prepareSums() {
	n := e.n
	e.time = make([]float64, n+1)
	e.static = make([]int64, n+1)
	e.act = make([]int64, n+1)
	for i := range e.m.Layers {
		l := &e.m.Layers[i]
		t := e.m.Forward(i)
		if !e.opt.Inference {
			t += e.m.Backward(i)
		}
		e.time[i+1] = e.time[i] + t
		e.static[i+1] = e.static[i] + l.ParamBytes + l.OptimizerBytes + l.ExclusiveBytes
		a := l.ActivationBytes
		if e.opt.Inference {
			// In inference an activation lives only until its consumers ran; the tensor
			// graph (carry-over) accounts for that, so nothing accumulates.
			a = 0
		}
		e.act[i+1] = e.act[i] + a
	}
}

// prepareTensors finds, from each tensor's producer and last consumer, the bytes carried
// across each layer and crossing each cut, with difference arrays and prefix sums (Graphcore's auto-pipeline tool).
func (e *Estimator) prepareTensors() {
	n := e.n
	type span struct {
		producer, lastUse int
		bytes             int64
	}
	// A tensor is found by its id, as an index into order: one map of n entries sized at
	// once, not n spans allocated one by one.
	spans := make(map[string]int, len(e.m.Inputs)+n)
	order := make([]span, 0, len(e.m.Inputs)+n)
	var hostIn int64
	for _, t := range e.m.Inputs {
		spans[t.ID] = len(order)
		order = append(order, span{producer: -1, lastUse: -1, bytes: t.Bytes})
		hostIn += t.Bytes
	}
	for i, l := range e.m.Layers {
		for _, id := range l.InputIDs {
			k, ok := len(order)-1, e.m.FromPrevious(i, id)
			if !ok { // not the previous layer's output (most are): look it up
				k, ok = spans[id]
			}
			if ok && i > order[k].lastUse {
				order[k].lastUse = i
			}
		}
		for _, t := range l.Outputs {
			spans[t.ID] = len(order)
			order = append(order, span{producer: i, lastUse: -1, bytes: t.Bytes})
		}
	}
	carry := make([]int64, n+1) // layers strictly between producer and last use
	cross := make([]int64, n+2) // cuts k with producer < k <= lastUse
	var hostOut int64
	for _, s := range order {
		if s.lastUse < 0 {
			if s.producer >= 0 {
				hostOut += s.bytes // never consumed: a model output
			}
			continue
		}
		if s.lastUse-s.producer > 1 {
			carry[s.producer+1] += s.bytes
			carry[s.lastUse] -= s.bytes
		}
		cross[s.producer+1] += s.bytes
		cross[s.lastUse+1] -= s.bytes
	}
	e.peakAt = make([]int64, n)
	defer func() { e.peak = newMaxTable(e.peakAt) }()
	e.recvBytes = make([]int64, n)
	e.sendBytes = make([]int64, n)
	var run, cut int64
	cuts := make([]int64, n+1)
	for k := 0; k <= n; k++ {
		cut += cross[k]
		cuts[k] = cut
	}
	for i, l := range e.m.Layers {
		run += carry[i]
		e.peakAt[i] = l.TemporaryBytes + l.CarryOverBytes + run + e.act[i]
		e.recvBytes[i] = cuts[i]
		if i == 0 {
			e.recvBytes[i] = hostIn
		}
		if l.RecvBytes != nil {
			e.recvBytes[i] = *l.RecvBytes
		}
		if i+1 < n {
			e.sendBytes[i] = cuts[i+1]
		} else {
			e.sendBytes[i] = hostOut
		}
		if l.SendBytes != nil {
			e.sendBytes[i] = *l.SendBytes
		}
	}
}

// prepareTies marks the cuts no tie group spans: a range keeps a group whole exactly when
// neither of its two cuts falls inside the group's first..last occurrence.
func (e *Estimator) prepareTies() {
	first, last := map[string]int{}, map[string]int{}
	for i, l := range e.m.Layers {
		if l.TieGroup == "" {
			continue
		}
		if _, ok := first[l.TieGroup]; !ok {
			first[l.TieGroup] = i
		}
		last[l.TieGroup] = i
	}
	inside := make([]int, e.n+2)
	for g, f := range first {
		inside[f+1]++
		inside[last[g]+1]--
	}
	e.cutOK = make([]bool, e.n+1)
	run := 0
	for k := 0; k <= e.n; k++ {
		run += inside[k]
		e.cutOK[k] = run == 0
	}
}

func (e *Estimator) prepareShared() {
	ids := map[string]int32{}
	e.entryAt = make([]int32, e.n+1)
	var last []int32 // per key, its latest entry so far
	varying := false
	var names []string
	for i, l := range e.m.Layers {
		e.entryAt[i] = int32(len(e.entries))
		names = names[:0]
		for k := range l.Shared {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			size := l.Shared[k]
			id, ok := ids[k]
			if !ok {
				id = int32(len(e.keys))
				ids[k] = id
				e.keys = append(e.keys, k)
				e.keyMin = append(e.keyMin, size)
				last = append(last, -1)
			}
			varying = varying || size != e.keyMin[id] && ok
			e.keyMin[id] = min(e.keyMin[id], size)
			if last[id] >= 0 {
				e.entries[last[id]].next = int32(len(e.entries))
			}
			last[id] = int32(len(e.entries))
			e.entries = append(e.entries, entry{key: id, next: -1, size: size})
		}
	}
	e.entryAt[e.n] = int32(len(e.entries))
	e.itemSum = make([]int64, e.n+1)
	for l := range e.n {
		e.itemSum[l+1] = e.itemSum[l]
		for _, en := range e.entries[e.entryAt[l]:e.entryAt[l+1]] {
			e.itemSum[l+1] += en.size
		}
	}
	largest := make([]int64, len(e.keys))
	for _, en := range e.entries {
		largest[en.key] = max(largest[en.key], en.size)
	}
	for _, v := range largest {
		e.keyMax += v
	}
	e.monotone = !varying
	if e.opt.Recompute {
		for _, k := range e.inFlight {
			e.monotone = e.monotone && k == 1
		}
	}
}
