package gitobj

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
	"sync"
)

// This file inflates a zlib stream (RFC 1950, RFC 1951) whose inflated
// size is known beforehand, as every pack entry states it, straight into
// one buffer of exactly that size. A back-reference is copied from that
// buffer itself: there is no separate 32 KiB window to copy out of, and
// the compressed bytes are read from the pack in large ReadAt calls
// rather than through a small buffered reader. The streaming reader
// (inflate, in pack.go) stays for objects read as streams.
//
// The decoder is table driven: a Huffman code is decoded by looking up
// the next rootBits bits of input in a table whose entry says what the
// code means and how many bits it took, with a second-level table for the
// few codes longer than that (the layout of zlib's inflate and of
// libdeflate, written afresh here).

// Errors of a stream that cannot be inflated into its stated size. The
// pack reader wraps them in ErrCorrupt with the pack and offset.
var (
	errDeflateEOF     = errors.New("deflate: stream ends early")
	errDeflateShort   = errors.New("deflate: stream ends before the stated size")
	errDeflateLong    = errors.New("deflate: stream runs past the stated size")
	errDeflateCode    = errors.New("deflate: invalid code")
	errDeflateFar     = errors.New("deflate: distance too far back")
	errDeflateBlock   = errors.New("deflate: invalid block type")
	errDeflateStored  = errors.New("deflate: stored block length does not match its complement")
	errDeflateLengths = errors.New("deflate: invalid Huffman code lengths")
	errZlibHeader     = errors.New("zlib: invalid header")
)

// A table entry is a uint32:
//
//	bits 0-4    bits the entry consumes: the codeword, plus the extra bits
//	            of a length or distance (for a link, rootBits)
//	bits 8-11   the codeword's length in this table (for a link, the
//	            second-level table's bits)
//	bits 12-15  what the code is: one of the flags below; none is an
//	            invalid code
//	bits 16-31  the literal byte, the base of a length or distance, or
//	            where a link's second-level table starts
const (
	entLit  = 1 << 12
	entLen  = 1 << 13 // a length, or in a distance table a distance
	entEOB  = 1 << 14
	entLink = 1 << 15
)

// Root table bits: 10 for literals and lengths (most codes in a catalog's
// YAML are shorter), 8 for distances. A code's table is built with fewer
// when its longest code is shorter: filling a table costs a store per
// entry for every block, and most objects are small.
const (
	litRootBits  = 10
	distRootBits = 8
	clRootBits   = 7
)

// The templates of each table's entries, without the codeword's length.
var (
	litTemplate  [288]uint32
	distTemplate [32]uint32
	clTemplate   [19]uint32
)

// fixedLit and fixedDist are the tables of the fixed code (block type 1).
var (
	fixedLit, fixedDist         []uint32
	fixedLitMask, fixedDistMask uint64
)

func init() {
	for s := range 256 {
		litTemplate[s] = entLit | uint32(s)<<16
	}
	litTemplate[256] = entEOB
	base := uint32(3)
	for s := 257; s < 285; s++ {
		extra := uint32(0)
		if s >= 265 {
			extra = uint32(s-261) / 4
		}
		litTemplate[s] = entLen | base<<16 | extra
		base += 1 << extra
	}
	litTemplate[285] = entLen | 258<<16
	// 286 and 287 have codes in the fixed code but mean nothing.
	for s := range 30 {
		extra, base := uint32(0), uint32(s+1)
		if s >= 4 {
			extra = uint32(s/2 - 1)
			base = (2+uint32(s&1))<<extra + 1
		}
		distTemplate[s] = entLen | base<<16 | extra
	}
	for s := range clTemplate {
		clTemplate[s] = entLit | uint32(s)<<16
	}

	var lens [288]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	var ok bool
	if fixedLit, fixedLitMask, ok = buildTable(make([]uint32, 1<<9), lens[:], litTemplate[:], litRootBits); !ok {
		panic("fixed literal code")
	}
	for s := range 32 {
		lens[s] = 5
	}
	if fixedDist, fixedDistMask, ok = buildTable(make([]uint32, 1<<5), lens[:32], distTemplate[:], distRootBits); !ok {
		panic("fixed distance code")
	}
}

