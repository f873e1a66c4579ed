package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// NamePlaceholder stands for a catalog's name in a publish target, so that
// one line can name the image of every catalog: quay.io/acme/index:{catalog}.
const NamePlaceholder = "{catalog}"

// CatalogSet is one entry of the policy's catalogs list, as written. Either
// Roots name the directories of one catalog, or Each names, with a pattern,
// directories that are each a catalog of their own, named by the directory.
type CatalogSet struct {
	// Name names the catalog of Roots; with Each, the matched directory's
	// name is the catalog's.
	Name string
	// Roots are directories or path.Match patterns, relative to the
	// repository root; every directory they match is a root of the one
	// catalog.
	Roots []string
	// Each is a path.Match pattern; every directory it matches is one
	// catalog (catalogs/v4.* gives v4.12, v4.13, …).
	Each string
	// Image is the publish target, "" for Publish.Image; either may hold
	// NamePlaceholder.
	Image string
	// Line is where the entry starts in the policy file.
	Line int
}

// Target is one catalog of a repository: the roots validated together as
// one catalog and published together as one image.
type Target struct {
	// Name is the catalog's name, "" for the one catalog of a policy
	// with no catalogs list.
	Name string
	// Roots are the catalog's directories in the tree it was resolved
	// against, sorted.
	Roots []string
	// Image is the publish target with the name filled in, "" for none.
	Image string
}

// CatalogError is a problem of the catalogs list that shows only against
// a tree: a directory whose name is no catalog name, a target that is
// not one, two catalogs in one directory or one image. Line is the line
// of the catalogs entry in FileName.
type CatalogError struct {
	Line    int
	Message string
}

func (e *CatalogError) Error() string {
	if e.Line == 0 {
		return FileName + ": " + e.Message
	}
	return fmt.Sprintf("%s:%d: %s", FileName, e.Line, e.Message)
}

// TargetsFinding is the finding for an error of Targets or Resolved,
// at the line of the catalogs entry when it is known.
func TargetsFinding(err error) checks.Finding {
	f := checks.Finding{Rule: RuleValue, Severity: checks.SeverityError, File: FileName, Message: err.Error()}
	var cerr *CatalogError
	if errors.As(err, &cerr) {
		f.Line, f.Message = cerr.Line, cerr.Message
	}
	return f
}

// Targets resolves the policy's catalogs against trees: a pattern matches
// the directories of any of them, so that a catalog a change adds or
// removes is one of the change's catalogs on both sides. A policy without a
// catalogs list has one catalog, its catalog.roots. A catalog whose roots
// match nothing is left out. The errors (*CatalogError) are what would
// break a publish later: a directory that two catalogs claim (what one
// catalog validates would be published in two), a directory whose name is
// no catalog name (v4.20:evil), a target that is not one once the name is
// filled in, and two catalogs published to one image (the last would
// win, and each would report it published).
func (p *Policy) Targets(trees ...fs.FS) ([]Target, error) {
	if len(p.CatalogSets) == 0 {
		return []Target{{Roots: slices.Clone(p.Catalog.Roots), Image: p.Publish.Image}}, nil
	}
	var out []Target
	line := map[string]int{} // a catalog's entry's line, by name
	owner := map[string]string{}
	claim := func(t Target, at int) error {
		for _, r := range t.Roots {
			if other, ok := owner[r]; ok {
				return &CatalogError{at, fmt.Sprintf("directory %s is a root of catalog %q and of catalog %q; a directory belongs to one catalog", r, other, t.Name)}
			}
			owner[r] = t.Name
		}
		return nil
	}
	add := func(t Target, at int) error {
		if err := claim(t, at); err != nil {
			return err
		}
		if first, ok := line[t.Name]; ok {
			return &CatalogError{at, fmt.Sprintf("two catalogs are named %q (the other at line %d); a catalog's name must be unique", t.Name, first)}
		}
		line[t.Name] = at
		out = append(out, t)
		return nil
	}
	for i, set := range p.CatalogSets {
		image := cmp.Or(set.Image, p.Publish.Image)
		if set.Each != "" {
			dirs, err := matchDirs(set.Each, trees)
			if err != nil {
				return nil, err
			}
			for _, d := range dirs {
				name := path.Base(d)
				if !validName(name) {
					return nil, &CatalogError{set.Line, fmt.Sprintf("catalogs[%d].each matches directory %s, and %s; rename the directory or narrow the pattern", i, d, nameRule(name))}
				}
				if err := add(Target{Name: name, Roots: []string{d}, Image: fill(image, name)}, set.Line); err != nil {
					return nil, err
				}
			}
			continue
		}
		var roots []string
		for _, r := range set.Roots {
			dirs, err := matchDirs(r, trees)
			if err != nil {
				return nil, err
			}
			roots = append(roots, dirs...)
		}
		slices.Sort(roots)
		roots = slices.Compact(roots)
		if len(roots) == 0 {
			continue
		}
		if err := add(Target{Name: set.Name, Roots: roots, Image: fill(image, set.Name)}, set.Line); err != nil {
			return nil, err
		}
	}
	// One image per catalog: compared as the publisher reads them, so
	// that quay.io/a/b and quay.io/a/b:latest are one.
	target := map[string]string{}
	for _, t := range out {
		if t.Image == "" {
			continue
		}
		parsed, err := build.ParseTarget(t.Image)
		if err != nil {
			return nil, &CatalogError{line[t.Name], fmt.Sprintf("catalog %q publishes to %q: %v", t.Name, t.Image, err)}
		}
		if other, ok := target[parsed.String()]; ok {
			return nil, &CatalogError{line[t.Name], fmt.Sprintf("catalogs %q and %q both publish to %s, and each would overwrite the other; put %s in the image to give each catalog its own", other, t.Name, t.Image, NamePlaceholder)}
		}
		target[parsed.String()] = t.Name
	}
	return out, nil
}

