// Package release guards what a catalog has released. A change may add
// bundles, entries and channels; it must not take away a bundle, a channel
// entry or a channel that the base has, and it must not break an upgrade
// edge: every bundle of a base channel that could upgrade to the channel's
// head on the base must still reach the head after the change, along
// replaces, skips and skipRange as opm reads them (see package graph).
// Clusters that installed a release follow those edges; a release taken
// away strands them. The documented way to retire a release is an
// olm.deprecations entry, which keeps the edges and tells users.
//
// Where a repository holds one catalog per platform version (v4.17,
// v4.18, ...), Continuity judges the step from one catalog to the next: a
// cluster upgraded from OpenShift 4.17 to 4.18 keeps what it installed from
// catalog v4.17 and must find it, or an upgrade from it, in catalog v4.18.
//
// Channels the caller calls prunable (pre-release channels by policy) are
// not judged. Whether an approval lifts the guard is the caller's
// decision: Check only reports.
package release

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
)

// The release guard's rules.
const (
	RuleBundleRemoved  = "RG1"
	RuleEntryRemoved   = "RG2"
	RuleChannelRemoved = "RG3"
	RuleEdgeBroken     = "RG4"
)

// Rules are the release guard's rules, for the rule catalogue.
var Rules = []checks.Rule{
	{ID: RuleBundleRemoved, Name: "BundleRemoved", Description: "A bundle that the base releases in a channel is removed."},
	{ID: RuleEntryRemoved, Name: "ChannelEntryRemoved", Description: "An entry that a base channel has is removed from the channel."},
	{ID: RuleChannelRemoved, Name: "ChannelRemoved", Description: "A channel that the base has is removed."},
	{ID: RuleEdgeBroken, Name: "UpgradeEdgeBroken", Description: "A bundle of a base channel can no longer upgrade to the channel's head."},
	{ID: RuleStranded, Name: "UpgradeStranded", Description: "A bundle of a catalog of a versioned series has neither itself nor an upgrade in the next catalog: a cluster upgraded between the two platform versions strands it."},
}

// Hint is how every finding ends: what to do instead.
const Hint = "to retire a release, keep it and deprecate it with an olm.deprecations entry, which keeps the upgrade path and tells users"

// Options tune Check.
type Options struct {
	// Packages are the packages judged; nil means every package of the
	// base.
	Packages []string
	// Prunable says which channels may lose what they have; nil means
	// none.
	Prunable func(channel string) bool
}

