package fbc

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/reference"
)

// problem is one rule violation. opm is the exact text opm would print for
// it (for model rules, the leaf of the error tree); message, when set, is a
// clearer text for people.
type problem struct {
	rule    string
	phase   int
	at      pos
	pkg     string
	channel string
	bundle  string
	opm     string
	message string
	// needle, when set, narrows the line to the first line of the blob that
	// contains it.
	needle string
}

// The three phases of opm validate: load (fail fast), convert to the model
// (fail fast) and model validation (aggregated into a tree).
const (
	phaseLoad = iota + 1
	phaseConvert
	phaseModel
)

type mPackage struct {
	name       string
	at         pos
	defaultCh  *mChannel
	channels   map[string]*mChannel
	deprecated *string
	depAt      pos
}

type mChannel struct {
	pkg        *mPackage
	name       string
	at         pos
	bundles    map[string]*mBundle
	deprecated *string
	depAt      pos
	// invented marks the empty default channel opm adds when the package's
	// defaultChannel names no channel (C20).
	invented bool
}

type mBundle struct {
	entry declcfg.ChannelEntry
	ch    *mChannel
	blob  *bundleRec
	// ok is set once the blob passed every conversion check, so version
	// and release are meaningful.
	ok         bool
	version    semver.Version
	release    []semver.PRVersion
	deprecated *string
	depAt      pos
	// leftover marks an entry already reported by C19.
	leftover bool
}

// model is the package -> channel -> bundle graph built by conversion.
type model struct {
	packages map[string]*mPackage
}

