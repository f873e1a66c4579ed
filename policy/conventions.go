package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/owners"
)

// ConventionsOperatorPipelines reads a repository laid out as
// redhat-openshift-ecosystem/operator-pipelines keeps its catalog
// repositories (community-operators-prod and its kin): the root
// config.yaml, every operators/<name>/ci.yaml, and a catalog per
// catalogs/v* directory.
const ConventionsOperatorPipelines = "operator-pipelines"

// Files and patterns of the operator-pipelines layout.
const (
	pipelinesConfig   = "config.yaml"
	pipelinesCatalogs = "catalogs/v*"
	pipelinesTemplate = "catalog-templates"
)

// Origin values besides "file:line".
const (
	OriginDefault     = "default"
	OriginConventions = "conventions: " + ConventionsOperatorPipelines
)

// origin records where the value of key came from, unless the policy file
// gave it already.
func (p *Policy) setOrigin(key, from string) {
	if p.Origins == nil {
		p.Origins = map[string]string{}
	}
	p.Origins[key] = from
}

// given says whether the policy file set key, or a key below it.
func (p *Policy) given(key string) bool {
	for k, v := range p.Origins {
		if (k == key || strings.HasPrefix(k, key+".")) && v != OriginConventions && !strings.HasPrefix(v, pipelinesConfig+":") {
			return true
		}
	}
	return false
}

// applyOperatorPipelines fills what the policy file leaves unsaid from the
// operator-pipelines files of the base tree. Problems in config.yaml are
// findings: its maintainers and registries decide approvals and what may
// be published, so a config that cannot be read leaves no verdict. A
// package's ci.yaml whose fbc section cannot be read is a note: its
// templates are not mapped, and every other package is unaffected.
func (p *Policy) applyOperatorPipelines(fsys fs.FS, o LoadOptions) []checks.Finding {
	var findings []checks.Finding
	cfg, found := readPipelinesConfig(fsys, &findings)
	if !found {
		findings = append(findings, checks.Finding{Rule: RuleValue, Severity: checks.SeverityError, File: fileOf(p.Origins["conventions"]), Line: lineOf(p.Origins["conventions"]),
			Message: fmt.Sprintf("conventions %s reads %s at the repository root, and there is none", ConventionsOperatorPipelines, pipelinesConfig)})
		return findings
	}
	if len(findings) > 0 {
		return findings
	}
	if !p.given("catalogs") && !p.given("catalog.roots") {
		p.CatalogSets = []CatalogSet{{Each: pipelinesCatalogs}}
		p.setOrigin("catalogs", OriginConventions)
	}
	if !p.given("publish.image") && cfg.repository != "" {
		p.Publish.Image = cfg.repository + ":" + NamePlaceholder
		p.setOrigin("publish.image", cfg.at(cfg.repositoryLine))
	}
	if !p.given("images.bundleRegistries") && len(cfg.registries) > 0 {
		p.Images.BundleRegistries = cfg.registries
		p.setOrigin("images.bundleRegistries", cfg.at(cfg.registriesLine))
	}
	if !p.given("owners.sources") {
		p.Owners.Sources = []string{owners.SourceCIYAML}
		p.setOrigin("owners.sources", OriginConventions)
	}
	if len(cfg.maintainers) > 0 {
		p.Owners.Maintainers = &owners.Maintainers{File: pipelinesConfig, Line: cfg.maintainersLine, Logins: cfg.maintainers}
		p.setOrigin("owners.maintainers", cfg.at(cfg.maintainersLine))
	}
	if !p.given("catalog.layout") {
		p.Catalog.Layout = LayoutDirectories
		p.setOrigin("catalog.layout", OriginConventions)
	}
	if !p.given("catalog.templates") {
		rec, err := pipelinesTemplates(fsys, o.Records)
		if err != nil {
			findings = append(findings, checks.Finding{Rule: RuleValue, Severity: checks.SeverityError, File: fileOf(p.Origins["conventions"]), Line: lineOf(p.Origins["conventions"]),
				Message: fmt.Sprintf("read the packages' ci.yaml files: %v", err)})
			return findings
		}
		// The record is shared by every policy read from the same tree:
		// each gets slices of its own.
		p.Catalog.Templates = slices.Clone(rec.Templates)
		p.Notes = append(p.Notes, rec.Notes...)
		p.Operators = rec.Operators
		p.setOrigin("catalog.templates", "operators/*/ci.yaml fbc.catalog_mapping")
	}
	return findings
}

