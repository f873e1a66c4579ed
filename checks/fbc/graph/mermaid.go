package graph

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// DefaultMaxNodes is how many bundles a drawing shows before it collapses
// to the changed neighbourhood: beyond it GitHub's renderer lays a channel
// out too small to read.
const DefaultMaxNodes = 40

// MaxEdges is the most edges a drawing holds: GitHub's Mermaid renderer
// refuses a flowchart of more than 500, showing an error in place of the
// graph. A channel whose skips make more edges than that among the
// bundles in view collapses as a large channel does.
const MaxEdges = 500

// Options choose what Mermaid draws.
type Options struct {
	// Package and Channel select the channels drawn; "" selects all.
	Package, Channel string
	// Base, when set, is the catalog before a change: bundles and edges
	// the change adds are marked, and those it removes are listed.
	Base *declcfg.DeclarativeConfig
	// MaxNodes bounds the bundles drawn per channel; 0 means
	// DefaultMaxNodes and a negative number draws whole channels.
	MaxNodes int
}

// Picture is one channel's graph ready to draw: what a change did to it
// and which part is shown.
type Picture struct {
	Graph *Graph
	// Added are the bundles and edges the change added; empty without a
	// base.
	Added      map[string]bool
	AddedEdges map[Edge]bool
	// Removed are the bundles and edges of the base's channel that the
	// head's does not have.
	Removed      []Node
	RemovedEdges []Edge
	// NewChannel says the base has no such channel.
	NewChannel bool
	// shown are the nodes drawn when the picture is collapsed; nil means
	// all.
	shown map[string]bool
}

// compare pictures head against base (nil: no base, nothing marked).
func compare(head, base *Graph) *Picture {
	p := &Picture{Graph: head, Added: map[string]bool{}, AddedEdges: map[Edge]bool{}}
	if base == nil {
		return p
	}
	for _, n := range head.Nodes {
		if _, ok := base.index[n.Name]; !ok {
			p.Added[n.Name] = true
		}
	}
	baseEdges := map[Edge]bool{}
	for _, e := range base.Edges {
		baseEdges[e] = true
	}
	headEdges := map[Edge]bool{}
	for _, e := range head.Edges {
		headEdges[e] = true
		if !baseEdges[e] {
			p.AddedEdges[e] = true
		}
	}
	for _, n := range base.Nodes {
		if _, ok := head.index[n.Name]; !ok {
			p.Removed = append(p.Removed, n)
		}
	}
	for _, e := range base.Edges {
		if !headEdges[e] {
			p.RemovedEdges = append(p.RemovedEdges, e)
		}
	}
	return p
}

// Changed says whether the change did anything to the channel.
func (p *Picture) Changed() bool {
	return p.NewChannel || len(p.Added) > 0 || len(p.AddedEdges) > 0 || len(p.Removed) > 0 || len(p.RemovedEdges) > 0
}

