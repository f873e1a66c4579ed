package fbc

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a fast path for the YAML that catalogs are made of: block
// mappings and sequences, plain and quoted one-line scalars, literal block
// scalars and empty flow collections, with every scalar resolving to a
// string. Such documents are turned into a small tree without going through
// goyaml, JSON and back, which is most of opm's cost on large catalogs.
//
// The fast path is all-or-nothing per document: at the first construct it
// does not handle with certainty (anchors, tags, flow content, multi-line
// plain scalars, scalars YAML 1.1 would read as numbers, booleans or null,
// duplicate keys, tabs, anything unusual), it gives up and the document goes
// through the exact path. A fuzz test holds the two paths to the same result.

// ynode is a parsed YAML value: a string, a mapping or a sequence.
type ynode struct {
	kind  byte   // 's' string, 'b' boolean, 'm' mapping or 'l' sequence
	str   []byte // the string, or "true"/"false"
	keys  []string
	vals  []*ynode
	items []*ynode
	index map[string]int
}

func (n *ynode) get(key string) *ynode {
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return n.vals[i]
		}
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// add appends a key, reporting false if the mapping has it already. Large
// mappings get an index so that hostile input cannot make this quadratic.
func (n *ynode) add(key string, v *ynode) bool {
	if n.get(key) != nil {
		return false
	}
	if n.index == nil && len(n.keys) >= 16 {
		n.index = make(map[string]int, 2*len(n.keys))
		for i, k := range n.keys {
			n.index[k] = i
		}
	}
	if n.index != nil {
		n.index[key] = len(n.keys)
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
	return true
}

type yline struct {
	ind  int
	text []byte // content after the indentation, without the newline
}

type fastParser struct {
	lines []yline
	i     int
	ok    bool
}

// parseFastYAML parses doc or reports false when it needs the exact path.
func parseFastYAML(doc []byte) (*ynode, bool) {
	if !plainText(doc) {
		return nil, false
	}
	p := fastParser{ok: true}
	p.lines = make([]yline, 0, bytes.Count(doc, []byte("\n"))+1)
	first := true
	for len(doc) > 0 {
		isFirst := first
		first = false
		j := bytes.IndexByte(doc, '\n')
		var line []byte
		if j < 0 {
			line, doc = doc, nil
		} else {
			line, doc = doc[:j], doc[j+1:]
		}
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		text := line[ind:]
		if isFirst && bytes.HasPrefix(line, []byte("---")) {
			// The document start marker opm's reader keeps in front of the
			// first document; it may only carry a comment. "---#" is no
			// marker to YAML but a scalar, which the exact decoder refuses
			// in front of a mapping.
			if rest := line[3:]; len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
				return nil, false
			}
			continue
		}
		if ind == 0 && (bytes.HasPrefix(line, []byte("%")) || bytes.HasPrefix(line, []byte("..."))) {
			return nil, false // a directive or a document end marker
		}
		p.lines = append(p.lines, yline{ind: ind, text: text})
	}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, false // an empty document decodes to null
	}
	root := p.block(0)
	p.skipBlank()
	if !p.ok || p.i != len(p.lines) || root.kind != 'm' {
		return nil, false
	}
	return root, true
}

// plainText accepts only what goyaml reads without complaint and with no
// special line breaks: printable ASCII, newlines, and 2- and 3-byte UTF-8
// that goyaml counts as printable, minus NEL, LS, PS and the BOM.
func plainText(b []byte) bool {
	for i := 0; i < len(b); {
		// Eight bytes at a time while they are all printable ASCII: the
		// base64 of a bundle's manifests is most of a catalog's bytes.
		for i+8 <= len(b) && printableASCII8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c < 0x80 {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || sz == 4 {
			return false
		}
		switch {
		case r == 0x85, r == 0x2028, r == 0x2029, r == 0xFEFF:
			return false
		case r < 0xA0, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += sz
	}
	return true
}

// printableASCII8 says whether every byte of w is in 0x20-0x7e. A false
// answer only sends the caller to its byte-by-byte loop.
func printableASCII8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte below 0x20 borrows from its high bit; one of 0x7f or more
	// carries into it (or has it set).
	below := (w - ones*0x20) &^ w & highs
	above := (w + ones*(0x80-0x7f)) | w
	return below|above&highs == 0
}

func (p *fastParser) fail() *ynode {
	p.ok = false
	return &ynode{kind: 's'}
}

// skipBlank moves past empty and comment-only lines.
func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) {
		t := p.lines[p.i].text
		if len(bytes.TrimRight(t, " ")) == 0 || t[0] == '#' {
			p.i++
			continue
		}
		return
	}
}

