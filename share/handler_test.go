package share_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pipeplan/share"
	"pipeplan/share/sharetest"
)

const origin = "https://pipeplan.example"

func TestAPI(t *testing.T) {
	srv := httptest.NewServer(share.NewHandler(share.Config{
		Store:           &share.MemStore{},
		Plan:            sharetest.StubPlanner,
		AllowedOrigins:  []string{origin},
		MaxRequestBytes: 1000,
	}))
	defer srv.Close()
	sharetest.API(t, sharetest.Target{URL: srv.URL, MaxRequestBytes: 1000, Origin: origin}, sharetest.StubFixture())
}

// countingStore counts calls and can be made to fail.
type countingStore struct {
	share.MemStore
	gets, puts atomic.Int32
	fail       error
}

func (s *countingStore) Get(ctx context.Context, id string) ([]byte, error) {
	s.gets.Add(1)
	if s.fail != nil {
		return nil, s.fail
	}
	return s.MemStore.Get(ctx, id)
}

func (s *countingStore) Put(ctx context.Context, id string, doc []byte) error {
	s.puts.Add(1)
	if s.fail != nil {
		return s.fail
	}
	return s.MemStore.Put(ctx, id, doc)
}

// serve sends one request to h and returns the answer and its ErrorBody, if any.
func serve(t *testing.T, h http.Handler, r *http.Request) (*httptest.ResponseRecorder, share.ErrorBody) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var e share.ErrorBody
	if w.Code >= 400 {
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" || e.Code == "" {
			t.Errorf("%s %s: %d with %q: want an ErrorBody", r.Method, r.URL, w.Code, w.Body)
		}
	}
	return w, e
}

func post(body string) *http.Request {
	r := httptest.NewRequest("POST", "/v1/plans", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestRepostPlansAndWritesOnce(t *testing.T) {
	var runs atomic.Int32
	plan := func(body []byte) (*share.Prepared, error) {
		p, err := sharetest.StubPlanner(body)
		if err == nil {
			run := p.Run
			p.Run = func(ctx context.Context) ([]byte, error) { runs.Add(1); return run(ctx) }
		}
		return p, err
	}
	s := &countingStore{}
	h := share.NewHandler(share.Config{Store: s, Plan: plan})
	for i, want := range []int{http.StatusCreated, http.StatusOK, http.StatusOK} {
		w, _ := serve(t, h, post(`{"version":1,"a":[1,2]}`))
		if w.Code != want {
			t.Errorf("post %d: %d %s, want %d", i, w.Code, w.Body, want)
		}
	}
	if runs.Load() != 1 || s.puts.Load() != 1 || s.Len() != 1 {
		t.Errorf("3 posts of one request: %d runs, %d puts, %d documents; want 1, 1, 1", runs.Load(), s.puts.Load(), s.Len())
	}
}

func TestLimits(t *testing.T) {
	h := share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner, MaxRequestBytes: 100, MaxDocumentBytes: 150})
	// A body without a Content-Length (chunked) is cut at the cap as it is read.
	r := post(`{"version":1,"pad":"` + strings.Repeat("x", 100) + `"}`)
	r.ContentLength = -1
	r.Body = io.NopCloser(r.Body) // hide the length httptest found
	if w, e := serve(t, h, r); w.Code != http.StatusRequestEntityTooLarge || e.Code != share.CodeTooLarge || e.LimitBytes != 100 {
		t.Errorf("a chunked body over the cap: %d %s, want 413 too_large", w.Code, w.Body)
	}
	// A request under the cap whose document is over its cap.
	body := `{"version":1,"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8}`
	if w, e := serve(t, h, post(body)); w.Code != http.StatusRequestEntityTooLarge || e.Code != share.CodeDocumentTooLarge || e.LimitBytes != 150 {
		t.Errorf("a document over its cap: %d %s, want 413 document_too_large", w.Code, w.Body)
	}
}

