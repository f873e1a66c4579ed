package pipeline

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

const fooCatalog = fbctest.Foo

// badDefault breaks a catalog: its default channel does not exist.
func badDefault(catalog string) string {
	return strings.Replace(catalog, "defaultChannel: stable", "defaultChannel: beta", 1)
}

func tree(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

// resolvedInput is the Input of the change c from base to head under the
// policy file text policyText, its catalogs resolved against both trees.
func resolvedInput(t *testing.T, policyText string, c *change.Change, base, head fs.FS) *Input {
	t.Helper()
	pol, findings := policy.Parse(policy.FileName, []byte(policyText))
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	pol, targets, err := pol.Resolved(base, head)
	if err != nil {
		t.Fatal(err)
	}
	return &Input{Change: c, Base: base, Head: head, Policy: pol, Targets: targets}
}

// diff lists what a change from base to head does to each file, as the
// pull request files API would, renames given by renamed (new -> old).
func diff(base, head, renamed map[string]string) *change.Change {
	c := &change.Change{HeadSHA: "h", BaseSHA: "b"}
	gone := map[string]bool{}
	for n, o := range renamed {
		c.Files = append(c.Files, change.File{Path: n, PreviousPath: o, Status: change.Renamed})
		gone[o], gone[n] = true, true
	}
	for n, data := range head {
		if gone[n] {
			continue
		}
		old, ok := base[n]
		switch {
		case !ok:
			c.Files = append(c.Files, change.File{Path: n, Status: change.Added})
		case old != data:
			c.Files = append(c.Files, change.File{Path: n, Status: change.Modified})
		}
	}
	for n := range base {
		if _, ok := head[n]; !ok && !gone[n] {
			c.Files = append(c.Files, change.File{Path: n, Status: change.Removed})
		}
	}
	change.SortFiles(c.Files)
	return c
}

func TestFBC(t *testing.T) {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	tests := []struct {
		name       string
		base, head map[string]string
		renamed    map[string]string // new path -> old path
		want       checks.Conclusion
		// severities of the findings, by file
		wantSev map[string]checks.Severity
	}{
		{
			name: "valid",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/bar/catalog.yaml": bar},
			want: checks.Success,
		},
		{
			name:    "introduced",
			base:    map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			want:    checks.Failure,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityError},
		},
		{
			name: "an error in an untouched package is out of scope",
			base: map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			head: map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog), "catalog/bar/catalog.yaml": bar},
			want: checks.Success,
		},
		{
			name:    "pre-existing in the touched package",
			base:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			head:    map[string]string{"catalog/foo/catalog.yaml": strings.Replace(badDefault(fooCatalog), ":v1.0.0", ":v1.0.0-1", 1)},
			want:    checks.Success,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityWarning},
		},
		{
			name:    "a file in the root brings the whole catalog in",
			base:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			head:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog), "catalog/.indexignore": "*.md\n"},
			want:    checks.Success,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityWarning},
		},
		{
			name: "a package defined in a second directory",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/foo2/catalog.yaml": fooCatalog},
			want: checks.Failure,
			// The duplicate is reported at the second definition.
			wantSev: map[string]checks.Severity{"catalog/foo2/catalog.yaml": checks.SeverityError},
		},
		{
			name: "a package defined again in a directory of another name",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/bar/catalog.yaml": bar},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/bar/catalog.yaml": bar, "catalog/x/catalog.yaml": fooCatalog},
			want: checks.Failure,
			// catalog/foo joins the scope as the directory of package foo,
			// so the duplicate is found; the layout break is a warning.
			wantSev: map[string]checks.Severity{"catalog/x/catalog.yaml": checks.SeverityError},
		},
		{
			name: "removing a package's definition but not its bundles",
			base: map[string]string{
				"catalog/foo/package.yaml": fooCatalog[:strings.Index(fooCatalog, "---\nschema: olm.bundle")],
				"catalog/foo/bundles.yaml": fooCatalog[strings.Index(fooCatalog, "---\nschema: olm.bundle"):],
				"catalog/bar/catalog.yaml": bar,
			},
			head: map[string]string{
				"catalog/foo/bundles.yaml": fooCatalog[strings.Index(fooCatalog, "---\nschema: olm.bundle"):],
				"catalog/bar/catalog.yaml": bar,
			},
			want:    checks.Failure,
			wantSev: map[string]checks.Severity{"catalog/foo/bundles.yaml": checks.SeverityError},
		},
		{
			name:    "pre-existing under the old name of a rename",
			base:    map[string]string{"catalog/foo/old.yaml": badDefault(fooCatalog)},
			head:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			renamed: map[string]string{"catalog/foo/catalog.yaml": "catalog/foo/old.yaml"},
			want:    checks.Success,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityWarning},
		},
		{
			name:    "new root",
			base:    map[string]string{"README.md": "x"},
			head:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			want:    checks.Failure,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityError},
		},
		{
			name: "a package kept in another directory on the base, defined again in its own",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/qux/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "baz")},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/qux/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "baz"),
				"catalog/baz/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "baz")},
			want: checks.Failure,
			// The base's baz in qux joins the scope through the package
			// index, and the whole catalog's duplicate is found there.
			wantSev: map[string]checks.Severity{"catalog/qux/catalog.yaml": checks.SeverityError},
		},
		{
			name: "no root",
			base: map[string]string{"README.md": "x"},
			head: map[string]string{"README.md": "y"},
			want: checks.Success,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := diff(tt.base, tt.head, tt.renamed)
			in := &Input{Change: c, Base: tree(tt.base), Head: tree(tt.head), Policy: policy.Default()}
			res := FBC{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s (%s)", res.Conclusion, tt.want, res.Summary)
			}
			seen := map[string]bool{}
			for _, f := range res.Findings {
				seen[f.File] = true
				if f.Rule == RuleLayout {
					continue
				}
				if want, ok := tt.wantSev[f.File]; !ok || f.Severity != want || f.Line == 0 {
					t.Errorf("finding %+v, want severity %q and a line", f, want)
				}
			}
			for file := range tt.wantSev {
				if !seen[file] {
					t.Errorf("no finding in %s; findings: %+v", file, res.Findings)
				}
			}
		})
	}
}