// collapse keeps at most max bundles in view: the heads and what the
// change touched with its neighbours first, then the bundles nearest the
// heads, so that the part a reviewer must judge is always drawn.
func (p *Picture) collapse(max int) {
	g := p.Graph
	if len(g.Nodes) <= max && len(g.Edges) <= MaxEdges {
		return
	}
	max = min(max, len(g.Nodes))
	var order []string
	add := func(name string) {
		if _, in := g.index[name]; in && !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	for _, h := range g.Heads {
		add(h)
	}
	var touched []string
	for _, n := range g.Nodes {
		if p.Added[n.Name] {
			touched = append(touched, n.Name)
		}
	}
	for _, e := range g.Edges {
		if p.AddedEdges[e] {
			touched = append(touched, e.From, e.To)
		}
	}
	for _, e := range p.RemovedEdges {
		touched = append(touched, e.From, e.To)
	}
	for _, t := range touched {
		add(t)
	}
	for _, t := range touched {
		for _, e := range g.Edges {
			if e.From == t {
				add(e.To)
			}
			if e.To == t {
				add(e.From)
			}
		}
	}
	// Then walk back from the heads, nearest first.
	for i := 0; i < len(order) && len(order) < max; i++ {
		for _, e := range g.Edges {
			if e.To == order[i] {
				add(e.From)
			}
		}
	}
	for _, n := range g.Nodes {
		add(n.Name) // only reached when the graph is not connected
	}
	// Fewer bundles, the least important first, while the edges among
	// those in view are more than the renderer takes.
	for max > 1 && edgesAmong(g, order[:max]) > MaxEdges {
		max--
	}
	p.shown = map[string]bool{}
	for _, n := range order[:max] {
		p.shown[n] = true
	}
}

// edgesAmong counts the edges of g that body draws when names are in view:
// those into a bundle in view from one in view, or from a bundle outside
// the channel, which is drawn as a node of its own.
func edgesAmong(g *Graph, names []string) int {
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	n := 0
	for _, e := range g.Edges {
		_, inChannel := g.index[e.From]
		if in[e.To] && (in[e.From] || !inChannel) {
			n++
		}
	}
	return n
}

// Hidden counts the bundles left out of the drawing.
func (p *Picture) Hidden() int {
	if p.shown == nil {
		return 0
	}
	return len(p.Graph.Nodes) - len(p.shown)
}

func (p *Picture) visible(name string) bool {
	if p.shown == nil {
		return true
	}
	return p.shown[name]
}

// The styles of the drawing; GitHub renders classDef and linkStyle.
const (
	styleAdded      = "fill:#dafbe1,stroke:#1a7f37,color:#0d3a19"
	styleDeprecated = "fill:#eaeef2,stroke:#8c959f,stroke-dasharray:5 3,color:#57606a"
	styleHead       = "stroke-width:3px"
	styleOutside    = "fill:#ffffff,stroke:#8c959f,stroke-dasharray:2 2"
	styleAddedEdge  = "stroke:#1a7f37,stroke-width:2px"
)

// drawing accumulates one Mermaid flowchart; links are numbered across it,
// which linkStyle needs.
type drawing struct {
	b         strings.Builder
	links     int
	added     []string
	classUsed map[string]bool
}

// body draws p's nodes and edges with ids prefixed by id, indented by
// indent.
func (d *drawing) body(p *Picture, id, indent string) {
	g := p.Graph
	ids := map[string]string{}
	var classes [][2]string
	for i, n := range g.Nodes {
		if !p.visible(n.Name) {
			continue
		}
		nid := id + "n" + strconv.Itoa(i)
		ids[n.Name] = nid
		label := n.Label()
		if n.Deprecated != "" {
			label += " (deprecated)"
		}
		fmt.Fprintf(&d.b, "%s%s[\"%s\"]\n", indent, nid, escape(label))
		switch {
		case p.Added[n.Name]:
			classes = append(classes, [2]string{nid, "added"})
		case n.Deprecated != "":
			classes = append(classes, [2]string{nid, "deprecated"})
		}
		if slices.Contains(g.Heads, n.Name) {
			classes = append(classes, [2]string{nid, "head"})
		}
	}
	// An edge can name a bundle outside the channel (replaces may); it
	// is drawn as a node of its own, by name.
	outside := 0
	for _, e := range g.Edges {
		if _, in := g.index[e.From]; in || ids[e.From] != "" || !p.visible(e.To) {
			continue
		}
		nid := id + "x" + strconv.Itoa(outside)
		outside++
		ids[e.From] = nid
		label := e.From
		if v := g.versions[e.From]; v != "" {
			label = v
		}
		fmt.Fprintf(&d.b, "%s%s[\"%s\"]\n", indent, nid, escape(label+" (not in channel)"))
		classes = append(classes, [2]string{nid, "outside"})
	}
	for _, e := range g.Edges {
		from, to := ids[e.From], ids[e.To]
		if from == "" || to == "" {
			continue
		}
		switch e.Kind {
		case Replaces:
			fmt.Fprintf(&d.b, "%s%s --> %s\n", indent, from, to)
		default:
			fmt.Fprintf(&d.b, "%s%s -. %s .-> %s\n", indent, from, e.Kind, to)
		}
		if p.AddedEdges[e] {
			d.added = append(d.added, strconv.Itoa(d.links))
		}
		d.links++
	}
	for _, c := range classes {
		fmt.Fprintf(&d.b, "%sclass %s %s\n", indent, c[0], c[1])
		d.classUsed[c[1]] = true
	}
}

func (d *drawing) finish(w io.Writer) error {
	for _, c := range []struct{ name, style string }{
		{"added", styleAdded}, {"deprecated", styleDeprecated}, {"head", styleHead}, {"outside", styleOutside},
	} {
		if d.classUsed[c.name] {
			fmt.Fprintf(&d.b, "  classDef %s %s\n", c.name, c.style)
		}
	}
	if len(d.added) > 0 {
		fmt.Fprintf(&d.b, "  linkStyle %s %s\n", strings.Join(d.added, ","), styleAddedEdge)
	}
	_, err := io.WriteString(w, d.b.String())
	return err
}

// notes are the lines under a picture: what it leaves out, what the change
// removed.
func (p *Picture) notes() []string {
	var out []string
	if n := p.Hidden(); n > 0 {
		out = append(out, fmt.Sprintf("%d of %d bundles are not drawn; the drawing shows the heads and the changed neighbourhood.", n, len(p.Graph.Nodes)))
	}
	for _, n := range p.Removed {
		out = append(out, fmt.Sprintf("removed bundle %s (%s)", n.Name, n.Label()))
	}
	for _, e := range p.RemovedEdges {
		out = append(out, fmt.Sprintf("removed edge %s -> %s (%s)", e.From, e.To, e.Kind))
	}
	return out
}

// WriteMermaid draws the pictures as one Mermaid flowchart: a single
// channel plainly, several each in a subgraph titled package/channel.
// Notes (bundles not drawn, removed bundles and edges) follow as Mermaid
// comments.
func WriteMermaid(w io.Writer, pics []*Picture) error {
	d := &drawing{classUsed: map[string]bool{}}
	d.b.WriteString("graph LR\n")
	for i, p := range pics {
		g := p.Graph
		if len(pics) == 1 {
			fmt.Fprintf(&d.b, "  %%%% package %s, channel %s\n", comment(g.Package), comment(g.Channel))
			d.body(p, "", "  ")
		} else {
			id := "c" + strconv.Itoa(i)
			fmt.Fprintf(&d.b, "  subgraph %s[\"%s\"]\n", id, escape(g.Package+" / "+g.Channel))
			d.body(p, id, "    ")
			d.b.WriteString("  end\n")
		}
		for _, n := range p.notes() {
			fmt.Fprintf(&d.b, "  %%%% %s/%s: %s\n", comment(g.Package), comment(g.Channel), comment(n))
		}
	}
	return d.finish(w)
}

// Markdown writes p for a pull request: a mermaid code block of the
// channel, then what it leaves out and what the change removed as a list,
// since a removed bundle cannot be drawn.
func Markdown(w io.Writer, p *Picture) error {
	var b strings.Builder
	b.WriteString("```mermaid\n")
	d := &drawing{classUsed: map[string]bool{}}
	d.b.WriteString("graph LR\n")
	d.body(p, "", "  ")
	if err := d.finish(&b); err != nil {
		return err
	}
	b.WriteString("```\n")
	for _, n := range p.notes() {
		fmt.Fprintf(&b, "- %s\n", markdownText(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Mermaid draws the channels of cfg that opts select, as WriteMermaid
// does, compared with opts.Base when it is set. It is the one drawing of
// every command: a catalog tree, a rendered template, a pull request.
func Mermaid(w io.Writer, cfg *declcfg.DeclarativeConfig, opts Options) error {
	pics, err := Pictures(cfg, opts)
	if err != nil {
		return err
	}
	return WriteMermaid(w, pics)
}

// Pictures are the pictures of the channels of cfg that opts select, in
// the order the channels are written, each collapsed to opts.MaxNodes. It
// fails when nothing matches the selection.
func Pictures(cfg *declcfg.DeclarativeConfig, opts Options) ([]*Picture, error) {
	max := opts.MaxNodes
	if max == 0 {
		max = DefaultMaxNodes
	}
	var pics []*Picture
	seen := map[[2]string]bool{}
	hb := NewBuilder(cfg)
	var bb *Builder
	if opts.Base != nil {
		bb = NewBuilder(opts.Base)
	}
	for _, c := range cfg.Channels {
		k := [2]string{c.Package, c.Name}
		if seen[k] || opts.Package != "" && c.Package != opts.Package || opts.Channel != "" && c.Name != opts.Channel {
			continue
		}
		seen[k] = true
		head, _ := hb.Build(c.Package, c.Name)
		var base *Graph
		if opts.Base != nil {
			base, _ = bb.Build(c.Package, c.Name)
		}
		p := compare(head, base)
		p.NewChannel = opts.Base != nil && base == nil
		if max > 0 {
			p.collapse(max)
		}
		pics = append(pics, p)
	}
	if len(pics) == 0 {
		what := "no channel"
		if opts.Package != "" {
			what += fmt.Sprintf(" of package %q", opts.Package)
		}
		if opts.Channel != "" {
			what += fmt.Sprintf(" named %q", opts.Channel)
		}
		return nil, fmt.Errorf("%s in the catalog", what)
	}
	return pics, nil
}

// escape makes s safe inside a quoted Mermaid label: quotes, the entity
// sign and angle brackets become Mermaid's #code; entities, and line
// breaks become spaces, so that no name from a catalog can end the label
// or inject markup.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '#':
			b.WriteString("#35;")
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			if hidden(r) {
				fmt.Fprintf(&b, "#%d;", r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden says whether r changes how text around it reads without being
// seen: every character checks.Visible spells out (controls, bidi marks,
// overrides and isolates, zero-width and tag characters, line
// separators), and line feeds and tabs, which would end a label or a
// comment line. One list for every reporter: a drawing printed to a
// terminal is read as carefully as a check run.
func hidden(r rune) bool {
	return r == '\n' || r == '\t' || checks.Hidden(r)
}

// comment makes s safe on a Mermaid comment line, showing hidden
// characters as their code points.
func comment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markdownText keeps a note from breaking out of its list item, starting
// markup or mentioning anyone: a bundle name is the pull request's data,
// and "@org/team" in it would notify a team from the App's comment. It is
// checks.MarkdownText, the one escaping of every text a report shows.
func markdownText(s string) string {
	return checks.MarkdownText(comment(s))
}
