//go:build browser

package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"pipeplan/core/request"
	"pipeplan/core/wire"
	"pipeplan/ui"
)

// TestBrowserSearchKnobs: the Search panel's knobs (KnobRows of core's lists) on GPT-2:
// its selects offer core's values; knobs set by hand reach the URL beside the request
// (ui.FragmentSearch) and come back on a fresh load; a search with sharding fixed to zero3
// on 2 stages finds ZeRO-3 candidates, and the best, applied, plans with reshard step,
// which the Cluster panel's reshard row shows as its default (core's rule,
// request.DefaultReshard). It saves the panel at desktop width and on a phone (390 ×
// 844: search-knobs-*.png) and checks that it fits the phone.
func TestBrowserSearchKnobs(t *testing.T) {
	b, url := openPage(t)
	b.tab("model")
	b.set("#model-pick", "arch:gpt2", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-dtype") !== null`)
	b.tab("search")
	for id, want := range map[string][]string{"schedule": wire.SearchSchedules(), "recompute": wire.RecomputeModes(), "zero": wire.SearchZeROStages(),
		"reshard": wire.ReshardModes(), "context_method": wire.ContextMethods(), "framework": wire.Frameworks()} {
		got := do(b, "reading a list", chromedp.Evaluate[string](`[...document.querySelectorAll("#search-`+id+` option")].map(o => o.value).join(",")`))
		if want := "," + strings.Join(want, ","); got != want {
			t.Errorf("#search-%s offers %q, want %q", id, got, want)
		}
	}
	if got := b.text("#search-reshard option[value='']"); got != "default" {
		t.Errorf("the empty reshard reads %q", got)
	}
	set := []struct{ id, value, event string }{
		{"max_devices", "8", "input"}, {"stages", "2", "input"}, {"replicas", "4", "input"}, {"tensor", "1", "input"},
		{"schedule", "1f1b", "change"}, {"recompute", "none", "change"}, {"zero", "zero3", "change"},
		{"microbatch_size", "1", "input"}, {"global_batch", "16", "input"},
	}
	for _, k := range set {
		b.set("#search-"+k.id, k.value, k.event)
	}
	b.waitFor("the knobs in the URL", `location.hash.includes(".s1.") && location.hash.length > 0`)
	b.waitFor("every knob in the URL", `!window.pipeplanKeeping()`)
	hash := do(b, "reading the URL", chromedp.Evaluate[string](`location.hash`))
	kept := ui.FragmentSearch(strings.TrimPrefix(hash, "#"))
	for _, k := range set {
		if kept[k.id] != k.value {
			t.Errorf("the URL's search knobs have %s = %q, want %q (%q)", k.id, kept[k.id], k.value, kept)
		}
	}
	if r, err := ui.DecodeFragment(hash, ui.FlateInflate); err != nil || r.Model.Architecture == nil || r.Model.Architecture.Name != "gpt2" {
		t.Errorf("the URL's request beside the knobs: %v, %v", r, err)
	}
	b.shot("search-knobs-desktop")
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	b.shot("search-knobs-phone")
	if bad := do(b, "measuring the search panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the search panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	// The URL brings the knobs back.
	b.navigate("loading the URL", url+"/"+hash, `document.querySelector("#status")?.textContent.startsWith("Planned")`)
	b.tab("search")
	for _, k := range set {
		if got := do(b, "reading #search-"+k.id, chromedp.Evaluate[string](`document.querySelector("#search-`+k.id+`").value`)); got != k.value {
			t.Errorf("after loading the URL, #search-%s shows %q, want %q", k.id, got, k.value)
		}
	}

	// The search: ZeRO-3 on 2 stages; its best, applied, reshards by core's rule.
	b.eval(`document.querySelector("#search-start").click()`)
	b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tr.best") !== null`)
	b.shot("search-knobs-results")
	if e := b.text("#search-error"); e != "" {
		t.Fatalf("the search failed: %s", e)
	}
	// The columns: apply, samples/s, devices, p, d, t, c, e, schedule, m, b, recompute, ZeRO.
	row := do(b, "reading the best row", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#search-results tr.best td")].map(td => td.textContent)`))
	if len(row) < 13 || row[3] != "2" || row[4] != "4" || row[8] != "1f1b" || row[12] != "3" {
		t.Errorf("the best row %q, want 2 stages of 4 replicas, 1f1b, ZeRO 3", row)
	}
	before := b.check("before apply")
	b.eval(`document.querySelector("#search-results tr.best button.apply").click()`)
	b.waitFor("the applied plan", `document.querySelector("#panel-plan") !== null`)
	applied := b.waitChange("the applied plan", before)
	r, err := ui.DecodeFragment(applied.Hash, ui.FlateInflate)
	if err != nil {
		t.Fatal(err)
	}
	n, err := request.Normalize(r)
	if err != nil || n.Parallelism.Pipeline != 2 || n.Parallelism.Sharding != "zero3" || n.Parallelism.Reshard != request.ReshardStep {
		t.Errorf("the applied request: %d stages, sharding %q, reshard %q (%v); want 2, zero3, step", n.Parallelism.Pipeline, n.Parallelism.Sharding, n.Parallelism.Reshard, err)
	}
	b.tab("cluster")
	b.waitFor("the resolved reshard", `document.querySelector("#knob-reshard option[value='']")?.textContent.startsWith("default (")`)
	if got := b.text("#knob-reshard option[value='']"); got != "default (step)" {
		t.Errorf("the Cluster panel's reshard reads %q after the search's zero3 on 2 stages, want default (step)", got)
	}
}
