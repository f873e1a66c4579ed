package fbc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

var yamlLineRE = regexp.MustCompile(`yaml: line (\d+):`)

// A document is one object read from a file, or the error that stopped it.
type document struct {
	meta meta
	// offset and line locate the start of the document's content in the file.
	offset int
	line   int
	// end is the offset just past the document.
	end int
	err error
}

// sniffLen is how much of a file opm peeks at to choose JSON or YAML.
const sniffLen = 4096

// decodeStream splits a file into documents exactly as opm's loader does
// (k8s.io/apimachinery's YAMLOrJSONDecoder): a file whose first non-space
// byte within the first 4 KiB is '{' is a JSON stream, anything else is YAML
// split on '---' lines. A JSON stream that fails while at most one object has
// been read is re-read as YAML from the end of the last good object, and if
// that fails too the JSON error stands (spec L6-L8).
//
// Unlike opm it does not stop at the first bad YAML document: yield is called
// for every document, good or bad, until it returns false. A failure in a
// JSON stream ends the file, since there is no separator to resume at.
func decodeStream(data []byte, fast func(raw []byte, d *document) bool, yield func(*document) bool) {
	lines := lineIndex{data: data}
	if !looksLikeJSON(data) {
		decodeYAMLFast(data, 0, nil, &lines, fast, yield)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	count := 0
	var consumed int64
	for {
		start := consumed
		var m meta
		err := dec.Decode(&m)
		if err == nil {
			count++
			consumed = dec.InputOffset()
			off := skipSpace(data, int(start))
			if !yield(&document{meta: m, offset: off, line: lines.lineOf(off), end: int(consumed)}) {
				return
			}
			continue
		}
		if err == io.EOF {
			return
		}
		var firstErr error = err
		errOff := skipSpace(data, int(start))
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			firstErr = fmt.Errorf("json: offset %d: %w", syntax.Offset, syntax)
			errOff = max(errOff, min(int(syntax.Offset), len(data)))
		}
		if count > 1 {
			yield(&document{err: err, offset: errOff, line: lines.lineOf(errOff), end: len(data)})
			return
		}
		rest, ok := yamlRestart(data, int(consumed))
		if !ok {
			yield(&document{err: firstErr, offset: errOff, line: lines.lineOf(errOff), end: len(data)})
			return
		}
		decodeYAMLFast(data, rest, firstErr, &lines, fast, yield)
		return
	}
}

func looksLikeJSON(data []byte) bool {
	peek := data[:min(len(data), sniffLen)]
	return bytes.HasPrefix(bytes.TrimLeftFunc(peek, unicode.IsSpace), []byte("{"))
}

// yamlRestart finds where the YAML re-read of a failed JSON stream begins:
// after the whitespace that follows the last good object, up to and
// including the first newline. It reports false when nothing is left to read
// or the text there is not UTF-8, in which case opm gives up on YAML.
func yamlRestart(data []byte, at int) (int, bool) {
	i := at
	for {
		if i >= len(data) {
			return 0, false
		}
		r, sz := utf8.DecodeRune(data[i:min(len(data), i+4)])
		if r == utf8.RuneError && sz <= 1 {
			return 0, false
		}
		if !unicode.IsSpace(r) {
			return i, true
		}
		i += sz
		if r == '\n' {
			return i, true
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
			continue
		}
		break
	}
	return i
}

// decodeYAMLFast reads YAML documents from data[from:]. jsonErr, when set,
// is the error of the JSON attempt that this read retries; it replaces the
// first document's YAML error, as in opm. fast, when set, is offered each
// document first and reports whether it took it.
func decodeYAMLFast(data []byte, from int, jsonErr error, lines *lineIndex, fast func(raw []byte, d *document) bool, yield func(*document) bool) {
	r := yamlReader{data: data, pos: from}
	first := true
	for {
		raw, start, end, err := r.next()
		if err == io.EOF {
			return
		}
		rawLine := lines.lineOf(start)
		off := firstContent(data, start, end)
		d := &document{offset: off, line: lines.lineOf(off), end: end}
		if err != nil {
			d.err = err
		} else if fast != nil && fast(raw, d) {
			first = false
			continue
		} else if err := yaml.Unmarshal(raw, &d.meta); err != nil {
			d.err = err
			// goyaml counts lines from the start of the document.
			if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
				if n, convErr := strconv.Atoi(m[1]); convErr == nil && n > 0 {
					d.line = rawLine + n - 1
				}
			}
		}
		if d.err != nil && first && jsonErr != nil {
			d.err = jsonErr
		}
		if !yield(d) || (d.err != nil && first && jsonErr != nil) {
			return
		}
		first = false
	}
}

