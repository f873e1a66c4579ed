package reconcile

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks"
)

func TestOwnersPRIsCheckedAndMerged(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	head := pr.HeadSHA()

	e.process(pr, "pull_request")

	run := e.run(head, CheckRunName)
	if run.Status != "completed" || run.Conclusion != "success" {
		t.Fatalf("check run %s/%s %q, want completed/success", run.Status, run.Conclusion, run.Title)
	}
	merges := e.repo.Merges()
	if len(merges) != 1 || merges[0].HeadSHA != head || merges[0].Method != "squash" || merges[0].Number != pr.Number {
		t.Fatalf("merges = %+v, want one squash of #%d pinned to %s", merges, pr.Number, head)
	}
	if !pr.Merged() {
		t.Error("the pull request is not merged")
	}
	if got, err := e.repo.ReadFile("main", "catalog/foo/catalog.yaml"); err != nil || got != bumpedCatalog("v1.0.1") {
		t.Errorf("main after the merge: %q, %v", got, err)
	}
	if cs := e.statusComments(pr.Number); len(cs) != 1 || !strings.Contains(cs[0].Body, "Approved") {
		t.Errorf("status comments = %+v, want one saying Approved", cs)
	}
	if n := e.counter(e.metrics.Merges, MergeMerged); n != 1 {
		t.Errorf("merged counter = %v", n)
	}
}

func TestNonOwnerPRWaitsForApproveComment(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	head := pr.HeadSHA()

	e.process(pr, "pull_request")
	if run := e.run(head, CheckRunName); run.Conclusion != "failure" {
		t.Fatalf("unapproved check run concluded %q", run.Conclusion)
	}
	cs := e.statusComments(pr.Number)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "@alice") || !strings.Contains(cs[0].Body, "catalog/foo/OWNERS") {
		t.Fatalf("status comments = %+v, want one asking @alice for catalog/foo/OWNERS", cs)
	}
	first := cs[0]

	// Comments count only when made after the head was pushed, by the
	// fake's clock, which counts whole seconds.
	e.gh.Advance(2 * time.Second)

	// Neither a bot nor someone who does not own the files approves.
	e.repo.Comment(pr.Number, "helper[bot]", "/approve")
	e.repo.Comment(pr.Number, "mallory", "/approve")
	e.process(pr, "issue_comment")
	if len(e.repo.Merges()) != 0 {
		t.Fatal("merged on a bot's or a non-owner's /approve")
	}

	e.repo.Comment(pr.Number, "alice", "/approve")
	e.process(pr, "issue_comment")
	if e.mergesAt(head) != 1 {
		t.Fatalf("merges = %+v, want one at %s after alice's /approve", e.repo.Merges(), head)
	}
	cs = e.statusComments(pr.Number)
	if len(cs) != 1 || cs[0].ID != first.ID {
		t.Fatalf("status comments = %+v, want the first one (%d) edited in place", cs, first.ID)
	}
	if !strings.Contains(cs[0].Body, "Approved") || !strings.Contains(cs[0].Body, "alice") {
		t.Errorf("status comment after approval:\n%s", cs[0].Body)
	}
}

func TestStatusCommentIsNotRewrittenWhenUnchanged(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	before := len(e.requests())
	e.process(pr, "pull_request")
	for _, r := range e.requests()[before:] {
		if r.Method == "PATCH" || r.Method == "POST" || r.Method == "PUT" {
			t.Errorf("an unchanged pull request was written to: %s %s", r.Method, r.Path)
		}
	}
	// A re-requested check is run and written again.
	before = len(e.requests())
	e.process(pr, "check_run")
	patched := 0
	for _, r := range e.requests()[before:] {
		if r.Method == "PATCH" && strings.Contains(r.Path, "/check-runs/") {
			patched++
		}
	}
	if patched != 1 {
		t.Errorf("a re-requested check patched the run %d times, want 1", patched)
	}
	if n := len(e.repo.CheckRuns(pr.HeadSHA())); n != 1 {
		t.Errorf("%d check runs at the head, want exactly one", n)
	}
}

