package owners

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
)

// How a reference list entry changed.
const (
	RefAdded   = "added"
	RefRemoved = "removed"
	RefChanged = "changed"
)

// RefChange is one entry of a catalog.yaml reference list that a change
// adds, removes or changes.
type RefChange struct {
	Name   string `json:"name"`
	Change string `json:"change"`
	// From and To are the entry's image before and after.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Detail says what changed about a changed entry.
	Detail string `json:"detail,omitempty"`
	// Paths are the paths the entry is owned as: <catalog>/<name>/index.yaml
	// beside the list, the file the list renders the entry into. When the
	// catalog's name changes the entry is owned as both. Empty when the
	// names do not make a path inside the tree; then only the root
	// approvers may approve.
	Paths []string `json:"paths"`
}

// ReferenceListDiff is what a change does to a reference list.
type ReferenceListDiff struct {
	// IsList is false when neither side looks like a reference list (no
	// references key, and both parse): the file is judged as any other.
	IsList     bool        `json:"isList"`
	References []RefChange `json:"references"`
	// Fields are the changes that are not about one entry, which only the
	// root approvers may approve: top-level fields (name, repo, tag, ...),
	// "order" when entries were reordered, or "content" when a side does
	// not parse.
	Fields []string `json:"fields"`
}

// refList is the minimum of a reference list that ownership needs; the
// publisher reads the format in full.
type refList struct {
	fields map[string]any // the top level, references excepted
	name   any            // the catalog's name, as written
	refs   []refEntry
	hasRef bool
}

type refEntry struct {
	name  string
	image any
	raw   map[string]any
}

// DiffReferenceList compares two versions of a catalog.yaml reference list
// (nil for a side where the file does not exist). It reads the fields
// name, repo, tag and references[{name, image}] with sigs.k8s.io/yaml, as
// the render step reads them; entries are matched by name.
//
// A list added or removed as a whole changes its top-level fields, so it
// needs the root approvers besides each entry's owners.
func DiffReferenceList(file string, base, head []byte) (*ReferenceListDiff, []checks.Finding) {
	var findings []checks.Finding
	// Duplicates are reported for the head only: the base's are old news.
	b, bf := parseRefList(file, base, false)
	h, hf := parseRefList(file, head, true)
	findings = append(findings, bf...)
	findings = append(findings, hf...)
	d := &ReferenceListDiff{}
	if (base != nil && b == nil) || (head != nil && h == nil) {
		// One side is not a list that can be read: nobody can say which
		// entries changed, so the whole file is a root decision.
		d.IsList = true
		d.Fields = []string{"content"}
		return d, findings
	}
	if b == nil {
		b = &refList{}
	}
	if h == nil {
		h = &refList{}
	}
	d.IsList = b.hasRef || h.hasRef
	if !d.IsList {
		return d, findings
	}

	for _, k := range slices.Sorted(maps.Keys(union(b.fields, h.fields))) {
		bv, bok := b.fields[k]
		hv, hok := h.fields[k]
		if bok != hok || !reflect.DeepEqual(bv, hv) {
			d.Fields = append(d.Fields, k)
		}
	}

	catalogs := []any{b.name}
	if head != nil && (base == nil || !reflect.DeepEqual(b.name, h.name)) {
		catalogs = append(catalogs, h.name)
	}
	if base == nil {
		catalogs = catalogs[1:]
	}
	dir := path.Dir(file)
	paths := func(ref string) []string {
		var out []string
		for _, c := range catalogs {
			cs, ok := c.(string)
			if !ok || !plainName(cs) || !plainName(ref) {
				return nil
			}
			out = append(out, path.Join(dir, cs, ref, "index.yaml"))
		}
		return out
	}

	bIdx, bOrder := group(b.refs)
	hIdx, hOrder := group(h.refs)
	for _, name := range slices.Sorted(maps.Keys(union(bIdx, hIdx))) {
		be, hb := bIdx[name]
		he, hh := hIdx[name]
		rc := RefChange{Name: name}
		switch {
		case !hb:
			rc.Change, rc.To = RefAdded, image(he)
		case !hh:
			rc.Change, rc.From = RefRemoved, image(be)
		case !reflect.DeepEqual(raws(be), raws(he)):
			rc.Change, rc.From, rc.To = RefChanged, image(be), image(he)
			switch {
			case len(be) != len(he):
				rc.Detail = fmt.Sprintf("listed %d times, was %d", len(he), len(be))
			case rc.From != rc.To:
				rc.Detail = fmt.Sprintf("image %s -> %s", rc.From, rc.To)
			default:
				rc.Detail = "fields other than the image"
			}
		default:
			continue
		}
		rc.Paths = paths(name)
		d.References = append(d.References, rc)
	}
	if !slices.Equal(common(bOrder, hIdx), common(hOrder, bIdx)) {
		d.Fields = append(d.Fields, "order")
	}
	return d, findings
}

