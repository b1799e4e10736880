//go:build browser

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// phoneCheck lists what does not fit a 390 px phone: the page wider than the screen (a
// phone's browser zooms such a page out, so window.innerWidth grows with it: the test
// compares with the screen's 390 px), a panel whose content overflows it, and any
// visible text smaller than 12 CSS pixels as drawn. An HTML element's size is its computed
// font-size; SVG text is scaled by its viewBox, so its size is the computed font-size
// times the vertical scale of its screen transform (getScreenCTM). Text inside a closed
// <details>, a <select>'s options and SVG <title>s are not drawn and not counted.
const phoneCheck = `(() => {
	const bad = [], vw = 390;
	if (document.documentElement.scrollWidth > vw) bad.push("the page is " + document.documentElement.scrollWidth + " px wide");
	for (const p of document.querySelectorAll(".panel, .overview, .tabs")) {
		const r = p.getBoundingClientRect();
		if (r.right > vw + 0.5 || p.scrollWidth > p.clientWidth + 1) bad.push((p.id || p.className) + " is " + Math.round(Math.max(r.right, p.scrollWidth)) + " px wide");
	}
	const seen = new Set();
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const el = n.parentElement;
		if (!el || seen.has(el) || n.textContent.trim() === "") continue;
		seen.add(el);
		if (el.closest("title, option, script, style, select")) continue;
		if (!el.checkVisibility({visibilityProperty: true}) || el.getClientRects().length === 0) continue;
		let size = parseFloat(getComputedStyle(el).fontSize);
		if (el instanceof SVGElement) {
			const m = el.getScreenCTM();
			if (m) size *= Math.min(Math.hypot(m.a, m.b), Math.hypot(m.c, m.d));
		}
		if (size < 11.95) bad.push("text " + JSON.stringify(n.textContent.trim().slice(0, 30)) + " in <" + el.tagName.toLowerCase() + (el.className?.baseVal ?? el.className ? "." + (el.className?.baseVal ?? el.className) : "") + "> drawn at " + size.toFixed(1) + " px");
	}
	return bad.slice(0, 12);
})()`

// TestBrowserPhone loads every panel in a 390 × 844 phone viewport (an iPhone 12's) and
// checks that each fits it (tables and wide charts scroll inside themselves) and that no
// visible text is drawn under 12 px. It saves phone and desktop screenshots of every panel
// to testdata/screenshots/ (git-ignored) to look at.
func TestBrowserPhone(t *testing.T) {
	chrome := findChromium(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(site(t))))
	defer srv.Close()
	ctx, stop := startBrowser(t, chrome)
	defer stop()
	b := &browserT{T: t, ctx: ctx, shots: screenshotDir(t)}

	for _, size := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"phone", 390, 844, true}, {"desktop", 1280, 900, false}} {
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
		if size.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		do(b, "sizing the viewport", chromedp.EmulateViewport(size.width, size.height, opts...))
		do(b, "loading the page", chromedp.Navigate(srv.URL+"/"))
		b.waitFor("the plan", `document.querySelector("#plan tbody tr") !== null`)
		for _, panel := range []string{"plan", "model", "cluster", "schedule", "search", "export"} {
			b.tab(panel)
			switch panel {
			case "schedule":
				b.waitFor("the timeline", `document.querySelector(".timeline svg") !== null`)
			case "search":
				if !strings.Contains(b.text("#search-status"), "Done") {
					b.set("#search-max_devices", "8", "input")
					b.set("#search-microbatch_size", "8", "input")
					b.eval(`document.querySelector("#search-start").click()`)
					b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tr.best") !== null && document.querySelector(".pareto svg") !== null`)
				}
			}
			b.shot(size.name + "-" + panel)
			if !size.mobile {
				continue
			}
			if bad := do(b, "measuring the "+panel+" panel", chromedp.Evaluate[[]string](phoneCheck)); len(bad) > 0 {
				t.Errorf("the %s panel at %d × %d:\n  %s", panel, size.width, size.height, strings.Join(bad, "\n  "))
			}
		}
	}
	// The embed snippet fits a phone's page: an iframe as wide as its container, at most 720 px.
	do(b, "sizing the viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	b.tab("export")
	b.waitFor("the embed snippet", `document.querySelector("#embed-link").value.startsWith("<iframe")`)
	b.eval(`(() => { const d = document.createElement("div"); d.id = "embed-try"; d.innerHTML = document.querySelector("#embed-link").value; document.body.append(d); })()`)
	if w := do(b, "measuring the embed", chromedp.Evaluate[float64](`document.querySelector("#embed-try iframe").getBoundingClientRect().right`)); w > 390 {
		t.Errorf("the embed snippet's iframe reaches %.0f px on a 390 px page", w)
	}
	b.eval(`document.querySelector("#embed-try").remove()`)
}

