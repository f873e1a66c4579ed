package owners

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
)

// Config is one set of owners: the whole of a simple OWNERS file, or one
// filter of the full form. Logins are normalised (see NormLogin) and may
// still be alias names; Load expands them.
type Config struct {
	Approvers         []string `json:"approvers,omitempty"`
	Reviewers         []string `json:"reviewers,omitempty"`
	RequiredReviewers []string `json:"requiredReviewers,omitempty"`
	Labels            []string `json:"labels,omitempty"`
	// EmeritusApprovers are former approvers, kept for the record. They
	// are shown in explanations and grant nothing.
	EmeritusApprovers []string `json:"emeritusApprovers,omitempty"`
}

// Options are the options of an OWNERS file; they apply to the whole file.
type Options struct {
	// NoParentOwners stops the walk up the tree at this file, for each
	// role separately, once the walk has collected someone for that role.
	NoParentOwners bool `json:"noParentOwners,omitempty"`
	// AutoApproveUnownedSubfolders lets files at least one directory
	// below this file, with no closer approvers, in without approval.
	AutoApproveUnownedSubfolders bool `json:"autoApproveUnownedSubfolders,omitempty"`
}

// Entry is one set of owners of an OWNERS file and the files it applies to.
type Entry struct {
	// Filter is the regular expression of a full-form filter, matched
	// (unanchored, as Go's regexp.MatchString does) against paths relative
	// to the OWNERS file's directory. It is empty for the simple form.
	Filter string `json:"filter,omitempty"`
	// Line is where the entry starts in the file.
	Line int `json:"line"`
	Config
	re *regexp.Regexp // nil when the entry applies to every file
	// lines are the lines of the logins, by key and login, for findings
	// about a single name.
	lines map[string]int
}

// LineOf returns the line of login in the list key of the entry, or the
// entry's line when it is not known.
func (e *Entry) LineOf(key, login string) int {
	if l, ok := e.lines[key+"\x00"+login]; ok {
		return l
	}
	return e.Line
}

// Matches reports whether the entry applies to rel, a slash-separated path
// relative to the OWNERS file's directory.
func (e *Entry) Matches(rel string) bool {
	return e.re == nil || e.re.MatchString(rel)
}

// File is a parsed OWNERS file.
type File struct {
	Path    string  `json:"path"`
	Options Options `json:"options"`
	Entries []Entry `json:"entries"`
}

// Keys of the OWNERS format.
const (
	keyApprovers         = "approvers"
	keyReviewers         = "reviewers"
	keyRequiredReviewers = "required_reviewers"
	keyLabels            = "labels"
	keyEmeritusApprovers = "emeritus_approvers"
	keyOptions           = "options"
	keyFilters           = "filters"
	keyAliases           = "aliases"

	optNoParentOwners     = "no_parent_owners"
	optAutoApproveUnowned = "auto_approve_unowned_subfolders"
)

var (
	configKeys   = []string{keyApprovers, keyReviewers, keyRequiredReviewers, keyLabels, keyEmeritusApprovers}
	topLevelKeys = append(slices.Clone(configKeys), keyOptions, keyFilters)
	optionKeys   = []string{optNoParentOwners, optAutoApproveUnowned}
)

// parseOwners parses one OWNERS file; name is its slash-separated path, for
// findings. It returns nil, with at least one error finding, when the file is
// unusable. Warnings come with a usable file.
//
// Either form is accepted: simple (approvers, reviewers, required_reviewers,
// labels, emeritus_approvers and options at the top) or full (options and
// filters, a map from regular expression to the same keys). Mixing the two is
// an error; Prow silently ignores the filters of such a file.
func parseOwners(name string, data []byte) (*File, []checks.Finding) {
	p := &parser{file: name}
	f := p.owners(data)
	if p.failed {
		return nil, p.findings
	}
	return f, p.findings
}

func (p *parser) owners(data []byte) *File {
	f := &File{Path: p.file}
	root := p.document(data)
	if root == nil {
		if !p.failed {
			p.warnf(RuleEmpty, 0, "OWNERS file is empty and grants nothing")
		}
		return f
	}
	pairs, ok := p.mapping(root, "an OWNERS file", true)
	if !ok {
		return nil
	}
	var simple Entry
	simpleLine := 0
	var filters *pair
	for i, kv := range pairs {
		key := p.knownKey(kv, topLevelKeys, "OWNERS file")
		switch key {
		case keyOptions:
			f.Options = p.options(kv.value)
		case keyFilters:
			filters = &pairs[i]
		case "":
		default:
			if simpleLine == 0 {
				simpleLine = kv.line
			}
			p.configKey(&simple, key, kv.value)
		}
	}
	switch {
	case filters != nil && simpleLine != 0:
		p.errorf(RuleMixedForms, filters.line,
			"filters cannot be combined with top-level owners keys (line %d); Prow would ignore the filters. Move the top-level entries into a \".*\" filter", simpleLine)
	case filters != nil:
		f.Entries = p.filters(filters.value)
	case simpleLine != 0:
		simple.Line = simpleLine
		f.Entries = []Entry{simple}
	}
	if !p.failed && !grantsAnything(f) {
		p.warnf(RuleEmpty, line(root), "OWNERS file names no approvers, reviewers or labels and grants nothing")
	}
	return f
}

func grantsAnything(f *File) bool {
	if f.Options.NoParentOwners || f.Options.AutoApproveUnownedSubfolders {
		return true
	}
	for i := range f.Entries {
		c := f.Entries[i].Config
		if len(c.Approvers)+len(c.Reviewers)+len(c.RequiredReviewers)+len(c.Labels) > 0 {
			return true
		}
	}
	return false
}

