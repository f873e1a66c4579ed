package reconcile

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestLostApprovalInTheSameSecond: the App's last write and an /approve
// whose delivery was lost land in the same second of GitHub's clock, so
// updated_at does not move. The resync does not take the pull request for
// settled on a read in that second; the next resync finds the approval and
// merges. A pull request read in a later second than its last change is
// settled, and resyncs leave it alone.
func TestLostApprovalInTheSameSecond(t *testing.T) {
	var mu sync.Mutex
	clk := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk }
	advance := func(d time.Duration) { mu.Lock(); clk = clk.Add(d); mu.Unlock() }
	e := newEnvWith(t, catalogRepo(mergePolicy), func(o *AppOptions) { o.Now = now })
	e.gh.SetClock(now)
	ctx := context.Background()
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	other := e.openPR("bob", "bump2", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.2")})
	advance(2 * time.Second) // comments count when made after the push

	e.process(pr, "pull_request")
	e.process(other, "pull_request")
	// Alice approves in the second of the App's last write; the delivery
	// is lost.
	e.repo.Comment(pr.Number, "alice", "/approve")
	if e.mergesAt(pr.HeadSHA()) != 0 {
		t.Fatal("merged without a job")
	}

	advance(time.Minute)
	jobs, err := e.app.Resync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := prNumbers(jobs); !slices.Equal(got, []int{pr.Number, other.Number}) {
		t.Fatalf("resync queued %v, want #%d (approved in the second of the last read) and #%d", got, pr.Number, other.Number)
	}
	for _, j := range jobs {
		if err := processAll(ctx, e.app, j); err != nil {
			t.Fatal(err)
		}
	}
	if e.mergesAt(pr.HeadSHA()) != 1 {
		t.Fatalf("merges = %+v, want #%d merged by the next resync", e.repo.Merges(), pr.Number)
	}

	// #other was read a minute after its last change: settled.
	advance(time.Minute)
	if jobs, err := e.app.Resync(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("a resync with nothing changed queued %v (%v)", prNumbers(jobs), err)
	}
}

// settle moves GitHub's clock on a second and runs what a resync then
// finds: the pull requests last read in the second of their last change,
// which that read could not take for settled.
func (e *env) settle() {
	e.t.Helper()
	e.gh.Advance(time.Second)
	jobs, err := e.app.Resync(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, j := range jobs {
		if err := processAll(context.Background(), e.app, j); err != nil {
			e.t.Fatal(err)
		}
	}
}

// TestNotReadyWhileNoTokenCanBeHad: GitHub rejects the installation
// token and will not mint another; the App says it is not ready, with a
// reason, until a token can be had again, and RunReadiness finds that out
// without a job asking.
func TestNotReadyWhileNoTokenCanBeHad(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.app.ProbeGitHub(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Ready(); err != nil {
		t.Fatalf("not ready: %v", err)
	}
	var refuse atomic.Bool
	refuse.Store(true)
	e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if refuse.Load() && strings.HasSuffix(r.URL.Path, "/access_tokens") {
			resp.Status = http.StatusForbidden
			resp.Body = []byte(`{"message":"This installation has been suspended","documentation_url":"https://docs.github.com/rest"}`)
		}
	})
	e.gh.ExpireTokens()
	gh, err := e.app.gh.Installation(e.gh.InstallationID(e.repo))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Repositories.Get(ctx, "acme", "catalog"); err == nil {
		t.Fatal("a request succeeded with no token to be had")
	}
	err = e.app.Ready()
	var nr *webhook.NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "installation token") {
		t.Fatalf("Ready = %v, want not ready for want of a token", err)
	}

	refuse.Store(false)
	go e.app.RunReadiness(ctx, time.Millisecond)
	for e.app.Ready() != nil {
		if ctx.Err() != nil {
			t.Fatalf("still not ready once GitHub gives tokens again: %v", e.app.Ready())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMergedRunSaysMerged: once the App merges a pull request, its run
// no longer says the merge is under way.
func TestMergedRunSaysMerged(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if !pr.Merged() {
		t.Fatal("not merged")
	}
	run := e.run(pr.HeadSHA(), CheckRunName)
	if strings.Contains(run.Text, "blocked-by") || !strings.Contains(run.Text, "Merged as") {
		t.Fatalf("the merged pull request's run says:\n%s", run.Text)
	}
	if run.Conclusion != "success" {
		t.Errorf("conclusion %q", run.Conclusion)
	}
}

// TestOutageDuringDeliveryIsRetried: GitHub answers 502 for longer than
// the client's own retries last while a delivery's job runs; the job is
// tried again with backoff and the pull request merges, with no resync.
func TestOutageDuringDeliveryIsRetried(t *testing.T) {
	e := newEnvWith(t, catalogRepo(mergePolicy), func(o *AppOptions) { o.GitHubBackoff = time.Millisecond })
	url, d, _ := e.serve(t)
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	opened := e.gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number})
	e.gh.FailNext(12, http.StatusBadGateway) // more than one request's five tries
	if resp := e.gh.Deliver(t, url, serveSecret, "pull_request", opened, "open-1"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("opened: %d", resp.StatusCode)
	}
	var events []string
	for !pr.Merged() {
		j := d.wait(t)
		events = append(events, j.Event)
		if len(events) > 10 {
			t.Fatalf("not merged after jobs %v", events)
		}
	}
	if events[0] != "pull_request" || !slices.Contains(events, "retry") {
		t.Errorf("jobs %v, want the delivery's and then its retry", events)
	}
	if e.mergesAt(pr.HeadSHA()) != 1 {
		t.Errorf("merges = %+v", e.repo.Merges())
	}
}

// TestFailedTextByClass: the run of a pull request whose job failed says
// whether the job is tried again, by the failure's class.
func TestFailedTextByClass(t *testing.T) {
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	resp := func(code int) error {
		return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "GET", URL: &url.URL{Path: "/x"}}}}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{resp(http.StatusBadGateway), "tried again shortly, with backoff"},
		{errors.New("git fetch: connection reset"), "tried again shortly, with backoff"},
		{resp(http.StatusUnauthorized), "a new one is minted"},
		{resp(http.StatusForbidden), "not tried again (GitHub refused a request with HTTP 403)"},
		{resp(http.StatusNotFound), "not tried again (GitHub refused a request with HTTP 404)"},
	} {
		if got := failedText(tc.err, now); !strings.Contains(got, tc.want) || !strings.Contains(got, "2026-11-28T01:00:00Z") {
			t.Errorf("failedText(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
	}
}
