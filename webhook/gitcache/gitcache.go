// Package gitcache keeps a bare git repository on disk for each GitHub
// repository catalogbot serves, and reads commits from it as file systems.
//
// Each fetch brings exactly the refs a job needs (a branch, and for a pull
// request refs/pull/N/head) into the repository, incrementally: go-git
// negotiates with what is already there, so only new objects travel. Trees
// are read straight from the object store (change.TreeFS): nothing is checked
// out and nothing in a commit is ever run.
//
// Fetches of one repository are serialised by a mutex of its own. Reading
// needs no lock: git objects never change once written, and go-git writes a
// pack's index before it renames the pack into place, so a reader never sees
// half of a fetch. Every reader opens its own handle on the repository,
// because go-git's object storage is not safe for concurrent use.
package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/catalogbot/catalogbot/checks/change"
)

// ErrNoRef says the repository has no such ref (Ref): a merge queue's
// branch is gone once its group merged or was destroyed.
var ErrNoRef = errors.New("no such ref")

// ErrHeadMoved is matched (errors.Is) by a *HeadMovedError.
var ErrHeadMoved = errors.New("the pull request head moved")

// TokenRejected reports whether err is a fetch's token refused by the
// server (HTTP 401): revoked or expired before its time, so that the
// caller mints another rather than retry with it.
func TokenRejected(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired)
}

// HeadMovedError says that refs/pull/N/head is not the commit the caller
// expected: the pull request was pushed to after it was read. The caller
// should read the pull request again and check the new head.
type HeadMovedError struct {
	Repo   string
	Number int
	Want   string
	Got    string
}

func (e *HeadMovedError) Error() string {
	return fmt.Sprintf("%s#%d: head is %s, not %s: the pull request moved", e.Repo, e.Number, e.Got, e.Want)
}

func (e *HeadMovedError) Is(target error) bool { return target == ErrHeadMoved }

// Source is where a repository is fetched from.
type Source struct {
	// Repo is "owner/name"; it names the repository on disk.
	Repo string
	// URL is the clone URL (https://github.com/owner/name.git).
	URL string
	// Token is an installation token, sent as the password of user
	// x-access-token; "" fetches anonymously.
	Token string
}

// Cache is a directory of bare repositories, one per GitHub repository.
type Cache struct {
	dir          string
	log          *slog.Logger
	fetchTimeout time.Duration // see Options

	mu    sync.Mutex
	locks map[string]*sync.Mutex
	err   error // see Err
	// pending is the repository whose rebuild failed, nil when none;
	// Err tries it again, no sooner than retryAt.
	pending *pendingRepair
	retryAt time.Time

	probe probe // see Writable
}

// Options configure a Cache; the zero value is usable.
type Options struct {
	// Logger is told of the repositories rebuilt (repair.go); nil
	// discards it.
	Logger *slog.Logger
	// FetchTimeout bounds one fetch, negotiation and pack included: a
	// server that stops answering in the middle would otherwise hold
	// the fetch, its repository's lock and the caller's job until the
	// process stops. 0 means DefaultFetchTimeout, negative no bound.
	FetchTimeout time.Duration
}

// DefaultFetchTimeout is Options.FetchTimeout's default: a first fetch of
// a large repository takes minutes; a fetch still going after this one is
// taken to be stalled.
const DefaultFetchTimeout = 10 * time.Minute

// New returns a cache in dir, creating it if needed.
func New(dir string) (*Cache, error) { return NewWithOptions(dir, Options{}) }

// NewWithOptions is New with o.
func NewWithOptions(dir string, o Options) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	return &Cache{dir: dir, log: o.Logger, fetchTimeout: o.FetchTimeout, locks: make(map[string]*sync.Mutex)}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

