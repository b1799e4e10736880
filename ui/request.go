package ui

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"pipeplan/core/wire"
)

// clone returns a deep copy of a request.
func clone(r *wire.Request) *wire.Request {
	c := *r
	c.Model.Document = bytes.Clone(r.Model.Document)
	if r.Model.Architecture != nil {
		a := *r.Model.Architecture
		a.Config = bytes.Clone(a.Config)
		c.Model.Architecture = &a
	}
	c.Cluster.Document = bytes.Clone(r.Cluster.Document)
	c.Cluster.Devices = slices.Clone(r.Cluster.Devices)
	c.Boundaries = append([]int(nil), r.Boundaries...)
	if len(c.Boundaries) == 0 {
		c.Boundaries = nil
	}
	return &c
}

// fragmentPrefix starts the URL fragment that holds a request: "r1." then the request's
// JSON, deflated (compress/flate) and base64url-encoded without padding. The 1 is the
// encoding's version, so that another encoding can be added without breaking links.
const fragmentPrefix = "r1."

// maxFragmentJSON bounds the JSON a fragment may inflate to (a 10,000-layer profile is a
// few MB), so that a crafted link cannot make the page allocate without limit.
const maxFragmentJSON = 64 << 20

// searchSeparator follows a fragment's request where the Search panel's knobs follow
// it: ".s1." then their JSON object (App.Search.Knobs), base64url-encoded without
// padding ('.' is not in base64url's alphabet, so the request's part cannot hold it).
const searchSeparator = ".s1."

// maxSearchFragment bounds the search knobs' part of a fragment (bytes of base64).
const maxSearchFragment = 4096

// Fragment is the page's state as a URL fragment (without the "#"): the request
// (EncodeFragment), then the Search panel's knobs where any is set (searchSeparator).
func (a *App) Fragment() (string, error) {
	f, err := EncodeFragment(a.Req)
	if err != nil || len(a.Search.Knobs) == 0 {
		return f, err
	}
	data, err := json.Marshal(a.Search.Knobs) // keys sorted: one state, one fragment
	if err != nil {
		return "", err
	}
	return f + searchSeparator + base64.RawURLEncoding.EncodeToString(data), nil
}

// FragmentSearch reads the Search panel's knobs from a fragment (Fragment): nil where it
// has none, or where they do not read (the request still does).
func FragmentSearch(s string) map[string]string {
	_, part, ok := strings.Cut(s, searchSeparator)
	if !ok || len(part) > maxSearchFragment {
		return nil
	}
	data, err := base64.RawURLEncoding.DecodeString(part)
	var k map[string]string
	if err != nil || json.Unmarshal(data, &k) != nil {
		return nil
	}
	return k
}

// EncodeFragment writes the request as a URL fragment (without the "#").
func EncodeFragment(r *wire.Request) (string, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return "", err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return "", err
	}
	return fragmentPrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// Inflate decompresses raw DEFLATE data (RFC 1951), the fragment's compression, reading
// at most limit+1 bytes of its output (so that its caller sees that there is more). An
// error means data is not DEFLATE or ends early.
type Inflate func(data []byte, limit int) ([]byte, error)

// FlateInflate is Inflate with compress/flate, for native programs and the tests. The
// page inflates with the browser's DecompressionStream (wasm/app), so that main.wasm does
// not link flate's decompressor (about 50 KB); it still deflates with flate
// (EncodeFragment), since the browser's CompressionStream only answers later, and the
// page needs a request's link as it draws it.
func FlateInflate(data []byte, limit int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(data)), int64(limit)+1))
}

// DecodeFragment reads a fragment written by EncodeFragment (with or without the "#"),
// inflating it with inflate. Errors say what is wrong with the link.
func DecodeFragment(s string, inflate Inflate) (*wire.Request, error) {
	s = strings.TrimPrefix(s, "#")
	s, _, _ = strings.Cut(s, searchSeparator) // the search's knobs: FragmentSearch
	if !strings.HasPrefix(s, fragmentPrefix) {
		return nil, errors.New("the link's #fragment is not a pipeplan request (it should start with r1.)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(fragmentPrefix):])
	if err != nil {
		return nil, fmt.Errorf("the link's request is damaged (base64: %v): was it cut short?", err)
	}
	data, err := inflate(raw, maxFragmentJSON)
	if err != nil {
		return nil, fmt.Errorf("the link's request is damaged (deflate: %v): was it cut short?", err)
	}
	if len(data) > maxFragmentJSON {
		return nil, fmt.Errorf("the link's request is larger than %d MiB", maxFragmentJSON>>20)
	}
	return DecodeRequest(data)
}

// DecodeRequest reads a request's JSON as core does (spec.Decode): strictly, with
// errors naming the field.
func DecodeRequest(data []byte) (*wire.Request, error) {
	r, err := wire.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("the link's request: %v", err)
	}
	return r, nil
}
