package propose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
)

// A package whose catalog directory a template renders (the policy's
// catalog.templates, or operators/*/ci.yaml fbc.catalog_mapping under the
// operator-pipelines conventions) gets its releases in the template, and
// its outputs regenerated from it, as its maintainers would run
// `catalogbot render-template` (or opm alpha render-template): the
// templates check then finds every output in step.

// templateOf is the mapping whose output is exactly dir, nil when no
// template renders dir. A template whose output only overlaps dir (a
// parent or a child directory) cannot be edited for one package: that is
// an error.
func templateOf(pol *policy.Policy, dir string) (*policy.Template, error) {
	for i, tm := range pol.Catalog.Templates {
		switch {
		case tm.Output == dir:
			return &pol.Catalog.Templates[i], nil
		case within(dir, tm.Output) || within(tm.Output, dir):
			return nil, fmt.Errorf("%s overlaps the output %s of the template %s; propose regenerates a template only when its output is the package's directory", dir, tm.Output, tm.Template)
		}
	}
	return nil, nil
}

// addToTemplate adds the new bundles to the template file data: for a
// basic template, an olm.bundle entry each (by image) and the channel
// entries; for a semver template, each bundle in the list of the
// channel archetype (candidate, fast, stable) the channel's name starts
// with, since the semver template makes the channels itself.
func addToTemplate(file string, data []byte, pkg string, channels map[string][]declcfg.ChannelEntry, images []string) ([]byte, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: a template is one YAML document", file)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a template", file)
	}
	m := doc.Content[0]
	schema := value(m, "schema")
	switch {
	case schema != nil && schema.Value == template.SchemaBasic:
		list := value(m, "entries")
		if list == nil || list.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s:%d: the basic template has no list of entries", file, m.Line)
		}
		for ch, entries := range channels {
			found := false
			for _, e := range list.Content {
				if e.Kind != yaml.MappingNode || str(e, "schema") != declcfg.SchemaChannel || str(e, "package") != pkg || str(e, "name") != ch {
					continue
				}
				es := value(e, "entries")
				if es == nil || es.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("%s:%d: channel %s of package %s has no list of entries", file, e.Line, ch, pkg)
				}
				for _, ce := range entries {
					es.Content = append(es.Content, entryNode(ce))
				}
				found = true
			}
			if !found {
				return nil, fmt.Errorf("%s: the template has no channel %s of package %s", file, ch, pkg)
			}
		}
		for _, img := range images {
			list.Content = append(list.Content, mapping("schema", declcfg.SchemaBundle, "image", img))
		}
	case schema != nil && schema.Value == template.SchemaSemver:
		for ch := range channels {
			arch := archetype(ch)
			if arch == "" {
				return nil, fmt.Errorf("%s: channel %s is not one a semver template makes (candidate, fast or stable, with their version suffixes)", file, ch)
			}
			group := value(m, arch)
			if group == nil {
				group = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				m.Content = append(m.Content, scalar(arch), group)
			}
			list := value(group, "bundles")
			if list == nil {
				list = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				group.Content = append(group.Content, scalar("bundles"), list)
			}
			for _, img := range images {
				list.Content = append(list.Content, mapping("image", img))
			}
		}
	default:
		return nil, fmt.Errorf("%s: schema is neither %s nor %s", file, template.SchemaBasic, template.SchemaSemver)
	}
	var out bytes.Buffer
	if bytes.HasPrefix(data, []byte("---")) {
		out.WriteString("---\n")
	}
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if compactSequences(data) {
		return compact(out.Bytes()), nil
	}
	return out.Bytes(), nil
}

// archetype is the semver template's channel archetype a generated
// channel belongs to: "stable" for stable, stable-v1 or stable-v1.2.
func archetype(channel string) string {
	for _, a := range []string{"candidate", "fast", "stable"} {
		if channel == a || strings.HasPrefix(channel, a+"-v") {
			return a
		}
	}
	return ""
}

// regenerate renders the template, edited, into its output's one catalog
// file. Bundles the output holds already, pinned by digest, are taken
// from it rather than pulled again; only the new ones are.
func regenerate(ctx context.Context, o Options, tm *policy.Template, data []byte, have *declcfg.DeclarativeConfig, outFiles []string) (string, []byte, error) {
	var files []string
	for _, f := range outFiles {
		if isCatalogFile(f) {
			files = append(files, f)
		}
	}
	if len(files) != 1 {
		return "", nil, fmt.Errorf("the output %s of %s is %d catalog files; propose regenerates an output kept in one file", tm.Output, tm.Template, len(files))
	}
	known := map[string]template.Known{}
	for _, b := range have.Bundles {
		if strings.Contains(b.Image, "@sha256:") {
			known[b.Image] = template.Known{Bundle: b, CSV: render.CatalogCSV(&b)}
		}
	}
	res, err := template.Render(ctx, tm.Template, data, template.Options{
		Renderer: o.Renderer,
		Known:    func(ref string) (template.Known, bool) { k, ok := known[ref]; return k, ok },
	})
	if err != nil {
		return "", nil, fmt.Errorf("render %s: %w", tm.Template, err)
	}
	if res.Config == nil {
		var why []string
		for _, f := range res.Findings {
			why = append(why, fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message))
		}
		return "", nil, fmt.Errorf("%s does not render once the releases are added:\n%s", tm.Template, strings.Join(why, "\n"))
	}
	var buf bytes.Buffer
	if err := render.WriteYAML(&buf, res.Config); err != nil {
		return "", nil, err
	}
	return files[0], buf.Bytes(), nil
}

// readEdited reads file from edits made so far, else from the tree.
func readEdited(tree fs.FS, edits map[string][]byte, file string) ([]byte, error) {
	if data, ok := edits[file]; ok {
		return data, nil
	}
	return fs.ReadFile(tree, file)
}

// str is the scalar value of key in the mapping m, "" when absent.
func str(m *yaml.Node, key string) string {
	if v := value(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// mapping is a mapping of string keys and values, in the order given.
func mapping(kv ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalar(kv[i]), scalar(kv[i+1]))
	}
	return n
}

// placeInTemplate adds news to the template that renders a catalog's
// package directory (once per template), regenerates that output, and
// records in pl what went where.
func (p *placed) placeInTemplate(ctx context.Context, o Options, tree fs.FS, w policy.Proposal, tm *policy.Template,
	heads map[string]channelHead, have *declcfg.DeclarativeConfig, files []string, news []*bundle, edited map[string]bool, pl *place) error {
	entries := map[string][]declcfg.ChannelEntry{}
	for _, ch := range w.Channels {
		var graph string
		entries[ch], graph = chainOf(w.Graph, ch, heads[ch], news)
		pl.graphs = append(pl.graphs, graph)
	}
	if !edited[tm.Template] {
		data, err := readEdited(tree, p.edits, tm.Template)
		if err != nil {
			return fmt.Errorf("read the template %s: %w", tm.Template, err)
		}
		var images []string
		for _, b := range news {
			images = append(images, b.image)
		}
		if p.edits[tm.Template], err = addToTemplate(tm.Template, data, w.Package, entries, images); err != nil {
			return err
		}
		edited[tm.Template] = true
	}
	file, out, err := regenerate(ctx, o, tm, p.edits[tm.Template], have, files)
	if err != nil {
		return err
	}
	p.edits[file] = out
	pl.template = tm.Template
	pl.files = append(pl.files, file)
	for _, b := range news {
		b.catalog = append(b.catalog, pl.catalog)
	}
	return nil
}
