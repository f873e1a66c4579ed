// Package propose turns released bundle images into pull requests: for
// every repository the policy's propose list watches, it finds the tags
// that are newer releases than the package's channel heads, renders each
// bundle image pinned by digest as opm render does, places the olm.bundle
// blob and the channel entries that make it the new head, and writes one
// commit per package on a branch. Each commit is judged by the one review
// core (review.Evaluate, as catalogbot check judges a pull request) before
// the branch takes it: a proposal that would fail its check is refused with
// the check's findings, never written.
//
// Only the git object store and the branch's reference are written; the
// work tree and the index are never touched, so a clone in use is safe.
// A package whose catalog a template renders gets its releases in the
// template, and its outputs regenerated from it.
package propose

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// Options say where and how to propose. Zero values are documented.
type Options struct {
	// Repo is the git repository (a work tree or a bare repository);
	// Rev the commit proposals start from ("" for HEAD). The policy is
	// read from Rev.
	Repo, Rev string
	// Branch is created at Rev and takes one commit per package; it must
	// not exist yet. Required unless DryRun or Detached.
	Branch string
	// Detached writes the commits (each on the one before, as on a
	// branch) but no reference: the caller takes them from
	// Added[].Commit. The App does, to send them to GitHub.
	Detached bool
	// Packages, when set, are the only watched packages proposed for;
	// the others are left alone. The App proposes one package at a
	// time, so that each has a pull request of its own.
	Packages []string
	// DryRun plans and renders but writes nothing, and so runs no check.
	DryRun bool
	// Author is the login the check judges the proposal as: a bot the
	// policy lists, or the user proposing. "" is the first of the
	// policy's owners.bots, else "catalogbot".
	Author string
	// Registry reaches the watched repositories; Images and Renderer are
	// the check's (review.PR), Renderer also rendering the bundles.
	Registry Registry
	Images   *images.Options
	Renderer *render.Renderer
	// Now is the clock of soak and of commit times (default time.Now).
	Now func() time.Time
}

// Added is one bundle version proposed, a row of -o json.
type Added struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// Image is the bundle pinned by digest, as the catalog holds it.
	Image  string `json:"image"`
	Digest string `json:"digest"`
	// Tag is the tag it was released under.
	Tag      string   `json:"tag"`
	Catalogs []string `json:"catalogs"`
	Channels []string `json:"channels"`
	// Branch and Commit are empty on a dry run and for a refusal.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Message and Body are the package's commit message and pull
	// request body.
	Message string `json:"message"`
	Body    string `json:"body"`
	// Refused says why the package's proposal was not written; Findings
	// are the check's errors, each with file and line.
	Refused  string           `json:"refused,omitempty"`
	Findings []checks.Finding `json:"findings,omitempty"`
}

// Result is what one run proposed.
type Result struct {
	Base   string  `json:"base"`
	Branch string  `json:"branch,omitempty"`
	Added  []Added `json:"added"`
	// Skipped are tags passed over, each with why: not pullable, not
	// soaked yet, not a bundle.
	Skipped []string `json:"skipped,omitempty"`
	// Problems are packages nothing could be proposed for, each with
	// why: a registry that could not be listed, a channel that is not
	// there, a template.
	Problems []string `json:"problems,omitempty"`
	// Seen are the releases newer than the package's channel heads
	// found in the registry, whatever became of them (proposed, not yet
	// pullable or soaked, refused): what the App's missing-proposal
	// alarm counts from.
	Seen []Seen `json:"seen,omitempty"`
}

// Seen is one release found that the catalog does not hold yet.
type Seen struct {
	Package string `json:"package"`
	Version string `json:"version"`
	Tag     string `json:"tag"`
}

