package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sync"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/release"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// listEntry is one entry of the reference list, on either side of the
// change, with what rendering its image gave on each side.
type listEntry struct {
	name string
	// change is owners.RefAdded, RefChanged or RefRemoved, or "" for an
	// entry the change leaves as it is.
	change string
	// head and base are the entry as each side lists it; nil on the side
	// it is not on.
	head, base *catalogyaml.Reference
	// headCfg and baseCfg are the entry's renderings on each side; nil
	// where it is not on that side or did not render.
	headCfg, baseCfg *declcfg.DeclarativeConfig
	// headOut and baseOut say how each render went. An unchanged entry is
	// rendered once, for both sides.
	headOut, baseOut renderOutcome
}

// line is where findings about the entry go: its image line on the head,
// else on the base.
func (e *listEntry) line() int {
	for _, r := range []*catalogyaml.Reference{e.head, e.base} {
		if r == nil {
			continue
		}
		if r.ImageLine != 0 {
			return r.ImageLine
		}
		return r.Line
	}
	return 0
}

// listRenders is the reference list of a change rendered whole: every
// entry of the head, and every entry of the base the head changed or
// removed, so that the checks judge the catalog the list assembles, as
// it will be published, rather than each entry alone. It is made once
// per Input (see Input.list) and shared by the owners check (which
// packages an entry brings), the references check (the assembled
// catalog validates) and the release guard (what an entry's new image
// takes away).
type listRenders struct {
	file string
	// dir and catalog make the paths entries are owned as:
	// <dir>/<catalog>/<entry>/index.yaml.
	dir, catalog string
	// entries are the head's entries in list order, then the entries the
	// change removes in the base's order.
	entries []*listEntry
}

// renderedList renders the reference list once per Input.
type renderedList struct {
	once sync.Once
	l    *listRenders
}

// list is the change's reference list rendered whole, or nil when there
// is nothing to render: no renderer, no list, or a change that leaves the
// list as it is or makes it unparseable (the references check reports
// that).
//
// Unchanged entries are rendered at the image the base names: pinned by
// digest, exactly what the base published; by tag, what the tag names
// now, which is what the next publish would take. The base's side of a
// changed or removed entry is rendered at its base image. Only the images
// the change adds count against limits.images: the others are the base's,
// already admitted when it merged, and are still held to the policy's
// allowlist and the egress rule.
func (in *Input) list(ctx context.Context) *listRenders {
	in.listOnce.once.Do(func() { in.listOnce.l = loadList(ctx, in) })
	return in.listOnce.l
}

func loadList(ctx context.Context, in *Input) *listRenders {
	in.bind()
	file := referenceList(in)
	if file == "" || in.Renderer == nil {
		return nil
	}
	head, err := readOptional(in.Head, file)
	if err != nil || head == nil {
		return nil
	}
	base, err := readOptional(in.Base, file)
	if err != nil || bytes.Equal(head, base) {
		return nil
	}
	hf, findings := catalogyaml.Parse(file, head)
	if hf == nil || checks.ConclusionOf(findings) == checks.Failure {
		// A list that does not parse is not assembled: the references
		// check fails on its findings.
		return nil
	}
	var bf *catalogyaml.File
	if base != nil {
		bf, _ = catalogyaml.Parse(file, base)
	}
	d := catalogyaml.DiffLists(base, head)
	changeOf := map[string]string{}
	for _, e := range d.Entries {
		changeOf[e.Name] = e.Change
	}
	l := &listRenders{file: file, dir: path.Dir(file), catalog: hf.Name}
	byName := map[string]*listEntry{}
	for i := range hf.References {
		r := &hf.References[i]
		if byName[r.Name] != nil {
			continue // the parser reports the duplicate
		}
		e := &listEntry{name: r.Name, change: changeOf[r.Name], head: r}
		byName[r.Name] = e
		l.entries = append(l.entries, e)
	}
	if bf != nil {
		for i := range bf.References {
			r := &bf.References[i]
			e := byName[r.Name]
			switch {
			case e == nil:
				e = &listEntry{name: r.Name, change: owners.RefRemoved, base: r}
				byName[r.Name] = e
				l.entries = append(l.entries, e)
			case e.base == nil:
				e.base = r
			}
		}
	}

	if limit := in.Policy.Limits.CheckTimeout; limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, &DeadlineError{Limit: limit})
		defer cancel()
	}
	// Each distinct image is rendered once. The images the change adds
	// go first, charged to the pass's image budget in list order.
	var jobs []renderJob
	seen := map[string]int{}
	add := func(r *catalogyaml.Reference, charged bool) {
		if _, ok := seen[r.Image]; ok || r.Image == "" {
			return
		}
		seen[r.Image] = len(jobs)
		jobs = append(jobs, renderJob{ref: *r, charged: charged})
	}
	for _, e := range l.entries {
		if e.head != nil && (e.change == owners.RefAdded || e.change == owners.RefChanged) {
			add(e.head, true)
		}
	}
	for _, e := range l.entries {
		if e.head != nil {
			add(e.head, false)
		}
		if e.base != nil {
			add(e.base, false)
		}
	}
	outs := renderAll(ctx, in, file, jobs)
	for _, e := range l.entries {
		if e.head != nil {
			if i, ok := seen[e.head.Image]; ok {
				e.headCfg, e.headOut = outs[i].cfg, outs[i].out
			}
		}
		if e.base != nil {
			if i, ok := seen[e.base.Image]; ok {
				e.baseCfg, e.baseOut = outs[i].cfg, outs[i].out
			}
		}
	}
	return l
}

