package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"pipeplan/core/wire"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Nodes of one device preset are the request's nodes (cluster.devices_per_node with the
// links inside and between nodes), not a document: core places the stages on the nodes.
func TestClusterNodes(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.SetDegree("data", "1") // one pipeline, the user's: no starting layout (TestStartLayout)
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "4")
	a.SetCluster("nodes", "2")
	cs := a.Req.Cluster
	if len(cs.Document) != 0 || cs.Device != "h100-sxm" || cs.Count != 8 || cs.DevicesPerNode != 4 || cs.Link != "" {
		t.Fatalf("2 nodes of 4: %+v", cs)
	}
	if a.Err != nil || a.Res.Placement == nil || a.Res.Placement.Nodes != 2 {
		t.Fatalf("2 nodes of 4: %v, placement %+v", a.Err, a.Res.Placement)
	}
	if f := a.Form(); f.Nodes != 2 || f.PerNode != 4 || f.Device != "h100-sxm" || len(f.Devices) != 8 {
		t.Errorf("form: %+v", f)
	}
	a.SetCluster("link", "nvswitch3")
	a.SetCluster("inter_link", "roce-400g")
	if cs := a.Req.Cluster; cs.LinkIntra != "nvswitch3" || cs.LinkInter != "roce-400g" {
		t.Errorf("links: %+v", cs)
	}
	if f := a.Form(); f.Link != "nvswitch3" || f.InterLink != "roce-400g" {
		t.Errorf("form's links: %+v", f)
	}
	if s := a.Parallel(); !strings.Contains(s, "8 devices in use: 8 pipeline stages, on 2 nodes; 1 of 7 stage transfers cross nodes") {
		t.Errorf("Parallel() = %q", s)
	}
	// Back to one node: a plain count with the link between all devices.
	a.SetCluster("nodes", "1")
	if cs := a.Req.Cluster; cs.DevicesPerNode != 0 || cs.Count != 4 || cs.Link != "nvswitch3" || cs.LinkInter != "" {
		t.Errorf("one node: %+v", cs)
	}
}

// Per-device overrides give each device's preset in the request (cluster.devices), which
// core plans as the cluster document they stand for; the form reads them back from the
// request. The page writes no cluster document.
func TestClusterPerDevice(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.SetCluster("device", "a100-80gb")
	a.SetCluster("per_node", "2")
	a.SetCluster("nodes", "3")
	a.SetCluster("inter_link", "ib-ndr")
	a.SetCluster("device:3", "h100-sxm")
	cs := a.Req.Cluster
	want := []string{"a100-80gb", "a100-80gb", "a100-80gb", "h100-sxm", "a100-80gb", "a100-80gb"}
	if len(cs.Document) != 0 || !slices.Equal(cs.Devices, want) || cs.Device != "a100-80gb" || cs.Count != 6 ||
		cs.DevicesPerNode != 2 || cs.LinkInter != "ib-ndr" || a.Err != nil {
		t.Fatalf("mixed: %+v %v", cs, a.Err)
	}
	f := a.Form()
	if f.FromFile || f.Nodes != 3 || f.PerNode != 2 || f.Device != "a100-80gb" || f.Link != "" || f.InterLink != "ib-ndr" || f.Devices[3] != "h100-sxm" {
		t.Errorf("form of the mixed cluster: %+v", f)
	}
	if got := a.Res.Plan.Stages[3].Device; got != "h100-sxm" {
		t.Errorf("stage 3 runs on %s", got)
	}
	// Undoing the override goes back to nodes of one preset.
	a.SetCluster("device:3", "a100-80gb")
	if cs := a.Req.Cluster; len(cs.Devices) != 0 || cs.DevicesPerNode != 2 || cs.Count != 6 || cs.LinkInter != "ib-ndr" {
		t.Errorf("undone: %+v", cs)
	}
	// A cluster document is a file: the form does not edit it.
	a.Req.Cluster = wire.ClusterSpec{Document: json.RawMessage(`{"devices": [{"name": "a100-80gb"}, {"name": "a100-80gb"}], "links": [{"bytes_per_second": 1e9}]}`)}
	if f := a.Form(); !f.FromFile {
		t.Errorf("a document read as the form: %+v", f)
	}
}