// buildTable builds into t (grown if too small) the decoding table of the
// canonical Huffman code with the code lengths lens, each symbol's entry
// made from template[symbol]. It returns the table and the mask of its
// root bits, or false for a code that is over-subscribed or incomplete.
// As zlib and Go's compress/flate, it accepts a code of a single symbol of
// length 1 (its other bit pattern is an invalid code) and a code of no
// symbols at all (every pattern invalid), which fails only when used.
func buildTable(t []uint32, lens []uint8, template []uint32, rootBits uint) ([]uint32, uint64, bool) {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	maxLen := 15
	for maxLen > 0 && count[maxLen] == 0 {
		maxLen--
	}
	if len(t) < 2 {
		t = make([]uint32, 2)
	}
	if maxLen == 0 {
		t[0] = 0
		return t, 0, true
	}
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return t, 0, false
		}
	}
	if left > 0 && !(maxLen == 1 && count[1] == 1) {
		return t, 0, false
	}
	root := min(rootBits, uint(maxLen))
	size := 1 << root
	if size > len(t) {
		t = make([]uint32, max(size, 2*len(t)))
	}
	if left > 0 {
		t[0], t[1] = 0, 0
	}

	// The symbols in canonical order: by length, then by value.
	var next [16]int
	for l := 1; l < 15; l++ {
		next[l+1] = next[l] + count[l]
	}
	var sorted [288]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[next[l]] = uint16(s)
			next[l]++
		}
	}
	n := next[15]

	code := 0 // the next codeword, most significant bit first
	prevLen := 1
	link := -1 // the root index of the current second-level table
	var subStart, subBits int
	for _, s := range sorted[:n] {
		l := int(lens[s])
		code <<= l - prevLen
		prevLen = l
		// Input bits arrive least significant first: the table is indexed
		// by the codeword reversed.
		rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
		if l <= int(root) {
			e := template[s] + uint32(l) + uint32(l)<<8
			for i := rev; i < 1<<root; i += 1 << l {
				t[i] = e
			}
		} else {
			top := rev & (1<<root - 1)
			if top != link {
				// A new second-level table for the codes that start
				// with top: as many bits as its longest code needs
				// beyond the root, found by counting the codes left.
				link = top
				subBits = l - int(root)
				room := 1 << subBits
				for subBits+int(root) < maxLen {
					room -= count[subBits+int(root)]
					if room <= 0 {
						break
					}
					subBits++
					room <<= 1
				}
				subStart = size
				size += 1 << subBits
				if size > len(t) {
					t = append(t, make([]uint32, max(size-len(t), len(t)))...)
				}
				t[top] = entLink | uint32(subStart)<<16 | uint32(root) | uint32(subBits)<<8
			}
			sl := l - int(root)
			e := template[s] + uint32(sl) + uint32(sl)<<8
			for i := rev >> root; i < 1<<subBits; i += 1 << sl {
				t[subStart+i] = e
			}
		}
		count[l]--
		code++
	}
	return t, 1<<root - 1, true
}

// decoder is the state of inflating one stream; decoders are pooled with
// their input buffer and tables.
type decoder struct {
	r        io.ReaderAt
	pos, end int64 // the next offset to read in r, and where reading stops

	buf []byte // the input buffer
	in  []byte // the part of buf read
	ip  int    // the next byte of in to take into bits

	bits  uint64 // input bits not yet used, the next one lowest
	nbits uint   // how many of bits are input; those above may be too
	pad   uint   // zero bytes put into bits past the end of the input

	out    []byte
	op     int
	sum    io.Writer // when not nil, is written out[:op] as it is done
	summed int
	sumAt  int // when op reaches it, out[summed:op] goes to sum

	lit, dist         []uint32 // the current block's tables
	litMask, distMask uint64

	litTab, distTab, clTab []uint32 // the tables of dynamic blocks
	lens                   [286 + 30]uint8
}

// inputChunk is the most read from a pack at once. Every read after the
// first is this size; the first is about the object's size, which is
// rarely smaller than its compressed size, so most objects take one read.
const inputChunk = 64 << 10

