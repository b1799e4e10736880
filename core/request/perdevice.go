package request

import (
	"encoding/json"
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// mixedDocument is the native cluster document that cluster.devices stands for: devices
// named after presets, whose figures load fills in, and a link per pipeline neighbour
// pair: a node's link inside a node, the network between nodes.
type mixedDocument struct {
	Name    string         `json:"name"`
	Devices []mixedDevice  `json:"devices"`
	Links   []cluster.Link `json:"links,omitempty"`
}

type mixedDevice struct {
	Name string `json:"name"`
}

// perDevice rewrites a cluster given by per-device presets (cluster.devices) as the
// cluster document it stands for, which the rest of Normalize reads: the devices of the
// presets in order, joined inside a node by cluster.link (one node) or link_intra and
// between nodes of devices_per_node by link_inter, each by default the usual preset's
// (cluster.device's link and network; the network is the link when the preset has none).
// It reports whether the fields were good; errors name them.
func perDevice(cs *wire.ClusterSpec, es *model.Errors) bool {
	n := len(cs.Devices)
	before := len(*es)
	if len(cs.Document) > 0 {
		es.Add("cluster.devices", "goes with cluster.device: a cluster document lists its devices")
		return false
	}
	base, err := cluster.LookupDevice(cs.Device)
	if err != nil {
		es.Add("cluster.device", "is needed with cluster.devices, as the usual preset whose links join them: %v", err)
		return false
	}
	switch {
	case n > cluster.MaxStages:
		es.Add("cluster.devices", "must list at most %d devices, got %d", cluster.MaxStages, n)
	case cs.Count != 0 && cs.Count != n:
		es.Add("cluster.count", "must be %d, the devices cluster.devices lists, got %d", n, cs.Count)
	}
	doc := mixedDocument{Name: wire.MixedClusterName}
	for i, name := range cs.Devices {
		d, err := cluster.LookupDevice(name)
		if err != nil {
			es.Add(fmt.Sprintf("cluster.devices[%d]", i), "%v", err)
			continue
		}
		doc.Devices = append(doc.Devices, mixedDevice{Name: d.Name})
	}
	per := n
	intra, inter := base.Link, base.Network
	switch {
	case cs.DevicesPerNode != 0:
		if cs.DevicesPerNode < 1 || n%cs.DevicesPerNode != 0 {
			es.Add("cluster.devices_per_node", "must divide the %d devices of cluster.devices, got %d", n, cs.DevicesPerNode)
		}
		if cs.Link != "" {
			es.Add("cluster.link", "goes without cluster.devices_per_node: a cluster of nodes has link_intra and link_inter")
		}
		per = max(1, cs.DevicesPerNode)
		if cs.LinkIntra != "" {
			intra = cs.LinkIntra
		}
		if cs.LinkInter != "" {
			inter = cs.LinkInter
		}
	default:
		for _, f := range []struct{ name, v string }{{"link_intra", cs.LinkIntra}, {"link_inter", cs.LinkInter}} {
			if f.v != "" {
				es.Add("cluster."+f.name, "goes with cluster.devices_per_node (a cluster of nodes); between all devices give cluster.link")
			}
		}
		if cs.Link != "" {
			intra = cs.Link
		}
	}
	if inter == "" {
		inter = intra
	}
	links := map[string]cluster.Link{}
	for _, l := range []struct{ field, name string }{{"link_intra", intra}, {"link_inter", inter}} {
		p, err := cluster.LookupLink(l.name)
		if err != nil {
			field := "cluster." + l.field
			if cs.DevicesPerNode == 0 {
				field = "cluster.link"
			}
			es.Add(field, "%v", err)
			continue
		}
		links[l.field] = p.Link
	}
	if len(*es) > before {
		return false
	}
	for i := 0; i+1 < n; i++ {
		if (i+1)%per == 0 {
			doc.Links = append(doc.Links, links["link_inter"])
		} else {
			doc.Links = append(doc.Links, links["link_intra"])
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		es.Add("cluster.devices", "%v", err)
		return false
	}
	*cs = wire.ClusterSpec{Document: data, DataLink: cs.DataLink, FreeTransfers: cs.FreeTransfers}
	return true
}
