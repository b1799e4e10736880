//go:build wrangler && unix && !(js && wasm)

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pipeplan/share"
	"pipeplan/share/sharetest"
)

// TestWrangler runs the built Worker (build/, from ../../build.sh worker) under wrangler
// dev (workerd, with its local KV in a temporary folder) on loopback, and runs the API
// suite and the load test against it. Without node, wrangler (npm ci here) or the build
// it is skipped, unless CI=true, where that is a failure.
func TestWrangler(t *testing.T) {
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (required under CI=true)", msg)
		}
		t.Skipf("skipped: %s (CI=true makes this a failure)", msg)
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	wrangler, err := filepath.Abs(filepath.Join("node_modules", ".bin", "wrangler"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wrangler); err != nil {
		missing("wrangler is not installed: run npm ci in wasm/worker (../../build.sh worker does)")
	}
	for _, f := range []string{"app.wasm", "worker.mjs", "shim.mjs", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join("build", f)); err != nil {
			missing("the Worker is not built (no build/%s): run ../../build.sh worker", f)
		}
	}

	const origin = "https://docs.example"
	const maxBytes = 2000000 // the body cap, set as the Worker's variable (1 MB profiles pass)
	port, inspector := freePort(t), freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	home := t.TempDir()
	cmd := exec.Command(wrangler, "dev", "--local",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--inspector-port", strconv.Itoa(inspector),
		"--persist-to", filepath.Join(home, "state"), "--show-interactive-dev-session=false",
		"--var", "ALLOWED_ORIGINS:http://localhost:8080,"+origin,
		"--var", "MAX_REQUEST_BYTES:"+strconv.Itoa(maxBytes))
	cmd.Env = append(os.Environ(), "WRANGLER_SEND_METRICS=false", "XDG_CONFIG_HOME="+home, "NO_COLOR=1")
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // wrangler starts workerd: stop both
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // workerd may outlive wrangler
		if t.Failed() {
			t.Logf("wrangler's output:\n%s", log.String())
		}
	})

	tg := sharetest.Target{URL: url, MaxRequestBytes: maxBytes, Origin: origin, Client: sharetest.Client(50, 30*time.Second)}
	if err := waitReady(tg, exited, 60*time.Second); err != nil {
		t.Fatalf("wrangler dev did not start: %v\n%s", err, log.String())
	}
	t.Logf("wrangler dev ready in %.1f s", time.Since(start).Seconds())
	fx := sharetest.CoreFixture()
	sharetest.API(t, tg, fx)
	if t.Failed() {
		return
	}
	l := sharetest.Load{Posts: 1000, Gets: 1000, Concurrency: 50, Limit: 2 * time.Minute, Retry: proxyLost}
	f, err := l.Run(tg, fx.From(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the Worker under wrangler dev (workerd, local KV) on loopback:\n%s", f)
	if f.Errors != 0 {
		t.Errorf("%d errors", f.Errors)
	}
}

// proxyLost reports an answer of wrangler dev's proxy, which stands between the port and
// workerd and exists only in wrangler dev: its fetch from workerd failed (the connection
// between the two broke: "Broken pipe" in workerd's log). It retries GETs itself but not
// POSTs, which it answers 503 "Your worker restarted mid-request" (whether or not the
// Worker restarted: wrangler 4.86's ProxyWorker compares a URL with a path to one
// without). It happens to a few POSTs in a thousand, or more, when the machine is busy;
// a retry is safe, since the same request stores the same plan.
func proxyLost(r *sharetest.Response) bool {
	return r.Status == http.StatusServiceUnavailable && strings.HasPrefix(string(r.Body), "Your worker restarted mid-request.")
}

// waitReady polls the target until it answers a GET of an unknown plan with 404.
func waitReady(tg sharetest.Target, exited <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		r, err := tg.Do("GET", share.PlansPath+"/00", nil, nil)
		if err == nil && r.Status == http.StatusNotFound {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("GET %s/00: %d %.200s", share.PlansPath, r.Status, r.Body)
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("wrangler exited: %v", werr)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer in %s: %v", limit, err)
		}
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output safely while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