// decoders are made with tables of the usual sizes for their root bits;
// buildTable grows one that a code needs more of.
var decoders = sync.Pool{New: func() any {
	return &decoder{
		buf:     make([]byte, inputChunk),
		litTab:  make([]uint32, 2342),
		distTab: make([]uint32, 402),
		clTab:   make([]uint32, 1<<clRootBits),
	}
}}

// sumChunk is how much is inflated before it is written to sum: small
// enough that the bytes are still in the CPU's cache when hashed.
const sumChunk = 32 << 10

// inflateExact inflates the zlib stream that starts at off in r (and ends
// before end) into out, which has the stream's stated size, and writes
// the bytes to sum, when not nil, as they are done. The stream must fill
// out exactly. The Adler-32 trailer is not checked: the caller verifies
// what it inflates by its SHA-1, the stronger check.
func inflateExact(r io.ReaderAt, off, end int64, out []byte, sum io.Writer) error {
	d := decoders.Get().(*decoder)
	d.r, d.pos, d.end = r, off, end
	d.in, d.ip = d.buf[:0], 0
	d.bits, d.nbits, d.pad = 0, 0, 0
	d.out, d.op = out, 0
	d.sum, d.summed, d.sumAt = sum, 0, math.MaxInt
	if sum != nil {
		d.sumAt = sumChunk
	}
	// The first read is about as long as the object: most compress to
	// less, and what is read beyond the stream costs a copy, not a call.
	err := d.fetch(min(len(out)+64, inputChunk))
	if err == nil {
		err = d.inflate()
	}
	if err == nil && sum != nil && d.summed < len(out) {
		sum.Write(out[d.summed:])
	}
	d.r, d.out, d.sum = nil, nil, nil
	d.in = nil
	decoders.Put(d)
	return err
}

