// Package olmv1 says what OLM v1 (operator-controller and catalogd) makes
// of a catalog that OLM v0 reads well. OLM v1 installs only a bundle that
// carries its manifests one way (olm.bundle.object or olm.csv.metadata,
// not neither, not both), supports the AllNamespaces install mode, and
// declares no dependency (olm.gvk.required, olm.package.required,
// olm.constraint), since v1 resolves none. An upstream survey found most
// community packages fail the first rule alone, so a repository that means
// to serve OLM v1 needs to know where it stands before its users do.
//
// Upgrades differ too. OLM v0 follows the channel: the entry that replaces
// or skips the installed bundle, the one nearest the channel's head when
// several do, and an entry whose skipRange takes the installed version in
// when none does. OLM v1 takes the highest semver among every entry whose
// replaces, skips or skipRange covers the installed bundle. Where the two
// differ, a cluster moved from v0 to v1 upgrades to another bundle than
// it would have; Check lists each such step.
//
// Check reads a catalog loaded whole (fbc.LoadPlacedWhole), since the
// rules read bundle properties that fbc.LoadPlaced drops. Every finding is
// placed on the bundle's blob (installability) or on the channel entry of
// the installed bundle (divergence). Whether a finding fails anything is
// the caller's decision.
package olmv1

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/checks/internal/textmemo"
)

// The OLM v1 readiness rules.
const (
	RuleContent     = "V1"
	RuleInstallMode = "V2"
	RuleDependency  = "V3"
	RuleDivergence  = "V4"
)

// Rules are the OLM v1 rules, for the rule catalogue.
var Rules = []checks.Rule{
	{ID: RuleContent, Name: "BundleContent", Description: "A bundle carries neither olm.bundle.object nor olm.csv.metadata properties, or both kinds: OLM v1 installs only a bundle with exactly one."},
	{ID: RuleInstallMode, Name: "AllNamespaces", Description: "A bundle's CSV does not support the AllNamespaces install mode, the only one OLM v1 installs."},
	{ID: RuleDependency, Name: "Dependency", Description: "A bundle declares olm.gvk.required, olm.package.required or olm.constraint: OLM v1 resolves no dependencies."},
	{ID: RuleDivergence, Name: "UpgradeDivergence", Description: "An installed bundle upgrades to another entry under OLM v1 (highest semver successor) than under OLM v0 (the channel's replaces and skips)."},
}

// TypeConstraint is the generic constraint property OLM v0 resolves and
// OLM v1 does not.
const TypeConstraint = "olm.constraint"

// Options tune Check.
type Options struct {
	// Packages are the packages judged; nil means every package that
	// the catalog names.
	Packages []string
	// Memo, when not nil, keeps what was read of each bundle for the
	// Checks that share it: a change to one package of a catalog per
	// OpenShift version holds the same bundles in each catalog, decoded
	// once under the review's cache (fbc.WithCache). Give every Check of
	// one review the same Memo.
	Memo *Memo
}

// Memo keeps the install modes read from bundles, by their property list
// as decoded: a bundle loaded once and placed in several catalogs is read
// once. Its zero value is ready to use; it holds what it read for its own
// life, so it lives as long as the loads it is given.
type Memo struct {
	mu    sync.Mutex
	modes map[memoKey]modesRead
}

// memoKey is a decoded property list: its first element and its length.
type memoKey struct {
	first *property.Property
	n     int
}

type modesRead struct {
	modes []string
	ok    bool
}

// installModes is installModes through the memo, when there is one.
func (m *Memo) installModes(b *declcfg.Bundle) ([]string, bool) {
	if m == nil || len(b.Properties) == 0 {
		return installModes(b)
	}
	k := memoKey{&b.Properties[0], len(b.Properties)}
	m.mu.Lock()
	r, ok := m.modes[k]
	m.mu.Unlock()
	if ok {
		return r.modes, r.ok
	}
	r.modes, r.ok = installModes(b)
	m.mu.Lock()
	if m.modes == nil {
		m.modes = map[memoKey]modesRead{}
	}
	m.modes[k] = r
	m.mu.Unlock()
	return r.modes, r.ok
}

