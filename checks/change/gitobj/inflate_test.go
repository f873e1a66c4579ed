package gitobj

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zstd"
)

// inflateBytes inflates stream into a buffer of size bytes, the stream
// placed inside other bytes as a pack entry is, with the end of what may
// be read at the stream's end: a read past it would find bytes there.
func inflateBytes(stream []byte, size int) ([]byte, error) {
	return inflateIn(stream, size, false)
}

// inflateIn is inflateBytes that, with readAfter, may read the bytes after
// the stream too, as a pack's next entry.
func inflateIn(stream []byte, size int, readAfter bool) ([]byte, error) {
	const before, after = 7, 33
	file := make([]byte, before+len(stream)+after)
	copy(file[before:], stream)
	for i := before + len(stream); i < len(file); i++ {
		file[i] = byte(i * 37)
	}
	end := before + len(stream)
	if readAfter {
		end = len(file)
	}
	out := make([]byte, size)
	h := sha1.New()
	err := inflateExact(bytes.NewReader(file), before, int64(end), out, h)
	if err == nil {
		// What was written to the hash is the output, once, in order.
		if want := sha1.Sum(out); !bytes.Equal(h.Sum(nil), want[:]) {
			return nil, errors.New("the bytes written to sum are not the output")
		}
	}
	return out, err
}

// reference inflates stream with Go's compress/flate after checking its
// zlib header as inflateExact does, and returns all it inflated before
// any error.
func reference(stream []byte) ([]byte, error) {
	if len(stream) < 2 {
		return nil, io.ErrUnexpectedEOF
	}
	h0, h1 := uint(stream[0]), uint(stream[1])
	if h0&0x0f != 8 || h0>>4 > 7 || h1&0x20 != 0 || (h0<<8|h1)%31 != 0 {
		return nil, errZlibHeader
	}
	return io.ReadAll(flate.NewReader(bytes.NewReader(stream[2:])))
}

// agree checks inflateExact against compress/flate on stream: where the
// reference inflates it, inflateExact gives the same bytes into a buffer
// of their size and refuses one a byte shorter or longer; where the
// reference fails, inflateExact fails too, whatever the size.
func agree(t *testing.T, stream []byte) (ok bool) {
	t.Helper()
	want, werr := reference(stream)
	if werr != nil {
		for _, size := range []int{len(want), len(want) + 1, 2*len(want) + 100} {
			if got, err := inflateBytes(stream, size); err == nil {
				t.Fatalf("inflated %d bytes (%.40q) of a stream compress/flate refuses after %d bytes: %v", size, got, len(want), werr)
			}
		}
		return false
	}
	got, err := inflateBytes(stream, len(want))
	if err != nil {
		t.Fatalf("inflating %d bytes: %v; compress/flate inflates them", len(want), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("inflated %d bytes differing from compress/flate's at %d", len(want), mismatchAt(got, want))
	}
	if got, err := inflateIn(stream, len(want), true); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("with bytes after the stream: %v, or the bytes differ", err)
	}
	if len(want) > 0 {
		if _, err := inflateBytes(stream, len(want)-1); !errors.Is(err, errDeflateLong) {
			t.Fatalf("into one byte less: %v, want %v", err, errDeflateLong)
		}
	}
	if _, err := inflateBytes(stream, len(want)+1); !errors.Is(err, errDeflateShort) {
		t.Fatalf("into one byte more: %v, want %v", err, errDeflateShort)
	}
	return true
}

func mismatchAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// zlibLevel compresses data with compress/zlib at level, flushing after
// the first flushAt bytes (a sync point: an empty stored block) when
// flushAt is inside data.
func zlibLevel(t testing.TB, data []byte, level, flushAt int) []byte {
	var z bytes.Buffer
	w, err := zlib.NewWriterLevel(&z, level)
	if err != nil {
		t.Fatal(err)
	}
	if flushAt > 0 && flushAt < len(data) {
		w.Write(data[:flushAt])
		w.Flush()
		data = data[flushAt:]
	}
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// catalogYAML is text like a catalog's: the same keys over and over,
// digests that do not compress.
func catalogYAML(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\nname: pkg.v0.%d.%d\npackage: pkg\nimage: quay.io/pkg/bundle@sha256:%016x%016x\nproperties:\n- type: olm.package\n  value:\n    packageName: pkg\n    version: 0.%d.%d\n",
			i, rng.IntN(20), rng.Uint64(), rng.Uint64(), i, rng.IntN(20))
	}
	return []byte(b.String())
}

