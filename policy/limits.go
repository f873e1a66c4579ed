package policy

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/owners"
)

func (p *parser) limits(v *yaml.Node, l *Limits) {
	p.Mapping(v, "limits.", map[string]func(*yaml.Node){
		"images": func(v *yaml.Node) {
			if n, ok := p.size(v, "limits.images", false); ok {
				l.Images = int(n)
			}
		},
		"catalogBytes": func(v *yaml.Node) {
			if n, ok := p.size(v, "limits.catalogBytes", true); ok {
				l.CatalogBytes = n
			}
		},
		"fileBytes": func(v *yaml.Node) {
			if n, ok := p.size(v, "limits.fileBytes", true); ok {
				l.FileBytes = n
			}
		},
		"referenceTimeout": func(v *yaml.Node) {
			if d, ok := p.duration(v, "limits.referenceTimeout"); ok {
				l.ReferenceTimeout = d
			}
		},
		"checkTimeout": func(v *yaml.Node) {
			if d, ok := p.duration(v, "limits.checkTimeout"); ok {
				l.CheckTimeout = d
			}
		},
	})
}

// byteUnits are the suffixes a byte size may carry: SI and binary, as
// Kubernetes quantities write them.
var byteUnits = []struct {
	suffix string
	n      int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9},
}

// size reads a positive count. With bytes, a string with a unit
// ("512Mi", "100M") is a size too.
func (p *parser) size(v *yaml.Node, field string, bytes bool) (int64, bool) {
	v = yamlnode.Resolve(v)
	want := "a positive whole number"
	if bytes {
		want = `a positive number of bytes, such as 104857600, "100Mi" or "100M"`
	}
	if v.Kind != yaml.ScalarNode || yamlnode.IsNull(v) || (v.Tag != "!!int" && (!bytes || v.Tag != "!!str")) {
		p.errorf(v.Line, RuleType, "%s is %s; want %s", field, p.Describe(v), want)
		return 0, false
	}
	s, mult := v.Value, int64(1)
	if v.Tag == "!!str" {
		for _, u := range byteUnits {
			if num, ok := strings.CutSuffix(s, u.suffix); ok {
				s, mult = num, u.n
				break
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		p.errorf(v.Line, RuleValue, "%s is %q; want %s", field, v.Value, want)
		return 0, false
	}
	return n * mult, true
}

// duration reads a positive Go duration such as "30s" or "5m".
func (p *parser) duration(v *yaml.Node, field string) (time.Duration, bool) {
	if r := yamlnode.Resolve(v); r.Kind == yaml.ScalarNode && (r.Tag == "!!int" || r.Tag == "!!float") {
		p.errorf(r.Line, RuleType, "%s is the number %s; want a duration with its unit, such as 30s or 5m", field, r.Value)
		return 0, false
	}
	s, ok := p.Str(v, field)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.errorf(yamlnode.Resolve(v).Line, RuleValue, "%s is %q; want a positive duration such as 30s or 5m", field, s)
		return 0, false
	}
	return d, true
}

func (p *parser) release(v *yaml.Node, r *Release) {
	p.Mapping(v, "release.", map[string]func(*yaml.Node){
		"prunable": func(v *yaml.Node) {
			list, ok := p.Strs(v, "release.prunable")
			for i, s := range list {
				if s == "" {
					continue // reported by Strs
				}
				if _, err := path.Match(s, ""); err != nil {
					p.errorf(yamlnode.Resolve(v).Content[i].Line, RuleValue, "release.prunable[%d] %q is not a valid pattern", i, s)
					ok = false
				}
			}
			if ok {
				r.Prunable = list
			}
		},
		"continuity": func(v *yaml.Node) {
			s, ok := p.Str(v, "release.continuity")
			if !ok {
				return
			}
			switch s {
			case ContinuityWarning, ContinuityError, ContinuityIgnore:
				r.Continuity = s
			default:
				p.errorf(yamlnode.Resolve(v).Line, RuleValue, "release.continuity is %q; want %s, %s or %s", s, ContinuityWarning, ContinuityError, ContinuityIgnore)
			}
		},
	})
}

// templates reads catalog.templates: a list of {template, output} pairs.
func (p *parser) templates(v *yaml.Node, c *Catalog) {
	v = yamlnode.Resolve(v)
	if yamlnode.IsNull(v) {
		c.Templates = []Template{}
		return
	}
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, RuleType, "catalog.templates is %s; want a list of {template, output} mappings", p.Describe(v))
		return
	}
	var out []Template
	ok := true
	seen := map[Template]bool{}
	for i, item := range v.Content {
		at := fmt.Sprintf("catalog.templates[%d]", i)
		var t Template
		given := 0
		p.Mapping(item, at+".", map[string]func(*yaml.Node){
			"template": func(v *yaml.Node) {
				given++
				if s, good := p.Str(v, at+".template"); good {
					t.Template, _ = p.relPath(yamlnode.Resolve(v).Line, at+".template", s)
				}
			},
			"output": func(v *yaml.Node) {
				given++
				if s, good := p.Str(v, at+".output"); good {
					t.Output, _ = p.relPath(yamlnode.Resolve(v).Line, at+".output", s)
				}
			},
		})
		item = yamlnode.Resolve(item)
		if item.Kind != yaml.MappingNode {
			ok = false
			continue
		}
		if t.Template == "" || t.Output == "" {
			if given < 2 { // a value given but refused is reported already
				p.errorf(item.Line, RuleValue, "%s needs both template and output", at)
			}
			ok = false
			continue
		}
		// One template may feed several catalogs; the same pair twice
		// is a mistake.
		if seen[t] {
			p.errorf(item.Line, RuleValue, "%s: template %q to %q is listed twice", at, t.Template, t.Output)
			ok = false
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	if ok {
		c.Templates = out
	}
}

// sources reads owners.sources.
func (p *parser) sources(v *yaml.Node, o *owners.Policy) {
	list, ok := p.Strs(v, "owners.sources")
	if ok && len(list) == 0 {
		p.errorf(yamlnode.Resolve(v).Line, RuleValue, "owners.sources is empty; want %s, %s or both", owners.SourceOwners, owners.SourceCIYAML)
		return
	}
	seen := map[string]bool{}
	for i, s := range list {
		line := yamlnode.Resolve(v).Content[i].Line
		switch {
		case s == "":
			// reported by Strs
		case s != owners.SourceOwners && s != owners.SourceCIYAML:
			p.errorf(line, RuleValue, "owners.sources[%d] is %q; want %s or %s", i, s, owners.SourceOwners, owners.SourceCIYAML)
			ok = false
		case seen[s]:
			p.errorf(line, RuleValue, "owners.sources[%d] %q is listed twice", i, s)
			ok = false
		}
		seen[s] = true
	}
	if ok {
		o.Sources = list
	}
}
