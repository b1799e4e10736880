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

// TestBrowserFP8AmaxTPOnly: the Model panel's box for training.fp8_amax_tp_only
// (Megatron-Core's tp_only_amax_red) on Llama-3-8B over 8 H100s, 4 replicas at tensor
// degree 2 under Megatron-LM: disabled in bf16 and enabled in fp8 under the delayed
// recipe (core's request.FP8AmaxTPOnlyApplies, through the planner's normal answer),
// ticked it reaches
// the request in the URL and the page shows core's plan of that request, which changes
// (the amax all-reduce over 2 ranks, not 8). Another architecture keeps it and the
// framework (core's request.WithModel). A reload of the URL and a visit without it
// (localStorage) bring it back. It saves desktop and phone (390 × 844) screenshots of
// the Model panel's knobs (amax-*.png) and checks the panel fits the phone.
func TestBrowserFP8AmaxTPOnly(t *testing.T) {
	b, url := openPage(t)
	b.tab("model")
	b.set("#model-pick", "arch:meta-llama-3-8b", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-framework") !== null`)
	b.tab("cluster")
	b.set("#cluster-device", "h100-sxm", "change")
	b.set("#cluster-count", "8", "input")
	b.set("#cluster-tensor", "2", "input")
	b.set("#cluster-replicas", "4", "input") // the amax group: 2 x 4 ranks, or the 2 of TP
	b.tab("model")
	b.set("#knob-framework", "megatron", "change")
	b.waitFor("megatron", `document.querySelector("#knob-framework")?.value === "megatron"`)
	b.check("bf16")
	const box = "#knob-fp8_amax_tp_only"
	if !b.disabled(box) {
		t.Errorf("%s is enabled in bf16", box)
	}
	b.set("#knob-dtype", "fp8", "change")
	b.waitFor(box+" enabled under fp8's default recipe, delayed", `document.querySelector("`+box+`")?.disabled === false`)
	before := b.check("fp8 delayed")
	b.eval(`(() => { const e = document.querySelector("` + box + `"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
	b.waitFor("the field in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
	after := b.check("ticked")
	request := func(s shown) *wire.Request {
		r, err := ui.DecodeFragment(s.Hash, ui.FlateInflate)
		if err != nil {
			t.Fatalf("the URL's fragment does not decode: %v", err)
		}
		return r
	}
	if r := request(after); !r.Training.FP8AmaxTPOnly || after.Errors != "" {
		t.Errorf("ticked: the URL's request has fp8_amax_tp_only %v; errors %q", r.Training.FP8AmaxTPOnly, after.Errors)
	}
	if after.Summary == before.Summary {
		t.Errorf("ticked: the plan's summary did not change: %s", after.Summary)
	}
	t.Logf("delayed fp8, amax over TP x DP: %s", before.Summary)
	t.Logf("delayed fp8, amax over TP only: %s", after.Summary)

	shot := func(name string) { // the Model panel's knobs, without its layer table
		png := do(b, "screenshot "+name, chromedp.Screenshot(chromedp.CSSAll("#panel-model fieldset")))
		if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shot("amax-desktop-model")
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	shot("amax-phone-model")
	if bad := do(b, "measuring the model panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the model panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	// Another architecture: core keeps every knob it takes.
	b.set("#model-pick", "arch:llama-3.2-1b", "change")
	b.waitFor("llama-3.2-1b", `document.querySelector("#model-pick")?.value === "arch:llama-3.2-1b"`)
	moved := b.check("llama-3.2-1b")
	if r := request(moved); !r.Training.FP8AmaxTPOnly || r.Model.Architecture.Framework != "megatron" || r.Model.Architecture.DType != "fp8" || r.Parallelism.Tensor != 2 || moved.Errors != "" {
		t.Errorf("another architecture: the URL's request %+v %+v %+v; errors %q", r.Model.Architecture, r.Training, r.Parallelism, moved.Errors)
	}

	for _, visit := range []struct{ what, url string }{{"reloading the URL", url + "/" + moved.Hash}, {"visiting without the URL's request", url + "/"}} {
		b.navigate(visit.what, visit.url, `document.querySelector("#status")?.textContent.startsWith("Planned")`)
		b.tab("model")
		b.waitFor(visit.what+": the box", `document.querySelector("`+box+`")?.disabled === false`)
		if got := do(b, "reading "+box, chromedp.Evaluate[string](`document.querySelector("#model-pick").value + "," + document.querySelector("`+box+`").checked`)); got != "arch:llama-3.2-1b,true" {
			t.Errorf("%s: the model and the box show %s, want arch:llama-3.2-1b,true", visit.what, got)
		}
	}
}
