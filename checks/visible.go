package checks

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text taken from a pull request (file names, package, channel and bundle
// names, image references, YAML values, logins, comment text) is shown to
// reviewers in check runs, comments, annotations, job summaries, logs and
// terminals. A control character there can rewrite a terminal line (ESC[,
// CR), and a bidirectional override or an invisible format character can
// make a name read as another (U+202E turns "txt.exe" around, U+200B hides
// inside a login). Every reporter passes what it shows through the
// functions below, once, at the point where text leaves for its medium, so
// that a reviewer sees such a character spelled out instead of obeyed.

// Visible spells out every character of s that a reader would not see as
// itself: C0 and C1 control characters and DEL, Unicode format characters
// (bidirectional embeddings, overrides and isolates, U+061C, U+200B-U+200F,
// U+2060-U+2064, U+FEFF, tag characters) and the line and paragraph
// separators U+2028 and U+2029. Line feeds and tabs stay, for text that is
// meant to span lines; everything else is written as Go writes it in a
// quoted string: \r, \x1b, \u202e, \U000e0041. A byte that is not valid
// UTF-8 is written as \xNN too. A backslash is left as it is, so a name
// that spells out an escape itself reads like one: that hides nothing.
func Visible(s string) string {
	return visible(s, false)
}

// VisibleLine is Visible for a value that must stay on one line (a file
// name, a package name, a login, a title): line feeds and tabs are
// spelled out as well.
func VisibleLine(s string) string {
	return visible(s, true)
}

// Hidden reports whether r is a character that Visible spells out.
func Hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	// Most text is in ranges without format characters; deciding those
	// here keeps the table lookup off the common path.
	case r < 0x600:
		return r == 0xad
	case r >= 0x2070 && r < 0xfeff, r >= 0x1f000 && r < 0xe0000:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

func visible(s string, line bool) string {
	if clean(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && line:
			b.WriteString(`\n`)
		case r == '\t' && line:
			b.WriteString(`\t`)
		case Hidden(r):
			b.WriteString(spell(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean is the fast path: nearly all text has nothing to spell out. Only
// bytes outside ASCII are decoded.
func clean(s string, line bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if (c == '\n' || c == '\t') && !line {
					i++
					continue
				}
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Hidden(r) {
			return false
		}
		i += n
	}
	return true
}

// spell writes r as a Go escape sequence.
func spell(r rune) string {
	switch r {
	case '\r':
		return `\r`
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\v':
		return `\v`
	}
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// visibleFinding is f with every field spelled out as its reporters show
// it: the message may span lines, the rest are one-line names.
func visibleFinding(f Finding) Finding {
	f.Rule = VisibleLine(f.Rule)
	f.File = VisibleLine(f.File)
	f.Package = VisibleLine(f.Package)
	f.Channel = VisibleLine(f.Channel)
	f.Bundle = VisibleLine(f.Bundle)
	f.Message = Visible(f.Message)
	return f
}

// visibleJSON rewrites the characters Visible spells out as JSON \u
// escapes in an encoded JSON document. encoding/json already escapes C0
// controls (and U+2028, U+2029), but writes DEL, C1 controls and format
// characters such as U+202E raw. Outside strings JSON holds only ASCII
// punctuation and blanks, so every such character sits inside a string,
// where the escape decodes to the very same character: a program reading
// the document gets the data unchanged, while the bytes a person sees
// (a terminal, a log viewer, a diff) show the escape.
func visibleJSON(data []byte) []byte {
	if !hasHiddenJSON(data) {
		return data
	}
	out := make([]byte, 0, len(data)+32)
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r != '\n' && r != '\t' && r >= 0x20 && Hidden(r) {
			if r > 0xffff {
				// JSON spells characters outside the BMP as a
				// UTF-16 surrogate pair.
				r -= 0x10000
				out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, data[i:i+n]...)
		}
		i += n
	}
	return out
}

func hasHiddenJSON(data []byte) bool {
	for i, c := range data {
		if c == 0x7f {
			return true
		}
		if c >= utf8.RuneSelf {
			rest := data[i:]
			for len(rest) > 0 {
				r, n := utf8.DecodeRune(rest)
				if r >= 0x20 && r != '\n' && r != '\t' && Hidden(r) {
					return true
				}
				rest = rest[n:]
			}
			return false
		}
	}
	return false
}

// VisibleJSONWriter passes each write through visibleJSON: for a JSON log
// handler, which writes each record whole in one call.
func VisibleJSONWriter(w io.Writer) io.Writer {
	return visibleJSONWriter{w}
}

type visibleJSONWriter struct{ w io.Writer }

func (v visibleJSONWriter) Write(p []byte) (int, error) {
	if _, err := v.w.Write(visibleJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Code is s as a Markdown code span that shows s literally, whatever it
// holds: spelled out as VisibleLine does, fenced by a run of backticks
// longer than any inside it (CommonMark), and padded with a space where s
// starts or ends with a backtick or a space, which the padding rule would
// otherwise eat. In a table cell the caller still escapes '|', which GFM
// reads as a cell boundary even inside a code span.
func Code(s string) string {
	s = VisibleLine(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" {
		return fence + " " + fence
	}
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ') {
		s = " " + s + " "
	}
	return fence + s + fence
}

// MarkdownText is s as Markdown text that renders as s: spelled out as
// Visible does, with every ASCII punctuation character that Markdown could
// read as inline syntax (emphasis, links, images, HTML, code spans,
// strike-through, table cells, entities, mentions and issue references)
// escaped by a backslash, and at the start of a line also what would start
// a block (a heading, a list, a rule, a setext underline). Line breaks stay.
// A pull request cannot make text shown this way into a link, an image, an
// HTML block, a mention or a heading.
func MarkdownText(s string) string {
	s = Visible(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	lineStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(markdownInline, c) >= 0:
			b.WriteByte('\\')
		case lineStart && strings.IndexByte("+-=", c) >= 0:
			b.WriteByte('\\')
		case lineStart && c >= '0' && c <= '9':
			// An ordered list item: digits, then '.' or ')'.
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			b.WriteString(s[i:j])
			if j < len(s) && (s[j] == '.' || s[j] == ')') {
				b.WriteByte('\\')
			}
			i = j - 1
			lineStart = false
			continue
		}
		b.WriteByte(c)
		switch {
		case c == '\n':
			lineStart = true
		case c != ' ' && c != '\t':
			lineStart = false
		}
	}
	return b.String()
}

// markdownInline is the ASCII punctuation that can start or end inline
// Markdown anywhere in a line; CommonMark lets a backslash escape each.
// '@' and '#' are GitHub's: a mention notifies the user named.
const markdownInline = "\\`*_[]<>|~!&@#"