// changed says whether the change adds or changes the entry on the head.
func (e *listEntry) changed() bool {
	return e.head != nil && (e.change == owners.RefAdded || e.change == owners.RefChanged)
}

// packagesOf lists the packages a rendering holds blobs of, sorted.
func packagesOf(cfg *declcfg.DeclarativeConfig) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range cfg.Packages {
		add(p.Name)
	}
	for _, c := range cfg.Channels {
		add(c.Package)
	}
	for _, b := range cfg.Bundles {
		add(b.Package)
	}
	for _, d := range cfg.Deprecations {
		add(d.Package)
	}
	for _, m := range cfg.Others {
		add(m.Package)
	}
	slices.Sort(out)
	return out
}

// packageTouches attributes the packages that each added or changed
// entry renders to owners (spec/owners.md sections 3 and 4): an entry
// brings what it held on the base under its own owners, and any other
// package P needs P's owners besides:
//
//   - the owners of the entry that holds P on the base, where one does
//     (P's home is that entry's directory, <catalog>/<holder>/);
//   - else, for a package new to the catalog, the owners of the path an
//     entry named P would be owned as, <catalog>/<P>/: the nearest OWNERS
//     files above it on the base, often the root's.
//
// So the owner of entry foo cannot bring bob's package bar in through
// foo's image: bar's owners must approve too, and the report names them.
// An entry that did not render brings nothing here; the references check
// waits or fails on it, so the change cannot merge anyway.
func (l *listRenders) packageTouches() []owners.PackageTouch {
	if l == nil {
		return nil
	}
	holder := map[string]string{}
	for _, e := range l.entries {
		for _, p := range packagesOf(e.baseCfg) {
			if _, ok := holder[p]; !ok {
				holder[p] = e.name
			}
		}
	}
	type key struct{ pkg, home string }
	touched := map[key]*owners.PackageTouch{}
	var order []key
	for _, e := range l.entries {
		if !e.changed() {
			continue
		}
		had := packagesOf(e.baseCfg)
		for _, p := range packagesOf(e.headCfg) {
			if slices.Contains(had, p) {
				continue
			}
			owner, held := holder[p]
			if !held {
				owner = p
			}
			if owner == e.name {
				continue
			}
			home := ""
			if plainName(l.catalog) && plainName(owner) {
				home = path.Join(l.dir, l.catalog, owner) + "/"
			}
			why := fmt.Sprintf("rendered by entry %q at %s:%d (%s)", e.name, l.file, e.line(), e.head.Image)
			if held {
				why += fmt.Sprintf("; entry %q holds it on the base", owner)
			} else {
				why += "; new to the catalog"
			}
			k := key{p, home}
			if t := touched[k]; t != nil {
				t.Why += "; " + why
				continue
			}
			touched[k] = &owners.PackageTouch{Name: p, Home: home, Files: []string{l.file}, Why: why}
			order = append(order, k)
		}
	}
	out := make([]owners.PackageTouch, 0, len(order))
	for _, k := range order {
		out = append(out, *touched[k])
	}
	slices.SortFunc(out, func(a, b owners.PackageTouch) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Home, b.Home))
	})
	return out
}

