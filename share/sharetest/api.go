package sharetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"pipeplan/share"
)

// Fixture is what the suites send: requests that the server's Planner takes and one it
// refuses, and that Planner, run locally to know the document the server must store.
type Fixture struct {
	// Plan is the Planner the server runs.
	Plan share.Planner
	// Valid returns distinct valid requests for i = 0, 1, 2, ...
	Valid func(i int) []byte
	// Invalid is a well-formed request that Plan refuses.
	Invalid []byte
	// InvalidField is a field path the refusal of Invalid names.
	InvalidField string
	// Large, if set, is a valid request of a large imported profile (under the
	// target's MaxRequestBytes).
	Large []byte
}

// Expect returns the id and the document that the server must store for body.
func (f Fixture) Expect(body []byte) (id string, doc []byte, err error) {
	p, err := f.Plan(body)
	if err != nil {
		return "", nil, err
	}
	doc, err = p.Document(context.Background())
	return p.ID, doc, err
}

// From returns the fixture whose valid requests start at f.Valid(k): a load test after
// the API suite then posts only new requests.
func (f Fixture) From(k int) Fixture {
	valid := f.Valid
	f.Valid = func(i int) []byte { return valid(k + i) }
	return f
}

// Target is a running server of the API.
type Target struct {
	// URL is its base URL ("http://127.0.0.1:8787"), without a trailing slash.
	URL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// MaxRequestBytes is the server's cap on a POST body.
	MaxRequestBytes int64
	// Origin is an origin the server allows (CORS); "" skips the CORS checks.
	Origin string
}

