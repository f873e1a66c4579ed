package owners

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
)

// Operators is what the ci.yaml files of one tree's operators/ directory
// say about approvals, each file read and decoded once. Under the
// operator-pipelines conventions every check reads all of them (a few
// hundred in community-operators-prod): the policy for its catalog
// mapping, Load for the reviewers. A git tree id names the directory's
// content exactly, so what is read from one tree holds for every check of
// a base with that tree, in this process and the next (see Tree).
type Operators struct {
	// Tree is the git tree id of the operators directory the files were
	// read from, under which what was read may be kept and used again.
	// It is "" when what was read is not decided by that tree alone: a
	// file system that is not a git tree, or one where operators or a
	// package's ci.yaml is a symbolic link, whose target the tree id does
	// not cover.
	Tree string `json:"tree"`
	// Files are the packages' ci.yaml files, by package directory name.
	Files []CIYAMLRead `json:"files"`
}

// CIYAMLRead is one package's ci.yaml as Load reads it: what it says
// (nil when reviewers cannot be read for certain), and the findings
// about it.
type CIYAMLRead struct {
	// Path is the file's path, operators/<package>/ci.yaml; Package its
	// directory's name.
	Path, Package string
	// Dir is the git tree id of the package's directory, "" when not
	// known: the same id names the same ci.yaml (its bytes and that it is
	// no link), so what was read under it holds for another operators
	// tree that lists the directory with that id (ReadOperatorsFrom).
	Dir      string
	CI       *CIYAML
	Findings []checks.Finding
}

// OperatorsTree is the git tree id under which what ReadOperators reads
// from fsys may be kept: the operators directory's, when fsys is a git
// tree whose root lists it as a directory (not a symbolic link); ""
// otherwise.
func OperatorsTree(fsys fs.FS) string {
	e, err := entryOf(fsys, ".", OperatorsDir)
	if err != nil || e == nil || !e.IsDir() {
		return ""
	}
	info, err := e.Info()
	if err != nil {
		return ""
	}
	id, _ := change.ObjectID(info)
	return id
}

// entryOf is name's entry in the directory dir, nil when dir lists no
// such entry. The types of a directory's entries come with the listing:
// telling a link from a file this way costs no read of the file's object,
// which fs.Lstat's size would.
func entryOf(fsys fs.FS, dir, name string) (fs.DirEntry, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name })
	if i < 0 {
		return nil, nil
	}
	return entries[i], nil
}

// notLinked says whether dir lists name as anything but a symbolic link,
// or not at all; false when dir cannot be listed.
func notLinked(fsys fs.FS, dir, name string) bool {
	e, err := entryOf(fsys, dir, name)
	return err == nil && (e == nil || e.Type()&fs.ModeSymlink == 0)
}

// ReadOperators reads operators/<package>/ci.yaml for every package
// directory of fsys, as Load does: a tree without an operators directory
// has none. also, when not nil, is given each file decoded, in the same
// pass, so that a reader of its other keys (the policy's catalog mapping)
// decodes it no second time; it must only read the nodes.
func ReadOperators(fsys fs.FS, also func(pkg, file string, s *yamlnode.Stream)) (*Operators, error) {
	return ReadOperatorsFrom(fsys, nil, also, nil)
}

