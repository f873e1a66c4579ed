// Package gitobj reads objects from a git object directory (loose objects,
// pack files and their version-2 indexes, alternates) and verifies every
// one: what a reader gets hashes, as "<type> <size>\x00" + content, to the
// SHA-1 it asked for, or the read fails with ErrCorrupt.
//
// It exists because go-git's own reader streams large delta-compressed
// objects wrongly (v5.16.4 with a large-object threshold hands back other
// bytes for some delta chains), and a check must never judge bytes that are
// not the repository's. It also bounds memory in its own way: an object
// stored whole and opened as a stream is streamed as it is inflated, so
// holding it costs nothing beyond the reader's buffers; one read whole is
// inflated straight into one buffer of its stated size (inflate.go); a
// delta-compressed object is rebuilt in one buffer of its exact size from
// its base (both held only while rebuilding).
// A small cache of delta bases, as git's own, keeps long chains of catalog
// revisions from being inflated again for every object that shares them.
package gitobj

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrCorrupt is what every read that does not hash to the object id it
// was asked for wraps, and every object that cannot be decoded (a broken
// delta, a truncated stream). Such a read has no verdict: the bytes are
// not the repository's.
var ErrCorrupt = errors.New("git object does not match its id")

// MismatchError is a read whose bytes do not hash to the object id asked
// for. It wraps ErrCorrupt.
type MismatchError struct {
	Object plumbing.Hash // the id asked for
	Got    plumbing.Hash // what the bytes read hash to
	Size   int64         // how many content bytes were read
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("git object %s reads back as %s (%d bytes): the object store is corrupt or was misread", e.Object, e.Got, e.Size)
}

// Unwrap lets errors.Is(err, ErrCorrupt) hold.
func (e *MismatchError) Unwrap() error { return ErrCorrupt }

func corruptf(h plumbing.Hash, format string, args ...any) error {
	return fmt.Errorf("git object %s: %s: %w", h, fmt.Sprintf(format, args...), ErrCorrupt)
}

// Store reads the objects of one object directory. It is safe for
// concurrent use.
type Store struct {
	fs billy.Filesystem // the objects directory

	mu    sync.Mutex
	packs []*pack
	seen  map[string]bool // pack index files opened so far
	alts  []*Store
	cache *baseCache
	// fetch, when set, is asked for an object no one holds (see
	// SetFetch).
	fetch func(plumbing.Hash) error
	// reading are the objects ReadShared is rebuilding now.
	reading map[cacheKey]*inflight
}

// SetFetch has the store ask fetch for an object that neither it nor its
// alternates hold, as a partial clone's promisor remote would be asked,
// and look again once fetch returns nil: what fetch added is read and
// verified like the rest. An error of fetch is returned with
// plumbing.ErrObjectNotFound.
func (s *Store) SetFetch(fetch func(plumbing.Hash) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetch = fetch
}

// DefaultCacheBytes bounds the cache of delta bases and of objects read
// whole (at most a quarter of it each). Catalog files are rarely above a
// few MiB, and one chain's bases fit many times over. It is no larger:
// a cold check reads every catalog blob of the base once, and each fresh
// page a larger cache held cost a page fault; at 32 MiB a cold check of
// community-operators-prod took 0.85 CPU-s and 112 MiB, at 16 MiB 0.68 and
// 85 MiB, with no change for a check whose package index is on disk.
const DefaultCacheBytes = 16 << 20

// New opens the object directory objects (a repository's "objects"
// folder), with the alternates it lists.
func New(objects billy.Filesystem) (*Store, error) {
	return newStore(objects, 0)
}

func newStore(objects billy.Filesystem, depth int) (*Store, error) {
	s := &Store{fs: objects, seen: map[string]bool{}, cache: newBaseCache(DefaultCacheBytes)}
	if err := s.scanPacks(); err != nil {
		return nil, err
	}
	if depth < 5 { // git's own bound on nested alternates
		alts, err := readAlternates(objects)
		if err != nil {
			return nil, err
		}
		for _, dir := range alts {
			a, err := newStore(objectsFS(objects, dir), depth+1)
			if err != nil {
				return nil, fmt.Errorf("alternate object directory %s: %w", dir, err)
			}
			s.alts = append(s.alts, a)
		}
	}
	return s, nil
}

