//go:build browser

package main

// The browser test: it serves the built site (dist/, or a build of its own), drives
// Debian's chromium with chromedp through what a person does (pick a model, change the
// cluster, import a good file and a bad one, drag a boundary, reload, go back, open the
// embed view, go offline), and checks every plan the page shows against core/request's
// Run natively (the planner's ops), on the request the page keeps in its URL. It also
// measures how long a 100-layer model takes to replan in the browser, and takes a
// screenshot of each panel.
//
//	./build.sh test                                   # builds dist/ first
//	go test -tags browser -run TestBrowser ./wasm/app # builds its own copy
//
// Without chromium it skips, unless CI is set: then it fails. PIPEPLAN_CHROMIUM names
// another browser; PIPEPLAN_DIST a built site; PIPEPLAN_SCREENSHOTS a folder for the
// screenshots (default: a temporary folder).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
	"pipeplan/share"
	"pipeplan/ui"
	"pipeplan/wasm/planner/ops"
)

// local plans natively as the page's planner worker does in the browser (ui.Planner;
// the calls here are never cancelled).
// keepLocally gives the tests' planner (local) a model file the page kept in the
// browser's storage, so that check plans the page's requests that reference it.
func keepLocally(name string, data []byte) {
	sum := sha256.Sum256(data)
	ops.Models.Import(name, hex.EncodeToString(sum[:]), data, false)
}

// keepStoredLocally gives the tests' planner the model of a plan stored on a share
// server, as the page keeps it when it opens the plan (under the SHA-256 of the stored
// request's document: the planner's "open").
func keepStoredLocally(b *browserT, store *share.MemStore, link string) {
	b.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := store.Get(context.Background(), u.Query().Get("plan"))
	var doc struct {
		Request json.RawMessage `json:"request"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &doc)
	}
	r, err2 := wire.Decode(doc.Request)
	if err != nil || err2 != nil {
		b.Fatalf("the stored plan: %v, %v", err, err2)
	}
	if len(r.Model.Document) > 0 {
		sum := sha256.Sum256(r.Model.Document)
		ops.Models.Put("sha256-"+hex.EncodeToString(sum[:]), r.Model.Document)
	}
}

func local(_ <-chan struct{}, op string, args []string, progress func(string)) (string, error) {
	return ops.Do(context.Background(), op, args, progress, nil)
}

// openPage serves the app, starts chromium on it at desktop size (1280 × 900) and waits
// for the first plan: the start the request-field, finer-knob, search-knob and defaults
// tests share. It returns the page's driver and the address it serves, whose server and
// browser stop when the test ends.
func openPage(t *testing.T) (*browserT, string) {
	chrome := findChromium(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(site(t))))
	t.Cleanup(srv.Close)
	ctx, stop := startBrowser(t, chrome)
	t.Cleanup(stop)
	b := &browserT{T: t, ctx: ctx, shots: screenshotDir(t)}
	do(b, "sizing the viewport", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))
	do(b, "loading the page", chromedp.Navigate(srv.URL+"/"))
	b.waitFor("the plan", `document.querySelector("#plan tbody tr") !== null`)
	return b, srv.URL
}

// findChromium returns the browser to drive, skipping the test (failing it under CI)
// when there is none.
func findChromium(t *testing.T) string {
	if p := os.Getenv("PIPEPLAN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium on PATH (apt-get install -y chromium, or set PIPEPLAN_CHROMIUM)"
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal(msg + "; CI is set, so the browser test may not be skipped")
	}
	t.Skip(msg)
	return ""
}

// site returns the folder to serve: PIPEPLAN_DIST, or a build of the app into a temporary
// folder laid out as ./build.sh build lays out dist/.
func site(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PIPEPLAN_DIST"); d != "" {
		return d
	}
	dir := t.TempDir()
	root := filepath.Join("..", "..")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	for wasm, pkg := range map[string]string{"main.wasm": ".", "planner.wasm": "../planner"} {
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, wasm), pkg)
		build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", wasm, err, out)
		}
	}
	for _, f := range []struct{ from, to string }{
		{filepath.Join(root, "wasm", "planner", "worker.js"), "planner.js"},
		{filepath.Join(root, "index.html"), "index.html"},
		{filepath.Join(root, "public", "sw.js"), "sw.js"},
		{filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"), "wasm_exec.js"},
	} {
		data, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(dir, "public"), os.DirFS(filepath.Join(root, "public"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browserT bundles the test, the browser context and the screenshot folder.
type browserT struct {
	*testing.T
	ctx   context.Context
	shots string
}

// do runs one browser action with a time limit, failing the test on error.
func do[T any](b *browserT, what string, a chromedp.Action[T]) T {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.Fatalf("%s: %v", what, err)
	}
	return v
}

func (b *browserT) eval(js string) {
	b.Helper()
	do(b, js, chromedp.Evaluate[chromedp.Void](js))
}

func (b *browserT) waitFor(what, predicate string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		// Say what the page shows: its status line and notice.
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\nstatus: " + (document.querySelector("#status")?.textContent ?? "") + "\nnotice: " + (document.querySelector("#notice")?.textContent ?? "")`))
		b.Fatalf("waiting for %s: %v; the page:\n%s", what, err, page)
	}
}

