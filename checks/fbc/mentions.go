package fbc

import (
	"bytes"
	"context"
	"io/fs"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// Mentions says where the catalog in fsys mentions each package, as
// Result.PackagePlaces does, without validating it: a caller that only
// needs to know which files hold which packages (the package index of a
// large catalog) is spared decoding the whole of every document.
//
// A YAML document in the shape catalogs are written in is read from its
// top-level keys (schema, name, package) and its packageName lines only
// (scanMentions); any other document, and every JSON file, is decoded as
// Validate decodes it. On a catalog that Validate finds no load error in,
// the two agree exactly. A document Validate cannot decode may still be
// read here as mentioning the package its keys name: that can only widen
// what a caller looks at, never narrow it.
func Mentions(ctx context.Context, fsys fs.FS) (map[string][]Place, error) {
	cat, err := load(ctx, fsys, Options{mentions: true})
	if err != nil {
		return nil, err
	}
	_, places := packageNames(cat)
	return places, nil
}

// addMentions records the packages the YAML document raw mentions, if
// scanMentions is sure of them.
func (fr *fileResult) addMentions(at pos, raw []byte) bool {
	m, ok := scanMentions(raw)
	if !ok {
		return false
	}
	switch m.schema {
	case declcfg.SchemaPackage:
		fr.packages = append(fr.packages, pkgRec{pos: at, name: m.name})
	case declcfg.SchemaChannel:
		fr.channels = append(fr.channels, chRec{pos: at, name: m.name, pkg: m.pkg})
	case declcfg.SchemaBundle:
		fr.bundles = append(fr.bundles, bundleRec{pos: at, name: m.name, pkg: m.pkg})
	case declcfg.SchemaDeprecation:
		fr.deps = append(fr.deps, depRec{pos: at, pkg: m.pkg})
	default:
		fr.others++
	}
	return true
}

// docMentions is what one document says about packages.
type docMentions struct {
	schema, name, pkg string
}

var (
	keySchema      = []byte("schema")
	keyName        = []byte("name")
	keyPackage     = []byte("package")
	keyPackageName = []byte("packageName")
)

// scanMentions reads the packages a YAML document mentions without
// decoding it, or reports false for a document it cannot be sure of, which
// the caller then decodes whole. It is sure of a document that:
//   - breaks lines only at '\n' (otherBreaks), and outside block scalars
//     has no escape that could spell a key in double quotes (\x, \u, \U);
//   - has a top-level block mapping at column 0 whose lines are "key:" or
//     "key: value" with a simple key, each key once, or compact sequence
//     items ("- ") of the key before; no line at column 0 holds a quote or
//     a bracket, so no flow collection or quoted scalar can carry a key to
//     column 0 and hide one there;
//   - gives schema, and name or package as its schema needs, as plain
//     scalars that YAML reads as strings, with no comment after them;
//   - for a bundle, mentions packageName only on lines of their own
//     ("packageName: x", maybe as a sequence item), each naming the
//     bundle's own package: then its olm.package properties add no other
//     package to the one it belongs to.
func scanMentions(doc []byte) (docMentions, bool) {
	var m docMentions
	if otherBreaks(doc) {
		return m, false
	}
	var seen [][]byte
	var schema, name, pkg []byte
	packageNames := 0
	var pnValues [][]byte
	// A block scalar's text is not structure: after a header ("key: |"),
	// the lines indented more than its key are its text, as deep as the
	// first of them (pending is the key's column until that line).
	pending, text := -1, -1
	// open is the quote of a quoted value that goes on to the next line.
	var open byte
	// items are the sequence items the scan is in, innermost last: a
	// bundle belongs to the package of each of its properties of type
	// olm.package, and only those (olm.package.required names another).
	var items []seqItem
	unsure := false
	end := func(ind int) {
		for len(items) > 0 && items[len(items)-1].dash >= ind {
			it := items[len(items)-1]
			items = items[:len(items)-1]
			switch {
			case it.unsure:
				unsure = true
			case it.typ == "olm.package":
				if it.types != 1 || len(it.names) != 1 || it.inline {
					unsure = true
				} else {
					pnValues = append(pnValues, it.names[0])
				}
			}
		}
	}
	// last says the line before gave schema, name or package; watch,
	// when not -1, that it gave a type or packageName, whose value a line
	// indented watch or more would go on with.
	last, watch := false, -1
	for rest := doc; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if open != 0 {
			// YAML reads a quoted scalar to its closing quote whatever
			// the indentation of its lines; the scan wants none at
			// column 0, where it looks for keys.
			if len(line) > 0 && line[0] != ' ' {
				return m, false
			}
			end, closed := quoteEnd(line, 0, open)
			if !closed {
				continue
			}
			if !restIsBlank(line[end:]) {
				return m, false
			}
			open = 0
			continue
		}
		t := bytes.TrimLeft(line, " ")
		if len(t) == 0 {
			continue
		}
		ind := len(line) - len(t)
		if last && ind > 0 && t[0] != '#' {
			return m, false
		}
		last = false
		if watch >= 0 && ind >= watch && t[0] != '#' {
			// The type or packageName read goes on on this line.
			return m, false
		}
		watch = -1
		if pending >= 0 {
			if ind > pending {
				text = ind
			}
			pending = -1
		}
		if text >= 0 {
			if ind >= text {
				if v, ok := packageNameLine(line); ok {
					packageNames++
					pnValues = append(pnValues, v)
				}
				continue
			}
			text = -1
		}
		if marker, ok := bytes.CutPrefix(line, []byte("---")); ok {
			// The document's own start marker, which the splitter keeps.
			if t := bytes.TrimLeft(marker, " "); len(t) == 0 || len(t) < len(marker) && t[0] == '#' {
				continue
			}
			return m, false
		}
		if t[0] == '#' {
			continue
		}
		if line[0] == ' ' || line[0] == '-' {
			if line[0] == '-' && len(line) > 1 && line[1] != ' ' {
				return m, false
			}
			col, header, quote, ok := nestedLine(line)
			if !ok {
				return m, false
			}
			end(ind)
			for c := ind; c < col; c++ {
				if line[c] == '-' {
					items = append(items, seqItem{dash: c, keys: -1, values: -1})
				}
			}
			if len(items) > 0 {
				items[len(items)-1].see(line, col)
			}
			if v, ok := packageNameLine(line); ok {
				packageNames++
				if len(items) == 0 {
					pnValues = append(pnValues, v)
				}
			}
			switch {
			case header:
				pending = col
			case quote == 0:
				if from, ok := plainValue(line); ok {
					// Its lines to come, if any, are text, as a block
					// scalar's are: YAML ends it at the first line not
					// indented more than its parent.
					text = from
					if key := lineKey(line[col:]); foldsLike(key, "type", "packagename") {
						// A value the scan reads must end on its line.
						watch = from
					}
				}
			}
			open = quote
			continue
		}
		end(0)
		k := bytes.IndexByte(line, ':')
		if k <= 0 || !simpleKey(line[:k]) || (k+1 < len(line) && line[k+1] != ' ') {
			return m, false
		}
		key := line[:k]
		for _, s := range seen {
			if bytes.Equal(s, key) {
				return m, false
			}
		}
		seen = append(seen, key)
		value := bytes.Trim(line[k+1:], " ")
		if header, ok := blockHeader(value); !ok {
			return m, false
		} else if header {
			pending = 0
			continue
		}
		if bytes.ContainsAny(value, "\"'[]{}") && string(value) != "[]" && string(value) != "{}" {
			return m, false
		}
		switch {
		case bytes.Equal(key, keySchema):
			schema = value
		case bytes.Equal(key, keyName):
			name = value
		case bytes.Equal(key, keyPackage):
			pkg = value
		default:
			if len(value) > 0 && value[0] != '#' {
				// A plain scalar, whose lines to come are text.
				text = 1
			}
			continue
		}
		if !simpleScalar(value) {
			return m, false
		}
		// Its value ends here only if no indented line goes on with it.
		last = true
	}
	end(0)
	if open != 0 || unsure {
		return m, false
	}
	if schema == nil {
		return m, false
	}
	m = docMentions{schema: string(schema), name: string(name), pkg: string(pkg)}
	switch m.schema {
	case "olm.package":
		if m.name == "" {
			return m, false
		}
	case "olm.bundle":
		if m.pkg == "" || bytes.Count(doc, keyPackageName) != packageNames {
			return m, false
		}
		for _, v := range pnValues {
			if string(v) != m.pkg {
				return m, false
			}
		}
	case "olm.channel", "olm.deprecations":
		if m.pkg == "" {
			return m, false
		}
	}
	return m, true
}

