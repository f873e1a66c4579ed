package catalogyaml

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"
)

// How an entry of a reference list changed.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// EntryChange is one entry that a change adds, removes or changes.
type EntryChange struct {
	Name   string `json:"name"`
	Change string `json:"change"`
	// From and To are the entry's image before and after.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Detail says what changed about a changed entry.
	Detail string `json:"detail,omitempty"`
}

// Diff is what a change does to a reference list.
type Diff struct {
	// IsList is false when neither side looks like a reference list (no
	// references key, and both parse).
	IsList  bool          `json:"isList"`
	Entries []EntryChange `json:"entries"`
	// Fields are the changes that are not about one entry: top-level
	// fields (name, repo, tag, ...), "order" when entries were
	// reordered, or "content" when a side cannot be read.
	Fields []string `json:"fields"`
	// Catalogs are the names of the catalog the entries are assembled
	// under: the base's, then the head's when it differs (one of them
	// alone when the list is added or removed). A name that is not a
	// string is "".
	Catalogs []string `json:"catalogs"`
	// BaseProblem and HeadProblem say why a side is not a list that can
	// be read, "" when it is (or does not exist).
	BaseProblem string `json:"baseProblem,omitempty"`
	HeadProblem string `json:"headProblem,omitempty"`
	// Duplicates are the head's entries listed more than once.
	Duplicates []Duplicate `json:"duplicates,omitempty"`
}

// Duplicate is an entry name listed more than once.
type Duplicate struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	// Lines are the lines of each listing's name, where they can be told.
	Lines []int `json:"lines,omitempty"`
}

// list is the minimum of a reference list that a diff needs.
type list struct {
	fields map[string]any // the top level, references excepted
	name   any            // the catalog's name, as written
	refs   []entry
	hasRef bool
}

type entry struct {
	name  string
	image any
	raw   map[string]any
}

// DiffLists compares two versions of a reference list (nil for a side
// where the file does not exist), entry by entry, matched by name. It reads
// the fields as the render step reads them, with sigs.k8s.io/yaml and
// nothing more, so that a diff can be made of a list the strict Parse
// refuses: which entries changed still decides who must approve.
func DiffLists(base, head []byte) *Diff {
	b, bp := readList(base)
	h, hp := readList(head)
	d := &Diff{BaseProblem: bp, HeadProblem: hp}
	if h != nil {
		d.Duplicates = duplicates(head, h.refs)
	}
	if (base != nil && b == nil) || (head != nil && h == nil) {
		// One side is not a list that can be read: nobody can say which
		// entries changed.
		d.IsList = true
		d.Fields = []string{"content"}
		return d
	}
	if b == nil {
		b = &list{}
	}
	if h == nil {
		h = &list{}
	}
	d.IsList = b.hasRef || h.hasRef
	if !d.IsList {
		return d
	}

	for _, k := range slices.Sorted(maps.Keys(union(b.fields, h.fields))) {
		bv, bok := b.fields[k]
		hv, hok := h.fields[k]
		if bok != hok || !reflect.DeepEqual(bv, hv) {
			d.Fields = append(d.Fields, k)
		}
	}

	if base != nil {
		d.Catalogs = append(d.Catalogs, nameOf(b.name))
	}
	if head != nil && (base == nil || !reflect.DeepEqual(b.name, h.name)) {
		d.Catalogs = append(d.Catalogs, nameOf(h.name))
	}

	bIdx, bOrder := group(b.refs)
	hIdx, hOrder := group(h.refs)
	for _, name := range slices.Sorted(maps.Keys(union(bIdx, hIdx))) {
		be, hb := bIdx[name]
		he, hh := hIdx[name]
		ec := EntryChange{Name: name}
		switch {
		case !hb:
			ec.Change, ec.To = Added, image(he)
		case !hh:
			ec.Change, ec.From = Removed, image(be)
		case !reflect.DeepEqual(raws(be), raws(he)):
			ec.Change, ec.From, ec.To = Changed, image(be), image(he)
			switch {
			case len(be) != len(he):
				ec.Detail = fmt.Sprintf("listed %d times, was %d", len(he), len(be))
			case ec.From != ec.To:
				ec.Detail = fmt.Sprintf("image %s -> %s", ec.From, ec.To)
			default:
				ec.Detail = "fields other than the image"
			}
		default:
			continue
		}
		d.Entries = append(d.Entries, ec)
	}
	if !slices.Equal(common(bOrder, hIdx), common(hOrder, bIdx)) {
		d.Fields = append(d.Fields, "order")
	}
	return d
}

func nameOf(v any) string {
	s, _ := v.(string)
	return s
}

func union[V any](a, b map[string]V) map[string]V {
	out := make(map[string]V, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// group indexes entries by name, in order of first appearance. An entry
// listed twice is kept twice: both copies are rendered, so a change to
// either changes the entry.
func group(refs []entry) (map[string][]entry, []string) {
	idx := map[string][]entry{}
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
func common(order []string, other map[string][]entry) []string {
	var out []string
	for _, n := range order {
		if _, ok := other[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func raws(es []entry) []map[string]any {
	out := make([]map[string]any, len(es))
	for i, e := range es {
		out[i] = e.raw
	}
	return out
}

func image(es []entry) string {
	if len(es) == 0 {
		return ""
	}
	if s, ok := es[0].image.(string); ok {
		return s
	}
	return fmt.Sprint(es[0].image)
}

// readList reads one side; nil data is a side without the file. The
// problem says why data is not a list that can be read.
func readList(data []byte) (*list, string) {
	if data == nil {
		return nil, ""
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Sprintf("reference list does not parse: %v", err)
	}
	l := &list{fields: map[string]any{}}
	for k, v := range top {
		if k != "references" {
			l.fields[k] = v
		}
	}
	l.name = top["name"]
	refs, ok := top["references"]
	if !ok {
		return l, ""
	}
	l.hasRef = true
	if refs == nil {
		return l, ""
	}
	items, ok := refs.([]any)
	if !ok {
		return nil, "references must be a list"
	}
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("references[%d] must be a mapping", i)
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Sprintf("references[%d] has no name", i)
		}
		l.refs = append(l.refs, entry{name: name, image: m["image"], raw: m})
	}
	return l, ""
}

// duplicates lists the entries listed more than once, by name, with the
// lines of their names.
func duplicates(data []byte, refs []entry) []Duplicate {
	counts := map[string]int{}
	for _, r := range refs {
		counts[r.name]++
	}
	var out []Duplicate
	var lines map[string][]int
	for _, n := range slices.Sorted(maps.Keys(counts)) {
		if counts[n] < 2 {
			continue
		}
		if lines == nil {
			lines = nameLines(data)
		}
		out = append(out, Duplicate{Name: n, Count: counts[n], Lines: lines[n]})
	}
	return out
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
