package render

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// WriteJSON writes cfg as opm render -o json does: a stream of objects,
// each indented by four spaces and followed by a newline, with no HTML
// escaping, in the order described at writeConfig.
func WriteJSON(w io.Writer, cfg *declcfg.DeclarativeConfig) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	return writeConfig(cfg, enc.Encode)
}

// WriteYAML writes cfg as opm render -o yaml does: each object converted
// from JSON to YAML, so with its keys sorted, and preceded by "---".
func WriteYAML(w io.Writer, cfg *declcfg.DeclarativeConfig) error {
	return writeConfig(cfg, func(v any) error {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		data, err := yaml.JSONToYAML(buf.Bytes())
		if err != nil {
			return err
		}
		_, err = w.Write(append([]byte("---\n"), data...))
		return err
	})
}

// writeConfig encodes the blobs grouped by package, packages sorted by
// name. Within a package come its olm.package blobs, its channels sorted by
// name, its bundles sorted by name, its blobs of other schemas stably
// sorted by schema, and its deprecations. Blobs of other schemas with no
// package follow, in load order. Packages, channels, bundles and
// deprecations with an empty package name are not written at all, as opm
// drops them.
func writeConfig(cfg *declcfg.DeclarativeConfig, encode func(any) error) error {
	type group struct {
		packages     []declcfg.Package
		channels     []declcfg.Channel
		bundles      []declcfg.Bundle
		others       []declcfg.Meta
		deprecations []declcfg.Deprecation
	}
	groups := map[string]*group{}
	get := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
		}
		return g
	}
	var rootOthers []declcfg.Meta
	for _, p := range cfg.Packages {
		if p.Name != "" {
			get(p.Name).packages = append(get(p.Name).packages, p)
		}
	}
	for _, c := range cfg.Channels {
		if c.Package != "" {
			get(c.Package).channels = append(get(c.Package).channels, c)
		}
	}
	for _, b := range cfg.Bundles {
		if b.Package != "" {
			get(b.Package).bundles = append(get(b.Package).bundles, b)
		}
	}
	for _, o := range cfg.Others {
		if o.Package == "" {
			rootOthers = append(rootOthers, o)
			continue
		}
		get(o.Package).others = append(get(o.Package).others, o)
	}
	for _, d := range cfg.Deprecations {
		if d.Package != "" {
			get(d.Package).deprecations = append(get(d.Package).deprecations, d)
		}
	}

	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g := groups[name]
		// sort.Slice rather than a stable sort, as opm: blobs with equal
		// names (an invalid catalog, but render does not validate) then
		// come out in opm's order.
		sort.Slice(g.channels, func(i, j int) bool { return g.channels[i].Name < g.channels[j].Name })
		sort.Slice(g.bundles, func(i, j int) bool { return g.bundles[i].Name < g.bundles[j].Name })
		sort.SliceStable(g.others, func(i, j int) bool { return g.others[i].Schema < g.others[j].Schema })
		for _, v := range g.packages {
			if err := encode(v); err != nil {
				return err
			}
		}
		for _, v := range g.channels {
			if err := encode(v); err != nil {
				return err
			}
		}
		for _, v := range g.bundles {
			if err := encode(v); err != nil {
				return err
			}
		}
		for _, v := range g.others {
			if err := encode(v); err != nil {
				return err
			}
		}
		for _, v := range g.deprecations {
			if err := encode(v); err != nil {
				return err
			}
		}
	}
	for _, v := range rootOthers {
		if err := encode(v); err != nil {
			return err
		}
	}
	return nil
}