// The tensor-parallel degree and sequence parallelism are knobs of architectures: the
// pipeline gets devices / t stages, and t must divide the devices per node (core says so).
func TestTensorKnob(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-2-7b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "2")
	a.SetTensor("4")
	// Core's starting layout splits the 4 groups of 4 into stages x replicas.
	if a.Err != nil || a.Req.Parallelism.Tensor != 4 || len(a.Res.Plan.Stages)*max(1, a.Req.Parallelism.Data) != 4 || a.Res.Step.Devices != 16 || a.Layout == "" {
		t.Fatalf("t=4 on 16: %v %+v %q", a.Err, a.Req.Parallelism, a.Layout)
	}
	a.SetDegree("data", "1")
	a.SetCheck("sequence_parallel", true)
	if !a.Req.Parallelism.SequenceParallel || a.Err != nil {
		t.Errorf("sequence parallel: %+v %v", a.Req.Parallelism, a.Err)
	}
	if s := a.Parallel(); !strings.Contains(s, "16 devices in use: 4 pipeline stages × 4-way tensor parallel, on 2 nodes") {
		t.Errorf("Parallel() = %q", s)
	}
	// The knobs survive a change of the devices; a degree that does not divide a node is
	// core's error, named by field.
	a.SetCluster("per_node", "6")
	if a.Req.Parallelism.Tensor != 4 || a.Err == nil || !strings.Contains(a.Err.Error(), "parallelism.tensor") {
		t.Errorf("t=4 on nodes of 6: %+v %v", a.Req.Parallelism, a.Err)
	}
	a.SetTensor("")
	if a.Req.Parallelism.Tensor != 0 || a.Req.Parallelism.SequenceParallel || a.Err != nil {
		t.Errorf("t cleared: %+v %v", a.Req.Parallelism, a.Err)
	}
	a.SetTab("cluster")
	if html := render(t, a); !strings.Contains(html, `id="cluster-tensor"`) {
		t.Error("the Cluster panel has no tensor-parallel knob for an architecture")
	}
	a.SetTensor("2")
	a.PickModel("example:gpt2-medium")
	if a.Err != nil || a.Req.Parallelism.Tensor != 0 {
		t.Errorf("a profile keeps tensor parallelism: %+v %v", a.Req.Parallelism, a.Err)
	}
	if html := render(t, a); strings.Contains(html, `id="cluster-tensor"`) {
		t.Error("the Cluster panel offers tensor parallelism for a profile")
	}
}

// The replicas, sharding and context-parallel knobs fill the request's parallelism;
// core plans them and says what goes together; context parallelism is an
// architecture's, and goes with a profile.
func TestShardingAndContextKnobs(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-2-7b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "2")
	a.SetDegree("data", "2")
	a.SetKnob("sharding", "zero3")
	a.SetDegree("context", "2")
	if a.Err != nil || a.Res == nil || a.Res.Step == nil {
		t.Fatalf("d=2 zero3 c=2: %v", a.Err)
	}
	if par := a.Req.Parallelism; par.Data != 2 || par.Sharding != "zero3" || par.Context != 2 || a.Res.Step.Devices != 16 {
		t.Fatalf("parallelism %+v, %d devices", par, a.Res.Step.Devices)
	}
	if s := a.Parallel(); !strings.Contains(s, "4 pipeline stages × 2 replicas × 2-way context parallel") {
		t.Errorf("Parallel() = %q", s)
	}
	a.SetKnob("context_method", "all-to-all")
	if a.Err != nil || a.Req.Parallelism.ContextMethod != "all-to-all" {
		t.Errorf("all-to-all: %+v %v", a.Req.Parallelism, a.Err)
	}
	a.SetKnob("context_method", "")
	a.SetKnob("seq", "4008")
	a.SetDegree("context", "8") // ring attention's 16 chunks do not split 4008 tokens: core says so by field
	if a.Err == nil || !strings.Contains(a.Err.Error(), "parallelism.context") {
		t.Errorf("c=8, s=4008: %v", a.Err)
	}
	a.SetDegree("context", "")
	a.SetKnob("seq", "")
	a.SetCluster("nodes", "1") // the panel's knobs stay
	if par := a.Req.Parallelism; par.Data != 2 || par.Sharding != "zero3" || a.Err != nil {
		t.Errorf("after a change of the devices: %+v %v", par, a.Err)
	}
	a.SetTab("cluster")
	html := render(t, a)
	for _, id := range []string{"cluster-replicas", "cluster-sharding", "cluster-context"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Cluster panel has no %s", id)
		}
	}
	a.SetDegree("context", "2")
	a.PickModel("example:gpt2-medium")
	if a.Req.Parallelism.Context != 0 || a.Req.Parallelism.Sharding != "zero3" || a.Err != nil {
		t.Errorf("a profile: %+v %v", a.Req.Parallelism, a.Err)
	}
	if html := render(t, a); strings.Contains(html, `id="cluster-context"`) {
		t.Error("the Cluster panel offers context parallelism for a profile")
	}
}

// TestFP8RecipeKnob: the page offers core's fp8 recipes; one the device lacks is core's
// error, named by field.
func TestFP8RecipeKnob(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-2-7b")
	a.SetCluster("device", "b200")
	a.SetKnob("fp8_recipe", "mxfp8")
	if a.Err != nil || a.Req.Training.FP8Recipe != "mxfp8" || a.Field("fp8_recipe") != "mxfp8" {
		t.Fatalf("mxfp8 on b200: %v %+v", a.Err, a.Req.Training)
	}
	a.SetCluster("device", "h100-sxm")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "training.fp8_recipe") {
		t.Errorf("mxfp8 on h100-sxm: %v", a.Err)
	}
	a.SetTab("model")
	if html := render(t, a); !strings.Contains(html, `id="knob-fp8-recipe"`) {
		t.Error("the page has no fp8 recipe knob")
	}
}

