package fbc

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// parseFastJSONStream parses a whole file of concatenated JSON objects into
// trees, or reports false when any part of it needs the exact decoder: other
// top-level values, numbers, nulls, duplicate keys, escapes that decode to
// surrogates, invalid UTF-8, syntax errors. starts holds each object's
// span.
func parseFastJSONStream(data []byte) (roots []*ynode, spans [][2]int, ok bool) {
	p := jsonParser{data: data}
	for {
		p.space()
		if p.i >= len(data) {
			return roots, spans, true
		}
		if data[p.i] != '{' {
			return nil, nil, false
		}
		start := p.i
		n := p.value(0)
		if !p.ok {
			return nil, nil, false
		}
		roots = append(roots, n)
		spans = append(spans, [2]int{start, p.i})
	}
}

type jsonParser struct {
	data []byte
	i    int
	ok   bool
}

// maxJSONDepth matches encoding/json's nesting limit; deeper input goes to
// the exact decoder, which reports it.
const maxJSONDepth = 10000

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) *ynode {
	p.ok = true
	if depth > maxJSONDepth {
		p.ok = false
		return nil
	}
	p.space()
	if p.i >= len(p.data) {
		p.ok = false
		return nil
	}
	switch c := p.data[p.i]; c {
	case '{':
		p.i++
		n := &ynode{kind: 'm'}
		p.space()
		if p.i < len(p.data) && p.data[p.i] == '}' {
			p.i++
			return n
		}
		for {
			p.space()
			if p.i >= len(p.data) || p.data[p.i] != '"' {
				p.ok = false
				return nil
			}
			k, ok := p.str()
			if !ok {
				p.ok = false
				return nil
			}
			key := string(k)
			p.space()
			if p.i >= len(p.data) || p.data[p.i] != ':' {
				p.ok = false
				return nil
			}
			p.i++
			v := p.value(depth + 1)
			if !p.ok {
				return nil
			}
			if !n.add(key, v) {
				p.ok = false // duplicate keys: the last one wins in opm
				return nil
			}
			p.space()
			if p.i >= len(p.data) {
				p.ok = false
				return nil
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			if p.data[p.i] == '}' {
				p.i++
				return n
			}
			p.ok = false
			return nil
		}
	case '[':
		p.i++
		n := &ynode{kind: 'l'}
		p.space()
		if p.i < len(p.data) && p.data[p.i] == ']' {
			p.i++
			return n
		}
		for {
			v := p.value(depth + 1)
			if !p.ok {
				return nil
			}
			n.items = append(n.items, v)
			p.space()
			if p.i >= len(p.data) {
				p.ok = false
				return nil
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			if p.data[p.i] == ']' {
				p.i++
				return n
			}
			p.ok = false
			return nil
		}
	case '"':
		s, ok := p.str()
		p.ok = ok
		return &ynode{kind: 's', str: s}
	case 't':
		if bytes.HasPrefix(p.data[p.i:], []byte("true")) {
			p.i += 4
			return &ynode{kind: 'b', str: []byte("true")}
		}
	case 'f':
		if bytes.HasPrefix(p.data[p.i:], []byte("false")) {
			p.i += 5
			return &ynode{kind: 'b', str: []byte("false")}
		}
	}
	p.ok = false // numbers, null, anything else
	return nil
}

// str reads a string at p.i (on its opening quote). Strings without escapes
// are returned in place.
func (p *jsonParser) str() ([]byte, bool) {
	p.i++
	start := p.i
	end := bytes.IndexByte(p.data[start:], '"')
	if end < 0 {
		return nil, false
	}
	raw := p.data[start : start+end]
	if bytes.IndexByte(raw, '\\') < 0 {
		if !plainJSONString(raw) {
			return nil, false
		}
		p.i = start + end + 1
		return raw, true
	}
	var out []byte
	i := start
	for i < len(p.data) {
		c := p.data[i]
		switch {
		case c == '"':
			p.i = i + 1
			if !utf8.Valid(out) {
				return nil, false
			}
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(p.data) {
			return nil, false
		}
		switch e := p.data[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(p.data) {
				return nil, false
			}
			v, err := strconv.ParseUint(string(p.data[i+2:i+6]), 16, 16)
			if err != nil || (v >= 0xD800 && v <= 0xDFFF) {
				return nil, false // surrogates: left to encoding/json
			}
			out = utf8.AppendRune(out, rune(v))
			i += 6
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return nil, false
}

// plainJSONString accepts valid UTF-8 without control characters.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}