// csvModes keeps what an olm.csv.metadata value says of install modes, by
// the SHA-256 of the value, for the process. Reading them decodes the whole
// value (a CSV's description, annotations and all): on a package of a
// hundred bundles that was most of the readiness's time in each of the
// App's checks, though a bundle's metadata does not change from one pull
// request to the next. Hashing the value costs a small part of decoding
// it. An entry holds a key and a few short strings, about 250 bytes, so
// the memo holds about 2 MiB at most: the bundles of the packages a
// process checks, not of a whole repository.
var csvModes = textmemo.New[modesRead](1 << 13)

// readModes is what read makes of the csv.metadata value text, once per
// text while csvModes keeps it. The slice is shared: callers do not change
// it.
func readModes(text []byte, read func() modesRead) modesRead {
	k := sha256.Sum256(text)
	if r, ok := csvModes.Get(k); ok {
		return r
	}
	r := read()
	csvModes.Put(k, r)
	return r
}

// Result is OLM v1's view of a catalog.
type Result struct {
	// Packages are the judged packages, sorted by name.
	Packages []Package `json:"packages"`
	// Findings are every bundle's installability findings and every
	// divergent upgrade, in file order. Installability findings are
	// errors and divergences notes; callers set the severity they want.
	Findings []checks.Finding `json:"findings"`
}

// Package is one package as OLM v1 sees it.
type Package struct {
	Name string `json:"name"`
	// Bundle is the bundle a ClusterExtension naming only the package
	// installs: the highest semver among the package's channel entries,
	// non-deprecated ones first. "" when the package has none.
	Bundle string `json:"bundle"`
	// Installable says whether OLM v1 installs Bundle; Why lists the
	// reasons it does not, one per rule broken.
	Installable bool     `json:"installable"`
	Why         []string `json:"why,omitempty"`
	// Bundles counts the package's bundles and InstallableBundles those
	// that break no rule.
	Bundles            int `json:"bundles"`
	InstallableBundles int `json:"installableBundles"`
	// Divergences are the upgrades that differ between OLM v0 and v1.
	Divergences []Step `json:"divergences,omitempty"`
}

// Step is the next version of an installed bundle in a channel under OLM
// v0 and under OLM v1; "" where there is none.
type Step struct {
	Channel string `json:"channel"`
	From    string `json:"from"`
	V0      string `json:"v0"`
	V1      string `json:"v1"`
}

// Check judges the packages of a catalog loaded whole.
func Check(p *fbc.Placed, opts Options) *Result {
	pkgs := opts.Packages
	if pkgs == nil {
		pkgs = names(&p.Config)
	}
	res := &Result{}
	for _, name := range pkgs {
		pkg, found := checkPackage(p, name, opts.Memo)
		res.Packages = append(res.Packages, pkg)
		res.Findings = append(res.Findings, found...)
	}
	slices.SortFunc(res.Packages, func(a, b Package) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(res.Findings, func(a, b checks.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule))
	})
	return res
}

