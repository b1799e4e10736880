package ui

import (
	"strings"
	"testing"

	"pipeplan/share"
)

// Share through a share server (the real handler over a memory store): the link is
// ?plan=ID, and opening it shows the stored plan without replanning.
func TestShareThroughServer(t *testing.T) {
	store := &share.MemStore{}
	h := &fakeHost{server: share.NewHandler(share.Config{Store: store, Plan: share.CorePlanner})}
	a := NewApp(nil, h, local)
	a.SetServer("https://plans.example.org/")
	if a.Server != "https://plans.example.org" || h.saved != a.Server {
		t.Fatalf("server setting: %q, saved %q", a.Server, h.saved)
	}
	a.SetCluster("per_node", "3")
	want := a.Summary()
	a.Share()
	if a.NoticeBad || store.Len() != 1 || !strings.Contains(h.copied, "?plan=") || a.ShareLink(false) != h.copied {
		t.Fatalf("share: %q (bad %v), %d stored, copied %q, link %q", a.Notice, a.NoticeBad, store.Len(), h.copied, a.ShareLink(false))
	}
	id := strings.TrimPrefix(strings.Split(h.copied, "&")[0], "https://example.org/pp/?plan=")
	// A fresh page opens it: the same request and result, not replanned.
	h2 := &fakeHost{server: h.server}
	b := NewApp(nil, h2, local)
	b.Server = "https://plans.example.org"
	replans := b.Replans
	b.OpenPlan(id, "your last request")
	if b.NoticeBad || b.Opened != id || b.Replans != replans || b.Summary() != want || b.Req.Cluster.Count != 3 {
		t.Fatalf("open: %q, opened %q, replans %d->%d, %+v, want %+v", b.Notice, b.Opened, replans, b.Replans, b.Summary(), want)
	}
	if !strings.HasPrefix(b.Status(), "Stored plan "+id[:12]) {
		t.Errorf("status %q", b.Status())
	}
	if len(h2.kept) == 0 {
		t.Error("the opened plan's request is not kept in the URL (the fragment fallback)")
	}
	// An edit replans: the page no longer shows the stored plan, and the link is the
	// new request's.
	b.SetCluster("per_node", "2")
	if b.Opened != "" || strings.Contains(b.ShareLink(false), "?plan=") {
		t.Errorf("after an edit: opened %q, link %q", b.Opened, b.ShareLink(false))
	}
	// An unknown plan says so.
	b.OpenPlan(strings.Repeat("0", 64), "your last request")
	if !b.NoticeBad || !strings.Contains(b.Notice, "does not know plan 000000000000") {
		t.Errorf("unknown plan: %q", b.Notice)
	}
	// A request the server refuses names the field.
	b.Req.Cluster.Device = "nope"
	b.Share()
	if !b.NoticeBad || !strings.Contains(b.Notice, "refused") || !strings.Contains(b.Notice, "cluster.device") {
		t.Errorf("refused: %q", b.Notice)
	}
}

// With the server down the link holds the request in its fragment, and the page says so;
// without a server, Share never talks to one.
func TestShareServerDown(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	a.Share()
	if a.NoticeBad || !strings.Contains(h.copied, "#r1.") {
		t.Fatalf("no server: %q, copied %q", a.Notice, h.copied)
	}
	a.SetServer("http://127.0.0.1:9")
	a.Share()
	if !a.NoticeBad || !strings.Contains(a.Notice, "could not be reached") || !strings.Contains(h.copied, "#r1.") || a.ShareLink(false) != h.copied {
		t.Fatalf("server down: %q, copied %q", a.Notice, h.copied)
	}
	a.OpenPlan(strings.Repeat("a", 64), "the link's #fragment")
	if !a.NoticeBad || !strings.Contains(a.Notice, "could not be reached") || !strings.Contains(a.Notice, "showing the link's #fragment") {
		t.Errorf("open with the server down: %q", a.Notice)
	}
	a.SetServer("ftp://x")
	if !a.NoticeBad || a.Server != "http://127.0.0.1:9" {
		t.Errorf("a bad server address was taken: %q", a.Server)
	}
}
