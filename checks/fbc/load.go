package fbc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

const indexIgnore = ".indexignore"

// pos places a blob: its file, the line where it starts, and its byte span
// (kept so a finding can be narrowed to the exact line of a field later).
type pos struct {
	File  string
	Line  int
	Start int
	End   int
}

// loadError is a problem that stops opm's loader (phase 1).
type loadError struct {
	pos
	rule string
	err  error
}

// The typed records kept per blob. They hold what validation needs and no
// more: a bundle's manifests and CSV metadata are checked while the file is
// decoded and then dropped.
type pkgRec struct {
	pos
	name, defaultChannel string
}

type chRec struct {
	pos
	name, pkg string
	entries   []declcfg.ChannelEntry
}

type bundleRec struct {
	pos
	name, pkg, image string
	related          []declcfg.RelatedImage
	// propErr is the C11 failure of property.Parse, if any.
	propErr  error
	packages []property.Package
	// maxOCP is the olm.maxOpenShiftVersion, as property.Parsed has it.
	maxOCP string
	// objects counts olm.bundle.object properties that decoded at load time.
	objects int
}

type depRec struct {
	pos
	pkg     string
	entries []declcfg.DeprecationEntry
}

// fileResult is everything one file contributed, in document order.
type fileResult struct {
	path     string
	size     int64
	packages []pkgRec
	channels []chRec
	bundles  []bundleRec
	deps     []depRec
	others   int
	errs     []loadError
	images   []ImageRef
	// fastDocs counts documents the fast path took.
	fastDocs int
	// readErr says the file could not be read: such a result is not
	// shared, so that a later load tries again.
	readErr bool
	// config holds the complete blobs when Options.full asks for them.
	config *declcfg.DeclarativeConfig
	// blobs are the documents' Blobs when Options.blobs asks for them
	// (Cache.Blobs), in file order; a document typed on its own holds
	// its Blob at line 0 under a review's cache (docMemo), whoever asks.
	blobs     []Blob
	keepBlobs bool
}

// catalog is a loaded tree: records from every file in lexical path order,
// which is the order opm walks files in.
type catalog struct {
	files []*fileResult
	// walkErrs are failures to list the tree or read .indexignore files.
	walkErrs []loadError
}

// read says whether every file of cat was read: what is made of a tree
// with a file that could not be read is not kept, as such a file is not
// (see Cache.load).
func (cat *catalog) read() bool {
	for _, f := range cat.files {
		if f.readErr {
			return false
		}
	}
	return true
}

// listFiles returns the paths opm would read, in lexical order: every
// regular file and symlink that no .indexignore pattern excludes (spec L1-L3).
func listFiles(fsys fs.FS) ([]string, []loadError) {
	var errs []loadError
	var patterns []gitignore.Pattern
	var files []string
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, loadError{pos: pos{File: p}, rule: "L0", err: err})
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Name() == indexIgnore {
			ps, err := readIgnore(fsys, p)
			if err != nil {
				errs = append(errs, loadError{pos: pos{File: p}, rule: "L2", err: err})
			}
			patterns = append(patterns, ps...)
			return nil
		}
		files = append(files, p)
		return nil
	})
	if len(patterns) == 0 {
		return files, errs
	}
	// Patterns apply to every file wherever they were found (the walk
	// collects all of them before matching, as opm does), later ones winning.
	m := gitignore.NewMatcher(patterns)
	kept := files[:0]
	for _, f := range files {
		if !m.Match(strings.Split(f, "/"), false) {
			kept = append(kept, f)
		}
	}
	return kept, errs
}