// navigate leaves the page for a blank one, loads url and waits for predicate. Right
// after a navigation chromium may still hand out the last page's JavaScript context
// ("Cannot find context with specified id"): the wait is tried again then.
func (b *browserT) navigate(what, url, predicate string) {
	b.Helper()
	do(b, "leaving the page", chromedp.Navigate("about:blank"))
	do(b, what, chromedp.Navigate(url))
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(30*time.Second)))
		cancel()
		if err == nil {
			return
		}
		if try == 3 || !strings.Contains(err.Error(), "Cannot find context") {
			b.Fatalf("%s: waiting for %s: %v", what, predicate, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (b *browserT) text(sel string) string {
	b.Helper()
	return do(b, "reading "+sel, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`)?.textContent ?? ""`))
}

// disabled reports whether the control sel is disabled.
func (b *browserT) disabled(sel string) bool {
	b.Helper()
	return do(b, "reading "+sel, chromedp.Evaluate[bool](`document.querySelector(`+strconv.Quote(sel)+`).disabled`))
}

// shot saves a screenshot of the page as NAME.png.
func (b *browserT) shot(name string) {
	b.Helper()
	png := do(b, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.Fatal(err)
	}
}

// set gives a form control a value and fires the event a person's edit fires.
func (b *browserT) set(sel, value, event string) {
	b.Helper()
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event(%q, {bubbles: true})); })()`, sel, value, event))
}

func (b *browserT) tab(id string) {
	b.Helper()
	b.eval(`document.querySelector("#tab-` + id + `").click()`)
	b.waitFor(id+" panel", `document.querySelector("#panel-`+id+`") !== null`)
}

// shown is what the page shows of the plan.
type shown struct {
	// Keeping: the page has yet to write the last edit's request in the URL (it does
	// when it is idle).
	Keeping    bool   `json:"keeping"`
	Hash       string `json:"hash"`
	Boundaries string `json:"boundaries"`
	Summary    string `json:"summary"`
	Errors     string `json:"errors"`
}

const readShown = `(() => ({
	keeping: window.pipeplanKeeping?.() ?? false,
	hash: location.hash,
	boundaries: document.querySelector("#app .stagebar")?.dataset.boundaries ?? "",
	summary: document.querySelector("#summary")?.textContent ?? "",
	errors: document.querySelector("#error")?.textContent ?? "",
}))()`

// check reads the page and compares it with what core/request's Run gives natively for
// the request in the page's URL. It returns what the page shows. The URL follows an edit
// when the page is idle (window.pipeplanKeeping() says an edit's request is waiting to be
// written: the page takes it in the edit's own task) and the plan when the planner worker
// answers (a drag makes several edits), so the page is read again until its URL is
// written and it shows the plan of its URL's request, for 10 s at most.
func (b *browserT) check(when string) shown {
	b.Helper()
	var got, want shown
	natively := map[string]shown{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got = do(b, "reading the page", chromedp.Evaluate[shown](readShown))
		if got.Keeping && time.Now().Before(deadline) {
			continue // the URL is not the page's request yet
		}
		var ok bool
		if want, ok = natively[got.Hash]; !ok {
			r, err := ui.DecodeFragment(got.Hash, ui.FlateInflate)
			if err != nil {
				b.Fatalf("%s: the URL's fragment %.40q does not decode: %v", when, got.Hash, err)
			}
			app := ui.NewApp(r, nil, local)
			want = shown{Hash: got.Hash, Summary: (&ui.Root{A: app}).SummaryLine()}
			if app.Res != nil && app.Res.Plan != nil {
				want.Boundaries = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(app.Res.Plan.Boundaries)), ","), "[]")
			}
			natively[got.Hash] = want
		}
		if !got.Keeping && got.Boundaries == want.Boundaries && got.Summary == want.Summary {
			return got
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: the page shows\n  boundaries %s\n  %s\nnatively\n  boundaries %s\n  %s", when, got.Boundaries, got.Summary, want.Boundaries, want.Summary)
		}
	}
}

// waitChange waits until the page's plan differs from before.
func (b *browserT) waitChange(what string, before shown) shown {
	b.Helper()
	b.waitFor(what, fmt.Sprintf(`(() => { const s = %s; return s.summary !== %q || s.boundaries !== %q; })()`, readShown, before.Summary, before.Boundaries))
	return b.check(what)
}

// calibrationProfile is what an h100-sxm in eager PyTorch with other figures than the
// presets' would measure of gpt2 at b=4, s=512 (as core/calibrate's and cmd/pipeplan's
// tests make their synthetic profiles).
func calibrationProfile(t *testing.T) []byte {
	t.Helper()
	a, _ := arch.Bundled("gpt2")
	tg, _ := analytic.PresetTarget("h100-sxm")
	tg.Framework, _ = cluster.LookupFramework(cluster.Eager)
	truth := calibrate.Figures{MatmulEfficiency: 0.5, MemoryEfficiency: 0.6, KernelSeconds: 3e-6, HostKernelSeconds: 25e-6, HostLayerSeconds: 40e-6}
	est, err := analytic.Estimate(a, truth.Apply(tg), analytic.Options{Batch: 4, Seq: 512})
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	m.MeasuredOn = &model.MeasuredOn{Name: "h100-sxm"}
	m.MicrobatchSize, m.TokensPerSample = 4, 512
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkCalibrate calibrates the architecture shown (gpt2) against a measured profile in
// the Model panel: a bad file leaves a message and the model; a good one shows the fit
// (checked against ui's fit natively, on the request in the URL), and "Use the fitted
// figures" puts them in the request and replans.
func checkCalibrate(b *browserT, dir string, s shown) {
	b.Helper()
	profile, bad := filepath.Join(dir, "gpt2-h100.json"), filepath.Join(dir, "not-a-profile.json")
	data := calibrationProfile(b.T)
	os.WriteFile(profile, data, 0o644)
	os.WriteFile(bad, []byte(`{"time_unit": "seconds", "layers": [{"name": "x", "forward_seconds": -1}]}`), 0o644)
	b.tab("model")
	b.waitFor("the calibration picker", `document.querySelector("#calibrate-file") !== null`)
	do(b, "picking a bad profile", chromedp.SetUploadFiles("#calibrate-file", []string{bad}))
	b.waitFor("the bad profile's message", `document.querySelector("#calibrate-error")?.textContent.includes("not-a-profile.json was not used")`)
	if msg := b.text("#calibrate-error"); !strings.Contains(msg, "forward_seconds") {
		b.Errorf("the bad profile's message does not name the field: %s", msg)
	}
	if after := b.check("after the bad profile"); after.Hash != s.Hash {
		b.Errorf("the bad profile changed the request")
	}

	do(b, "picking the profile", chromedp.SetUploadFiles("#calibrate-file", []string{profile}))
	b.waitFor("the fit", `document.querySelectorAll("#calibrate-figures tbody tr").length === 5`)
	// The page shows ui's fit of the request in its URL, made natively.
	r, err := ui.DecodeFragment(s.Hash, ui.FlateInflate)
	if err != nil {
		b.Fatal(err)
	}
	app := ui.NewApp(r, nil, local)
	app.Calibrate("gpt2-h100.json", data)
	fit := app.Calibration()
	if fit == nil {
		b.Fatalf("no native fit: %s", app.CalibrationError())
	}
	if got, want := b.text("#calibrate-summary"), app.CalibrationSummary(); got != want {
		b.Errorf("the fit's summary: %q, natively %q", got, want)
	}
	rows := do(b, "reading the figures", chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#calibrate-figures tbody tr")].map(r => [...r.children].map(c => c.textContent))`))
	for i, f := range app.CalibrationFigures() {
		if i >= len(rows) || !slices.Equal(rows[i], []string{f.Name, f.Preset, f.Fitted}) {
			b.Errorf("figure %d: the page shows %v, natively %+v", i, rows, f)
		}
	}
	if n := do(b, "counting residual rows", chromedp.Evaluate[int](`document.querySelectorAll("#calibrate-residuals tbody tr").length`)); n != len(fit.Residuals) || n == 0 {
		b.Errorf("%d residual rows, the fit has %d", n, len(fit.Residuals))
	}
	if fit.RMSAfter >= fit.RMSBefore {
		b.Errorf("the fit does not improve: rms %v -> %v", fit.RMSBefore, fit.RMSAfter)
	}

	b.eval(`document.querySelector("#calibrate-use").click()`)
	b.waitFor("the fitted figures in the URL", fmt.Sprintf(`location.hash !== %q && document.querySelector("#calibrate-inuse") !== null`, s.Hash))
	got := b.check("with the fitted figures")
	u, err := ui.DecodeFragment(got.Hash, ui.FlateInflate)
	if err != nil {
		b.Fatal(err)
	}
	ar, f := u.Model.Architecture, fit.Fitted
	if ar == nil || ar.Name != "gpt2" || ar.MatmulEfficiency != f.MatmulEfficiency || ar.MemoryEfficiency != f.MemoryEfficiency ||
		ar.KernelSeconds == nil || *ar.KernelSeconds != f.KernelSeconds || ar.HostKernelSeconds == nil || *ar.HostKernelSeconds != f.HostKernelSeconds ||
		ar.HostLayerSeconds == nil || *ar.HostLayerSeconds != f.HostLayerSeconds {
		b.Errorf("the URL's architecture %+v does not carry the fitted figures %+v", ar, f)
	}
	if ar != nil && ar.Seq != r.Model.Architecture.Seq {
		b.Errorf("the fit changed the sequence length: %d, was %d", ar.Seq, r.Model.Architecture.Seq)
	}
	b.eval(`document.querySelector("#calibrate-residuals").open = true`)
	b.shot("3c-calibrate")
}

