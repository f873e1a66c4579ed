package policy

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/platform"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/owners"
)

// Rule ids of the findings Parse reports.
const (
	RuleSyntax     = "P1"
	RuleUnknownKey = "P2"
	RuleDuplicate  = "P3"
	RuleType       = "P4"
	RuleYAML11     = "P5"
	RuleValue      = "P6"
)

// Rules describes the rule ids, for reporters that publish a catalogue.
var Rules = []checks.Rule{
	{ID: RuleSyntax, Name: "PolicySyntax", Description: "The policy file is not a single well-formed YAML document."},
	{ID: RuleUnknownKey, Name: "PolicyUnknownKey", Description: "A key the policy schema does not define."},
	{ID: RuleDuplicate, Name: "PolicyDuplicateKey", Description: "A key given twice in one mapping."},
	{ID: RuleType, Name: "PolicyType", Description: "A value of the wrong type."},
	{ID: RuleYAML11, Name: "PolicyYAML11Boolean", Description: "An unquoted yes/no/on/off where a string is expected: YAML 1.1 tools read it as a boolean."},
	{ID: RuleValue, Name: "PolicyValue", Description: "A value of the right type that is not allowed, such as an unknown merge method."},
	{ID: RuleBlindSpot, Name: "PolicyBlindSpot", Description: "A note of policy show: what the policy cannot see, such as paths nobody can approve or roots that make one catalog with packages defined twice."},
}

// parser collects findings for one file.
type parser struct {
	*yamlnode.Reader
	name     string
	findings []checks.Finding
}

// problemRules maps what the shared reader finds to the policy's rule ids.
var problemRules = map[yamlnode.Problem]string{
	yamlnode.Syntax:       RuleSyntax,
	yamlnode.Type:         RuleType,
	yamlnode.UnknownKey:   RuleUnknownKey,
	yamlnode.DuplicateKey: RuleDuplicate,
	yamlnode.YAML11:       RuleYAML11,
	yamlnode.Empty:        RuleValue,
}

func (p *parser) errorf(line int, rule, format string, args ...any) {
	p.findings = append(p.findings, checks.Finding{
		Rule:     rule,
		Severity: checks.SeverityError,
		File:     p.name,
		Line:     line,
		Message:  fmt.Sprintf(format, args...),
	})
}

// Parse reads a policy file; name names it in findings. Keys that are absent
// keep their defaults. Parse returns the policy it could read even when
// there are findings, but a policy with findings is invalid. An empty file
// (or one holding only comments or null) is the default policy.
func Parse(name string, data []byte) (*Policy, []checks.Finding) {
	p := &parser{name: name}
	p.Reader = &yamlnode.Reader{Report: func(line int, pr yamlnode.Problem, msg string) {
		p.errorf(line, problemRules[pr], "%s", msg)
	}}
	pol := Default()

	root := p.Document(data, name)
	rootsLine := 0
	if root != nil && root.Kind == yaml.MappingNode {
		rootsLine = keyLine(root, "catalog", "roots")
	}
	if root == nil {
		return pol, p.findings
	}
	if yamlnode.IsNull(root) {
		return pol, p.findings
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, RuleType, "the top level is %s; want a mapping", yamlnode.Describe(root))
		return pol, p.findings
	}
	p.Mapping(root, "", map[string]func(*yaml.Node){
		"catalog":  func(v *yaml.Node) { p.catalog(v, &pol.Catalog) },
		"catalogs": func(v *yaml.Node) { p.catalogs(v, pol) },
		"owners":   func(v *yaml.Node) { p.owners(v, pol) },
		"images":   func(v *yaml.Node) { p.images(v, pol) },
		"merge":    func(v *yaml.Node) { p.merge(v, &pol.Merge) },
		"publish":  func(v *yaml.Node) { p.publish(v, &pol.Publish) },
		"limits":   func(v *yaml.Node) { p.limits(v, &pol.Limits) },
		"release":  func(v *yaml.Node) { p.release(v, &pol.Release) },
		"propose":  func(v *yaml.Node) { p.propose(v, pol) },
		"olmv1": func(v *yaml.Node) {
			s, ok := p.Str(v, "olmv1")
			if !ok {
				return
			}
			switch s {
			case OLMv1Report, OLMv1Warning, OLMv1Error:
				pol.OLMv1 = s
			default:
				p.errorf(yamlnode.Resolve(v).Line, RuleValue, "olmv1 is %q; want %s, %s or %s", s, OLMv1Report, OLMv1Warning, OLMv1Error)
			}
		},
		"conventions": func(v *yaml.Node) {
			s, ok := p.Str(v, "conventions")
			if !ok {
				return
			}
			if s != ConventionsOperatorPipelines {
				p.errorf(v.Line, RuleValue, "conventions is %q; want %s", s, ConventionsOperatorPipelines)
				return
			}
			pol.Conventions = s
		},
	})
	if o := origins(root, name); len(o) > 0 {
		pol.Origins = o
	}
	if len(pol.CatalogSets) > 0 && rootsLine > 0 {
		p.errorf(rootsLine, RuleValue, "catalog.roots and catalogs are both given; with a catalogs list, each catalog names its roots")
	}
	if len(pol.CatalogSets) == 0 && strings.Contains(pol.Publish.Image, NamePlaceholder) {
		p.errorf(keyLine(root, "publish", "image"), RuleValue, "publish.image %q names %s, but there is no catalogs list to name", pol.Publish.Image, NamePlaceholder)
	}
	slices.SortStableFunc(p.findings, func(a, b checks.Finding) int { return cmp.Compare(a.Line, b.Line) })
	return pol, p.findings
}