func (tg Target) client() *http.Client {
	if tg.Client != nil {
		return tg.Client
	}
	return http.DefaultClient
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request to the target; path is appended to its URL.
func (tg Target) Do(method, path string, body []byte, header map[string]string) (*Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, tg.URL+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := tg.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// API checks the whole API of a running server: the round trip, idempotent re-posts,
// caching headers and ETags, 404, 400, 413, 422, 405, and CORS with preflight.
func API(t *testing.T, tg Target, f Fixture) {
	do := func(t *testing.T, method, path string, body []byte, header map[string]string) *Response {
		t.Helper()
		r, err := tg.Do(method, path, body, header)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	body := f.Valid(0)
	id, want, err := f.Expect(body)
	if err != nil {
		t.Fatalf("the fixture's first valid request: %v", err)
	}
	url := tg.URL + share.PlansPath + "/" + id

	t.Run("round trip", func(t *testing.T) {
		r := do(t, "POST", share.PlansPath, body, nil)
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("POST: %d %s, want 201", r.Status, r.Body)
		}
		var s share.Stored
		if err := json.Unmarshal(r.Body, &s); err != nil {
			t.Fatalf("POST: %v in %s", err, r.Body)
		}
		if s.ID != id || s.URL != url || r.Header.Get("Location") != url {
			t.Errorf("POST: id %q url %q Location %q, want %q and %q", s.ID, s.URL, r.Header.Get("Location"), id, url)
		}
		checkJSON(t, "POST", r)
		g := do(t, "GET", share.PlansPath+"/"+id, nil, nil)
		if g.Status != http.StatusOK || !bytes.Equal(g.Body, want) {
			t.Fatalf("GET: %d %.300s\nwant 200 %.300s", g.Status, g.Body, want)
		}
		checkJSON(t, "GET", g)
		if cc := g.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("GET: Cache-Control %q, want immutable for a year", cc)
		}
		etag := g.Header.Get("ETag")
		if etag != `"`+id+`"` {
			t.Errorf("GET: ETag %q, want %q", etag, `"`+id+`"`)
		}
		if nm := do(t, "GET", share.PlansPath+"/"+id, nil, map[string]string{"If-None-Match": etag}); nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
			t.Errorf("GET with If-None-Match: %d %q, want 304 and no body", nm.Status, nm.Body)
		}
		if h := do(t, "HEAD", share.PlansPath+"/"+id, nil, nil); h.Status != http.StatusOK || len(h.Body) != 0 {
			t.Errorf("HEAD: %d %q, want 200 and no body", h.Status, h.Body)
		}
	})

	t.Run("idempotent re-post", func(t *testing.T) {
		// The same request, spelled otherwise (indented), is the same plan.
		var indented bytes.Buffer
		if err := json.Indent(&indented, body, "", "\t"); err != nil {
			t.Fatal(err)
		}
		for _, b := range [][]byte{body, indented.Bytes()} {
			r := do(t, "POST", share.PlansPath, b, nil)
			var s share.Stored
			json.Unmarshal(r.Body, &s)
			if r.Status != http.StatusOK || s.ID != id || s.URL != url {
				t.Errorf("POST again: %d %s, want 200 with id %s", r.Status, r.Body, id)
			}
		}
		if g := do(t, "GET", share.PlansPath+"/"+id, nil, nil); g.Status != http.StatusOK || !bytes.Equal(g.Body, want) {
			t.Errorf("GET after re-posts: %d, the document changed: %.300s", g.Status, g.Body)
		}
	})

	t.Run("large profile", func(t *testing.T) {
		if f.Large == nil {
			t.Skip("the fixture has no large request")
		}
		id, want, err := f.Expect(f.Large)
		if err != nil {
			t.Fatalf("the fixture's large request: %v", err)
		}
		r := do(t, "POST", share.PlansPath, f.Large, nil)
		var s share.Stored
		json.Unmarshal(r.Body, &s)
		if (r.Status != http.StatusCreated && r.Status != http.StatusOK) || s.ID != id {
			t.Fatalf("POST %d bytes: %d %.300s, want 201 with id %s", len(f.Large), r.Status, r.Body, id)
		}
		if g := do(t, "GET", share.PlansPath+"/"+id, nil, nil); g.Status != http.StatusOK || !bytes.Equal(g.Body, want) {
			t.Errorf("GET the large plan: %d, %d bytes, want 200 and the %d bytes core makes", g.Status, len(g.Body), len(want))
		}
	})

	t.Run("404", func(t *testing.T) {
		for _, path := range []string{
			share.PlansPath + "/" + strings.Repeat("0", 64),
			share.PlansPath + "/not-an-id",
			share.PlansPath + "/",
			"/v2/plans",
			"/",
		} {
			r := do(t, "GET", path, nil, nil)
			if r.Status != http.StatusNotFound || code(r) != share.CodeNotFound {
				t.Errorf("GET %s: %d %s, want 404 not_found", path, r.Status, r.Body)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("GET %s: Cache-Control %q, want no-store (the plan may be stored later)", path, cc)
			}
			checkJSON(t, "GET "+path, r)
		}
	})

	t.Run("400", func(t *testing.T) {
		for _, b := range []string{"", "   ", "not json", `{"version": 1`, `[1, 2]`, `"a string"`, `{} {}`} {
			r := do(t, "POST", share.PlansPath, []byte(b), nil)
			if r.Status != http.StatusBadRequest || code(r) != share.CodeMalformed {
				t.Errorf("POST %q: %d %s, want 400 malformed", b, r.Status, r.Body)
			}
			checkJSON(t, fmt.Sprintf("POST %q", b), r)
		}
	})

	t.Run("415", func(t *testing.T) {
		// Only application/json: a text/plain or form POST is what any page may send
		// cross-origin without a preflight. Nothing is stored.
		fresh := f.Valid(49_999) // beyond what the other tests and the load test post
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
			r := do(t, "POST", share.PlansPath, fresh, map[string]string{"Content-Type": ct})
			if r.Status != http.StatusUnsupportedMediaType || code(r) != share.CodeMediaType {
				t.Errorf("POST as %s: %d %s, want 415 unsupported_media_type", ct, r.Status, r.Body)
			}
			checkJSON(t, "POST as "+ct, r)
		}
		if id, _, err := f.Expect(fresh); err == nil {
			if r := do(t, "GET", share.PlansPath+"/"+id, nil, nil); r.Status != http.StatusNotFound {
				t.Errorf("a request refused 415 was stored: GET %s: %d", id, r.Status)
			}
		}
		r := do(t, "POST", share.PlansPath, fresh, map[string]string{"Content-Type": "application/json; charset=utf-8"})
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Errorf("POST as application/json; charset=utf-8: %d %s", r.Status, r.Body)
		}
	})

	t.Run("413", func(t *testing.T) {
		if tg.MaxRequestBytes <= 0 {
			t.Skip("the target's MaxRequestBytes is not known")
		}
		// A JSON object one byte over the cap, then one at the cap (which is not refused
		// for its size: it is a valid JSON object the planner refuses).
		over := padded(tg.MaxRequestBytes + 1)
		r := do(t, "POST", share.PlansPath, over, nil)
		var e share.ErrorBody
		json.Unmarshal(r.Body, &e)
		if r.Status != http.StatusRequestEntityTooLarge || e.Code != share.CodeTooLarge || e.LimitBytes != tg.MaxRequestBytes {
			t.Errorf("POST of %d bytes: %d %s, want 413 too_large with limit_bytes %d", len(over), r.Status, r.Body, tg.MaxRequestBytes)
		}
		checkJSON(t, "POST too large", r)
		if r := do(t, "POST", share.PlansPath, padded(tg.MaxRequestBytes), nil); r.Status == http.StatusRequestEntityTooLarge {
			t.Errorf("POST of exactly %d bytes: %d %s, want it taken", tg.MaxRequestBytes, r.Status, r.Body)
		}
	})

	t.Run("422", func(t *testing.T) {
		r := do(t, "POST", share.PlansPath, f.Invalid, nil)
		var e share.ErrorBody
		if err := json.Unmarshal(r.Body, &e); err != nil {
			t.Fatalf("%v in %s", err, r.Body)
		}
		if r.Status != http.StatusUnprocessableEntity || e.Code != share.CodeInvalid || e.Error == "" {
			t.Errorf("POST an invalid request: %d %s, want 422 invalid", r.Status, r.Body)
		}
		if !slices.ContainsFunc(e.Fields, func(fl share.Field) bool { return fl.Path == f.InvalidField && fl.Reason != "" }) {
			t.Errorf("POST an invalid request: fields %+v, want one naming %q", e.Fields, f.InvalidField)
		}
		checkJSON(t, "POST invalid", r)
	})

	t.Run("405", func(t *testing.T) {
		for _, c := range []struct{ method, path, allow string }{
			{"GET", share.PlansPath, "POST, OPTIONS"},
			{"PUT", share.PlansPath + "/" + id, "GET, HEAD, OPTIONS"},
			{"DELETE", share.PlansPath + "/" + id, "GET, HEAD, OPTIONS"},
		} {
			r := do(t, c.method, c.path, nil, nil)
			if r.Status != http.StatusMethodNotAllowed || code(r) != share.CodeMethod || r.Header.Get("Allow") != c.allow {
				t.Errorf("%s %s: %d Allow %q %s, want 405 Allow %q", c.method, c.path, r.Status, r.Header.Get("Allow"), r.Body, c.allow)
			}
		}
	})

	t.Run("CORS", func(t *testing.T) {
		if tg.Origin == "" {
			t.Skip("no allowed origin given")
		}
		const other = "https://elsewhere.example"
		pre := func(origin, path, method string) *Response {
			return do(t, "OPTIONS", path, nil, map[string]string{
				"Origin":                         origin,
				"Access-Control-Request-Method":  method,
				"Access-Control-Request-Headers": "content-type",
			})
		}
		r := pre(tg.Origin, share.PlansPath, "POST")
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != tg.Origin ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "content-type") {
			t.Errorf("preflight POST from %s: %d %v, want 204 allowing it", tg.Origin, r.Status, r.Header)
		}
		r = pre(tg.Origin, share.PlansPath+"/"+id, "GET")
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != tg.Origin ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "GET") {
			t.Errorf("preflight GET from %s: %d %v, want 204 allowing it", tg.Origin, r.Status, r.Header)
		}
		r = pre(other, share.PlansPath, "POST")
		if r.Status != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" || code(r) != share.CodeOrigin {
			t.Errorf("preflight from %s: %d %v %s, want 403 without Access-Control-Allow-Origin", other, r.Status, r.Header, r.Body)
		}
		g := do(t, "GET", share.PlansPath+"/"+id, nil, map[string]string{"Origin": tg.Origin})
		if g.Header.Get("Access-Control-Allow-Origin") != tg.Origin || !strings.Contains(g.Header.Get("Access-Control-Expose-Headers"), "ETag") ||
			!slices.Contains(g.Header.Values("Vary"), "Origin") {
			t.Errorf("GET from %s: %v, want Access-Control-Allow-Origin, ETag exposed, Vary: Origin", tg.Origin, g.Header)
		}
		p := do(t, "POST", share.PlansPath, body, map[string]string{"Origin": tg.Origin})
		if p.Status != http.StatusOK || p.Header.Get("Access-Control-Allow-Origin") != tg.Origin {
			t.Errorf("POST from %s: %d %v, want 200 with Access-Control-Allow-Origin", tg.Origin, p.Status, p.Header)
		}
		if g := do(t, "GET", share.PlansPath+"/"+id, nil, map[string]string{"Origin": other}); g.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from %s: Access-Control-Allow-Origin %q, want none", other, g.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// padded returns a JSON object of exactly n bytes (n >= 12).
func padded(n int64) []byte {
	b := []byte(`{"pad":"`)
	b = append(b, bytes.Repeat([]byte("x"), int(n)-len(b)-2)...)
	return append(b, `"}`...)
}

func code(r *Response) string {
	var e share.ErrorBody
	json.Unmarshal(r.Body, &e)
	return e.Code
}

func checkJSON(t *testing.T, what string, r *Response) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	if !json.Valid(r.Body) {
		t.Errorf("%s: the answer is not JSON: %.200q", what, r.Body)
	}
}
