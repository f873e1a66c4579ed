// Package tmpdir makes the temporary directories of catalogbot's runs and
// sweeps those that killed runs left behind.
//
// A run stopped by SIGKILL, the OOM killer or a node going away never gets
// to remove its temporary directories, and a scheduled rebuild that is
// killed every night fills the disk. Each directory is therefore named for
// the process that owns it (PREFIX + "pid" + PID + "-" + random), and the
// next run removes those whose process is gone.
package tmpdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Prefix starts the name of every directory catalogbot makes under the
// system's temporary directory, so one sweep finds them all.
const Prefix = "catalogbot-"

// MinAge is how old an orphan must be before a sweep removes it. A
// process ID can be reused; an hour-old directory of a live process with a
// recycled ID survives, but one a minute old is surely not being made.
const MinAge = time.Minute

// ownerRE finds the owner's process ID in a directory name after its
// prefix: "pid<PID>-<random>".
// A suffix such as ".old" marks a directory derived from one Make made.
var ownerRE = regexp.MustCompile(`^pid([0-9]+)-[0-9]+(?:\.[a-z]+)?$`)

// Make creates a new directory in dir (os.TempDir() when "") named
// prefix + "pid<PID>-" + random, readable only by its owner.
func Make(dir, prefix string) (string, error) {
	return os.MkdirTemp(dir, prefix+"pid"+strconv.Itoa(os.Getpid())+"-")
}

// Sweep removes the directories in dir (os.TempDir() when "") whose name
// starts with prefix, followed by anything, then the owner part Make
// writes, when the owner process is no longer alive and the directory was
// last modified at least MinAge before now. It returns what it removed. A
// directory that cannot be removed is left for the next sweep; its error
// is returned with the others.
func Sweep(dir, prefix string, now time.Time) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, ok := owner(e.Name(), prefix)
		if !ok || !e.IsDir() || pid == os.Getpid() || alive(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < MinAge {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// owner is the process ID in a name Make wrote with prefix: the last
// "pid<PID>-<random>" after the prefix (a kind such as "render-" may come
// between).
func owner(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	i := strings.LastIndex(rest, "pid")
	if i < 0 || i > 0 && rest[i-1] != '-' {
		return 0, false
	}
	m := ownerRE.FindStringSubmatch(rest[i:])
	if m == nil {
		return 0, false
	}
	pid, err := strconv.Atoi(m[1])
	return pid, err == nil && pid > 0
}