func (p *parser) catalog(v *yaml.Node, c *Catalog) {
	p.Mapping(v, "catalog.", map[string]func(*yaml.Node){
		"roots": func(v *yaml.Node) {
			roots, ok := p.Strs(v, "catalog.roots")
			if ok && len(roots) == 0 {
				p.errorf(v.Line, RuleValue, "catalog.roots is empty; want at least one directory")
				return
			}
			seen := map[string]bool{}
			for i, r := range roots {
				if r == "" {
					continue // reported by strs
				}
				line := yamlnode.Resolve(v).Content[i].Line
				clean, good := p.relPath(line, fmt.Sprintf("catalog.roots[%d]", i), r)
				if !good {
					ok = false
					continue
				}
				if seen[clean] {
					p.errorf(line, RuleValue, "catalog.roots[%d] %q is listed twice", i, r)
					ok = false
					continue
				}
				seen[clean] = true
				roots[i] = clean
			}
			if ok {
				c.Roots = roots
			}
		},
		"templates": func(v *yaml.Node) { p.templates(v, c) },
		"layout": func(v *yaml.Node) {
			s, ok := p.Str(v, "catalog.layout")
			if !ok {
				return
			}
			switch s {
			case LayoutPackageDirs, LayoutFree, LayoutDirectories:
				c.Layout = s
			default:
				p.errorf(v.Line, RuleValue, "catalog.layout is %q; want %s, %s or %s", s, LayoutPackageDirs, LayoutDirectories, LayoutFree)
			}
		},
		"referenceList": func(v *yaml.Node) {
			s, ok := p.Str(v, "catalog.referenceList")
			if !ok {
				return
			}
			if clean, ok := p.relPath(v.Line, "catalog.referenceList", s); ok {
				c.ReferenceList = clean
			}
		},
	})
}

func (p *parser) owners(v *yaml.Node, pol *Policy) {
	p.Mapping(v, "owners.", map[string]func(*yaml.Node){
		"selfApproval": func(v *yaml.Node) {
			if b, ok := p.Bool(v, "owners.selfApproval"); ok {
				pol.Owners.NoSelfApproval = !b
			}
		},
		"stickyApprovals": func(v *yaml.Node) {
			if b, ok := p.Bool(v, "owners.stickyApprovals"); ok {
				pol.Owners.StickyApprovals = b
			}
		},
		"bots": func(v *yaml.Node) {
			if s, ok := p.Strs(v, "owners.bots"); ok {
				pol.Owners.Bots = s
			}
		},
		"sources": func(v *yaml.Node) { p.sources(v, &pol.Owners) },
		"requireAccess": func(v *yaml.Node) {
			s, ok := p.Str(v, "owners.requireAccess")
			if !ok {
				return
			}
			if s != owners.AccessWrite {
				p.errorf(v.Line, RuleValue, "owners.requireAccess is %q; want %s", s, owners.AccessWrite)
				return
			}
			pol.Owners.RequireAccess = s
		},
	})
}

