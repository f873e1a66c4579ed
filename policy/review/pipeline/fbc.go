package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogfs"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/policy"
)

// FBC validates the catalog of the head commit under every catalog root of
// the policy, where the change can affect it (see scope): the package
// directories it touches and those of the packages they hold, or the whole
// root when a file directly in it changes. Every finding is compared with
// the base commit's, validated the same way: one that was already there
// (same file, rule and message) is pre-existing and reported as a warning,
// so a change is never blocked by problems it did not make, while still
// showing them.
type FBC struct{}

// FBCName is the name of the catalog validation check.
const FBCName = "fbc"

func (FBC) Name() string { return FBCName }

func (FBC) Run(ctx context.Context, in *Input) checks.Result {
	var catalogs []policy.Target
	for _, t := range in.targets() {
		t.Roots = slices.DeleteFunc(slices.Clone(t.Roots), func(r string) bool { return !isDir(in.Head, r) })
		if len(t.Roots) > 0 {
			catalogs = append(catalogs, t)
		}
	}
	if len(catalogs) == 0 {
		// A repository made of a reference list alone has nothing here to
		// fail, and must still be able to merge.
		return checks.Result{Conclusion: checks.Success, Summary: "No catalog root of the policy exists in the head commit; nothing to validate."}
	}

	// Renamed files are compared with their findings under the old name.
	previous := make(map[string]string)
	if in.Change != nil {
		for _, f := range in.Change.Files {
			if f.PreviousPath != "" {
				previous[f.Path] = f.PreviousPath
			}
		}
	}

	var findings []checks.Finding
	introduced, preexisting := 0, 0
	var scopes []string
	untouched := 0
	results := validateCatalogs(ctx, in, catalogs)
	for i, t := range catalogs {
		r := results[i]
		if r == nil {
			// Catalogs the change leaves alone are counted, not
			// listed: a repository may hold a dozen.
			untouched++
			continue
		}
		head, base, note, err := r.head, r.base, r.note, r.err
		where := strings.Join(t.Roots, ", ")
		if err != nil && ctx.Err() != nil {
			// Ended by the check's deadline or its caller: not a verdict.
			return checks.Result{Conclusion: checks.Neutral, Summary: fmt.Sprintf("Validation of %s stopped: %v.", where, context.Cause(ctx))}
		}
		if r, ok := unreadable(err); ok {
			return r
		}
		if err != nil {
			return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not validate %s: %v", where, err)}
		}
		if note != "" {
			scopes = append(scopes, note)
		}
		known := make(map[findingKey]bool, len(base))
		for _, f := range base {
			known[keyOf(f, f.File)] = true
		}
		for _, f := range head {
			file := f.File
			if p, ok := previous[file]; ok {
				file = p
			}
			if f.Severity == checks.SeverityError {
				if known[keyOf(f, file)] && !isLimitRule(f.Rule) {
					f.Severity = checks.SeverityWarning
					f.Message += " (pre-existing: also on the base branch)"
					preexisting++
				} else {
					introduced++
				}
			}
			findings = append(findings, f)
		}
	}

	if untouched > 0 {
		scopes = append(scopes, fmt.Sprintf("%s with no catalog file changed: not validated.", checks.Plural(untouched, "catalog")))
	}
	res := checks.Result{Conclusion: checks.ConclusionOf(findings), Findings: findings}
	switch {
	case introduced > 0:
		res.Summary = fmt.Sprintf("This change introduces %d catalog error(s).", introduced)
	default:
		res.Summary = "The catalog is valid."
	}
	if preexisting > 0 {
		res.Summary += fmt.Sprintf(" %d error(s) were already on the base branch and are reported as warnings.", preexisting)
	}
	if len(scopes) > 0 {
		res.Summary += "\n\n" + strings.Join(scopes, "\n")
	}
	return res
}

// catalogResult is the validation of one catalog on both sides.
type catalogResult struct {
	head, base []checks.Finding
	note       string
	err        error
}

