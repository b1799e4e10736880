package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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
	// Another model for the request (an imported file, request.WithModel): the answer's
	// request holds the file's reference, and core's rule drops what the profile refuses.
	var ref Ref
	json.Unmarshal(im.Model.Document, &ref)
	arch := `{"version":1,"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"A100-80GB","count":6},"parallelism":{"tensor":2}}`
	withModel, _ := Do(ctx, "model", []string{arch, `{"document":` + string(im.Model.Document) + `}`}, nil, nil)
	var w struct {
		Request *wire.Request
		Dropped []struct{ Path string }
	}
	var held Ref
	if err := json.Unmarshal([]byte(withModel), &w); err != nil || w.Request == nil || json.Unmarshal(w.Request.Model.Document, &held) != nil || held != ref ||
		w.Request.Parallelism.Tensor != 0 || !slices.ContainsFunc(w.Dropped, func(d struct{ Path string }) bool { return d.Path == "parallelism.tensor" }) {
		t.Errorf("the file for the architecture: %v: %.600s", err, withModel)
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
	if err := json.Unmarshal([]byte(out), &w); err != nil || w.StageStart != 250 || len(w.Result.Plan.Stages) != wire.ViewStages || w.Result.Plan.Stages[0].FirstName != fmt.Sprintf("l%d", 10*250) || w.Handle != v.Handle {
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

// TestEvict: the files kept are the most recently used ones within both bounds, newest
// first, and the first file over a bound goes with every older one; the file in use stays
// whatever its size and age.
func TestEvict(t *testing.T) {
	const MiB = 1 << 20
	files := []StoredFile{
		{Key: "sha256-a", Bytes: 300 * MiB, Used: 1000},
		{Key: "sha256-b", Bytes: 10 * MiB, Used: 4000},
		{Key: "sha256-c", Bytes: 200 * MiB, Used: 3000},
		{Key: "sha256-d", Bytes: 1 * MiB, Used: 2000},
		{Key: "sha256-e", Bytes: 5 * MiB, Used: 0}, // kept before files had times
	}
	for _, c := range []struct {
		name     string
		inUse    string
		maxFiles int
		maxBytes int64
		want     []string
	}{
		{"within both bounds", "sha256-b", 5, 1024 * MiB, nil},
		{"by count: the two oldest go", "sha256-b", 3, 1024 * MiB, []string{"sha256-a", "sha256-e"}},
		{"by bytes: c overflows, and the older go with it", "sha256-b", 5, 100 * MiB, []string{"sha256-c", "sha256-d", "sha256-a", "sha256-e"}},
		{"by bytes, exactly full: a fits", "sha256-b", 5, 511 * MiB, []string{"sha256-e"}},
		{"the file in use counts first, whatever its age", "sha256-e", 2, 1024 * MiB, []string{"sha256-c", "sha256-d", "sha256-a"}},
		{"the file in use stays over the byte bound", "sha256-a", 5, 100 * MiB, []string{"sha256-b", "sha256-c", "sha256-d", "sha256-e"}},
		{"one file: only the file in use", "sha256-d", 1, 1024 * MiB, []string{"sha256-b", "sha256-c", "sha256-a", "sha256-e"}},
		{"no file in use is kept by its key alone", "", 1, 1024 * MiB, []string{"sha256-c", "sha256-d", "sha256-a", "sha256-e"}},
	} {
		got := Evict(files, c.inUse, c.maxFiles, c.maxBytes)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: evicts %v, want %v", c.name, got, c.want)
		}
		// The list's order does not matter.
		rev := slices.Clone(files)
		slices.Reverse(rev)
		if again := Evict(rev, c.inUse, c.maxFiles, c.maxBytes); fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("%s: reversed, evicts %v, not %v", c.name, again, got)
		}
	}
	// Equal times: by key.
	tied := []StoredFile{{Key: "sha256-y", Used: 5}, {Key: "sha256-x", Used: 5}, {Key: "sha256-z", Used: 5}}
	if got := Evict(tied, "", 2, 1<<40); fmt.Sprint(got) != "[sha256-z]" {
		t.Errorf("ties: evicts %v, want [sha256-z]", got)
	}
}

// fakeStorage is the browser's storage of model files as Store sees it, in memory, with
// a clock that ticks at each use.
type fakeStorage struct {
	files map[string]StoredFile
	data  map[string][]byte
	now   float64
}

func (f *fakeStorage) attach(s *Store) {
	f.files, f.data = map[string]StoredFile{}, map[string][]byte{}
	s.Load = func(key string) ([]byte, bool, error) {
		if _, ok := f.files[key]; !ok {
			return nil, false, nil
		}
		return f.data[key], true, nil
	}
	s.Files = func() ([]StoredFile, error) {
		var out []StoredFile
		for _, x := range f.files {
			out = append(out, x)
		}
		return out, nil
	}
	s.Delete = func(keys []string) error {
		for _, k := range keys {
			delete(f.files, k)
		}
		return nil
	}
	s.Used = func(key string) {
		if x, ok := f.files[key]; ok {
			f.now++
			x.Used = f.now
			f.files[key] = x
		}
	}
}

// put is worker.js's pipeplanReadFile: the file goes to storage as used now.
func (f *fakeStorage) put(data []byte) {
	f.now++
	key := "sha256-" + hashOf(data)
	f.files[key] = StoredFile{Key: key, Bytes: int64(len(data)), Used: f.now}
	f.data[key] = data
}

// TestStoreTrim: imports past KeepFiles leave the KeepFiles most recently used files in
// storage, the one just imported among them; a model the page went back to (a plan of
// its reference) counts as used, so the next import evicts another.
func TestStoreTrim(t *testing.T) {
	s := &Store{}
	var f fakeStorage
	f.attach(s)
	var data [][]byte
	for i := range KeepFiles + 3 {
		d := chainProfile(100 + i)
		data = append(data, d)
		f.put(d)
		imported(t, s, fmt.Sprintf("chain-%d.json", 100+i), d)
		if want := min(i+1, KeepFiles); len(f.files) != want {
			t.Fatalf("after %d imports, storage holds %d files, want %d", i+1, len(f.files), want)
		}
		if _, ok := f.files["sha256-"+hashOf(d)]; !ok {
			t.Fatalf("import %d: the file just imported was evicted", i)
		}
	}
	// The oldest three went.
	for i, d := range data {
		_, ok := f.files["sha256-"+hashOf(d)]
		if ok != (i >= 3) {
			t.Errorf("file %d: in storage %v, want %v", i, ok, i >= 3)
		}
	}
	// Back to file 3 (the oldest left): resolving its reference (as a plan does) marks it
	// used.
	ref, _ := json.Marshal(Ref{Stored: "sha256-" + hashOf(data[3]), Name: "chain-103.json", Bytes: int64(len(data[3]))})
	req := `{"version": 1, "model": {"document": ` + string(ref) + `}, "cluster": {"device": "a100-80gb", "count": 2}}`
	if _, refs, err := s.Resolve(req); err != nil || len(refs) != 1 {
		t.Fatalf("resolving file 3's reference: %v, %d references", err, len(refs))
	}
	d := chainProfile(500)
	f.put(d)
	imported(t, s, "chain-500.json", d)
	if _, ok := f.files["sha256-"+hashOf(data[3])]; !ok {
		t.Errorf("the file the page went back to was evicted")
	}
	if _, ok := f.files["sha256-"+hashOf(data[4])]; ok {
		t.Errorf("file 4, the least recently used, is still in storage")
	}
}
