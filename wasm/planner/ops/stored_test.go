package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pipeplan/core/wire"
)

// chainProfile is a native profile of n layers in a chain.
func chainProfile(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name": "chain", "inputs": [{"id": "x", "bytes": 1024}], "layers": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		in := "x"
		if i > 0 {
			in = fmt.Sprintf("h%d", i-1)
		}
		fmt.Fprintf(&b, `{"name": "l%d", "forward_seconds": 0.0001, "backward_seconds": 0.0002, "param_bytes": 1048576, "activation_bytes": 1048576, "inputs": [%q], "outputs": [{"id": "h%d", "bytes": 4096}]}`, i, in, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func hashOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// imported imports data into s as the page's file name and returns the answer.
func imported(t *testing.T, s *Store, name string, data []byte) Imported {
	t.Helper()
	out := s.Import(name, hashOf(data), data, true)
	var im Imported
	if err := json.Unmarshal([]byte(out), &im); err != nil || strings.Contains(out, `"error"`) {
		t.Fatalf("import: %v: %s", err, out)
	}
	return im
}

// TestImportStoresLargeModels: a model file over InlineBytes comes back as a reference
// of a few dozen bytes, which a request carries in place of the model and which plans as
// the whole model does; a small one stays in the request.
func TestImportStoresLargeModels(t *testing.T) {
	s := &Store{}
	big := chainProfile(2000)
	im := imported(t, s, "chain-2000.json", big)
	if !im.Stored || !im.Kept || len(im.Model.Document) > 200 {
		t.Fatalf("a %d-byte file: stored %v, a document of %d bytes: %s", len(big), im.Stored, len(im.Model.Document), im.Model.Document)
	}
	var ref Ref
	if err := json.Unmarshal(im.Model.Document, &ref); err != nil || ref.Stored != "sha256-"+hashOf(big) || ref.Name != "chain-2000.json" || ref.Bytes != int64(len(big)) {
		t.Fatalf("the reference %s: %v", im.Model.Document, err)
	}
	req := func(doc []byte) string {
		return fmt.Sprintf(`{"version":1,"model":{"document":%s},"cluster":{"device":"A100-80GB","count":8}}`, doc)
	}
	resolved, refs, err := s.Resolve(req(im.Model.Document))
	if err != nil || len(refs) != 1 {
		t.Fatal(err, refs)
	}
	whole, _ := wire.ModelFromFile(big, MaxFileBytes)
	if resolved != req(whole.Document) {
		t.Errorf("the resolved request is not the request with the file's document")
	}
	small := imported(t, s, "chain-3.json", chainProfile(3))
	if small.Stored || !strings.Contains(string(small.Model.Document), `"l2"`) {
		t.Errorf("a small file: stored %v, %s", small.Stored, small.Model.Document)
	}
}

// TestStoredModelsPlan: ops.Do plans a request whose model is a reference as it plans
// the whole model, in each operation that reads a request (plan, view, and a search
// query's candidate, which answers with the reference again), loads a reference it does
// not hold through Load, and says so when nothing holds it.
func TestStoredModelsPlan(t *testing.T) {
	defer func(m *Store) { Models = m }(Models)
	Models = &Store{}
	big := chainProfile(1500)
	im := imported(t, Models, "chain.json", big)
	whole, _ := wire.ModelFromFile(big, MaxFileBytes)
	req := func(doc []byte) string {
		return fmt.Sprintf(`{"version":1,"model":{"document":%s},"cluster":{"device":"A100-80GB","count":6}}`, doc)
	}
	ctx := context.Background()
	byRef, _ := Do(ctx, "plan", []string{req(im.Model.Document)}, nil, nil)
	byDoc, _ := Do(ctx, "plan", []string{req(whole.Document)}, nil, nil)
	if byRef != byDoc || !strings.Contains(byRef, `"boundaries"`) {
		t.Errorf("planned by reference:\n%.300s\nby the document:\n%.300s", byRef, byDoc)
	}
	// A search candidate's request holds the reference, as the page's request does.
	q := fmt.Sprintf(`{"request":%s,"max_devices":6}`, req(im.Model.Document))
	cand, _ := Do(ctx, "candidate", []string{q, `{"stages":3,"replicas":2,"tensor_parallel":1,"schedule":"1f1b","recompute":"none","microbatches":4,"microbatch_size":1}`}, nil, nil)
	if !strings.Contains(cand, `"stored": "sha256-`+hashOf(big)) || strings.Contains(cand, `"l1000"`) {
		t.Errorf("the candidate's request: %.400s", cand)
	}
	expanded, _ := Do(ctx, "expand", []string{req(im.Model.Document)}, nil, nil)
	if expanded != req(whole.Document) {
		t.Errorf("expand: %.200s", expanded)
	}

	// Another worker (or a reload): nothing in memory; the browser's storage has it.
	Models = &Store{}
	loads := 0
	Models.Load = func(hash string) ([]byte, bool, error) {
		loads++
		if hash == "sha256-"+hashOf(big) {
			return big, true, nil
		}
		return nil, false, nil
	}
	if got, _ := Do(ctx, "plan", []string{req(im.Model.Document)}, nil, nil); got != byDoc {
		t.Errorf("planned from storage:\n%.300s", got)
	}
	Do(ctx, "plan", []string{req(im.Model.Document)}, nil, nil)
	if loads != 1 {
		t.Errorf("%d loads from storage for two plans, want 1", loads)
	}
	// A link from another browser: a model this one does not hold.
	other := strings.Replace(string(im.Model.Document), hashOf(big)[:8], "00000000", 1)
	out, _ := Do(ctx, "view", []string{req([]byte(other)), ""}, nil, nil)
	e := errorObject(t, out)
	if !strings.Contains(e.Error, "chain.json") || !strings.Contains(e.Error, "not in this one") || len(e.Fields) != 1 || e.Fields[0].Path != "model.document" {
		t.Errorf("a model not stored here: %s", out)
	}
}

func errorObject(t *testing.T, out string) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error == "" {
		t.Fatalf("not an error object: %.300s", out)
	}
	return e
}

// TestViews: view answers a spec.View and holds the result, whose other windows and
// whole JSON come by its handle; a handle no longer held is an error that says so.
func TestViews(t *testing.T) {
	defer func(v *views) { Views = v }(Views)
	Views = &views{}
	ctx := context.Background()
	req := fmt.Sprintf(`{"version":1,"model":{"document":%s},"cluster":{"device":"A100-80GB","count":300},"schedule":{"microbatches":1},"layers":true,"events":true}`, chainProfile(3000))
	out, _ := Do(ctx, "view", []string{req, `{"stage_start":120,"layer_start":2000}`}, nil, nil)
	var v wire.View
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Result == nil || v.Result.Plan == nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	whole, _ := Do(ctx, "plan", []string{req}, nil, nil)
	if v.Stages != 300 || v.StageStart != 120 || v.LayerStart != 2000 || v.Result.Model.LayerNames[0] != "l2000" || len(out) > len(whole)/4 {
		t.Errorf("the view: %d stages from %d, layers from %d (%s), %d bytes of %d", v.Stages, v.StageStart, v.LayerStart, v.Result.Model.LayerNames[0], len(out), len(whole))
	}
	h := fmt.Sprint(v.Handle)
	out, _ = Do(ctx, "window", []string{h, `{"stage_start":250}`}, nil, nil)
	var w wire.View
	if err := json.Unmarshal([]byte(out), &w); err != nil || w.StageStart != 200 || w.Result.Plan.Stages[0].FirstName != fmt.Sprintf("l%d", 10*200) || w.Handle != v.Handle {
		t.Errorf("the window from stage 250: %v, from %d: %.200s", err, w.StageStart, out)
	}
	var a, b any
	res, _ := Do(ctx, "result", []string{h}, nil, nil)
	json.Unmarshal([]byte(res), &a)
	json.Unmarshal([]byte(whole), &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the held result differs from plan's")
	}
	for range keepViews {
		ex, _ := json.Marshal(exampleRequest())
		if out, _ := Do(ctx, "view", []string{string(ex), ""}, nil, nil); !strings.HasPrefix(out, `{"result"`) {
			t.Fatalf("the example's view: %.300s", out)
		}
	}
	out, _ = Do(ctx, "window", []string{h, ""}, nil, nil)
	if e := errorObject(t, out); !strings.Contains(e.Error, errGone) {
		t.Errorf("a result no longer held: %s", out)
	}
}