var levels = []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, 2, 3, 4, 5, 6, 7, 8, flate.BestCompression}

// FuzzInflate compares inflateExact with compress/flate on streams that
// compress/flate makes from the input at every level (Huffman-only and
// stored blocks among them), and on the input itself taken as a stream,
// with and without a valid zlib header in front: arbitrary bytes must be
// refused or inflated as compress/flate inflates them, never panic.
func FuzzInflate(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 9))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	inputs := [][]byte{
		nil,
		[]byte("a"),
		bytes.Repeat([]byte("a"), 1000),
		bytes.Repeat([]byte("abcdefgh12"), 300),
		catalogYAML(1, 20),
		random,
	}
	for i, in := range inputs {
		for j := range levels {
			f.Add(in, uint8(j), uint16(len(in)/3*(i%2)))
		}
	}
	// Streams damaged in a few ways.
	valid := zlibLevel(f, catalogYAML(2, 5), 6, 0)
	f.Add(valid[:len(valid)/2], uint8(0), uint16(0))
	f.Add(append(bytes.Clone(valid[:20]), 0xff, 0xff, 0xff), uint8(0), uint16(0))
	f.Add([]byte{0x78, 0x01, 0x03}, uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, level uint8, flushAt uint16) {
		stream := zlibLevel(t, data, levels[int(level)%len(levels)], int(flushAt))
		if !agree(t, stream) {
			t.Fatal("compress/flate does not inflate its own stream")
		}
		// Without the last byte of the deflate data (the Adler-32 trailer
		// is 4 bytes): the end of the final block is missing.
		if _, err := inflateBytes(stream[:len(stream)-5], len(data)); err == nil {
			t.Fatal("a stream without its last byte inflated")
		}
		agree(t, data)
		agree(t, append([]byte{0x78, 0x9c}, data...))
	})
}

// TestInflateLarge inflates streams of several input buffers, so that the
// compressed bytes are read in more than one piece, at every level.
func TestInflateLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	yaml := catalogYAML(3, 4000)
	for _, level := range levels {
		for name, data := range map[string][]byte{"random": random, "yaml": yaml} {
			t.Run(fmt.Sprintf("%s/%d", name, level), func(t *testing.T) {
				stream := zlibLevel(t, data, level, len(data)/2)
				got, err := inflateBytes(stream, len(data))
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%v, %d bytes differ from the input at %d", err, len(got), mismatchAt(got, data))
				}
				if _, err := inflateBytes(stream[:len(stream)*2/3], len(data)); !errors.Is(err, errDeflateEOF) {
					t.Errorf("two thirds of the stream: %v, want %v", err, errDeflateEOF)
				}
			})
		}
	}
}

// TestInflateTruncated cuts a stream at every byte of its deflate data:
// each cut fails (on a stream that ends early, mostly; a cut can also end
// in bits that read as some other invalid code).
func TestInflateTruncated(t *testing.T) {
	for _, level := range levels {
		data := catalogYAML(4, 30)
		stream := zlibLevel(t, data, level, 0)
		for n := range len(stream) - 4 {
			_, err := inflateBytes(stream[:n], len(data))
			if err == nil {
				t.Fatalf("level %d: the first %d of %d bytes inflated", level, n, len(stream))
			}
		}
		// The Adler-32 trailer is not needed: the caller checks a SHA-1.
		if got, err := inflateBytes(stream[:len(stream)-4], len(data)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("level %d: without the trailer: %v", level, err)
		}
	}
}

