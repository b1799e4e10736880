package share_test

import (
	"bytes"
	"context"
	"testing"

	"pipeplan/share"
	"pipeplan/share/sharetest"
)

// A shared plan must replay: the canonical request it stores, posted again, is the same
// request (same id, same document), so a link opened months later can be re-planned
// and compared (while core's PlannerVersion is the same).
func TestCoreCanonicalReplays(t *testing.T) {
	fx := sharetest.CoreFixture()
	bodies := [][]byte{fx.Large}
	for i := range 5 {
		bodies = append(bodies, fx.Valid(i))
	}
	for i, body := range bodies {
		p, err := share.CorePlanner(body)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		doc, err := p.Document(context.Background())
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		again, err := share.CorePlanner(p.Canonical)
		if err != nil {
			t.Fatalf("request %d's canonical form: %v", i, err)
		}
		doc2, err := again.Document(context.Background())
		if err != nil || again.ID != p.ID || !bytes.Equal(again.Canonical, p.Canonical) || !bytes.Equal(doc2, doc) {
			t.Errorf("request %d: its canonical form gives id %s (%v), want %s and the same document", i, again.ID, err, p.ID)
		}
	}
}

func TestCoreRefusals(t *testing.T) {
	for _, c := range []struct{ body, field string }{
		{`{"version": 1, "modle": {}}`, "modle"},
		{`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": "four"}}`, "cluster.count"},
		{`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "no-such-gpu", "count": 4}}`, "cluster.device"},
	} {
		w, e := serve(t, share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: share.CorePlanner}), post(c.body))
		if w.Code != 422 || len(e.Fields) == 0 || e.Fields[0].Path != c.field {
			t.Errorf("POST %s: %d %s, want 422 naming %s", c.body, w.Code, w.Body, c.field)
		}
	}
}
