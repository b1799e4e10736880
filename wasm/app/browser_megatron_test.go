//go:build browser

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"pipeplan/core/wire"
	"pipeplan/ui"
)

// TestBrowserMegatronBucketAndImport: the Cluster panel's finer rows for
// parallelism.dp_bucket_elements and training.check_for_nan_in_grad on Llama 3.2 1B over
// 4 H100s, 4 replicas: disabled under eager and enabled under Megatron-LM (core's
// request.DPBucketElementsApplies and CheckForNaNInGradApplies, through the planner's
// normal answer), the elements' placeholder Megatron-Core's default. Each set reaches the
// request in the URL and the page shows core's plan of that request, which changes. The
// Search panel's rows of what every candidate keeps show both and dp_bucket_bytes; a
// search's best, applied, keeps them in the URL's request. A reload of the URL and a
// visit without it (localStorage) bring the rows back. A profile imported over that plan
// changes the model by core's rule (request.WithModel): it loads, the check and the
// buckets are left out, and the notice says so. It saves desktop and phone (390 × 844)
// screenshots of the finer settings, the search's kept rows and the import's notice
// (megatron-*.png) and checks each panel fits the phone.
func TestBrowserMegatronBucketAndImport(t *testing.T) {
	b, url := openPage(t)
	b.tab("model")
	b.set("#model-pick", "arch:llama-3.2-1b", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-framework") !== null`)
	b.tab("cluster")
	b.set("#cluster-device", "h100-sxm", "change")
	b.set("#cluster-count", "4", "input")
	b.set("#cluster-replicas", "4", "input")
	b.check("eager")
	const elements, nan = "#knob-dp_bucket_elements", "#knob-check_for_nan_in_grad"
	if !b.disabled(elements) || !b.disabled(nan) || b.disabled("#knob-dp_bucket_bytes") {
		t.Errorf("eager: disabled %v %v, want both rows disabled (the bytes' enabled)", b.disabled(elements), b.disabled(nan))
	}
	b.tab("model")
	b.set("#knob-framework", "megatron", "change")
	b.waitFor("megatron", `document.querySelector("#knob-framework")?.value === "megatron"`)
	b.tab("cluster")
	b.waitFor("the rows enabled under megatron", `document.querySelector("`+elements+`")?.disabled === false && document.querySelector("`+nan+`")?.disabled === false`)
	if got := do(b, "reading the placeholder", chromedp.Evaluate[string](`document.querySelector("`+elements+`").placeholder`)); got != "default: 40000000" {
		t.Errorf("the elements' placeholder %q, want Megatron-Core's default for 4 replicas", got)
	}
	// Core prices Megatron-Core's buckets under its overlap of the gradient reduction.
	last := b.check("megatron")
	b.set("#knob-overlap_grad_reduce", "on", "change")
	b.waitFor("the overlap in the URL", fmt.Sprintf(`location.hash !== %q`, last.Hash))
	last = b.check("the overlap")
	request := func(s shown) *wire.Request {
		r, err := ui.DecodeFragment(s.Hash, ui.FlateInflate)
		if err != nil {
			t.Fatalf("the URL's fragment does not decode: %v", err)
		}
		return r
	}
	for _, c := range []struct {
		what, js string
		ok       func(r *wire.Request) bool
	}{
		{"64-element buckets", `(() => { const e = document.querySelector("` + elements + `"); e.value = "64"; e.dispatchEvent(new Event("input", {bubbles: true})); })()`,
			func(r *wire.Request) bool { return r.Parallelism.DPBucketElements == 64 }},
		{"the NaN check", `(() => { const e = document.querySelector("` + nan + `"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`,
			func(r *wire.Request) bool { return r.Training.CheckForNaNInGrad }},
	} {
		b.eval(c.js)
		b.waitFor(c.what+" in the URL", fmt.Sprintf(`location.hash !== %q`, last.Hash))
		s := b.check(c.what)
		if r := request(s); !c.ok(r) || s.Errors != "" {
			t.Errorf("%s: the URL's request has %+v %+v; errors %q", c.what, r.Training, r.Parallelism, s.Errors)
		}
		if s.Summary == last.Summary {
			t.Errorf("%s: the plan's summary did not change: %s", c.what, s.Summary)
		}
		t.Logf("%s: %s", c.what, s.Summary)
		last = s
	}

	shot := func(sel, name string) {
		png := do(b, "screenshot "+name, chromedp.Screenshot(sel))
		if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	phone := func(sel, name, panel string) {
		do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
		shot(sel, name)
		if bad := do(b, "measuring the "+panel, chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
			t.Errorf("the %s on a phone:\n  %s", panel, strings.Join(bad, "\n  "))
		}
		do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))
	}
	shot("#cluster-finer", "megatron-desktop-cluster")
	phone("#cluster-finer", "megatron-phone-cluster", "cluster panel")

	for _, visit := range []struct{ what, url string }{{"reloading the URL", url + "/" + last.Hash}, {"visiting without the URL's request", url + "/"}} {
		b.navigate(visit.what, visit.url, `document.querySelector("#status")?.textContent.startsWith("Planned")`)
		b.tab("cluster")
		b.waitFor(visit.what+": the rows", `document.querySelector("`+nan+`")?.disabled === false`)
		got := do(b, "reading the rows", chromedp.Evaluate[string](`document.querySelector("`+elements+`").value + "," + document.querySelector("`+nan+`").checked`))
		if got != "64,true" {
			t.Errorf("%s: the rows show %s, want 64,true", visit.what, got)
		}
	}

	// The Search panel: what every candidate keeps, and a candidate applied.
	b.tab("search")
	kept := do(b, "reading the kept rows", chromedp.Evaluate[string](`["#search-dp_bucket_bytes", "#search-dp_bucket_elements", "#search-check_for_nan_in_grad"].map(s => {
		const e = document.querySelector(s); return e ? (e.type === "checkbox" ? e.checked : e.value) + (e.disabled ? " disabled" : "") : "none"; }).join(",")`))
	if kept != ",64,true" {
		t.Errorf("the Search panel's kept rows show %q, want ,64,true (each enabled)", kept)
	}
	shot("#search-base", "megatron-desktop-search")
	phone("#search-base", "megatron-phone-search", "search panel")
	for _, k := range []struct{ id, value, event string }{{"max_devices", "4", "input"}, {"schedule", "1f1b", "change"}, {"zero", "zero1", "change"}} {
		b.set("#search-"+k.id, k.value, k.event)
	}
	b.eval(`document.querySelector("#search-start").click()`)
	b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tr.best") !== null`)
	if e := b.text("#search-error"); e != "" {
		t.Fatalf("the search failed: %s", e)
	}
	before := b.check("before apply")
	b.eval(`document.querySelector("#search-results tr.best button.apply").click()`)
	b.waitFor("the applied plan", `document.querySelector("#panel-plan") !== null`)
	applied := b.waitChange("the applied plan", before)
	if r := request(applied); r.Parallelism.DPBucketElements != 64 || !r.Training.CheckForNaNInGrad || r.Model.Architecture == nil || r.Model.Architecture.Framework != "megatron" {
		t.Errorf("the applied candidate's request: %+v %+v", r.Parallelism, r.Training)
	}
	t.Logf("applied: %s", applied.Summary)

	// A profile imported over it: core's rule leaves out what the profile refuses.
	dir := t.TempDir()
	file := filepath.Join(dir, "synthetic-100.json")
	os.WriteFile(file, model100(), 0o644)
	keepLocally("synthetic-100.json", model100())
	b.tab("model")
	do(b, "picking a file", chromedp.SetUploadFiles("#model-file", []string{file}))
	b.waitFor("the import", `document.querySelector("#notice")?.textContent.includes("Loaded synthetic-100.json: 100 layers")`)
	imported := b.check("after the import")
	notice := b.text("#notice")
	for _, want := range []string{"Left out for this measured profile: model.architecture's attention, dtype, framework, seq, split and tie (each applies to architectures; the model is a measured profile); ", "training.check_for_nan_in_grad (", "parallelism.dp_bucket_elements (", "training's optimizer and precision (each applies to"} {
		if !strings.Contains(notice, want) {
			t.Errorf("the import's notice %q lacks %q", notice, want)
		}
	}
	if r := request(imported); len(r.Model.Document) == 0 || r.Training.CheckForNaNInGrad || r.Parallelism.DPBucketElements != 0 || imported.Errors != "" {
		t.Errorf("the imported profile's request: %+v %+v; errors %q", r.Parallelism, r.Training, imported.Errors)
	}
	t.Logf("imported: %s", imported.Summary)
	shot(".overview", "megatron-desktop-import")
	phone(".overview", "megatron-phone-import", "overview")
}