// Run proposes every new release of the policy's watched repositories.
// Problems with one package (a tag that cannot be read, a channel that is
// not there, a proposal the check refuses) are in the Result; the error
// is for failures that leave nothing to propose (no repository, an
// invalid policy, a branch that exists).
func Run(ctx context.Context, o Options) (*Result, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	repo, err := change.Open(o.Repo)
	if err != nil {
		return nil, err
	}
	baseSHA, err := change.Resolve(repo, cmp.Or(o.Rev, "HEAD"))
	if err != nil {
		return nil, err
	}
	base, err := repo.CommitObject(plumbing.NewHash(baseSHA))
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", change.ShortSHA(baseSHA), err)
	}
	baseFS, err := change.TreeFS(repo, baseSHA)
	if err != nil {
		return nil, err
	}
	pol, findings, err := policy.Load(baseFS)
	if err != nil {
		return nil, err
	}
	if len(findings) > 0 {
		return nil, &PolicyError{Findings: findings}
	}
	if len(pol.Propose) == 0 {
		return nil, fmt.Errorf("%s at %s watches no bundle repositories: add a propose list (docs/proposals.md)", policy.FileName, change.ShortSHA(baseSHA))
	}
	targets, err := pol.Targets(baseFS)
	if err != nil {
		return nil, err
	}
	var ref plumbing.ReferenceName
	if !o.DryRun && !o.Detached {
		if o.Branch == "" {
			return nil, errors.New("a branch to write the proposals on is needed (or a dry run)")
		}
		ref = plumbing.NewBranchReferenceName(o.Branch)
		if err := ref.Validate(); err != nil {
			return nil, fmt.Errorf("branch %q: %w", o.Branch, err)
		}
		if _, err := repo.Reference(ref, false); err == nil {
			return nil, fmt.Errorf("branch %s exists; propose creates it from %s", o.Branch, change.ShortSHA(baseSHA))
		}
	}
	author := o.Author
	if author == "" {
		author = "catalogbot"
		if len(pol.Owners.Bots) > 0 {
			author = pol.Owners.Bots[0]
		}
	}

	res := &Result{Base: baseSHA}
	parent, tree := base, baseFS
	for _, w := range pol.Propose {
		if o.Packages != nil && !slices.Contains(o.Packages, w.Package) {
			continue
		}
		// Each package is planned on the commit before it, so that two
		// packages in one file (the free layout) keep both edits.
		p, err := plan(ctx, o, pol, targets, tree, w, now())
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", w.Package, err))
			continue
		}
		res.Skipped = append(res.Skipped, p.skipped...)
		res.Seen = append(res.Seen, p.seen...)
		msg, body := p.describe(w)
		rows := p.rows(w.Channels, msg, body)
		if len(rows) == 0 {
			continue
		}
		if o.DryRun {
			res.Added = append(res.Added, rows...)
			continue
		}
		sig := object.Signature{Name: "catalogbot", Email: "catalogbot@users.noreply.github.com", When: now().UTC().Truncate(time.Second)}
		commit, err := writeCommit(repo, parent, p.edits, msg+"\n\n"+body, sig)
		if err != nil {
			return nil, err
		}
		refused, fs, err := judge(ctx, o, baseSHA, commit.String(), author)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if refused != "" {
				rows[i].Refused, rows[i].Findings = refused, fs
				continue
			}
			rows[i].Branch, rows[i].Commit = o.Branch, commit.String()
			if o.Detached {
				rows[i].Branch = ""
			}
		}
		res.Added = append(res.Added, rows...)
		if refused != "" {
			continue
		}
		if parent, err = repo.CommitObject(commit); err != nil {
			return nil, err
		}
		if tree, err = change.TreeFS(repo, commit.String()); err != nil {
			return nil, err
		}
	}
	if !o.DryRun && !o.Detached && parent.Hash != base.Hash {
		if err := repo.Storer.SetReference(plumbing.NewHashReference(ref, parent.Hash)); err != nil {
			return nil, fmt.Errorf("create branch %s: %w", o.Branch, err)
		}
		res.Branch = o.Branch
	}
	return res, nil
}

// PolicyError says the policy at the revision is invalid.
type PolicyError struct{ Findings []checks.Finding }

func (e *PolicyError) Error() string {
	var b strings.Builder
	b.WriteString("the policy is invalid:")
	for _, f := range e.Findings {
		fmt.Fprintf(&b, "\n%s:%d: %s", f.File, f.Line, f.Message)
	}
	return b.String()
}

