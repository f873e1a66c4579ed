package policy

import "github.com/catalogbot/catalogbot/owners"

// JudgesChanges reports whether a file at p decides how pull requests are
// judged: a file that names approvers (OWNERS, OWNERS_ALIASES, a package's
// ci.yaml), or the policy file. They are read from the base commit, so when
// the base branch changes one, the verdict on every open pull request may
// change with it, though none of them changed.
func JudgesChanges(p string) bool {
	return owners.NamesApprovers(p) || p == FileName
}