// fetch reads up to n more bytes of input after what is left of in. It
// returns an error only for a failed read, not at the end of the input.
func (d *decoder) fetch(n int) error {
	keep := copy(d.buf, d.in[d.ip:])
	n = min(n, len(d.buf)-keep)
	if rest := d.end - d.pos; int64(n) > rest {
		n = int(max(rest, 0))
	}
	d.in, d.ip = d.buf[:keep], 0
	if n == 0 {
		return nil
	}
	m, err := d.r.ReadAt(d.buf[keep:keep+n], d.pos)
	d.pos += int64(m)
	d.in = d.buf[:keep+m]
	if m < n {
		// The file is shorter than stated: what there is, is the input.
		d.end = d.pos
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// refill puts at least 56 bits into bits, reading more of the input when
// in runs out, and zero bytes past the end of the input: a stream that
// uses them ends early, which is found here or at the stream's end.
func (d *decoder) refill() error {
	if d.pad > 0 && d.nbits < 8*d.pad {
		return errDeflateEOF
	}
	for d.nbits <= 56 {
		if d.ip+8 > len(d.in) && d.pos < d.end {
			if err := d.fetch(inputChunk); err != nil {
				return err
			}
		}
		switch {
		case d.ip+8 <= len(d.in):
			d.bits |= binary.LittleEndian.Uint64(d.in[d.ip:]) << d.nbits
			d.ip += int((63 - d.nbits) >> 3)
			d.nbits |= 56
			return nil
		case d.ip < len(d.in):
			d.bits |= uint64(d.in[d.ip]) << d.nbits
			d.ip++
		default:
			d.pad++
		}
		d.nbits += 8
	}
	return nil
}

// need makes sure bits holds at least n input bits (n <= 56).
func (d *decoder) need(n uint) error {
	if d.nbits >= n {
		return nil
	}
	return d.refill()
}

func (d *decoder) drop(n uint) {
	d.bits >>= n
	d.nbits -= n
}

// inflate reads the zlib header and inflates the deflate stream after it.
func (d *decoder) inflate() error {
	if err := d.need(16); err != nil {
		return err
	}
	// Deflate (8), a window of at most 32 KiB, no preset dictionary
	// (git never uses one), and the header's own check (RFC 1950).
	h0, h1 := uint(d.bits&0xff), uint(d.bits>>8&0xff)
	if d.nbits < 16+8*d.pad {
		return errDeflateEOF
	}
	if h0&0x0f != 8 || h0>>4 > 7 || h1&0x20 != 0 || (h0<<8|h1)%31 != 0 {
		return errZlibHeader
	}
	d.drop(16)
	for final := false; !final; {
		if err := d.need(3); err != nil {
			return err
		}
		final = d.bits&1 != 0
		typ := d.bits >> 1 & 3
		d.drop(3)
		var err error
		switch typ {
		case 0:
			err = d.stored()
		case 1:
			d.lit, d.litMask = fixedLit, fixedLitMask
			d.dist, d.distMask = fixedDist, fixedDistMask
			err = d.huffman()
		case 2:
			if err = d.dynamic(); err == nil {
				err = d.huffman()
			}
		default:
			err = errDeflateBlock
		}
		if err != nil {
			return err
		}
	}
	if d.pad > 0 && d.nbits < 8*d.pad {
		return errDeflateEOF
	}
	if d.op != len(d.out) {
		return errDeflateShort
	}
	return nil
}

// stored copies a stored block.
func (d *decoder) stored() error {
	d.drop(d.nbits & 7)
	if err := d.need(32); err != nil {
		return err
	}
	n, nn := int(d.bits&0xffff), int(d.bits>>16&0xffff)
	d.drop(32)
	if d.pad > 0 && d.nbits < 8*d.pad {
		return errDeflateEOF
	}
	if n != ^nn&0xffff {
		return errDeflateStored
	}
	if n > len(d.out)-d.op {
		return errDeflateLong
	}
	// First the whole bytes already taken into bits, then straight from
	// the input.
	for ; n > 0 && d.nbits >= 8; n-- {
		if d.nbits < 8+8*d.pad {
			return errDeflateEOF
		}
		d.out[d.op] = byte(d.bits)
		d.op++
		d.drop(8)
	}
	if d.nbits == 0 {
		// Bits above nbits may hold input ahead of ip, taken again
		// from in.
		d.bits = 0
	}
	for n > 0 {
		if d.ip == len(d.in) {
			if d.pos >= d.end {
				return errDeflateEOF
			}
			if err := d.fetch(inputChunk); err != nil {
				return err
			}
			continue
		}
		m := copy(d.out[d.op:d.op+n], d.in[d.ip:])
		d.op += m
		d.ip += m
		n -= m
	}
	d.flushSum()
	return nil
}

func (d *decoder) flushSum() {
	if d.op >= d.sumAt {
		d.sum.Write(d.out[d.summed:d.op])
		d.summed = d.op
		d.sumAt = d.op + sumChunk
	}
}

// codeOrder is the order of the code length code's lengths (RFC 1951
// 3.2.7).
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads the codes of a dynamic block into d.lit and d.dist.
func (d *decoder) dynamic() error {
	if err := d.need(14); err != nil {
		return err
	}
	nlit := int(d.bits&31) + 257
	ndist := int(d.bits>>5&31) + 1
	nclen := int(d.bits>>10&15) + 4
	d.drop(14)
	if nlit > 286 || ndist > 30 {
		return errDeflateLengths
	}
	var cl [19]uint8
	for _, s := range codeOrder[:nclen] {
		if err := d.need(3); err != nil {
			return err
		}
		cl[s] = uint8(d.bits & 7)
		d.drop(3)
	}
	var ok bool
	var clMask uint64
	if d.clTab, clMask, ok = buildTable(d.clTab, cl[:], clTemplate[:], clRootBits); !ok {
		return errDeflateLengths
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if err := d.need(7 + 7); err != nil {
			return err
		}
		e := d.clTab[d.bits&clMask]
		if e&entLit == 0 {
			return errDeflateCode
		}
		d.drop(uint(e & 31))
		s := uint8(e >> 16)
		if s < 16 {
			lens[i] = s
			i++
			continue
		}
		var rep int
		var l uint8
		switch s {
		case 16:
			if i == 0 {
				return errDeflateLengths
			}
			rep, l = 3+int(d.bits&3), lens[i-1]
			d.drop(2)
		case 17:
			rep = 3 + int(d.bits&7)
			d.drop(3)
		default:
			rep = 11 + int(d.bits&127)
			d.drop(7)
		}
		if i+rep > len(lens) {
			return errDeflateLengths
		}
		for range rep {
			lens[i] = l
			i++
		}
	}
	if d.litTab, d.litMask, ok = buildTable(d.litTab, lens[:nlit], litTemplate[:], litRootBits); !ok {
		return errDeflateLengths
	}
	if d.distTab, d.distMask, ok = buildTable(d.distTab, lens[nlit:], distTemplate[:], distRootBits); !ok {
		return errDeflateLengths
	}
	d.lit, d.dist = d.litTab, d.distTab
	return nil
}

// huffman inflates a block coded with d.lit and d.dist. The state it
// works on is held in local variables, written back around the calls
// that need it in d.
func (d *decoder) huffman() error {
	bitbuf, nbits := d.bits, d.nbits
	in, ip := d.in, d.ip
	out, op := d.out, d.op
	sumAt := d.sumAt
	lit, litMask := d.lit, d.litMask
	dist, distMask := d.dist, d.distMask
	for {
		// A length and a distance take at most 15+5+15+13 = 48 bits.
		if nbits < 48 {
			if ip+8 <= len(in) {
				bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << nbits
				ip += int((63 - nbits) >> 3)
				nbits |= 56
			} else {
				d.bits, d.nbits, d.ip, d.op = bitbuf, nbits, ip, op
				if err := d.refill(); err != nil {
					return err
				}
				bitbuf, nbits, in, ip = d.bits, d.nbits, d.in, d.ip
			}
		}
		if op >= sumAt {
			d.op = op
			d.flushSum()
			sumAt = d.sumAt
		}
		e := lit[bitbuf&litMask]
		if e&entLink != 0 {
			n := uint(e & 31)
			bitbuf >>= n
			nbits -= n
			e = lit[uint64(e>>16)+bitbuf&(1<<(e>>8&15)-1)]
		}
		if e&entLit != 0 {
			n := uint(e & 31)
			bitbuf >>= n
			nbits -= n
			if op >= len(out) {
				return errDeflateLong
			}
			out[op] = byte(e >> 16)
			op++
			continue
		}
		if e&entLen == 0 {
			if e&entEOB == 0 {
				return errDeflateCode
			}
			n := uint(e & 31)
			bitbuf >>= n
			nbits -= n
			d.bits, d.nbits, d.ip, d.op = bitbuf, nbits, ip, op
			return nil
		}
		n := uint(e & 31)
		length := int(e>>16) + int(bitbuf&(1<<n-1)>>(e>>8&15))
		bitbuf >>= n
		nbits -= n

		e = dist[bitbuf&distMask]
		if e&entLink != 0 {
			n := uint(e & 31)
			bitbuf >>= n
			nbits -= n
			e = dist[uint64(e>>16)+bitbuf&(1<<(e>>8&15)-1)]
		}
		if e&entLen == 0 {
			return errDeflateCode
		}
		n = uint(e & 31)
		distance := int(e>>16) + int(bitbuf&(1<<n-1)>>(e>>8&15))
		bitbuf >>= n
		nbits -= n

		if distance > op {
			return errDeflateFar
		}
		if length > len(out)-op {
			return errDeflateLong
		}
		src := op - distance
		switch {
		case length <= 32 && distance >= 8 && op+length+8 <= len(out):
			// A short match a word at a time, the last one past the
			// match's end but inside out, where later bytes overwrite it.
			// A distance of 8 or more means a word never reads what it
			// writes. Longer matches go to copy, which moves more at once.
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[src+i:]))
			}
		case distance >= length:
			copy(out[op:op+length], out[src:])
		default:
			// The match repeats its last distance bytes: copy what is
			// done, doubling each time.
			for i := 0; i < length; {
				i += copy(out[op+i:op+length], out[src:op+i])
			}
		}
		op += length
	}
}
