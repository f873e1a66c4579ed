package review

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// fastChannel is a channel fast of package foo, in a file of its own.
const fastChannel = "schema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.0.0\n"

// TestEvaluateGroup judges merge groups on their content: no approval is
// asked for (each pull request's was judged at its head), a release taken
// away is allowed (only a root approver's approval on its pull request let
// it in), and what the pull requests break only together fails the group.
func TestEvaluateGroup(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string // the group's changes to repo(); "" removes
		conclusion checks.Conclusion
		want       []string // in the findings' messages
		merge      bool
		// asPR is the verdict on the same change as alice's pull
		// request, when it differs: what the group is spared.
		asPR checks.Conclusion
	}{
		{
			name:       "a non-owner's valid change, approved on its pull request",
			files:      map[string]string{"catalog/foo/notes/README": "more notes\n", "catalog/bar/notes/README2": "more\n"},
			conclusion: checks.Success, merge: true,
		},
		{
			name: "two pull requests each adding channel fast in a file of its own",
			files: map[string]string{
				"catalog/foo/fast-a.yaml": fastChannel,
				"catalog/foo/fast-b.yaml": fastChannel,
			},
			conclusion: checks.Failure, want: []string{`duplicate channel "fast"`},
		},
		{
			name:       "a release taken away, allowed on its pull request",
			files:      map[string]string{"catalog/foo/catalog.yaml": strings.ReplaceAll(fbctest.Foo, "1.0.0", "1.0.1")},
			conclusion: checks.Success, want: []string{"allowed in a merge group"}, merge: true,
			asPR: checks.Failure,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, head := repo(), repo()
			c := &change.Change{Repo: "acme/catalog", BaseSHA: baseSHA, HeadSHA: headSHA}
			for p, data := range tc.files {
				status := change.Modified
				if _, ok := base[p]; !ok {
					status = change.Added
				}
				if data == "" {
					delete(head, p)
					status = change.Removed
				} else {
					head[p] = &fstest.MapFile{Data: []byte(data)}
				}
				c.Files = append(c.Files, change.File{Path: p, Status: status})
			}
			change.SortFiles(c.Files)
			o, err := EvaluateGroup(context.Background(), &Group{Change: c, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			if _, ran := o.Report.Conclusions()[pipeline.OwnersName]; ran {
				t.Errorf("the owners check ran on a merge group")
			}
			if got, title := o.Verdict(); got != tc.conclusion {
				t.Errorf("verdict %s (%s), want %s\n%s", got, title, tc.conclusion, o.Summary())
			}
			var msgs []string
			for _, f := range o.Findings() {
				msgs = append(msgs, f.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(msgs, "\n"), w) {
					t.Errorf("no finding says %q: %q", w, msgs)
				}
			}
			if d := o.Decide(Forge{Local: true}); d.Merge != tc.merge {
				t.Errorf("decision merge = %v, want %v: %v", d.Merge, tc.merge, d.Reasons())
			}
			if !strings.HasPrefix(o.Summary(), GroupNote) {
				t.Errorf("the summary does not say it judged a merge group:\n%s", o.Summary())
			}
			if tc.asPR == "" {
				return
			}
			c.Author = "alice"
			pr, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			if got, title := pr.Verdict(); got != tc.asPR {
				t.Errorf("as a pull request: verdict %s (%s), want %s", got, title, tc.asPR)
			}
		})
	}
}
