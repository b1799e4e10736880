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

// TestBrowserMoERouterAndBucket: the Cluster panel's finer rows for
// training.moe_aux_loss, training.moe_force_load_balancing and
// parallelism.dp_bucket_bytes on Qwen1.5-MoE-A2.7B over 8 H100s, 2 replicas: the
// router's rows disabled under eager and enabled under Megatron-LM (core's
// request.MoEAuxLossApplies and MoEForceLoadBalancingApplies, through the planner's
// normal answer), the bucket's box enabled in training. Each set reaches the request in
// the URL and the page shows core's plan of that request, which changes. A reload of the
// URL and a visit without it (localStorage) bring the three back. It saves desktop and
// phone (390 × 844) screenshots of the finer settings (moerouter-*.png) and checks the
// panel fits the phone.
func TestBrowserMoERouterAndBucket(t *testing.T) {
	b, url := openPage(t)
	b.tab("model")
	b.set("#model-pick", "arch:qwen1.5-moe-a2.7b", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-framework") !== null`)
	b.tab("cluster")
	b.set("#cluster-device", "h100-sxm", "change")
	b.set("#cluster-count", "8", "input")
	b.set("#cluster-replicas", "2", "input")
	b.check("eager")
	const aux, force, bucket = "#knob-moe_aux_loss", "#knob-moe_force_load_balancing", "#knob-dp_bucket_bytes"
	if !b.disabled(aux) || !b.disabled(force) || b.disabled(bucket) {
		t.Errorf("eager: disabled %v %v %v, want the router's rows disabled, the bucket's enabled", b.disabled(aux), b.disabled(force), b.disabled(bucket))
	}
	b.tab("model")
	b.set("#knob-framework", "megatron", "change")
	b.waitFor("megatron", `document.querySelector("#knob-framework")?.value === "megatron"`)
	b.tab("cluster")
	b.waitFor("the router's rows enabled under megatron", `document.querySelector("`+aux+`")?.disabled === false && document.querySelector("`+force+`")?.disabled === false`)
	request := func(s shown) *wire.Request {
		r, err := ui.DecodeFragment(s.Hash, ui.FlateInflate)
		if err != nil {
			t.Fatalf("the URL's fragment does not decode: %v", err)
		}
		return r
	}
	last := b.check("megatron")
	t.Logf("megatron: %s", last.Summary)
	for _, c := range []struct {
		what, js string
		ok       func(r *wire.Request) bool
	}{
		{"seq_aux_loss", `(() => { const e = document.querySelector("` + aux + `"); e.value = "seq_aux_loss"; e.dispatchEvent(new Event("change", {bubbles: true})); })()`,
			func(r *wire.Request) bool { return r.Training.MoEAuxLoss == "seq_aux_loss" }},
		{"forced load balancing", `(() => { const e = document.querySelector("` + force + `"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`,
			func(r *wire.Request) bool { return r.Training.MoEForceLoadBalancing }},
		{"1 MiB buckets", `(() => { const e = document.querySelector("` + bucket + `"); e.value = "1048576"; e.dispatchEvent(new Event("input", {bubbles: true})); })()`,
			func(r *wire.Request) bool { return r.Parallelism.DPBucketBytes == 1<<20 }},
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

	shot := func(name string) { // the finer settings
		png := do(b, "screenshot "+name, chromedp.Screenshot("#cluster-finer"))
		if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shot("moerouter-desktop-cluster")
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	shot("moerouter-phone-cluster")
	if bad := do(b, "measuring the cluster panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the cluster panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	for _, visit := range []struct{ what, url string }{{"reloading the URL", url + "/" + last.Hash}, {"visiting without the URL's request", url + "/"}} {
		b.navigate(visit.what, visit.url, `document.querySelector("#status")?.textContent.startsWith("Planned")`)
		b.tab("cluster")
		b.waitFor(visit.what+": the rows", `document.querySelector("`+aux+`")?.disabled === false`)
		got := do(b, "reading the rows", chromedp.Evaluate[string](`document.querySelector("`+aux+`").value + "," + document.querySelector("`+force+`").checked + "," + document.querySelector("`+bucket+`").value`))
		if got != "seq_aux_loss,true,1048576" {
			t.Errorf("%s: the rows show %s, want seq_aux_loss,true,1048576", visit.what, got)
		}
	}
}
