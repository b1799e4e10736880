package estimate

import (
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Transfer is the time stage i holding [a, b] spends receiving its input (from the host
// when it is the first stage) and sending its output (to the host when it is the last),
// in the model's unit. In cycles, each term is counted in the cycles of the device doing
// it and truncated as Graphcore's auto-pipeline tool does, then expressed in device 0's cycles (times
// clock_0 / clock_i), the unit compute is stated in: on devices with different clocks the
// two add up.
//
// When the cluster's HostEveryStage is set, every stage's transfer is its exchange with
// its neighbour stages plus both host terms (the first device receiving layer 0's input,
// the last device sending the last layer's output), exactly as Graphcore's auto-pipeline tool counts it.
func (e *Estimator) Transfer(i, a, b int) float64 {
	return e.Recv(i, a) + e.Send(i, b)
}

// Recv is the part of Transfer that depends on the range's first layer a: stage i
// receiving its input (with HostEveryStage, also both host terms). O(1).
func (e *Estimator) Recv(i, a int) float64 {
	if e.c.HostEveryStage {
		t := e.hostTime
		if i > 0 {
			t += e.recvCost[i].time(e.recvBytes[a])
		}
		return t
	}
	if i == 0 {
		a = 0 // the first stage receives the model's input
	}
	return e.recvCost[i].time(e.recvBytes[a])
}

// Send is the part of Transfer that depends on the range's last layer b: stage i sending
// its output. O(1).
func (e *Estimator) Send(i, b int) float64 {
	switch {
	case e.c.HostEveryStage && i == e.p-1:
		return 0 // counted in every stage's Recv
	case i == e.p-1:
		b = e.n - 1 // the last stage sends the model's output
	}
	return e.sendCost[i].time(e.sendBytes[b])
}

func (e *Estimator) linkTime(l *cluster.Link, bytes int64, i int) float64 {
	if l == nil {
		return 0
	}
	clock := e.c.Devices[i].ClockHz
	if e.m.Unit() == model.Cycles {
		c := float64(l.Cycles(bytes, clock))
		if clock0 := e.c.Devices[0].ClockHz; clock != clock0 {
			c *= clock0 / clock // device i's cycles in device 0's
		}
		return c
	}
	return l.Seconds(bytes, clock)
}

// linkCost is linkTime for one link of one stage, with the constants worked out once:
// the same operations on the same values, so the same result to the bit, without the
// lookups (Recv and Send run in the partitioner's inner loops).
type linkCost struct {
	kind        uint8 // 0: no link; 1: latency and bandwidth; 2: Graphcore's GBps and idle cycles
	cycles      bool  // the model's unit is cycles
	scaled      bool  // cycles to be stated in device 0's: times ratio
	latency, bw float64
	idle, denom float64 // idle cycles; GBps * GiB / clock
	clock       float64
	ratio       float64 // clock_0 / clock
}

func (e *Estimator) newLinkCost(l *cluster.Link, i int) linkCost {
	if l == nil {
		return linkCost{}
	}
	clock := e.c.Devices[i].ClockHz
	lc := linkCost{kind: 1, cycles: e.m.Unit() == model.Cycles, latency: l.LatencySeconds, bw: l.BytesPerSecond, clock: clock}
	if l.CyclesStyle() {
		lc.kind, lc.idle, lc.denom = 2, float64(l.IdleCycles), l.GBps*cluster.GiB/clock
	}
	if clock0 := e.c.Devices[0].ClockHz; lc.cycles && clock != clock0 {
		lc.scaled, lc.ratio = true, clock0/clock
	}
	return lc
}

// time is linkTime(l, n, i): cluster.Link's Seconds or Cycles, in device 0's cycles when
// the model's unit is cycles.
func (lc *linkCost) time(n int64) float64 {
	switch lc.kind {
	case 0:
		return 0
	case 1:
		t := lc.latency
		if n > 0 && lc.bw > 0 {
			t += float64(n) / lc.bw
		}
		if !lc.cycles {
			return t
		}
		return lc.scale(float64(truncCycles(t * lc.clock)))
	}
	c := lc.idle
	if n > 0 && lc.denom > 0 {
		c += float64(n) / lc.denom
	}
	c = float64(truncCycles(c))
	if !lc.cycles {
		return c / lc.clock
	}
	return lc.scale(c)
}

func (lc *linkCost) scale(c float64) float64 {
	if lc.scaled {
		c *= lc.ratio
	}
	return c
}

// truncCycles is cluster's: a cycle count truncated to an integer, saturating at
// math.MaxInt64.
func truncCycles(c float64) int64 {
	if !(c < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(c)
}
