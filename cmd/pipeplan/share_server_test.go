package main

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"pipeplan/share/boltstore"
	"pipeplan/share/sharetest"
)

// startShareServer runs `pipeplan share-server` with args on a free loopback port and
// returns its base URL and a function that stops it and returns its exit code and stderr.
func startShareServer(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	t.Cleanup(func() { serveContext = nil })
	out, stdout := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run(append([]string{"share-server", "--addr", "127.0.0.1:0"}, args...), stdout, &stderr)
		stdout.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("share-server printed %q then %v; stderr %q", line, err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/v1/plans `).FindStringSubmatch(line)
	if m == nil {
		cancel()
		t.Fatalf("share-server printed %q: no address", line)
	}
	return m[1], func() (int, string) {
		cancel()
		select {
		case c := <-code:
			return c, stderr.String()
		case <-time.After(10 * time.Second):
			t.Fatal("share-server did not stop in 10 s")
			return 0, ""
		}
	}
}

// The twin passes the API suite and the load test, and keeps what it stored after a
// restart.
func TestShareServer(t *testing.T) {
	dir := t.TempDir()
	const origin = "https://docs.example"
	url, stop := startShareServer(t, "--store", dir, "--allow-origin", "http://localhost:8080, "+origin, "--max-request-bytes", "2000000")
	fx := sharetest.CoreFixture()
	sharetest.API(t, sharetest.Target{URL: url, MaxRequestBytes: 2000000, Origin: origin}, fx)
	posts := 1000
	if testing.Short() {
		posts = 100
	}
	l := sharetest.Load{Posts: posts, Gets: posts, Concurrency: 50, Limit: time.Minute}
	f, err := l.Run(sharetest.Target{URL: url, Client: sharetest.Client(50, 30*time.Second)}, fx.From(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pipeplan share-server (bbolt) on loopback:\n%s", f)
	if f.Errors != 0 {
		t.Errorf("%d errors", f.Errors)
	}
	if code, stderr := stop(); code != exitOK || stderr != "" {
		t.Fatalf("share-server stopped with exit %d, stderr %q", code, stderr)
	}
	s, err := boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Len(); err != nil || n != posts+3 { // the API suite stores three (its first, its large profile, the charset one)
		t.Errorf("after the server stopped the store holds %d plans (%v), want %d", n, err, posts+3)
	}
}

func TestShareServerFlags(t *testing.T) {
	dir := t.TempDir()
	_, stop := startShareServer(t, "--store", dir)
	defer stop()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"share-server"}, "pipeplan share-server: --store: give the folder to keep plans in (--store DIR)\n"},
		{[]string{"share-server", "--store", dir, "--max-request-bytes", "0"}, "pipeplan share-server: --max-request-bytes: must be > 0, got 0\n"},
		{[]string{"share-server", "--store", dir, "--addr", "127.0.0.1:0"}, "pipeplan share-server: --store: " + dir + "/plans.db is in use by another process (a share-server already running on it?)\n"},
	} {
		var stdout, stderr strings.Builder
		if code := run(c.args, &stdout, &stderr); code != exitBad || stderr.String() != c.want || stdout.String() != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want %d, %q", c.args, code, stderr.String(), stdout.String(), exitBad, c.want)
		}
	}
}
