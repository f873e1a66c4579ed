package change

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// ErrCorruptObject is wrapped by every error of a read from a repository
// opened with Open whose bytes do not hash to the object id git named
// (gitobj.ErrCorrupt; errors.As finds a *gitobj.MismatchError with the
// object and, through the tree's *fs.PathError, the path). No verdict is
// possible on such bytes: it is an error, never a finding.
var ErrCorruptObject = gitobj.ErrCorrupt

// Open opens the git repository at dir (a work tree, a linked work tree or
// a bare repository) for reading commits and trees. It is the one way
// catalogbot opens a repository: every object read through it, by go-git
// (commits, trees, the blobs a rename diff compares) or by TreeFS, comes
// from a verified reader (package gitobj) and hashes to its id.
//
// go-git's own reader is not used for objects: with a large-object
// threshold it rebuilds some delta chains wrongly, and without one it
// holds every large blob whole. gitobj streams an object stored whole and
// rebuilds a delta in one buffer of its size, which keeps the memory of a
// check bounded by the files it reads.
//
// The repository is opened for reading; writes (a fetch) go through
// go-git's storage, and objects they add are found on the next read.
func Open(dir string) (*git.Repository, error) {
	var st *filesystem.Storage
	partial := false
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	switch {
	case err == nil:
		var ok bool
		if st, ok = repo.Storer.(*filesystem.Storage); !ok {
			return nil, fmt.Errorf("open git repository %s: unexpected storage %T", dir, repo.Storer)
		}
	case hasPartialClone(dir) && (errors.Is(err, git.ErrUnknownExtension) || errors.Is(err, git.ErrUnsupportedExtensionRepositoryFormatVersion)):
		// go-git refuses extensions.partialClone, which git writes into
		// a partial clone. Reading one needs nothing from it: an object
		// it left out is missing, and says so (ObjectError).
		if st, err = plainStorage(dir); err != nil {
			return nil, fmt.Errorf("open git repository %s: %w", dir, err)
		}
		partial = true
	default:
		return nil, fmt.Errorf("open git repository %s: %w", dir, err)
	}
	objects, err := st.Filesystem().Chroot("objects")
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", dir, err)
	}
	store, err := sharedStore(objects)
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: objects: %w", dir, err)
	}
	startFetching(store, st, dir)
	vs := &verifiedStorage{Storage: st, objects: store, promisor: promisorRemote(st), dir: dir, hidePartialClone: partial}
	if repo, err = git.Open(vs, nil); err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", dir, err)
	}
	return repo, nil
}

// verifiedStorage is go-git's storage of a repository with every object
// read replaced by gitobj's verified reader. Everything else (references,
// configuration, writing objects) is go-git's.
type verifiedStorage struct {
	*filesystem.Storage
	objects *gitobj.Store
	// promisor is the remote of a partial clone, "" for a complete
	// repository; dir is where the repository was opened. An object
	// missing names them (ObjectError).
	promisor, dir string
	// hidePartialClone leaves extensions.partialClone out of the
	// configuration go-git reads, which refuses it.
	hidePartialClone bool
}

// Config is the repository's configuration; see hidePartialClone.
func (s *verifiedStorage) Config() (*config.Config, error) {
	cfg, err := s.Storage.Config()
	if err != nil || !s.hidePartialClone || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return cfg, err
	}
	sec := cfg.Raw.Section("extensions")
	sec.Options = slices.DeleteFunc(sec.Options, func(o *format.Option) bool { return strings.EqualFold(o.Key, "partialClone") })
	return cfg, nil
}

// hasPartialClone says whether the configuration of the repository at dir
// names extensions.partialClone.
func hasPartialClone(dir string) bool {
	st, err := plainStorage(dir)
	return err == nil && promisorExtension(st) != ""
}

func promisorExtension(st *filesystem.Storage) string {
	cfg, err := st.Config()
	if err != nil || cfg.Raw == nil {
		return ""
	}
	return cfg.Raw.Section("extensions").Option("partialClone")
}

// plainStorage is go-git's storage of the repository at dir (a work tree,
// a linked work tree or a bare repository), found as git finds it, without
// the check of its extensions that opening it through go-git makes.
func plainStorage(dir string) (*filesystem.Storage, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var dot billy.Filesystem = osfs.New(abs)
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
		if fi.IsDir() {
			dot = osfs.New(filepath.Join(abs, ".git"))
		} else {
			// A linked work tree: ".git" is a file naming its directory.
			b, err := os.ReadFile(filepath.Join(abs, ".git"))
			if err != nil {
				return nil, err
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
			if !ok {
				return nil, fmt.Errorf("%s: not a gitdir file", filepath.Join(abs, ".git"))
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(abs, target)
			}
			dot = osfs.New(target)
		}
	}
	// A linked work tree's own directory keeps HEAD and the index; the
	// common directory it names keeps objects, refs and configuration.
	if b, err := os.ReadFile(filepath.Join(dot.Root(), "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dot.Root(), common)
		}
		dot = dotgit.NewRepositoryFilesystem(dot, osfs.New(common))
	}
	return filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), nil
}

