// Package pkgindex keeps, on disk, what the package index of a catalog
// root says: for each package directory (by name and git tree id), the
// packages its blobs mention. A fresh process (the Action, the command
// line, the App after a restart) would otherwise read every blob of every
// catalog a change touches to learn it again; a git tree id names a
// directory's content exactly, so an entry computed once holds for that
// tree for ever, and a new root tree needs only its directories whose
// trees are new.
//
// A Store is a directory of files, one per catalog root tree, each naming
// the root tree and the .indexignore salt it was computed for and ending
// in a SHA-256 of its content. A file is written whole (temporary file,
// fsync, rename), so a reader sees the old file or the new one, never
// half of one; one that is corrupt, of another format version or that
// names another tree than its name says is ignored, and its entries
// computed again. Whatever a file says is used only where the entry's
// directory name and tree id are those of the tree being indexed, as
// read (and verified) from git. Beside the root files, a small pointer
// per scope (a catalog root's path) names the root tree saved last, from
// which a new tree of the same root starts: the cost of indexing it is
// the directories that differ.
//
// The store is bounded: past MaxFiles root files the least recently used
// are removed. Beside the indexes it keeps records, values derived from
// one git tree under the same rules (see LoadRecord). A store is safe for concurrent use by several goroutines
// and processes.
package pkgindex

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
)

// version is the format of the files; a file of another is ignored.
const version = "catalogbot-package-index 1"

// DefaultMaxFiles bounds a store whose Options leave MaxFiles zero: about
// a megabyte per file for a large catalog root.
const DefaultMaxFiles = 256

// Entry is one package directory of a catalog root.
type Entry struct {
	// Dir is the directory's name in the root; Tree its git tree id.
	Dir, Tree string
	// Packages are the package names its blobs mention, sorted.
	Packages []string
}

// Root is the index of one catalog root tree.
type Root struct {
	// Tree is the root's git tree id.
	Tree string
	// Salt names the root's .indexignore, whose patterns decide which
	// files of a directory are read.
	Salt    string
	Entries []Entry
}

// Lookup returns the packages the entry for dir at tree says, if r has
// one computed under salt.
func (r *Root) Lookup(salt, dir, tree string) ([]string, bool) {
	if r == nil || r.Salt != salt {
		return nil, false
	}
	i, ok := slices.BinarySearchFunc(r.Entries, dir, func(e Entry, d string) int { return strings.Compare(e.Dir, d) })
	if !ok || r.Entries[i].Tree != tree {
		return nil, false
	}
	return r.Entries[i].Packages, true
}

// Options configure a Store; the zero value is usable.
type Options struct {
	// MaxFiles bounds the root files kept (0: DefaultMaxFiles).
	MaxFiles int
	// MaxRecords bounds the record files kept (0: DefaultMaxRecords).
	MaxRecords int
}

// Store is a directory of package indexes.
type Store struct {
	dir                  string
	maxFiles, maxRecords int
}

// Open returns the store in dir, creating the directory if needed.
func Open(dir string, o Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("package index: %w", err)
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	return &Store{dir: dir, maxFiles: o.MaxFiles, maxRecords: o.MaxRecords}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// rootFile is where the index of root tree id is kept.
func (s *Store) rootFile(tree string) string { return filepath.Join(s.dir, tree+".idx") }

// scopeFile is the pointer to the root tree saved last for scope.
func (s *Store) scopeFile(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(s.dir, "scope-"+hex.EncodeToString(sum[:12]))
}

// Load returns the index saved for the root tree id tree, or false when
// there is none that can be trusted to be it.
func (s *Store) Load(tree string) (*Root, bool) {
	if s == nil || !change.IsObjectID(tree) {
		return nil, false
	}
	name := s.rootFile(tree)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, false
	}
	r, err := decode(data)
	if err != nil || r.Tree != tree {
		return nil, false
	}
	// Used now: the last to be removed.
	now := time.Now()
	_ = os.Chtimes(name, now, now)
	return r, true
}

// Has says whether the store holds a file for the root tree id tree.
func (s *Store) Has(tree string) bool {
	if s == nil || !change.IsObjectID(tree) {
		return false
	}
	_, err := os.Stat(s.rootFile(tree))
	return err == nil
}

// Nearest returns the index saved last for scope (a catalog root's path),
// from which a new tree of that root is indexed: the entries of its
// directories that did not change hold as they are.
func (s *Store) Nearest(scope string) (*Root, bool) {
	if s == nil {
		return nil, false
	}
	data, err := os.ReadFile(s.scopeFile(scope))
	if err != nil {
		return nil, false
	}
	return s.Load(strings.TrimSpace(string(data)))
}

