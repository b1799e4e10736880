package ui

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"pipeplan/core/request"
)

func TestFragmentRoundTrip(t *testing.T) {
	r := InitialRequest()
	r.Boundaries = []int{0, 5, 26}
	r.Model.Architecture = nil
	f, err := EncodeFragment(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f, "r1.") || strings.ContainsAny(f, "+/=#") {
		t.Fatalf("fragment %q is not URL-safe", f)
	}
	got, err := DecodeFragment("#"+f, FlateInflate)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := EncodeFragment(got)
	if a != f {
		t.Fatalf("round trip changed the request")
	}
	for _, bad := range []string{"", "#x", "r1.!!", "r1.AAAA", f[:len(f)/2]} {
		if _, err := DecodeFragment(bad, FlateInflate); err == nil {
			t.Errorf("DecodeFragment(%q) accepted a bad link", bad)
		}
	}
}

// TestFlateInflateLimit: Inflate reads one byte past its limit, so that a caller sees a
// link that inflates to too much.
func TestFlateInflateLimit(t *testing.T) {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(bytes.Repeat([]byte("x"), 1000))
	w.Close()
	if out, err := FlateInflate(buf.Bytes(), 1000); err != nil || len(out) != 1000 {
		t.Errorf("limit 1000: %d bytes, %v", len(out), err)
	}
	if out, err := FlateInflate(buf.Bytes(), 10); err != nil || len(out) != 11 {
		t.Errorf("limit 10: %d bytes, %v", len(out), err)
	}
}