// judge runs the review core on the commit as catalogbot check would on a
// pull request from base to it, and says why the proposal is refused (""
// when it is not). The owners check is left out of the verdict: a
// proposal waits for its package's owners to approve it, like any pull
// request; every other check must pass.
func judge(ctx context.Context, o Options, base, head, author string) (string, []checks.Finding, error) {
	c, baseFS, headFS, err := change.FromGit(o.Repo, base, head)
	if err != nil {
		return "", nil, err
	}
	c.Author = author
	out, err := review.Evaluate(ctx, &review.PR{Change: c, Base: baseFS, Head: headFS, ImageOptions: o.Images, Renderer: o.Renderer})
	if err != nil {
		return "", nil, err
	}
	if !out.Valid() {
		return "the policy is invalid", out.PolicyFindings, nil
	}
	var why []string
	var found []checks.Finding
	for _, r := range out.Report.Results {
		if r.Name == pipeline.OwnersName {
			continue
		}
		switch r.Conclusion {
		case checks.Failure:
			why = append(why, "the "+r.Name+" check fails")
			for _, f := range r.Findings {
				if f.Severity == checks.SeverityError {
					found = append(found, f)
				}
			}
		case checks.Pending:
			var waits []string
			for _, w := range r.Waits {
				waits = append(waits, w.String())
			}
			why = append(why, fmt.Sprintf("the %s check could not judge (%s)", r.Name, strings.Join(waits, "; ")))
		}
	}
	return strings.Join(why, "; "), found, nil
}

// placed is one package's proposal.
type placed struct {
	pkg     string
	added   []bundle
	edits   map[string][]byte
	skipped []string
	seen    []Seen
	// places say, per catalog, what went where.
	places []place
}

// bundle is one release rendered.
type bundle struct {
	tag     tag
	image   string
	digest  string
	blob    declcfg.Bundle
	catalog []string
}

// place is what one catalog got.
type place struct {
	catalog string
	where   string   // the catalog as the body names it
	bundles []string // the new bundles' files
	files   []string // the files of the channels
	graphs  []string // "stable: a → c (file)"
	// template, when set, took the release, and files are its
	// regenerated outputs.
	template string
}