// Close releases the pack files.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, p := range s.packs {
		errs = append(errs, p.f.Close())
	}
	s.packs = nil
	for _, a := range s.alts {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}

// scanPacks opens the pack files not seen yet: a fetch adds packs to a
// repository while it is open.
func (s *Store) scanPacks() error {
	infos, err := s.fs.ReadDir("pack")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, fi := range infos {
		name := fi.Name()
		if !strings.HasSuffix(name, ".idx") || s.seen[name] {
			continue
		}
		p, err := openPack(s.fs, path.Join("pack", strings.TrimSuffix(name, ".idx")))
		if errors.Is(err, fs.ErrNotExist) {
			continue // an index whose pack is still being written, or gone
		}
		if err != nil {
			return err
		}
		s.seen[name] = true
		s.packs = append(s.packs, p)
	}
	return nil
}

// location is where an object is stored: in a pack at an offset, or loose.
type location struct {
	store *Store
	pack  *pack
	off   int64
}

// locate finds h in this store or its alternates; ok is false when no
// one holds it. Only when no one does are the pack directories listed
// again, for packs added since (by a fetch).
func (s *Store) locate(h plumbing.Hash) (location, bool, error) {
	return s.lookup(h, true)
}

// lookup is locate, asking the store's fetch for what it lacks only when
// fetch is true.
func (s *Store) lookup(h plumbing.Hash, fetch bool) (location, bool, error) {
	if l, ok := s.find(h); ok {
		return l, true, nil
	}
	changed, err := s.rescan()
	if err != nil {
		return location{}, false, err
	}
	if changed {
		if l, ok := s.find(h); ok {
			return l, true, nil
		}
	}
	s.mu.Lock()
	get := s.fetch
	s.mu.Unlock()
	if get == nil || !fetch {
		return location{}, false, nil
	}
	if err := get(h); err != nil {
		return location{}, false, &NotFetchedError{Object: h, Err: err}
	}
	if _, err := s.rescan(); err != nil {
		return location{}, false, err
	}
	l, ok := s.find(h)
	return l, ok, nil
}

// NotFetchedError is an object the store does not hold and could not
// fetch (SetFetch). It wraps plumbing.ErrObjectNotFound and the reason.
type NotFetchedError struct {
	Object plumbing.Hash
	Err    error
}

func (e *NotFetchedError) Error() string {
	return fmt.Sprintf("git object %s: %v: %v", e.Object, plumbing.ErrObjectNotFound, e.Err)
}

// Unwrap lets errors.Is(err, plumbing.ErrObjectNotFound) hold, and
// errors.As find the reason.
func (e *NotFetchedError) Unwrap() []error { return []error{plumbing.ErrObjectNotFound, e.Err} }

// find looks for h in the packs opened so far, this store's and its
// alternates', and only then loose: nearly every object of a clone is
// packed, and the look for a loose one is a file system call.
func (s *Store) find(h plumbing.Hash) (location, bool) {
	if l, ok := s.findPacked(h); ok {
		return l, true
	}
	return s.findLoose(h)
}

func (s *Store) findPacked(h plumbing.Hash) (location, bool) {
	s.mu.Lock()
	packs := s.packs
	s.mu.Unlock()
	for _, p := range packs {
		if off, ok := p.find(h); ok {
			return location{store: s, pack: p, off: off}, true
		}
	}
	for _, a := range s.alts {
		if l, ok := a.findPacked(h); ok {
			return l, true
		}
	}
	return location{}, false
}