// pipelinesConfig is what catalogbot reads of config.yaml.
type pipelinesConfigFile struct {
	maintainers                                     []string
	registries                                      []string
	repository                                      string
	maintainersLine, registriesLine, repositoryLine int
}

func (c *pipelinesConfigFile) at(line int) string { return fmt.Sprintf("%s:%d", pipelinesConfig, line) }

// readPipelinesConfig reads the keys of config.yaml that catalogbot uses;
// the file belongs to operator-pipelines' schema, so other keys are left
// alone.
func readPipelinesConfig(fsys fs.FS, findings *[]checks.Finding) (*pipelinesConfigFile, bool) {
	data, err := fs.ReadFile(fsys, pipelinesConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	report := func(line int, rule, format string, args ...any) {
		*findings = append(*findings, checks.Finding{Rule: rule, Severity: checks.SeverityError, File: pipelinesConfig, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if err != nil {
		report(0, RuleSyntax, "cannot read %s: %v", pipelinesConfig, err)
		return nil, true
	}
	r := &yamlnode.Reader{Report: func(line int, pr yamlnode.Problem, msg string) { report(line, problemRules[pr], "%s", msg) }}
	c := &pipelinesConfigFile{}
	root := r.Document(data, pipelinesConfig)
	if root == nil || yamlnode.IsNull(root) {
		return c, true
	}
	if root.Kind != yaml.MappingNode {
		report(root.Line, RuleType, "the top level of %s is %s; want a mapping", pipelinesConfig, yamlnode.Describe(root))
		return c, true
	}
	r.Fields(root, "", func(key string, k, v *yaml.Node) {
		switch key {
		case "maintainers":
			c.maintainers, _ = r.Strs(v, "maintainers")
			c.maintainersLine = k.Line
		case "allowed_bundle_registries":
			list, ok := r.Strs(v, "allowed_bundle_registries")
			for i, s := range list {
				if s != "" && !validRegistry(s) {
					report(yamlnode.Resolve(v).Content[i].Line, RuleValue, "allowed_bundle_registries[%d] %q: want a registry host, optionally followed by a repository prefix", i, s)
					ok = false
				}
			}
			if ok {
				c.registries, c.registriesLine = list, k.Line
			}
		case "index_image":
			v = yamlnode.Resolve(v)
			if v.Kind != yaml.MappingNode {
				report(v.Line, RuleType, "index_image is %s; want a mapping", yamlnode.Describe(v))
				return
			}
			r.Fields(v, "index_image.", func(key string, _, v *yaml.Node) {
				if key != "repository" {
					return
				}
				s, ok := r.Str(v, "index_image.repository")
				if ok && !validRegistry(s) {
					report(v.Line, RuleValue, "index_image.repository %q is not an image repository", s)
					ok = false
				}
				if ok {
					c.repository, c.repositoryLine = s, v.Line
				}
			})
		}
	})
	return c, true
}

// pipelinesTemplates reads fbc.catalog_mapping of every
// operators/<name>/ci.yaml: each template in the package's
// catalog-templates directory renders to catalogs/<catalog>/<name>/ for
// every catalog it names. The same pass reads the files for owners.Load
// (owners.ReadOperators), each file decoded once, and what it derives is
// kept by the operators directory's tree id (see operatorsRecord).
func pipelinesTemplates(fsys fs.FS, records Records) (*operatorsRecord, error) {
	tree := owners.OperatorsTree(fsys)
	if rec, ok := recalled(tree, records); ok {
		return rec, nil
	}
	rec := &operatorsRecord{Format: operatorsFormat}
	// The packages whose directories did not change since the record
	// derived last (an ancestor's) are taken from it, mappings and all.
	var prev *operatorsRecord
	var prevOps *owners.Operators
	if tree != "" {
		if prev = nearest(records); prev != nil {
			prevOps = prev.Operators
		}
	}
	ops, err := owners.ReadOperatorsFrom(fsys, prevOps, func(pkg, file string, s *yamlnode.Stream) {
		t, n := catalogMapping(file, pkg, s)
		rec.add(pkg, mapping{Templates: t, Notes: n})
	}, func(pkg string) {
		rec.add(pkg, prev.Mappings[pkg])
	})
	if err != nil {
		return nil, err
	}
	rec.Operators = ops
	keep(rec, records)
	return rec, nil
}

// catalogMapping reads one ci.yaml's fbc section. Only a ci.yaml whose
// fbc.enabled is true maps templates, as operator-pipelines has it.
func catalogMapping(file, pkg string, s *yamlnode.Stream) ([]Template, []checks.Finding) {
	var notes []checks.Finding
	r := &yamlnode.Reader{Report: func(line int, _ yamlnode.Problem, msg string) {
		notes = append(notes, checks.Finding{Rule: RuleValue, Severity: checks.SeverityWarning, File: file, Line: line,
			Message: msg + "; this package's templates are not mapped to catalogs"})
	}}
	root := r.Stream(s, file)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, notes
	}
	var fbc *yaml.Node
	r.Fields(root, "", func(key string, _, v *yaml.Node) {
		if key == "fbc" {
			fbc = yamlnode.Resolve(v)
		}
	})
	if fbc == nil || fbc.Kind != yaml.MappingNode {
		return nil, notes
	}
	enabled := false
	var mapping *yaml.Node
	r.Fields(fbc, "fbc.", func(key string, _, v *yaml.Node) {
		switch key {
		case "enabled":
			enabled, _ = r.Bool(v, "fbc.enabled")
		case "catalog_mapping":
			mapping = yamlnode.Resolve(v)
		}
	})
	if !enabled || mapping == nil || yamlnode.IsNull(mapping) {
		return nil, notes
	}
	if mapping.Kind != yaml.SequenceNode {
		r.Report(mapping.Line, yamlnode.Type, "fbc.catalog_mapping is "+yamlnode.Describe(mapping)+"; want a list")
		return nil, notes
	}
	var out []Template
	for i, item := range mapping.Content {
		at := fmt.Sprintf("fbc.catalog_mapping[%d]", i)
		item = yamlnode.Resolve(item)
		if item.Kind != yaml.MappingNode {
			r.Report(item.Line, yamlnode.Type, at+" is "+yamlnode.Describe(item)+"; want a mapping")
			continue
		}
		var tpl, typ string
		var catalogs []string
		r.Fields(item, at+".", func(key string, _, v *yaml.Node) {
			switch key {
			case "template_name":
				tpl, _ = r.Str(v, at+".template_name")
			case "type":
				typ, _ = r.Str(v, at+".type")
			case "catalog_names":
				catalogs, _ = r.Strs(v, at+".catalog_names")
			}
		})
		if tpl == "" || len(catalogs) == 0 || path.Base(tpl) != tpl || strings.HasPrefix(tpl, ".") {
			r.Report(item.Line, yamlnode.Type, at+" needs a template_name (a file name) and catalog_names")
			continue
		}
		for _, c := range catalogs {
			if c == "" || path.Base(c) != c || strings.HasPrefix(c, ".") {
				continue
			}
			out = append(out, Template{
				Template: path.Join(owners.OperatorsDir, pkg, pipelinesTemplate, tpl),
				Output:   path.Join("catalogs", c, pkg),
				Type:     typ,
			})
		}
	}
	slices.SortFunc(out, func(a, b Template) int { return strings.Compare(a.Output, b.Output) })
	return out, notes
}

// lineOf is the line of a "file:line" origin, 0 when it has none.
func lineOf(origin string) int {
	_, l, ok := strings.Cut(origin, ":")
	if !ok {
		return 0
	}
	n := 0
	for _, r := range l {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// fileOf is the file of a "file:line" origin.
func fileOf(origin string) string {
	f, _, _ := strings.Cut(origin, ":")
	return f
}
