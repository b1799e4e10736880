package cluster

import (
	"math"
	"strings"
	"testing"
)

func TestLinkCost(t *testing.T) {
	const clock = 1850000000 // Graphcore's auto-pipeline tool's example IPU clock
	tests := []struct {
		name    string
		link    Link
		bytes   int64
		cycles  int64
		seconds float64
	}{
		// 7 GBps at 1.85 GHz moves 7 * 2^30 / 1.85e9 = 4.0628... bytes per cycle: 1 MiB takes
		// 258091.4 cycles, truncated after adding the idle cycles.
		{"graphcore recv", Link{GBps: 7, IdleCycles: 50000}, 1 << 20, 308091, 308091.0 / clock},
		{"graphcore idle only", Link{GBps: 70, IdleCycles: 3000}, 0, 3000, 3000.0 / clock},
		{"alpha-beta", Link{LatencySeconds: 1e-6, BytesPerSecond: 1e9}, 1000, 3700, 2e-6},
		{"free", Link{}, 1 << 30, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.link.Cycles(tt.bytes, clock); got != tt.cycles {
				t.Errorf("Cycles = %d, want %d", got, tt.cycles)
			}
			if got := tt.link.Seconds(tt.bytes, clock); got != tt.seconds {
				t.Errorf("Seconds = %v, want %v", got, tt.seconds)
			}
		})
	}
}

