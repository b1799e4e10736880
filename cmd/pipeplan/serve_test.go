package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStaticHandler(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":     "<!doctype html><title>t</title>",
		"main.wasm":      "\x00asm\x01\x00\x00\x00",
		"wasm_exec.js":   "// go",
		"public/app.css": "body{}",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkSite(dir); err != nil {
		t.Fatalf("checkSite: %v", err)
	}
	srv := httptest.NewServer(staticHandler(dir))
	defer srv.Close()
	for _, tc := range []struct {
		path, contentType, body string
		status                  int
	}{
		{"/", "text/html; charset=utf-8", "<!doctype html><title>t</title>", 200},
		{"/main.wasm", "application/wasm", "\x00asm\x01\x00\x00\x00", 200},
		{"/wasm_exec.js", "text/javascript; charset=utf-8", "// go", 200},
		{"/public/app.css", "text/css; charset=utf-8", "body{}", 200},
		{"/missing.js", "text/plain; charset=utf-8", "404 page not found\n", 404},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.contentType || string(body) != tc.body {
			t.Errorf("GET %s: %d %q %q, want %d %q %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status, tc.contentType, tc.body)
		}
		if got := resp.Header.Get("Cache-Control"); tc.status == 200 && got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", tc.path, got)
		}
	}
}

func TestServeRefusesAnUnbuiltFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := run([]string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, &stdout, &stderr)
	want := "pipeplan serve: --dir: " + dir + " has no main.wasm: run ./build.sh build first\n"
	if code != exitBad || stderr.String() != want || stdout.String() != "" {
		t.Errorf("exit %d, stderr %q, stdout %q; want %d, %q", code, stderr.String(), stdout.String(), exitBad, want)
	}
}

// TestServePrecompressed: a file with .br and .gz copies is sent as the copy the browser
// accepts (brotli first), with the original's Content-Type and Vary: Accept-Encoding;
// without an accepted encoding the original; only hashed names are cached as immutable.
func TestServePrecompressed(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"main.wasm": "raw", "main.wasm.br": "brotli", "main.wasm.gz": "gzip",
		"planner.wasm": "raw planner", "planner.wasm.gz": "gzip planner",
		"app.3f9a1c2e7b.js": "// hashed", "index.html": "<!doctype html>",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(staticHandler(dir))
	defer srv.Close()
	for _, tc := range []struct {
		path, accept                             string
		body, encoding, contentType, vary, cache string
	}{
		{"/main.wasm", "gzip, deflate, br", "brotli", "br", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/main.wasm", "gzip", "gzip", "gzip", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/main.wasm", "br;q=0, gzip;q=0.5", "gzip", "gzip", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/main.wasm", "br;q=0, *", "gzip", "gzip", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/main.wasm", "identity", "raw", "", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/planner.wasm", "br, gzip", "gzip planner", "gzip", "application/wasm", "Accept-Encoding", "no-cache"},
		{"/", "br, gzip", "<!doctype html>", "", "text/html; charset=utf-8", "", "no-cache"},
		{"/app.3f9a1c2e7b.js", "br", "// hashed", "", "text/javascript; charset=utf-8", "", "public, max-age=31536000, immutable"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
		req.Header.Set("Accept-Encoding", tc.accept) // set by hand: the client does not decode it
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if string(body) != tc.body || h.Get("Content-Encoding") != tc.encoding || h.Get("Content-Type") != tc.contentType ||
			h.Get("Vary") != tc.vary || h.Get("Cache-Control") != tc.cache {
			t.Errorf("GET %s (Accept-Encoding %q): %q, encoding %q, type %q, Vary %q, Cache-Control %q; want %q %q %q %q %q",
				tc.path, tc.accept, body, h.Get("Content-Encoding"), h.Get("Content-Type"), h.Get("Vary"), h.Get("Cache-Control"),
				tc.body, tc.encoding, tc.contentType, tc.vary, tc.cache)
		}
	}
}

// TestServerTimeouts: a client that sends half a request is cut off by the server's
// timeouts (shortened here to 200 ms), for pipeplan serve's and share-server's server
// alike; before, it held the connection for as long as it liked. The bound is generous:
// the connection must be closed within 10 s.
func TestServerTimeouts(t *testing.T) {
	saved := serverTimeouts
	defer func() { serverTimeouts = saved }()
	serverTimeouts.header, serverTimeouts.read, serverTimeouts.idle = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	for name, partial := range map[string]string{
		"half the headers": "POST /v1/plans HTTP/1.1\r\nHost: x\r\n",
		"half the body":    "POST /v1/plans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"version\":",
	} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(partial))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		c.Close()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the server held the connection open for 10 s", name)
		}
	}
	if srv.ReadHeaderTimeout == 0 || srv.ReadTimeout == 0 || srv.WriteTimeout == 0 || srv.IdleTimeout == 0 || srv.MaxHeaderBytes == 0 {
		t.Errorf("a server without a bound: %+v", srv)
	}
}
