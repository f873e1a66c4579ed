package pipeline

import (
	"fmt"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
)

// unreadable is the result of a check that could not read a file it
// needed because its git object is missing (a partial clone) or misread,
// false for any other error. Such a file is neither valid nor invalid,
// and on both sides of a change its failure is never "already on the
// base branch": the check is pending, naming the path and the object, so
// that nobody takes it for a verdict.
func unreadable(err error) (checks.Result, bool) {
	oe, ok := change.Unreadable(err)
	if !ok {
		return checks.Result{}, false
	}
	return checks.Result{
		Conclusion: checks.Pending,
		Summary:    fmt.Sprintf("Not judged: %v. A file that was not read is neither valid nor invalid.", oe),
		Waits:      []checks.Wait{{Class: checks.WaitUnreadable, Path: oe.Path, Object: oe.Object, Commit: oe.Commit}},
	}, true
}
