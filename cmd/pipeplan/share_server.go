package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"pipeplan/share"
	"pipeplan/share/boltstore"
)

func init() {
	register(&command{name: "share-server", summary: "serve shared plans from a local store: the Worker's local twin", run: runShareServer})
}

// serveContext is cancelled when the share server should stop: on SIGINT or SIGTERM.
// Tests replace it.
var serveContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runShareServer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("share-server", stderr)
	dir := fs.String("store", "", "`folder` of the store (a bbolt file, "+boltstore.FileName+", in it; created if missing)")
	addr := fs.String("addr", "127.0.0.1:8787", "`host:port` to listen on (port 0 picks a free one)")
	origins := fs.String("allow-origin", "http://127.0.0.1:8080,http://localhost:8080", "`origins` whose pages may call the API from a browser, comma-separated (\"*\": any)")
	maxBytes := fs.Int64("max-request-bytes", share.DefaultMaxRequestBytes, "the cap on a POST body, in `bytes`")
	publicURL := fs.String("public-url", "", "the `URL` the server is reached at, for the url of a stored plan (default: the request's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--store: give the folder to keep plans in (--store DIR)")
	}
	if *maxBytes <= 0 {
		return fmt.Errorf("--max-request-bytes: must be > 0, got %d", *maxBytes)
	}
	c := share.Config{Plan: share.CorePlanner, MaxRequestBytes: *maxBytes, BaseURL: *publicURL}
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	store, err := boltstore.Open(*dir)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	defer store.Close()
	c.Store = store
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	srv := newServer(share.NewHandler(c))
	ctx, stop := serveContext()
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "serving shared plans from %s at http://%s%s (Ctrl-C stops)\n", *dir, ln.Addr(), share.PlansPath)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown) // then the store is closed
}