// seqItem is a sequence item as the scan follows it, for the properties
// of a bundle: the type its mapping gives, and the packageName its value
// gives.
type seqItem struct {
	dash int // the column of its dash
	// keys is the column of its mapping's keys, once known; values that
	// of the keys of the mapping its value key holds.
	keys, values int
	typ          string
	types        int
	names        [][]byte
	inline       bool // its value is on its line (a flow collection, say)
	// unsure is set by anything the scan cannot read for sure: a key
	// that is only spelled like type, value or packageName, a type or a
	// value it cannot read.
	unsure bool
}

// see reads a line of the item whose key (if any) is at col.
func (it *seqItem) see(line []byte, col int) {
	k := bytes.Index(line[col:], []byte(":"))
	if k < 0 {
		return
	}
	key := line[col : col+k]
	value := bytes.Trim(line[col+k+1:], " ")
	if it.keys < 0 {
		it.keys = col
	}
	if len(key) > 0 && (key[0] == '"' || key[0] == '\'') {
		it.unsure = true // a quoted key can spell any of them
		return
	}
	switch {
	case col == it.keys:
		switch {
		case string(key) == "type":
			it.types++
			if simpleScalar(value) {
				it.typ = string(value)
			} else {
				it.unsure = true
			}
		case string(key) == "value":
			it.inline = it.inline || len(value) != 0
			it.values = -2 // the next deeper key says where
		case foldsLike(key, "type", "value", "packagename"):
			it.unsure = true
		}
	case it.values == -2 && col > it.keys, col == it.values:
		it.values = col
		if string(key) == "packageName" {
			it.names = append(it.names, value)
		} else if foldsLike(key, "packagename") {
			it.unsure = true
		}
	}
}

