package policy

import (
	"io/fs"

	"github.com/catalogbot/catalogbot/owners"
)

// JudgesChanges reports whether a file at p decides how pull requests are
// judged: a file that names approvers (OWNERS, OWNERS_ALIASES, a package's
// ci.yaml), or the policy file. They are read from the base commit, so when
// the base branch changes one, the verdict on every open pull request may
// change with it, though none of them changed.
func JudgesChanges(p string) bool {
	return owners.NamesApprovers(p) || p == FileName
}

// DefaultReferenceList is the reference list of a repository whose policy
// names none, when the repository has it.
const DefaultReferenceList = "catalog.yaml"

// ReferenceListIn is the path of the repository's catalog.yaml reference
// list: the policy's catalog.referenceList, else DefaultReferenceList when
// it is a file at the root of any of trees (nil trees are skipped), else ""
// for none. The check of a pull request passes both of its trees, so that a
// change that adds or removes the list is judged as a change to a list; a
// publish passes the one commit it publishes. This is the only place that
// decides it: the checks, the approvals and the publish all ask here.
func (c Catalog) ReferenceListIn(trees ...fs.FS) string {
	if c.ReferenceList != "" {
		return c.ReferenceList
	}
	for _, fsys := range trees {
		if fsys == nil {
			continue
		}
		// A directory of that name is not a list: the list is a file.
		if info, err := fs.Stat(fsys, DefaultReferenceList); err == nil && info.Mode().IsRegular() {
			return DefaultReferenceList
		}
	}
	return ""
}

// ReferenceListsIn is ReferenceListIn as owners.Policy.ReferenceLists
// takes it: nil when the repository has none.
func (c Catalog) ReferenceListsIn(trees ...fs.FS) []string {
	if l := c.ReferenceListIn(trees...); l != "" {
		return []string{l}
	}
	return nil
}
