package reconcile

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// fastChannel is a file that adds channel fast to package foo.
const fastChannel = "schema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.0.0\n"

// TestTwoValidChangesDoNotMakeAnInvalidMain: two pull requests, each valid
// alone, add channel fast to package foo in different files. The first
// merges; the second is judged as merged onto the new main, where the
// channel is a duplicate, and is refused with the finding, whether it was
// opened before the first merged or after (from the old base).
func TestTwoValidChangesDoNotMakeAnInvalidMain(t *testing.T) {
	for _, tc := range []struct {
		name string
		// late: the second pull request is opened only after the first
		// merged, from a branch made before.
		late bool
	}{{name: "both open"}, {name: "second opened after the first merged", late: true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(mergePolicy))
			a := e.openPR("alice", "fast-a", map[string]string{"catalog/foo/fast-a.yaml": fastChannel})
			e.repo.Commit("fast-b", map[string]string{"catalog/foo/fast-b.yaml": fastChannel}, "change by alice")
			openB := func() *githubtest.PR { return e.repo.OpenPR("alice", "fast-b", "main") }
			var second *githubtest.PR
			if !tc.late {
				second = openB()
			}

			e.process(a, "pull_request")
			if e.mergesAt(a.HeadSHA()) != 1 {
				t.Fatalf("the first pull request was not merged: %+v", e.repo.Merges())
			}
			if tc.late {
				second = openB()
			}
			e.process(second, "pull_request")

			if n := e.mergesAt(second.HeadSHA()); n != 0 {
				main, _ := e.repo.ReadFile("main", "catalog/foo/fast-a.yaml")
				t.Fatalf("the second pull request was merged, and main holds channel fast twice (fast-a.yaml: %q)", main)
			}
			run := e.run(second.HeadSHA(), CheckRunName)
			if run.Conclusion != "failure" {
				t.Errorf("the second pull request's run concluded %q, want failure", run.Conclusion)
			}
			found := false
			for _, an := range run.Annotations {
				if strings.Contains(an.Message, "duplicate channel") && strings.Contains(an.Message, "fast") && strings.HasPrefix(an.Path, "catalog/foo/fast-") {
					found = true
				}
			}
			if !found {
				t.Errorf("no annotation names the duplicate channel: %+v", run.Annotations)
			}
			tip := e.repo.Branch("main")
			if want := "Checked as merged onto `main` at `" + change.ShortSHA(tip) + "`"; !strings.Contains(run.Summary, want) {
				t.Errorf("the run does not say what it judged (%q):\n%s", want, run.Summary)
			}
			codes, ok := review.ParseBlockedBy(run.Text)
			if !ok || !containsCode(codes, policy.CodeChecksFailed) {
				t.Errorf("blocked-by %v (%v), want checks-failed; text:\n%s", codes, ok, run.Text)
			}
		})
	}
}

func containsCode(codes []policy.Code, c policy.Code) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}
