package gitobj

import (
	"bufio"
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/flate"
)

// Pack entry types that are not object types.
const (
	typeOfsDelta plumbing.ObjectType = 6
	typeRefDelta plumbing.ObjectType = 7
)

// pack is one pack file and its version-2 index, the index held in
// memory (20 bytes and an offset per object) and the pack read in place.
type pack struct {
	name    string
	f       billy.File
	size    int64
	fanout  [256]uint32
	ids     []byte // sorted 20-byte ids
	offsets []byte // 4 bytes each; the high bit points into large
	large   []byte // 8 bytes each
}

func openPack(objects billy.Filesystem, base string) (*pack, error) {
	idx, unmap, mapped := mapIndex(objects, base+".idx")
	if !mapped {
		var err error
		if idx, err = readAll(objects, base+".idx"); err != nil {
			return nil, err
		}
		unmap = func() {}
	}
	f, err := objects.Open(base + ".pack")
	if err != nil {
		unmap()
		return nil, err
	}
	fi, err := objects.Stat(base + ".pack")
	if err != nil {
		unmap()
		f.Close()
		return nil, err
	}
	p := &pack{name: base, f: f, size: fi.Size()}
	if err := p.parseIndex(idx); err != nil {
		unmap()
		f.Close()
		return nil, fmt.Errorf("%s.idx: %w", base, err)
	}
	if mapped {
		// The index's slices point into the mapping: it goes once no
		// one can reach the pack, never while a lookup may still read it.
		runtime.AddCleanup(p, func(release func()) { release() }, unmap)
	}
	return p, nil
}

// readAll reads a file whole into one buffer of its size: a pack index
// of a large repository is several MiB (5 MiB for community-operators-prod),
// and growing a buffer to that size cost a cold check more than its read.
func readAll(fsys billy.Filesystem, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := fsys.Stat(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, noEOFErr(err))
	}
	// A file longer than it was when stated is read as it was: an index
	// is written whole under a temporary name and renamed.
	return b, nil
}

func (p *pack) parseIndex(b []byte) error {
	const head = 8 + 256*4
	if len(b) < head || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return errors.New("not a version 2 pack index")
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(b[8+4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return errors.New("pack index fan-out out of order")
		}
	}
	n := int(p.fanout[255])
	rest := b[head:]
	if len(rest) < n*(20+4+4)+40 {
		return errors.New("truncated pack index")
	}
	p.ids = rest[:n*20]
	rest = rest[n*20+n*4:] // ids, then CRCs (not needed: the content hash is checked)
	p.offsets = rest[:n*4]
	p.large = rest[n*4 : len(rest)-40]
	return nil
}

