package wire

import (
	"strings"
	"testing"
)

// TestDecodeBound: a request of exactly the bound is read, one byte more is refused
// before it is decoded, and Decode's bound is MaxBytes.
func TestDecodeBound(t *testing.T) {
	head, tail := `{"model":{"name":"`, `"}}`
	const limit = 1 << 16
	in := head + strings.Repeat("x", limit-len(head)-len(tail)) + tail
	r, err := decode([]byte(in), limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Model.Name) != limit-len(head)-len(tail) {
		t.Errorf("name of %d bytes", len(r.Model.Name))
	}
	want := "the request is 65537 bytes, more than the 65536 a request may hold"
	if _, err := decode([]byte(in+" "), limit); err == nil || err.Error() != want {
		t.Errorf("one byte over: %v, want %q", err, want)
	}
	big := make([]byte, MaxBytes+1) // pages never written cost no memory
	want = "the request is 1073741825 bytes, more than the 1073741824 a request may hold"
	if _, err := Decode(big); err == nil || err.Error() != want {
		t.Errorf("Decode of MaxBytes+1: %v, want %q", err, want)
	}
}
