package fbc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/internal/textmemo"
)

// Blob is one document of a catalog file as ownership sees it: the package
// it belongs to and a digest of its content, so that two versions of a file
// can be compared blob by blob.
type Blob struct {
	Schema string
	// Package is the package the blob belongs to: an olm.package's name,
	// every other blob's package field; "" for a blob that names none.
	Package string
	Line    int
	// Sum is the SHA-256 of the blob re-encoded canonically (sorted keys),
	// so that layout and key order do not count as a change.
	Sum [sha256.Size]byte
}

// Blobs lists the documents of one catalog file, split and decoded as the
// loader does. Documents that do not decode are left out: the validation
// of the same file reports them as errors, which block a merge on their
// own.
//
// A file of plain JSON objects, the common shape and the one a very large
// file takes, is read in place: each blob's canonical form is hashed as it
// is written, never held, so the memory Blobs needs beyond data is small
// whatever the size of the file.
func Blobs(data []byte) []Blob {
	if looksLikeJSON(data) {
		if roots, spans, ok := parseFastJSONStream(data); ok {
			if out, ok := fastBlobs(data, roots, spans); ok {
				return out
			}
		}
		return exactBlobs(data)
	}
	// A YAML document the fast parser reads is hashed from its tree; any
	// other goes the exact way, one document at a time, as the loader
	// does.
	var out []Blob
	decodeStream(data, func(raw []byte, d *document) bool {
		// A change to a large file leaves nearly all of its documents
		// as they were, and both sides are read: a document read before
		// is not parsed again.
		k := sha256.Sum256(raw)
		if b, ok := docBlobs.Get(k); ok {
			b.Line = d.line
			out = append(out, b)
			return true
		}
		root, ok := parseFastYAML(raw)
		if !ok {
			return false
		}
		b, ok := blobOf(root, d.line)
		if ok {
			// The memo's own copies of the strings, which keep no
			// file alive.
			kept := b
			kept.Schema, kept.Package = strings.Clone(b.Schema), strings.Clone(b.Package)
			docBlobs.Put(k, kept)
			out = append(out, b)
		}
		return ok
	}, func(d *document) bool {
		if b, ok := exactBlob(d); ok {
			out = append(out, b)
		}
		return true
	})
	return out
}

// exactBlobs is Blobs by way of the loader's own decoding.
func exactBlobs(data []byte) []Blob {
	var out []Blob
	decodeStream(data, nil, func(d *document) bool {
		if b, ok := exactBlob(d); ok {
			out = append(out, b)
		}
		return true
	})
	return out
}

// exactBlob is the blob of a document the exact decoder read, false for
// one it could not.
func exactBlob(d *document) (Blob, bool) {
	if d.err != nil {
		return Blob{}, false
	}
	b := metaBlob(&d.meta)
	b.Line = d.line
	return b, true
}

// metaBlob is the blob of the meta m, at line 0.
func metaBlob(m *meta) Blob {
	b := Blob{Schema: m.Schema, Package: m.Package, Sum: sha256.Sum256(m.Blob)}
	if m.Schema == declcfg.SchemaPackage {
		b.Package = m.Name
	}
	return b
}

// Blobs is Blobs(data), read as a whole load under the cache reads it: each
// document is typed once, by its text, and a whole load of the same
// documents later in the pass (the validation of the changed files, after
// the owners evaluation asked for their blobs) takes them from the cache
// rather than parsing them again. A large file, which the validation
// reads lean (see loadFile), and a nil cache read as Blobs does.
func (c *Cache) Blobs(data []byte) []Blob {
	if c == nil || len(data) >= LargeFile {
		return Blobs(data)
	}
	fr := decodeFile("", data, nil, Options{full: true, docs: &c.docs, blobs: true})
	return fr.blobs
}