// convert runs opm's ConvertToModel checks (spec C1-C29) over the records in
// load order. opm returns at the first failure; here every failure is
// recorded and the offending item skipped, so the first problem is opm's and
// the rest are what opm would only report on later runs.
func convert(cat *catalog) (*model, []problem) {
	var probs []problem
	add := func(p problem) { p.phase = phaseConvert; probs = append(probs, p) }

	m := &model{packages: map[string]*mPackage{}}
	defaults := map[string]string{}
	for _, f := range cat.files {
		for i := range f.packages {
			p := &f.packages[i]
			if p.name == "" {
				add(problem{rule: "C1", at: p.pos, opm: "config contains package with no name"})
				continue
			}
			if _, ok := m.packages[p.name]; ok {
				add(problem{rule: "C2", at: p.pos, pkg: p.name, opm: fmt.Sprintf("duplicate package %q", p.name),
					message: fmt.Sprintf("duplicate package %q: it is already defined in %s", p.name, m.packages[p.name].at.File)})
				continue
			}
			if errs := labelErrors(p.name); len(errs) > 0 {
				add(problem{rule: "C3", at: p.pos, pkg: p.name, needle: "name", opm: fmt.Sprintf("invalid package name %q: %v", p.name, errs)})
			}
			defaults[p.name] = p.defaultChannel
			m.packages[p.name] = &mPackage{name: p.name, at: p.pos, channels: map[string]*mChannel{}}
		}
	}

	// leftover holds, per package, the entries of its last channel that no
	// bundle blob has claimed yet. opm overwrites it with each channel, so
	// only the last channel's missing bundles fail here (C19).
	leftover := map[string]map[string]bool{}
	lastChannel := map[string]*mChannel{}
	for _, f := range cat.files {
		for i := range f.channels {
			c := &f.channels[i]
			mp, ok := m.packages[c.pkg]
			if !ok {
				add(problem{rule: "C4", at: c.pos, pkg: c.pkg, channel: c.name, needle: "package",
					opm: fmt.Sprintf("unknown package %q for channel %q", c.pkg, c.name)})
				continue
			}
			if c.name == "" {
				add(problem{rule: "C5", at: c.pos, pkg: c.pkg, opm: fmt.Sprintf("package %q contains channel with no name", c.pkg)})
				continue
			}
			if _, ok := mp.channels[c.name]; ok {
				add(problem{rule: "C6", at: c.pos, pkg: c.pkg, channel: c.name,
					opm: fmt.Sprintf("package %q has duplicate channel %q", c.pkg, c.name)})
				continue
			}
			ch := &mChannel{pkg: mp, name: c.name, at: c.pos, bundles: map[string]*mBundle{}}
			names := map[string]bool{}
			for _, e := range c.entries {
				if _, dup := ch.bundles[e.Name]; dup {
					add(problem{rule: "C7", at: c.pos, pkg: c.pkg, channel: c.name, bundle: e.Name, needle: field("name", e.Name),
						opm: fmt.Sprintf("invalid package %q, channel %q: duplicate entry %q", c.pkg, c.name, e.Name)})
					continue
				}
				names[e.Name] = true
				ch.bundles[e.Name] = &mBundle{entry: e, ch: ch}
			}
			leftover[c.pkg] = names
			lastChannel[c.pkg] = ch
			mp.channels[c.name] = ch
			if defaults[c.pkg] == c.name {
				mp.defaultCh = ch
			}
		}
	}

	blobs := map[string]map[string]bool{}
	for _, f := range cat.files {
		for i := range f.bundles {
			b := &f.bundles[i]
			if b.pkg == "" {
				add(problem{rule: "C8", at: b.pos, bundle: b.name, opm: fmt.Sprintf("package name must be set for bundle %q", b.name)})
				continue
			}
			mp, ok := m.packages[b.pkg]
			if !ok {
				add(problem{rule: "C9", at: b.pos, pkg: b.pkg, bundle: b.name, needle: "package",
					opm: fmt.Sprintf("unknown package %q for bundle %q", b.pkg, b.name)})
				continue
			}
			if blobs[b.pkg][b.name] {
				add(problem{rule: "C10", at: b.pos, pkg: b.pkg, bundle: b.name,
					opm: fmt.Sprintf("package %q has duplicate bundle %q", b.pkg, b.name)})
				continue
			}
			if blobs[b.pkg] == nil {
				blobs[b.pkg] = map[string]bool{}
			}
			blobs[b.pkg][b.name] = true

			ok = convertBundle(b, add)
			var ver semver.Version
			var rel []semver.PRVersion
			if ok {
				ver, _ = semver.Parse(b.packages[0].Version)
				if r := b.packages[0].Release; r != "" {
					rel, _ = parseRelease(r)
				}
			}
			delete(leftover[b.pkg], b.name)
			found := false
			for _, ch := range mp.channels {
				if mb, in := ch.bundles[b.name]; in {
					found = true
					mb.blob, mb.ok, mb.version, mb.release = b, ok, ver, rel
				}
			}
			if !found {
				add(problem{rule: "C18", at: b.pos, pkg: b.pkg, bundle: b.name,
					opm:     fmt.Sprintf("package %q, bundle %q not found in any channel entries", b.pkg, b.name),
					message: fmt.Sprintf("bundle %q is not an entry of any channel of package %q", b.name, b.pkg)})
			}
		}
	}

	pkgNames := slices.Sorted(maps.Keys(leftover))
	for _, pkg := range pkgNames {
		if len(leftover[pkg]) == 0 {
			continue
		}
		missing := slices.Sorted(maps.Keys(leftover[pkg]))
		ch := lastChannel[pkg]
		add(problem{rule: "C19", at: ch.at, pkg: pkg, channel: ch.name, needle: field("name", missing[0]),
			opm:     fmt.Sprintf("no olm.bundle blobs found in package %q for olm.channel entries %s", pkg, missing),
			message: fmt.Sprintf("channel entries without an olm.bundle blob: %s", strings.Join(missing, ", "))})
		for _, name := range missing {
			ch.bundles[name].leftover = true
		}
	}

	for _, mp := range m.packages {
		if d := defaults[mp.name]; d != "" && mp.defaultCh == nil {
			ch := &mChannel{pkg: mp, name: d, at: mp.at, bundles: map[string]*mBundle{}, invented: true}
			mp.defaultCh = ch
			mp.channels[d] = ch
		}
	}

	seenDep := map[string]bool{}
	i := 0
	for _, f := range cat.files {
		for k := range f.deps {
			d := &f.deps[k]
			convertDeprecation(m, d, i, blobs, seenDep, add)
			i++
		}
	}
	return m, probs
}

