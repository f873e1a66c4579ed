package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogfs"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
	"github.com/catalogbot/catalogbot/checks/release"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// Release is the release guard (package release) on the packages the
// change touches: it fails when the change takes away a bundle, a channel
// entry or a channel of the base, or strands installed versions, in a
// channel the policy does not call prunable. Where the catalogs are a
// versioned series (one per OpenShift version), it also judges each step
// from one catalog to the next (release.Continuity): a bundle that a
// cluster upgraded between the two would find no upgrade for is a warning,
// or an error under release.continuity: error. The root approvers may allow
// what fails: with an approval from one of them, at the head, the findings
// stay as warnings and the check passes.
type Release struct{}

// ReleaseName is the name of the release guard check.
const ReleaseName = "release"

func (Release) Name() string { return ReleaseName }

func (Release) Run(ctx context.Context, in *Input) checks.Result {
	cats, err := in.touched.load(ctx, in)
	if r, ok := unreadable(err); ok {
		return r
	}
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read the touched packages: %v", err)}
	}
	var guard []checks.Finding
	judged, unread := 0, 0
	// Each pair of trees is judged once (see perTree).
	type judgement struct {
		base, head *fbc.Placed
		pkgs       string
	}
	judgements := map[judgement][]checks.Finding{}
	for _, c := range cats {
		if c.base == nil || len(c.pkgs) == 0 {
			// A catalog loaded only for the continuity of its
			// neighbours has nothing of its own to guard.
			continue
		}
		judged += len(c.pkgs)
		unread += len(c.head.Unread)
		found := perTree(judgements, judgement{c.base, c.head, strings.Join(c.pkgs, "\x00")}, func() []checks.Finding {
			return release.Check(c.base, c.head, release.Options{Packages: c.pkgs, Prunable: in.Policy.Release.PrunableChannel})
		})
		guard = append(guard, prefixed(found, c.root)...)
	}
	// The reference list's entries are guarded as the catalog's
	// directories are: each changed or removed entry's base rendering
	// against the head's, in the catalogs the list assembles.
	listed, n, err := in.list(ctx).release(ctx, in)
	if r, ok := unreadable(err); ok {
		return r
	}
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not compare the reference list's renderings: %v", err)}
	}
	guard = append(guard, listed...)
	judged += n
	stranded := continuity(in, cats)
	findings := append(guard, stranded...)
	var blocking []checks.Finding
	for _, f := range findings {
		if f.Severity == checks.SeverityError {
			blocking = append(blocking, f)
		}
	}
	if len(blocking) == 0 {
		if judged == 0 && len(stranded) == 0 {
			return checks.Result{Conclusion: checks.Success, Summary: "The change touches no released package."}
		}
		summary := fmt.Sprintf("The change keeps every release of the %s it touches, and every upgrade path to the channel heads.", checks.Count(judged, "package", "packages"))
		if judged == 0 {
			summary = "The change takes away no release."
		}
		if len(stranded) > 0 {
			summary += fmt.Sprintf(" %s.", strandedSummary(len(stranded)))
		}
		return checks.Result{Conclusion: checks.Success, Findings: findings, Summary: summary + lossLines(in, findings)}
	}
	what := lossSummary(blocking)
	if in.Group {
		for i := range findings {
			if findings[i].Severity == checks.SeverityError {
				findings[i].Severity = checks.SeverityWarning
				findings[i].Message += " (allowed in a merge group: the pull request that does it passed this check with its approvals)"
			}
		}
		return checks.Result{Conclusion: checks.Success, Findings: findings,
			Summary: fmt.Sprintf("The merge group %s, which its pull requests were each allowed to.", what) + lossLines(in, findings)}
	}
	by := rootApprovals(ctx, in, blocking)
	if len(by) > 0 {
		for i := range findings {
			if findings[i].Severity != checks.SeverityError {
				continue
			}
			findings[i].Severity = checks.SeverityWarning
			findings[i].Message += fmt.Sprintf(" (allowed: approved by root approver %s)", strings.Join(by, ", "))
		}
		return checks.Result{Conclusion: checks.Success, Findings: findings,
			Summary: fmt.Sprintf("The change %s, and the root approvers allowed it: %s approved.", what, strings.Join(by, ", ")) + lossLines(in, findings)}
	}
	note := ""
	if unread > 0 {
		// What does not load is judged gone: the guard never passes a
		// release it could not see.
		note = fmt.Sprintf(" %s of the head did not load (the fbc check says why); what they hold counts as removed.", checks.Count(unread, "file or blob", "files or blobs"))
	}
	prunable := strings.Join(in.Policy.Release.Prunable, "`, `")
	if prunable != "" {
		prunable = fmt.Sprintf(" Channels matching `%s` (`release.prunable`) may lose releases.", prunable)
	}
	advice := "Deprecate a release with an `olm.deprecations` entry instead of removing it, or ask a root approver to approve."
	if !slices.ContainsFunc(blocking, func(f checks.Finding) bool { return f.Rule != release.RuleStranded }) {
		advice = "Keep each stranded bundle, or an upgrade from it, in the next catalog, or ask a root approver to approve."
	}
	return checks.Result{Conclusion: checks.Failure, Findings: findings,
		Summary: fmt.Sprintf("The change %s. %s%s%s", what, advice, prunable, note) + lossLines(in, findings)}
}

