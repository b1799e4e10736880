package request

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"pipeplan/core/internal/jsonscan"
	"pipeplan/core/wire"
)

// Canonical returns the request's canonical encoding: normalized (every default applied),
// compact JSON with the fields in a fixed order and the keys of embedded documents sorted.
// Two requests that mean the same plan give the same bytes.
func Canonical(r *wire.Request) ([]byte, error) {
	n, err := Normalize(r)
	if err != nil {
		return nil, err
	}
	return canonical(n)
}

// canonical encodes an already normalized request.
func canonical(r *wire.Request) ([]byte, error) {
	parts, _, err := canonicalParts(r, nil)
	if err != nil {
		return nil, err
	}
	return bytes.Join(parts, nil), nil
}

// canonicalParts returns the request's canonical encoding in pieces, whose concatenation
// is the encoding: the request without its documents, as encoding/json writes it, and
// each document's canonical form where it belongs. A profile of a million layers is
// hundreds of megabytes: encoding/json would check, compact and copy it again, and the
// id needs only a hash of the pieces.
//
// When the model document is hashed (the same bytes in memory: a request's copies share
// them), it is not encoded: its piece is nil and skipped is its index; otherwise skipped
// is -1.
func canonicalParts(r *wire.Request, hashed json.RawMessage) (parts [][]byte, skipped int, err error) {
	c := *r
	if c.Parallelism.Tensor == 1 {
		// Tensor parallelism came after the first requests: its default is left out, so
		// that they keep their ids.
		c.Parallelism.Tensor = 0
	}
	// Likewise sharding and context parallelism: their defaults are left out, and
	// sharding zero1 is written as the field that asked for it first (zero: 1).
	if c.Parallelism.Context == 1 {
		c.Parallelism.Context = 0
	}
	switch c.Parallelism.Sharding {
	case "none":
		c.Parallelism.Sharding = ""
	case "zero1":
		c.Parallelism.Sharding, c.Parallelism.ZeRO = "", 1
	}
	// Each document is encoded on its own and stands in the request as a marker: a
	// member that encoding/json can only write where the field is (a quote in a string
	// is escaped), found once and replaced by the document.
	type doc struct {
		marker, text []byte
		at, value    int // where the marker is in the encoding, and its value in the marker
		skip         bool
	}
	var docs []*doc
	put := func(field *json.RawMessage, key string, skip bool) error {
		var text json.RawMessage
		if !skip {
			var err error
			if text, err = canonicalJSON(*field); err != nil || text == nil {
				*field = text
				return err
			}
		}
		d := &doc{marker: fmt.Appendf(nil, "%q:%d", key, len(docs)+1), text: text, value: len(key) + 3, skip: skip}
		docs = append(docs, d)
		*field = d.marker[d.value:]
		return nil
	}
	if err := put(&c.Model.Document, "document", sameBytes(c.Model.Document, hashed)); err != nil {
		return nil, -1, err
	}
	if err := put(&c.Cluster.Document, "document", false); err != nil {
		return nil, -1, err
	}
	if a := c.Model.Architecture; a != nil {
		ac := *a
		if err := put(&ac.Config, "config", false); err != nil {
			return nil, -1, err
		}
		c.Model.Architecture = &ac
	}
	skel, err := json.Marshal(&c)
	if err != nil {
		return nil, -1, err
	}
	for _, d := range docs {
		if d.at = bytes.Index(skel, d.marker); d.at < 0 || bytes.Count(skel, d.marker) != 1 {
			return nil, -1, fmt.Errorf("request: the canonical encoding lost a document's place (%s)", d.marker)
		}
	}
	slices.SortFunc(docs, func(x, y *doc) int { return x.at - y.at })
	parts = make([][]byte, 0, 2*len(docs)+1)
	skipped, from := -1, 0
	for _, d := range docs {
		parts = append(parts, skel[from:d.at+d.value])
		if d.skip {
			skipped = len(parts)
		}
		parts = append(parts, d.text)
		from = d.at + len(d.marker)
	}
	return append(parts, skel[from:]), skipped, nil
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool { return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0] }