func TestOwners(t *testing.T) {
	base := tree(map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": fooCatalog,
	})
	head := tree(map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "v1.0.0\n", "v1.0.1\n", 1),
	})
	tests := []struct {
		name      string
		author    string
		approvals []string
		want      checks.Conclusion
	}{
		{"author owns the file", "alice", nil, checks.Success},
		{"stranger without approval", "mallory", nil, checks.Failure},
		{"stranger approved by an owner", "mallory", []string{"alice"}, checks.Success},
		{"stranger approved by a stranger", "mallory", []string{"eve"}, checks.Failure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &change.Change{Author: tt.author, HeadSHA: "h", BaseSHA: "b",
				Files: []change.File{{Path: "catalog/foo/catalog.yaml", Status: change.Modified}}}
			var approvals []owners.Approval
			for _, u := range tt.approvals {
				approvals = append(approvals, owners.Approval{User: u, SHA: "h", Via: owners.ViaComment})
			}
			in := &Input{Change: c, Base: base, Head: head, Policy: policy.Default(), Approvals: approvals}
			rep := checks.Run(context.Background(), in, checks.Check[*Input](Owners{}))
			res := rep.Results[0]
			if res.Name != OwnersName || res.Conclusion != tt.want || res.Summary == "" {
				t.Errorf("result = %+v, want %s with a summary", res, tt.want)
			}
			if Approved(rep) != (tt.want == checks.Success) {
				t.Errorf("Approved = %v", Approved(rep))
			}
		})
	}
}

// TestFBCLayout: a blob outside its package's directory is an error on the
// head (PK1), a warning when the base had it already or the policy allows
// a free layout, and the scope still reaches the directory of its name.
func TestFBCLayout(t *testing.T) {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	fooPkg := fooCatalog[:3+strings.Index(fooCatalog[3:], "---")]
	free := policy.Default()
	free.Catalog.Layout = policy.LayoutFree
	tests := []struct {
		name       string
		base, head map[string]string
		pol        *policy.Policy
		// want is the severity of the layout finding in file, "" for
		// none.
		file string
		want checks.Severity
		// duplicate says the head defines foo twice.
		duplicate bool
	}{
		{
			name: "a package again in a directory of another name",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/x/catalog.yaml": fooCatalog},
			file: "catalog/x/catalog.yaml", want: checks.SeverityError, duplicate: true,
		},
		{
			name: "another package's blobs added to a package's file",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/bar/catalog.yaml": bar},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog + strings.ReplaceAll(fooPkg, "foo", "baz"), "catalog/bar/catalog.yaml": bar},
			file: "catalog/foo/catalog.yaml", want: checks.SeverityError,
		},
		{
			name: "a package directly in the root",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/baz.yaml": strings.ReplaceAll(fooCatalog, "foo", "baz")},
			file: "catalog/baz.yaml", want: checks.SeverityError,
		},
		{
			name: "a break already on the base stays a warning",
			base: map[string]string{"catalog/x/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/x/catalog.yaml": fooCatalog, "catalog/x/notes.txt": "notes"},
			file: "catalog/x/catalog.yaml", want: checks.SeverityWarning,
		},
		{
			name: "a free layout warns",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/x/catalog.yaml": fooCatalog},
			pol:  free,
			file: "catalog/x/catalog.yaml", want: checks.SeverityWarning, duplicate: true,
		},
		{
			name: "packages at home",
			base: map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head: map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/bar/catalog.yaml": bar},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := tt.pol
			if pol == nil {
				pol = policy.Default()
			}
			in := &Input{Change: diff(tt.base, tt.head, nil), Base: tree(tt.base), Head: tree(tt.head), Policy: pol}
			res := FBC{}.Run(context.Background(), in)
			var layout []checks.Severity
			duplicate := false
			for _, f := range res.Findings {
				switch {
				case f.Rule == RuleLayout && f.File == tt.file:
					layout = append(layout, f.Severity)
				case f.Rule == RuleLayout:
					t.Errorf("unexpected layout finding %+v", f)
				case f.Rule == "C2":
					duplicate = true
				}
			}
			var want []checks.Severity
			if tt.want != "" {
				want = []checks.Severity{tt.want}
			}
			if !slices.Equal(layout, want) || duplicate != tt.duplicate {
				t.Errorf("layout findings %v, duplicate %v; want %v, %v\n%+v", layout, duplicate, want, tt.duplicate, res.Findings)
			}
			if tt.want == checks.SeverityError && res.Conclusion != checks.Failure {
				t.Errorf("conclusion %s, want failure", res.Conclusion)
			}
		})
	}
}
