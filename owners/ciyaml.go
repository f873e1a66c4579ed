package owners

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
)

// The operator-pipelines convention (community-operators and its
// descendants): every package has a directory operators/<package>/ holding a
// ci.yaml whose reviewers list the GitHub logins that may approve changes to
// the package.
const (
	CIYAMLFile   = "ci.yaml"
	OperatorsDir = "operators"
	keyCIReviews = "reviewers"
)

// CIYAML is what a package's ci.yaml says about approvals. The file belongs
// to another tool's schema (updateGraph, fbc, addReviewers, ...): only
// reviewers is read, and every other key is left alone.
type CIYAML struct {
	// Path is the file's slash-separated path, Package the directory it
	// sits in, which names the package it governs.
	Path    string `json:"path"`
	Package string `json:"package"`
	// Reviewers are the logins that approve the package, normalised (see
	// NormLogin), in file order without duplicates.
	Reviewers []string `json:"reviewers,omitempty"`
	// Line is the line of the reviewers key; 0 when the file has none.
	Line  int `json:"line,omitempty"`
	lines map[string]int
}

// LineOf returns the line of login in the reviewers list, or the line of
// the key when it is not known.
func (c *CIYAML) LineOf(login string) int {
	if l, ok := c.lines[login]; ok {
		return l
	}
	return c.Line
}

// parseCIYAML parses one operators/<package>/ci.yaml; name is its
// slash-separated path, for findings. It returns nil, with at least one
// error finding, when reviewers cannot be read for certain: the file is not
// one YAML mapping, or reviewers is not a list of logins. Such a file
// governs its package's paths and nobody can approve them until it is
// fixed, as with an OWNERS file that does not parse.
//
// The reader of record (operator-pipelines) reads YAML 1.1 and compares
// reviewers case-insensitively; so does this parser, which also drops a
// leading "@" as OWNERS files do.
func parseCIYAML(name string, data []byte) (*CIYAML, []checks.Finding) {
	p := &parser{file: name, kind: "a ci.yaml file"}
	c := &CIYAML{Path: name, Package: path.Base(path.Dir(name))}
	if root := p.document(data); !p.failed {
		p.ciyaml(c, root)
	}
	if p.failed {
		return nil, p.findings
	}
	return c, p.findings
}

// ciyaml reads the document root (nil when the file holds none) into c.
func (p *parser) ciyaml(c *CIYAML, root *yaml.Node) {
	if root == nil {
		return
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(RuleStructure, root.Line, "a ci.yaml file must be a mapping, got %s", kindName(root))
		return
	}
	var value *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := p.deref(root.Content[i])
		if k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			continue // another tool's business
		}
		switch {
		case k.Value == "<<" && k.Style == 0:
			// A merge key can bring reviewers in from elsewhere in the
			// file; read it one way and the pipeline may read it another.
			p.errorf(RuleStructure, k.Line, "a ci.yaml file with a YAML merge key (<<) at the top cannot be read for certain; write reviewers out")
		case k.Value == keyCIReviews:
			if c.Line != 0 {
				p.errorf(RuleDuplicateKey, k.Line, "reviewers is given twice (first on line %d); which one counts depends on the reader", c.Line)
				continue
			}
			c.Line, value = k.Line, root.Content[i+1]
		case strings.EqualFold(k.Value, keyCIReviews) || editDistance(strings.ToLower(k.Value), keyCIReviews) <= 2:
			p.warnf(RuleUnknownKey, k.Line, "key %q is not %q, so it names no reviewers; did you mean %q?", k.Value, keyCIReviews, keyCIReviews)
		}
	}
	if c.Line == 0 || p.failed {
		return
	}
	list, lines := p.listLines(value, keyCIReviews, true)
	if p.failed {
		return
	}
	if len(list) == 0 {
		p.warnf(RuleEmpty, c.Line, "reviewers is empty, so this ci.yaml grants nothing")
		return
	}
	c.Reviewers = list
	c.lines = make(map[string]int, len(list))
	for i, l := range list {
		c.lines[l] = lines[i]
	}
}