// model100 is a native model of 100 layers, for the import and the replan timing.
func model100() []byte {
	type tensor struct {
		ID    string `json:"id"`
		Bytes int64  `json:"bytes"`
	}
	type layer struct {
		Name            string   `json:"name"`
		ForwardSeconds  float64  `json:"forward_seconds"`
		BackwardSeconds float64  `json:"backward_seconds"`
		ParamBytes      int64    `json:"param_bytes"`
		ActivationBytes int64    `json:"activation_bytes"`
		Inputs          []string `json:"inputs"`
		Outputs         []tensor `json:"outputs"`
	}
	m := struct {
		Name   string   `json:"name"`
		Inputs []tensor `json:"inputs"`
		Layers []layer  `json:"layers"`
	}{Name: "synthetic-100", Inputs: []tensor{{"x", 1 << 20}}}
	in := "x"
	for i := range 100 {
		out := fmt.Sprintf("h%d", i)
		m.Layers = append(m.Layers, layer{
			Name: fmt.Sprintf("layer.%d", i), ForwardSeconds: 0.001 * float64(1+i%7), BackwardSeconds: 0.002 * float64(1+i%7),
			ParamBytes: 64 << 20, ActivationBytes: 32 << 20, Inputs: []string{in}, Outputs: []tensor{{out, 4 << 20}},
		})
		in = out
	}
	data, _ := json.Marshal(m)
	return data
}

// measureReplan times, in the page, an edit of the devices per node until the stage bar
// shows the new plan: JavaScript sets the value, fires the input event, and polls the
// DOM every frame. It returns the milliseconds of each edit.
const measureReplan = `(async (counts) => {
	const out = [];
	for (const n of counts) {
		const bar = () => document.querySelector(".overview .stagebar")?.dataset.boundaries + "|" + document.querySelector("#summary").textContent;
		const before = bar(), e = document.querySelector("#cluster-count");
		const t0 = performance.now();
		e.value = String(n);
		e.dispatchEvent(new Event("input", {bubbles: true}));
		while (bar() === before) await new Promise(r => setTimeout(r, 0));
		out.push(performance.now() - t0);
	}
	return out;
})`

