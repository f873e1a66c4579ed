package pipeline

import (
	"fmt"
	"io/fs"
	"sync"

	"github.com/catalogbot/catalogbot/policy"
)

// Rule ids of the limits one pull request check keeps to (policy key
// limits).
const (
	RuleLimitImages       = "LM1"
	RuleLimitCatalogBytes = "LM2"
	RuleLimitFileBytes    = "LM3"
)

// LimitError is a read refused because it would pass one of the policy's
// limits. Its text names the limit and the key that raises it; Rule gives
// the finding's rule, which the catalog validator takes over from a read
// error that has one.
type LimitError struct {
	// Key is the policy key, such as "limits.fileBytes".
	Key  string
	rule string
	msg  string
}

func (e *LimitError) Error() string { return e.msg }

// Rule is the rule id of findings about the refused read.
func (e *LimitError) Rule() string { return e.rule }

// isLimitRule says whether a finding's rule is a limit's: such a finding
// means content went unread, so it is never excused as pre-existing.
func isLimitRule(rule string) bool {
	return rule == RuleLimitImages || rule == RuleLimitCatalogBytes || rule == RuleLimitFileBytes
}

// budget is what one pull request check may still read of its two trees:
// no file larger than limits.fileBytes, and no more than
// limits.catalogBytes in all. A file is charged once per side however
// often the checks read it, so the sum is the content the change made the
// check look at. Sizes are taken from the tree before a byte is read, so a
// refused file is never held in memory.
type budget struct {
	limits policy.Limits
	mu     sync.Mutex
	// charged are the files counted so far, by side and path.
	charged map[string]bool
	total   int64
}

func newBudget(l policy.Limits) *budget {
	return &budget{limits: l, charged: map[string]bool{}}
}

// charge counts a file of size bytes at path on side, or says which limit
// reading it would pass.
func (b *budget) charge(side, path string, size int64) error {
	if max := b.limits.FileBytes; max > 0 && size > max {
		return &LimitError{Key: "limits.fileBytes", rule: RuleLimitFileBytes, msg: fmt.Sprintf(
			"not read: the file is %s, larger than limits.fileBytes (%s); split it, or raise limits.fileBytes in %s",
			BytesText(size), BytesText(max), policy.FileName)}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	key := side + "\x00" + path
	if b.charged[key] {
		return nil
	}
	if max := b.limits.CatalogBytes; max > 0 && b.total+size > max {
		return &LimitError{Key: "limits.catalogBytes", rule: RuleLimitCatalogBytes, msg: fmt.Sprintf(
			"not read: the check has read %s of catalog content and this file (%s) would pass limits.catalogBytes (%s); raise limits.catalogBytes in %s",
			BytesText(b.total), BytesText(size), BytesText(max), policy.FileName)}
	}
	b.charged[key] = true
	b.total += size
	return nil
}

// BytesText writes a size for people: "209.7 MB (209715200 bytes)".
func BytesText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB (%d bytes)", float64(n)/1e9, n)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB (%d bytes)", float64(n)/1e6, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitedFS is one side of a change as the checks read it: every regular
// file is charged to the budget before it is opened or read.
type limitedFS struct {
	fsys fs.FS
	side string
	b    *budget
}

var (
	_ fs.ReadFileFS = limitedFS{}
	_ fs.ReadDirFS  = limitedFS{}
	_ fs.StatFS     = limitedFS{}
)

// admit charges the file name, if it is a regular file.
func (l limitedFS) admit(name string) error {
	info, err := fs.Stat(l.fsys, name)
	if err != nil || !info.Mode().IsRegular() {
		// Whatever fails here fails again, with its own error, where the
		// caller goes on to read.
		return nil
	}
	return l.b.charge(l.side, name, info.Size())
}

func (l limitedFS) Open(name string) (fs.File, error) {
	if err := l.admit(name); err != nil {
		return nil, err
	}
	return l.fsys.Open(name)
}

func (l limitedFS) ReadFile(name string) ([]byte, error) {
	if err := l.admit(name); err != nil {
		return nil, err
	}
	return fs.ReadFile(l.fsys, name)
}

func (l limitedFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(l.fsys, name) }
func (l limitedFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(l.fsys, name) }

// bind makes in's trees read within the policy's limits, once: the owners
// evaluation and every check of a review share one budget. The package
// index reads the base unbounded (rawBase): it reads the whole base
// catalog, which the repository merged, once per directory tree, and it
// must see all of it to be right.
func (in *Input) bind() {
	in.bindOnce.Do(func() {
		b := newBudget(in.Policy.Limits)
		in.images = newImageCap(in.Policy.Limits.Images)
		in.rawBase = in.Base
		if in.Base != nil {
			in.Base = limitedFS{fsys: in.Base, side: "base", b: b}
		}
		if in.Head != nil {
			in.Head = limitedFS{fsys: in.Head, side: "head", b: b}
		}
		// An image a pull request names is catalog content read like
		// the repository's: a render writes out no more of it than
		// limits.catalogBytes, on disk and then in memory.
		if in.Renderer != nil && in.Policy.Limits.CatalogBytes > 0 {
			in.Renderer = in.Renderer.WithMaxBytes(in.Policy.Limits.CatalogBytes)
		}
	})
}

// indexBase is the base tree as the package index reads it.
func (in *Input) indexBase() fs.FS {
	if in.rawBase != nil {
		return in.rawBase
	}
	return in.Base
}

// imageBudget is the pass's image budget, bound on first use so that a
// check run on its own keeps to limits.images too.
func (in *Input) imageBudget() *imageCap {
	in.bind()
	return in.images
}