// Resolved returns a copy of the policy whose Catalog.Roots are every root
// of every catalog the trees hold, which is what the checks that look at
// roots one by one (owners, images, release) walk, and the targets.
func (p *Policy) Resolved(trees ...fs.FS) (*Policy, []Target, error) {
	targets, err := p.Targets(trees...)
	if err != nil {
		return nil, nil, err
	}
	if len(p.CatalogSets) == 0 {
		return p, targets, nil
	}
	q := *p
	q.targets = targets
	q.Catalog.Roots = nil
	for _, t := range targets {
		q.Catalog.Roots = append(q.Catalog.Roots, t.Roots...)
	}
	slices.Sort(q.Catalog.Roots)
	if len(q.Catalog.Roots) == 0 {
		// No catalog exists yet: keep a root that matches nothing
		// rather than none, which means the repository itself.
		q.Catalog.Roots = []string{"catalog"}
	}
	return &q, targets, nil
}

// resolvedTargets are the targets Resolved found, or, for a policy with no
// catalogs list, its one catalog.
func (p *Policy) resolvedTargets() []Target {
	if p.targets != nil || len(p.CatalogSets) > 0 {
		return p.targets
	}
	return []Target{{Roots: p.Catalog.Roots, Image: p.Publish.Image}}
}

// TargetOf returns the target whose roots hold the repository path p.
func TargetOf(targets []Target, p string) (Target, bool) {
	for _, t := range targets {
		for _, r := range t.Roots {
			if within(p, r) {
				return t, true
			}
		}
	}
	return Target{}, false
}

// fill puts a catalog's name into a publish target.
func fill(image, catalog string) string {
	return strings.ReplaceAll(image, NamePlaceholder, catalog)
}

