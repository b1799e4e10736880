// Package cluster describes the hardware a pipeline runs on: devices (memory, speed) and the
// links between consecutive pipeline stages and to the host, with their alpha-beta costs
// (T = latency + bytes / bandwidth, Colossal-AUTO) or Graphcore's GBps-and-idle-cycles form
// (Graphcore's auto-pipeline tool).
package cluster

import (
	"fmt"
	"math"

	"pipeplan/core/model"
)

// Cluster is an ordered list of devices: pipeline stage i runs on Devices[i].
type Cluster struct {
	// Name is a label for people.
	Name string `json:"name,omitempty"`
	// Devices, one per pipeline stage.
	Devices []Device `json:"devices"`
	// Links[i] joins device i to device i+1. It may hold a single entry, which then joins
	// every consecutive pair; it may be empty when every device sets Recv and Send.
	Links []Link `json:"links,omitempty"`
	// Host joins the host to the first device (model inputs) and the last (model outputs).
	// Nil: host transfers are free.
	Host *Link `json:"host,omitempty"`
	// HostEveryStage says that the host transfers (the first device receiving the model's
	// input, the last device sending its output) run after the exchange between stages,
	// and every stage waits for them, as on Graphcore IPUs (Graphcore's auto-pipeline tool): both host terms are
	// then part of every stage's transfer time, not only the first's and the last's.
	HostEveryStage bool `json:"host_every_stage,omitempty"`
}

// Device is one accelerator.
type Device struct {
	// Name is the device's label or preset name ("h100-sxm", "gc200").
	Name string `json:"name,omitempty"`
	// MemoryBytes is the device's memory.
	MemoryBytes int64 `json:"memory_bytes"`
	// UsableFraction of MemoryBytes that a plan may fill (default 1): runtimes and
	// fragmentation take the rest.
	UsableFraction float64 `json:"usable_fraction,omitempty"`
	// PresetUsable: UsableFraction is a GPU or TPU preset's blanket allowance for the
	// runtime (FromPreset, or FillFromPresets for a device that states neither memory nor
	// fraction), not a figure the user gave. A planner that costs the framework's memory
	// itself (core/request, for an architecture) replaces it by 1.
	PresetUsable bool `json:"-"`
	// FLOPSPerSecond is the device's dense peak; layer times scale with it across
	// heterogeneous devices.
	FLOPSPerSecond float64 `json:"flops_per_second,omitempty"`
	// MemoryBytesPerSecond is the bandwidth of the device's memory (a preset's figure
	// when the device is named after one): the optimizer update, a pass over the
	// optimizer state, runs at it.
	MemoryBytesPerSecond float64 `json:"memory_bytes_per_second,omitempty"`
	// ClockHz converts cycles to seconds (IPUs), and scales cycle counts across devices.
	ClockHz float64 `json:"clock_hz,omitempty"`
	// Recv and Send, when set, are this device's own links for receiving from the previous
	// stage (or the host) and sending to the next stage (or the host), as Graphcore's
	// IPUClusterInfo describes each IPU. They override Links and Host.
	Recv *Link `json:"recv,omitempty"`
	Send *Link `json:"send,omitempty"`
}

// Link is a connection with a fixed cost per transfer and a bandwidth, given either as
// LatencySeconds and BytesPerSecond, or Graphcore-style as GBps (2^30 bytes per second) and
// IdleCycles (a fixed cost in device cycles).
type Link struct {
	LatencySeconds float64 `json:"latency_seconds,omitempty"`
	BytesPerSecond float64 `json:"bytes_per_second,omitempty"`
	GBps           float64 `json:"gbps,omitempty"`
	IdleCycles     int64   `json:"idle_cycles,omitempty"`
}

// GiB is 2^30 bytes, the unit of Graphcore's GBps.
const GiB = 1 << 30

// CyclesStyle reports whether the link is given in Graphcore's form.
func (l Link) CyclesStyle() bool { return l.GBps != 0 || l.IdleCycles != 0 }

// Seconds is the time to move n bytes over the link. clockHz converts idle cycles.
func (l Link) Seconds(n int64, clockHz float64) float64 {
	if l.CyclesStyle() {
		return float64(l.Cycles(n, clockHz)) / clockHz
	}
	t := l.LatencySeconds
	if n > 0 && l.BytesPerSecond > 0 {
		t += float64(n) / l.BytesPerSecond
	}
	return t
}

