package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/yamlnode"
)

// How a proposed bundle joins a channel (Proposal.Graph).
const (
	// GraphReplaces: the new bundle replaces the channel head.
	GraphReplaces = "replaces"
	// GraphSkipRange: the new bundle replaces the channel head and skips
	// every version from the head's up to its own
	// (skipRange: '>=<head> <new>').
	GraphSkipRange = "skipRange"
)

// Proposal is one entry of the policy's propose list: a bundle image
// repository whose released tags are proposed into a package's channels
// (catalogbot propose, docs/proposals.md).
type Proposal struct {
	// Package is the package the bundles join.
	Package string
	// Repository is the bundle image repository, without tag or digest;
	// its tags that parse as semantic versions (a leading v allowed)
	// are the releases.
	Repository string
	// Channels are the package's channels each new bundle is added to.
	Channels []string
	// Graph is GraphReplaces or GraphSkipRange.
	Graph string
	// Soak is how old a release's image must be before it is proposed;
	// 0 proposes it at once.
	Soak time.Duration
	// Prereleases lets tags with a pre-release part (1.2.0-rc.1) in.
	Prereleases bool `json:",omitempty"`
	// Line is where the entry starts in the policy file.
	Line int
}

// propose reads the propose list.
func (p *parser) propose(v *yaml.Node, pol *Policy) {
	v = yamlnode.Resolve(v)
	if yamlnode.IsNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, RuleType, "propose is %s; want a list of {package, repository, channels, graph, soak} mappings", p.Describe(v))
		return
	}
	seen := map[string]int{}
	for i, item := range v.Content {
		at := fmt.Sprintf("propose[%d]", i)
		item = yamlnode.Resolve(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item.Line, RuleType, "%s is %s; want a mapping", at, p.Describe(item))
			continue
		}
		pr := Proposal{Graph: GraphReplaces, Line: item.Line}
		ok := true
		p.Mapping(item, at+".", map[string]func(*yaml.Node){
			"package": func(v *yaml.Node) {
				s, good := p.Str(v, at+".package")
				if good && !validName(s) {
					p.errorf(v.Line, RuleValue, "%s.package %q: want a package name (letters, digits, '.', '-' and '_')", at, s)
					good = false
				}
				pr.Package, ok = s, ok && good
			},
			"repository": func(v *yaml.Node) {
				s, good := p.Str(v, at+".repository")
				if good {
					if _, err := name.NewRepository(s); err != nil {
						p.errorf(v.Line, RuleValue, "%s.repository %q: want an image repository without tag or digest, such as quay.io/acme/foo-bundle", at, s)
						good = false
					}
				}
				pr.Repository, ok = s, ok && good
			},
			"channels": func(v *yaml.Node) {
				list, good := p.Strs(v, at+".channels")
				if good && len(list) == 0 {
					p.errorf(v.Line, RuleValue, "%s.channels is empty; want at least one channel", at)
					good = false
				}
				for j, c := range list {
					if c != "" && !validName(c) {
						p.errorf(yamlnode.Resolve(v).Content[j].Line, RuleValue, "%s.channels[%d] %q: want a channel name (letters, digits, '.', '-' and '_')", at, j, c)
						good = false
					}
				}
				pr.Channels, ok = list, ok && good
			},
			"graph": func(v *yaml.Node) {
				s, good := p.Str(v, at+".graph")
				if good && s != GraphReplaces && s != GraphSkipRange {
					p.errorf(v.Line, RuleValue, "%s.graph is %q; want %s or %s", at, s, GraphReplaces, GraphSkipRange)
					good = false
				}
				if good {
					pr.Graph = s
				}
				ok = ok && good
			},
			"soak": func(v *yaml.Node) {
				d, good := p.soak(v, at+".soak")
				pr.Soak, ok = d, ok && good
			},
			"prereleases": func(v *yaml.Node) {
				b, good := p.Bool(v, at+".prereleases")
				pr.Prereleases, ok = b, ok && good
			},
		})
		if !ok {
			continue
		}
		var missing []string
		for _, f := range []struct{ key, val string }{{"package", pr.Package}, {"repository", pr.Repository}} {
			if f.val == "" {
				missing = append(missing, f.key)
			}
		}
		if pr.Channels == nil {
			missing = append(missing, "channels")
		}
		if len(missing) > 0 {
			p.errorf(item.Line, RuleValue, "%s has no %s", at, strings.Join(missing, " and no "))
			continue
		}
		// One repository per package: two would race to move the same
		// channel heads.
		if first, dup := seen[pr.Package]; dup {
			p.errorf(item.Line, RuleValue, "%s: package %q is also propose[%d]'s; list one repository per package", at, pr.Package, first)
			continue
		}
		seen[pr.Package] = i
		pol.Propose = append(pol.Propose, pr)
	}
}

// soak reads a duration that may be zero ("0s").
func (p *parser) soak(v *yaml.Node, field string) (time.Duration, bool) {
	r := yamlnode.Resolve(v)
	if r.Kind == yaml.ScalarNode && r.Tag == "!!int" && r.Value == "0" {
		return 0, true
	}
	if r.Kind == yaml.ScalarNode && (r.Tag == "!!int" || r.Tag == "!!float") {
		p.errorf(r.Line, RuleType, "%s is the number %s; want a duration with its unit, such as 0s, 30m or 24h", field, r.Value)
		return 0, false
	}
	s, ok := p.Str(v, field)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.errorf(r.Line, RuleValue, "%s is %q; want a duration such as 0s, 30m or 24h", field, s)
		return 0, false
	}
	return d, true
}

// proposeSettings writes each propose entry as policy show prints it.
func proposeSettings(list []Proposal) []string {
	out := make([]string, 0, len(list))
	for _, pr := range list {
		s := fmt.Sprintf("{package: %s, repository: %s, channels: [%s], graph: %s, soak: %s", pr.Package, pr.Repository,
			strings.Join(pr.Channels, ", "), pr.Graph, pr.Soak)
		if pr.Prereleases {
			s += ", prereleases: true"
		}
		out = append(out, s+"}")
	}
	return out
}