// Save keeps r as the index of its root tree and the latest of scope,
// then removes the least recently used files past the bound. Entries
// whose names a line cannot hold are left out (their directories are
// read again when asked for).
func (s *Store) Save(scope string, r *Root) error {
	if s == nil {
		return nil
	}
	if !change.IsObjectID(r.Tree) {
		return fmt.Errorf("package index: %q is not a git object id", r.Tree)
	}
	if err := writeAtomic(s.dir, s.rootFile(r.Tree), encode(r)); err != nil {
		return fmt.Errorf("package index: %w", err)
	}
	if err := writeAtomic(s.dir, s.scopeFile(scope), []byte(r.Tree+"\n")); err != nil {
		return fmt.Errorf("package index: %w", err)
	}
	return s.trim()
}

// trim removes the least recently used root files past maxFiles and
// record files past maxRecords, and the temporary files of writers that
// died more than an hour ago. It runs after every save, so it counts by
// name and reads a file's time only where it needs it: a group past its
// bound, a temporary file (a directory of 256 roots cost 256 stats a save,
// about as much as the save itself).
func (s *Store) trim() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("package index: %w", err)
	}
	var roots, records []fs.DirEntry
	for _, e := range entries {
		switch {
		case strings.HasSuffix(e.Name(), ".idx"):
			roots = append(roots, e)
		case strings.HasSuffix(e.Name(), recordSuffix):
			records = append(records, e)
		case strings.HasPrefix(e.Name(), ".tmp-"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(s.dir, e.Name()))
			}
		}
	}
	type file struct {
		name string
		at   time.Time
	}
	for _, kept := range []struct {
		entries []fs.DirEntry
		max     int
	}{{roots, s.maxFiles}, {records, s.maxRecords}} {
		if len(kept.entries) <= kept.max {
			continue
		}
		var files []file
		for _, e := range kept.entries {
			if info, err := e.Info(); err == nil {
				files = append(files, file{e.Name(), info.ModTime()})
			}
		}
		if len(files) <= kept.max {
			continue
		}
		slices.SortFunc(files, func(a, b file) int { return a.at.Compare(b.at) })
		for _, f := range files[:len(files)-kept.max] {
			if err := os.Remove(filepath.Join(s.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("package index: %w", err)
			}
		}
	}
	return nil
}

// writeAtomic writes data to name through a temporary file in dir, synced
// before it is renamed into place.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	// Readable by all, as the repository's content it describes is: the
	// Action writes as root in its container, and actions/cache saves
	// the directory as the runner's user.
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// The format, one record a line, fields separated by tabs:
//
//	catalogbot-package-index 1
//	root	<tree id>
//	salt	<salt>
//	dir	<name>	<tree id>	<package>...
//	sha256	<hex of every byte before this line>
//
// Entries are sorted by name. A name holding a tab or a line break is not
// written (encode) and makes a file invalid (decode).

func encode(r *Root) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nroot\t%s\nsalt\t%s\n", version, r.Tree, r.Salt)
	entries := slices.SortedFunc(slices.Values(r.Entries), func(a, b Entry) int { return strings.Compare(a.Dir, b.Dir) })
	for _, e := range entries {
		if !plain(e.Dir) || !change.IsObjectID(e.Tree) || slices.ContainsFunc(e.Packages, func(p string) bool { return !plain(p) }) {
			continue
		}
		b.WriteString("dir\t" + e.Dir + "\t" + e.Tree)
		for _, p := range e.Packages {
			b.WriteString("\t" + p)
		}
		b.WriteByte('\n')
	}
	b.WriteString("sha256\t" + encodeSum(b.Bytes()) + "\n")
	return b.Bytes()
}

// encodeSum is the trailer's sum of body.
func encodeSum(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// errFormat says a file is not a package index this version wrote whole.
var errFormat = errors.New("not a package index of this version, or damaged")

func decode(data []byte) (*Root, error) {
	body, trailer, ok := cutLastLine(data)
	if !ok {
		return nil, errFormat
	}
	if trailer != "sha256\t"+encodeSum(body) {
		return nil, errFormat
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	r := &Root{}
	for i := 0; sc.Scan(); i++ {
		line := sc.Text()
		f := strings.Split(line, "\t")
		switch {
		case i == 0:
			if line != version {
				return nil, errFormat
			}
		case i == 1 && len(f) == 2 && f[0] == "root" && change.IsObjectID(f[1]):
			r.Tree = f[1]
		case i == 2 && len(f) == 2 && f[0] == "salt":
			r.Salt = f[1]
		case i > 2 && len(f) >= 3 && f[0] == "dir" && change.IsObjectID(f[2]):
			if n := len(r.Entries); n > 0 && r.Entries[n-1].Dir >= f[1] {
				return nil, errFormat
			}
			r.Entries = append(r.Entries, Entry{Dir: f[1], Tree: f[2], Packages: f[3:len(f):len(f)]})
		default:
			return nil, errFormat
		}
	}
	if r.Tree == "" {
		return nil, errFormat
	}
	return r, nil
}

// cutLastLine splits data before its last line, which must end in '\n'.
func cutLastLine(data []byte) (body []byte, last string, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return data[:i+1], string(data[i+1 : len(data)-1]), true
}

// plain says whether s can be a field: not empty, no tab, no line break.
func plain(s string) bool { return s != "" && !strings.ContainsAny(s, "\t\n\r") }