// canonicalJSON re-encodes a JSON value compactly with object keys sorted (numbers keep
// their text). Empty stays empty.
//
// A document is usually an object or an array of many small objects: it is re-encoded in
// one pass over its bytes (sortedJSON), never as a tree of maps, which made a profile of
// 100,000 layers cost a second and its size several times over. The bytes are those
// encoding/json gives for the value decoded into an interface{} with UseNumber
// (canonicalTree, which the tests compare against): keys sorted bytewise, the last of a
// duplicated key kept, strings escaped as encoding/json escapes them.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if listable(raw) {
		out, _ := sortedJSON(make([]byte, 0, len(raw)), raw, 0) // about raw's size
		return out, nil
	}
	return canonicalTree(raw)
}

// listable reports whether the canonicalizer encodes raw: valid JSON that is not a string
// (a string may hold a file's text, which canonicalTree reads).
func listable(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] != '"' && json.Valid(raw)
}

// writeCanonicalJSON writes canonicalJSON(raw) to w, as it is made when raw is JSON. It
// returns errStopped, having written part of it, once stop is true.
func writeCanonicalJSON(w io.Writer, raw json.RawMessage, stop *atomic.Bool) (err error) {
	if listable(raw) {
		defer func() {
			if r := recover(); r != nil {
				if r != errStopped {
					panic(r)
				}
				err = errStopped
			}
		}()
		c := &canonicalizer{data: raw, out: make([]byte, 0, 2<<16), w: w, stop: stop}
		c.value(0)
		_, err := w.Write(c.out)
		return err
	}
	text, err := canonicalJSON(raw)
	if err == nil {
		_, err = w.Write(text)
	}
	return err
}

// canonicalTree is canonicalJSON through a decoded tree: for text (a document given as the
// text of a JSON object gets the object's form) and for invalid JSON (its error).
func canonicalTree(raw json.RawMessage) (json.RawMessage, error) {
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

// sortedJSON appends the canonical form of the JSON value at data[pos:] (valid JSON) to
// out, and returns it with the position after the value.
func sortedJSON(out, data []byte, pos int) ([]byte, int) {
	c := &canonicalizer{data: data, out: out}
	pos = c.value(pos)
	return c.out, pos
}

// canonicalizer writes the canonical form of valid JSON. An object's members are listed
// from the input (each value skipped over to find the next key), put in key order, and
// their values written in that order: nothing written is moved again, so values are
// never copied twice and the output could go to a hash as it is made.
type canonicalizer struct {
	data    []byte
	out     []byte
	members []member  // a stack: each open object's members
	w       io.Writer // where out goes as it fills, when not nil
	depth   int       // objects open
	// stop, when set and true, ends the work: the next array element or object member
	// panics with errStopped.
	stop *atomic.Bool
}

// maxListedDepth is the deepest object whose members are listed from the input: each
// level skips over all that is inside it, so deeper objects (hostile input) are encoded
// through a decoded tree (canonicalTree), in time linear in their size.
const maxListedDepth = 32

// errStopped is what a stopped canonicalizer panics with.
var errStopped = errors.New("request: canonical encoding stopped")

// check panics with errStopped once the canonicalizer is stopped.
func (c *canonicalizer) check() {
	if c.stop != nil && c.stop.Load() {
		panic(errStopped)
	}
}

// flush gives out to w once it holds enough.
func (c *canonicalizer) flush() {
	if c.w != nil && len(c.out) >= 1<<16 {
		c.w.Write(c.out)
		c.out = c.out[:0]
	}
}

// member is an object's member: its key's value, and where its value starts in the input.
type member struct {
	key   []byte
	start int
}

// value appends the canonical form of the value at data[pos:] and returns the position
// after it.
func (c *canonicalizer) value(pos int) int {
	data := c.data
	pos = jsonscan.Space(data, pos)
	switch data[pos] {
	case '{':
		return c.object(pos)
	case '[':
		c.out = append(c.out, '[')
		pos = jsonscan.Space(data, pos+1)
		if data[pos] == ']' {
			c.out = append(c.out, ']')
			return pos + 1
		}
		for {
			c.check()
			pos = jsonscan.Space(data, c.value(pos))
			c.flush()
			if data[pos] == ']' {
				c.out = append(c.out, ']')
				return pos + 1
			}
			c.out = append(c.out, ',')
			pos++ // the comma
		}
	case '"':
		end := jsonscan.StringEnd(data, pos)
		c.out = appendString(c.out, data[pos+1:end-1])
		return end
	default: // a number or a literal: its text, up to a delimiter
		end := jsonscan.ValueEnd(data, pos)
		c.out = append(c.out, data[pos:end]...)
		return end
	}
}

// object appends the canonical form of the object at data[pos] and returns the position
// after it.
func (c *canonicalizer) object(pos int) int {
	data := c.data
	if c.depth == maxListedDepth {
		end := jsonscan.ValueEnd(data, pos)
		tree, _ := canonicalTree(data[pos:end]) // valid: the whole document is
		c.out = append(c.out, tree...)
		return end
	}
	c.depth++
	mark := len(c.members)
	pos = jsonscan.Space(data, pos+1)
	for data[pos] != '}' {
		c.check()
		end := jsonscan.StringEnd(data, pos)
		key := decodeString(data[pos+1 : end-1])
		start := jsonscan.Space(data, jsonscan.Space(data, end)+1) // after the colon
		c.members = append(c.members, member{key, start})
		if pos = jsonscan.Space(data, jsonscan.ValueEnd(data, start)); data[pos] == ',' {
			pos = jsonscan.Space(data, pos+1)
		}
	}
	ms := c.members[mark:]
	// The last of a key given twice wins, as in a map; then bytewise order.
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	c.out = append(c.out, '{')
	first := true
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k+1].key, m.key) {
			continue
		}
		if !first {
			c.out = append(c.out, ',')
		}
		first = false
		c.out = append(appendValue(c.out, m.key), ':') // the key is decoded
		c.value(m.start)                               // appends to c.members beyond ms, and takes it back
	}
	c.members = c.members[:mark]
	c.depth--
	c.out = append(c.out, '}')
	return pos + 1
}

