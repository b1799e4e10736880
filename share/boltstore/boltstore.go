// Package boltstore is a share.Store in one bbolt file (go.etcd.io/bbolt, the embedded
// key-value store of etcd): the store of the local twin of the shared-plans Worker,
// `pipeplan share-server --store DIR`.
//
// Documents live in the bucket "plans" under their ids. A Put writes only ids not held
// yet, in a transaction that bbolt syncs to disk before Put returns; a second process
// cannot open the same file while one holds it (Open waits a second, then fails).
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"pipeplan/share"
)

// FileName is the name of the database file in the store's folder.
const FileName = "plans.db"

var bucket = []byte("plans")

// Store is a share.Store in a bbolt file, safe for concurrent use.
type Store struct {
	db *bolt.DB
}

// Open opens the store in folder dir (FileName in it), creating both if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s is in use by another process (a share-server already running on it?)", path)
	} else if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Get returns the document stored under id, or share.ErrNotFound.
func (s *Store) Get(_ context.Context, id string) ([]byte, error) {
	var doc []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get([]byte(id))
		if v == nil {
			return share.ErrNotFound
		}
		doc = append([]byte(nil), v...) // v is only valid in the transaction
		return nil
	})
	return doc, err
}

// Put stores doc under id unless id is already stored.
func (s *Store) Put(_ context.Context, id string, doc []byte) error {
	if _, err := s.Get(context.Background(), id); err == nil {
		return nil // content-addressed: no write, no sync
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte(id)) != nil {
			return nil
		}
		return b.Put([]byte(id), append([]byte(nil), doc...))
	})
}

// Len is the number of documents stored.
func (s *Store) Len() (int, error) {
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	})
	return n, err
}
