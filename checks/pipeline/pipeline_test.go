package pipeline

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

const fooCatalog = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/example/foo-bundle:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.0
`

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
			name:    "pre-existing elsewhere",
			base:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog)},
			head:    map[string]string{"catalog/foo/catalog.yaml": badDefault(fooCatalog), "catalog/bar/catalog.yaml": bar},
			want:    checks.Success,
			wantSev: map[string]checks.Severity{"catalog/foo/catalog.yaml": checks.SeverityWarning},
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
			name: "no root",
			base: map[string]string{"README.md": "x"},
			head: map[string]string{"README.md": "y"},
			want: checks.Neutral,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &change.Change{}
			for n, o := range tt.renamed {
				c.Files = append(c.Files, change.File{Path: n, PreviousPath: o, Status: change.Renamed})
			}
			in := &Input{Change: c, Base: tree(tt.base), Head: tree(tt.head), Policy: policy.Default()}
			res := FBC{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s (%s)", res.Conclusion, tt.want, res.Summary)
			}
			if len(res.Findings) != len(tt.wantSev) {
				t.Fatalf("findings = %+v, want one in each of %v", res.Findings, tt.wantSev)
			}
			for _, f := range res.Findings {
				if want, ok := tt.wantSev[f.File]; !ok || f.Severity != want || f.Line == 0 {
					t.Errorf("finding %+v, want severity %q and a line", f, want)
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
