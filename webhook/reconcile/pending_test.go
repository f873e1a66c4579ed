package reconcile

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
)

// pendingEnv is an App that checks images, tries a check that could not
// judge twice more, a minute and then two after, and reads the time from
// *now.
func pendingEnv(t *testing.T, now *time.Time) *env {
	t.Helper()
	return newEnvWith(t, catalogRepo(mergePolicy), func(o *AppOptions) {
		// The stand-in registries listen on loopback, which the
		// operator allows here as it would an internal mirror.
		rule, err := egress.New([]string{"127.0.0.1"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Images = &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1, Egress: rule}
		o.Config.PendingRetries = 2
		o.Config.PendingBackoff = time.Minute
		o.Now = func() time.Time { return *now }
	})
}

// processCollect runs job and returns the jobs its result has the queue
// take.
func (e *env) processCollect(job webhook.Job) []webhook.Job {
	e.t.Helper()
	res, err := e.app.Process(context.Background(), job)
	if err != nil {
		e.t.Fatalf("process %s (%s): %v", job.Key, job.Event, err)
	}
	return res.Next(job, e.app.now())
}

// TestCouldNotJudgeStaysInProgress: a pull request whose image's registry
// rate limits is never passed. Its run stays in progress, saying what it
// waits for and when it tries again; it is retried with a doubling delay
// and fails after the last try; once the registry answers, a re-run
// judges it and it merges.
func TestCouldNotJudgeStaysInProgress(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e := pendingEnv(t, &now)
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("foo-bundle:v1.0.1"))
	reg.Fail(registrytest.Fault{Status: 429})
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "quay.io/example/foo-bundle:v1.0.0", reg.Ref("foo-bundle:v1.0.1"), 1)})
	head := pr.HeadSHA()

	job := e.job(pr, "pull_request")
	for try, wait := range []time.Duration{time.Minute, 2 * time.Minute} {
		queued := e.processCollect(job)
		run := e.run(head, CheckRunName)
		if run.Status != "in_progress" || run.Conclusion != "" {
			t.Fatalf("try %d: run %s/%q, want in progress without a conclusion", try+1, run.Status, run.Conclusion)
		}
		for _, want := range []string{
			"Could not judge yet: registry " + reg.Host + " (1 reference) rate limited the requests.",
			"Try " + string(rune('1'+try)) + " of 3: the check stays in progress and tries again in " + wait.String(),
		} {
			if !strings.Contains(run.Summary, want) {
				t.Errorf("try %d: the summary does not say %q:\n%s", try+1, want, run.Summary)
			}
		}
		if want := "Could not judge: images"; run.Title != want {
			t.Errorf("try %d: title %q, want %q", try+1, run.Title, want)
		}
		if codes, _ := review.ParseBlockedBy(run.Text); !slices.Equal(codes, []policy.Code{policy.CodeChecksPending}) {
			t.Errorf("try %d: blocked by %q, want checks-pending", try+1, codes)
		}
		if len(queued) != 1 || queued[0].Key != job.Key || !queued[0].NotBefore.Equal(now.Add(wait)) {
			t.Fatalf("try %d: queued %+v, want one retry of %s at %s", try+1, queued, job.Key, now.Add(wait))
		}
		now = now.Add(wait)
		job = queued[0]
	}
	if queued := e.processCollect(job); len(queued) != 0 {
		t.Errorf("the last try queued %+v, want nothing", queued)
	}
	run := e.run(head, CheckRunName)
	if run.Status != "completed" || run.Conclusion != "failure" || run.Title != "Could not judge: images after 3 tries" ||
		!strings.Contains(run.Summary, "rate limited the requests") {
		t.Errorf("after the last try: run %s/%s %q, want a failure that says why:\n%s", run.Status, run.Conclusion, run.Title, run.Summary)
	}
	// No retry follows: the run has failed, and says so.
	if codes, _ := review.ParseBlockedBy(run.Text); !slices.Equal(codes, []policy.Code{policy.CodeChecksPending, policy.CodeChecksFailed}) {
		t.Errorf("after the last try: blocked by %q, want checks-pending and checks-failed", codes)
	}
	for _, r := range e.repo.CheckRuns(head) {
		if r.Name == CheckRunName && (r.Conclusion == "neutral" || r.Conclusion == "success") {
			t.Errorf("run %d concluded %s while the registry could not be asked", r.ID, r.Conclusion)
		}
	}
	if e.mergesAt(head) != 0 {
		t.Fatal("merged what could not be checked")
	}

	// The registry answers again; a re-run judges the pull request.
	reg.Reset()
	rerun := e.job(pr, "check_run")
	if queued := e.processCollect(rerun); len(queued) != 0 {
		t.Errorf("a judged pull request queued %+v", queued)
	}
	if run := e.run(head, CheckRunName); run.Conclusion != "success" {
		t.Errorf("once the registry answers: run %s %q, want success", run.Conclusion, run.Title)
	}
	if e.mergesAt(head) != 1 {
		t.Errorf("merges at the head: %d, want 1", e.mergesAt(head))
	}
}

// TestUnreachableRegistryStaysInProgress: a registry host that resets
// every connection is waited for in the same way, and a resync leaves the
// pull request to its retry rather than spend the backoff early.
func TestUnreachableRegistryStaysInProgress(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e := pendingEnv(t, &now)
	down := registrytest.NewHangup(t)
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "quay.io/example/foo-bundle:v1.0.0", down.Ref("foo-bundle:v1.0.1"), 1)})
	queued := e.processCollect(e.job(pr, "pull_request"))
	run := e.run(pr.HeadSHA(), CheckRunName)
	if run.Status != "in_progress" || !strings.Contains(run.Summary, "registry "+down.Host+" (1 reference) did not answer in time or could not be reached") {
		t.Errorf("run %s/%s, want in progress waiting for %s:\n%s", run.Status, run.Conclusion, down.Host, run.Summary)
	}
	if len(queued) != 1 || down.Conns() == 0 {
		t.Fatalf("queued %+v after %d connections, want one retry", queued, down.Conns())
	}
	resynced, err := e.app.Resync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(resynced) != 0 {
		t.Errorf("resync queued %+v for a pull request waiting for its retry", resynced)
	}
	now = now.Add(time.Minute)
	if resynced, err = e.app.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(resynced) != 1 {
		t.Errorf("resync after the retry was due queued %+v, want the pull request", resynced)
	}
}