// block parses the node starting at the current line, which must be
// indented at least min.
func (p *fastParser) block(min int) *ynode {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return p.fail()
	}
	l := p.lines[p.i]
	if l.ind < min {
		return p.fail()
	}
	if isDash(l.text) {
		return p.seq(l.ind)
	}
	return p.mapping(l.ind)
}

func isDash(t []byte) bool {
	return len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}

var keyChars = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "._/-" {
		t[c] = true
	}
	return t
}()

func (p *fastParser) mapping(ind int) *ynode {
	n := &ynode{kind: 'm'}
	for p.ok {
		p.skipBlank()
		if p.i >= len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.ind < ind {
			break
		}
		if l.ind > ind || isDash(l.text) {
			return p.fail()
		}
		k := 0
		for k < len(l.text) && keyChars[l.text[k]] {
			k++
		}
		if k == 0 || k >= len(l.text) || l.text[k] != ':' || (k+1 < len(l.text) && l.text[k+1] != ' ') {
			return p.fail()
		}
		key := string(l.text[:k])
		if key[0] == '-' || !plainIsString(key) || n.get(key) != nil {
			return p.fail()
		}
		rest := bytes.TrimLeft(l.text[k+1:], " ")
		p.i++
		n.add(key, p.value(rest, ind))
	}
	return n
}

func (p *fastParser) seq(ind int) *ynode {
	n := &ynode{kind: 'l'}
	for p.ok {
		p.skipBlank()
		if p.i >= len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.ind < ind || (l.ind == ind && !isDash(l.text)) {
			break
		}
		if l.ind > ind {
			return p.fail()
		}
		rest := l.text[1:]
		trimmed := bytes.TrimLeft(rest, " ")
		col := ind + 1 + (len(rest) - len(trimmed))
		switch {
		case len(trimmed) == 0 || trimmed[0] == '#':
			p.i++
			n.items = append(n.items, p.block(ind+1))
		case isDash(trimmed):
			return p.fail()
		case looksLikeKey(trimmed):
			// "- key: value" opens a mapping whose keys sit at col.
			p.lines[p.i] = yline{ind: col, text: trimmed}
			n.items = append(n.items, p.mapping(col))
		default:
			p.i++
			n.items = append(n.items, p.value(trimmed, ind))
		}
	}
	return n
}

func looksLikeKey(t []byte) bool {
	k := 0
	for k < len(t) && keyChars[t[k]] {
		k++
	}
	return k > 0 && k < len(t) && t[k] == ':' && (k+1 == len(t) || t[k+1] == ' ')
}

// value parses what follows "key:" (or "- ") on a line whose parent node is
// indented ind; nested blocks follow on the next lines.
func (p *fastParser) value(rest []byte, ind int) *ynode {
	if len(rest) == 0 || rest[0] == '#' {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return p.fail() // null
		}
		l := p.lines[p.i]
		if l.ind > ind {
			return p.block(ind + 1)
		}
		if l.ind == ind && isDash(l.text) {
			return p.seq(ind)
		}
		return p.fail() // null
	}
	var n *ynode
	switch rest[0] {
	case '|':
		return p.literal(rest, ind)
	case '\'', '"':
		n = p.quoted(rest, ind)
	case '{', '[':
		switch string(bytes.TrimRight(rest, " ")) {
		case "{}":
			n = &ynode{kind: 'm'}
		case "[]":
			n = &ynode{kind: 'l'}
		default:
			return p.fail()
		}
	case '-', '?', ':', ',', ']', '}', '#', '&', '*', '!', '>', '%', '@', '`':
		if rest[0] != '-' || len(rest) < 2 || rest[1] == ' ' {
			return p.fail()
		}
		fallthrough
	default:
		n = p.plain(rest, ind)
	}
	if !p.ok {
		return n
	}
	// A more indented line after a one-line scalar would continue it.
	p.skipBlankAndComments()
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		return p.fail()
	}
	return n
}

func (p *fastParser) skipBlankAndComments() {
	for p.i < len(p.lines) {
		t := p.lines[p.i].text
		if len(bytes.TrimRight(t, " ")) == 0 {
			p.i++
			continue
		}
		if t[0] == '#' {
			// A comment more indented than the scalar it follows is legal
			// YAML, but rare enough to leave to the exact path.
			return
		}
		return
	}
}