// matchDirs lists the directories that pattern matches in any of trees.
func matchDirs(pattern string, trees []fs.FS) ([]string, error) {
	var out []string
	for _, t := range trees {
		if t == nil {
			continue
		}
		if !hasMeta(pattern) {
			if info, err := fs.Stat(t, pattern); err == nil && info.IsDir() {
				out = append(out, pattern)
			}
			continue
		}
		matches, err := fs.Glob(t, pattern)
		if err != nil {
			return nil, fmt.Errorf("catalog pattern %q: %w", pattern, err)
		}
		for _, m := range matches {
			if info, err := fs.Stat(t, m); err == nil && info.IsDir() && !strings.HasPrefix(path.Base(m), ".") {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[`) }

// catalogs reads the catalogs list.
func (p *parser) catalogs(v *yaml.Node, pol *Policy) {
	v = yamlnode.Resolve(v)
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, RuleType, "catalogs is %s; want a list of {name, roots, image} or {each, image} mappings", p.Describe(v))
		return
	}
	if len(v.Content) == 0 {
		p.errorf(v.Line, RuleValue, "catalogs is empty; want at least one catalog")
		return
	}
	names := map[string]int{}
	for i, item := range v.Content {
		at := fmt.Sprintf("catalogs[%d]", i)
		item = yamlnode.Resolve(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item.Line, RuleType, "%s is %s; want a mapping", at, p.Describe(item))
			continue
		}
		set := CatalogSet{Line: item.Line}
		ok := true
		p.Mapping(item, at+".", map[string]func(*yaml.Node){
			"name": func(v *yaml.Node) {
				s, good := p.Str(v, at+".name")
				if good && !validName(s) {
					p.errorf(v.Line, RuleValue, "%s.name: %s", at, nameRule(s))
					good = false
				}
				set.Name, ok = s, ok && good
			},
			"roots": func(v *yaml.Node) {
				roots, good := p.Strs(v, at+".roots")
				if good && len(roots) == 0 {
					p.errorf(v.Line, RuleValue, "%s.roots is empty; want at least one directory", at)
					good = false
				}
				for j, r := range roots {
					line := yamlnode.Resolve(v).Content[j].Line
					clean, g := p.pattern(line, fmt.Sprintf("%s.roots[%d]", at, j), r)
					roots[j], good = clean, good && g
				}
				set.Roots, ok = roots, ok && good
			},
			"each": func(v *yaml.Node) {
				s, good := p.Str(v, at+".each")
				if good {
					s, good = p.pattern(v.Line, at+".each", s)
				}
				set.Each, ok = s, ok && good
			},
			"image": func(v *yaml.Node) {
				s, good := p.Str(v, at+".image")
				if good {
					good = p.target(v.Line, at+".image", s)
				}
				set.Image, ok = s, ok && good
			},
		})
		switch {
		case !ok:
			continue
		case set.Each != "" && set.Roots != nil:
			p.errorf(item.Line, RuleValue, "%s has both roots and each; roots make one catalog, each makes one catalog per directory", at)
			continue
		case set.Each == "" && set.Roots == nil:
			p.errorf(item.Line, RuleValue, "%s has neither roots nor each", at)
			continue
		case set.Each == "" && set.Name == "":
			p.errorf(item.Line, RuleValue, "%s has roots but no name", at)
			continue
		case set.Each != "" && set.Name != "":
			p.errorf(item.Line, RuleValue, "%s has each and a name; with each, every directory's name is its catalog's", at)
			continue
		}
		if set.Name != "" {
			if first, dup := names[set.Name]; dup {
				p.errorf(item.Line, RuleValue, "%s: the name %q is also catalogs[%d]'s", at, set.Name, first)
				continue
			}
			names[set.Name] = i
		}
		pol.CatalogSets = append(pol.CatalogSets, set)
	}
}

// pattern checks a directory or path.Match pattern relative to the
// repository root.
func (p *parser) pattern(line int, field, s string) (string, bool) {
	clean, ok := p.relPath(line, field, s)
	if !ok {
		return "", false
	}
	if clean == "." && s != "." {
		p.errorf(line, RuleValue, "%s %q: name a directory", field, s)
		return "", false
	}
	if _, err := path.Match(clean, ""); err != nil {
		p.errorf(line, RuleValue, "%s %q is not a valid pattern: %v", field, s, err)
		return "", false
	}
	return clean, true
}

// target checks a publish target, which may hold NamePlaceholder, by the
// grammar the command line's --image is read with (build.ParseTarget).
func (p *parser) target(line int, field, s string) bool {
	if _, err := build.ParseTarget(fill(s, "v1.0")); err != nil {
		p.errorf(line, RuleValue, "%s %q: %v", field, s, err)
		return false
	}
	return true
}

// validName says whether s may name a catalog. A name goes into the
// catalog's publish target ({catalog}), mostly as its tag, so it is a
// valid tag: a name that is not would pass every check and then break
// every publish of the catalog.
func validName(s string) bool { return reference.IsTag(s) }

// nameRule says why s is no catalog name.
func nameRule(s string) string {
	return fmt.Sprintf("%q is no catalog name: want letters, digits, '.', '-' and '_', not starting with '.' or '-', at most 128 (a valid image tag)", s)
}