func readIgnore(fsys fs.FS, p string) ([]gitignore.Pattern, error) {
	var domain []string
	if dir := path.Dir(p); dir != "." {
		domain = strings.Split(dir, "/")
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps, sc.Err()
}

// load reads and decodes every file of the tree, concurrency files at once.
//
// exact turns off the fast path for plain YAML documents, leaving only the
// decoding that mirrors opm step by step; tests compare the two.
func load(ctx context.Context, fsys fs.FS, opts Options) (*catalog, error) {
	paths, walkErrs := listFiles(fsys)
	return loadListed(ctx, fsys, paths, walkErrs, opts)
}

// contentKey names the files paths of fsys by their paths and git object
// ids, with the options that change what a load makes of them: two trees
// with the same key hold the same bytes under the same names, so what is
// made of one (a validation, a placed load) is what would be made of the
// other. Each file is opened, as a load would open it, so that a reader
// that counts what is opened (a pull request check's limits) counts it
// whether or not the load is made again. False when a file's id is not
// known (not a regular file of a git tree), one does not open, or the
// listing failed: such a tree is loaded for itself.
func contentKey(fsys fs.FS, paths []string, walkErrs []loadError, opts Options) (k [sha256.Size]byte, ok bool) {
	if len(walkErrs) > 0 || opts.owned {
		return k, false
	}
	h := sha256.New()
	fmt.Fprintf(h, "images=%t exact=%t full=%t mentions=%t blobs=%t\n", opts.Images, opts.exact, opts.full, opts.mentions, opts.blobs)
	for _, p := range paths {
		f, err := fsys.Open(p)
		if err != nil {
			return k, false
		}
		st, err := f.Stat()
		f.Close()
		if err != nil || !st.Mode().IsRegular() {
			return k, false
		}
		id, isID := st.Sys().(plumbing.Hash)
		if !isID || id.IsZero() {
			return k, false
		}
		fmt.Fprintf(h, "%s\x00%s\n", p, id)
	}
	h.Sum(k[:0])
	return k, true
}

// loadListed is load of the files paths that listFiles listed in fsys.
func loadListed(ctx context.Context, fsys fs.FS, paths []string, walkErrs []loadError, opts Options) (*catalog, error) {
	concurrency := opts.Concurrency
	cat := &catalog{files: make([]*fileResult, len(paths)), walkErrs: walkErrs}
	if concurrency <= 0 {
		concurrency = runtime.GOMAXPROCS(0)
	}
	concurrency = min(concurrency, max(len(paths), 1))
	next := make(chan int)
	var wg sync.WaitGroup
	cache := CacheFrom(ctx)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cat.files[i] = loadFile(fsys, paths[i], opts, cache)
			}
		}()
	}
	var err error
feed:
	for i := range paths {
		if err = ctx.Err(); err != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := misread(cat); err != nil {
		return nil, err
	}
	return cat, nil
}

// misread returns the first failure, in path order, to read a file or
// list a directory because the bytes read are not the repository's (a git
// object that does not hash to its id) or there were none (a git object
// missing, as in a partial clone). Such a catalog has no verdict: judging
// it would judge other bytes than the ones under review, or take a file
// nobody read for one that failed to load (and, on both sides of a
// change, for a failure already there), so it is an error, not a finding.
func misread(cat *catalog) error {
	for _, e := range cat.walkErrs {
		if unread(e.err) {
			return e.err
		}
	}
	for _, f := range cat.files {
		for _, e := range f.errs {
			if unread(e.err) {
				return e.err
			}
		}
	}
	return nil
}

func unread(err error) bool {
	return errors.Is(err, gitobj.ErrCorrupt) || errors.Is(err, plumbing.ErrObjectNotFound)
}

// loadFile decodes the file p of fsys. With a cache, a file whose bytes
// were decoded already in the pass is not decoded again: the records are
// read only, by every load that shares them. A file of a git tree names
// its bytes by its object id, which the tree's reads verify: such a file
// decoded already is not even read again.
func loadFile(fsys fs.FS, p string, opts Options, cache *Cache) *fileResult {
	f, err := fsys.Open(p)
	if err != nil {
		return decodeFile(p, nil, err, opts)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		st = nil
	}
	if cache != nil && !opts.mentions && !opts.exact && !opts.Images && !opts.owned &&
		st != nil && st.Mode().IsRegular() && st.Size() < LargeFile {
		// Under a review's cache the touched packages are also loaded
		// whole (the release guard, the graphs, the cards), from the same
		// files the validation reads: one whole decode serves both, since
		// its records are those a lean one makes (TestFastPathGolden). A
		// large file stays lean: a whole decode of a bundle's manifests
		// holds several times the file, kept as long as the review, where
		// the lean one holds about the file (BenchmarkCheckBigFiles).
		opts.full = true
	}
	if cache != nil && opts.full && !opts.owned {
		opts.docs = &cache.docs
	}
	if st != nil {
		if k, ok := cache.objectKey(st, p, opts); ok {
			return cache.load(k, func() *fileResult { return readDecode(f, st, p, opts) })
		}
	}
	data, release, err := readOpen(f, st)
	defer release()
	if err == nil {
		if k, ok := cache.key(data, p, opts); ok {
			return cache.load(k, func() *fileResult { return decodeFile(p, data, nil, opts) })
		}
	}
	return decodeFile(p, data, err, opts)
}

