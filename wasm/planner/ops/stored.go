package ops

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pipeplan/core/load"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// A model file too large for a link (a profile of 20,000 layers is megabytes) is not put
// in the page's request. The planner worker keeps the file in the browser's storage
// (IndexedDB), keyed by the SHA-256 of its bytes, and the page's request holds a
// reference in its model document instead, a few dozen bytes:
//
//	{"stored":"sha256-<64 hex digits>","name":"deep.json","bytes":40233891}
//
// Do puts the document back (Store.Resolve) before core reads the request, so core never
// sees a reference; a reference to a file this browser does not hold is an error that
// says so. Small files stay in the request (InlineBytes), so that their links work in
// any browser.

// InlineBytes is the largest model document a request holds itself; larger ones are
// kept in the browser's storage and referenced.
const InlineBytes = 16 << 10

// MaxFileBytes is the largest model file the planner takes: what the command line
// reads (load.MaxInputBytes).
const MaxFileBytes = load.MaxInputBytes

// storedPrefix starts a reference in a request's JSON.
const storedPrefix = `{"stored":"sha256-`

// Ref is a reference to a model file kept in the browser's storage.
type Ref struct {
	// Stored is "sha256-" and the file's SHA-256 in hex.
	Stored string `json:"stored"`
	// Name is the file's name and Bytes its size, to say what is missing.
	Name  string `json:"name,omitempty"`
	Bytes int64  `json:"bytes"`
}

// Store is the model files the planner holds: the last few in memory, and through Load
// those kept in the browser's storage.
type Store struct {
	// Load reads the file kept under hash ("sha256-..."): ok false when it is not
	// there. nil: only what is in memory.
	Load func(hash string) (data []byte, ok bool, err error)
	// Keep puts a file in the browser's storage under hash, and says whether the
	// storage took it. nil: nothing is kept.
	Keep func(hash string, data []byte) bool

	// Files lists the files in the browser's storage, Delete deletes some (by key), and
	// Used marks one as used now; each nil where there is no storage (Trim and the
	// marks then do nothing).
	Files  func() ([]StoredFile, error)
	Delete func(keys []string) error
	Used   func(key string)

	mu   sync.Mutex
	docs []storedDoc // the most recent last
	// used is the file last marked used (Used).
	used string
}

// StoredFile is a model file in the browser's storage: its key ("sha256-..."), its size,
// and when it was last imported, kept or read (milliseconds since 1970).
type StoredFile struct {
	Key   string  `json:"key"`
	Bytes int64   `json:"bytes"`
	Used  float64 `json:"used"`
}

// The browser's storage keeps at most KeepFiles model files of at most KeepBytes
// together (Evict): the limits of what a person's imports leave behind, two files as
// large as the planner takes (MaxFileBytes) or eight of any size.
const (
	KeepFiles = 8
	KeepBytes = 2 * MaxFileBytes
)

// Evict says which files to delete so that those left are the most recently used ones
// within maxFiles files and maxBytes bytes together: least recently used first (LRU),
// the files are kept in order of use, newest first, until the next would break either
// bound; it and every older file go. The file inUse (the model the page shows) is kept
// whatever its size, and counts first. Equal times are ordered by key, so the answer
// does not depend on the list's order.
func Evict(files []StoredFile, inUse string, maxFiles int, maxBytes int64) []string {
	order := slices.Clone(files)
	slices.SortFunc(order, func(a, b StoredFile) int {
		switch {
		case (a.Key == inUse) != (b.Key == inUse):
			if a.Key == inUse {
				return -1
			}
			return 1
		case a.Used != b.Used:
			return cmp.Compare(b.Used, a.Used)
		}
		return strings.Compare(a.Key, b.Key)
	})
	var out []string
	n, total := 0, int64(0)
	for _, f := range order {
		if f.Key != inUse && (out != nil || n+1 > maxFiles || total+f.Bytes > maxBytes) {
			out = append(out, f.Key)
			continue
		}
		n, total = n+1, total+f.Bytes
	}
	return out
}

// Trim deletes the files of the browser's storage that Evict leaves out, keeping inUse
// (a file just imported or kept), and returns their keys. An error of the storage
// leaves the files as they were: the limits are kept at the next import.
func (s *Store) Trim(inUse string) ([]string, error) {
	if s.Files == nil || s.Delete == nil {
		return nil, nil
	}
	files, err := s.Files()
	if err != nil {
		return nil, err
	}
	gone := Evict(files, inUse, KeepFiles, KeepBytes)
	if len(gone) == 0 {
		return nil, nil
	}
	return gone, s.Delete(gone)
}

// markUsed marks the file of a reference as used (Used), when it is not the file
// marked last: so that the storage's order of use follows the models the page shows,
// without a write at every plan.
func (s *Store) markUsed(key string) {
	s.mu.Lock()
	last := s.used
	s.used = key
	s.mu.Unlock()
	if key != last && s.Used != nil {
		s.Used(key)
	}
}

type storedDoc struct {
	hash string
	doc  json.RawMessage
}

// keepDocs is how many model documents a Store holds in memory.
const keepDocs = 2

// Models is the planner's store (wasm/planner sets its Load).
var Models = &Store{}