// loadCIYAML reads operators/<package>/ci.yaml for every package directory
// of the tree, or takes them from read when it was read from this very
// tree: its Tree is the tree id of the tree's operators directory.
func (r *Repo) loadCIYAML(fsys fs.FS, read *Operators) error {
	if read == nil || read.Tree == "" || read.Tree != OperatorsTree(fsys) {
		var err error
		if read, err = ReadOperators(fsys, nil); err != nil {
			return err
		}
	}
	for _, f := range read.Files {
		r.findings = append(r.findings, f.Findings...)
		od := &ownersDir{dir: path.Dir(f.Path), file: f.Path, source: SourceCIYAML}
		switch c := f.CI; {
		case c == nil:
			od.broken = true
		default:
			od.ci = c
			if logins := r.ciLogins(c); len(logins) > 0 {
				od.entries = []entry{{Entry: Entry{Line: c.Line}, approvers: logins}}
			}
		}
		r.ci[f.Package] = od
	}
	return nil
}

// ciLogins are the reviewers of c that can approve, with a warning for each
// that never will. An alias name is never a login (spec/owners.md section
// 2, rule 14), and ci.yaml reviewers are not expanded: the pipeline that
// owns the file reads them as logins.
func (r *Repo) ciLogins(c *CIYAML) []string {
	out := make([]string, 0, len(c.Reviewers))
	for _, n := range c.Reviewers {
		line := c.LineOf(n)
		if _, ok := r.aliases[n]; ok {
			r.findings = append(r.findings, finding(RuleLogin, checks.SeverityWarning, c.Path, line,
				fmt.Sprintf("reviewers: %q is an alias in %s; ci.yaml reviewers are logins and are not expanded, so it approves nothing. List the people", n, r.aliasesFile)))
			continue
		}
		var msg string
		switch {
		case strings.HasSuffix(n, "[bot]"):
			msg = "is a bot; bots never approve"
		case strings.Contains(n, "/"):
			msg = "names a GitHub team; teams are not supported (their membership changes are not auditable), so it matches nobody. List the people"
		case !validLogin(n):
			msg = "is not a valid GitHub login, so it matches nobody"
		}
		if msg != "" {
			r.findings = append(r.findings, finding(RuleLogin, checks.SeverityWarning, c.Path, line, fmt.Sprintf("reviewers: %q %s", n, msg)))
		}
		out = append(out, n)
	}
	return sortedUnique(out)
}

// ciLayerAt returns the ci.yaml that governs directory dir as the home of
// a package: operators/<package>, or <root>/<package> below a catalog root.
// Ownership follows the package (spec/owners.md section 4), so the
// package's reviewers own its catalog content in every catalog root, the
// way operators/<package>/ci.yaml owns operators/<package>/.
func (r *Repo) ciLayerAt(dir string) *ownersDir {
	if r.ci == nil || dir == "." {
		return nil
	}
	parent := path.Dir(dir)
	if parent != OperatorsDir && !slices.Contains(r.catalogRoots, parent) {
		return nil
	}
	return r.ci[path.Base(dir)]
}

// CIYAMLGrant is what a package's ci.yaml contributed to a resolution.
type CIYAMLGrant struct {
	File      string   `json:"file"`
	Line      int      `json:"line,omitempty"`
	Reviewers []string `json:"reviewers"`
}

// String says the grant as people read it: "operators/foo/ci.yaml
// reviewers: alice, bob".
func (g *CIYAMLGrant) String() string {
	return g.File + " reviewers: " + strings.Join(g.Reviewers, ", ")
}

// NamesApprovers reports whether a file at p can name approvers under some
// owners.sources: an OWNERS or OWNERS_ALIASES file (by their default
// names) or a package's operators/<package>/ci.yaml. A change to one on the
// base branch can change the verdict of every open pull request.
func NamesApprovers(p string) bool {
	switch path.Base(p) {
	case DefaultOwnersFile, DefaultAliasesFile:
		return true
	case CIYAMLFile:
		return path.Dir(path.Dir(p)) == OperatorsDir
	}
	return false
}
