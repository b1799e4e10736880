package cluster

import (
	"fmt"
	"sort"
	"strings"
)

// DevicePreset is a known accelerator. Figures come from vendors' data sheets.
type DevicePreset struct {
	Device
	// Link is the usual link between two such devices in a pipeline.
	Link string
	// Note says where the figures come from.
	Note string
}

// LinkPreset is a known interconnect, as alpha (latency) and bandwidth.
type LinkPreset struct {
	Name string
	Link
	Note string
}

var devicePresets = map[string]DevicePreset{
	// Graphcore GC200 IPU (Colossus Mk2): 900 MB In-Processor-Memory, of which seed 000's
	// tool uses 894 MiB; 1.33 GHz clock; 250 TFLOP/s fp16.
	"gc200": {Device: Device{Name: "gc200", MemoryBytes: 894 << 20, ClockHz: 1.33e9, FLOPSPerSecond: 250e12}, Link: "ipu-link"},
	// NVIDIA A100 SXM 80 GB: 312 TFLOP/s dense bf16.
	"a100-80gb": {Device: Device{Name: "a100-80gb", MemoryBytes: 80e9, FLOPSPerSecond: 312e12}, Link: "nvlink3"},
	// NVIDIA H100 SXM5 80 GB: 989 TFLOP/s dense bf16.
	"h100-sxm": {Device: Device{Name: "h100-sxm", MemoryBytes: 80e9, FLOPSPerSecond: 989e12}, Link: "nvlink4"},
}

var linkPresets = map[string]LinkPreset{
	"ipu-link": {Name: "ipu-link", Link: Link{LatencySeconds: 2e-6, BytesPerSecond: 64e9}},
	"nvlink3":  {Name: "nvlink3", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: 300e9}},
	"nvlink4":  {Name: "nvlink4", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: 450e9}},
}

// LookupDevice returns the preset device of that name (case-insensitive).
func LookupDevice(name string) (DevicePreset, error) {
	d, ok := devicePresets[strings.ToLower(name)]
	if !ok {
		return DevicePreset{}, fmt.Errorf("unknown device %q; known devices: %s", name, strings.Join(DeviceNames(), ", "))
	}
	return d, nil
}

// LookupLink returns the preset link of that name (case-insensitive).
func LookupLink(name string) (LinkPreset, error) {
	l, ok := linkPresets[strings.ToLower(name)]
	if !ok {
		return LinkPreset{}, fmt.Errorf("unknown link %q; known links: %s", name, strings.Join(LinkNames(), ", "))
	}
	return l, nil
}

// DeviceNames lists the device presets, sorted.
func DeviceNames() []string { return sortedKeys(devicePresets) }

// LinkNames lists the link presets, sorted.
func LinkNames() []string { return sortedKeys(linkPresets) }

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// FromPreset builds a cluster of n preset devices joined by the preset's usual link.
func FromPreset(device string, n int) (*Cluster, error) {
	d, err := LookupDevice(device)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("stages: must be >= 1, got %d", n)
	}
	l, err := LookupLink(d.Link)
	if err != nil {
		return nil, err
	}
	c := Homogeneous(d.Device, n, l.Link, nil)
	c.Name = fmt.Sprintf("%d x %s", n, d.Name)
	return c, nil
}