// plan finds the new releases of w and places them in every catalog
// that holds the package.
func plan(ctx context.Context, o Options, pol *policy.Policy, targets []policy.Target, tree fs.FS, w policy.Proposal, now time.Time) (*placed, error) {
	type home struct {
		target policy.Target
		dir    string // the package's directory
		files  []string
		heads  map[string]channelHead
		top    semver.Version
		// have are the versions of the package's bundles, in any
		// channel: a release already there is not added twice.
		have map[string]string
		// cfg is what the package's files hold; template, when set,
		// renders dir.
		cfg      *declcfg.DeclarativeConfig
		template *policy.Template
	}
	var homes []home
	for _, t := range targets {
		h := home{target: t, heads: map[string]channelHead{}, have: map[string]string{}}
		for _, root := range t.Roots {
			sub, err := fs.Sub(tree, root)
			if err != nil {
				return nil, err
			}
			places, err := fbc.Mentions(ctx, sub)
			if err != nil {
				return nil, err
			}
			for _, pl := range places[w.Package] {
				f := path.Join(root, pl.File)
				if !slices.Contains(h.files, f) {
					h.files = append(h.files, f)
				}
			}
		}
		if len(h.files) == 0 {
			continue
		}
		h.dir = packageDir(pol, t, h.files)
		tm, err := templateOf(pol, h.dir)
		if err != nil {
			return nil, err
		}
		h.template = tm
		cfg, err := loadFiles(ctx, tree, h.files)
		if err != nil {
			return nil, err
		}
		h.cfg = cfg
		for _, b := range cfg.Bundles {
			if v, ok := versionOf(b); ok && b.Package == w.Package {
				h.have[v.String()] = b.Name
			}
		}
		for _, ch := range w.Channels {
			hd, err := headOf(cfg, w.Package, ch)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", catalogName(t), err)
			}
			h.heads[ch] = hd
			if hd.version.GT(h.top) {
				h.top = hd.version
			}
		}
		homes = append(homes, h)
	}
	if len(homes) == 0 {
		return nil, fmt.Errorf("no catalog holds package %s; propose adds releases to packages that exist", w.Package)
	}
	lowest := homes[0].top
	for _, h := range homes[1:] {
		if h.top.LT(lowest) {
			lowest = h.top
		}
	}
	tags, err := o.Registry.list(ctx, w.Repository)
	if err != nil {
		return nil, err
	}
	p := &placed{pkg: w.Package, edits: map[string][]byte{}}
	// Templates edited so far: one template may render several catalogs
	// (fbc.catalog_mapping), and takes the releases once.
	edited := map[string]bool{}
	for _, t := range releases(tags, w.Prereleases) {
		if !t.Version.GT(lowest) {
			continue
		}
		p.seen = append(p.seen, Seen{Package: w.Package, Version: t.Version.String(), Tag: t.Tag})
		digest, created, err := o.Registry.resolve(ctx, w.Repository, t.Tag, w.Soak > 0)
		if err != nil {
			p.skipped = append(p.skipped, fmt.Sprintf("%s:%s: not pullable: %v", w.Repository, t.Tag, err))
			continue
		}
		if w.Soak > 0 && (created == nil || now.Sub(created.Time) < w.Soak) {
			p.skipped = append(p.skipped, fmt.Sprintf("%s:%s: released less than %s ago (soak)", w.Repository, t.Tag, w.Soak))
			continue
		}
		image := w.Repository + "@" + digest.String()
		cfg, err := o.Renderer.Render(ctx, image)
		if err != nil {
			p.skipped = append(p.skipped, fmt.Sprintf("%s:%s: %v", w.Repository, t.Tag, err))
			continue
		}
		if len(cfg.Bundles) != 1 {
			p.skipped = append(p.skipped, fmt.Sprintf("%s:%s: %s is not a bundle image", w.Repository, t.Tag, image))
			continue
		}
		p.added = append(p.added, bundle{tag: t, image: image, digest: digest.String(), blob: cfg.Bundles[0]})
	}
	if len(p.added) == 0 {
		return p, nil
	}
	for _, h := range homes {
		var news []*bundle
		for i := range p.added {
			b := &p.added[i]
			if !b.tag.Version.GT(h.top) {
				continue
			}
			if name, ok := h.have[b.tag.Version.String()]; ok {
				p.skipped = append(p.skipped, fmt.Sprintf("%s:%s: %s has version %s already as %s; propose does not add a bundle to another channel",
					w.Repository, b.tag.Tag, catalogName(h.target), b.tag.Version, name))
				continue
			}
			news = append(news, b)
		}
		if len(news) == 0 {
			continue
		}
		pl := place{catalog: catalogName(h.target), where: strings.Join(h.target.Roots, ", ")}
		if h.target.Name != "" {
			pl.where = fmt.Sprintf("catalog %s (%s)", h.target.Name, pl.where)
		}
		if h.template != nil {
			if err := p.placeInTemplate(ctx, o, tree, w, h.template, h.heads, h.cfg, h.files, news, edited, &pl); err != nil {
				return nil, err
			}
			p.places = append(p.places, pl)
			continue
		}
		// Each new bundle goes in a file of its own in the package's
		// directory: nothing the package already holds is rewritten
		// for it.
		for _, b := range news {
			var buf bytes.Buffer
			if err := render.WriteYAML(&buf, &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{b.blob}}); err != nil {
				return nil, err
			}
			file := path.Join(h.dir, b.blob.Name+".yaml")
			if _, err := fs.Stat(tree, file); err == nil {
				return nil, fmt.Errorf("%s exists already", file)
			}
			p.edits[file] = buf.Bytes()
			pl.bundles = append(pl.bundles, file)
			b.catalog = append(b.catalog, pl.catalog)
		}
		for _, ch := range w.Channels {
			entries, graph := chainOf(w.Graph, ch, h.heads[ch], news)
			file, data, err := editChannel(tree, p.edits, h.files, w.Package, ch, entries)
			if err != nil {
				return nil, err
			}
			p.edits[file] = data
			if !slices.Contains(pl.files, file) {
				pl.files = append(pl.files, file)
			}
			pl.graphs = append(pl.graphs, graph)
		}
		p.places = append(p.places, pl)
	}
	return p, nil
}