// imageKinds are the pin keys, in the order the documentation lists them.
var imageKinds = []images.Kind{images.KindBundle, images.KindRelated, images.KindReference, images.KindBase}

func (p *parser) images(v *yaml.Node, pol *Policy) {
	ip := &pol.Images
	p.Mapping(v, "images.", map[string]func(*yaml.Node){
		"pin": func(v *yaml.Node) {
			fields := map[string]func(*yaml.Node){}
			for _, k := range imageKinds {
				fields[string(k)] = func(v *yaml.Node) {
					if b, ok := p.Bool(v, "images.pin."+string(k)); ok {
						if ip.Pin == nil {
							ip.Pin = map[images.Kind]bool{}
						}
						ip.Pin[k] = b
					}
				}
			}
			p.Mapping(v, "images.pin.", fields)
		},
		"allowRegistries": func(v *yaml.Node) {
			if list, ok := p.registries(v, "images.allowRegistries"); ok {
				ip.AllowRegistries = list
			}
		},
		"bundleRegistries": func(v *yaml.Node) {
			if list, ok := p.registries(v, "images.bundleRegistries"); ok {
				ip.BundleRegistries = list
			}
		},
		"singleManifestBundles": func(v *yaml.Node) {
			if b, ok := p.Bool(v, "images.singleManifestBundles"); ok {
				ip.SingleManifestBundles = b
			}
		},
		"catalogLabel": func(v *yaml.Node) {
			if b, ok := p.Bool(v, "images.catalogLabel"); ok {
				ip.CatalogLabel = b
			}
		},
		"platforms": func(v *yaml.Node) {
			if list, ok := p.platforms(v, "images.platforms"); ok {
				ip.Platforms = list
			}
		},
		"truthfulness": func(v *yaml.Node) {
			// An unquoted off is false to a YAML 1.1 reader and "off"
			// to this one: both mean off, so it needs no quotes.
			if r := yamlnode.Resolve(v); r.Kind == yaml.ScalarNode && (r.Tag == "!!bool" && r.Value == "false" || r.Tag == "!!str" && r.Value == images.TruthOff) {
				ip.Truthfulness = images.TruthOff
				return
			}
			s, ok := p.Str(v, "images.truthfulness")
			if !ok {
				return
			}
			switch s {
			case images.TruthError, images.TruthWarning, images.TruthOff:
				ip.Truthfulness = s
			default:
				p.errorf(yamlnode.Resolve(v).Line, RuleValue, "images.truthfulness is %q; want %s, %s or %s", s, images.TruthError, images.TruthWarning, images.TruthOff)
			}
		},
	})
}

func (p *parser) merge(v *yaml.Node, m *Merge) {
	p.Mapping(v, "merge.", map[string]func(*yaml.Node){
		"enabled": func(v *yaml.Node) {
			if b, ok := p.Bool(v, "merge.enabled"); ok {
				m.Enabled = b
			}
		},
		"method": func(v *yaml.Node) {
			s, ok := p.Str(v, "merge.method")
			if !ok {
				return
			}
			switch s {
			case MethodSquash, MethodMerge, MethodRebase:
				m.Method = s
			default:
				p.errorf(v.Line, RuleValue, "merge.method is %q; want squash, merge or rebase", s)
			}
		},
		"holdLabel": func(v *yaml.Node) {
			if s, ok := p.Str(v, "merge.holdLabel"); ok {
				m.HoldLabel = s
			}
		},
		"requiredChecks": func(v *yaml.Node) {
			if list, ok := p.requiredChecks(v, "merge.requiredChecks"); ok {
				m.RequiredChecks = list
			}
		},
	})
}