// plainString reports whether a string's JSON body (between its quotes) is already what
// encoding/json writes for its value: no escapes or quotes, no HTML characters, no
// control characters, valid UTF-8 without U+2028 or U+2029. The body may also be a
// decoded value: then it tells whether the value needs escaping.
func plainString(body []byte) bool {
	ascii := true
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(body) && !bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
}

// decodeString returns the value of a JSON string's body: the body itself when it is
// plain.
func decodeString(body []byte) []byte {
	if plainString(body) {
		return body
	}
	var s string
	q := make([]byte, 0, len(body)+2)
	q = append(append(append(q, '"'), body...), '"')
	_ = json.Unmarshal(q, &s) // valid: the whole document is
	return []byte(s)
}

// appendString appends the JSON string that encoding/json writes for the value of a
// JSON string's body.
func appendString(out, body []byte) []byte { return appendValue(out, decodeString(body)) }

// appendValue appends the JSON string that encoding/json writes for the value v.
func appendValue(out, v []byte) []byte {
	if plainString(v) {
		return append(append(append(out, '"'), v...), '"')
	}
	b, _ := json.Marshal(string(v))
	return append(out, b...)
}

// ID returns the request's content id: the SHA-256 of its canonical encoding and the
// planner's version, in hex (64 characters). The same request gives the same id, and a
// planner that would answer differently gives another.
func ID(r *wire.Request) (string, error) {
	b, err := Canonical(r)
	if err != nil {
		return "", err
	}
	return contentID(b), nil
}

func contentID(canonical ...[]byte) string {
	h := sha256.New()
	for _, b := range canonical {
		h.Write(b)
	}
	return idSum(h)
}

// idSum ends an id: the hash of a request's canonical encoding, given so far to h.
func idSum(h hash.Hash) string {
	h.Write([]byte{0})
	h.Write([]byte(PlannerVersion))
	return hex.EncodeToString(h.Sum(nil))
}
