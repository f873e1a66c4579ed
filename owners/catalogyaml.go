package owners

import (
	"fmt"
	"path"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
)

// How a reference list entry changed.
const (
	RefAdded   = catalogyaml.Added
	RefRemoved = catalogyaml.Removed
	RefChanged = catalogyaml.Changed
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

// DiffReferenceList compares two versions of a catalog.yaml reference list
// (nil for a side where the file does not exist), as catalogyaml.DiffLists
// does, and says which paths own each entry that changed: the file the
// entry renders into, <catalog>/<name>/index.yaml beside the list.
//
// A list added or removed as a whole changes its top-level fields, so it
// needs the root approvers besides each entry's owners. A side that cannot
// be read is a root decision, and a warning says so.
func DiffReferenceList(file string, base, head []byte) (*ReferenceListDiff, []checks.Finding) {
	ld := catalogyaml.DiffLists(base, head)
	var findings []checks.Finding
	// Problems are reported for both sides, duplicates for the head only:
	// the base's are old news.
	for _, problem := range []string{ld.BaseProblem, ld.HeadProblem} {
		if problem != "" {
			findings = append(findings, finding(RuleReferenceList, checks.SeverityWarning, file, 0,
				problem+"; only the root approvers may approve the change"))
		}
	}
	for _, dup := range ld.Duplicates {
		line := 0
		if len(dup.Lines) > 1 {
			line = dup.Lines[1]
		}
		findings = append(findings, finding(RuleReferenceList, checks.SeverityWarning, file, line,
			fmt.Sprintf("reference %q is listed %d times%s; a change to any copy counts as a change to the entry", dup.Name, dup.Count, atLines(dup.Lines))))
	}
	d := &ReferenceListDiff{IsList: ld.IsList, Fields: ld.Fields}
	dir := path.Dir(file)
	for _, e := range ld.Entries {
		d.References = append(d.References, RefChange{
			Name: e.Name, Change: e.Change, From: e.From, To: e.To, Detail: e.Detail,
			Paths: entryPaths(dir, ld.Catalogs, e.Name),
		})
	}
	return d, findings
}

// entryPaths are the paths an entry is owned as, one for each name of its
// catalog; none when a name would not make one directory inside the tree,
// which leaves the entry to the root approvers.
func entryPaths(dir string, catalogs []string, ref string) []string {
	var out []string
	for _, c := range catalogs {
		if !plainName(c) || !plainName(ref) {
			return nil
		}
		out = append(out, path.Join(dir, c, ref, "index.yaml"))
	}
	return out
}

// plainName reports whether s is one directory name, so that a path made
// from it stays where the list says.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
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