// requiredChecks reads merge.requiredChecks: a list whose entries are a
// check run's name (reported by anyone) or a mapping {name, app} naming
// the App that must report it too. A null is the empty list.
func (p *parser) requiredChecks(v *yaml.Node, field string) ([]RequiredCheck, bool) {
	v = yamlnode.Resolve(v)
	if yamlnode.IsNull(v) {
		return []RequiredCheck{}, true
	}
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, RuleType, "%s is %s; want a list of check names or {name, app} mappings", field, p.Describe(v))
		return nil, false
	}
	out := make([]RequiredCheck, 0, len(v.Content))
	ok := true
	seen := map[RequiredCheck]int{}
	for i, item := range v.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		item = yamlnode.Resolve(item)
		var c RequiredCheck
		good := true
		switch item.Kind {
		case yaml.MappingNode:
			c, good = p.requiredCheck(item, at)
		case yaml.ScalarNode:
			c.Name, good = p.Str(item, at)
		default:
			p.errorf(item.Line, RuleType, "%s is %s; want a check name or a {name, app} mapping", at, p.Describe(item))
			good = false
		}
		if !good {
			ok = false
			continue
		}
		if _, dup := seen[c]; dup {
			p.errorf(item.Line, RuleValue, "%s %s is listed twice", at, describeCheck(c))
			ok = false
			continue
		}
		seen[c] = i
		out = append(out, c)
	}
	return out, ok
}

// requiredCheck reads one {name, app} entry of merge.requiredChecks. The
// app is a slug (a string) or an App id (a positive whole number, written
// bare or quoted).
func (p *parser) requiredCheck(v *yaml.Node, at string) (RequiredCheck, bool) {
	var c RequiredCheck
	ok := true
	p.Mapping(v, at+".", map[string]func(*yaml.Node){
		"name": func(v *yaml.Node) {
			var good bool
			c.Name, good = p.Str(v, at+".name")
			ok = ok && good
		},
		"app": func(v *yaml.Node) {
			n := yamlnode.Resolve(v)
			if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
				if !isAppID(n.Value) {
					p.errorf(n.Line, RuleValue, "%s.app is %s; an App id is a positive whole number", at, n.Value)
					ok = false
					return
				}
				c.App = n.Value
				return
			}
			s, good := p.Str(v, at+".app")
			if !good {
				ok = false
				return
			}
			if strings.TrimSpace(s) != s || strings.ContainsAny(s, " /\t") {
				p.errorf(n.Line, RuleValue, "%s.app %q is neither an App's slug nor its id", at, s)
				ok = false
				return
			}
			c.App = s
		},
	})
	if c.Name == "" && ok {
		p.errorf(v.Line, RuleValue, "%s has no name", at)
		ok = false
	}
	return c, ok
}

// describeCheck names a required check in findings.
func describeCheck(c RequiredCheck) string {
	if c.App == "" {
		return strconv.Quote(c.Name)
	}
	return fmt.Sprintf("%q of app %s", c.Name, c.App)
}

func (p *parser) publish(v *yaml.Node, pub *Publish) {
	p.Mapping(v, "publish.", map[string]func(*yaml.Node){
		"image": func(v *yaml.Node) {
			s, ok := p.Str(v, "publish.image")
			if !ok || !p.target(v.Line, "publish.image", s) {
				return
			}
			pub.Image = s
		},
		"base": func(v *yaml.Node) {
			s, ok := p.Str(v, "publish.base")
			if !ok {
				return
			}
			// An image is read as the command line's --base is: with
			// its registry host, never a short name Docker Hub takes.
			if s != BaseOPM && s != BaseScratch {
				if err := reference.CheckQualified(s); err != nil {
					p.errorf(v.Line, RuleValue, "publish.base %q: want opm, scratch or a fully qualified image reference (%v)", s, err)
					return
				}
			}
			pub.Base = s
		},
		"opmImage": func(v *yaml.Node) {
			s, ok := p.Str(v, "publish.opmImage")
			if !ok {
				return
			}
			if err := reference.CheckQualified(s); err != nil {
				p.errorf(v.Line, RuleValue, "publish.opmImage %q is not a fully qualified image reference (%v)", s, err)
				return
			}
			pub.OPMImage = s
		},
		"platforms": func(v *yaml.Node) {
			if list, ok := p.platforms(v, "publish.platforms"); ok {
				pub.Platforms = list
			}
		},
		"sign": func(v *yaml.Node) {
			s, ok := p.Str(v, "publish.sign")
			if !ok {
				return
			}
			switch s {
			case SignNone, SignKey, SignKeyless:
				pub.Sign = s
			default:
				p.errorf(v.Line, RuleValue, "publish.sign is %q; want none, key or keyless", s)
			}
		},
	})
}