// find returns the offset of h in the pack.
func (p *pack) find(h plumbing.Hash) (int64, bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(p.fanout[h[0]-1])
	}
	hi := int(p.fanout[h[0]])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(p.ids[m*20:m*20+20], h[:]); {
		case c == 0:
			o := binary.BigEndian.Uint32(p.offsets[m*4:])
			if o&0x80000000 == 0 {
				return int64(o), true
			}
			i := int(o & 0x7fffffff)
			if (i+1)*8 > len(p.large) {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(p.large[i*8:])), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// entry is the header of one pack entry.
type entry struct {
	off    int64
	typ    plumbing.ObjectType // an object type, or one of the delta types
	size   int64               // of the inflated data (for a delta, of the delta)
	data   int64               // where the zlib stream starts
	base   int64               // an offset delta's base
	baseID plumbing.Hash       // a reference delta's base
}

func (e entry) isDelta() bool { return e.typ == typeOfsDelta || e.typ == typeRefDelta }

// entry parses the entry header at off.
func (p *pack) entry(off int64) (entry, error) {
	var buf [64]byte
	if off < 12 || off >= p.size {
		return entry{}, fmt.Errorf("pack offset %d out of range", off)
	}
	n, err := p.f.ReadAt(buf[:], off)
	if err != nil && err != io.EOF {
		return entry{}, err
	}
	b := buf[:n]
	bad := fmt.Errorf("%s.pack: bad entry header at %d: %w", p.name, off, ErrCorrupt)
	if len(b) == 0 {
		return entry{}, bad
	}
	e := entry{off: off, typ: plumbing.ObjectType((b[0] >> 4) & 7)}
	size := uint64(b[0] & 15)
	shift := 4
	i := 1
	for c := b[0]; c&0x80 != 0; i++ {
		if i >= len(b) || shift > 56 {
			return entry{}, bad
		}
		c = b[i]
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	e.size = int64(size)
	switch e.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case typeOfsDelta:
		if i >= len(b) {
			return entry{}, bad
		}
		c := b[i]
		i++
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || rel > 1<<56 {
				return entry{}, bad
			}
			c = b[i]
			i++
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || int64(rel) > off {
			return entry{}, bad
		}
		e.base = off - int64(rel)
	case typeRefDelta:
		if i+20 > len(b) {
			return entry{}, bad
		}
		copy(e.baseID[:], b[i:i+20])
		i += 20
	default:
		return entry{}, bad
	}
	e.data = off + int64(i)
	return e, nil
}

// inflater streams an entry's data.
func (p *pack) inflater(e entry) (io.ReadCloser, error) {
	z, err := inflate(io.NewSectionReader(p.f, e.data, p.size-e.data))
	if err != nil {
		return nil, fmt.Errorf("%s.pack at %d: %v: %w", p.name, e.off, err, ErrCorrupt)
	}
	return z, nil
}

// zstate is a zlib reader and the buffer in front of its input, kept for
// the next object: making them anew for each of the thousands of small
// objects a check reads (trees, OWNERS, ci.yaml) cost more than inflating.
type zstate struct {
	src *bufio.Reader
	z   io.ReadCloser
}

var zpool sync.Pool

// inflater is one use of a zstate; Close gives it back, once.
type inflater struct{ st *zstate }

// inflate starts inflating the zlib stream r.
//
// It reads the zlib header and inflates the deflate stream after it, but
// does not check the stream's Adler-32 trailer: every byte inflated here
// ends up in an object whose SHA-1 is checked against its id (a delta's
// bytes in the object it rebuilds), which is the stronger check of the
// two, and the Adler-32 sum cost about a tenth of a check's time.
func inflate(r io.Reader) (*inflater, error) {
	st, _ := zpool.Get().(*zstate)
	if st == nil {
		st = &zstate{src: bufio.NewReaderSize(r, 16<<10)}
	} else {
		st.src.Reset(r)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(st.src, hdr[:]); err != nil {
		st.src.Reset(nil)
		zpool.Put(st)
		return nil, fmt.Errorf("zlib header: %w", noEOFErr(err))
	}
	// Deflate (8), a window of at most 32 KiB, no preset dictionary
	// (git never uses one), and the header's own check (RFC 1950).
	if hdr[0]&0x0f != 8 || hdr[0]>>4 > 7 || hdr[1]&0x20 != 0 || (uint(hdr[0])<<8|uint(hdr[1]))%31 != 0 {
		st.src.Reset(nil)
		zpool.Put(st)
		return nil, errors.New("zlib: invalid header")
	}
	if st.z == nil {
		st.z = flate.NewReader(st.src)
	} else if err := st.z.(flate.Resetter).Reset(st.src, nil); err != nil {
		st.z = nil
		return nil, err
	}
	return &inflater{st: st}, nil
}

func noEOFErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (z *inflater) Read(p []byte) (int, error) {
	if z.st == nil {
		return 0, errors.New("read of a closed object")
	}
	return z.st.z.Read(p)
}

func (z *inflater) Close() error {
	if z.st != nil {
		z.st.src.Reset(nil)
		zpool.Put(z.st)
		z.st = nil
	}
	return nil
}

// inflateWhole reads an entry's data into one buffer of its stated size.
func (p *pack) inflateWhole(e entry) (plumbing.ObjectType, []byte, error) {
	return p.inflateInto(e, nil)
}

// maxDeflateRatio bounds how much a deflate stream inflates to per byte:
// a match of 258 bytes takes at least two bits. A stated size beyond it is
// a corrupt entry, refused before its buffer is made.
const maxDeflateRatio = 258 * 4

// inflateInto is inflateWhole that also writes the bytes to sum, when
// not nil, as they are inflated, a chunk at a time: hashing a large
// object after inflating it whole reads it from memory a second time.
//
// The stream is inflated straight into the object's buffer, its
// back-references copied from that buffer (see inflateExact): inflating
// through a streaming reader copied every byte out of its window, and
// read the pack 16 KiB at a time.
func (p *pack) inflateInto(e entry, sum io.Writer) (plumbing.ObjectType, []byte, error) {
	if e.size > maxDeflateRatio*(p.size-e.data) {
		return 0, nil, fmt.Errorf("%s.pack at %d: a stated size of %d bytes, more than the rest of the pack inflates to: %w", p.name, e.off, e.size, ErrCorrupt)
	}
	b := make([]byte, e.size)
	if err := inflateExact(p.f, e.data, p.size, b, sum); err != nil {
		return 0, nil, fmt.Errorf("%s.pack at %d: %v: %w", p.name, e.off, err, ErrCorrupt)
	}
	return e.typ, b, nil
}

// objectsFS opens an alternate object directory, relative to objects or
// absolute.
func objectsFS(objects billy.Filesystem, dir string) billy.Filesystem {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(objects.Root(), dir)
	}
	return osfs.New(dir)
}

// baseCache keeps rebuilt objects that deltas apply to, by pack and
// offset, least recently used out first.
type baseCache struct {
	mu    sync.Mutex
	max   int
	size  int
	ll    *list.List
	items map[cacheKey]*list.Element
}

type cacheKey struct {
	p   *pack
	off int64
}

type cacheItem struct {
	key cacheKey
	typ plumbing.ObjectType
	b   []byte
	// verified is the id b was found to hash to, once a read verified
	// it; the zero hash until then (a delta base nothing asked for).
	verified plumbing.Hash
}

func newBaseCache(max int) *baseCache {
	return &baseCache{max: max, ll: list.New(), items: map[cacheKey]*list.Element{}}
}

func (c *baseCache) get(p *pack, off int64) (plumbing.ObjectType, []byte, bool) {
	typ, b, _, ok := c.lookup(p, off)
	return typ, b, ok
}

// lookup is get that also says which id the bytes were verified against,
// if any read verified them.
func (c *baseCache) lookup(p *pack, off int64) (plumbing.ObjectType, []byte, plumbing.Hash, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[cacheKey{p, off}]
	if !ok {
		return 0, nil, plumbing.ZeroHash, false
	}
	c.ll.MoveToFront(el)
	it := el.Value.(*cacheItem)
	return it.typ, it.b, it.verified, true
}

// putVerified is put for bytes that hashed to h, so that the next read of
// them is not hashed again: the bytes are the process's own memory, which
// nothing writes to once kept.
func (c *baseCache) putVerified(p *pack, off int64, typ plumbing.ObjectType, b []byte, h plumbing.Hash) {
	c.put(p, off, typ, b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[cacheKey{p, off}]; ok {
		// What was kept before may be another rebuild of the object:
		// the verified bytes take its place.
		it := el.Value.(*cacheItem)
		c.size += len(b) - len(it.b)
		it.typ, it.b, it.verified = typ, b, h
	}
}

// put keeps b, which nobody may modify afterwards. An object larger than
// a quarter of the cache is not kept: it would push out every other base
// for one.
func (c *baseCache) put(p *pack, off int64, typ plumbing.ObjectType, b []byte) {
	if len(b) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{p, off}
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.ll.PushFront(&cacheItem{key: k, typ: typ, b: b})
	c.size += len(b)
	for c.size > c.max {
		el := c.ll.Back()
		it := el.Value.(*cacheItem)
		c.ll.Remove(el)
		delete(c.items, it.key)
		c.size -= len(it.b)
	}
}