// validateCatalogs validates the catalogs the change touches, side by
// side: a change to one package of a repository with a catalog per
// OpenShift version touches a dozen, and each mostly waits on reading
// and decoding its own files. The result for a catalog the change leaves
// alone is nil. Results come in the order of catalogs, whatever order
// they were made in, so that the report is the same on every run.
func validateCatalogs(ctx context.Context, in *Input, catalogs []policy.Target) []*catalogResult {
	results := make([]*catalogResult, len(catalogs))
	sideBySide(len(catalogs), func(i int) {
		t := catalogs[i]
		if !changesCatalog(in.Change, t) {
			return
		}
		r := &catalogResult{}
		if len(t.Roots) == 1 {
			r.head, r.base, r.note, r.err = validateRoot(ctx, in, t.Roots[0])
		} else {
			r.head, r.base, r.note, r.err = validateUnion(ctx, in, t)
		}
		results[i] = r
	})
	return results
}

// sideBySide calls f for every i below n, as many at once as the process
// has CPUs, and returns when all have returned.
func sideBySide(n int, f func(i int)) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// validateRoot validates what the change can affect under one catalog root
// on both sides, and says in note what that was when it was not the whole
// catalog.
func validateRoot(ctx context.Context, in *Input, root string) (head, base []checks.Finding, note string, err error) {
	headFS, err := catalogfs.New(in.Head, []string{root})
	if err != nil {
		return nil, nil, "", err
	}
	var baseFS fs.FS
	if isDir(in.Base, root) {
		if baseFS, err = catalogfs.New(in.Base, []string{root}); err != nil {
			return nil, nil, "", err
		}
	}
	dirs, rootFile := touchedDirs(in.Change, root)
	if len(dirs) == 0 && !rootFile {
		return nil, nil, fmt.Sprintf("`%s`: no catalog file changed; not validated.", root), nil
	}
	existing, err := packageDirs(headFS, ".")
	if err != nil {
		return nil, nil, "", err
	}
	if baseFS != nil {
		// A package directory the change removes is still where its
		// package was.
		if old, err := packageDirs(baseFS, "."); err == nil {
			for d := range old {
				existing[d] = true
			}
		}
	}
	s := &scope{dirs: dirs, touched: len(dirs), total: len(existing), all: rootFile}
	if !s.all && baseFS != nil {
		// Directories the change leaves alone are the same on both
		// sides; those it touches are in the scope already.
		rawBase, err := catalogfs.New(in.indexBase(), []string{root})
		if err != nil {
			return nil, nil, "", err
		}
		if s.holders, err = packageIndex(ctx, rawBase, in.Index, root); err != nil {
			return nil, nil, "", err
		}
	}

	// validate runs the scope on both sides and returns the package names
	// found; grow ends with a run of the final scope, which is the result.
	layout := in.Policy.Catalog.Layout
	validate := func(s *scope) ([]string, error) {
		res, err := validateScope(ctx, headFS, root, s)
		if err != nil {
			return nil, err
		}
		head = append(prefixed(res.Findings, root), layoutFindings(res.PackagePlaces, root, s, layout)...)
		names := res.PackageNames
		base = nil
		if baseFS != nil {
			res, err := validateScope(ctx, baseFS, root, s)
			if err != nil {
				return nil, err
			}
			// The base's layout breaks are found the same way, so that
			// one the change did not make stays a warning.
			base = append(prefixed(res.Findings, root), layoutFindings(res.PackagePlaces, root, s, layout)...)
			names = append(names, res.PackageNames...)
		}
		return names, nil
	}
	if err := s.grow(existing, validate); err != nil {
		return nil, nil, "", err
	}
	if s.all {
		return head, base, "", nil
	}
	note = fmt.Sprintf("`%s`: validated %d of %d package directories: %d touched by the change", root, len(s.dirs), s.total, s.touched)
	if extra := len(s.dirs) - s.touched; extra > 0 {
		note += fmt.Sprintf(", %d holding the same packages", extra)
	}
	return head, base, note + ".", nil
}

