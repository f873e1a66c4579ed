package reconcile

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// otherRun reports a completed check run named name at sha as the App
// slug, another App installed on the repository.
func (e *env) otherRun(slug, sha, name, conclusion string) int64 {
	e.t.Helper()
	c := github.NewClient(nil).WithAuthToken(e.gh.OtherAppToken(e.repo, slug))
	base, err := url.Parse(e.gh.URL + "/")
	if err != nil {
		e.t.Fatal(err)
	}
	c.BaseURL = base
	run, _, err := c.Checks.CreateCheckRun(context.Background(), "acme", "catalog", github.CreateCheckRunOptions{
		Name: name, HeadSHA: sha, Status: github.String("completed"), Conclusion: github.String(conclusion),
	})
	if err != nil {
		e.t.Fatalf("%s's %s run: %v", slug, name, err)
	}
	return run.GetID()
}

// TestOtherAppsRuns: check runs are told apart by the App that made them.
// Another App's run named catalogbot neither hides catalogbot's nor stands
// in for it, and a required check naming its App is satisfied by that
// App's run only.
func TestOtherAppsRuns(t *testing.T) {
	requireCI := func(entry string) string { return mergePolicy + "  requiredChecks: [" + entry + "]\n" }
	tests := []struct {
		name   string
		policy string
		// runs reports other Apps' runs at the head once catalogbot's run
		// is there, before the merge is decided.
		runs  func(e *env, sha string)
		merge bool
	}{
		{name: "another App's newer failing catalogbot run", policy: mergePolicy, merge: true,
			runs: func(e *env, sha string) { e.otherRun("mallory-app", sha, CheckRunName, "failure") }},
		{name: "ci of the named App", policy: requireCI("{name: ci, app: github-actions}"), merge: true,
			runs: func(e *env, sha string) { e.otherRun("github-actions", sha, "ci", "success") }},
		{name: "ci of another App than the named one", policy: requireCI("{name: ci, app: github-actions}"), merge: false,
			runs: func(e *env, sha string) { e.otherRun("mallory-app", sha, "ci", "success") }},
		{name: "another App's newer success over the named App's failure", policy: requireCI("{name: ci, app: github-actions}"), merge: false,
			runs: func(e *env, sha string) {
				e.otherRun("github-actions", sha, "ci", "failure")
				e.otherRun("mallory-app", sha, "ci", "success")
			}},
		{name: "another App's newer failure over the named App's success", policy: requireCI("{name: ci, app: github-actions}"), merge: true,
			runs: func(e *env, sha string) {
				e.otherRun("github-actions", sha, "ci", "success")
				e.otherRun("mallory-app", sha, "ci", "failure")
			}},
		{name: "ci by any App for a bare name", policy: requireCI("ci"), merge: true,
			runs: func(e *env, sha string) { e.otherRun("mallory-app", sha, "ci", "success") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(tc.policy))
			pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
			sha := pr.HeadSHA()
			// catalogbot's run first, without a merge; then the other
			// Apps' runs, newer than it; then the merge decision.
			pr.SetMergeable(false)
			e.process(pr, "pull_request")
			tc.runs(e, sha)
			pr.SetMergeable(true)
			e.process(pr, "pull_request")
			if got := e.mergesAt(sha) == 1; got != tc.merge {
				t.Errorf("merged %v, want %v (merges %+v)", got, tc.merge, e.repo.Merges())
			}
			ours := 0
			for _, r := range e.repo.CheckRuns(sha) {
				if r.Name == CheckRunName && r.AppID == e.gh.AppID() {
					ours++
					if r.Conclusion != "success" {
						t.Errorf("catalogbot's run concluded %q", r.Conclusion)
					}
				}
			}
			if ours != 1 {
				t.Errorf("%d catalogbot runs of its own at the head, want 1", ours)
			}
		})
	}
}

// TestOtherAppsRunCannotCauseMerge: a success named catalogbot from
// another App does not stand in for catalogbot's failure.
func TestOtherAppsRunCannotCauseMerge(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "defaultChannel: stable", "defaultChannel: beta", 1)})
	e.otherRun("mallory-app", pr.HeadSHA(), CheckRunName, "success")
	e.process(pr, "pull_request")
	if e.mergesAt(pr.HeadSHA()) != 0 {
		t.Fatalf("an invalid catalog merged on another App's run: %+v", e.repo.Merges())
	}
	for _, r := range e.repo.CheckRuns(pr.HeadSHA()) {
		if r.Name == CheckRunName && r.AppID == e.gh.AppID() && r.Conclusion != "failure" {
			t.Errorf("catalogbot's run concluded %q, want failure", r.Conclusion)
		}
	}
}

// TestRerequestOfOtherAppsRun: a re-request delivery is a forced rewrite
// of catalogbot's run only when it is about catalogbot's own run.
func TestRerequestOfOtherAppsRun(t *testing.T) {
	e := newEnv(t, catalogRepo(""))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	sha := pr.HeadSHA()
	ours := e.run(sha, CheckRunName).ID
	theirs := e.otherRun("mallory-app", sha, CheckRunName, "failure")

	for _, tc := range []struct {
		name    string
		event   string
		run     int64
		patches int
	}{
		{"another App's check_run", "check_run", theirs, 0},
		{"catalogbot's check_run", "check_run", ours, 1},
		{"catalogbot's check_suite", "check_suite", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := e.job(pr, tc.event)
			job.Action = "rerequested"
			job.Payload = e.gh.Payload(tc.event, "rerequested", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number, CheckRunID: tc.run})
			before := len(e.requests())
			if err := processAll(context.Background(), e.app, job); err != nil {
				t.Fatal(err)
			}
			patched := 0
			for _, r := range e.requests()[before:] {
				if r.Method == "PATCH" && strings.Contains(r.Path, "/check-runs/") {
					patched++
				}
			}
			if patched != tc.patches {
				t.Errorf("the re-request patched catalogbot's run %d times, want %d", patched, tc.patches)
			}
		})
	}
}
