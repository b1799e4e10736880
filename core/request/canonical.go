package request

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
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
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) > 0 && t[0] != '"' && json.Valid(raw) {
		out, _ := sortedJSON(nil, raw, 0)
		return out, nil
	}
	return canonicalTree(raw)
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
	c := &canonicalizer{data: data}
	return c.value(out, pos)
}

// canonicalizer keeps the buffers sortedJSON reuses from object to object.
type canonicalizer struct {
	data    []byte
	members []member // a stack: each open object's members
	values  []byte   // an object's canonical values while they are put in order
}

// member is an object's member: its key's value, and where its canonical value lies in
// the output.
type member struct {
	key        []byte
	start, end int
}

func (c *canonicalizer) value(out []byte, pos int) ([]byte, int) {
	data := c.data
	pos = skipSpace(data, pos)
	switch data[pos] {
	case '{':
		return c.object(out, pos)
	case '[':
		out = append(out, '[')
		pos = skipSpace(data, pos+1)
		if data[pos] == ']' {
			return append(out, ']'), pos + 1
		}
		for {
			out, pos = c.value(out, pos)
			pos = skipSpace(data, pos)
			if data[pos] == ']' {
				return append(out, ']'), pos + 1
			}
			out = append(out, ',')
			pos++ // the comma
		}
	case '"':
		end := stringEnd(data, pos)
		return appendString(out, data[pos+1:end-1]), end
	default: // a number or a literal: its text, up to a delimiter
		end := pos
		for end < len(data) && !isDelimiter(data[end]) {
			end++
		}
		return append(out, data[pos:end]...), end
	}
}

// object appends the canonical form of the object at data[pos]: its members' values are
// encoded in order after out, then moved into the keys' order.
func (c *canonicalizer) object(out []byte, pos int) ([]byte, int) {
	data := c.data
	base, mark := len(out), len(c.members)
	pos = skipSpace(data, pos+1)
	for data[pos] != '}' {
		end := stringEnd(data, pos)
		key := decodeString(data[pos+1 : end-1])
		pos = skipSpace(data, end) + 1 // the colon
		start := len(out)
		out, pos = c.value(out, pos)
		c.members = append(c.members, member{key, start, len(out)})
		if pos = skipSpace(data, pos); data[pos] == ',' {
			pos = skipSpace(data, pos+1)
		}
	}
	ms := c.members[mark:]
	// The last of a key given twice wins, as in a map; then bytewise order.
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	c.values = append(c.values[:0], out[base:]...)
	out = append(out[:base], '{')
	first := true
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k+1].key, m.key) {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = appendValue(out, m.key) // decoded
		out = append(out, ':')
		out = append(out, c.values[m.start-base:m.end-base]...)
	}
	c.members = c.members[:mark]
	return append(out, '}'), pos + 1
}

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && (data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\r' || data[pos] == '\n') {
		pos++
	}
	return pos
}

func isDelimiter(c byte) bool {
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// stringEnd returns the position after the string that starts at data[pos] (a quote).
func stringEnd(data []byte, pos int) int {
	for i := pos + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// plainString reports whether a string's JSON body (between its quotes) is already what
// encoding/json writes for its value: no escapes or quotes, no HTML characters, no
// control characters, valid UTF-8 without U+2028 or U+2029. The body may also be a
// decoded value: then it tells whether the value needs escaping.
func plainString(body []byte) bool {
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return utf8.Valid(body) && !bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
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
