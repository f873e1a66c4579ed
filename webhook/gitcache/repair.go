package gitcache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// A process killed during a fetch can leave a repository that go-git
// cannot read again: go-git writes a ref by truncating its file and then
// writing it, so a kill between the two leaves the file empty, and every
// later fetch fails on it ("ref file is empty") for good. The cache is
// only a cache: a repository it finds broken is moved aside and fetched
// again from scratch, and the refs it writes itself are written whole or
// not at all.

// ErrBroken is matched (errors.Is) by the error of a repository found
// broken on disk.
var ErrBroken = errors.New("the cached repository is broken")

type brokenError struct{ why string }

func (e *brokenError) Error() string        { return "git cache: " + e.why }
func (e *brokenError) Is(target error) bool { return target == ErrBroken }

func broken(format string, a ...any) error { return &brokenError{why: fmt.Sprintf(format, a...)} }

// Err is why the cache cannot work, nil while it can: a repository found
// broken that could not be rebuilt (the disk full or read-only, say).
// Readiness reports it, so it must clear once the cause has: asked, it
// tries the rebuild again (no more often than every few seconds, and not
// while a fetch of the repository is under way), rather than wait for a
// fetch that a replica not ready may never be given. The next fetch that
// succeeds clears it too.
func (c *Cache) Err() error {
	t := c.probe.clock()
	c.mu.Lock()
	p, err := c.pending, c.err
	if p == nil || t.Before(c.retryAt) {
		c.mu.Unlock()
		return err
	}
	c.retryAt = t.Add(probeTTL)
	l := c.locks[p.dir]
	c.mu.Unlock()
	// A fetch under way holds the lock, and will rebuild or report.
	if l == nil || !l.TryLock() {
		return err
	}
	rerr := c.rebuild(p.dir, p.repo, p.why)
	l.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending != p {
		return c.err
	}
	if rerr == nil {
		c.pending, c.err = nil, nil
	} else {
		c.err = rerr
	}
	return c.err
}

// pendingRepair is a repository whose rebuild failed.
type pendingRepair struct {
	dir, repo string
	why       error // what was found broken
}

// unrepaired records that the rebuild of repo (in dir), found broken for
// why, failed with err: Err tries it again in a few seconds.
func (c *Cache) unrepaired(dir, repo string, why, err error) {
	t := c.probe.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending, c.err, c.retryAt = &pendingRepair{dir: dir, repo: repo, why: why}, err, t.Add(probeTTL)
}

// repaired records a fetch that worked: nothing is left to repair.
func (c *Cache) repaired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending, c.err = nil, nil
}

// check looks for the damage a killed fetch leaves in the repository in
// dir: a HEAD or a ref file that is empty or not a ref, a packed-refs
// file that does not parse, and a ref among want (local ref names) that
// names an object the store does not have. It reads every loose ref but
// only the objects of want, so a repository with many pull requests costs
// little to check. A nil error means nothing was found.
func check(dir string, want []string) error {
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil {
		return broken("HEAD: %v", err)
	}
	if err := refContent("HEAD", head); err != nil {
		return err
	}
	if left, _ := filepath.Glob(filepath.Join(dir, tmpRefPrefix+"*")); len(left) > 0 {
		for _, f := range left {
			os.Remove(f)
		}
	}
	err = filepath.WalkDir(filepath.Join(dir, "refs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return broken("%s: %v", path, err)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".lock") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return broken("%s: %v", path, err)
		}
		rel, _ := filepath.Rel(dir, path)
		return refContent(filepath.ToSlash(rel), data)
	})
	if err != nil {
		return err
	}
	if err := packedRefs(filepath.Join(dir, "packed-refs")); err != nil {
		return err
	}
	if len(want) == 0 {
		return nil
	}
	repo, err := open(dir)
	if err != nil {
		return broken("%v", err)
	}
	for _, name := range want {
		ref, err := repo.Storer.Reference(plumbing.ReferenceName(name))
		switch {
		case errors.Is(err, plumbing.ErrReferenceNotFound):
			continue
		case err != nil:
			return broken("%s: %v", name, err)
		}
		if ref.Type() != plumbing.HashReference {
			continue
		}
		if err := repo.Storer.HasEncodedObject(ref.Hash()); err != nil {
			return broken("%s names %s, which the store does not have: %v", name, ref.Hash(), err)
		}
	}
	return nil
}