// chainOf is how news join channel ch from its head hd: the entries, in
// version order, each replacing the one before (and under GraphSkipRange
// skipping every version from it), and the line the body shows for it.
func chainOf(graph, ch string, hd channelHead, news []*bundle) ([]declcfg.ChannelEntry, string) {
	prev, prevVersion := hd.name, hd.version
	var entries []declcfg.ChannelEntry
	chain := []string{prev}
	for _, b := range news {
		e := declcfg.ChannelEntry{Name: b.blob.Name, Replaces: prev}
		if graph == policy.GraphSkipRange {
			e.SkipRange = fmt.Sprintf(">=%s <%s", prevVersion, b.tag.Version)
		}
		entries = append(entries, e)
		prev, prevVersion = b.blob.Name, b.tag.Version
		chain = append(chain, b.blob.Name)
	}
	return entries, fmt.Sprintf("%s: %s → %s (%s)", ch, hd.name, prev, strings.Join(chain, " → "))
}

// editChannel adds entries to the channel in whichever of files holds it,
// edits made so far included.
func editChannel(tree fs.FS, edits map[string][]byte, files []string, pkg, ch string, entries []declcfg.ChannelEntry) (string, []byte, error) {
	for _, f := range files {
		if !isCatalogFile(f) {
			continue
		}
		data, err := readEdited(tree, edits, f)
		if err != nil {
			return "", nil, err
		}
		out, err := addEntries(f, data, pkg, ch, entries)
		if errors.Is(err, errNotHere) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return f, out, nil
	}
	return "", nil, fmt.Errorf("channel %s of package %s is in none of its files", ch, pkg)
}

// channelHead is a channel's head and its version.
type channelHead struct {
	name    string
	version semver.Version
}

// headOf finds the head of a package's channel: the one entry that no
// other replaces or skips.
func headOf(cfg *declcfg.DeclarativeConfig, pkg, channel string) (channelHead, error) {
	i := slices.IndexFunc(cfg.Channels, func(c declcfg.Channel) bool { return c.Package == pkg && c.Name == channel })
	if i < 0 {
		return channelHead{}, fmt.Errorf("package %s has no channel %s; propose adds releases to channels that exist", pkg, channel)
	}
	ch := cfg.Channels[i]
	gone := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			gone[e.Replaces] = true
		}
		for _, s := range e.Skips {
			gone[s] = true
		}
	}
	var heads []string
	for _, e := range ch.Entries {
		if !gone[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	if len(heads) != 1 {
		return channelHead{}, fmt.Errorf("channel %s of package %s has %d heads (%s); fix the channel first", channel, pkg, len(heads), strings.Join(heads, ", "))
	}
	for _, b := range cfg.Bundles {
		if b.Package != pkg || b.Name != heads[0] {
			continue
		}
		if v, ok := versionOf(b); ok {
			return channelHead{name: heads[0], version: v}, nil
		}
	}
	return channelHead{}, fmt.Errorf("the head %s of channel %s of package %s has no bundle with a semantic version", heads[0], channel, pkg)
}

// versionOf is a bundle's version, from its olm.package property.
func versionOf(b declcfg.Bundle) (semver.Version, bool) {
	for _, pr := range b.Properties {
		if pr.Type != property.TypePackage {
			continue
		}
		var v property.Package
		if json.Unmarshal(pr.Value, &v) != nil {
			return semver.Version{}, false
		}
		sv, err := semver.Parse(v.Version)
		return sv, err == nil
	}
	return semver.Version{}, false
}

// loadFiles loads the package's files as one catalog.
func loadFiles(ctx context.Context, tree fs.FS, files []string) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	for _, f := range files {
		data, err := fs.ReadFile(tree, f)
		if err != nil {
			return nil, err
		}
		cfg, err := fbc.LoadConfig(ctx, singleFile{name: path.Base(f), data: data})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out.Channels = append(out.Channels, cfg.Channels...)
		out.Bundles = append(out.Bundles, cfg.Bundles...)
	}
	return out, nil
}

