package fbc

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestPrintableASCII8 compares the word-at-a-time test with the byte
// test it stands for: every byte value at every position among printable
// neighbours, and random words, most of them near the edges of the range.
func TestPrintableASCII8(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		t.Helper()
		if got, want := printableASCII8(binary.LittleEndian.Uint64(b)), slow(b); got != want {
			t.Fatalf("printableASCII8(%q) = %v, want %v", b, got, want)
		}
	}
	b := make([]byte, 8)
	for pos := range 8 {
		for c := range 256 {
			for fill := 0x20; fill < 0x7f; fill += 7 {
				for i := range b {
					b[i] = byte(fill)
				}
				b[pos] = byte(c)
				check(b)
			}
		}
	}
	edges := []byte{0x00, 0x01, 0x09, 0x0a, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = edges[r.IntN(len(edges))]
			} else {
				b[i] = byte(r.UintN(256))
			}
		}
		check(b)
	}
}
