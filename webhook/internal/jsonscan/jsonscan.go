// Package jsonscan is a cursor over a JSON text that checks the whole
// text against the JSON grammar while the caller decodes only the members
// it names. Webhook routing reads a handful of fields out of payloads of
// tens of kilobytes on the accept path; decoding them whole with
// encoding/json cost more than everything else there. What encoding/json
// refuses, this refuses too: the fuzz test of routing holds the two
// together.
package jsonscan

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// New is a Reader at the start of b.
func New(b []byte) *Reader { return &Reader{b: b} }

// AtEnd says whether only white space is left.
func (s *Reader) AtEnd() bool {
	s.WS()
	return s.i == len(s.b)
}

// maxJSONDepth bounds nesting at encoding/json's limit (depth counts from
// 0, so 10000 open brackets are allowed), so that a deep body
// cannot exhaust the stack.
const maxJSONDepth = 10000

// Reader is a cursor over a JSON text. Methods that read a value skip
// the white space before it; the callers name what they expect.
type Reader struct {
	b []byte
	i int
}

// Errorf is an error at the cursor.
func (s *Reader) Errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

// Peek is the byte at the cursor, 0 at the end.
func (s *Reader) Peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// WS passes over white space.
func (s *Reader) WS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// ObjectOrNull reads an object, calling field with the cursor on each
// member's value (field must consume it), or a null; it reports whether
// there was an object.
func (s *Reader) ObjectOrNull(depth int, field func(key []byte) error) (bool, error) {
	s.WS()
	if s.Peek() == 'n' {
		return false, s.Literal("null")
	}
	if s.Peek() != '{' {
		return false, s.Errorf("want an object")
	}
	return true, s.Object(depth, field)
}

// Object reads an object at the cursor, calling field with the cursor on
// each member's value (field must consume it).
func (s *Reader) Object(depth int, field func(key []byte) error) error {
	if depth >= maxJSONDepth {
		return s.Errorf("nested too deeply")
	}
	s.i++ // {
	s.WS()
	if s.Peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.WS()
		if s.Peek() != '"' {
			return s.Errorf("want a member name")
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		s.WS()
		if s.Peek() != ':' {
			return s.Errorf("want ':' after a member name")
		}
		s.i++
		s.WS()
		if err := field(key); err != nil {
			return err
		}
		s.WS()
		switch s.Peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.Errorf("want ',' or '}' in an object")
		}
	}
}

// ArrayOrNull reads an array, calling elem with the cursor on each
// element (elem must consume it), or a null.
func (s *Reader) ArrayOrNull(depth int, elem func() error) error {
	s.WS()
	switch s.Peek() {
	case 'n':
		return s.Literal("null")
	case '[':
	default:
		return s.Errorf("want an array")
	}
	if depth >= maxJSONDepth {
		return s.Errorf("nested too deeply")
	}
	s.i++
	s.WS()
	if s.Peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.WS()
		if err := elem(); err != nil {
			return err
		}
		s.WS()
		switch s.Peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.Errorf("want ',' or ']' in an array")
		}
	}
}

// Skip checks and passes over one value of any kind.
func (s *Reader) Skip(depth int) error {
	s.WS()
	switch c := s.Peek(); {
	case c == '{':
		return s.Object(depth, func([]byte) error { return s.Skip(depth + 1) })
	case c == '[':
		return s.ArrayOrNull(depth, func() error { return s.Skip(depth + 1) })
	case c == '"':
		_, _, err := s.strRaw()
		return err
	case c == 't':
		return s.Literal("true")
	case c == 'f':
		return s.Literal("false")
	case c == 'n':
		return s.Literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	case c == 0 && s.i >= len(s.b):
		return s.Errorf("unexpected end of input")
	}
	return s.Errorf("unexpected character %q", s.Peek())
}

// Literal reads the word (true, false, null).
func (s *Reader) Literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.Errorf("want %s", word)
	}
	s.i += len(word)
	return nil
}