// lossSummary says what the blocking findings take away, as a verb phrase.
func lossSummary(blocking []checks.Finding) string {
	taken, stranded := 0, 0
	for _, f := range blocking {
		if f.Rule == release.RuleStranded {
			stranded++
		} else {
			taken++
		}
	}
	var parts []string
	if taken > 0 {
		parts = append(parts, "takes away "+checks.Count(taken, "release or upgrade path", "releases or upgrade paths"))
	}
	if stranded > 0 {
		parts = append(parts, "strands "+checks.Count(stranded, "bundle", "bundles")+" between consecutive catalogs ("+release.RuleStranded+")")
	}
	return strings.Join(parts, " and ")
}

// strandedSummary says how many bundles an OpenShift upgrade strands.
func strandedSummary(n int) string {
	return fmt.Sprintf("%s of a catalog would find no upgrade in the next catalog after an OpenShift upgrade (%s)", checks.Count(n, "bundle", "bundles"), release.RuleStranded)
}

// series are the catalogs of the policy in the order of the versions in
// their names, by name and root, when they are a series the continuity
// rule judges: release.continuity is not ignore, every catalog is one
// root, and release.Series orders the names. Otherwise nil.
func (in *Input) series() (names, roots []string) {
	if in.Policy.Release.Continuity == policy.ContinuityIgnore {
		return nil, nil
	}
	targets := in.targets()
	rootOf := map[string]string{}
	for _, t := range targets {
		if len(t.Roots) != 1 {
			return nil, nil
		}
		names = append(names, t.Name)
		rootOf[t.Name] = t.Roots[0]
	}
	names, ok := release.Series(names)
	if !ok || len(names) < 2 {
		return nil, nil
	}
	for _, n := range names {
		roots = append(roots, rootOf[n])
	}
	return names, roots
}

// continuity judges each step of the series from one catalog to the next
// on the packages the change touches in either, as loaded for the guard.
func continuity(in *Input, cats []touchedCatalog) []checks.Finding {
	names, roots := in.series()
	if len(names) == 0 {
		return nil
	}
	byRoot := map[string]*touchedCatalog{}
	for i := range cats {
		byRoot[cats[i].root] = &cats[i]
	}
	sev := checks.SeverityWarning
	if in.Policy.Release.Continuity == policy.ContinuityError {
		sev = checks.SeverityError
	}
	var out []checks.Finding
	for i := 0; i+1 < len(roots); i++ {
		from, to := byRoot[roots[i]], byRoot[roots[i+1]]
		if from == nil {
			continue // nothing loaded: no package of either is touched
		}
		var pkgs []string
		for _, c := range []*touchedCatalog{from, to} {
			if c == nil {
				continue
			}
			for _, p := range c.pkgs {
				if !slices.Contains(pkgs, p) {
					pkgs = append(pkgs, p)
				}
			}
		}
		if len(pkgs) == 0 {
			continue
		}
		slices.Sort(pkgs)
		step := release.Step{From: names[i], To: names[i+1], BaseFrom: from.base, HeadFrom: from.head}
		if to != nil {
			step.BaseTo, step.HeadTo = to.base, to.head
		}
		found := release.Continuity(step, release.ContinuityOptions{Packages: pkgs, Prunable: in.Policy.Release.PrunableChannel, Severity: sev})
		out = append(out, prefixed(found, from.root)...)
	}
	return out
}

