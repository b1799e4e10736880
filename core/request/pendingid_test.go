package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"pipeplan/core/wire"
	"strings"
	"sync/atomic"
	"testing"
)

// bigProfile is a native profile of n layers, its keys out of order, written with spaces.
func bigProfile(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{ "name": "big", "inputs": [{"id": "in", "bytes": 1024}], "layers": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		in := "in"
		if i > 0 {
			in = fmt.Sprintf("t%d", i-1)
		}
		fmt.Fprintf(&b, `{"name": "layer%d", "forward_seconds": %g, "backward_seconds": 2e-3, "param_bytes": 1048576, "inputs": [%q], "outputs": [{"id": "t%d", "bytes": 4096}], "activation_bytes": 65536}`, i, 1e-3+float64(i%7)*1e-5, in, i)
	}
	b.WriteString("] }")
	return json.RawMessage(b.String())
}

// TestRunHashesBigDocumentsAside: a model document of over concurrentJSONBytes is hashed
// while the request is prepared, behind the prefix every such request's encoding has,
// and the result's id is the id of the canonical bytes, as for a small one. A request
// whose encoding has more before the document (an example given too, which is an error,
// or a prefix that does not match) falls back to encoding it in place.
func TestRunHashesBigDocumentsAside(t *testing.T) {
	doc := bigProfile(6000)
	if len(doc) < concurrentJSONBytes {
		t.Fatalf("the profile is %d bytes, under %d", len(doc), concurrentJSONBytes)
	}
	r := &wire.Request{Model: wire.ModelSpec{Document: doc, Name: "named"}, Cluster: wire.ClusterSpec{Device: "a100-80gb", Count: 4},
		Schedule: wire.Schedule{Microbatches: 8}}
	c, err := Canonical(r)
	if err != nil {
		t.Fatal(err)
	}
	p := startID(doc)
	if !bytes.HasPrefix(c, p.prefix) {
		t.Fatalf("the canonical encoding starts %q, not with the pending prefix %q", c[:80], p.prefix)
	}
	res := run(t, r)
	if want := contentID(c); res.ID != want {
		t.Errorf("Run's id %s, want the canonical bytes' %s", res.ID, want)
	}
	n, err := Normalize(r)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := requestID(n, p); err != nil || id != res.ID {
		t.Errorf("requestID with the pending hash: %s, %v; want %s", id, err, res.ID)
	}
	p.prefix = []byte(`{"version":1,"model":{"example":"x","document":`) // as if normalization had moved it
	if id, err := requestID(n, p); err != nil || id != res.ID {
		t.Errorf("requestID with a prefix that does not match: %s, %v; want %s", id, err, res.ID)
	}
}

// TestCanonicalDeepAndStopped: objects nested deeper than maxListedDepth are encoded
// through the tree, to the same bytes; a stopped encoding ends with errStopped; and
// abandon returns once the hashing has.
func TestCanonicalDeepAndStopped(t *testing.T) {
	depth := 3 * maxListedDepth
	doc := json.RawMessage(strings.Repeat(`{"z": 1, "b": [2, `, depth) + `{"k": "v", "a": null}` + strings.Repeat("]}", depth))
	got, err := canonicalJSON(doc)
	want, werr := canonicalTree(doc)
	if err != nil || werr != nil || !bytes.Equal(got, want) {
		t.Errorf("nested %d deep: %v %v\n%.200s\nwant\n%.200s", depth, err, werr, got, want)
	}
	var stop atomic.Bool
	stop.Store(true)
	var sink bytes.Buffer
	if err := writeCanonicalJSON(&sink, bigProfile(100), &stop); err != errStopped {
		t.Errorf("stopped: %v, want errStopped", err)
	}
	p := startID(bigProfile(20000))
	p.abandon()
	select {
	case <-p.done:
	default:
		t.Error("abandon returned while the hashing went on")
	}
	if p.err != nil && p.err != errStopped {
		t.Errorf("abandoned: %v", p.err)
	}
}