func TestFailures(t *testing.T) {
	down := &countingStore{fail: errors.New("the disk is on fire")}
	h := share.NewHandler(share.Config{Store: down, Plan: sharetest.StubPlanner})
	for _, r := range []*http.Request{post(`{"version":1}`), httptest.NewRequest("GET", "/v1/plans/abc", nil)} {
		if w, e := serve(t, h, r); w.Code != http.StatusServiceUnavailable || e.Code != share.CodeUnavailable || !strings.Contains(e.Error, "on fire") {
			t.Errorf("%s with the store down: %d %s, want 503 naming the cause", r.Method, w.Code, w.Body)
		}
	}
	s := &countingStore{}
	h = share.NewHandler(share.Config{Store: s, Plan: sharetest.StubPlanner})
	if w, e := serve(t, h, post(`{"version":1,"fail":true}`)); w.Code != http.StatusUnprocessableEntity || e.Code != share.CodeInvalid || s.Len() != 0 {
		t.Errorf("a request the planner cannot run: %d %s, %d stored; want 422, nothing stored", w.Code, w.Body, s.Len())
	}
	panicky := share.NewHandler(share.Config{Store: s, Plan: func([]byte) (*share.Prepared, error) { panic("a bug") }})
	if w, e := serve(t, panicky, post(`{}`)); w.Code != http.StatusInternalServerError || e.Code != share.CodeInternal {
		t.Errorf("a panicking planner: %d %s, want 500 internal", w.Code, w.Body)
	}
	badID := share.NewHandler(share.Config{Store: s, Plan: func([]byte) (*share.Prepared, error) { return &share.Prepared{ID: "../x"}, nil }})
	if w, _ := serve(t, badID, post(`{}`)); w.Code != http.StatusInternalServerError || s.Len() != 0 {
		t.Errorf("a planner making a bad id: %d %s, want 500 and nothing stored", w.Code, w.Body)
	}
	cancelled := share.NewHandler(share.Config{Store: s, Plan: func(b []byte) (*share.Prepared, error) {
		p, err := sharetest.StubPlanner(b)
		p.Run = func(ctx context.Context) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() }
		return p, err
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if w, e := serve(t, cancelled, post(`{"version":1}`).WithContext(ctx)); w.Code != http.StatusServiceUnavailable || e.Code != share.CodeUnavailable {
		t.Errorf("a cancelled request: %d %s, want 503", w.Code, w.Body)
	}
}

func TestURLs(t *testing.T) {
	for _, c := range []struct {
		base, target, want string
	}{
		{"", "http://plans.local:8080/v1/plans", "http://plans.local:8080/v1/plans/"},
		{"https://plans.example.com/", "http://10.0.0.1/v1/plans", "https://plans.example.com/v1/plans/"},
	} {
		h := share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner, BaseURL: c.base})
		r := httptest.NewRequest("POST", c.target, strings.NewReader(`{"version":1}`))
		r.Header.Set("Content-Type", "application/json")
		r.URL.Scheme, r.URL.Host = "", "" // as a server sees it
		w, _ := serve(t, h, r)
		var s share.Stored
		json.Unmarshal(w.Body.Bytes(), &s)
		if s.URL != c.want+s.ID || w.Header().Get("Location") != s.URL {
			t.Errorf("BaseURL %q, POST %s: url %q, Location %q; want %q", c.base, c.target, s.URL, w.Header().Get("Location"), c.want+s.ID)
		}
	}
}

func TestCORS(t *testing.T) {
	any := share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner, AllowedOrigins: []string{"*"}})
	r := httptest.NewRequest("OPTIONS", "/v1/plans", nil)
	r.Header.Set("Origin", "https://anywhere.example")
	r.Header.Set("Access-Control-Request-Method", "POST")
	if w, _ := serve(t, any, r); w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://anywhere.example" {
		t.Errorf("preflight with origins \"*\": %d %v, want 204 allowing the origin", w.Code, w.Header())
	}
	none := share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner})
	if w, _ := serve(t, none, r); w.Code != http.StatusForbidden || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight with no origins configured: %d %v, want 403", w.Code, w.Header())
	}
	plain := httptest.NewRequest("OPTIONS", "/v1/plans", nil)
	if w, _ := serve(t, none, plain); w.Code != http.StatusNoContent || w.Header().Get("Allow") != "POST, OPTIONS" {
		t.Errorf("a plain OPTIONS: %d %v, want 204 with Allow", w.Code, w.Header())
	}
}

// The load test's shape, on the handler and a MemStore over loopback: this measures the
// HTTP and handler overhead (the stub plans in microseconds).
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	srv := httptest.NewServer(share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner}))
	defer srv.Close()
	l := sharetest.Load{Posts: 1000, Gets: 1000, Concurrency: 50}
	f, err := l.Run(sharetest.Target{URL: srv.URL, Client: sharetest.Client(50, 10*time.Second)}, sharetest.StubFixture())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("handler + MemStore + stub planner:\n%s", f)
	if f.Errors != 0 {
		t.Errorf("%d errors", f.Errors)
	}
}

// A load test past its time limit stops sending and counts what it did not send.
func TestLoadLimit(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) })
	srv := httptest.NewServer(slow)
	defer srv.Close()
	l := sharetest.Load{Posts: 50, Concurrency: 1, Limit: 50 * time.Millisecond}
	f, err := l.Run(sharetest.Target{URL: srv.URL}, sharetest.StubFixture())
	if err != nil {
		t.Fatal(err)
	}
	if f.Errors != 50 || f.PostTime > time.Second || !strings.Contains(f.String(), "posts not sent: the phase ran past its limit of 50ms") {
		t.Errorf("50 posts of 20 ms, one at a time, in 50 ms: %s; want 50 errors, most of them not sent", f)
	}
}
