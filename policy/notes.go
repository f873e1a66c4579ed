package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/owners"
)

// RuleBlindSpot is a note about what the policy cannot see: paths that
// nobody can approve, or roots that make one catalog of what looks like
// several.
const RuleBlindSpot = "P7"

// maxNamed bounds the packages a note names; the rest are counted.
const maxNamed = 5

// BlindSpots are notes about what the policy, applied to the tree fsys (a
// base commit's), cannot see or cannot do: a config.yaml whose conventions
// name no maintainers, so that no path has a root approver; packages whose
// ci.yaml names no reviewers, so that only root approvers (or nobody) can
// approve them; and a catalog.roots list whose roots hold the same
// packages, which the policy makes one catalog with every such package
// defined twice, where a catalog per root was likely meant. They are
// warnings: the policy is valid, and `catalogbot policy show` prints them
// beside its own notes. Reading the tree is best effort: what cannot be
// read gives no note.
func (p *Policy) BlindSpots(fsys fs.FS) []checks.Finding {
	var out []checks.Finding
	note := func(file string, line int, format string, args ...any) {
		out = append(out, checks.Finding{Rule: RuleBlindSpot, Severity: checks.SeverityWarning, File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	noMaintainers := p.Conventions == ConventionsOperatorPipelines && (p.Owners.Maintainers == nil || len(p.Owners.Maintainers.Logins) == 0)
	if noMaintainers {
		note(pipelinesConfig, 0, "%s names no maintainers: no path has a root approver, so a new catalog, a change to the policy and a path no package owns can be approved by nobody; list the maintainers under maintainers", pipelinesConfig)
	}
	if slices.Contains(p.Owners.Sources, owners.SourceCIYAML) {
		if pkgs := unreviewed(fsys); len(pkgs) > 0 {
			who := "only the root approvers"
			if noMaintainers || p.Conventions != ConventionsOperatorPipelines && !hasRootOwners(fsys, p) {
				who = "nobody"
			}
			note(path.Join(owners.OperatorsDir, pkgs[0], owners.CIYAMLFile), 0, "ci.yaml names no reviewers for %s %s: %s can approve a change to %s; list each package's reviewers in its ci.yaml",
				checks.Count(len(pkgs), "package", "packages"), listed(pkgs), who, pronoun(len(pkgs)))
		}
	}
	if len(p.CatalogSets) == 0 && len(p.Catalog.Roots) > 1 {
		if shared := sharedPackages(fsys, p.Catalog.Roots); len(shared) > 0 {
			origin := p.Origins["catalog.roots"]
			note(cmp.Or(fileOf(origin), FileName), lineOf(origin), "catalog.roots names one catalog made of %s, and %s %s in more than one of them: "+
				"each is then a duplicate package of that catalog, and every pull request touching it fails; if each root is a catalog of its own "+
				"(one per OpenShift version, say), write catalogs: [{each: %s}]",
				strings.Join(p.Catalog.Roots, ", "), checks.Count(len(shared), "package", "packages"), listed(shared)+" "+isAre(len(shared)), eachPattern(p.Catalog.Roots))
		}
	}
	return out
}

// unreviewed lists the packages under operators/ whose ci.yaml reads but
// names no reviewers, sorted.
func unreviewed(fsys fs.FS) []string {
	entries, err := fs.ReadDir(fsys, owners.OperatorsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := path.Join(owners.OperatorsDir, e.Name(), owners.CIYAMLFile)
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			continue
		}
		// A file that does not parse is an error of the owners check,
		// which says so; only one that says nothing is noted here.
		if c, _ := owners.ReadCIYAML(name, data); c != nil && len(c.Reviewers) == 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// hasRootOwners says whether a root approver exists besides maintainers:
// the root OWNERS file, when OWNERS files are a source.
func hasRootOwners(fsys fs.FS, p *Policy) bool {
	if !slices.Contains(p.Owners.Sources, owners.SourceOwners) {
		return false
	}
	_, err := fs.Stat(fsys, "OWNERS")
	return !errors.Is(err, fs.ErrNotExist)
}

// sharedPackages lists the package directories (a package's home, under
// both layouts that keep one) found under more than one of roots, sorted.
func sharedPackages(fsys fs.FS, roots []string) []string {
	seen := map[string]int{}
	for _, r := range roots {
		entries, err := fs.ReadDir(fsys, r)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				seen[e.Name()]++
			}
		}
	}
	var out []string
	for name, n := range seen {
		if n > 1 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// eachPattern is the catalogs pattern that matches roots: their common
// parent and the common start of their names, then *.
func eachPattern(roots []string) string {
	dir := path.Dir(roots[0])
	prefix := path.Base(roots[0])
	for _, r := range roots[1:] {
		if path.Dir(r) != dir {
			return "<parent>/*"
		}
		b := path.Base(r)
		n := 0
		for n < len(prefix) && n < len(b) && prefix[n] == b[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return path.Join(dir, prefix+"*")
}

func listed(names []string) string {
	if len(names) <= maxNamed {
		return "(" + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf("(%s and %d more)", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
