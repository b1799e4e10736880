package request

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Canonical returns the request's canonical encoding: normalized (every default applied),
// compact JSON with the fields in a fixed order and the keys of embedded documents sorted.
// Two requests that mean the same plan give the same bytes.
func Canonical(r *Request) ([]byte, error) {
	n, err := Normalize(r)
	if err != nil {
		return nil, err
	}
	return canonical(n)
}

// canonical encodes an already normalized request.
func canonical(r *Request) ([]byte, error) {
	c := *r
	if c.Parallelism.Tensor == 1 {
		// Tensor parallelism came after the first requests: its default is left out, so
		// that they keep their ids.
		c.Parallelism.Tensor = 0
	}
	var err error
	if c.Model.Document, err = canonicalJSON(c.Model.Document); err != nil {
		return nil, err
	}
	if c.Cluster.Document, err = canonicalJSON(c.Cluster.Document); err != nil {
		return nil, err
	}
	if a := c.Model.Architecture; a != nil {
		ac := *a
		if ac.Config, err = canonicalJSON(ac.Config); err != nil {
			return nil, err
		}
		c.Model.Architecture = &ac
	}
	return json.Marshal(&c)
}

// canonicalJSON re-encodes a JSON value compactly with object keys sorted (numbers keep
// their text). Empty stays empty.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// A document given as the text of a JSON object means what the object means: it gets
	// the object's canonical form (and id). Other text (a PipeDream graph.txt) stays text.
	if text, ok := v.(string); ok {
		if t := strings.TrimSpace(strings.TrimPrefix(text, "\xef\xbb\xbf")); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			return canonicalJSON(json.RawMessage(t))
		}
	}
	return json.Marshal(v)
}

// ID returns the request's content id: the SHA-256 of its canonical encoding and the
// planner's version, in hex (64 characters). The same request gives the same id, and a
// planner that would answer differently gives another.
func ID(r *Request) (string, error) {
	b, err := Canonical(r)
	if err != nil {
		return "", err
	}
	return contentID(b), nil
}

func contentID(canonical []byte) string {
	h := sha256.New()
	h.Write(canonical)
	h.Write([]byte{0})
	h.Write([]byte(PlannerVersion))
	return hex.EncodeToString(h.Sum(nil))
}
