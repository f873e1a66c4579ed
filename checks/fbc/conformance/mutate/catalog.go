package mutate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// fileKind says how a file is stored and rendered.
type fileKind int

const (
	kindYAML   fileKind = iota // a stream of YAML documents separated by ---
	kindJSON                   // a stream of JSON objects
	kindOpaque                 // anything else, kept byte for byte
)

// doc is one blob (or, for textual mutations, one raw YAML document).
type doc struct {
	obj map[string]any
	// raw, when obj is nil, is emitted verbatim as the document body.
	raw string
	// sep is the YAML separator line written before the document ("---"
	// when empty).
	sep string
	// trailingComma adds a "," before the closing brace (JSON files only).
	trailingComma bool
	// indent pretty-prints the object (JSON files only).
	indent bool
	// tokens maps placeholder strings found in obj to the text that
	// replaces them after rendering (YAML text, JSON text).
	tokens map[string][2]string
}

type file struct {
	path   string
	kind   fileKind
	docs   []*doc
	opaque string
	// yamlAfter, when > 0 in a JSON file, renders the first yamlAfter
	// documents as JSON and the rest as YAML documents after a ---.
	yamlAfter int
}

// catalog is a parsed seed catalog that mutations edit in place.
type catalog struct {
	files []*file // sorted by path
	ntok  int
}

// parseCatalog turns relpath → content into a catalog. Files that cannot be
// split into JSON or YAML mapping documents are kept opaque.
func parseCatalog(files map[string]string) *catalog {
	c := &catalog{}
	for _, p := range sortedKeys(files) {
		c.files = append(c.files, parseFile(p, files[p]))
	}
	sortFiles(c.files)
	return c
}

func parseFile(p, content string) *file {
	f := &file{path: p, kind: kindOpaque, opaque: content}
	if path.Base(p) == ".indexignore" {
		return f
	}
	text := strings.TrimPrefix(content, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	trimmed := strings.TrimLeft(text, " \t\r\n")
	if strings.HasPrefix(trimmed, "{") {
		docs, err := parseJSONStream(text)
		if err == nil {
			return &file{path: p, kind: kindJSON, docs: docs}
		}
		return f
	}
	docs, err := parseYAMLStream(text)
	if err != nil {
		return f
	}
	return &file{path: p, kind: kindYAML, docs: docs}
}

func parseJSONStream(text string) ([]*doc, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var docs []*doc
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		var obj map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&obj); err != nil || obj == nil {
			return nil, fmt.Errorf("not an object")
		}
		docs = append(docs, &doc{obj: obj, indent: bytes.Contains(raw, []byte("\n"))})
	}
	return docs, nil
}

