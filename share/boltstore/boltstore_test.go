package boltstore_test

import (
	"context"
	"strings"
	"testing"

	"pipeplan/share/boltstore"
	"pipeplan/share/sharetest"
)

func TestStore(t *testing.T) {
	s, err := boltstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sharetest.Store(t, s)
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), "ab", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := boltstore.Open(dir); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("opening a store in use: %v, want an error saying so", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if doc, err := s.Get(context.Background(), "ab"); err != nil || string(doc) != `{"x":1}` {
		t.Errorf("after reopening: %q, %v", doc, err)
	}
	if n, err := s.Len(); n != 1 || err != nil {
		t.Errorf("Len: %d, %v; want 1", n, err)
	}
}