// Put holds a model document under the hash of its file.
func (s *Store) Put(hash string, doc json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range s.docs {
		if d.hash == hash {
			s.docs = append(s.docs[:i], s.docs[i+1:]...)
			break
		}
	}
	s.docs = append(s.docs, storedDoc{hash, doc})
	if len(s.docs) > keepDocs {
		s.docs = s.docs[len(s.docs)-keepDocs:]
	}
}

func (s *Store) held(hash string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.docs {
		if d.hash == hash {
			return d.doc
		}
	}
	return nil
}

// document is the model document of a reference: held, else loaded and read.
func (s *Store) document(ref Ref) (json.RawMessage, error) {
	s.markUsed(ref.Stored)
	if d := s.held(ref.Stored); d != nil {
		return d, nil
	}
	missing := fmt.Errorf("the model file %s (%s, %s…) was imported in another browser (or this browser's storage was cleared): it is kept in the storage of the browser that imported it, not in this one. Import the file again, or open a link from a share server, which holds the whole model", orName(ref.Name), units.Bytes(ref.Bytes), ref.Stored[:min(len(ref.Stored), 19)])
	if s.Load == nil {
		return nil, missing
	}
	data, ok, err := s.Load(ref.Stored)
	if err != nil {
		return nil, fmt.Errorf("the model file %s could not be read from this browser's storage: %v", orName(ref.Name), err)
	}
	if !ok {
		return nil, missing
	}
	m, err := wire.ModelFromFile(data, MaxFileBytes)
	if err != nil || m.Document == nil {
		return nil, fmt.Errorf("the model file %s kept in this browser's storage does not read: %v", orName(ref.Name), err)
	}
	s.Put(ref.Stored, m.Document)
	return m.Document, nil
}

func orName(name string) string {
	if name == "" {
		return "(no name)"
	}
	return name
}

// Resolve returns arg (a request's or a query's JSON) with each reference replaced by
// its document, and the references it replaced.
func (s *Store) Resolve(arg string) (string, []Ref, error) {
	if !strings.Contains(arg, storedPrefix) {
		return arg, nil, nil
	}
	var b strings.Builder
	var refs []Ref
	for {
		i := strings.Index(arg, storedPrefix)
		if i < 0 {
			b.WriteString(arg)
			return b.String(), refs, nil
		}
		b.WriteString(arg[:i])
		dec := json.NewDecoder(strings.NewReader(arg[i:]))
		var ref Ref
		if err := dec.Decode(&ref); err != nil {
			return "", nil, fmt.Errorf("model.document: a stored model's reference does not read: %v", err)
		}
		doc, err := s.document(ref)
		if err != nil {
			return "", nil, err
		}
		b.Grow(len(doc) + len(arg) - i)
		b.Write(doc)
		refs = append(refs, ref)
		arg = arg[i+int(dec.InputOffset()):]
	}
}

// Imported is what Import answers: the request's model for the file, and whether the
// file went to storage.
type Imported struct {
	// Model is the request's model: an architecture, a document, or a document's
	// reference (Ref).
	Model wire.ModelSpec `json:"model"`
	// Stored is set when Model holds a reference; Kept when the browser's storage took
	// the file (without it, a reload cannot restore the model).
	Stored bool `json:"stored,omitempty"`
	Kept   bool `json:"kept,omitempty"`
}

// Import reads a model file (spec.ModelFromFile) whose SHA-256 in hex is hash: a
// document over InlineBytes is held and referenced. kept says whether the browser's
// storage took the file. It answers Imported's JSON, or an error object.
func (s *Store) Import(name, hash string, data []byte, kept bool) string {
	m, err := wire.ModelFromFile(data, MaxFileBytes)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	out := Imported{Model: m}
	if kept && hash != "" {
		s.markUsed("sha256-" + hash)
		if _, err := s.Trim("sha256-" + hash); err != nil {
			fmt.Println("pipeplan: the browser's storage of model files was not trimmed:", err)
		}
	}
	if len(m.Document) > InlineBytes && hash != "" {
		ref := Ref{Stored: "sha256-" + hash, Name: name, Bytes: int64(len(data))}
		s.Put(ref.Stored, m.Document)
		b, _ := json.Marshal(ref)
		out.Model.Document, out.Stored, out.Kept = b, true, kept
	}
	b, err := json.Marshal(out) // compact: the reference as the page's requests write it
	if err != nil {
		return mustJSON(apiError{Error: "internal error: " + err.Error()})
	}
	return string(b)
}

// reference keeps a model document over InlineBytes (one that came whole, as a share
// server's stored request has it) as a file in the browser's storage, and returns its
// reference; a smaller document comes back as it is.
func (s *Store) reference(name string, doc json.RawMessage) json.RawMessage {
	if len(doc) <= InlineBytes {
		return doc
	}
	sum := sha256.Sum256(doc)
	ref := Ref{Stored: "sha256-" + hex.EncodeToString(sum[:]), Name: name, Bytes: int64(len(doc))}
	s.Put(ref.Stored, doc)
	if s.Keep != nil && s.Keep(ref.Stored, doc) {
		s.markUsed(ref.Stored)
		if _, err := s.Trim(ref.Stored); err != nil {
			fmt.Println("pipeplan: the browser's storage of model files was not trimmed:", err)
		}
	}
	b, _ := json.Marshal(ref)
	return b
}