// TestEmbedExampleFragment keeps public/embed-example.html's iframe link valid.
func TestEmbedExampleFragment(t *testing.T) {
	data, err := os.ReadFile("../public/embed-example.html")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`embed=1#(r1\.[A-Za-z0-9_-]+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no embed link in public/embed-example.html")
	}
	r, err := DecodeFragment(string(m[1]), FlateInflate)
	if err != nil {
		t.Fatal(err)
	}
	res, err := request.Run(context.Background(), r)
	if err != nil || !res.Feasible {
		t.Fatalf("the embed example's request does not plan: %v %+v", err, res)
	}
}

// fakeHost records what the app asks of the browser. Its Fetch sends to server (an
// http.Handler: the real shared-plans handler) or, when nil, fails as a browser's fetch
// fails when nothing answers.
type fakeHost struct {
	kept   []string
	pushes int
	copied string
	server http.Handler
	saved  string
}

func (h *fakeHost) Fetch(method, url string, body []byte, limit int64, timeout time.Duration) (int, []byte, error) {
	if h.server == nil {
		return 0, nil, errors.New("TypeError: Failed to fetch")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.server.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), nil
}
func (h *fakeHost) Inflate(data []byte, limit int) ([]byte, error) {
	return FlateInflate(data, limit)
}
func (h *fakeHost) PlanLink(id, server string) string {
	return "https://example.org/pp/?plan=" + id + "&server=" + server
}
func (h *fakeHost) SaveServer(s string) { h.saved = s }

func (h *fakeHost) Keep(f string, push bool) {
	h.kept = append(h.kept, f)
	if push {
		h.pushes++
	}
}

// ImportFile: the tests call App.ImportAnswer with the planner's answer themselves.
func (h *fakeHost) ImportFile(vugu.DOMEvent, func(string, string, error)) {}

func (h *fakeHost) Copy(s string)                                { h.copied = s }
func (h *fakeHost) Download(string, string, []byte)              {}
func (h *fakeHost) Link(f string, embed bool) string             { return "https://example.org/pp/#" + f }
func (h *fakeHost) ReadFile(vugu.DOMEvent, func(string, []byte)) {}
func (h *fakeHost) BarX(vugu.DOMEvent, float64) float64          { return 0 }
func (h *fakeHost) Capture(vugu.DOMEvent)                        {}
func (h *fakeHost) Focus(string)                                 {}
func (h *fakeHost) Background(f func())                          { f() }
func (h *fakeHost) Update(f func(), render bool)                 { f() }
func (h *fakeHost) Yield()                                       {}

// render renders the root component to HTML with vugu's static renderer.
func render(t *testing.T, a *App) string {
	t.Helper()
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{A: a})); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestRenderPanels(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	for _, tab := range Tabs {
		a.SetTab(tab.ID)
		html := render(t, a)
		for _, want := range []string{`id="panel-` + tab.ID + `"`, `id="bar-main"`, `aria-selected="true"`} {
			if !strings.Contains(html, want) {
				t.Errorf("%s panel: no %s in\n%.2000s", tab.ID, want, html)
			}
		}
		// The boundaries are set on the bar outside the virtual DOM (App.Detached).
		if d := a.Detached(); len(d) == 0 || d[0] != (Detached{"#bar-main", "data-boundaries", true, "0,8,15,22,26"}) {
			t.Errorf("%s panel: detached %+v, want the bar's boundaries first", tab.ID, d)
		}
	}
	a.SetTab("plan")
	html := render(t, a)
	if n := strings.Count(html, `class="handle"`); n != 3 {
		t.Errorf("the stage bar has %d handles, want 3", n)
	}
	if !strings.Contains(html, "▲ bottleneck") {
		t.Error("the bottleneck is not labelled in words")
	}
	a.SetTab("schedule")
	if html := render(t, a); !strings.Contains(html, `class="op-f"`) || !strings.Contains(html, `class="op-b"`) {
		t.Error("the timeline has no forward or backward operations")
	}
	a.SetTab("export")
	if html := render(t, a); !strings.Contains(html, "export-pytorch") || !strings.Contains(html, "torch") {
		t.Error("the export panel has no PyTorch export")
	}
	a.Embed = true
	html = render(t, a)
	if strings.Contains(html, "<input") || strings.Contains(html, "<select") || strings.Contains(html, `class="handle"`) {
		t.Error("the embed view has controls")
	}
}

func TestEditsReplanAndKeep(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	before := a.Res.Plan.Boundaries
	a.SetDegree("data", "1") // one pipeline, the user's: no starting layout (TestStartLayout)
	a.SetCluster("per_node", "3")
	if got := len(a.Res.Plan.Stages); got != 3 {
		t.Fatalf("3 devices: %d stages", got)
	}
	if len(h.kept) == 0 {
		t.Fatal("the edit was not kept")
	}
	r, err := DecodeFragment(h.kept[len(h.kept)-1], FlateInflate)
	if err != nil || r.Cluster.Count != 3 {
		t.Fatalf("the kept request: %+v %v", r, err)
	}
	// A number box keeps what is typed while it is not a number, and the plan stays.
	a.SetCluster("per_node", "")
	if a.Val("per_node", 3) != "" || len(a.Res.Plan.Stages) != 3 {
		t.Error("clearing the box changed the plan or lost the typing")
	}
	// Overrides make a mixed cluster.
	a.SetCluster("device:1", "h100-sxm")
	if f := a.Form(); f.FromFile || f.Devices[1] != "h100-sxm" || f.Devices[0] != "a100-80gb" {
		t.Errorf("form after an override: %+v", f)
	}
	if a.Err != nil || a.Res.Plan.Stages[1].Device != "h100-sxm" {
		t.Errorf("mixed cluster: %v %+v", a.Err, a.Res.Plan.Stages)
	}
	a.SetCluster("nodes", "2")
	if f := a.Form(); f.Nodes != 2 || f.PerNode != 3 || len(f.Devices) != 6 {
		t.Errorf("form with 2 nodes: %+v", f)
	}
	// A manual split beside the optimum.
	a.SetCluster("device", "a100-80gb")
	a.SetCluster("per_node", "4")
	a.SetCluster("nodes", "1")
	a.MoveBoundary(1, before[1]+2)
	if a.Opt == nil || a.Res.Plan.Boundaries[1] != before[1]+2 {
		t.Fatalf("manual split: %v, optimum %v", a.Res.Plan.Boundaries, a.Opt)
	}
	if a.Res.Plan.Bottleneck() < a.Opt.Plan.Bottleneck() {
		t.Error("a manual split beats the optimum")
	}
	a.ClearManual()
	if a.Opt != nil || !equalInts(a.Res.Plan.Boundaries, before) {
		t.Errorf("back to the optimum: %v", a.Res.Plan.Boundaries)
	}
	a.Share()
	if !strings.Contains(h.copied, "#r1.") {
		t.Errorf("Share copied %q", h.copied)
	}
}

func TestImport(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	before, _ := EncodeFragment(a.Req)
	a.Import("bad.json", []byte(`{"layers": [{"name": "a", "forward_seconds": -1}]}`))
	if !a.NoticeBad || !strings.Contains(a.Notice, "bad.json was not loaded") || !strings.Contains(a.Notice, "forward_seconds") {
		t.Errorf("bad file: %q", a.Notice)
	}
	if after, _ := EncodeFragment(a.Req); after != before {
		t.Error("a bad file changed the request")
	}
	a.Import("config.json", []byte(`{"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}`))
	if a.NoticeBad || a.ModelSource() != "architecture" || a.LayerCount() == 0 {
		t.Errorf("HF config: %q %s %d %v", a.Notice, a.ModelSource(), a.LayerCount(), a.Err)
	}
	a.Import("empty.txt", nil)
	if !a.NoticeBad {
		t.Error("an empty file was accepted")
	}
}

func TestLayerPageWindow(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	if n := len(a.Layers()); n != 26 {
		t.Fatalf("%d rows", n)
	}
	a.PageLayers(0, 20)
	if r := a.Layers(); len(r) != 6 || r[0].Index != 20 || r[0].Stage != "2" {
		t.Errorf("window from 20: %+v", r[0])
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSearchApply(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.SetSearchKnob("max_devices", "4")
	a.SetSearchKnob("schedule", "1f1b")
	a.SetSearchKnob("microbatch_size", "")
	a.StartSearch()
	s := a.Search
	if s.Err != "" || s.Report == nil || s.Report.Best == nil {
		t.Fatalf("search: %q %+v", s.Err, s.Report)
	}
	rows := a.Results()
	if len(rows) == 0 || !rows[0].Best {
		t.Fatalf("the fastest row is not the best: %+v", rows)
	}
	a.SetTab("search")
	if html := render(t, a); !strings.Contains(html, "★ best") || !strings.Contains(html, `id="search-results"`) {
		t.Errorf("the search panel does not show the results:\n%s", html[strings.Index(html, "panel-search"):])
	}
	a.SortResults("devices")
	if r := a.Results(); r[0].Devices < r[len(r)-1].Devices {
		t.Error("sorting by devices does not put the most first")
	}
	if a.Chart() == nil {
		t.Error("no chart")
	}
	a.Apply(rows[0].Key)
	if a.Tab != "plan" || a.Err != nil || a.Res == nil || len(a.Res.Plan.Stages) != rows[0].Stages {
		t.Errorf("apply: tab %s, err %v, %d stages, want %d", a.Tab, a.Err, len(a.Res.Plan.Stages), rows[0].Stages)
	}
	if f := a.Form(); len(f.Devices) != rows[0].Devices {
		t.Errorf("after apply the cluster panel shows %d devices, the result uses %d", len(f.Devices), rows[0].Devices)
	}
	if got, want := a.Res.Step.SamplesPerSecond, rows[0].o.SamplesPerSecond; got != want {
		t.Errorf("applied plan runs %v samples/s, the search said %v", got, want)
	}
}

// TestTenThousandLayers: the layer table shows a window of a 10,000-layer model, so that
// drawing the Model panel does not grow with the model.
func TestTenThousandLayers(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name": "deep", "inputs": [{"id": "x", "bytes": 1024}], "layers": [`)
	for i := range 10000 {
		if i > 0 {
			b.WriteString(",")
		}
		in := "x"
		if i > 0 {
			in = fmt.Sprintf("h%d", i-1)
		}
		fmt.Fprintf(&b, `{"name": "l%d", "forward_seconds": 0.0001, "backward_seconds": 0.0002, "param_bytes": 1048576, "activation_bytes": 1048576, "inputs": [%q], "outputs": [{"id": "h%d", "bytes": 4096}]}`, i, in, i)
	}
	b.WriteString("]}")
	a := NewApp(nil, &fakeHost{}, local)
	start := time.Now()
	a.Import("deep.json", []byte(b.String()))
	if a.NoticeBad || a.LayerCount() != 10000 {
		t.Fatalf("import: %q, %d layers", a.Notice, a.LayerCount())
	}
	t.Logf("importing and planning 10,000 layers natively: %v", time.Since(start))
	a.SetTab("model")
	a.PageLayers(0, 9990)
	start = time.Now()
	html := render(t, a)
	t.Logf("drawing the Model panel: %v", time.Since(start))
	if n := strings.Count(html, "<tr>") - 1; n != 10 { // the header row, then layers 9990..9999
		t.Errorf("the table draws %d rows of the last window, want 10", n)
	}
	if !strings.Contains(html, "layers 9990–9999 of 10000") {
		t.Error("the pager does not say which layers it shows")
	}
	// The layer costs (request.layers) fill the window's rows: layer 9995's times and
	// memory, as units formats them.
	if !a.HasLayerCosts() || !strings.Contains(html, "<td>l9995</td>") {
		t.Fatal("no layer costs for the 10,000 layers")
	}
	row := html[strings.Index(html, "<td>l9995</td>"):]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{"100.0 µs", "200.0 µs", "1 MiB", "4 KiB"} {
		if !strings.Contains(row, want) {
			t.Errorf("layer 9995's row %q lacks %s", row, want)
		}
	}
	f, err := EncodeFragment(a.Req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the request's fragment: %d bytes", len(f))
}

// A request from before the layer costs (no layers) shows names and stages, and a button
// that asks core for the costs.
func TestShowLayerCosts(t *testing.T) {
	r := InitialRequest()
	r.Layers = false
	a := NewApp(r, &fakeHost{}, local)
	a.SetTab("model")
	if html := render(t, a); a.HasLayerCosts() || !strings.Contains(html, `id="layer-costs"`) || strings.Contains(html, ">Forward<") {
		t.Fatal("a request without layers shows costs, or no button to ask for them")
	}
	a.ShowLayerCosts()
	if html := render(t, a); !a.HasLayerCosts() || !a.Req.Layers || !strings.Contains(html, ">Forward<") {
		t.Error("Show each layer's costs did not show them")
	}
}

// TestSearchExperts: for a mixture of experts the search panel's expert knob fixes the
// expert-parallel degree, and the results show each candidate's.
func TestSearchExperts(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:qwen1.5-moe-a2.7b")
	a.SetCluster("device", "h100-sxm")
	a.SetSearchKnob("max_devices", "16")
	a.SetSearchKnob("schedule", "1f1b")
	a.SetSearchKnob("stages", "2")
	a.SetSearchKnob("expert", "4")
	a.SetSearchKnob("microbatch_size", "1")
	a.StartSearch()
	s := a.Search
	if s.Err != "" || s.Report == nil || s.Report.Best == nil {
		t.Fatalf("search: %q %+v", s.Err, s.Report)
	}
	if len(a.Results()) == 0 {
		t.Fatal("no feasible results")
	}
	for _, r := range a.Results() {
		if r.Expert != 4 || r.Replicas%4 != 0 {
			t.Fatalf("row %s: expert %d, replicas %d; want expert 4 dividing the replicas", r.Key, r.Expert, r.Replicas)
		}
	}
	a.SetTab("search")
	if html := render(t, a); !strings.Contains(html, ">e</button>") {
		t.Errorf("the results have no expert column")
	}
	a.SetSearchKnob("expert", "x")
	a.StartSearch()
	if !strings.Contains(a.Search.Err, "expert: enter a whole number") {
		t.Errorf("a bad expert knob: %q", a.Search.Err)
	}
}

// TestFP8ParamGatherKnob: the page's fp8 primary weights box sets
// training.fp8_param_gather: with fp8 the plan keeps no 16-bit copy of the fp8 products'
// weights (less parameter memory), and core's refusal without fp8 names the field.
func TestFP8ParamGatherKnob(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:meta-llama-3-8b")
	a.SetCluster("device", "h100-sxm")
	a.SetKnob("dtype", "fp8")
	if a.Err != nil || a.Res == nil || a.Res.Plan == nil {
		t.Fatalf("fp8 plan: %v", a.Err)
	}
	before := a.Res.Plan.Stages[0].ParamBytes
	a.SetCheck("fp8_param_gather", true)
	if !a.Req.Training.FP8ParamGather || a.Err != nil || a.Res.Plan == nil {
		t.Fatalf("with fp8 primary weights: %v", a.Err)
	}
	if after := a.Res.Plan.Stages[0].ParamBytes; !(after < before) {
		t.Errorf("stage 0 holds %d parameter bytes with fp8 primary weights, %d without: want fewer", after, before)
	}
	a.SetTab("model")
	if html := render(t, a); !strings.Contains(html, `id="knob-fp8-param-gather"`) {
		t.Error("the page has no fp8 primary weights box")
	}
	a.SetKnob("dtype", "bf16")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "fp8_param_gather") {
		t.Errorf("fp8 primary weights with bf16: %v, want core's refusal naming training.fp8_param_gather", a.Err)
	}
}

// TestFP8AmaxTPOnlyKnob: the box for training.fp8_amax_tp_only applies where core's
// normal form says it does (request.FP8AmaxTPOnlyApplies: fp8 training under the
// delayed recipe), sets the field, and the plan follows (Megatron-Core's amax
// all-reduce over the 2 tensor-parallel ranks instead of all 8 of a stage's); under
// another recipe core refuses it by name and the box stays enabled to answer that.
func TestFP8AmaxTPOnlyKnob(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:meta-llama-3-8b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "8")
	a.SetTensor("2")
	a.SetDegree("data", "4") // the amax group: 2 x 4 ranks, or the 2 of TP
	a.SetField("framework", "megatron")
	disabled := func() bool {
		for _, f := range a.KnobFields("arch") {
			if f.Name == "fp8_amax_tp_only" {
				return f.Disabled
			}
		}
		t.Fatal("no fp8_amax_tp_only knob")
		return false
	}
	if a.Err != nil || !disabled() {
		t.Fatalf("bf16: err %v, the box enabled %v (normal form %q)", a.Err, !disabled(), a.Resolved("fp8_amax_tp_only"))
	}
	a.SetKnob("dtype", "fp8")
	if a.Err != nil || disabled() {
		t.Fatalf("fp8 delayed: err %v, the box disabled %v", a.Err, disabled())
	}
	before := a.Res.Step.StepSeconds
	a.SetCheck("fp8_amax_tp_only", true)
	if !a.Req.Training.FP8AmaxTPOnly || a.Err != nil || a.Field("fp8_amax_tp_only") != "true" {
		t.Fatalf("ticked: request %v, err %v", a.Req.Training.FP8AmaxTPOnly, a.Err)
	}
	if after := a.Res.Step.StepSeconds; !(after < before) {
		t.Errorf("the amax over 2 ranks instead of %d: step %v s, was %v s; want shorter", a.Req.Cluster.Count, after, before)
	}
	a.SetKnob("fp8_recipe", "current")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "training.fp8_amax_tp_only") || disabled() {
		t.Errorf("current scaling: %v, disabled %v; want core's refusal naming training.fp8_amax_tp_only, the box enabled", a.Err, disabled())
	}
	a.SetTab("model")
	if html := render(t, a); !strings.Contains(html, `id="knob-fp8_amax_tp_only"`) {
		t.Error("the page has no fp8_amax_tp_only box")
	}
}

// TestMoERouterAndBucketKnobs: the Cluster panel's finer rows for training.moe_aux_loss,
// training.moe_force_load_balancing (a mixture's, under Megatron-Core's router: core's
// request.MoEAuxLossApplies and MoEForceLoadBalancingApplies) and
// parallelism.dp_bucket_bytes (training: request.DPBucketBytesApplies) apply where
// core's normal form says, set their fields, change the plan, travel in the URL's
// fragment, and render; the router's rows are disabled under eager (HuggingFace's
// router) and the bucket's empty box leaves the framework's own buckets.
func TestMoERouterAndBucketKnobs(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	a.PickModel("arch:qwen1.5-moe-a2.7b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "8")
	a.SetDegree("data", "2")
	disabled := func() map[string]bool {
		d := map[string]bool{}
		for _, f := range a.KnobFields("finer") {
			d[f.Name] = f.Disabled
		}
		return d
	}
	if d := disabled(); a.Err != nil || !d["moe_aux_loss"] || !d["moe_force_load_balancing"] || d["dp_bucket_bytes"] {
		t.Fatalf("eager: err %v, disabled %v", a.Err, d)
	}
	a.SetField("framework", "megatron")
	if d := disabled(); a.Err != nil || d["moe_aux_loss"] || d["moe_force_load_balancing"] || d["dp_bucket_bytes"] {
		t.Fatalf("megatron: err %v, disabled %v", a.Err, d)
	}
	if got := a.Resolved("dp_bucket_bytes"); got != "the framework's" {
		t.Errorf("the bucket's default: %q", got)
	}
	for _, c := range []struct {
		name, v string
		field   func() string
		json    string
	}{
		{"moe_aux_loss", "seq_aux_loss", func() string { return a.Req.Training.MoEAuxLoss }, `"moe_aux_loss":"seq_aux_loss"`},
		{"moe_force_load_balancing", "true", func() string { return a.Field("moe_force_load_balancing") }, `"moe_force_load_balancing":true`},
		{"dp_bucket_bytes", "1048576", func() string { return strconv.FormatInt(a.Req.Parallelism.DPBucketBytes, 10) }, `"dp_bucket_bytes":1048576`},
	} {
		before := a.Res.Step.StepSeconds
		a.SetField(c.name, c.v)
		if got := c.field(); got != c.v || a.Err != nil || a.NoticeBad {
			t.Fatalf("%s = %s: the request has %q (err %v, notice %q)", c.name, c.v, got, a.Err, a.Notice)
		}
		if after := a.Res.Step.StepSeconds; after == before {
			t.Errorf("%s = %s: the step stays %v s", c.name, c.v, after)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(a.RequestJSON())), ""), c.json) {
			t.Errorf("%s: the request's JSON has no %s", c.name, c.json)
		}
	}
	f, err := a.Fragment()
	if err != nil {
		t.Fatal(err)
	}
	b := NewApp(nil, &fakeHost{}, local)
	b.Restore(f)
	if r := b.Req; r.Training.MoEAuxLoss != "seq_aux_loss" || !r.Training.MoEForceLoadBalancing || r.Parallelism.DPBucketBytes != 1<<20 || b.Res.Step.StepSeconds != a.Res.Step.StepSeconds {
		t.Errorf("from the fragment: %+v %+v, step %v s (was %v s)", r.Training, r.Parallelism, b.Res.Step.StepSeconds, a.Res.Step.StepSeconds)
	}
	a.SetField("dp_bucket_bytes", "1.5")
	if !a.NoticeBad || a.Req.Parallelism.DPBucketBytes != 1<<20 {
		t.Errorf("1.5 bytes: notice %q, request %d", a.Notice, a.Req.Parallelism.DPBucketBytes)
	}
	a.SetField("dp_bucket_bytes", "")
	if a.Req.Parallelism.DPBucketBytes != 0 || a.Err != nil {
		t.Errorf("emptied: %d, err %v", a.Req.Parallelism.DPBucketBytes, a.Err)
	}
	a.SetField("framework", "eager")
	if d := disabled(); a.Err == nil || !strings.Contains(a.Err.Error(), "training.moe_aux_loss") || d["moe_aux_loss"] {
		t.Errorf("eager with the loss set: %v, disabled %v; want core's refusal naming training.moe_aux_loss, the row enabled", a.Err, d["moe_aux_loss"])
	}
	a.SetField("framework", "megatron")
	a.SetTab("cluster")
	html := render(t, a)
	for _, id := range []string{"knob-moe_aux_loss", "knob-moe_force_load_balancing", "knob-dp_bucket_bytes"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Cluster panel has no #%s", id)
		}
	}
}