// TestInflateStatedSizeTooLarge: an entry stating more bytes than the
// rest of its pack could inflate to is refused before a buffer of that
// size is made (1 TiB here).
func TestInflateStatedSizeTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.pack")
	stream := zlibLevel(t, []byte("content"), 6, 0)
	if err := os.WriteFile(path, append(make([]byte, 14), stream...), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := osfs.New(filepath.Dir(path)).Open("p.pack")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &pack{name: "p", f: f, size: int64(14 + len(stream))}
	_, _, err = p.inflateInto(entry{off: 12, typ: plumbing.BlobObject, size: 1 << 40, data: 14}, nil)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "p.pack at 12: a stated size of 1099511627776 bytes") {
		t.Errorf("%v; want ErrCorrupt for the stated size", err)
	}
	if _, b, err := p.inflateInto(entry{off: 12, typ: plumbing.BlobObject, size: 7, data: 14}, nil); err != nil || string(b) != "content" {
		t.Errorf("the entry as stated: %q, %v", b, err)
	}
}

// bitWriter writes a deflate stream by hand, a zlib header first.
type bitWriter struct {
	b   []byte
	acc uint64
	n   uint
}

func newBitWriter() *bitWriter { return &bitWriter{b: []byte{0x78, 0x01}} }

// bits writes the n low bits of v, least significant first, as deflate
// writes everything but Huffman codes.
func (w *bitWriter) bits(v uint64, n uint) *bitWriter {
	w.acc |= v << w.n
	w.n += n
	for w.n >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
	return w
}

// code writes a Huffman code of n bits, most significant first.
func (w *bitWriter) code(c uint64, n uint) *bitWriter {
	return w.bits(uint64(bits.Reverse16(uint16(c))>>(16-n)), n)
}

// align pads to a byte boundary, as before a stored block's length.
func (w *bitWriter) align() *bitWriter {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
	return w
}

func (w *bitWriter) raw(b ...byte) *bitWriter {
	w.align()
	w.b = append(w.b, b...)
	return w
}

func (w *bitWriter) bytes() []byte {
	w.align()
	return w.b
}

// Codes of the fixed Huffman code (RFC 1951 3.2.6).
func (w *bitWriter) fixedLit(s int) *bitWriter {
	switch {
	case s < 144:
		return w.code(uint64(0x30+s), 8)
	case s < 256:
		return w.code(uint64(0x190+s-144), 9)
	case s < 280:
		return w.code(uint64(s-256), 7)
	default:
		return w.code(uint64(0xc0+s-280), 8)
	}
}

func (w *bitWriter) fixedDist(s int) *bitWriter { return w.code(uint64(s), 5) }

// canonical returns the codes of the canonical Huffman code of lens.
func canonical(lens []uint8) []uint64 {
	var count, next [16]uint64
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	for l := 1; l < 16; l++ {
		next[l] = (next[l-1] + count[l-1]) << 1
	}
	codes := make([]uint64, len(lens))
	for s, l := range lens {
		if l > 0 {
			codes[s] = next[l]
			next[l]++
		}
	}
	return codes
}

// dynamic writes a dynamic block's header for the given code lengths,
// with a code length code of sixteen 4-bit codes (no repeats), and
// returns the codes of the literal/length and distance symbols.
func (w *bitWriter) dynamic(final bool, lit, dist []uint8) (litCodes, distCodes []uint64) {
	f := uint64(0)
	if final {
		f = 1
	}
	w.bits(f, 1).bits(2, 2)
	w.bits(uint64(len(lit)-257), 5).bits(uint64(len(dist)-1), 5).bits(19-4, 4)
	for _, s := range codeOrder {
		l := uint64(4)
		if s >= 16 {
			l = 0
		}
		w.bits(l, 3)
	}
	for _, l := range append(append([]uint8{}, lit...), dist...) {
		w.code(uint64(l), 4) // symbol l's code is l
	}
	return canonical(lit), canonical(dist)
}

func lens(n int, set map[int]uint8) []uint8 {
	l := make([]uint8, n)
	for s, v := range set {
		l[s] = v
	}
	return l
}