// Cycles is the number of device cycles to move n bytes: for a Graphcore-style link
// idle + n / (GBps * 2^30 / clock), truncated to an integer as Graphcore's auto-pipeline tool does; for
// a latency-bandwidth link its time in seconds times the clock, truncated. Counts beyond
// int64 (absurdly slow links) saturate at math.MaxInt64 rather than wrap negative.
func (l Link) Cycles(n int64, clockHz float64) int64 {
	if !l.CyclesStyle() {
		return truncCycles(l.Seconds(n, clockHz) * clockHz)
	}
	c := float64(l.IdleCycles)
	if n > 0 && l.GBps > 0 {
		c += float64(n) / (l.GBps * GiB / clockHz)
	}
	return truncCycles(c)
}

// truncCycles truncates a non-negative cycle count to an integer, saturating at
// math.MaxInt64 (float64(math.MaxInt64) is 2^63, the first value out of range).
func truncCycles(c float64) int64 {
	if !(c < math.MaxInt64) { // also catches NaN
		return math.MaxInt64
	}
	return int64(c)
}

// MaxMemoryBytes bounds a device's memory_bytes (an exbibyte, as model.Validate bounds
// byte counts): larger values are surely mistakes, and limits stay far from int64's range.
const MaxMemoryBytes = 1 << 60

// MemoryLimitBytes is what a plan may fill on the device: memory times the usable fraction
// times the caller's proportion (Graphcore's auto-pipeline tool's memoryProportion; 1 for none), truncated, and
// clamped to [0, math.MaxInt64] for devices that have not passed Validate.
func (d Device) MemoryLimitBytes(proportion float64) int64 {
	f := d.UsableFraction
	if f == 0 {
		f = 1
	}
	v := float64(d.MemoryBytes) * f * proportion
	switch {
	case !(v >= 0): // also NaN
		return 0
	case v >= math.MaxInt64: // float64(math.MaxInt64) is 2^63, already out of range
		return math.MaxInt64
	}
	return int64(v)
}

// RecvLink is the link device i receives its stage input over: its own Recv, else the
// link from the previous device, else (for the first device) the host link. Nil: free.
func (c *Cluster) RecvLink(i int) *Link {
	if d := c.Devices[i]; d.Recv != nil {
		return d.Recv
	}
	if i == 0 {
		return c.Host
	}
	return c.link(i - 1)
}

// SendLink is the link device i sends its stage output over: its own Send, else the link
// to the next device, else (for the last device) the host link. Nil: free.
func (c *Cluster) SendLink(i int) *Link {
	if d := c.Devices[i]; d.Send != nil {
		return d.Send
	}
	if i == len(c.Devices)-1 {
		return c.Host
	}
	return c.link(i)
}

func (c *Cluster) link(i int) *Link {
	switch {
	case len(c.Links) == 1:
		return &c.Links[0]
	case i < len(c.Links):
		return &c.Links[i]
	}
	return nil
}

// RecvLinkField is the field path of RecvLink(i) for error messages: "devices[1].recv",
// "links[0]" or "host"; "" when device i receives for free.
func (c *Cluster) RecvLinkField(i int) string {
	switch {
	case c.Devices[i].Recv != nil:
		return fmt.Sprintf("devices[%d].recv", i)
	case i == 0:
		return c.hostField()
	}
	return c.linkField(i - 1)
}

// SendLinkField is the field path of SendLink(i) for error messages: "devices[1].send",
// "links[1]" or "host"; "" when device i sends for free.
func (c *Cluster) SendLinkField(i int) string {
	switch {
	case c.Devices[i].Send != nil:
		return fmt.Sprintf("devices[%d].send", i)
	case i == len(c.Devices)-1:
		return c.hostField()
	}
	return c.linkField(i)
}

func (c *Cluster) hostField() string {
	if c.Host == nil {
		return ""
	}
	return "host"
}

func (c *Cluster) linkField(i int) string {
	switch {
	case len(c.Links) == 1:
		return "links[0]"
	case i < len(c.Links):
		return fmt.Sprintf("links[%d]", i)
	}
	return ""
}

// SpeedScale is how much longer device i takes than device 0 for the same work: the ratio
// of their FLOP/s when every device states FLOP/s, else of their clocks when every device
// states a clock, else 1. Layer times in a profile are taken as measured on device 0's kind.
func (c *Cluster) SpeedScale(i int) float64 {
	switch c.SpeedField() {
	case "flops_per_second":
		return c.Devices[0].FLOPSPerSecond / c.Devices[i].FLOPSPerSecond
	case "clock_hz":
		return c.Devices[0].ClockHz / c.Devices[i].ClockHz
	}
	return 1
}