// TestMegatronBucketKnobs: the Cluster panel's finer rows for
// parallelism.dp_bucket_elements and training.check_for_nan_in_grad apply where core's
// normal form says (request.DPBucketElementsApplies and CheckForNaNInGradApplies:
// training an architecture under Megatron-Core's buckets, megatron or cuda-graphs; the
// elements without dp_bucket_bytes), set their fields, change the plan, travel in the
// URL's fragment, and render, as do the Search panel's rows of the fields every
// candidate keeps (the two bucket sizes and the check); a search's candidate applied to
// the plan carries them.
func TestMegatronBucketKnobs(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-3.2-1b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "4")
	a.SetDegree("data", "4")
	disabled := func(group string) map[string]bool {
		d := map[string]bool{}
		for _, f := range a.KnobFields(group) {
			d[f.Name] = f.Disabled
		}
		return d
	}
	for _, g := range []string{"finer", "searchbase"} {
		if d := disabled(g); a.Err != nil || !d["dp_bucket_elements"] || !d["check_for_nan_in_grad"] || d["dp_bucket_bytes"] {
			t.Fatalf("%s under eager: err %v, disabled %v", g, a.Err, d)
		}
	}
	a.SetField("framework", "megatron")
	for _, g := range []string{"finer", "searchbase"} {
		if d := disabled(g); a.Err != nil || d["dp_bucket_elements"] || d["check_for_nan_in_grad"] {
			t.Fatalf("%s under megatron: err %v, disabled %v", g, a.Err, d)
		}
	}
	// Core prices Megatron-Core's buckets under its overlap (request.dataParallelBuckets).
	a.SetField("overlap_grad_reduce", "on")
	if got := a.Resolved("dp_bucket_elements"); got != "40000000" { // Megatron-Core's default for 4 replicas
		t.Errorf("the bucket's default: %q", got)
	}
	for _, c := range []struct {
		name, v, json string
		field         func() string
	}{
		{"dp_bucket_elements", "64", `"dp_bucket_elements":64`, func() string { return strconv.FormatInt(a.Req.Parallelism.DPBucketElements, 10) }},
		{"check_for_nan_in_grad", "true", `"check_for_nan_in_grad":true`, func() string { return a.Field("check_for_nan_in_grad") }},
	} {
		before := a.Res.Step.StepSeconds
		a.SetField(c.name, c.v)
		if got := c.field(); got != c.v || a.Err != nil || a.NoticeBad {
			t.Fatalf("%s = %s: the request has %q (err %v, notice %q)", c.name, c.v, got, a.Err, a.Notice)
		}
		if after := a.Res.Step.StepSeconds; after == before {
			t.Errorf("%s = %s: the step stays %v s", c.name, c.v, after)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(a.RequestJSON())), ""), c.json) {
			t.Errorf("%s: the request's JSON has no %s", c.name, c.json)
		}
	}
	f, err := a.Fragment()
	if err != nil {
		t.Fatal(err)
	}
	b := NewApp(nil, &fakeHost{}, local)
	b.Restore(f)
	if r := b.Req; r.Parallelism.DPBucketElements != 64 || !r.Training.CheckForNaNInGrad || b.Res.Step.StepSeconds != a.Res.Step.StepSeconds {
		t.Errorf("from the fragment: %+v %+v, step %v s (was %v s)", r.Training, r.Parallelism, b.Res.Step.StepSeconds, a.Res.Step.StepSeconds)
	}
	a.SetField("dp_bucket_bytes", "1048576")
	if d := disabled("finer"); a.Err == nil || !strings.Contains(a.Err.Error(), "parallelism.dp_bucket_elements") || d["dp_bucket_elements"] {
		t.Errorf("with dp_bucket_bytes: %v, disabled %v; want core's refusal naming parallelism.dp_bucket_elements, the row enabled", a.Err, d["dp_bucket_elements"])
	}
	a.SetField("dp_bucket_bytes", "")
	a.SetTab("cluster")
	html := render(t, a)
	for _, id := range []string{"knob-dp_bucket_elements", "knob-check_for_nan_in_grad"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Cluster panel has no #%s", id)
		}
	}
	a.SetTab("search")
	html = render(t, a)
	for _, id := range []string{"search-dp_bucket_bytes", "search-dp_bucket_elements", "search-check_for_nan_in_grad"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Search panel has no #%s", id)
		}
	}
	// A candidate applied to the plan keeps them (core/search/evaluate: withOverlaps).
	a.SetSearchKnob("max_devices", "4")
	a.SetSearchKnob("schedule", "1f1b")
	a.SetSearchKnob("zero", "zero1")
	a.StartSearch()
	if s := a.Search; s.Err != "" || s.Report == nil || s.Report.Best == nil {
		t.Fatalf("search: %q", s.Err)
	}
	a.Apply(a.Results()[0].Key)
	if r := a.Req; a.Err != nil || r.Parallelism.DPBucketElements != 64 || !r.Training.CheckForNaNInGrad || r.Model.Architecture.Framework != "megatron" {
		t.Errorf("the applied candidate: err %v, %+v %+v", a.Err, r.Parallelism, r.Training)
	}
}

