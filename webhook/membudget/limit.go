// Package membudget keeps catalogbot serve within its memory limit. The
// limit comes from GOMEMLIMIT, or, when that is unset, from the memory
// limit of the cgroup the process runs in (the container's), which
// SetLimit hands to the Go runtime so that the collector works harder as
// the heap nears it rather than the kernel killing the process past it.
//
// A pull request check holds the catalog files it reads, and what they
// decode to, several times their size (Amplification). A service whose
// workers each take a pull request with a large file would pass any limit
// sized for its usual load, so each check reserves what it will read from
// a Budget shared by the workers, derived from the limit (BudgetFor), and
// waits its turn when the others hold it.
package membudget

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// MinHeadroom is the least RuntimeLimit leaves of a cgroup's limit for what
// the Go runtime's limit does not count: the binary's resident pages, memory
// outside the heap's accounting, and the collector's overshoot. Measured
// on catalogbot serve checking a 95 MB file under GOMEMLIMIT: the peak RSS
// stood 76 and 78 MiB above GOMEMLIMIT at 691 and 640 MiB, so the
// headroom is a tenth of the limit but never less than MinHeadroom.
const MinHeadroom = 128 << 20

// RuntimeLimit is the Go runtime's memory limit for a cgroup limit of
// cgroup bytes: a tenth of it, or MinHeadroom, below it, whichever is
// more, and never below half of it.
func RuntimeLimit(cgroup int64) int64 {
	return max(cgroup-max(cgroup/10, MinHeadroom), cgroup/2)
}

// noLimit is where a cgroup v1 limit that was never set sits: the page
// counter's maximum rounded to a page, about 2^63. Anything from 2^62 up
// is read as no limit.
const noLimit = 1 << 62

// CgroupLimit returns the memory limit of the cgroup the process runs in,
// read from the cgroup file system mounted at root (/sys/fs/cgroup):
// memory.max of cgroup v2, or memory/memory.limit_in_bytes of v1. ok is
// false when neither file says there is a limit ("max", or v1's huge
// default), as outside a container. The process's own cgroup is the one
// mounted at root, as a container sees it.
func CgroupLimit(root string) (limit int64, file string, ok bool, err error) {
	for _, name := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		file = filepath.Join(root, name)
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, file, false, err
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0, file, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			// A file that exists and says something else is a
			// kernel we do not know: say so rather than guess.
			return 0, file, false, fmt.Errorf("%s: %q is not a memory limit (want a number of bytes or \"max\")", file, s)
		}
		if n >= noLimit {
			return 0, file, false, nil
		}
		return n, file, true, nil
	}
	return 0, "", false, nil
}

// Setting is the memory limit the process runs under, as SetLimit chose
// it.
type Setting struct {
	// Limit is the Go runtime's memory limit in bytes; 0 for none.
	Limit int64
	// From says where it came from, for the log: "GOMEMLIMIT", or the
	// cgroup file, or "" for none.
	From string
	// Cgroup is the cgroup's limit the runtime's was derived from; 0
	// when it was not.
	Cgroup int64
}

// SetLimit gives the Go runtime a memory limit unless GOMEMLIMIT (getenv)
// set one already: RuntimeLimit of the cgroup's limit under root. It returns
// the limit in force. An unreadable cgroup file is an error; no cgroup
// limit leaves the runtime without one.
func SetLimit(getenv func(string) string, root string) (Setting, error) {
	if getenv("GOMEMLIMIT") != "" {
		// The runtime read it at start (and refused to start on a bad
		// one); a negative argument only reads it back.
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			return Setting{Limit: l, From: "GOMEMLIMIT"}, nil
		}
		return Setting{}, nil
	}
	cg, file, ok, err := CgroupLimit(root)
	if err != nil || !ok {
		return Setting{}, err
	}
	l := RuntimeLimit(cg)
	debug.SetMemoryLimit(l)
	return Setting{Limit: l, From: file, Cgroup: cg}, nil
}
