package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	return newServer(staticHandler(*dir)).Serve(ln)
}

// serverTimeouts bound what a client may hold of a server (pipeplan serve and
// share-server): the headers, the whole request, the answer, and an idle keep-alive
// connection. Without them a client that sends half a body holds a connection (and a
// goroutine) open for as long as it likes. Tests shorten them.
var serverTimeouts = struct{ header, read, write, idle time.Duration }{
	header: 10 * time.Second,
	read:   60 * time.Second, // a 4 MiB request body at 70 KB/s
	write:  5 * time.Minute,  // the answer, and for share-server the planning before it
	idle:   60 * time.Second,
}

// maxHeaderBytes bounds a request's headers (net/http's default is 1 MiB).
const maxHeaderBytes = 64 << 10

// newServer is an http.Server for h with serverTimeouts.
func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: serverTimeouts.header, ReadTimeout: serverTimeouts.read,
		WriteTimeout: serverTimeouts.write, IdleTimeout: serverTimeouts.idle, MaxHeaderBytes: maxHeaderBytes}
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
// which WebAssembly.instantiateStreaming needs. A file with a precompressed copy beside it
// (build.sh writes main.wasm.br and main.wasm.gz) is sent as that copy when the browser
// accepts its encoding (brotli first), with the original's Content-Type and Vary:
// Accept-Encoding. Caching: a name that carries a content hash (app.3f9a1c2e7b.js) never
// changes and is immutable; any other may change with a rebuild, so no-cache makes the
// browser revalidate it (cheaply, with Last-Modified).
func staticHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	root := http.Dir(dir)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", cacheControl(r.URL.Path))
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if servePrecompressed(w, r, root) {
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}

// hashedName matches a file name that carries a content hash: a dot, at least 8
// lowercase hex digits, and the extension.
var hashedName = regexp.MustCompile(`\.[0-9a-f]{8,}\.[a-z0-9]+$`)

// cacheControl is the Cache-Control of a path: immutable for hashed names only.
func cacheControl(p string) string {
	if hashedName.MatchString(path.Base(p)) {
		return "public, max-age=31536000, immutable"
	}
	return "no-cache"
}

// encodings are the precompressed copies, in the order they are preferred.
var encodings = []struct{ name, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// servePrecompressed sends the precompressed copy of r's file when there is one and the
// client accepts its encoding, and reports whether it did. It adds Vary:
// Accept-Encoding whenever a copy exists, so that caches keep the encodings apart.
func servePrecompressed(w http.ResponseWriter, r *http.Request, root http.Dir) bool {
	name := path.Clean("/" + r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") || strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
		return false
	}
	accepted := acceptedEncodings(r.Header.Get("Accept-Encoding"))
	varied := false
	for _, e := range encodings {
		f, err := root.Open(name + e.ext)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			f.Close()
			continue
		}
		if !varied {
			w.Header().Add("Vary", "Accept-Encoding")
			varied = true
		}
		if !accepted[e.name] {
			f.Close()
			continue
		}
		defer f.Close()
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Encoding", e.name)
		http.ServeContent(w, r, name, st.ModTime(), f)
		return true
	}
	return false
}

// acceptedEncodings reads an Accept-Encoding header: the codings with a q-value above
// 0 ("br;q=0" refuses brotli; "*" accepts any).
func acceptedEncodings(header string) map[string]bool {
	ok, any := map[string]bool{}, false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if v, found := strings.CutPrefix(strings.TrimSpace(p), "q="); found {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch {
		case coding == "":
		case coding == "*":
			any = q > 0
		default:
			ok[coding] = q > 0 // an explicit q=0 refuses it, whatever "*" says
		}
	}
	if any {
		for _, e := range encodings {
			if _, said := ok[e.name]; !said {
				ok[e.name] = true
			}
		}
	}
	return ok
}