// readDecode reads the open file f and decodes it.
func readDecode(f fs.File, st fs.FileInfo, p string, opts Options) *fileResult {
	data, release, err := readOpen(f, st)
	defer release()
	fr := decodeFile(p, data, err, opts)
	fr.readErr = err != nil
	return fr
}

// decodeFile decodes data, the content of p, or records readErr.
func decodeFile(p string, data []byte, err error, opts Options) *fileResult {
	fr := &fileResult{path: p, keepBlobs: opts.blobs}
	fastPath := !opts.exact && !opts.full
	if opts.full && !opts.blobs {
		fr.config = &declcfg.DeclarativeConfig{}
	}
	fr.size = int64(len(data))
	if err != nil {
		// A caller's file system may refuse a read with a rule of its
		// own (a size limit, say), which the finding keeps.
		rule := "L0"
		var ruled interface{ Rule() string }
		if errors.As(err, &ruled) {
			rule = ruled.Rule()
		}
		fr.errs = append(fr.errs, loadError{pos: pos{File: p}, rule: rule, err: err})
		return fr
	}
	if opts.Images {
		defer fr.collectImages(data)
	}
	if fastPath && looksLikeJSON(data) && fr.addFastJSON(data) {
		return fr
	}
	var fast func(raw []byte, d *document) bool
	if fastPath {
		fast = func(raw []byte, d *document) bool {
			at := pos{File: p, Line: d.line, Start: d.offset, End: d.end}
			if opts.mentions && fr.addMentions(at, raw) {
				return true
			}
			root, ok := parseFastYAML(raw)
			if ok && fr.addFast(at, root) {
				fr.fastDocs++
				return true
			}
			return false
		}
	}
	if opts.full && !opts.exact {
		// A whole load keeps every blob as the exact decoder types it,
		// but most of the cost of that decoder is sigs.k8s.io/yaml
		// turning YAML into JSON. A document the fast parser reads
		// becomes the same meta the exact decoder makes of it (the
		// canonical JSON blobOf hashes), and is typed from there as
		// any other.
		if looksLikeJSON(data) && fr.addWholeJSON(data, opts.docs) {
			return fr
		}
		fast = func(raw []byte, d *document) bool {
			at := pos{File: p, Line: d.line, Start: d.offset, End: d.end}
			var k [sha256.Size]byte
			if opts.docs != nil {
				k = sha256.Sum256(raw)
				if one, ok := opts.docs.get(k); ok {
					fr.merge(one, at)
					fr.fastDocs++
					return true
				}
			}
			root, ok := parseFastYAML(raw)
			if !ok {
				return false
			}
			// The blob is about the document's size: YAML's indentation
			// and JSON's escapes about even out.
			one, ok := typeDoc(root, len(raw)+len(raw)/8, opts.docs != nil || opts.blobs)
			if !ok {
				return false
			}
			if opts.docs != nil {
				opts.docs.put(k, one, len(raw))
			}
			fr.merge(one, at)
			fr.fastDocs++
			return true
		}
	}
	decodeStream(data, fast, func(d *document) bool {
		at := pos{File: p, Line: d.line, Start: d.offset, End: d.end}
		if d.err != nil {
			fr.errs = append(fr.errs, loadError{pos: at, rule: decodeRule(d.err.Error()), err: d.err})
			return true
		}
		if fr.keepBlobs {
			b := metaBlob(&d.meta)
			b.Line = d.line
			fr.blobs = append(fr.blobs, b)
		}
		if rule, err := fr.add(at, &d.meta); err != nil {
			fr.errs = append(fr.errs, loadError{pos: at, rule: rule, err: err})
		}
		return true
	})
	return fr
}