func (s *Store) findLoose(h plumbing.Hash) (location, bool) {
	if _, err := s.fs.Stat(loosePath(h)); err == nil {
		return location{store: s}, true
	}
	for _, a := range s.alts {
		if l, ok := a.findLoose(h); ok {
			return l, true
		}
	}
	return location{}, false
}

// rescan opens the packs added to this store and its alternates since
// they were last listed, and reports whether there were any.
func (s *Store) rescan() (bool, error) {
	s.mu.Lock()
	before := len(s.packs)
	err := s.scanPacks()
	changed := len(s.packs) != before
	s.mu.Unlock()
	if err != nil {
		return false, err
	}
	for _, a := range s.alts {
		c, err := a.rescan()
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

func loosePath(h plumbing.Hash) string {
	s := h.String()
	return s[:2] + "/" + s[2:]
}

// Has reports whether the store holds h. It never fetches: go-git asks
// it of objects it is about to write.
func (s *Store) Has(h plumbing.Hash) (bool, error) {
	_, ok, err := s.lookup(h, false)
	return ok, err
}

// Header returns the type and size of h without reading its content
// (for a delta, only the start of the delta is inflated).
func (s *Store) Header(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	l, ok, err := s.locate(h)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, plumbing.ErrObjectNotFound
	}
	if l.pack == nil {
		r, err := l.store.openLoose(h)
		if err != nil {
			return 0, 0, err
		}
		defer r.Close()
		return r.typ, r.size, nil
	}
	return l.store.packedHeader(h, l.pack, l.off)
}

// Open returns a reader of h's content, with its type and size. The
// reader verifies what it hands over: at the end of the content its Read
// returns a *MismatchError instead of io.EOF if the bytes do not hash to h.
func (s *Store) Open(h plumbing.Hash) (io.ReadCloser, plumbing.ObjectType, int64, error) {
	l, ok, err := s.locate(h)
	if err != nil {
		return nil, 0, 0, err
	}
	if !ok {
		return nil, 0, 0, plumbing.ErrObjectNotFound
	}
	if l.pack == nil {
		r, err := l.store.openLoose(h)
		if err != nil {
			return nil, 0, 0, err
		}
		return r, r.typ, r.size, nil
	}
	e, err := l.pack.entry(l.off)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("git object %s: %w", h, err)
	}
	if !e.isDelta() {
		// A check reads a touched catalog file more than once (its
		// validation, the release guard): the second read takes the
		// content the first one inflated, kept as a delta base would be,
		// and verifies it again.
		if typ, b, ok := l.store.cache.get(l.pack, l.off); ok {
			return newVerifier(h, typ, int64(len(b)), bytes.NewReader(b), nil), typ, int64(len(b)), nil
		}
		zr, err := l.pack.inflater(e)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("git object %s: %w", h, err)
		}
		v := newVerifier(h, e.typ, e.size, zr, zr)
		if e.size <= int64(l.store.cache.max/4) {
			pk, off, typ := l.pack, l.off, e.typ
			v.keep = make([]byte, 0, e.size)
			v.verified = func(b []byte) { l.store.cache.put(pk, off, typ, b) }
		}
		return v, e.typ, e.size, nil
	}
	typ, b, err := l.store.packed(h, l.pack, l.off)
	if err != nil {
		return nil, 0, 0, err
	}
	return newVerifier(h, typ, int64(len(b)), bytes.NewReader(b), nil), typ, int64(len(b)), nil
}