// fastBlobs is Blobs for a stream of objects the fast JSON parser read. It
// reports false for anything whose meta the exact decoder would read
// differently, which then goes the exact way (see blobOf).
func fastBlobs(data []byte, roots []*ynode, spans [][2]int) ([]Blob, bool) {
	lines := lineIndex{data: data}
	out := make([]Blob, 0, len(roots))
	for i, root := range roots {
		b, ok := blobOf(root, lines.lineOf(spans[i][0]))
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// blobOf is the blob of one object a fast parser read, at line. It reports
// false for anything whose meta the exact decoder would read differently
// (see metaKeys). Sums are identical to the exact path's: the sha256 of
// the blob as encoding/json writes it, map keys sorted, HTML left
// unescaped, newline ended.
func blobOf(root *ynode, line int) (Blob, bool) {
	schema, pkg, name, ok := metaKeys(root)
	if !ok {
		return Blob{}, false
	}
	h := sha256.New()
	w := bufio.NewWriterSize(h, 64<<10)
	writeCanonical(w, root)
	w.WriteByte('\n')
	w.Flush()
	b := Blob{Schema: schema, Package: pkg, Line: line}
	h.Sum(b.Sum[:0])
	if schema == declcfg.SchemaPackage {
		b.Package = name
	}
	return b, true
}

// metaOf is the meta the exact decoder makes of one object a fast parser
// read: the same keys and the same blob, byte for byte, as blobOf's sums
// show. False for an object it would read differently (see metaKeys).
// size, when above 0, is about the blob's length (the object's text, for
// JSON): the blob is written into one buffer of that size, not a buffer
// doubled to fit, which for a large bundle holds twice its size.
func metaOf(root *ynode, size int) (meta, bool) {
	schema, pkg, name, ok := metaKeys(root)
	if !ok {
		return meta{}, false
	}
	var buf bytes.Buffer
	buf.Grow(size + 1)
	w := bufio.NewWriter(&buf)
	writeCanonical(w, root)
	w.WriteByte('\n')
	w.Flush()
	return meta{Schema: schema, Package: pkg, Name: name, Blob: buf.Bytes()}, true
}

// metaKeys are the schema, package and name of one object a fast parser
// read. It reports false for anything whose meta the exact decoder would
// read differently: keys that fold to schema, package or name, or that
// fold alike, and non-string values of those keys.
func metaKeys(root *ynode) (schema, pkg, name string, ok bool) {
	if root.kind != 'm' {
		return "", "", "", false
	}
	folds := make(map[string]bool, len(root.keys))
	for _, k := range root.keys {
		// ASCII keys fold as they lower-case; any other key goes the
		// exact way, whose Unicode folding this need not repeat.
		if !isASCII(k) {
			return "", "", "", false
		}
		f := strings.ToLower(k)
		if folds[f] {
			return "", "", "", false
		}
		folds[f] = true
		if (f == "schema" || f == "package" || f == "name") && k != f {
			return "", "", "", false
		}
	}
	field := func(key string) (string, bool) {
		n := root.get(key)
		if n == nil {
			return "", true
		}
		return string(n.str), n.kind == 's'
	}
	schema, ok1 := field("schema")
	pkg, ok2 := field("package")
	name, ok3 := field("name")
	return schema, pkg, name, ok1 && ok2 && ok3
}

// writeCanonical writes n as encoding/json encodes the value the exact
// decoder makes of it: mappings with their keys sorted. The fast loader
// also writes typed values this way for decoding them again.
func writeCanonical(w *bufio.Writer, n *ynode) {
	switch n.kind {
	case 's':
		writeJSONString(w, n.str)
	case 'b':
		w.Write(n.str)
	case 'l':
		w.WriteByte('[')
		for i, item := range n.items {
			if i > 0 {
				w.WriteByte(',')
			}
			writeCanonical(w, item)
		}
		w.WriteByte(']')
	case 'm':
		order := make([]int, len(n.keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(n.keys[a], n.keys[b]) })
		w.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, []byte(n.keys[k]))
			w.WriteByte(':')
			writeCanonical(w, n.vals[k])
		}
		w.WriteByte('}')
	}
}

// writeJSONString quotes s as encoding/json does with HTML escaping off.
func writeJSONString(w *bufio.Writer, s []byte) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			w.Write(s[start:i])
			switch c {
			case '\\', '"':
				w.WriteByte('\\')
				w.WriteByte(c)
			case '\b':
				w.WriteString(`\b`)
			case '\f':
				w.WriteString(`\f`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(hex[c>>4])
				w.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.Write(s[start:i])
			w.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			w.Write(s[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.Write(s[start:])
	w.WriteByte('"')
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// docBlobs keeps the blob of each YAML document the fast path read, by the
// SHA-256 of the document's text: what blobOf makes of a document depends
// on its text alone (its line aside). At most 1<<16 entries, about 8 MiB.
var docBlobs = textmemo.New[Blob](1 << 16)