// TestInflateInvalid: hand-made streams that are cut short, run past the
// stated size, use invalid codes or reach back before the start each fail
// with their own error, and the valid ones among them (codes of a single
// symbol, codes of fifteen bits that take the second-level tables)
// inflate as compress/flate inflates them.
func TestInflateInvalid(t *testing.T) {
	fixed := func(final bool) *bitWriter {
		f := uint64(0)
		if final {
			f = 1
		}
		return newBitWriter().bits(f, 1).bits(1, 2)
	}
	// A code with every length from 1 to 15: a complete code whose
	// longest codes need the second-level tables of both kinds. The
	// distances 1 and 2 have the 15-bit codes.
	long := map[int]uint8{256: 15, 257: 15}
	longDist := map[int]uint8{0: 15, 1: 15}
	for i := range 14 {
		long['a'+i] = uint8(i + 1)
		longDist[2+i] = uint8(i + 1)
	}

	type tcase struct {
		name   string
		stream []byte
		size   int
		want   error  // nil: valid, and agreeing with compress/flate
		out    string // the output of a valid stream
	}
	cases := []tcase{
		{"empty input", nil, 0, errDeflateEOF, ""},
		{"one header byte", []byte{0x78}, 0, errDeflateEOF, ""},
		{"header only", []byte{0x78, 0x01}, 0, errDeflateEOF, ""},
		{"header check", []byte{0x78, 0x00, 0x03, 0x00}, 0, errZlibHeader, ""},
		{"not deflate", []byte{0x79, 0x18, 0x03, 0x00}, 0, errZlibHeader, ""},
		{"preset dictionary", []byte{0x78, 0xbb, 0, 0, 0, 1, 0x03, 0x00}, 0, errZlibHeader, ""},
		{"block type 3", newBitWriter().bits(1, 1).bits(3, 2).bytes(), 0, errDeflateBlock, ""},
		{"stored: length and complement differ", newBitWriter().bits(1, 1).bits(0, 2).raw(5, 0, 0, 0, 'a').bytes(), 5, errDeflateStored, ""},
		{"stored: cut short", newBitWriter().bits(1, 1).bits(0, 2).raw(5, 0, 0xfa, 0xff, 'a', 'b').bytes(), 5, errDeflateEOF, ""},
		{"stored: longer than stated", newBitWriter().bits(1, 1).bits(0, 2).raw(5, 0, 0xfa, 0xff, 'a', 'b', 'c', 'd', 'e').bytes(), 4, errDeflateLong, ""},
		{"stored", newBitWriter().bits(1, 1).bits(0, 2).raw(5, 0, 0xfa, 0xff, 'a', 'b', 'c', 'd', 'e').bytes(), 5, nil, "abcde"},
		{"stored after bits", fixed(false).fixedLit('x').fixedLit(256).bits(1, 1).bits(0, 2).raw(2, 0, 0xfd, 0xff, 'y', 'z').bytes(), 3, nil, "xyz"},
		{"fixed: literal/length 286", fixed(true).fixedLit('a').fixedLit(286).bytes(), 1, errDeflateCode, ""},
		{"fixed: literal/length 287", fixed(true).fixedLit(287).bytes(), 0, errDeflateCode, ""},
		{"fixed: distance 30", fixed(true).fixedLit('a').fixedLit(257).fixedDist(30).bytes(), 4, errDeflateCode, ""},
		{"fixed: distance 31", fixed(true).fixedLit('a').fixedLit(257).fixedDist(31).bytes(), 4, errDeflateCode, ""},
		{"distance before the start", fixed(true).fixedLit('a').fixedLit(257).fixedDist(1).fixedLit(256).bytes(), 4, errDeflateFar, ""},
		{"match at the start", fixed(true).fixedLit(257).fixedDist(0).fixedLit(256).bytes(), 3, errDeflateFar, ""},
		{"overlapping match", fixed(true).fixedLit('a').fixedLit('b').fixedLit(265).bits(1, 1).fixedDist(1).fixedLit(256).bytes(), 14, nil, "ababababababab"},
		{"literal past the size", fixed(true).fixedLit('a').fixedLit('b').fixedLit(256).bytes(), 1, errDeflateLong, ""},
		{"match past the size", fixed(true).fixedLit('a').fixedLit(257).fixedDist(0).fixedLit(256).bytes(), 3, errDeflateLong, ""},
		{"ends before the size", fixed(true).fixedLit('a').fixedLit(256).bytes(), 2, errDeflateShort, ""},
		{"no final block", fixed(false).fixedLit('a').fixedLit(256).bytes(), 1, errDeflateEOF, ""},
		{"dynamic: 287 literal/length codes", newBitWriter().bits(1, 1).bits(2, 2).bits(30, 5).bits(0, 5).bits(0, 4).bytes(), 0, errDeflateLengths, ""},
		{"dynamic: 31 distance codes", newBitWriter().bits(1, 1).bits(2, 2).bits(0, 5).bits(30, 5).bits(0, 4).bytes(), 0, errDeflateLengths, ""},
		// Code length codes for 16, 17, 18 and 0, each one bit long:
		// over-subscribed.
		{"dynamic: code length code over-subscribed", newBitWriter().bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(0, 4).bits(1, 3).bits(1, 3).bits(1, 3).bits(1, 3).bytes(), 0, errDeflateLengths, ""},
		// Codes for 16 and 0 only; the first length repeats the one
		// before it, which is not there.
		{"dynamic: repeat of no length", newBitWriter().bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(0, 4).bits(1, 3).bits(0, 3).bits(0, 3).bits(1, 3).code(1, 1).bits(0, 2).bytes(), 0, errDeflateLengths, ""},
	}
	add := func(name string, size int, want error, out string, build func(w *bitWriter)) {
		w := newBitWriter()
		build(w)
		cases = append(cases, tcase{name, w.bytes(), size, want, out})
	}
	add("dynamic: incomplete literal/length code", 1, errDeflateLengths, "", func(w *bitWriter) {
		w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 2}), lens(1, nil))
	})
	add("dynamic: over-subscribed distance code", 1, errDeflateLengths, "", func(w *bitWriter) {
		w.dynamic(true, lens(258, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(3, map[int]uint8{0: 1, 1: 1, 2: 1}))
	})
	add("dynamic: a single distance code", 4, nil, "aaaa", func(w *bitWriter) {
		lc, dc := w.dynamic(true, lens(258, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(1, map[int]uint8{0: 1}))
		w.code(lc['a'], 1).code(lc[257], 2).code(dc[0], 1).code(lc[256], 2)
	})
	add("dynamic: the missing half of a single distance code", 4, errDeflateCode, "", func(w *bitWriter) {
		lc, _ := w.dynamic(true, lens(258, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(1, map[int]uint8{0: 1}))
		w.code(lc['a'], 1).code(lc[257], 2).code(1, 1).code(lc[256], 2)
	})
	add("dynamic: no distance codes, none used", 2, nil, "aa", func(w *bitWriter) {
		lc, _ := w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil))
		w.code(lc['a'], 1).code(lc['a'], 1).code(lc[256], 1)
	})
	add("dynamic: no distance codes, one used", 4, errDeflateCode, "", func(w *bitWriter) {
		lc, _ := w.dynamic(true, lens(258, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(1, nil))
		w.code(lc['a'], 1).code(lc[257], 2).code(0, 1).code(lc[256], 2)
	})
	add("dynamic: no end-of-block code", 1, errDeflateCode, "", func(w *bitWriter) {
		lc, _ := w.dynamic(true, lens(257, map[int]uint8{'a': 1}), lens(1, nil))
		w.code(lc['a'], 1).code(1, 1)
	})
	add("dynamic: codes of 1 to 15 bits", 20, nil, "abcdefghijklmnmnmmmm", func(w *bitWriter) {
		lc, dc := w.dynamic(true, lens(258, long), lens(16, longDist))
		for i := range 14 {
			w.code(lc['a'+i], uint(long['a'+i]))
		}
		w.code(lc[257], 15).code(dc[1], 15) // 3 bytes from 2 back
		w.code(lc[257], 15).code(dc[0], 15) // 3 bytes from 1 back
		w.code(lc[256], 15)
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := inflateBytes(c.stream, c.size)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("%v, want %v", err, c.want)
				}
				if ref, rerr := reference(c.stream); rerr == nil && len(ref) == c.size {
					t.Fatalf("compress/flate inflates it to %q", ref)
				}
				return
			}
			if err != nil || string(got) != c.out {
				t.Fatalf("%q, %v; want %q", got, err, c.out)
			}
			agree(t, c.stream)
		})
	}
}