// typeDoc types one object a fast parser read as the exact decoder would,
// on its own, at no place: what add makes of it depends on its text alone.
// size is about the object's length when known (see metaOf); with blob,
// the result holds the object's Blob too. False for an object whose meta
// the exact decoder would read differently.
func typeDoc(root *ynode, size int, blob bool) (*fileResult, bool) {
	m, ok := metaOf(root, size)
	if !ok {
		return nil, false
	}
	return typeMeta(&m, blob), true
}

// typeMeta types the meta m on its own, at no place; with blob, the result
// holds m's Blob too.
func typeMeta(m *meta, blob bool) *fileResult {
	one := &fileResult{config: &declcfg.DeclarativeConfig{}}
	if blob {
		one.blobs = []Blob{metaBlob(m)}
	}
	if rule, err := one.add(pos{}, m); err != nil {
		one.errs = append(one.errs, loadError{rule: rule, err: err})
	}
	return one
}

// addWholeJSON is the whole load of a JSON stream file through the fast
// parser, all or nothing, as addFastJSON is for a lean one. The objects
// are read in place, without encoding/json's stream buffer, which grows to
// twice the largest object, and each object's tree is let go once typed:
// for a large bundle the load holds about three times the file, not
// eight. Under a review's cache (docs) an object typed already, by its
// text, is not typed again, as a YAML document is not.
func (fr *fileResult) addWholeJSON(data []byte, docs *docMemo) bool {
	roots, spans, ok := parseFastJSONStream(data)
	if !ok {
		return false
	}
	lines := lineIndex{data: data}
	tmp := &fileResult{path: fr.path, size: fr.size, keepBlobs: fr.keepBlobs}
	if fr.config != nil {
		// Not fr's own: a load that falls back part way leaves it empty.
		tmp.config = &declcfg.DeclarativeConfig{}
	}
	for i := range roots {
		at := pos{File: fr.path, Line: lines.lineOf(spans[i][0]), Start: spans[i][0], End: spans[i][1]}
		var k [sha256.Size]byte
		if docs != nil {
			k = jsonDocKey(data[spans[i][0]:spans[i][1]])
			if one, ok := docs.get(k); ok {
				roots[i] = nil
				tmp.merge(one, at)
				continue
			}
		}
		m, ok := metaOf(roots[i], spans[i][1]-spans[i][0])
		if !ok {
			return false
		}
		// The tree is let go before the blob is typed.
		roots[i] = nil
		one := typeMeta(&m, docs != nil || fr.keepBlobs)
		if docs != nil {
			docs.put(k, one, spans[i][1]-spans[i][0])
		}
		tmp.merge(one, at)
	}
	tmp.fastDocs = len(spans)
	*fr = *tmp
	return true
}

// jsonDocKey is the key in a docMemo of the object text of a JSON stream:
// apart from a YAML document's (the SHA-256 of its text), since the two
// decoders need not make the same of the same text (a key given twice,
// say).
func jsonDocKey(text []byte) (k [sha256.Size]byte) {
	h := sha256.New()
	h.Write([]byte("json\x00"))
	h.Write(text)
	h.Sum(k[:0])
	return k
}

// addFastJSON takes a JSON stream file through the fast path, all or
// nothing: a single object that needs the exact decoder sends the whole
// file there, since opm's stream decoding depends on what came before.
func (fr *fileResult) addFastJSON(data []byte) bool {
	roots, spans, ok := parseFastJSONStream(data)
	if !ok {
		return false
	}
	tmp := &fileResult{path: fr.path, size: fr.size}
	lines := lineIndex{data: data}
	for i, root := range roots {
		at := pos{File: fr.path, Line: lines.lineOf(spans[i][0]), Start: spans[i][0], End: spans[i][1]}
		if !tmp.addFast(at, root) {
			return false
		}
	}
	tmp.fastDocs = len(roots)
	*fr = *tmp
	return true
}

