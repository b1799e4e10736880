//go:build browser

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// deepProfile is a native profile of n layers in a chain, each 0.1 ms forward and 0.2 ms
// backward, 1 MiB of parameters and of activations.
func deepProfile(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name": "deep", "inputs": [{"id": "x", "bytes": 1024}], "layers": [`)
	for i := range n {
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
	return []byte(b.String())
}

// waitLong is waitFor with a time limit of its own (a plan of thousands of stages takes
// a while in the browser).
func (b *browserT) waitLong(what, predicate string, limit time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, limit+10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(limit))); err != nil {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`"status: " + (document.querySelector("#status")?.textContent ?? "") + "\nnotice: " + (document.querySelector("#notice")?.textContent ?? "") + "\nfailure: " + (document.querySelector("#failure")?.textContent ?? "")`))
		b.Fatalf("waiting for %s: %v; the page:\n%s", what, err, page)
	}
}

// frameGaps starts recording the gaps between animation frames in window.ppGaps: the
// longest, and how many exceed 100 ms, until ppGaps.stop(); and in ppGaps.long, each gap
// over 50 ms as [its end, its length] in ms, its end counted from ppGaps.start (a report
// says where the long gaps were: starting chromium's trace stalls the page too).
const frameGaps = `(() => {
	const g = {max: 0, over100: 0, start: performance.now(), running: true, long: []};
	let last = g.start;
	const tick = (now) => {
		const d = now - last;
		last = now;
		g.max = Math.max(g.max, d);
		if (d > 100) g.over100++;
		if (d > 50) g.long.push([now - g.start, d]);
		const t = window.pipeplanTimings;
		if (t && t !== g.last) { g.last = t; g.renders = (g.renders || 0) + 1; g.build = Math.max(g.build || 0, t.build_ms); g.render = Math.max(g.render || 0, t.render_ms); }
		if (g.running) requestAnimationFrame(tick);
	};
	g.stop = () => { g.running = false; };
	requestAnimationFrame(tick);
	window.ppGaps = g;
})()`

// boundariesAre is a predicate: the overview's stage bar shows a plan of n stages.
func boundariesAre(n int) string {
	return fmt.Sprintf(`(document.querySelector("#app .stagebar")?.dataset.boundaries ?? "").split(",").length === %d`, n+1)
}

