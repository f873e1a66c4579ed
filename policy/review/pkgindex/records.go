package pkgindex

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
)

// Besides package indexes a Store keeps records: a value some reader
// derived from one git tree (what the packages' ci.yaml files under
// operators/ say, for the policy and the owners check), opaque to the
// store, one file per kind and tree. They follow the package index's
// rules: written whole, ending in a SHA-256 of their content, naming the
// kind and tree they are of, which a reader must ask for exactly; a file
// that is damaged, of another format or of another tree is not found.
// Past MaxRecords files the least recently used are removed.

// recordVersion is the format of the record files.
const recordVersion = "catalogbot-tree-record 1"

// DefaultMaxRecords bounds the record files of a store whose Options
// leave MaxRecords zero: a few hundred kilobytes each for a large
// repository.
const DefaultMaxRecords = 64

// recordSuffix ends the name of every record file.
const recordSuffix = ".rec"

// recordFile is where the record of kind for tree is kept.
func (s *Store) recordFile(kind, tree string) string {
	return filepath.Join(s.dir, tree+"."+kind+recordSuffix)
}

// LoadRecord returns the record of kind saved for the git tree id tree,
// or false when there is none that can be trusted to be it.
func (s *Store) LoadRecord(kind, tree string) ([]byte, bool) {
	if s == nil || !isKind(kind) || !change.IsObjectID(tree) {
		return nil, false
	}
	name := s.recordFile(kind, tree)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, false
	}
	body, err := decodeRecord(data, kind, tree)
	if err != nil {
		return nil, false
	}
	// Used now: the last to be removed.
	now := time.Now()
	_ = os.Chtimes(name, now, now)
	return body, true
}

// SaveRecord keeps data as the record of kind for the git tree id tree,
// then removes the least recently used record files past the bound.
func (s *Store) SaveRecord(kind, tree string, data []byte) error {
	if s == nil {
		return nil
	}
	if !isKind(kind) || !change.IsObjectID(tree) {
		return fmt.Errorf("package index: record %q of %q: not a record kind and git object id", kind, tree)
	}
	if err := writeAtomic(s.dir, s.recordFile(kind, tree), encodeRecord(kind, tree, data)); err != nil {
		return fmt.Errorf("package index: %w", err)
	}
	if err := writeAtomic(s.dir, s.latestFile(kind), []byte(tree+"\n")); err != nil {
		return fmt.Errorf("package index: %w", err)
	}
	return s.trim()
}

// latestFile names the tree whose record of kind was saved last.
func (s *Store) latestFile(kind string) string {
	return filepath.Join(s.dir, "latest-"+kind)
}

// NearestRecord returns the record of kind saved last and the tree id it
// is of, or false when there is none that can be trusted: a reader of a
// new tree takes from it what the two trees share, as Nearest's index is
// for a catalog root. The record is checked as LoadRecord checks it.
func (s *Store) NearestRecord(kind string) (tree string, data []byte, ok bool) {
	if s == nil || !isKind(kind) {
		return "", nil, false
	}
	b, err := os.ReadFile(s.latestFile(kind))
	if err != nil {
		return "", nil, false
	}
	tree = strings.TrimSpace(string(b))
	if data, ok = s.LoadRecord(kind, tree); !ok {
		return "", nil, false
	}
	return tree, data, true
}

// The format of a record file:
//
//	catalogbot-tree-record 1
//	kind	<kind>
//	tree	<tree id>
//	size	<bytes of the body>
//	<body>
//	sha256	<hex of every byte before this line>
//
// The body is followed by a line break of its own, so that the sum's line
// is always the last.

func encodeRecord(kind, tree string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nkind\t%s\ntree\t%s\nsize\t%d\n", recordVersion, kind, tree, len(body))
	b.Write(body)
	b.WriteByte('\n')
	b.WriteString("sha256\t" + encodeSum(b.Bytes()) + "\n")
	return b.Bytes()
}

func decodeRecord(data []byte, kind, tree string) ([]byte, error) {
	all, trailer, ok := cutLastLine(data)
	if !ok || trailer != "sha256\t"+encodeSum(all) {
		return nil, errFormat
	}
	rest := all
	for _, want := range []string{recordVersion, "kind\t" + kind, "tree\t" + tree} {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok || string(line) != want {
			return nil, errFormat
		}
		rest = after
	}
	line, body, ok := bytes.Cut(rest, []byte{'\n'})
	size, err := strconv.Atoi(strings.TrimPrefix(string(line), "size\t"))
	if !ok || !bytes.HasPrefix(line, []byte("size\t")) || err != nil || size < 0 || len(body) != size+1 || body[size] != '\n' {
		return nil, errFormat
	}
	return body[:size], nil
}

// isKind accepts a record kind: a short lower-case name.
func isKind(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
