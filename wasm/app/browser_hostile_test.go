//go:build browser

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// testPlanner is a planner worker for the test: the real one (planner.js), which also
// throws, as a trap in the planner's WebAssembly does, when a plan's request holds
// "test_die" (before the planner sees it). worker.js then reports the planner stopped,
// as it does when Go runs out of memory and exits.
const testPlanner = `self.addEventListener("message", e => {
  const a = e.data && e.data.args;
  if (e.data.op === "plan" && a && typeof a[0] === "string" && a[0].includes("test_die")) {
    e.stopImmediatePropagation(); // the planner never sees this call: it is in flight
    throw new Error("test: the planner trapped");
  }
});
importScripts("planner.js");`

// hostileChecks are the JS API's hostile cases: each expression's value (a string) must
// contain want. Each is bounded by the check that refuses it: the knobs before anything is
// built (core/search's TestHostileQueries states the memory), the worker's walk of each
// distinct object once with at most 2^25 values.
var hostileChecks = []struct{ name, js, want string }{
	{"max_devices 1e9", `(async () => (await pipeplan.search({request: pipeplan.exampleRequest(), max_devices: 1e9})).error)()`,
		"max_devices: must be between 1 and 65536, got 1000000000"},
	{"max_microbatch_size 1e9", `(async () => (await pipeplan.search({request: pipeplan.exampleRequest(), max_devices: 8, max_microbatch_size: 1e9})).error)()`,
		"max_microbatch_size: must be between 0 and 4096"},
	{"a DAG 41 deep", `(async () => { let o = {}; for (let i = 0; i < 41; i++) o = {a: o, b: o};
		const r = pipeplan.exampleRequest(); r.model.x = o; return (await pipeplan.plan(r)).error })()`,
		"values as JSON (an object shared by many parents is repeated in JSON each time)"},
	{"a DAG 20 deep is walked once per object and reaches the planner", `(async () => { let o = 1; for (let i = 0; i < 20; i++) o = {a: o, b: o};
		const r = pipeplan.exampleRequest(); r.model.x = o; return (await pipeplan.plan(r)).error })()`,
		"model.x: is not a field of the request"},
	{"new Number(NaN)", `(async () => { const r = pipeplan.exampleRequest(); r.memory_proportion = new Number(NaN); return (await pipeplan.plan(r)).error })()`,
		"memory_proportion: must be a finite number, got NaN"},
	{"a cycle", `(async () => { const r = pipeplan.exampleRequest(); r.cluster.self = r; return (await pipeplan.plan(r)).error })()`,
		"cluster.self: holds an object that holds it (a cyclic object)"},
	{"a function", `(async () => { const r = pipeplan.exampleRequest(); r.cluster.f = () => 1; return (await pipeplan.plan(r)).error })()`,
		"the request cannot be sent to the planner: it holds what JSON cannot carry (a function or a symbol)"},
	{"options: NaN", `(async () => (await pipeplan.export(pipeplan.exampleRequest(), {format: "json", x: NaN})).error)()`,
		"options.x: must be a finite number, got NaN"},
	{"a model name that would run as code in an export (issue 21.1)", `(async () => {
		const r = pipeplan.exampleRequest(); r.model.name = "x\ntouch PWNED\n#";
		const out = [];
		for (const format of ["pytorch", "deepspeed", "graphcore"]) {
			const e = await pipeplan.export(r, {format});
			out.push(format + ":" + e.text.split("\n").filter(l => l.startsWith("touch")).length + ":" + e.text.includes("model x\\ntouch PWNED\\n#"));
		}
		return out.join(" ");
	})()`, "pytorch:0:true deepspeed:0:true graphcore:0:true"},
	{"deep nesting", `(async () => { let o = 1; for (let i = 0; i < 100; i++) o = [o]; const r = pipeplan.exampleRequest(); r.x = o; return (await pipeplan.plan(r)).error })()`,
		"nests deeper than 64 levels"},
	{"the planner stops", `(async () => {
		const outcome = async p => { try { await p; return "resolved"; } catch (e) { return e.message; } };
		const long = pipeplan.search(` + "`" + browserBigQuery + "`" + `);
		const die = pipeplan.plan('{"test_die": true}');
		const pa = outcome(long), pb = outcome(die); // handled at once: both reject together
		const a = await pa, b = await pb;
		const after = (await pipeplan.plan(pipeplan.exampleRequest())).feasible;
		return JSON.stringify({a, b, after});
	})()`, ""},
}

// TestBrowserHostile: the JS API refuses hostile arguments with an error naming the field,
// and a planner worker that stops rejects the calls in flight and is replaced.
func TestBrowserHostile(t *testing.T) {
	chrome := findChromium(t)
	dir := site(t)
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/test-planner.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte(testPlanner))
	})
	mux.HandleFunc("/hostile.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page := strings.Replace(string(index), "<head>", `<head><script>window.pipeplanPlannerURL = "test-planner.js";</script>`, 1)
		page = strings.Replace(page, `new Worker("planner.js")`, `new Worker("test-planner.js")`, 1) // index.html starts it early
		w.Write([]byte(page))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chrome, err)
	}
	b := &browserT{T: t, ctx: ctx, shots: t.TempDir()}
	do(b, "loading the page", chromedp.Navigate(srv.URL+"/hostile.html"))
	b.waitFor("the API", `typeof window.pipeplan === "object"`)
	for _, tc := range hostileChecks {
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		got, err := chromedp.Run(c, chromedp.Evaluate[string](tc.js, chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.name == "the planner stops" {
			var v struct {
				A, B  string
				After bool
			}
			json.Unmarshal([]byte(got), &v)
			const lost = ": the call was lost; the next call starts a new planner"
			if !strings.Contains(v.A, "the planner stopped (") || !strings.Contains(v.A, lost) || !strings.Contains(v.B, lost) || !v.After {
				t.Errorf("%s: the search in flight %q, the plan %q, the next plan feasible %v", tc.name, v.A, v.B, v.After)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