// TestImportKeepsWhatTheModelTakes: an imported file changes the model by core's rule
// (request.WithModel, as the model picker): a HuggingFace config keeps the former
// architecture's knobs (the framework) and Megatron-Core's fields it takes; a measured
// profile leaves out what it refuses (the architecture's knobs, tensor parallelism,
// Megatron-Core's check and buckets), and the notice names them, where the page's own
// rule kept the check and the file did not load.
func TestImportKeepsWhatTheModelTakes(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:llama-3.2-1b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "4")
	a.SetDegree("data", "2")
	a.SetTensor("2")
	a.SetField("framework", "megatron")
	a.SetCheck("check_for_nan_in_grad", true)
	a.SetField("dp_bucket_elements", "65536")
	if a.Err != nil {
		t.Fatal(a.Err)
	}
	a.Import("config.json", []byte(`{"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}`))
	if r := a.Req; a.NoticeBad || a.Err != nil || r.Model.Architecture == nil || r.Model.Architecture.Framework != "megatron" || !r.Training.CheckForNaNInGrad ||
		r.Parallelism.DPBucketElements != 65536 || r.Parallelism.Tensor != 2 || strings.Contains(a.Notice, "Left out") {
		t.Fatalf("the config: notice %q, err %v, %+v", a.Notice, a.Err, r)
	}
	a.Import("chain.json", chain(8))
	r := a.Req
	if a.NoticeBad || a.Err != nil || len(r.Model.Document) == 0 || r.Training.CheckForNaNInGrad || r.Parallelism.DPBucketElements != 0 || r.Parallelism.Tensor != 0 {
		t.Fatalf("the profile: notice %q, err %v, %+v %+v", a.Notice, a.Err, r.Training, r.Parallelism)
	}
	for _, p := range []string{"Loaded chain.json: 8 layers. Left out for this measured profile: ", "model.architecture.framework (", "parallelism.tensor (", "training.check_for_nan_in_grad (", "parallelism.dp_bucket_elements ("} {
		if !strings.Contains(a.Notice, p) {
			t.Errorf("the notice %q lacks %q", a.Notice, p)
		}
	}
}