// strRaw passes over a string, checking its escapes, and returns its bytes
// between the quotes and whether it holds an escape.
func (s *Reader) strRaw() ([]byte, bool, error) {
	start := s.i + 1
	escaped := false
	for i := start; i < len(s.b); {
		// Most bytes need no attention: pass over them in a tight loop.
		for i < len(s.b) && plainStringByte[s.b[i]] {
			i++
		}
		if i == len(s.b) {
			break
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				s.i = i
				return nil, false, s.Errorf("unterminated string")
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.b) || !isHex4(s.b[i+2:i+6]) {
					s.i = i
					return nil, false, s.Errorf("bad \\u escape")
				}
				i += 6
			default:
				s.i = i
				return nil, false, s.Errorf("bad escape")
			}
		case c < 0x20:
			s.i = i
			return nil, false, s.Errorf("control character in a string")
		default:
			i++
		}
	}
	s.i = len(s.b)
	return nil, false, s.Errorf("unterminated string")
}

// plainStringByte marks the bytes a string holds as they are: not the
// quote, the backslash or a control character.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// key reads a member name. Unescaped names (all of GitHub's) are returned
// as a slice of the body, not copied: the callers only compare them, and
// comparing string(key) does not allocate.
func (s *Reader) key() ([]byte, error) {
	at := s.i
	raw, escaped, err := s.strRaw()
	if err != nil || (!escaped && utf8.Valid(raw)) {
		return raw, err
	}
	s.i = at
	v, _, err := s.Str()
	return []byte(v), err
}

// Str reads a string or null (null reports "", true).
func (s *Reader) Str() (string, bool, error) {
	s.WS()
	switch s.Peek() {
	case 'n':
		return "", true, s.Literal("null")
	case '"':
	default:
		return "", false, s.Errorf("want a string")
	}
	at := s.i
	raw, escaped, err := s.strRaw()
	if err != nil || (!escaped && utf8.Valid(raw)) {
		return string(raw), false, err
	}
	// Escapes and invalid UTF-8 (which encoding/json replaces with U+FFFD)
	// are rare in the fields routing reads; let the standard library decode
	// them exactly.
	var v string
	if err := json.Unmarshal(s.b[at:s.i], &v); err != nil {
		return "", false, fmt.Errorf("invalid JSON string at byte %d: %w", at, err)
	}
	return v, false, nil
}

// number passes over a number per the JSON grammar and returns its text.
func (s *Reader) number() ([]byte, error) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.Peek() == '-' {
		s.i++
	}
	switch {
	case s.Peek() == '0':
		s.i++
	case s.Peek() >= '1' && s.Peek() <= '9':
		digits()
	default:
		return nil, s.Errorf("bad number")
	}
	if s.Peek() == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.Errorf("bad number")
		}
	}
	if c := s.Peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.Peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return nil, s.Errorf("bad number")
		}
	}
	return s.b[start:s.i], nil
}

// Int64Into reads a whole number into *dst; a null leaves it as it was.
func (s *Reader) Int64Into(dst *int64) error {
	s.WS()
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return s.Errorf("want a number")
	}
	at := s.i
	text, err := s.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		s.i = at
		return s.Errorf("%s is not a whole number", text)
	}
	*dst = n
	return nil
}

// IntInto reads a whole number into *dst; a null leaves it as it was.
func (s *Reader) IntInto(dst *int) error {
	n := int64(*dst)
	if err := s.Int64Into(&n); err != nil {
		return err
	}
	if int64(int(n)) != n {
		return s.Errorf("%d is out of range", n)
	}
	*dst = int(n)
	return nil
}

// StrInto reads a string into *dst; a null leaves it as it was.
func (s *Reader) StrInto(dst *string) error {
	v, null, err := s.Str()
	if err == nil && !null {
		*dst = v
	}
	return err
}
