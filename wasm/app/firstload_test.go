//go:build browser

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// served counts, per path, what a server sent: requests, full answers (200) and body
// bytes. It is the test's view of the bytes on the wire, whoever asked (the page, its
// planner worker, its service worker).
type served struct {
	mu    sync.Mutex
	paths map[string]*servedCount
}

type servedCount struct {
	requests, full, notModified int
	bytes                       int64
}

type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *countingWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (c *served) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.paths == nil {
			c.paths = map[string]*servedCount{}
		}
		n := c.paths[r.URL.Path]
		if n == nil {
			n = &servedCount{}
			c.paths[r.URL.Path] = n
		}
		n.requests++
		n.bytes += cw.bytes
		switch cw.status {
		case http.StatusOK:
			n.full++
		case http.StatusNotModified:
			n.notModified++
		}
	})
}

func (c *served) report() (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	var total int64
	for p, n := range c.paths {
		names = append(names, p)
		total += n.bytes
	}
	sort.Strings(names)
	var b strings.Builder
	for _, p := range names {
		n := c.paths[p]
		fmt.Fprintf(&b, "  %-40s %d requests, %d full, %d not modified, %d bytes\n", p, n.requests, n.full, n.notModified, n.bytes)
	}
	return b.String(), total
}

// TestBrowserFirstLoad checks what a first visit costs the network: the page, its planner
// and its offline copy (the service worker's cache) download each file once. The service
// worker used to fetch main.wasm and planner.wasm again with cache: "reload" while the
// page was still loading them: twice the bytes of a first visit. It now revalidates what
// the page fetched (a conditional request the server answers 304). The figures are
// logged; the bytes a server sends compressed depend on the server (pipeplan serve sends
// the precompressed copies build.sh writes).
func TestBrowserFirstLoad(t *testing.T) {
	chrome := findChromium(t)
	dir := site(t)
	var counts served
	srv := httptest.NewServer(counts.wrap(http.FileServer(http.Dir(dir))))
	defer srv.Close()

	ctx, stop := startBrowser(t, chrome)
	defer stop()
	b := &browserT{T: t, ctx: ctx, shots: t.TempDir()}
	do(b, "loading the page", chromedp.Navigate(srv.URL+"/"))
	b.waitFor("the plan", `document.querySelector("#plan tbody tr") !== null`)
	// The offline copy is complete when the service worker is active (its install
	// cached every file of the shell).
	b.waitFor("the service worker", `(window.__swActive ??= navigator.serviceWorker.ready.then(r => window.__swDone = r.active !== null), window.__swDone === true)`)

	report, total := counts.report()
	t.Logf("a first visit, served uncompressed by http.FileServer: %d bytes of bodies\n%s", total, report)
	counts.mu.Lock()
	defer counts.mu.Unlock()
	for _, p := range []string{"/main.wasm", "/planner.wasm", "/wasm_exec.js", "/planner.js"} {
		n := counts.paths[p]
		if n == nil {
			t.Errorf("%s was never fetched", p)
			continue
		}
		if n.full != 1 {
			t.Errorf("%s was sent whole %d times on a first visit (want once: the service worker keeps what the page fetched)", p, n.full)
		}
	}
}

// TestBrowserFirstPlanTimes measures, and logs, how long a cold first visit takes to show
// its first plan, on this machine, with the CPU slowed 4 times, and with that on a 10
// Mbit/s line (40 ms latency), each in a fresh browser profile. It measures the host at
// PIPEPLAN_FIRSTLOAD_URL (a server of dist/ that sends compressed files, as docs/hosting.md
// says) and skips without it: it reports figures, it asserts no time.
func TestBrowserFirstPlanTimes(t *testing.T) {
	url := os.Getenv("PIPEPLAN_FIRSTLOAD_URL")
	if url == "" {
		t.Skip("PIPEPLAN_FIRSTLOAD_URL is not set: no host to measure")
	}
	chrome := findChromium(t)
	for _, c := range []struct {
		name string
		cpu  float64
		bps  float64 // bytes per second down; 0: unthrottled
	}{{"here", 1, 0}, {"4x CPU", 4, 0}, {"10 Mbit/s, 4x CPU", 4, 10e6 / 8}, {"50 Mbit/s", 1, 50e6 / 8}} {
		ctx, stop := startBrowser(t, chrome)
		b := &browserT{T: t, ctx: ctx, shots: t.TempDir()}
		do(b, "throttling", chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			if _, err := cdp.Call(ctx, tg, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: c.cpu}); err != nil {
				return chromedp.Void{}, err
			}
			if c.bps > 0 {
				if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
					return chromedp.Void{}, err
				}
				_, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
					MatchedNetworkConditions: []*network.Conditions{{Latency: 40, DownloadThroughput: c.bps, UploadThroughput: c.bps / 2}}})
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, nil
		}))
		do(b, "loading the page", chromedp.Navigate(url))
		ctxT, cancelT := context.WithTimeout(ctx, 60*time.Second)
		ms, err := chromedp.Run(ctxT, chromedp.Poll[float64](`document.querySelector("#plan tbody tr") ? performance.now() : null`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(55*time.Second)))
		cancelT()
		if err != nil {
			t.Errorf("%s: no plan: %v", c.name, err)
		}
		if os.Getenv("PIPEPLAN_FIRSTLOAD_DETAIL") != "" {
			d := do(b, "timings", chromedp.Evaluate[string](`performance.getEntriesByType("resource").map(e => e.name.split("/").pop() + " start " + e.startTime.toFixed(0) + " end " + e.responseEnd.toFixed(0)).join("; ") + "; app " + (window.__appStart ?? "")`))
			t.Logf("%s: %s", c.name, d)
		}
		wire := do(b, "reading the transfer sizes", chromedp.Evaluate[float64](`performance.getEntriesByType("resource").concat(performance.getEntriesByType("navigation")).reduce((s, e) => s + e.transferSize, 0)`))
		t.Logf("%-20s first plan after %6.0f ms; the page's own requests moved %.2f MB (the planner worker's are not in its timing)", c.name, ms, wire/1e6)
		stop()
	}
}

// startBrowser starts chromium with a fresh profile, as the browser tests drive it, and
// returns its context (the first action has run, with no time limit) and what stops it.
func startBrowser(t *testing.T, chrome string) (context.Context, func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	stop := func() { cancel(); cancelA() }
	if err := chromedp.Do(ctx); err != nil {
		stop()
		t.Fatalf("starting %s: %v", chrome, err)
	}
	return ctx, stop
}