// Check compares the catalog before a change (base) with the catalog after
// it (head) and reports every release the change takes away. Removals are
// placed on the base (where the removed text was), a broken edge on the
// head entry that no longer upgrades from the base's bundles. Each finding
// names the installed versions that would lose their upgrade path.
func Check(base, head *fbc.Placed, opts Options) []checks.Finding {
	pkgs := opts.Packages
	if pkgs == nil {
		for _, c := range base.Config.Channels {
			if !slices.Contains(pkgs, c.Package) {
				pkgs = append(pkgs, c.Package)
			}
		}
	}
	var out []checks.Finding
	for _, p := range pkgs {
		out = append(out, checkPackage(base, head, p, opts)...)
	}
	slices.SortStableFunc(out, func(a, b checks.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}

// loss is one finding being built: what was taken away and the installed
// versions it strands.
type loss struct {
	f        checks.Finding
	what     string
	stranded []string
}

func (l *loss) strand(version, channel string) {
	s := shown(version) + " in " + shown(channel)
	if !slices.Contains(l.stranded, s) {
		l.stranded = append(l.stranded, s)
	}
}

// checkPackage judges each base channel of pkg that is not prunable: a
// channel the head lacks is removed; else its missing entries are removed
// and its released entries must still reach its head.
func checkPackage(base, head *fbc.Placed, pkg string, opts Options) []checks.Finding {
	bb, hb := graph.NewBuilder(&base.Config), graph.NewBuilder(&head.Config)
	p := &packageCheck{
		base: base, head: head, pkg: pkg,
		headBundles:    map[string]bool{},
		baseVersions:   bb.Versions(pkg),
		bundleLoss:     map[string]*loss{},
		bundleChannels: map[string][]string{},
	}
	for _, b := range head.Config.Bundles {
		if b.Package == pkg {
			p.headBundles[b.Name] = true
		}
	}
	seen := map[string]bool{}
	for i, c := range base.Config.Channels {
		if c.Package != pkg || seen[c.Name] || opts.Prunable != nil && opts.Prunable(c.Name) {
			continue
		}
		seen[c.Name] = true
		bg, _ := bb.Build(pkg, c.Name)
		hg, ok := hb.Build(pkg, c.Name)
		if !ok {
			p.channelRemoved(i, c.Name, bg)
			continue
		}
		entryLoss := p.entriesRemoved(i, c.Name, bg, hg)
		p.edgesBroken(c.Name, bg, hg, entryLoss)
	}
	return p.findings()
}

// packageCheck is the judging of one package: the rules, one method each
// (channelRemoved, entriesRemoved, bundleRemoved, edgesBroken), add to the
// findings in the order they find them.
type packageCheck struct {
	base, head *fbc.Placed
	pkg        string
	// headBundles are the bundles of pkg the head defines, and
	// baseVersions the versions of those the base defines.
	headBundles  map[string]bool
	baseVersions map[string]string

	order []*loss
	// bundleLoss is the finding of each removed bundle, and
	// bundleChannels the judged base channels that had it.
	bundleLoss     map[string]*loss
	bundleChannels map[string][]string
}

func (p *packageCheck) add(l *loss) *loss {
	p.order = append(p.order, l)
	return l
}

// removedBundle says whether the change removes the bundle name: the
// head no longer defines it, though the base does.
func (p *packageCheck) removedBundle(name string) bool {
	return !p.headBundles[name] && p.baseVersions[name] != ""
}

// bundleRemoved (RuleBundleRemoved) is the finding of a removed bundle met
// in channel: one however many channels had it.
func (p *packageCheck) bundleRemoved(name, channel string) *loss {
	l := p.bundleLoss[name]
	if l == nil {
		at := bundlePlace(p.base, p.pkg, name)
		l = p.add(&loss{f: checks.Finding{Rule: RuleBundleRemoved, File: at.File, Line: at.Line, Package: p.pkg, Bundle: name}})
		p.bundleLoss[name] = l
	}
	if !slices.Contains(p.bundleChannels[name], channel) {
		p.bundleChannels[name] = append(p.bundleChannels[name], channel)
	}
	return l
}

// channelRemoved (RuleChannelRemoved) reports base channel i, which the
// head no longer has, stranding every released entry; the bundles that
// went with it are removed bundles as well.
func (p *packageCheck) channelRemoved(i int, channel string, bg *graph.Graph) {
	released := bg.Reaches(bg.Heads)
	at := p.base.Channels[i]
	l := p.add(&loss{f: checks.Finding{Rule: RuleChannelRemoved, File: at.File, Line: at.Line, Package: p.pkg, Channel: channel},
		what: fmt.Sprintf("channel %q of package %q is on the base branch and this change removes it", channel, p.pkg)})
	for _, n := range bg.Nodes {
		if released(n.Name, "") {
			l.strand(n.Label(), channel)
		}
		if p.removedBundle(n.Name) {
			b := p.bundleRemoved(n.Name, channel)
			if released(n.Name, "") {
				b.strand(n.Label(), channel)
			}
		}
	}
}

// entriesRemoved (RuleEntryRemoved) reports each entry of base channel i
// that the head's channel lacks, each blamed on itself, unless its bundle
// is gone altogether: then it is that bundle's removal. It returns the
// finding of each missing entry, for the stranded versions to be added.
func (p *packageCheck) entriesRemoved(i int, channel string, bg, hg *graph.Graph) map[string]*loss {
	entryLoss := map[string]*loss{}
	for _, n := range bg.Nodes {
		if hg.Has(n.Name) {
			continue
		}
		if p.removedBundle(n.Name) {
			entryLoss[n.Name] = p.bundleRemoved(n.Name, channel)
			continue
		}
		at := p.base.EntryPlace(i, n.Name)
		entryLoss[n.Name] = p.add(&loss{f: checks.Finding{Rule: RuleEntryRemoved, File: at.File, Line: at.Line, Package: p.pkg, Channel: channel, Bundle: n.Name},
			what: fmt.Sprintf("entry %q of channel %q is on the base branch and this change removes it from the channel", n.Name, channel)})
	}
	return entryLoss
}

// edgesBroken (RuleEdgeBroken) finds the released base entries of channel
// that no longer reach its head. A stranded entry that is itself missing
// is its removal's (entryLoss); otherwise each is blamed on the head
// entries whose base edges are gone, or on the channel when no edge is.
func (p *packageCheck) edgesBroken(channel string, bg, hg *graph.Graph, entryLoss map[string]*loss) {
	released := bg.Reaches(bg.Heads)
	// What still upgrades: to the head's heads, except a bundle that
	// had an upgrade on the base and has none now, which is the
	// broken edge itself, not a head.
	var targets []string
	for _, h := range hg.Heads {
		if !bg.Has(h) || slices.Contains(bg.Heads, h) {
			targets = append(targets, h)
		}
	}
	reaches := hg.Reaches(targets)
	headEdges := map[graph.Edge]bool{}
	for _, e := range hg.Edges {
		headEdges[e] = true
	}
	headIndex := slices.IndexFunc(p.head.Config.Channels, func(hc declcfg.Channel) bool { return hc.Package == p.pkg && hc.Name == channel })
	edgeLoss := map[string]*loss{}
	var channelLoss *loss
	for _, n := range bg.Nodes {
		if !released(n.Name, "") || reaches(n.Name, p.baseVersions[n.Name]) {
			continue
		}
		label := n.Label()
		if l := entryLoss[n.Name]; l != nil {
			l.strand(label, channel)
			continue
		}
		blamed := blame(bg, headEdges, n.Name)
		for _, b := range blamed {
			if l := entryLoss[b]; l != nil {
				l.strand(label, channel)
				continue
			}
			l := edgeLoss[b]
			if l == nil {
				at := p.head.EntryPlace(headIndex, b)
				l = p.add(&loss{f: checks.Finding{Rule: RuleEdgeBroken, File: at.File, Line: at.Line, Package: p.pkg, Channel: channel, Bundle: b},
					what: fmt.Sprintf("entry %q of channel %q no longer upgrades from %s as it does on the base branch", b, channel, strings.Join(lostEdges(bg, headEdges, b), ", "))})
				edgeLoss[b] = l
			}
			l.strand(label, channel)
		}
		if len(blamed) == 0 {
			if channelLoss == nil {
				at := p.head.Channels[headIndex]
				channelLoss = p.add(&loss{f: checks.Finding{Rule: RuleEdgeBroken, File: at.File, Line: at.Line, Package: p.pkg, Channel: channel},
					what: fmt.Sprintf("channel %q no longer leads every bundle it had on the base branch to its head", channel)})
			}
			channelLoss.strand(label, channel)
		}
	}
}

// findings turns the losses into findings, in the order they were found,
// each saying what it strands and how to retire a release instead.
func (p *packageCheck) findings() []checks.Finding {
	for name, l := range p.bundleLoss {
		v := shown(p.baseVersions[name])
		l.what = fmt.Sprintf("bundle %q (version %s) is released on the base branch in %s and this change removes it", name, v, channelList(p.bundleChannels[name]))
	}
	out := make([]checks.Finding, 0, len(p.order))
	for _, l := range p.order {
		f := l.f
		f.Severity = checks.SeverityError
		lost := "no installed version loses its upgrade path, but users can no longer install the release"
		if len(l.stranded) > 0 {
			lost = "installed versions that would lose their upgrade path: " + strings.Join(l.stranded, ", ")
		}
		f.Message = fmt.Sprintf("%s; %s; %s", l.what, lost, Hint)
		out = append(out, f)
	}
	return out
}

// blame finds where the base paths from the bundle name broke: walking the
// base graph from name, the first edge of each path that the head lacks;
// the result are the entries those edges led to.
func blame(bg *graph.Graph, headEdges map[graph.Edge]bool, name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range bg.Out(cur) {
			if e.To == cur {
				continue
			}
			if !headEdges[e] {
				if !slices.Contains(out, e.To) {
					out = append(out, e.To)
				}
				continue
			}
			if !seen[e.To] {
				seen[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	// A broken edge into an entry that is gone is that entry's removal;
	// the caller attributes it there.
	slices.Sort(out)
	return out
}

// lostEdges describes the base edges into entry to that the head lacks.
func lostEdges(bg *graph.Graph, headEdges map[graph.Edge]bool, to string) []string {
	var out []string
	for _, e := range bg.Edges {
		if e.To == to && !headEdges[e] {
			out = append(out, fmt.Sprintf("%q (%s)", e.From, e.Kind))
		}
	}
	return out
}

func channelList(chs []string) string {
	noun := "channel"
	if len(chs) > 1 {
		noun = "channels"
	}
	out := make([]string, len(chs))
	for i, c := range chs {
		out[i] = shown(c)
	}
	return noun + " " + strings.Join(out, ", ")
}

// shown is s as a finding shows a name from the catalog: as it is when
// every character prints, else quoted with escapes, so that no control or
// bidirectional-override character reaches a report.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// bundlePlace is where the base defines bundle name of pkg.
func bundlePlace(p *fbc.Placed, pkg, name string) fbc.Place {
	for i, b := range p.Config.Bundles {
		if b.Package == pkg && b.Name == name {
			return p.Bundles[i]
		}
	}
	return fbc.Place{}
}
