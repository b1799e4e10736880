package request

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// TestPerDeviceIsTheDocument: a cluster given by per-device presets (cluster.devices)
// plans as the cluster document it stands for (the one the page wrote itself before
// core read cluster.devices), to the byte, with the same content id.
func TestPerDeviceIsTheDocument(t *testing.T) {
	link := func(name string) string {
		p, err := cluster.LookupLink(name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p.Link)
		return string(b)
	}
	nvl3, ib := link("nvlink3"), link("ib-hdr")
	pcie := link("pcie4")
	doc := func(devices []string, links ...string) string {
		var ds []string
		for _, d := range devices {
			ds = append(ds, `{"name":"`+d+`"}`)
		}
		return `{"name":"mixed cluster (pipeplan page)","devices":[` + strings.Join(ds, ",") + `],"links":[` + strings.Join(links, ",") + `]}`
	}
	const model = `"model":{"example":"gpt2-medium"}`
	for _, tc := range []struct{ name, devices, document string }{
		{"one node, the usual link",
			`{"device":"a100-80gb","count":4,"devices":["a100-80gb","a100-40gb","a100-80gb","a100-80gb"]}`,
			doc([]string{"a100-80gb", "a100-40gb", "a100-80gb", "a100-80gb"}, nvl3, nvl3, nvl3)},
		{"one node, a link given",
			`{"device":"a100-80gb","link":"pcie4","devices":["a100-40gb","a100-80gb"]}`,
			doc([]string{"a100-40gb", "a100-80gb"}, pcie)},
		{"two nodes, the usual links",
			`{"device":"a100-80gb","count":4,"devices_per_node":2,"devices":["a100-80gb","a100-80gb","a100-40gb","a100-40gb"]}`,
			doc([]string{"a100-80gb", "a100-80gb", "a100-40gb", "a100-40gb"}, nvl3, ib, nvl3)},
		{"two nodes, links given",
			`{"device":"a100-80gb","devices_per_node":2,"link_intra":"pcie4","link_inter":"nvlink3","devices":["a100-80gb","a100-80gb","a100-40gb","a100-40gb"]}`,
			doc([]string{"a100-80gb", "a100-80gb", "a100-40gb", "a100-40gb"}, pcie, nvl3, pcie)},
	} {
		byDevices := decode(t, `{`+model+`,"cluster":`+tc.devices+`}`)
		byDocument := decode(t, `{`+model+`,"cluster":{"document":`+tc.document+`}}`)
		idA, errA := ID(byDevices)
		idB, errB := ID(byDocument)
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v; %v", tc.name, errA, errB)
		}
		if idA != idB {
			t.Errorf("%s: id %s, the document's %s", tc.name, idA, idB)
		}
		a, b := run(t, byDevices), run(t, byDocument)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: the result differs from the document's:\n%s\n%s", tc.name, ja, jb)
		}
	}
	r := decode(t, `{`+model+`,"cluster":{"device":"a100-80gb","devices":["a100-80gb","a100-40gb"]}}`)
	if _, err := Run(context.Background(), r); err != nil || len(r.Cluster.Devices) != 2 || len(r.Cluster.Document) != 0 {
		t.Errorf("Run changed the caller's cluster to %+v (err %v)", r.Cluster, err)
	}
}

// TestPerDeviceRefuses: bad per-device clusters are errors naming the field.
func TestPerDeviceRefuses(t *testing.T) {
	const m = `{"model":{"example":"gpt2-medium"},"cluster":`
	for _, tc := range []struct{ cluster, path string }{
		{`{"devices":["a100-80gb","a100-80gb"]}`, "cluster.device"},
		{`{"device":"a100-80gb","devices":["a100-80gb","tpu-v9"]}`, "cluster.devices[1]"},
		{`{"device":"a100-80gb","count":3,"devices":["a100-80gb","a100-80gb"]}`, "cluster.count"},
		{`{"device":"a100-80gb","devices_per_node":3,"devices":["a100-80gb","a100-80gb"]}`, "cluster.devices_per_node"},
		{`{"device":"a100-80gb","link":"smoke-signals","devices":["a100-80gb","a100-80gb"]}`, "cluster.link"},
		{`{"device":"a100-80gb","devices_per_node":1,"link_inter":"smoke","devices":["a100-80gb","a100-80gb"]}`, "cluster.link_inter"},
		{`{"device":"a100-80gb","link_intra":"pcie4","devices":["a100-80gb","a100-80gb"]}`, "cluster.link_intra"},
	} {
		_, err := Normalize(decode(t, m+tc.cluster+`}`))
		es, ok := model.AsFieldErrors(err)
		if !ok || len(es) == 0 || es[0].Path != tc.path {
			t.Errorf("%s: %v, want an error at %s", tc.cluster, err, tc.path)
		}
	}
}
