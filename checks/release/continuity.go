package release

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// RuleStranded is the continuity rule: a bundle of one catalog of a series
// that the next catalog neither holds nor upgrades.
const RuleStranded = "RG5"

// Series orders catalogs by the versions their names hold, read as
// semver's tolerant parser reads "v4.17", so that v4.9 comes before v4.17
// as it would not in the order of the strings. Catalogs form a series only when every name holds
// a version and no two hold the same one; otherwise ok is false and the
// names say nothing about which catalog follows which.
func Series(names []string) (ordered []string, ok bool) {
	type item struct {
		name string
		v    semver.Version
	}
	items := make([]item, 0, len(names))
	for _, n := range names {
		v, err := semver.ParseTolerant(n)
		if err != nil {
			return nil, false
		}
		items = append(items, item{n, v})
	}
	slices.SortFunc(items, func(a, b item) int { return a.v.Compare(b.v) })
	for i := 1; i < len(items); i++ {
		if items[i].v.EQ(items[i-1].v) {
			return nil, false
		}
	}
	for _, it := range items {
		ordered = append(ordered, it.name)
	}
	return ordered, true
}

// Step is a cluster upgrade from the platform version of catalog From to
// that of catalog To, the next catalog of the series: a cluster keeps the
// operators it installed from From and finds their upgrades in To. Each
// catalog is given as it is on the base and on the head of the change;
// nil is a catalog absent on that side.
type Step struct {
	From, To                           string
	BaseFrom, BaseTo, HeadFrom, HeadTo *fbc.Placed
}

// ContinuityOptions tune Continuity.
type ContinuityOptions struct {
	// Packages are the packages judged: those the change touches in
	// either catalog.
	Packages []string
	// Prunable says which channels are pre-releases, not judged; nil
	// means none.
	Prunable func(channel string) bool
	// Severity is that of a finding the change makes; the zero value is
	// a warning. A finding the base has already is always a warning.
	Severity checks.Severity
}

// Continuity reports every bundle of catalog From that the head leaves
// stranded in catalog To: installed from a channel of From, with neither
// the same bundle in that channel of To nor an entry there that replaces
// or skips it or whose skipRange takes its version in (graph's edges, as
// opm reads them). A cluster with it installed that upgrades its platform
// would find no upgrade and no longer its own release.
//
// A bundle whose olm.maxOpenShiftVersion is older than To's version is not
// stranded: while it is installed, OLM keeps the cluster from upgrading
// that far. A package that To lacks altogether on both sides is left
// alone: it was
// dropped from the newer platform before this change, on purpose. A
// package the change takes out of To altogether strands every bundle.
// Findings sit on the bundle in From (its blob, or its first channel
// entry when the blob is elsewhere); one the base has already (the same
// bundle stranded in the same channels) is a pre-existing warning.
func Continuity(s Step, opts ContinuityOptions) []checks.Finding {
	if s.HeadFrom == nil {
		return nil
	}
	sev := cmp.Or(opts.Severity, checks.SeverityWarning)
	var out []checks.Finding
	for _, pkg := range opts.Packages {
		if !holds(s.HeadTo, pkg) && !holds(s.BaseTo, pkg) {
			continue
		}
		head := strandings(s.HeadFrom, s.HeadTo, s.To, pkg, opts.Prunable)
		var base map[strandKey]bool
		if s.BaseFrom != nil {
			base = map[strandKey]bool{}
			for _, st := range strandings(s.BaseFrom, s.BaseTo, s.To, pkg, opts.Prunable) {
				for _, c := range st.channels {
					base[strandKey{st.bundle, c.name}] = true
				}
			}
		}
		for _, st := range head {
			f := s.finding(st, pkg)
			f.Severity = sev
			old := base != nil
			for _, c := range st.channels {
				old = old && base[strandKey{st.bundle, c.name}]
			}
			if old {
				f.Severity = checks.SeverityWarning
				f.Message += " (pre-existing: also on the base branch)"
			}
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b checks.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Bundle, b.Bundle))
	})
	return out
}

type strandKey struct{ bundle, channel string }

// stranding is one bundle of From that To does not carry on, with the
// channels of From it is stranded in.
type stranding struct {
	bundle, version string
	at              fbc.Place
	channels        []strandedIn
	// gone says To lacks the package altogether.
	gone bool
}

// strandedIn is one channel a bundle is stranded in, and why: To has no
// such channel, or the channel has nothing for the bundle.
type strandedIn struct {
	name      string
	noChannel bool
}