// rootApprovals are the logins whose approval at the head counts and who
// are root approvers of every file the findings name: only they may take
// a release away. The approvals are the owners check's (approvals at the
// head, bots and withdrawn ones left out); nil when there is none.
func rootApprovals(ctx context.Context, in *Input, findings []checks.Finding) []string {
	st := in.Owners
	if st == nil {
		var err error
		if st, err = EvaluateOwners(ctx, in); err != nil {
			return nil
		}
	}
	if len(st.Approvers) == 0 {
		return nil
	}
	// Only the root OWNERS file (and the aliases beside it) is
	// consulted, so only the root's files are read: walking every
	// directory's OWNERS again would cost what the owners check costs.
	// The root approvers are those of the owners check: the maintainers
	// (operator-pipelines' config.yaml) among them, and the root OWNERS
	// file only where OWNERS files are a source.
	repo, err := owners.Load(rootFiles{in.Base}, owners.LoadOptions{Sources: in.Policy.Owners.Sources, Maintainers: in.Policy.Owners.Maintainers})
	if err != nil {
		return nil
	}
	var out []string
	files := map[string]bool{}
	for _, f := range findings {
		files[f.File] = true
	}
	for _, a := range st.Approvers {
		login := owners.NormLogin(a.Login)
		ok := true
		for f := range files {
			res := repo.ResolveRoot(f)
			if res.Blocked != "" || !slices.Contains(res.Approvers, login) {
				ok = false
				break
			}
		}
		if ok && !slices.Contains(out, a.Login) {
			out = append(out, a.Login)
		}
	}
	slices.Sort(out)
	return out
}

// rootFiles shows the files directly in the root of fsys and no
// directory.
type rootFiles struct{ fsys fs.FS }

func (r rootFiles) Open(name string) (fs.File, error) {
	if name != "." && strings.Contains(name, "/") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return r.fsys.Open(name)
}

func (r rootFiles) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	entries, err := fs.ReadDir(r.fsys, name)
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return e.IsDir() }), err
}

// touchedCatalog is one catalog root's touched packages, loaded on both
// sides: the directories that hold them, as the fbc check's scope finds
// them.
type touchedCatalog struct {
	root string
	// pkgs are the packages whose blobs the change adds, removes or
	// changes, sorted.
	pkgs []string
	// base is nil when the root is not on the base. Besides pkgs they
	// hold the packages the change touches in the catalogs next to this
	// one in a series, which the continuity rule compares with them.
	base, head *fbc.Placed
}

// touchedCatalogs loads the touched packages once per Input, for the
// release guard, the continuity rule, the graphs, the OLM v1 readiness,
// the storefront cards and the truthfulness check alike. They are loaded
// whole (fbc.LoadPlacedWhole), as the rules that read what a bundle
// declares need them: every review reads the cards, so a lean load for
// the release guard would only decode the same files a second time.
type touchedCatalogs struct {
	once sync.Once
	cats []touchedCatalog
	err  error
}

func (t *touchedCatalogs) load(ctx context.Context, in *Input) ([]touchedCatalog, error) {
	t.once.Do(func() { t.cats, t.err = loadTouched(ctx, in) })
	return t.cats, t.err
}