// TestBrowserLongText drives the three ways issue 23 found to kill the page's program
// with a string longer than vugu's render buffer (16 KiB): the Export panel of a
// 5,000-layer profile (its link), the Schedule panel of Llama-3-8B with 1,024
// microbatches per step (its chart of microbatches in flight), and a 20,000-layer profile
// on 3,000 devices (its boundaries). After each the page must still plan: a later edit
// draws its plan. Screenshots go to PIPEPLAN_SCREENSHOTS, else testdata/screenshots/ at
// the repository's root (git-ignored).
func TestBrowserLongText(t *testing.T) {
	chrome := findChromium(t)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(site(t))))
	// A page of the site's origin without the app: where a case forgets the last one's
	// request.
	mux.HandleFunc("/blank", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`<!doctype html><title>blank</title><link rel="icon" href="data:,">`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	shots := os.Getenv("PIPEPLAN_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join("..", "..", "testdata", "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, stop := startBrowser(t, chrome)
	defer stop()
	// Errors in the console, and the render net's warnings: the page's own strings must
	// not need it.
	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.String(), "render buffer") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	files := t.TempDir()
	// fresh loads the page afresh, on the first visit's request, for subtest t.
	fresh := func(t *testing.T) *browserT {
		b := &browserT{T: t, ctx: ctx, shots: shots}
		do(b, "leaving the page", chromedp.Navigate(srv.URL+"/blank"))
		b.eval(`localStorage.clear()`)
		do(b, "loading the page", chromedp.Navigate(srv.URL+"/?case="+url.QueryEscape(t.Name())))
		// Right after a navigation, chromium may still hand out the last page's
		// JavaScript context ("Cannot find context with specified id"): poll again.
		for try := 0; ; try++ {
			ctx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
			_, err := chromedp.Run(ctx, chromedp.Poll[bool](boundariesAre(4), chromedp.WithPollingTimeout(30*time.Second)))
			cancel()
			if err == nil {
				break
			}
			if try == 3 || !strings.Contains(err.Error(), "Cannot find context") {
				t.Fatalf("waiting for the first plan: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		return b
	}
	// healthy checks that the page shows no failure and logged no problem but those
	// that contain expected (the render net's warnings for text a person typed).
	healthy := func(b *browserT, expected string) {
		if failure := b.text("#failure") + b.text("#render-failure"); failure != "" {
			b.Errorf("the page shows a failure: %s", failure)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			if expected == "" || !strings.Contains(p, expected) {
				b.Errorf("console: %s", p)
			}
		}
		problems = nil
	}

	// 1. A 5,000-layer profile, then Export and share: its link was tens of kilobytes (it
	// is short now that the model is kept in the browser's storage), and its exports are.
	t.Run("export-5000-layers", func(t *testing.T) {
		b := fresh(t)
		deep := filepath.Join(files, "deep-5000.json")
		os.WriteFile(deep, deepProfile(5000), 0o644)
		b.tab("model")
		do(b, "importing 5,000 layers", chromedp.SetUploadFiles("#model-file", []string{deep}))
		b.waitLong("the 5,000-layer plan", `document.querySelector("#notice")?.textContent.includes("Loaded deep-5000.json: 5000 layers")`, time.Minute)
		b.tab("export")
		// The model file is kept in the browser's storage (issue 23 item 3): the link
		// holds its reference, not the model.
		b.waitFor("the link", `document.querySelector("#share-link")?.value.includes("#r1.") && document.querySelector("#embed-link").value.includes("embed=1#r1.")`)
		b.waitFor("the exports", `document.querySelector("#exports .export-pytorch pre")?.textContent.includes("torch")`)
		link := do(b, "reading the link", chromedp.Evaluate[string](`document.querySelector("#share-link").value`))
		if !strings.Contains(link, "#r1.") || len(link) > 2048 {
			t.Errorf("the share link: %d bytes, %.60s…", len(link), link)
		}
		b.shot("long-1-export-5000-layers")
		// Still alive: three devices give a plan of three stages, and its link.
		b.tab("cluster")
		b.set("#cluster-count", "3", "input")
		b.waitLong("3 stages after the export", boundariesAre(3), time.Minute)
		b.tab("export")
		b.waitFor("the new link", fmt.Sprintf(`document.querySelector("#share-link")?.value.includes("#r1.") && document.querySelector("#share-link").value !== %q`, link))
		healthy(b, "")
	})

	// 2. Llama-3-8B with 1,024 microbatches per step, then Schedule.
	t.Run("schedule-1024-microbatches", func(t *testing.T) {
		b := fresh(t)
		b.tab("model")
		b.set("#model-pick", "arch:meta-llama-3-8b", "change")
		// Megatron-LM's engine: PyTorch's pipelining (the eager default) holds two
		// boundary tensors per microbatch a stage, tens of GiB at 1,024, which no H100 fits.
		b.waitFor("the architecture's knobs", `document.querySelector("#knob-framework") !== null`)
		b.set("#knob-framework", "megatron", "change")
		// One pipeline (the user's replicas: no starting layout), for a long timeline.
		b.tab("cluster")
		b.set("#cluster-replicas", "1", "input")
		b.waitLong("Llama-3-8B's plan", `document.querySelector("#summary")?.textContent.startsWith("35 layers on 4 stages")`, time.Minute)
		b.tab("plan")
		// The frames while the long schedule comes and is drawn (its view holds the
		// timeline's 2,000 operations, the most of any view).
		tr := measure(b)
		b.set("#plan-microbatches", "1024", "input")
		b.waitLong("1,024 microbatches", `/, 1,?024 microbatches:/.test(document.querySelector("#summary")?.textContent)`, time.Minute)
		b.tab("schedule")
		b.waitFor("the timeline", `document.querySelectorAll("#panel-schedule .inflight polyline").length >= 4`)
		measured(b, tr, "1,024 microbatches, then the Schedule panel")
		longest := do(b, "the longest points", chromedp.Evaluate[int](`Math.max(...[...document.querySelectorAll("#panel-schedule polyline")].map(p => p.getAttribute("points").length))`))
		if longest > 16384 {
			t.Errorf("a polyline of %d bytes of points", longest)
		}
		b.shot("long-2-schedule-1024-microbatches")
		// The view keeps a window of the step common to every device (issue 23): each
		// device's row has operations drawn, and the panel says which time it shows.
		bare := do(b, "the rows without operations", chromedp.Evaluate[int](`(() => {
			const p = document.querySelector("#panel-schedule");
			const ys = new Set([...p.querySelectorAll("g[class^=op-] rect")].map(r => String(parseFloat(r.getAttribute("y")))));
			for (const m of p.querySelectorAll("path[class^=op-]")) ys.add(String(parseFloat(m.getAttribute("d").split(" ")[1])));
			return [...p.querySelectorAll("rect.idle")].filter(r => !ys.has(String(parseFloat(r.getAttribute("y"))))).length;
		})()`))
		hint := do(b, "the timeline's hint", chromedp.Evaluate[string](`document.querySelector("#panel-schedule .hint")?.textContent ?? ""`))
		if bare != 0 || !strings.Contains(hint, " step") {
			t.Errorf("%d devices' rows without operations; the hint reads %q", bare, hint)
		}
		t.Logf("the timeline's hint: %s", hint)
		b.tab("cluster")
		b.set("#cluster-count", "8", "input")
		b.waitLong("8 stages after the schedule", boundariesAre(8), time.Minute)
		healthy(b, "")
	})

	// 3. A 20,000-layer profile on 3,000 devices (one microbatch per step, so that the
	// step's timeline stays small): its boundaries are 17 KB.
	t.Run("20000-layers-3000-devices", func(t *testing.T) {
		b := fresh(t)
		wide := filepath.Join(files, "deep-20000.json")
		os.WriteFile(wide, deepProfile(20000), 0o644)
		b.tab("plan")
		b.set("#plan-microbatches", "1", "input")
		b.waitLong("one microbatch", `/, 1 microbatch(es)?:/.test(document.querySelector("#summary")?.textContent)`, time.Minute)
		b.tab("model")
		do(b, "importing 20,000 layers", chromedp.SetUploadFiles("#model-file", []string{wide}))
		b.waitLong("the 20,000-layer plan", `document.querySelector("#notice")?.textContent.includes("Loaded deep-20000.json: 20000 layers")`, 2*time.Minute)
		b.tab("cluster")
		// The longest gap between frames while the plan is made and drawn (issue 23's
		// item 2 asks for at most 100 ms): a figure, logged.
		b.eval(frameGaps)
		b.set("#cluster-count", "3000", "input")
		b.waitLong("3,000 stages", boundariesAre(3000), 4*time.Minute)
		gaps := do(b, "reading the frame gaps", chromedp.Evaluate[[]float64](`(window.ppGaps.stop(), [window.ppGaps.max, window.ppGaps.over100, performance.now() - window.ppGaps.start])`))
		parts := do(b, "reading the replan's parts", chromedp.Evaluate[map[string]float64](`window.pipeplanTimings`))
		t.Logf("3,000 stages of 20,000 layers: longest frame gap %.0f ms, %.0f gaps over 100 ms, in %.1f s; the last render's parts (ms): %v", gaps[0], gaps[1], gaps[2]/1000, parts)
		b.waitFor("the device overrides' window", `document.querySelector("#device-range")?.textContent === "devices 0–31 of 3000"`)
		if segs := do(b, "counting the bar's segments", chromedp.Evaluate[string](`document.querySelectorAll("#bar-main g.seg").length + " segments, " + document.querySelectorAll("#bar-main .handle").length + " handles"`)); segs != "100 segments, 0 handles" {
			t.Errorf("the stage bar of 3,000 stages draws %s", segs)
		}
		b.shot("long-3-cluster-3000-devices")
		b.tab("plan")
		b.waitFor("the stage table's window", `document.querySelectorAll("#plan tbody tr").length === 50 && document.querySelector("#stage-range")?.textContent === "stages 0–49 of 3000" && document.querySelector("#plan-bounds").value.length > 16384`)
		b.eval(`document.querySelector("#stages-next").click()`)
		b.waitFor("the next window", `document.querySelector("#stage-range")?.textContent === "stages 50–99 of 3000" && document.querySelector("#plan tbody tr td")?.textContent.startsWith("50")`)
		b.shot("long-3-plan-3000-stages")
		b.tab("cluster")
		b.set("#cluster-count", "4", "input")
		b.waitLong("4 stages after 3,000", boundariesAre(4), 2*time.Minute)
		b.tab("plan")
		b.waitFor("the four stages' rows", `document.querySelectorAll("#plan tbody tr").length === 4 && document.querySelector("#stage-range") === null`)
		b.shot("long-3-after")
		healthy(b, "")
	})

	// 4. What a person types, however long: 40,000 characters pasted as boundaries and
	// as a search knob. The page says what is wrong (without all of it) and plans on.
	t.Run("typed-40000-characters", func(t *testing.T) {
		b := fresh(t)
		b.tab("plan")
		b.set("#plan-bounds", strings.Repeat("x", 40000), "change")
		b.waitFor("the boundaries' message", `document.querySelector("#notice.bad")?.textContent.includes("is not a whole number")`)
		if n := len(b.text("#notice")); n > 200 {
			t.Errorf("the message is %d bytes", n)
		}
		b.tab("search")
		b.set("#search-stages", strings.Repeat("9", 40000), "input")
		b.tab("cluster")
		b.set("#cluster-count", "3", "input")
		b.waitLong("3 stages after the paste", boundariesAre(3), time.Minute)
		b.shot("long-4-typed")
		healthy(b, "render buffer")
	})

	// 5. A render that fails (vugu's script throws once, as it would on an instruction
	// that does not fit): the page says so, draws again, and plans on.
	t.Run("render-fails-once", func(t *testing.T) {
		b := fresh(t)
		b.tab("cluster")
		b.eval(`(() => { const render = window.vuguRender; let n = 0; window.vuguRender = function () { if (n++ === 0) throw new Error("the test's failing render"); return render.apply(this, arguments); }; })()`)
		b.set("#cluster-count", "3", "input")
		b.waitFor("the failure banner", `document.querySelector("#failure")?.textContent.includes("the test's failing render")`)
		b.waitLong("3 stages after the failed render", boundariesAre(3), time.Minute)
		b.shot("long-5-render-failed")
		b.eval(`document.querySelector("#failure-dismiss").click()`)
		b.waitFor("the banner dismissed", `document.querySelector("#failure") === null`)
		b.set("#cluster-count", "5", "input")
		b.waitLong("5 stages", boundariesAre(5), time.Minute)
		healthy(b, "the test's failing render")
	})
}