// strandings are the bundles of pkg in from that to, the catalog named
// toName, leaves stranded, in the order from's channels list them.
func strandings(from, to *fbc.Placed, toName, pkg string, prunable func(string) bool) []stranding {
	gone := !holds(to, pkg)
	fb := graph.NewBuilder(&from.Config)
	var tb *graph.Builder
	if to != nil {
		tb = graph.NewBuilder(&to.Config)
	}
	versions := fb.Versions(pkg)
	held := heldBelow(&from.Config, pkg, toName)
	var out []stranding
	index := map[string]int{}
	seen := map[string]bool{}
	for i, c := range from.Config.Channels {
		if c.Package != pkg || seen[c.Name] || prunable != nil && prunable(c.Name) {
			continue
		}
		seen[c.Name] = true
		fg, _ := fb.Build(pkg, c.Name)
		var covered func(name, version string) bool
		var tg *graph.Graph
		if to != nil {
			tg, _ = tb.Build(pkg, c.Name)
		}
		if tg != nil {
			// Every entry of To's channel is an upgrade target: a
			// cluster only needs one edge out of what it runs.
			all := make([]string, len(tg.Nodes))
			for k, n := range tg.Nodes {
				all[k] = n.Name
			}
			covered = tg.Reaches(all)
		}
		for _, n := range fg.Nodes {
			if held[n.Name] || covered != nil && covered(n.Name, versions[n.Name]) {
				continue
			}
			k, ok := index[n.Name]
			if !ok {
				at := bundlePlace(from, pkg, n.Name)
				if at.File == "" {
					at = from.EntryPlace(i, n.Name)
				}
				k = len(out)
				index[n.Name] = k
				out = append(out, stranding{bundle: n.Name, version: versions[n.Name], at: at, gone: gone})
			}
			out[k].channels = append(out[k].channels, strandedIn{name: c.Name, noChannel: tg == nil})
		}
	}
	return out
}

// heldBelow are the bundles of pkg whose olm.maxOpenShiftVersion is older
// than the version of catalog toName: OLM, as it compares them, looks at
// the major and minor versions only, and reads the value tolerantly.
// A value that does not parse holds nothing.
func heldBelow(cfg *declcfg.DeclarativeConfig, pkg, toName string) map[string]bool {
	to, err := semver.ParseTolerant(toName)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, b := range cfg.Bundles {
		if b.Package != pkg {
			continue
		}
		for _, p := range b.Properties {
			if p.Type != property.TypeMaxOpenShiftVersion {
				continue
			}
			var s string
			if json.Unmarshal(p.Value, &s) != nil {
				break
			}
			max, err := semver.ParseTolerant(s)
			if err == nil && (max.Major < to.Major || max.Major == to.Major && max.Minor < to.Minor) {
				out[b.Name] = true
			}
			break
		}
	}
	return out
}

// holds says whether the catalog p has anything of package pkg.
func holds(p *fbc.Placed, pkg string) bool {
	if p == nil {
		return false
	}
	for _, x := range p.Config.Packages {
		if x.Name == pkg {
			return true
		}
	}
	for _, c := range p.Config.Channels {
		if c.Package == pkg {
			return true
		}
	}
	for _, b := range p.Config.Bundles {
		if b.Package == pkg {
			return true
		}
	}
	return false
}

// finding says which cluster upgrade strands the bundle and what to do.
func (s Step) finding(st stranding, pkg string) checks.Finding {
	installed := shown(st.bundle)
	if st.version != "" {
		installed += " (version " + shown(st.version) + ")"
	}
	var chs []string
	for _, c := range st.channels {
		chs = append(chs, c.name)
	}
	to := strings.TrimPrefix(platform(s.To), "OpenShift ")
	msg := fmt.Sprintf("a cluster upgraded from %s to %s with %s installed from %s finds no upgrade in catalog %s: ",
		platform(s.From), to, installed, channelList(chs), shown(s.To))
	// The one way to say that a release does not go on to the next
	// version, and that OLM enforces, is in the bundle itself.
	held := fmt.Sprintf("the property olm.maxOpenShiftVersion: %s in the CSV's olm.properties annotation, which holds a cluster that runs the bundle at %s and which this rule honours",
		strings.TrimPrefix(platform(s.From), "OpenShift "), platform(s.From))
	if st.gone {
		msg += fmt.Sprintf("package %s is in catalog %s on the base branch and this change takes it out; "+
			"if %s leaves %s on purpose, say so in its bundles with %s, or have a root approver approve; once merged, its absence from catalog %s is not judged again",
			shown(pkg), shown(s.To), shown(pkg), platform(s.To), held, shown(s.To))
	} else {
		var why []string
		for _, c := range st.channels {
			if c.noChannel {
				why = append(why, fmt.Sprintf("catalog %s has no channel %s", shown(s.To), shown(c.name)))
			} else {
				why = append(why, fmt.Sprintf("channel %s of catalog %s has neither it nor an entry that replaces or skips it or whose skipRange takes in its version", shown(c.name), shown(s.To)))
			}
		}
		msg += strings.Join(why, "; ") + fmt.Sprintf("; keep %s in catalog %s, or add there an entry that replaces it, skips it or covers its version with a skipRange; if it does not run on %s, say so with %s",
			shown(st.bundle), shown(s.To), platform(s.To), held)
	}
	return checks.Finding{Rule: RuleStranded, File: st.at.File, Line: st.at.Line, Package: pkg, Bundle: st.bundle, Message: msg}
}

// platform names the platform version a catalog of the series is for:
// "OpenShift 4.17" for catalog v4.17.
func platform(catalog string) string {
	v, err := semver.ParseTolerant(catalog)
	if err != nil {
		return "catalog " + shown(catalog)
	}
	if v.Patch != 0 {
		return fmt.Sprintf("OpenShift %d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("OpenShift %d.%d", v.Major, v.Minor)
}
