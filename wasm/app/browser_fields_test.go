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

// TestBrowserRequestFields sets each control added for the request fields the page had
// none for (model.architecture framework, cross_entropy, split, fp8_attention and
// expert_fused_mlp, training.recompute_modules and train_metrics, cluster.free_transfers,
// schedule.weight_grad_fraction, parallelism.reduce_dtype and fully_shard), on
// Qwen3-30B-A3B over 8 B200s with 4 replicas and 4-way expert parallelism: the lists
// are core's, the defaults say what core resolves them to; each edit reaches the
// request in the URL and the page shows the plan core makes of that request
// (browserT.check), the step changing where the field prices something else; a reload
// of the URL and a visit without it (the request from localStorage) bring every value
// back. The Cluster panel's parallelism.reduce_dtype and fully_shard apply under zero3
// and hsdp only, and survive a switch between them. It saves desktop and phone
// (390 × 844) screenshots of the Model panel and of the Cluster panel under zero3
// (fields-*.png) and checks that both panels fit the phone.
func TestBrowserRequestFields(t *testing.T) {
	b, url := openPage(t)
	b.tab("model")
	b.set("#model-pick", "arch:qwen3-30b-a3b", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-framework") !== null`)
	b.tab("cluster")
	b.set("#cluster-device", "b200", "change")
	b.set("#cluster-count", "8", "input")
	b.set("#cluster-replicas", "4", "input")
	b.set("#cluster-expert", "4", "input")
	b.check("the base")
	b.tab("model")

	// The lists are core's; the defaults are core's normal form's.
	b.waitFor("the resolved defaults", `document.querySelector("#knob-framework option[value='']")?.textContent === "default (eager)"`)
	for sel, want := range map[string]string{
		"#knob-cross_entropy option[value='']": "default (unfused)",
		"#knob-split option[value='']":         "default (block)",
		"#knob-tie option[value='']":           "default (copy)",
	} {
		if got := b.text(sel); got != want {
			t.Errorf("%s reads %q, want %q", sel, got, want)
		}
	}
	for id, want := range map[string][]string{"framework": wire.Frameworks(), "cross_entropy": wire.CrossEntropies(), "attention": wire.Attentions(), "precision": wire.Precisions()} {
		got := do(b, "reading a list", chromedp.Evaluate[string](`[...document.querySelectorAll("#knob-`+id+` option")].map(o => o.value).join(",")`))
		if want := "," + strings.Join(want, ","); got != want {
			t.Errorf("#knob-%s offers %q, want %q", id, got, want)
		}
	}
	if !b.disabled("#knob-fp8_attention") {
		t.Errorf("#knob-fp8_attention is enabled without fp8")
	}

	// Each control: set, in the URL's request, planned as core plans that request.
	// value "true" is a check box ticked.
	knobs := []struct {
		id, value string
		field     func(r *wire.Request) string
		changes   bool
	}{
		{"framework", "megatron", func(r *wire.Request) string { return r.Model.Architecture.Framework }, true},
		{"cross_entropy", "vocab-parallel", func(r *wire.Request) string { return r.Model.Architecture.CrossEntropy }, true},
		{"split", "sublayer", func(r *wire.Request) string { return r.Model.Architecture.Split }, false},
		{"dtype", "fp8", func(r *wire.Request) string { return r.Model.Architecture.DType }, true},
		{"fp8-recipe", "mxfp8", func(r *wire.Request) string { return r.Training.FP8Recipe }, true},
		{"expert_fused_mlp", "true", func(r *wire.Request) string { return fmt.Sprint(r.Model.Architecture.ExpertFusedMLP) }, true},
		{"attention", "cudnn", func(r *wire.Request) string { return r.Model.Architecture.Attention }, true},
		{"fp8_attention", "true", func(r *wire.Request) string { return fmt.Sprint(r.Model.Architecture.FP8Attention) }, true},
		{"recompute", "selective", func(r *wire.Request) string { return r.Training.Recompute }, false},
		{"recompute_modules", "moe_act,layernorm", func(r *wire.Request) string { return strings.Join(r.Training.RecomputeModules, ",") }, true},
		{"train_metrics", "2", func(r *wire.Request) string { return fmt.Sprint(r.Training.TrainMetrics) }, true},
	}
	for _, k := range knobs {
		before := b.check("before " + k.id)
		sel := "#knob-" + k.id
		b.waitFor(sel+" enabled", `document.querySelector("`+sel+`")?.disabled === false`)
		switch {
		case k.value == "true":
			b.eval(`(() => { const e = document.querySelector("` + sel + `"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
		case k.id == "train_metrics": // a number box
			b.set(sel, k.value, "input")
		default:
			b.set(sel, k.value, "change")
		}
		b.waitFor(k.id+" in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
		after := b.check("after " + k.id)
		r, err := ui.DecodeFragment(after.Hash, ui.FlateInflate)
		if err != nil {
			t.Fatalf("%s: the URL's fragment does not decode: %v", k.id, err)
		}
		if got := k.field(r); got != k.value {
			t.Errorf("%s set to %s: the URL's request has %s", k.id, k.value, got)
		}
		if after.Errors != "" {
			t.Errorf("%s set to %s: the page shows an error: %s", k.id, k.value, after.Errors)
		}
		if k.changes && after.Summary == before.Summary {
			t.Errorf("%s set to %s: the plan's summary did not change: %s", k.id, k.value, after.Summary)
		}
		t.Logf("%-18s = %-18s %s", k.id, k.value, after.Summary)
	}
	fieldsets := func(name string) { // the Model panel's knobs, without its layer table
		png := do(b, "screenshot "+name, chromedp.Screenshot(chromedp.CSSAll("#panel-model fieldset")))
		if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fieldsets("fields-desktop-model")
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	fieldsets("fields-phone-model")
	if bad := do(b, "measuring the model panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the model panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	// The Cluster panel's FSDP2 knobs, reduce_dtype and fully_shard: disabled without
	// zero3 or hsdp (core's normal form has no value for them), set under zero3, kept
	// on a switch to hsdp and back (core's wire.ShardingFields).
	b.tab("cluster")
	fsdp := `["#knob-reduce_dtype", "#knob-fully_shard"].map(s => document.querySelector(s)?.disabled).join(",")`
	if got := do(b, "reading the FSDP2 knobs", chromedp.Evaluate[string](fsdp)); got != "true,true" {
		t.Errorf("#knob-reduce_dtype, #knob-fully_shard disabled %s without zero3, want true,true", got)
	}
	if got := do(b, "reading #knob-reduce_dtype's list", chromedp.Evaluate[string](`[...document.querySelectorAll("#knob-reduce_dtype option")].map(o => o.value).join(",")`)); got != ","+strings.Join(wire.ReduceDTypes(), ",") {
		t.Errorf("#knob-reduce_dtype offers %q, want core's %v", got, wire.ReduceDTypes())
	}
	before := b.check("before zero3")
	b.set("#cluster-sharding", "zero3", "change")
	b.waitFor("zero3 in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
	b.waitFor("the FSDP2 knobs enabled", fsdp+` === "false,false"`)
	for _, k := range []struct{ id, value string }{{"reduce_dtype", "fp32"}, {"fully_shard", "true"}} {
		before := b.check("before " + k.id)
		if k.value == "true" {
			b.eval(`(() => { const e = document.querySelector("#knob-` + k.id + `"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
		} else {
			b.set("#knob-"+k.id, k.value, "change")
		}
		b.waitFor(k.id+" in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
		after := b.check("after " + k.id)
		if after.Errors != "" {
			t.Errorf("%s set to %s: the page shows an error: %s", k.id, k.value, after.Errors)
		}
		if after.Summary == before.Summary {
			t.Errorf("%s set to %s: the plan's summary did not change: %s", k.id, k.value, after.Summary)
		}
		t.Logf("%-18s = %-18s %s", k.id, k.value, after.Summary)
	}
	fsdpRequest := func(when, sharding string, group int) {
		got := b.check(when)
		r, err := ui.DecodeFragment(got.Hash, ui.FlateInflate)
		if err != nil {
			t.Fatalf("%s: the URL's fragment does not decode: %v", when, err)
		}
		if p := r.Parallelism; p.Sharding != sharding || p.ReduceDType != "fp32" || !p.FullyShard || p.ShardGroup != group || got.Errors != "" {
			t.Errorf("%s: the URL's request has sharding %q reduce_dtype %q fully_shard %v shard_group %d (errors %q), want %s fp32 true %d",
				when, p.Sharding, p.ReduceDType, p.FullyShard, p.ShardGroup, got.Errors, sharding, group)
		}
	}
	fsdpRequest("zero3 with fp32 reduction and FSDP2's copies", "zero3", 0)
	cluster := func(name string) { // the Cluster panel's fieldsets, zero3's knobs among them
		png := do(b, "screenshot "+name, chromedp.Screenshot(chromedp.CSSAll("#panel-cluster fieldset")))
		if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cluster("fields-desktop-cluster")
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	cluster("fields-phone-cluster")
	if bad := do(b, "measuring the cluster panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the cluster panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))
	// hsdp: a node (8 B200s) holds all 4 replicas, so its group is given, 2.
	before = b.check("before hsdp")
	b.set("#cluster-sharding", "hsdp", "change")
	b.waitFor("hsdp in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
	b.waitFor("#knob-shard_group enabled", `document.querySelector("#knob-shard_group")?.disabled === false`)
	b.set("#knob-shard_group", "2", "input")
	b.waitFor("the group in the URL", `document.querySelector("#knob-shard_group")?.value === "2"`)
	fsdpRequest("hsdp after zero3", "hsdp", 2)
	b.set("#cluster-sharding", "zero3", "change")
	b.waitFor("the group cleared", `document.querySelector("#knob-shard_group")?.value === ""`)
	fsdpRequest("zero3 after hsdp", "zero3", 0)

	// The Cluster panel's free transfers.
	before = b.check("before free_transfers")
	b.eval(`(() => { const e = document.querySelector("#knob-free_transfers"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
	b.waitFor("free_transfers in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
	after := b.check("after free_transfers")
	if r, err := ui.DecodeFragment(after.Hash, ui.FlateInflate); err != nil || !r.Cluster.FreeTransfers {
		t.Errorf("free transfers ticked: the URL's request %v (%v)", r, err)
	}
	if after.Summary == before.Summary {
		t.Errorf("free transfers ticked: the plan's summary did not change: %s", after.Summary)
	}

	// The Plan panel's weight-gradient share applies to zb-h1, whose default core says.
	b.tab("plan")
	if !b.disabled("#knob-weight_grad_fraction") {
		t.Errorf("#knob-weight_grad_fraction is enabled under 1f1b")
	}
	b.set("#plan-schedule", "zb-h1", "change")
	b.waitFor("zb-h1's default share", `document.querySelector("#knob-weight_grad_fraction")?.placeholder === "default: 0.5" && !document.querySelector("#knob-weight_grad_fraction").disabled`)
	before = b.check("before weight_grad_fraction")
	b.set("#knob-weight_grad_fraction", "0.9", "input")
	b.waitFor("weight_grad_fraction in the URL", fmt.Sprintf(`location.hash !== %q`, before.Hash))
	after = b.check("after weight_grad_fraction")
	if r, err := ui.DecodeFragment(after.Hash, ui.FlateInflate); err != nil || r.Schedule.WeightGradFraction != 0.9 {
		t.Errorf("weight-gradient share 0.9: the URL's request %v (%v)", r, err)
	}

	// A reload of the URL, then a visit without it (localStorage), bring them back.
	values := `[...document.querySelectorAll("#panel-model [id^=knob-]")].map(e => e.id + "=" + (e.type === "checkbox" ? e.checked : e.value)).join(" ")`
	b.tab("model")
	want := do(b, "reading the knobs", chromedp.Evaluate[string](values))
	for _, k := range knobs {
		if v := "knob-" + k.id + "=" + k.value; !strings.Contains(want+" ", v+" ") {
			t.Errorf("the Model panel shows %s, want %s", want, v)
		}
	}
	hash := after.Hash
	for _, visit := range []struct{ what, url string }{{"reloading the URL", url + "/" + hash}, {"visiting without the URL's request", url + "/"}} {
		b.navigate(visit.what, visit.url, `document.querySelector("#status")?.textContent.startsWith("Planned")`)
		if got := do(b, "reading the URL", chromedp.Evaluate[string](`location.hash`)); got != hash && got != "" {
			t.Errorf("%s: the request is not the one left (URL %.60s…)", visit.what, got)
		}
		b.tab("model")
		b.waitFor("the knobs", `document.querySelector("#knob-framework")?.value === "megatron"`)
		if got := do(b, "reading the knobs", chromedp.Evaluate[string](values)); got != want {
			t.Errorf("%s: the Model panel shows\n  %s\nwant\n  %s", visit.what, got, want)
		}
		b.tab("cluster")
		if got := do(b, "reading the FSDP2 knobs", chromedp.Evaluate[string](`document.querySelector("#cluster-sharding").value + "," + document.querySelector("#knob-reduce_dtype").value + "," + document.querySelector("#knob-fully_shard").checked`)); got != "zero3,fp32,true" {
			t.Errorf("%s: sharding, reduce_dtype, fully_shard show %s, want zero3,fp32,true", visit.what, got)
		}
		if !do(b, "reading #knob-free_transfers", chromedp.Evaluate[bool](`document.querySelector("#knob-free_transfers").checked`)) {
			t.Errorf("%s: free transfers is not ticked", visit.what)
		}
		b.tab("plan")
		if got := do(b, "reading #knob-weight_grad_fraction", chromedp.Evaluate[string](`document.querySelector("#knob-weight_grad_fraction").value`)); got != "0.9" {
			t.Errorf("%s: the weight-gradient share shows %q, want 0.9", visit.what, got)
		}
	}
}