// Read returns h's content whole, verified.
func (s *Store) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	l, ok, err := s.locate(h)
	if err != nil {
		return 0, nil, err
	}
	if ok && l.pack != nil {
		typ, b, v, cached := l.store.cache.lookup(l.pack, l.off)
		if cached && v == h {
			return typ, bytes.Clone(b), nil
		}
		e, err := l.pack.entry(l.off)
		if err == nil && !e.isDelta() && !cached {
			// Trees and commits: inflated straight into the caller's
			// buffer and hashed as they are inflated; a copy is kept for
			// the next read, as Open keeps one.
			typ, b, err := l.pack.inflateVerified(h, e)
			if err != nil {
				return 0, nil, err
			}
			if e.size <= int64(l.store.cache.max/4) {
				l.store.cache.putVerified(l.pack, l.off, typ, bytes.Clone(b), h)
			}
			return typ, b, nil
		}
		if err == nil && e.isDelta() {
			// Rebuilt in a buffer of its own already: verify it in place
			// rather than copy it.
			typ, b, err := l.store.packed(h, l.pack, l.off)
			if err != nil {
				return 0, nil, err
			}
			if err := verify(h, typ, b); err != nil {
				return 0, nil, err
			}
			return typ, b, nil
		}
	}
	r, typ, size, err := s.Open(h)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	// One buffer of the exact size: growing one would hold up to twice
	// a large object at once.
	b := make([]byte, size)
	if err := readExactly(r, b); err != nil {
		return 0, nil, noEOF(h, err)
	}
	return typ, b, nil
}

// ReadShared is Read for a caller that only reads what it gets, as a
// catalog decoder does: the content is not copied out of the cache of
// delta bases when it is there, and a whole object inflated here is kept
// in that cache for the next read of it. It is verified all the same, on
// every read. The caller must not modify the bytes.
func (s *Store) ReadShared(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	l, ok, err := s.locate(h)
	if err != nil {
		return 0, nil, err
	}
	if !ok || l.pack == nil {
		return s.Read(h)
	}
	if typ, b, v, cached := l.store.cache.lookup(l.pack, l.off); cached {
		// The cache also holds the objects a delta chain passed through,
		// which nothing verified: those are verified before anyone sees
		// them, and marked so that the next read is not hashed again.
		if v == h {
			return typ, b, nil
		}
		if err := verify(h, typ, b); err != nil {
			return 0, nil, err
		}
		l.store.cache.putVerified(l.pack, l.off, typ, b, h)
		return typ, b, nil
	}
	// A change to one package of a catalog per OpenShift version asks for
	// the same blob from a dozen catalogs at once: one of them rebuilds
	// it, the others wait for its bytes.
	return l.store.shared(cacheKey{l.pack, l.off}, func() (plumbing.ObjectType, []byte, error) {
		e, err := l.pack.entry(l.off)
		if err != nil {
			return 0, nil, fmt.Errorf("git object %s: %w", h, err)
		}
		var typ plumbing.ObjectType
		var b []byte
		if e.isDelta() {
			if typ, b, err = l.store.packed(h, l.pack, l.off); err != nil {
				return 0, nil, err
			}
			if err := verify(h, typ, b); err != nil {
				return 0, nil, err
			}
		} else {
			if typ, b, err = l.pack.inflateVerified(h, e); err != nil {
				return 0, nil, err
			}
		}
		l.store.cache.putVerified(l.pack, l.off, typ, b, h)
		return typ, b, nil
	})
}

// inflateVerified inflates the whole object of entry e, hashed as it is
// inflated, and judges it against h before anyone sees it.
func (p *pack) inflateVerified(h plumbing.Hash, e entry) (plumbing.ObjectType, []byte, error) {
	d := sha1.New()
	d.Write(objectHeader(e.typ, e.size))
	typ, b, err := p.inflateInto(e, d)
	if err != nil {
		return 0, nil, fmt.Errorf("git object %s: %w", h, err)
	}
	var got plumbing.Hash
	copy(got[:], d.Sum(nil))
	if got != h {
		return 0, nil, &MismatchError{Object: h, Got: got, Size: int64(len(b))}
	}
	return typ, b, nil
}

// inflight is one read of a packed object that others wait for.
type inflight struct {
	done chan struct{}
	typ  plumbing.ObjectType
	b    []byte
	err  error
}

