package sha

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// Every length around the block and padding boundaries, and random contents, hash as
// crypto/sha256 hashes them; so do messages split into parts.
func TestSum256(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(r.Uint32())
		}
		want := sha256.Sum256(msg)
		if got := Sum256(msg); got != want {
			t.Fatalf("length %d: %x, want %x", n, got, want)
		}
		cut := r.IntN(n + 1)
		if got := Sum256(msg[:cut], nil, msg[cut:]); got != want {
			t.Fatalf("length %d cut at %d: %x, want %x", n, cut, got, want)
		}
	}
	big := bytes.Repeat([]byte("pipeplan "), 100000)
	if Sum256(big) != sha256.Sum256(big) {
		t.Error("900 kB: differs from crypto/sha256")
	}
	// FIPS 180-4's example "abc".
	if got := Sum256([]byte("abc")); got != [32]byte{0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad} {
		t.Errorf("abc: %x", got)
	}
}