// convertBundle runs the per-bundle checks C11-C17 and reports whether the
// bundle's version and release are usable.
func convertBundle(b *bundleRec, add func(problem)) bool {
	p := problem{at: b.pos, pkg: b.pkg, bundle: b.name}
	with := func(rule, needle, opm string) problem {
		q := p
		q.rule, q.needle, q.opm = rule, needle, opm
		return q
	}
	if b.propErr != nil {
		add(with("C11", "properties", fmt.Sprintf("parse properties for bundle %q: %v", b.name, b.propErr)))
		return false
	}
	if len(b.packages) != 1 {
		add(with("C12", "properties", fmt.Sprintf("package %q bundle %q must have exactly 1 %q property, found %d", b.pkg, b.name, "olm.package", len(b.packages))))
		return false
	}
	ok := true
	if b.pkg != b.packages[0].PackageName {
		add(with("C13", field("packageName", b.packages[0].PackageName), fmt.Sprintf("package %q does not match %q property %q", b.pkg, "olm.package", b.packages[0].PackageName)))
		ok = false
	}
	if b.image != "" {
		if err := reference.Validate(b.image); err != nil {
			add(with("C14", field("image", b.image), fmt.Sprintf("package %q bundle %q image: invalid image pull spec %q: %v", b.pkg, b.name, b.image, err)))
			ok = false
		}
	}
	for i, ri := range b.related {
		if ri.Image == "" {
			continue
		}
		if err := reference.Validate(ri.Image); err != nil {
			add(with("C15", field("image", ri.Image), fmt.Sprintf("package %q bundle %q relatedImages[%d].image: invalid image pull spec %q: %v", b.pkg, b.name, i, ri.Image, err)))
			ok = false
		}
	}
	v := b.packages[0].Version
	if _, err := semver.Parse(v); err != nil {
		add(with("C16", field("version", v), fmt.Sprintf("error parsing bundle %q version %q: %v", b.name, v, err)))
		ok = false
	}
	if r := b.packages[0].Release; r != "" {
		if _, err := parseRelease(r); err != nil {
			add(with("C17", field("release", r), fmt.Sprintf("error parsing bundle %q release version %q: %v", b.name, r, err)))
			ok = false
		}
	}
	return ok
}

// convertDeprecation applies one olm.deprecations blob (C21-C29); i is its
// index among all deprecation blobs in load order.
func convertDeprecation(m *model, d *depRec, i int, blobs map[string]map[string]bool, seen map[string]bool, add func(problem)) {
	p := problem{at: d.pos, pkg: d.pkg}
	with := func(rule, needle, opm string) problem {
		q := p
		q.rule, q.needle, q.opm = rule, needle, opm
		return q
	}
	if d.pkg == "" {
		add(with("C21", "", fmt.Sprintf("package name must be set for deprecation item %v", i)))
		return
	}
	mp, ok := m.packages[d.pkg]
	if !ok {
		add(with("C22", "package", fmt.Sprintf("cannot apply deprecations to an unknown package %q", d.pkg)))
		return
	}
	if seen[d.pkg] {
		add(with("C23", "", fmt.Sprintf("expected a maximum of one deprecation per package: %q", d.pkg)))
		return
	}
	seen[d.pkg] = true
	refs := map[declcfg.PackageScopedReference]bool{}
	for j, e := range d.entries {
		msg := e.Message
		ref := e.Reference
		if ref.Schema == "" {
			add(with("C24", "", fmt.Sprintf("schema must be set for deprecation entry [%v] for package %q", j, d.pkg)))
			continue
		}
		if refs[ref] {
			add(with("C25", field("name", ref.Name), fmt.Sprintf("duplicate deprecation entry %#v for package %q", ref, d.pkg)))
			continue
		}
		refs[ref] = true
		switch ref.Schema {
		case declcfg.SchemaBundle:
			if !blobs[d.pkg][ref.Name] {
				add(with("C26", field("name", ref.Name), fmt.Sprintf("cannot deprecate bundle %q for package %q: bundle not found", ref.Name, d.pkg)))
				continue
			}
			for _, ch := range mp.channels {
				if mb, ok := ch.bundles[ref.Name]; ok {
					mb.deprecated, mb.depAt = &msg, d.pos
				}
			}
		case declcfg.SchemaChannel:
			ch, ok := mp.channels[ref.Name]
			if !ok {
				add(with("C27", field("name", ref.Name), fmt.Sprintf("cannot deprecate channel %q for package %q: channel not found", ref.Name, d.pkg)))
				continue
			}
			ch.deprecated, ch.depAt = &msg, d.pos
		case declcfg.SchemaPackage:
			if ref.Name != "" {
				add(with("C28", field("name", ref.Name), fmt.Sprintf("package name must be empty for deprecated package %q (specified %q)", d.pkg, ref.Name)))
				continue
			}
			mp.deprecated, mp.depAt = &msg, d.pos
		default:
			add(with("C29", field("schema", ref.Schema), fmt.Sprintf("cannot deprecate object %#v referenced by entry %v for package %q: object schema unknown", ref, j, d.pkg)))
		}
	}
}