// shared runs read for the object at k once for all who ask at the same
// time, and gives each of them its result.
func (s *Store) shared(k cacheKey, read func() (plumbing.ObjectType, []byte, error)) (plumbing.ObjectType, []byte, error) {
	s.mu.Lock()
	if c, ok := s.reading[k]; ok {
		s.mu.Unlock()
		<-c.done
		return c.typ, c.b, c.err
	}
	c := &inflight{done: make(chan struct{})}
	if s.reading == nil {
		s.reading = map[cacheKey]*inflight{}
	}
	s.reading[k] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.reading, k)
		s.mu.Unlock()
		close(c.done)
	}()
	c.typ, c.b, c.err = read()
	return c.typ, c.b, c.err
}

func verify(h plumbing.Hash, typ plumbing.ObjectType, b []byte) error {
	d := sha1.New()
	d.Write(objectHeader(typ, int64(len(b))))
	d.Write(b)
	var got plumbing.Hash
	copy(got[:], d.Sum(nil))
	if got != h {
		return &MismatchError{Object: h, Got: got, Size: int64(len(b))}
	}
	return nil
}

// ReadExactly fills b from a reader of NewReader or Store.Open and
// returns its verdict, which io.ReadFull would drop with the last bytes.
func ReadExactly(r io.Reader, b []byte) error { return readExactly(r, b) }

func readExactly(r io.Reader, b []byte) error {
	n := 0
	for {
		m, err := r.Read(b[n:])
		n += m
		if err == io.EOF && n == len(b) {
			return nil
		}
		if err != nil {
			return err
		}
		if n == len(b) && m == 0 {
			// Only a reader not from this package gets here.
			return errors.New("reader did not end at the object's size")
		}
	}
}

// noEOF turns an early end of an object into a corruption error.
func noEOF(h plumbing.Hash, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf(h, "ends early")
	}
	return err
}

// Verify checks that b, as an object of type typ, hashes to h.
func Verify(h plumbing.Hash, typ plumbing.ObjectType, b []byte) error { return verify(h, typ, b) }

// NewReader verifies r, the content of object h of type typ and size
// bytes, as it is read: the last bytes come with io.EOF, or with a
// *MismatchError if they do not hash to h.
func NewReader(h plumbing.Hash, typ plumbing.ObjectType, size int64, r io.Reader) io.Reader {
	return newVerifier(h, typ, size, r, nil)
}

// verifier hashes what passes through it and judges it at the end.
type verifier struct {
	want   plumbing.Hash
	typ    plumbing.ObjectType
	size   int64
	n      int64
	h      hash.Hash
	r      io.Reader
	closer io.Closer
	err    error
	// keep, when not nil, collects the content as it is read, and
	// verified receives it once the whole object hashed to its id.
	keep     []byte
	verified func([]byte)
}

func newVerifier(want plumbing.Hash, typ plumbing.ObjectType, size int64, r io.Reader, c io.Closer) *verifier {
	v := &verifier{want: want, typ: typ, size: size, h: sha1.New(), r: r, closer: c}
	v.h.Write(objectHeader(typ, size))
	return v
}

func objectHeader(typ plumbing.ObjectType, size int64) []byte {
	return []byte(typ.String() + " " + strconv.FormatInt(size, 10) + "\x00")
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	// Never hand over more than the stated size: a longer stream is
	// corrupt, and its excess is not the object's.
	if rest := v.size - v.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if v.keep != nil {
		v.keep = append(v.keep, p[:n]...)
	}
	if err != nil && err != io.EOF {
		v.err = err
		return n, err
	}
	if v.n == v.size {
		var got plumbing.Hash
		copy(got[:], v.h.Sum(nil))
		if got != v.want {
			v.err = &MismatchError{Object: v.want, Got: got, Size: v.n}
		} else {
			v.err = io.EOF
			if v.verified != nil {
				v.verified(v.keep)
				v.verified, v.keep = nil, nil
			}
		}
		// The verdict comes with the last bytes: a reader that stops
		// once it has the size it expected (io.ReadFull) must see it.
		return n, v.err
	}
	if err == io.EOF {
		v.err = corruptf(v.want, "ends after %d of %d bytes", v.n, v.size)
		if n > 0 {
			return n, nil
		}
		return 0, v.err
	}
	return n, nil
}