// promisorRemote names the remote that a partial clone may leave objects
// with, as git finds it: extensions.partialClone, else the first remote
// with promisor = true. "" for a repository that is no partial clone, or
// whose configuration cannot be read.
func promisorRemote(st *filesystem.Storage) string {
	if r := promisorExtension(st); r != "" {
		return r
	}
	cfg, err := st.Config()
	if err != nil || cfg.Raw == nil {
		return ""
	}
	for _, sub := range cfg.Raw.Section("remote").Subsections {
		if strings.EqualFold(sub.Option("promisor"), "true") {
			return sub.Name
		}
	}
	return ""
}

// EncodedObject returns h if it is of type t (or t is AnyObject). The
// content is read when the object's Reader is called, and verified as it
// is read.
func (s *verifiedStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if t == plumbing.TreeObject || t == plumbing.CommitObject || t == plumbing.TagObject {
		// Small objects that are read as soon as they are asked for:
		// one pass reads and verifies them, where a header first and the
		// content next would rebuild a delta twice.
		typ, b, err := s.objects.Read(h)
		if err != nil {
			return nil, err
		}
		if typ != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return &readObject{h: h, t: typ, b: b}, nil
	}
	typ, size, err := s.objects.Header(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && t != typ {
		return nil, plumbing.ErrObjectNotFound
	}
	return &lazyObject{s: s.objects, h: h, t: typ, size: size}, nil
}

// EncodedObjectSize returns the size of h without reading its content.
func (s *verifiedStorage) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	_, size, err := s.objects.Header(h)
	return size, err
}

// HasEncodedObject returns nil if the store holds h, as go-git's does.
func (s *verifiedStorage) HasEncodedObject(h plumbing.Hash) error {
	ok, err := s.objects.Has(h)
	if err != nil {
		return err
	}
	if !ok {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

// lazyObject is an object read from the store each time its Reader is
// called.
type lazyObject struct {
	s    *gitobj.Store
	h    plumbing.Hash
	t    plumbing.ObjectType
	size int64
}

func (o *lazyObject) Hash() plumbing.Hash             { return o.h }
func (o *lazyObject) Type() plumbing.ObjectType       { return o.t }
func (o *lazyObject) SetType(plumbing.ObjectType)     {}
func (o *lazyObject) Size() int64                     { return o.size }
func (o *lazyObject) SetSize(int64)                   {}
func (o *lazyObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }

func (o *lazyObject) Reader() (io.ReadCloser, error) {
	r, _, _, err := o.s.Open(o.h)
	return r, err
}

// readObject is an object read whole, and verified, already.
type readObject struct {
	h plumbing.Hash
	t plumbing.ObjectType
	b []byte
}

func (o *readObject) Hash() plumbing.Hash             { return o.h }
func (o *readObject) Type() plumbing.ObjectType       { return o.t }
func (o *readObject) SetType(plumbing.ObjectType)     {}
func (o *readObject) Size() int64                     { return int64(len(o.b)) }
func (o *readObject) SetSize(int64)                   {}
func (o *readObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }
func (o *readObject) Reader() (io.ReadCloser, error)  { return io.NopCloser(bytes.NewReader(o.b)), nil }

var errReadOnly = errors.New("objects read from a repository are read-only")

// objectStore is the verified reader behind a repository from Open.
func objectStore(repo *git.Repository) *gitobj.Store {
	if s, ok := repo.Storer.(*verifiedStorage); ok {
		return s.objects
	}
	return nil
}

// Close releases the pack files of both readers.
// Close closes go-git's storage; the object store is the process's, shared
// by every repository opened on the same directory.
func (s *verifiedStorage) Close() error {
	return s.Storage.Close()
}

// stores holds one object store per object directory for the process. An
// object's content is fixed by its id, so every opening of a repository
// (the App opens its cached clone for each check) can share one: the pack
// indexes are read once, the pack files stay open once, and delta bases
// already rebuilt serve the next check. Packs a fetch adds are found when
// an object is missing.
var stores = struct {
	sync.Mutex
	m map[string]*gitobj.Store
}{m: map[string]*gitobj.Store{}}

func sharedStore(objects billy.Filesystem) (*gitobj.Store, error) {
	if objects.Root() == "" {
		// A file system that does not say where it is cannot be told
		// from another: it gets a store of its own.
		return gitobj.New(objects)
	}
	key, err := filepath.Abs(objects.Root())
	if err != nil {
		return nil, err
	}
	stores.Lock()
	defer stores.Unlock()
	if s, ok := stores.m[key]; ok {
		return s, nil
	}
	s, err := gitobj.New(objects)
	if err != nil {
		return nil, err
	}
	stores.m[key] = s
	return s, nil
}

// Bare says whether dir is a bare git repository, as git tells one: a
// directory holding HEAD, objects and refs, with no work tree. Its files
// are only in its commits; read as a directory it holds none of them.
func Bare(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return false
	}
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
