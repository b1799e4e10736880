package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

func init() {
	register(&command{name: "serve", summary: "serve the built browser app (dist/) on a local address", run: runServe})
}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	dir := fs.String("dir", "dist", "`folder` to serve: the output of ./build.sh build")
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on (port 0 picks a free one)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkSite(*dir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C stops)\n", *dir, ln.Addr())
	return http.Serve(ln, staticHandler(*dir))
}

// checkSite reports a folder that does not hold a built app.
func checkSite(dir string) error {
	for _, name := range []string{"index.html", "main.wasm", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--dir: %s has no %s: run ./build.sh build first", dir, name)
		} else if err != nil {
			return fmt.Errorf("--dir: %w", err)
		}
	}
	return nil
}

// staticHandler serves the files of dir. http.FileServer sends .wasm as application/wasm,
// which WebAssembly.instantiateStreaming needs; no-cache makes a reload after a rebuild
// fetch the new files (the browser still revalidates cheaply with Last-Modified).
func staticHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