// TestBuildTable builds the tables of random complete codes of up to 15
// bits, most of them needing second-level tables (grown beyond what the
// table was made with), and finds every symbol where its code leads.
func TestBuildTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var template [288]uint32
	for s := range template {
		template[s] = entLit | uint32(s)<<16
	}
	for range 300 {
		// A complete code: leaves split at random, none deeper than 15.
		n := 2 + rng.IntN(285)
		depths := []uint8{0}
		for len(depths) < n {
			i := rng.IntN(len(depths))
			if depths[i] == 15 {
				continue
			}
			depths[i]++
			depths = append(depths, depths[i])
		}
		l := make([]uint8, 286)
		for i, s := range rng.Perm(286)[:n] {
			l[s] = depths[i]
		}
		for _, root := range []uint{litRootBits, distRootBits} {
			tab, mask, ok := buildTable(make([]uint32, 2), l, template[:], root)
			if !ok {
				t.Fatalf("a complete code refused: %v", l)
			}
			codes := canonical(l)
			for s, n := range l {
				if n == 0 {
					continue
				}
				in := uint64(bits.Reverse16(uint16(codes[s])) >> (16 - n))
				e := tab[in&mask]
				used := uint32(0)
				if e&entLink != 0 {
					used = e & 31
					e = tab[uint64(e>>16)+(in>>used)&(1<<(e>>8&15)-1)]
				}
				if e&entLit == 0 || e>>16 != uint32(s) || used+e&31 != uint32(n) {
					t.Fatalf("root %d: symbol %d of %d bits: entry %x after %d bits", root, s, n, e, used)
				}
			}
		}
	}
}

