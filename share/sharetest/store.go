package sharetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"pipeplan/share"
)

// Store checks a share.Store: an unknown id is ErrNotFound, what is put is got back
// unchanged (and not aliased to the caller's slice), a second put of an id leaves its
// document readable, and concurrent puts and gets of many ids all land.
func Store(t *testing.T, s share.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "00"); !errors.Is(err, share.ErrNotFound) {
		t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
	}
	doc := []byte(`{"id":"0a","request":{},"result":{}}`)
	if err := s.Put(ctx, "0a", doc); err != nil {
		t.Fatalf("Put: %v", err)
	}
	want := bytes.Clone(doc)
	doc[0] = 'X' // the store must not keep the caller's slice
	got, err := s.Get(ctx, "0a")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get after Put: %q, %v; want %q", got, err, want)
	}
	got[0] = 'Y' // nor hand out its own
	if again, _ := s.Get(ctx, "0a"); !bytes.Equal(again, want) {
		t.Errorf("Get after changing the slice a Get returned: %q, want %q", again, want)
	}
	if err := s.Put(ctx, "0a", want); err != nil {
		t.Errorf("a second Put of the same id: %v", err)
	}
	if got, err := s.Get(ctx, "0a"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("Get after a second Put: %q, %v; want %q", got, err, want)
	}

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("%x", 0x1000+i)
			if err := s.Put(ctx, id, fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
				errs <- err
				return
			}
			if got, err := s.Get(ctx, id); err != nil || string(got) != fmt.Sprintf(`{"n":%d}`, i) {
				errs <- fmt.Errorf("Get(%s) = %q, %v", id, got, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
