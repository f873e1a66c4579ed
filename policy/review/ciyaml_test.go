package review

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// ciyamlPolicy is what a community-operators-prod checkout needs: each OCP
// version's directory is a catalog of its own (catalogs/v4.12 ... v4.22),
// with packages one level below it, and the packages' ci.yaml name the
// approvers. The root OWNERS file of the tree is then not read.
const ciyamlPolicy = `catalogs:
  - each: catalogs/v4.*
owners:
  sources: [ci.yaml]
merge:
  enabled: true
`

// communityOperators is the trimmed snapshot of community-operators-prod
// in testdata (see its README) with ciyamlPolicy and a root OWNERS file
// that must not count.
func communityOperators(t testing.TB) map[string]string {
	t.Helper()
	files, err := changetest.ReadFiles(filepath.Join("..", "..", "testdata", "community-operators-prod"))
	if err != nil {
		t.Fatal(err)
	}
	files[".catalogbot.yaml"] = ciyamlPolicy
	files["OWNERS"] = "approvers: [root-admin]\n"
	return files
}

// describe adds a description to the package blob of a catalog file: a
// change to the package that leaves the catalog valid.
func describe(catalog, text string) string {
	return strings.Replace(catalog, "schema: olm.package", "description: "+text+"\nschema: olm.package", 1)
}

// TestCIYAMLReviewers runs pull requests on the layout of
// community-operators-prod, in a real git repository, through the review
// core: the reviewers of operators/<package>/ci.yaml, read from the base,
// approve the package's catalog in every OCP version and nothing else.
func TestCIYAMLReviewers(t *testing.T) {
	const (
		libredb = "libredb-studio-operator"  // reviewers cevheri, yusuf-gundogdu; v4.15-v4.22
		wol     = "kubevirt-wol"             // reviewer gpillon; v4.17-v4.20
		nfs     = "nfs-provisioner-operator" // reviewer Jooho; v4.19-v4.22
	)
	base := communityOperators(t)
	every := func(pkg string) map[string]string {
		out := map[string]string{}
		for p, data := range base {
			if strings.HasPrefix(p, "catalogs/") && strings.HasSuffix(p, "/"+pkg+"/catalog.yaml") {
				out[p] = describe(data, "maintained by its reviewers")
			}
		}
		return out
	}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name    string
		author  string
		head    map[string]string
		approve []string
		merge   bool
		// needs are lines the status comment must hold.
		needs []string
		// layout says the fbc check fails with PK1: a blob outside its
		// package's directory.
		layout bool
		// summary is a line the owners check's summary must hold.
		summary string
	}{
		{
			name: "a reviewer changes their package in every OCP catalog", author: "Cevheri", head: every(libredb), merge: true,
			needs: []string{
				"| `operators/libredb-studio-operator/ci.yaml` reviewers: cevheri, yusuf-gundogdu | yes | Cevheri | `catalogs/v4.15/libredb-studio-operator/`,",
				// One line for the package, whose change in eight catalogs
				// one ci.yaml approves.
				"package libredb-studio-operator in 8 homes, catalogs/v4.15/libredb-studio-operator/ to catalogs/v4.22/libredb-studio-operator/ (blobs 8 added, 8 removed in all): approved by Cevheri (operators/libredb-studio-operator/ci.yaml reviewers: cevheri, yusuf-gundogdu)",
			},
		},
		{
			name: "a reviewer of one package changes another", author: "cevheri",
			head: map[string]string{"catalogs/v4.19/" + wol + "/catalog.yaml": describe(base["catalogs/v4.19/"+wol+"/catalog.yaml"], "taken over")},
			needs: []string{
				"| `operators/kubevirt-wol/ci.yaml` reviewers: gpillon | no | — |",
				"To approve the rest, ask @gpillon",
			},
			summary: "Waiting for approval:\n\n- `operators/kubevirt-wol/ci.yaml` reviewers: gpillon\n",
		},
		{
			name: "adding oneself to a package's reviewers grants nothing", author: "mallory",
			head:  merge(every(wol), map[string]string{"operators/" + wol + "/ci.yaml": strings.Replace(base["operators/"+wol+"/ci.yaml"], "  - gpillon\n", "  - gpillon\n  - mallory\n", 1)}),
			needs: []string{"| `operators/kubevirt-wol/ci.yaml` reviewers: gpillon | no | — |", "To approve the rest, ask @gpillon"},
		},
		{
			name: "the root OWNERS approver is not read", author: "mallory", head: every(wol), approve: []string{"root-admin"},
			needs: []string{"root-admin: is not an approver of any path in this change"},
		},
		{
			name: "a change to two packages waits for the second's reviewers", author: "cevheri", head: merge(every(libredb), every(nfs)),
			needs: []string{"| `operators/nfs-provisioner-operator/ci.yaml` reviewers: jooho | no | — |"},
		},
		{
			name: "a change to two packages merges with both packages' reviewers", author: "cevheri", head: merge(every(libredb), every(nfs)),
			approve: []string{"JOOHO"}, merge: true,
			needs: []string{"| `operators/nfs-provisioner-operator/ci.yaml` reviewers: jooho | yes | JOOHO |"},
		},
		{
			name: "a reviewer writes another package's blob into their own file", author: "gpillon",
			head: map[string]string{"catalogs/v4.20/" + wol + "/catalog.yaml": base["catalogs/v4.20/"+wol+"/catalog.yaml"] +
				"---\nschema: olm.deprecations\npackage: " + nfs + "\nentries:\n  - reference:\n      schema: olm.package\n    message: use kubevirt-wol instead\n"},
			needs:  []string{"package nfs-provisioner-operator (home catalogs/v4.20/nfs-provisioner-operator/; blob 1 added in catalogs/v4.20/kubevirt-wol/catalog.yaml): needs jooho (operators/nfs-provisioner-operator/ci.yaml reviewers: jooho)"},
			layout: true,
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
				if res.Name == pipeline.FBCName && tc.layout {
					want = checks.Failure
				}
				if res.Name != pipeline.OwnersName && res.Conclusion != want {
					t.Errorf("%s: %s, want %s: %+v", res.Name, res.Conclusion, want, res.Findings)
				}
			}
			if tc.summary != "" {
				i := slices.IndexFunc(o.Report.Results, func(r checks.Result) bool { return r.Name == pipeline.OwnersName })
				if !strings.Contains(o.Report.Results[i].Summary, tc.summary) {
					t.Errorf("the owners check's summary does not say %q:\n%s", tc.summary, o.Report.Results[i].Summary)
				}
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
		})
	}
}