// BenchmarkInflate inflates a catalog file of the corpus (1 to 2 MiB of
// YAML, zlib-compressed as git does) from a file, as a pack entry: through
// the streaming reader into the object's buffer (the path before), and
// straight into it; and the same for its first 4 KiB, the size of most
// objects a check reads (trees, OWNERS, small catalog files). It reports
// MB/s of inflated bytes and the CPU time (user+system) of the process
// per inflate beside the wall time, and the machine's load.
func BenchmarkInflate(b *testing.B) {
	catalog := corpusCatalog(b)
	b.Run("catalog", func(b *testing.B) { benchmarkInflate(b, catalog) })
	b.Run("4KiB", func(b *testing.B) { benchmarkInflate(b, catalog[:4<<10]) })
}

func benchmarkInflate(b *testing.B, data []byte) {
	stream := zlibLevel(b, data, zlib.DefaultCompression, 0)
	path := filepath.Join(b.TempDir(), "pack")
	if err := os.WriteFile(path, append(append([]byte("PACK"), stream...), make([]byte, 20)...), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	end := int64(4 + len(stream) + 20)
	b.Logf("%d bytes, compressed to %d", len(data), len(stream))
	run := func(b *testing.B, inflate func(out []byte) error) {
		out := make([]byte, len(data))
		if err := inflate(out); err != nil || !bytes.Equal(out, data) {
			b.Fatalf("%v; or the bytes differ", err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu0 := cpuSeconds(b)
		b.ResetTimer()
		for range b.N {
			if err := inflate(make([]byte, len(data))); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)*1e3, "CPU-ms/op")
		b.ReportMetric(load(b), "load")
	}
	b.Run("stream", func(b *testing.B) {
		run(b, func(out []byte) error {
			z, err := inflate(io.NewSectionReader(f, 4, end-4))
			if err != nil {
				return err
			}
			defer z.Close()
			for n := 0; n < len(out); {
				m, err := io.ReadFull(z, out[n:min(n+32<<10, len(out))])
				n += m
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("exact", func(b *testing.B) {
		run(b, func(out []byte) error { return inflateExact(f, 4, end, out, nil) })
	})
}

// corpusCatalog is the first catalog.yaml of 1 to 2 MiB in the shared
// corpus of community-operators-prod.
func corpusCatalog(b *testing.B) []byte {
	archive := filepath.Join("..", "..", "..", "..", "shared", "corpus", "community-operators-prod.tar.zst")
	f, err := os.Open(archive)
	if err != nil {
		b.Skipf("no corpus: %v", err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			b.Fatalf("no catalog of 1 to 2 MiB in %s: %v", archive, err)
		}
		if strings.HasSuffix(h.Name, "/catalog.yaml") && h.Size >= 1<<20 && h.Size <= 2<<20 {
			data, err := io.ReadAll(tr)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s", h.Name)
			return data
		}
	}
}

func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func load(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(data), &l)
	return l
}
