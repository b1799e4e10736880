//go:build browser

package main

// The browser test: it builds the app for js/wasm, serves it, and drives Debian's
// chromium with chromedp to check that the page shows the plan core/plan.Make gives
// natively, replans when the stage count changes, and keeps that count in the URL and in
// localStorage. Run it with ./build.sh test, or:
//
//	go test -tags browser -run TestBrowser ./wasm/app
//
// Without chromium it skips, unless CI is set: then it fails. PIPEPLAN_CHROMIUM names
// another browser binary; PIPEPLAN_SCREENSHOT=file.png saves what the first load shows.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pipeplan/core/examples"
	"pipeplan/core/request"
)

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

// buildSite builds what ./build.sh build puts in dist/ into a temporary folder.
func buildSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join("..", "..")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "main.wasm"), ".")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the wasm app: %v\n%s", err, out)
	}
	for _, f := range []struct{ from, to string }{
		{filepath.Join(root, "index.html"), "index.html"},
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

// pageState is what the page shows and keeps, read by readPage.
type pageState struct {
	Rows        [][]string `json:"rows"`
	Boundaries  string     `json:"boundaries"`
	Summary     string     `json:"summary"`
	Error       string     `json:"error"` // "" while hidden
	TableHidden bool       `json:"table_hidden"`
	Input       string     `json:"input"`
	Search      string     `json:"search"` // location.search
	Stored      string     `json:"stored"` // localStorage
}

const readPage = `(() => {
	const table = document.querySelector("#plan"), alert = document.querySelector("#error");
	return {
		rows: [...table.querySelectorAll("tbody tr")].map(tr => [...tr.cells].map(td => td.textContent)),
		boundaries: table.dataset.boundaries || "",
		summary: document.querySelector("#summary").textContent,
		error: alert.hidden ? "" : alert.textContent,
		table_hidden: table.hidden,
		input: document.querySelector("#stages").value,
		search: location.search,
		stored: localStorage.getItem("pipeplan.stages") || "",
	};
})()`

// nativePage is what the page should show for n stages, from core/request.Run run natively.
func nativePage(t *testing.T, n int, search, stored string) pageState {
	t.Helper()
	e := examples.Default()
	m, err := e.Model()
	if err != nil {
		t.Fatal(err)
	}
	r := exampleRequest()
	r.Cluster.Count = n
	res, err := request.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	v := newPlanView(m, e.Device, res.Plan)
	s := pageState{Boundaries: v.Boundaries, Summary: v.Summary, Input: strconv.Itoa(n), Search: search, Stored: stored}
	for _, r := range v.Rows {
		s.Rows = append(s.Rows, r.Cells)
	}
	return s
}

// do runs one browser action with a time limit, failing the test on error.
func do[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func waitFor(t *testing.T, ctx context.Context, what, predicate string) {
	t.Helper()
	do(t, ctx, "waiting for "+what, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(20*time.Second)))
}

func checkPage(t *testing.T, ctx context.Context, when string, want pageState) {
	t.Helper()
	got := do(t, ctx, "reading the page", chromedp.Evaluate[pageState](readPage))
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("%s: the page shows\n%s\nwant\n%s", when, g, w)
	}
}

// setStages types n into the stage count box as a person would (select all, type).
func setStages(t *testing.T, ctx context.Context, n string) {
	t.Helper()
	do(t, ctx, "typing "+n, chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#stages").select()`),
		chromedp.SendKeys(chromedp.CSS("#stages"), n),
	))
}