// names are the packages the catalog's packages, channels and bundles
// name, sorted and unique.
func names(cfg *declcfg.DeclarativeConfig) []string {
	var out []string
	for _, p := range cfg.Packages {
		out = append(out, p.Name)
	}
	for _, c := range cfg.Channels {
		out = append(out, c.Package)
	}
	for _, b := range cfg.Bundles {
		out = append(out, b.Package)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func checkPackage(p *fbc.Placed, name string, memo *Memo) (Package, []checks.Finding) {
	pkg := Package{Name: name}
	var out []checks.Finding
	why := map[string][]string{}
	for i, b := range p.Config.Bundles {
		if b.Package != name {
			continue
		}
		pkg.Bundles++
		reasons := installability(&b, memo)
		if len(reasons) == 0 {
			pkg.InstallableBundles++
		}
		why[b.Name] = nil
		for _, r := range reasons {
			why[b.Name] = append(why[b.Name], r.Rule+" "+r.Reason)
			out = append(out, checks.Finding{
				Rule: r.Rule, Severity: checks.SeverityError,
				File: p.Bundles[i].File, Line: p.Bundles[i].Line,
				Package: name, Bundle: b.Name,
				Message: fmt.Sprintf("bundle %s %s; OLM v1 does not install it (%s)", b.Name, r.Reason, r.Fix),
			})
		}
	}
	versions := versionsOf(&p.Config, name)
	pkg.Bundle = defaultBundle(&p.Config, name, versions)
	if pkg.Bundle != "" {
		reasons, ok := why[pkg.Bundle]
		pkg.Installable = ok && len(reasons) == 0
		pkg.Why = reasons
		if !ok {
			pkg.Why = []string{"its bundle " + pkg.Bundle + " is not in the catalog"}
		}
	} else {
		pkg.Why = []string{"no channel entry with a semver version to install"}
	}
	for i, c := range p.Config.Channels {
		if c.Package != name {
			continue
		}
		for _, s := range upgrades(&p.Config, name, c.Name, versions) {
			if s.V0 == s.V1 {
				continue
			}
			pkg.Divergences = append(pkg.Divergences, s)
			at := p.EntryPlace(i, s.From)
			out = append(out, checks.Finding{
				Rule: RuleDivergence, Severity: checks.SeverityNote,
				File: at.File, Line: at.Line,
				Package: name, Channel: c.Name, Bundle: s.From,
				Message: fmt.Sprintf("in channel %s, %s upgrades to %s under OLM v0 but to %s under OLM v1, which takes the highest semver successor", c.Name, s.From, orNone(s.V0), orNone(s.V1)),
			})
		}
	}
	return pkg, out
}

func orNone(s string) string { return cmp.Or(s, "nothing") }

// Reason is one rule a bundle breaks for OLM v1.
type Reason struct {
	Rule string
	// Reason is what the bundle does, as a short clause ("declares
	// olm.gvk.required"); Fix is what to do instead.
	Reason, Fix string
}

// Installability lists the rules bundle b breaks for OLM v1, in rule
// order; none means OLM v1 installs it.
func Installability(b *declcfg.Bundle) []Reason { return installability(b, nil) }

// installability is Installability reading install modes through memo.
func installability(b *declcfg.Bundle, memo *Memo) []Reason {
	var objects, metadata int
	var deps []string
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypeBundleObject:
			objects++
		case property.TypeCSVMetadata:
			metadata++
		case property.TypeGVKRequired, property.TypePackageRequired, TypeConstraint:
			if !slices.Contains(deps, p.Type) {
				deps = append(deps, p.Type)
			}
		}
	}
	var out []Reason
	switch {
	case objects == 0 && metadata == 0:
		out = append(out, Reason{RuleContent, "carries neither olm.bundle.object nor olm.csv.metadata", "render the bundle with a current opm, which writes olm.csv.metadata"})
	case objects > 0 && metadata > 0:
		out = append(out, Reason{RuleContent, "carries both olm.bundle.object and olm.csv.metadata", "keep one kind: render the bundle again with a current opm"})
	}
	if modes, ok := memo.installModes(b); ok && !slices.Contains(modes, "AllNamespaces") {
		out = append(out, Reason{RuleInstallMode, "does not support the AllNamespaces install mode", "support AllNamespaces in the CSV's installModes"})
	}
	if len(deps) > 0 {
		out = append(out, Reason{RuleDependency, "declares " + strings.Join(deps, ", "), "OLM v1 resolves no dependencies: install them separately and drop the property"})
	}
	return out
}