// packageDir is the directory the package lives in: the directory below
// the root under the layouts that give each package one, else the
// directory of its first file.
func packageDir(pol *policy.Policy, t policy.Target, files []string) string {
	if pol.Catalog.Layout != policy.LayoutFree {
		for _, root := range t.Roots {
			if rel, ok := strings.CutPrefix(files[0], root+"/"); ok {
				if first, _, sub := strings.Cut(rel, "/"); sub {
					return path.Join(root, first)
				}
			}
		}
	}
	return path.Dir(files[0])
}

func within(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

func catalogName(t policy.Target) string {
	if t.Name != "" {
		return t.Name
	}
	return strings.Join(t.Roots, ",")
}

// rows are the package's proposal as -o json rows.
func (p *placed) rows(channels []string, msg, body string) []Added {
	var out []Added
	for _, b := range p.added {
		if len(b.catalog) == 0 {
			continue
		}
		out = append(out, Added{Package: p.pkg, Version: b.tag.Version.String(), Image: b.image, Digest: b.digest, Tag: b.tag.Tag,
			Catalogs: b.catalog, Channels: channels, Message: msg, Body: body})
	}
	return out
}

// describe is the package's commit message subject and the pull request
// body: what was added where, and how each channel's head moved.
func (p *placed) describe(w policy.Proposal) (string, string) {
	var versions []string
	for _, b := range p.added {
		if len(b.catalog) > 0 {
			versions = append(versions, b.tag.Version.String())
		}
	}
	subject := fmt.Sprintf("%s: propose %s from %s", p.pkg, strings.Join(versions, ", "), w.Repository)
	var b strings.Builder
	fmt.Fprintf(&b, "Released in %s:\n\n", w.Repository)
	for _, a := range p.added {
		if len(a.catalog) > 0 {
			fmt.Fprintf(&b, "- %s %s (tag %s): %s\n", a.blob.Name, a.tag.Version, a.tag.Tag, a.image)
		}
	}
	for i, pl := range p.places {
		if pl.template != "" {
			// Catalogs one template renders read as one place.
			if i > 0 && p.places[i-1].template == pl.template && slices.Equal(p.places[i-1].graphs, pl.graphs) {
				continue
			}
			var names, outs []string
			for _, q := range p.places[i:] {
				if q.template == pl.template && slices.Equal(q.graphs, pl.graphs) {
					names, outs = append(names, q.catalog), append(outs, q.files...)
				}
			}
			fmt.Fprintf(&b, "\nIn the template %s, which renders %s:\n\n", pl.template, strings.Join(names, ", "))
			fmt.Fprintf(&b, "- %s: the release, and channel entries (graph: %s)\n", pl.template, w.Graph)
			fmt.Fprintf(&b, "- regenerated from it: %s\n", strings.Join(outs, ", "))
			b.WriteString("\nHeads, before → after:\n\n")
			for _, g := range pl.graphs {
				fmt.Fprintf(&b, "- %s\n", g)
			}
			continue
		}
		fmt.Fprintf(&b, "\nIn %s:\n\n", pl.where)
		for _, f := range pl.bundles {
			fmt.Fprintf(&b, "- %s: a new olm.bundle blob\n", f)
		}
		for _, f := range pl.files {
			fmt.Fprintf(&b, "- %s: channel entries (graph: %s)\n", f, w.Graph)
		}
		b.WriteString("\nHeads, before → after:\n\n")
		for _, g := range pl.graphs {
			fmt.Fprintf(&b, "- %s\n", g)
		}
	}
	return subject, b.String()
}
