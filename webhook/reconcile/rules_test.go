package reconcile

import (
	"context"
	"testing"
)

// TestRulesChangeRechecksOpenPRs: an OWNERS change on the default branch
// re-checks the open pull requests it judges. bob's pull request waits for
// alice; once main makes bob an owner of the package, the push re-checks
// it (nothing about the pull request itself moved) and it merges.
func TestRulesChangeRechecksOpenPRs(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if pr.Merged() {
		t.Fatal("merged without an owner's approval")
	}

	before := e.repo.Branch("main")
	after := e.repo.Commit("main", map[string]string{"catalog/foo/OWNERS": "approvers:\n  - alice\n  - bob\n"}, "bob co-owns foo")
	if err := processAll(context.Background(), e.app, e.pushJob("main", before, after)); err != nil {
		t.Fatal(err)
	}
	if !pr.Merged() {
		t.Errorf("the pull request was not re-checked after OWNERS changed on main; comments: %+v", e.statusComments(pr.Number))
	}
}

// TestUnrelatedPushRechecksNothing: a push that changes catalog content
// only leaves the open pull requests to their own events.
func TestUnrelatedPushRechecksNothing(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	e.settle()
	runs := len(e.repo.CheckRuns(pr.HeadSHA()))

	before := e.repo.Branch("main")
	after := e.repo.Commit("main", map[string]string{"README.md": "catalog\n"}, "docs")
	if err := processAll(context.Background(), e.app, e.pushJob("main", before, after)); err != nil {
		t.Fatal(err)
	}
	if got := len(e.repo.CheckRuns(pr.HeadSHA())); got != runs {
		t.Errorf("check runs at the head went from %d to %d on an unrelated push", runs, got)
	}
	jobs, err := e.app.Resync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("after an unrelated push resync queued %v: the last result was forgotten", prNumbers(jobs))
	}
}
