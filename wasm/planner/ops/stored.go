package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

	mu   sync.Mutex
	docs []storedDoc // the most recent last
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
	if s.Keep != nil {
		s.Keep(ref.Stored, doc)
	}
	b, _ := json.Marshal(ref)
	return b
}
