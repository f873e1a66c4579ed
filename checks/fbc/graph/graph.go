// Package graph is the upgrade graph of a channel, with opm's semantics:
// an installed bundle X upgrades to the entry Y of its channel when Y
// replaces X, skips X, or has a skipRange that X's version satisfies. The
// channel's heads are its entries that no entry replaces or skips; OLM
// upgrades every installed bundle along the edges until it reaches one.
//
// Build makes the graph of one channel of a declcfg; Mermaid and Markdown
// draw it, with what a change did to it (added and removed bundles and
// edges, and the installed versions that can no longer reach a head),
// as a Mermaid flowchart, collapsed to the changed neighbourhood when the
// channel is large. The graph reads a declcfg from any source (a catalog
// tree, a rendered template), so every command draws the same picture.
package graph

import (
	"cmp"
	"slices"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// Kind is how an edge is written in the channel.
type Kind string

const (
	Replaces  Kind = "replaces"
	Skips     Kind = "skips"
	SkipRange Kind = "skipRange"
)

// Node is a bundle of the channel.
type Node struct {
	Name string `json:"name"`
	// Version is the bundle's olm.package version, "" when the bundle
	// blob is not in the catalog.
	Version string `json:"version,omitempty"`
	// Deprecated holds the olm.deprecations message that retires the
	// bundle, if any.
	Deprecated string `json:"deprecated,omitempty"`
}

// Label is how the node is shown: its version, or its name when the
// version is unknown.
func (n Node) Label() string { return cmp.Or(n.Version, n.Name) }

// Edge is an upgrade from the bundle From to the entry To.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind Kind   `json:"kind"`
}

// Graph is the upgrade graph of one channel.
type Graph struct {
	Package, Channel string
	// Nodes are the channel's entries in the order they are written.
	Nodes []Node
	// Edges are in the order of the entries that declare them: each
	// entry's replaces, then its skips, then the entries its skipRange
	// takes in, in node order.
	Edges []Edge
	// Heads are the entries no entry replaces or skips; a valid channel
	// has exactly one.
	Heads []string
	// Deprecated holds the olm.deprecations message of the channel.
	Deprecated string

	index map[string]int
	// ranges are the parsed skipRanges, by entry name.
	ranges map[string]semver.Range
	// out indexes Edges by their source, for Out.
	out map[string][]Edge
	// versions are the versions of the package's bundles by name, also
	// of bundles outside the channel, which an edge can still name.
	versions map[string]string
}

// Node returns the node named name.
func (g *Graph) Node(name string) (Node, bool) {
	i, ok := g.index[name]
	if !ok {
		return Node{}, false
	}
	return g.Nodes[i], true
}

// Build returns the graph of channel ch of package pkg in cfg, and false
// when cfg has no such channel. A channel defined twice (which validation
// reports) is taken at its first definition.
func Build(cfg *declcfg.DeclarativeConfig, pkg, ch string) (*Graph, bool) {
	return build(cfg, pkg, ch, func() map[string]string { return Versions(cfg, pkg) })
}

// Builder builds the graphs of one catalog's channels, reading each
// package's bundle versions once: a package of hundreds of bundles in a
// dozen channels read them once per channel, then again for each check
// that draws its graphs. The catalog must not change while it is used.
type Builder struct {
	cfg      *declcfg.DeclarativeConfig
	versions map[string]map[string]string
}

// NewBuilder returns a Builder of cfg's graphs.
func NewBuilder(cfg *declcfg.DeclarativeConfig) *Builder {
	return &Builder{cfg: cfg, versions: map[string]map[string]string{}}
}

// Build is Build of the Builder's catalog.
func (b *Builder) Build(pkg, ch string) (*Graph, bool) {
	return build(b.cfg, pkg, ch, func() map[string]string { return b.Versions(pkg) })
}

// Versions is Versions of the Builder's catalog, read once per package.
// The map is shared: the caller must not change it.
func (b *Builder) Versions(pkg string) map[string]string {
	v, ok := b.versions[pkg]
	if !ok {
		v = Versions(b.cfg, pkg)
		b.versions[pkg] = v
	}
	return v
}