func union[V any](a, b map[string]V) map[string]V {
	out := make(map[string]V, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// group indexes entries by name, in order of first appearance. An entry
// listed twice is kept twice: both copies are rendered, so a change to
// either changes the entry.
func group(refs []refEntry) (map[string][]refEntry, []string) {
	idx := map[string][]refEntry{}
	var order []string
	for _, r := range refs {
		if _, ok := idx[r.name]; !ok {
			order = append(order, r.name)
		}
		idx[r.name] = append(idx[r.name], r)
	}
	return idx, order
}

// common is order without the names missing from other.
func common(order []string, other map[string][]refEntry) []string {
	var out []string
	for _, n := range order {
		if _, ok := other[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func raws(es []refEntry) []map[string]any {
	out := make([]map[string]any, len(es))
	for i, e := range es {
		out[i] = e.raw
	}
	return out
}

func image(es []refEntry) string {
	if len(es) == 0 {
		return ""
	}
	if s, ok := es[0].image.(string); ok {
		return s
	}
	return fmt.Sprint(es[0].image)
}

// plainName reports whether s is one directory name, so that a path made
// from it stays where the list says.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

func parseRefList(file string, data []byte, reportDuplicates bool) (*refList, []checks.Finding) {
	if data == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) (*refList, []checks.Finding) {
		return nil, []checks.Finding{finding(RuleReferenceList, checks.SeverityWarning, file, 0,
			fmt.Sprintf(format, args...)+"; only the root approvers may approve the change")}
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return bad("reference list does not parse: %v", err)
	}
	l := &refList{fields: map[string]any{}}
	for k, v := range top {
		if k != "references" {
			l.fields[k] = v
		}
	}
	l.name = top["name"]
	refs, ok := top["references"]
	if !ok {
		return l, nil
	}
	l.hasRef = true
	if refs == nil {
		return l, nil
	}
	list, ok := refs.([]any)
	if !ok {
		return bad("references must be a list")
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return bad("references[%d] must be a mapping", i)
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			return bad("references[%d] has no name", i)
		}
		l.refs = append(l.refs, refEntry{name: name, image: m["image"], raw: m})
	}
	if !reportDuplicates {
		return l, nil
	}
	return l, duplicateFindings(file, data, l.refs)
}

// duplicateFindings warns about entries listed more than once, with the
// lines of the repeats.
func duplicateFindings(file string, data []byte, refs []refEntry) []checks.Finding {
	counts := map[string]int{}
	for _, r := range refs {
		counts[r.name]++
	}
	var dups []string
	for n, c := range counts {
		if c > 1 {
			dups = append(dups, n)
		}
	}
	if len(dups) == 0 {
		return nil
	}
	slices.Sort(dups)
	lines := nameLines(data)
	var out []checks.Finding
	for _, n := range dups {
		ls := lines[n]
		line := 0
		if len(ls) > 1 {
			line = ls[1]
		}
		out = append(out, finding(RuleReferenceList, checks.SeverityWarning, file, line,
			fmt.Sprintf("reference %q is listed %d times%s; a change to any copy counts as a change to the entry", n, counts[n], atLines(ls))))
	}
	return out
}

func atLines(ls []int) string {
	if len(ls) == 0 {
		return ""
	}
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = fmt.Sprint(l)
	}
	return " (lines " + strings.Join(s, ", ") + ")"
}

// nameLines finds the line of every references[].name, by name.
func nameLines(data []byte) map[string][]int {
	out := map[string][]int{}
	var doc goyaml.Node
	if goyaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	refs := mapValue(doc.Content[0], "references")
	if refs == nil || refs.Kind != goyaml.SequenceNode {
		return out
	}
	for _, item := range refs.Content {
		if n := mapValue(item, "name"); n != nil && n.Kind == goyaml.ScalarNode {
			out[n.Value] = append(out[n.Value], n.Line)
		}
	}
	return out
}

func mapValue(m *goyaml.Node, key string) *goyaml.Node {
	if m == nil || m.Kind != goyaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