func parseYAMLStream(text string) ([]*doc, error) {
	var docs []*doc
	var cur strings.Builder
	flush := func() error {
		body := cur.String()
		cur.Reset()
		if strings.TrimSpace(body) == "" {
			return nil
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(body), &obj); err != nil {
			return err
		}
		if obj == nil {
			return fmt.Errorf("document is not a mapping")
		}
		docs = append(docs, &doc{obj: obj})
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "---") {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

// render turns the catalog back into relpath → content.
func (c *catalog) render() map[string]string {
	out := make(map[string]string, len(c.files))
	for _, f := range c.files {
		out[f.path] = f.render()
	}
	return out
}

func (f *file) render() string {
	switch f.kind {
	case kindOpaque:
		return f.opaque
	case kindJSON:
		var b strings.Builder
		for i, d := range f.docs {
			if f.yamlAfter > 0 && i >= f.yamlAfter {
				b.WriteString("---\n")
				b.WriteString(d.renderYAML())
				continue
			}
			b.WriteString(d.renderJSON())
		}
		return b.String()
	default:
		var b strings.Builder
		for _, d := range f.docs {
			sep := d.sep
			if sep == "" {
				sep = "---"
			}
			b.WriteString(sep)
			b.WriteByte('\n')
			b.WriteString(d.renderYAML())
		}
		return b.String()
	}
}

func (d *doc) renderYAML() string {
	if d.obj == nil {
		return d.raw
	}
	out, err := yaml.Marshal(d.obj)
	if err != nil {
		panic(fmt.Sprintf("mutate: marshal YAML: %v", err))
	}
	s := string(out)
	for _, tok := range sortedKeys(d.tokens) {
		s = strings.ReplaceAll(s, tok, d.tokens[tok][0])
	}
	return s
}

func (d *doc) renderJSON() string {
	if d.obj == nil {
		return d.raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if d.indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(d.obj); err != nil {
		panic(fmt.Sprintf("mutate: marshal JSON: %v", err))
	}
	s := buf.String()
	for _, tok := range sortedKeys(d.tokens) {
		s = strings.ReplaceAll(s, `"`+tok+`"`, d.tokens[tok][1])
	}
	if d.trailingComma {
		if i := strings.LastIndex(s, "}"); i >= 0 {
			s = s[:i] + "," + s[i:]
		}
	}
	return s
}

// token returns a placeholder string to store in d.obj; after rendering it is
// replaced by yamlText in YAML and by jsonText (replacing the quoted
// placeholder) in JSON. It is how unquoted YAML scalars are written.
func (c *catalog) token(d *doc, yamlText, jsonText string) string {
	c.ntok++
	tok := fmt.Sprintf("ZZRAWTOKEN%dZZ", c.ntok)
	if d.tokens == nil {
		d.tokens = map[string][2]string{}
	}
	d.tokens[tok] = [2]string{yamlText, jsonText}
	return tok
}

func (c *catalog) clone() *catalog {
	n := &catalog{ntok: c.ntok}
	for _, f := range c.files {
		nf := *f
		nf.docs = make([]*doc, len(f.docs))
		for i, d := range f.docs {
			nf.docs[i] = d.clone()
		}
		n.files = append(n.files, &nf)
	}
	return n
}

func (d *doc) clone() *doc {
	n := *d
	if d.obj != nil {
		n.obj = deepCopy(d.obj).(map[string]any)
	}
	if d.tokens != nil {
		n.tokens = make(map[string][2]string, len(d.tokens))
		for k, v := range d.tokens {
			n.tokens[k] = v
		}
	}
	return &n
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	default:
		return v
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileByPath returns the file at p, or nil.
func (c *catalog) fileByPath(p string) *file {
	for _, f := range c.files {
		if f.path == p {
			return f
		}
	}
	return nil
}

// addFile adds a file keeping the list sorted; an existing path is replaced.
func (c *catalog) addFile(f *file) {
	for i, g := range c.files {
		if g.path == f.path {
			c.files[i] = f
			return
		}
	}
	c.files = append(c.files, f)
	sortFiles(c.files)
}

// walkLess orders paths the way fs.WalkDir visits them: component by
// component, so "a/b.yaml" (inside directory "a") comes before "a.yaml".
func walkLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

func sortFiles(fs []*file) {
	sort.Slice(fs, func(i, j int) bool { return walkLess(fs[i].path, fs[j].path) })
}

// ---- case-insensitive access, as encoding/json and opm's Meta do ----

// realKey returns the key of m that matches k: the exact key if present,
// otherwise the first (sorted) key equal under case folding.
func realKey(m map[string]any, k string) (string, bool) {
	if _, ok := m[k]; ok {
		return k, true
	}
	for _, mk := range sortedKeys(m) {
		if strings.EqualFold(mk, k) {
			return mk, true
		}
	}
	return "", false
}

func get(m map[string]any, k string) any {
	if rk, ok := realKey(m, k); ok {
		return m[rk]
	}
	return nil
}

func getStr(m map[string]any, k string) string {
	s, _ := get(m, k).(string)
	return s
}

func set(m map[string]any, k string, v any) {
	if rk, ok := realKey(m, k); ok {
		m[rk] = v
		return
	}
	m[k] = v
}

func del(m map[string]any, k string) bool {
	if rk, ok := realKey(m, k); ok {
		delete(m, rk)
		return true
	}
	return false
}

func getList(m map[string]any, k string) []any {
	l, _ := get(m, k).([]any)
	return l
}

// maps returns the elements of l that are objects.
func maps(l []any) []map[string]any {
	var out []map[string]any
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
