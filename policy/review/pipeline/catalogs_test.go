package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy"
)

// TestFBCCatalogs: a catalog is validated whole, as it is published: the
// roots of one catalog together, the catalogs of a repository each on its
// own.
func TestFBCCatalogs(t *testing.T) {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	twoRoots := "catalog:\n  roots: [catalog, incubator]\n"
	versions := "catalogs:\n  - each: catalogs/v4.*\n"
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, findings := policy.Parse(policy.FileName, []byte(tt.policy))
			if len(findings) > 0 {
				t.Fatal(findings)
			}
			base, head := tree(tt.base), tree(tt.head)
			pol, targets, err := pol.Resolved(base, head)
			if err != nil {
				t.Fatal(err)
			}
			in := &Input{Change: diff(tt.base, tt.head, nil), Base: base, Head: head, Policy: pol, Targets: targets}
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
