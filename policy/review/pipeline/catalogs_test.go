package pipeline

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/policy"
)

// TestFBCCatalogs: a catalog is validated whole, as it is published: the
// roots of one catalog together, the catalogs of a repository each on its
// own.
func TestFBCCatalogs(t *testing.T) {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	twoRoots := "catalog:\n  roots: [catalog, incubator]\n"
	versions := "catalogs:\n  - each: catalogs/v4.*\n"
	byDir := versions + "catalog:\n  layout: directories\n"
	konflux := strings.ReplaceAll(fooCatalog, "foo", "konflux-operator")
	tests := []struct {
		name       string
		policy     string
		base, head map[string]string
		want       checks.Conclusion
		// wantErr is a file that must hold an error finding.
		wantErr string
	}{
		{
			name:    "a package of one root defined again in another root of the catalog",
			policy:  twoRoots,
			base:    map[string]string{"catalog/bar/catalog.yaml": bar, "catalog/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalog/bar/catalog.yaml": bar, "catalog/foo/catalog.yaml": fooCatalog, "incubator/bar/catalog.yaml": bar},
			want:    checks.Failure,
			wantErr: "incubator/bar/catalog.yaml",
		},
		{
			name:    "the same package under another directory name in the other root",
			policy:  twoRoots,
			base:    map[string]string{"catalog/bar/catalog.yaml": bar},
			head:    map[string]string{"catalog/bar/catalog.yaml": bar, "incubator/x/catalog.yaml": bar},
			want:    checks.Failure,
			wantErr: "incubator/x/catalog.yaml",
		},
		{
			name:   "an .indexignore in one root hides nothing of another",
			policy: twoRoots,
			base:   map[string]string{"catalog/bar/catalog.yaml": bar, "incubator/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalog/bar/catalog.yaml": bar, "incubator/foo/catalog.yaml": fooCatalog, "incubator/bar/.indexignore": "*\n"},
			want:   checks.Success,
		},
		{
			name:   "two roots with distinct packages",
			policy: twoRoots,
			base:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "incubator/bar/catalog.yaml": bar},
			want:   checks.Success,
		},
		{
			name:   "the same package in several catalogs is normal",
			policy: versions,
			base:   map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog, "catalogs/v4.18/foo/catalog.yaml": fooCatalog},
			want:   checks.Success,
		},
		{
			name:    "a new catalog version is validated without a policy change",
			policy:  versions,
			base:    map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog, "catalogs/v4.23/foo/catalog.yaml": badDefault(fooCatalog)},
			want:    checks.Failure,
			wantErr: "catalogs/v4.23/foo/catalog.yaml",
		},
		{
			name:    "a package twice in one catalog of many",
			policy:  versions,
			base:    map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog, "catalogs/v4.18/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalogs/v4.17/foo/catalog.yaml": fooCatalog, "catalogs/v4.18/foo/catalog.yaml": fooCatalog, "catalogs/v4.18/foo2/catalog.yaml": fooCatalog},
			want:    checks.Failure,
			wantErr: "catalogs/v4.18/foo2/catalog.yaml",
		},
		{
			name:    "a directory named by operator, under the package-directory layout",
			policy:  versions,
			base:    map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog, "catalogs/v4.22/konflux/catalog.yaml": konflux},
			want:    checks.Failure,
			wantErr: "catalogs/v4.22/konflux/catalog.yaml",
		},
		{
			name:   "a directory named by operator is a home under the directories layout",
			policy: byDir,
			base:   map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog, "catalogs/v4.22/konflux/catalog.yaml": konflux},
			want:   checks.Success,
		},
		{
			name:    "a directory of two packages under the directories layout",
			policy:  byDir,
			base:    map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog + "\n---\n" + bar},
			want:    checks.Failure,
			wantErr: "catalogs/v4.22/foo/catalog.yaml",
		},
		{
			name:   "a package spread over two directories under the directories layout",
			policy: byDir,
			base:   map[string]string{"catalogs/v4.22/foo/catalog.yaml": fooCatalog},
			head: map[string]string{
				"catalogs/v4.22/foo/package.yaml": fooCatalog[:strings.Index(fooCatalog, "---\nschema: olm.bundle")],
				"catalogs/v4.22/x/bundles.yaml":   fooCatalog[strings.Index(fooCatalog, "---\nschema: olm.bundle"):],
			},
			want:    checks.Failure,
			wantErr: "catalogs/v4.22/x/bundles.yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := resolvedInput(t, tt.policy, diff(tt.base, tt.head, nil), tree(tt.base), tree(tt.head))
			res := FBC{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s\n%s\n%+v", res.Conclusion, tt.want, res.Summary, res.Findings)
			}
			if tt.wantErr == "" {
				return
			}
			for _, f := range res.Findings {
				if f.File == tt.wantErr && f.Severity == checks.SeverityError && f.Line > 0 {
					return
				}
			}
			t.Errorf("no error with a line in %s: %+v", tt.wantErr, res.Findings)
		})
	}
}

// TestPackageHomesByDirectory: under the directories layout a package's
// home, whose approvers own it wherever its blobs sit, is the directory it
// is kept in, whatever its name.
func TestPackageHomesByDirectory(t *testing.T) {
	konflux := strings.ReplaceAll(fooCatalog, "foo", "konflux-operator")
	base := map[string]string{"catalogs/v4.22/konflux/catalog.yaml": konflux}
	head := map[string]string{"catalogs/v4.22/konflux/catalog.yaml": strings.Replace(konflux, ":v1.0.0", ":v1.0.1", 1)}
	for layout, want := range map[string]string{
		policy.LayoutDirectories: "catalogs/v4.22/konflux/",
		policy.LayoutPackageDirs: "catalogs/v4.22/konflux-operator/",
	} {
		got, err := TouchedPackages(diff(base, head, nil), tree(base), tree(head), []string{"catalogs/v4.22"}, layout)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != "konflux-operator" || got[0].Home != want {
			t.Errorf("layout %s: %+v; want konflux-operator at home %s", layout, got, want)
		}
	}
}

