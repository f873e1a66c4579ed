//go:build unix

package tmpdir

import (
	"errors"
	"syscall"
)

// alive reports whether a process with the ID exists. Signal 0 checks
// without sending anything; EPERM means it exists under another user.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