// changesCatalog says whether the change touches a file under a root of t.
func changesCatalog(c *change.Change, t policy.Target) bool {
	for _, r := range t.Roots {
		if dirs, rootFile := touchedDirs(c, r); rootFile || len(dirs) > 0 {
			return true
		}
	}
	return false
}

// validateUnion validates a catalog of several roots whole, on both
// sides, as the publisher assembles it (catalogfs): each root at its own
// path, so that the same package in two roots is two declarations of it in
// one catalog. It is not scoped to the change: the scope's package
// directories are those of one root.
func validateUnion(ctx context.Context, in *Input, t policy.Target) (head, base []checks.Finding, note string, err error) {
	touched := false
	for _, r := range t.Roots {
		dirs, rootFile := touchedDirs(in.Change, r)
		touched = touched || rootFile || len(dirs) > 0
	}
	if !touched {
		return nil, nil, fmt.Sprintf("catalog %s: no catalog file changed; not validated.", describeTarget(t)), nil
	}
	layout := in.Policy.Catalog.Layout
	run := func(tree fs.FS) ([]checks.Finding, error) {
		var roots []string
		for _, r := range t.Roots {
			if isDir(tree, r) {
				roots = append(roots, r)
			}
		}
		if len(roots) == 0 {
			return nil, nil
		}
		fsys, err := catalogfs.New(tree, roots)
		if err != nil {
			return nil, err
		}
		res, err := fbc.Validate(ctx, fsys, fbc.Options{})
		if err != nil {
			return nil, err
		}
		out := res.Findings
		// Each root keeps the package-directory layout of its own.
		for _, r := range roots {
			places := map[string][]fbc.Place{}
			for pkg, ps := range res.PackagePlaces {
				for _, p := range ps {
					if rest, ok := strings.CutPrefix(p.File, r+"/"); ok {
						p.File = rest
						places[pkg] = append(places[pkg], p)
					}
				}
			}
			out = append(out, layoutFindings(places, r, &scope{all: true}, layout)...)
		}
		return out, nil
	}
	if head, err = run(in.Head); err != nil {
		return nil, nil, "", err
	}
	if in.Base != nil {
		if base, err = run(in.Base); err != nil {
			return nil, nil, "", err
		}
	}
	return head, base, "", nil
}

// describeTarget names a catalog in summaries.
func describeTarget(t policy.Target) string {
	roots := "`" + strings.Join(t.Roots, "`, `") + "`"
	if t.Name == "" {
		return roots
	}
	return fmt.Sprintf("%s (%s)", t.Name, roots)
}

// validateScope validates the scope s of the catalog in fsys (the root's
// tree).
func validateScope(ctx context.Context, fsys fs.FS, root string, s *scope) (*fbc.Result, error) {
	if !s.all {
		scoped, err := newScopedFS(fsys, s.dirs)
		if err != nil {
			return nil, err
		}
		fsys = scoped
	}
	return fbc.Validate(ctx, fsys, fbc.Options{})
}

// prefixed names findings' files from the repository root, as changes and
// OWNERS do, rather than from the catalog root.
func prefixed(findings []checks.Finding, root string) []checks.Finding {
	out := make([]checks.Finding, len(findings))
	for i, f := range findings {
		if f.File != "" {
			f.File = path.Join(root, f.File)
		}
		out[i] = f
	}
	return out
}

// RuleLayout is the rule of a package kept outside the directory of its
// name.
const RuleLayout = "PK1"