// TestStartLayout: 2 nodes of 8 H100s for Llama-3-8B start from core's layout
// (request.StartLayout), not 16 stages, and the panel says where it came from; replicas
// the user types stay through a change of the devices. The knobs' defaults say what
// core resolves them to, and the precisions are core's.
func TestStartLayout(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:meta-llama-3-8b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "2")
	// Core's layout (request.StartLayout's test checks it is the fastest split): replicas,
	// not 16 stages.
	d, p := a.Req.Parallelism.Data, len(a.Res.Plan.Stages)
	if a.Err != nil || d < 2 || p*d != 16 || !strings.Contains(a.Layout, "starting layout") {
		t.Fatalf("layout: %v %+v, %d stages, %q", a.Err, a.Req.Parallelism, p, a.Layout)
	}
	if s := a.Parallel(); !strings.Contains(s, fmt.Sprintf("× %d replicas", d)) {
		t.Errorf("Parallel() = %q", s)
	}
	a.SetTab("cluster")
	if html := render(t, a); !strings.Contains(html, `id="cluster-layout"`) {
		t.Error("the cluster panel does not say where the layout came from")
	}
	a.SetDegree("data", "4")
	a.SetCluster("nodes", "1")
	if a.Req.Parallelism.Data != 4 || a.Layout != "" {
		t.Errorf("the user's replicas: %+v %q", a.Req.Parallelism, a.Layout)
	}
	for name, want := range map[string]string{"dtype": "default (bf16)", "precision": "default (mixed)", "optimizer": "default (adamw)", "attention": "default (flash)"} {
		if got := a.ChoiceText(name, ""); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := a.ChoiceText("schedule", ""); got != "default (1f1b)" {
		t.Errorf("schedule: %q", got)
	}
	if got := a.DefaultText("seq"); got != "default: 4096" {
		t.Errorf("seq: %q", got)
	}
	for _, p := range []string{"mixed", "mixed-fp32-grads", "amp", "pure"} {
		if !strings.Contains(strings.Join(KnobChoices("precision"), ","), p) {
			t.Errorf("precision %s is not offered", p)
		}
	}
}

// TestCapacity: the same preset's capacity is 76 GiB for a measured profile and 80 GiB
// for an architecture; the note under the stage table (the planner's) says why.
func TestCapacity(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.SetCluster("device", "h100-sxm")
	if r := a.Rows(); len(r) == 0 || r[0].Limit != "76 GiB" || !strings.Contains(a.Resolved("capacity"), "95% of each h100-sxm's 80 GiB is usable") {
		t.Errorf("a profile on an H100: %+v %q", r, a.Resolved("capacity"))
	}
	a.PickModel("arch:llama-3.2-1b")
	if r := a.Rows(); len(r) == 0 || r[0].Limit != "80 GiB" || !strings.Contains(a.Resolved("capacity"), "counted in each stage") {
		t.Errorf("an architecture on an H100: %+v %q", r, a.Resolved("capacity"))
	}
}

// A change of the devices keeps every parallelism field but the pipeline, which
// follows from the devices: fields set in the request (a pasted or shared one, or a
// field added to wire.Parallelism later) are not lost.
func TestClusterKeepsParallelism(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	var p wire.Parallelism
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 2))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString(fmt.Sprintf("value-%d", i))
		default:
			t.Fatalf("wire.Parallelism.%s: a %s the test does not fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	a.Req.Parallelism = p
	got := a.panelParallelism()
	want := p
	want.Pipeline = 0
	if got != want {
		t.Errorf("kept %+v, want %+v", got, want)
	}
}

// The memory bar's parts add up to the stage's memory: weights and gradients, optimizer
// state, other static items, PyTorch's pipeline stage buffers, activations in flight,
// the working peak, and the framework's fixed memory with the allocator's reserve (a
// Llama on four H100 stages in eager PyTorch, which holds the buffers).
func TestStageMemoryParts(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-3.2-1b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "4")
	a.SetDegree("data", "1")
	if a.Err != nil || a.Res == nil || a.Res.Plan == nil {
		t.Fatalf("the plan: %v", a.Err)
	}
	buffers := false
	for i, r := range NewStageRows(a.Res.Plan) {
		s := a.Res.Plan.Stages[i]
		sum := 0.0
		for _, p := range r.Parts {
			sum += p.Pct
			buffers = buffers || p.Class == "mp-b"
		}
		if want := 100 * float64(s.MemoryBytes) / float64(s.LimitBytes); math.Abs(sum-want) > 1e-9 {
			t.Errorf("stage %d: the parts come to %.6f%% of the limit, the stage holds %.6f%%: %+v", i, sum, want, r.Parts)
		}
	}
	if !buffers {
		t.Error("no stage shows PyTorch's pipeline stage buffers")
	}
}