// platforms returns a list of os/arch[/variant] platforms.
func (p *parser) platforms(v *yaml.Node, field string) ([]string, bool) {
	list, ok := p.Strs(v, field)
	for i, s := range list {
		if s == "" {
			continue // reported by strs
		}
		var perr *platform.Error
		if _, err := platform.Parse(s); errors.As(err, &perr) {
			p.errorf(yamlnode.Resolve(v).Content[i].Line, RuleValue, "%s[%d] %q: %s", field, i, s, perr.Reason)
			ok = false
		}
	}
	return list, ok
}

// relPath checks a repository path: relative, slash separated, inside the
// repository. It returns the path cleaned.
func (p *parser) relPath(line int, field, s string) (string, bool) {
	clean := path.Clean(s)
	switch {
	case strings.Contains(s, `\`):
		p.errorf(line, RuleValue, "%s %q: write paths with /", field, s)
	case path.IsAbs(s):
		p.errorf(line, RuleValue, "%s %q: want a path relative to the repository root", field, s)
	case clean == ".." || strings.HasPrefix(clean, "../"):
		p.errorf(line, RuleValue, "%s %q is outside the repository", field, s)
	default:
		return clean, true
	}
	return "", false
}

// keyLine returns the line of the value at the path of keys in a mapping,
// 0 when it is absent.
func keyLine(m *yaml.Node, keys ...string) int {
	for _, k := range keys {
		m = yamlnode.Resolve(m)
		if m.Kind != yaml.MappingNode {
			return 0
		}
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				next = m.Content[i+1]
			}
		}
		if next == nil {
			return 0
		}
		m = next
	}
	return m.Line
}

// registries reads a list of registry hosts, each optionally followed by
// a repository prefix.
func (p *parser) registries(v *yaml.Node, field string) ([]string, bool) {
	list, ok := p.Strs(v, field)
	for i, a := range list {
		if a == "" {
			continue // reported by strs
		}
		if !validRegistry(a) {
			p.errorf(yamlnode.Resolve(v).Content[i].Line, RuleValue,
				"%s[%d] %q: want a registry host, optionally followed by a repository prefix, such as quay.io/example", field, i, a)
			ok = false
		}
	}
	return list, ok
}

// validRegistry says whether s is a registry host, optionally followed by
// a repository prefix.
func validRegistry(s string) bool {
	host, prefix, _ := strings.Cut(strings.TrimSuffix(s, "/"), "/")
	_, err := name.NewRegistry(host)
	if err == nil && prefix != "" {
		_, err = name.NewRepository(host + "/" + prefix)
	}
	return err == nil && host != ""
}

// origins records, for every key the policy file gives, where it gives it:
// sections' keys by their dotted path ("merge.enabled"), lists and scalars
// at the top level by their name.
func origins(root *yaml.Node, file string) map[string]string {
	out := map[string]string{}
	if root.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], yamlnode.Resolve(root.Content[i+1])
		if v.Kind != yaml.MappingNode {
			out[k.Value] = fmt.Sprintf("%s:%d", file, k.Line)
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			out[k.Value+"."+v.Content[j].Value] = fmt.Sprintf("%s:%d", file, v.Content[j].Line)
		}
	}
	return out
}