// layoutFindings reports the blobs of the scope that sit outside their
// package's home, <root>/<package>/. Under the default layout that is an
// error: the scope of a change is found through the directories of its
// packages' names, so a package elsewhere escapes the validation of a
// change to it, and a reader of the tree cannot see whose it is. Under a
// free layout it is a warning, and only for the directories the change
// touches, where it tells the reader what the scope could not see.
func layoutFindings(places map[string][]fbc.Place, root string, s *scope, layout string) []checks.Finding {
	if layout == policy.LayoutDirectories {
		return directoryFindings(places, root)
	}
	free := layout == policy.LayoutFree
	var out []checks.Finding
	for pkg, ps := range places {
		for _, p := range ps {
			dir, _, nested := strings.Cut(p.File, "/")
			if pkg == "" || nested && dir == pkg {
				continue
			}
			sev := checks.SeverityError
			if free {
				if !nested || s.all || !s.dirs[dir] {
					continue
				}
				sev = checks.SeverityWarning
			}
			where := fmt.Sprintf("in directory %q", dir)
			if !nested {
				where = "directly in the catalog root"
			}
			out = append(out, checks.Finding{
				Rule: RuleLayout, Severity: sev, File: path.Join(root, p.File), Line: p.Line, Package: pkg,
				Message: fmt.Sprintf("package %q is %s, not in %q; keep each package in the directory of its name, where a change to it is validated with it and its owners are found", pkg, where, path.Join(root, pkg)+"/"),
			})
		}
	}
	slices.SortFunc(out, func(a, b checks.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Package, b.Package))
	})
	return out
}

// directoryFindings reports, under the directories layout, blobs directly
// in the root, directories that hold more than one package and packages
// spread over more than one directory: each directory below the root is
// one package's home, whatever its name.
func directoryFindings(places map[string][]fbc.Place, root string) []checks.Finding {
	dirsOf := map[string][]string{} // package -> directories
	pkgsIn := map[string][]string{} // directory -> packages
	for pkg, ps := range places {
		if pkg == "" {
			continue
		}
		for _, p := range ps {
			dir, _, nested := strings.Cut(p.File, "/")
			if !nested {
				continue
			}
			if !slices.Contains(dirsOf[pkg], dir) {
				dirsOf[pkg] = append(dirsOf[pkg], dir)
			}
			if !slices.Contains(pkgsIn[dir], pkg) {
				pkgsIn[dir] = append(pkgsIn[dir], pkg)
			}
		}
	}
	var out []checks.Finding
	for pkg, ps := range places {
		if pkg == "" {
			continue
		}
		for _, p := range ps {
			dir, _, nested := strings.Cut(p.File, "/")
			var msg string
			switch {
			case !nested:
				msg = fmt.Sprintf("package %q is directly in the catalog root; keep each package in a directory of its own", pkg)
			case len(pkgsIn[dir]) > 1:
				others := slices.DeleteFunc(slices.Clone(pkgsIn[dir]), func(o string) bool { return o == pkg })
				slices.Sort(others)
				msg = fmt.Sprintf("directory %q holds package %q and %s; each directory is the home of one package, where a change to it is validated with it and its owners are found", path.Join(root, dir)+"/", pkg, quoteAll(others))
			case len(dirsOf[pkg]) > 1:
				others := slices.DeleteFunc(slices.Clone(dirsOf[pkg]), func(o string) bool { return o == dir })
				slices.Sort(others)
				msg = fmt.Sprintf("package %q is in directory %q and in %s; keep a package in one directory", pkg, path.Join(root, dir)+"/", quoteAll(others))
			default:
				continue
			}
			out = append(out, checks.Finding{Rule: RuleLayout, Severity: checks.SeverityError, File: path.Join(root, p.File), Line: p.Line, Package: pkg, Message: msg})
		}
	}
	slices.SortFunc(out, func(a, b checks.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Package, b.Package))
	})
	return out
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func subFS(fsys fs.FS, root string) (fs.FS, error) {
	if root == "." {
		return fsys, nil
	}
	return fs.Sub(fsys, root)
}

type findingKey struct{ file, rule, message string }

func keyOf(f checks.Finding, file string) findingKey {
	return findingKey{file, f.Rule, f.Message}
}

func isDir(fsys fs.FS, name string) bool {
	if fsys == nil {
		return false
	}
	info, err := fs.Stat(fsys, name)
	return err == nil && info.IsDir()
}