// build is Build with the package's versions from versions.
func build(cfg *declcfg.DeclarativeConfig, pkg, ch string, versions func() map[string]string) (*Graph, bool) {
	var c *declcfg.Channel
	for i := range cfg.Channels {
		if cfg.Channels[i].Package == pkg && cfg.Channels[i].Name == ch {
			c = &cfg.Channels[i]
			break
		}
	}
	if c == nil {
		return nil, false
	}
	g := &Graph{Package: pkg, Channel: ch, index: map[string]int{}, ranges: map[string]semver.Range{}, versions: versions()}
	bundleDep, channelDep := deprecations(cfg, pkg)
	g.Deprecated = channelDep[ch]
	for _, e := range c.Entries {
		if _, dup := g.index[e.Name]; dup {
			continue
		}
		g.index[e.Name] = len(g.Nodes)
		g.Nodes = append(g.Nodes, Node{Name: e.Name, Version: g.versions[e.Name], Deprecated: bundleDep[e.Name]})
	}
	// Versions are parsed once: every skipRange is matched against every
	// node.
	parsed := make([]*semver.Version, len(g.Nodes))
	for i, n := range g.Nodes {
		if v, err := semver.Parse(n.Version); err == nil {
			parsed[i] = &v
		}
	}
	incoming := map[string]bool{}
	for _, e := range c.Entries {
		if e.Replaces != "" {
			g.Edges = append(g.Edges, Edge{From: e.Replaces, To: e.Name, Kind: Replaces})
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			g.Edges = append(g.Edges, Edge{From: s, To: e.Name, Kind: Skips})
			incoming[s] = true
		}
		if e.SkipRange == "" {
			continue
		}
		r, err := semver.ParseRange(e.SkipRange)
		if err != nil {
			continue // validation reports it
		}
		g.ranges[e.Name] = r
		for i, n := range g.Nodes {
			if n.Name != e.Name && parsed[i] != nil && r(*parsed[i]) {
				g.Edges = append(g.Edges, Edge{From: n.Name, To: e.Name, Kind: SkipRange})
			}
		}
	}
	for _, n := range g.Nodes {
		if !incoming[n.Name] {
			g.Heads = append(g.Heads, n.Name)
		}
	}
	return g, true
}

// Versions are the olm.package versions of the bundles of package pkg, by
// bundle name.
func Versions(cfg *declcfg.DeclarativeConfig, pkg string) map[string]string {
	out := map[string]string{}
	for _, b := range cfg.Bundles {
		if b.Package != pkg {
			continue
		}
		for _, p := range b.Properties {
			if p.Type != property.TypePackage {
				continue
			}
			if v, err := property.ParsePackage(p.Value); err == nil {
				out[b.Name] = v.Version
				break
			}
		}
	}
	return out
}

// deprecations are the olm.deprecations messages of package pkg's bundles
// and channels, by name.
func deprecations(cfg *declcfg.DeclarativeConfig, pkg string) (bundles, channels map[string]string) {
	bundles, channels = map[string]string{}, map[string]string{}
	for _, d := range cfg.Deprecations {
		if d.Package != pkg {
			continue
		}
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaBundle:
				bundles[e.Reference.Name] = e.Message
			case declcfg.SchemaChannel:
				channels[e.Reference.Name] = e.Message
			}
		}
	}
	return bundles, channels
}

// ReachesHead says whether an installed bundle named name, of version
// version ("" when unknown), can upgrade along the graph to one of the
// channel's heads; a head reaches itself.
func (g *Graph) ReachesHead(name, version string) bool {
	return g.Reaches(g.Heads)(name, version)
}

// Reaches returns a test of whether an installed bundle named name, of
// version version ("" when unknown), can upgrade along the graph to one of
// targets; a target reaches itself. It answers for bundles outside the
// channel too, since a bundle removed from the channel stays installed on
// clusters: an entry that replaces or skips its name, or whose skipRange
// takes its version in, still upgrades it.
func (g *Graph) Reaches(targets []string) func(name, version string) bool {
	into := map[string][]string{}
	for _, e := range g.Edges {
		if e.From != e.To {
			into[e.To] = append(into[e.To], e.From)
		}
	}
	reach := map[string]bool{}
	queue := slices.Clone(targets)
	for _, t := range targets {
		reach[t] = true
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, from := range into[cur] {
			if !reach[from] {
				reach[from] = true
				queue = append(queue, from)
			}
		}
	}
	return func(name, version string) bool {
		if reach[name] {
			return true
		}
		if _, in := g.index[name]; in || version == "" {
			return false
		}
		v, err := semver.Parse(version)
		if err != nil {
			return false
		}
		for _, n := range g.Nodes {
			if r, ok := g.ranges[n.Name]; ok && reach[n.Name] && r(v) {
				return true
			}
		}
		return false
	}
}

// Out lists the edges from the bundle named name, in the order of Edges.
func (g *Graph) Out(name string) []Edge {
	if g.out == nil {
		g.out = map[string][]Edge{}
		for _, e := range g.Edges {
			g.out[e.From] = append(g.out[e.From], e)
		}
	}
	return g.out[name]
}

// Has says whether the channel has an entry named name.
func (g *Graph) Has(name string) bool {
	_, ok := g.index[name]
	return ok
}

// Version is the version of the package's bundle named name, "" when the
// catalog has no such bundle.
func (g *Graph) Version(name string) string { return g.versions[name] }