// installModes are the install modes the bundle's CSV supports, read from
// its olm.csv.metadata, else from the ClusterServiceVersion among its
// olm.bundle.object manifests; false when neither is there to read.
func installModes(b *declcfg.Bundle) ([]string, bool) {
	type modes struct {
		InstallModes []struct {
			Type      string `json:"type"`
			Supported bool   `json:"supported"`
		} `json:"installModes"`
	}
	supported := func(m modes) []string {
		var out []string
		for _, im := range m.InstallModes {
			if im.Supported {
				out = append(out, im.Type)
			}
		}
		return out
	}
	for _, p := range b.Properties {
		if p.Type != property.TypeCSVMetadata {
			continue
		}
		if r := readModes(p.Value, func() (r modesRead) {
			var m modes
			if json.Unmarshal(p.Value, &m) == nil {
				r.modes, r.ok = supported(m), true
			}
			return r
		}); r.ok {
			return r.modes, true
		}
	}
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		// Decoded straight from the value's base64, without a copy of
		// its text.
		var obj property.BundleObject
		if json.Unmarshal(p.Value, &obj) != nil {
			continue
		}
		data := obj.Data
		var csv struct {
			Kind string `json:"kind"`
			Spec modes  `json:"spec"`
		}
		if readManifest(data, &csv) && csv.Kind == "ClusterServiceVersion" {
			return supported(csv.Spec), true
		}
	}
	return nil, false
}

// readManifest decodes the manifest data into v, as opm's loader reads
// one: JSON as JSON, anything else as YAML. A manifest that cannot name a
// ClusterServiceVersion is not decoded at all: a bundle's other manifests
// (a CRD, a large ConfigMap) are most of its bytes, and a YAML decoder
// holds many times what it reads. Without a backslash, which YAML's and
// JSON's escapes both need, the kind can only be spelled as its bytes.
func readManifest(data []byte, v any) bool {
	if !bytes.Contains(data, []byte("ClusterServiceVersion")) && !bytes.Contains(data, []byte{'\\'}) {
		return false
	}
	// encoding/json checks the whole text before it decodes a byte, so a
	// syntax error leaves v as it was, for the YAML reading.
	var syntax *json.SyntaxError
	if err := json.Unmarshal(data, v); !errors.As(err, &syntax) {
		return err == nil
	}
	return yaml.Unmarshal(data, v) == nil
}

// DefaultBundle is the bundle OLM v1 installs for a ClusterExtension that
// names only package pkg: the highest semver among the bundles the
// package's channels list, one that olm.deprecations does not retire
// first; "" when no entry has a version that parses.
func DefaultBundle(cfg *declcfg.DeclarativeConfig, pkg string) string {
	return defaultBundle(cfg, pkg, versionsOf(cfg, pkg))
}

// defaultBundle is DefaultBundle with pkg's versions read already.
func defaultBundle(cfg *declcfg.DeclarativeConfig, pkg string, versions map[string]semver.Version) string {
	deprecated := map[string]bool{}
	for _, d := range cfg.Deprecations {
		if d.Package != pkg {
			continue
		}
		for _, e := range d.Entries {
			if e.Reference.Schema == declcfg.SchemaBundle {
				deprecated[e.Reference.Name] = true
			}
		}
	}
	best := ""
	better := func(a, b string) bool {
		if deprecated[a] != deprecated[b] {
			return !deprecated[a]
		}
		if c := versions[a].Compare(versions[b]); c != 0 {
			return c > 0
		}
		return a < b
	}
	for _, c := range cfg.Channels {
		if c.Package != pkg {
			continue
		}
		for _, e := range c.Entries {
			if _, ok := versions[e.Name]; ok && (best == "" || better(e.Name, best)) {
				best = e.Name
			}
		}
	}
	return best
}

// versionsOf are the parsed olm.package versions of pkg's bundles, by
// name; a version that does not parse is left out.
func versionsOf(cfg *declcfg.DeclarativeConfig, pkg string) map[string]semver.Version {
	out := map[string]semver.Version{}
	for _, b := range cfg.Bundles {
		if b.Package != pkg {
			continue
		}
		for _, p := range b.Properties {
			if p.Type != property.TypePackage {
				continue
			}
			var v property.Package
			if json.Unmarshal(p.Value, &v) != nil {
				continue
			}
			if sv, err := semver.Parse(v.Version); err == nil {
				out[b.Name] = sv
			}
			break
		}
	}
	return out
}

