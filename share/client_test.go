package share_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"pipeplan/share"
	"pipeplan/share/sharetest"
)

func TestClient(t *testing.T) {
	srv := httptest.NewServer(share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner}))
	defer srv.Close()
	c := share.Client{Server: srv.URL + "/"}
	ctx := context.Background()
	s, err := c.Share(ctx, []byte(`{"version": 1, "x": 2}`))
	if err != nil || s.ID == "" || s.URL != srv.URL+"/v1/plans/"+s.ID {
		t.Fatalf("Share: %+v, %v", s, err)
	}
	d, err := c.Open(ctx, s.ID)
	if err != nil || d.ID != s.ID || string(d.Request) != `{"version":1,"x":2}` || string(d.Result) != `{"feasible":true,"keys":2}` {
		t.Fatalf("Open: %+v, %v", d, err)
	}

	_, err = c.Share(ctx, []byte(`{"version": 3}`))
	var ae *share.APIError
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Code != share.CodeInvalid || len(ae.Fields) != 1 || ae.Fields[0].Path != "version" || share.Unreachable(err) {
		t.Errorf("Share of an invalid request: %v (%+v), want a 422 naming version, not Unreachable", err, ae)
	}
	if _, err = c.Open(ctx, "0123"); !errors.As(err, &ae) || ae.Status != 404 || share.Unreachable(err) {
		t.Errorf("Open of an unknown id: %v, want a 404, not Unreachable", err)
	}

	srv.Close()
	if _, err := c.Share(ctx, []byte(`{"version": 1}`)); err == nil || !share.Unreachable(err) {
		t.Errorf("Share with the server down: %v, want Unreachable", err)
	}
	notOurs := httptest.NewServer(http.NotFoundHandler())
	defer notOurs.Close()
	if _, err := (share.Client{Server: notOurs.URL}).Open(ctx, "ab"); err == nil || !share.Unreachable(err) {
		t.Errorf("Open from a server that is not this API: %v, want Unreachable", err)
	}
}

// A 503 is tried once more.
func TestClientRetries503(t *testing.T) {
	h := share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: sharetest.StubPlanner})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, "Your worker restarted mid-request.", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if s, err := (share.Client{Server: srv.URL}).Share(context.Background(), []byte(`{"version": 1}`)); err != nil || s.ID == "" || n.Load() != 2 {
		t.Errorf("Share after a 503: %+v, %v after %d posts; want the id after 2", s, err, n.Load())
	}
}

func TestLink(t *testing.T) {
	for _, c := range []struct{ page, id, server, want string }{
		{"https://pipeplan.example/", "ab12", "", "https://pipeplan.example/?plan=ab12"},
		{"https://pipeplan.example/app/?embed=1&server=old#r1.xyz", "ab12", "https://plans.example", "https://pipeplan.example/app/?embed=1&plan=ab12&server=https%3A%2F%2Fplans.example"},
		{"http://127.0.0.1:8080/?server=x", "ab12", "", "http://127.0.0.1:8080/?plan=ab12"},
	} {
		if got, err := share.Link(c.page, c.id, c.server); err != nil || got != c.want {
			t.Errorf("Link(%q, %q, %q) = %q, %v; want %q", c.page, c.id, c.server, got, err, c.want)
		}
	}
}
