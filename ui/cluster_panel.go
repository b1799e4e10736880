package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// --- The Cluster panel.

// DeviceNames lists the device presets (core/wire's).
func DeviceNames() []string {
	var names []string
	for _, d := range wire.DevicePresets() {
		names = append(names, d.Name)
	}
	return names
}

// LinkNames lists the link presets (core/wire's).
func LinkNames() []string { return wire.LinkPresets() }

// ClusterForm is the Cluster panel's inputs, read from the request.
type ClusterForm struct {
	// Device is the device preset; the cluster is Nodes nodes of PerNode such devices.
	Device         string
	Nodes, PerNode int
	// Link joins the devices of a node ("": the device's usual link) and InterLink the
	// nodes ("": the device's usual network). One node: Link joins all the devices.
	Link, InterLink string
	// Devices is each device's preset (the base device unless overridden).
	Devices []string
	// FromFile: the cluster is a document the form cannot edit (an imported file).
	FromFile bool
}

// UsualLinks returns a device preset's usual link inside a node and between nodes
// (core's defaults for cluster.link_intra and cluster.link_inter); "" when unknown.
func UsualLinks(device string) (intra, inter string) {
	for _, d := range wire.DevicePresets() {
		if strings.EqualFold(d.Name, device) {
			return d.Link, d.Network
		}
	}
	return "", ""
}

// Form returns the Cluster panel's inputs.
func (a *App) Form() ClusterForm {
	cs := a.Req.Cluster
	if len(cs.Document) > 0 {
		return ClusterForm{FromFile: true, Nodes: 1}
	}
	f := ClusterForm{Device: cs.Device, Nodes: 1, PerNode: cs.Count, Link: cs.Link}
	n := cs.Count
	if len(cs.Devices) > 0 {
		n = len(cs.Devices)
		f.PerNode = n
	}
	if d := cs.DevicesPerNode; d > 0 {
		f.Nodes, f.PerNode = max(1, (n+d-1)/d), d
		f.Link, f.InterLink = cs.LinkIntra, cs.LinkInter
	}
	if len(cs.Devices) > 0 {
		f.Devices = slices.Clone(cs.Devices)
		return f
	}
	f.Devices = make([]string, f.Nodes*f.PerNode)
	for i := range f.Devices {
		f.Devices[i] = cs.Device
	}
	return f
}

// SetCluster handles an edit of the Cluster panel: field is "device", "count",
// "nodes", "per_node", "link", "inter_link", or "device:I" for device I's override.
func (a *App) SetCluster(field, v string) {
	f := a.Form()
	v = strings.TrimSpace(v)
	if f.FromFile && field != "device" {
		return
	}
	if field == "count" {
		field = "per_node"
	}
	num := func() (int, bool) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > wire.MaxDevices {
			a.typed(field, v, false)
			if v != "" {
				a.notice(fmt.Sprintf("%s: enter a whole number from 1 to %d", field, wire.MaxDevices), true)
			}
			return 0, false
		}
		a.typed(field, v, true)
		return n, true
	}
	switch {
	case field == "device":
		f.Device = v
		f.Devices = nil
		f.FromFile = false
		// The links the user left to the device follow the new device.
	case field == "per_node":
		n, ok := num()
		if !ok {
			return
		}
		f.PerNode = n
	case field == "nodes":
		n, ok := num()
		if !ok {
			return
		}
		f.Nodes = n
	case field == "link":
		f.Link = v
	case field == "inter_link":
		f.InterLink = v
	case strings.HasPrefix(field, "device:"):
		i, err := strconv.Atoi(strings.TrimPrefix(field, "device:"))
		if err != nil || i < 0 || i >= len(f.Devices) {
			return
		}
		f.Devices[i] = v
	default:
		return
	}
	if n := max(1, f.Nodes) * max(1, f.PerNode); n > wire.MaxDevices {
		a.typed(field, v, false)
		a.notice(fmt.Sprintf("%d nodes of %d devices are %d devices: at most %d", f.Nodes, f.PerNode, n, wire.MaxDevices), true)
		return
	}
	a.Req.Cluster = f.spec()
	// A parallelism applied from the search (stages, replicas) does not survive a change
	// of the devices: the pipeline takes the devices again. The panel's knobs (replicas,
	// tensor, context and sharding) stay.
	if field != "link" && field != "inter_link" {
		a.Req.Parallelism = a.panelParallelism()
	}
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	if field == "link" || field == "inter_link" {
		a.changed(false)
		return
	}
	a.relayout(field == "device")
}

