package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/examples"
	"pipeplan/core/load"
	"pipeplan/core/model"
)

// document returns the bytes of a document field: a JSON object as it is, a JSON string
// as the text it holds.
func document(raw json.RawMessage) ([]byte, error) {
	s := bytes.TrimSpace(raw) // no copy: a profile may be hundreds of megabytes
	if bytes.HasPrefix(s, []byte(`"`)) {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		return []byte(text), nil
	}
	if !bytes.HasPrefix(s, []byte("{")) {
		return nil, fmt.Errorf("must be a JSON object or a string holding a file's text")
	}
	return raw, nil
}

func (p *prepared) loadModel(es *model.Errors) {
	ms := &p.req.Model
	if ld := p.loaded; ld.model != nil {
		p.model, p.format = ld.model, ld.format
		return
	}
	n := 0
	for _, set := range []bool{ms.Example != "", len(ms.Document) > 0, ms.Architecture != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		es.Add("model", "must give exactly one of example, document and architecture, got %d", n)
		return
	}
	switch {
	case ms.Example != "":
		e, err := examples.Lookup(ms.Example)
		if err != nil {
			es.Add("model.example", "%v", err)
			return
		}
		m, _, err := load.Model(e.ModelJSON())
		if err != nil {
			es.Add("model.example", "example %s: %v", e.Name, err)
			return
		}
		ms.Example = e.Name
		p.model, p.format = m, load.Native
		p.keepProfile()
	case len(ms.Document) > 0:
		data, err := document(ms.Document)
		if err != nil {
			es.Add("model.document", "%v", err)
			return
		}
		m, f, err := load.Model(data)
		if err != nil {
			addPrefixed(es, "model.document", err)
			return
		}
		p.model, p.format = m, f
		p.convertedFrom(es)
		p.keepProfile()
	default:
		a := ms.Architecture
		switch {
		case (a.Name == "") == (len(a.Config) == 0):
			es.Add("model.architecture", "must give exactly one of name (a bundled config: %s) and config (a config.json object)", strings.Join(arch.BundledNames(), ", "))
			return
		case a.Name != "":
			name := a.Name
			def, key, err := p.cache.archOf(name, nil, func() (*arch.Arch, error) { return arch.Bundled(name) })
			if err != nil {
				es.Add("model.architecture.name", "%v", err)
				return
			}
			a.Name = def.Name
			p.arch, p.archKey = def, key
		default:
			data, err := document(a.Config)
			if err != nil {
				es.Add("model.architecture.config", "%v", err)
				return
			}
			def, key, err := p.cache.archOf("", data, func() (*arch.Arch, error) { return arch.Parse(data) })
			if err != nil {
				addPrefixed(es, "model.architecture.config", err)
				return
			}
			p.arch, p.archKey = def, key
		}
	}
}

// convertedFrom plans a native profile converted from Graphcore's or PipeDream's format
// (its converted_from) by that format's rules, as the profile in its own format is.
func (p *prepared) convertedFrom(es *model.Errors) {
	m := p.model
	if p.format != load.Native || m.ConvertedFrom == "" {
		return
	}
	p.format = load.Format(m.ConvertedFrom)
	if p.format != load.PipeDream {
		return
	}
	for i, l := range m.Layers {
		if l.GradBytes != 0 || l.OptimizerBytes != 0 {
			es.Add("model.document", "layers[%d] states grad_bytes or optimizer_bytes, but a profile converted from PipeDream's format (converted_from) gives weights only (param_bytes), to which training adds both", i)
			return
		}
	}
}

// keepProfile records the profile as loaded, for the variants (Prepared.With).
func (p *prepared) keepProfile() {
	ld := p.loaded
	ld.model, ld.format, ld.origin, ld.originFormat = p.model, p.format, p.model, p.format
}