// lineKey is the key that t (a line from its key on) starts with, if any.
func lineKey(t []byte) []byte {
	k := bytes.IndexByte(t, ':')
	if k < 0 {
		return nil
	}
	return t[:k]
}

// foldsLike says whether key is one of names (lower case) but for case:
// opm decodes properties with encoding/json, which matches keys so.
func foldsLike(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// nestedLine reads an indented line (or a sequence item at column 0):
// col is the column of its key, header says its value starts a block
// scalar, open is the quote of a quoted value that goes on to the next
// line, and ok is false for a line the scan cannot be sure of. That is a
// line with a complex key, an anchor, alias or tag, or a flow collection
// or quoted item or key that does not end on the line: one that goes on
// could go on at column 0, where its text would pass for a top-level key
// (YAML's flow context does not go by indentation). A quoted value after
// "key: " may go on: that is always a quote (a plain scalar cannot hold
// ": "), and its lines are followed to the closing quote.
func nestedLine(line []byte) (col int, header bool, open byte, ok bool) {
	t := bytes.TrimLeft(line, " ")
	for bytes.HasPrefix(t, []byte("- ")) || string(t) == "-" {
		t = bytes.TrimLeft(t[1:], " ")
	}
	col = len(line) - len(t)
	if len(t) == 0 {
		return col, false, 0, true
	}
	switch t[0] {
	case '?', ':', '&', '*', '!', '%', '@', '`', '|', '>':
		return col, false, 0, false
	case '"', '\'', '[', '{':
		// A quoted key, or a flow collection with keys of its own.
		end, closed := closes(t)
		return col, false, 0, !spellsKey(t) && closed && (restIsBlank(t[end:]) || bytes.HasPrefix(t[end:], []byte(":")))
	}
	// A plain key, then maybe a value.
	k := bytes.Index(t, []byte(": "))
	if k < 0 {
		return col, false, 0, true
	}
	v := bytes.TrimLeft(t[k+2:], " ")
	if len(v) == 0 {
		return col, false, 0, true
	}
	switch v[0] {
	case '"', '\'':
		end, closed := quoteEnd(v, 1, v[0])
		if !closed {
			return col, false, v[0], true
		}
		return col, false, 0, restIsBlank(v[end:])
	case '[', '{':
		end, closed := closes(v)
		return col, false, 0, !spellsKey(v) && closed && restIsBlank(v[end:])
	case '&', '*', '!':
		return col, false, 0, false
	}
	header, ok = blockHeader(v)
	return col, header, 0, ok
}

// plainValue says whether a nested line ends with a plain scalar, which
// may go on on the lines indented more than its parent: from is the
// least indentation of such a line. The parent of "key: text" is the
// mapping at the key's column; that of "- text", the sequence at the
// dash's column.
func plainValue(line []byte) (from int, ok bool) {
	t := bytes.TrimLeft(line, " ")
	dash := -1
	for bytes.HasPrefix(t, []byte("- ")) {
		dash = len(line) - len(t)
		t = bytes.TrimLeft(t[1:], " ")
	}
	plain := func(v []byte) bool { return len(v) > 0 && !bytes.ContainsAny(v[:1], "\"'[{|>&*!#") }
	k := bytes.Index(t, []byte(": "))
	if k < 0 {
		return dash + 1, dash >= 0 && plain(t)
	}
	return len(line) - len(t) + 1, plain(bytes.TrimLeft(t[k+2:], " "))
}

// quoteEnd finds the end of a quoted scalar in t, from i (just after the
// opening quote, or the start of a continuation line): the index after
// the closing quote, or false if it goes on past t.
func quoteEnd(t []byte, i int, quote byte) (int, bool) {
	for i < len(t) {
		c := t[i]
		switch {
		case quote == '"' && c == '\\':
			i += 2
			continue
		case c == quote && quote == '\'' && i+1 < len(t) && t[i+1] == '\'':
			i += 2
			continue
		case c == quote:
			return i + 1, true
		}
		i++
	}
	return len(t), false
}

// restIsBlank says whether nothing but spaces and a comment follows.
func restIsBlank(t []byte) bool {
	t = bytes.TrimLeft(t, " ")
	return len(t) == 0 || t[0] == '#'
}

// blockHeader says whether a value starts a block scalar ("|", ">-", ...);
// ok is false for one with an indentation indicator, whose text the scan
// does not place.
func blockHeader(v []byte) (header, ok bool) {
	if len(v) == 0 || v[0] != '|' && v[0] != '>' {
		return false, true
	}
	i := 1
	for i < len(v) && (v[i] == '-' || v[i] == '+') {
		i++
	}
	if i < len(v) && isDigit(v[i]) {
		return true, false
	}
	rest := v[i:]
	return true, len(rest) == 0 || rest[0] == ' ' && bytes.HasPrefix(bytes.TrimLeft(rest, " "), []byte("#"))
}

// closes finds the end of the quoted scalar or flow collection that t
// starts with: the index after it, or false if it goes on past t.
func closes(t []byte) (int, bool) {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '"', '\'':
			end, ok := quoteEnd(t, i+1, c)
			if !ok {
				return len(t), false
			}
			i = end - 1
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		if depth <= 0 {
			return i + 1, depth == 0
		}
	}
	return len(t), false
}