// spec writes the form as a cluster spec: a device preset x count, in nodes
// (cluster.devices_per_node) when there are several, with each device's preset
// (cluster.devices) when they differ.
func (f ClusterForm) spec() wire.ClusterSpec {
	nodes, per := max(1, f.Nodes), max(1, f.PerNode)
	n := nodes * per
	devs := make([]string, n)
	mixed := false
	for i := range devs {
		devs[i] = f.Device
		if i < len(f.Devices) && f.Devices[i] != "" {
			devs[i] = f.Devices[i]
		}
		mixed = mixed || devs[i] != f.Device
	}
	switch {
	case !mixed && nodes == 1:
		return wire.ClusterSpec{Device: f.Device, Count: n, Link: f.Link}
	case !mixed:
		return wire.ClusterSpec{Device: f.Device, Count: n, DevicesPerNode: per, LinkIntra: f.Link, LinkInter: f.InterLink}
	}
	c := wire.ClusterSpec{Device: f.Device, Count: n, Devices: devs, Link: f.Link}
	if nodes > 1 {
		c.Link, c.DevicesPerNode, c.LinkIntra, c.LinkInter = "", per, f.Link, f.InterLink
	}
	return c
}

// panelParallelism is the parallelism the Cluster panel keeps when the devices change:
// every field but the pipeline, which follows from the devices (replicas, tensor and
// sequence parallelism, context parallelism, sharding, experts, the overlaps and
// whatever a request pasted or shared carried, so nothing a user set is lost).
func (a *App) panelParallelism() wire.Parallelism {
	p := a.Req.Parallelism
	p.Pipeline = 0
	return p
}

// SetDegree handles the data-parallel replicas or the context-parallel degree
// (architectures): the pipeline gets devices / (replicas x tensor x context) stages. ""
// is 1. Core checks what goes together (a context degree that does not split the
// sequence, sharding without replicas) and says so by field.
func (a *App) SetDegree(name, v string) {
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	if v == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > wire.MaxDevices {
		a.typed(name, v, false)
		a.notice(name+": enter a whole number", true)
		return
	}
	a.typed(name, v, true)
	par := &a.Req.Parallelism
	switch name {
	case "data":
		par.Data = n
		if a.Layout != "" && n < 2 && par.Sharding == "zero1" {
			par.Sharding = "" // the layout's ZeRO-1 needs replicas
		}
		a.Layout = "" // the user's replicas, not the layout's
	case "expert":
		// Expert parallelism uses no devices of its own (Megatron-Core folds it into
		// replicas x tensor); core checks that it divides them and the experts.
		par.Expert = n
		if n < 2 {
			par.ExpertOverlap = false
		}
	default:
		par.Context = n
		if n < 2 {
			par.ContextMethod, par.ContextInner = "", 0
		}
	}
	par.Pipeline = 0 // the stages follow from the devices
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	if name != "context" { // replicas and experts use no devices of their own
		a.changed(false)
		return
	}
	a.relayout(false) // a layout's replicas may not divide the new groups
}

// SetTensor handles the tensor-parallel degree (architectures): each pipeline device
// becomes a group of t devices, so the pipeline has devices / t stages. "" is 1.
func (a *App) SetTensor(v string) {
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	if v == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > wire.MaxDevices {
		a.typed("tensor", v, false)
		a.notice("tensor-parallel degree: enter a whole number", true)
		return
	}
	a.typed("tensor", v, true)
	par := &a.Req.Parallelism
	par.Tensor = n
	par.Pipeline = 0 // the stages follow from the devices and t
	// Expert tensor parallelism defaults to the tensor degree: it follows the new one.
	par.ExpertTensor = 0
	if n < 2 {
		par.SequenceParallel = false
	}
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	a.relayout(false) // a layout's replicas may not divide the new groups
}

// Parallel describes how the devices are used, from core's result: "2 nodes of 8:
// 4 pipeline stages × 4-way tensor parallel", or "" without a plan.
func (a *App) Parallel() string {
	if a.Res == nil || a.Res.Step == nil || a.Res.Plan == nil {
		return ""
	}
	p := a.StageCount()
	if a.Res.Schedule != nil && a.Res.Schedule.Devices > 0 {
		p = a.Res.Schedule.Devices
	}
	s := fmt.Sprintf("%s in use: %s", units.Count(int64(a.Res.Step.Devices), "device"), units.Count(int64(p), "pipeline stage"))
	if pl := a.Res.Placement; pl != nil {
		if pl.Data > 1 {
			s += fmt.Sprintf(" × %d replicas", pl.Data)
		}
		if pl.Tensor > 1 {
			s += fmt.Sprintf(" × %d-way tensor parallel", pl.Tensor)
		}
		if pl.Context > 1 {
			s += fmt.Sprintf(" × %d-way context parallel", pl.Context)
		}
		s += ", on " + units.Count(int64(pl.Nodes), "node")
		cross := 0
		for _, c := range pl.StageCrossesNodes {
			if c {
				cross++
			}
		}
		s += fmt.Sprintf("; %d of %d stage transfers cross nodes", cross, len(pl.StageCrossesNodes))
		return s + "."
	}
	if d := a.Req.Parallelism.Data; d > 1 {
		s += fmt.Sprintf(" × %d replicas", d)
	}
	if t := a.Req.Parallelism.Tensor; t > 1 {
		s += fmt.Sprintf(" × %d-way tensor parallel", t)
	}
	if c := a.Req.Parallelism.Context; c > 1 {
		s += fmt.Sprintf(" × %d-way context parallel", c)
	}
	return s + "."
}
