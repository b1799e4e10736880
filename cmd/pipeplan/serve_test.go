package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