func TestNeverMerged(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		setup  func(e *env, number int)
		// wantRun is the catalogbot run's conclusion.
		wantRun string
	}{
		{name: "merging disabled", policy: "", wantRun: "success"},
		{name: "draft", policy: mergePolicy, setup: func(e *env, n int) { e.repo.PR(n).SetDraft(true) }, wantRun: "success"},
		{name: "held by /hold", policy: mergePolicy, setup: func(e *env, n int) {
			e.gh.Advance(2 * time.Second)
			e.repo.Comment(n, "carol", "/hold")
		}, wantRun: "success"},
		{name: "held by label", policy: mergePolicy, setup: func(e *env, n int) { e.repo.PR(n).SetLabels("do-not-merge/hold") }, wantRun: "success"},
		{name: "required check missing", policy: mergePolicy + "  requiredChecks: [e2e]\n", wantRun: "success"},
		{name: "not mergeable", policy: mergePolicy, setup: func(e *env, n int) { e.repo.PR(n).SetMergeable(false) }, wantRun: "success"},
		{name: "invalid catalog", policy: mergePolicy, setup: func(e *env, n int) {
			e.repo.PR(n).Push(map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "defaultChannel: stable", "defaultChannel: beta", 1)}, "break")
		}, wantRun: "failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(tc.policy))
			pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
			if tc.setup != nil {
				tc.setup(e, pr.Number)
			}
			e.process(pr, "pull_request")
			if run := e.run(pr.HeadSHA(), CheckRunName); run.Conclusion != tc.wantRun {
				t.Errorf("check run concluded %q (%s), want %q", run.Conclusion, run.Title, tc.wantRun)
			}
			if m := e.repo.Merges(); len(m) != 0 {
				t.Errorf("merged: %+v", m)
			}
		})
	}
}

func TestInvalidPolicyFailsTheCheck(t *testing.T) {
	e := newEnv(t, catalogRepo("merge:\n  enabled: yes\n  mehtod: squash\n"))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	run := e.run(pr.HeadSHA(), CheckRunName)
	if run.Conclusion != "failure" || run.Title != "The repository policy is invalid" {
		t.Fatalf("check run %s %q", run.Conclusion, run.Title)
	}
	for _, want := range []string{".catalogbot.yaml:2", ".catalogbot.yaml:3", "mehtod"} {
		if !strings.Contains(run.Summary, want) {
			t.Errorf("summary does not mention %q:\n%s", want, run.Summary)
		}
	}
	if len(run.Annotations) == 0 || run.Annotations[0].Path != ".catalogbot.yaml" {
		t.Errorf("annotations = %+v, want them on .catalogbot.yaml", run.Annotations)
	}
	if len(e.repo.Merges()) != 0 {
		t.Error("merged under an invalid policy")
	}
}

func TestTooManyFilesFailsClosed(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	files := map[string]string{}
	for i := range 3000 {
		files[fmt.Sprintf("catalog/foo/extra/f%04d.txt", i)] = "x\n"
	}
	pr := e.openPR("alice", "huge", files)
	e.process(pr, "pull_request")
	run := e.run(pr.HeadSHA(), CheckRunName)
	if run.Conclusion != "failure" || run.Title != "Too large to check" {
		t.Fatalf("check run %s %q, want failure: too large", run.Conclusion, run.Title)
	}
	if len(e.repo.Merges()) != 0 {
		t.Error("a pull request too large to check was merged")
	}
}

// TestFaultsAreRetried makes the fake fail requests the way GitHub does
// under trouble: the work still completes, once.
func TestFaultsAreRetried(t *testing.T) {
	tests := []struct {
		name  string
		fault func(e *env)
		code  string
	}{
		{"502 twice", func(e *env) { e.gh.FailNext(2, http.StatusBadGateway) }, "502"},
		{"503", func(e *env) { e.gh.FailNext(1, http.StatusServiceUnavailable) }, "503"},
		{"secondary rate limit 403", func(e *env) { e.gh.RateLimitNext(1) }, "403"},
		{"secondary rate limit 429", func(e *env) { e.gh.TooManyRequestsNext(1) }, "429"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(mergePolicy))
			pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
			tc.fault(e)
			e.process(pr, "pull_request")
			if n := e.mergesAt(pr.HeadSHA()); n != 1 {
				t.Fatalf("%d merges at the head, want 1", n)
			}
			if n := e.counter(e.metrics.GitHubCalls, "POST", tc.code) + e.counter(e.metrics.GitHubCalls, "GET", tc.code); n == 0 {
				t.Errorf("no %s answer was counted: the fault did not happen", tc.code)
			}
			if runs := e.repo.CheckRuns(pr.HeadSHA()); len(runs) != 1 {
				t.Errorf("%d check runs, want 1", len(runs))
			}
		})
	}
}