func (p *prepared) loadCluster(es *model.Errors) {
	cs := &p.req.Cluster
	if len(cs.Devices) > 0 && !perDevice(cs, es) {
		return
	}
	if (cs.Device == "") == (len(cs.Document) == 0) {
		es.Add("cluster", "must give exactly one of device (a preset: %s) and document", strings.Join(cluster.DeviceNames(), ", "))
		return
	}
	if cs.Device != "" {
		d, err := cluster.LookupDevice(cs.Device)
		if err != nil {
			es.Add("cluster.device", "%v", err)
			return
		}
		cs.Device = d.Name
		if cs.Link == "" {
			cs.Link = d.Link
		}
		if l, err := cluster.LookupLink(cs.Link); err != nil {
			es.Add("cluster.link", "%v", err)
		} else {
			cs.Link = l.Name // names are read in any case; the canonical request has the preset's
		}
		if cs.Count < 0 || cs.Count > cluster.MaxStages {
			es.Add("cluster.count", "must be between 1 and %d, got %d", cluster.MaxStages, cs.Count)
		}
		if cs.DataLink != "" {
			es.Add("cluster.data_link", "goes with a cluster document: with a device preset the data-parallel all-reduce crosses cluster.link")
		}
		p.nodes(es, d)
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"devices_per_node", cs.DevicesPerNode != 0}, {"link_intra", cs.LinkIntra != ""}, {"link_inter", cs.LinkInter != ""}} {
		if f.set {
			es.Add("cluster."+f.name, "goes with cluster.device: a cluster document states its devices and links")
		}
	}
	if cs.Count != 0 {
		es.Add("cluster.count", "goes with cluster.device: a cluster document lists its devices (one pipeline)")
	}
	if cs.Link != "" {
		es.Add("cluster.link", "goes with cluster.device: a cluster document states its links")
	}
	c := p.loaded.cluster
	if c == nil {
		data, err := document(cs.Document)
		if err != nil {
			es.Add("cluster.document", "%v", err)
			return
		}
		if c, err = load.Cluster(data); err != nil {
			addPrefixed(es, "cluster.document", err)
			return
		}
		p.loaded.cluster = c
	}
	p.cluster = copyCluster(c) // links and devices are adjusted below
	if cs.DataLink != "" {
		if l, err := cluster.LookupLink(cs.DataLink); err != nil {
			es.Add("cluster.data_link", "%v", err)
		} else {
			cs.DataLink = l.Name
		}
	}
}

// nodes reads a cluster of nodes: devices_per_node with the links inside and between
// nodes (defaults: the device preset's usual link and network).
func (p *prepared) nodes(es *model.Errors, d cluster.DevicePreset) {
	cs := &p.req.Cluster
	if cs.DevicesPerNode == 0 {
		for _, f := range []struct{ name, v string }{{"link_intra", cs.LinkIntra}, {"link_inter", cs.LinkInter}} {
			if f.v != "" {
				es.Add("cluster."+f.name, "goes with cluster.devices_per_node (a cluster of nodes); between all devices give cluster.link")
			}
		}
		return
	}
	if cs.DevicesPerNode < 1 || cs.DevicesPerNode > cluster.MaxStages {
		es.Add("cluster.devices_per_node", "must be between 1 and %d, got %d", cluster.MaxStages, cs.DevicesPerNode)
		return
	}
	if cs.Link != "" && cs.Link != d.Link {
		es.Add("cluster.link", "goes without cluster.devices_per_node: a cluster of nodes has link_intra and link_inter")
		return
	}
	cs.Link = ""
	if cs.LinkIntra == "" {
		cs.LinkIntra = d.Link
	}
	if n := d.ScaleUpDevices; n > 0 && cs.DevicesPerNode > n && strings.EqualFold(cs.LinkIntra, d.Link) {
		// A node is what the intra-node link joins: no more devices than the preset's
		// scale-up domain (8 on an HGX board, 72 in an NVL72 rack) share its fabric.
		es.Add("cluster.devices_per_node", "must be at most %d, the scale-up domain of %s (devices on one %s fabric), got %d: nodes beyond it talk over link_inter",
			n, d.Name, d.Link, cs.DevicesPerNode)
		return
	}
	if cs.LinkInter == "" {
		cs.LinkInter = d.Network
	}
	if cs.LinkInter == "" {
		es.Add("cluster.link_inter", "names the link between nodes: %s has no usual network preset (pipeplan devices lists the links)", d.Name)
		return
	}
	topo := &cluster.Topology{DevicesPerNode: cs.DevicesPerNode, NICPCIeBytesPerSecond: d.NICPCIeBytesPerSecond}
	for _, f := range []struct {
		name string
		v    *string
		l    *cluster.Link
	}{{"link_intra", &cs.LinkIntra, &topo.Intra}, {"link_inter", &cs.LinkInter, &topo.Inter}} {
		l, err := cluster.LookupLink(*f.v)
		if err != nil {
			es.Add("cluster."+f.name, "%v", err)
			return
		}
		*f.v, *f.l = l.Name, l.Link
		if f.l == &topo.Intra {
			topo.IntraMeshBytesPerSecond = l.MeshBytesPerSecond
		}
	}
	p.topo = topo
}