// refContent checks what a ref file holds: a 40-hex object id or
// "ref: " and a name.
func refContent(name string, data []byte) error {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "":
		return broken("ref file %s is empty", name)
	case strings.HasPrefix(s, "ref: "):
		if plumbing.ReferenceName(strings.TrimPrefix(s, "ref: ")).Validate() != nil {
			return broken("ref file %s names no ref: %.60q", name, s)
		}
		return nil
	case !plumbing.IsHash(s):
		return broken("ref file %s holds no object id: %.60q", name, s)
	}
	return nil
}

// packedRefs checks that packed-refs, when there is one, parses as git
// writes it: comments, "<id> <name>" lines and "^<id>" peel lines.
func packedRefs(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return broken("packed-refs: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "^"):
			if !plumbing.IsHash(line[1:]) {
				return broken("packed-refs line %d: %.60q", n, line)
			}
		default:
			id, name, ok := strings.Cut(line, " ")
			if !ok || !plumbing.IsHash(id) || plumbing.ReferenceName(name).Validate() != nil {
				return broken("packed-refs line %d: %.60q", n, line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return broken("packed-refs: %v", err)
	}
	return nil
}

// rebuild moves the repository in dir aside (the one moved aside before
// it, if any, is removed, so that a repository that keeps breaking does
// not fill the disk) and makes a new empty one in its place.
func (c *Cache) rebuild(dir, repo string, why error) error {
	c.log.Warn("git cache: the repository is broken; moving it aside and fetching it again from scratch",
		"repo", repo, "dir", dir, "why", why)
	aside := dir + ".broken"
	if err := os.RemoveAll(aside); err != nil {
		return fmt.Errorf("git cache: rebuilding %s: %w", repo, err)
	}
	if err := os.Rename(dir, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("git cache: rebuilding %s: %w", repo, err)
	}
	if _, err := git.PlainInit(dir, true); err != nil {
		return fmt.Errorf("git cache: rebuilding %s: init: %w", repo, err)
	}
	return nil
}

// tmpRefPrefix names a ref file being written (atomicRefs), in the
// repository's directory; check removes those a killed process left.
const tmpRefPrefix = "ref.tmp-"

// atomicRefs is a repository's storage whose ref writes are atomic: a new
// file, synced, renamed over the old, so that a process killed at any
// point leaves the old ref or the new one, never an empty file. Everything
// else is the storage's own; PackfileWriter is passed on, since go-git
// writes a fetched pack whole only through it.
type atomicRefs struct {
	storage.Storer
	dir string
}

func (s atomicRefs) PackfileWriter() (io.WriteCloser, error) {
	pw, ok := s.Storer.(storer.PackfileWriter)
	if !ok {
		return nil, errors.New("git cache: the storage writes no packfiles")
	}
	return pw.PackfileWriter()
}

func (s atomicRefs) SetReference(ref *plumbing.Reference) error {
	return s.write(ref)
}

// CheckAndSetReference sets ref when old (if any) is still what the store
// holds. The cache's own lock of the repository serialises its writers.
func (s atomicRefs) CheckAndSetReference(ref, old *plumbing.Reference) error {
	if old != nil {
		cur, err := s.Storer.Reference(old.Name())
		if err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return err
		}
		if err == nil && cur.Hash() != old.Hash() {
			return storage.ErrReferenceHasChanged
		}
	}
	return s.write(ref)
}

func (s atomicRefs) write(ref *plumbing.Reference) error {
	name := ref.Name()
	if name.Validate() != nil || !strings.HasPrefix(name.String(), "refs/") {
		return s.Storer.SetReference(ref) // HEAD and the like: go-git's way
	}
	var content bytes.Buffer
	switch ref.Type() {
	case plumbing.HashReference:
		content.WriteString(ref.Hash().String() + "\n")
	case plumbing.SymbolicReference:
		content.WriteString("ref: " + ref.Target().String() + "\n")
	default:
		return s.Storer.SetReference(ref)
	}
	path := filepath.Join(s.dir, filepath.FromSlash(name.String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// Beside refs/, not in it: go-git reads every file under refs/ as a
	// ref, and one a killed process left empty would break it as before.
	f, err := os.CreateTemp(s.dir, tmpRefPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(content.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
