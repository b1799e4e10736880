package share

import (
	"context"
	"errors"
	"sync"
)

// ErrNotFound is what a Store's Get returns, wrapped or not, for an id it does not hold.
var ErrNotFound = errors.New("no plan is stored under this id")

// Store keeps shared plans: documents under content ids. The Worker's store is Workers
// KV (wasm/worker), the local twin's is a bbolt file (boltstore), tests use MemStore.
//
// Ids are content addresses: a document is stored under the id of the request it holds,
// and the same request always makes the same document. So a Store need not be atomic
// about a second Put of an id it holds: writing the same bytes again, or keeping the
// first ones, are both right.
type Store interface {
	// Get returns the document stored under id, or an error that errors.Is ErrNotFound.
	Get(ctx context.Context, id string) ([]byte, error)
	// Put stores doc under id. The Store may keep doc: the caller does not change it
	// afterwards.
	Put(ctx context.Context, id string, doc []byte) error
}

// MemStore is a Store in memory, safe for concurrent use: for tests and examples.
// The zero value is an empty store.
type MemStore struct {
	mu   sync.Mutex
	docs map[string][]byte
	puts int
}

// Get returns a copy of the document stored under id.
func (s *MemStore) Get(_ context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, ok := s.docs[id]
	if !ok {
		return nil, ErrNotFound
	}
	return append([]byte(nil), doc...), nil
}

// Put stores a copy of doc under id, keeping the first document stored under an id.
func (s *MemStore) Put(_ context.Context, id string, doc []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	if _, ok := s.docs[id]; ok {
		return nil
	}
	if s.docs == nil {
		s.docs = map[string][]byte{}
	}
	s.docs[id] = append([]byte(nil), doc...)
	return nil
}

// Len is the number of documents stored.
func (s *MemStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.docs)
}

// Puts is the number of calls to Put so far, including those that changed nothing.
func (s *MemStore) Puts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}