func TestMemoryLimitBytes(t *testing.T) {
	// Graphcore's auto-pipeline tool: memory * memoryProportion * 2^20 with memory 894 and proportion 0.85.
	d := Device{MemoryBytes: 894 << 20}
	if got, want := d.MemoryLimitBytes(0.85), int64(796812902); got != want { // 937426944 * 0.85, truncated
		t.Errorf("MemoryLimitBytes = %d, want %d", got, want)
	}
	d.UsableFraction = 0.5
	if got := d.MemoryLimitBytes(1); got != 447<<20 {
		t.Errorf("with usable fraction 0.5: %d", got)
	}
	// Unvalidated extremes clamp rather than wrap: float64(MaxInt64) is 2^63.
	for _, tt := range []struct {
		d    Device
		want int64
	}{
		{Device{MemoryBytes: MaxMemoryBytes}, MaxMemoryBytes},
		{Device{MemoryBytes: math.MaxInt64}, math.MaxInt64},
		{Device{MemoryBytes: -5}, 0},
		{Device{MemoryBytes: 1, UsableFraction: math.NaN()}, 0},
	} {
		if got := tt.d.MemoryLimitBytes(1); got != tt.want {
			t.Errorf("MemoryLimitBytes of %+v = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestLinksAndSpeed(t *testing.T) {
	a, b, h := Link{LatencySeconds: 1}, Link{LatencySeconds: 2}, Link{LatencySeconds: 9}
	own := Link{LatencySeconds: 5}
	c := &Cluster{
		Devices: []Device{{MemoryBytes: 1, FLOPSPerSecond: 2}, {MemoryBytes: 1, FLOPSPerSecond: 1, Send: &own}, {MemoryBytes: 1, FLOPSPerSecond: 4}},
		Links:   []Link{a, b}, Host: &h,
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  *Link
		want Link
	}{
		{"recv 0 from host", c.RecvLink(0), h}, {"send 0", c.SendLink(0), a},
		{"recv 1", c.RecvLink(1), a}, {"send 1 own", c.SendLink(1), own},
		{"recv 2", c.RecvLink(2), b}, {"send 2 to host", c.SendLink(2), h},
	}
	for _, k := range checks {
		if k.got == nil || *k.got != k.want {
			t.Errorf("%s = %v, want %v", k.name, k.got, k.want)
		}
	}
	for i, want := range []float64{1, 2, 0.5} {
		if got := c.SpeedScale(i); got != want {
			t.Errorf("SpeedScale(%d) = %v, want %v", i, got, want)
		}
	}
	if got := c.SpeedField(); got != "flops_per_second" {
		t.Errorf("SpeedField = %q, want flops_per_second", got)
	}
	c.Devices[2].FLOPSPerSecond = 0 // not every device states FLOP/s: no scaling
	if got := c.SpeedScale(1); got != 1 {
		t.Errorf("SpeedScale without FLOP/s everywhere = %v, want 1", got)
	}
	if got := c.SpeedField(); got != "" {
		t.Errorf("SpeedField without FLOP/s or clocks everywhere = %q, want none", got)
	}
	for i, hz := range []float64{3, 1, 6} {
		c.Devices[i].ClockHz = hz
	}
	if got, want := c.SpeedScale(2), 0.5; got != want || c.SpeedField() != "clock_hz" {
		t.Errorf("with clocks everywhere: SpeedScale(2) = %v by %q, want %v by clock_hz", got, c.SpeedField(), want)
	}
}

func TestLinkFields(t *testing.T) {
	own := &Link{LatencySeconds: 1}
	c := &Cluster{Devices: []Device{{}, {Recv: own}, {}, {}}, Links: []Link{{}, {}, {}}, Host: &Link{}}
	var got []string
	for i := range c.Devices {
		got = append(got, c.RecvLinkField(i), c.SendLinkField(i))
	}
	want := []string{"host", "links[0]", "devices[1].recv", "links[1]", "links[1]", "links[2]", "links[2]", "host"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("recv and send link fields %q, want %q", got, want)
	}
	c.Links, c.Host = c.Links[:1], nil
	if got := []string{c.RecvLinkField(0), c.SendLinkField(2), c.SendLinkField(3)}; strings.Join(got, ",") != ",links[0]," {
		t.Errorf("with one link and no host: %q, want no field for the host, links[0] between devices", got)
	}
}

func TestValidateLinkNeedsOnlyItsUsersClocks(t *testing.T) {
	// Both devices use their own links: the Graphcore-style links[0] is used by no one.
	c := Cluster{Devices: []Device{{MemoryBytes: 1, Recv: &Link{}, Send: &Link{}}, {MemoryBytes: 1, Recv: &Link{}, Send: &Link{}}}, Links: []Link{{GBps: 1}}}
	if err := c.Validate(); err != nil {
		t.Errorf("a link no device uses needs no clock: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Cluster
		want string
	}{
		{"no devices", Cluster{}, "devices: must hold at least one device"},
		{"no memory", Cluster{Devices: []Device{{}}}, "devices[0].memory_bytes: must be > 0, got 0"},
		{"too much memory", Cluster{Devices: []Device{{MemoryBytes: 1}, {MemoryBytes: math.MaxInt64}}},
			"devices[1].memory_bytes: must be at most 2^60 bytes (1 EiB), got 9223372036854775807"},
		{"fraction", Cluster{Devices: []Device{{MemoryBytes: 1, UsableFraction: 1.5}}}, "devices[0].usable_fraction: must be in (0, 1], got 1.5"},
		{"link count", Cluster{Devices: []Device{{MemoryBytes: 1}, {MemoryBytes: 1}, {MemoryBytes: 1}}, Links: []Link{{}, {}, {}}},
			"links: must hold one link, or one per consecutive pair of devices (2), got 3"},
		{"mixed link", Cluster{Devices: []Device{{MemoryBytes: 1, ClockHz: 1}}, Links: []Link{{GBps: 1, LatencySeconds: 1}}}, "links[0]: mixes gbps/idle_cycles"},
		{"gbps without clock", Cluster{Devices: []Device{{MemoryBytes: 1}}, Host: &Link{GBps: 1}},
			"host: is given in gbps/idle_cycles, which needs devices[0].clock_hz: device 0 receives over it\nhost: is given in gbps/idle_cycles, which needs devices[0].clock_hz: device 0 sends over it"},
		// The link is costed with the clock of the device using it, not device 0's.
		{"gbps link, second device without clock", Cluster{Devices: []Device{{MemoryBytes: 1, ClockHz: 1e9}, {MemoryBytes: 1}}, Links: []Link{{GBps: 1}}},
			"links[0]: is given in gbps/idle_cycles, which needs devices[1].clock_hz: device 1 receives over it"},
		{"own gbps link without clock", Cluster{Devices: []Device{{MemoryBytes: 1, ClockHz: 1e9}, {MemoryBytes: 1, Send: &Link{IdleCycles: 3}}, {MemoryBytes: 1, ClockHz: 1e9}}},
			"devices[1].send: is given in gbps/idle_cycles, which needs devices[1].clock_hz: device 1 sends over it"},
		{"negative bandwidth", Cluster{Devices: []Device{{MemoryBytes: 1, Recv: &Link{BytesPerSecond: -1}}}}, "devices[0].recv.bytes_per_second: must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}