// LargeFile is the size from which a file is loaded alone in the process.
// Decoding holds a file and what it decodes to at once (a bundle's
// manifests, base64-decoded and parsed), about three times its size; two
// such files at once, from two checks of one pull request or from two
// pull requests the App checks side by side, would double the peak. With
// one large file at a time the peak stays near three times the largest
// file, and the many small files of a catalog still load in parallel.
const LargeFile = 16 << 20

// largeFiles admits one large file at a time.
var largeFiles = make(chan struct{}, 1)

// readFile reads through an open file rather than fs.ReadFile, so that read
// errors carry the path the file was opened with, as opm's do ("read
// catalog/foo: is a directory" for a symlink to a directory).
func readFile(fsys fs.FS, p string) ([]byte, error) {
	data, release, err := readLargeFile(fsys, p)
	release()
	return data, err
}

// readLargeFile is readFile that, for a file of LargeFile or more, waits
// its turn before reading; the caller calls release once done with what
// it decoded from the file.
func readLargeFile(fsys fs.FS, p string) (data []byte, release func(), err error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, func() {}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		st = nil
	}
	return readOpen(f, st)
}

// wholeFile is a file that hands over its content whole without a copy
// (a file of a git tree): the bytes are shared, and read only.
type wholeFile interface {
	Bytes() ([]byte, error)
}

// readOpen reads the open file f, which st describes when not nil.
func readOpen(f fs.File, st fs.FileInfo) (data []byte, release func(), err error) {
	release = func() {}
	size := 0
	if st != nil && st.Mode().IsRegular() {
		size = int(st.Size())
	}
	if size >= LargeFile {
		largeFiles <- struct{}{}
		release = func() { <-largeFiles }
	}
	if w, ok := f.(wholeFile); ok && st != nil && st.Mode().IsRegular() {
		data, err = w.Bytes()
		return data, release, err
	}
	data, err = readAll(f, size)
	return data, release, err
}