func blankOrComment(t []byte) bool {
	t = bytes.TrimLeft(t, " ")
	return len(t) == 0 || t[0] == '#' && len(t) > 0
}

// plainLineOK rejects text that would end or break a plain scalar, or that
// YAML 1.1 might read differently: ": " and " #" inside, a trailing ':', a
// tab, a leading indicator.
func plainLineOK(t []byte, first bool) bool {
	if len(t) == 0 || t[len(t)-1] == ':' || bytes.IndexByte(t, '\t') >= 0 ||
		bytes.Contains(t, []byte(": ")) || bytes.Contains(t, []byte(" #")) {
		return false
	}
	if !first && t[0] == '#' {
		return false // a comment, which ends the scalar
	}
	return true
}

// plain reads a plain scalar that starts with first and may continue on
// more indented lines, folding line breaks as YAML does: one break becomes a
// space, each empty line a newline.
func (p *fastParser) plain(first []byte, ind int) *ynode {
	out := bytes.TrimRight(first, " ")
	if !plainLineOK(out, true) {
		return p.fail()
	}
	copied := false
	for {
		j, empty := p.i, 0
		for j < len(p.lines) && len(p.lines[j].text) == 0 {
			j++
			empty++
		}
		if j >= len(p.lines) || p.lines[j].ind <= ind {
			break
		}
		line := bytes.TrimRight(p.lines[j].text, " ")
		if !plainLineOK(line, false) {
			return p.fail()
		}
		if !copied {
			out = append([]byte(nil), out...)
			copied = true
		}
		if empty == 0 {
			out = append(out, ' ')
		}
		for ; empty > 0; empty-- {
			out = append(out, '\n')
		}
		out = append(out, line...)
		p.i = j + 1
	}
	if plainBytesIsString(out) {
		return &ynode{kind: 's', str: out}
	}
	switch string(out) {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return &ynode{kind: 'b', str: []byte("true")}
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return &ynode{kind: 'b', str: []byte("false")}
	}
	return p.fail() // null or a number
}

// quoted reads a single- or double-quoted scalar that may span lines,
// folding breaks like plain scalars do; in double quotes a backslash before
// the break joins the lines without a space.
func (p *fastParser) quoted(rest []byte, ind int) *ynode {
	double := rest[0] == '"'
	out := []byte{}
	line := rest[1:]
	var ws []byte
	for {
		escaped := false
	scan:
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c == ' ':
				ws = append(ws, c)
				continue
			case c == '\t':
				return p.fail()
			case !double && c == '\'':
				out = append(out, ws...)
				ws = ws[:0]
				if i+1 < len(line) && line[i+1] == '\'' {
					out = append(out, '\'')
					i++
					continue
				}
				return p.endQuoted(out, line[i+1:])
			case double && c == '"':
				out = append(out, ws...)
				return p.endQuoted(out, line[i+1:])
			case double && c == '\\':
				out = append(out, ws...)
				ws = ws[:0]
				if i+1 == len(line) {
					escaped = true
					break scan
				}
				esc, n, ok := unescape(line[i+1:])
				if !ok {
					return p.fail()
				}
				out = append(out, esc...)
				i += n
				continue
			}
			out = append(out, ws...)
			ws = ws[:0]
			out = append(out, c)
		}
		// A break: blanks before it are dropped, and it folds into a space,
		// or into one newline per empty line that follows, or into nothing
		// when escaped.
		ws = ws[:0]
		empty := 0
		for p.i < len(p.lines) && len(p.lines[p.i].text) == 0 {
			p.i++
			empty++
		}
		if p.i >= len(p.lines) || p.lines[p.i].ind <= ind {
			return p.fail()
		}
		if !escaped && empty == 0 {
			out = append(out, ' ')
		}
		for ; empty > 0; empty-- {
			out = append(out, '\n')
		}
		line = p.lines[p.i].text
		p.i++
	}
}

func (p *fastParser) endQuoted(out, tail []byte) *ynode {
	if !blankOrComment(tail) {
		return p.fail()
	}
	return &ynode{kind: 's', str: out}
}