func loadTouched(ctx context.Context, in *Input) ([]touchedCatalog, error) {
	touched, err := TouchedPackages(in.Change, in.Base, in.Head, in.Policy.Catalog.Roots, in.Policy.Catalog.Layout)
	if err != nil {
		return nil, err
	}
	var roots []string
	own := map[string][]string{}
	for _, root := range in.Policy.Catalog.Roots {
		if !isDir(in.Head, root) && !isDir(in.Base, root) {
			continue
		}
		roots = append(roots, root)
		var pkgs []string
		for _, p := range touched {
			if !slices.Contains(pkgs, p.Name) && touchesRoot(p, root) {
				pkgs = append(pkgs, p.Name)
			}
		}
		// A changed file's packages on the base are judged too, even when
		// its blobs compare equal: a document that no longer decodes can
		// make the loader drop the whole file.
		for _, p := range basePackages(in, root) {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		slices.Sort(pkgs)
		own[root] = pkgs
	}
	// A package touched in one catalog of a series is compared with the
	// same package in the catalogs before and after it, so it is loaded
	// there too, in the same pass.
	load := map[string][]string{}
	for _, root := range roots {
		load[root] = own[root]
	}
	_, series := in.series()
	for i, root := range series {
		for _, next := range []int{i - 1, i + 1} {
			if next < 0 || next >= len(series) {
				continue
			}
			for _, p := range own[series[next]] {
				if !slices.Contains(load[root], p) {
					load[root] = append(slices.Clone(load[root]), p)
				}
			}
		}
	}
	// The roots are loaded side by side, as the fbc check validates
	// them, and kept in their order.
	cats := make([]*touchedCatalog, len(roots))
	errs := make([]error, len(roots))
	sideBySide(len(roots), func(i int) {
		if root := roots[i]; len(load[root]) > 0 {
			cats[i], errs[i] = loadTouchedRoot(ctx, in, root, own[root], load[root])
		}
	})
	var out []touchedCatalog
	for i := range roots {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if cats[i] != nil {
			out = append(out, *cats[i])
		}
	}
	return out, nil
}

// loadTouchedRoot loads the packages want of one catalog root on both
// sides, with every directory that holds one of them on the base; own are
// the packages the change touches there.
func loadTouchedRoot(ctx context.Context, in *Input, root string, own, want []string) (*touchedCatalog, error) {
	dirs, _ := touchedDirs(in.Change, root)
	c := touchedCatalog{root: root, pkgs: own}
	var holders map[string][]string
	if isDir(in.Base, root) {
		// The index of the base the fbc check's scope takes (see bind):
		// unbounded and so the same, found in memory here.
		baseFS, err := catalogfs.New(in.indexBase(), []string{root})
		if err != nil {
			return nil, err
		}
		if holders, err = packageIndex(ctx, baseFS, in.Index, root); err != nil {
			return nil, err
		}
	}
	for _, p := range want {
		dirs[p] = true
		for _, d := range holders[p] {
			dirs[d] = true
		}
	}
	load := func(fsys fs.FS) (*fbc.Placed, error) {
		if !isDir(fsys, root) {
			return nil, nil
		}
		sub, err := subFS(fsys, root)
		if err != nil {
			return nil, err
		}
		scoped, err := newScopedFS(sub, dirs)
		if err != nil {
			return nil, err
		}
		return fbc.LoadPlacedWhole(ctx, scoped)
	}
	var err error
	if c.base, err = load(in.Base); err != nil {
		return nil, err
	}
	if c.head, err = load(in.Head); err != nil {
		return nil, err
	}
	if c.head == nil {
		// The change removes the whole root: nothing is left.
		c.head = &fbc.Placed{}
	}
	return &c, nil
}

// basePackages are the packages of the blobs that the changed files under
// root hold on the base.
func basePackages(in *Input, root string) []string {
	var out []string
	if in.Change == nil || in.Base == nil {
		return nil
	}
	for _, f := range in.Change.Files {
		for _, p := range []string{f.Path, f.PreviousPath} {
			if r, ok := rootOf(p, []string{root}); p == "" || !ok || r != root {
				continue
			}
			blobs, err := fileBlobs(in.Base, p, nil)
			if err != nil {
				continue // absent on the base; unreadable ones fail TouchedPackages
			}
			for _, b := range blobs {
				if b.Package != "" && !slices.Contains(out, b.Package) {
					out = append(out, b.Package)
				}
			}
		}
	}
	return out
}

// touchesRoot says whether the touched package p has a changed file under
// root.
func touchesRoot(p owners.PackageTouch, root string) bool {
	for _, f := range p.Files {
		if r, ok := rootOf(f, []string{root}); ok && r == root {
			return true
		}
	}
	return false
}

// Graph is the upgrade graph of a channel the change touches, drawn for
// the pull request.
// Its JSON form is what catalogbot check -o json reports of the graph:
// the drawing, and what the change did to the channel as data, for tools
// that read the report rather than look at it.
type Graph struct {
	// Root is the catalog root the package is under; Roots, when the
	// same picture stands for several catalogs, are all their roots,
	// Root first.
	Root    string   `json:"root"`
	Roots   []string `json:"roots,omitempty"`
	Package string   `json:"package"`
	Channel string   `json:"channel"`
	// Mermaid is the flowchart of the channel, as catalogbot graph
	// draws it, with what it leaves out as Mermaid comments.
	Mermaid string `json:"mermaid"`
	// Markdown is the drawing for a pull request: a mermaid code block
	// and notes under it.
	Markdown string `json:"-"`
	// Changed says whether the change did anything to the channel.
	Changed bool `json:"-"`
	// NewChannel says the base has no such channel.
	NewChannel bool `json:"newChannel,omitempty"`
	// Heads are the channel's heads on the head commit.
	Heads []string `json:"heads"`
	// Added are the bundles and edges the change added, in the order the
	// channel has them; Removed those of the base's channel the head's
	// does not have.
	Added        []graph.Node `json:"added,omitempty"`
	AddedEdges   []graph.Edge `json:"addedEdges,omitempty"`
	Removed      []graph.Node `json:"removed,omitempty"`
	RemovedEdges []graph.Edge `json:"removedEdges,omitempty"`
}

// newGraph is the Graph of a changed channel's picture.
func newGraph(root, pkg string, p *graph.Picture) (Graph, error) {
	var md, mmd bytes.Buffer
	if err := graph.Markdown(&md, p); err != nil {
		return Graph{}, err
	}
	if err := graph.WriteMermaid(&mmd, []*graph.Picture{p}); err != nil {
		return Graph{}, err
	}
	g := Graph{Root: root, Package: pkg, Channel: p.Graph.Channel, Mermaid: mmd.String(), Markdown: md.String(),
		Changed: p.Changed(), NewChannel: p.NewChannel, Heads: p.Graph.Heads,
		Removed: p.Removed, RemovedEdges: p.RemovedEdges}
	// Added is kept as sets; the channel's order makes the lists stable.
	for _, n := range p.Graph.Nodes {
		if p.Added[n.Name] {
			g.Added = append(g.Added, n)
		}
	}
	for _, e := range p.Graph.Edges {
		if p.AddedEdges[e] {
			g.AddedEdges = append(g.AddedEdges, e)
		}
	}
	return g, nil
}

// perTree is f's value for k, made once in m. Catalogs that hold the same
// files load to the same trees (fbc.LoadPlacedWhole under the pass's
// cache), so what is made of a tree, keyed by its pointer, serves every
// catalog that holds it; each gets it under its own root.
func perTree[K comparable, V any](m map[K]V, k K, f func() V) V {
	v, ok := m[k]
	if !ok {
		v = f()
		m[k] = v
	}
	return v
}

// MaxGraphs bounds the graphs a pull request shows; a comment has room
// for a few, and a change to more channels than that is read in its
// files.
const MaxGraphs = 10

// Graphs draws, on the head, every channel of the packages the change
// touches whose graph the change changed, at most MaxGraphs, and says how
// many it left out.
func Graphs(ctx context.Context, in *Input) ([]Graph, int, error) {
	cats, err := in.touched.load(ctx, in)
	if err != nil {
		return nil, 0, err
	}
	var out []Graph
	more := 0
	// The same change to a package in several catalogs (one per OpenShift
	// version) draws the same picture in each: it is drawn once, with
	// every catalog it stands for.
	same := map[[4]string]int{}
	// Each pair of trees is drawn once (see perTree).
	type drawing struct {
		base, head *fbc.Placed
		pkg        string
	}
	drawn := map[drawing][]*graph.Picture{}
	for _, c := range cats {
		for _, pkg := range c.pkgs {
			pics := perTree(drawn, drawing{c.base, c.head, pkg}, func() []*graph.Picture {
				opts := graph.Options{Package: pkg}
				if c.base != nil {
					opts.Base = &c.base.Config
				}
				pics, err := graph.Pictures(&c.head.Config, opts)
				if err != nil {
					return nil
				}
				return pics
			})
			if pics == nil {
				continue // no channel left on the head: the guard says what went
			}
			for _, p := range pics {
				if !p.Changed() {
					continue
				}
				g, err := newGraph(c.root, pkg, p)
				if err != nil {
					return nil, 0, err
				}
				// The drawing labels bundles by version; the names
				// the text output lists must be the same too.
				key := [4]string{pkg, g.Channel, g.Markdown, fmt.Sprint(g.Heads, g.Added, g.Removed)}
				if i, ok := same[key]; ok {
					if out[i].Roots == nil {
						out[i].Roots = []string{out[i].Root}
					}
					out[i].Roots = append(out[i].Roots, c.root)
					continue
				}
				if len(out) == MaxGraphs {
					more++
					continue
				}
				same[key] = len(out)
				out = append(out, g)
			}
		}
	}
	return out, more, nil
}

// maxLossLines caps the grouped lines of the release summary; the
// findings (and their annotations) keep every one.
const maxLossLines = 30

// lossLines groups findings by what they take away (rule, package,
// channel and bundle), whatever catalog each sits in, one line per group
// with the catalogs listed once: removing one bundle from thirteen
// catalogs is one line, not thirteen. The findings stay as they are, each
// with its file and line.
func lossLines(in *Input, findings []checks.Finding) string {
	if len(findings) < 2 {
		return ""
	}
	type key struct {
		sev                        checks.Severity
		rule, pkg, channel, bundle string
	}
	var order []key
	cats := map[key][]string{}
	targets := in.targets()
	catalogOf := func(file string) string {
		best, name := "", ""
		for _, t := range targets {
			for _, r := range t.Roots {
				if (r == "." || strings.HasPrefix(file, r+"/")) && len(r) >= len(best) {
					best, name = r, cmp.Or(t.Name, r)
				}
			}
		}
		return name
	}
	for _, f := range findings {
		k := key{f.Severity, f.Rule, f.Package, f.Channel, f.Bundle}
		if _, ok := cats[k]; !ok {
			order = append(order, k)
			cats[k] = []string{}
		}
		if c := catalogOf(f.File); c != "" && !slices.Contains(cats[k], c) {
			cats[k] = append(cats[k], c)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nWhat the findings take away, by package and bundle (%s; the findings below list each file and line):\n",
		checks.Count(len(findings), "finding", "findings"))
	for i, k := range order {
		if i == maxLossLines {
			fmt.Fprintf(&b, "- and %d more\n", len(order)-i)
			break
		}
		var what string
		switch k.rule {
		case release.RuleBundleRemoved:
			what = "bundle " + checks.Code(k.bundle) + " removed"
		case release.RuleEntryRemoved:
			what = checks.Code(k.bundle) + " removed from channel " + checks.Code(k.channel)
		case release.RuleChannelRemoved:
			what = "channel " + checks.Code(k.channel) + " removed"
		case release.RuleEdgeBroken:
			if k.bundle == "" {
				what = "channel " + checks.Code(k.channel) + " no longer leads every bundle to its head"
			} else {
				what = checks.Code(k.bundle) + " loses an upgrade edge in channel " + checks.Code(k.channel)
			}
		case release.RuleStranded:
			what = checks.Code(k.bundle) + " finds no upgrade in the next catalog"
		default:
			what = strings.TrimSpace(strings.Join([]string{k.channel, k.bundle}, " "))
			what = checks.Code(what)
		}
		sev := "error"
		if k.sev != checks.SeverityError && k.sev != "" {
			sev = string(k.sev)
		}
		where := ""
		if c := cats[k]; len(c) > 0 && len(targets) > 1 {
			if ordered, ok := release.Series(c); ok {
				c = ordered
			} else {
				slices.Sort(c)
			}
			where = " in " + checks.MarkdownText(strings.Join(c, ", "))
			if len(c) > 1 {
				where += fmt.Sprintf(" (%d catalogs)", len(c))
			}
		}
		fmt.Fprintf(&b, "- package %s: %s%s (%s, %s)\n", checks.Code(k.pkg), what, where, k.rule, sev)
	}
	return strings.TrimRight(b.String(), "\n")
}
