package mutate

import (
	"path"
	"strconv"
	"strings"
)

const (
	schemaPackage     = "olm.package"
	schemaChannel     = "olm.channel"
	schemaBundle      = "olm.bundle"
	schemaDeprecation = "olm.deprecations"
)

var knownSchemas = []string{schemaPackage, schemaChannel, schemaBundle, schemaDeprecation}

// blob is one structured document and where it lives.
type blob struct {
	f *file
	d *doc
}

func (b blob) obj() map[string]any { return b.d.obj }

func (b blob) index() int {
	for i, d := range b.f.docs {
		if d == b.d {
			return i
		}
	}
	return -1
}

func (b blob) remove() {
	if i := b.index(); i >= 0 {
		b.f.docs = append(b.f.docs[:i:i], b.f.docs[i+1:]...)
	}
}

// insertAfter puts d right after b in b's file.
func (b blob) insertAfter(d *doc) {
	i := b.index()
	docs := make([]*doc, 0, len(b.f.docs)+1)
	docs = append(docs, b.f.docs[:i+1]...)
	docs = append(docs, d)
	docs = append(docs, b.f.docs[i+1:]...)
	b.f.docs = docs
}

// ident names a blob for case names.
func (b blob) ident() string {
	o := b.obj()
	s := getStr(o, "schema")
	switch {
	case getStr(o, "name") != "":
		return s + " " + getStr(o, "name")
	case getStr(o, "package") != "":
		return s + " " + getStr(o, "package")
	}
	return s
}

// blobs lists structured documents in load order (walk order, then document
// order) whose schema is one of schemas (any schema when none is given).
func (c *catalog) blobs(schemas ...string) []blob {
	var out []blob
	for _, f := range c.files {
		if f.kind == kindOpaque {
			continue
		}
		for _, d := range f.docs {
			if d.obj == nil {
				continue
			}
			if len(schemas) > 0 {
				s := getStr(d.obj, "schema")
				match := false
				for _, want := range schemas {
					if s == want {
						match = true
					}
				}
				if !match {
					continue
				}
			}
			out = append(out, blob{f, d})
		}
	}
	return out
}

func (c *catalog) known() []blob { return c.blobs(knownSchemas...) }

func (c *catalog) packageNames() []string {
	var out []string
	for _, b := range c.blobs(schemaPackage) {
		if n := getStr(b.obj(), "name"); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func (c *catalog) packageBlob(pkg string) (blob, bool) {
	for _, b := range c.blobs(schemaPackage) {
		if getStr(b.obj(), "name") == pkg {
			return b, true
		}
	}
	return blob{}, false
}

// ofPackage lists blobs of a schema whose package is pkg, in load order.
func (c *catalog) ofPackage(schema, pkg string) []blob {
	var out []blob
	for _, b := range c.blobs(schema) {
		if getStr(b.obj(), "package") == pkg {
			out = append(out, b)
		}
	}
	return out
}

func entries(ch map[string]any) []map[string]any { return maps(getList(ch, "entries")) }

func properties(b map[string]any) []map[string]any { return maps(getList(b, "properties")) }

// pkgValue returns the value object of the first olm.package property.
func pkgValue(b map[string]any) map[string]any {
	for _, p := range properties(b) {
		if getStr(p, "type") == "olm.package" {
			v, _ := get(p, "value").(map[string]any)
			return v
		}
	}
	return nil
}

func addProperty(b map[string]any, typ string, value any) {
	props := getList(b, "properties")
	props = append(props, map[string]any{"type": typ, "value": value})
	set(b, "properties", props)
}

// channelHead returns the single entry of a channel that no entry replaces or
// skips.
func channelHead(ch map[string]any) (string, bool) {
	incoming := map[string]bool{}
	es := entries(ch)
	for _, e := range es {
		if r := getStr(e, "replaces"); r != "" {
			incoming[r] = true
		}
		for _, s := range getList(e, "skips") {
			if s, ok := s.(string); ok {
				incoming[s] = true
			}
		}
	}
	var heads []string
	for _, e := range es {
		if n := getStr(e, "name"); !incoming[n] {
			heads = append(heads, n)
		}
	}
	if len(heads) != 1 {
		return "", false
	}
	return heads[0], true
}

// renamePackage renames pkg everywhere it is referenced.
func (c *catalog) renamePackage(old, new string) {
	for _, b := range c.blobs() {
		o := b.obj()
		switch getStr(o, "schema") {
		case schemaPackage:
			if getStr(o, "name") == old {
				set(o, "name", new)
			}
		case schemaBundle:
			if getStr(o, "package") == old {
				set(o, "package", new)
			}
			if v := pkgValue(o); v != nil && getStr(v, "packageName") == old {
				set(v, "packageName", new)
			}
		default:
			if getStr(o, "package") == old {
				set(o, "package", new)
			}
		}
	}
}

// renameBundle renames a bundle of pkg everywhere it is referenced.
func (c *catalog) renameBundle(pkg, old, new string) {
	for _, b := range c.ofPackage(schemaBundle, pkg) {
		if getStr(b.obj(), "name") == old {
			set(b.obj(), "name", new)
		}
	}
	for _, ch := range c.ofPackage(schemaChannel, pkg) {
		for _, e := range entries(ch.obj()) {
			if getStr(e, "name") == old {
				set(e, "name", new)
			}
			if getStr(e, "replaces") == old {
				set(e, "replaces", new)
			}
			skips := getList(e, "skips")
			for i, s := range skips {
				if s == old {
					skips[i] = new
				}
			}
		}
	}
	for _, d := range c.ofPackage(schemaDeprecation, pkg) {
		for _, e := range maps(getList(d.obj(), "entries")) {
			ref, _ := get(e, "reference").(map[string]any)
			if ref != nil && getStr(ref, "schema") == schemaBundle && getStr(ref, "name") == old {
				set(ref, "name", new)
			}
		}
	}
}

// siblingPath returns a path in the same directory as p with the given base
// name, or in the root when p is in the root.
func siblingPath(p, base string) string {
	dir := path.Dir(p)
	if dir == "." {
		return base
	}
	return dir + "/" + base
}

func extFor(k fileKind) string {
	if k == kindJSON {
		return ".json"
	}
	return ".yaml"
}

// uniquePath returns p, or p with a numeric suffix, so that no file has it.
func (c *catalog) uniquePath(p string) string {
	if c.fileByPath(p) == nil {
		return p
	}
	ext := path.Ext(p)
	stem := strings.TrimSuffix(p, ext)
	for i := 2; ; i++ {
		q := stem + "-" + strconv.Itoa(i) + ext
		if c.fileByPath(q) == nil {
			return q
		}
	}
}