// unescape decodes one double-quoted escape (after the backslash), returning
// the bytes and how many input bytes it used.
func unescape(t []byte) ([]byte, int, bool) {
	n := 0
	switch t[0] {
	case '0':
		return []byte{0}, 1, true
	case 'a':
		return []byte{7}, 1, true
	case 'b':
		return []byte{8}, 1, true
	case 't', '\t':
		return []byte{9}, 1, true
	case 'n':
		return []byte{10}, 1, true
	case 'v':
		return []byte{11}, 1, true
	case 'f':
		return []byte{12}, 1, true
	case 'r':
		return []byte{13}, 1, true
	case 'e':
		return []byte{0x1b}, 1, true
	case ' ', '"', '\'', '\\':
		return []byte{t[0]}, 1, true
	case 'N':
		return []byte("\u0085"), 1, true
	case '_':
		return []byte("\u00a0"), 1, true
	case 'L':
		return []byte("\u2028"), 1, true
	case 'P':
		return []byte("\u2029"), 1, true
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return nil, 0, false
	}
	if len(t) < 1+n {
		return nil, 0, false
	}
	v, err := strconv.ParseUint(string(t[1:1+n]), 16, 32)
	if err != nil || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF {
		return nil, 0, false
	}
	return utf8.AppendRune(nil, rune(v)), 1 + n, true
}

// literal parses a "|" or "|-" block scalar, with an optional indentation
// indicator, whose header is rest.
func (p *fastParser) literal(rest []byte, ind int) *ynode {
	hdr := bytes.TrimRight(rest, " ")
	keepOne := true
	explicit := 0
	for _, c := range hdr[1:] {
		switch {
		case c == '-' && keepOne:
			keepOne = false
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return p.fail() // keep chomping, folded style, comments
		}
	}
	// The content indentation is given, or that of the first non-empty
	// line; empty lines before it must not be longer.
	start := p.i
	blockInd := -1
	maxBlank := 0
	for j := start; j < len(p.lines); j++ {
		l := p.lines[j]
		if len(l.text) == 0 {
			maxBlank = max(maxBlank, l.ind)
			continue
		}
		blockInd = l.ind
		break
	}
	if explicit > 0 {
		if blockInd >= 0 && blockInd < ind+explicit {
			return p.fail()
		}
		blockInd = ind + explicit
	}
	if blockInd <= ind || maxBlank > blockInd {
		// No content (an empty scalar, or the next node follows), or
		// leading empty lines longer than the content's indentation.
		return p.fail()
	}
	var out []byte
	pendingBreaks := 0
	content := false
	j := start
	for ; j < len(p.lines); j++ {
		l := p.lines[j]
		if len(l.text) == 0 {
			if l.ind > blockInd {
				return p.fail() // a line of spaces only, longer than the indent
			}
			pendingBreaks++
			continue
		}
		if l.ind < blockInd {
			break
		}
		for ; pendingBreaks > 0; pendingBreaks-- {
			out = append(out, '\n')
		}
		// The line break that ends a content line; empty lines before
		// the first one are one newline each and no more.
		if content {
			out = append(out, '\n')
		}
		content = true
		for k := blockInd; k < l.ind; k++ {
			out = append(out, ' ')
		}
		out = append(out, l.text...)
	}
	if len(out) > 0 && keepOne {
		out = append(out, '\n')
	}
	// Trailing empty lines belong to nobody under clip and strip chomping.
	p.i = j
	if out == nil {
		out = []byte{}
	}
	return &ynode{kind: 's', str: out}
}

// plainBytesIsString is plainIsString without copying the scalars that
// cannot resolve to anything but a string, which includes every long one.
func plainBytesIsString(s []byte) bool {
	if len(s) > 0 && !resolveHint[s[0]] {
		return true
	}
	return plainIsString(string(s))
}

var resolveHint = func() (t [256]bool) {
	for _, c := range "+-0123456789.yYnNtTfFoO~<" {
		t[c] = true
	}
	return t
}()

var yamlFloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// plainIsString reports whether goyaml (YAML 1.1) resolves the plain scalar
// s to a string, mirroring its resolver: only scalars starting with a sign,
// a digit, '.', '~' or one of yYnNtTfFoO can be anything else. Timestamps
// are decoded as strings into interface values, so they count as strings.
func plainIsString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		plain := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return false
		}
		if yamlFloatRE.MatchString(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return false
			}
		}
		if strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			return false // possibly binary; not worth the exact rule
		}
		return !inResolveMap(s)
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return false
		}
		return !inResolveMap(s)
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !inResolveMap(s)
	case c == '<':
		return s != "<<"
	}
	return true
}

func inResolveMap(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return true
	}
	return false
}