// knownKey returns the canonical form of kv's key when it is one of known,
// matched case-insensitively as Prow does, or "" after warning about it.
func (p *parser) knownKey(kv pair, known []string, where string) string {
	lower := strings.ToLower(kv.key)
	if slices.Contains(known, lower) {
		if lower != kv.key {
			p.warnf(RuleUnknownKey, kv.line, "key %q is read as %q; write it in lower case", kv.key, lower)
		}
		return lower
	}
	msg := fmt.Sprintf("unknown key %q in %s is ignored", kv.key, where)
	if s := suggest(lower, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	p.warnf(RuleUnknownKey, kv.line, "%s", msg)
	return ""
}

// suggest returns the known key closest to key, if it is close enough to be
// a typo of it.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (p *parser) configKey(e *Entry, key string, n *yaml.Node) {
	if key == "" {
		return
	}
	list, lines := p.listLines(n, key, key != keyLabels)
	switch key {
	case keyApprovers:
		e.Approvers = list
	case keyReviewers:
		e.Reviewers = list
	case keyRequiredReviewers:
		e.RequiredReviewers = list
	case keyLabels:
		e.Labels = list
	case keyEmeritusApprovers:
		e.EmeritusApprovers = list
	}
	if e.lines == nil {
		e.lines = map[string]int{}
	}
	for i, l := range list {
		e.lines[key+"\x00"+l] = lines[i]
	}
}

func (p *parser) options(n *yaml.Node) Options {
	var o Options
	pairs, _ := p.mapping(n, "options", true)
	for _, kv := range pairs {
		key := p.knownKey(kv, optionKeys, "options")
		if key == "" {
			continue
		}
		v, ok := yaml11Bool(p.deref(kv.value))
		if !ok {
			p.errorf(RuleStructure, kv.line, "option %s must be true or false", key)
			continue
		}
		switch key {
		case optNoParentOwners:
			o.NoParentOwners = v
		case optAutoApproveUnowned:
			o.AutoApproveUnownedSubfolders = v
		}
	}
	return o
}

func (p *parser) filters(n *yaml.Node) []Entry {
	pairs, _ := p.mapping(n, "filters", false)
	entries := make([]Entry, 0, len(pairs))
	for _, kv := range pairs {
		e := Entry{Filter: kv.key, Line: kv.line}
		if kv.key != ".*" {
			re, err := regexp.Compile(kv.key)
			if err != nil {
				p.errorf(RuleFilterRegex, kv.line, "filter %q is not a valid regular expression: %v", kv.key, err)
				continue
			}
			e.re = re
		}
		fields, _ := p.mapping(kv.value, fmt.Sprintf("filter %q", kv.key), true)
		for _, f := range fields {
			if strings.ToLower(f.key) == keyOptions {
				p.warnf(RuleUnknownKey, f.line, "options inside filter %q are ignored; options apply to the whole file and belong at the top level, beside filters", kv.key)
				continue
			}
			key := p.knownKey(f, configKeys, fmt.Sprintf("filter %q", kv.key))
			p.configKey(&e, key, f.value)
		}
		entries = append(entries, e)
	}
	return entries
}

// Aliases maps alias names to their members, both normalised.
type Aliases map[string][]string

// parseAliases parses an OWNERS_ALIASES file: aliases, a map from alias name
// to a list of logins. A null group is empty. It returns nil, with at least
// one error finding, when the file is unusable: unlike Prow, which keeps
// whichever aliases it read before the error, a file with an error defines
// nothing, so what it grants never depends on where the error is.
func parseAliases(name string, data []byte) (Aliases, []checks.Finding) {
	p := &parser{file: name}
	a := p.aliases(data)
	if p.failed {
		return nil, p.findings
	}
	return a, p.findings
}

func (p *parser) aliases(data []byte) Aliases {
	a := Aliases{}
	root := p.document(data)
	if root == nil {
		return a
	}
	pairs, ok := p.mapping(root, "an OWNERS_ALIASES file", true)
	if !ok {
		return nil
	}
	for _, kv := range pairs {
		if p.knownKey(kv, []string{keyAliases}, "OWNERS_ALIASES") == "" {
			continue
		}
		groups, _ := p.mapping(kv.value, keyAliases, false)
		lines := map[string]int{}
		for _, g := range groups {
			name := NormLogin(g.key)
			if name == "" {
				p.errorf(RuleStructure, g.line, "empty alias name")
				continue
			}
			if first, dup := lines[name]; dup {
				p.errorf(RuleDuplicateKey, g.line, "alias %q is defined twice (first on line %d); names compare case-insensitively", g.key, first)
				continue
			}
			lines[name] = g.line
			a[name] = p.list(g.value, fmt.Sprintf("alias %q", g.key), true)
		}
		// An alias name is never a login (spec/owners.md section 2, rule
		// 14): a member that names an alias, itself included, is left
		// out rather than read as a user who might register that name.
		for _, g := range groups {
			name := NormLogin(g.key)
			members := a[name][:0:0]
			for _, m := range a[name] {
				if _, nested := a[m]; nested {
					p.warnf(RuleNestedAlias, g.line, "alias %q lists %q, which is itself an alias; aliases are expanded one level only and an alias name is never a login, so %q is left out", g.key, m, m)
					continue
				}
				members = append(members, m)
			}
			if _, ok := a[name]; ok {
				a[name] = members
			}
		}
	}
	return a
}