func (v *verifier) Close() error {
	if v.closer != nil {
		return v.closer.Close()
	}
	return nil
}

// looseReader is a loose object's content after its header.
type looseReader struct {
	*verifier
	f billy.File
	z io.ReadCloser
}

func (r *looseReader) Close() error {
	return errors.Join(r.z.Close(), r.f.Close())
}

// openLoose opens a loose object: a zlib stream of "<type> <size>\x00"
// and the content.
func (s *Store) openLoose(h plumbing.Hash) (*looseReader, error) {
	f, err := s.fs.Open(loosePath(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	z, err := inflate(f)
	if err != nil {
		f.Close()
		return nil, corruptf(h, "loose object: %v", err)
	}
	br := bufio.NewReaderSize(z, 4<<10)
	hdr, err := br.ReadString(0)
	if err != nil || len(hdr) > 32 {
		z.Close()
		f.Close()
		return nil, corruptf(h, "loose object without a header")
	}
	ts, ss, ok := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	typ, terr := plumbing.ParseObjectType(ts)
	size, serr := strconv.ParseInt(ss, 10, 64)
	if !ok || terr != nil || serr != nil || size < 0 || !typ.Valid() {
		z.Close()
		f.Close()
		return nil, corruptf(h, "loose object header %q", hdr)
	}
	return &looseReader{verifier: newVerifier(h, typ, size, br, nil), f: f, z: z}, nil
}

// packedHeader is Header for a packed object.
func (s *Store) packedHeader(h plumbing.Hash, p *pack, off int64) (plumbing.ObjectType, int64, error) {
	e, err := p.entry(off)
	if err != nil {
		return 0, 0, fmt.Errorf("git object %s: %w", h, err)
	}
	if !e.isDelta() {
		return e.typ, e.size, nil
	}
	// The size is the delta's target size, at its start.
	zr, err := p.inflater(e)
	if err != nil {
		return 0, 0, fmt.Errorf("git object %s: %w", h, err)
	}
	br := bufio.NewReaderSize(zr, 64)
	_, err1 := binary.ReadUvarint(br)
	size, err2 := binary.ReadUvarint(br)
	zr.Close()
	if err1 != nil || err2 != nil {
		return 0, 0, corruptf(h, "delta without sizes")
	}
	// The type is that of the chain's whole object.
	for depth := 0; e.isDelta(); depth++ {
		if depth > maxChain {
			return 0, 0, corruptf(h, "delta chain longer than %d", maxChain)
		}
		if p, e, err = s.deltaBase(h, p, e); err != nil {
			return 0, 0, err
		}
	}
	return e.typ, int64(size), nil
}

// maxChain bounds a delta chain: git's deepest is a few thousand with
// --depth, and a crafted pack could loop.
const maxChain = 10000

// deltaBase is the entry a delta entry applies to.
func (s *Store) deltaBase(h plumbing.Hash, p *pack, e entry) (*pack, entry, error) {
	if e.typ == typeOfsDelta {
		b, err := p.entry(e.base)
		if err != nil {
			return nil, entry{}, fmt.Errorf("git object %s: delta base: %w", h, err)
		}
		return p, b, nil
	}
	l, ok, err := s.locate(e.baseID)
	if err != nil {
		return nil, entry{}, err
	}
	if !ok || l.pack == nil {
		// A thin pack's base stored loose is legal but not made by git's
		// own repack; treat it as a base read whole.
		return nil, entry{}, errLooseBase
	}
	b, err := l.pack.entry(l.off)
	if err != nil {
		return nil, entry{}, fmt.Errorf("git object %s: delta base: %w", h, err)
	}
	return l.pack, b, nil
}

var errLooseBase = errors.New("delta base stored loose")

// packed rebuilds the packed object at off whole: the chain of deltas is
// followed down to a whole object (or one in the cache), then applied
// back up. The result is not yet verified.
func (s *Store) packed(h plumbing.Hash, p *pack, off int64) (plumbing.ObjectType, []byte, error) {
	type link struct {
		p *pack
		e entry
	}
	var chain []link
	var base []byte
	var typ plumbing.ObjectType
	cp, coff := p, off
	for depth := 0; ; depth++ {
		if depth > maxChain {
			return 0, nil, corruptf(h, "delta chain longer than %d", maxChain)
		}
		if t, b, ok := s.cache.get(cp, coff); ok {
			typ, base = t, b
			if len(chain) == 0 {
				// The object itself: the caller owns what it gets.
				base = bytes.Clone(b)
			}
			break
		}
		e, err := cp.entry(coff)
		if err != nil {
			return 0, nil, fmt.Errorf("git object %s: %w", h, err)
		}
		if !e.isDelta() {
			if typ, base, err = cp.inflateWhole(e); err != nil {
				return 0, nil, fmt.Errorf("git object %s: %w", h, err)
			}
			if len(chain) > 0 {
				s.cache.put(cp, coff, typ, base)
			}
			break
		}
		chain = append(chain, link{cp, e})
		if e.typ == typeRefDelta {
			bp, be, err := s.deltaBase(h, cp, e)
			if errors.Is(err, errLooseBase) {
				var t plumbing.ObjectType
				if t, base, err = s.Read(e.baseID); err != nil {
					return 0, nil, err
				}
				typ = t
				break
			}
			if err != nil {
				return 0, nil, err
			}
			cp, coff = bp, be.off
			continue
		}
		coff = e.base
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		_, delta, err := l.p.inflateWhole(l.e)
		if err != nil {
			return 0, nil, fmt.Errorf("git object %s: %w", h, err)
		}
		if base, err = patch(base, delta); err != nil {
			return 0, nil, corruptf(h, "%v", err)
		}
		if i > 0 {
			// An intermediate object is a base for the next: worth keeping.
			s.cache.put(l.p, l.e.off, typ, base)
		}
	}
	return typ, base, nil
}

// patch applies a git delta to base.
func patch(base, delta []byte) ([]byte, error) {
	r := bytes.NewReader(delta)
	srcSize, err := binary.ReadUvarint(r)
	if err != nil || srcSize != uint64(len(base)) {
		return nil, fmt.Errorf("delta for a base of %d bytes applied to %d", srcSize, len(base))
	}
	dstSize, err := binary.ReadUvarint(r)
	if err != nil || dstSize > 1<<40 {
		return nil, errors.New("delta without a target size")
	}
	out := make([]byte, 0, dstSize)
	d := delta[len(delta)-r.Len():]
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		switch {
		case op&0x80 != 0:
			var offset, size uint64
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(d) == 0 {
						return nil, errors.New("truncated delta copy")
					}
					offset |= uint64(d[0]) << (8 * i)
					d = d[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(d) == 0 {
						return nil, errors.New("truncated delta copy")
					}
					size |= uint64(d[0]) << (8 * i)
					d = d[1:]
				}
			}
			if size == 0 {
				size = 0x10000
			}
			if offset+size > uint64(len(base)) || uint64(len(out))+size > dstSize {
				return nil, errors.New("delta copy out of bounds")
			}
			out = append(out, base[offset:offset+size]...)
		case op != 0:
			if int(op) > len(d) || uint64(len(out))+uint64(op) > dstSize {
				return nil, errors.New("delta insert out of bounds")
			}
			out = append(out, d[:op]...)
			d = d[op:]
		default:
			return nil, errors.New("reserved delta opcode 0")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("delta made %d bytes, not %d", len(out), dstSize)
	}
	return out, nil
}

// readAlternates lists the directories objects/info/alternates names.
func readAlternates(objects billy.Filesystem) ([]string, error) {
	f, err := objects.Open("info/alternates")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dirs = append(dirs, line)
	}
	return dirs, sc.Err()
}