func TestBrowser(t *testing.T) {
	chrome := findChromium(t)
	dir := site(t)
	// The site is served from a sub-path, as on a static host's project page: every URL
	// in it must be relative.
	const sub = "/some/sub-path/"
	srv := httptest.NewServer(http.StripPrefix(strings.TrimSuffix(sub, "/"), http.FileServer(http.Dir(dir))))
	defer srv.Close()
	shots := os.Getenv("PIPEPLAN_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser, with no time limit
		t.Fatalf("starting %s: %v", chrome, err)
	}
	b := &browserT{T: t, ctx: ctx, shots: shots}
	var mu sync.Mutex
	var problems []string
	// expected is a failure the test causes (a share server it stopped): its console
	// errors are the browser reporting the failed fetch, not the page's.
	var expected string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				if expected == "" || !strings.Contains(m.String(), expected) {
					problems = append(problems, m.String())
				}
				mu.Unlock()
			}
		}
	}()

	base := srv.URL + sub
	// First visit: the initial request, planned as core/request's Run plans it natively.
	do(b, "loading the page", chromedp.Navigate(base))
	b.waitFor("the plan", `document.querySelector("#plan tbody tr") !== null`)
	first := b.check("first load")
	if first.Boundaries != "0,8,15,22,26" {
		t.Fatalf("first load: boundaries %s, want 0,8,15,22,26", first.Boundaries)
	}
	b.shot("1-plan")

	// The JS API gives exactly the command line's JSON for the request in testdata.
	req, err := os.ReadFile("../../core/request/testdata/gpt2-4xa100.json")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../../core/request/testdata/gpt2-4xa100.result.json")
	if err != nil {
		t.Fatal(err)
	}
	reqJS, _ := json.Marshal(string(req))
	if got := do(b, "pipeplan.planJSON(testdata)", chromedp.Evaluate[string](`pipeplan.planJSON(`+string(reqJS)+`)`, chromedp.EvalAwaitPromise)); got != string(golden) {
		t.Errorf("pipeplan.planJSON in chromium differs from core/request/testdata/gpt2-4xa100.result.json:\n%s", got)
	}
	// plan takes an object and returns one; what JSON cannot carry, and any bad call, comes
	// back as an error object, and the next good call still works.
	for _, tc := range []struct{ js, want string }{
		{`(async () => (await pipeplan.plan(JSON.parse(` + string(reqJS) + `))).step.samples_per_step)()`, "128"},
		{`(async () => (await pipeplan.plan(pipeplan.exampleRequest())).plan.boundaries.join(","))()`, "0,8,15,22,26"},
		{`(async () => (await pipeplan.plan({model: {example: "gpt2-medium"}, cluster: {device: "a100-80gb", count: 4}, memory_proportion: NaN})).error)()`, "memory_proportion: must be a finite number, got NaN"},
		{`(async () => (await pipeplan.plan({model: {example: "gpt2-medium"}, cluster: {device: "a100-80gb", count: 4n}})).error)()`, "cluster.count: must be a number, got a BigInt"},
		{`(async () => { const r = {model: {example: "gpt2-medium"}}; r.model.self = r; return (await pipeplan.plan(r)).error })()`, "model.self: holds an object that holds it (a cyclic object)"},
		{`(async () => (await pipeplan.plan(42)).error)()`, "the request is a number: give a planning request: an object, or its JSON text (docs/request.md)"},
		{`(async () => (await pipeplan.plan("{")).error)()`, "the request's JSON ends early"},
		{`(async () => (await pipeplan.estimate({model: {architecture: {name: "gpt2"}}, cluster: {device: "a100-80gb", count: 2}})).layers.length > 0)()`, "true"},
		{`(async () => (await pipeplan.plan(pipeplan.exampleRequest())).feasible)()`, "true"},
		// The exports and the profiler script (docs/export.md).
		{`(async () => (await pipeplan.export(pipeplan.exampleRequest(), {format: "deepspeed"})).boundaries.join(","))()`, "0,8,15,22,26"},
		{`(async () => (await pipeplan.export(JSON.stringify(pipeplan.exampleRequest()), '{"format": "pytorch"}')).text.includes('"block.7": SplitPoint.BEGINNING'))()`, "true"},
		{`(async () => (await pipeplan.export(pipeplan.exampleRequest(), {format: "jax"})).error)()`, `options.format: unknown export format "jax": use pytorch, deepspeed, megatron, graphcore, json`},
		{`(async () => (await pipeplan.exports(pipeplan.exampleRequest())).unavailable.map(u => u.format).join(","))()`, "megatron"},
		{`pipeplan.profiler().filename`, "pipeplan_profile.py"},
		// The calls that plan run in the planner worker: they return Promises.
		{`["plan", "planJSON", "estimate", "export", "exports"].every(f => pipeplan[f](pipeplan.exampleRequest()) instanceof Promise)`, "true"},
	} {
		if got := do(b, tc.js, chromedp.Evaluate[any](tc.js, chromedp.EvalAwaitPromise)); fmt.Sprint(got) != tc.want {
			t.Errorf("%s = %v, want %s", tc.js, got, tc.want)
		}
	}

	checkSearch(t, ctx)
	checkDocSearchExample(t, ctx)

	// Pick a bundled architecture: the page replans it and shows its layers.
	b.tab("model")
	b.set("#model-pick", "arch:gpt2", "change")
	s := b.waitChange("gpt2's plan", first)
	if n := do(b, "counting layer rows", chromedp.Evaluate[int](`document.querySelectorAll("#layers tbody tr").length`)); !strings.Contains(s.Summary, fmt.Sprintf("%d layers", n)) {
		t.Errorf("gpt2: the layer table has %d rows, the summary says %s", n, s.Summary)
	}
	b.set("#knob-seq", "512", "input")
	s = b.waitChange("gpt2 at seq 512", s)
	b.shot("2-model")
	// Per-layer recomputation (recompute auto): the layer table gains its column, and
	// loses it with the knob back at the default.
	recomputes := `[...document.querySelectorAll("#layers th")].some(th => th.textContent === "Recomputes")`
	b.set("#knob-recompute", "auto", "change")
	do(b, "the layer table's Recomputes column", chromedp.Poll[bool](recomputes, chromedp.WithPollingTimeout(30*time.Second)))
	b.set("#knob-recompute", "", "change")
	do(b, "no Recomputes column", chromedp.Poll[bool]("!"+recomputes, chromedp.WithPollingTimeout(30*time.Second)))

	// Change the device count: the stage bar and the numbers follow. One pipeline, the
	// user's (typed replicas: core's starting layout of an architecture stays out).
	b.tab("cluster")
	b.set("#cluster-replicas", "1", "input")
	b.waitFor("one pipeline", `!document.querySelector("#cluster-use")?.textContent.includes("replicas") && document.querySelector("#cluster-layout") === null`)
	s = b.check("one pipeline")
	b.set("#cluster-count", "3", "input")
	s = b.waitChange("3 devices", s)
	if n := strings.Count(s.Boundaries, ","); n != 3 {
		t.Errorf("3 devices: boundaries %s", s.Boundaries)
	}
	b.set("#cluster-nodes", "2", "input")
	s = b.waitChange("2 nodes of 3", s)
	// The per-device overrides draw their rows once opened.
	b.eval(`document.querySelector("details.overrides summary").click()`)
	b.waitFor("the per-device overrides", `document.querySelector("#dev-1") !== null`)
	b.set("#dev-1", "h100-sxm", "change")
	s = b.waitChange("a mixed cluster", s)
	b.shot("3-cluster")
	// Nodes of one device, with tensor parallelism: cluster.devices_per_node, not a
	// document; the panel says how the devices are used.
	b.set("#dev-1", "a100-80gb", "change")
	s = b.waitChange("2 nodes of 3 a100s", s)
	b.set("#cluster-tensor", "3", "input")
	s = b.waitChange("3-way tensor parallel", s)
	if use := b.text("#cluster-use"); !strings.Contains(use, "6 devices in use: 2 pipeline stages × 3-way tensor parallel, on 2 nodes") {
		t.Errorf("the cluster's use: %q", use)
	}
	b.shot("3b-cluster-nodes-tensor")
	b.set("#cluster-tensor", "", "input")
	s = b.waitChange("no tensor parallelism", s)

	files := t.TempDir()
	checkCalibrate(b, files, s)

	// Import a good file (a 100-layer model) with the file picker...
	good, bad := filepath.Join(files, "synthetic-100.json"), filepath.Join(files, "broken.json")
	os.WriteFile(good, model100(), 0o644)
	keepLocally("synthetic-100.json", model100())
	os.WriteFile(bad, []byte(`{"layers": [{"name": "a", "forward_seconds": -1}]}`), 0o644)
	b.tab("model")
	do(b, "picking a file", chromedp.SetUploadFiles("#model-file", []string{good}))
	b.waitFor("the import", `document.querySelector("#notice")?.textContent.includes("Loaded synthetic-100.json: 100 layers")`)
	s = b.check("after the import")
	// ... and a bad one, dropped on the page: a message names the problem, the model stays.
	b.eval(`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['{"layers": [{"name": "a", "forward_seconds": -1}]}'], "broken.json", {type: "application/json"}));
		document.querySelector("#app").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`)
	b.waitFor("the bad file's message", `document.querySelector("#notice.bad")?.textContent.includes("broken.json was not loaded")`)
	if msg := b.text("#notice"); !strings.Contains(msg, "forward_seconds") {
		t.Errorf("the bad file's message does not name the field: %s", msg)
	}
	if after := b.check("after the bad file"); after.Boundaries != s.Boundaries || after.Hash != s.Hash {
		t.Errorf("the bad file changed the model: %s, was %s", after.Boundaries, s.Boundaries)
	}
	b.shot("4-import-error")
	do(b, "picking the bad file", chromedp.SetUploadFiles("#model-file", []string{bad}))
	b.waitFor("the picked bad file's message", `document.querySelector("#notice.bad")?.textContent.includes("broken.json was not loaded")`)

	// Replan time of the 100-layer model in chromium: edits of the device count.
	b.tab("cluster")
	b.set("#cluster-nodes", "1", "input")
	b.waitFor("one node", `document.querySelector("#cluster-nodes").value === "1"`)
	ms := do(b, "timing replans", chromedp.Evaluate[[]float64](measureReplan+`([4, 5, 6, 7, 8, 6, 5, 4, 3, 4, 5, 6])`, chromedp.EvalAwaitPromise))
	parts := do(b, "reading the last replan's parts", chromedp.Evaluate[map[string]float64](`window.pipeplanTimings`))
	t.Logf("the last replan's parts (ms): %v", parts)
	sorted := slices.Sorted(slices.Values(ms))
	median := sorted[len(sorted)/2]
	t.Logf("replan of a 100-layer model in chromium (edit to stage bar): min %.1f ms, median %.1f ms, max %.1f ms over %d edits: %.1f",
		sorted[0], median, sorted[len(sorted)-1], len(ms), ms)
	// The 100 ms budget is reported, not asserted: tests do not time things (the machines
	// that run them are shared); the planner's speed goals are Go benchmarks.
	if sorted[0] > 100 {
		t.Logf("replanning a 100-layer model took at least %.1f ms here, over the 100 ms budget", sorted[0])
	}
	if f := os.Getenv("PIPEPLAN_TIMING"); f != "" {
		os.WriteFile(f, []byte(fmt.Sprintf("min_ms %.2f\nmedian_ms %.2f\nmax_ms %.2f\nall_ms %.2f\nparts_ms %v\n", sorted[0], median, sorted[len(sorted)-1], ms, parts)), 0o644)
	}
	s = b.check("after timing")

	// Drag a stage boundary: the manual split's costs appear beside the optimum's.
	b.tab("plan")
	opt := s
	box := do(b, "locating boundary 1", chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(".overview .handle[data-index='1'] rect").getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`))
	do(b, "dragging boundary 1", chromedp.Steps(
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, box[0], box[1], chromedp.Button("left")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+40, box[1], chromedp.Button("left")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+80, box[1], chromedp.Button("left")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, box[0]+80, box[1], chromedp.Button("left")),
	))
	b.waitFor("the comparison", `document.querySelector("#compare") !== null`)
	s = b.check("after the drag")
	if s.Boundaries == opt.Boundaries || !strings.Contains(s.Summary, "manual split") {
		t.Errorf("the drag did not move the boundary: %s (optimum %s)", s.Boundaries, opt.Boundaries)
	}
	if row := b.text("#compare-optimum"); !strings.Contains(row, strings.Fields(strings.Split(opt.Summary, "bottleneck ")[1])[0]) {
		t.Errorf("the optimum's row %q does not show the optimum's bottleneck (%s)", row, opt.Summary)
	}
	// The keyboard moves a boundary too.
	b.eval(`document.querySelector(".overview .handle[data-index='1']").focus()`)
	do(b, "pressing ArrowRight", chromedp.KeyEvent(kb.ArrowRight))
	s = b.waitChange("the boundary moved by a key", s)
	b.shot("5-manual-split")

	// Reload: the same request and plan come back (from the URL).
	do(b, "reloading", chromedp.Reload())
	b.waitFor("the plan after reload", `document.querySelector("#compare") !== null`)
	if r := b.check("after reload"); r.Hash != s.Hash || r.Boundaries != s.Boundaries {
		t.Errorf("reload changed the request:\n%+v\n%+v", r, s)
	}
	// Without the fragment, localStorage gives the last request.
	do(b, "loading without a fragment", chromedp.Navigate(base))
	b.waitFor("the stored plan", `document.querySelector("#compare") !== null`)
	if r := b.check("from localStorage"); r.Boundaries != s.Boundaries {
		t.Errorf("localStorage did not restore the request: %s, want %s", r.Boundaries, s.Boundaries)
	}
	// Back and Forward: "Back to the optimum" is a new history entry; Back returns to the
	// manual split, Forward to the optimum.
	b.eval(`document.querySelector("#plan-optimum").click()`)
	b.waitFor("the optimum", `document.querySelector("#compare") === null`)
	optHash := b.check("back to the optimum").Hash
	b.eval(`history.back()`)
	b.waitFor("the manual split after Back", fmt.Sprintf(`location.hash === %q && document.querySelector(".overview .stagebar")?.dataset.boundaries === %q`, s.Hash, s.Boundaries))
	b.check("after Back")
	b.eval(`history.forward()`)
	b.waitFor("the optimum after Forward", fmt.Sprintf(`location.hash === %q && document.querySelector("#compare") === null`, optHash))
	b.check("after Forward")

	var before shown
	// The Schedule panel draws the timeline.
	b.tab("schedule")
	if n := do(b, "counting operations", chromedp.Evaluate[int](`document.querySelectorAll(".timeline g[class^=op] rect").length`)); n == 0 {
		t.Error("the timeline draws no operations")
	}
	b.shot("6-schedule")
	// The search: a large one is cancelled, and the page answers while it runs; a small
	// one finishes, and its best result is applied to the Plan panel.
	b.tab("search")
	b.set("#search-max_devices", "64", "input")
	b.eval(`document.querySelector("#search-start").click()`)
	b.waitFor("the search to run", `document.querySelector("#search-status")?.textContent.startsWith("Searching")`)
	lag := do(b, "timing a frame during the search", chromedp.Evaluate[float64](`new Promise(r => { const t0 = performance.now(); requestAnimationFrame(() => r(performance.now() - t0)); })`, chromedp.EvalAwaitPromise))
	t.Logf("a frame during the search came after %.1f ms", lag)
	if lag > 500 {
		t.Errorf("the page froze for %.0f ms during the search", lag)
	}
	b.eval(`document.querySelector("#search-cancel").click()`)
	b.waitFor("the cancelled search", `document.querySelector("#search-status")?.textContent.startsWith("Cancelled")`)
	b.set("#search-max_devices", "4", "input")
	b.set("#search-schedule", "1f1b", "change")
	b.set("#search-microbatch_size", "8", "input")
	b.eval(`document.querySelector("#search-start").click()`)
	b.waitFor("the search's results", `document.querySelector("#search-status")?.textContent.startsWith("Done") && document.querySelector("#search-results tr.best") !== null`)
	b.eval(`document.querySelector("#search-results th:nth-child(3) button").click()`)
	b.waitFor("sorting by devices", `document.querySelector("#search-results th:nth-child(3)").getAttribute("aria-sort") === "descending"`)
	b.shot("7-search")
	b.eval(`document.querySelector("#search-results th:nth-child(2) button").click()`)
	b.waitFor("sorting by throughput", `document.querySelector("#search-results th:nth-child(2)").getAttribute("aria-sort") === "descending"`)
	bestKey := do(b, "reading the best", chromedp.Evaluate[string](`document.querySelector("#search-results tr.best button.apply").getAttribute("aria-label").replace("Apply ", "")`))
	before = b.check("before apply")
	b.eval(`document.querySelector("#search-results tr.best button.apply").click()`)
	b.waitFor("the applied plan", `document.querySelector("#panel-plan") !== null`)
	applied := b.waitChange("the applied plan", before)
	if !strings.Contains(b.text("#notice"), bestKey) {
		t.Errorf("apply: the notice does not name %s: %s", bestKey, b.text("#notice"))
	}
	t.Logf("applied %s: %s", bestKey, applied.Summary)
	b.tab("export")
	link := do(b, "reading the share link", chromedp.Evaluate[string](`document.querySelector("#share-link").value`))
	if !strings.HasPrefix(link, base+"#r1.") {
		t.Errorf("share link %q", link)
	}
	b.waitFor("the framework exports", `document.querySelector("#exports .export-pytorch pre")?.textContent.includes("torch")`)
	b.eval(`document.querySelector("#exports .export-pytorch").open = true`)
	b.shot("8-export")
	checkShare(b, base, srv.URL, &mu, &expected)

	// Accessibility basics: every control has a label; every control is reachable by Tab.
	b.tab("plan")
	unlabelled := do(b, "auditing labels", chromedp.Evaluate[[]string](`[...document.querySelectorAll("input, select, textarea")].filter(e => !(e.labels?.length || e.getAttribute("aria-label"))).map(e => e.id || e.outerHTML.slice(0, 60))`))
	if len(unlabelled) > 0 {
		t.Errorf("controls without a label: %q", unlabelled)
	}
	unreachable := do(b, "auditing focus", chromedp.Evaluate[[]string](`[...document.querySelectorAll("button, select, input, textarea, [role=slider], [role=tab]")].filter(e => !e.disabled && e.tabIndex < 0 && e.getAttribute("role") !== "tab").map(e => e.id || e.outerHTML.slice(0, 60))`))
	if len(unreachable) > 0 {
		t.Errorf("controls out of the Tab order: %q", unreachable)
	}

	// A damaged link (a #fragment cut short, which the browser's DecompressionStream
	// inflates): the page says so.
	do(b, "opening a damaged link", chromedp.Navigate(base+s.Hash[:len(s.Hash)/2]))
	b.waitFor("the damaged link's notice", `document.querySelector("#notice.bad")?.textContent.includes("the link's request is damaged")`)

	// The embed view: compact and read-only, from the same request.
	do(b, "opening the embed view", chromedp.Navigate(base+"?embed=1"+s.Hash))
	b.waitFor("the embed view", `document.querySelector(".embed-mode .stagebar svg") !== null`)
	if n := do(b, "counting controls", chromedp.Evaluate[int](`document.querySelectorAll("#app input, #app select, #app [role=tab], #app [role=slider]").length`)); n != 0 {
		t.Errorf("the embed view has %d controls", n)
	}
	b.check("embed view")
	do(b, "resizing", chromedp.EmulateViewport(720, 260))
	b.shot("9-embed")
	do(b, "resizing back", chromedp.EmulateViewport(1200, 900))
	do(b, "opening the embedding example", chromedp.Navigate(base+"public/embed-example.html"))
	b.waitFor("the JS API's answer", `document.querySelector("#api-result")?.textContent.includes("stages")`)
	b.shot("10-embed-example")
	b.waitFor("the iframe", `document.querySelector("iframe")?.contentDocument?.querySelector(".embed-mode .stagebar svg") != null`)

	// Offline: the service worker has cached the site; stop the server and reload.
	do(b, "loading the page", chromedp.Navigate(base+s.Hash))
	b.waitFor("the service worker", `navigator.serviceWorker.controller !== null || (navigator.serviceWorker.ready.then(() => location.reload()), false)`)
	b.waitFor("the plan under the service worker", `document.querySelector("#plan tbody tr") !== null`)
	srv.CloseClientConnections()
	srv.Close()
	do(b, "reloading offline", chromedp.Reload())
	b.waitFor("the plan, offline", `document.querySelector("#plan tbody tr") !== null`)
	b.check("offline")
	b.shot("11-offline")

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(problems, "\n"))
	}
}

// checkSearch: pipeplan.search resolves to the answer the search gives natively, reports
// progress, keeps the page drawing frames while it runs (it yields to the event loop),
// and a cancelled search rejects with an AbortError, after which the API still works.
func checkSearch(t *testing.T, ctx context.Context) {
	t.Helper()
	native, err := ops.Do(context.Background(), "search", []string{browserSearchQuery}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Best json.RawMessage }
	if err := json.Unmarshal([]byte(native), &want); err != nil {
		t.Fatal(err)
	}
	js := strings.NewReplacer("SMALL", browserSearchQuery, "BIG", browserBigQuery).Replace(searchCheck)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[searchState](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("pipeplan.search: %v", err)
	}
	t.Logf("pipeplan.search in chromium: %.0f ms, %d frames drawn meanwhile, %d progress reports", got.MS, got.Frames, got.Progress)
	if canon(t, got.Best) != canon(t, string(want.Best)) {
		t.Errorf("pipeplan.search's best in chromium:\n%s\nnatively:\n%s", got.Best, want.Best)
	}
	if !got.HasCancel || !got.Complete || got.Progress == 0 {
		t.Errorf("search promise without cancel(), or incomplete progress: %+v", got)
	}
	// The page drew frames all along: at least one per 100 ms of search (at 60 Hz, six).
	if min := int(got.MS / 100); got.Frames < min || got.Frames < 2 {
		t.Errorf("the page drew %d frames during a %.0f ms search: it froze", got.Frames, got.MS)
	}
	if got.Cancelled != "AbortError" || got.Aborted != "AbortError" {
		t.Errorf("cancelled searches: cancel() gave %q, an aborted signal %q; want AbortError", got.Cancelled, got.Aborted)
	}
	if !got.After {
		t.Error("pipeplan.plan fails after a cancelled search")
	}
}

// checkDocSearchExample runs the pipeplan.search example of docs/js-api.md as it is
// written there, in the page, and checks that it resolves to the answer the same query
// gives natively.
func checkDocSearchExample(t *testing.T, ctx context.Context) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/js-api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## The search")
	_, block, ok := strings.Cut(section, "```js\n")
	example, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 || !strings.Contains(example, "pipeplan.search(") {
		t.Fatalf("docs/js-api.md has no pipeplan.search example under \"## The search\"")
	}
	js := "(async () => {\n" + example + "\nreturn {best: JSON.stringify(answer.best), error: answer.error || \"\", plans: (await pipeplan.plan(answer.best_request)).feasible};\n})()"
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	type state struct {
		Best  string `json:"best"`
		Error string `json:"error"`
		Plans bool   `json:"plans"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[state](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the pipeplan.search example of docs/js-api.md:\n%s\n%v", example, err)
	}
	q, _ := json.Marshal(map[string]any{"request": exampleRequest(), "max_devices": 8, "schedule": "1f1b"})
	native, err := ops.Do(context.Background(), "search", []string{string(q)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Best json.RawMessage }
	if err := json.Unmarshal([]byte(native), &want); err != nil {
		t.Fatal(err)
	}
	if got.Error != "" || got.Best == "" || canon(t, got.Best) != canon(t, string(want.Best)) || !got.Plans {
		t.Errorf("the docs' pipeplan.search example gave best %s (error %q, its request plans: %v); natively %s", got.Best, got.Error, got.Plans, want.Best)
	}
}

// browserSearchQuery is the search the browser test runs (a second or so under
// WebAssembly), and browserBigQuery one it cancels (far longer).
const (
	browserSearchQuery = `{"request": {"model": {"architecture": {"name": "meta-llama-3-8b", "seq": 8192}},
	"cluster": {"device": "h100-sxm", "devices_per_node": 8}}, "max_devices": 16, "max_microbatch_size": 16}`
	browserBigQuery = `{"request": {"model": {"architecture": {"name": "llama-3.1-70b", "seq": 8192}},
	"cluster": {"device": "h100-sxm", "devices_per_node": 8}}, "max_devices": 512, "global_batch": 1024}`
)

// searchCheck runs pipeplan.search in the page while a requestAnimationFrame loop counts
// frames, then starts two long searches and cancels one with cancel() and one with an
// AbortSignal.
const searchCheck = `(async () => {
	let frames = 0, running = true;
	const tick = () => { frames++; if (running) requestAnimationFrame(tick); };
	requestAnimationFrame(tick);
	await new Promise(r => requestAnimationFrame(r));
	const before = frames, progress = [], t0 = performance.now();
	const promise = pipeplan.search(SMALL, p => progress.push(p));
	const hasCancel = typeof promise.cancel === "function";
	const answer = await promise;
	running = false;
	const ms = performance.now() - t0, during = frames - before;
	const outcome = async p => { try { await p; return "resolved"; } catch (e) { return e.name; } };
	const second = pipeplan.search(BIG);
	setTimeout(() => second.cancel(), 100);
	const cancelled = await outcome(second);
	const ctl = new AbortController();
	const third = pipeplan.search(BIG, null, {signal: ctl.signal});
	setTimeout(() => ctl.abort(), 100);
	const aborted = await outcome(third);
	const last = progress[progress.length - 1] || {};
	return {best: JSON.stringify(answer.best), has_cancel: hasCancel, ms, frames: during, progress: progress.length,
		complete: last.done === last.total && last.best !== undefined, cancelled, aborted,
		after: (await pipeplan.plan(pipeplan.exampleRequest())).feasible};
})()`

type searchState struct {
	Best      string  `json:"best"`
	HasCancel bool    `json:"has_cancel"`
	MS        float64 `json:"ms"`
	Frames    int     `json:"frames"`
	Progress  int     `json:"progress"`
	Complete  bool    `json:"complete"`
	Cancelled string  `json:"cancelled"`
	Aborted   string  `json:"aborted"`
	After     bool    `json:"after"`
}

// canon re-encodes JSON through Go, so that numbers compare by value.
func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkShare shares the page's plan through the shared-plans handler (share.NewHandler
// over a memory store, on loopback, allowing the page's origin), opens the ?plan=ID link
// in a fresh tab and sees the same plan; then stops the server: Share falls back to the
// #fragment link and says so, and the ?plan= link shows its fragment's plan and says so.
func checkShare(b *browserT, base, origin string, mu *sync.Mutex, expected *string) {
	b.Helper()
	store := &share.MemStore{}
	shareSrv := httptest.NewServer(share.NewHandler(share.Config{Store: store, Plan: share.CorePlanner, AllowedOrigins: []string{origin}}))
	defer shareSrv.Close()
	shown := b.check("before sharing")
	b.set("#share-server", shareSrv.URL, "change")
	b.waitFor("the share button", `document.querySelector("#share").textContent.includes("store on the server")`)
	b.eval(`document.querySelector("#share").click()`)
	b.waitFor("the stored plan", `document.querySelector("#notice")?.textContent.includes("Stored on ")`)
	link := do(b, "reading the share link", chromedp.Evaluate[string](`document.querySelector("#share-link").value`))
	if !strings.HasPrefix(link, base+"?plan=") || !strings.Contains(link, "server=") || strings.Contains(link, "#") || store.Len() != 1 {
		b.Fatalf("share link %q, %d stored", link, store.Len())
	}
	b.shot("8b-share-stored")
	// A fresh tab opens the link: the stored plan, as the first page showed it.
	tab, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	if err := chromedp.Do(tab); err != nil { // open the tab, with no time limit
		b.Fatalf("opening a tab: %v", err)
	}
	fresh := &browserT{T: b.T, ctx: tab, shots: b.shots}
	do(fresh, "opening the shared link", chromedp.Navigate(link))
	fresh.waitFor("the opened plan", `document.querySelector("#notice")?.textContent.includes("Opened plan")`)
	if st := fresh.text("#status"); !strings.HasPrefix(st, "Stored plan ") {
		b.Errorf("the opened plan's status: %q", st)
	}
	keepStoredLocally(b, store, link)
	got := fresh.check("the opened plan")
	if got.Summary != shown.Summary || got.Boundaries != shown.Boundaries {
		b.Errorf("the opened plan shows\n  %s %s\nthe sharing page\n  %s %s", got.Boundaries, got.Summary, shown.Boundaries, shown.Summary)
	}
	fresh.shot("8c-share-opened")
	// The server goes down: Share gives the #fragment link and says so.
	// Chromium logs each failed fetch ("Failed to load resource:
	// net::ERR_CONNECTION_REFUSED", without the address): expected while it is down.
	mu.Lock()
	*expected = "net::ERR_CONNECTION_REFUSED"
	mu.Unlock()
	defer func() {
		mu.Lock()
		*expected = ""
		mu.Unlock()
	}()
	shareSrv.CloseClientConnections()
	shareSrv.Close()
	b.eval(`document.querySelector("#share").click()`)
	b.waitFor("the fallback", `document.querySelector("#notice")?.textContent.includes("could not be reached")`)
	fallback := do(b, "reading the fallback link", chromedp.Evaluate[string](`document.querySelector("#share-link").value`))
	if !strings.HasPrefix(fallback, base+"#r1.") {
		b.Errorf("the link with the server down: %q", fallback)
	}
	if msg := b.text("#notice"); !strings.Contains(msg, "holds the whole request") {
		b.Errorf("the fallback's message: %q", msg)
	}
	b.shot("8d-share-server-down")
	// A ?plan= link with a fragment, server down: the fragment's plan, and a message. (A
	// plan this browser opened before opens from its HTTP cache: the documents are
	// immutable. So this link names another plan.)
	down := strings.Replace(link, "plan="+strings.Split(strings.Split(link, "plan=")[1], "&")[0], "plan="+strings.Repeat("ab", 32), 1)
	do(fresh, "opening a plan link with the server down", chromedp.Navigate(down+shown.Hash))
	fresh.waitFor("the fragment's plan", `document.querySelector("#notice")?.textContent.includes("could not be reached") && document.querySelector("#notice").textContent.includes("showing the link's #fragment") && !!document.querySelector("#app .stagebar")?.dataset.boundaries`)
	if got := fresh.check("the fragment fallback"); got.Summary != shown.Summary {
		b.Errorf("the fragment fallback shows %s, want %s", got.Summary, shown.Summary)
	}
	// Back to no server for the rest of the test.
	b.set("#share-server", "", "change")
	b.waitFor("no share server", `document.querySelector("#share").textContent === "Share: copy the link"`)
}