// readAll reads f, whose size is expected to be size, into one buffer.
func readAll(f fs.File, size int) ([]byte, error) {
	buf := make([]byte, 0, size+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// add sorts one decoded object into its typed record, as opm's fbcBuilder
// does, returning the rule and error that opm's loader would stop at.
func (fr *fileResult) add(at pos, m *meta) (string, error) {
	switch m.Schema {
	case declcfg.SchemaPackage:
		var p declcfg.Package
		if err := json.Unmarshal(m.Blob, &p); err != nil {
			return "L18", fmt.Errorf("parse package: %v", err)
		}
		fr.packages = append(fr.packages, pkgRec{pos: at, name: p.Name, defaultChannel: p.DefaultChannel})
		if fr.config != nil {
			fr.config.Packages = append(fr.config.Packages, p)
		}
	case declcfg.SchemaChannel:
		var c declcfg.Channel
		if err := json.Unmarshal(m.Blob, &c); err != nil {
			return "L18", fmt.Errorf("parse channel: %v", err)
		}
		fr.channels = append(fr.channels, chRec{pos: at, name: c.Name, pkg: c.Package, entries: c.Entries})
		if fr.config != nil {
			fr.config.Channels = append(fr.config.Channels, c)
		}
	case declcfg.SchemaBundle:
		var b declcfg.Bundle
		if err := json.Unmarshal(m.Blob, &b); err != nil {
			return "L18", fmt.Errorf("parse bundle: %v", err)
		}
		objects, err := readBundleObjects(&b)
		if err != nil {
			return "L19", fmt.Errorf("read bundle objects: %v", err)
		}
		rec := bundleRec{pos: at, name: b.Name, pkg: b.Package, image: b.Image, related: b.RelatedImages, objects: objects}
		if parsed, err := property.ParseObjectsRead(b.Properties); err != nil {
			rec.propErr = err
		} else {
			rec.packages = parsed.Packages
			rec.maxOCP = parsed.MaxOpenShiftVersion
		}
		fr.bundles = append(fr.bundles, rec)
		if fr.config != nil {
			fr.config.Bundles = append(fr.config.Bundles, b)
		}
	case declcfg.SchemaDeprecation:
		var d declcfg.Deprecation
		if err := json.Unmarshal(m.Blob, &d); err != nil {
			return "L18", fmt.Errorf("parse deprecation: %w", err)
		}
		fr.deps = append(fr.deps, depRec{pos: at, pkg: d.Package, entries: d.Entries})
		if fr.config != nil {
			fr.config.Deprecations = append(fr.config.Deprecations, d)
		}
	case "":
		return "L16", fmt.Errorf("object '%s' is missing root schema field", string(m.Blob))
	default:
		fr.others++
		if fr.config != nil {
			fr.config.Others = append(fr.config.Others, declcfg.Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, Blob: m.Blob})
		}
	}
	return "", nil
}

// merge adds one, the records of a single document typed at no place, as
// the document at at.
func (fr *fileResult) merge(one *fileResult, at pos) {
	for _, r := range one.packages {
		r.pos = at
		fr.packages = append(fr.packages, r)
	}
	for _, r := range one.channels {
		r.pos = at
		fr.channels = append(fr.channels, r)
	}
	for _, r := range one.bundles {
		r.pos = at
		fr.bundles = append(fr.bundles, r)
	}
	for _, r := range one.deps {
		r.pos = at
		fr.deps = append(fr.deps, r)
	}
	for _, e := range one.errs {
		e.pos = at
		fr.errs = append(fr.errs, e)
	}
	fr.others += one.others
	if fr.config != nil {
		fr.config.Append(one.config)
	}
	if fr.keepBlobs {
		for _, b := range one.blobs {
			b.Line = at.Line
			fr.blobs = append(fr.blobs, b)
		}
	}
}

// readBundleObjects checks every olm.bundle.object property the way opm's
// loader does: the value must hold base64 data that is JSON or YAML. The
// decoded manifests are not kept. Like opm, the decode target is shared
// across properties, so a later value without data reuses the earlier data.
func readBundleObjects(b *declcfg.Bundle) (int, error) {
	var obj property.BundleObject
	n := 0
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return 0, fmt.Errorf("package %q, bundle %q: parse property at index %d as bundle object: %v", b.Package, b.Name, i, err)
		}
		if err := checkManifest(obj.Data); err != nil {
			return 0, fmt.Errorf("package %q, bundle %q: convert bundle object property at index %d to JSON: %v", b.Package, b.Name, i, err)
		}
		n++
	}
	return n, nil
}

// decodeRule classifies a decode failure by the spec rule it breaks.
func decodeRule(msg string) string {
	switch {
	case strings.HasPrefix(msg, "invalid Yaml document separator"):
		return "L8"
	case strings.HasPrefix(msg, "error converting YAML to JSON"):
		return "L12"
	case strings.Contains(msg, "duplicate keys for key"):
		return "L14"
	case strings.Contains(msg, "expected value for key"):
		return "L15"
	case strings.Contains(msg, "into Go value of type map[string]interface {}"):
		return "L13"
	default:
		return "L7"
	}
}

// collectImages lists the bundle and related images of the file's bundles,
// each at the line that names it.
func (fr *fileResult) collectImages(data []byte) {
	for i := range fr.bundles {
		b := &fr.bundles[i]
		blob := data[min(b.Start, len(data)):min(b.End, len(data))]
		at := func(from int, img string) int {
			if k := find(blob[from:], field("image", img)); k >= 0 {
				return b.Line + bytes.Count(blob[:from+k], []byte("\n"))
			}
			return b.Line
		}
		if b.image != "" {
			fr.images = append(fr.images, ImageRef{Image: b.image, Kind: BundleImage, File: fr.path, Line: at(0, b.image), Package: b.pkg, Bundle: b.name})
		}
		// Related images are looked for after the relatedImages key, so one
		// that repeats the bundle image points at its own line.
		rel := max(bytes.Index(blob, []byte("relatedImages")), 0)
		for _, ri := range b.related {
			if ri.Image == "" {
				continue
			}
			fr.images = append(fr.images, ImageRef{Image: ri.Image, Kind: RelatedImage, Name: ri.Name, File: fr.path, Line: at(rel, ri.Image), Package: b.pkg, Bundle: b.name})
		}
	}
}