func TestBrowser(t *testing.T) {
	chrome := findChromium(t)
	site := buildSite(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 640),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser, with no time limit
		t.Fatalf("starting %s: %v", chrome, err)
	}
	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

	// First load: the example on its default 4 stages, as core plans it natively.
	do(t, ctx, "loading the page", chromedp.Navigate(srv.URL+"/"))
	waitFor(t, ctx, "the plan table", `document.querySelector("#plan tbody tr") !== null`)
	want := nativePage(t, 4, "", "")
	if want.Boundaries != "0,8,15,22,26" {
		t.Fatalf("native boundaries %s, want 0,8,15,22,26", want.Boundaries)
	}
	checkPage(t, ctx, "first load", want)
	if title := do(t, ctx, "reading the title", chromedp.Text(chromedp.CSS("h1"))); title != "pipeplan" {
		t.Errorf("heading %q", title)
	}
	if path := os.Getenv("PIPEPLAN_SCREENSHOT"); path != "" {
		png := do(t, ctx, "taking a screenshot", chromedp.CaptureScreenshot())
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

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
	if got := do(t, ctx, "pipeplan.planJSON(testdata)", chromedp.Evaluate[string](`pipeplan.planJSON(`+string(reqJS)+`)`)); got != string(golden) {
		t.Errorf("pipeplan.planJSON in chromium differs from core/request/testdata/gpt2-4xa100.result.json:\n%s", got)
	}
	// plan takes an object and returns one; what JSON cannot carry, and any bad call, comes
	// back as an error object, and the next good call still works.
	for _, tc := range []struct{ js, want string }{
		{`pipeplan.plan(JSON.parse(` + string(reqJS) + `)).step.samples_per_step`, "128"},
		{`pipeplan.plan(pipeplan.exampleRequest()).plan.boundaries.join(",")`, "0,8,15,22,26"},
		{`pipeplan.plan({model: {example: "gpt2-medium"}, cluster: {device: "a100-80gb", count: 4}, memory_proportion: NaN}).error`, "memory_proportion: must be a finite number, got NaN"},
		{`pipeplan.plan({model: {example: "gpt2-medium"}, cluster: {device: "a100-80gb", count: Infinity}}).error`, "cluster.count: must be a finite number, got +Inf"},
		{`pipeplan.plan({model: {example: "gpt2-medium"}, cluster: {device: "a100-80gb", count: 4n}}).error`, "cluster.count: must be a number, got a BigInt"},
		{`(() => { const r = {model: {example: "gpt2-medium"}}; r.model.self = r; return pipeplan.plan(r).error.endsWith(": nests deeper than 64 levels (a cyclic object?)") })()`, "true"},
		{`pipeplan.plan(42).error`, "the request is a number: give a planning request: an object, or its JSON text (docs/request.md)"},
		{`pipeplan.plan().error`, "give a planning request: an object, or its JSON text (docs/request.md)"},
		{`pipeplan.plan("{").error`, "the request's JSON ends early"},
		{`pipeplan.plan(pipeplan.exampleRequest()).feasible`, "true"},
		// The exports and the profiler script (docs/export.md).
		{`pipeplan.export(pipeplan.exampleRequest(), {format: "deepspeed"}).boundaries.join(",")`, "0,8,15,22,26"},
		{`pipeplan.export(JSON.stringify(pipeplan.exampleRequest()), '{"format": "pytorch"}').text.includes('"block.7": SplitPoint.BEGINNING')`, "true"},
		{`pipeplan.export(pipeplan.exampleRequest(), {format: "jax"}).error`, `options.format: unknown export format "jax": use pytorch, deepspeed, megatron, graphcore, json`},
		{`pipeplan.exports(pipeplan.exampleRequest()).unavailable.map(u => u.format).join(",")`, "megatron"},
		{`pipeplan.profiler().filename`, "pipeplan_profile.py"},
	} {
		if got := do(t, ctx, tc.js, chromedp.Evaluate[any](tc.js)); fmt.Sprint(got) != tc.want {
			t.Errorf("%s = %v, want %s", tc.js, got, tc.want)
		}
	}

	checkSearch(t, ctx)

	// Changing the stage count replans and keeps the count in the URL and localStorage.
	setStages(t, ctx, "3")
	want = nativePage(t, 3, "?stages=3", "3")
	waitFor(t, ctx, "the 3-stage plan", `document.querySelector("#plan").dataset.boundaries === "`+want.Boundaries+`"`)
	checkPage(t, ctx, "after typing 3", want)

	do(t, ctx, "reloading", chromedp.Reload())
	waitFor(t, ctx, "the plan after reload", `document.querySelector("#plan")?.dataset.boundaries === "`+want.Boundaries+`"`)
	checkPage(t, ctx, "after reload", want)

	// Without a query, localStorage gives the count; a query wins over it.
	do(t, ctx, "loading without a query", chromedp.Navigate(srv.URL+"/"))
	waitFor(t, ctx, "the plan", `document.querySelector("#plan")?.dataset.boundaries === "`+want.Boundaries+`"`)
	checkPage(t, ctx, "without a query", nativePage(t, 3, "", "3"))

	do(t, ctx, "loading ?stages=2", chromedp.Navigate(srv.URL+"/?stages=2"))
	want = nativePage(t, 2, "?stages=2", "3")
	waitFor(t, ctx, "the 2-stage plan", `document.querySelector("#plan")?.dataset.boundaries === "`+want.Boundaries+`"`)
	checkPage(t, ctx, "?stages=2", want)

	// More stages than layers: core's explanation replaces the table.
	setStages(t, ctx, "30")
	waitFor(t, ctx, "the error", `!document.querySelector("#error").hidden`)
	checkPage(t, ctx, "30 stages", pageState{
		Error: "no plan fits: the model has 26 layers but the cluster has 30 stages, and every stage needs at least one layer: use at most 26 stages",
		Rows:  [][]string{}, TableHidden: true, Input: "30", Search: "?stages=30", Stored: "30",
	})
	// A count that is not one is refused by the page itself, and not kept.
	setStages(t, ctx, "0")
	waitFor(t, ctx, "the error", `document.querySelector("#error").textContent.startsWith("stages:")`)
	checkPage(t, ctx, "0 stages", pageState{
		Error: `stages: enter a whole number from 1 to 1024, got "0"`,
		Rows:  [][]string{}, TableHidden: true, Input: "0", Search: "?stages=30", Stored: "30",
	})

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(problems, "\n"))
	}
}

func clusterJSON(t *testing.T, n int) string {
	t.Helper()
	c, err := examples.Default().Cluster(n)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

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
		after: pipeplan.plan(pipeplan.exampleRequest()).feasible};
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

// checkSearch: pipeplan.search resolves to the answer the search gives natively, reports
// progress, keeps the page drawing frames while it runs (it yields to the event loop),
// and a cancelled search rejects with an AbortError, after which the API still works.
func checkSearch(t *testing.T, ctx context.Context) {
	t.Helper()
	native, err := searchJSON(context.Background(), browserSearchQuery, nil, nil)
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
