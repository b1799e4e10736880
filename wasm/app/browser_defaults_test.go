//go:build browser

package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDefaults checks the page's defaults as a new user meets them (issue 23 item
// 6): Llama-3-8B on 2 nodes of 8 H100s starts from core's layout (stages × replicas, not
// 16 stages) and the Cluster panel says where it came from; the knobs left to core show
// what they resolve to and offer every precision core takes (fp8 among the dtypes);
// capacity says whether it is usable or all memory; the search fixes the global batch,
// states its rule, puts the best first and shows no two rows alike. It saves desktop
// (1280 wide) and phone (390 × 844) screenshots of the Cluster and Search panels to
// testdata/screenshots/ (defaults-*.png), and checks both panels fit the phone.
func TestBrowserDefaults(t *testing.T) {
	b, _ := openPage(t)

	// A profile on an H100: 95% of its memory is usable, and the page says so.
	b.tab("cluster")
	b.set("#cluster-device", "h100-sxm", "change")
	b.tab("plan")
	b.waitFor("a profile's capacity", `document.querySelector("#plan .memtext")?.textContent.includes("of 76 GiB") && document.querySelector("#plan-capacity")?.textContent.includes("95% of each h100-sxm's 80 GiB is usable")`)

	// Llama-3-8B on 2 nodes of 8: core's starting layout.
	b.tab("model")
	b.set("#model-pick", "arch:meta-llama-3-8b", "change")
	b.waitFor("the architecture's knobs", `document.querySelector("#knob-dtype") !== null`)
	b.tab("cluster")
	b.set("#cluster-count", "8", "input")
	b.set("#cluster-nodes", "2", "input")
	b.waitFor("core's starting layout", `document.querySelector("#cluster-layout")?.textContent.includes("starting layout") && /^16 devices in use: \d+ pipeline stages? × \d+ replicas/.test(document.querySelector("#cluster-use")?.textContent)`)
	if v := do(b, "reading the replicas", chromedp.Evaluate[string](`document.querySelector("#cluster-replicas").value`)); v == "" || v == "1" || !strings.Contains(b.text("#cluster-use"), "× "+v+" replicas") {
		t.Errorf("the replicas box shows %q, not the layout's (%s)", v, b.text("#cluster-use"))
	}
	if s := b.text("#cluster-sharding option:checked"); s != "zero1" {
		t.Errorf("sharding shows %q, want the layout's zero1", s)
	}
	b.shot("desktop-defaults-cluster")

	// Every knob left to core says what it resolves to; the precisions are core's.
	b.tab("model")
	b.waitFor("the resolved defaults", `document.querySelector("#knob-dtype option[value='']")?.textContent === "default (bf16)"`)
	for sel, want := range map[string]string{
		"#knob-precision option[value='']": "default (mixed)",
		"#knob-optimizer option[value='']": "default (adamw)",
		"#knob-attention option[value='']": "default (flash)",
		"#knob-recompute option[value='']": "default (none)",
	} {
		if got := b.text(sel); got != want {
			t.Errorf("%s reads %q, want %q", sel, got, want)
		}
	}
	if p := do(b, "reading the sequence's placeholder", chromedp.Evaluate[string](`document.querySelector("#knob-seq").placeholder`)); p != "default: 4096" {
		t.Errorf("the sequence box's placeholder is %q", p)
	}
	opts := do(b, "reading the precisions", chromedp.Evaluate[string](`[...document.querySelectorAll("#knob-precision option, #knob-dtype option")].map(o => o.value).join(",")`))
	for _, v := range []string{"mixed-fp32-grads", "amp", "pure", "fp8"} {
		if !strings.Contains(","+opts+",", ","+v+",") {
			t.Errorf("%s is not offered (options %s)", v, opts)
		}
	}
	b.shot("desktop-defaults-model")
	b.tab("plan")
	b.waitFor("an architecture's capacity", `document.querySelector("#plan .memtext")?.textContent.includes("of 80 GiB") && document.querySelector("#plan-capacity")?.textContent.includes("counted in each stage")`)
	b.shot("desktop-defaults-plan")

	// The search: one global batch, its rule stated, the best first, no two rows alike.
	b.tab("search")
	b.set("#search-max_devices", "16", "input")
	b.eval(`document.querySelector("#search-start").click()`)
	b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tbody tr") !== null`)
	rule := b.text("#search-rule")
	for _, want := range []string{"global batch of 64 samples", "samples per step", "within 1% of the fastest"} {
		if !strings.Contains(rule, want) {
			t.Errorf("the search's rule %q does not say %q", rule, want)
		}
	}
	if first := do(b, "reading the first row", chromedp.Evaluate[bool](`document.querySelector("#search-results tbody tr").classList.contains("best")`)); !first {
		t.Error("the best is not the first row")
	}
	// Rows: samples/s, devices, p d t c e, schedule, m, b, recompute, zero, ...: no two
	// rows share every column but recomputation and headroom with the same throughput
	// (ZeRO-1 beside ZeRO-0 is its own row: its optimizer steps on a shard, a little
	// faster, which three digits may not show).
	dup := do(b, "looking for rows alike", chromedp.Evaluate[string](`(() => {
		const seen = new Map();
		for (const tr of document.querySelectorAll("#search-results tbody tr")) {
			const c = [...tr.querySelectorAll("td")].map(td => td.textContent.trim());
			const key = [c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[12]].join(" ");
			if (seen.has(key)) return key;
			seen.set(key, true);
		}
		return "";
	})()`))
	if dup != "" {
		t.Errorf("two rows alike: %s", dup)
	}
	b.shot("desktop-defaults-search")

	// The same panels on a phone.
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	b.shot("phone-defaults-search")
	if bad := do(b, "measuring the search panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the search panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
	b.tab("cluster")
	b.shot("phone-defaults-cluster")
	if bad := do(b, "measuring the cluster panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
		t.Errorf("the cluster panel on a phone:\n  %s", strings.Join(bad, "\n  "))
	}
}