// Upgrades is the next version of each entry of channel ch of package pkg
// under OLM v0 and under OLM v1, in entry order.
//
// Under OLM v0 it is the entry that replaces or skips the installed one,
// the one nearest the channel's head along its replaces chain when several
// do, and when none does, the entry nearest the head whose skipRange takes
// its version in. Under OLM v1 it is the entry with the highest semver
// among all whose replaces, skips or skipRange cover it.
func Upgrades(cfg *declcfg.DeclarativeConfig, pkg, ch string) []Step {
	return upgrades(cfg, pkg, ch, versionsOf(cfg, pkg))
}

// upgrades is Upgrades with pkg's versions read already: a package's
// channels share them, and reading them decodes every bundle's
// olm.package property.
func upgrades(cfg *declcfg.DeclarativeConfig, pkg, ch string, versions map[string]semver.Version) []Step {
	var c *declcfg.Channel
	for i := range cfg.Channels {
		if cfg.Channels[i].Package == pkg && cfg.Channels[i].Name == ch {
			c = &cfg.Channels[i]
			break
		}
	}
	if c == nil {
		return nil
	}
	ranges := map[string]semver.Range{}
	for _, e := range c.Entries {
		if r, err := semver.ParseRange(e.SkipRange); e.SkipRange != "" && err == nil {
			ranges[e.Name] = r
		}
	}
	rank := headRank(c)
	var out []Step
	seen := map[string]bool{}
	for _, x := range c.Entries {
		if seen[x.Name] {
			continue
		}
		seen[x.Name] = true
		xv, hasVersion := versions[x.Name]
		var direct, ranged, all []string
		for _, y := range c.Entries {
			if y.Name == x.Name || slices.Contains(all, y.Name) {
				continue
			}
			switch {
			case y.Replaces == x.Name || slices.Contains(y.Skips, x.Name):
				direct = append(direct, y.Name)
			case hasVersion && ranges[y.Name] != nil && ranges[y.Name](xv):
				ranged = append(ranged, y.Name)
			default:
				continue
			}
			all = append(all, y.Name)
		}
		s := Step{Channel: ch, From: x.Name}
		v0 := direct
		if len(v0) == 0 {
			v0 = ranged
		}
		for _, y := range v0 {
			if s.V0 == "" || rank(y) < rank(s.V0) {
				s.V0 = y
			}
		}
		for _, y := range all {
			yv, ok := versions[y]
			if !ok {
				continue // OLM v1 orders by version; an entry without one is never chosen
			}
			if s.V1 == "" || yv.GT(versions[s.V1]) {
				s.V1 = y
			}
		}
		out = append(out, s)
	}
	return out
}

// headRank returns how far each entry is from the channel's head along the
// replaces chain: the head is 0, what it replaces 1, and so on; entries off
// the chain come after every entry on it, in entry order.
func headRank(c *declcfg.Channel) func(string) int {
	incoming := map[string]bool{}
	byName := map[string]declcfg.ChannelEntry{}
	for _, e := range c.Entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
		if _, dup := byName[e.Name]; !dup {
			byName[e.Name] = e
		}
	}
	rank := map[string]int{}
	for _, e := range c.Entries {
		if incoming[e.Name] {
			continue
		}
		// A head; a valid channel has one.
		for n, name := 0, e.Name; name != ""; n++ {
			if _, done := rank[name]; done {
				break
			}
			rank[name] = n
			name = byName[name].Replaces
		}
	}
	off := len(c.Entries) + 1
	for i, e := range c.Entries {
		if _, ok := rank[e.Name]; !ok {
			rank[e.Name] = off + i
		}
	}
	return func(name string) int { return rank[name] }
}
