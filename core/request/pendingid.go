package request

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"hash"
	"pipeplan/core/wire"
	"strconv"
	"sync/atomic"
)

// concurrentJSONBytes is the size from which Run hashes the model document while it
// prepares the request.
const concurrentJSONBytes = 1 << 20

// pendingID is a request's id being made from its model document alone, on another core
// where there is one: the document is most of the canonical encoding (seconds of work at
// a million layers), and it needs nothing that preparing the request works out.
type pendingID struct {
	raw    json.RawMessage // the model document
	prefix []byte          // what the canonical encoding holds before it
	done   chan struct{}
	stop   atomic.Bool // set: the id is not wanted
	h      hash.Hash   // the prefix and the document, hashed
	err    error
}

// abandon stops the hashing if it is still running, and returns once it has: the
// document is the caller's, and is not read after Run returns.
func (p *pendingID) abandon() {
	if p != nil {
		p.stop.Store(true)
		<-p.done
	}
}

// startID starts hashing raw, the model document of a request, behind the prefix that
// the canonical encoding of a request with a model document has.
func startID(raw json.RawMessage) *pendingID {
	p := &pendingID{raw: raw, done: make(chan struct{}),
		prefix: []byte(`{"version":` + strconv.Itoa(wire.Version) + `,"model":{"document":`)}
	go func() {
		defer close(p.done)
		h := sha256.New()
		h.Write(p.prefix)
		p.err = writeCanonicalJSON(h, raw, &p.stop)
		p.h = h
	}()
	return p
}

// requestID returns the content id of a normalized request. pending, which may be nil,
// is its model document being hashed: it is used where the encoding before the
// document is the prefix it assumed.
func requestID(r *wire.Request, pending *pendingID) (string, error) {
	var hashed json.RawMessage
	if pending != nil {
		hashed = pending.raw
	}
	parts, at, err := canonicalParts(r, hashed)
	if err != nil {
		return "", err
	}
	if at < 0 {
		return contentID(parts...), nil
	}
	if !bytes.Equal(bytes.Join(parts[:at], nil), pending.prefix) {
		if parts[at], err = canonicalJSON(r.Model.Document); err != nil {
			return "", err
		}
		return contentID(parts...), nil
	}
	<-pending.done
	if pending.err != nil {
		return "", pending.err
	}
	for _, b := range parts[at+1:] {
		pending.h.Write(b)
	}
	return idSum(pending.h), nil
}