// yamlReader splits YAML into documents the way apimachinery's YAMLReader
// does: line by line, CRLF folded to LF, a line beginning with "---" ends
// the current document (and may carry only a comment), and a separator seen
// while nothing is buffered is kept as part of the next document.
type yamlReader struct {
	data []byte
	pos  int
	buf  []byte
}

// next returns the next document's bytes and its span in data.
func (r *yamlReader) next() (doc []byte, start, end int, err error) {
	r.buf = r.buf[:0]
	start = r.pos
	contiguous := true // doc is exactly data[start:r.pos]
	for {
		lineStart := r.pos
		line, verbatim, eof := r.readLine()
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := bytes.TrimSpace(line[3:])
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, start, r.pos, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if len(r.buf) != 0 || (contiguous && lineStart > start) {
				return r.doc(start, lineStart, contiguous), start, lineStart, nil
			}
			if eof {
				return nil, start, r.pos, io.EOF
			}
		}
		if eof {
			if len(r.buf) != 0 || (contiguous && lineStart > start) {
				return r.doc(start, lineStart, contiguous), start, lineStart, nil
			}
			return nil, start, r.pos, io.EOF
		}
		// A line that is not a verbatim slice of data (CRLF, or no final
		// newline) forces a copy; everything else is referenced in place.
		if contiguous && !verbatim {
			contiguous = false
			r.buf = append(r.buf[:0], r.data[start:lineStart]...)
		}
		if !contiguous {
			r.buf = append(r.buf, line...)
		}
	}
}

func (r *yamlReader) doc(start, end int, contiguous bool) []byte {
	if contiguous {
		return r.data[start:end]
	}
	return r.buf
}

// readLine returns the next line with a single '\n' terminator, as
// apimachinery's LineReader does; at the end of input it returns "\n" and
// eof=true.
// verbatim reports whether line is exactly the bytes consumed from data.
func (r *yamlReader) readLine() (line []byte, verbatim, eof bool) {
	if r.pos >= len(r.data) {
		return []byte("\n"), false, true
	}
	rest := r.data[r.pos:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		r.pos = len(r.data)
		return append(rest[:len(rest):len(rest)], '\n'), false, false
	}
	r.pos += i + 1
	if i > 0 && rest[i-1] == '\r' {
		l := make([]byte, 0, i)
		l = append(l, rest[:i-1]...)
		return append(l, '\n'), false, false
	}
	return rest[:i+1], true, false
}

// firstContent returns the offset of the first line of data[start:end] that
// is not blank, a comment or a document separator, or start if none is.
func firstContent(data []byte, start, end int) int {
	i := start
	for i < end {
		j := bytes.IndexByte(data[i:end], '\n')
		lineEnd := end
		if j >= 0 {
			lineEnd = i + j
		}
		t := bytes.TrimSpace(data[i:lineEnd])
		if len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(data[i:lineEnd], []byte("---")) {
			return i
		}
		if j < 0 {
			break
		}
		i = lineEnd + 1
	}
	return start
}

// lineIndex maps byte offsets to 1-based line numbers, counting forward from
// the last query since documents are visited in order.
type lineIndex struct {
	data []byte
	off  int
	line int
}

func (l *lineIndex) lineOf(off int) int {
	if l.line == 0 {
		l.line = 1
	}
	if off < l.off {
		l.off, l.line = 0, 1
	}
	off = min(off, len(l.data))
	l.line += bytes.Count(l.data[l.off:off], []byte("\n"))
	l.off = off
	return l.line
}