// ReadOperatorsFrom is ReadOperators that takes from prev, what was read
// of another operators tree (an ancestor's, kept by a reader before), the
// file of every package directory that tree listed with the same git tree
// id, rather than reading it: in a repository where each pull request
// adds a bundle directory to one package, the next base differs from the
// last in a directory or two of several hundred. reused, when not nil, is
// told each package taken so, in the order also would have been told it;
// also is told only the files read. prev is used only when both trees are
// git trees that the ids cover (see Operators.Tree).
func ReadOperatorsFrom(fsys fs.FS, prev *Operators, also func(pkg, file string, s *yamlnode.Stream), reused func(pkg string)) (*Operators, error) {
	ops := &Operators{Tree: OperatorsTree(fsys)}
	entries, err := fs.ReadDir(fsys, OperatorsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return ops, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", OperatorsDir, err)
	}
	var known map[string]*CIYAMLRead
	if prev != nil && prev.Tree != "" && ops.Tree != "" {
		known = make(map[string]*CIYAMLRead, len(prev.Files))
		for i := range prev.Files {
			if f := &prev.Files[i]; f.Dir != "" {
				known[f.Package] = f
			}
		}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := ""
		if info, err := e.Info(); err == nil {
			dir, _ = change.ObjectID(info)
		}
		if f, ok := known[e.Name()]; ok && dir == f.Dir {
			ops.Files = append(ops.Files, *f)
			if reused != nil {
				reused(e.Name())
			}
			continue
		}
		name := OperatorsDir + "/" + e.Name() + "/" + CIYAMLFile
		data, err := fs.ReadFile(fsys, name)
		if ops.Tree != "" && !notLinked(fsys, path.Dir(name), CIYAMLFile) {
			// A link's target lies outside what the tree id names (and a
			// link that leads nowhere reads as no file at all).
			ops.Tree = ""
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		p := &parser{file: name, kind: "a ci.yaml file"}
		var s *yamlnode.Stream
		if p.sized(len(data)) || also != nil {
			s = yamlnode.Decode(data)
		}
		c := &CIYAML{Path: name, Package: e.Name()}
		if !p.failed {
			p.ciyaml(c, p.stream(s))
		}
		if p.failed {
			c = nil
		}
		if also != nil {
			also(e.Name(), name, s)
		}
		ops.Files = append(ops.Files, CIYAMLRead{Path: name, Package: e.Name(), Dir: dir, CI: c, Findings: p.findings})
	}
	return ops, nil
}

// ciyamlRecord is a CIYAMLRead as JSON, for keeping an Operators on disk:
// CIYAML's own JSON leaves out the line of each reviewer.
type ciyamlRecord struct {
	Path      string           `json:"path"`
	Package   string           `json:"package"`
	Dir       string           `json:"dir,omitempty"`
	Broken    bool             `json:"broken,omitempty"`
	Line      int              `json:"line,omitempty"`
	Reviewers []string         `json:"reviewers,omitempty"`
	Lines     []int            `json:"lines,omitempty"`
	Findings  []checks.Finding `json:"findings,omitempty"`
}

// MarshalJSON writes everything Load uses of the file.
func (f CIYAMLRead) MarshalJSON() ([]byte, error) {
	rec := ciyamlRecord{Path: f.Path, Package: f.Package, Dir: f.Dir, Broken: f.CI == nil, Findings: f.Findings}
	if c := f.CI; c != nil {
		rec.Line, rec.Reviewers = c.Line, c.Reviewers
		for _, l := range c.Reviewers {
			rec.Lines = append(rec.Lines, c.lines[l])
		}
	}
	return json.Marshal(rec)
}

// UnmarshalJSON reads what MarshalJSON wrote, refusing a record that
// cannot be one it wrote.
func (f *CIYAMLRead) UnmarshalJSON(data []byte) error {
	var rec ciyamlRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return err
	}
	if rec.Package == "" || strings.Contains(rec.Package, "/") || rec.Path != OperatorsDir+"/"+rec.Package+"/"+CIYAMLFile || len(rec.Lines) != len(rec.Reviewers) || rec.Broken && len(rec.Reviewers) > 0 ||
		rec.Dir != "" && !change.IsObjectID(rec.Dir) {
		return fmt.Errorf("ci.yaml record of %q: inconsistent", rec.Path)
	}
	*f = CIYAMLRead{Path: rec.Path, Package: rec.Package, Dir: rec.Dir, Findings: rec.Findings}
	if !rec.Broken {
		c := &CIYAML{Path: rec.Path, Package: rec.Package, Line: rec.Line, Reviewers: rec.Reviewers}
		if len(rec.Reviewers) > 0 {
			c.lines = make(map[string]int, len(rec.Reviewers))
			for i, l := range rec.Reviewers {
				c.lines[l] = rec.Lines[i]
			}
		}
		f.CI = c
	}
	return nil
}