// entryDir is the directory an entry's rendering sits in within an
// assembled catalog, as the publisher lays it out and as the entry is
// owned: <catalog>/<entry>/, so that a finding that names a file names
// the one the publisher writes. A name that is not one directory name is
// replaced by one made from the entry's position.
func (l *listRenders) entryDir(i int, e *listEntry) string {
	dir := e.name
	if !plainName(dir) || !fs.ValidPath(dir) {
		dir = fmt.Sprintf("entry-%d", i+1)
	}
	if plainName(l.catalog) && fs.ValidPath(l.catalog) {
		dir = path.Join(l.catalog, dir)
	}
	return dir
}

// assembled is one side of the list as the publisher would assemble it:
// each entry's rendering in its own directory's index.yaml. byDir maps
// the directories back to the entries, to place findings on the list.
func (l *listRenders) assembled(head bool) (fstest.MapFS, map[string]*listEntry, error) {
	fsys := fstest.MapFS{}
	byDir := map[string]*listEntry{}
	for i, e := range l.entries {
		cfg := e.baseCfg
		if head {
			cfg = e.headCfg
		}
		if cfg == nil {
			continue
		}
		var buf bytes.Buffer
		if err := render.WriteYAML(&buf, cfg); err != nil {
			return nil, nil, fmt.Errorf("write out entry %q: %w", e.name, err)
		}
		dir := l.entryDir(i, e)
		fsys[dir+"/index.yaml"] = &fstest.MapFile{Data: buf.Bytes()}
		byDir[dir] = e
	}
	return fsys, byDir, nil
}

// onEntry places a finding about an assembled catalog on the list: on
// the image line of the entry whose rendering it is about, with what it
// says about the rendering kept.
func (l *listRenders) onEntry(f checks.Finding, byDir map[string]*listEntry, prefix string) checks.Finding {
	g := checks.Finding{Rule: f.Rule, Severity: f.Severity, File: l.file, Package: f.Package, Channel: f.Channel, Bundle: f.Bundle}
	if e := byDir[path.Dir(f.File)]; e != nil {
		g.Line = e.line()
		img := ""
		if e.head != nil {
			img = e.head.Image
		} else if e.base != nil {
			img = e.base.Image
		}
		g.Message = fmt.Sprintf("reference %q (%s): %s%s", e.name, img, prefix, f.Message)
		return g
	}
	g.Message = "the assembled catalog: " + prefix + f.Message
	return g
}

// release compares, for each entry the change changes or removes, the
// packages its base rendering holds in the base's assembled catalog with
// the same packages in the head's, as the release guard compares a
// catalog directory's (checks/release): a bundle the new image no longer
// has, or an upgrade edge it breaks, is a finding on the entry's line,
// whichever entry holds the package on the head. It returns the findings
// and how many packages it judged. Nothing is judged unless every entry
// of the head rendered: a package missing from an unrendered entry would
// count as removed, and the references check fails or waits on it.
func (l *listRenders) release(ctx context.Context, in *Input) ([]checks.Finding, int, error) {
	if l == nil {
		return nil, 0, nil
	}
	var pkgs []string
	for _, e := range l.entries {
		if e.head != nil && e.headCfg == nil {
			return nil, 0, nil
		}
		if e.change != owners.RefChanged && e.change != owners.RefRemoved {
			continue
		}
		for _, p := range packagesOf(e.baseCfg) {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(pkgs) == 0 {
		return nil, 0, nil
	}
	slices.Sort(pkgs)
	load := func(head bool) (*fbc.Placed, map[string]*listEntry, error) {
		fsys, dirs, err := l.assembled(head)
		if err != nil {
			return nil, nil, err
		}
		p, err := fbc.LoadPlaced(ctx, fsys)
		return p, dirs, err
	}
	base, baseDirs, err := load(false)
	if err != nil {
		return nil, 0, err
	}
	head, headDirs, err := load(true)
	if err != nil {
		return nil, 0, err
	}
	// Both sides name an entry's directory after its place in the list,
	// so one map places findings from either.
	dirs := maps.Clone(baseDirs)
	maps.Copy(dirs, headDirs)
	found := release.Check(base, head, release.Options{Packages: pkgs, Prunable: in.Policy.Release.PrunableChannel})
	out := make([]checks.Finding, 0, len(found))
	for _, f := range found {
		out = append(out, l.onEntry(f, dirs, ""))
	}
	return out, len(pkgs), nil
}
