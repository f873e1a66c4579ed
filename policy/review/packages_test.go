package review

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// Blobs of bob's package bar that an attacker writes elsewhere: a channel,
// a bundle with the attacker's image, and a deprecation.
const (
	barChannel = `---
schema: olm.channel
package: bar
name: fast
entries:
  - name: bar.v9.0.0
`
	barBundle = `---
schema: olm.bundle
package: bar
name: bar.v9.0.0
image: evil.example.com/bar-bundle:v9.0.0
properties:
  - type: olm.package
    value:
      packageName: bar
      version: 9.0.0
`
	barDeprecation = `---
schema: olm.deprecations
package: bar
entries:
  - reference:
      schema: olm.package
    message: bar is deprecated; use evil instead
`
)

// diffFS lists what a change from base to head does to each file, as the
// pull request files API would; renamed maps new paths to old ones.
func diffFS(author string, base, head fstest.MapFS, renamed map[string]string) *change.Change {
	c := &change.Change{Number: 7, Author: author, BaseSHA: baseSHA, HeadSHA: headSHA}
	gone := map[string]bool{}
	for n, o := range renamed {
		c.Files = append(c.Files, change.File{Path: n, PreviousPath: o, Status: change.Renamed})
		gone[o], gone[n] = true, true
	}
	for n, f := range head {
		old, ok := base[n]
		switch {
		case gone[n]:
		case !ok:
			c.Files = append(c.Files, change.File{Path: n, Status: change.Added})
		case string(old.Data) != string(f.Data):
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

func appendTo(fsys fstest.MapFS, name, text string) {
	var old []byte
	if f := fsys[name]; f != nil {
		old = f.Data
	}
	fsys[name] = &fstest.MapFile{Data: append(append([]byte{}, old...), text...)}
}

// TestPackageOwnership: a change to a package's blobs needs the package's
// owners wherever the blobs sit (spec/owners.md section 4), and on the
// head a blob outside its package's directory is an error. Every case but
// the last two merged before.
func TestPackageOwnership(t *testing.T) {
	cases := []struct {
		name string
		// edit changes base and head; renamed as in diffFS.
		edit    func(base, head fstest.MapFS)
		renamed map[string]string
		author  string
		events  []owners.Event
		merge   bool
		// needs are lines the status comment must hold.
		needs []string
		// fbc is the fbc check's conclusion.
		fbc checks.Conclusion
		// free sets catalog.layout: free, so that only ownership
		// stands in the way.
		free bool
		// rule is the error the fbc check must report; PK1 when the
		// check fails and it is "".
		rule string
	}{
		{
			name: "a package the base keeps elsewhere, defined again at home",
			edit: func(base, head fstest.MapFS) {
				baz := strings.ReplaceAll(string(head["catalog/bar/catalog.yaml"].Data), "bar", "baz")
				for _, fs := range []fstest.MapFS{base, head} {
					fs["OWNERS"] = &fstest.MapFile{Data: []byte("approvers: [root-owner]\noptions:\n  auto_approve_unowned_subfolders: true\n")}
					fs["catalog/qux/catalog.yaml"] = &fstest.MapFile{Data: []byte(baz)}
				}
				head["catalog/baz/catalog.yaml"] = &fstest.MapFile{Data: []byte(baz)}
			},
			author: "mallory",
			needs:  []string{"package baz (home catalog/baz/; blobs 3 added in catalog/baz/catalog.yaml): needs no approval"},
			fbc:    checks.Failure,
			rule:   "C2",
		},
		{
			name: "foo's owner adds a channel, a bundle and a deprecation of bar from foo's file",
			edit: func(_, head fstest.MapFS) {
				appendTo(head, "catalog/foo/catalog.yaml", barChannel+barBundle+barDeprecation)
			},
			author: "alice",
			needs:  []string{"package bar (home catalog/bar/; blobs 3 added in catalog/foo/catalog.yaml): needs bob"},
			fbc:    checks.Failure,
		},
		{
			name: "a stranger writes foo's blobs into an auto-approved new directory",
			edit: func(base, head fstest.MapFS) {
				for _, fs := range []fstest.MapFS{base, head} {
					fs["OWNERS"] = &fstest.MapFile{Data: []byte("approvers: [root-owner]\noptions:\n  auto_approve_unowned_subfolders: true\n")}
				}
				head["catalog/evil/catalog.yaml"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(barChannel+barBundle, "bar", "foo"))}
			},
			author: "mallory",
			needs:  []string{"package foo (home catalog/foo/; blobs 2 added in catalog/evil/catalog.yaml): needs alice"},
			fbc:    checks.Failure,
		},
		{
			name: "a package defined again from the author's own directory",
			edit: func(base, head fstest.MapFS) {
				baz := strings.ReplaceAll(string(head["catalog/bar/catalog.yaml"].Data), "bar", "baz")
				for _, fs := range []fstest.MapFS{base, head} {
					fs["catalog/qux/catalog.yaml"] = &fstest.MapFile{Data: []byte(baz)}
				}
				appendTo(head, "catalog/foo/catalog.yaml", baz)
			},
			author: "alice",
			needs:  []string{"package baz (home catalog/baz/; blobs 3 added in catalog/foo/catalog.yaml): needs root-owner"},
			fbc:    checks.Failure,
		},
		{
			name: "a bundle of bar added in a renamed file",
			edit: func(base, head fstest.MapFS) {
				head["catalog/foo/catalog2.yaml"] = &fstest.MapFile{Data: []byte(string(head["catalog/foo/catalog.yaml"].Data) + barBundle)}
				delete(head, "catalog/foo/catalog.yaml")
			},
			renamed: map[string]string{"catalog/foo/catalog2.yaml": "catalog/foo/catalog.yaml"},
			author:  "alice",
			needs:   []string{"package bar (home catalog/bar/; blob 1 added in catalog/foo/catalog2.yaml): needs bob"},
			fbc:     checks.Failure,
		},
		{
			name: "a deprecation of bar alone",
			edit: func(_, head fstest.MapFS) {
				head["catalog/foo/deprecations.yaml"] = &fstest.MapFile{Data: []byte(barDeprecation)}
			},
			author: "alice",
			needs:  []string{"package bar (home catalog/bar/; blob 1 added in catalog/foo/deprecations.yaml): needs bob"},
			fbc:    checks.Failure,
		},
		{
			name: "removing bar's blob from foo's directory",
			edit: func(base, _ fstest.MapFS) {
				base["catalog/foo/deprecations.yaml"] = &fstest.MapFile{Data: []byte(barDeprecation)}
			},
			author: "alice",
			needs:  []string{"package bar (home catalog/bar/; blob 1 removed in catalog/foo/deprecations.yaml): needs bob"},
			fbc:    checks.Success,
		},
		{
			name: "a package named like bar in another case",
			edit: func(_, head fstest.MapFS) {
				appendTo(head, "catalog/foo/catalog.yaml", strings.ReplaceAll(barDeprecation, "package: bar", "package: Bar"))
			},
			author: "alice",
			needs:  []string{"package Bar (home catalog/Bar/; blob 1 added in catalog/foo/catalog.yaml): needs root-owner"},
			fbc:    checks.Failure,
		},
		{
			name: "under a free layout, foo's owner still cannot change bar",
			edit: func(_, head fstest.MapFS) {
				appendTo(head, "catalog/foo/catalog.yaml", barChannel+barBundle+barDeprecation)
			},
			free:   true,
			author: "alice",
			needs:  []string{"package bar (home catalog/bar/; blobs 3 added in catalog/foo/catalog.yaml): needs bob"},
			fbc:    checks.Success,
		},
		{
			name: "under a free layout, a stranger's blobs of foo in a new directory need alice",
			edit: func(base, head fstest.MapFS) {
				for _, fs := range []fstest.MapFS{base, head} {
					fs["OWNERS"] = &fstest.MapFile{Data: []byte("approvers: [root-owner]\noptions:\n  auto_approve_unowned_subfolders: true\n")}
				}
				head["catalog/evil/catalog.yaml"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(barChannel+barBundle, "bar", "foo"))}
			},
			free:   true,
			author: "mallory",
			needs:  []string{"package foo (home catalog/foo/; blobs 2 added in catalog/evil/catalog.yaml): needs alice"},
			fbc:    checks.Success,
		},
		{
			name: "under a free layout, bob's approval of bar's blobs in foo's file merges",
			edit: func(_, head fstest.MapFS) {
				appendTo(head, "catalog/foo/catalog.yaml", barDeprecation)
			},
			free:   true,
			author: "alice",
			events: []owners.Event{comment("bob", "/approve", 1)},
			merge:  true,
			needs:  []string{"package bar (home catalog/bar/; blob 1 added in catalog/foo/catalog.yaml): approved by bob"},
			fbc:    checks.Success,
		},
		{
			name: "bob approves the change to bar; the layout still fails",
			edit: func(_, head fstest.MapFS) {
				appendTo(head, "catalog/foo/catalog.yaml", barDeprecation)
			},
			author: "alice",
			events: []owners.Event{comment("bob", "/approve", 1)},
			needs:  []string{"package bar (home catalog/bar/; blob 1 added in catalog/foo/catalog.yaml): approved by bob"},
			fbc:    checks.Failure,
		},
		{
			name: "an owner's change to their own package at home merges",
			edit: func(_, head fstest.MapFS) {
				head["catalog/foo/catalog.yaml"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(string(head["catalog/foo/catalog.yaml"].Data), "foo-bundle:v1.0.0", "foo-bundle:v1.0.1"))}
			},
			author: "alice",
			merge:  true,
			needs:  []string{"package foo (home catalog/foo/; blobs 1 added, 1 removed in catalog/foo/catalog.yaml): approved by alice"},
			fbc:    checks.Success,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, head := repo(), repo()
			tc.edit(base, head)
			if tc.free {
				for _, fs := range []fstest.MapFS{base, head} {
					appendTo(fs, ".catalogbot.yaml", "catalog:\n  layout: free\n")
				}
			}
			c := diffFS(tc.author, base, head, tc.renamed)
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head, EventsRead: true, Events: tc.events})
			if err != nil {
				t.Fatal(err)
			}
			d := o.Decide(Forge{Local: true})
			if d.Merge != tc.merge {
				t.Errorf("merge = %v, want %v; reasons %q", d.Merge, tc.merge, d.Reasons())
			}
			comment := o.StatusComment(d)
			for _, line := range tc.needs {
				if !strings.Contains(comment, line) {
					t.Errorf("the status comment does not say %q:\n%s", line, comment)
				}
			}
			if got := o.Report.Conclusions()[pipeline.FBCName]; got != tc.fbc {
				t.Errorf("fbc = %s, want %s", got, tc.fbc)
			}
			if tc.fbc == checks.Failure {
				rule := tc.rule
				if rule == "" {
					rule = pipeline.RuleLayout
				}
				i := slices.IndexFunc(o.Report.Results, func(r checks.Result) bool { return r.Name == pipeline.FBCName })
				if !slices.ContainsFunc(o.Report.Results[i].Findings, func(f checks.Finding) bool {
					return f.Rule == rule && f.Severity == checks.SeverityError
				}) {
					t.Errorf("no %s error: %+v", rule, o.Report.Results[i].Findings)
				}
			}
		})
	}
}
