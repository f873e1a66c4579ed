package owners

import (
	"strings"
)

// Commands are read as a person reads the rendered comment (spec rule 10):
// a command counts only on a line a reader sees as a line of plain text of
// its own, not inside a code block, a block quote, an HTML block or
// comment, a code span, a link or image, or a table. The classifier below
// errs one way only: where it cannot be sure a line is plain text, the line
// carries no command. Missing a command costs the commenter a retry;
// seeing one that the reader did not see would let an approval hide in a
// quote or a code sample. FuzzCommandsVisible holds it against a CommonMark
// renderer.

// commandLines reports, for each line of lines, whether a command on it
// counts.
func commandLines(lines []string) []bool {
	out := make([]bool, len(lines))
	var st mdState
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		out[i] = st.next(line)
	}
	return out
}

// mdState is what the lines read so far leave open.
type mdState struct {
	fence    byte // the fence character of an open fenced code block, 0 for none
	fenceLen int
	fenceAt  int    // the width of the containers (quote, list item) the fence opened in
	htmlEnd  string // what ends an open HTML block: a closing tag, "-->", "" for a blank line
	inHTML   bool
	quote    bool // a block quote is open: its lazy continuation lines belong to it
	refDef   bool // a link reference definition whose title may go on
	table    bool // a table is open: every line up to a blank one is a row
	unsure   bool // an inline construct left open (code span, tag, comment, link) until the paragraph ends
}

// next reads one line and says whether a command on it counts.
func (s *mdState) next(line string) bool {
	blank := strings.TrimSpace(line) == ""
	switch {
	case s.fence != 0:
		body := stripContainers(line)
		if closesFence(body, s.fence, s.fenceLen) {
			s.fence = 0
			if at := len(line) - len(body); at < s.fenceAt {
				// Less indented than the container the fence opened
				// in: that container (and its fence) ended, and this
				// line opens a fence of its own.
				s.fence, s.fenceLen, s.fenceAt = opensFenceAt(body, at)
			}
		}
		return false
	case s.inHTML:
		if s.htmlEnd == "" {
			if blank {
				s.inHTML = false
			}
		} else if strings.Contains(strings.ToLower(line), s.htmlEnd) {
			s.inHTML = false
		}
		return false
	}
	if blank {
		s.quote, s.refDef, s.unsure, s.table = false, false, false, false
		return false
	}
	body := stripContainers(line)
	if c, n := opensFence(body); n > 0 {
		// The width of the containers the fence opened in; plain
		// indentation (up to three spaces) is none.
		at := 0
		if strings.TrimLeft(line, " ") != body {
			at = len(line) - len(body)
		}
		s.fence, s.fenceLen, s.fenceAt = c, n, at
		s.unsure = false
		return false
	}
	if end, ok := opensHTMLBlock(body); ok {
		s.inHTML, s.htmlEnd = true, end
		if end != "" && strings.Contains(strings.ToLower(body[1:]), end) {
			// Closed on the line it opened.
			s.inHTML = false
		}
		return false
	}
	if isQuote(line) {
		s.quote = true
		s.scanInline(line)
		return false
	}
	if isTableDelimiter(body) {
		// The line before was the header row; a row needs no pipe.
		s.table = true
	}
	if s.table {
		return false
	}
	if isRefDef(body) {
		s.refDef = true
		return false
	}
	counts := !s.quote && !s.refDef && !s.unsure && plainStart(line)
	s.scanInline(line)
	return counts
}

// plainStart says whether line starts a line of top-level text a command
// may be: at the first column, and not a table row.
func plainStart(line string) bool {
	return strings.HasPrefix(line, "/") && !strings.Contains(line, "|")
}

// stripContainers removes the block quote markers, list markers and
// indentation a block can open behind, so that a fence or an HTML block
// opened inside a list item or a quote is seen: treating what follows as
// code only ever hides commands.
func stripContainers(line string) string {
	for {
		t := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(t, ">"):
			line = t[1:]
		case len(t) > 1 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t'):
			line = t[2:]
		default:
			i := 0
			for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t') {
				line = t[i+2:]
				continue
			}
			return t
		}
	}
}

