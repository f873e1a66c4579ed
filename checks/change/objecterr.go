package change

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// ObjectError is a read of a tree that got no bytes for a file or
// directory, because its git object is not in the repository (a partial
// or shallow clone), or other bytes than the object's (ErrCorruptObject).
// Neither has a verdict: the file was not read, so whoever meets one says
// so and judges nothing, naming the path and the object. It wraps the
// cause, so errors.Is(err, plumbing.ErrObjectNotFound) and
// errors.Is(err, ErrCorruptObject) hold as before.
type ObjectError struct {
	// Path is the path in the repository whose object could not be read;
	// Commit is the commit whose tree holds it.
	Path   string
	Commit string
	// Object is the id of the object that could not be read: the file's
	// blob, or the tree of a directory on the way to it.
	Object string
	// Promisor names the remote a partial clone left the object with, ""
	// when the repository is no partial clone; Dir is the repository's
	// directory, for the command that fetches it.
	Promisor string
	Dir      string
	Err      error
}

func (e *ObjectError) Error() string {
	what := "git object " + e.Object
	if e.Path != "" {
		what += " of " + e.Path
	}
	if e.Commit != "" {
		what += " at commit " + ShortSHA(e.Commit)
	}
	if !e.Missing() {
		return what + ": " + e.Err.Error()
	}
	msg := what + " is not in the repository"
	if e.Promisor != "" {
		// A partial clone leaves objects with its promisor remote; a read
		// fetches them when the front end allows it (SetFetch), and this
		// one did not.
		why := "which left it out"
		if fe, ok := fetchReason(e.Err); ok && !fe.Off {
			why = "which left it out, and fetching it failed: " + fe.Err.Error()
		} else if ok {
			why = "which left it out, and fetching is turned off"
		}
		msg += fmt.Sprintf("; the repository is a partial clone from remote %q, %s: fetch it with `git -C %s cat-file -e %s` "+
			"(git fetches a missing object from the remote), or every object left out with `git -C %s -c remote.%s.partialclonefilter= fetch --refetch %s`, and run again",
			e.Promisor, why, e.Dir, e.Object, e.Dir, e.Promisor, e.Promisor)
	}
	return msg
}

func (e *ObjectError) Unwrap() error { return e.Err }

// Missing says whether the object is absent, rather than misread.
func (e *ObjectError) Missing() bool { return errors.Is(e.Err, plumbing.ErrObjectNotFound) }

// Unreadable returns the *ObjectError in err's chain: a read of a
// repository that could not get the object git named. Such a read leaves
// no verdict on what it was reading, never a finding.
func Unreadable(err error) (*ObjectError, bool) {
	var oe *ObjectError
	if errors.As(err, &oe) {
		return oe, true
	}
	return nil, false
}

// objectError wraps a failure to read object h, as a missing or misread
// object, in an *ObjectError; any other error is returned as it is. The
// path is filled in by pathError, where the tree path is known.
func (t *treeFS) objectError(h plumbing.Hash, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := Unreadable(err); ok {
		return err
	}
	if !errors.Is(err, plumbing.ErrObjectNotFound) && !errors.Is(err, gitobj.ErrCorrupt) {
		return err
	}
	return &ObjectError{Commit: t.commit, Object: h.String(), Promisor: t.promisor, Dir: t.repoDir, Err: err}
}