var repoName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$`)

// path returns the repository directory of "owner/name". GitHub names are
// case-insensitive, so the directory is the lower-cased name; a name that
// could leave the cache directory is refused.
func (c *Cache) path(repo string) (string, error) {
	if !repoName.MatchString(repo) || strings.Contains(repo, "..") {
		return "", fmt.Errorf("git cache: invalid repository name %q", repo)
	}
	owner, name, _ := strings.Cut(strings.ToLower(repo), "/")
	return filepath.Join(c.dir, owner, name+".git"), nil
}

// Path is the directory of the bare repository of "owner/name", for a
// writer of new objects (the App's proposals, package policy/propose):
// objects are only ever added, so a writer needs no lock against fetches
// and readers, and it must write no reference the cache keeps.
func (c *Cache) Path(repo string) (string, error) { return c.path(repo) }

func (c *Cache) lock(dir string) func() {
	c.mu.Lock()
	l, ok := c.locks[dir]
	if !ok {
		l = new(sync.Mutex)
		c.locks[dir] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// open opens the repository in dir with its own storage handle: each
// reader gets one, since go-git storage is not safe for concurrent use.
// Every object is read verified (change.Open).
func open(dir string) (*git.Repository, error) {
	return change.Open(dir)
}

// fetch brings each ref of refs (remote name -> local name) into the
// repository of src, creating it on first use, and returns the commit each
// local ref points at afterwards. A repository found broken, before the
// fetch or by a fetch that failed, is rebuilt from scratch (repair.go).
func (c *Cache) fetch(ctx context.Context, src Source, refs map[string]string) (map[string]string, error) {
	dir, err := c.path(src.Repo)
	if err != nil {
		return nil, err
	}
	unlock := c.lock(dir)
	defer unlock()

	locals := slices.Sorted(maps.Values(refs))
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if _, err := git.PlainInit(dir, true); err != nil {
			return nil, fmt.Errorf("git cache: init %s: %w", src.Repo, err)
		}
	} else if why := check(dir, locals); why != nil {
		if err := c.rebuild(dir, src.Repo, why); err != nil {
			c.unrepaired(dir, src.Repo, why, err)
			return nil, err
		}
	}
	out, err := c.fetchInto(ctx, dir, src, refs)
	if err != nil && ctx.Err() == nil {
		// A fetch may find what the check does not look for (an object
		// missing below a ref): once, from scratch.
		why := check(dir, locals)
		if why == nil && errors.Is(err, plumbing.ErrObjectNotFound) {
			why = err
		}
		if why != nil {
			if rerr := c.rebuild(dir, src.Repo, why); rerr != nil {
				c.unrepaired(dir, src.Repo, why, rerr)
				return nil, rerr
			}
			out, err = c.fetchInto(ctx, dir, src, refs)
		}
	}
	if err == nil {
		c.repaired()
	}
	return out, err
}

func (c *Cache) fetchInto(ctx context.Context, dir string, src Source, refs map[string]string) (map[string]string, error) {
	repo, err := open(dir)
	if err != nil {
		return nil, err
	}
	remote := git.NewRemote(atomicRefs{Storer: repo.Storer, dir: dir}, &config.RemoteConfig{Name: "origin", URLs: []string{src.URL}})
	opts := &git.FetchOptions{RemoteName: "origin", Tags: git.NoTags, Force: true}
	for _, from := range slices.Sorted(maps.Keys(refs)) {
		opts.RefSpecs = append(opts.RefSpecs, config.RefSpec("+"+from+":"+refs[from]))
	}
	if src.Token != "" {
		opts.Auth = &githttp.BasicAuth{Username: "x-access-token", Password: src.Token}
	}
	fctx, cancel := ctx, context.CancelFunc(func() {})
	if c.fetchTimeout > 0 {
		fctx, cancel = context.WithTimeout(ctx, c.fetchTimeout)
	}
	defer cancel()
	if err := remote.FetchContext(fctx, opts); err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("not done within %s: %w", c.fetchTimeout, err)
		}
		return nil, fmt.Errorf("git fetch %s (%s): %w", src.Repo, strings.Join(slices.Sorted(maps.Keys(refs)), ", "), err)
	}
	out := make(map[string]string, len(refs))
	for _, local := range refs {
		ref, err := repo.Reference(plumbing.ReferenceName(local), true)
		if err != nil {
			return nil, fmt.Errorf("git fetch %s: %s: %w", src.Repo, local, err)
		}
		if _, err := repo.CommitObject(ref.Hash()); err != nil {
			return nil, fmt.Errorf("git fetch %s: %s names %s: %w", src.Repo, local, ref.Hash(), err)
		}
		out[local] = ref.Hash().String()
	}
	return out, nil
}

func branchRefs(branch string) (remote, local string, err error) {
	name := plumbing.NewBranchReferenceName(branch)
	if branch == "" || name.Validate() != nil || strings.ContainsAny(branch, "*:") {
		return "", "", fmt.Errorf("git cache: invalid branch name %q", branch)
	}
	return name.String(), "refs/remotes/origin/" + branch, nil
}

// Snapshot is a pull request's base branch and head, as fetched.
type Snapshot struct {
	// BaseSHA is the tip of the base branch when fetched: the trusted
	// state the change is checked against, and merged into.
	BaseSHA string
	HeadSHA string
	Base    fs.FS
	Head    fs.FS
}

// PullRequest fetches baseBranch and refs/pull/<number>/head and returns the
// trees of the base branch's tip and of the head, which must be wantHead:
// when it is not, the error is a *HeadMovedError.
func (c *Cache) PullRequest(ctx context.Context, src Source, baseBranch string, number int, wantHead string) (*Snapshot, error) {
	if number <= 0 {
		return nil, fmt.Errorf("git cache: invalid pull request number %d", number)
	}
	remoteBase, localBase, err := branchRefs(baseBranch)
	if err != nil {
		return nil, err
	}
	remoteHead := fmt.Sprintf("refs/pull/%d/head", number)
	localHead := fmt.Sprintf("refs/remotes/origin/pull/%d", number)
	got, err := c.fetch(ctx, src, map[string]string{remoteBase: localBase, remoteHead: localHead})
	if err != nil {
		return nil, err
	}
	if wantHead != "" && got[localHead] != wantHead {
		return nil, &HeadMovedError{Repo: src.Repo, Number: number, Want: wantHead, Got: got[localHead]}
	}
	base, err := c.Tree(src.Repo, got[localBase])
	if err != nil {
		return nil, err
	}
	head, err := c.Tree(src.Repo, got[localHead])
	if err != nil {
		return nil, err
	}
	return &Snapshot{BaseSHA: got[localBase], HeadSHA: got[localHead], Base: base, Head: head}, nil
}

// Branch fetches branch and returns the commit at its tip.
func (c *Cache) Branch(ctx context.Context, src Source, branch string) (string, error) {
	remote, local, err := branchRefs(branch)
	if err != nil {
		return "", err
	}
	got, err := c.fetch(ctx, src, map[string]string{remote: local})
	if err != nil {
		return "", err
	}
	return got[local], nil
}

// Ref fetches the full ref name ref (refs/heads/gh-readonly-queue/main/
// pr-7-<sha>, say: a merge queue's commit, which is on no branch a pull
// request names) and returns the commit it points at, with its history
// down to what the cache holds already: a merge group's base is one of
// its parents, so both are read after this one fetch.
func (c *Cache) Ref(ctx context.Context, src Source, ref string) (string, error) {
	name := plumbing.ReferenceName(ref)
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || name.Validate() != nil || strings.ContainsAny(ref, "*:") {
		return "", fmt.Errorf("git cache: invalid ref %q: want refs/heads/<name>", ref)
	}
	local := "refs/remotes/origin/" + branch
	got, err := c.fetch(ctx, src, map[string]string{ref: local})
	if errors.Is(err, git.NoMatchingRefSpecError{}) {
		return "", fmt.Errorf("git cache: %s has no %s: %w", src.Repo, ref, ErrNoRef)
	}
	if err != nil {
		return "", err
	}
	return got[local], nil
}

// Change describes the change from commit base to commit head, both
// already fetched, as change.FromGit does for a repository on disk: the
// files between them and the trees of both.
func (c *Cache) Change(repo, base, head string) (*change.Change, fs.FS, fs.FS, error) {
	dir, err := c.path(repo)
	if err != nil {
		return nil, nil, nil, err
	}
	ch, baseFS, headFS, err := change.FromGit(dir, base, head)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", repo, err)
	}
	ch.Repo = repo
	return ch, baseFS, headFS, nil
}

// Tree returns the tree of commit sha, which an earlier fetch brought into
// the repository's cache, as a read-only file system of its own.
func (c *Cache) Tree(repo, sha string) (fs.FS, error) {
	dir, err := c.path(repo)
	if err != nil {
		return nil, err
	}
	r, err := open(dir)
	if err != nil {
		return nil, err
	}
	t, err := change.TreeFS(r, sha)
	if err != nil {
		return nil, fmt.Errorf("%s: tree of %s: %w", repo, sha, err)
	}
	return t, nil
}

// ChangedPaths lists the paths whose content differs between the trees of
// commits from and to (both already fetched), sorted: what moved on a branch
// between them. A rename lists both of its paths.
func (c *Cache) ChangedPaths(repo, from, to string) ([]string, error) {
	if from == to {
		return nil, nil
	}
	dir, err := c.path(repo)
	if err != nil {
		return nil, err
	}
	r, err := open(dir)
	if err != nil {
		return nil, err
	}
	tree := func(sha string) (*object.Tree, error) {
		cm, err := r.CommitObject(plumbing.NewHash(sha))
		if err != nil {
			return nil, fmt.Errorf("%s: commit %s: %w", repo, sha, err)
		}
		return cm.Tree()
	}
	a, err := tree(from)
	if err != nil {
		return nil, err
	}
	b, err := tree(to)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil, fmt.Errorf("%s: diff %s..%s: %w", repo, from, to, err)
	}
	var paths []string
	for _, ch := range changes {
		for _, p := range []string{ch.From.Name, ch.To.Name} {
			if p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// FirstParents lists the commits a branch moved through from from to to
// (both already fetched): to and its first parents, newest first, up to
// and not including from, at most max of them. complete is false when
// from was not reached within max commits or the history ends first (from
// "" reads up to max). The first parents are the branch's own steps: a
// merge commit is one, and the commits of the merged branch are not.
func (c *Cache) FirstParents(repo, from, to string, max int) (shas []string, complete bool, err error) {
	dir, err := c.path(repo)
	if err != nil {
		return nil, false, err
	}
	r, err := open(dir)
	if err != nil {
		return nil, false, err
	}
	sha := to
	for len(shas) < max {
		if sha == from {
			return shas, true, nil
		}
		cm, err := r.CommitObject(plumbing.NewHash(sha))
		if err != nil {
			return nil, false, fmt.Errorf("%s: commit %s: %w", repo, sha, err)
		}
		shas = append(shas, sha)
		if cm.NumParents() == 0 {
			return shas, from == "", nil
		}
		sha = cm.ParentHashes[0].String()
	}
	return shas, sha == from, nil
}

// Merge merges commit theirs (a pull request's head) onto ours (its base
// branch's tip), both already fetched, as change.MergeTree does: the merge
// commit it may write is kept in the repository, and the result is read
// like any fetched commit. The tree is nil when the two conflict.
func (c *Cache) Merge(repo, ours, theirs string) (fs.FS, *change.Merged, error) {
	dir, err := c.path(repo)
	if err != nil {
		return nil, nil, err
	}
	// Objects are written: not while a fetch writes the same repository.
	unlock := c.lock(dir)
	defer unlock()
	r, err := open(dir)
	if err != nil {
		return nil, nil, err
	}
	t, m, err := change.MergeTree(r, ours, theirs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: merge %s onto %s: %w", repo, change.ShortSHA(theirs), change.ShortSHA(ours), err)
	}
	return t, m, nil
}

// TreeID is the id of the tree of commit sha, already fetched.
func (c *Cache) TreeID(repo, sha string) (string, error) {
	dir, err := c.path(repo)
	if err != nil {
		return "", err
	}
	r, err := open(dir)
	if err != nil {
		return "", err
	}
	cm, err := r.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("%s: commit %s: %w", repo, sha, err)
	}
	return cm.TreeHash.String(), nil
}
