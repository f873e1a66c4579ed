package review

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// pipelinesPolicy is community-operators-prod's layout in one line, and
// merging on, so that the decision says whether the change would merge.
const pipelinesPolicy = "conventions: operator-pipelines\nmerge:\n  enabled: true\n"

// pipelinesRepo is the community-operators-prod slice of testdata read
// under its own conventions: its config.yaml (maintainers Allda, ezopezo,
// haripate, mporrato, tomasbakk), and konflux's and kube-green's reviewers
// with kube-green in v4.19 to v4.21 (testdata/identity, see its README).
func pipelinesRepo(t testing.TB) map[string]string {
	t.Helper()
	files := communityOperators(t)
	extra, err := changetest.ReadFiles(filepath.Join("testdata", "identity"))
	if err != nil {
		t.Fatal(err)
	}
	delete(extra, "README.md")
	maps.Copy(files, extra)
	files[".catalogbot.yaml"] = pipelinesPolicy
	return files
}

// TestPackageIdentity runs, on community-operators-prod's layout and
// through the review core, the changes of a reviewer of one operator that
// reach beyond it: another operator's package shipped from their own
// directory, a new catalog, and the removal of a whole operator, which
// only the maintainers may allow.
func TestPackageIdentity(t *testing.T) {
	base := pipelinesRepo(t)
	kubeGreen := base["catalogs/v4.21/kube-green/catalog.yaml"]
	wolGone := map[string]string{}
	for p := range base {
		if strings.Contains(p, "/kubevirt-wol/") {
			wolGone[p] = changetest.Delete
		}
	}
	cases := []struct {
		name    string
		author  string
		head    map[string]string
		approve []string
		// owners and merge are the owners check's verdict and the
		// decision; release the release guard's.
		owners, merge bool
		release       checks.Conclusion
		// needs are lines the status comment must hold.
		needs []string
	}{
		{
			// The foo-into-bar hole on real data: konflux's reviewer
			// ships kube-green, kept in catalogs/v4.19..v4.21/kube-green/,
			// in catalog v4.22, which lacks it, from a konflux directory.
			name: "a konflux reviewer ships kube-green from a konflux directory", author: "gbenhaim",
			head: map[string]string{"catalogs/v4.22/konflux/catalog.yaml": kubeGreen},
			needs: []string{
				"| `operators/kube-green/ci.yaml` reviewers: davidebianchi | no | — |",
				"| `config.yaml` | no | — |",
				"also package kube-green is its operator's, operators/kube-green/ci.yaml, in every catalog: needs allda or davidebianchi",
				"also directory konflux holds package kube-green, and no directory of that name holds it on the base",
			},
		},
		{
			name: "kube-green from a konflux directory with kube-green's reviewer and a maintainer", author: "gbenhaim",
			head:    map[string]string{"catalogs/v4.22/konflux/catalog.yaml": kubeGreen},
			approve: []string{"davidebianchi", "Allda"}, owners: true, merge: true,
		},
		{
			name: "kube-green's reviewer adds kube-green to another catalog", author: "davidebianchi",
			head:   map[string]string{"catalogs/v4.22/kube-green/catalog.yaml": kubeGreen},
			owners: true, merge: true,
			needs: []string{"package kube-green (home catalogs/v4.22/kube-green/; blob"},
		},
		{
			// A new catalog is a new index tag: one operator's reviewer
			// cannot make it.
			name: "a package reviewer alone creates a new catalog", author: "davidebianchi",
			head:  map[string]string{"catalogs/v4.23/kube-green/catalog.yaml": kubeGreen},
			needs: []string{"| `config.yaml` | no | — |", "catalog v4.23 added: a new catalog is a new published image"},
		},
		{
			name: "a new catalog with a maintainer", author: "davidebianchi",
			head: map[string]string{"catalogs/v4.23/kube-green/catalog.yaml": kubeGreen}, approve: []string{"mporrato"},
			owners: true, merge: true,
		},
		{
			// The maintainers approve every path, and they are the root
			// approvers the release guard asks for.
			name: "a maintainer approves removing a whole operator", author: "ezopezo", head: wolGone,
			owners: true, merge: true, release: checks.Success,
			needs: []string{"allowed: approved by root approver ezopezo"},
		},
		{
			name: "the operator's own reviewer cannot remove it", author: "gpillon", head: wolGone,
			owners: true, release: checks.Failure,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			baseSHA := r.Commit("base", base)
			r.Branch("pr", baseSHA)
			r.Commit("change", tc.head)
			c, baseFS, headFS, err := change.FromGit(r.Dir, baseSHA, "pr")
			if err != nil {
				t.Fatal(err)
			}
			c.Number, c.Author = 7, tc.author
			var events []owners.Event
			for i, login := range tc.approve {
				ev := comment(login, "/approve", i+1)
				ev.CommitSHA = c.HeadSHA
				events = append(events, ev)
			}
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: baseFS, Head: headFS, EventsRead: true, Events: events})
			if err != nil {
				t.Fatal(err)
			}
			if !o.Valid() {
				t.Fatalf("policy findings: %+v", o.PolicyFindings)
			}
			for _, res := range o.Report.Results {
				want := checks.Success
				switch res.Name {
				case pipeline.OwnersName:
					if !tc.owners {
						want = checks.Failure
					}
				case pipeline.ReleaseName:
					if tc.release != "" {
						want = tc.release
					}
				}
				if res.Conclusion != want {
					t.Errorf("%s: %s, want %s: %s %+v", res.Name, res.Conclusion, want, res.Summary, res.Findings)
				}
			}
			d := o.Decide(Forge{Local: true})
			if d.Merge != tc.merge {
				t.Errorf("merge = %v, want %v; reasons %q", d.Merge, tc.merge, d.Reasons())
			}
			// What people read: the status comment, and the checks'
			// summaries and findings.
			text := o.StatusComment(d)
			for _, res := range o.Report.Results {
				text += "\n" + res.Summary
				for _, f := range res.Findings {
					text += "\n" + f.Message
				}
			}
			for _, line := range tc.needs {
				if !strings.Contains(text, line) {
					t.Errorf("neither the status comment nor a check says %q:\n%s", line, text)
				}
			}
		})
	}
}