// TestExpertKnobs: the Cluster panel's expert knobs set parallelism.expert,
// expert_overlap and expert_dispatcher for a mixture of experts; the plan follows
// (the mixture layers' all-to-alls appear), a change of the devices keeps them, and
// another model starts without them.
func TestExpertKnobs(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:qwen1.5-moe-a2.7b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "16")
	a.SetDegree("data", "2")
	base := a.Res
	if a.Err != nil || base == nil || base.Step == nil {
		t.Fatalf("the mixture without expert parallelism: %v", a.Err)
	}
	a.SetDegree("expert", "2")
	a.SetCheck("expert_overlap", true)
	a.SetKnob("expert_dispatcher", "deepep")
	p := a.Req.Parallelism
	if p.Expert != 2 || !p.ExpertOverlap || p.ExpertDispatcher != "deepep" || a.Err != nil || a.Res.Step == nil {
		t.Fatalf("expert knobs: %+v, %v %v", p, a.Err, a.Res.FirstError())
	}
	if a.Res.Step.StepSeconds == base.Step.StepSeconds {
		t.Error("expert parallelism changed nothing in the plan")
	}
	a.SetCluster("per_node", "32")
	if a.Req.Parallelism.Expert != 2 || a.Field("expert_dispatcher") != "deepep" {
		t.Errorf("a change of the devices lost the expert knobs: %+v", a.Req.Parallelism)
	}
	a.SetTab("cluster")
	if html := render(t, a); !strings.Contains(html, `id="cluster-expert"`) || !strings.Contains(html, `id="cluster-dispatcher"`) {
		t.Error("the page has no expert knobs")
	}
	a.PickModel("arch:meta-llama-3-8b")
	if q := a.Req.Parallelism; q.Expert != 0 || q.ExpertOverlap || q.ExpertDispatcher != "" {
		t.Errorf("another model kept the expert knobs: %+v", q)
	}
	if !strings.Contains(a.Notice, "parallelism's expert and expert_overlap (each splits the experts") || a.NoticeBad {
		t.Errorf("the notice %q does not give core's reason for leaving out parallelism.expert", a.Notice)
	}
}