// TestCheckRunOutput writes check runs with many findings and a long
// summary: annotations go 50 a request and accumulate to all of them, the
// summary is cut to GitHub's limit, an identical report writes nothing, and
// a report whose annotations differ gets a fresh run, since GitHub cannot
// take annotations back.
func TestCheckRunOutput(t *testing.T) {
	e := newEnv(t, catalogRepo(""))
	sha := e.repo.Branch("main")
	gh, err := e.app.gh.Installation(e.gh.InstallationID(e.repo))
	if err != nil {
		t.Fatal(err)
	}
	findings := func(n int, msg string) []checks.Finding {
		var out []checks.Finding
		for i := range n {
			sev := checks.SeverityWarning
			if i%3 == 0 {
				sev = checks.SeverityError
			}
			out = append(out, checks.Finding{Rule: "R1", Severity: sev, File: "catalog/foo/catalog.yaml", Line: i + 1, Message: msg})
		}
		// Findings without a line are not annotations.
		return append(out, checks.Finding{Rule: "R2", Severity: checks.SeverityError, Message: "no place"})
	}
	out := checkOutput{Conclusion: checks.Failure, Title: "Failed", Summary: strings.Repeat("x", MaxSummary+100), Findings: findings(120, "bad")}
	write := func(out checkOutput) (posts, patches int) {
		t.Helper()
		before := len(e.requests())
		if err := e.app.writeCheckRun(context.Background(), gh, "acme", "catalog", sha, CheckRunName, out, false); err != nil {
			t.Fatal(err)
		}
		for _, r := range e.requests()[before:] {
			switch {
			case r.Method == "POST" && strings.HasSuffix(r.Path, "/check-runs"):
				posts++
			case r.Method == "PATCH" && strings.Contains(r.Path, "/check-runs/"):
				patches++
			}
		}
		return posts, patches
	}

	if posts, patches := write(out); posts != 1 || patches != 2 {
		t.Errorf("first write: %d creates and %d updates, want 1 and 2 (120 annotations, 50 a request)", posts, patches)
	}
	run := e.run(sha, CheckRunName)
	if len(run.Annotations) != 120 || len(run.Summary) > MaxSummary || !strings.Contains(run.Summary, "truncated") {
		t.Fatalf("run has %d annotations and a %d-byte summary", len(run.Annotations), len(run.Summary))
	}
	levels := map[string]int{}
	for _, a := range run.Annotations {
		levels[a.AnnotationLevel]++
	}
	if levels["failure"] != 40 || levels["warning"] != 80 {
		t.Errorf("annotation levels = %v, want 40 failure and 80 warning", levels)
	}
	if run.Annotations[0].AnnotationLevel != "failure" {
		t.Errorf("errors do not come first: %+v", run.Annotations[0])
	}

	if posts, patches := write(out); posts+patches != 0 {
		t.Errorf("an identical report wrote %d times", posts+patches)
	}

	out.Findings = findings(3, "different")
	if posts, patches := write(out); posts != 1 || patches != 0 {
		t.Errorf("changed annotations: %d creates and %d updates, want a fresh run", posts, patches)
	}
	if run := e.run(sha, CheckRunName); len(run.Annotations) != 3 {
		t.Errorf("the fresh run has %d annotations, want 3", len(run.Annotations))
	}
}

// TestStatusCommentCannotBeHijacked: a person's comment holding the marker
// is neither edited nor taken for the App's own.
func TestStatusCommentCannotBeHijacked(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	fake := e.repo.Comment(pr.Number, "mallory", StatusMarker+"\nApproved, trust me")
	e.process(pr, "pull_request")
	var mine int
	for _, c := range e.statusComments(pr.Number) {
		switch {
		case c.ID == fake:
			if c.Body != StatusMarker+"\nApproved, trust me" {
				t.Errorf("mallory's comment was edited: %q", c.Body)
			}
		case strings.HasSuffix(c.User, "[bot]"):
			mine++
		}
	}
	if mine != 1 {
		t.Errorf("%d status comments by the App, want 1", mine)
	}
}