// opensFence returns the character and length of a fence opening on the
// line, or 0, 0.
func opensFence(body string) (byte, int) {
	if len(body) < 3 || (body[0] != '`' && body[0] != '~') {
		return 0, 0
	}
	c := body[0]
	n := 0
	for n < len(body) && body[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	// A backtick fence's info string holds no backtick; a line that
	// does is inline code, which scanInline sees.
	if c == '`' && strings.Contains(body[n:], "`") {
		return 0, 0
	}
	return c, n
}

// opensFenceAt is opensFence with the containers' width.
func opensFenceAt(body string, at int) (byte, int, int) {
	c, n := opensFence(body)
	return c, n, at
}

// closesFence says whether body (a line, containers stripped) closes a
// fence of n characters c: at least n of them, nothing after but white
// space.
func closesFence(body string, c byte, n int) bool {
	m := 0
	for m < len(body) && body[m] == c {
		m++
	}
	return m >= n && strings.TrimSpace(body[m:]) == ""
}

// htmlBlockEnds maps the HTML blocks that end at a given text (CommonMark's
// kinds 1 to 5) to that text.
var htmlBlockEnds = []struct{ start, end string }{
	{"<!--", "-->"},
	{"<?", "?>"},
	{"<![cdata[", "]]>"},
	{"<script", "</script>"},
	{"<pre", "</pre>"},
	{"<style", "</style>"},
	{"<textarea", "</textarea>"},
}

// opensHTMLBlock says whether an HTML block starts on the line and what
// ends it ("" for a blank line). Any tag at the start of a line is taken
// for one, whether or not CommonMark would start a block there.
func opensHTMLBlock(body string) (end string, ok bool) {
	if !strings.HasPrefix(body, "<") {
		return "", false
	}
	low := strings.ToLower(body)
	for _, k := range htmlBlockEnds {
		if strings.HasPrefix(low, k.start) {
			return k.end, true
		}
	}
	if len(body) > 1 {
		c := body[1]
		if c == '/' || c == '!' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return "", true
		}
	}
	return "", false
}

// isQuote says whether line is a block quote line.
func isQuote(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) < 4 && strings.HasPrefix(t, ">")
}

// isTableDelimiter says whether the line is a table's delimiter row, such
// as "|---|:-:|" or "-|-".
func isTableDelimiter(body string) bool {
	t := strings.TrimSpace(body)
	return strings.Contains(t, "|") && strings.Contains(t, "-") && strings.Trim(t, "|-: \t") == ""
}

// isRefDef says whether the line starts a link reference definition,
// whose title may go on over the following lines.
func isRefDef(body string) bool {
	if !strings.HasPrefix(body, "[") {
		return false
	}
	i := strings.Index(body, "]:")
	return i > 0
}

// scanInline follows the inline constructs that can span lines: a code
// span (an unmatched backtick run), an HTML tag or comment left open, an
// unclosed link or image bracket. What one leaves open makes the rest of
// the paragraph unsure.
func (s *mdState) scanInline(line string) {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			i++
		case c == '`':
			n := 1
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			j := closingRun(line[i+n:], n)
			if j < 0 {
				s.unsure = true
				return
			}
			i += n + j + n - 1
		case strings.HasPrefix(line[i:], "<!--"):
			j := strings.Index(line[i+4:], "-->")
			if j < 0 {
				s.unsure = true
				return
			}
			i += 4 + j + 2
		case c == '<' && i+1 < len(line) && (isLetter(line[i+1]) || line[i+1] == '/' || line[i+1] == '!' || line[i+1] == '?'):
			j := strings.IndexByte(line[i+1:], '>')
			if j < 0 {
				s.unsure = true
				return
			}
			i += 1 + j
		case c == '~':
			// A strikethrough (GitHub's ~~ or ~) may cross out what
			// follows, up to a closing run on a later line of the
			// paragraph. Whether a run opens or closes depends on the
			// characters around it (CommonMark's flanking rules, with
			// Unicode punctuation and invalid bytes), so any run of one
			// or two makes the rest of the paragraph unsure rather than
			// being paired here: a command after a tilde in the same
			// paragraph is missed, never one a reader sees struck out.
			n := 1
			for i+n < len(line) && line[i+n] == '~' {
				n++
			}
			if n <= 2 {
				s.unsure = true
				return
			}
			i += n - 1
		case c == '[':
			j := strings.IndexByte(line[i+1:], ']')
			if j < 0 {
				s.unsure = true
				return
			}
			rest := line[i+2+j:]
			if strings.HasPrefix(rest, "(") && !strings.Contains(rest, ")") {
				s.unsure = true
				return
			}
		}
	}
}

// closingRun returns the index in rest of a backtick run of exactly n, or
// -1.
func closingRun(rest string, n int) int { return closingRunOf(rest, '`', n) }

// closingRunOf returns the index in rest of a run of exactly n c, or -1.
func closingRunOf(rest string, c byte, n int) int {
	for i := 0; i < len(rest); {
		if rest[i] != c {
			i++
			continue
		}
		m := 0
		for i+m < len(rest) && rest[i+m] == c {
			m++
		}
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