// packageNameLine reads "packageName: value" from an indented line or a
// sequence item, value as it stands (a caller compares it).
func packageNameLine(line []byte) ([]byte, bool) {
	t := bytes.TrimLeft(line, " ")
	for bytes.HasPrefix(t, []byte("- ")) {
		t = bytes.TrimLeft(t[2:], " ")
	}
	rest, ok := bytes.CutPrefix(t, keyPackageName)
	if !ok || len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	return bytes.Trim(rest[1:], " "), true
}

// otherBreaks says whether doc has a line break other than '\n': a
// carriage return, NEL, LS or PS, which YAML 1.1 breaks lines at too, so
// that a key could start where the scan sees none. (Other characters
// YAML does not accept make the decoder fail, which Mentions allows to
// widen what it reports.)
func otherBreaks(doc []byte) bool {
	return bytes.IndexByte(doc, '\r') >= 0 || bytes.Contains(doc, []byte("\u0085")) ||
		bytes.Contains(doc, []byte("\u2028")) || bytes.Contains(doc, []byte("\u2029"))
}

// spellsKey says whether line has an escape that, in double quotes, can
// spell a letter (\x, \u, \U): a key spelled so is one the scan would
// not see. Every quoted scalar the scan reads ends on its line, so a
// line that has none has no such key.
func spellsKey(line []byte) bool {
	for i := bytes.IndexByte(line, '\\'); i >= 0 && i+1 < len(line); {
		switch line[i+1] {
		case 'x', 'u', 'U':
			return true
		}
		next := bytes.IndexByte(line[i+2:], '\\')
		if next < 0 {
			return false
		}
		i += 2 + next
	}
	return false
}

// simpleKey accepts keys that YAML reads as the same plain string: a
// letter, then letters, digits, '_', '-' and '.'.
func simpleKey(k []byte) bool {
	if len(k) == 0 || !isLetter(k[0]) {
		return false
	}
	for _, c := range k[1:] {
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// simpleScalar accepts a value that YAML reads as that very string: the
// characters of a package or schema name (no space, so no comment), and
// not one that YAML 1.1 resolves to a boolean, a number or null.
func simpleScalar(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '/' {
			return false
		}
	}
	return plainBytesIsString(v)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