// TestGraphsAcrossCatalogs: one bundle added to a package in several
// catalogs draws one picture, standing for every catalog it was added to;
// a catalog where the channel came out otherwise gets its own.
func TestGraphsAcrossCatalogs(t *testing.T) {
	bumped := strings.Replace(fooCatalog, "foo.v1.0.0", "foo.v1.0.1", -1)
	base, head := map[string]string{}, map[string]string{}
	for _, c := range []string{"v4.17", "v4.18", "v4.19", "v4.20"} {
		base["catalogs/"+c+"/foo/catalog.yaml"] = fooCatalog
		head["catalogs/"+c+"/foo/catalog.yaml"] = bumped
	}
	head["catalogs/v4.20/foo/catalog.yaml"] = strings.Replace(fooCatalog, "foo.v1.0.0", "foo.v2.0.0", -1)
	in := resolvedInput(t, "catalogs:\n  - each: catalogs/v4.*\n", diff(base, head, nil), tree(base), tree(head))
	gs, more, err := Graphs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || more != 0 {
		t.Fatalf("%d graphs (%d more); want 2", len(gs), more)
	}
	want := []string{"catalogs/v4.17", "catalogs/v4.18", "catalogs/v4.19"}
	if !slices.Equal(gs[0].Roots, want) || gs[0].Root != want[0] {
		t.Errorf("first graph stands for %q (root %s); want %q", gs[0].Roots, gs[0].Root, want)
	}
	if gs[1].Root != "catalogs/v4.20" || gs[1].Roots != nil {
		t.Errorf("second graph: root %s, roots %q; want catalogs/v4.20 alone", gs[1].Root, gs[1].Roots)
	}
}

// objectTree is tree with each file named by its git object id, as a
// tree of a git commit names it: what a pass makes of a catalog whose files
// another catalog holds too is then made once (fbc.Cache).
func objectTree(files map[string]string) fstest.MapFS {
	m := tree(files)
	for name, f := range m {
		f.Sys = plumbing.ComputeHash(plumbing.BlobObject, f.Data)
		m[name] = f
	}
	return m
}

// TestSameTreesAcrossCatalogs: a change to a package in the catalog of each
// OpenShift version, most of them the same files, is judged, drawn and
// reported exactly as when no catalog's files are known to be another's.
// (That every copy still counts against limits.catalogBytes is
// fbc.TestCacheSameTree's: past a limit, the checks that run side by side
// race for what is left, so which copies are refused varies from run to
// run, with or without the ids.)
func TestSameTreesAcrossCatalogs(t *testing.T) {
	bumped := strings.Replace(fooCatalog, "foo.v1.0.0", "foo.v1.0.1", -1)
	base, head := map[string]string{}, map[string]string{}
	for _, c := range []string{"v4.17", "v4.18", "v4.19", "v4.20", "v4.21"} {
		base["catalogs/"+c+"/foo/catalog.yaml"] = fooCatalog
		head["catalogs/"+c+"/foo/catalog.yaml"] = bumped
		// A file the change leaves alone, the same in every catalog,
		// which the checks of the package's directory read.
		note := "schema: com.example.note\npackage: foo\nnote: the same in every catalog\n"
		base["catalogs/"+c+"/foo/note.yaml"], head["catalogs/"+c+"/foo/note.yaml"] = note, note
	}
	head["catalogs/v4.20/foo/catalog.yaml"] = strings.Replace(fooCatalog, "foo.v1.0.0", "foo.v2.0.0", -1)
	head["catalogs/v4.21/foo/catalog.yaml"] = badDefault(bumped)
	type outcome struct {
		Report    checks.Report
		Graphs    []Graph
		More      int
		Readiness []Readiness
		Cards     []Card
	}
	judge := func(trees func(map[string]string) fstest.MapFS) outcome {
		in := resolvedInput(t, "catalogs:\n  - each: catalogs/v4.*\n", diff(base, head, nil), trees(base), trees(head))
		ctx := fbc.WithCache(context.Background(), fbc.NewCache())
		var o outcome
		var err error
		o.Report = Run(ctx, in)
		if o.Graphs, o.More, err = Graphs(ctx, in); err != nil {
			t.Fatal(err)
		}
		if o.Readiness, err = OLMv1Readiness(ctx, in); err != nil {
			t.Fatal(err)
		}
		if o.Cards, err = Cards(ctx, in); err != nil {
			t.Fatal(err)
		}
		return o
	}
	want, got := judge(tree), judge(objectTree)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the files' object ids:\n%+v\nwant, without them,\n%+v", got, want)
	}
	// The comparison means something only if the change is judged in
	// every catalog (the broken one fails it) and every section is drawn.
	for _, r := range want.Report.Results {
		if r.Name == FBCName && (r.Conclusion != checks.Failure || !slices.ContainsFunc(r.Findings, func(f checks.Finding) bool {
			return strings.HasPrefix(f.File, "catalogs/v4.21/")
		})) {
			t.Errorf("the broken catalog was not found: %s %+v", r.Conclusion, r.Findings)
		}
	}
	if len(want.Graphs) == 0 || len(want.Cards) == 0 || len(want.Readiness) == 0 {
		t.Errorf("%d graphs, %d readiness sections and %d cards; the comparison means little", len(want.Graphs), len(want.Readiness), len(want.Cards))
	}
}