// SpeedField names the device field whose ratio SpeedScale takes: "flops_per_second" when
// every device states FLOP/s, else "clock_hz" when every device states a clock, else "".
func (c *Cluster) SpeedField() string {
	switch {
	case c.all(func(d Device) bool { return d.FLOPSPerSecond > 0 }):
		return "flops_per_second"
	case c.all(func(d Device) bool { return d.ClockHz > 0 }):
		return "clock_hz"
	}
	return ""
}

func (c *Cluster) all(f func(Device) bool) bool {
	for _, d := range c.Devices {
		if !f(d) {
			return false
		}
	}
	return true
}

// Homogeneous returns a cluster of n copies of d joined by link (host may be nil).
func Homogeneous(d Device, n int, link Link, host *Link) *Cluster {
	c := &Cluster{Devices: make([]Device, n), Links: []Link{link}, Host: host}
	for i := range c.Devices {
		c.Devices[i] = d
	}
	return c
}

// Validate checks the cluster; errors name the field path. A model in cycles needs each
// device's clock; a Graphcore-style link needs the clock of every device using it.
func (c *Cluster) Validate() error {
	var es model.Errors
	switch n := len(c.Devices); {
	case n == 0:
		es.Add("devices", "must hold at least one device")
	case n > MaxStages:
		es.Add("devices", "must hold at most %d devices (one per pipeline stage), got %d", MaxStages, n)
		return es.Err() // each device's checks would only repeat the work
	}
	if n := len(c.Links); n > 1 && n != len(c.Devices)-1 {
		es.Add("links", "must hold one link, or one per consecutive pair of devices (%d), got %d", len(c.Devices)-1, n)
	}
	for i, d := range c.Devices {
		p := fmt.Sprintf("devices[%d]", i)
		if d.MemoryBytes <= 0 {
			es.Add(p+".memory_bytes", "must be > 0, got %d", d.MemoryBytes)
		} else if d.MemoryBytes > MaxMemoryBytes {
			es.Add(p+".memory_bytes", "must be at most 2^60 bytes (1 EiB), got %d", d.MemoryBytes)
		}
		if f := d.UsableFraction; f != 0 && (math.IsNaN(f) || f < 0 || f > 1) {
			es.Add(p+".usable_fraction", "must be in (0, 1], got %v", f)
		}
		es.NonNegative(p+".flops_per_second", d.FLOPSPerSecond)
		es.NonNegative(p+".clock_hz", d.ClockHz)
		es.NonNegative(p+".memory_bytes_per_second", d.MemoryBytesPerSecond)
		if d.Recv != nil {
			d.Recv.validate(&es, p+".recv")
		}
		if d.Send != nil {
			d.Send.validate(&es, p+".send")
		}
	}
	for i := range c.Links {
		c.Links[i].validate(&es, fmt.Sprintf("links[%d]", i))
	}
	if c.Host != nil {
		c.Host.validate(&es, "host")
	}
	c.validateClocks(&es)
	return es.Err()
}

// validateClocks checks that every device that receives or sends over a Graphcore-style
// link has the clock its idle cycles and GBps are counted in: a link is costed with the
// clock of the device using it, so a link between two devices needs both clocks.
func (c *Cluster) validateClocks(es *model.Errors) {
	for i, d := range c.Devices {
		if d.ClockHz > 0 {
			continue
		}
		for _, u := range []struct {
			l     *Link
			field string
			verb  string
		}{{c.RecvLink(i), c.RecvLinkField(i), "receives"}, {c.SendLink(i), c.SendLinkField(i), "sends"}} {
			if u.l != nil && u.l.CyclesStyle() {
				es.Add(u.field, "is given in gbps/idle_cycles, which needs devices[%d].clock_hz: device %d %s over it", i, i, u.verb)
			}
		}
	}
}

func (l *Link) validate(es *model.Errors, p string) {
	es.NonNegative(p+".latency_seconds", l.LatencySeconds)
	es.NonNegative(p+".bytes_per_second", l.BytesPerSecond)
	es.NonNegative(p+".gbps", l.GBps)
	if l.IdleCycles < 0 {
		es.Add(p+".idle_cycles", "must be >= 0, got %d", l.IdleCycles)
	}
	if l.CyclesStyle() {
		if l.LatencySeconds != 0 || l.BytesPerSecond != 0 {
			es.Add(p, "mixes gbps/idle_cycles with latency_seconds/bytes_per_second: use one form")
		}
	}
}