// TestPickModelKeeps: another model keeps every knob core takes for it
// (request.WithModel): an architecture's framework, loss kernel, split, dtype and
// tensor-parallel degree carry to another architecture, with no notice; a profile
// takes none of them and the notice names them, the architecture's knobs on one line
// (request.LeftOut); the plan is the new model's.
func TestPickModelKeeps(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:meta-llama-3-8b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("count", "8")
	a.SetTensor("2")
	for k, v := range map[string]string{"framework": "megatron", "cross_entropy": "vocab-parallel", "split": "sublayer", "dtype": "fp8"} {
		a.SetField(k, v)
	}
	a.SetCheck("fp8_amax_tp_only", true)
	if a.Err != nil {
		t.Fatalf("the base: %v", a.Err)
	}
	a.PickModel("arch:llama-3.2-1b")
	ar := a.Req.Model.Architecture
	if ar.Name != "llama-3.2-1b" || ar.Framework != "megatron" || ar.CrossEntropy != "vocab-parallel" || ar.Split != "sublayer" || ar.DType != "fp8" ||
		a.Req.Parallelism.Tensor != 2 || !a.Req.Training.FP8AmaxTPOnly || a.Notice != "" || a.Err != nil {
		t.Errorf("llama-3.2-1b kept %+v, tensor %d, amax TP-only %v; notice %q, err %v", *ar, a.Req.Parallelism.Tensor, a.Req.Training.FP8AmaxTPOnly, a.Notice, a.Err)
	}
	if m := a.Model(); m == nil || !strings.Contains(m.Name, "llama-3.2-1b") {
		t.Errorf("the plan is not llama-3.2-1b's: %+v", m)
	}
	a.PickModel("example:gpt2-medium")
	for _, f := range []string{"Left out for this measured profile: model.architecture's cross_entropy, dtype, framework and split (each applies to architectures",
		"parallelism.tensor (", "training.fp8_amax_tp_only ("} {
		if !strings.Contains(a.Notice, f) {
			t.Errorf("a profile: the notice %q does not name %s", a.Notice, f)
		}
	}
	if a.Req.Model.Architecture != nil || a.Req.Parallelism.Tensor != 0 || a.Req.Training.FP8AmaxTPOnly || a.Err != nil {
		t.Errorf("a profile kept %+v, err %v", a.Req, a.Err)
	}
}