// screenshotDir is the repository's testdata/screenshots (git-ignored), made if missing.
func screenshotDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "testdata", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// active describes the focused element: its tag, id and class, or "body".
const active = `(() => { const e = document.activeElement; if (!e || e === document.body) return "body"; return e.tagName.toLowerCase() + "#" + e.id + "." + (e.className?.baseVal ?? e.className); })()`

// focusOn waits up to 5 s for the focus to be on want (as active describes it) and
// returns where it is.
func focusOn(b *browserT, want string) string {
	b.Helper()
	var a string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if a = do(b, "reading the focus", chromedp.Evaluate[string](active)); a == want {
			break
		}
	}
	return a
}

// TestBrowserKeyboard checks the page for a keyboard user: from the top, Tab reaches the
// panels' tab list after at most one stage-boundary handle (the handles are one Tab stop;
// the arrow keys move between them), the search's results take the focus when a search
// ends and the plan's summary when a result is applied (the focus never drops to
// <body>), and the search chart is one labelled image, not thousands of nodes.
func TestBrowserKeyboard(t *testing.T) {
	chrome := findChromium(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(site(t))))
	defer srv.Close()
	ctx, stop := startBrowser(t, chrome)
	defer stop()
	b := &browserT{T: t, ctx: ctx, shots: t.TempDir()}
	do(b, "loading the page", chromedp.Navigate(srv.URL+"/"))
	b.waitFor("the plan", `document.querySelector("#plan tbody tr") !== null`)
	if n := do(b, "counting handles", chromedp.Evaluate[int](`document.querySelectorAll("#bar-main .handle").length`)); n < 2 {
		t.Fatalf("the example plan has %d boundary handles; the test needs several", n)
	}

	// Tab from the top of the page to the tab list.
	b.eval(`document.activeElement?.blur(); window.getSelection().removeAllRanges()`)
	var handles, steps int
	for steps = 0; steps < 40; steps++ {
		do(b, "pressing Tab", chromedp.KeyEvent(kb.Tab))
		a := do(b, "reading the focus", chromedp.Evaluate[string](active))
		if strings.HasPrefix(a, "button#tab-") {
			break
		}
		if strings.Contains(a, "handle") {
			handles++
		}
	}
	if steps == 40 {
		t.Fatal("Tab never reached the tab list")
	}
	if handles > 1 {
		t.Errorf("Tab stops at %d boundary handles before the tab list; want one", handles)
	}
	// The arrow keys go from one handle to the next and back.
	b.eval(`document.querySelector("#bar-main .handle").focus()`)
	do(b, "pressing ArrowDown", chromedp.KeyEvent(kb.ArrowDown))
	b.waitFor("the next handle", `document.activeElement?.dataset?.index === "2"`)
	do(b, "pressing ArrowUp", chromedp.KeyEvent(kb.ArrowUp))
	b.waitFor("the first handle", `document.activeElement?.dataset?.index === "1"`)

	// Search with the keyboard: the results take the focus.
	b.tab("search")
	b.set("#search-max_devices", "8", "input")
	b.set("#search-microbatch_size", "8", "input")
	b.eval(`document.querySelector("#search-start").focus()`)
	do(b, "pressing Enter on Search", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tr.best") !== null`)
	if a := focusOn(b, "table#search-results."); a != "table#search-results." {
		t.Errorf("after a search the focus is on %s; want the results (table#search-results)", a)
	}
	// The chart: one image with a name; its drawing is hidden from assistive technology.
	if n := do(b, "counting the chart's exposed nodes", chromedp.Evaluate[int](`document.querySelectorAll(".pareto svg *:not([aria-hidden=true] *)").length + (document.querySelector(".pareto svg[aria-hidden=true]") ? 0 : 1)`)); n > 0 {
		t.Errorf("the search chart exposes %d SVG nodes to assistive technology; want none (aria-hidden, with a summary label)", n)
	}
	if label := do(b, "reading the chart's label", chromedp.Evaluate[string](`document.querySelector(".pareto figcaption")?.textContent ?? ""`)); !strings.Contains(label, "(★). best: ") {
		t.Errorf("the search chart's label %q does not summarise it", label)
	}
	// Apply with the keyboard: the plan's summary takes the focus.
	b.eval(`document.querySelector("#search-results tr.best button.apply").focus()`)
	do(b, "pressing Enter on Apply", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the applied plan", `document.querySelector("#notice")?.textContent.includes("Applied")`)
	if a := focusOn(b, "p#summary."); a != "p#summary." {
		t.Errorf("after Apply the focus is on %s; want the plan's summary (p#summary)", a)
	}
}
