package share_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"pipeplan/share"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc): a bound on work that
// does not depend on the machine's speed.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// eventsRequest is 199 bytes that ask for a schedule timeline of 8,192 microbatches on
// 32 stages: at least 42 MB of events, and 0.5 GB as planned (2.6 GB and 20 s of the
// server before it was priced).
const eventsRequest = `{"version":1,"model":{"architecture":{"name":"llama-2-7b"}},"cluster":{"device":"h100-sxm","count":32},"training":{"recompute":"full"},"schedule":{"name":"zb-h1","microbatches":8192},"events":true}`

// TestHostilePosts: what a hostile client sends the API is refused with the status and a
// message naming the cause, within a bound on the memory it takes (each case states it),
// and nothing is stored.
func TestHostilePosts(t *testing.T) {
	store := &countingStore{}
	h := share.NewHandler(share.Config{Store: store, Plan: share.CorePlanner, AllowedOrigins: []string{origin}})
	valid := `{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}}`
	for _, tc := range []struct {
		name        string
		req         func() *http.Request
		status      int
		code, error string
		bound       uint64 // bytes allocated at most
	}{
		{"events priced before planning", func() *http.Request { return post(eventsRequest) },
			413, share.CodeDocumentTooLarge, "the plan made of this request is at least 41943", 16 << 20},
		{"events beyond what a result keeps", func() *http.Request { return post(strings.Replace(eventsRequest, "8192", "32768", 1)) },
			422, share.CodeInvalid, "events: the timeline of 32768 microbatches on 32 pipeline stages holds at least 2097152 events", 16 << 20},
		{"text/plain", func() *http.Request {
			r := post(valid)
			r.Header.Set("Content-Type", "text/plain")
			return r
		}, 415, share.CodeMediaType, `the request's Content-Type is "text/plain": POST a planning request as application/json`, 1 << 20},
		{"no Content-Type", func() *http.Request {
			r := post(valid)
			r.Header.Del("Content-Type")
			return r
		}, 415, share.CodeMediaType, "the request's Content-Type is empty", 1 << 20},
		{"form", func() *http.Request {
			r := post(valid)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}, 415, share.CodeMediaType, "application/x-www-form-urlencoded", 1 << 20},
		{"a 100,000-character path", func() *http.Request { return httptest.NewRequest("GET", "/v1/"+strings.Repeat("x", 100000), nil) },
			404, share.CodeNotFound, "(100004 bytes): the API is POST", 4 << 20},
		{"a 100,000-character device", func() *http.Request {
			return post(`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "` + strings.Repeat("d", 100000) + `", "count": 4}}`)
		}, 422, share.CodeInvalid, "(cut: ", 8 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w *httptest.ResponseRecorder
			var e share.ErrorBody
			got := allocated(func() { w, e = serve(t, h, tc.req()) })
			if w.Code != tc.status || e.Code != tc.code || !strings.Contains(e.Error, tc.error) {
				t.Errorf("%d %s %q, want %d %s %q", w.Code, e.Code, e.Error, tc.status, tc.code, tc.error)
			}
			if n := w.Body.Len(); n > 8<<10 {
				t.Errorf("an answer of %d bytes: it echoes the input", n)
			}
			for _, f := range e.Fields {
				if len(f.Path)+len(f.Reason) > 2*1024 {
					t.Errorf("field %.80q: %d bytes", f.Path, len(f.Path)+len(f.Reason))
				}
			}
			if got > tc.bound {
				t.Errorf("allocated %d bytes, more than the %d bound", got, tc.bound)
			}
		})
	}
	if n := store.Len(); n != 0 {
		t.Errorf("%d documents stored", n)
	}
}

// TestConcurrentPostsOfOneRequest: 200 posts at once of one new request store it once and
// answer 201 once; the others answer 200 with the same id.
func TestConcurrentPostsOfOneRequest(t *testing.T) {
	store := &countingStore{}
	h := share.NewHandler(share.Config{Store: store, Plan: share.CorePlanner})
	const n = 200
	body := `{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}}`
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			w := httptest.NewRecorder()
			h.ServeHTTP(w, post(body))
			mu.Lock()
			statuses[w.Code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if statuses[201] != 1 || statuses[200] != n-1 {
		t.Errorf("statuses %v, want one 201 and %d 200", statuses, n-1)
	}
	if p := store.puts.Load(); p != 1 {
		t.Errorf("%d puts, want 1", p)
	}
}
